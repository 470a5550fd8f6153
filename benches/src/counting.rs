//! A counting global allocator for the benchmark binaries that report heap
//! figures (`benches/alloc.rs`, `src/bin/soak.rs`). Each binary installs it
//! with `#[global_allocator] static A: Counting = Counting;`.
//!
//! Always kept: the bytes live and their high-water mark. Counted only
//! while [`ON`] is set: allocations (`alloc`, `alloc_zeroed`, `realloc`)
//! and their bytes.

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering::Relaxed};

/// The allocator: `System`, with the counters below.
pub struct Counting;

/// Whether [`ALLOCS`] and [`BYTES`] count.
pub static ON: AtomicBool = AtomicBool::new(false);
/// Allocations made while [`ON`].
pub static ALLOCS: AtomicU64 = AtomicU64::new(0);
/// Bytes allocated while [`ON`].
pub static BYTES: AtomicU64 = AtomicU64::new(0);
/// Bytes in use now.
pub static LIVE: AtomicU64 = AtomicU64::new(0);
/// Most bytes in use at once (a caller may lower it to measure a phase).
pub static PEAK: AtomicU64 = AtomicU64::new(0);

fn grow(n: u64) {
    let live = LIVE.fetch_add(n, Relaxed) + n;
    PEAK.fetch_max(live, Relaxed);
    if ON.load(Relaxed) {
        ALLOCS.fetch_add(1, Relaxed);
        BYTES.fetch_add(n, Relaxed);
    }
}

fn shrink(n: u64) {
    LIVE.fetch_sub(n, Relaxed);
}

// SAFETY: every call is passed to `System` unchanged; the counters are
// atomics (no allocation, no reentrancy).
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, l: Layout) -> *mut u8 {
        // SAFETY: the caller's layout, forwarded unchanged.
        let p = unsafe { System.alloc(l) };
        if !p.is_null() {
            grow(l.size() as u64);
        }
        p
    }
    unsafe fn alloc_zeroed(&self, l: Layout) -> *mut u8 {
        // SAFETY: forwarded unchanged.
        let p = unsafe { System.alloc_zeroed(l) };
        if !p.is_null() {
            grow(l.size() as u64);
        }
        p
    }
    unsafe fn realloc(&self, ptr: *mut u8, l: Layout, new: usize) -> *mut u8 {
        // SAFETY: forwarded unchanged; `ptr` came from this allocator, that is from `System`.
        let p = unsafe { System.realloc(ptr, l, new) };
        if !p.is_null() {
            shrink(l.size() as u64);
            grow(new as u64);
        }
        p
    }
    unsafe fn dealloc(&self, ptr: *mut u8, l: Layout) {
        // SAFETY: forwarded unchanged.
        unsafe { System.dealloc(ptr, l) };
        shrink(l.size() as u64);
    }
}
