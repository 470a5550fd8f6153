//! Monkey's Audio and Musepack inputs cut by the end of the input, against
//! live ffprobe on the same bytes: every corpus file of `ape/` and `mpc/`
//! cut at several points (inside the header, inside frames, inside the
//! trailing tag) must give ffprobe's packets (size, CRC-32, pts, dts, key)
//! exactly, the cut frame included where ffmpeg gives it (Monkey's Audio
//! and SV8: the bytes up to the cut; SV7: none). Whole files are checked
//! against the stored oracle by `conformance.rs`.
//!
//! One difference is ours by design (docs/formats/musepack.md): an SV8
//! input cut inside its APEv2 tag has no footer for ffmpeg to find, and the
//! `AP` of the tag header's `APETAGEX` reads as one more audio packet to
//! ffmpeg; we end at `APETAGEX`. ffprobe's packets from the tag header on
//! are left out of the comparison, and only those.
//!
//! Needs ffprobe: without it the test prints why and checks nothing.

#![allow(clippy::indexing_slicing, clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use crate::common;

use common::*;
use std::process::Command;

/// Shares of the file where it is cut, in thousandths, and the last bytes.
const CUTS: [usize; 6] = [300, 500, 600, 700, 850, 950];

/// Where the APEv2 tag's header (`APETAGEX`) starts, if the file has one.
fn tag_header(bytes: &[u8]) -> Option<usize> {
    bytes.windows(8).position(|w| w == b"APETAGEX")
}

#[test]
fn cut_inputs_give_ffprobes_packets() {
    if Command::new("ffprobe").arg("-version").output().is_err() {
        println!("note: ffprobe not found: the cut Monkey's Audio and Musepack inputs are not checked");
        return;
    }
    let dir = std::env::temp_dir().join(format!("mediaslice-ape-mpc-cuts-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let (mut checked, mut failures) = (0usize, Vec::new());
    for fam in ["ape", "mpc"] {
        let files: Vec<_> = family_files(fam)
            .into_iter()
            .filter(|f| f.origin == Origin::Corpus)
            .collect();
        assert!(!files.is_empty(), "no corpus files for {fam}");
        for f in files {
            let bytes = f.read();
            let ext = f.ext();
            let mut cuts: Vec<usize> = CUTS.iter().map(|m| bytes.len() * m / 1000).collect();
            cuts.push(bytes.len() - 3);
            for cut in cuts {
                let path = dir.join(format!("{}.{cut}.{}", f.name, ext.as_deref().unwrap_or("bin")));
                std::fs::write(&path, &bytes[..cut]).unwrap();
                let out = Command::new("ffprobe")
                    .args([
                        "-v",
                        "quiet",
                        "-show_streams",
                        "-show_packets",
                        "-show_data_hash",
                        "CRC32",
                        "-of",
                        "json",
                    ])
                    .arg(&path)
                    .output()
                    .unwrap();
                let mut doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap_or_default();
                if let (Some(tag), Some(pkts)) = (tag_header(&bytes), doc["packets"].as_array_mut()) {
                    pkts.retain(|p| {
                        p["pos"]
                            .as_str()
                            .and_then(|v| v.parse::<usize>().ok())
                            .is_none_or(|pos| pos < tag)
                    });
                }
                let ours = pull_slice(&bytes[..cut], ext.as_deref(), false);
                let ffprobe_opens = doc["streams"].as_array().is_some_and(|s| !s.is_empty());
                if !ffprobe_opens {
                    if ours.open_err.is_none() && !ours.packets.is_empty() {
                        failures.push(format!(
                            "{} cut at {cut}: ffprobe opens nothing, we give packets",
                            f.label()
                        ));
                    }
                    continue;
                }
                let v = compare(&doc, &ours);
                let exact = v.notes.iter().any(|n| n.ends_with(":packet-exact"));
                let exp = expected_packets(&doc).len();
                if !(v.ok && v.ts_mismatches == 0 && (exact || exp == 0)) {
                    failures.push(format!(
                        "{} cut at {cut}: {} {}",
                        f.label(),
                        v.notes.join(", "),
                        v.first_ts_mismatch.unwrap_or_default()
                    ));
                }
                checked += 1;
            }
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
    println!("{checked} cut inputs equal to ffprobe's packets");
    assert!(checked > 0);
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
