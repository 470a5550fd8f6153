//! ASF (WMA, WMV) tag editing: every corpus and sample ASF file edited in
//! place or by a copy, past its padding (a copy that grows the header),
//! into another file, and then in place in the copy's padding; read back by
//! our reader and ffprobe (the new values, every other tag and every
//! picture stream unchanged, every packet unchanged, the header's sizes
//! and the File Properties file size consistent, the bytes from the Data
//! Object on identical). Removal, refusals of lying object sizes with the
//! file untouched, and damaged inputs that never panic.
//!
//! Samples come from `$MEDIASLICE_SAMPLES` or `../shared/samples`; without
//! them only the corpus runs (the test says so).

use crate::tagedit_common;

use mediaslice_std::tagedit::{edit, EditMode, Edits, Picture};
use serde_json::{Map, Value};
use std::path::Path;
use tagedit_common::*;

/// [`WANT`] as our reader shows it: `date` is written as `WM/Year`,
/// which ffmpeg and our reader show under that key.
const OURS: [(&str, &str); 4] = [
    ("title", WANT[0].1),
    ("artist", WANT[1].1),
    ("album", WANT[2].1),
    ("WM/Year", WANT[3].1),
];
/// [`WANT`] as ffprobe shows it (keys lower-cased by `ffprobe_tags`).
const FFPROBE: [(&str, &str); 4] = [
    ("title", WANT[0].1),
    ("artist", WANT[1].1),
    ("album", WANT[2].1),
    ("wm/year", WANT[3].1),
];

#[derive(Clone)]
struct Before {
    packets: Vec<PacketKey>,
    ours: Map<String, Value>,
    ffprobe: Option<Map<String, Value>>,
    streams: Option<Vec<Value>>,
    /// The bytes from the Data Object to the end.
    tail: Vec<u8>,
    /// The File Properties file size less the file's length.
    size_lie: i128,
    broadcast: bool,
}

fn u64_at(b: &[u8], at: usize) -> u64 {
    u64::from_le_bytes(b[at..at + 8].try_into().unwrap())
}

/// The header's size (checked against its objects, each object inside
/// it, the count of top-level objects, a Header Extension's data size)
/// and where the File Properties Object is.
fn header(b: &[u8]) -> (usize, usize) {
    let size = u64_at(b, 16) as usize;
    let count = u32::from_le_bytes(b[24..28].try_into().unwrap());
    let (mut at, mut n, mut props) = (30, 0, 0);
    while at < size {
        let g = &b[at..at + 16];
        let len = u64_at(b, at + 16) as usize;
        assert!(len >= 24 && at + len <= size, "object at {at} of {len} bytes");
        // File Properties (8CABDCA1-...) and Header Extension (5FBF03B5-...).
        if g[..4] == [0xA1, 0xDC, 0xAB, 0x8C] {
            props = at;
        }
        if g[..4] == [0xB5, 0x03, 0xBF, 0x5F] {
            let data = u32::from_le_bytes(b[at + 42..at + 46].try_into().unwrap()) as usize;
            assert_eq!(data + 46, len, "Header Extension data size");
        }
        at += len;
        n += 1;
    }
    assert_eq!(at, size, "objects fill the header");
    assert_eq!(n, count, "header object count");
    assert!(props > 0, "a File Properties Object");
    (size, props)
}

fn before(path: &Path) -> Option<Before> {
    let (packets, _) = packets(path)?;
    let b = std::fs::read(path).unwrap();
    let (size, props) = header(&b);
    Some(Before {
        packets,
        ours: our_tags(path),
        ffprobe: ffprobe_tags(path),
        streams: ffprobe_stream_tags(path),
        tail: b[size..].to_vec(),
        size_lie: u64_at(&b, props + 40) as i128 - b.len() as i128,
        broadcast: b[props + 88] & 1 == 1,
    })
}

