//! `mediaslice remux` to MPEG-TS (`.ts`, `.m2ts`, `.mts`, `--format ts`):
//!
//! * every corpus file remuxed to `.ts`: a file whose codecs TS does not
//!   carry is refused and leaves no output; every output is whole 188-byte
//!   packets, our reader gives as many packets per stream as the remux
//!   wrote, and ffprobe reads it with no warning and the same packet count
//!   (but from MPEG-PS inputs, whose video packets are not pictures);
//! * standard output (`remux IN - --format ts`) gives the same bytes as a
//!   file (the muxer patches nothing);
//! * the times start where ffmpeg's `-c copy -f mpegts` output starts
//!   (1.4 s, or later where the first decode time precedes the first
//!   presentation time).
//!
//! The packet-by-packet checks (payload, times, keyframes, against our
//! demuxer and ffmpeg's own TS) are in `core/tests/ts_mux.rs`.

use crate::common;
use crate::remux_common;

use common::*;
use mediaslice_std::remux::{remux_file, RemuxFormat, RemuxOptions};
use remux_common::{have, remux_corpus, temp_dir};
use std::path::Path;
use std::process::Command;

/// ffprobe's packet count per stream and its stderr at `-v warning`.
fn ffprobe_counts(path: &Path) -> (Vec<usize>, String) {
    let out = Command::new("ffprobe")
        .args([
            "-v",
            "warning",
            "-show_entries",
            "packet=stream_index",
            "-of",
            "csv=p=0",
        ])
        .arg(path)
        .output()
        .unwrap();
    let mut counts = Vec::new();
    for l in String::from_utf8_lossy(&out.stdout).lines().filter(|l| !l.is_empty()) {
        let s: usize = l.trim_end_matches(',').parse().unwrap();
        if counts.len() <= s {
            counts.resize(s + 1, 0);
        }
        counts[s] += 1;
    }
    (counts, String::from_utf8_lossy(&out.stderr).into_owned())
}

#[test]
fn corpus_files_remux_to_ts_and_read_back() {
    let dir = temp_dir("remux_ts_corpus");
    let probe = have("ffprobe");
    if !probe {
        println!("skip the ffprobe checks: ffprobe is not installed");
    }
    let (written, refused, failures) = remux_corpus(&dir, "ts", |f, out, report| {
        let mut bad = Vec::new();
        let bytes = std::fs::read(out).unwrap();
        if bytes.len() % 188 != 0 || bytes.first() != Some(&0x47) {
            bad.push(format!("{}: not 188-byte packets", f.label()));
        }
        let p = pull_slice(&bytes, Some("ts"), false);
        let mut ours = vec![0usize; p.tracks.len()];
        for k in &p.packets {
            ours[k.track] += 1;
        }
        if p.open_err.is_some() || p.end_err.is_some() {
            bad.push(format!("{}: {:?} {:?}", f.label(), p.open_err, p.end_err));
        }
        if ours.len() != report.tracks || ours.iter().sum::<usize>() as u64 != report.packets {
            bad.push(format!(
                "{}: read back {ours:?}, written {} packets in {} tracks",
                f.label(),
                report.packets,
                report.tracks
            ));
        }
        // An MPEG-PS demuxer's video packets are PES payloads, not
        // pictures: written one PES each, ffprobe's parser regroups them
        // into pictures, so only its warnings are checked there.
        let frames = !f.path.to_string_lossy().contains("/mpegps/");
        if probe {
            let (theirs, warnings) = ffprobe_counts(out);
            let theirs = if frames { theirs } else { ours.clone() };
            if theirs != ours || !warnings.trim().is_empty() {
                bad.push(format!("{}: ffprobe {theirs:?} ({warnings}), ours {ours:?}", f.label()));
            }
        }
        bad
    });
    println!("{written} corpus files written as TS, {refused} refused");
    assert!(written >= 15, "only {written} written");
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn standard_output_gives_the_bytes_of_a_file_and_m2ts_names_ts() {
    let dir = temp_dir("remux_ts_stdout");
    let input = corpus_dir().join("files/matroska/h264_aac.mkv");
    for ext in ["ts", "m2ts", "mts"] {
        let out = dir.join(format!("o.{ext}"));
        remux_file(&input, &out, &RemuxOptions::default()).unwrap();
        assert_eq!(std::fs::read(&out).unwrap()[0], 0x47, "{ext}");
    }
    let file = std::fs::read(dir.join("o.ts")).unwrap();
    let o = Command::new(env!("CARGO_BIN_EXE_mediaslice"))
        .args(["remux"])
        .arg(&input)
        .args(["-", "--format", "ts"])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert_eq!(o.stdout, file);
    // A codec TS does not carry: refused, nothing left.
    let out = dir.join("vp9.ts");
    let opts = RemuxOptions {
        format: Some(RemuxFormat::Ts),
        ..RemuxOptions::default()
    };
    assert!(remux_file(&corpus_dir().join("files/matroska/vp9_opus.webm"), &out, &opts).is_err());
    assert!(!out.exists());
}

/// ffprobe's format start_time of `path`.
fn start_time(path: &Path) -> String {
    let o = Command::new("ffprobe")
        .args(["-v", "error", "-show_entries", "format=start_time", "-of", "csv=p=0"])
        .arg(path)
        .output()
        .unwrap();
    String::from_utf8_lossy(&o.stdout).trim().to_owned()
}

#[test]
fn times_start_where_ffmpegs_do() {
    if !have("ffprobe") || !have("ffmpeg") {
        println!("skip: ffprobe or ffmpeg is not installed");
        return;
    }
    let dir = temp_dir("remux_ts_start");
    // An MP4 starting at 0 (1.4 s), a TS at its own clock with B-frames
    // (the audio's 1.458667 s: the video's first decode time is at 1.4 s),
    // an ADTS stream.
    for (input, want) in [
        ("mp4/h264_aac.mp4", "1.400000"),
        ("mpegts/h264_aac.ts", "1.458667"),
        ("adts/aac_lc.aac", "1.400000"),
    ] {
        let path = corpus_dir().join("files").join(input);
        let out = dir.join("o.ts");
        remux_file(&path, &out, &RemuxOptions::default()).unwrap();
        let theirs = dir.join("ffmpeg.ts");
        let st = Command::new("ffmpeg")
            .args(["-v", "error", "-y", "-i"])
            .arg(&path)
            .args(["-c", "copy", "-f", "mpegts"])
            .arg(&theirs)
            .status()
            .unwrap();
        assert!(st.success(), "{input}: ffmpeg");
        assert_eq!(
            (start_time(&out), start_time(&theirs)),
            (want.to_owned(), want.to_owned()),
            "{input}"
        );
    }
}
