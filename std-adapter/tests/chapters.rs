//! `probe --json --chapters` against ffprobe 5.1's `-show_chapters` on the
//! corpus files made with chapters (corpus/files/chapters: Matroska, MP4
//! `chpl`, MP3 ID3v2 `CHAP`, Ogg `CHAPTERxxx`) and on an MP4 with a QuickTime
//! chapter track made by ffmpeg, in every source mode; and
//! the output without `--chapters` keeps its keys.

use serde_json::Value;
use std::path::Path;
use std::process::Command;

mod probe_oracle;
use probe_oracle::{expected, probe};

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

/// `-show_chapters` of `path` by the ffprobe on PATH, or `None` without one.
fn ffprobe_chapters(path: &Path) -> Option<Value> {
    let o = Command::new("ffprobe")
        .args(["-v", "quiet", "-show_chapters", "-of", "json"])
        .arg(path)
        .output()
        .ok()?;
    let v: Value = serde_json::from_slice(&o.stdout).ok()?;
    Some(v["chapters"].clone())
}

fn our_chapters(source: &str, path: &Path) -> Value {
    let o = Command::new(env!("CARGO_BIN_EXE_mediaslice"))
        .args(["--source", source, "probe", "--json", "--chapters"])
        .arg(path)
        .output()
        .unwrap();
    assert!(
        o.status.success(),
        "{}: {}",
        path.display(),
        String::from_utf8_lossy(&o.stderr)
    );
    serde_json::from_slice::<Value>(&o.stdout).unwrap()["chapters"].clone()
}

/// An MP4 made by ffmpeg with `-map_chapters` holds both `chpl` and a
/// QuickTime chapter track; ffprobe reads the track (time base 1/1000). The
/// file and three damaged copies (title length 0, a length past its sample,
/// a sample past the file) are made here, so this needs ffmpeg and ffprobe
/// on PATH; without them it says so and checks nothing.
#[test]
fn qt_chapter_track_matches_ffprobe() {
    let dir = std::env::temp_dir().join(format!("mediaslice-qtchap-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let meta = dir.join("meta.txt");
    std::fs::write(
        &meta,
        ";FFMETADATA1\n[CHAPTER]\nTIMEBASE=1/1000\nSTART=0\nEND=1500\ntitle=Intro\n\
         [CHAPTER]\nTIMEBASE=1/1000\nSTART=1500\nEND=2600\ntitle=Middle \u{e9}\n\
         [CHAPTER]\nTIMEBASE=1/1000\nSTART=2600\nEND=3000\ntitle=\n",
    )
    .unwrap();
    let file = dir.join("qt.mp4");
    let made = Command::new("ffmpeg")
        .args(["-loglevel", "error", "-y", "-f", "lavfi", "-i", "sine=d=3", "-i"])
        .arg(&meta)
        .args(["-map", "0", "-map_chapters", "1", "-c:a", "aac", "-b:a", "16k"])
        .arg(&file)
        .status()
        .is_ok_and(|s| s.success());
    let Some(want) = made.then(|| ffprobe_chapters(&file)).flatten() else {
        eprintln!("qt_chapter_track_matches_ffprobe: ffmpeg/ffprobe not available, not run");
        return;
    };
    assert_eq!(want[0]["time_base"], "1/1000", "ffprobe reads the chapter track");
    assert_eq!(want.as_array().map(Vec::len), Some(3));
    let bytes = std::fs::read(&file).unwrap();
    // The chapter track is the last trak: its stco's first chunk offset.
    let stco = bytes.windows(4).rposition(|w| w == b"stco").unwrap();
    let first = u32::from_be_bytes(bytes[stco + 12..stco + 16].try_into().unwrap()) as usize;
    let mut damaged = Vec::new();
    for (name, at, value) in [
        ("zero.mp4", first, 0u32.to_be_bytes()[2..].to_vec()),
        ("long.mp4", first, 500u16.to_be_bytes().to_vec()),
        (
            "past.mp4",
            stco + 12,
            (bytes.len() as u32 + 1000).to_be_bytes().to_vec(),
        ),
    ] {
        let mut b = bytes.clone();
        b[at..at + value.len()].copy_from_slice(&value);
        let p = dir.join(name);
        std::fs::write(&p, b).unwrap();
        damaged.push(p);
    }
    for path in std::iter::once(&file).chain(&damaged) {
        let want = ffprobe_chapters(path).unwrap();
        for source in ["mmap", "pread", "reader"] {
            assert_eq!(our_chapters(source, path), want, "{} ({source})", path.display());
        }
    }
    std::fs::remove_dir_all(&dir).unwrap();
}
