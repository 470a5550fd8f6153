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
//!   [`TRAILER`] bytes; the two runs must log identical events.
//! * [`run_truncation`]: prefixes of the input must yield prefixes of the
//!   whole input's packets (a final packet flagged `truncated` may be a
//!   shorter prefix of the whole one).
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

// ---------------------------------------------------------------------------
// The reader of the stream side.

/// What a [`FuzzReader`] does with a seek.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SeekMode {
    /// Any seek succeeds.
    Full,
    /// Seeks forward (or to the current position) succeed, backward ones
    /// fail with `Unsupported`, like a pipe that can skip.
    ForwardOnly,
    /// Only a seek to the current position succeeds.
    None,
}

/// An `embedded_io` reader over a byte slice that returns at most `chunk`
/// bytes per `read` and restricts seeking as `seek` says.
#[derive(Debug)]
pub struct FuzzReader<'a> {
    data: &'a [u8],
    pos: u64,
    chunk: usize,
    seek: SeekMode,
    reads: u64,
    fail_from: Option<u64>,
}

impl<'a> FuzzReader<'a> {
    /// A reader over `data`.
    pub fn new(data: &'a [u8], chunk: usize, seek: SeekMode) -> Self {
        FuzzReader {
            data,
            pos: 0,
            chunk: chunk.max(1),
            seek,
            reads: 0,
            fail_from: None,
        }
    }

    /// Makes every `read` from the `n`th on (counting from 1) fail with
    /// `ErrorKind::Other`, like a device that goes away.
    pub fn failing_from(mut self, n: Option<u64>) -> Self {
        self.fail_from = n;
        self
    }
}

impl embedded_io::ErrorType for FuzzReader<'_> {
    type Error = embedded_io::ErrorKind;
}

impl embedded_io::Read for FuzzReader<'_> {
    fn read(&mut self, buf: &mut [u8]) -> Result<usize, Self::Error> {
        self.reads += 1;
        if self.fail_from.is_some_and(|n| self.reads >= n) {
            return Err(embedded_io::ErrorKind::Other);
        }
        let start = usize::try_from(self.pos).unwrap_or(usize::MAX).min(self.data.len());
        let n = buf.len().min(self.chunk).min(self.data.len() - start);
        buf[..n].copy_from_slice(&self.data[start..start + n]);
        self.pos += n as u64;
        Ok(n)
    }
}

impl embedded_io::Seek for FuzzReader<'_> {
    fn seek(&mut self, pos: embedded_io::SeekFrom) -> Result<u64, Self::Error> {
        let target = match pos {
            embedded_io::SeekFrom::Start(n) => Some(n),
            embedded_io::SeekFrom::End(d) => (self.data.len() as u64).checked_add_signed(d),
            embedded_io::SeekFrom::Current(d) => self.pos.checked_add_signed(d),
        }
        .ok_or(embedded_io::ErrorKind::InvalidInput)?;
        let allowed = match self.seek {
            SeekMode::Full => true,
            SeekMode::ForwardOnly => target >= self.pos,
            SeekMode::None => target == self.pos,
        };
        if !allowed {
            return Err(embedded_io::ErrorKind::Unsupported);
        }
        self.pos = target;
        Ok(target)
    }
}

/// How the stream side of [`run_slice_vs_stream`] reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StreamConfig {
    /// Most bytes per `read` call.
    pub chunk: usize,
    /// Seekability of the reader.
    pub seek: SeekMode,
    /// Reads fail from this one on (I/O fault injection), if set.
    pub fail_from: Option<u64>,
    /// How the source learns the length.
    pub len: LenMode,
    /// Blocks in the `ReaderSource` header cache (0, 1, 2 or 8).
    pub blocks: usize,
    /// `None`: detect the format; `Some(k)`: force it.
    pub kind: Option<FormatKind>,
}

/// How the stream side learns the input's length.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LenMode {
    /// `ReaderSource::with_known_len` with the true length.
    Known,
    /// `ReaderSource::new`, which seeks to the end.
    SeekEnd,
    /// The reader has more bytes than the length claimed: the result must be
    /// that of the slice cut at the claimed length.
    Shorter(u64),
    /// The claimed length exceeds the bytes the reader has: reads past them
    /// fail; checked for invariants only.
    Longer(u64),
}

const CHUNKS: [usize; 16] = [
    1,
    2,
    3,
    5,
    7,
    13,
    31,
    64,
    100,
    511,
    512,
    513,
    1000,
    4096,
    65536,
    usize::MAX,
];

