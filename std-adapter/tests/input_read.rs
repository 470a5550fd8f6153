//! `remux`, `package` and `repair` honour the global `--source`: through
//! `mmap`, `pread` and `reader` the CLI writes the same bytes as with no
//! `--source` (the default), for every file of the output, on corpus files
//! of each family the write commands read (MP4 with its `moov` at the end,
//! Matroska, MPEG-TS, AVI) and on two damaged ones (an AVI without its
//! `idx1`, an MP4 without its `moov`, walked with a reference).

use crate::common::corpus_dir;
use crate::remux_common::{files_under, temp_dir};
use std::path::{Path, PathBuf};
use std::process::Command;

/// The sources compared with the default.
const SOURCES: [&str; 3] = ["mmap", "pread", "reader"];

/// Runs the CLI with `args` into a fresh folder under `dir` (named by the
/// source), after `--source SOURCE` when given; `OUT` in `args` stands for
/// that folder. Panics unless it exits 0; returns the folder.
fn run(dir: &Path, source: Option<&str>, args: &[&str]) -> PathBuf {
    let out = dir.join(source.unwrap_or("default"));
    std::fs::create_dir_all(&out).unwrap();
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_mediaslice"));
    if let Some(s) = source {
        cmd.args(["--source", s]);
    }
    let out_s = out.to_string_lossy().into_owned();
    for a in args {
        cmd.arg(a.replace("OUT", &out_s));
    }
    let o = cmd.output().unwrap();
    assert!(
        o.status.success(),
        "{source:?} {args:?}: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    out
}

/// Every file under `dir`, by its path relative to `dir`, with its bytes.
fn contents(dir: &Path) -> Vec<(PathBuf, Vec<u8>)> {
    files_under(dir)
        .into_iter()
        .map(|p| (p.strip_prefix(dir).unwrap().to_path_buf(), std::fs::read(&p).unwrap()))
        .collect()
}

/// The command `args` run with no `--source` and with each of
/// [`SOURCES`]: the same files, byte for byte, and at least one of them
/// not empty.
fn same_through_every_source(name: &str, args: &[&str]) {
    let dir = temp_dir(&format!("input-read-{name}"));
    let want = contents(&run(&dir, None, args));
    assert!(
        want.iter().any(|(_, b)| !b.is_empty()),
        "{name}: the default wrote nothing"
    );
    for s in SOURCES {
        let got = contents(&run(&dir, Some(s), args));
        let names = |v: &[(PathBuf, Vec<u8>)]| v.iter().map(|(p, _)| p.clone()).collect::<Vec<_>>();
        assert_eq!(names(&got), names(&want), "{name} --source {s}: other files");
        for ((p, a), (_, b)) in got.iter().zip(&want) {
            assert!(
                a == b,
                "{name} --source {s}: {} differs from the default's",
                p.display()
            );
        }
    }
}

fn corpus(rel: &str) -> String {
    corpus_dir().join("files").join(rel).to_string_lossy().into_owned()
}

#[test]
fn remux_writes_the_same_bytes_through_every_source() {
    let mp4 = corpus("mp4/h264_aac.mp4");
    let mkv = corpus("matroska/h264_aac.mkv");
    let ts = corpus("mpegts/h264_aac.ts");
    let avi = corpus("avi/mpeg4_mp3.avi");
    same_through_every_source("mp4-mkv", &["remux", &mp4, "OUT/o.mkv"]);
    same_through_every_source("mkv-mp4-faststart", &["remux", &mkv, "OUT/o.mp4", "--faststart"]);
    same_through_every_source("avi-mkv", &["remux", &avi, "OUT/o.mkv"]);
    same_through_every_source("ts-mkv", &["remux", &ts, "OUT/o.mkv"]);
    same_through_every_source("ts-mp4", &["remux", &ts, "OUT/o.mp4"]);
}

#[test]
fn package_writes_the_same_files_through_every_source() {
    let mp4 = corpus("mp4/h264_aac.mp4");
    let ts = corpus("mpegts/h264_aac.ts");
    let mkv = corpus("matroska/h264_aac.mkv");
    same_through_every_source("pkg-hls", &["package", &mp4, "OUT/p", "--hls", "--segment", "1s"]);
    same_through_every_source("pkg-ts", &["package", &ts, "OUT/p", "--hls", "--ts", "--segment", "1s"]);
    same_through_every_source(
        "pkg-dash",
        &["package", &mkv, "OUT/p", "--hls", "--dash", "--segment", "1s"],
    );
}

#[test]
fn repair_writes_the_same_bytes_through_every_source() {
    let dir = temp_dir("input-read-damaged");
    // An AVI whose idx1 is cut off: the reader walks `movi`.
    let avi = std::fs::read(corpus_dir().join("files/avi/mpeg4_mp3.avi")).unwrap();
    let idx1 = avi
        .windows(4)
        .rposition(|w| w == b"idx1")
        .expect("the corpus AVI has an idx1");
    let noidx = dir.join("noidx.avi");
    std::fs::write(&noidx, &avi[..idx1]).unwrap();
    // An MP4 whose moov (at the end) is lost: the mdat walk with the
    // original as the reference.
    let reference = corpus_dir().join("files/mp4/h264_aac.mp4");
    let mp4 = std::fs::read(&reference).unwrap();
    let moov = mp4
        .windows(4)
        .rposition(|w| w == b"moov")
        .expect("the corpus MP4 has a moov")
        - 4;
    let nomoov = dir.join("nomoov.mp4");
    std::fs::write(&nomoov, &mp4[..moov]).unwrap();
    let (noidx, nomoov) = (noidx.to_string_lossy(), nomoov.to_string_lossy());
    same_through_every_source("repair-avi", &["repair", &noidx, "OUT/o.avi"]);
    same_through_every_source(
        "repair-mdat",
        &[
            "repair",
            &nomoov,
            "OUT/o.mp4",
            "--reference",
            &reference.to_string_lossy(),
        ],
    );
}

#[test]
fn kernel_copy_with_another_source_is_a_usage_error() {
    let dir = temp_dir("input-read-kernel-copy");
    let o = Command::new(env!("CARGO_BIN_EXE_mediaslice"))
        .args(["--source", "pread", "remux", &corpus("mp4/h264_aac.mp4")])
        .arg(dir.join("o.mkv"))
        .arg("--kernel-copy")
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(64), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(String::from_utf8_lossy(&o.stderr).contains("--kernel-copy"));
    assert!(!dir.join("o.mkv").exists());
}
