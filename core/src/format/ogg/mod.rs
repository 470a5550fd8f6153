//! Ogg (RFC 3533) with Vorbis, Opus (RFC 7845), Theora, FLAC (RFC 9639 §10.1)
//! and Speex.
//!
//! Pages are read one at a time and their CRC-32 checked (not under
//! `cfg(fuzzing)`); a page that fails, or garbage between pages, is skipped
//! by scanning for the next capture pattern, at most `Limits::resync_bytes`.
//! Logical streams are told apart by serial number in a table of
//! [`MAX_STREAMS`]; streams that end and are followed by a new one with the
//! same codec (a chain) continue on the same track, as ffmpeg does.
//!
//! A packet that ends on the page where it starts is delivered as a slice of
//! the input; one that spans pages is joined in the caller's scratch
//! (`Source::gather`, then `Source::joined`). Each page's payload is read once
//! for its CRC and once more for its packets.
//!
//! Header packets are not packets: they are parsed for the tracks, kept as
//! codec configuration (the identification header, or FLAC's STREAMINFO) and
//! comment tags, and are available whole through `Demuxer::header_packet`.
//! Header parsing stops at the first data packet of any stream, as in
//! ffmpeg; headers of other streams after it are still recognised.
//!
//! Timestamps follow ffmpeg's Ogg demuxer, which ffprobe reports: see
//! [`codec`] for the per-codec rules and `docs/formats/ogg.md`.

pub mod codec;
pub mod page;

use crate::error::{Error, ErrorKind, Result};
use crate::format::traits::{Context, FormatDemuxer};
use crate::format::xiph::comment::{common_name, split_entry};
use crate::source::Source;
use crate::tags::{Tag, TagCursor, TagKey, TagScope};
use crate::types::{ByteRange, Packet, PacketFlags, TrackKind};
use codec::{CodecState, OggCodec, PacketView, Timing, NOPTS};
use page::{find_page, read_page, Found, Page, PageRead, FLAG_BOS, FLAG_CONTINUED, MAX_PAGE, NO_GRANULE};

/// Most logical streams tracked at once. Pages of further serials are
/// skipped with `ogg.stream-capacity`.
pub const MAX_STREAMS: usize = 8;
/// Pieces of a spanning packet remembered as its pages go by; a longer
/// packet is found again by walking its pages when it completes.
const MAX_PIECES: usize = 4;
/// Bytes of a header packet read to parse it.
const HEAD_BYTES: usize = 96;
/// Bytes read from the end of a Vorbis setup header to find its modes.
const SETUP_TAIL: usize = 1024;
/// Pages a walk along one packet may cross before giving up.
const MAX_WALK_PAGES: u32 = 100_000;

/// One contiguous piece of a packet in the input.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
struct Piece {
    off: u64,
    len: u32,
}

/// Where a packet is: its first byte, the end of the body of the page it
/// starts on, and its length.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
struct Loc {
    start: u64,
    body_end: u64,
    len: u32,
}

/// Reads a packet's bytes in order, crossing to the next page of its
/// stream when a page's body ends.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
struct Walker {
    serial: u32,
    pos: u64,
    body_end: u64,
    remaining: u32,
}

impl Walker {
    fn new(serial: u32, loc: Loc) -> Self {
        Walker {
            serial,
            pos: loc.start,
            body_end: loc.body_end,
            remaining: loc.len,
        }
    }

    /// The next contiguous run of at most `max` bytes of the packet.
    fn next_run<S: Source>(&mut self, src: &mut S, resync: u64, max: u32) -> Result<Option<(u64, u32)>> {
        if self.remaining == 0 {
            return Ok(None);
        }
        let mut pages = 0u32;
        while self.pos >= self.body_end {
            pages += 1;
            if pages > MAX_WALK_PAGES {
                return Err(Error::limit(self.pos, "Ogg packet spans too many pages"));
            }
            let at = self.body_end;
            let p = match read_page(src, at, false)? {
                PageRead::Page(p) => p,
                PageRead::Cut => return Err(page::cut_error(at)),
                PageRead::Bad | PageRead::BadCrc => match find_page(src, at, resync)? {
                    Found::Page(p, _, _) => p,
                    Found::Cut(c) => return Err(page::cut_error(c)),
                    Found::End | Found::Lost => {
                        return Err(Error::malformed(at, "Ogg packet continues beyond the last page"))
                    }
                },
            };
            if p.serial == self.serial {
                self.pos = p.body;
            } else {
                self.pos = p.end();
            }
            self.body_end = p.end();
        }
        let n = (self.remaining as u64).min(self.body_end - self.pos).min(max as u64) as u32;
        let run = (self.pos, n);
        self.pos += n as u64;
        self.remaining -= n;
        Ok(Some(run))
    }

    /// Copies the next bytes into `buf`; returns how many (fewer at the end
    /// of the packet).
    fn read<S: Source>(&mut self, src: &mut S, resync: u64, buf: &mut [u8]) -> Result<usize> {
        let mut done = 0usize;
        while done < buf.len() {
            let want = (buf.len() - done) as u32;
            let Some((off, n)) = self.next_run(src, resync, want)? else {
                break;
            };
            let dst = buf.get_mut(done..done + n as usize).unwrap_or(&mut []);
            src.read_exact_at(off, dst)?;
            done += n as usize;
        }
        Ok(done)
    }

