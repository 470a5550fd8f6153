//! Unit tests for the AVI demuxer, with files built in code.
#![allow(clippy::needless_range_loop)]

extern crate std;

use crate::tags::TagScope;
use crate::types::{Codec, Rational};
use crate::{Demuxer, FormatKind, SliceSource, TagValue};
use std::vec;
use std::vec::Vec;

/// How the test file is indexed.
#[derive(Clone, Copy, PartialEq)]
enum Index {
    None,
    /// `idx1` with offsets from the file start.
    Absolute,
    /// `idx1` with offsets from the `movi` FourCC.
    Relative,
    /// OpenDML: `indx` super indexes, `ix##` per RIFF, `AVIX` after
    /// `split` chunks.
    Odml {
        split: usize,
    },
}

#[derive(Clone, Copy)]
struct Opts {
    index: Index,
    /// Wrap every pair of chunks in a `rec ` list.
    rec: bool,
    /// Put a JUNK chunk between every chunk.
    junk: bool,
}

/// Stream 0: MJPG video at 25 fps. Stream 1: PCM s16le stereo, 8000 Hz
/// (block 4, sample size 4).
fn hdrl(b: &mut Vec<u8>, odml: bool) -> [usize; 2] {
    let mut indx_at = [0usize; 2];
    list(b, b"hdrl", |b| {
        let mut avih = vec![0u8; 56];
        avih[0..4].copy_from_slice(&40000u32.to_le_bytes());
        avih[24..28].copy_from_slice(&2u32.to_le_bytes());
        chunk(b, b"avih", &avih);
        for s in 0..2 {
            list(b, b"strl", |b| {
                let mut strh = vec![0u8; 56];
                strh[0..4].copy_from_slice(if s == 0 { b"vids" } else { b"auds" });
                strh[4..8].copy_from_slice(if s == 0 { b"MJPG" } else { b"\0\0\0\0" });
                let (scale, rate, ss) = if s == 0 { (1u32, 25u32, 0u32) } else { (1, 8000, 4) };
                strh[20..24].copy_from_slice(&scale.to_le_bytes());
                strh[24..28].copy_from_slice(&rate.to_le_bytes());
                strh[44..48].copy_from_slice(&ss.to_le_bytes());
                chunk(b, b"strh", &strh);
                if s == 0 {
                    let mut bih = vec![0u8; 40];
                    bih[0..4].copy_from_slice(&40u32.to_le_bytes());
                    bih[4..8].copy_from_slice(&160u32.to_le_bytes());
                    bih[8..12].copy_from_slice(&120u32.to_le_bytes());
                    bih[14..16].copy_from_slice(&24u16.to_le_bytes());
                    bih[16..20].copy_from_slice(b"MJPG");
                    chunk(b, b"strf", &bih);
                } else {
                    let mut wf = vec![0u8; 18];
                    wf[0..2].copy_from_slice(&1u16.to_le_bytes());
                    wf[2..4].copy_from_slice(&2u16.to_le_bytes());
                    wf[4..8].copy_from_slice(&8000u32.to_le_bytes());
                    wf[8..12].copy_from_slice(&32000u32.to_le_bytes());
                    wf[12..14].copy_from_slice(&4u16.to_le_bytes());
                    wf[14..16].copy_from_slice(&16u16.to_le_bytes());
                    chunk(b, b"strf", &wf);
                }
                chunk(b, b"strn", if s == 0 { b"video\0" } else { b"audio\0" });
                if odml {
                    // Super index with room for 4 entries, patched later.
                    indx_at[s] = b.len() + 8;
                    chunk(b, b"indx", &[0u8; 24 + 4 * 16]);
                }
            });
        }
        if odml {
            list(b, b"odml", |b| chunk(b, b"dmlh", &[0u8; 248]));
        }
    });
    indx_at
}

fn chunk(b: &mut Vec<u8>, id: &[u8; 4], body: &[u8]) {
    b.extend_from_slice(id);
    b.extend_from_slice(&(body.len() as u32).to_le_bytes());
    b.extend_from_slice(body);
    if body.len() % 2 == 1 {
        b.push(0);
    }
}

