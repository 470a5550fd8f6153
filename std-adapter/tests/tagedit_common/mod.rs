//! What the tag-editing tests read back: our reader's tags and packets,
//! ffprobe's and exiftool's tags, the files to edit, and the checks
//! shared by the tagedit tests (refusals, damaged inputs).
#![allow(dead_code)]

use mediaslice::{Demuxer, Limits};
use mediaslice_std::tagedit::{edit, Edits};
use mediaslice_std::MmapSource;
use serde_json::{Map, Value};
use std::path::{Path, PathBuf};
use std::process::Command;

/// One packet as compared before and after: stream, pts, dts, size,
/// CRC-32 of the data.
pub type PacketKey = (usize, Option<i64>, Option<i64>, usize, u32);

/// The bytes of a packet held in one piece: `start..end` in the input.
pub type ByteRange = (u64, u64);

/// The real samples: `$MEDIASLICE_SAMPLES`, else `../shared/samples`
/// beside the repository.
pub fn samples() -> PathBuf {
    match std::env::var_os("MEDIASLICE_SAMPLES") {
        Some(p) => PathBuf::from(p),
        None => Path::new(env!("CARGO_MANIFEST_DIR")).join("../../shared/samples"),
    }
}

/// The corpus files of `family` and the samples of `family`, sorted;
/// prints when the samples are absent.
pub fn files(family: &str) -> Vec<PathBuf> {
    let mut v = Vec::new();
    let corpus = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../corpus/files")
        .join(family);
    let samples = samples().join(family);
    if !samples.is_dir() {
        eprintln!("{}: absent, samples skipped", samples.display());
    }
    for dir in [corpus, samples] {
        if let Ok(rd) = std::fs::read_dir(&dir) {
            v.extend(rd.filter_map(|e| e.ok()).map(|e| e.path()).filter(|p| p.is_file()));
        }
    }
    v.sort();
    v
}

/// The files of `family` (see [`files`]) whose name ends with one of
/// `exts`, with their names.
pub fn named_files(family: &str, exts: &[&str]) -> Vec<(String, PathBuf)> {
    files(family)
        .into_iter()
        .map(|f| (f.file_name().unwrap().to_string_lossy().into_owned(), f))
        .filter(|(name, _)| exts.iter().any(|e| name.ends_with(e)))
        .collect()
}

