//! ASF and FLV specifics beyond the generic conformance tests: the format
//! tags agree with ffprobe's, and every malformed file terminates when it is
//! forced through the ASF and FLV parsers (not only when detected as such).

#![allow(clippy::indexing_slicing, clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use crate::common;

use common::*;
use mediaslice::{Demuxer, FormatKind, Limits, ReaderSource, SliceSource, TagScope};
use std::time::{Duration, Instant};

/// ffprobe's value for a tag as we give it (`text:...` or `int:...`).
fn plain(v: &str) -> &str {
    v.strip_prefix("text:").or_else(|| v.strip_prefix("int:")).unwrap_or(v)
}

#[test]
fn format_tags_match_ffprobe() {
    let mut checked = 0;
    for fam in ["asf", "flv"] {
        for f in family_files(fam) {
            let Some(doc) = f.expected.as_ref().and_then(|p| load_expected(p)) else {
                continue;
            };
            let Some(want) = doc["format"]["tags"].as_object() else {
                continue;
            };
            let got = pull_slice(&f.read(), f.ext().as_deref(), true);
            if got.open_err.is_some() {
                continue;
            }
            let ours: Vec<(String, String)> = got
                .tags
                .iter()
                .filter(|t| t.scope == TagScope::Format)
                .map(|t| {
                    (
                        t.name.map(str::to_owned).unwrap_or_else(|| t.key.clone()),
                        plain(&t.value).to_owned(),
                    )
                })
                .collect();
            for (k, v) in want {
                let v = v.as_str().unwrap_or("");
                // ffmpeg keeps the last of repeated keys.
                let last = ours.iter().rev().find(|(ok, _)| ok.eq_ignore_ascii_case(k));
                // ffmpeg reads a QWORD attribute through an `int`: it shows the
                // low 32 bits, sign-extended (docs/formats/asf.md).
                let ffmpeg_qword = |ov: &str| {
                    ov.parse::<u64>()
                        .is_ok_and(|n| (n as u32 as i32 as i64 as u64).to_string() == v)
                };
                assert!(
                    last.is_some_and(|(_, ov)| ov == v || ffmpeg_qword(ov)),
                    "{}: tag {k}={v:?}, we give {:?}",
                    f.label(),
                    last.map(|(_, v)| v)
                );
            }
            checked += 1;
        }
    }
    println!("{checked} files' tags checked");
}

#[test]
fn malformed_files_terminate_when_forced_as_asf_or_flv() {
    for path in odd_files("fuzz").into_iter().chain(odd_files("other")) {
        let bytes = std::fs::read(&path).unwrap();
        for kind in [FormatKind::Asf, FormatKind::Flv] {
            let start = Instant::now();
            let mut scratch = scratch_for(bytes.len());
            if let Ok(mut d) =
                Demuxer::open_as(SliceSource::with_scratch(&bytes, &mut scratch), kind, Limits::default())
            {
                for _ in 0..1_000_000 {
                    if !matches!(d.next_packet(), Ok(Some(_))) {
                        break;
                    }
                }
                let _ = pull_tags(&mut d);
            }
            let r = StdReader::new(std::io::Cursor::new(bytes.clone()), Some(7));
            if let Ok(src) = ReaderSource::<_, _, 8>::new(r, vec![0u8; 4096]) {
                if let Ok(mut d) = Demuxer::open_as(src, kind, Limits::default()) {
                    for _ in 0..1_000_000 {
                        if !matches!(d.next_packet(), Ok(Some(_))) {
                            break;
                        }
                    }
                    let _ = pull_tags(&mut d);
                }
            }
            assert!(
                start.elapsed() < Duration::from_secs(5),
                "{} as {kind:?} took {:?}",
                path.display(),
                start.elapsed()
            );
        }
    }
}

#[derive(Debug, Clone, PartialEq)]
struct P {
    track: usize,
    pts: Option<i64>,
    dts: Option<i64>,
    dur: Option<u64>,
    key: bool,
    len: usize,
    crc: u32,
}

fn all<S: mediaslice::Source>(d: &mut Demuxer<S>) -> Vec<P> {
    let mut v = Vec::new();
    while let Some(p) = d.next_packet().unwrap() {
        v.push(P {
            track: p.track,
            pts: p.pts,
            dts: p.dts,
            dur: p.duration,
            key: p.flags.keyframe,
            len: p.data.len(),
            crc: mediaslice::crc::crc32(p.data),
        });
    }
    v
}