    /// Skips `n` bytes.
    fn skip<S: Source>(&mut self, src: &mut S, resync: u64, mut n: u32) -> Result<()> {
        while n > 0 {
            let Some((_, k)) = self.next_run(src, resync, n)? else {
                break;
            };
            n -= k;
        }
        Ok(())
    }

    /// Gathers the next `n` bytes into scratch from offset 0.
    fn gather<S: Source>(&mut self, src: &mut S, resync: u64, n: u32) -> Result<usize> {
        let mut at = 0usize;
        while at < n as usize {
            let Some((off, k)) = self.next_run(src, resync, n - at as u32)? else {
                break;
            };
            src.gather(off, k as usize, at)?;
            at += k as usize;
        }
        Ok(at)
    }
}

/// One logical stream.
#[derive(Debug, Clone)]
struct Stream {
    serial: u32,
    codec: OggCodec,
    state: CodecState,
    /// Index of its track, once its identification header was read.
    track: Option<usize>,
    headers_done: bool,
    /// A header failed: the stream's packets are skipped.
    broken: bool,
    nb_header: u8,
    /// Bytes of the packet being assembled.
    psize: u32,
    pieces: heapless::Vec<Piece, MAX_PIECES>,
    /// Where the packet being assembled starts.
    start: Loc,
    overflow: bool,
    /// The last page ended inside a packet.
    incomplete: bool,
    /// The last page of this stream was not a BOS page.
    got_data: bool,
    /// Flags of the last page of this stream.
    flags: u8,
    timing: Timing,
    /// libavformat's running dts (`cur_dts`), once a timestamp is known.
    cur_dts: Option<i64>,
    /// Header packets by slot (identification, comment, setup).
    headers: [Option<Loc>; 3],
    /// The comment block: where its packet is and where in it the block
    /// starts.
    comment: Option<(Loc, u32)>,
    /// Granule of the last page with one, from the scan of the end.
    last_granule: Option<u64>,
}

impl Stream {
    fn new(serial: u32, codec: OggCodec) -> Self {
        Stream {
            serial,
            codec,
            state: CodecState::new(codec),
            track: None,
            headers_done: false,
            broken: codec == OggCodec::Unknown,
            nb_header: 0,
            psize: 0,
            pieces: heapless::Vec::new(),
            start: Loc::default(),
            overflow: false,
            incomplete: false,
            got_data: false,
            flags: 0,
            timing: Timing::default(),
            cur_dts: None,
            headers: [None; 3],
            comment: None,
            last_granule: None,
        }
    }
}

/// The page whose packets are being taken.
#[derive(Debug, Clone)]
struct Cur {
    page: Page,
    stream: usize,
    /// Next lacing value.
    segp: usize,
    /// Offset of the next segment's bytes.
    pos: u64,
}

/// For each lacing value of the current page that ends a packet started on
/// that page, the packet's first two bytes (kept outside [`Run`] so that a
/// seek's saved state stays small).
type Starts = [[u8; 2]; 255];

/// Reads the first two bytes of every packet that starts on `page`.
fn fill_starts<S: Source>(src: &mut S, page: &Page, starts: &mut Starts) -> Result<()> {
    let mut run_start = page.body;
    let mut p = page.body;
    for (i, &s) in page.lacing().iter().enumerate() {
        p += s as u64;
        if s < 255 {
            if let Some(slot) = starts.get_mut(i) {
                let mut b = [0u8; 2];
                let avail = page.end().saturating_sub(run_start).min(2) as usize;
                src.read_at(run_start, b.get_mut(..avail).unwrap_or(&mut []))?;
                *slot = b;
            }
            run_start = p;
        }
    }
    Ok(())
}

/// A complete packet, not yet delivered.
#[derive(Debug, Clone)]
struct Extracted {
    stream: usize,
    size: u32,
    pieces: heapless::Vec<Piece, MAX_PIECES>,
    loc: Loc,
    overflow: bool,
}

/// Packets of the sought stream to drop after a seek, until the landing
/// packet.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct SeekSkip {
    stream: usize,
    /// Audio: drop while `pts + duration <= target`. Video: drop while
    /// `pts < target` (the keyframe).
    target: i64,
    video: bool,
}

/// The page a seek resumes on: its packets of the sought stream are only
/// timed (they end before the target), and the page's granule times the
/// packet after them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Land {
    stream: usize,
    page: u64,
    granule: u64,
}

/// The reading position and every stream's state: what a seek saves and
/// restores.
#[derive(Debug, Clone)]
struct Run {
    land: Option<Land>,
    streams: heapless::Vec<Stream, MAX_STREAMS>,
    cur: Option<Cur>,
    next_page: u64,
    pending: Option<Extracted>,
    skip: Option<SeekSkip>,
    /// Reading ended (end of input or a fatal error was reported).
    done: bool,
}

/// The tag walk over the streams' comment packets.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
struct TagWalk {
    stream: usize,
    walker: Walker,
    remaining: u32,
    active: bool,
}

/// Demuxer state for Ogg.
#[derive(Debug, Clone)]
pub struct OggDemuxer {
    run: Run,
    /// First page after the headers' pages (where data may begin).
    data_start: u64,
    starts: Starts,
    /// The open is done: the track list is fixed.
    opened: bool,
    tags: TagWalk,
}

fn opt(ts: i64) -> Option<i64> {
    (ts != NOPTS).then_some(ts)
}

impl Run {
    fn new() -> Self {
        Run {
            streams: heapless::Vec::new(),
            cur: None,
            next_page: 0,
            pending: None,
            skip: None,
            land: None,
            done: false,
        }
    }