/// Checks an edited file against `before`: `ours` and `ff` read back by
/// our reader and ffprobe, the rest as it was.
fn verify(path: &Path, before: &Before, ours: &[(&str, &str)], ff: &[(&str, &str)]) {
    let (pk, _) = packets(path).unwrap_or_else(|| panic!("{}: no longer opens", path.display()));
    assert_eq!(pk, before.packets, "{}: packets changed", path.display());
    let b = std::fs::read(path).unwrap();
    let (size, props) = header(&b);
    assert_eq!(
        &b[size..],
        &before.tail[..],
        "{}: the Data Object on changed",
        path.display()
    );
    if !before.broadcast {
        let lie = u64_at(&b, props + 40) as i128 - b.len() as i128;
        assert_eq!(lie, before.size_lie, "{}: File Properties file size", path.display());
    }
    check_tags("mediaslice", path, &before.ours, &our_tags(path), ours);
    if let Some(old) = &before.ffprobe {
        let after = ffprobe_tags(path).unwrap_or_else(|| panic!("{}: ffprobe no longer reads it", path.display()));
        check_tags("ffprobe", path, old, &after, ff);
        assert_eq!(
            ffprobe_stream_tags(path),
            before.streams,
            "{}: stream tags",
            path.display()
        );
    }
}

/// exiftool's reading of [`WANT`] (it names the Content Description's
/// Author `Author`, `WM/AlbumTitle` `AlbumTitle`, `WM/Year` `Year`); says
/// so when exiftool is missing.
fn exiftool_agrees(path: &Path) {
    let out = match std::process::Command::new("exiftool")
        .args(["-j", "-Title", "-Author", "-AlbumTitle", "-Year"])
        .arg(path)
        .output()
    {
        Ok(o) => o,
        Err(_) => {
            eprintln!("exiftool: absent, not compared");
            return;
        }
    };
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    let got = |k: &str| match &v[0][k] {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    };
    for (k, w) in [("Title", 0), ("Author", 1), ("AlbumTitle", 2), ("Year", 3)] {
        assert_eq!(got(k), WANT[w].1, "exiftool: {}: {k}", path.display());
    }
}

fn asf_files() -> Vec<(String, std::path::PathBuf)> {
    named_files("asf", &[".wma", ".wmv", ".asf"])
}

#[test]
fn asf_round_trip() {
    let dir = scratch("asf");
    let (mut edited, mut in_place) = (0, 0);
    for (name, f) in asf_files() {
        let Some(before) = before(&f) else {
            eprintln!("{name}: our reader does not open it; not edited");
            continue;
        };
        let orig = std::fs::read(&f).unwrap();
        let work = dir.join(&name);
        std::fs::write(&work, &orig).unwrap();
        let r = edit(&work, &edits(), None).unwrap();
        verify(&work, &before, &OURS, &FFPROBE);
        exiftool_agrees(&work);
        if r.mode == EditMode::InPlace {
            in_place += 1;
            assert_eq!(std::fs::metadata(&work).unwrap().len(), orig.len() as u64);
            assert!(r.bytes_written <= u64_at(&orig, 16), "{name}: wrote past the header");
        } else {
            assert_eq!(
                r.bytes_written,
                std::fs::metadata(&work).unwrap().len(),
                "{name}: a copy's bytes"
            );
        }
        // A comment longer than any padding here: the header grows.
        let comment = "x".repeat(20_000);
        let long = Edits {
            set: vec![("comment".into(), comment.clone())],
            ..Edits::default()
        };
        let r = edit(&work, &long, None).unwrap();
        assert_eq!(r.mode, EditMode::Copy, "{name}: a 40 kB comment fitted");
        let mut with_comment: Vec<_> = OURS.to_vec();
        with_comment.push(("comment", &comment));
        let mut ff: Vec<_> = FFPROBE.to_vec();
        ff.push(("comment", &comment));
        verify(&work, &before, &with_comment, &ff);
        // The copy left padding: a shorter title goes in place.
        let short = Edits {
            set: vec![("title".into(), WANT[0].1.into()), ("comment".into(), "c".into())],
            ..Edits::default()
        };
        let r = edit(&work, &short, None).unwrap();
        assert_eq!(r.mode, EditMode::InPlace, "{name}: not in place in the copy's padding");
        with_comment.pop();
        with_comment.push(("comment", "c"));
        ff.pop();
        ff.push(("comment", "c"));
        verify(&work, &before, &with_comment, &ff);
        // Into another file: the input untouched.
        let out = edit_into_another(&dir, &name, &orig);
        verify(&out, &before, &OURS, &FFPROBE);
        edited += 1;
    }
    let _ = std::fs::remove_dir_all(&dir);
    eprintln!("asf: {edited} files edited, {in_place} of them in place first");
    let want = if samples().join("asf").is_dir() { 8 } else { 2 };
    assert_eq!(edited, want, "ASF files edited");
}

