//! What the remux tests share: a clean folder under the target directory,
//! whether an outside tool runs, and the loop that remuxes every corpus file
//! to one target and hands each output to a check.
#![allow(dead_code, clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use crate::common::{family_files, Origin, TestFile, FAMILIES};
use mediaslice_std::remux::{remux_file, RemuxOptions, RemuxReport};
use std::path::{Path, PathBuf};
use std::process::Command;

/// A new empty folder under the target directory, named by `name` and a
/// number that is new on each call: the tests of every file run in one
/// process (`tests/suite.rs`), so two may ask for the same name at once.
pub fn temp_dir(name: &str) -> PathBuf {
    static CALLS: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let n = CALLS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let d = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("{name}-{n}"));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// Every regular file under `dir`, sorted by path as a depth-first walk
/// sorted by name gives them.
pub fn files_under(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut entries: Vec<_> = std::fs::read_dir(dir).unwrap().map(|e| e.unwrap().path()).collect();
    entries.sort();
    for p in entries {
        if p.is_dir() {
            out.extend(files_under(&p));
        } else {
            out.push(p);
        }
    }
    out
}

/// The names of the entries of `dir`, sorted.
pub fn names_in(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    v.sort();
    v
}

/// Whether `tool` runs (`-version` or `--version`).
pub fn have(tool: &str) -> bool {
    ["-version", "--version"]
        .iter()
        .any(|a| Command::new(tool).arg(a).output().is_ok_and(|o| o.status.success()))
}

/// Remuxes every corpus file into `dir` as `<name>.<ext>` with the default
/// options; a refused file must leave no output. `check` gets each file
/// written, its output and the report, and returns its complaints.
/// Returns (written, refused, complaints).
pub fn remux_corpus(
    dir: &Path,
    ext: &str,
    mut check: impl FnMut(&TestFile, &Path, &RemuxReport) -> Vec<String>,
) -> (usize, usize, Vec<String>) {
    let (mut written, mut refused) = (0usize, 0usize);
    let mut failures = Vec::new();
    for &fam in FAMILIES {
        for f in family_files(fam).into_iter().filter(|f| f.origin == Origin::Corpus) {
            let out = dir.join(format!("{}.{ext}", f.name));
            match remux_file(&f.path, &out, &RemuxOptions::default()) {
                Ok(report) => {
                    written += 1;
                    failures.extend(check(&f, &out, &report));
                }
                Err(e) => {
                    refused += 1;
                    println!("{}: not written: {e}", f.label());
                    assert!(!out.exists(), "{}: a failed remux left its output", f.label());
                }
            }
        }
    }
    (written, refused, failures)
}

/// `ffmpeg -i input -map 0 -c copy out`, ffmpeg's own remux (the oracle);
/// panics when ffmpeg fails.
pub fn ffmpeg_copy(input: &Path, out: &Path) {
    let _ = std::fs::remove_file(out);
    let st = Command::new("ffmpeg")
        .args(["-v", "error", "-i"])
        .arg(input)
        .args(["-map", "0", "-c", "copy"])
        .arg(out)
        .status()
        .unwrap();
    assert!(st.success(), "ffmpeg failed on {}", input.display());
}

/// ffprobe's format tags of `path`, without the writer's own (`encoder`,
/// which each tool sets to its name).
pub fn format_tags(path: &Path) -> Vec<(String, String)> {
    let out = Command::new("ffprobe")
        .args(["-v", "error", "-show_entries", "format_tags", "-of", "json"])
        .arg(path)
        .output()
        .unwrap();
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap_or_default();
    let mut tags: Vec<(String, String)> = doc["format"]["tags"]
        .as_object()
        .map(|o| {
            o.iter()
                .filter(|(k, _)| !k.eq_ignore_ascii_case("encoder"))
                .map(|(k, v)| (k.clone(), v.as_str().unwrap_or("").to_owned()))
                .collect()
        })
        .unwrap_or_default();
    tags.sort();
    tags
}

/// ffprobe's packets of `path` (`-show_packets -show_data_hash CRC32`, as
/// JSON objects) and what it printed on stderr.
pub fn ffprobe_packet_list(path: &Path) -> (Vec<serde_json::Value>, String) {
    let out = Command::new("ffprobe")
        .args([
            "-v",
            "error",
            "-show_packets",
            "-show_data_hash",
            "CRC32",
            "-of",
            "json",
        ])
        .arg(path)
        .output()
        .unwrap();
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap_or_default();
    (
        doc["packets"].as_array().cloned().unwrap_or_default(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}
