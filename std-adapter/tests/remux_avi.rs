//! `mediaslice remux` to AVI, judged packet by packet by our reader and
//! by ffprobe:
//!
//! * every AVI of the corpus and of the samples (`../shared/samples/avi`,
//!   or `$MEDIASLICE_SAMPLES`; skipped with a message when absent) remuxed
//!   to `.avi`: our reader gives, per stream, the same packets (size,
//!   CRC-32, pts, dts in microseconds, keyframe flag) from the output as
//!   from the input, and ffprobe `-show_packets` gives the same packets
//!   (pts, dts, duration, size, flags) for both; a refused input (a codec
//!   the muxer does not write) leaves no output;
//! * AVIs made by ffmpeg (`-f lavfi`: MPEG-4 Part 2 with B-frames, MJPEG,
//!   H.264, PCM u8/s24 6 channels, MP2, MP3, AC-3), the same checks;
//!   skipped with a message without ffmpeg;
//! * an MP4 (MPEG-4 Part 2 and MP3) to AVI: the same packets and times in
//!   seconds as ffmpeg's own `-c copy` to AVI;
//! * refusals: standard output, `--live`, H.264 with an avcC.

#[path = "../../core/tests/common/mod.rs"]
mod common;
mod remux_common;

use common::*;
use mediaslice::types::rescale_q;
use mediaslice::Rational;
use mediaslice_std::remux::{remux_file, RemuxError, RemuxFormat, RemuxOptions};
use remux_common::{have, temp_dir};
use std::path::Path;
use std::process::Command;

/// (size, crc, pts µs, dts µs, keyframe) of a whole packet.
type Key = (usize, u32, Option<i64>, Option<i64>, bool);

/// Per stream: every whole packet.
type Streams = Vec<Vec<Key>>;

fn ours(path: &Path) -> Streams {
    let p = pull_slice(&std::fs::read(path).unwrap(), ext_of(path).as_deref(), false);
    assert!(p.open_err.is_none(), "{}: {:?}", path.display(), p.open_err);
    let mut out: Streams = vec![Vec::new(); p.tracks.len()];
    for k in p.packets.iter().filter(|k| !k.truncated) {
        let tb = p.tracks[k.track].time_base;
        let us = |t: Option<i64>| t.map(|v| rescale_q(v, tb, Rational::new(1, 1_000_000)));
        out[k.track].push((k.size, k.crc, us(k.pts), us(k.dts), k.keyframe));
    }
    out
}

/// ffprobe's packets of `path`, per stream, with `entries` (or `None`
/// without ffprobe); stderr must be empty.
fn ffprobe_packets(path: &Path, entries: &str) -> Option<Vec<Vec<String>>> {
    if !have("ffprobe") {
        return None;
    }
    let out = Command::new("ffprobe")
        .args(["-v", "error", "-show_entries"])
        .arg(format!("packet=stream_index,{entries}"))
        .args(["-of", "csv=p=0"])
        .arg(path)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.trim().is_empty(), "{}: ffprobe: {err}", path.display());
    let mut streams: Vec<Vec<String>> = Vec::new();
    for line in String::from_utf8_lossy(&out.stdout).lines() {
        let (s, rest) = line.split_once(',').unwrap_or((line, ""));
        let s: usize = s.parse().unwrap();
        if streams.len() <= s {
            streams.resize(s + 1, Vec::new());
        }
        streams[s].push(rest.to_owned());
    }
    Some(streams)
}

/// Remuxes `input` to `out` (.avi) and checks the packets as the module
/// says; returns false when the muxer refused it (and left no output).
fn round_trip(input: &Path, out: &Path, failures: &mut Vec<String>) -> bool {
    let label = input.display().to_string();
    match remux_file(input, out, &RemuxOptions::default()) {
        Ok(r) => assert!(r.packets > 0, "{label}: no packet"),
        Err(e) => {
            println!("{label}: not written: {e}");
            assert!(!out.exists(), "{label}: a failed remux left its output");
            return false;
        }
    }
    let (a, b) = (ours(input), ours(out));
    for (s, (x, y)) in a.iter().zip(&b).enumerate() {
        if x != y {
            let at = x
                .iter()
                .zip(y)
                .position(|(p, q)| p != q)
                .unwrap_or(x.len().min(y.len()));
            failures.push(format!(
                "{label}: stream {s}: our reader: {} vs {} packets, first difference at {at}: {:?} vs {:?}",
                x.len(),
                y.len(),
                x.get(at),
                y.get(at)
            ));
        }
    }
    if a.len() != b.len() {
        failures.push(format!("{label}: {} streams vs {}", a.len(), b.len()));
    }
    let fields = "pts,dts,duration,size,flags";
    if let (Some(x), Some(y)) = (ffprobe_packets(input, fields), ffprobe_packets(out, fields)) {
        if x != y {
            failures.push(format!("{label}: ffprobe's packets differ from the input's"));
        }
    }
    true
}

