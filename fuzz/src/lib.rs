//! Shared harness of the mediaslice fuzz targets (see `docs/fuzzing.md`).
//!
//! Every target is a few lines calling one of the `run_*` functions here:
//!
//! * [`run_parser`]: one format, forced with `Demuxer::open_as` over a
//!   [`SliceSource`]; pulls every track, codec configuration, tag and packet,
//!   then seeks to a few points and pulls some more ([`exercise`]).
//! * [`run_any`]: the same through format detection (`Demuxer::open_with`).
//! * [`run_slice_vs_stream`]: the same input through a [`SliceSource`] and a
//!   [`ReaderSource`] over [`FuzzReader`], whose chunk size, seekability,
//!   claimed length and block cache are chosen by the input's last
//!   [`TRAILER`] bytes, and whether the stream run takes its packets in
//!   pieces (`next_packet_pieces`); the two runs must log identical events.
//! * [`run_remux`]: demux, mux (Matroska or MP4), demux again; see
//!   `remux.rs` for its invariants.
//! * [`run_repair`]: a damaged recording repaired into memory, the output
//!   read back against the report; see `repair.rs`.
//! * [`run_tagedit`]: tags set and removed through a file, the result read
//!   back against the input's packets; see `tagedit.rs`.
//! * [`run_truncation`]: prefixes of the input must yield prefixes of the
//!   whole input's packets (a final packet flagged `truncated` may be a
//!   shorter prefix of the whole one); the prefixes are read in pieces
//!   (`next_packet_pieces`), the whole input joined.
//!
//! Invariants checked on every run (a failed one panics, which libFuzzer
//! reports as a crash): packet track indexes are in range; no packet exceeds
//! `Limits::max_packet` or `Demuxer::max_packet_size`; a `contiguous` packet's
//! bytes are the input's bytes at `pos`; after `next_packet` ends (with
//! `Ok(None)` or an error) it keeps returning `Ok(None)`; the tag walk repeats
//! identically after `rewind_tags`; the numbers of packets and tags are
//! bounded by the input's size (no input makes work without reading bytes).

use mediaslice::{
    crc::crc32, detect, Demuxer, Error, FormatInfo, FormatKind, Limits, PacketFlags, ReaderSource, SliceSource, Source,
    TagKey, TagScope, TagValue, Track,
};

/// Every format kind compiled into the library, in a fixed order: the
/// differential targets pick forced kinds from it by index. A new format adds
/// its kinds here (behind its feature if it has one).
pub const KINDS: &[FormatKind] = &[
    FormatKind::Mp4,
    FormatKind::Wav,
    FormatKind::Rf64,
    FormatKind::Wave64,
    FormatKind::Asf,
    FormatKind::Flv,
    FormatKind::Matroska,
    FormatKind::MpegTs,
    FormatKind::MpegPs,
    FormatKind::Avi,
    FormatKind::Aiff,
    FormatKind::Caf,
    FormatKind::Au,
    FormatKind::Tta,
    FormatKind::Dsf,
    FormatKind::Dff,
    FormatKind::Iff,
    FormatKind::WavPack,
    FormatKind::Ape,
    FormatKind::Musepack7,
    FormatKind::Musepack8,
    FormatKind::Mxf,
    FormatKind::Ogg,
    FormatKind::Flac,
    FormatKind::Mp3,
    FormatKind::Aac,
    FormatKind::Ac3,
    FormatKind::Eac3,
    FormatKind::Amr,
    FormatKind::H264,
    FormatKind::Hevc,
    FormatKind::Ivf,
    FormatKind::Obu,
    FormatKind::Av1AnnexB,
    FormatKind::Dv,
    FormatKind::MpegVideo,
    FormatKind::M4v,
];

/// How many bytes at the end of a differential target's input configure the
/// reader (see [`StreamConfig::from_trailer`]).
pub const TRAILER: usize = 4;

/// Most packets a differential target logs before it stops pulling (keeps
/// memory bounded under `-rss_limit_mb=256`).
pub const DIFF_PACKET_CAP: usize = 100_000;

/// Packets and tags an input of `len` bytes may yield at most: every packet
/// or tag costs the parser at least half a byte of table or payload (a 4-bit
/// `stz2` entry is the densest packet description we know).
pub fn work_bound(len: usize) -> usize {
    len.saturating_mul(2).saturating_add(64)
}

mod log;
mod reader;
mod remux;
mod repair;
mod tagedit;
mod targets;
mod truncation;

pub use log::*;
pub use reader::*;
pub use remux::run_remux;
pub use repair::run_repair;
pub use tagedit::run_tagedit;
pub use targets::*;
pub use truncation::*;

// ---------------------------------------------------------------------------
// Allocation counting: the library must allocate nothing (it is no_std
// without alloc, so only a dependency could); every demuxer call is checked.

struct Counting;

thread_local! {
    static ALLOCATED: std::cell::Cell<u64> = const { std::cell::Cell::new(0) };
}

// SAFETY: forwards to the system allocator unchanged; only counts bytes.
unsafe impl std::alloc::GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: std::alloc::Layout) -> *mut u8 {
        let _ = ALLOCATED.try_with(|a| a.set(a.get().wrapping_add(layout.size() as u64)));
        unsafe { std::alloc::System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: std::alloc::Layout) {
        unsafe { std::alloc::System.dealloc(ptr, layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: std::alloc::Layout, new_size: usize) -> *mut u8 {
        let _ = ALLOCATED.try_with(|a| a.set(a.get().wrapping_add(new_size as u64)));
        unsafe { std::alloc::System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

/// Bytes allocated so far on this thread.
pub fn allocated() -> u64 {
    ALLOCATED.with(|a| a.get())
}

/// Runs `f` (a library call) and checks it allocated nothing.
pub fn no_alloc<T>(what: &str, f: impl FnOnce() -> T) -> T {
    let before = allocated();
    let r = f();
    let n = allocated().wrapping_sub(before);
    assert!(n == 0, "invariant: {what} allocated {n} bytes");
    r
}
