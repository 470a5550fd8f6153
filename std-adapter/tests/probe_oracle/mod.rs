//! Shared by the `chapters` and `programs` tests: corpus paths, the
//! committed ffprobe oracle of a corpus file, and `mediaslice` run on one.

use serde_json::Value;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::Command;

/// `rel` under the repository's corpus/.
pub fn corpus(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../corpus").join(rel)
}

/// The ffprobe JSON committed for `rel` (corpus/expected/REL.json.gz).
pub fn expected(rel: &str) -> Value {
    let mut s = String::new();
    flate2::read::GzDecoder::new(std::fs::File::open(corpus(&format!("expected/{rel}.json.gz"))).unwrap())
        .read_to_string(&mut s)
        .unwrap();
    serde_json::from_str(&s).unwrap()
}

/// `mediaslice ARGS corpus/files/REL`, which must succeed, as JSON.
pub fn probe(args: &[&str], rel: &str) -> Value {
    let o = Command::new(env!("CARGO_BIN_EXE_mediaslice"))
        .args(args)
        .arg(corpus(&format!("files/{rel}")))
        .output()
        .unwrap();
    assert!(o.status.success(), "{rel}: {}", String::from_utf8_lossy(&o.stderr));
    serde_json::from_slice(&o.stdout).unwrap()
}
