//! ASF and FLV specifics beyond the generic conformance tests: the format
//! tags agree with ffprobe's, and every malformed file terminates when it is
//! forced through the ASF and FLV parsers (not only when detected as such).

#![allow(clippy::indexing_slicing, clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

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
