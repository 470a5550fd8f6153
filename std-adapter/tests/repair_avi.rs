//! `mediaslice repair` of AVI, judged by our reader and ffprobe: the AVIs
//! of the corpus, the samples (`../shared/samples/avi`, or
//! `$MEDIASLICE_SAMPLES`; skipped with a message when absent) and one made
//! by ffmpeg (skipped without it), each
//!
//! * with its `idx1` cut off, and with its `idx1` entries overwritten:
//!   every packet comes back (size, CRC-32, dts per stream);
//! * cut inside `movi` at three places: every packet that lies wholly
//!   before the cut comes back, and the report drops the tail;
//! * with a chunk header in `movi` damaged: the packets that come back are
//!   the original's in order less those the damage took (payloads: the
//!   times of the stream after a lost chunk are one frame early, as
//!   nothing in the file says a chunk was there), and the report names the
//!   resynchronisation.
//!
//! Each output has an `idx1` that our reader uses (no `avi.no-index`), and
//! ffprobe reads it with nothing on stderr.

use crate::common;
use crate::remux_common;

use common::*;
use mediaslice_std::repair::{repair, RepairOptions};
use remux_common::{have, temp_dir};
use std::path::{Path, PathBuf};
use std::process::Command;

/// (track, size, crc, dts) of a packet.
type Key = (usize, usize, u32, Option<i64>);

fn keys(p: &Pulled, before: usize) -> Vec<Key> {
    p.packets
        .iter()
        .filter(|k| !k.truncated && k.pos.is_some_and(|at| at as usize + k.size <= before))
        .map(|k| (k.track, k.size, k.crc, k.dts))
        .collect()
}

fn inputs(dir: &Path) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = ["mjpeg_pcm.avi", "mpeg4_mp3.avi"]
        .iter()
        .map(|n| repo_root().join("corpus/files/avi").join(n))
        .collect();
    match samples_dir() {
        Some(s) => out.push(s.join("avi/media__sample.avi")),
        None => println!("samples not found: only the corpus and ffmpeg's AVIs are used"),
    }
    if have("ffmpeg") {
        let made = dir.join("ffmpeg_mpeg4_ac3.avi");
        let st = Command::new("ffmpeg")
            .args([
                "-v",
                "error",
                "-y",
                "-f",
                "lavfi",
                "-i",
                "testsrc=size=64x48:rate=25:duration=3",
            ])
            .args(["-f", "lavfi", "-i", "sine=sample_rate=48000:duration=3"])
            .args(["-c:v", "mpeg4", "-g", "12", "-c:a", "ac3"])
            .arg(&made)
            .status()
            .unwrap();
        assert!(st.success());
        out.push(made);
    } else {
        println!("ffmpeg not installed: no ffmpeg-made AVI");
    }
    out
}

/// The offset of the `idx1` chunk after `movi`.
fn idx1_at(data: &[u8]) -> usize {
    data.windows(4).rposition(|w| w == b"idx1").expect("an idx1")
}

/// Repairs `bytes` (written to `dir/name`) and reads the output back;
/// checks it has an index our reader uses and that ffprobe reads it
/// cleanly.
fn repaired(dir: &Path, name: &str, bytes: &[u8]) -> (Pulled, mediaslice_std::repair::RepairReport) {
    let input = dir.join(name);
    std::fs::write(&input, bytes).unwrap();
    let out = dir.join(format!("{name}.fixed.avi"));
    let report = repair(&input, &out, &RepairOptions::default()).unwrap_or_else(|e| panic!("{name}: {e}"));
    let data = std::fs::read(&out).unwrap();
    let back = pull_slice(&data, Some("avi"), false);
    assert!(
        !back.diagnostics.contains(&"avi.no-index"),
        "{name}: {:?}",
        back.diagnostics
    );
    assert!(data.len() > 8 && idx1_at(&data) > 0, "{name}: no idx1");
    if have("ffprobe") {
        let o = Command::new("ffprobe")
            .args(["-v", "error", "-show_packets", "-of", "csv"])
            .arg(&out)
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(err.trim().is_empty(), "{name}: ffprobe: {err}");
    }
    (back, report)
}

