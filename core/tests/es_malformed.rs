//! Malformed and truncated inputs: every file in `../shared/samples/fuzz`
//! and `other`, and every elementary-stream sample cut at several points,
//! is read to the end through a `SliceSource` and a `ReaderSource` without
//! panicking, quickly, with identical packets. A cut file gives a prefix
//! of the whole file's packets (its last packet may be a frame cut short,
//! or run on into the head of the next access unit, as ffmpeg gives it).

#![allow(clippy::indexing_slicing, clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use crate::common;

use mediaslice::crc::crc32;
use mediaslice::{Demuxer, ReaderSource, SliceSource, Source};
use std::path::Path;
use std::time::{Duration, Instant};

struct Cursor<'a> {
    data: &'a [u8],
    pos: u64,
}

impl embedded_io::ErrorType for Cursor<'_> {
    type Error = core::convert::Infallible;
}

impl embedded_io::Read for Cursor<'_> {
    fn read(&mut self, buf: &mut [u8]) -> Result<usize, Self::Error> {
        let start = (self.pos as usize).min(self.data.len());
        let n = buf.len().min(self.data.len() - start);
        buf[..n].copy_from_slice(&self.data[start..start + n]);
        self.pos += n as u64;
        Ok(n)
    }
}

impl embedded_io::Seek for Cursor<'_> {
    fn seek(&mut self, pos: embedded_io::SeekFrom) -> Result<u64, Self::Error> {
        self.pos = match pos {
            embedded_io::SeekFrom::Start(p) => p,
            embedded_io::SeekFrom::End(d) => (self.data.len() as i64 + d).max(0) as u64,
            embedded_io::SeekFrom::Current(d) => (self.pos as i64 + d).max(0) as u64,
        };
        Ok(self.pos)
    }
}

type Got = Vec<(usize, Option<u64>, usize, u32)>;

fn run<S: Source>(src: S) -> Got {
    let mut out = Vec::new();
    let Ok(mut d) = Demuxer::open(src, None) else {
        return out;
    };
    for _ in 0..1_000_000 {
        match d.next_packet() {
            Ok(Some(p)) => out.push((p.track, p.pos, p.data.len(), crc32(p.data))),
            _ => break,
        }
    }
    let mut tags = 0;
    while let Ok(Some(_)) = d.next_tag() {
        tags += 1;
        assert!(tags < 100_000, "tag walk does not end");
    }
    for t in 0..d.tracks().len() {
        let _ = d.seek(t, 0);
        let _ = d.next_packet();
        let _ = d.seek(t, i64::MAX / 4);
        let _ = d.next_packet();
    }
    out
}

fn both(data: &[u8]) -> Got {
    let mut sscratch = vec![0u8; 4 << 20];
    let a = run(SliceSource::with_scratch(data, &mut sscratch));
    let mut scratch = vec![0u8; 4 << 20];
    let b = run(ReaderSource::new(Cursor { data, pos: 0 }, &mut scratch[..]).unwrap());
    assert_eq!(a, b, "slice and reader packets differ");
    a
}

fn samples() -> std::path::PathBuf {
    common::samples_root()
}

#[test]
fn fuzz_files_terminate_quickly() {
    for folder in ["fuzz", "other"] {
        let Ok(rd) = std::fs::read_dir(samples().join(folder)) else {
            continue;
        };
        for f in rd.filter_map(|e| e.ok()) {
            let data = std::fs::read(f.path()).unwrap();
            let t = Instant::now();
            both(&data);
            assert!(
                t.elapsed() < Duration::from_secs(5),
                "{} took {:?}",
                f.path().display(),
                t.elapsed()
            );
        }
    }
}