impl StreamConfig {
    /// Reads the configuration from the input's last [`TRAILER`] bytes, as
    /// FFmpeg's `target_dem_fuzzer` lets its input choose the I/O pattern:
    ///
    /// * byte 0: bits 0-3 chunk size (1, 2, 3, 5, 7, 13, 31, 64, 100, 511,
    ///   512, 513, 1000, 4096, 65536, unlimited); bits 4-5 cache blocks
    ///   (8, 1, 2, 0);
    /// * byte 1: bits 0-1 seek mode (full, forward only, none, full with
    ///   every read from the (byte 2 + 1)th on failing);
    ///   bits 2-3 length mode (known, seek to end, shorter, longer);
    /// * byte 2: the length difference for shorter/longer, minus one;
    /// * byte 3: below 128 detect the format, else force `KINDS[b % n]`.
    pub fn from_trailer(t: [u8; TRAILER]) -> Self {
        let delta = t[2] as u64 + 1;
        StreamConfig {
            chunk: CHUNKS[(t[0] & 15) as usize],
            blocks: [8, 1, 2, 0][((t[0] >> 4) & 3) as usize],
            seek: [SeekMode::Full, SeekMode::ForwardOnly, SeekMode::None, SeekMode::Full][(t[1] & 3) as usize],
            fail_from: if t[1] & 3 == 3 { Some(delta) } else { None },
            len: [
                LenMode::Known,
                LenMode::SeekEnd,
                LenMode::Shorter(delta),
                LenMode::Longer(delta),
            ][((t[1] >> 2) & 3) as usize],
            kind: if t[3] < 128 {
                None
            } else {
                Some(KINDS[t[3] as usize % KINDS.len()])
            },
        }
    }

    /// Splits `data` into the media bytes and the configuration.
    pub fn split(data: &[u8]) -> (&[u8], StreamConfig) {
        let mut t = [0u8; TRAILER];
        if data.len() < TRAILER {
            return (data, StreamConfig::from_trailer(t));
        }
        let (media, tail) = data.split_at(data.len() - TRAILER);
        t.copy_from_slice(tail);
        (media, StreamConfig::from_trailer(t))
    }
}

// ---------------------------------------------------------------------------
// The event log.

/// A packet as logged: everything but the payload, which is kept as length
/// and CRC-32 (and, within a byte budget, the bytes themselves).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PacketSum {
    /// Track index.
    pub track: usize,
    /// Presentation timestamp.
    pub pts: Option<i64>,
    /// Decoding timestamp.
    pub dts: Option<i64>,
    /// Duration.
    pub duration: Option<u64>,
    /// Flags.
    pub flags: PacketFlags,
    /// Position in the input.
    pub pos: Option<u64>,
    /// Whether the payload is the input range at `pos`.
    pub contiguous: bool,
    /// Payload length.
    pub len: usize,
    /// Payload CRC-32.
    pub crc: u32,
    /// The payload, when [`Plan::keep_bytes`] allowed.
    pub bytes: Option<Kept>,
}

/// Payload bytes kept for a later comparison (printed by length only).
#[derive(Clone, PartialEq, Eq)]
pub struct Kept(pub Vec<u8>);

impl std::fmt::Debug for Kept {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "<{} bytes>", self.0.len())
    }
}

/// A tag as logged, owned.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TagSum {
    /// Scope.
    pub scope: TagScope,
    /// Key: text or FourCC bytes.
    pub key: Result<String, [u8; 4]>,
    /// Common name.
    pub name: Option<&'static str>,
    /// Value: text, integer or bytes.
    pub value: TagValueSum,
}

/// A tag value, owned.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TagValueSum {
    /// Text.
    Text(String),
    /// Integer.
    Int(i64),
    /// Bytes: length and CRC-32.
    Bytes(usize, u32),
}

