//! Tag editing (`mediaslice_std::tagedit`) beside the per-format round
//! trips of `tagedit.rs`: removing tags and keeping unknown names, the
//! `mediaslice tags` command line (set, remove, `-o`), and WAV `LIST/INFO`
//! beside a `bext` chunk.

use crate::tagedit_common;

use mediaslice_std::tagedit::{edit, Edits};
use tagedit_common::*;

#[test]
fn remove_and_pass_through_names() {
    let dir = scratch("names");
    let f = dir.join("a.flac");
    std::fs::copy(corpus("flac/s16_stereo.flac"), &f).unwrap();
    let mut e = Edits::default();
    e.push_set("MY_FIELD=kept as given").unwrap();
    e.push_set("track=9").unwrap();
    e.remove.push("artist".into());
    edit(&f, &e, None).unwrap();
    let tags = our_tags(&f);
    assert!(!tags.contains_key("artist"), "artist not removed: {tags:?}");
    assert_eq!(tags.get("track").and_then(|v| v.as_str()), Some("9"));
    let ff = ffprobe_tags(&f);
    if let Some(ff) = ff {
        assert_eq!(ff.get("my_field").and_then(|v| v.as_str()), Some("kept as given"));
        assert!(!ff.contains_key("artist"));
    }
    assert!(Edits::default().push_set("no equals sign").is_err());
    let _ = std::fs::remove_dir_all(&dir);
}

fn mediaslice(args: &[&std::ffi::OsStr]) -> std::process::Output {
    std::process::Command::new(env!("CARGO_BIN_EXE_mediaslice"))
        .args(args)
        .output()
        .unwrap()
}

#[test]
fn cli_tags_set_remove_output() {
    let dir = scratch("cli");
    let input = dir.join("in.mp3");
    std::fs::copy(corpus("mp3/cbr_id3v2_id3v1.mp3"), &input).unwrap();
    let orig = std::fs::read(&input).unwrap();
    let out = dir.join("out.mp3");
    let o = mediaslice(&[
        "tags".as_ref(),
        input.as_ref(),
        "--set".as_ref(),
        "title=From the CLI".as_ref(),
        "--remove".as_ref(),
        "genre".as_ref(),
        "-o".as_ref(),
        out.as_ref(),
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(String::from_utf8_lossy(&o.stderr).contains("by a copy"));
    assert_eq!(std::fs::read(&input).unwrap(), orig, "-o changed the input");
    let tags = our_tags(&out);
    assert_eq!(tags.get("title").and_then(|v| v.as_str()), Some("From the CLI"));
    assert!(!tags.contains_key("genre"), "{tags:?}");
    // In place: the input itself.
    let o = mediaslice(&["tags".as_ref(), out.as_ref(), "--set".as_ref(), "artist=Again".as_ref()]);
    assert!(o.status.success());
    assert!(String::from_utf8_lossy(&o.stderr).contains("in place"));
    // Without --set or --remove: the tags are printed, nothing written.
    let before = std::fs::read(&out).unwrap();
    let o = mediaslice(&["tags".as_ref(), out.as_ref()]);
    assert!(String::from_utf8_lossy(&o.stdout).contains("Again"));
    assert_eq!(std::fs::read(&out).unwrap(), before);
    // A bad --set, a missing output folder: a failure, nothing written.
    let o = mediaslice(&["tags".as_ref(), input.as_ref(), "--set".as_ref(), "title".as_ref()]);
    assert_eq!(o.status.code(), Some(64));
    let missing = dir.join("missing/out.mp3");
    let o = mediaslice(&[
        "tags".as_ref(),
        input.as_ref(),
        "--set".as_ref(),
        "title=x".as_ref(),
        "-o".as_ref(),
        missing.as_ref(),
    ]);
    assert_eq!(o.status.code(), Some(1));
    assert!(!missing.exists());
    assert_eq!(std::fs::read(&input).unwrap(), orig);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn wav_info_beside_bext() {
    // A title added as INFO beside a bext chunk: the bext fields stay
    // readable (our reader once lost them after an INFO list).
    let dir = scratch("bext");
    let f = dir.join("a.wav");
    std::fs::copy(corpus("wav/bext.wav"), &f).unwrap();
    let before = our_tags(&f);
    assert!(before.len() >= 2, "bext.wav has bext fields: {before:?}");
    let mut e = Edits::default();
    e.push_set("title=Beside bext").unwrap();
    edit(&f, &e, None).unwrap();
    check_tags("mediaslice", &f, &before, &our_tags(&f), &[("title", "Beside bext")]);
    // date is in bext too: refused, the file untouched.
    let now = std::fs::read(&f).unwrap();
    let mut e = Edits::default();
    e.push_set("date=2026").unwrap();
    assert!(edit(&f, &e, None).is_err());
    assert_eq!(std::fs::read(&f).unwrap(), now);
    let _ = std::fs::remove_dir_all(&dir);
}