#[test]
fn truncated_streams_give_a_prefix() {
    let root = samples();
    for folder in ["mp3", "adts", "ac3", "amr", "h264", "h265", "ivf", "av1obu"] {
        let Ok(rd) = std::fs::read_dir(root.join(folder)) else {
            continue;
        };
        for f in rd.filter_map(|e| e.ok()) {
            let data = std::fs::read(f.path()).unwrap();
            if data.len() > 1 << 20 {
                continue;
            }
            let full = both(&data);
            for cut in [
                data.len() / 3,
                data.len() / 2,
                data.len() * 9 / 10,
                data.len().saturating_sub(1),
            ] {
                let part = both(&data[..cut]);
                if part.is_empty() {
                    continue;
                }
                let n = part.len();
                // All but the last packet are packets of the whole file.
                for (i, p) in part[..n - 1].iter().enumerate() {
                    assert_eq!(Some(p), full.get(i), "{} cut at {cut}: packet {i}", f.path().display());
                }
                // The last one starts where the whole file's does (it may
                // hold a cut frame, or the head of the next access unit whose
                // start the cut hid, as ffmpeg's parsers give it).
                let (t, pos, _, _) = part[n - 1];
                if let Some(&(ft, fpos, _, _)) = full.get(n - 1) {
                    assert_eq!((t, pos), (ft, fpos), "{} cut at {cut}: last packet", f.path().display());
                }
            }
        }
    }
}

/// Found by the `truncation` fuzz target: an ID3-tagged AAC file forced to
/// H.264 gave no packet for the whole input (its last access unit, SEI-like
/// NAL units and no slice, was withheld as cut) but one for its first 8
/// bytes. Now the slice-less last access unit is given, flagged truncated,
/// and every prefix gives a prefix of it.
#[test]
fn slice_less_annexb_input_gives_a_prefix_at_every_cut() {
    use mediaslice::{FormatKind, Limits};
    let mut data = b"ID3\x04\x00\x00\x00\x00\x00\x3f".to_vec();
    data.extend_from_slice(&[0xff, 0xf1, 0x50, 0x80, 0x01, 0xbf, 0xfc]);
    // NAL units with start codes but no slice: SEI (6), SPS-like junk, AUD (9).
    data.extend_from_slice(&[0, 0, 1, 0x06, 0x05, 0x02, 0xaa, 0x80]);
    data.extend_from_slice(&[0x21, 0x1b, 0, 0, 1, 0x09, 0xf0, 0x11, 0x22, 0x33]);
    let get = |d: &[u8]| -> Vec<(Option<u64>, Vec<u8>, bool)> {
        let mut out = Vec::new();
        let Ok(mut dm) = Demuxer::open_as(SliceSource::new(d), FormatKind::H264, Limits::default()) else {
            return out;
        };
        while let Ok(Some(p)) = dm.next_packet() {
            out.push((p.pos, p.data.to_vec(), p.flags.truncated));
        }
        out
    };
    let whole = get(&data);
    assert_eq!(whole.len(), 1, "{whole:?}");
    assert_eq!(whole[0].1, data, "the whole input is one access unit");
    assert!(whole[0].2, "an access unit without a slice is flagged truncated");
    for cut in 1..data.len() {
        let part = get(&data[..cut]);
        assert!(part.len() <= 1, "cut {cut}: {part:?}");
        if let Some((pos, bytes, _)) = part.first() {
            assert_eq!(*pos, whole[0].0, "cut {cut}");
            assert!(whole[0].1.starts_with(bytes), "cut {cut}: not a prefix of the whole");
        }
    }
}

/// Packets of `data` forced to `kind`: position, bytes, truncated flag.
fn forced(data: &[u8], kind: mediaslice::FormatKind) -> Vec<(Option<u64>, Vec<u8>, bool)> {
    let mut out = Vec::new();
    let Ok(mut d) = Demuxer::open_as(SliceSource::new(data), kind, mediaslice::Limits::default()) else {
        return out;
    };
    while let Ok(Some(p)) = d.next_packet() {
        out.push((p.pos, p.data.to_vec(), p.flags.truncated));
    }
    out
}

