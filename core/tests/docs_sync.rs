//! The documentation stays true to the code: every diagnostic code that
//! `core/src` reports is listed in `docs/diagnostics.md`, and every
//! `Limits` field is in the table of `docs/limits.md`.

#![allow(clippy::indexing_slicing, clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::path::{Path, PathBuf};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

fn sources(dir: &Path, out: &mut Vec<String>) {
    for e in std::fs::read_dir(dir).unwrap().filter_map(|e| e.ok()) {
        let p = e.path();
        if p.is_dir() {
            sources(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(std::fs::read_to_string(&p).unwrap());
        }
    }
}

/// The string literals passed to `report(` in `text`.
fn reported_codes(text: &str) -> Vec<String> {
    let mut codes = Vec::new();
    let mut rest = text;
    while let Some(i) = rest.find("report(\"") {
        rest = &rest[i + 8..];
        if let Some(end) = rest.find('"') {
            codes.push(rest[..end].to_string());
        }
    }
    codes
}

#[test]
fn every_reported_diagnostic_code_is_documented() {
    let mut files = Vec::new();
    sources(&root().join("core/src"), &mut files);
    let docs = std::fs::read_to_string(root().join("docs/diagnostics.md")).unwrap();
    let mut codes: Vec<String> = files.iter().flat_map(|f| reported_codes(f)).collect();
    codes.sort();
    codes.dedup();
    assert!(
        codes.len() > 100,
        "found only {} codes: the scan is broken",
        codes.len()
    );
    let missing: Vec<_> = codes.iter().filter(|c| !docs.contains(&format!("`{c}`"))).collect();
    assert!(
        missing.is_empty(),
        "codes missing from docs/diagnostics.md: {missing:?}"
    );
}

#[test]
fn every_limit_is_documented() {
    let src = std::fs::read_to_string(root().join("core/src/limits.rs")).unwrap();
    let docs = std::fs::read_to_string(root().join("docs/limits.md")).unwrap();
    let fields: Vec<&str> = src
        .lines()
        .filter_map(|l| l.trim().strip_prefix("pub "))
        .filter_map(|l| l.split_once(':').map(|(name, _)| name))
        .filter(|n| n.chars().all(|c| c.is_ascii_lowercase() || c == '_'))
        .collect();
    assert!(fields.len() >= 7, "{fields:?}");
    for f in fields {
        assert!(
            docs.contains(&format!("| `{f}` |")),
            "Limits::{f} is not in docs/limits.md"
        );
    }
}