    /// Reads the next page into `cur`. Returns `false` at the end of the
    /// input.
    fn read_next_page<S: Source>(&mut self, src: &mut S, ctx: &mut Context, starts: &mut Starts) -> Result<bool> {
        if let Some(l) = self.land {
            if self.cur.as_ref().is_some_and(|c| c.page.offset == l.page) {
                // Leaving the landing page: if none of its packets set the
                // next timestamp, its granule does.
                if let Some(st) = self.streams.get_mut(l.stream) {
                    if st.timing.lastpts == NOPTS {
                        let (g, _) = st.state.granule_to_ts(l.granule);
                        st.timing.lastpts = g;
                        st.timing.lastdts = g;
                    }
                }
                self.land = None;
            }
        }
        let at = self.next_page;
        let page = match find_page(src, at, ctx.limits.resync_bytes)? {
            Found::Page(p, skipped, bad_crc) => {
                if bad_crc {
                    ctx.diags.report("ogg.crc-mismatch", at);
                } else if skipped > 0 {
                    ctx.diags.report("ogg.resync", at);
                }
                p
            }
            Found::End => {
                if at < src.len() {
                    ctx.diags.report("ogg.trailing-garbage", at);
                }
                return Ok(false);
            }
            Found::Lost => {
                ctx.diags.report("ogg.sync-lost", at);
                return Ok(false);
            }
            Found::Cut(c) => return Err(page::cut_error(c)),
        };
        self.next_page = page.end();
        let idx = match self.streams.iter().position(|s| s.serial == page.serial) {
            Some(i) => i,
            None => match self.new_stream(src, ctx, &page)? {
                Some(i) => i,
                None => {
                    self.cur = None;
                    return Ok(true);
                }
            },
        };
        let Some(st) = self.streams.get_mut(idx) else {
            return Ok(true);
        };
        st.got_data = page.flags & FLAG_BOS == 0;
        st.timing.granule = page.granule;
        st.flags = page.flags;
        let mut segp = 0usize;
        let mut pos = page.body;
        if page.flags & FLAG_CONTINUED != 0 || st.incomplete {
            if st.psize == 0 {
                // The page continues a packet whose start was not seen:
                // drop its rest (RFC 3533 §6; ffmpeg does the same).
                while let Some(&s) = page.lacing().get(segp) {
                    segp += 1;
                    pos += s as u64;
                    if s < 255 {
                        break;
                    }
                }
            }
        } else {
            st.psize = 0;
            st.pieces.clear();
            st.overflow = false;
        }
        if !st.broken {
            fill_starts(src, &page, starts)?;
        }
        self.cur = Some(Cur {
            page,
            stream: idx,
            segp,
            pos,
        });
        Ok(true)
    }

    /// A page of an unknown serial: a new stream before any data, else the
    /// next link of a chain (RFC 3533 §4) or, where ffmpeg gives up, a new
    /// stream.
    fn new_stream<S: Source>(&mut self, src: &mut S, ctx: &mut Context, page: &Page) -> Result<Option<usize>> {
        let mut magic = [0u8; 8];
        let n = src.read_at(
            page.body,
            magic.get_mut(..(page.body_len as usize).min(8)).unwrap_or(&mut []),
        )?;
        // ffmpeg identifies a stream by the start of its first page's body,
        // beginning of stream or not.
        let codec = if page.flags & FLAG_CONTINUED == 0 {
            OggCodec::identify(magic.get(..n).unwrap_or(&[]))
        } else {
            OggCodec::Unknown
        };
        let data_seen = self.streams.iter().any(|s| s.got_data);
        if data_seen && self.streams.len() == 1 {
            if let Some(st) = self.streams.first_mut() {
                if st.codec == codec && codec != OggCodec::Unknown {
                    // A chain: the new link continues the stream (ffmpeg's
                    // ogg_replace_stream).
                    ctx.diags.report("ogg.chained", page.offset);
                    st.serial = page.serial;
                    st.timing.lastpts = 0;
                    st.timing.lastdts = 0;
                    if codec == OggCodec::Opus {
                        st.headers_done = false;
                    }
                    return Ok(Some(0));
                }
            }
        }
        if codec == OggCodec::Unknown {
            ctx.diags.report(
                if page.flags & FLAG_BOS != 0 {
                    "ogg.unknown-codec"
                } else {
                    "ogg.unknown-serial"
                },
                page.offset,
            );
        }
        if self.streams.push(Stream::new(page.serial, codec)).is_err() {
            ctx.diags.report("ogg.stream-capacity", page.offset);
            return Ok(None);
        }
        Ok(Some(self.streams.len() - 1))
    }