/// Found by the `truncation` fuzz target on an input forced to H.265: a cut
/// right after a start code whose NAL unit is empty (another start code
/// follows) split the access unit there, while the whole input does not
/// split at an empty NAL unit. Every cut must give the whole input's packets
/// but the last, and a last one that is a prefix of its counterpart.
#[test]
fn cut_after_an_empty_nal_unit_gives_a_prefix() {
    for kind in [mediaslice::FormatKind::Hevc, mediaslice::FormatKind::H264] {
        // A first picture's slice (H.265 IDR_W_RADL / H.264 IDR, first in
        // the picture), then a start code whose NAL unit is empty (another
        // start code follows at once), then a new picture's slice.
        let mut data: Vec<u8> = if kind == mediaslice::FormatKind::Hevc {
            vec![0, 0, 0, 1, 0x26, 0x01, 0x80]
        } else {
            vec![0, 0, 0, 1, 0x65, 0x88]
        };
        data.extend((0..150u32).map(|i| (i * 7 % 251) as u8 | 0x80));
        data.extend_from_slice(&[0, 0, 0, 0, 0, 1]);
        data.extend_from_slice(&[0, 0, 1, 0, 0, 0x9a, 0, 0, 0x11, 0x22]);
        data.extend((0..40u32).map(|i| (i * 13 % 251) as u8 | 0x80));
        let whole = forced(&data, kind);
        assert!(!whole.is_empty());
        for cut in 1..data.len() {
            let part = forced(&data[..cut], kind);
            for (i, p) in part.iter().enumerate() {
                let w = &whole[i];
                assert_eq!(p.0, w.0, "{kind:?} cut {cut}: packet {i} position");
                if i + 1 < part.len() {
                    assert_eq!(
                        p.1, w.1,
                        "{kind:?} cut {cut}: packet {i} differs from the whole input's"
                    );
                } else {
                    assert!(w.1.starts_with(&p.1), "{kind:?} cut {cut}: last packet is not a prefix");
                }
            }
        }
    }
}

/// Found by the `truncation` fuzz target on an input forced to H.265: bytes
/// before the first start code ("01"), then a start code whose NAL header is
/// cut. The whole input gives "01" (the start code ends it); the first two
/// bytes gave "01 00", whose zero byte may begin that start code. Zero bytes
/// at the very end of a cut input are now left out of a slice-less last
/// packet too, so every cut gives a prefix of the whole input's packet.
#[test]
fn junk_before_a_cut_start_code_gives_a_prefix_at_every_cut() {
    for kind in [mediaslice::FormatKind::Hevc, mediaslice::FormatKind::H264] {
        let data = [0x01, 0x00, 0x00, 0x01, 0x9b];
        let whole = forced(&data, kind);
        assert_eq!(whole.len(), 1, "{kind:?}: {whole:?}");
        assert_eq!(whole[0].1, [0x01], "{kind:?}: the start code ends the first packet");
        for cut in 1..data.len() {
            let part = forced(&data[..cut], kind);
            assert!(part.len() <= 1, "{kind:?} cut {cut}: {part:?}");
            if let Some((pos, bytes, _)) = part.first() {
                assert_eq!(*pos, whole[0].0, "{kind:?} cut {cut}");
                assert!(
                    whole[0].1.starts_with(bytes),
                    "{kind:?} cut {cut}: {bytes:?} not a prefix of the whole"
                );
            }
        }
    }
}

/// Found by the `truncation` fuzz target (AC-3 and E-AC-3, eight inputs):
/// bytes after a frame that the whole input appends to it as junk, or that
/// begin the next frame, were given with the frame when the input ended in
/// them (a prefix gave the frame plus the 0x0B of the next sync word, one
/// byte more than the whole input's packet). Now such a packet ends where a
/// cut header could begin, flagged, and nothing after it is given.
#[test]
fn ac3_junk_and_cut_sync_give_a_prefix_at_every_cut() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../corpus/files/ac3");
    for (file, kind) in [
        ("stereo.ac3", mediaslice::FormatKind::Ac3),
        ("stereo.eac3", mediaslice::FormatKind::Eac3),
    ] {
        let src = std::fs::read(dir.join(file)).unwrap();
        let frames = forced(&src, kind);
        assert!(frames.len() >= 3, "{file}");
        let (a, b) = (frames[0].1.len(), frames[1].1.len());
        // Frame 1, junk with a lone 0x0B in it, frame 2, a lone 0x0B, frame 3.
        let mut data = src[..a].to_vec();
        data.extend_from_slice(&[0x12, 0x0B, 0x34]);
        data.extend_from_slice(&src[a..a + b]);
        data.push(0x0B);
        data.extend_from_slice(&src[a + b..a + b + frames[2].1.len()]);
        let whole = forced(&data, kind);
        assert_eq!(
            whole.len(),
            3,
            "{file}: junk joins the frame before it: {:?}",
            whole.iter().map(|p| p.1.len()).collect::<Vec<_>>()
        );
        for cut in 1..data.len() {
            let part = forced(&data[..cut], kind);
            if cut == a || cut == a + 3 + b {
                // The cuts the prefix cannot tell: exactly at the end of a
                // frame that the whole input follows with junk (which
                // ffmpeg's parser, and so the whole input, appends to it).
                // The frame is given whole and unflagged, as at the end of
                // any complete file (docs/formats/ac3.md).
                let n = part.len();
                assert_eq!(part[..n - 1], whole[..n - 1], "{file} cut {cut}");
                let start = part[n - 1].0.unwrap() as usize;
                assert_eq!(
                    (&part[n - 1].1[..], part[n - 1].2),
                    (&data[start..cut], false),
                    "{file} cut {cut}"
                );
                assert!(whole[n - 1].1.starts_with(&part[n - 1].1), "{file} cut {cut}");
                continue;
            }
            for (i, p) in part.iter().enumerate() {
                let w = &whole[i];
                assert_eq!(p.0, w.0, "{file} cut {cut}: packet {i} position");
                if i + 1 < part.len() || !p.2 {
                    assert_eq!(p, w, "{file} cut {cut}: packet {i}");
                } else {
                    assert!(
                        w.1.starts_with(&p.1),
                        "{file} cut {cut}: last packet not a prefix of the whole's"
                    );
                }
            }
        }
    }
}

