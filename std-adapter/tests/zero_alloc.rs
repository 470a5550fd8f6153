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
//! So do the MP4 and AVI muxers' loops (the AVI one with its `idx1`
//! spilled to a store), and the Matroska remux loop of `mediaslice remux`
//! (`mediaslice_std::remux::write_packets` and `Muxer::finish`, with the
//! Annex B and ADTS reframing and the cue table) for every corpus file
//! Matroska can carry, into a `SliceSink`.
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
            let src = ReaderSource::new(StdReader::new(file, None), scratch_for(bytes.len())).expect("reader source");
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

/// Pulls every packet of an open demuxer in pieces
/// (`next_packet_pieces`) with counting on; returns (allocations, packets,
/// packets in pieces).
fn count_pull_pieces<S: Source>(d: &mut Demuxer<S>) -> (usize, usize, usize) {
    let mut crc = Crc32::new();
    let (mut n, mut scattered) = (0usize, 0usize);
    let before = allocs();
    COUNTING.with(|c| c.set(true));
    while let Ok(Some(mut p)) = d.next_packet_pieces() {
        scattered += usize::from(p.is_scattered());
        while let Ok(Some(piece)) = p.next_piece() {
            crc.update(piece);
        }
        n += 1;
    }
    COUNTING.with(|c| c.set(false));
    let after = allocs();
    std::hint::black_box(crc.finish());
    (after - before, n, scattered)
}

