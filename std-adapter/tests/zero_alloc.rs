//! The pull loop allocates nothing: a counting global allocator (wrapping
//! `System`, counting only on the thread that enables it) watches every
//! `next_packet()` from the first to the end, for every sample and corpus
//! file of the covered families, through a `SliceSource` over the file's
//! bytes, a `ReaderSource` over the file with preallocated scratch, and the
//! std adapter's `MmapSource`. The payloads are touched (CRC-32) so the
//! loop does real work. The demuxer is opened before counting starts.
//!
//! The remux loop allocates nothing either: every packet of every corpus
//! file written through a `Muxer` (the packet dump) into a `SliceSink`,
//! from the first `next_packet()` to `finish()`.
//!
//! The counter is per thread: other tests running at the same time do not
//! disturb it.
//!
//! This test lives in `mediaslice-std` rather than `core/tests` because a
//! global allocator needs `unsafe impl GlobalAlloc`, and core forbids
//! `unsafe_code` for all its targets (a command-line `-F`, which cannot be
//! allowed locally). It shares `core/tests/common`.

#[path = "../../core/tests/common/mod.rs"]
mod common;

use common::*;
use mediaslice::crc::Crc32;
use mediaslice::{Demuxer, MuxFormat, Muxer, ReaderSource, SliceSink, SliceSource, Source, TrackSpec};
use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;

struct Counting;

thread_local! {
    /// Whether this thread counts, and its count: per thread, so tests
    /// running beside each other do not see each other's allocations.
    static COUNTING: Cell<bool> = const { Cell::new(false) };
    static ALLOCS: Cell<usize> = const { Cell::new(0) };
}

fn note() {
    if COUNTING.try_with(|c| c.get()).unwrap_or(false) {
        let _ = ALLOCS.try_with(|n| n.set(n.get() + 1));
    }
}

fn allocs() -> usize {
    ALLOCS.with(|n| n.get())
}

// SAFETY: every call is passed to `System` unchanged; counting touches only
// const-initialised thread-locals (no allocation, no destructor).
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        note();
        unsafe { System.alloc(layout) }
    }
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        note();
        unsafe { System.alloc_zeroed(layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        note();
        unsafe { System.realloc(ptr, layout, new_size) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        unsafe { System.dealloc(ptr, layout) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

/// Pulls every packet of an open demuxer with counting on; returns
/// (allocations, packets).
fn count_pull<S: Source>(d: &mut Demuxer<S>) -> (usize, usize) {
    let mut crc = Crc32::new();
    let mut n = 0usize;
    let before = allocs();
    COUNTING.with(|c| c.set(true));
    while let Ok(Some(p)) = d.next_packet() {
        crc.update(p.data);
        n += 1;
    }
    COUNTING.with(|c| c.set(false));
    let after = allocs();
    std::hint::black_box(crc.finish());
    (after - before, n)
}

#[test]
fn counting_allocator_sees_allocations() {
    let before = allocs();
    COUNTING.with(|c| c.set(true));
    let v = std::hint::black_box(vec![1u8; 100]);
    COUNTING.with(|c| c.set(false));
    drop(v);
    assert!(allocs() > before, "the counter must see a Vec");
}

#[test]
fn pull_loop_allocates_nothing() {
    let mut failures = Vec::new();
    let (mut files_checked, mut packets) = (0usize, 0usize);
    for &fam in FAMILIES {
        let files = family_files(fam);
        if files.is_empty() || !family_built(&files) {
            println!("{fam}: skipped: family not built");
            continue;
        }
        for f in &files {
            let bytes = f.read();
            let ext = f.ext();
            let ext = ext.as_deref();

            let mut scratch = scratch_for(bytes.len());
            if let Ok(mut d) = Demuxer::open(SliceSource::with_scratch(&bytes, &mut scratch), ext) {
                let (allocs, n) = count_pull(&mut d);
                packets += n;
                if allocs > 0 {
                    failures.push(format!("{}: slice: {allocs} allocations over {n} packets", f.label()));
                }
            } else {
                continue;
            }

            let file = std::fs::File::open(&f.path).expect("readable");
            let src =
                ReaderSource::<_, _>::new(StdReader::new(file, None), scratch_for(bytes.len())).expect("reader source");
            if let Ok(mut d) = Demuxer::open(src, ext) {
                let (allocs, n) = count_pull(&mut d);
                if allocs > 0 {
                    failures.push(format!("{}: reader: {allocs} allocations over {n} packets", f.label()));
                }
            }

            let src = mediaslice_std::MmapSource::open(&f.path).expect("mappable");
            if let Ok(mut d) = Demuxer::open(src, ext) {
                let (allocs, n) = count_pull(&mut d);
                // The join scratch of an mmap grows on first use; formats
                // whose packets are contiguous never touch it.
                if allocs > 0 && d.source().scratch_allocated() == 0 {
                    failures.push(format!("{}: mmap: {allocs} allocations over {n} packets", f.label()));
                }
            }
            files_checked += 1;
        }
    }
    println!("{files_checked} files, {packets} packets pulled with the allocator counting");
    assert!(files_checked > 0, "no file was checked");
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// Demuxes `bytes` into a packet dump in `out` with counting on from the
/// first `next_packet()` through `finish()` (tracks are declared before);
/// returns (allocations, packets).
fn count_remux(
    bytes: &[u8],
    ext: Option<&str>,
    scratch: &mut [u8],
    out: &mut [u8],
) -> mediaslice::Result<(usize, u64)> {
    let mut demuxer = Demuxer::open(SliceSource::with_scratch(bytes, scratch), ext)?;
    let mut muxer = Muxer::new(SliceSink::new(out), MuxFormat::Dump)?;
    for i in 0..demuxer.tracks().len() {
        let track = demuxer.tracks()[i].clone();
        muxer.add_track(&TrackSpec::new(&track).with_config(demuxer.codec_config(i)?))?;
    }
    let before = allocs();
    COUNTING.with(|c| c.set(true));
    let r = (|| {
        while let Some(p) = demuxer.next_packet()? {
            muxer.write_packet(&p)?;
        }
        let n = muxer.packets();
        muxer.finish().map(|_| n)
    })();
    COUNTING.with(|c| c.set(false));
    Ok((allocs() - before, r?))
}

#[test]
fn remux_loop_allocates_nothing() {
    let mut failures = Vec::new();
    let (mut files_checked, mut packets) = (0u64, 0u64);
    for &fam in FAMILIES {
        for f in family_files(fam).into_iter().filter(|f| f.origin == Origin::Corpus) {
            let bytes = f.read();
            let ext = f.ext();
            let mut scratch = scratch_for(bytes.len());
            // Room for every payload (inflated ones included) and headers.
            let mut out = vec![0u8; bytes.len() * 4 + (1 << 20)];
            match count_remux(&bytes, ext.as_deref(), &mut scratch, &mut out) {
                Ok((0, n)) => packets += n,
                Ok((a, n)) => failures.push(format!("{}: {a} allocations over {n} packets", f.label())),
                Err(e) => failures.push(format!("{}: {e}", f.label())),
            }
            files_checked += 1;
        }
    }
    println!("{files_checked} corpus files, {packets} packets remuxed with the allocator counting");
    assert!(files_checked > 0 && packets > 0, "nothing was remuxed");
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