/// Every prefix of `data` read as `kind` gives the whole input's packets,
/// the last of them possibly a flagged prefix of its counterpart (`exact`),
/// or any prefix of it: an Annex B stream has no lengths, so a cut inside
/// the last access unit's slices cannot be told from the end of a file.
fn assert_prefix_at_every_cut(data: &[u8], kind: mediaslice::FormatKind, exact: bool, label: &str) {
    let whole = forced(data, kind);
    for cut in 1..data.len() {
        let part = forced(&data[..cut], kind);
        assert!(
            part.len() <= whole.len(),
            "{label} cut {cut}: more packets than the whole"
        );
        for (i, p) in part.iter().enumerate() {
            let w = &whole[i];
            assert_eq!(p.0, w.0, "{label} cut {cut}: packet {i} position");
            if p == w {
                continue;
            }
            assert!(
                i + 1 == part.len() && (p.2 || !exact) && w.1.starts_with(&p.1),
                "{label} cut {cut}: packet {i} ({} bytes, truncated {}) is neither the whole's ({} bytes) \
                 nor its flagged prefix",
                p.1.len(),
                p.2,
                w.1.len()
            );
        }
    }
}

/// Found by the `truncation` fuzz target (MPEG audio, two inputs): bytes
/// without a frame header up to the end of the input were given unflagged,
/// where the whole input continues them as junk in the next frame's packet.
/// Now they are flagged, end where a cut frame sync could begin, and are the
/// last packet.
#[test]
fn mp3_junk_at_the_end_gives_a_prefix_at_every_cut() {
    let src = std::fs::read(Path::new(env!("CARGO_MANIFEST_DIR")).join("../corpus/files/mp3/cbr_bare.mp3")).unwrap();
    let frames = forced(&src, mediaslice::FormatKind::Mp3);
    assert!(frames.len() >= 4);
    let at = |i: usize| frames[i].0.unwrap() as usize;
    // Two frames, junk with a lone 0xFF in it, two more frames.
    let mut data = src[at(0)..at(2)].to_vec();
    data.extend_from_slice(&[0x12, 0x34, 0xFF, 0x12, 0x56, 0x78, 0x9A]);
    data.extend_from_slice(&src[at(2)..at(4)]);
    let whole = forced(&data, mediaslice::FormatKind::Mp3);
    assert_eq!(whole.len(), 4, "the junk joins frame 3's packet");
    assert_eq!(whole[2].1.len(), 7 + frames[2].1.len());
    assert_prefix_at_every_cut(&data, mediaslice::FormatKind::Mp3, true, "mp3");
}

/// Found by the `truncation` fuzz target (H.264 forced on other data, four
/// inputs): ten zero bytes at the end of a prefix were kept in the last
/// access unit, where the whole input gives the last three of them to the
/// next one ("00 00 00 01"). Up to three zero bytes at the end are now left
/// out, however many there are.
#[test]
fn annexb_zero_run_before_a_start_code_gives_a_prefix_at_every_cut() {
    let src = std::fs::read(Path::new(env!("CARGO_MANIFEST_DIR")).join("../corpus/files/h264/baseline.h264")).unwrap();
    let aus = forced(&src, mediaslice::FormatKind::H264);
    assert!(aus.len() >= 3);
    let (a, b) = (aus[0].1.len(), aus[1].1.len());
    let mut data = src[..a].to_vec();
    data.extend_from_slice(&[0; 10]);
    data.extend_from_slice(&src[a..a + b]);
    let whole = forced(&data, mediaslice::FormatKind::H264);
    assert_eq!(whole.len(), 2);
    assert_prefix_at_every_cut(&data, mediaslice::FormatKind::H264, false, "h264");
}