    /// The next complete packet of any stream, in page order.
    fn extract<S: Source>(&mut self, src: &mut S, ctx: &mut Context, starts: &mut Starts) -> Result<Option<Extracted>> {
        loop {
            let exhausted = match &self.cur {
                Some(c) => c.segp >= c.page.nsegs as usize,
                None => true,
            };
            if exhausted {
                if !self.read_next_page(src, ctx, starts)? {
                    if self.streams.iter().any(|s| s.psize > 0 && !s.broken) {
                        ctx.diags.report("ogg.incomplete-packet", self.next_page);
                    }
                    return Ok(None);
                }
                continue;
            }
            let Some(cur) = self.cur.as_mut() else { continue };
            let Some(st) = self.streams.get_mut(cur.stream) else {
                cur.segp = cur.page.nsegs as usize;
                continue;
            };
            if st.broken {
                cur.segp = cur.page.nsegs as usize;
                continue;
            }
            let run_start = cur.pos;
            let mut complete = false;
            while let Some(&s) = cur.page.lacing().get(cur.segp) {
                cur.segp += 1;
                cur.pos += s as u64;
                st.psize = st.psize.saturating_add(s as u32);
                if s < 255 {
                    complete = true;
                    break;
                }
            }
            let run_len = (cur.pos - run_start) as u32;
            if st.psize == run_len {
                // The packet starts here.
                st.start = Loc {
                    start: run_start,
                    body_end: cur.page.end(),
                    len: 0,
                };
                st.pieces.clear();
                st.overflow = false;
            }
            if run_len > 0
                && !st.overflow
                && st
                    .pieces
                    .push(Piece {
                        off: run_start,
                        len: run_len,
                    })
                    .is_err()
            {
                st.overflow = true;
            }
            if st.psize > ctx.limits.max_packet {
                st.broken = true;
                ctx.diags.report("ogg.packet-too-large", run_start);
                continue;
            }
            if !complete {
                st.incomplete = st.psize > 0;
                continue;
            }
            st.incomplete = false;
            let size = st.psize;
            st.psize = 0;
            let mut loc = st.start;
            loc.len = size;
            let out = Extracted {
                stream: cur.stream,
                size,
                pieces: core::mem::take(&mut st.pieces),
                loc,
                overflow: st.overflow,
            };
            st.overflow = false;
            return Ok(Some(out));
        }
    }
}

/// Reads the first bytes of a packet into `buf`; returns how many.
fn packet_head<S: Source>(src: &mut S, ctx: &Context, serial: u32, ex: &Extracted, buf: &mut [u8]) -> Result<usize> {
    if ex.size == 0 {
        // ffmpeg looks at the bytes where an empty packet sits: the next
        // packet's, or nothing at the end of the page.
        let n = (ex.loc.body_end.saturating_sub(ex.loc.start) as usize)
            .min(buf.len())
            .min(2);
        return src.read_at(ex.loc.start, buf.get_mut(..n).unwrap_or(&mut []));
    }
    let want = buf.len().min(ex.size as usize);
    let mut done = 0usize;
    if !ex.overflow {
        for p in &ex.pieces {
            if done >= want {
                break;
            }
            let n = (p.len as usize).min(want - done);
            src.read_exact_at(p.off, buf.get_mut(done..done + n).unwrap_or(&mut []))?;
            done += n;
        }
        return Ok(done);
    }
    let mut w = Walker::new(serial, ex.loc);
    w.read(src, ctx.limits.resync_bytes, buf.get_mut(..want).unwrap_or(&mut []))
}

impl OggDemuxer {
    /// Reads from the start up to the first data packet of any stream, as
    /// ffmpeg's header phase does; leaves that packet pending. Run again
    /// (for a seek to the start) it finds the tracks it made the first time.
    fn read_headers<S: Source>(&mut self, src: &mut S, ctx: &mut Context) -> Result<()> {
        let mut packets = 0u32;
        loop {
            packets += 1;
            if packets > ctx.limits.max_top_level {
                ctx.diags.report("ogg.too-many-headers", self.run.next_page);
                return Ok(());
            }
            let ex = match self.run.extract(src, ctx, &mut self.starts) {
                Ok(Some(ex)) => ex,
                Ok(None) => return Ok(()),
                Err(e) if e.is_truncation() && !ctx.tracks.is_empty() => {
                    ctx.diags.report("ogg.truncated-headers", e.offset());
                    self.run.done = true;
                    return Ok(());
                }
                Err(e) => return Err(e),
            };
            let headers_done = self.run.streams.get(ex.stream).is_none_or(|s| s.headers_done);
            if headers_done || !self.take_header(src, ctx, &ex)? {
                self.run.pending = Some(ex);
                return Ok(());
            }
        }
    }

