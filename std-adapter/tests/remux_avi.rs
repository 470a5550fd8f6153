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
//! * H.264 + AAC from MP4 and Matroska (`avcC`, length-prefixed NAL units)
//!   to AVI: the same packets (size, flags, CRC-32 of the payload) and
//!   extradata as ffmpeg's `-c copy -bsf:v h264_mp4toannexb`, times as
//!   ffmpeg's (Matroska) or the input's (MP4, see the test); AAC from ADTS
//!   gives the raw frames of the MP4's AVI;
//! * refusals: standard output, `--live`.

use crate::common;
use crate::remux_common;

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
        .args(["-v", "error", "-show_data_hash", "CRC32", "-show_entries"])
        .arg(format!("packet=stream_index,{entries}"))
        .args(["-of", "csv=p=0"])
        .arg(path)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.trim().is_empty(), "{}: ffprobe: {err}", path.display());
    let mut streams: Vec<Vec<String>> = Vec::new();
    // An empty line stands for a packet's side data (MP4 AAC priming).
    for line in String::from_utf8_lossy(&out.stdout).lines().filter(|l| !l.is_empty()) {
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
    assert!(
        remux_common::names_in(&dir).is_empty(),
        "{:?}",
        remux_common::names_in(&dir)
    );
}

/// ffprobe's `extradata_hash` (CRC-32) of each stream of `path`.
fn extradata(path: &Path) -> Vec<String> {
    let out = Command::new("ffprobe")
        .args(["-v", "error", "-show_data_hash", "CRC32", "-show_entries"])
        .args(["stream=extradata_hash", "-of", "csv=p=0"])
        .arg(path)
        .output()
        .unwrap();
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(str::to_owned)
        .collect()
}

/// H.264 (length-prefixed, `avcC`) + AAC from MP4 and Matroska to AVI.
/// ffmpeg's plain `-c copy` does not convert: from MP4 it writes the
/// length-prefixed packets under the `avc1` tag, from Matroska it fails
/// ("H.264 bitstream malformed, no startcode found"). With `-bsf:v
/// h264_mp4toannexb` it writes what we write: the same payloads (SPS/PPS
/// before each IDR picture), the parameter sets as Annex B extradata, AAC
/// raw frames under tag 0x00FF with the AudioSpecificConfig.
#[test]
fn h264_and_aac_from_mp4_and_matroska_become_annexb_as_ffmpegs_filter_makes_them() {
    if !have("ffmpeg") || !have("ffprobe") {
        println!("ffmpeg or ffprobe not installed: skipped");
        return;
    }
    let dir = temp_dir("remux_avi_avcc");
    let payload = "size,flags,data_hash";
    let times = "pts_time,dts_time";
    for name in ["mp4/h264_aac.mp4", "matroska/h264_aac.mkv"] {
        let input = repo_root().join("corpus/files").join(name);
        let theirs = dir.join("ffmpeg.avi");
        let st = Command::new("ffmpeg")
            .args(["-v", "error", "-y", "-i"])
            .arg(&input)
            .args(["-c", "copy", "-bsf:v", "h264_mp4toannexb"])
            .arg(&theirs)
            .status()
            .unwrap();
        assert!(st.success(), "{name}: ffmpeg failed");
        let out = dir.join("ours.avi");
        remux_file(&input, &out, &RemuxOptions::default()).unwrap();
        let ours_p = ffprobe_packets(&out, payload).unwrap();
        assert_eq!(ours_p.len(), 2, "{name}");
        assert!(ours_p[0].len() > 20 && ours_p[1].len() > 20, "{name}");
        assert_eq!(ours_p, ffprobe_packets(&theirs, payload).unwrap(), "{name}: payloads");
        assert_eq!(extradata(&out), extradata(&theirs), "{name}: extradata");
        let (o, t) = (
            ffprobe_packets(&out, times).unwrap(),
            ffprobe_packets(&theirs, times).unwrap(),
        );
        // Audio times as ffmpeg's (the MP4's AAC priming frame at 0).
        assert_eq!(o[1], t[1], "{name}: audio times");
        if name.ends_with(".mkv") {
            // Matroska gives no decoding time: ffmpeg guesses them one
            // frame apart, as we count them.
            assert_eq!(o[0], t[0], "{name}: video times");
        } else {
            // ffmpeg moves the MP4's video by the AAC priming (21 ms) and
            // rounds it to its 1/50 s ticks: its second frame is at 80 ms,
            // a frame late (0, 0.08, 0.12, ...); ours keep the input's
            // frame times (0, 0.04, 0.08, ...).
            let input_v = ffprobe_packets(&input, "dts_time").unwrap();
            let ours_v = ffprobe_packets(&out, "dts_time").unwrap();
            assert_eq!(ours_v[0], input_v[0], "{name}: video times");
        }
    }
    // The MP4's AAC as ADTS: the same raw frames and configuration as
    // from the MP4. ffmpeg's `-c copy` keeps the 7-byte ADTS headers in
    // AVI (and its aac_adtstoasc filter comes too late for the AVI header:
    // no extradata).
    let input = repo_root().join("corpus/files/mp4/h264_aac.mp4");
    let adts = dir.join("in.aac");
    let st = Command::new("ffmpeg")
        .args(["-v", "error", "-y", "-i"])
        .arg(&input)
        .args(["-vn", "-c", "copy", "-f", "adts"])
        .arg(&adts)
        .status()
        .unwrap();
    assert!(st.success());
    let from_mp4 = dir.join("from_mp4.avi");
    remux_file(&input, &from_mp4, &RemuxOptions::default()).unwrap();
    let out = dir.join("from_adts.avi");
    remux_file(&adts, &out, &RemuxOptions::default()).unwrap();
    let fields = "pts_time,size,flags,data_hash";
    let a = ffprobe_packets(&out, fields).unwrap();
    assert_eq!(a.len(), 1);
    assert_eq!(a[0], ffprobe_packets(&from_mp4, fields).unwrap()[1]);
    // The configuration: the 2-byte AudioSpecificConfig of the ADTS header
    // (the MP4's has 5, with the SBR sync extension saying "no SBR"); the
    // same profile, rate and channels.
    let params = |p: &Path| {
        let out = Command::new("ffprobe")
            .args(["-v", "error", "-show_entries"])
            .args(["stream=codec_name,profile,sample_rate,channels", "-of", "csv=p=0"])
            .arg(p)
            .output()
            .unwrap();
        String::from_utf8_lossy(&out.stdout)
            .lines()
            .last()
            .unwrap_or("")
            .to_owned()
    };
    assert_eq!(params(&out), params(&from_mp4));
    assert!(params(&out).starts_with("aac,LC,48000,2"), "{}", params(&out));
    let theirs = dir.join("ffmpeg_adts.avi");
    remux_common::ffmpeg_copy(&adts, &theirs);
    let sizes = |p: &Path| -> Vec<usize> {
        ffprobe_packets(p, "size").unwrap()[0]
            .iter()
            .map(|s| s.parse().unwrap())
            .collect()
    };
    let with_headers: Vec<usize> = sizes(&out).iter().map(|s| s + 7).collect();
    assert_eq!(with_headers, sizes(&theirs));
}
