//! The demuxer: the open (header packets to tracks, durations from the
//! last granules), the packet loop with ffmpeg's timing, the codec
//! configuration and header packets. Seeking is in [`super::seek`], the tag
//! walk in [`super::tags`].

use crate::error::{Error, ErrorKind, Result};
use crate::format::traits::{Context, FormatDemuxer};
use crate::source::Source;
use crate::tags::{Tag, TagCursor};
use crate::types::{ByteRange, Packet, PacketFlags, Track};

use super::logical::{packet_head, Extracted, Piece, Run, Starts, Stream, Walker, MAX_STREAMS};
use super::mapping::{vorbis, CodecState, PacketView, RestSum, NOPTS};
use super::physical::{find_page, Found, MAX_PAGE, MAX_SEGMENTS, NO_GRANULE};
use super::tags::TagWalk;
use super::walk::PacketWalk;
#[cfg(feature = "ogg-pieces")]
use crate::pieces::PacketPieces;

/// Bytes of a header packet read to parse it.
const HEAD_BYTES: usize = 96;
/// Bytes read from the end of a Vorbis setup header to find its modes.
const SETUP_TAIL: usize = 1024;

/// Demuxer state for Ogg.
#[derive(Debug, Clone)]
pub struct OggDemuxer {
    /// The reading position and the streams' state.
    pub(super) run: Run,
    /// First page after the headers' pages (where data may begin).
    pub(super) data_start: u64,
    /// The first bytes of the packets that start on the current page.
    pub(super) starts: Starts,
    /// The open is done: the track list is fixed.
    pub(super) opened: bool,
    /// The later packets' durations summed for the last packet timed
    /// (one for all streams: it is keyed by the page, which has one).
    pub(super) rest: RestSum,
    /// Where the tag walk stands.
    pub(super) tags: TagWalk,
    /// Where the chapter walk stands in the comments.
    #[cfg(feature = "chapters")]
    pub(super) chapters: TagWalk,
    /// The attached pictures of the comments.
    #[cfg(feature = "ogg-pictures")]
    pub(super) pictures: super::pictures::Pictures,
    /// The walk over the pieces of the packet last handed out in pieces.
    #[cfg(feature = "ogg-pieces")]
    pub(super) walk: PacketWalk,
}

/// A timestamp, or `None` for ffmpeg's [`NOPTS`].
fn opt(ts: i64) -> Option<i64> {
    (ts != NOPTS).then_some(ts)
}

impl OggDemuxer {
    /// Reads from the start up to the first data packet of any stream, as
    /// ffmpeg's header phase does; leaves that packet pending. Run again
    /// (for a seek to the start) it finds the tracks it made the first time.
    pub(super) fn read_headers<S: Source>(&mut self, src: &mut S, ctx: &mut Context) -> Result<()> {
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
    pub(super) fn take_header<S: Source>(&mut self, src: &mut S, ctx: &mut Context, ex: &Extracted) -> Result<bool> {
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
        if out.needs_setup_tail && !self.read_setup_modes(src, ctx, ex)? {
            return Ok(true);
        }
        let opened = self.opened;
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
            register_track(st, ctx, info.track(st.serial), config, opened, ex.loc.start);
        }
        Ok(true)
    }