    /// Handles a packet of a stream whose headers are pending. Returns
    /// whether it was a header (consumed).
    fn take_header<S: Source>(&mut self, src: &mut S, ctx: &mut Context, ex: &Extracted) -> Result<bool> {
        let Some(st) = self.run.streams.get(ex.stream) else {
            return Ok(true);
        };
        let serial = st.serial;
        let flags = st.flags;
        let mut head = [0u8; HEAD_BYTES];
        let n = packet_head(src, ctx, serial, ex, &mut head)?;
        let Some(st) = self.run.streams.get_mut(ex.stream) else {
            return Ok(true);
        };
        let out = st.state.header(head.get(..n).unwrap_or(&[]), ex.size, flags);
        if out.data {
            st.headers_done = true;
            return Ok(false);
        }
        if out.error {
            ctx.diags.report("ogg.bad-header", ex.loc.start);
            st.broken = true;
            return Ok(true);
        }
        st.nb_header = st.nb_header.saturating_add(1);
        if let Some(slot) = out.slot {
            if let Some(h) = st.headers.get_mut(slot as usize) {
                *h = Some(ex.loc);
            }
        }
        if let Some(skip) = out.comment {
            st.comment = Some((ex.loc, skip));
        }
        if out.needs_setup_tail {
            let tail_len = (ex.size as usize).min(SETUP_TAIL);
            let mut tail = [0u8; SETUP_TAIL];
            let mut w = Walker::new(serial, ex.loc);
            w.skip(src, ctx.limits.resync_bytes, ex.size - tail_len as u32)?;
            let got = w.read(
                src,
                ctx.limits.resync_bytes,
                tail.get_mut(..tail_len).unwrap_or(&mut []),
            )?;
            let Some(st) = self.run.streams.get_mut(ex.stream) else {
                return Ok(true);
            };
            let modes = codec::vorbis_modes(tail.get(..got).unwrap_or(&[]), ex.size as usize);
            match (&mut st.state, modes) {
                (CodecState::Vorbis(v), Some((count, long))) if v.blocksize[0] > 0 => v.set_modes(count, long),
                _ => {
                    ctx.diags.report("ogg.bad-header", ex.loc.start);
                    st.broken = true;
                    return Ok(true);
                }
            }
        }
        let Some(st) = self.run.streams.get_mut(ex.stream) else {
            return Ok(true);
        };
        if let Some(info) = out.track {
            // The config range must be contiguous in the input.
            let config = out.config.and_then(|(off, len)| {
                let first = ex.pieces.first()?;
                (!ex.overflow && off as u64 + len as u64 <= first.len as u64).then_some(ByteRange {
                    offset: first.off + off as u64,
                    len,
                })
            });
            match st.track {
                Some(t) => {
                    if let Some(tr) = ctx.tracks.get_mut(t) {
                        tr.config = config.or(tr.config);
                    }
                }
                None => {
                    let mut t = info.track(st.serial);
                    t.config = config;
                    // Headers read again after a seek to the start find
                    // their track; after the open no track is added (the
                    // track list is fixed then), as ffmpeg gives up on
                    // streams that begin after data.
                    let known = ctx.tracks.iter().position(|k| k.id == t.id && k.codec == t.codec);
                    st.track = match known {
                        Some(k) => Some(k),
                        None if self.opened => {
                            ctx.diags.report("ogg.late-stream", ex.loc.start);
                            None
                        }
                        None => ctx.add_track(t, ex.loc.start),
                    };
                    if st.track.is_none() {
                        st.broken = true;
                    }
                }
            }
        }
        Ok(true)
    }

    /// Finds the last granule of each stream in the last page-size of the
    /// input (what ffmpeg reads for durations).
    fn scan_durations<S: Source>(&mut self, src: &mut S, ctx: &mut Context) -> Result<()> {
        // Windows of 8 KiB from the end backwards, up to the last page-size
        // of the input (ffmpeg reads that much at once), until every track
        // has a granule: usually one window.
        const WINDOW: u64 = 8 << 10;
        let len = src.len();
        let floor = len.saturating_sub(MAX_PAGE).max(self.data_start);
        let mut hi = len;
        while hi > floor {
            let lo = hi.saturating_sub(WINDOW).max(floor);
            let mut at = lo;
            let mut found: heapless::Vec<(u32, u64), MAX_STREAMS> = heapless::Vec::new();
            while at < hi {
                let p = match find_page(src, at, hi - at)? {
                    Found::Page(p, _, _) if p.offset < hi => p,
                    _ => break,
                };
                at = p.end();
                if p.granule == NO_GRANULE || p.granule == 0 {
                    continue;
                }
                match found.iter_mut().find(|(s, _)| *s == p.serial) {
                    Some(e) => e.1 = p.granule,
                    None => {
                        let _ = found.push((p.serial, p.granule));
                    }
                }
            }
            for (serial, g) in found {
                if let Some(st) = self.run.streams.iter_mut().find(|s| s.serial == serial) {
                    st.last_granule = st.last_granule.or(Some(g));
                }
            }
            let all = self
                .run
                .streams
                .iter()
                .all(|s| s.track.is_none() || s.last_granule.is_some());
            if all {
                break;
            }
            hi = lo;
        }
        let mut longest = 0i64;
        for st in &self.run.streams {
            let (Some(t), Some(g)) = (st.track, st.last_granule) else {
                continue;
            };
            let (end, _) = st.state.granule_to_ts(g);
            if end <= 0 {
                continue;
            }
            if let Some(tr) = ctx.tracks.get_mut(t) {
                tr.duration = Some(end as u64);
                longest = longest.max(tr.time_base.to_micros(end));
            }
        }
        if longest > 0 {
            ctx.info.duration_us = Some(longest as u64);
        }
        Ok(())
    }

