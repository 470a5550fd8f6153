//! A memory-mapped file truncated while it is read: the `SIGBUS` guard of
//! `MmapSource` turns the lost pages into a `Truncated` error (exit code 2
//! in the CLI, with well-formed output), in process and in the built CLI.

use mediaslice::{Demuxer, ErrorKind, Source};
use mediaslice_std::MmapSource;
use std::io::{Read, Write};
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// A sparse 16-bit stereo 44.1 kHz WAV of `data` bytes of silence (fast to
/// make: only the header is written).
fn wav(name: &str, data: u32) -> PathBuf {
    let p = std::env::temp_dir().join(format!("mediaslice-trunc-{}-{name}.wav", std::process::id()));
    let mut f = std::fs::File::create(&p).unwrap();
    let mut h = Vec::new();
    h.extend_from_slice(b"RIFF");
    h.extend_from_slice(&(36 + data).to_le_bytes());
    h.extend_from_slice(b"WAVEfmt ");
    h.extend_from_slice(&16u32.to_le_bytes());
    h.extend_from_slice(&1u16.to_le_bytes());
    h.extend_from_slice(&2u16.to_le_bytes());
    h.extend_from_slice(&44_100u32.to_le_bytes());
    h.extend_from_slice(&(44_100u32 * 4).to_le_bytes());
    h.extend_from_slice(&4u16.to_le_bytes());
    h.extend_from_slice(&16u16.to_le_bytes());
    h.extend_from_slice(b"data");
    h.extend_from_slice(&data.to_le_bytes());
    f.write_all(&h).unwrap();
    f.set_len(44 + u64::from(data)).unwrap();
    p
}

const SIZE: u32 = 64 << 20;

/// Truncates the file at `p` to `len` bytes, as another process would.
fn cut_to(p: &std::path::Path, len: u64) {
    std::fs::OpenOptions::new()
        .write(true)
        .open(p)
        .unwrap()
        .set_len(len)
        .unwrap();
}

#[test]
fn in_process_truncation_is_an_error_not_a_signal() {
    for (round, cut) in [1u64 << 20, (1 << 20) + 1234, 0, 44].into_iter().enumerate() {
        let p = wav(&format!("lib{round}"), SIZE);
        let src = MmapSource::open(&p).unwrap();
        assert!(src.is_guarded());
        // A slice of the whole map, kept by the caller across the cut.
        let whole: *const u8 = src.data().as_ptr();
        let mut d = Demuxer::open(src, Some("wav")).unwrap();
        for _ in 0..10 {
            d.next_packet().unwrap().unwrap();
        }
        cut_to(&p, cut);
        let err = loop {
            match d.next_packet() {
                Ok(Some(_)) => continue,
                Ok(None) => panic!("round {round}: the pass ended normally after the cut"),
                Err(e) => break e,
            }
        };
        assert_eq!(err.kind(), ErrorKind::Truncated, "round {round}: {err}");
        assert_eq!(err.offset(), cut, "round {round}: {err}");
        // Every later call fails the same way; the map stays readable.
        // The source keeps failing (the demuxer itself may just end).
        let src = d.into_source();
        assert_eq!(src.data().as_ptr(), whole);
        assert_eq!(src.data()[(SIZE / 2) as usize], 0);
        let mut b = [1u8; 8];
        assert!(src_read(src, &mut b).is_truncation());
        std::fs::remove_file(&p).unwrap();
    }
}

fn src_read(mut s: MmapSource, b: &mut [u8]) -> mediaslice::Error {
    s.read_at(40 << 20, b).unwrap_err()
}

#[test]
fn a_range_cut_before_it_is_served_fails_in_that_call() {
    let p = wav("range", 8 << 20);
    let mut s = MmapSource::open(&p).unwrap();
    assert_eq!(s.bytes(0, 4096).unwrap().len(), 4096);
    cut_to(&p, 1 << 20);
    // Before the cut: still served.
    assert_eq!(s.bytes(4096, 4096).unwrap().len(), 4096);
    // Across it: the error comes from this call, not from the caller's read.
    let e = s.bytes((1 << 20) - 100, 8192).unwrap_err();
    assert!(e.is_truncation(), "{e}");
    assert_eq!(e.offset(), 1 << 20);
    assert!(MmapSource::faults_absorbed() > 0);
    std::fs::remove_file(&p).unwrap();
}

/// Runs the CLI on a fresh 64 MiB WAV and truncates the file to `cut` once
/// `after` bytes of output were read (the CLI blocks on the pipe until then,
/// so the cut lands mid-run). Returns exit code, stdout, stderr.
fn cli_cut(args: &[&str], round: usize, cut: u64, after: usize) -> (Option<i32>, Vec<u8>, String) {
    cli_cut_sized(args, round, cut, after, SIZE)
}