    /// Reads the modes from the end of a Vorbis setup header (Vorbis I
    /// §4.2.4) into the stream's state. Returns `false` when they are not
    /// found: the stream is then broken (`ogg.bad-header`).
    fn read_setup_modes<S: Source>(&mut self, src: &mut S, ctx: &mut Context, ex: &Extracted) -> Result<bool> {
        let Some(serial) = self.run.streams.get(ex.stream).map(|s| s.serial) else {
            return Ok(false);
        };
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
            return Ok(false);
        };
        let modes = vorbis::vorbis_modes(tail.get(..got).unwrap_or(&[]), ex.size as usize);
        match (&mut st.state, modes) {
            (CodecState::Vorbis(v), Some((count, long))) if v.blocksize[0] > 0 => v.set_modes(count, long),
            _ => {
                ctx.diags.report("ogg.bad-header", ex.loc.start);
                st.broken = true;
                return Ok(false);
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
    pub(super) fn timing<S: Source>(&mut self, src: &mut S, ctx: &mut Context, ex: &Extracted) -> Result<Option<Meta>> {
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
            page: cur.page.offset,
            size: ex.size,
            head,
            page_flags: st.flags,
            lacing: cur.page.lacing(),
            segp: cur.segp,
            starts: &self.starts,
        };
        let t = st.state.packet(&mut st.timing, &view, &mut self.rest);
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

    /// The next packet to deliver and its timing, or `None` at the end:
    /// the packet loop that [`FormatDemuxer::next_packet`] and the pieces
    /// share.
    #[inline(always)]
    fn next_ready<S: Source>(&mut self, src: &mut S, ctx: &mut Context) -> Result<Option<(Extracted, Meta)>> {
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
            return Ok(Some((ex, meta)));
        }
    }
}

/// Gives stream `st` the track `t` its identification header describes,
/// with the codec configuration `config`, or updates the configuration of
/// the track it has. Headers read again after a seek to the start find
/// their track; after the open no track is added (the track list is fixed
/// then), as ffmpeg gives up on streams that begin after data
/// (`ogg.late-stream`, reported at `at`).
fn register_track(st: &mut Stream, ctx: &mut Context, mut t: Track, config: Option<ByteRange>, opened: bool, at: u64) {
    if let Some(k) = st.track {
        if let Some(tr) = ctx.tracks.get_mut(k) {
            tr.config = config.or(tr.config);
        }
        return;
    }
    t.config = config;
    let known = ctx.tracks.iter().position(|k| k.id == t.id && k.codec == t.codec);
    st.track = match known {
        Some(k) => Some(k),
        None if opened => {
            ctx.diags.report("ogg.late-stream", at);
            None
        }
        None => ctx.add_track(t, at),
    };
    if st.track.is_none() {
        st.broken = true;
    }
}

/// The timing of a packet about to be delivered.
#[derive(Debug, Clone, Copy)]
pub(super) struct Meta {
    pub(super) track: usize,
    pub(super) serial: u32,
    pub(super) pts: Option<i64>,
    pub(super) dts: Option<i64>,
    pub(super) duration: u64,
    pub(super) key: bool,
}

/// The packet's bytes: a slice of the input when it lies on one page, else
/// joined in scratch by the packet's [`PacketWalk`].
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
                &"ogg packet: spans pages and is larger than the scratch it is joined in (RFC 3533 §5)",
            ));
        }
        PacketWalk::new(&ex, m.serial, ctx.limits.resync_bytes).gather(src)?;
        let src: &'s S = src;
        (src.joined(ex.size as usize)?, false)
    };
    let packet = if contiguous {
        Packet::contiguous(m.track, ex.loc.start, data)
    } else {
        Packet::joined(m.track, Some(ex.loc.start), data)
    };
    Ok(m.facts(packet))
}

impl Meta {
    /// `packet` with this timing and keyframe flag.
    #[inline(always)]
    fn facts<'s>(&self, packet: Packet<'s>) -> Packet<'s> {
        packet
            .with_times(self.pts, self.dts, (self.duration > 0).then_some(self.duration))
            .with_flags(PacketFlags::keyframe(self.key))
    }
}

