//! What the live packaging tests share: corpus paths and scratch names, a
//! file that grows while the packager runs, a pipe into the binary's
//! standard input, a Matroska stream of unknown sizes, and ffmpeg's read
//! of the output.
#![allow(
    dead_code,
    clippy::indexing_slicing,
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic
)]

use mediaslice_std::live::{LiveInput, LiveOptions};
use mediaslice_std::package::PackageReport;
use mediaslice_std::remux::RemuxError;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::Duration;

pub fn corpus(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../corpus/files").join(rel)
}

pub fn scratch(name: &str) -> PathBuf {
    let p = std::env::temp_dir().join(format!("mediaslice-live-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&p);
    let _ = std::fs::remove_file(&p);
    p
}

/// The segment names a media playlist lists.
pub fn listed(playlist: &str) -> Vec<String> {
    playlist
        .lines()
        .filter(|l| !l.starts_with('#') && !l.is_empty())
        .map(str::to_owned)
        .collect()
}

pub fn fast(probe: u64) -> LiveOptions {
    LiveOptions {
        probe,
        // Long enough for a loaded machine's writer thread to keep up.
        idle: Duration::from_millis(1000),
        poll: Duration::from_millis(5),
        ..LiveOptions::default()
    }
}

/// Writes `data` to `path` in `chunk`-byte appends, `pause` apart; before
/// the last one, waits (up to 5 s) for the media playlist `playlist` to
/// list a segment and keeps the text it read in `early`.
fn grow(
    path: PathBuf,
    data: Vec<u8>,
    chunk: usize,
    pause: Duration,
    playlist: PathBuf,
    early: Arc<Mutex<Option<String>>>,
) {
    let mut f = std::fs::OpenOptions::new().append(true).open(&path).unwrap();
    let parts: Vec<&[u8]> = data.chunks(chunk).collect();
    for (i, part) in parts.iter().enumerate() {
        std::thread::sleep(pause);
        if i + 1 == parts.len() {
            for _ in 0..1000 {
                if let Some(m) = std::fs::read_to_string(&playlist)
                    .ok()
                    .filter(|m| !listed(m).is_empty())
                {
                    *early.lock().unwrap() = Some(m);
                    break;
                }
                std::thread::sleep(Duration::from_millis(5));
            }
        }
        f.write_all(part).unwrap();
        f.flush().unwrap();
    }
}

/// Packages a file that grows by `run`: its first `first` bytes are there
/// when the packager starts (also its start-up snapshot), the rest comes
/// in `chunk`-byte appends 15 ms apart. Checks that a playlist listed a
/// segment, with no `#EXT-X-ENDLIST`, before the last append and that the
/// run ended cleanly; returns the output folder.
pub fn package_growing(
    data: &[u8],
    name: &str,
    first: usize,
    chunk: usize,
    run: impl FnOnce(&LiveInput, &Path) -> Result<PackageReport, RemuxError>,
) -> PathBuf {
    let input = scratch(name);
    let out = scratch(&format!("{name}-out"));
    std::fs::write(&input, &data[..first]).unwrap();
    let early = Arc::new(Mutex::new(None));
    let writer = {
        let (input, rest, seen, early) = (
            input.clone(),
            data[first..].to_vec(),
            out.join("media.m3u8"),
            early.clone(),
        );
        std::thread::spawn(move || grow(input, rest, chunk, Duration::from_millis(15), seen, early))
    };
    let live = LiveInput::follow(&input, fast(first as u64)).unwrap();
    let report = run(&live, &out).unwrap();
    writer.join().unwrap();
    let early = early.lock().unwrap().take();
    let early = early.unwrap_or_else(|| panic!("{name}: no playlist before the input was complete"));
    assert!(!early.contains("#EXT-X-ENDLIST"), "{name}: {early}");
    assert!(report.stopped.is_none());
    let _ = std::fs::remove_file(&input);
    out
}

/// `mediaslice package - OUT --hls --segment 200ms EXTRA...` with `data`
/// written to its standard input in `chunk`-byte pieces 5 ms apart; the run
/// succeeds. Returns its standard error.
pub fn package_stdin(data: &[u8], out: &Path, chunk: usize, extra: &[&str]) -> String {
    let mut child = Command::new(env!("CARGO_BIN_EXE_mediaslice"))
        .args(["package", "-", out.to_str().unwrap(), "--hls", "--segment", "200ms"])
        .args(extra)
        .stdin(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    for part in data.chunks(chunk) {
        stdin.write_all(part).unwrap();
        std::thread::sleep(Duration::from_millis(5));
    }
    drop(stdin);
    let done = child.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&done.stderr).into_owned();
    assert!(done.status.success(), "{err}");
    err
}

/// `ffmpeg -v warning -i MANIFEST -c copy -f null -` prints nothing and
/// succeeds (skipped with a reason when ffmpeg is missing).
pub fn ffmpeg_reads_cleanly(manifest: &Path) {
    let Ok(run) = Command::new("ffmpeg")
        .args(["-nostdin", "-v", "warning", "-i"])
        .arg(manifest)
        .args(["-c", "copy", "-f", "null", "-"])
        .output()
    else {
        eprintln!("skipped: ffmpeg not found");
        return;
    };
    let err = String::from_utf8_lossy(&run.stderr);
    assert!(run.status.success() && err.trim().is_empty(), "{err}");
}

/// The unknown-size mark of a Segment (ID 18 53 80 67) or Cluster (ID
/// 1F 43 B6 75): an 8-byte size of all ones (RFC 8794 §6.2).
pub fn unknown_size(data: &[u8], id: [u8; 4]) -> bool {
    let mut mark = id.to_vec();
    mark.extend([0x01, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF]);
    data.windows(mark.len()).any(|w| w == mark)
}

pub const SEGMENT: [u8; 4] = [0x18, 0x53, 0x80, 0x67];
pub const CLUSTER: [u8; 4] = [0x1F, 0x43, 0xB6, 0x75];

/// Our own Matroska live output of a corpus file (`mediaslice remux IN
/// -`): a Segment and Clusters of unknown size.
pub fn mkv_stream(rel: &str) -> Vec<u8> {
    let run = Command::new(env!("CARGO_BIN_EXE_mediaslice"))
        .args(["remux", corpus(rel).to_str().unwrap(), "-"])
        .output()
        .unwrap();
    assert!(run.status.success(), "{}", String::from_utf8_lossy(&run.stderr));
    assert!(unknown_size(&run.stdout, SEGMENT) && unknown_size(&run.stdout, CLUSTER));
    run.stdout
}