/// As `cli_cut`, with a file of `size` data bytes; with `after == 0`, the
/// cut waits until the file is mapped (it shows in `/proc/PID/maps`).
fn cli_cut_sized(args: &[&str], round: usize, cut: u64, after: usize, size: u32) -> (Option<i32>, Vec<u8>, String) {
    let p = wav(&format!("cli{round}"), size);
    let mut child = Command::new(env!("CARGO_BIN_EXE_mediaslice"))
        .args(args)
        .arg(&p)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut out = Vec::new();
    let mut stdout = child.stdout.take().unwrap();
    let mut buf = [0u8; 4096];
    let mut cut_done = false;
    let t = Instant::now();
    if after == 0 {
        let maps = format!("/proc/{}/maps", child.id());
        let name = p.file_name().unwrap().to_str().unwrap().to_owned();
        while t.elapsed() < Duration::from_secs(20) && child.try_wait().unwrap().is_none() {
            match std::fs::read_to_string(&maps) {
                Ok(m) if m.contains(&name) => break,
                Ok(_) => std::thread::yield_now(),
                Err(_) => break,
            }
        }
    }
    loop {
        if !cut_done && out.len() >= after {
            cut_to(&p, cut);
            cut_done = true;
        }
        let n = stdout.read(&mut buf).unwrap();
        if n == 0 {
            break;
        }
        out.extend_from_slice(&buf[..n]);
        assert!(t.elapsed() < Duration::from_secs(60), "the run does not end");
    }
    if !cut_done {
        cut_to(&p, cut);
    }
    let mut err = String::new();
    child.stderr.take().unwrap().read_to_string(&mut err).unwrap();
    let st = child.wait().unwrap();
    std::fs::remove_file(&p).unwrap();
    {
        use std::os::unix::process::ExitStatusExt;
        assert_eq!(st.signal(), None, "killed by a signal; stderr: {err}");
    }
    (st.code(), out, err)
}

#[test]
fn cli_packets_json_ends_with_exit_2_and_a_whole_document() {
    for (round, (cut, after)) in [
        (1u64 << 20, 64 << 10),
        ((3 << 20) + 77, 256 << 10),
        (0, 16 << 10),
        (1 << 20, 1 << 20),
    ]
    .into_iter()
    .enumerate()
    {
        let (code, out, err) = cli_cut(&["packets", "--json"], round, cut, after);
        assert_eq!(code, Some(2), "round {round}: stderr {err}");
        assert!(
            err.contains(&format!("truncated input at byte {cut}")),
            "round {round}: {err}"
        );
        let v: serde_json::Value =
            serde_json::from_slice(&out).unwrap_or_else(|e| panic!("round {round}: not JSON ({e}); stderr {err}"));
        let packets = v["packets"].as_array().unwrap();
        assert!(!packets.is_empty());
    }
}

#[test]
fn cli_summary_table_probe_and_tags_survive_a_cut() {
    // 2 GiB (sparse): the summary prints only at the end, so the cut waits
    // for the map and must land while the pass is still running.
    let (code, out, err) = cli_cut_sized(&["packets", "--summary"], 10, 1 << 20, 0, 2 << 30);
    assert_eq!(code, Some(2), "{err}");
    let v: serde_json::Value = serde_json::from_slice(&out).unwrap();
    assert!(v["packets"].as_u64().is_some(), "{v}");
    let (code, out, err) = cli_cut(&["packets"], 11, 2 << 20, 32 << 10);
    assert_eq!(code, Some(2), "{err}");
    assert!(String::from_utf8_lossy(&out).lines().count() > 1);
    // probe and tags read little: the cut lands before, during or after
    // the run; whichever, no signal, and the exit code says which.
    for (round, cmd) in ["probe", "tags"].into_iter().enumerate() {
        for k in 0..3 {
            let (code, out, err) = cli_cut(&[cmd, "--json"], 20 + round * 3 + k, 1000 * k as u64, 0);
            assert!(matches!(code, Some(0..=2)), "{cmd}: {code:?} {err}");
            if code == Some(0) {
                serde_json::from_slice::<serde_json::Value>(&out).unwrap();
            }
        }
    }
}

/// A FIFO is refused the same way with and without a writer, and quickly:
/// with no writer, a blocking `open(2)` would wait forever.
#[test]
fn a_fifo_is_not_a_regular_file_with_or_without_a_writer() {
    let p = std::env::temp_dir().join(format!("mediaslice-fifo-{}", std::process::id()));
    let _ = std::fs::remove_file(&p);
    let st = Command::new("mkfifo").arg(&p).status().expect("mkfifo runs");
    assert!(st.success());
    let run = |source: &str| {
        let t = Instant::now();
        let mut child = Command::new(env!("CARGO_BIN_EXE_mediaslice"))
            .args(["--source", source, "probe"])
            .arg(&p)
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        loop {
            if let Some(st) = child.try_wait().unwrap() {
                let mut err = String::new();
                child.stderr.take().unwrap().read_to_string(&mut err).unwrap();
                return (st.code(), err);
            }
            if t.elapsed() > Duration::from_secs(20) {
                child.kill().unwrap();
                panic!("--source {source}: open blocked on a FIFO");
            }
            std::thread::sleep(Duration::from_millis(10));
        }
    };
    for source in ["mmap", "pread", "reader"] {
        // No writer.
        let (code, err) = run(source);
        assert_eq!(code, Some(1), "{source}: {err}");
        assert!(err.contains("not a regular file"), "{source}: {err}");
        // A writer holding the FIFO open (read-write, so its own open does
        // not block).
        let w = std::fs::OpenOptions::new().read(true).write(true).open(&p).unwrap();
        let (code, err) = run(source);
        assert_eq!(code, Some(1), "{source}: {err}");
        assert!(err.contains("not a regular file"), "{source}: {err}");
        drop(w);
    }
    // The library functions too.
    assert_eq!(
        mediaslice_std::open_regular_file(&p).unwrap_err().kind(),
        std::io::ErrorKind::InvalidInput
    );
    assert!(MmapSource::open(&p).is_err());
    assert!(mediaslice_std::FileSource::open(&p).is_err());
    std::fs::remove_file(&p).unwrap();
}