impl FormatDemuxer for OggDemuxer {
    fn open<S: Source>(src: &mut S, ctx: &mut Context) -> Result<Self> {
        let mut head = [0u8; 5];
        src.read_exact_at(0, &mut head)?;
        if &head != b"OggS\0" {
            return Err(Error::malformed(
                0,
                &"ogg page: no capture pattern `OggS` of version 0 at the start (RFC 3533 §6)",
            ));
        }
        let mut d = OggDemuxer {
            run: Run::new(),
            data_start: 0,
            starts: [[0; 2]; MAX_SEGMENTS],
            opened: false,
            rest: RestSum::default(),
            tags: TagWalk::default(),
            #[cfg(feature = "chapters")]
            chapters: TagWalk::default(),
            #[cfg(feature = "ogg-pictures")]
            pictures: super::pictures::Pictures::default(),
            #[cfg(feature = "ogg-pieces")]
            walk: PacketWalk::default(),
        };
        d.read_headers(src, ctx)?;
        if ctx.tracks.is_empty() {
            return Err(Error::unsupported(
                0,
                &"ogg: no logical stream of a supported codec (RFC 3533 §4)",
            ));
        }
        for st in &d.run.streams {
            if st.track.is_some() && st.nb_header < st.codec.header_count() && st.headers_done {
                ctx.diags.report("ogg.missing-headers", 0);
            }
        }
        #[cfg(feature = "ogg-pictures")]
        d.pictures.scan(&d.run.streams, src, ctx)?;
        d.data_start = d.run.cur.as_ref().map_or(d.run.next_page, |c| c.page.offset);
        d.scan_durations(src, ctx)?;
        ctx.info.start_us = Some(0);
        d.opened = true;
        Ok(d)
    }

    fn next_packet<'s, S: Source>(&mut self, src: &'s mut S, ctx: &mut Context) -> Result<Option<Packet<'s>>> {
        #[cfg(feature = "ogg-pictures")]
        if self.pictures.pending() {
            return self.pictures.next_packet(src, ctx).map(Some);
        }
        match self.next_ready(src, ctx)? {
            Some((ex, meta)) => emit(src, ctx, ex, meta).map(Some),
            None => Ok(None),
        }
    }

    /// With `ogg-pieces`: a packet that spans pages is left in them, its
    /// pieces read by a [`PacketWalk`], the walk the join follows.
    #[cfg(feature = "ogg-pieces")]
    fn next_packet_pieces<'s, S: Source>(
        &'s mut self,
        src: &'s mut S,
        ctx: &mut Context,
    ) -> Result<Option<PacketPieces<'s, S>>> {
        #[cfg(feature = "ogg-pictures")]
        if self.pictures.pending() {
            return Ok(Some(PacketPieces::whole(self.pictures.next_packet(src, ctx)?)));
        }
        let Some((ex, meta)) = self.next_ready(src, ctx)? else {
            return Ok(None);
        };
        if ex.pieces.len() <= 1 && !ex.overflow {
            return Ok(Some(PacketPieces::whole(emit(src, ctx, ex, meta)?)));
        }
        self.walk = PacketWalk::new(&ex, meta.serial, ctx.limits.resync_bytes);
        let packet = meta.facts(Packet::joined(meta.track, Some(ex.loc.start), &[]));
        Ok(Some(PacketPieces::walk(packet, ex.size as usize, src, &mut self.walk)))
    }

    fn seek<S: Source>(&mut self, src: &mut S, ctx: &mut Context, track: usize, ts: i64) -> Result<()> {
        #[cfg(feature = "ogg-pictures")]
        self.pictures.finish();
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
            cur.offset = 0;
            self.tags = TagWalk::default();
        }
        #[cfg(feature = "ogg-pictures")]
        {
            let pictures = &self.pictures;
            let index = &mut cur.offset;
            self.tags
                .next_then(&self.run.streams, src, ctx, |src| pictures.next_tag(src, ctx, index))
        }
        #[cfg(not(feature = "ogg-pictures"))]
        self.tags.next(&self.run.streams, src, ctx)
    }

    #[cfg(feature = "chapters")]
    fn next_chapter<'s, S: Source>(
        &mut self,
        src: &'s mut S,
        ctx: &Context,
        cur: &mut crate::chapters::ChapterCursor,
    ) -> Result<Option<crate::chapters::Chapter<'s>>> {
        if cur.stage == 0 {
            cur.stage = 1;
            self.chapters = TagWalk::default();
        }
        super::chapters::next(&mut self.chapters, &self.run.streams, src, ctx)
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
                &"ogg header packet: spans pages and is larger than the scratch it is joined in (RFC 3533 §5)",
            ));
        }
        let mut w = Walker::new(st.serial, loc);
        let got = w.gather(src, ctx.limits.resync_bytes, loc.len)?;
        let src: &'s S = src;
        Ok(Some(src.joined(got)?))
    }
}