/// Seeks each track of `bytes` to several times: video lands on the nearest
/// key frame at or before the target, audio on the packet holding it, and
/// the track's packets after the seek are the tail of its full list.
fn check_seeks(label: &str, bytes: &[u8]) -> usize {
    let mut scratch = scratch_for(bytes.len());
    let mut d = Demuxer::open(SliceSource::with_scratch(bytes, &mut scratch), None).unwrap();
    let full = all(&mut d);
    let kinds: Vec<_> = d.tracks().iter().map(|t| t.kind).collect();
    let mut checked = 0;
    for (ti, kind) in kinds.into_iter().enumerate() {
        let own: Vec<&P> = full.iter().filter(|p| p.track == ti && p.dts.is_some()).collect();
        if own.len() < 4 {
            continue;
        }
        for frac in [1usize, 2, 3] {
            let target = own[own.len() * frac / 4];
            let ts = target.dts.unwrap() + target.dur.unwrap_or(0) as i64 / 2;
            d.seek(ti, ts).unwrap();
            let after = all(&mut d);
            let first = after.iter().find(|p| p.track == ti).expect("packets after seek");
            if kind == mediaslice::TrackKind::Video {
                assert!(
                    first.key && first.dts.unwrap() <= ts,
                    "{label}: video lands on a key frame before {ts}"
                );
                let skipped = own.iter().any(|p| p.key && p.dts > first.dts && p.dts.unwrap() <= ts);
                assert!(!skipped, "{label}: nearest key frame");
            } else {
                let (s, e) = (first.dts.unwrap(), first.dts.unwrap() + first.dur.unwrap_or(0) as i64);
                assert!(
                    s <= ts && ts < e.max(s + 1),
                    "{label}: track {ti} lands on {s}..{e}, target {ts}"
                );
            }
            let tail: Vec<&P> = after.iter().filter(|p| p.track == ti).collect();
            let start = own
                .iter()
                .position(|p| *p == first)
                .expect("landing packet is the track's");
            assert_eq!(tail.len(), own.len() - start, "{label}: tail length");
            for (a, b) in tail.iter().zip(&own[start..]) {
                assert_eq!(*a, *b, "{label}");
            }
            checked += 1;
        }
    }
    d.seek(0, 0).unwrap();
    let replay = all(&mut d);
    let no_pictures: Vec<&P> = full.iter().filter(|p| p.dts.is_some()).collect();
    assert_eq!(
        replay.iter().collect::<Vec<_>>(),
        no_pictures,
        "{label}: seek to 0 replays"
    );
    checked
}

#[test]
fn seeks_land_exactly() {
    let mut checked = 0;
    for fam in ["asf", "flv"] {
        for f in family_files(fam) {
            let bytes = f.read();
            // Skip files ffprobe cannot read whole (truncated samples).
            let mut scratch = scratch_for(bytes.len());
            let Ok(mut d) = Demuxer::open(SliceSource::with_scratch(&bytes, &mut scratch), None) else {
                continue;
            };
            let complete = loop {
                match d.next_packet() {
                    Ok(Some(_)) => {}
                    Ok(None) => break true,
                    Err(_) => break false,
                }
            };
            if complete {
                checked += check_seeks(&f.label(), &bytes);
            }
        }
    }
    assert!(checked >= 12, "{checked} seeks checked");
}

/// Mutated samples (bytes flipped, runs zeroed or set to 0xFF, cuts) through
/// both parsers in both modes: no panic, and each run ends quickly. The
/// count per file is `ASF_FLV_MUTATIONS` (default 200).
#[test]
fn mutated_files_do_not_panic() {
    let per_file: usize = std::env::var("ASF_FLV_MUTATIONS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(200);
    let mut seed = 0x9E37_79B9_7F4A_7C15u64;
    let mut next = move || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed
    };
    let mut runs = 0;
    for fam in ["asf", "flv"] {
        for f in family_files(fam) {
            let orig = f.read();
            if orig.len() > 1 << 20 {
                continue;
            }
            for _ in 0..per_file {
                let mut b = orig.clone();
                for _ in 0..1 + next() % 8 {
                    let at = (next() % b.len() as u64) as usize;
                    let end = (at + 8).min(b.len());
                    match next() % 4 {
                        0 => b[at] ^= 1 << (next() % 8),
                        1 => b[at] = next() as u8,
                        2 => b[at..end].fill(0xFF),
                        _ => b[at..end].fill(0),
                    }
                }
                if next() % 4 == 0 {
                    let cut = (next() % b.len() as u64) as usize;
                    b.truncate(cut);
                }
                let start = Instant::now();
                let _ = pull_slice(&b, f.ext().as_deref(), true);
                let r = StdReader::new(std::io::Cursor::new(b.clone()), Some(7));
                let _ = pull_reader_from(r, vec![0u8; 4096], f.ext().as_deref(), true);
                assert!(start.elapsed() < Duration::from_secs(5), "{}: slow mutation", f.label());
                runs += 1;
            }
        }
    }
    println!("{runs} mutated files");
}

/// Seeks to extreme times (before the start, past the end, the ends of
/// `i64`) neither panic nor lose the packets after them.
#[test]
fn extreme_seeks() {
    for fam in ["asf", "flv"] {
        for f in family_files(fam) {
            let bytes = f.read();
            let mut scratch = scratch_for(bytes.len());
            let Ok(mut d) = Demuxer::open(SliceSource::with_scratch(&bytes, &mut scratch), None) else {
                continue;
            };
            for track in 0..d.tracks().len() {
                for ts in [i64::MIN, -1, 0, 1, 1 << 40, i64::MAX] {
                    d.seek(track, ts).unwrap();
                    for _ in 0..100_000 {
                        if !matches!(d.next_packet(), Ok(Some(_))) {
                            break;
                        }
                    }
                }
            }
        }
    }
}
