//! `mediaslice remux` to Matroska carries what is not packets: the
//! input's chapters (as `ffmpeg -c copy` carries them: `ffprobe
//! -show_chapters` prints the same for both outputs, for MKV, MP4 `chpl`,
//! MP3 `CHAP` and Ogg inputs; read back by our reader and counted by
//! `mkvmerge --identify`), and an attached picture as a Matroska
//! attachment (`cover.jpg`), which ffprobe shows as the attached-picture
//! stream it shows for the same file added by `mkvpropedit
//! --add-attachment`. A tool that is not installed skips its part with a
//! message.

use crate::common;
use crate::remux_common;

use common::*;
use mediaslice::{Demuxer, SliceSource};
use mediaslice_std::remux::{remux_file, RemuxOptions};
use remux_common::{ffmpeg_copy, have, temp_dir};
use std::path::Path;
use std::process::Command;

/// ffprobe's JSON for `path` with `show` (`-show_chapters`, ...).
fn ffprobe_json(path: &Path, show: &str) -> serde_json::Value {
    let out = Command::new("ffprobe")
        .args(["-v", "error", show, "-of", "json"])
        .arg(path)
        .output()
        .unwrap();
    serde_json::from_slice(&out.stdout).unwrap_or_default()
}

/// `ffprobe -show_chapters` of `path`.
fn ffprobe_chapters(path: &Path) -> serde_json::Value {
    ffprobe_json(path, "-show_chapters")["chapters"].clone()
}

/// ffprobe's second stream of `path` (the picture), without the fields
/// that depend on the audio around it (its duration, taken from the file).
fn picture_stream(path: &Path) -> serde_json::Value {
    let mut s = ffprobe_json(path, "-show_streams")["streams"][1].clone();
    if let Some(o) = s.as_object_mut() {
        for k in ["duration", "duration_ts"] {
            o.remove(k);
        }
    }
    s
}

/// Whether ffmpeg and ffprobe run; says what is skipped when not.
fn have_ffmpeg(skipped: &str) -> bool {
    let ok = have("ffmpeg") && have("ffprobe");
    if !ok {
        println!("ffmpeg or ffprobe not installed: {skipped} skipped");
    }
    ok
}

#[test]
fn chapters_are_carried_as_ffmpeg_carries_them() {
    let dir = temp_dir("remux_extras_chapters");
    for name in ["h264_aac.mkv", "h264_aac.mp4", "mp3.mp3", "vorbis.ogg"] {
        let input = corpus_dir().join("files/chapters").join(name);
        let ours = dir.join(format!("{name}.ours.mkv"));
        let r = remux_file(&input, &ours, &RemuxOptions::default()).unwrap();
        assert_eq!((r.chapters, r.chapters_dropped), (2, 0), "{name}");
        let bytes = std::fs::read(&ours).unwrap();
        let mut d = Demuxer::open(SliceSource::new(&bytes), None).unwrap();
        let mut n = 0;
        while let Some(c) = d.next_chapter().unwrap() {
            assert!(c.id != 0 && c.end.is_some_and(|e| e > c.start), "{name}: {c:?}");
            n += 1;
        }
        assert_eq!(n, 2, "{name}");
        if have_ffmpeg("the comparison is") {
            let theirs = dir.join(format!("{name}.theirs.mkv"));
            ffmpeg_copy(&input, &theirs);
            let (a, b) = (ffprobe_chapters(&ours), ffprobe_chapters(&theirs));
            assert_eq!(a.as_array().map(Vec::len), Some(2), "{name}");
            assert_eq!(a, b, "{name}");
        }
        if have("mkvmerge") {
            let o = Command::new("mkvmerge").arg("--identify").arg(&ours).output().unwrap();
            let text = String::from_utf8_lossy(&o.stdout);
            assert!(
                o.status.success() && text.contains("Chapters: 2 entries"),
                "{name}: {text}"
            );
        } else {
            println!("mkvmerge not installed: its check is skipped");
        }
    }
}