fn list(b: &mut Vec<u8>, kind: &[u8; 4], f: impl FnOnce(&mut Vec<u8>)) {
    let at = b.len();
    b.extend_from_slice(b"LIST\0\0\0\0");
    b.extend_from_slice(kind);
    f(b);
    let size = (b.len() - at - 8) as u32;
    b[at + 4..at + 8].copy_from_slice(&size.to_le_bytes());
}

/// The test streams' chunks: (stream, size, key). Video frame 3 is
/// dropped (empty), audio chunks are 4800 bytes (1200 samples).
fn chunks() -> Vec<(u8, usize, bool)> {
    let mut v = Vec::new();
    for i in 0..8 {
        v.push((0, if i == 3 { 0 } else { 301 + i * 10 }, i % 4 == 0));
        if i % 2 == 0 {
            v.push((1, 4800, true));
        }
    }
    v
}

fn payload(n: usize, seed: usize) -> Vec<u8> {
    (0..n).map(|i| (i * 7 + seed) as u8).collect()
}

/// (stream, header offset, size, key) of each chunk written.
type Written = Vec<(u8, usize, usize, bool)>;

fn movi(b: &mut Vec<u8>, cs: &[(u8, usize, bool)], o: Opts, written: &mut Written) -> usize {
    let movi_at = b.len() + 8;
    list(b, b"movi", |b| {
        let mut i = 0;
        while i < cs.len() {
            let group = if o.rec { 2 } else { 1 };
            let mut emit = |b: &mut Vec<u8>| {
                for &(s, n, key) in cs.iter().skip(i).take(group) {
                    if o.junk {
                        chunk(b, b"JUNK", &[0u8; 6]);
                    }
                    written.push((s, b.len(), n, key));
                    let id = if s == 0 { b"00dc" } else { b"01wb" };
                    chunk(b, id, &payload(n, written.len()));
                }
            };
            if o.rec {
                list(b, b"rec ", &mut emit);
            } else {
                emit(b);
            }
            i += group;
        }
    });
    movi_at
}

/// Writes an `ix##` standard index for stream `s` of the chunks in `w`
/// (header offsets), returning (offset, size, entries) of the chunk.
fn ix(b: &mut Vec<u8>, s: u8, w: &[(u8, usize, usize, bool)], base: usize) -> (usize, usize, u32) {
    let at = b.len();
    let mine: Vec<_> = w.iter().filter(|c| c.0 == s).collect();
    let mut body = Vec::new();
    body.extend_from_slice(&2u16.to_le_bytes());
    body.push(0);
    body.push(1);
    body.extend_from_slice(&(mine.len() as u32).to_le_bytes());
    body.extend_from_slice(if s == 0 { b"00dc" } else { b"01wb" });
    body.extend_from_slice(&(base as u64).to_le_bytes());
    body.extend_from_slice(&[0; 4]);
    for c in &mine {
        body.extend_from_slice(&((c.1 + 8 - base) as u32).to_le_bytes());
        let flag = if c.3 { 0 } else { 0x8000_0000u32 };
        body.extend_from_slice(&(c.2 as u32 | flag).to_le_bytes());
    }
    chunk(b, if s == 0 { b"ix00" } else { b"ix01" }, &body);
    (at, b.len() - at, mine.len() as u32)
}