#[test]
fn corpus_and_sample_avis_round_trip_packet_by_packet() {
    if !have("ffprobe") {
        println!("ffprobe not installed: its check is skipped");
    }
    let dir = temp_dir("remux_avi_files");
    let files = family_files("avi");
    if !files.iter().any(|f| f.origin == Origin::Samples) {
        println!("no samples/avi (set MEDIASLICE_SAMPLES): only the corpus AVIs are used");
    }
    let mut failures = Vec::new();
    let mut written = 0;
    for f in &files {
        let out = dir.join(format!("{}.{}.avi", f.origin.name(), f.name));
        written += usize::from(round_trip(&f.path, &out, &mut failures));
    }
    println!("{written} of {} AVI files round-tripped", files.len());
    // The two corpus AVIs (MJPEG + PCM, MPEG-4 + MP3) at least.
    assert!(written >= 2, "{written} written");
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// `ffmpeg -f lavfi` sources encoded with `args` into `out`.
fn ffmpeg_make(out: &Path, rate: u32, audio: &str, args: &[&str]) {
    let st = Command::new("ffmpeg")
        .args(["-v", "error", "-y", "-f", "lavfi", "-i"])
        .arg(format!("testsrc=size=64x48:rate={rate}:duration=2"))
        .args(["-f", "lavfi", "-i"])
        .arg(format!("sine=frequency=440:{audio}:duration=2"))
        .args(args)
        .arg(out)
        .status()
        .unwrap();
    assert!(st.success(), "ffmpeg could not make {}", out.display());
}

#[test]
fn ffmpeg_made_avis_round_trip_packet_by_packet() {
    if !have("ffmpeg") {
        println!("ffmpeg not installed: the ffmpeg-made AVIs are skipped");
        return;
    }
    let dir = temp_dir("remux_avi_ffmpeg");
    let cases: &[(&str, u32, &str, &[&str])] = &[
        (
            "mpeg4_ac3",
            25,
            "sample_rate=48000",
            &["-c:v", "mpeg4", "-bf", "2", "-c:a", "ac3"],
        ),
        (
            "mjpeg_s24_6ch",
            30,
            "sample_rate=44100",
            &["-ac", "6", "-c:v", "mjpeg", "-c:a", "pcm_s24le"],
        ),
        ("mpeg4_u8", 25, "sample_rate=8000", &["-c:v", "mpeg4", "-c:a", "pcm_u8"]),
        (
            "mpeg4_mp2_32k",
            25,
            "sample_rate=32000",
            &["-c:v", "mpeg4", "-c:a", "mp2"],
        ),
        (
            "h264_mp3",
            25,
            "sample_rate=22050",
            &["-c:v", "libx264", "-g", "10", "-c:a", "libmp3lame"],
        ),
    ];
    let mut failures = Vec::new();
    for (name, rate, audio, args) in cases {
        let input = dir.join(format!("{name}.avi"));
        ffmpeg_make(&input, *rate, audio, args);
        let out = dir.join(format!("{name}.out.avi"));
        assert!(round_trip(&input, &out, &mut failures), "{name} was refused");
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn an_mp4_becomes_the_avi_ffmpeg_makes() {
    if !have("ffmpeg") || !have("ffprobe") {
        println!("ffmpeg or ffprobe not installed: skipped");
        return;
    }
    let dir = temp_dir("remux_avi_from_mp4");
    let mp4 = dir.join("in.mp4");
    ffmpeg_make(
        &mp4,
        25,
        "sample_rate=44100",
        &["-c:v", "mpeg4", "-bf", "2", "-c:a", "libmp3lame"],
    );
    let theirs = dir.join("ffmpeg.avi");
    remux_common::ffmpeg_copy(&mp4, &theirs);
    let out = dir.join("ours.avi");
    remux_file(&mp4, &out, &RemuxOptions::default()).unwrap();
    // ffmpeg's AVI counts this video in 1/50 s ticks, ours in frames of
    // 1/25 s: the times in seconds are the same.
    let fields = "pts_time,dts_time,size,flags";
    assert_eq!(ffprobe_packets(&out, fields), ffprobe_packets(&theirs, fields));
    let (a, b) = (ours(&mp4), ours(&out));
    for (x, y) in a.iter().zip(&b) {
        let payload = |v: &Vec<Key>| v.iter().map(|p| (p.0, p.1, p.4)).collect::<Vec<_>>();
        assert_eq!(payload(x), payload(y));
    }
}

#[test]
fn refusals_leave_no_output() {
    let dir = temp_dir("remux_avi_refusals");
    let input = repo_root().join("corpus/files/avi/mpeg4_mp3.avi");
    let live = RemuxOptions {
        live: true,
        ..RemuxOptions::default()
    };
    let out = dir.join("live.avi");
    let e = remux_file(&input, &out, &live).unwrap_err();
    assert!(matches!(e, RemuxError::NeedsSeek(RemuxFormat::Avi)), "{e}");
    let to_stdout = RemuxOptions {
        format: Some(RemuxFormat::Avi),
        ..RemuxOptions::default()
    };
    let e = remux_file(&input, Path::new("-"), &to_stdout).unwrap_err();
    assert!(matches!(e, RemuxError::NeedsSeek(RemuxFormat::Avi)), "{e}");
    // H.264 in MP4 is length-prefixed (avcC): AVI carries Annex B.
    let mp4 = repo_root().join("corpus/files/mp4/h264_aac_fragmented.mp4");
    let out = dir.join("h264.avi");
    let e = remux_file(&mp4, &out, &RemuxOptions::default()).unwrap_err();
    assert!(e.to_string().contains("avcC"), "{e}");
    assert!(
        remux_common::names_in(&dir).is_empty(),
        "{:?}",
        remux_common::names_in(&dir)
    );
}