/// One step of a run.
#[derive(Debug, Clone, PartialEq)]
pub enum Event {
    /// The demuxer opened.
    Opened {
        /// Format.
        kind: FormatKind,
        /// Tracks.
        tracks: Vec<Track>,
        /// Whole-file facts.
        info: FormatInfo,
        /// `max_packet_size()`.
        max_packet: Option<usize>,
    },
    /// Opening failed.
    OpenFailed(Error),
    /// `codec_config(track)`: length and CRC-32, or the error.
    Config(usize, Result<(usize, u32), Error>),
    /// A tag.
    Tag(TagSum),
    /// The tag walk failed.
    TagErr(Error),
    /// The tag walk ended.
    TagsEnd,
    /// A packet.
    Packet(PacketSum),
    /// `next_packet` failed.
    PacketErr(Error),
    /// `next_packet` returned `Ok(None)`.
    End,
    /// The harness stopped pulling after [`DIFF_PACKET_CAP`] packets.
    Capped,
    /// A seek and its result.
    Seek(usize, i64, Result<(), Error>),
    /// Diagnostics at the end: (code, offset, count) and the dropped count.
    Diags(Vec<(&'static str, u64, u32)>, u32),
}

impl Event {
    /// The error this event carries, if any.
    pub fn error(&self) -> Option<&Error> {
        match self {
            Event::OpenFailed(e) | Event::TagErr(e) | Event::PacketErr(e) => Some(e),
            Event::Config(_, Err(e)) | Event::Seek(_, _, Err(e)) => Some(e),
            _ => None,
        }
    }
}

/// What a run does and keeps.
#[derive(Debug, Clone, Copy)]
pub struct Plan {
    /// Keep every event (differential targets) or only count (parser targets).
    pub record: bool,
    /// Walk the tags (twice, the second after `rewind_tags`).
    pub tags: bool,
    /// Seek and pull more packets after the first pass.
    pub seeks: bool,
    /// An extra seek target chosen by the input.
    pub extra_ts: i64,
    /// Stop after this many packets in the first pass (`usize::MAX`: never).
    pub packet_cap: usize,
    /// Bytes of packet payload that may be kept in [`PacketSum::bytes`].
    pub keep_bytes: usize,
}

impl Plan {
    /// Everything, counted only: the parser and `any` targets.
    pub fn full(extra_ts: i64) -> Self {
        Plan {
            record: false,
            tags: true,
            seeks: true,
            extra_ts,
            packet_cap: usize::MAX,
            keep_bytes: 0,
        }
    }
}

/// What a run found.
#[derive(Debug, Default)]
pub struct Log {
    /// The events, when the plan records.
    pub events: Vec<Event>,
    /// Packets in the first pass.
    pub packets: usize,
    /// Whether the demuxer opened.
    pub opened: bool,
}

impl Log {
    fn push(&mut self, plan: &Plan, e: Event) {
        if plan.record {
            self.events.push(e);
        }
    }

    /// The packets of the first pass (before any seek), and how it ended.
    pub fn first_pass(&self) -> (Vec<&PacketSum>, Option<&Event>) {
        let mut v = Vec::new();
        for e in &self.events {
            match e {
                Event::Packet(p) => v.push(p),
                Event::PacketErr(_) | Event::End | Event::Capped => return (v, Some(e)),
                _ => {}
            }
        }
        (v, None)
    }
}

fn tag_sum(t: &mediaslice::Tag<'_>) -> TagSum {
    TagSum {
        scope: t.scope,
        key: match t.key {
            TagKey::Text(s) => Ok(s.to_owned()),
            TagKey::FourCc(k) => Err(k),
        },
        name: t.name,
        value: match t.value {
            TagValue::Text(s) => TagValueSum::Text(s.to_owned()),
            TagValue::Int(i) => TagValueSum::Int(i),
            TagValue::Bytes(b) => TagValueSum::Bytes(b.len(), crc32(b)),
        },
    }
}

/// Pulls one packet, checks the per-packet invariants and summarises it.
/// `None` when the pass ended (the end event is returned).
fn pull<S: Source>(d: &mut Demuxer<S>, input: &[u8], keep: &mut usize) -> Result<PacketSum, Event> {
    let ntracks = d.tracks().len();
    let max_packet = d.limits().max_packet as usize;
    let declared_max = d.max_packet_size();
    let before = allocated();
    let r = d.next_packet();
    let n = allocated().wrapping_sub(before);
    assert!(n == 0, "invariant: next_packet allocated {n} bytes");
    match r {
        Ok(Some(p)) => {
            assert!(
                p.track < ntracks,
                "invariant: packet track {} of {} tracks",
                p.track,
                ntracks
            );
            assert!(
                p.data.len() <= max_packet,
                "invariant: packet of {} bytes over Limits::max_packet",
                p.data.len()
            );
            if let Some(m) = declared_max {
                assert!(
                    p.data.len() <= m,
                    "invariant: packet of {} bytes over max_packet_size() {}",
                    p.data.len(),
                    m
                );
            }
            if p.contiguous {
                let pos = p.pos.expect("invariant: contiguous packet without pos");
                let start = usize::try_from(pos).expect("invariant: contiguous pos beyond usize");
                let within = start.checked_add(p.data.len()).and_then(|end| input.get(start..end));
                assert!(
                    within == Some(p.data),
                    "invariant: contiguous packet at {} ({} bytes) is not the input's bytes there",
                    pos,
                    p.data.len()
                );
            }
            let bytes = if p.data.len() <= *keep {
                *keep -= p.data.len();
                Some(Kept(p.data.to_vec()))
            } else {
                None
            };
            Ok(PacketSum {
                track: p.track,
                pts: p.pts,
                dts: p.dts,
                duration: p.duration,
                flags: p.flags,
                pos: p.pos,
                contiguous: p.contiguous,
                len: p.data.len(),
                crc: crc32(p.data),
                bytes,
            })
        }
        Ok(None) => Err(Event::End),
        Err(e) => {
            // The driver promises Ok(None) after the first error.
            assert!(
                matches!(d.next_packet(), Ok(None)),
                "invariant: next_packet after an error did not return Ok(None)"
            );
            Err(Event::PacketErr(e))
        }
    }
}

/// Walks the tags once, logging them; returns the summaries for comparison.
fn walk_tags<S: Source>(d: &mut Demuxer<S>, bound: usize) -> Vec<Event> {
    let mut out = Vec::new();
    loop {
        let before = allocated();
        let r = d.next_tag();
        let n = allocated().wrapping_sub(before);
        assert!(n == 0, "invariant: next_tag allocated {n} bytes");
        match r {
            Ok(Some(t)) => out.push(Event::Tag(tag_sum(&t))),
            Ok(None) => {
                out.push(Event::TagsEnd);
                break;
            }
            Err(e) => {
                out.push(Event::TagErr(e));
                break;
            }
        }
        assert!(out.len() <= bound, "invariant: more than {bound} tags from the input");
    }
    out
}

/// Whether a tag walk after `rewind_tags` repeats the first: identically, or
/// up to the first event that carries an I/O error in either. A reader that
/// fails from some read on, or cannot seek back, may serve the first walk
/// and fail the second, which must read the tags again (the library keeps
/// no copy): the error is the honest answer (finding 47).
fn same_walk(a: &[Event], b: &[Event]) -> bool {
    let io = |e: &Event| matches!(e.error().map(|x| x.kind()), Some(mediaslice::ErrorKind::Io(_)));
    for (x, y) in a.iter().zip(b) {
        if io(x) || io(y) {
            return true;
        }
        if x != y {
            return false;
        }
    }
    a.len() == b.len()
}

/// Runs the whole exercise on an opened (or failed) demuxer over `input`
/// (the bytes the source serves, for the `contiguous` check).
pub fn exercise<S: Source>(input: &[u8], opened: mediaslice::Result<Demuxer<S>>, plan: &Plan) -> Log {
    let mut log = Log::default();
    let mut d = match opened {
        Ok(d) => d,
        Err(e) => {
            log.push(plan, Event::OpenFailed(e));
            return log;
        }
    };
    log.opened = true;
    let bound = work_bound(input.len());
    let tracks: Vec<Track> = d.tracks().to_vec();
    log.push(
        plan,
        Event::Opened {
            kind: d.format(),
            tracks: tracks.clone(),
            info: d.info().clone(),
            max_packet: d.max_packet_size(),
        },
    );
    // Codec configuration of every track, and of one past the end.
    for i in 0..=tracks.len() {
        let r = no_alloc("codec_config", || d.codec_config(i).map(|c| (c.len(), crc32(c))));
        if i == tracks.len() {
            assert!(r.is_err(), "invariant: codec_config of a track out of range succeeded");
        }
        log.push(plan, Event::Config(i, r));
    }
    if plan.tags {
        let first = walk_tags(&mut d, bound);
        d.rewind_tags();
        let second = walk_tags(&mut d, bound);
        assert!(
            same_walk(&first, &second),
            "invariant: the tag walk differs after rewind_tags"
        );
        for e in first {
            log.push(plan, e);
        }
    }
    // First pass: every packet.
    let mut keep = plan.keep_bytes;
    let mut last_ts: Vec<Option<i64>> = vec![None; tracks.len()];
    loop {
        if log.packets >= plan.packet_cap {
            log.push(plan, Event::Capped);
            break;
        }
        match pull(&mut d, input, &mut keep) {
            Ok(p) => {
                log.packets += 1;
                assert!(
                    log.packets <= bound,
                    "invariant: more than {bound} packets from {} bytes",
                    input.len()
                );
                if let Some(slot) = last_ts.get_mut(p.track) {
                    if p.pts.is_some() {
                        *slot = p.pts;
                    }
                }
                log.push(plan, Event::Packet(p));
            }
            Err(end) => {
                log.push(plan, end);
                break;
            }
        }
    }
    if plan.seeks {
        // Out of range: must fail.
        assert!(
            d.seek(tracks.len(), 0).is_err(),
            "invariant: seek on a track out of range succeeded"
        );
        for (t, track) in tracks.iter().enumerate().take(4) {
            let mut points = vec![0i64, -1, i64::MIN, i64::MAX, plan.extra_ts];
            if let Some(dur) = track.duration {
                points.push((dur / 2).min(i64::MAX as u64) as i64);
                points.push(dur.min(i64::MAX as u64) as i64);
            }
            if let Some(Some(ts)) = last_ts.get(t) {
                points.push(*ts);
                points.push(ts / 2);
            }
            for ts in points {
                let r = no_alloc("seek", || d.seek(t, ts));
                let ok = r.is_ok();
                log.push(plan, Event::Seek(t, ts, r));
                if !ok {
                    continue;
                }
                for _ in 0..16 {
                    match pull(&mut d, input, &mut 0) {
                        Ok(p) => log.push(plan, Event::Packet(p)),
                        Err(end) => {
                            log.push(plan, end);
                            break;
                        }
                    }
                }
            }
        }
    }
    let diags = d.diagnostics();
    log.push(
        plan,
        Event::Diags(
            diags.iter().map(|(g, n)| (g.code, g.offset, n)).collect(),
            diags.dropped(),
        ),
    );
    log
}

/// An input-chosen seek target: the last eight bytes as a little-endian i64.
fn extra_ts(data: &[u8]) -> i64 {
    let mut b = [0u8; 8];
    let n = data.len().min(8);
    b[..n].copy_from_slice(&data[data.len() - n..]);
    i64::from_le_bytes(b)
}

// ---------------------------------------------------------------------------
// The targets.

/// A parser target: open `data` as `kind` and exercise everything.
pub fn run_parser(data: &[u8], kind: FormatKind) {
    let opened = no_alloc("open", || {
        Demuxer::open_as(SliceSource::new(data), kind, Limits::default())
    });
    exercise(data, opened, &Plan::full(extra_ts(data)));
}

/// A parser target for a format whose packets may be joined in scratch
/// (Ogg pages, PES, ASF fragments, Matroska header stripping): like
/// [`run_parser`] over `SliceSource::with_scratch` with as much scratch as
/// the input is long.
pub fn run_parser_with_scratch(data: &[u8], kind: FormatKind) {
    let mut sc = scratch(data.len());
    let opened = no_alloc("open", || {
        Demuxer::open_as(SliceSource::with_scratch(data, &mut sc), kind, Limits::default())
    });
    exercise(data, opened, &Plan::full(extra_ts(data)));
}

/// The detection target (with scratch, so formats that join packets are
/// reached too).
pub fn run_any(data: &[u8]) {
    let kind = detect(&data[..data.len().min(mediaslice::detect::DETECT_BYTES)], None);
    let mut sc = scratch(data.len());
    let opened = no_alloc("open", || {
        Demuxer::open_with(SliceSource::with_scratch(data, &mut sc), None, Limits::default())
    });
    if let (Some(k), Ok(d)) = (kind, &opened) {
        assert_eq!(
            d.format(),
            k,
            "invariant: open_with opened another format than detect names"
        );
    }
    exercise(data, opened, &Plan::full(extra_ts(data)));
}

fn open<S: Source>(src: S, kind: Option<FormatKind>) -> mediaslice::Result<Demuxer<S>> {
    match kind {
        Some(k) => Demuxer::open_as(src, k, Limits::default()),
        None => Demuxer::open_with(src, None, Limits::default()),
    }
}

fn diff_plan(extra_ts: i64) -> Plan {
    Plan {
        record: true,
        tags: true,
        seeks: true,
        extra_ts,
        packet_cap: DIFF_PACKET_CAP,
        keep_bytes: 0,
    }
}

/// Scratch for every run: enough for any packet a slice of `len` bytes can
/// hold, plus 64 KiB for the MPEG-TS/PS audio carry slots (8 KiB per split
/// track; eight tracks), as core's tests give (`common::scratch_for`). With
/// `len` alone, a whole input with more split tracks than its prefix ran out
/// of scratch where the prefix did not (a `truncation` finding that was the
/// harness's, not the library's).
fn scratch(len: usize) -> Vec<u8> {
    vec![0u8; len.max(64) + (64 << 10)]
}

fn stream_run<const BLOCKS: usize>(media: &[u8], cfg: &StreamConfig, plan: &Plan) -> Option<Log> {
    let reader = FuzzReader::new(media, cfg.chunk, cfg.seek).failing_from(cfg.fail_from);
    let src = match cfg.len {
        LenMode::Known => {
            ReaderSource::<_, _, BLOCKS>::with_known_len(reader, scratch(media.len()), media.len() as u64)
        }
        LenMode::SeekEnd => match ReaderSource::<_, _, BLOCKS>::new(reader, scratch(media.len())) {
            Ok(s) => s,
            Err(_) => return None,
        },
        LenMode::Shorter(k) => {
            let len = (media.len() as u64).saturating_sub(k);
            ReaderSource::<_, _, BLOCKS>::with_known_len(reader, scratch(media.len()), len)
        }
        LenMode::Longer(k) => {
            ReaderSource::<_, _, BLOCKS>::with_known_len(reader, scratch(media.len()), media.len() as u64 + k)
        }
    };
    Some(exercise(media, no_alloc("open", || open(src, cfg.kind)), plan))
}

/// The slice-versus-stream differential target.
pub fn run_slice_vs_stream(data: &[u8]) {
    let (media, cfg) = StreamConfig::split(data);
    let plan = diff_plan(extra_ts(media));
    let stream = match cfg.blocks {
        0 => stream_run::<0>(media, &cfg, &plan),
        1 => stream_run::<1>(media, &cfg, &plan),
        2 => stream_run::<2>(media, &cfg, &plan),
        _ => stream_run::<8>(media, &cfg, &plan),
    };
    let Some(stream) = stream else { return };
    let view = match cfg.len {
        LenMode::Shorter(k) => &media[..media.len().saturating_sub(k as usize)],
        LenMode::Longer(_) => return, // invariants only: the reader runs dry
        _ => media,
    };
    let mut slice_scratch = scratch(media.len());
    let slice = exercise(
        view,
        open(SliceSource::with_scratch(view, &mut slice_scratch), cfg.kind),
        &plan,
    );
    compare_logs(&slice, &stream, cfg.seek != SeekMode::Full || cfg.fail_from.is_some());
}

/// Requires `stream` to log what `slice` logged. When the stream cannot seek
/// freely, it may instead stop agreeing at an event carrying an I/O error
/// (the refused seek), after which nothing is compared.
pub fn compare_logs(slice: &Log, stream: &Log, io_may_fail: bool) {
    for (i, (a, b)) in slice.events.iter().zip(stream.events.iter()).enumerate() {
        if a == b {
            continue;
        }
        if io_may_fail && matches!(b.error().map(|e| e.kind()), Some(mediaslice::ErrorKind::Io(_))) {
            return;
        }
        // A reader needs scratch for every packet it hands out (after the
        // MPEG-TS/PS audio carry slots, 8 KiB per split track), a slice only
        // for the packets it joins: with the same scratch the reader may stop
        // first, saying so.
        if matches!(
            b.error().map(|e| e.kind()),
            Some(mediaslice::ErrorKind::ScratchTooSmall)
        ) {
            return;
        }
        panic!("slice and stream differ at event {i}:\n slice:  {a:?}\n stream: {b:?}");
    }
    if slice.events.len() != stream.events.len() {
        panic!(
            "slice logged {} events, stream {} (first extra: {:?} / {:?})",
            slice.events.len(),
            stream.events.len(),
            slice.events.get(stream.events.len()),
            stream.events.get(slice.events.len())
        );
    }
}

/// Keep at most this many payload bytes of the whole input's packets for the
/// prefix checks of [`run_truncation`].
const TRUNCATION_KEEP: usize = 32 << 20;

/// Kinds whose packetisation is the reader's choice (fixed-size reads of a
/// PCM data chunk, PES units cut by the end, parser-split video): a prefix
/// may end with a shorter last packet without `flags.truncated` (as
/// `STREAM_EXACT_FAMILIES` in core/tests/common).
pub const STREAM_EXACT: &[FormatKind] = &[
    FormatKind::Wav,
    FormatKind::Rf64,
    FormatKind::Wave64,
    FormatKind::MpegTs,
    FormatKind::MpegPs,
    FormatKind::Aiff,
    // Parser-split video elementary streams: a cut inside the last access
    // unit or frame cannot be told from its end.
    FormatKind::H264,
    FormatKind::Hevc,
    FormatKind::MpegVideo,
    FormatKind::M4v,
];

/// Kinds that interleave units of several streams, so a cut may leave a
/// partial last packet in each stream: their prefixes are compared stream by
/// stream (each stream's packets a prefix of its packets in the whole input).
pub const PER_TRACK_PREFIX: &[FormatKind] = &[FormatKind::MpegTs, FormatKind::MpegPs];

/// Diagnostics that mark a prefix as a known truncation exception (listed in
/// core/tests/truncation_exceptions.tsv with the files that show them): the
/// prefix still runs for the invariants, but its packets are not compared.
/// Remove a code when its demuxer is fixed.
pub const KNOWN_TRUNCATION_EXCEPTIONS: &[&str] = &[
    // moov cut inside stbl: the cut tables yield samples at wrong offsets.
    "mp4.moov-truncated",
    // MPEG-TS started on fewer than five synced packets (a file that short
    // must open): a longer input may reject that start or packet size.
    "ts.unconfirmed-sync",
    // MPEG audio whose input ends within ffmpeg's 64 KiB search for the
    // first pair of frames without one: it starts after the tags, where a
    // longer input may start at a pair further on.
    "mp3.unconfirmed-start",
    // H.264 whose input ends before the probe found an SPS with VUI timing:
    // 25 fps, where a longer input may time every access unit by an SPS
    // further on.
    "annexb.unconfirmed-rate",
    // MPEG-TS whose input ends before the first PES of an undescribed
    // private stream: a data track, which a longer input may identify as
    // audio from that PES.
    "ts.unconfirmed-codec",
    // MPEG-4 Part 2 whose VOL header the end of the input cuts before its
    // time resolution: 25 fps, where a longer input times frames by the VOL.
    "m4v.unconfirmed-rate",
];

/// Diagnostics that say a prefix cannot know its video keyframe flags: its
/// packets are compared without them. AVI without an index in the input,
/// whose end comes before the end of `movi` or of the RIFF: the whole input's
/// index (after `movi`) marks the keyframes, the walk of a prefix (as
/// ffmpeg's) takes every video frame for one (fuzz finding 48).
pub const KEYFRAME_UNDECIDED: &[&str] = &["avi.unconfirmed-keyframe"];

/// Kinds with open truncation findings (docs/fuzzing.md, "Findings and
/// fixes"): their prefixes run for the invariants but are not compared, so
/// the smoke run stays green on the seeds until the owner fixes them. Remove
/// a kind when its findings are fixed.
pub const KNOWN_TRUNCATION_KINDS: &[(FormatKind, &str)] = &[];

impl Log {
    /// The tracks at open, if it opened (recorded logs only).
    pub fn tracks(&self) -> Option<&[Track]> {
        self.events.iter().find_map(|e| match e {
            Event::Opened { tracks, .. } => Some(&tracks[..]),
            _ => None,
        })
    }

    /// Whether a diagnostic with `code` was reported (recorded logs only).
    pub fn has_diag(&self, code: &str) -> bool {
        self.events
            .iter()
            .any(|e| matches!(e, Event::Diags(d, _) if d.iter().any(|(c, _, _)| *c == code)))
    }
}

/// The truncation differential target.
pub fn run_truncation(data: &[u8]) {
    // The format: detected on the whole input, else forced by its last byte.
    let kind = detect(&data[..data.len().min(mediaslice::detect::DETECT_BYTES)], None)
        .unwrap_or(KINDS[data.last().copied().unwrap_or(0) as usize % KINDS.len()]);
    let plan = Plan {
        record: true,
        tags: false,
        seeks: false,
        extra_ts: 0,
        packet_cap: DIFF_PACKET_CAP,
        keep_bytes: TRUNCATION_KEEP,
    };
    let mut sc = scratch(data.len());
    let whole = exercise(
        data,
        Demuxer::open_as(SliceSource::with_scratch(data, &mut sc), kind, Limits::default()),
        &plan,
    );
    let (full, _) = whole.first_pass();
    // Cut points: every prefix of a small input; else packet edges and a few
    // chosen ones.
    let mut cuts: Vec<usize> = Vec::new();
    if data.len() <= 256 {
        cuts.extend(0..data.len());
    } else {
        let n = data.len();
        cuts.extend([0, 8, 12, 64, n / 3, n / 2, n - 1]);
        let pick = u16::from_le_bytes([data[n - 2], data[n - 1]]) as usize;
        cuts.push(pick % n);
        let step = (full.len() / 6).max(1);
        for p in full.iter().step_by(step).take(8) {
            if let Some(pos) = p.pos.and_then(|x| usize::try_from(x).ok()) {
                for c in [
                    pos,
                    pos + 1,
                    pos + p.len / 2,
                    (pos + p.len).saturating_sub(1),
                    pos + p.len,
                ] {
                    if c < n {
                        cuts.push(c);
                    }
                }
            }
        }
        cuts.sort_unstable();
        cuts.dedup();
    }
    let cut_plan = Plan { keep_bytes: 0, ..plan };
    // A whole input that hits the packet cap, or runs out of the scratch
    // (more split audio tracks than the carry room above), is a reference
    // only up to there: its prefixes may give more.
    let capped = whole.events.iter().any(|e| {
        matches!(e, Event::Capped)
            || matches!(e, Event::PacketErr(x) if x.kind() == mediaslice::ErrorKind::ScratchTooSmall)
    });
    let exact = !STREAM_EXACT.contains(&kind);
    let junk_joins = JUNK_JOINS_PREVIOUS.contains(&kind);
    for cut in cuts {
        let prefix = &data[..cut];
        let mut sc = scratch(prefix.len());
        let part = exercise(
            prefix,
            Demuxer::open_as(SliceSource::with_scratch(prefix, &mut sc), kind, Limits::default()),
            &cut_plan,
        );
        if !part.opened
            || KNOWN_TRUNCATION_EXCEPTIONS.iter().any(|c| part.has_diag(c))
            || KNOWN_TRUNCATION_KINDS.iter().any(|(k, _)| *k == kind)
        {
            continue;
        }
        let (got, _) = part.first_pass();
        let mut want = reference(&whole, &part);
        let unkeyed: Vec<PacketSum>;
        let got = if KEYFRAME_UNDECIDED.iter().any(|c| part.has_diag(c)) {
            let key_off = |p: &PacketSum| PacketSum {
                flags: PacketFlags {
                    keyframe: false,
                    ..p.flags
                },
                ..p.clone()
            };
            want = want.iter().map(key_off).collect();
            unkeyed = got.iter().map(|p| key_off(p)).collect();
            unkeyed.iter().collect()
        } else {
            got
        };
        if PER_TRACK_PREFIX.contains(&kind) {
            let ntracks = part.tracks().map_or(0, |t| t.len());
            for t in 0..ntracks {
                let w: Vec<PacketSum> = want.iter().filter(|p| p.track == t).cloned().collect();
                let g: Vec<&PacketSum> = got.iter().copied().filter(|p| p.track == t).collect();
                check_prefix(data, cut, &w, &g, capped, exact, junk_joins);
            }
        } else {
            check_prefix(data, cut, &want, &got, capped, exact, junk_joins);
        }
    }
}

/// Kinds whose packetisation appends junk after a frame to that frame
/// (ffmpeg's AC-3 parser; docs/formats/ac3.md): a cut exactly at the end of
/// such a frame gives it complete and unflagged, without the junk that only
/// the rest of the input shows. Accepted only as `whole_frames_before_junk`
/// checks it.
const JUNK_JOINS_PREVIOUS: &[FormatKind] = &[FormatKind::Ac3, FormatKind::Eac3];

/// Whether the prefix's last packet `p` is the whole input's packet `f`
/// without its trailing junk: `p` ends at the cut, its bytes are whole
/// AC-3/E-AC-3 sync frames (by their headers' frame lengths), and the bytes
/// that `f` has beyond it do not begin a frame.
fn whole_frames_before_junk(data: &[u8], cut: usize, p: &PacketSum, f: &PacketSum) -> bool {
    let (Some(pp), Some(fp)) = (p.pos, f.pos) else {
        return false;
    };
    let Ok(start) = usize::try_from(pp) else {
        return false;
    };
    if pp != fp || !p.contiguous || !f.contiguous || p.len >= f.len || start + p.len != cut {
        return false;
    }
    let mut at = start;
    while at < cut {
        match mediaslice::codec::ac3::Ac3Header::parse(&data[at..]) {
            Some(h) if h.frame_len > 0 => at += h.frame_len as usize,
            _ => return false,
        }
    }
    at == cut && mediaslice::codec::ac3::Ac3Header::parse(&data[cut..]).is_none()
}

/// The whole input's packets as a prefix should see them: renumbered to the
/// prefix's tracks, matched by id, kind and time base (a demuxer may salvage
/// fewer tracks from a cut index); packets of unmatched tracks dropped.
fn reference<'a>(whole: &'a Log, part: &Log) -> Vec<PacketSum> {
    let (full, _) = whole.first_pass();
    let (Some(ft), Some(pt)) = (whole.tracks(), part.tracks()) else {
        return Vec::new();
    };
    let key = |t: &Track| (t.id, t.kind, t.time_base);
    let mut map: Vec<Option<usize>> = vec![None; ft.len()];
    let mut taken = vec![false; pt.len()];
    for (fi, f) in ft.iter().enumerate() {
        if let Some(pi) = (0..pt.len()).find(|&pi| !taken[pi] && key(&pt[pi]) == key(f)) {
            taken[pi] = true;
            map[fi] = Some(pi);
        }
    }
    full.iter()
        .filter_map(|p| {
            let pi = (*map.get(p.track)?)?;
            Some(PacketSum {
                track: pi,
                ..(*p).clone()
            })
        })
        .collect()
}

fn check_prefix(
    data: &[u8],
    cut: usize,
    full: &[PacketSum],
    got: &[&PacketSum],
    capped: bool,
    exact: bool,
    junk_joins: bool,
) {
    for (i, p) in got.iter().enumerate() {
        let Some(f) = full.get(i) else {
            if capped {
                return;
            }
            panic!(
                "prefix of {cut} bytes yields packet {i} ({p:?}) but the whole input only {}",
                full.len()
            );
        };
        if (PacketSum {
            bytes: None,
            ..f.clone()
        }) == (PacketSum {
            bytes: None,
            ..(*p).clone()
        }) {
            continue;
        }
        let last = i + 1 == got.len();
        let same_head = p.track == f.track
            && p.pts == f.pts
            && p.dts == f.dts
            && p.pos == f.pos
            // Not the keyframe flag: formats that find it in the payload
            // cannot see it in a cut one.
            && p.len <= f.len;
        let same_bytes = match (&f.bytes, p.pos) {
            (Some(b), _) => b.0.get(..p.len).is_some_and(|x| crc32(x) == p.crc),
            (None, Some(pos)) if p.contiguous => {
                let s = pos as usize;
                data.get(s..s + p.len).is_some_and(|d| crc32(d) == p.crc)
            }
            _ => true,
        };
        // The last packet of the prefix may be flagged `truncated` where
        // the whole input's is not, with the same head and its bytes a
        // prefix (or all) of the whole's: a demuxer cannot always know at
        // the end of a cut input whether a packet ends (bytes after an AC-3
        // frame may be junk that the whole input appends to it, or the next
        // frame's header), and says so. core/tests/truncation.rs accepts
        // the same. Or the packetisation is the reader's own.
        let allowed = p.flags.truncated || !exact || (junk_joins && whole_frames_before_junk(data, cut, p, f));
        if !(last && allowed && same_head && same_bytes) {
            panic!(
                "prefix of {cut} bytes: packet {i} is not the whole input's (or its cut prefix)\n \
                 prefix: {p:?}\n whole:  {f:?}"
            );
        }
    }
}