    /// Times a data packet (ffmpeg's packet callback, `ogg_calc_pts` and
    /// the generic `compute_pkt_fields`). Returns `None` for a packet that
    /// is not delivered (invalid, or before a seek's landing packet).
    fn timing<S: Source>(&mut self, src: &mut S, ctx: &mut Context, ex: &Extracted) -> Result<Option<Meta>> {
        let Some(st) = self.run.streams.get(ex.stream) else {
            return Ok(None);
        };
        let serial = st.serial;
        let Some(track) = st.track else { return Ok(None) };
        let mut head = [0u8; 16];
        packet_head(src, ctx, serial, ex, &mut head)?;
        let Some(cur) = self.run.cur.as_ref() else {
            return Ok(None);
        };
        let Some(st) = self.run.streams.get_mut(ex.stream) else {
            return Ok(None);
        };
        let view = PacketView {
            size: ex.size,
            head,
            page_flags: st.flags,
            lacing: cur.page.lacing(),
            segp: cur.segp,
            starts: &self.starts,
        };
        let t = st.state.packet(&mut st.timing, &view);
        if t.drop {
            ctx.diags.report("ogg.invalid-packet", ex.loc.start);
            return Ok(None);
        }
        let page_end = !view.lacing.get(view.segp..).unwrap_or(&[]).iter().any(|&s| s < 255);
        let mut key = t.key;
        // ogg_calc_pts: the pts and dts set for this packet, and the page
        // granule for the next one once the page's last packet is taken.
        let mut pts = st.timing.lastpts;
        let mut dts = st.timing.lastdts;
        st.timing.lastpts = NOPTS;
        st.timing.lastdts = NOPTS;
        if page_end && st.timing.granule != NO_GRANULE {
            let (g, k) = st.state.granule_to_ts(st.timing.granule);
            key |= k;
            st.timing.lastpts = g;
            st.timing.lastdts = g;
            st.timing.granule = NO_GRANULE;
        }
        let is_video = matches!(st.state, CodecState::Theora(_));
        if is_video {
            // ogg_validate_keyframe: the frame type bit wins.
            if ex.size > 0 {
                key = head[0] & 0x40 == 0;
            }
        } else {
            key = true;
        }
        // compute_pkt_fields for streams without reordering; a video
        // packet without a duration lasts one tick of its frame-rate time
        // base.
        let duration = if is_video && t.duration == 0 {
            1
        } else {
            t.duration as u64
        };
        // Streams that go through an ffmpeg parser (FLAC, Theora) lose their
        // empty packets there, after their timing is counted.
        let parsed = matches!(st.state, CodecState::Flac(_) | CodecState::Theora(_));
        if pts != NOPTS || dts != NOPTS || duration > 0 {
            if pts == NOPTS {
                pts = dts;
            }
            if pts != NOPTS && st.cur_dts.is_none() {
                st.cur_dts = Some(pts);
            }
            if pts == NOPTS {
                pts = st.cur_dts.unwrap_or(NOPTS);
            }
            dts = pts;
            if pts != NOPTS {
                st.cur_dts = Some(pts.saturating_add(duration as i64));
            }
        }
        if let Some(l) = self.run.land {
            if l.stream == ex.stream && self.run.cur.as_ref().is_some_and(|c| c.page.offset == l.page) {
                return Ok(None);
            }
        }
        if let Some(skip) = self.run.skip {
            if skip.stream == ex.stream {
                let before = if pts == NOPTS {
                    true
                } else if skip.video {
                    pts < skip.target || !key
                } else {
                    pts.saturating_add(duration as i64) <= skip.target && duration > 0
                };
                if before {
                    return Ok(None);
                }
                self.run.skip = None;
            }
        }
        if parsed && ex.size == 0 {
            return Ok(None);
        }
        Ok(Some(Meta {
            track,
            serial,
            pts: opt(pts),
            dts: opt(dts),
            duration,
            key,
        }))
    }
}

/// The timing of a packet about to be delivered.
#[derive(Debug, Clone, Copy)]
struct Meta {
    track: usize,
    serial: u32,
    pts: Option<i64>,
    dts: Option<i64>,
    duration: u64,
    key: bool,
}

/// The packet's bytes: a slice of the input when it lies on one page, else
/// joined in scratch.
fn emit<'s, S: Source>(src: &'s mut S, ctx: &Context, ex: Extracted, m: Meta) -> Result<Packet<'s>> {
    let (data, contiguous) = if ex.pieces.len() <= 1 && !ex.overflow {
        let p = ex.pieces.first().copied().unwrap_or(Piece {
            off: ex.loc.start,
            len: 0,
        });
        (src.bytes(p.off, p.len as usize)?, true)
    } else {
        if (ex.size as usize) > src.scratch_len() {
            return Err(Error::new(
                ErrorKind::ScratchTooSmall,
                ex.loc.start,
                "scratch too small to join an Ogg packet that spans pages",
            ));
        }
        if ex.overflow {
            let mut w = Walker::new(m.serial, ex.loc);
            w.gather(src, ctx.limits.resync_bytes, ex.size)?;
        } else {
            let mut at = 0usize;
            for p in &ex.pieces {
                src.gather(p.off, p.len as usize, at)?;
                at += p.len as usize;
            }
        }
        let src: &'s S = src;
        (src.joined(ex.size as usize)?, false)
    };
    Ok(Packet {
        track: m.track,
        pts: m.pts,
        dts: m.dts,
        duration: (m.duration > 0).then_some(m.duration),
        flags: PacketFlags {
            keyframe: m.key,
            ..PacketFlags::default()
        },
        pos: Some(ex.loc.start),
        contiguous,
        data,
    })
}

impl OggDemuxer {
    /// The end time of a page of stream `st` on its pts scale (Opus pts
    /// are granule minus pre-skip).
    fn page_end_ts(st: &Stream, granule: u64) -> i64 {
        let (t, _) = st.state.granule_to_ts(granule);
        match st.state {
            CodecState::Opus(o) => t.wrapping_sub(o.pre_skip as i64),
            _ => t,
        }
    }

    /// The first page of `serial` with a granule, at or after `from` and
    /// before `until`.
    fn granule_page_after<S: Source>(src: &mut S, from: u64, until: u64, serial: u32) -> Result<Option<Page>> {
        let mut at = from;
        while at < until {
            let p = match find_page(src, at, until - at)? {
                Found::Page(p, _, _) => p,
                _ => return Ok(None),
            };
            if p.offset >= until {
                return Ok(None);
            }
            if p.serial == serial && p.granule != NO_GRANULE {
                return Ok(Some(p));
            }
            at = p.end();
        }
        Ok(None)
    }

