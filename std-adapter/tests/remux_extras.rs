//! `mediaslice remux` to Matroska carries what is not packets: the
//! input's chapters (as `ffmpeg -c copy` carries them: `ffprobe
//! -show_chapters` prints the same for both outputs, for MKV, MP4 `chpl`,
//! MP3 `CHAP` and Ogg inputs; read back by our reader and counted by
//! `mkvmerge --identify`), and an attached picture as a Matroska
//! attachment (`cover.jpg`), which ffprobe shows as the attached-picture
//! stream it shows for the same file added by `mkvpropedit
//! --add-attachment`. A tool that is not installed skips its part with a
//! message.

#[path = "../../core/tests/common/mod.rs"]
mod common;
mod remux_common;

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
        if have("ffmpeg") && have("ffprobe") {
            let theirs = dir.join(format!("{name}.theirs.mkv"));
            ffmpeg_copy(&input, &theirs);
            let (a, b) = (ffprobe_chapters(&ours), ffprobe_chapters(&theirs));
            assert_eq!(a.as_array().map(Vec::len), Some(2), "{name}");
            assert_eq!(a, b, "{name}");
        } else {
            println!("ffmpeg or ffprobe not installed: the comparison is skipped");
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
    if !have("ffmpeg") || !have("ffprobe") {
        println!("ffmpeg or ffprobe not installed: skipped (it makes the input)");
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