#[test]
fn pieces_loop_allocates_nothing() {
    let mut failures = Vec::new();
    let (mut files_checked, mut packets, mut scattered) = (0usize, 0usize, 0usize);
    for &fam in FAMILIES {
        for f in &family_files(fam) {
            let bytes = f.read();
            let ext = f.ext();
            let ext = ext.as_deref();
            let mut scratch = scratch_for(bytes.len());
            if let Ok(mut d) = Demuxer::open(SliceSource::with_scratch(&bytes, &mut scratch), ext) {
                let (allocs, n, s) = count_pull_pieces(&mut d);
                packets += n;
                scattered += s;
                if allocs > 0 {
                    failures.push(format!("{}: slice: {allocs} allocations over {n} packets", f.label()));
                }
            }
            let file = std::fs::File::open(&f.path).expect("readable");
            let src = ReaderSource::new(StdReader::new(file, None), scratch_for(bytes.len())).expect("reader source");
            if let Ok(mut d) = Demuxer::open(src, ext) {
                let (allocs, n, _) = count_pull_pieces(&mut d);
                if allocs > 0 {
                    failures.push(format!("{}: reader: {allocs} allocations over {n} packets", f.label()));
                }
            }
            files_checked += 1;
        }
    }
    println!("{files_checked} files, {packets} packets ({scattered} in pieces) pulled with the allocator counting");
    assert!(
        scattered > 0,
        "no packet came in pieces: the pieces path was not exercised"
    );
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

/// The bitstream conversions (`codec::convert`) allocate nothing: every
/// access unit of every H.264/H.265 Annex B corpus file converted to a
/// length-prefixed sample and back to Annex B (with parameter sets
/// inserted from the record built from the first access unit), and every
/// ADTS frame to a raw frame and its config, with timestamps rescaled,
/// from the first `next_packet()` to the last.
#[test]
fn conversions_allocate_nothing() {
    use mediaslice::codec::convert::to_annexb::ToAnnexB;
    use mediaslice::codec::convert::to_length::{write_length_prefixed, LengthPrefixOptions};
    use mediaslice::codec::convert::{adts, avcc, hvcc, NalCodec};
    use mediaslice::types::{rescale_q, Rational};
    let mut checked = 0usize;
    for (sub, codec) in [
        ("h264", Some(NalCodec::H264)),
        ("h265", Some(NalCodec::H265)),
        ("adts", None),
    ] {
        let dir = corpus_dir().join("files").join(sub);
        let Ok(entries) = std::fs::read_dir(&dir) else {
            println!("{sub}: skipped: no {}", dir.display());
            continue;
        };
        for path in entries.filter_map(|e| e.ok().map(|e| e.path())) {
            let bytes = std::fs::read(&path).unwrap();
            let ext = path.extension().and_then(|e| e.to_str()).map(str::to_owned);
            let mut record = vec![0u8; 64 * 1024];
            let mut samples = vec![0u8; 2 * bytes.len() + 1024];
            let mut annexb = vec![0u8; 2 * bytes.len() + 64 * 1024];
            // The record, from the first access unit (counted too).
            let before = allocs();
            let rec_len = match (codec, Demuxer::open(SliceSource::new(&bytes), ext.as_deref())) {
                (Some(codec), Ok(mut first)) => {
                    COUNTING.with(|c| c.set(true));
                    let au = first.next_packet().unwrap().unwrap().data;
                    match codec {
                        NalCodec::H264 => avcc::write_avcc_from_annexb(au, &mut record),
                        NalCodec::H265 => hvcc::write_hvcc_from_annexb(au, false, &mut record),
                    }
                    .unwrap()
                }
                _ => 0,
            };
            COUNTING.with(|c| c.set(false));
            let mut n = allocs() - before;
            let Ok(mut d) = Demuxer::open(SliceSource::new(&bytes), ext.as_deref()) else {
                continue;
            };
            let mut conv = codec.map(|c| ToAnnexB::with_parameter_sets(c, &record[..rec_len]).unwrap());
            let before = allocs();
            COUNTING.with(|c| c.set(true));
            let mut back = SliceSink::new(&mut annexb);
            let mut ts = 0i64;
            while let Ok(Some(p)) = d.next_packet() {
                ts = ts.wrapping_add(rescale_q(
                    p.pts.unwrap_or(0),
                    Rational::new(1, 90_000),
                    Rational::new(1, 1000),
                ));
                let Some(conv) = conv.as_mut() else {
                    let (h, raw) = adts::adts_to_raw(p.data).unwrap();
                    std::hint::black_box((adts::audio_specific_config(&h).unwrap(), raw));
                    continue;
                };
                let mut sink = SliceSink::new(&mut samples);
                write_length_prefixed(&mut sink, p.data, LengthPrefixOptions::default()).unwrap();
                conv.write_sample(&mut back, sink.into_written()).unwrap();
            }
            COUNTING.with(|c| c.set(false));
            n += allocs() - before;
            std::hint::black_box((ts, back.written().len()));
            assert_eq!(n, 0, "{}: {n} allocations converting", path.display());
            checked += 1;
        }
    }
    println!("conversions: {checked} corpus files converted with no allocation");
}

/// The Matroska remux loop of `mediaslice remux` allocates nothing: tracks
/// are prepared and declared first (that allocates: owned configurations),
/// then counting covers `write_packets` from the first `next_packet()` to
/// `finish()`.
#[test]
fn matroska_remux_loop_allocates_nothing() {
    let (files_checked, packets, refused) = remux_loop_allocations(MuxFormat::Matroska);
    println!("{files_checked} corpus files, {packets} packets remuxed to Matroska with the allocator counting ({refused} not carried)");
    assert!(
        files_checked >= 50 && packets > 2500,
        "{files_checked} files, {packets} packets"
    );
}

/// The MPEG-TS remux loop allocates nothing either (`format/mpeg/ts_mux/`:
/// each TS packet's header on the stack, the payload borrowed).
#[test]
fn ts_remux_loop_allocates_nothing() {
    let (files_checked, packets, refused) = remux_loop_allocations(MuxFormat::Ts);
    println!("{files_checked} corpus files, {packets} packets remuxed to MPEG-TS with the allocator counting ({refused} not carried)");
    assert!(
        files_checked >= 20 && packets > 1500,
        "{files_checked} files, {packets} packets"
    );
}

/// `mediaslice remux`'s packet loop to `format` over every corpus file,
/// counting allocations from the first `next_packet()` through `finish()`;
/// fails on any. Gives (files, packets, files whose tracks it refused).
fn remux_loop_allocations(format: MuxFormat) -> (u64, u64, u64) {
    use mediaslice_std::remux::{declare_tracks, prepare_tracks, start_us, write_packets, RemuxError, RemuxReport};
    let mut failures = Vec::new();
    let (mut files_checked, mut packets, mut refused) = (0u64, 0u64, 0u64);
    for &fam in FAMILIES {
        for f in family_files(fam).into_iter().filter(|f| f.origin == Origin::Corpus) {
            let bytes = f.read();
            let ext = f.ext();
            let ext = ext.as_deref();
            let open = || Demuxer::open(SliceSource::new(&bytes), ext);
            let Ok(tracks) = prepare_tracks(&open) else { continue };
            let mut out = vec![0u8; bytes.len() * 2 + (1 << 20)];
            let mut muxer = Muxer::new(SliceSink::new(&mut out), format).unwrap();
            let map = match declare_tracks(&mut muxer, &tracks, &mut RemuxReport::default()) {
                Ok(map) => map,
                Err(RemuxError::Output(_) | RemuxError::NoTracks) => {
                    refused += 1;
                    continue;
                }
                Err(e) => panic!("{}: {e}", f.label()),
            };
            let mut scratch = scratch_for(bytes.len());
            let mut d = Demuxer::open(SliceSource::with_scratch(&bytes, &mut scratch), ext).unwrap();
            let start = start_us(&tracks);
            let before = allocs();
            COUNTING.with(|c| c.set(true));
            let r = write_packets(&mut d, &mut muxer, &map, start).map(|_| muxer.packets());
            let n = r.and_then(|n| muxer.finish().map(|_| n));
            COUNTING.with(|c| c.set(false));
            let a = allocs() - before;
            match n {
                Ok(n) if a == 0 => packets += n,
                Ok(n) => failures.push(format!("{}: {a} allocations over {n} packets", f.label())),
                Err(e) => failures.push(format!("{}: {e}", f.label())),
            }
            files_checked += 1;
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    (files_checked, packets, refused)
}

/// The MP4 muxer's write loop allocates nothing either: every corpus file
/// whose tracks MP4 carries (the others are left out by
/// `mux::copy::add_tracks`) remuxed to MP4 into a `SliceSink`, with the
/// sample index in a scratch given before counting starts, counting from
/// the first `next_packet()` through `finish()` (which writes `moov`).
#[test]
fn mp4_remux_loop_allocates_nothing() {
    indexed_remux_allocates_nothing(MuxFormat::Mp4, None, 8);
}

/// The AVI muxer's write loop allocates nothing: every corpus file whose
/// tracks AVI carries remuxed to AVI into a `SliceSink`, its `idx1`
/// entries spilled past 256 bytes of scratch to a caller's `SliceSink`
/// store (so the spill and its read-back at `finish` are counted too).
#[test]
fn avi_remux_loop_allocates_nothing() {
    indexed_remux_allocates_nothing(MuxFormat::Avi, Some(256), 2);
}

/// Remuxes every corpus file to `format` (a muxer whose index grows in its
/// scratch), with the allocator counting from the first `next_packet()`
/// through `finish()`; `spill` bounds the scratch's index part and sends
/// the rest to a store. At least `min_files` files must be written.
fn indexed_remux_allocates_nothing(format: MuxFormat, spill: Option<usize>, min_files: u64) {
    use mediaslice::mux::copy::{add_tracks, copy_packets};
    let mut failures = Vec::new();
    let (mut files_checked, mut packets) = (0u64, 0u64);
    for &fam in FAMILIES {
        for f in family_files(fam).into_iter().filter(|f| f.origin == Origin::Corpus) {
            let bytes = f.read();
            let mut join = scratch_for(bytes.len());
            let mut out = vec![0u8; bytes.len() * 4 + (1 << 20)];
            let mut store = vec![0u8; 1 << 20];
            let r = (|| -> mediaslice::Result<(usize, u64)> {
                let mut d = Demuxer::open(SliceSource::with_scratch(&bytes, &mut join), f.ext().as_deref())?;
                let m = Muxer::with_scratch(SliceSink::new(&mut out), format, vec![0u8; 1 << 20])?;
                let mut m = m.with_index_spill(SliceSink::new(&mut store), spill.unwrap_or(usize::MAX));
                let map = add_tracks(&mut d, &mut m)?;
                if m.tracks().is_empty() {
                    return Ok((0, 0));
                }
                let before = allocs();
                COUNTING.with(|c| c.set(true));
                let r = copy_packets(&mut d, &mut m, &map).and_then(|n| m.finish().map(|_| n));
                COUNTING.with(|c| c.set(false));
                Ok((allocs() - before, r?))
            })();
            match r {
                Ok((_, 0)) => println!("skip {}: no track {format} carries", f.label()),
                Ok((0, n)) => {
                    packets += n;
                    files_checked += 1;
                }
                Ok((a, n)) => failures.push(format!("{}: {a} allocations over {n} packets", f.label())),
                Err(e) => println!("skip {}: {e}", f.label()),
            }
        }
    }
    println!("{files_checked} corpus files, {packets} packets remuxed to {format} with the allocator counting");
    assert!(files_checked >= min_files && packets > 0, "too little was remuxed");
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// The fragmented MP4 muxer's write loop allocates nothing, on a patchable
/// sink (a `SliceSink`: `moof` room reserved and patched) and on a stream
/// (a `WriterSink`: each fragment held in the scratch): every corpus file
/// MP4 carries, 300 ms fragments, counting from the first `next_packet()`
/// through `finish()`; and the same to hybrid MP4 (fragments, then the
/// progressive index at `finish`).
#[test]
fn fmp4_and_hybrid_remux_loops_allocate_nothing() {
    use mediaslice::mux::copy::{add_tracks, copy_packets};
    use mediaslice::{Fragmenting, Sink, WriterSink};
    fn run<K: Sink>(bytes: &[u8], ext: Option<&str>, sink: K, fmt: MuxFormat) -> mediaslice::Result<(usize, u64, u32)> {
        let mut join = scratch_for(bytes.len());
        let mut d = Demuxer::open(SliceSource::with_scratch(bytes, &mut join), ext)?;
        let mut m = Muxer::with_scratch(sink, fmt, vec![0u8; 4 << 20])?;
        let map = add_tracks(&mut d, &mut m)?;
        if m.tracks().is_empty() {
            return Ok((0, 0, 0));
        }
        let before = allocs();
        COUNTING.with(|c| c.set(true));
        let r = copy_packets(&mut d, &mut m, &map);
        let fragments = m.fragment_stats().map_or(0, |s| s.fragments);
        let r = r.and_then(|n| m.finish().map(|_| n));
        COUNTING.with(|c| c.set(false));
        Ok((allocs() - before, r?, fragments))
    }
    let mut failures = Vec::new();
    let (mut files_checked, mut packets, mut fragments) = (0u64, 0u64, 0u64);
    for &fam in FAMILIES {
        for f in family_files(fam).into_iter().filter(|f| f.origin == Origin::Corpus) {
            let bytes = f.read();
            let ext = f.ext();
            let mut out = vec![0u8; bytes.len() * 4 + (1 << 20)];
            let mut out2 = vec![0u8; bytes.len() * 4 + (1 << 20)];
            let mut out3 = vec![0u8; bytes.len() * 4 + (1 << 20)];
            let fmp4 = MuxFormat::Fmp4(Fragmenting::with_duration_ms(300));
            let hybrid = MuxFormat::HybridMp4(Fragmenting::with_duration_ms(300));
            let slice = run(&bytes, ext.as_deref(), SliceSink::new(&mut out), fmp4);
            let stream = run(&bytes, ext.as_deref(), WriterSink::new(&mut out2[..]), fmp4);
            let hybrid = run(&bytes, ext.as_deref(), SliceSink::new(&mut out3), hybrid);
            for (kind, r) in [("slice", slice), ("stream", stream), ("hybrid", hybrid)] {
                match r {
                    Ok((_, 0, _)) => println!("skip {} ({kind}): no track MP4 carries", f.label()),
                    Ok((0, n, k)) => {
                        packets += n;
                        fragments += u64::from(k);
                        files_checked += 1;
                    }
                    Ok((a, n, _)) => failures.push(format!("{} ({kind}): {a} allocations over {n} packets", f.label())),
                    Err(e) => println!("skip {} ({kind}): {e}", f.label()),
                }
            }
        }
    }
    println!("{files_checked} runs, {packets} packets in {fragments} fragments remuxed to fragmented and hybrid MP4 with the allocator counting");
    assert!(
        files_checked >= 24 && fragments > files_checked,
        "too little was remuxed"
    );
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// `repair`'s allocations do not grow with the packets it writes: the
/// whole call (tracks, the packet loop or the `mdat` walk, finish, rename)
/// allocates as often for a recording cut at 40% as for one cut at 95%,
/// for a fragmented MP4, a live Matroska file and an MP4 whose `moov` is
/// renamed `free` (repaired with the original as reference, cut before its
/// moov as well, so both cuts keep the same tail). Read through the map:
/// positioned reads (the default since 7 December 2026) grow their
/// payload scratch in powers of two up to the largest packet, one
/// allocation more where the longer cut holds a larger packet, which is
/// growth with the packets' size, not their number.
#[test]
fn repair_allocations_do_not_grow_with_packets() {
    use mediaslice_std::repair::{repair, RepairOptions};
    let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("repair_alloc");
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let corpus = corpus_dir().join("files");
    let count = |input: &std::path::Path, out: &str, opts: &RepairOptions| -> (usize, u64) {
        let out = dir.join(out);
        let before = allocs();
        COUNTING.with(|c| c.set(true));
        let r = repair(input, &out, opts);
        COUNTING.with(|c| c.set(false));
        let n = allocs() - before;
        (n, r.unwrap().packets())
    };
    let mut failures = Vec::new();
    for (name, reference) in [
        ("mp4/h264_aac_fragmented.mp4", false),
        ("matroska/h264_aac_unknown_size_clusters.mkv", false),
        ("mp4/h264_aac.mp4", true),
        ("avi/mpeg4_mp3.avi", false),
    ] {
        let path = corpus.join(name);
        let mut data = std::fs::read(&path).unwrap();
        let mut len = data.len();
        if reference {
            let at = data.windows(4).rposition(|w| w == b"moov").unwrap();
            data[at..at + 4].copy_from_slice(b"free");
            len = at - 4;
        }
        let opts = RepairOptions {
            reference: reference.then(|| path.clone()),
            read: mediaslice_std::InputRead::Mmap,
            ..Default::default()
        };
        let mut seen = Vec::new();
        for percent in [40, 95] {
            let cut = dir.join(format!("{percent}_{}", name.replace('/', "_")));
            std::fs::write(&cut, &data[..len * percent / 100]).unwrap();
            seen.push(count(&cut, &format!("out{percent}_{}", name.replace('/', "_")), &opts));
        }
        let ((a1, p1), (a2, p2)) = (seen[0], seen[1]);
        assert!(p2 > p1, "{name}: the longer cut wrote no more packets ({p1}, {p2})");
        if a1 != a2 {
            failures.push(format!("{name}: {a1} allocations for {p1} packets, {a2} for {p2}"));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
