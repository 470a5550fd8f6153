//! `probe --json --chapters` against ffprobe 5.1's `-show_chapters` on the
//! corpus files made with chapters (corpus/files/chapters: Matroska, MP4
//! `chpl`, MP3 ID3v2 `CHAP`, Ogg `CHAPTERxxx`), in every source mode; and
//! the output without `--chapters` keeps its keys.

use serde_json::Value;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::Command;

fn corpus(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../corpus").join(rel)
}

fn expected(rel: &str) -> Value {
    let mut s = String::new();
    flate2::read::GzDecoder::new(std::fs::File::open(corpus(&format!("expected/{rel}.json.gz"))).unwrap())
        .read_to_string(&mut s)
        .unwrap();
    serde_json::from_str(&s).unwrap()
}

fn probe(args: &[&str], rel: &str) -> Value {
    let o = Command::new(env!("CARGO_BIN_EXE_mediaslice"))
        .args(args)
        .arg(corpus(&format!("files/{rel}")))
        .output()
        .unwrap();
    assert!(o.status.success(), "{rel}: {}", String::from_utf8_lossy(&o.stderr));
    serde_json::from_slice(&o.stdout).unwrap()
}

const FILES: [&str; 4] = [
    "chapters/h264_aac.mkv",
    "chapters/h264_aac.mp4",
    "chapters/mp3.mp3",
    "chapters/vorbis.ogg",
];

#[test]
fn chapters_match_ffprobe() {
    for rel in FILES {
        let want = &expected(rel)["chapters"];
        assert_eq!(
            want.as_array().map(Vec::len),
            Some(2),
            "{rel}: the oracle has two chapters"
        );
        for source in ["mmap", "pread", "reader"] {
            let got = probe(&["--source", source, "probe", "--json", "--chapters"], rel);
            assert_eq!(&got["chapters"], want, "{rel} ({source})");
            let keys: Vec<&str> = got.as_object().unwrap().keys().map(String::as_str).collect();
            assert_eq!(
                keys[..3],
                ["streams", "chapters", "format"],
                "{rel}: ffprobe's section order"
            );
        }
    }
}

#[test]
fn no_chapters_without_the_flag() {
    for rel in FILES {
        let got = probe(&["probe", "--json"], rel);
        assert!(got.get("chapters").is_none(), "{rel}");
    }
    // A file without chapters gives an empty array, as ffprobe does.
    let got = probe(&["probe", "--json", "--chapters"], "wav/pcm_s16le.wav");
    assert_eq!(got["chapters"], Value::Array(Vec::new()));
}