fn build(o: Opts) -> (Vec<u8>, Written) {
    let cs = chunks();
    let mut b = Vec::new();
    b.extend_from_slice(b"RIFF\0\0\0\0AVI ");
    let odml = matches!(o.index, Index::Odml { .. });
    let indx_at = hdrl(&mut b, odml);
    list(&mut b, b"INFO", |b| chunk(b, b"INAM", b"Test title\0"));
    chunk(&mut b, b"IDIT", b"Mon Mar 10 15:04:43 2003\n\0");
    let mut written = Written::new();
    let mut supers: [Vec<(usize, usize, u32)>; 2] = [Vec::new(), Vec::new()];
    let split = match o.index {
        Index::Odml { split } => split.min(cs.len()),
        _ => cs.len(),
    };
    let movi_at = movi(&mut b, &cs[..split], o, &mut written);
    if odml {
        // Put the ix## chunks inside the first movi: reopen its size.
        let list_at = movi_at - 8;
        for s in 0..2u8 {
            supers[s as usize].push(ix(&mut b, s, &written, movi_at));
        }
        let size = (b.len() - list_at - 8) as u32;
        b[list_at + 4..list_at + 8].copy_from_slice(&size.to_le_bytes());
    }
    match o.index {
        Index::Absolute | Index::Relative => {
            let mut idx = Vec::new();
            for &(s, at, n, key) in &written {
                idx.extend_from_slice(if s == 0 { b"00dc" } else { b"01wb" });
                idx.extend_from_slice(&(if key { 0x10u32 } else { 0 }).to_le_bytes());
                let off = if o.index == Index::Relative { at - movi_at } else { at };
                idx.extend_from_slice(&(off as u32).to_le_bytes());
                idx.extend_from_slice(&(n as u32).to_le_bytes());
            }
            chunk(&mut b, b"idx1", &idx);
        }
        _ => {}
    }
    let riff_size = (b.len() - 8) as u32;
    b[4..8].copy_from_slice(&riff_size.to_le_bytes());
    if odml && split < cs.len() {
        let riff_at = b.len();
        b.extend_from_slice(b"RIFF\0\0\0\0AVIX");
        let first = written.len();
        let movi2 = movi(&mut b, &cs[split..], o, &mut written);
        let list_at = movi2 - 8;
        for s in 0..2u8 {
            let w = written[first..].to_vec();
            supers[s as usize].push(ix(&mut b, s, &w, movi2));
        }
        let size = (b.len() - list_at - 8) as u32;
        b[list_at + 4..list_at + 8].copy_from_slice(&size.to_le_bytes());
        let size = (b.len() - riff_at - 8) as u32;
        b[riff_at + 4..riff_at + 8].copy_from_slice(&size.to_le_bytes());
    }
    if odml {
        for s in 0..2 {
            let at = indx_at[s];
            b[at..at + 2].copy_from_slice(&4u16.to_le_bytes());
            b[at + 2] = 0;
            b[at + 3] = 0;
            b[at + 4..at + 8].copy_from_slice(&(supers[s].len() as u32).to_le_bytes());
            b[at + 8..at + 12].copy_from_slice(if s == 0 { b"00dc" } else { b"01wb" });
            for (k, &(off, size, n)) in supers[s].iter().enumerate() {
                let e = at + 24 + k * 16;
                b[e..e + 8].copy_from_slice(&(off as u64).to_le_bytes());
                b[e + 8..e + 12].copy_from_slice(&(size as u32).to_le_bytes());
                b[e + 12..e + 16].copy_from_slice(&n.to_le_bytes());
            }
        }
    }
    (b, written)
}

#[derive(Debug, Clone, PartialEq)]
struct P {
    track: usize,
    pts: i64,
    pos: u64,
    len: usize,
    key: bool,
    crc: u32,
}

fn packets(data: &[u8]) -> (Vec<P>, Option<crate::Error>, crate::Diagnostics) {
    let mut d = Demuxer::open(SliceSource::new(data), None).unwrap();
    let mut v = Vec::new();
    loop {
        match d.next_packet() {
            Ok(Some(p)) => v.push(P {
                track: p.track,
                pts: p.pts.unwrap(),
                pos: p.pos.unwrap(),
                len: p.data.len(),
                key: p.flags.keyframe,
                crc: crate::crc::crc32(p.data),
            }),
            Ok(None) => return (v, None, d.diagnostics().clone()),
            Err(e) => return (v, Some(e), d.diagnostics().clone()),
        }
    }
}