/// An H.264 input that ends before the open probe found an SPS with VUI
/// timing says so (`annexb.unconfirmed-rate`): its access units are timed
/// at 25 fps, where a longer input with the SPS further on is timed by it
/// (a `truncation` fuzz find). A probe that ends for its NAL-unit limit,
/// not the end of the input, has decided and does not.
#[test]
fn h264_rate_undecided_at_the_end_of_the_input_is_reported() {
    let kind = mediaslice::FormatKind::H264;
    let reported = |data: &[u8]| {
        let d = Demuxer::open_as(SliceSource::new(data), kind, mediaslice::Limits::default()).unwrap();
        let diags = d.diagnostics();
        (
            diags.contains("annexb.unconfirmed-rate"),
            diags.contains("annexb.no-sps"),
        )
    };
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../corpus/files/h264/baseline.h264");
    let whole = std::fs::read(path).unwrap();
    assert_eq!(reported(&whole), (false, false), "the whole file has its SPS first");
    // Cut inside the SPS (it ends at byte 27): its size parses, its VUI
    // timing is cut off.
    assert_eq!(reported(&whole[..20]), (true, false));
    // Access unit delimiters only, ended by the input before any SPS.
    let aud = [0u8, 0, 0, 1, 0x09, 0xF0];
    let auds: Vec<u8> = aud.iter().copied().cycle().take(aud.len() * 10).collect();
    assert_eq!(reported(&auds), (true, true));
    // Seventy delimiters, then the file: the probe stops at its 64 NAL
    // units without an SPS, whatever follows.
    let mut long: Vec<u8> = aud.iter().copied().cycle().take(aud.len() * 70).collect();
    long.extend_from_slice(&whole);
    assert_eq!(reported(&long), (false, true));
}

/// Found by the `truncation` fuzz target (H.265 forced, 79 bytes): a start
/// code at the very end whose NAL header is cut, after a run of zero bytes,
/// ended the last access unit before every zero the 8-byte tail window saw
/// (six), where a prefix cut inside that run leaves out three: the prefix's
/// last access unit was longer than the whole input's. Both now leave out at
/// most three zero bytes before the 01.
#[test]
fn zero_run_before_a_start_code_cut_at_the_end_gives_a_prefix_at_every_cut() {
    let mut data = b"RI".to_vec();
    data.extend_from_slice(&[0; 25]);
    data.extend_from_slice(b"JUNK\x14\xe0\x13\x3a\x86\xd0\x94\x1a\x00\x25\x00\x37\x03\x20\x84");
    data.extend_from_slice(&[0; 31]);
    data.extend_from_slice(&[0x01, 0x2f]);
    for kind in [mediaslice::FormatKind::Hevc, mediaslice::FormatKind::H264] {
        let whole = forced(&data, kind);
        assert_eq!(whole.len(), 1, "{kind:?}");
        assert!(whole[0].2, "{kind:?}: the last access unit is flagged");
        assert_prefix_at_every_cut(&data, kind, false, &format!("{kind:?}"));
    }
}

