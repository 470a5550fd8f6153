//! `probe --json --programs` against ffprobe 5.1's `-show_programs` on the
//! corpus's two-program transport stream (corpus/files/programs), in every
//! source mode: each program's fields and tags, and its streams by index
//! (their objects are the `streams` entries, compared field by field
//! elsewhere); `format.nb_programs` too.

use serde_json::Value;

mod probe_oracle;
use probe_oracle::{expected, probe};

/// A program without its stream objects, and the indices of its streams.
fn shape(p: &Value) -> (Value, Vec<u64>) {
    let mut p = p.clone();
    let streams = p.as_object_mut().unwrap().remove("streams").unwrap();
    let idx = streams
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["index"].as_u64().unwrap())
        .collect();
    (p, idx)
}

#[test]
fn programs_match_ffprobe() {
    let rel = "programs/two_programs.ts";
    let want = expected(rel);
    let want_programs: Vec<_> = want["programs"].as_array().unwrap().iter().map(shape).collect();
    assert_eq!(want_programs.len(), 2, "the oracle has two programs");
    for source in ["mmap", "pread", "reader"] {
        let got = probe(&["--source", source, "probe", "--json", "--programs"], rel);
        let keys: Vec<&str> = got.as_object().unwrap().keys().map(String::as_str).collect();
        assert_eq!(keys[..3], ["programs", "streams", "format"], "ffprobe's section order");
        let got_programs: Vec<_> = got["programs"].as_array().unwrap().iter().map(shape).collect();
        assert_eq!(got_programs, want_programs, "{source}");
        // A program's streams are the `streams` entries.
        for p in got["programs"].as_array().unwrap() {
            for s in p["streams"].as_array().unwrap() {
                assert_eq!(s, &got["streams"][s["index"].as_u64().unwrap() as usize]);
            }
        }
        assert_eq!(got["format"]["nb_programs"], want["format"]["nb_programs"]);
    }
}

#[test]
fn no_programs_without_the_flag_or_outside_ts() {
    let got = probe(&["probe", "--json"], "programs/two_programs.ts");
    assert!(got.get("programs").is_none());
    assert_eq!(got["format"]["nb_programs"], 2);
    let got = probe(&["probe", "--json", "--programs"], "wav/pcm_s16le.wav");
    assert_eq!(got["programs"], Value::Array(Vec::new()));
    assert_eq!(got["format"]["nb_programs"], 0);
}