/// What every variant of the test file must give.
fn check(ps: &[P], written: &Written, index_keys: bool) {
    // Video: 7 packets (frame 3 dropped), pts 0 1 2 4 5 6 7.
    let v: Vec<_> = ps.iter().filter(|p| p.track == 0).collect();
    let pts: Vec<_> = v.iter().map(|p| p.pts).collect();
    assert_eq!(pts, [0, 1, 2, 4, 5, 6, 7]);
    let keys: Vec<_> = v.iter().map(|p| p.key).collect();
    if index_keys {
        assert_eq!(keys, [true, false, false, true, false, false, false]);
    } else {
        assert!(keys.iter().all(|&k| k));
    }
    // Audio: 4 chunks of 4800 bytes, each split 4096 + 704 (1024 samples of 4 bytes).
    let a: Vec<_> = ps.iter().filter(|p| p.track == 1).collect();
    let lens: Vec<_> = a.iter().map(|p| p.len).collect();
    assert_eq!(lens, [4096, 704, 4096, 704, 4096, 704, 4096, 704]);
    let apts: Vec<_> = a.iter().map(|p| p.pts).collect();
    assert_eq!(apts, [0, 1024, 1200, 2224, 2400, 3424, 3600, 4624]);
    // Positions are the chunks' data.
    let firsts: Vec<u64> = written.iter().filter(|c| c.2 > 0).map(|c| c.1 as u64 + 8).collect();
    let got: Vec<u64> = ps.iter().filter(|p| p.len != 704).map(|p| p.pos).collect();
    assert_eq!(got, firsts);
}

const PLAIN: Opts = Opts {
    index: Index::None,
    rec: false,
    junk: false,
};

#[test]
fn idx1_absolute_and_relative_offsets() {
    for index in [Index::Absolute, Index::Relative] {
        let (f, w) = build(Opts { index, ..PLAIN });
        let (ps, err, diags) = packets(&f);
        assert!(err.is_none());
        check(&ps, &w, true);
        assert!(!diags.contains("avi.index-mismatch"));
        assert!(!diags.contains("avi.no-index"));
    }
}

#[test]
fn walks_movi_without_an_index() {
    for (rec, junk) in [(false, false), (true, false), (false, true), (true, true)] {
        let (f, w) = build(Opts {
            index: Index::None,
            rec,
            junk,
        });
        let (ps, err, diags) = packets(&f);
        assert!(err.is_none());
        check(&ps, &w, false);
        assert!(diags.contains("avi.no-index"));
    }
}

#[test]
fn rec_lists_and_junk_with_idx1() {
    let (f, w) = build(Opts {
        index: Index::Relative,
        rec: true,
        junk: true,
    });
    let (ps, err, _) = packets(&f);
    assert!(err.is_none());
    check(&ps, &w, true);
}

#[test]
fn opendml_indexes_and_avix() {
    let (f, w) = build(Opts {
        index: Index::Odml { split: 7 },
        ..PLAIN
    });
    let d = Demuxer::open(SliceSource::new(&f), None).unwrap();
    assert_eq!(d.format(), FormatKind::Avi);
    let (ps, err, diags) = packets(&f);
    assert!(err.is_none());
    check(&ps, &w, true);
    for code in ["avi.index-mismatch", "avi.no-index", "avi.odml-index-incomplete"] {
        assert!(!diags.contains(code), "{code}");
    }
}

#[test]
fn truncation_gives_a_prefix_then_an_error() {
    for index in [Index::None, Index::Relative, Index::Odml { split: 5 }] {
        let (f, _) = build(Opts { index, ..PLAIN });
        let (full, _, _) = packets(&f);
        for cut in (0..f.len()).step_by(97) {
            let Ok(mut d) = Demuxer::open(SliceSource::new(&f[..cut]), None) else {
                continue;
            };
            let mut n = 0;
            loop {
                match d.next_packet() {
                    Ok(Some(p)) => {
                        let e = &full[n];
                        assert_eq!((p.track, p.pos.unwrap()), (e.track, e.pos), "cut {cut}");
                        if p.flags.truncated {
                            assert!(p.data.len() <= e.len);
                        } else {
                            assert_eq!(p.data.len(), e.len, "cut {cut} packet {n}");
                            assert_eq!(crate::crc::crc32(p.data), e.crc);
                        }
                        n += 1;
                    }
                    Ok(None) => break,
                    Err(e) => {
                        assert!(e.is_truncation(), "cut {cut}: {e}");
                        break;
                    }
                }
            }
        }
    }
}