#[test]
fn a_missing_or_damaged_idx1_is_rebuilt_with_every_packet() {
    let dir = temp_dir("repair_avi_idx1");
    for path in inputs(&dir) {
        let data = std::fs::read(&path).unwrap();
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        let whole = keys(&pull_slice(&data, Some("avi"), false), usize::MAX);
        let at = idx1_at(&data);
        let (back, _) = repaired(&dir, &format!("noidx-{name}"), &data[..at]);
        assert_eq!(keys(&back, usize::MAX), whole, "{name}: idx1 cut off");
        let mut damaged = data.clone();
        for b in damaged.iter_mut().skip(at + 8 + 40).take(200) {
            *b = 0xA5;
        }
        let (back, _) = repaired(&dir, &format!("badidx-{name}"), &damaged);
        assert_eq!(keys(&back, usize::MAX), whole, "{name}: idx1 damaged");
    }
}

#[test]
fn a_cut_avi_keeps_every_whole_packet() {
    let dir = temp_dir("repair_avi_cut");
    let mut checked = 0;
    for path in inputs(&dir) {
        let data = std::fs::read(&path).unwrap();
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        let whole = pull_slice(&data, Some("avi"), false);
        for f in [0.31, 0.5, 0.77] {
            let cut = (data.len() as f64 * f) as usize;
            let (back, report) = repaired(&dir, &format!("cut{cut}-{name}"), &data[..cut]);
            assert_eq!(keys(&back, usize::MAX), keys(&whole, cut), "{name} cut at {cut}");
            let tail = report.dropped.last().expect("the tail is reported");
            assert_eq!(tail.offset + tail.bytes, cut as u64, "{name}: {:?}", report.dropped);
            checked += 1;
        }
    }
    assert!(checked >= 6);
}

#[test]
fn a_damaged_chunk_is_skipped_and_reported() {
    let dir = temp_dir("repair_avi_damage");
    for path in inputs(&dir) {
        let data = std::fs::read(&path).unwrap();
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        let at = idx1_at(&data);
        let whole = keys(&pull_slice(&data, Some("avi"), false), usize::MAX);
        // Without its idx1 and with a chunk header in the middle of movi
        // overwritten: the walk must resynchronise.
        let mut bad = data[..at].to_vec();
        let mid = bad.len() / 2;
        let hit = (mid..bad.len() - 8)
            .find(|&i| bad[i + 2..i + 4] == *b"dc" || bad[i + 2..i + 4] == *b"wb")
            .expect("a chunk header after the middle");
        for b in &mut bad[hit..hit + 8] {
            *b = 0xEE;
        }
        let (back, report) = repaired(&dir, &format!("damaged-{name}"), &bad);
        // Times are counts in AVI: after the lost chunk its stream's
        // times are one frame early (nothing in the file says a frame was
        // there), so only the payloads are compared.
        let payload = |v: Vec<Key>| v.into_iter().map(|k| (k.0, k.1, k.2)).collect::<Vec<_>>();
        let (got, whole) = (payload(keys(&back, usize::MAX)), payload(whole));
        // In order, a subsequence of the original's packets: the chunk
        // whose header was hit is lost.
        let mut it = whole.iter();
        for k in &got {
            assert!(it.any(|w| w == k), "{name}: {k:?} is not among the original's in order");
        }
        assert!(
            got.len() < whole.len() && got.len() + 3 >= whole.len(),
            "{name}: {} of {}",
            got.len(),
            whole.len()
        );
        assert!(
            report.dropped.iter().any(|d| d.reason.contains("avi.resync")),
            "{name}: {:?}",
            report.dropped
        );
    }
}
