//! mediaslice on bare metal: a firmware image for a Cortex-M4 (QEMU
//! `mps2-an386`) or a Cortex-A53 (QEMU `virt`), with no allocator.
//!
//! For every corpus file embedded in flash it demuxes the file twice:
//! over the `&[u8]` in flash (zero copy, [`SliceSource`]) and through an
//! `embedded_io` reader that hands out [`CHUNK`] bytes per call with a fixed
//! [`SCRATCH_LEN`] scratch ([`ReaderSource`]). Each run prints
//!
//! ```text
//! NAME packets=N crc32=XXXXXXXX via=slice|reader bytes=B maxpkt=M stack=S io=...
//! ```
//!
//! where the first three fields are what `mediaslice packets --summary`
//! reports on the host (run.sh compares them). Lines starting with `#` carry
//! measurements. The program exits 0 over semihosting when every run
//! succeeded and the two ways agree.
#![no_std]
#![no_main]
// The recorder image (feature `recorder`) runs src/recorder.rs instead of
// the demuxer harness below, which it then leaves unused.
#![cfg_attr(feature = "recorder", allow(dead_code))]

mod reader;
#[cfg(feature = "recorder")]
mod record;
#[cfg(feature = "recorder")]
mod recorder;
mod semihosting;
mod stack;

#[cfg(target_arch = "aarch64")]
mod boot_a64;
#[cfg(feature = "defmt")]
mod defmt_log;

use core::mem::size_of;
use mediaslice::crc::Crc32;
use mediaslice::{AnyDemuxer, Context, Demuxer, ErrorKind, IoStats, ReaderSource, SliceSource, Source, Track};
use reader::ChunkReader;
use semihosting::Line;

/// One embedded input.
pub struct File {
    /// Its path under corpus/files.
    pub name: &'static str,
    /// Its bytes, in flash.
    pub data: &'static [u8],
}

#[cfg(feature = "corpus")]
include!(concat!(env!("OUT_DIR"), "/corpus.rs"));

/// Without the corpus: one input the optimiser cannot see through, so the
/// demuxers stay in the image whose size is being measured.
#[cfg(not(feature = "corpus"))]
pub static FILES: &[File] = &[File {
    name: "(opaque)",
    data: &[],
}];

/// Bytes a [`ChunkReader`] hands out per `read` call.
pub const CHUNK: usize = 61;
/// Scratch for both modes (one at a time): in reader mode it must hold the
/// largest packet; in slice mode, the largest packet that has to be joined.
/// MPEG-TS/PS also keep an 8 KiB carry slot per audio track whose frames
/// they cut (ADTS, AC-3, MPEG audio) at the start of the scratch: the corpus
/// files have one such track and packets under 8 KiB, hence 24 KiB.
pub const SCRATCH_LEN: usize = 24 * 1024;
/// The reader mode's source type.
type Reader<'a> = ReaderSource<ChunkReader, &'a mut [u8]>;

static mut SCRATCH: [u8; SCRATCH_LEN] = [0; SCRATCH_LEN];

#[cfg(target_arch = "arm")]
const TARGET: &str = "thumbv7em-none-eabihf (Cortex-M4, mps2-an386)";
#[cfg(target_arch = "aarch64")]
const TARGET: &str = "aarch64-unknown-none (Cortex-A53, virt)";

/// What one demux run found.
#[derive(Default, Clone, Copy, PartialEq, Eq)]
struct Summary {
    packets: u64,
    bytes: u64,
    crc: u32,
    max_packet: usize,
    io: IoStats,
}

/// Opens `src`: detection and headers. Kept out of line so that its
/// temporaries are not merged into the caller's frame.
#[inline(never)]
fn open<S: Source>(src: S) -> mediaslice::Result<Demuxer<S>> {
    Demuxer::open(src, None)
}