    /// The last page of stream `si` whose packets end at or before `target`
    /// (bisection on granule positions, then a short linear scan).
    fn last_page_before<S: Source>(&self, src: &mut S, si: usize, target: i64) -> Result<Option<Page>> {
        let Some(st) = self.run.streams.get(si) else {
            return Ok(None);
        };
        let serial = st.serial;
        let mut lo = self.data_start;
        let mut best: Option<Page> = None;
        let mut hi = src.len();
        let mut rounds = 0;
        while hi.saturating_sub(lo) > 2 * MAX_PAGE && rounds < 64 {
            rounds += 1;
            let mid = lo + (hi - lo) / 2;
            match Self::granule_page_after(src, mid, hi, serial)? {
                Some(p) if Self::page_end_ts(st, p.granule) <= target => {
                    lo = p.offset;
                    best = Some(p);
                }
                _ => hi = mid,
            }
        }
        let mut at = lo;
        let len = src.len();
        while let Some(p) = Self::granule_page_after(src, at, len, serial)? {
            if Self::page_end_ts(st, p.granule) > target {
                break;
            }
            best = Some(p);
            at = p.end();
        }
        Ok(best)
    }

    /// Positions reading at page `page` (or at the start after the headers
    /// when `None`), dropping the packets of stream `si` before the landing
    /// packet.
    fn resume_at<S: Source>(
        &mut self,
        src: &mut S,
        ctx: &mut Context,
        page: Option<Page>,
        si: usize,
        target: i64,
        video: bool,
    ) -> Result<()> {
        let skip = Some(SeekSkip {
            stream: si,
            target,
            video,
        });
        let Some(page) = page else {
            self.run = Run::new();
            self.read_headers(src, ctx)?;
            self.run.skip = skip;
            return Ok(());
        };
        for st in self.run.streams.iter_mut() {
            st.psize = 0;
            st.pieces.clear();
            st.overflow = false;
            st.incomplete = false;
            st.timing.granule = NO_GRANULE;
            st.timing.lastpts = NOPTS;
            st.timing.lastdts = NOPTS;
            st.cur_dts = None;
        }
        self.run.land = Some(Land {
            stream: si,
            page: page.offset,
            granule: page.granule,
        });
        self.run.cur = None;
        self.run.pending = None;
        self.run.next_page = page.offset;
        self.run.skip = skip;
        self.run.done = false;
        Ok(())
    }

    /// Seeks stream `track` to `ts` (in its time base): audio lands on the
    /// packet holding `ts`, video on the keyframe at or before it.
    fn seek_to<S: Source>(&mut self, src: &mut S, ctx: &mut Context, track: usize, ts: i64) -> Result<()> {
        let Some(si) = self.run.streams.iter().position(|s| s.track == Some(track)) else {
            return Err(Error::new(ErrorKind::InvalidArgument, 0, "no such Ogg track"));
        };
        let video = ctx.tracks.get(track).is_some_and(|t| t.kind == TrackKind::Video);
        let page = self.last_page_before(src, si, ts)?;
        if !video {
            self.resume_at(src, ctx, page, si, ts, false)?;
            return Ok(());
        }
        // Video: the keyframe the page's granule names (RFC: the high bits
        // count keyframes), or a later one at or before `ts` found by
        // reading on.
        let mut key = 0i64;
        if let (Some(p), Some(st)) = (page, self.run.streams.get(si)) {
            if let CodecState::Theora(t) = st.state {
                let shift = t.shift.min(63) as u32;
                let (k, _) = codec::theora_frame(&t, (p.granule >> shift) << shift);
                key = k.saturating_sub(1).max(0);
            }
        }
        self.resume_at(src, ctx, page, si, i64::MIN, false)?;
        self.run.skip = None;
        let mut walked = 0u32;
        while walked < ctx.limits.max_fragments {
            walked += 1;
            let Some(ex) = self.run.extract(src, ctx, &mut self.starts)? else {
                break;
            };
            if ex.stream != si {
                continue;
            }
            let done = self.run.streams.get(ex.stream).is_none_or(|s| s.headers_done);
            if !done && self.take_header(src, ctx, &ex)? {
                continue;
            }
            let Some(m) = self.timing(src, ctx, &ex)? else { continue };
            match m.pts {
                Some(p) if p > ts => break,
                Some(p) if m.key => key = p,
                _ => {}
            }
        }
        let page = self.last_page_before(src, si, key)?;
        self.resume_at(src, ctx, page, si, key, true)?;
        Ok(())
    }
}

impl FormatDemuxer for OggDemuxer {
    fn open<S: Source>(src: &mut S, ctx: &mut Context) -> Result<Self> {
        let mut head = [0u8; 5];
        src.read_exact_at(0, &mut head)?;
        if &head != b"OggS\0" {
            return Err(Error::malformed(0, "not an Ogg page (RFC 3533 §6)"));
        }
        let mut d = OggDemuxer {
            run: Run::new(),
            data_start: 0,
            starts: [[0; 2]; 255],
            opened: false,
            tags: TagWalk::default(),
        };
        d.read_headers(src, ctx)?;
        if ctx.tracks.is_empty() {
            return Err(Error::unsupported(0, "no Ogg stream of a supported codec"));
        }
        for st in &d.run.streams {
            if st.track.is_some() && st.nb_header < st.codec.header_count() && st.headers_done {
                ctx.diags.report("ogg.missing-headers", 0);
            }
        }
        d.data_start = d.run.cur.as_ref().map_or(d.run.next_page, |c| c.page.offset);
        d.scan_durations(src, ctx)?;
        ctx.info.start_us = Some(0);
        d.opened = true;
        Ok(d)
    }