#[test]
fn asf_remove() {
    let dir = scratch("asf-remove");
    for (name, f) in asf_files() {
        let Some(b) = before(&f) else { continue };
        let work = dir.join(&name);
        std::fs::copy(&f, &work).unwrap();
        let e = Edits {
            remove: vec!["artist".into(), "album".into(), "date".into()],
            ..Edits::default()
        };
        edit(&work, &e, None).unwrap();
        let ours = our_tags(&work);
        for k in ["artist", "author", "album", "WM/Year"] {
            assert!(!ours.contains_key(k), "{name}: our reader still shows {k}");
        }
        let mut kept = b.clone();
        for k in ["artist", "author", "album", "wm/year", "WM/Year"] {
            kept.ours.remove(k);
            if let Some(ff) = kept.ffprobe.as_mut() {
                ff.remove(k);
            }
        }
        if let Some(ff) = ffprobe_tags(&work) {
            for k in ["artist", "album", "wm/year"] {
                assert!(!ff.contains_key(k), "{name}: ffprobe still shows {k}");
            }
        }
        verify(&work, &kept, &[], &[]);
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// A change made to a file's bytes.
type Patch = fn(&mut Vec<u8>);

/// The corpus WMA with `patch` applied to its bytes.
fn patched(dir: &Path, name: &str, patch: Patch) -> std::path::PathBuf {
    let mut b = std::fs::read(corpus("asf/wmav2.wma")).unwrap();
    patch(&mut b);
    let p = dir.join(name);
    std::fs::write(&p, b).unwrap();
    p
}

fn set_u64(b: &mut [u8], at: usize, v: u64) {
    b[at..at + 8].copy_from_slice(&v.to_le_bytes());
}

#[test]
fn lying_sizes_are_refused() {
    let dir = scratch("asf-lies");
    // wmav2.wma: File Properties at 30, Header Extension at 134 (46
    // bytes), Content Description at 180, Extended Content Description at
    // 280, the Data Object at 624.
    let cases: [(&str, Patch); 7] = [
        ("header-past-file", |b| set_u64(b, 16, 1 << 20)),
        ("header-short", |b| set_u64(b, 16, 600)),
        ("object-past-header", |b| set_u64(b, 180 + 16, 1000)),
        ("object-under-24", |b| set_u64(b, 180 + 16, 8)),
        ("ext-data-size", |b| b[134 + 42] = 9),
        ("content-lengths", |b| b[180 + 24] = 0xF0),
        ("ecd-count", |b| b[280 + 24] = 0x40),
    ];
    for (name, patch) in cases {
        let p = patched(&dir, &format!("{name}.wma"), patch);
        assert_refused(&p, None);
        assert_refused(&p, Some(&dir.join(format!("{name}-out.wma"))));
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn asf_pictures_are_refused_not_dropped() {
    let dir = scratch("asf-picture");
    let f = patched(&dir, "a.wma", |_| {});
    let orig = std::fs::read(&f).unwrap();
    let png = b"\x89PNG\r\n\x1a\n\0\0\0\x0dIHDR\0\0\0\x01\0\0\0\x01\x08\x02\0\0\0";
    let e = Edits {
        set: vec![("title".into(), "t".into())],
        picture: Some(Picture::from_bytes(png.to_vec()).unwrap()),
        ..Edits::default()
    };
    let err = edit(&f, &e, None).unwrap_err();
    assert_eq!(err.kind(), std::io::ErrorKind::Unsupported);
    assert_eq!(std::fs::read(&f).unwrap(), orig);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn damaged_asf_never_panics() {
    damage_never_panics("asf-damage", asf_files().into_iter().map(|(_, f)| f));
}