/// Pulls every packet, hashing the payloads in order.
#[inline(never)]
fn drain<S: Source>(d: &mut Demuxer<S>) -> mediaslice::Result<Summary> {
    let mut crc = Crc32::new();
    let mut s = Summary::default();
    while let Some(p) = d.next_packet()? {
        crc.update(p.data);
        s.packets += 1;
        s.bytes += p.data.len() as u64;
        s.max_packet = s.max_packet.max(p.data.len());
    }
    s.crc = crc.finish();
    s.io = d.source().stats();
    Ok(s)
}

/// Slice mode still needs scratch for containers that split packets across
/// units (TS and PS PES packets, Ogg pages): they are joined there.
fn slice_source<'a>(data: &'static [u8], scratch: &'a mut [u8]) -> SliceSource<'a> {
    SliceSource::with_scratch(core::hint::black_box(data), scratch)
}

fn reader_source<'a>(data: &'static [u8], scratch: &'a mut [u8]) -> mediaslice::Result<Reader<'a>> {
    ReaderSource::new(ChunkReader::new(core::hint::black_box(data), CHUNK), scratch)
}

/// Stack used: all of it (open and drain in one call, as an application
/// does), and apart: `open` alone, and the packet loop alone (without the
/// demuxer struct, which then lives in the caller).
#[derive(Default, Clone, Copy)]
struct Stack {
    total: usize,
    open: usize,
    drain: usize,
}

/// Demuxes `data` over the flash slice; returns the summary and stack use.
fn run_slice(data: &'static [u8], scratch: &mut [u8]) -> (mediaslice::Result<Summary>, Stack) {
    let (r, total) = stack::measure(|| {
        // Borrow the demuxer inside the Result instead of moving it out
        // with `?`: the move would cost another copy of the whole struct.
        let mut opened = open(slice_source(data, scratch));
        drain(opened.as_mut().map_err(|e| *e)?)
    });
    let (d, open_use) = stack::measure(|| open(slice_source(data, scratch)));
    let drain_use = match d {
        Ok(mut d) => stack::measure(|| drain(&mut d)).1,
        Err(_) => 0,
    };
    (
        r,
        Stack {
            total,
            open: open_use,
            drain: drain_use,
        },
    )
}

/// Demuxes `data` through the chunked reader and `scratch`.
fn run_reader(data: &'static [u8], scratch: &mut [u8]) -> (mediaslice::Result<Summary>, Stack) {
    let (r, total) = stack::measure(|| {
        let mut opened = open(reader_source(data, scratch)?);
        drain(opened.as_mut().map_err(|e| *e)?)
    });
    let (d, open_use) = stack::measure(|| open(reader_source(data, scratch)?));
    let drain_use = match d {
        Ok(mut d) => stack::measure(|| drain(&mut d)).1,
        Err(_) => 0,
    };
    (
        r,
        Stack {
            total,
            open: open_use,
            drain: drain_use,
        },
    )
}

fn report(name: &str, via: &str, r: &mediaslice::Result<Summary>, st: Stack) -> bool {
    let Stack {
        total: stack,
        open,
        drain,
    } = st;
    match r {
        Ok(s) => {
            #[cfg(feature = "defmt")]
            defmt::info!(
                "{=str} packets={=u64} crc32={=u32:08x} via={=str}",
                name,
                s.packets,
                s.crc,
                via
            );
            Line::new()
                .s(name)
                .s(" packets=")
                .u(s.packets)
                .s(" crc32=")
                .x(s.crc.into(), 8)
                .s(" via=")
                .s(via)
                .s(" bytes=")
                .u(s.bytes)
                .s(" maxpkt=")
                .u(s.max_packet as u64)
                .s(" stack=")
                .u(stack as u64)
                .s(" open=")
                .u(open as u64)
                .s(" next=")
                .u(drain as u64)
                .s(" io=reads:")
                .u(s.io.reads)
                .s(",seeks:")
                .u(s.io.seeks)
                .s(",bytes:")
                .u(s.io.bytes_read)
                .flush();
            true
        }
        Err(e) => {
            #[cfg(feature = "defmt")]
            defmt::error!("{=str} via={=str}: {}", name, via, e);
            Line::new()
                .s(name)
                .s(" error via=")
                .s(via)
                .s(" stack=")
                .u(stack as u64)
                .s(": ")
                .s(kind_name(e.kind()))
                .s(" at byte ")
                .u(e.offset())
                .s(": ")
                .s(e.description())
                .flush();
            false
        }
    }
}