#[test]
fn cover_art_becomes_an_attachment() {
    if !have_ffmpeg("the test (ffmpeg makes its input) is") {
        return;
    }
    let dir = temp_dir("remux_extras_cover");
    let run = |args: &[&str]| {
        let st = Command::new("ffmpeg")
            .current_dir(&dir)
            .args(["-v", "error", "-y"])
            .args(args)
            .status()
            .unwrap();
        assert!(st.success(), "ffmpeg {args:?}");
    };
    run(&["-f", "lavfi", "-i", "sine=f=440:d=1", "-c:a", "libmp3lame", "tone.mp3"]);
    run(&[
        "-f",
        "lavfi",
        "-i",
        "testsrc=s=64x48:d=1",
        "-frames:v",
        "1",
        "cover.jpg",
    ]);
    run(&[
        "-i",
        "tone.mp3",
        "-i",
        "cover.jpg",
        "-map",
        "0",
        "-map",
        "1",
        "-c",
        "copy",
        "-disposition:v",
        "attached_pic",
        "cover.mp3",
    ]);
    let ours = dir.join("ours.mkv");
    let r = remux_file(&dir.join("cover.mp3"), &ours, &RemuxOptions::default()).unwrap();
    assert_eq!((r.tracks, r.attachments), (1, 1));
    assert!(r.skipped.is_empty(), "{:?}", r.skipped);
    // Our reader: the attachment, with its bytes, as an attached picture.
    let bytes = std::fs::read(&ours).unwrap();
    let jpeg = std::fs::read(dir.join("cover.jpg")).unwrap();
    let mut d = Demuxer::open(SliceSource::new(&bytes), None).unwrap();
    assert!(d.tracks()[1].attached_picture);
    let mut found = false;
    while let Some(p) = d.next_packet().unwrap() {
        found |= p.track == 1 && p.data == jpeg;
    }
    assert!(found);
    if have("mkvmerge") && have("mkvpropedit") {
        let o = Command::new("mkvmerge").arg("--identify").arg(&ours).output().unwrap();
        let text = String::from_utf8_lossy(&o.stdout);
        assert!(
            text.contains(&format!(
                "Attachment ID 1: type 'image/jpeg', size {} bytes, file name 'cover.jpg'",
                jpeg.len()
            )),
            "{text}"
        );
        // The reference: the same picture added by mkvpropedit.
        let reference = dir.join("reference.mkv");
        let st = Command::new("mkvmerge")
            .args(["-q", "-o"])
            .arg(&reference)
            .arg(dir.join("tone.mp3"))
            .status()
            .unwrap();
        assert!(st.success());
        let st = Command::new("mkvpropedit")
            .arg("-q")
            .arg(&reference)
            .args(["--attachment-mime-type", "image/jpeg", "--add-attachment"])
            .arg(dir.join("cover.jpg"))
            .status()
            .unwrap();
        assert!(st.success());
        assert_eq!(picture_stream(&ours), picture_stream(&reference));
    } else {
        println!("mkvmerge or mkvpropedit not installed: the reference check is skipped");
    }
}

/// Subtitle packets go in BlockGroups with their BlockDuration: ffprobe
/// shows the same subtitle packets (pts, duration, flags) for our output
/// as for ffmpeg's `-c copy` of an SRT-in-Matroska file.
#[test]
fn subtitle_durations_as_ffmpeg_writes_them() {
    if !have_ffmpeg("the test (ffmpeg makes its input) is") {
        return;
    }
    let dir = temp_dir("remux_extras_subtitles");
    let srt = "1\n00:00:00,500 --> 00:00:01,200\nHello\n\n2\n00:00:01,500 --> 00:00:02,750\nWorld\n\n";
    std::fs::write(dir.join("s.srt"), srt).unwrap();
    let input = dir.join("in.mkv");
    let st = Command::new("ffmpeg")
        .current_dir(&dir)
        .args([
            "-v",
            "error",
            "-y",
            "-f",
            "lavfi",
            "-i",
            "sine=f=440:d=3",
            "-i",
            "s.srt",
        ])
        .args(["-map", "0", "-map", "1", "-c:a", "pcm_s16le", "-c:s", "srt", "in.mkv"])
        .status()
        .unwrap();
    assert!(st.success());
    let (ours, theirs) = (dir.join("ours.mkv"), dir.join("theirs.mkv"));
    remux_file(&input, &ours, &RemuxOptions::default()).unwrap();
    ffmpeg_copy(&input, &theirs);
    let packets = |p: &Path| {
        let out = Command::new("ffprobe")
            .args(["-v", "error", "-select_streams", "1", "-show_entries"])
            .args(["packet=pts,duration,flags", "-of", "json"])
            .arg(p)
            .output()
            .unwrap();
        let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap_or_default();
        v["packets"].clone()
    };
    let a = packets(&ours);
    assert_eq!(a[0]["duration"], 700, "{a}");
    assert_eq!(a[1]["duration"], 1250, "{a}");
    assert_eq!(a, packets(&theirs));
}

/// To MP4 the chapters go in a Nero `chpl`: our reader and ffprobe read
/// the same starts and titles as ffmpeg's `-c copy` MP4 gives (ffmpeg also
/// writes a chapter text track, which ffprobe prefers: its time base is
/// 1/1000 and it stores ends; `chpl` has 1/10 000 000 and no ends, so the
/// last chapter ends at the file's end there).
#[test]
fn chapters_go_to_mp4_as_chpl() {
    let dir = temp_dir("remux_extras_chpl");
    let input = corpus_dir().join("files/chapters/h264_aac.mkv");
    let ours = dir.join("ours.mp4");
    let r = remux_file(&input, &ours, &RemuxOptions::default()).unwrap();
    assert_eq!(r.chapters, 2);
    let bytes = std::fs::read(&ours).unwrap();
    let mut d = Demuxer::open(SliceSource::new(&bytes), None).unwrap();
    let mut got = Vec::new();
    while let Some(c) = d.next_chapter().unwrap() {
        got.push((c.start, c.time_base.den, c.title.map(str::to_owned)));
    }
    assert_eq!(
        got,
        [
            (0, 10_000_000, Some("Intro".to_owned())),
            (4_000_000, 10_000_000, Some("Second part".to_owned()))
        ]
    );
    if !have_ffmpeg("the comparison is") {
        return;
    }
    let theirs = dir.join("theirs.mp4");
    ffmpeg_copy(&input, &theirs);
    let starts = |p: &Path| -> Vec<(String, String)> {
        let c = ffprobe_chapters(p);
        c.as_array()
            .unwrap()
            .iter()
            .map(|c| (c["start_time"].to_string(), c["tags"]["title"].to_string()))
            .collect()
    };
    assert_eq!(starts(&ours).len(), 2);
    assert_eq!(starts(&ours), starts(&theirs));
}
