//! The allocation table: per corpus file (and large file), what the heap
//! sees during each phase, through a counting global allocator.
//!
//! Phases, each counted separately (allocations, bytes allocated, and the
//! peak of live heap above the phase's start):
//!
//! * `open`: `Demuxer::open` over a `SliceSource` with caller scratch;
//! * `probe`: the track list, the duration and every tag;
//! * `pull`: every `next_packet()` to the end, CRC-32 over each payload
//!   (must be 0 allocations: the gate);
//! * `mmap open` / `mmap pull`: the same through the CLI's default source,
//!   `mediaslice_std::MmapSource` (its join scratch grows on demand, so its
//!   pull phase may allocate while the scratch reaches the largest joined
//!   packet);
//! * `diag`: diagnostics reported (the fallback and recovery paths taken),
//!   as `code×count`.
//!
//! Writes `$MEDIASLICE_BENCH_OUT/alloc.tsv` and prints it. Exits non-zero
//! when a slice pull phase allocates.
//!
//! `cargo bench -p mediaslice-benches --bench alloc`.

#[path = "common/mod.rs"]
mod common;

use mediaslice::crc::Crc32;
use mediaslice::{Demuxer, SliceSource, Source};
use mediaslice_benches::counting::{Counting, ALLOCS, BYTES, LIVE, ON, PEAK};
use mediaslice_benches::{corpus_files, throughput_files, SCRATCH};
use mediaslice_std::MmapSource;
use std::sync::atomic::Ordering::Relaxed;

#[global_allocator]
static GLOBAL: Counting = Counting;

/// What one phase did to the heap.
#[derive(Default, Clone, Copy)]
struct Phase {
    allocs: u64,
    bytes: u64,
    peak: u64,
}

impl std::fmt::Display for Phase {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}\t{}\t{}", self.allocs, self.bytes, self.peak)
    }
}

/// Runs `f` with counting on; the peak is the most live heap above the
/// level at the start.
fn phase<T>(f: impl FnOnce() -> T) -> (T, Phase) {
    let base = LIVE.load(Relaxed);
    PEAK.store(base, Relaxed);
    let (a0, b0) = (ALLOCS.load(Relaxed), BYTES.load(Relaxed));
    ON.store(true, Relaxed);
    let r = f();
    ON.store(false, Relaxed);
    let p = Phase {
        allocs: ALLOCS.load(Relaxed) - a0,
        bytes: BYTES.load(Relaxed) - b0,
        peak: PEAK.load(Relaxed).saturating_sub(base),
    };
    (r, p)
}

fn probe<S: Source>(d: &mut Demuxer<S>) -> usize {
    let mut n = d.tracks().len();
    std::hint::black_box(d.info().duration_us);
    while let Ok(Some(t)) = d.next_tag() {
        std::hint::black_box(&t);
        n += 1;
    }
    n
}

fn pull<S: Source>(d: &mut Demuxer<S>) -> u64 {
    let mut crc = Crc32::new();
    let mut n = 0;
    while let Ok(Some(p)) = d.next_packet() {
        crc.update(p.data);
        n += 1;
    }
    std::hint::black_box(crc.finish());
    n
}

fn main() {
    // `cargo bench` passes `--bench`; a filter may follow.
    let filter: Option<String> = std::env::args().skip(1).find(|a| !a.starts_with('-'));
    let mut files = corpus_files();
    files.extend(throughput_files().into_iter().filter(|f| f.label.starts_with("big/")));
    let mut lines = vec![[
        "file",
        "family",
        "bytes",
        "packets",
        "open_allocs",
        "open_bytes",
        "open_peak",
        "probe_allocs",
        "probe_bytes",
        "probe_peak",
        "pull_allocs",
        "pull_bytes",
        "pull_peak",
        "pull_allocs_per_packet",
        "mmap_open_allocs",
        "mmap_open_bytes",
        "mmap_open_peak",
        "mmap_pull_allocs",
        "mmap_pull_bytes",
        "mmap_pull_peak",
        "diag",
    ]
    .join("\t")];
    let mut failed = Vec::new();
    let mut scratch = vec![0u8; SCRATCH];
    for bf in files {
        if filter.as_deref().is_some_and(|f| !bf.label.contains(f)) {
            continue;
        }
        let data = std::fs::read(&bf.path).unwrap_or_else(|e| panic!("{}: {e}", bf.path.display()));
        let (d, open) = phase(|| Demuxer::open(SliceSource::with_scratch(&data, &mut scratch), None));
        let Ok(mut d) = d else {
            continue;
        };
        let (_, pr) = phase(|| probe(&mut d));
        let (packets, pl) = phase(|| pull(&mut d));
        let mut diag: Vec<String> = d.diagnostics().iter().map(|(x, n)| format!("{}×{n}", x.code)).collect();
        if d.diagnostics().dropped() > 0 {
            diag.push(format!("dropped×{}", d.diagnostics().dropped()));
        }
        drop(d);
        if pl.allocs > 0 {
            failed.push(bf.label.clone());
        }
        let (m, mopen) = phase(|| {
            MmapSource::open(&bf.path)
                .ok()
                .and_then(|s| Demuxer::open(s, None).ok())
        });
        let (mpull, mut m) = match m {
            Some(mut m) => {
                let (_, p) = phase(|| pull(&mut m));
                (p, Some(m))
            }
            None => (Phase::default(), None),
        };
        drop(m.take());
        let per = if packets > 0 {
            pl.allocs as f64 / packets as f64
        } else {
            0.0
        };
        lines.push(format!(
            "{}\t{}\t{}\t{packets}\t{open}\t{pr}\t{pl}\t{per}\t{mopen}\t{mpull}\t{}",
            bf.label,
            bf.family.name,
            data.len(),
            if diag.is_empty() {
                "-".to_string()
            } else {
                diag.join(" ")
            }
        ));
    }
    for l in &lines {
        println!("{l}");
    }
    common::write_tsv("alloc.tsv", &lines);
    if !failed.is_empty() {
        eprintln!("pull path allocated on: {}", failed.join(", "));
        std::process::exit(1);
    }
}