/// The kind of an error as a word (without `core::fmt`'s `Debug`).
fn kind_name(k: ErrorKind) -> &'static str {
    match k {
        ErrorKind::UnknownFormat => "UnknownFormat",
        ErrorKind::Unsupported => "Unsupported",
        ErrorKind::Malformed => "Malformed",
        ErrorKind::Truncated => "Truncated",
        ErrorKind::LimitExceeded => "LimitExceeded",
        ErrorKind::CapacityExceeded => "CapacityExceeded",
        ErrorKind::ScratchTooSmall => "ScratchTooSmall",
        ErrorKind::OffsetOverflow => "OffsetOverflow",
        ErrorKind::InvalidArgument => "InvalidArgument",
        ErrorKind::Io(_) => "Io",
        _ => "Error",
    }
}

fn print_sizes() {
    Line::new().s("# target ").s(TARGET).flush();
    let files = if cfg!(feature = "corpus") { FILES.len() } else { 0 };
    Line::new().s("# files=").u(files as u64).flush();
    Line::new()
        .s("# sizeof AnyDemuxer=")
        .u(size_of::<AnyDemuxer>() as u64)
        .s(" Context=")
        .u(size_of::<Context>() as u64)
        .s(" Track=")
        .u(size_of::<Track>() as u64)
        .s(" Demuxer<SliceSource>=")
        .u(size_of::<Demuxer<SliceSource<'static>>>() as u64)
        .s(" Demuxer<ReaderSource>=")
        .u(size_of::<Demuxer<Reader<'static>>>() as u64)
        .s(" ReaderSource=")
        .u(size_of::<Reader<'static>>() as u64)
        .s(" SliceSource=")
        .u(size_of::<SliceSource<'static>>() as u64)
        .flush();
    Line::new()
        .s("# reader chunk=")
        .u(CHUNK as u64)
        .s(" scratch=")
        .u(SCRATCH_LEN as u64)
        .s(" paint=")
        .u(stack::PAINT as u64)
        .flush();
}

/// The whole program; `true` when every file demuxed both ways alike.
pub fn run() -> bool {
    #[cfg(feature = "recorder")]
    return recorder::run();
    #[cfg(not(feature = "recorder"))]
    run_demuxers()
}

/// The demuxer image: every embedded file, both ways.
#[cfg(not(feature = "recorder"))]
fn run_demuxers() -> bool {
    print_sizes();
    if cfg!(feature = "baseline") {
        // Harness only: report a fixed CRC so that the reader, CRC and
        // formatting code stay in the measured image.
        let r = demux_none();
        return report("(baseline)", "none", &r, Stack::default());
    }
    // SAFETY: the only reference to SCRATCH, taken once on the only core.
    let scratch: &mut [u8] = unsafe { &mut *core::ptr::addr_of_mut!(SCRATCH) };
    let mut ok = true;
    let (mut hw_slice, mut hw_reader, mut max_pkt) = (0usize, 0usize, 0usize);
    for f in FILES {
        if cfg!(feature = "one-source") {
            let (b, sb) = run_reader(f.data, scratch);
            ok &= report(f.name, "reader", &b, sb);
            hw_reader = hw_reader.max(sb.total);
            continue;
        }
        let (a, sa) = run_slice(f.data, scratch);
        let (b, sb) = run_reader(f.data, scratch);
        ok &= report(f.name, "slice", &a, sa);
        ok &= report(f.name, "reader", &b, sb);
        hw_slice = hw_slice.max(sa.total);
        hw_reader = hw_reader.max(sb.total);
        if let (Ok(a), Ok(b)) = (&a, &b) {
            max_pkt = max_pkt.max(a.max_packet);
            if (a.packets, a.bytes, a.crc) != (b.packets, b.bytes, b.crc) {
                Line::new().s(f.name).s(" MISMATCH between slice and reader").flush();
                ok = false;
            }
        }
    }
    Line::new()
        .s("# stack high-water slice=")
        .u(hw_slice as u64)
        .s(" reader=")
        .u(hw_reader as u64)
        .s(" (bytes below the caller; scratch is static)")
        .flush();
    Line::new()
        .s("# largest packet=")
        .u(max_pkt as u64)
        .s(" (reader scratch must be at least this)")
        .flush();
    if !cfg!(feature = "corpus") {
        // The opaque input is empty: its error is expected.
        Line::new()
            .s("# no corpus in this build (size measurement image)")
            .flush();
        return true;
    }
    #[cfg(feature = "defmt")]
    for f in FILES {
        describe(f, scratch);
    }
    Line::new().s(if ok { "# all files ok" } else { "# FAILED" }).flush();
    ok
}

/// Logs a file's format, tracks and first packet through defmt.
#[cfg(feature = "defmt")]
#[inline(never)]
fn describe(f: &File, scratch: &mut [u8]) {
    let mut d = match open(slice_source(f.data, scratch)) {
        Ok(d) => d,
        Err(e) => return defmt::error!("{=str}: {}", f.name, e),
    };
    defmt::info!("{=str}: {} {=usize} tracks", f.name, d.format(), d.tracks().len());
    for (i, t) in d.tracks().iter().enumerate() {
        defmt::info!(
            "  track {=usize} {} {=str} time_base={} {=u32}x{=u32} {=u32} Hz",
            i,
            t.kind,
            t.codec.ffmpeg_name(),
            t.time_base,
            t.width,
            t.height,
            t.sample_rate
        );
    }
    if let Ok(Some(p)) = d.next_packet() {
        defmt::info!(
            "  first packet: track {=usize} pts={} {} {=usize} bytes",
            p.track,
            p.pts,
            p.flags,
            p.data.len()
        );
    }
}

/// The baseline's stand-in for a demuxer: the reader and the CRC only.
#[inline(never)]
fn demux_none() -> mediaslice::Result<Summary> {
    use embedded_io::Read;
    let mut r = ChunkReader::new(core::hint::black_box(&[]), CHUNK);
    let mut buf = [0u8; 64];
    let mut crc = Crc32::new();
    let n = r.read(&mut buf).unwrap_or(0);
    crc.update(&buf[..n]);
    Ok(Summary {
        crc: crc.finish(),
        ..Summary::default()
    })
}

#[panic_handler]
fn panic(info: &core::panic::PanicInfo) -> ! {
    // The message when it is a plain string (a formatted one would need
    // core::fmt), and where.
    let msg = info.message().as_str().unwrap_or("(formatted message)");
    let mut line = Line::new();
    line.s("panic: ").s(msg);
    if let Some(l) = info.location() {
        line.s(" at ").s(l.file()).s(":").u(l.line().into());
    }
    line.flush();
    semihosting::exit(false)
}

#[cfg(target_arch = "arm")]
#[cortex_m_rt::entry]
fn main() -> ! {
    semihosting::exit(run())
}

#[cfg(target_arch = "arm")]
#[cortex_m_rt::exception]
unsafe fn HardFault(ef: &cortex_m_rt::ExceptionFrame) -> ! {
    Line::new()
        .s("hard fault: pc=0x")
        .x(ef.pc().into(), 1)
        .s(" lr=0x")
        .x(ef.lr().into(), 1)
        .flush();
    semihosting::exit(false)
}

#[cfg(target_arch = "arm")]
#[cortex_m_rt::exception]
unsafe fn DefaultHandler(irqn: i16) {
    Line::new()
        .s("unexpected exception ")
        .s(if irqn < 0 { "-" } else { "" })
        .u(irqn.unsigned_abs().into())
        .flush();
    semihosting::exit(false)
}