/// A fresh folder for one test, new on each call: the tests of every file
/// run in one process (`tests/suite.rs`), so two may ask for the same name
/// at once.
pub fn scratch(name: &str) -> PathBuf {
    static CALLS: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let n = CALLS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let d = std::env::temp_dir().join(format!("mediaslice-tagedit-{}-{name}-{n}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// As [`scratch`], under `/dev/shm` (a tmpfs on Linux, where `fsync` costs
/// nothing) when it is a writable folder, else under the temporary folder.
pub fn memory_scratch(name: &str) -> PathBuf {
    let shm = Path::new("/dev/shm");
    let d = shm.join(format!("mediaslice-tagedit-{}-{name}", std::process::id()));
    if shm.is_dir() && std::fs::create_dir_all(&d).is_ok() {
        return d;
    }
    scratch(name)
}

/// Our reader's packets and the byte ranges of those the input holds in
/// one piece, or `None` when the file does not open.
pub fn packets(path: &Path) -> Option<(Vec<PacketKey>, Vec<ByteRange>)> {
    let src = MmapSource::open(path).ok()?;
    let ext = path.extension().and_then(|e| e.to_str());
    let mut d = Demuxer::open_with(src, ext, Limits::default()).ok()?;
    let mut v = Vec::new();
    let mut ranges = Vec::new();
    while let Ok(Some(p)) = d.next_packet() {
        if let Some(pos) = p.pos {
            ranges.push((pos, pos + p.data.len() as u64));
        }
        v.push((p.track, p.pts, p.dts, p.data.len(), mediaslice::crc::crc32(p.data)));
    }
    Some((v, ranges))
}

/// Our `tags --json` format tags.
pub fn our_tags(path: &Path) -> Map<String, Value> {
    let out = Command::new(env!("CARGO_BIN_EXE_mediaslice"))
        .args(["tags", "--json"])
        .arg(path)
        .output()
        .unwrap();
    let v: Value = serde_json::from_slice(&out.stdout).unwrap_or(Value::Null);
    file_tags(path, &v).as_object().cloned().unwrap_or_default()
}

/// Where a reader's JSON keeps a file's own tags: the format's tags, or
/// for Ogg (whose comment header belongs to its stream, as ffprobe and
/// our reader both show it) the first stream's.
fn file_tags<'a>(path: &Path, v: &'a Value) -> &'a Value {
    let ogg = path
        .extension()
        .and_then(|e| e.to_str())
        .is_some_and(|e| matches!(e, "ogg" | "oga" | "opus" | "ogv" | "spx"));
    if ogg {
        &v["streams"][0]["tags"]
    } else {
        &v["format"]["tags"]
    }
}

/// ffprobe's `-show_format -show_streams` JSON, or `None` when ffprobe
/// is missing or cannot read the file.
fn ffprobe_json(path: &Path) -> Option<Value> {
    let out = Command::new("ffprobe")
        .args(["-v", "error", "-show_format", "-show_streams", "-of", "json"])
        .arg(path)
        .output()
        .ok()?;
    if !out.status.success() {
        return None;
    }
    serde_json::from_slice(&out.stdout).ok()
}

/// ffprobe's format tags with lower-case keys, or `None` when ffprobe is
/// missing or cannot read the file.
pub fn ffprobe_tags(path: &Path) -> Option<Map<String, Value>> {
    let v = ffprobe_json(path)?;
    let tags = file_tags(path, &v).as_object().cloned().unwrap_or_default();
    Some(tags.into_iter().map(|(k, v)| (k.to_lowercase(), v)).collect())
}

/// ffprobe's tags of every stream (`{}` for a stream without), or `None`
/// when ffprobe is missing or cannot read the file.
pub fn ffprobe_stream_tags(path: &Path) -> Option<Vec<Value>> {
    let v = ffprobe_json(path)?;
    let streams = v["streams"].as_array()?;
    Some(
        streams
            .iter()
            .map(|s| s.get("tags").cloned().unwrap_or_default())
            .collect(),
    )
}

/// exiftool's `Title`, `Artist` and `Album`, or `None` when exiftool is
/// missing or fails. Matroska is read with `-ee`: without it exiftool
/// (12.57) stops at the first Cluster and does not see a Tags element the
/// editor appended after the Clusters (which the SeekHead points at, and
/// which ffprobe, mkvmerge and our reader find).
pub fn exiftool_tags(path: &Path) -> Option<Map<String, Value>> {
    let matroska = path
        .extension()
        .is_some_and(|e| e == "mkv" || e == "mka" || e == "webm" || e == "mks");
    let out = Command::new("exiftool")
        .args(["-j", "-Title", "-Artist", "-Album"])
        .args(matroska.then_some("-ee"))
        .arg(path)
        .output()
        .ok()?;
    let v: Value = serde_json::from_slice(&out.stdout).ok()?;
    v.get(0)?.as_object().cloned()
}

/// Asserts that `after` has `want` and every key of `before` not in
/// `touched` with its old value.
pub fn check_tags(
    who: &str,
    file: &Path,
    before: &Map<String, Value>,
    after: &Map<String, Value>,
    want: &[(&str, &str)],
) {
    for (k, v) in want {
        assert_eq!(
            after.get(*k).and_then(Value::as_str),
            Some(*v),
            "{who}: {}: {k}",
            file.display()
        );
    }
    for (k, v) in before {
        if want.iter().any(|(w, _)| w.eq_ignore_ascii_case(k)) {
            continue;
        }
        assert_eq!(after.get(k), Some(v), "{who}: {}: {k} changed", file.display());
    }
}

/// The positions where `a` and `b` differ (same length).
pub fn differing(a: &[u8], b: &[u8]) -> Vec<usize> {
    a.iter()
        .zip(b)
        .enumerate()
        .filter(|(_, (x, y))| x != y)
        .map(|(i, _)| i)
        .collect()
}

/// The fields the round trips set, and what they read back.
pub const WANT: [(&str, &str); 4] = [
    ("title", "Tïtle edited ✓"),
    ("artist", "Ärtist"),
    ("album", "Album 2"),
    ("date", "2026"),
];

/// [`WANT`] as edits.
pub fn edits() -> Edits {
    Edits {
        set: WANT.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect(),
        remove: Vec::new(),
        ..Edits::default()
    }
}

/// Writes `orig` to `src-NAME` in `dir` and edits it with [`edits`]
/// into `out-NAME`, which it returns: a copy, the input unchanged.
pub fn edit_into_another(dir: &Path, name: &str, orig: &[u8]) -> PathBuf {
    let src = dir.join(format!("src-{name}"));
    let out = dir.join(format!("out-{name}"));
    std::fs::write(&src, orig).unwrap();
    let r = edit(&src, &edits(), Some(&out)).unwrap();
    assert_eq!(r.mode, mediaslice_std::tagedit::EditMode::Copy);
    assert_eq!(std::fs::read(&src).unwrap(), orig, "{name}: -o changed the input");
    out
}

/// A corpus file by its path under `corpus/files`.
pub fn corpus(path: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../corpus/files").join(path)
}

/// A file that will not open, or a malformed tag block: an error, the
/// input byte-identical, no output file.
pub fn assert_refused(input: &Path, output: Option<&Path>) {
    let orig = std::fs::read(input).unwrap();
    let e = edit(input, &edits(), output).expect_err("edit of a bad input succeeded");
    eprintln!("{}: {e}", input.display());
    assert_eq!(std::fs::read(input).unwrap(), orig, "{}: changed", input.display());
    if let Some(o) = output {
        assert!(!o.exists(), "{}: left behind", o.display());
    }
    let dir = input.parent().unwrap();
    let leftovers: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .filter_map(|e| e.ok())
        .filter(|e| e.file_name().to_string_lossy().ends_with(".tmp"))
        .collect();
    assert!(leftovers.is_empty(), "temporary files left: {leftovers:?}");
}

/// Each of `inputs` with one byte changed (a deterministic spread over its
/// first 4 KiB, where the headers are, and its end) or cut short, 300
/// times: the edit either succeeds (the input untouched with -o) or fails
/// with the input byte-identical; it never panics. `name` names the
/// scratch folder, in memory where the system has one (`/dev/shm`): each
/// edit makes its output durable (`fsync`), which on a disk is most of
/// this test's time and none of what it checks.
pub fn damage_never_panics(name: &str, inputs: impl IntoIterator<Item = PathBuf>) {
    let dir = memory_scratch(name);
    let (mut ok, mut refused) = (0, 0);
    for f in inputs {
        let orig = std::fs::read(&f).unwrap();
        let mut state = 0x2545_F491_4F6C_DD1Du64;
        for round in 0..300 {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            let mut bad = orig.clone();
            if round % 10 == 9 {
                bad.truncate((state as usize) % orig.len());
            } else {
                let span = orig.len().min(4096);
                let at = if round % 3 == 0 {
                    orig.len() - 1 - (state as usize) % span
                } else {
                    (state as usize) % span
                };
                bad[at] ^= (state >> 32) as u8 | 1;
            }
            let input = dir.join(format!("in.{}", f.extension().unwrap().to_string_lossy()));
            std::fs::write(&input, &bad).unwrap();
            let out = dir.join(format!("out.{}", f.extension().unwrap().to_string_lossy()));
            let _ = std::fs::remove_file(&out);
            match edit(&input, &edits(), Some(&out)) {
                Ok(_) => ok += 1,
                Err(_) => refused += 1,
            }
            assert_eq!(std::fs::read(&input).unwrap(), bad, "-o changed the input");
            if edit(&input, &edits(), None).is_err() {
                assert_eq!(std::fs::read(&input).unwrap(), bad, "a failed edit changed the file");
            }
        }
    }
    eprintln!("{name}: {ok} edited, {refused} refused, no panic");
    let _ = std::fs::remove_dir_all(&dir);
}
