//! The kernel copy of unchanged payload (`FileSink::set_input`,
//! `copy_file_range`) changes no byte of a remux: every MP4, Matroska,
//! MPEG-TS and AVI file of the corpus and of the samples
//! (`$MEDIASLICE_SAMPLES`; only the corpus when absent, said on stderr)
//! remuxed to the targets below with the copy off (the default), with it
//! on for every payload of the map (least length 1 byte) and with it on at
//! the default least length gives byte-equal files, or is refused in all three. The payloads
//! an MP4 or Matroska input gives a Matroska or MP4 output unchanged do
//! reach the kernel (or, where it refuses, are counted as fallbacks). The
//! CLI's `--kernel-copy` and `MEDIASLICE_KERNEL_COPY_MIN` do the same.
#![allow(clippy::indexing_slicing, clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use crate::common;
use crate::remux_common;

use common::{family_files, samples_dir, Origin};
use mediaslice_std::remux::{remux_file, RemuxOptions};
use mediaslice_std::KernelCopyStats;
use remux_common::temp_dir;
use std::path::Path;
use std::process::Command;

/// (input family, output extension, faststart).
const CASES: &[(&str, &str, bool)] = &[
    ("mp4", "mkv", false),
    ("mp4", "mp4", true),
    ("matroska", "mp4", false),
    ("matroska", "mkv", false),
    ("mpegts", "mkv", false),
    ("avi", "mkv", false),
    ("avi", "avi", false),
];

/// The output of one remux, or `None` when it was refused.
fn remux(input: &Path, out: &Path, opts: &RemuxOptions) -> Option<(Vec<u8>, KernelCopyStats)> {
    let r = remux_file(input, out, opts).ok()?;
    let bytes = std::fs::read(out).unwrap();
    std::fs::remove_file(out).unwrap();
    Some((bytes, r.kernel_copy))
}

#[test]
fn remuxes_with_and_without_the_kernel_copy_are_byte_equal() {
    if samples_dir().is_none() {
        eprintln!("kernel_copy: no samples (set MEDIASLICE_SAMPLES): the corpus files only");
    }
    let dir = temp_dir("kernel_copy_equal");
    let mut failures = Vec::new();
    for &(family, ext, faststart) in CASES {
        let (mut compared, mut qualified, mut copied, mut fell_back) = (0, 0u64, 0u64, 0u64);
        for f in family_files(family) {
            let out = dir.join(format!("{}.{ext}", f.name));
            let off = RemuxOptions {
                faststart,
                ..Default::default()
            };
            let on = RemuxOptions {
                kernel_copy: true,
                ..off.clone()
            };
            let every = RemuxOptions {
                kernel_copy_min: 1,
                ..on.clone()
            };
            let plain = remux(&f.path, &out, &off);
            if let Some((_, k)) = &plain {
                assert_eq!(*k, KernelCopyStats::default(), "{}: copy off", f.label());
            }
            for (what, opts) in [("every payload", &every), ("default length", &on)] {
                let got = remux(&f.path, &out, opts);
                match (&plain, &got) {
                    (None, None) => {}
                    (Some((a, _)), Some((b, k))) => {
                        if a != b {
                            failures.push(format!("{} -> {ext} ({what}): bytes differ", f.label()));
                        }
                        if what == "every payload" {
                            compared += 1;
                            qualified += k.parts + k.fallbacks;
                            copied += k.bytes;
                            fell_back += k.fallbacks;
                        }
                    }
                    _ => failures.push(format!(
                        "{} -> {ext} ({what}): written {} without the copy, {} with it",
                        f.label(),
                        plain.is_some(),
                        got.is_some()
                    )),
                }
            }
            assert!(!out.exists());
        }
        eprintln!(
            "{family} -> {ext}{}: {compared} files byte-equal; {qualified} payloads qualified, {copied} bytes copied by the kernel, {fell_back} fallbacks",
            if faststart { " faststart" } else { "" }
        );
        assert!(compared > 0, "{family} -> {ext}: no file written");
        // MP4 and Matroska inputs give Matroska and MP4 outputs their
        // payloads unchanged: those are borrowed from the map.
        if family == "mp4" || family == "matroska" {
            assert!(
                qualified > 0,
                "{family} -> {ext}: no payload qualified for the kernel copy"
            );
            if fell_back > 0 {
                eprintln!("{family} -> {ext}: the kernel refused {fell_back} copies here (another file system?)");
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// `mediaslice remux` with `args` and `env`; gives its stderr, the output
/// read back and removed.
fn cli(input: &Path, out: &Path, args: &[&str], env: Option<&str>) -> (String, Vec<u8>) {
    let mut c = Command::new(env!("CARGO_BIN_EXE_mediaslice"));
    c.arg("remux").arg(input).arg(out).args(args);
    match env {
        Some(v) => c.env("MEDIASLICE_KERNEL_COPY_MIN", v),
        None => c.env_remove("MEDIASLICE_KERNEL_COPY_MIN"),
    };
    let o = c.output().unwrap();
    let err = String::from_utf8_lossy(&o.stderr).into_owned();
    assert!(o.status.success(), "{err}");
    let bytes = std::fs::read(out).unwrap();
    std::fs::remove_file(out).unwrap();
    (err, bytes)
}

#[test]
fn cli_reports_the_kernel_copy_and_turns_it_off() {
    let f = family_files("mp4")
        .into_iter()
        .find(|f| f.origin == Origin::Corpus && f.name.contains("h264"))
        .expect("a corpus MP4 with H.264");
    let dir = temp_dir("kernel_copy_cli");
    let out = dir.join("out.mkv");
    let (err_on, on) = cli(&f.path, &out, &["--kernel-copy"], Some("1"));
    let (err_off, off) = cli(&f.path, &out, &[], Some("1"));
    assert_eq!(on, off, "{}", f.label());
    assert!(err_on.contains("mediaslice: kernel copy: "), "{err_on}");
    assert!(!err_off.contains("kernel copy"), "{err_off}");
    let c = Command::new(env!("CARGO_BIN_EXE_mediaslice"))
        .args(["remux", "x.mp4", "y.mkv", "--kernel-copy"])
        .env("MEDIASLICE_KERNEL_COPY_MIN", "lots")
        .output()
        .unwrap();
    assert_eq!(
        c.status.code(),
        Some(64),
        "a bad MEDIASLICE_KERNEL_COPY_MIN is a usage error"
    );
}
