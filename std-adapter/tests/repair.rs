//! `mediaslice repair`, judged by our reader, ffprobe and mkvmerge.
//!
//! * Fragmented MP4 and Matroska/WebM (corpus, and samples when
//!   `../shared/samples` or `$MEDIASLICE_SAMPLES` is there) cut inside a
//!   fragment/Cluster, just after one and in the header: the repaired
//!   file's packets (per stream: size, CRC-32 of the data, pts, dts) equal
//!   the original's packets that lie wholly before the cut; ffprobe reads it
//!   with nothing on stderr; mkvmerge (when installed) identifies the MKV.
//!   A cut in the header fails, leaves no output and the input unchanged.
//! * A Matroska file with a damaged Cluster: the packets of the other
//!   Clusters are all kept, the damage is reported.
//! * MP4/MOV with `moov` turned into `free`, repaired with the original as
//!   reference: the video packets equal the original's (size, CRC-32,
//!   order, keyframe flags) and their times step by the reference's frame
//!   duration; audio is left out and reported.
//! * The command line: `--json` report, exit codes, no output on failure.

use crate::common;
use crate::remux_common;

use common::*;
use mediaslice::types::rescale_q;
use mediaslice::Rational;
use mediaslice_std::repair::{repair, RepairOptions};
use remux_common::{have, temp_dir};
use std::path::{Path, PathBuf};
use std::process::Command;

/// (track, size, crc, pts, dts) per packet, times in microseconds.
type Key = (usize, usize, u32, Option<i64>, Option<i64>);

fn keys(p: &Pulled) -> Vec<Key> {
    let us = |t: Option<i64>, track: usize| {
        let tb = p.tracks.get(track).map_or(Rational::new(1, 1), |t| t.time_base);
        t.map(|v| rescale_q(v, tb, Rational::new(1, 1_000_000)))
    };
    p.packets
        .iter()
        .filter(|k| !k.truncated)
        .map(|k| (k.track, k.size, k.crc, us(k.pts, k.track), us(k.dts, k.track)))
        .collect()
}

/// Whether two microsecond times agree within a millisecond (Matroska
/// keeps milliseconds) .
fn near(a: Option<i64>, b: Option<i64>) -> bool {
    match (a, b) {
        (Some(a), Some(b)) => (a - b).abs() <= 1000,
        (None, None) => true,
        _ => false,
    }
}

/// ffprobe's stderr on `path` (`-v error`), or `None` without ffprobe.
fn ffprobe_errors(path: &Path) -> Option<String> {
    if !have("ffprobe") {
        return None;
    }
    let out = Command::new("ffprobe")
        .args(["-v", "error", "-show_packets", "-of", "csv"])
        .arg(path)
        .output()
        .ok()?;
    Some(String::from_utf8_lossy(&out.stderr).into_owned())
}

/// The files of each kind: fragmented MP4 and Matroska/WebM.
fn inputs() -> Vec<PathBuf> {
    let root = repo_root();
    let mut out: Vec<PathBuf> = [
        "corpus/files/mp4/h264_aac_fragmented.mp4",
        "corpus/files/matroska/h264_aac_unknown_size_clusters.mkv",
        "corpus/files/matroska/h264_aac.mkv",
        "corpus/files/matroska/vp8_vorbis_live.webm",
        "corpus/files/matroska/vp9_opus.webm",
    ]
    .iter()
    .map(|p| root.join(p))
    .collect();
    match samples_dir() {
        Some(s) => out.extend(
            [
                "mp4/media__sample_fragmented.mp4",
                "mp4/mp4ff__v300_multiple_segments.mp4",
                "mp4/shaka-player__v.mp4",
                "matroska/ts-ebml__chrome52.webm",
                "matroska/webm-iterable__test.webm",
            ]
            .iter()
            .map(|p| s.join(p)),
        ),
        None => println!("samples not found: only the corpus is used (skipped: the samples)"),
    }
    out
}

/// The byte offsets just after each top-level unit that begins `id`
/// (a `moof` for MP4, a Cluster for Matroska): places a cut leaves whole
/// units behind.
fn unit_starts(data: &[u8], id: &[u8]) -> Vec<usize> {
    let back = if id == b"moof" { 4 } else { 0 };
    data.windows(id.len())
        .enumerate()
        .filter(|(_, w)| *w == id)
        .map(|(i, _)| i - back)
        .collect()
}

