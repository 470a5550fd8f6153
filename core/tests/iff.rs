//! IFF against ffprobe: the corpus files written by `corpus/iff.py` and
//! the ILBM picture among the samples (`other/tinytag__ilbm.aiff`, named
//! `.aiff`): detected as IFF whatever the name, demuxed through a
//! `SliceSource` and a `ReaderSource` alike, and packet-exact with
//! ffprobe's JSON (size, CRC32, pos, pts, dts, keyframe).
// Test code: a panic is the failure report.
#![allow(clippy::indexing_slicing, clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use crate::common;

use mediaslice::{FormatKind, Limits, SliceSource};
use std::path::{Path, PathBuf};

/// Checks one file against its expected JSON; returns the packet count.
fn check(file: &Path, expected: &Path) -> usize {
    let bytes = std::fs::read(file).unwrap();
    let kind = mediaslice::detect::detect_source(&mut SliceSource::new(&bytes), None, &Limits::default()).unwrap();
    assert_eq!(kind, Some(FormatKind::Iff), "{}", file.display());
    let doc = common::load_expected(expected).unwrap_or_else(|| panic!("no JSON for {}", file.display()));
    let slice = common::pull_slice(&bytes, None, true);
    let reader = common::pull_reader(file, None, Some(4096), true);
    assert!(
        slice.open_err.is_none() && slice.end_err.is_none(),
        "{}: {:?}",
        file.display(),
        slice.end_err
    );
    assert_eq!(
        slice.packets,
        reader.packets,
        "{}: slice and reader differ",
        file.display()
    );
    let v = common::compare(&doc, &slice);
    assert!(
        v.ok && v.ts_mismatches == 0,
        "{}: {:?} {:?}",
        file.display(),
        v.notes,
        v.first_ts_mismatch
    );
    let exp = doc["packets"].as_array().unwrap();
    assert_eq!(exp.len(), slice.packets.len());
    for (e, a) in exp.iter().zip(&slice.packets) {
        let pos: u64 = e["pos"].as_str().unwrap().parse().unwrap();
        assert_eq!(a.pos, Some(pos), "{}", file.display());
        assert_eq!(a.duration, e["duration"].as_u64(), "{}", file.display());
    }
    slice.packets.len()
}

#[test]
fn corpus_files_are_packet_exact() {
    let dir = common::corpus_dir();
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir.join("files/iff"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    files.sort();
    assert!(files.len() >= 10, "the iff corpus is missing (corpus/iff.py)");
    for f in files {
        let name = f.file_name().unwrap().to_string_lossy().to_string();
        let exp = dir.join(format!("expected/iff/{name}.json.gz"));
        assert_eq!(check(&f, &exp), 1, "{name}");
    }
}

#[test]
fn the_ilbm_sample_is_packet_exact() {
    let Some(root) = common::samples_dir() else {
        eprintln!("skipped: no samples (set MEDIASLICE_SAMPLES)");
        return;
    };
    let f = root.join("other/tinytag__ilbm.aiff");
    if !f.is_file() {
        eprintln!("skipped: {} is missing", f.display());
        return;
    }
    let exp = root.join("expected/other/tinytag__ilbm.aiff.json.gz");
    assert_eq!(check(&f, &exp), 1);
}

/// `FORM` and a type at offset 8 (no chunks).
fn form(kind: &[u8; 4]) -> Vec<u8> {
    let mut v = b"FORM\0\0\0\x04".to_vec();
    v.extend_from_slice(kind);
    v
}

#[test]
fn detection_takes_iff_forms_and_leaves_aiff_and_dsdiff_alone() {
    use mediaslice::detect::detect;
    for t in [
        b"ILBM", b"PBM ", b"ACBM", b"DEEP", b"RGB8", b"RGBN", b"ANIM", b"8SVX", b"16SV", b"MAUD",
    ] {
        assert_eq!(detect(&form(t), None), Some(FormatKind::Iff));
    }
    assert_eq!(detect(&form(b"AIFF"), None), Some(FormatKind::Aiff));
    assert_eq!(detect(&form(b"AIFC"), None), Some(FormatKind::Aiff));
    assert_eq!(detect(b"FRM8\0\0\0\0\0\0\0\x10DSD ", None), Some(FormatKind::Dff));
    assert_eq!(detect(&form(b"FTXT"), None), None);
}
