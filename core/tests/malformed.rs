//! Malformed and odd inputs: every file in `../shared/samples/fuzz/` (crash
//! files from other projects' trackers) and `../shared/samples/other/`
//! (misnamed and unsupported files) is opened and all its packets and tags
//! are pulled, through a `SliceSource`, a `ReaderSource` with ample scratch,
//! and a `ReaderSource` with 4 KiB of scratch over a reader that returns 7
//! bytes per call. Any outcome is fine (open error, early error, packets)
//! except a panic or a run longer than [`TIME_BOUND`] per file.

#![allow(clippy::indexing_slicing, clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use crate::common;

use common::*;
use std::sync::mpsc;
use std::time::{Duration, Instant};

/// Most wall-clock time one file may take in all three modes (debug build).
const TIME_BOUND: Duration = Duration::from_secs(5);

/// Pulls one file in every mode; returns a one-line summary.
fn run_all(path: &std::path::Path) -> String {
    let bytes = std::fs::read(path).expect("readable");
    let ext = ext_of(path);
    let ext = ext.as_deref();
    let a = pull_slice(&bytes, ext, true);
    let b = pull_reader(path, ext, None, true);
    let f = std::fs::File::open(path).expect("readable");
    let c = pull_reader_from(StdReader::new(f, Some(7)), vec![0u8; 4096], ext, true);
    let show = |p: &Pulled| match p.open_err {
        Some(e) => format!("open error ({:?})", e.kind()),
        None => format!(
            "{} tracks, {} packets, {} tags{}",
            p.tracks.len(),
            p.packets.len(),
            p.tags.len(),
            p.end_err.map(|e| format!(", then {:?}", e.kind())).unwrap_or_default()
        ),
    };
    format!("slice: {}; reader: {}; small reader: {}", show(&a), show(&b), show(&c))
}

#[test]
fn malformed_inputs_end_quickly_without_panic() {
    let mut files = odd_files("fuzz");
    files.extend(odd_files("other"));
    if files.is_empty() {
        println!("note: ../shared/samples not found (set MEDIASLICE_SAMPLES): nothing to check");
        return;
    }
    let mut failures = Vec::new();
    for path in &files {
        let (tx, rx) = mpsc::channel();
        let p = path.clone();
        let start = Instant::now();
        let handle = std::thread::spawn(move || {
            let summary = run_all(&p);
            let _ = tx.send(summary);
        });
        match rx.recv_timeout(TIME_BOUND) {
            Ok(summary) => {
                let _ = handle.join();
                println!("{:>6} ms {}: {summary}", start.elapsed().as_millis(), path.display());
            }
            Err(mpsc::RecvTimeoutError::Disconnected) => {
                // The thread ended without a result: it panicked.
                let msg = match handle.join() {
                    Err(e) => e
                        .downcast_ref::<String>()
                        .cloned()
                        .or_else(|| e.downcast_ref::<&str>().map(|s| (*s).to_owned()))
                        .unwrap_or_default(),
                    Ok(()) => String::new(),
                };
                failures.push(format!("PANIC {}: {msg}", path.display()));
            }
            Err(mpsc::RecvTimeoutError::Timeout) => {
                // Left running: the test fails and the process ends with it.
                failures.push(format!("HANG (> {TIME_BOUND:?}) {}", path.display()));
            }
        }
    }
    println!("{} malformed/odd files, {} failures", files.len(), failures.len());
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