    fn next_packet<'s, S: Source>(&mut self, src: &'s mut S, ctx: &mut Context) -> Result<Option<Packet<'s>>> {
        if self.run.done {
            return Ok(None);
        }
        loop {
            let ex = match self.run.pending.take() {
                Some(ex) => ex,
                None => match self.run.extract(src, ctx, &mut self.starts) {
                    Ok(Some(ex)) => ex,
                    Ok(None) => {
                        self.run.done = true;
                        return Ok(None);
                    }
                    Err(e) => {
                        self.run.done = true;
                        return Err(e);
                    }
                },
            };
            let Some(st) = self.run.streams.get(ex.stream) else {
                continue;
            };
            if st.broken {
                continue;
            }
            if !st.headers_done && self.take_header(src, ctx, &ex)? {
                continue;
            }
            let Some(meta) = self.timing(src, ctx, &ex)? else {
                continue;
            };
            return emit(src, ctx, ex, meta).map(Some);
        }
    }

    fn seek<S: Source>(&mut self, src: &mut S, ctx: &mut Context, track: usize, ts: i64) -> Result<()> {
        self.seek_to(src, ctx, track, ts)
    }

    fn next_tag<'s, S: Source>(
        &mut self,
        src: &'s mut S,
        ctx: &Context,
        cur: &mut TagCursor,
    ) -> Result<Option<Tag<'s>>> {
        if cur.stage == 0 {
            cur.stage = 1;
            self.tags = TagWalk::default();
        }
        let resync = ctx.limits.resync_bytes;
        loop {
            if !self.tags.active {
                let Some(st) = self.run.streams.get(self.tags.stream) else {
                    return Ok(None);
                };
                let (Some((loc, skip)), Some(_)) = (st.comment, st.track) else {
                    self.tags.stream += 1;
                    continue;
                };
                let mut w = Walker::new(st.serial, loc);
                w.skip(src, resync, skip)?;
                let mut b = [0u8; 4];
                let mut remaining = 0;
                if w.read(src, resync, &mut b)? == 4 {
                    w.skip(src, resync, u32::from_le_bytes(b))?;
                    if w.read(src, resync, &mut b)? == 4 {
                        remaining = u32::from_le_bytes(b);
                    }
                }
                self.tags.walker = w;
                self.tags.remaining = remaining;
                self.tags.active = true;
            }
            let stream = self.tags.stream;
            let Some(track) = self.run.streams.get(stream).and_then(|s| s.track) else {
                self.tags.active = false;
                self.tags.stream += 1;
                continue;
            };
            let mut b = [0u8; 4];
            if self.tags.remaining == 0 || self.tags.walker.read(src, resync, &mut b)? < 4 {
                self.tags.active = false;
                self.tags.stream += 1;
                continue;
            }
            self.tags.remaining -= 1;
            let len = u32::from_le_bytes(b);
            if len > self.tags.walker.remaining {
                self.tags.remaining = 0;
                continue;
            }
            if len > ctx.limits.max_tag_bytes {
                self.tags.walker.skip(src, resync, len)?;
                continue;
            }
            let w = self.tags.walker;
            let in_page = w.body_end.saturating_sub(w.pos) >= len as u64 && w.pos < w.body_end;
            if in_page {
                let off = w.pos;
                self.tags.walker.skip(src, resync, len)?;
                let ok = split_entry(src.bytes(off, len as usize)?).is_some();
                if !ok {
                    continue;
                }
                let entry = src.bytes(off, len as usize)?;
                let (key, value) = split_entry(entry).ok_or(Error::malformed(off, "Vorbis comment entry"))?;
                return Ok(Some(Tag {
                    scope: TagScope::Track(track),
                    key: TagKey::Text(key),
                    name: common_name(key),
                    value,
                }));
            }
            if (len as usize) > src.scratch_len() {
                self.tags.walker.skip(src, resync, len)?;
                continue;
            }
            let got = self.tags.walker.gather(src, resync, len)?;
            let ok = split_entry(src.joined(got)?).is_some();
            if !ok {
                continue;
            }
            let src: &'s S = src;
            let entry = src.joined(got)?;
            let (key, value) = split_entry(entry).ok_or(Error::malformed(0, "Vorbis comment entry"))?;
            return Ok(Some(Tag {
                scope: TagScope::Track(track),
                key: TagKey::Text(key),
                name: common_name(key),
                value,
            }));
        }
    }

    fn header_packet<'s, S: Source>(
        &mut self,
        src: &'s mut S,
        ctx: &Context,
        track: usize,
        index: usize,
    ) -> Result<Option<&'s [u8]>> {
        let Some(st) = self.run.streams.iter().find(|s| s.track == Some(track)) else {
            return Ok(None);
        };
        let Some(Some(loc)) = st.headers.get(index).copied() else {
            return Ok(None);
        };
        if loc.start + loc.len as u64 <= loc.body_end {
            return Ok(Some(src.bytes(loc.start, loc.len as usize)?));
        }
        if loc.len as usize > src.scratch_len() {
            return Err(Error::new(
                ErrorKind::ScratchTooSmall,
                loc.start,
                "scratch too small to join an Ogg header packet",
            ));
        }
        let mut w = Walker::new(st.serial, loc);
        let got = w.gather(src, ctx.limits.resync_bytes, loc.len)?;
        let src: &'s S = src;
        Ok(Some(src.joined(got)?))
    }
}

#[cfg(test)]
mod tests;
