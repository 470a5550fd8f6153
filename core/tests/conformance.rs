//! Conformance against ffprobe: every sample and corpus file of the covered
//! families (`common::FAMILIES`) is demuxed and compared with ffprobe's JSON
//! by the rule of `shared/tools/conform.py` (per stream packet-exact, else
//! stream-exact).
//!
//! * `corpus/files`: every file must match, with the same pts, dts and
//!   keyframe flags on packet-exact streams; MPEG-TS/PS audio must be
//!   packet-exact (cut into frames as ffmpeg's parsers cut it).
//! * `../shared/samples`: at least 95 % of the files of each family must
//!   match. Files listed in `core/tests/exceptions.tsv` (family, file,
//!   reason) are reported and not counted; an exception that starts matching,
//!   or names a file that does not exist, fails the test so the list stays
//!   honest. Timestamp differences are printed, not asserted.
//!
//! Run with `--nocapture` to see the per-family table.

#![allow(clippy::indexing_slicing, clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use crate::common;

use common::*;

/// Families of `common::STREAM_EXACT_FAMILIES` whose audio streams must
/// still be packet-exact on the corpus (their video is cut by a parser we
/// do not follow yet; Monkey's Audio is there only for its last frame at a
/// cut, see `STREAM_EXACT_FAMILIES`).
const PACKET_EXACT_AUDIO: &[&str] = &["mpegts", "mpegps", "au", "ape"];

/// Lowest share of matching sample files per family.
const MIN_SAMPLE_RATE: f64 = 0.95;

#[derive(Default)]
struct Tally {
    scored: usize,
    matched: usize,
    excepted: usize,
    ts_files: usize,
    ts_packets: usize,
}

#[test]
fn crc32_combine_agrees_with_a_running_crc() {
    use mediaslice::crc::crc32;
    let a = b"hello, ";
    let b = b"world and some more bytes";
    let whole = [&a[..], &b[..]].concat();
    assert_eq!(crc32_combine(crc32(a), crc32(b), b.len() as u64), crc32(&whole));
    assert_eq!(crc32_combine(crc32(a), crc32(b""), 0), crc32(a));
}

#[test]
fn conformance_against_ffprobe() {
    let exceptions = exceptions();
    let mut failures: Vec<String> = Vec::new();
    let mut table: Vec<String> = Vec::new();
    if samples_dir().is_none() {
        println!("note: ../shared/samples not found (set MEDIASLICE_SAMPLES): only the corpus is checked");
    }
    for &fam in FAMILIES {
        let files = family_files(fam);
        if files.is_empty() {
            println!("{fam}: no files");
            continue;
        }
        if !family_built(&files) {
            println!("{fam}: skipped: family not built");
            table.push(format!("{fam:10} skipped: family not built"));
            continue;
        }
        for origin in [Origin::Samples, Origin::Corpus] {
            let mut t = Tally::default();
            for f in files.iter().filter(|f| f.origin == origin) {
                let Some(exp) = f.expected.as_deref().and_then(load_expected) else {
                    continue;
                };
                if expected_packets(&exp).is_empty() {
                    continue;
                }
                let bytes = f.read();
                let ours = pull_slice(&bytes, f.ext().as_deref(), false);
                let v = compare(&exp, &ours);
                let label = f.label();
                let exception = exceptions.iter().find(|(fa, n, _)| fa == fam && *n == f.name);
                if let Some((_, _, reason)) = exception {
                    t.excepted += 1;
                    if v.ok {
                        failures.push(format!(
                            "{label}: listed in core/tests/exceptions.tsv but matches ffprobe now; remove the line"
                        ));
                    } else {
                        println!("EXCEPTION {label}: {reason} [{}]", v.notes.join("; "));
                    }
                } else {
                    t.scored += 1;
                    if v.ok {
                        t.matched += 1;
                    } else {
                        println!("MISS {label}: {}", v.notes.join("; "));
                        if origin == Origin::Corpus {
                            failures.push(format!("{label}: does not match ffprobe: {}", v.notes.join("; ")));
                        }
                    }
                }
                // MPEG-TS/PS audio is cut into frames as ffmpeg's parsers cut
                // it: the corpus must be packet-exact there, not only
                // stream-exact.
                if origin == Origin::Corpus
                    && PACKET_EXACT_AUDIO.contains(&fam)
                    && v.notes.iter().any(|n| n == "audio:stream-exact")
                {
                    failures.push(format!("{label}: audio is stream-exact, not packet-exact"));
                }
                if v.ts_mismatches > 0 {
                    t.ts_files += 1;
                    t.ts_packets += v.ts_mismatches;
                    let first = v.first_ts_mismatch.unwrap_or_default();
                    println!("TIMESTAMPS {label}: {} packets differ; first: {first}", v.ts_mismatches);
                    if origin == Origin::Corpus && exception.is_none() {
                        failures.push(format!(
                            "{label}: {} packets with other pts/dts/keyframe than ffprobe; first: {first}",
                            v.ts_mismatches
                        ));
                    }
                }
            }
            if t.scored + t.excepted == 0 {
                continue;
            }
            let rate = t.matched as f64 / t.scored.max(1) as f64;
            table.push(format!(
                "{fam:10} {:8} {:4}/{:<4} {:6.1}%  exceptions {:3}  timestamp diffs {} packets in {} files",
                origin.name(),
                t.matched,
                t.scored,
                100.0 * rate,
                t.excepted,
                t.ts_packets,
                t.ts_files
            ));
            if origin == Origin::Samples && t.scored > 0 && rate < MIN_SAMPLE_RATE {
                failures.push(format!(
                    "{fam}: {}/{} sample files match ffprobe ({:.1}%), below {:.0}%",
                    t.matched,
                    t.scored,
                    100.0 * rate,
                    100.0 * MIN_SAMPLE_RATE
                ));
            }
        }
        // Every exception of a built family must name a file that exists.
        if samples_dir().is_some() {
            for (_, name, _) in exceptions.iter().filter(|(fa, _, _)| fa == fam) {
                if !files.iter().any(|f| &f.name == name) {
                    failures.push(format!(
                        "core/tests/exceptions.tsv: {fam}/{name} is not a file of the family"
                    ));
                }
            }
        }
    }
    println!("\nfamily     origin   match/scored       exceptions");
    for row in &table {
        println!("{row}");
    }
    assert!(failures.is_empty(), "conformance failures:\n{}", failures.join("\n"));
}