#[test]
fn seek_lands_on_keyframes_and_audio_chunks() {
    for index in [Index::Absolute, Index::None, Index::Odml { split: 6 }] {
        let (f, _) = build(Opts { index, ..PLAIN });
        let mut d = Demuxer::open(SliceSource::new(&f), None).unwrap();
        d.seek(0, 6).unwrap();
        let p = d.next_packet().unwrap().unwrap();
        let want = if index == Index::None { 6 } else { 4 };
        assert_eq!((p.track, p.pts), (0, Some(want)));
        d.seek(1, 2500).unwrap();
        let mut p = d.next_packet().unwrap().unwrap();
        while p.track != 1 {
            p = d.next_packet().unwrap().unwrap();
        }
        assert_eq!(p.pts, Some(2400));
        d.seek(0, 0).unwrap();
        assert_eq!(d.next_packet().unwrap().unwrap().pts, Some(0));
    }
}

#[test]
fn tracks_and_tags() {
    let (f, _) = build(Opts {
        index: Index::Relative,
        ..PLAIN
    });
    let mut d = Demuxer::open(SliceSource::new(&f), None).unwrap();
    let t = d.tracks();
    assert_eq!((t[0].codec, t[0].width, t[0].height), (Codec::Mjpeg, 160, 120));
    assert_eq!(t[0].time_base, Rational::new(1, 25));
    assert_eq!(
        (t[1].codec, t[1].channels, t[1].sample_rate),
        (Codec::PcmS16Le, 2, 8000)
    );
    let mut names = Vec::new();
    while let Some(tag) = d.next_tag().unwrap() {
        let v = match tag.value {
            TagValue::Text(s) => std::string::String::from(s),
            _ => std::string::String::new(),
        };
        names.push((tag.scope, tag.name, v));
    }
    assert_eq!(names[0], (TagScope::Format, Some("title"), "Test title".into()));
    assert_eq!(
        names[1],
        (
            TagScope::Format,
            Some("creation_time"),
            "Mon Mar 10 15:04:43 2003".into()
        )
    );
    assert_eq!(names[2], (TagScope::Track(0), Some("title"), "video".into()));
    assert_eq!(names[3], (TagScope::Track(1), Some("title"), "audio".into()));
}

#[test]
fn damage_in_movi_is_skipped_by_resync() {
    let (mut f, w) = build(Opts {
        index: Index::None,
        ..PLAIN
    });
    // Overwrite the header of the third chunk with garbage.
    let at = w[2].1;
    f[at..at + 8].copy_from_slice(&[0xFF; 8]);
    let (ps, err, diags) = packets(&f);
    assert!(err.is_none());
    assert!(diags.contains("avi.resync"));
    // Every chunk but the damaged one is delivered.
    assert_eq!(
        ps.iter().filter(|p| p.len != 704).count(),
        w.iter().filter(|c| c.2 > 0).count() - 1
    );
}

#[test]
fn hostile_headers_do_not_panic() {
    let (f, _) = build(Opts {
        index: Index::Odml { split: 5 },
        rec: true,
        junk: false,
    });
    // Flip bytes all over the header and indexes.
    for i in (0..f.len()).step_by(3) {
        let mut g = f.clone();
        g[i] ^= 0xA5;
        if let Ok(mut d) = Demuxer::open(SliceSource::new(&g), None) {
            let mut n = 0;
            while let Ok(Some(_)) = d.next_packet() {
                n += 1;
                assert!(n < 1000);
            }
            let _ = d.seek(0, 3);
            while let Ok(Some(_)) = d.next_tag() {}
        }
    }
}

/// Found by the `truncation` fuzz target: with damage (zero bytes) between
/// the last chunk and a cut `idx1`, the walk's resync went on into the index
/// and read its entries as chunk headers, so the cut file gave more packets
/// than the whole. A cut `idx1` now ends the walk.
#[test]
fn resync_stops_at_a_cut_idx1() {
    let (mut f, _) = build(Opts {
        index: Index::Relative,
        ..PLAIN
    });
    let at = f.windows(4).rposition(|w| w == b"idx1").unwrap();
    f.splice(at..at, [0u8; 24]);
    let (full, _, _) = packets(&f);
    for cut in [f.len() - 1, f.len() - 9, f.len() - 17] {
        let (part, _, diags) = packets(&f[..cut]);
        assert!(diags.contains("avi.resync"), "cut {cut}: the walk met the damage");
        assert!(
            part.len() <= full.len(),
            "cut {cut}: {} packets, whole {}",
            part.len(),
            full.len()
        );
        for (i, p) in part.iter().enumerate() {
            // The keyframe flags of chunks past the cut part of the index
            // come from the walk (every video chunk a keyframe, as without
            // an index); the rest must be identical.
            let (a, b) = (
                P {
                    key: false,
                    ..p.clone()
                },
                P {
                    key: false,
                    ..full[i].clone()
                },
            );
            assert_eq!(a, b, "cut {cut}: packet {i}");
        }
    }
}