/// Found by the `truncation` fuzz target (an input forced to MPEG-PS, its
/// second stream split into audio frames): a PES that reaches the end of the
/// input with exactly a header's length (7 bytes) of junk left gave the junk
/// before its last 6 bytes (1 byte), assuming a header could begin in any of
/// them; one byte less, the end-of-input tail rule tests them
/// (`could_start`) and gave 6. Both now end the junk where a header could
/// begin by its sync bits, and no later than a slot's length. Stream by
/// stream (as the TS/PS contract is), every cut near the end gives a prefix.
#[test]
fn ps_junk_tail_at_the_end_gives_a_prefix_per_stream() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../fuzz/regressions/truncation/mpegps-forced-junk-tail-of-a-header-length.bin");
    let data = std::fs::read(path).unwrap();
    let kind = mediaslice::FormatKind::MpegPs;
    let pull = |b: &[u8]| {
        let mut scratch = vec![0u8; b.len() + (64 << 10)];
        let mut out = Vec::new();
        let mut d = Demuxer::open_as(
            SliceSource::with_scratch(b, &mut scratch),
            kind,
            mediaslice::Limits::default(),
        )
        .unwrap();
        while let Ok(Some(p)) = d.next_packet() {
            out.push((p.track, p.pos, p.data.to_vec(), p.flags.truncated));
        }
        out
    };
    let whole = pull(&data);
    assert!(whole.iter().any(|p| p.0 == 1), "the split stream has packets");
    for cut in data.len() - 300..data.len() {
        let part = pull(&data[..cut]);
        for t in 0..2 {
            let w: Vec<_> = whole.iter().filter(|p| p.0 == t).collect();
            let g: Vec<_> = part.iter().filter(|p| p.0 == t).collect();
            assert!(g.len() <= w.len(), "cut {cut} track {t}: more packets than the whole");
            for (i, p) in g.iter().enumerate() {
                if p == &w[i] {
                    continue;
                }
                assert!(
                    i + 1 == g.len() && p.3 && p.1 == w[i].1 && w[i].2.starts_with(&p.2),
                    "cut {cut} track {t}: packet {i} ({} bytes at {:?}, truncated {}) is neither the whole's \
                     ({} bytes) nor its flagged prefix",
                    p.2.len(),
                    p.1,
                    p.3,
                    w[i].2.len()
                );
            }
        }
    }
}

/// A `truncation` fuzz find (MPEG audio forced): the first frame pair is
/// searched for as ffmpeg does, and a frame whose successor the end of the
/// input cuts cannot be paired. A prefix then started at a later pair, found
/// inside that frame, where the whole input pairs the first frame and starts
/// there. Such a prefix now reports `mp3.unconfirmed-start` (excused by the
/// `truncation` harnesses); the whole input does not.
#[test]
fn mp3_start_before_a_pair_cut_by_the_end_is_reported() {
    // MPEG-1 Layer III, 44.1 kHz, stereo: 320 kbit/s frames are 1 044 bytes,
    // 32 kbit/s frames 104 bytes (same stream, other bit rate).
    let big = [0xFF, 0xFB, 0xE0, 0x00];
    let small = [0xFF, 0xFB, 0x10, 0x00];
    let mut data = vec![0u8; 1044 * 3];
    for k in 0..3 {
        data[k * 1044..k * 1044 + 4].copy_from_slice(&big);
    }
    // Two small frames inside the first big one.
    data[10..14].copy_from_slice(&small);
    data[114..118].copy_from_slice(&small);
    let kind = mediaslice::FormatKind::Mp3;
    let open = |b: &[u8]| {
        let d = Demuxer::open_as(SliceSource::new(b), kind, mediaslice::Limits::default()).unwrap();
        d.diagnostics().contains("mp3.unconfirmed-start")
    };
    let first_pos = |b: &[u8]| forced(b, kind).first().and_then(|p| p.0);
    assert_eq!(first_pos(&data), Some(0));
    assert!(!open(&data));
    let cut = &data[..1000];
    assert_eq!(first_pos(cut), Some(10), "the prefix pairs the small frames");
    assert!(open(cut), "and says that its start is not confirmed");
}

/// A `truncation` fuzz find (MPEG-4 Part 2 forced): the frame rate comes
/// from the VOL header; a prefix that cuts it before its time resolution
/// is timed at 25 fps where the whole input is timed by the VOL. Such a
/// prefix says so (`m4v.unconfirmed-rate`); the whole file does not.
#[test]
fn m4v_vol_cut_before_its_rate_is_reported() {
    let data = std::fs::read(Path::new(env!("CARGO_MANIFEST_DIR")).join("../corpus/files/m4v/mpeg4.m4v")).unwrap();
    let vol = data.windows(4).position(|w| w == [0, 0, 1, 0x20]).unwrap();
    let kind = mediaslice::FormatKind::M4v;
    let reported = |b: &[u8]| {
        let d = Demuxer::open_as(SliceSource::new(b), kind, mediaslice::Limits::default()).unwrap();
        d.diagnostics().contains("m4v.unconfirmed-rate")
    };
    assert!(!reported(&data));
    // Cut just after the VOL start code: its fields are gone.
    assert!(reported(&data[..vol + 5]));
}