#[test]
fn cut_recordings_keep_every_whole_packet() {
    let dir = temp_dir("repair_cut");
    let mkvmerge = have("mkvmerge");
    if !mkvmerge {
        println!("mkvmerge not installed: its check is skipped");
    }
    let mut failures = Vec::new();
    let mut checked = 0;
    for path in inputs() {
        let data = std::fs::read(&path).unwrap();
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        let ext = ext_of(&path);
        let whole = pull_slice(&data, ext.as_deref(), false);
        let mp4 = ext.as_deref() == Some("mp4");
        let id: &[u8] = if mp4 { b"moof" } else { &[0x1F, 0x43, 0xB6, 0x75] };
        let starts = unit_starts(&data, id);
        let mut cuts: Vec<usize> = [0.31, 0.5, 0.77]
            .iter()
            .map(|f| (data.len() as f64 * f) as usize)
            .collect();
        // Just after a whole unit (the next one's start), and a few bytes
        // into the next unit's header.
        if let Some(&s) = starts.get(starts.len() / 2).filter(|&&s| s > 0) {
            cuts.push(s);
            cuts.push(s + 3);
        }
        for cut in cuts {
            let cut_path = dir.join(format!("{cut}_{name}"));
            std::fs::write(&cut_path, &data[..cut]).unwrap();
            let out = dir.join(format!("repaired_{cut}_{name}"));
            let expected: Vec<Key> = keys(&whole)
                .into_iter()
                .zip(whole.packets.iter().filter(|p| !p.truncated))
                .filter(|(_, p)| p.pos.is_some_and(|pos| pos as usize + p.size <= cut))
                .map(|(k, _)| k)
                .collect();
            let report = match repair(&cut_path, &out, &RepairOptions::default()) {
                Ok(r) => r,
                Err(e) => {
                    // Nothing before the cut: a clean failure is right.
                    if !expected.is_empty() || out.exists() {
                        failures.push(format!("{name} cut at {cut}: {e}"));
                    }
                    continue;
                }
            };
            checked += 1;
            let repaired = std::fs::read(&out).unwrap();
            let got = keys(&pull_slice(&repaired, ext.as_deref(), false));
            for track in 0..whole.tracks.len() {
                let e: Vec<&Key> = expected.iter().filter(|k| k.0 == track).collect();
                let g: Vec<&Key> = got.iter().filter(|k| k.0 == track).collect();
                let same = e.len() == g.len()
                    && e.iter()
                        .zip(&g)
                        .all(|(a, b)| a.1 == b.1 && a.2 == b.2 && near(a.3, b.3) && near(a.4, b.4));
                if !same {
                    let first = e.iter().zip(&g).position(|(a, b)| a != b);
                    failures.push(format!(
                        "{name} cut at {cut}: stream {track}: {} packets expected, {} repaired; first difference at {first:?}: {:?} / {:?}",
                        e.len(),
                        g.len(),
                        first.and_then(|i| e.get(i)),
                        first.and_then(|i| g.get(i))
                    ));
                }
            }
            let recovered: u64 = report.streams.iter().map(|s| s.packets).sum();
            if recovered != got.len() as u64 {
                failures.push(format!(
                    "{name} cut at {cut}: report says {recovered} packets, file has {}",
                    got.len()
                ));
            }
            // A cut exactly at a unit's start leaves a file that ends
            // cleanly: nothing in it was dropped. Any other cut is reported.
            if !starts.contains(&cut) && report.dropped.is_empty() {
                failures.push(format!(
                    "{name} cut at {cut}: packets lost but nothing reported dropped"
                ));
            }
            if let Some(err) = ffprobe_errors(&out).filter(|e| !e.trim().is_empty()) {
                failures.push(format!("{name} cut at {cut}: ffprobe: {}", err.trim()));
            }
            if mkvmerge && !mp4 {
                let st = Command::new("mkvmerge").arg("--identify").arg(&out).output().unwrap();
                if !st.status.success() {
                    failures.push(format!(
                        "{name} cut at {cut}: mkvmerge --identify failed: {}",
                        String::from_utf8_lossy(&st.stdout)
                    ));
                }
            }
        }
    }
    assert!(checked >= 15, "only {checked} repairs checked");
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn a_cut_in_the_header_fails_cleanly() {
    let dir = temp_dir("repair_header");
    for path in inputs().iter().take(3) {
        let data = std::fs::read(path).unwrap();
        let cut = dir.join(format!("head_{}", path.file_name().unwrap().to_string_lossy()));
        std::fs::write(&cut, &data[..40]).unwrap();
        let ext = ext_of(path).unwrap();
        let out = dir.join(format!("out.{ext}"));
        std::fs::write(&out, b"an older file").unwrap();
        let r = repair(&cut, &out, &RepairOptions::default());
        let e = r.expect_err(&format!("{}: a 40-byte header was repaired", path.display()));
        assert!(!e.to_string().contains("same family"), "{e}");
        assert_eq!(
            std::fs::read(&out).unwrap(),
            b"an older file",
            "a failed repair touched OUT"
        );
        assert_eq!(
            std::fs::read(&cut).unwrap(),
            &data[..40],
            "a failed repair touched the input"
        );
        // OUT naming IN is refused: the input is never replaced.
        let whole_copy = dir.join(format!("whole.{ext}"));
        std::fs::write(&whole_copy, &data).unwrap();
        assert!(repair(&whole_copy, &whole_copy, &RepairOptions::default()).is_err());
        assert_eq!(std::fs::read(&whole_copy).unwrap(), data, "the input was replaced");
        let fresh = dir.join(format!("fresh.{ext}"));
        assert!(repair(&cut, &fresh, &RepairOptions::default()).is_err());
        assert!(!fresh.exists(), "a failed repair left an output");
        let leftovers = std::fs::read_dir(&dir)
            .unwrap()
            .filter(|e| e.as_ref().unwrap().file_name().to_string_lossy().ends_with(".tmp"))
            .count();
        assert_eq!(leftovers, 0, "a temporary file was left");
    }
}

#[test]
fn a_damaged_cluster_is_skipped_and_reported() {
    let dir = temp_dir("repair_damage");
    let path = repo_root().join("corpus/files/matroska/h264_aac_unknown_size_clusters.mkv");
    let data = std::fs::read(&path).unwrap();
    let whole = pull_slice(&data, Some("mkv"), false);
    let clusters = unit_starts(&data, &[0x1F, 0x43, 0xB6, 0x75]);
    assert!(clusters.len() >= 3, "the corpus file has {} clusters", clusters.len());
    // Garbage over the first SimpleBlock (ID 0xA3) of the second Cluster
    // after its Timestamp: its header no longer reads.
    let (a, b) = (clusters[1], clusters[2]);
    let hit = a + 12 + data[a + 12..b].iter().position(|&x| x == 0xA3).unwrap();
    let mut bad = data.clone();
    bad[hit..hit + 24].fill(0xFF);
    let input = dir.join("damaged.mkv");
    std::fs::write(&input, &bad).unwrap();
    let out = dir.join("repaired.mkv");
    let report = repair(&input, &out, &RepairOptions::default()).unwrap();
    let got = keys(&pull_slice(&std::fs::read(&out).unwrap(), Some("mkv"), false));
    // Every packet outside the damaged Cluster is kept, in order.
    let outside: Vec<Key> = keys(&whole)
        .into_iter()
        .zip(&whole.packets)
        .filter(|(_, p)| p.pos.is_some_and(|pos| (pos as usize) < a || pos as usize >= b))
        .map(|(k, _)| k)
        .collect();
    let mut it = got.iter();
    for k in &outside {
        assert!(
            it.any(|g| g.0 == k.0 && g.1 == k.1 && g.2 == k.2),
            "packet {k:?} outside the damage is missing"
        );
    }
    assert!(got.len() < keys(&whole).len(), "nothing was lost to the damage?");
    let d = report
        .dropped
        .iter()
        .find(|d| d.reason.contains("mkv.resync"))
        .expect("the skip is reported");
    assert!(
        d.offset <= hit as u64 && d.offset + d.bytes > hit as u64,
        "{d:?} does not cover {hit}"
    );
    if let Some(err) = ffprobe_errors(&out) {
        assert!(err.trim().is_empty(), "ffprobe: {err}");
    }
}

#[test]
fn a_damaged_moof_is_reported() {
    let dir = temp_dir("repair_moof");
    let path = repo_root().join("corpus/files/mp4/h264_aac_fragmented.mp4");
    let data = std::fs::read(&path).unwrap();
    let whole = pull_slice(&data, Some("mp4"), false);
    let moofs = unit_starts(&data, b"moof");
    assert!(moofs.len() >= 3);
    // Garbage over the middle fragment's moof after its header.
    let m = moofs[moofs.len() / 2];
    let mut bad = data.clone();
    bad[m + 8..m + 40].fill(0xFF);
    let input = dir.join("damaged.mp4");
    std::fs::write(&input, &bad).unwrap();
    let out = dir.join("repaired.mp4");
    let report = repair(&input, &out, &RepairOptions::default()).unwrap();
    let got = keys(&pull_slice(&std::fs::read(&out).unwrap(), Some("mp4"), false));
    let lost: u64 = keys(&whole).iter().map(|k| k.1 as u64).sum::<u64>() - got.iter().map(|k| k.1 as u64).sum::<u64>();
    assert!(lost > 0, "the damage cost nothing?");
    let d = report
        .dropped
        .iter()
        .find(|d| d.reason.contains("moof"))
        .unwrap_or_else(|| panic!("the lost fragment is not reported: {:?}", report.dropped));
    assert_eq!(d.bytes, lost, "{d:?}");
    let next_mdat = moofs[moofs.len() / 2 + 1];
    assert!(
        d.offset > m as u64 && d.offset < next_mdat as u64,
        "{d:?} is not the damaged fragment's mdat"
    );
}

/// The MP4 inputs of the lost-moov test: (path, has audio).
fn moov_inputs() -> Vec<PathBuf> {
    let root = repo_root();
    let mut out: Vec<PathBuf> = [
        "corpus/files/mp4/h264_aac.mp4",
        "corpus/files/mp4/hevc_aac.mp4",
        "corpus/files/mp4/h264_pcm.mov",
        "corpus/files/mp4/h264_bframes_aac.mp4",
    ]
    .iter()
    .map(|p| root.join(p))
    .collect();
    match samples_dir() {
        Some(s) => out.extend(
            [
                "mp4/mp4ff__bbb_prog_10s.mp4",
                "mp4/media__h265_bframes.mp4",
                "mp4/media__sample_without_stss.mp4",
                "mp4/music-metadata__sample_640x360.mov",
                "mp4/mp4ff__prog_8s.mp4",
            ]
            .iter()
            .map(|p| s.join(p)),
        ),
        None => println!("samples not found: only the corpus is used (skipped: the samples)"),
    }
    out
}

/// `data` with its top-level `moov` renamed `free` (as if never written).
fn without_moov(data: &[u8]) -> Vec<u8> {
    let mut out = data.to_vec();
    let mut pos = 0usize;
    while pos + 8 <= out.len() {
        let size = u32::from_be_bytes(out[pos..pos + 4].try_into().unwrap()) as usize;
        if &out[pos + 4..pos + 8] == b"moov" {
            out[pos + 4..pos + 8].copy_from_slice(b"free");
            return out;
        }
        assert!(size >= 8, "no moov found");
        pos += size;
    }
    panic!("no moov found");
}

/// Bytes and CRC-32 of the packets of `track` of the MP4/MOV `bytes`.
fn track_bytes(bytes: &[u8], track: usize) -> (u64, u32) {
    let mut d = mediaslice::Demuxer::open(mediaslice::SliceSource::new(bytes), Some("mov")).unwrap();
    let mut c = mediaslice::crc::Crc32::new();
    let mut n = 0u64;
    while let Some(k) = d.next_packet().unwrap() {
        if k.track == track {
            c.update(k.data);
            n += k.data.len() as u64;
        }
    }
    (n, c.finish())
}

#[test]
fn a_lost_moov_is_rebuilt_from_a_reference() {
    let dir = temp_dir("repair_moov");
    let mut failures = Vec::new();
    for path in moov_inputs() {
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        let data = std::fs::read(&path).unwrap();
        let input = dir.join(format!("nomoov_{name}"));
        std::fs::write(&input, without_moov(&data)).unwrap();
        let out = dir.join(format!("repaired_{name}"));
        // Without a reference: a clear error, no output.
        let e = repair(&input, &out, &RepairOptions::default()).unwrap_err();
        assert!(e.to_string().contains("--reference"), "{name}: {e}");
        assert!(!out.exists());
        let opts = RepairOptions {
            reference: Some(path.clone()),
            ..Default::default()
        };
        let report = match repair(&input, &out, &opts) {
            Ok(r) => r,
            Err(e) => {
                failures.push(format!("{name}: {e}"));
                continue;
            }
        };
        let whole = pull_slice(&data, ext_of(&path).as_deref(), false);
        let video = whole
            .tracks
            .iter()
            .position(|t| t.kind == mediaslice::TrackKind::Video)
            .unwrap();
        let mut original: Vec<&Pkt> = whole.packets.iter().filter(|p| p.track == video).collect();
        original.sort_by_key(|p| p.pos);
        let repaired = pull_slice(&std::fs::read(&out).unwrap(), Some("mp4"), false);
        let got: Vec<&Pkt> = repaired.packets.iter().filter(|p| p.track == 0).collect();
        let same = original.len() == got.len()
            && original
                .iter()
                .zip(&got)
                .all(|(a, b)| a.size == b.size && a.crc == b.crc && a.keyframe == b.keyframe);
        if !same {
            let first = original
                .iter()
                .zip(&got)
                .position(|(a, b)| a.size != b.size || a.crc != b.crc || a.keyframe != b.keyframe);
            failures.push(format!(
                "{name}: {} video packets in the original, {} repaired; first difference at {first:?}",
                original.len(),
                got.len()
            ));
            continue;
        }
        // Times step by one frame duration, the reference's usual one.
        let step = got.get(1).and_then(|p| p.dts).unwrap_or(0) - got.first().and_then(|p| p.dts).unwrap_or(0);
        if step <= 0 || got.iter().enumerate().any(|(i, p)| p.dts != Some(i as i64 * step)) {
            failures.push(format!("{name}: repaired times do not step by one frame duration"));
        }
        // PCM audio is recovered into MOV output (which alone takes it):
        // every byte of it, in order, as the original's audio packets hold it.
        let pcm = whole
            .tracks
            .iter()
            .position(|t| t.codec.ffmpeg_name().starts_with("pcm_"))
            .filter(|_| name.ends_with(".mov"));
        let mut want_written = vec![video];
        if let Some(a) = pcm {
            want_written.push(a);
            let repaired_bytes = std::fs::read(&out).unwrap();
            let (a_in, a_out) = (track_bytes(&data, a), track_bytes(&repaired_bytes, 1));
            if a_in != a_out || a_in.0 == 0 {
                failures.push(format!(
                    "{name}: PCM bytes/CRC {a_in:?} in the original, {a_out:?} repaired"
                ));
            }
        }
        let written: Vec<usize> = report.streams.iter().map(|s| s.index).collect();
        if written != want_written || whole.tracks.len() > want_written.len() && report.left_out.is_empty() {
            failures.push(format!(
                "{name}: streams written {written:?}, left out {:?}",
                report.left_out
            ));
        }
        if let Some(err) = ffprobe_errors(&out).filter(|e| !e.trim().is_empty()) {
            failures.push(format!("{name}: ffprobe: {}", err.trim()));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn the_command_line_reports_and_fails_cleanly() {
    let dir = temp_dir("repair_cli");
    let bin = env!("CARGO_BIN_EXE_mediaslice");
    let data = std::fs::read(repo_root().join("corpus/files/mp4/h264_aac_fragmented.mp4")).unwrap();
    let cut = dir.join("cut.mp4");
    std::fs::write(&cut, &data[..data.len() * 2 / 3]).unwrap();
    let out = dir.join("out.mp4");
    let run = Command::new(bin)
        .args(["repair", "--json"])
        .arg(&cut)
        .arg(&out)
        .arg("--progressive")
        .output()
        .unwrap();
    assert_eq!(run.status.code(), Some(0), "{}", String::from_utf8_lossy(&run.stderr));
    let doc: serde_json::Value = serde_json::from_slice(&run.stdout).unwrap();
    assert_eq!(doc["output_format"], "mp4");
    let packets: u64 = doc["recovered"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["packets"].as_u64().unwrap())
        .sum();
    let ours = pull_slice(&std::fs::read(&out).unwrap(), Some("mp4"), false);
    assert_eq!(packets, ours.packets.len() as u64);
    assert!(ours.end_err.is_none(), "the repaired file reads with an error");
    let dropped = doc["dropped"].as_array().unwrap();
    assert!(
        dropped
            .iter()
            .any(|d| d["reason"].as_str().unwrap().contains("ends inside")),
        "{dropped:?}"
    );
    let stderr = String::from_utf8_lossy(&run.stderr);
    assert!(stderr.contains("recovered") && stderr.contains("dropped"), "{stderr}");
    // OUT of another family: refused before anything is written.
    let other = dir.join("out.mkv");
    let run = Command::new(bin).arg("repair").arg(&cut).arg(&other).output().unwrap();
    assert_eq!(run.status.code(), Some(1));
    assert!(!other.exists());
    assert!(String::from_utf8_lossy(&run.stderr).contains("same family"));
    // A failure: exit 1, one line, no output.
    let head = dir.join("head.mp4");
    std::fs::write(&head, &data[..20]).unwrap();
    let bad = dir.join("bad.mp4");
    let run = Command::new(bin).arg("repair").arg(&head).arg(&bad).output().unwrap();
    assert_eq!(run.status.code(), Some(1));
    assert!(!bad.exists());
    assert_eq!(String::from_utf8_lossy(&run.stderr).lines().count(), 1);
}

/// `repair_in_memory` (what the `repair` fuzz target runs) writes the bytes
/// `repair` writes to a file, with the same report, for the inputs above
/// and an AVI of the corpus, whole and cut at 40% and 80%.
#[test]
fn in_memory_repair_writes_the_file_repairs_bytes() {
    use mediaslice::{Sink, SliceSink};
    use mediaslice_std::repair::repair_in_memory;
    let dir = temp_dir("repair_memory");
    let mut paths = inputs();
    paths.push(repo_root().join("corpus/files/avi/mpeg4_mp3.avi"));
    let mut compared = 0;
    for path in paths {
        let Ok(data) = std::fs::read(&path) else {
            println!("{}: missing (skipped)", path.display());
            continue;
        };
        let ext = ext_of(&path).unwrap_or_default();
        for pc in [100, 80, 40] {
            let cut = &data[..data.len() * pc / 100];
            let input = dir.join(format!("in_{pc}.{ext}"));
            let output = dir.join(format!("out_{pc}.{ext}"));
            std::fs::write(&input, cut).unwrap();
            let on_file = repair(&input, &output, &RepairOptions::default());
            let mut buf = vec![0u8; cut.len() * 2 + (4 << 20)];
            let in_memory = repair_in_memory(cut, None, &RepairOptions::default(), SliceSink::new(&mut buf));
            match (on_file, in_memory) {
                (Ok(a), Ok((b, sink))) => {
                    let written = std::fs::read(&output).unwrap();
                    let n = sink.position() as usize;
                    assert_eq!(&buf[..n], &written[..], "{} at {pc}%", path.display());
                    assert_eq!(
                        (a.packets(), a.output_bytes, &a.dropped),
                        (b.packets(), b.output_bytes, &b.dropped),
                        "{} at {pc}%",
                        path.display()
                    );
                    compared += 1;
                }
                (Err(a), Err(b)) => assert_eq!(a.to_string(), b.to_string(), "{} at {pc}%", path.display()),
                (a, b) => panic!(
                    "{} at {pc}%: file {:?}, memory {:?}",
                    path.display(),
                    a.map(|r| r.packets()),
                    b.map(|r| r.0.packets())
                ),
            }
        }
    }
    assert!(compared > 0);
}