/// The test file (`idx1` relative) with its index entries rewritten by `f`.
fn with_idx1(f: impl FnOnce(&mut Vec<[u8; 16]>)) -> Vec<u8> {
    let (b, _) = build(Opts {
        index: Index::Relative,
        ..PLAIN
    });
    let at = b.windows(4).rposition(|w| w == b"idx1").unwrap();
    let mut entries: Vec<[u8; 16]> = b[at + 8..].chunks(16).map(|c| c.try_into().unwrap()).collect();
    f(&mut entries);
    let mut out = b[..at].to_vec();
    chunk(&mut out, b"idx1", &entries.concat());
    let riff_size = (out.len() - 8) as u32;
    out[4..8].copy_from_slice(&riff_size.to_le_bytes());
    out
}

/// An `idx1` that leaves out, reorders or repeats chunks of `movi` gives
/// the packets of the walk (what a prefix cut before the index gives, and
/// what ffprobe gives: it walks an interleaved file), with the index's
/// keyframe flags up to where it stops agreeing (`avi.index-mismatch`).
/// Before, the whole file was read through the index: the `truncation`
/// fuzz finding of 7 December 2026.
#[test]
fn idx1_that_disagrees_with_movi_gives_the_walk() {
    let plain = with_idx1(|_| {});
    let at = plain.windows(4).rposition(|w| w == b"idx1").unwrap();
    let (walk, err, _) = packets(&plain[..at]);
    assert!(err.is_none());
    let unkeyed = |ps: &[P]| {
        ps.iter()
            .map(|p| P {
                key: false,
                ..p.clone()
            })
            .collect::<Vec<_>>()
    };
    let (indexed, _, diags) = packets(&plain);
    assert_eq!(unkeyed(&indexed), unkeyed(&walk));
    assert!(!diags.contains("avi.index-mismatch"));
    // Entries 0-4: video 0, audio 0, video 1, video 2, audio 1. The bool:
    // whether the index still marks video 1 (packet 3), not a keyframe.
    type Edit = fn(&mut Vec<[u8; 16]>);
    let variants: [(&str, Edit, bool); 4] = [
        (
            "omits a chunk",
            |e| {
                e.remove(4);
            },
            true,
        ),
        (
            "names one that is not a stream's",
            |e| e[4][1..4].copy_from_slice(b"\x7f\xff\xff"),
            true,
        ),
        ("reorders two", |e| e.swap(2, 4), false),
        ("repeats an earlier one", |e| e[4] = e[0], true),
    ];
    for (what, edit, indexed_v1) in variants {
        let f = with_idx1(edit);
        let (ps, err, diags) = packets(&f);
        assert!(err.is_none(), "{what}");
        assert_eq!(unkeyed(&ps), unkeyed(&walk), "{what}");
        assert!(diags.contains("avi.index-mismatch"), "{what}");
        // The index's flags up to the mismatch, the walk's (every frame) after.
        assert_eq!(ps[3].key, !indexed_v1, "{what}");
        assert!(ps.iter().skip(6).filter(|p| p.track == 0).all(|p| p.key), "{what}");
        // And every prefix's packets are the whole's (keyframe flags aside:
        // a prefix without the index takes every video frame for one).
        for cut in (0..f.len()).step_by(53) {
            if Demuxer::open(SliceSource::new(&f[..cut]), None).is_err() {
                continue;
            }
            let (part, _, _) = packets(&f[..cut]);
            let part = unkeyed(&part);
            let whole = unkeyed(&ps);
            for (i, p) in part.iter().enumerate() {
                let w = &whole[i];
                assert!(
                    p == w || (i + 1 == part.len() && p.pos == w.pos && p.len <= w.len),
                    "{what}, cut {cut}"
                );
            }
        }
    }
}
