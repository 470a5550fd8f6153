//! `probe --json --chapters` against ffprobe 5.1's `-show_chapters` on the
//! corpus files made with chapters (corpus/files/chapters: Matroska, MP4
//! `chpl`, MP3 ID3v2 `CHAP`, Ogg `CHAPTERxxx`) and on an MP4 with a QuickTime
//! chapter track made by ffmpeg, in every source mode; and
//! the output without `--chapters` keeps its keys.

use serde_json::Value;
use std::path::Path;
use std::process::Command;

use crate::probe_oracle;
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

/// `out`, 3 s of a sine encoded with `codec`, with `chapters` (start and
/// end in ms, title) by `-map_chapters`; whether ffmpeg made it.
fn ffmpeg_with_chapters(dir: &Path, chapters: &[(u32, u32, &str)], codec: &[&str], out: &Path) -> bool {
    let mut meta = String::from(";FFMETADATA1\n");
    for (start, end, title) in chapters {
        meta += &format!("[CHAPTER]\nTIMEBASE=1/1000\nSTART={start}\nEND={end}\ntitle={title}\n");
    }
    let path = dir.join("meta.txt");
    std::fs::write(&path, meta).unwrap();
    Command::new("ffmpeg")
        .args(["-loglevel", "error", "-y", "-f", "lavfi", "-i", "sine=d=3", "-i"])
        .arg(&path)
        .args(["-map", "0", "-map_chapters", "1"])
        .args(codec)
        .arg(out)
        .status()
        .is_ok_and(|s| s.success())
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
    let chapters = [(0, 1500, "Intro"), (1500, 2600, "Middle \u{e9}"), (2600, 3000, "")];
    let file = dir.join("qt.mp4");
    let made = ffmpeg_with_chapters(&dir, &chapters, &["-c:a", "aac", "-b:a", "16k"], &file);
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

/// QuickTime chapter samples with UTF-16 titles (a byte order mark, then
/// big- or little-endian units), made by rewriting the first sample of an
/// ffmpeg `-map_chapters` MP4 in place: a title ended by a NUL, one that
/// fills its sample up to the `encd` atom ffmpeg writes after it, one with
/// an unpaired surrogate (the title stops there), one with a mark and no
/// text. Compared with ffprobe in every source mode; needs ffmpeg and
/// ffprobe on PATH (without them it says so and checks nothing).
#[test]
fn qt_chapter_track_utf16_matches_ffprobe() {
    let dir = std::env::temp_dir().join(format!("mediaslice-qtutf16-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let chapters = [(0, 1500, "A title of 24 bytes here"), (1500, 3000, "Second")];
    let file = dir.join("qt.mp4");
    let args = ["-c:a", "aac", "-b:a", "16k"];
    if !ffmpeg_with_chapters(&dir, &chapters, &args, &file) || ffprobe_chapters(&file).is_none() {
        eprintln!("qt_chapter_track_utf16_matches_ffprobe: ffmpeg/ffprobe not available, not run");
        return;
    }
    let bytes = std::fs::read(&file).unwrap();
    let stco = bytes.windows(4).rposition(|w| w == b"stco").unwrap();
    let first = u32::from_be_bytes(bytes[stco + 12..stco + 16].try_into().unwrap()) as usize;
    assert_eq!(&bytes[first..first + 2], &[0, 24], "the first sample's title length");
    let units = |s: &str, le: bool| -> Vec<u8> {
        s.encode_utf16()
            .flat_map(|u| if le { u.to_le_bytes() } else { u.to_be_bytes() })
            .collect()
    };
    let cases: [(&str, Vec<u8>, &str); 4] = [
        (
            "be_nul",
            [&[0xFE, 0xFF], &units("\u{dc}n\u{ef} \u{1F600}\0", false)[..]].concat(),
            "\u{dc}n\u{ef} \u{1F600}",
        ),
        (
            "le_full",
            [&[0xFF, 0xFE], &units("Caf\u{e9} cr\u{e8}mes", true)[..]].concat(),
            "Caf\u{e9} cr\u{e8}mes",
        ),
        (
            "surrogate",
            [
                &[0xFE, 0xFF],
                &units("ab", false)[..],
                &[0xDC, 0],
                &units("cd\0", false),
            ]
            .concat(),
            "ab",
        ),
        ("mark_only", vec![0xFF, 0xFE], ""),
    ];
    for (name, text, title) in cases {
        assert!(text.len() <= 24, "{name}");
        let mut b = bytes.clone();
        b[first..first + 2].copy_from_slice(&(text.len() as u16).to_be_bytes());
        // The rest of the old title zeroed: ffmpeg 5.1 reads two bytes past
        // a UTF-16 title (docs/formats/mp4.md), we do not.
        b[first + 2..first + 26].fill(0);
        b[first + 2..first + 2 + text.len()].copy_from_slice(&text);
        let path = dir.join(format!("{name}.mp4"));
        std::fs::write(&path, b).unwrap();
        let want = ffprobe_chapters(&path).unwrap();
        assert_eq!(want[0]["tags"]["title"], title, "{name}: ffprobe's title");
        for source in ["mmap", "pread", "reader"] {
            assert_eq!(our_chapters(source, &path), want, "{name} ({source})");
        }
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

/// An ID3v2.3 frame.
fn id3_frame(id: &[u8; 4], body: &[u8]) -> Vec<u8> {
    [id.as_slice(), &(body.len() as u32).to_be_bytes(), &[0, 0], body].concat()
}

/// A `CHAP` frame: element ID, times in ms, offsets unset, sub-frames.
fn chap(eid: &[u8], start: u32, end: u32, subs: &[Vec<u8>]) -> Vec<u8> {
    let times = [start, end, u32::MAX, u32::MAX].map(u32::to_be_bytes).concat();
    id3_frame(b"CHAP", &[eid, &[0], &times, &subs.concat()].concat())
}

/// A `CTOC` frame listing `kids`, top-level and ordered.
fn ctoc(eid: &[u8], kids: &[&[u8]], subs: &[Vec<u8>]) -> Vec<u8> {
    let list: Vec<u8> = kids.iter().flat_map(|k| [*k, &[0]].concat()).collect();
    id3_frame(
        b"CTOC",
        &[eid, &[0, 3, kids.len() as u8], &list, &subs.concat()].concat(),
    )
}

fn tit2(enc: u8, text: &[u8]) -> Vec<u8> {
    id3_frame(b"TIT2", &[&[enc], text].concat())
}

fn utf16(bom: bool, le: bool, s: &str) -> Vec<u8> {
    let mut v = match (bom, le) {
        (false, _) => vec![],
        (true, true) => vec![0xFF, 0xFE],
        (true, false) => vec![0xFE, 0xFF],
    };
    for u in s.encode_utf16() {
        v.extend_from_slice(&if le { u.to_le_bytes() } else { u.to_be_bytes() });
    }
    v
}

/// MP3 files whose ID3v2.3 tag holds `CHAP` and `CTOC` frames, built here
/// in front of a corpus MP3 (no tag of its own), each compared with the
/// ffprobe on PATH (without one it says so and checks nothing): `CTOC`
/// listing chapters out of frame order, nested, naming a missing element
/// (ffprobe ignores `CTOC`: frame order stands); titles in ISO-8859-1,
/// UTF-16 with either byte order mark, UTF-16BE, empty, unreadable, or two
/// `TIT2`; a chapter dropped for a sub-frame past its body (the next takes
/// its id) or for ending before it starts (its id is not reused).
#[test]
fn id3_chapters_match_ffprobe() {
    let audio = std::fs::read(probe_oracle::corpus("files/mp3/cbr_bare.mp3")).unwrap();
    let abc = |t: [&str; 3]| {
        [
            chap(b"c0", 0, 1000, &[tit2(3, t[0].as_bytes())]),
            chap(b"c1", 1000, 2000, &[tit2(3, t[1].as_bytes())]),
            chap(b"c2", 2000, 3000, &[tit2(3, t[2].as_bytes())]),
        ]
    };
    let [a, b, c] = abc(["A", "B", "C"]);
    let mut past = tit2(3, b"B");
    past[7] = 0x50;
    let cases: Vec<(&str, Vec<Vec<u8>>)> = vec![
        (
            "reordered",
            vec![
                ctoc(b"toc", &[b"c2", b"c0", b"c1"], &[tit2(3, b"Contents")]),
                a.clone(),
                b.clone(),
                c.clone(),
            ],
        ),
        (
            "frames_out_of_time_order",
            vec![
                c.clone(),
                a.clone(),
                b.clone(),
                ctoc(b"toc", &[b"c0", b"c1", b"c2"], &[]),
            ],
        ),
        (
            "nested",
            vec![
                ctoc(b"toc", &[b"sub", b"c0"], &[]),
                ctoc(b"sub", &[b"c2", b"c1"], &[]),
                a.clone(),
                b.clone(),
                c.clone(),
            ],
        ),
        (
            "missing",
            vec![
                ctoc(b"toc", &[b"c0", b"gone", b"c1"], &[]),
                a.clone(),
                chap(b"c1", 1000, 2000, &[]),
            ],
        ),
        ("ctoc_only", vec![ctoc(b"toc", &[b"c0"], &[tit2(3, b"Only")])]),
        (
            "encodings",
            vec![
                chap(b"c0", 0, 1000, &[tit2(0, b"Caf\xE9")]),
                chap(
                    b"c1",
                    1000,
                    2000,
                    &[tit2(1, &utf16(true, true, "\u{dc}n\u{ef} \u{1F600}"))],
                ),
                chap(b"c2", 2000, 3000, &[tit2(1, &utf16(true, false, "B\u{e9}"))]),
                chap(b"c3", 3000, 4000, &[tit2(2, &utf16(false, false, "BE"))]),
                chap(b"c\xE9", 4000, 5000, &[]),
                chap(b"", 5000, 6000, &[]),
            ],
        ),
        (
            "empty_and_unreadable",
            vec![
                chap(b"c0", 0, 1000, &[tit2(3, b"")]),
                chap(b"c1", 1000, 2000, &[tit2(1, b"\xFF\xFE")]),
                chap(b"c2", 2000, 3000, &[tit2(1, b"\x00\x00"), tit2(3, b"Y")]),
                chap(b"c3", 3000, 4000, &[tit2(3, b"\x00"), tit2(3, b"X")]),
                chap(b"c4", 4000, 5000, &[tit2(3, b"P"), tit2(3, b"Q")]),
                chap(b"c5", 5000, 6000, &[tit2(1, b"\xFF\xFEa\x00\x00\xDCb\x00")]),
                chap(b"c6", 6000, 7000, &[tit2(7, b"Z")]),
            ],
        ),
        (
            "sub_frame_past_body",
            vec![a.clone(), chap(b"c1", 1000, 2000, &[past]), c.clone()],
        ),
        (
            "ends_before_start",
            vec![chap(b"c0", 1000, 500, &[]), b.clone(), c.clone()],
        ),
    ];
    let dir = std::env::temp_dir().join(format!("mediaslice-id3chap-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let mut checked = 0;
    for (name, frames) in &cases {
        let body = frames.concat();
        let n = body.len() as u32;
        let size = [n >> 21, n >> 14, n >> 7, n].map(|b| (b & 0x7F) as u8);
        let file = dir.join(format!("{name}.mp3"));
        std::fs::write(&file, [b"ID3\x03\0\0".as_slice(), &size, &body, &audio].concat()).unwrap();
        let Some(want) = ffprobe_chapters(&file) else {
            eprintln!("id3_chapters_match_ffprobe: ffprobe not available, not run");
            return;
        };
        for source in ["mmap", "pread", "reader"] {
            assert_eq!(our_chapters(source, &file), want, "{name} ({source})");
        }
        checked += want.as_array().map_or(0, Vec::len);
    }
    // The oracle is not empty: 3 + 3 + 3 + 2 + 0 + 6 + 7 + 2 + 2 chapters.
    assert_eq!(checked, 28);
    std::fs::remove_dir_all(&dir).unwrap();
}

/// ffmpeg writes an ID3v2.3 `TIT2` that is not ASCII as UTF-16 with a byte
/// order mark: its own chapters, read back, match ffprobe (needs ffmpeg and
/// ffprobe on PATH; without them it says so and checks nothing).
#[test]
fn ffmpeg_id3v23_chapters_match_ffprobe() {
    let dir = std::env::temp_dir().join(format!("mediaslice-id3v23-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let chapters = [(0, 1000, "Intro"), (1000, 2000, "Middle \u{e9}")];
    let file = dir.join("v23.mp3");
    let args = ["-c:a", "libmp3lame", "-b:a", "32k", "-id3v2_version", "3"];
    let made = ffmpeg_with_chapters(&dir, &chapters, &args, &file);
    let Some(want) = made.then(|| ffprobe_chapters(&file)).flatten() else {
        eprintln!("ffmpeg_id3v23_chapters_match_ffprobe: ffmpeg/ffprobe not available, not run");
        return;
    };
    assert_eq!(want[1]["tags"]["title"], "Middle \u{e9}");
    for source in ["mmap", "pread", "reader"] {
        assert_eq!(our_chapters(source, &file), want, "{source}");
    }
    std::fs::remove_dir_all(&dir).unwrap();
}
