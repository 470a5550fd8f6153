//! The FLAC demuxer: its state, `open` (ID3v2 tags, metadata, the first
//! frame, the tracks), packets (pictures, data before the first frame, then
//! frames timed as ffmpeg times them) and seeking (SEEKTABLE or bisection,
//! then a walk over frames).

use super::frame_scan::{find_first_frame, find_first_frame_near, find_frame_end, FrameEnd};
use super::{MAX_APPLICATIONS, MAX_PICTURES};
use crate::error::{Error, Result};
use crate::format::es::id3::{FrameWalk, Id3v2};
use crate::format::traits::{Context, FormatDemuxer};
use crate::format::xiph::comment::CommentCursor;
use crate::format::xiph::flac::{FrameHeader, Picture, StreamInfo, MAX_FRAME_HEADER, STREAMINFO_LEN};
use crate::source::Source;
use crate::tags::{Tag, TagCursor};
use crate::types::{ByteRange, Codec, Packet, PacketFlags, Rational, Track, TrackKind};

/// Most ID3v2 tags kept in front of `fLaC` (more are skipped, reported
/// with `flac.id3-capacity`).
pub(super) const MAX_ID3_TAGS: usize = 4;
/// Most rounds of the seek's bisection on frame headers (each halves the
/// interval; 64 cover any 64-bit offset).
const MAX_BISECTION_ROUNDS: u32 = 64;
/// The seek's bisection stops once the interval is this short (64 KiB);
/// frames are walked from there.
const BISECTION_SPAN: u64 = 1 << 16;
/// Bytes of a SEEKTABLE seek point (§8.5): sample number, offset, samples.
const SEEK_POINT: u64 = 18;

/// Demuxer state for native FLAC.
#[derive(Debug, Clone)]
pub struct FlacDemuxer {
    /// First byte after the metadata.
    pub(super) data_start: u64,
    /// Offset of the next packet.
    pub(super) pos: u64,
    /// The frame header at `pos`, once known.
    pub(super) next: Option<FrameHeader>,
    /// The first frame, when data precedes it.
    pub(super) first: Option<(u64, FrameHeader)>,
    /// The input ends inside the header at `pos`.
    pub(super) cut: bool,
    /// STREAMINFO, when present.
    pub(super) info: Option<StreamInfo>,
    pub(super) streaminfo_at: Option<u64>,
    /// The audio track's sample rate (its time base is 1/rate).
    pub(super) rate: u32,
    /// End of the previous frame in time-base ticks.
    pub(super) prev_end: Option<i64>,
    /// Block size of the previous frame, 0 before the first.
    pub(super) prev_block: u32,
    pub(super) pictures: heapless::Vec<(Picture, usize), MAX_PICTURES>,
    pub(super) next_picture: usize,
    pub(super) vorbis: Option<ByteRange>,
    pub(super) seektable: Option<ByteRange>,
    pub(super) cuesheet: Option<ByteRange>,
    pub(super) applications: heapless::Vec<ByteRange, MAX_APPLICATIONS>,
    /// The ID3v2 tags in front of `fLaC`.
    pub(super) id3: heapless::Vec<Id3v2, MAX_ID3_TAGS>,
    /// The frame walk of the ID3v2 tag the tag walk is in.
    pub(super) id3_walk: Option<FrameWalk>,
    pub(super) comments: CommentCursor,
}

/// Rescales `samples` at `rate` Hz to ticks of 1/`base` Hz, rounding down as
/// ffmpeg's parser does.
fn ticks(samples: u32, rate: u32, base: u32) -> u64 {
    if rate == 0 || rate == base {
        return samples as u64;
    }
    samples as u64 * base as u64 / rate as u64
}

impl FlacDemuxer {
    /// The state before anything is read.
    fn empty() -> Self {
        FlacDemuxer {
            data_start: 0,
            pos: 0,
            next: None,
            first: None,
            cut: false,
            info: None,
            streaminfo_at: None,
            rate: 0,
            prev_end: Some(0),
            prev_block: 0,
            pictures: heapless::Vec::new(),
            next_picture: 0,
            vorbis: None,
            seektable: None,
            cuesheet: None,
            applications: heapless::Vec::new(),
            id3: heapless::Vec::new(),
            id3_walk: None,
            comments: CommentCursor::default(),
        }
    }

    /// The pts of a frame, and whether ffmpeg would know it from the frame
    /// alone.
    #[inline]
    fn frame_pts(&self, h: &FrameHeader, has_next: bool) -> i64 {
        let own = if h.variable {
            h.number
        } else {
            h.number.saturating_mul(h.block_size as u64)
        };
        let own = own.min(i64::MAX as u64) as i64;
        if h.variable || has_next {
            own
        } else {
            // ffmpeg has no timestamp for a frame with no successor and
            // continues from the previous one (from 0 at the start).
            self.prev_end.unwrap_or(own)
        }
    }

    /// The sample number where a frame starts (for seeking).
    #[inline]
    fn frame_start(&self, h: &FrameHeader) -> u64 {
        if h.variable {
            h.number
        } else {
            let bs = match self.info {
                Some(i) if i.min_block_size == i.max_block_size && i.max_block_size > 0 => i.max_block_size as u32,
                _ => h.block_size,
            };
            h.number.saturating_mul(bs as u64)
        }
    }

    /// Finds the first frame from `at` (the data start): the next packet is
    /// its frame, or the data before it.
    fn locate_first_frame<S: Source>(&mut self, src: &mut S, ctx: &mut Context, at: u64) -> Result<()> {
        self.data_start = at;
        self.pos = at;
        match find_first_frame(src, ctx, at)? {
            Some((off, h)) if off == at => self.next = Some(h),
            Some((off, h)) => {
                ctx.diags.report("flac.junk-before-frames", at);
                self.first = Some((off, h));
            }
            None => {
                if at < src.len() {
                    ctx.diags.report("flac.no-frames", at);
                }
                self.pos = src.len();
            }
        }
        Ok(())
    }

    /// Adds the audio track (from STREAMINFO, else the first frame header)
    /// and a track per attached picture; sets the duration and bit rate.
    fn add_tracks(&mut self, ctx: &mut Context, file_len: u64, first_header: Option<FrameHeader>) {
        let (rate, channels, bits) = match (self.info, first_header) {
            (Some(i), _) => (i.sample_rate, i.channels, i.bits_per_sample),
            (None, Some(h)) => (h.sample_rate, h.channels, h.bits_per_sample),
            (None, None) => (0, 0, 0),
        };
        self.rate = if rate > 0 {
            rate
        } else {
            first_header.map_or(0, |h| h.sample_rate)
        };
        let total = self.info.map_or(0, |i| i.total_samples);
        let duration = (total > 0 && self.rate > 0).then_some(total);
        let track = Track {
            id: 0,
            kind: TrackKind::Audio,
            codec: Codec::Flac,
            time_base: Rational::new(1, self.rate.max(1)),
            duration,
            sample_rate: self.rate,
            channels: channels as u16,
            bits_per_sample: bits as u16,
            config: self.streaminfo_at.map(|o| ByteRange {
                offset: o,
                len: STREAMINFO_LEN as u32,
            }),
            ..Track::default()
        };
        let tb = track.time_base;
        ctx.add_track(track, self.data_start);
        for (p, t) in self.pictures.iter_mut() {
            let track = Track {
                id: 0,
                kind: TrackKind::Video,
                codec: p.codec,
                time_base: Rational::new(1, 90000),
                width: p.width,
                height: p.height,
                frames: Some(1),
                attached_picture: true,
                ..Track::default()
            };
            *t = ctx.add_track(track, p.data.offset).unwrap_or(usize::MAX);
        }
        if let Some(dur) = duration {
            ctx.info.duration_us = Some(tb.to_micros(dur as i64).max(0) as u64);
            let secs_num = dur.saturating_mul(tb.num as u64);
            ctx.info.bit_rate = file_len
                .saturating_mul(8)
                .saturating_mul(tb.den as u64)
                .checked_div(secs_num);
        }
        ctx.info.start_us = Some(0);
    }

    /// The next attached picture with a track: its data and track.
    fn next_picture(&mut self) -> Option<(ByteRange, usize)> {
        while let Some(&(p, track)) = self.pictures.get(self.next_picture) {
            self.next_picture += 1;
            if track != usize::MAX {
                return Some((p.data, track));
            }
        }
        None
    }

    /// Data before the first frame (at `first`): one packet, as ffmpeg's
    /// parser delivers it, timed just before the first frame.
    fn leading_packet<'s, S: Source>(&mut self, src: &'s mut S, start: u64) -> Result<Option<Packet<'s>>> {
        let Some((first, fh)) = self.first else {
            self.pos = src.len();
            return Ok(None);
        };
        let len = usize::try_from(first - start).map_err(|_| {
            Error::limit(
                start,
                &"flac: data before the first frame longer than the address space (RFC 9639 §9)",
            )
        })?;
        let data = src.bytes(start, len)?;
        self.pos = first;
        self.next = Some(fh);
        let dur = ticks(
            fh.block_size,
            if fh.sample_rate > 0 { fh.sample_rate } else { self.rate },
            self.rate,
        );
        let pts = self.frame_pts(&fh, true).saturating_sub(dur as i64);
        Ok(Some(
            Packet::contiguous(0, start, data)
                .with_times(Some(pts), Some(pts), Some(dur))
                .with_flags(PacketFlags::keyframe(true)),
        ))
    }

    /// The frame with header `h` at `start`, ended by `fe`: timed, and the
    /// state moved past it.
    #[inline]
    fn frame_packet<'s, S: Source>(
        &mut self,
        src: &'s mut S,
        ctx: &mut Context,
        start: u64,
        h: FrameHeader,
        fe: FrameEnd,
    ) -> Result<Option<Packet<'s>>> {
        let file_len = src.len();
        if !fe.crc_ok && fe.next.is_some() {
            ctx.diags.report("flac.frame-crc-mismatch", start);
        }
        let rate = if h.sample_rate > 0 { h.sample_rate } else { self.rate };
        let duration = ticks(h.block_size, rate, self.rate);
        // A frame cut by the end of the input is timed as in the whole file:
        // by its number, unless it is the last frame: STREAMINFO's sample
        // count ends with it, or its block size differs from the previous
        // frame's (only the last block of a fixed-size stream may).
        let cut_short = fe.next.is_none() && !fe.crc_ok;
        let total = self.info.map_or(0, |i| i.total_samples);
        let last = (total > 0 && self.frame_start(&h).saturating_add(h.block_size as u64) >= total)
            || (!h.variable && self.prev_block != 0 && self.prev_block != h.block_size);
        // A frame that a (cut or unproven) header ends is timed as one with
        // a next frame: the whole input has one there.
        let followed = fe.next.is_some() || (fe.cut && fe.end < file_len);
        if cut_short && followed && last && self.frame_pts(&h, true) != self.frame_pts(&h, false) {
            // A damaged frame that ends where the end of the input cuts a
            // header (or at an unproven repeated number), but that the
            // stream's length or a changed block size says is the last: the
            // whole input times it by its number if that header is real, as
            // the previous frame's end if not. The two differ and the bytes
            // that decide it are past the end, so the frame is not given (a
            // `truncation` find). A damaged frame that simply runs to the end
            // is timed as the last, as ffmpeg times it.
            self.pos = file_len;
            return Err(Error::truncated(
                start,
                &"flac frame: input ends where a frame header may begin, before the damaged frame before it can be timed (RFC 9639 §9.1)",
            ));
        }
        self.prev_block = h.block_size;
        let pts = self.frame_pts(&h, followed || (cut_short && !last));
        self.prev_end = Some(pts.saturating_add(duration as i64));
        self.pos = fe.end;
        self.next = fe.next;
        self.cut = fe.cut;
        let len = usize::try_from(fe.end - start)
            .map_err(|_| Error::limit(start, &"flac frame: longer than the address space (RFC 9639 §9)"))?;
        let data = if src.is_slice() {
            src.bytes(start, len)?
        } else {
            // The scan gathered the frame into scratch.
            let src: &'s S = src;
            src.joined(len)?
        };
        // The last frame, whose CRC-16 fails: most likely cut short.
        let flags = PacketFlags {
            truncated: cut_short,
            ..PacketFlags::keyframe(true)
        };
        Ok(Some(
            Packet::contiguous(0, start, data)
                .with_times(Some(pts), Some(pts), Some(duration))
                .with_flags(flags),
        ))
    }

    /// The seek's starting frame for `target`: the last SEEKTABLE point
    /// (§8.5) at or before it, else found by bisection on frame headers.
    fn seek_start<S: Source>(&self, src: &mut S, first: (u64, FrameHeader), target: u64) -> Result<(u64, FrameHeader)> {
        let (first_off, first_h) = first;
        let mut start = first;
        if let Some(st) = self.seektable {
            let n = st.len as u64 / SEEK_POINT;
            for i in 0..n {
                let b: [u8; SEEK_POINT as usize] = src.array(st.offset + i * SEEK_POINT)?;
                let sample = crate::bytes::be64(&b, 0).unwrap_or(u64::MAX);
                let offset = crate::bytes::be64(&b, 8).unwrap_or(0);
                if sample == u64::MAX {
                    continue;
                }
                if sample > target {
                    break;
                }
                let at = first_off.saturating_add(offset);
                let mut h = [0u8; MAX_FRAME_HEADER];
                let m = src.read_at(at, &mut h)?;
                if let Some(fh) = h.get(..m).and_then(FrameHeader::parse) {
                    if fh.variable == first_h.variable && self.frame_start(&fh) <= target {
                        start = (at, fh);
                    }
                }
            }
            return Ok(start);
        }
        // Bisection on frame headers.
        let mut lo = start;
        let mut hi = src.len();
        let mut rounds = 0;
        while hi.saturating_sub(lo.0) > BISECTION_SPAN && rounds < MAX_BISECTION_ROUNDS {
            rounds += 1;
            let mid = lo.0 + (hi - lo.0) / 2;
            match find_first_frame_near(src, mid, hi, &first_h)? {
                Some((at, fh)) if self.frame_start(&fh) <= target => lo = (at, fh),
                _ => hi = mid,
            }
        }
        Ok(lo)
    }
}

impl FormatDemuxer for FlacDemuxer {
    fn open<S: Source>(src: &mut S, ctx: &mut Context) -> Result<Self> {
        let file_len = src.len();
        let mut d = FlacDemuxer::empty();
        let mut at = d.skip_id3(src, ctx, 0)?;
        let mut marker = [0u8; 4];
        let n = src.read_at(at, &mut marker)?;
        if n == 4 && &marker == b"fLaC" {
            at = d.reads_metadata(src, ctx, at + 4)?;
            if d.info.is_none() {
                ctx.diags.report("flac.no-streaminfo", at);
            }
        }
        d.locate_first_frame(src, ctx, at)?;
        let first_header = d.next.or(d.first.map(|f| f.1));
        if d.info.is_none() && first_header.is_none() {
            return Err(Error::malformed(
                at,
                &"flac: no STREAMINFO and no frame header (RFC 9639 §8.2, §9.1)",
            ));
        }
        d.add_tracks(ctx, file_len, first_header);
        Ok(d)
    }

    fn next_packet<'s, S: Source>(&mut self, src: &'s mut S, ctx: &mut Context) -> Result<Option<Packet<'s>>> {
        // Attached pictures first, as ffmpeg queues them.
        if let Some((r, track)) = self.next_picture() {
            let data = src.bytes(r.offset, r.len as usize)?;
            return Ok(Some(
                Packet::contiguous(track, r.offset, data).with_flags(PacketFlags::keyframe(true)),
            ));
        }
        let file_len = src.len();
        if self.pos >= file_len {
            return Ok(None);
        }
        let start = self.pos;
        if self.cut {
            self.pos = file_len;
            return Err(Error::truncated(
                start,
                &"flac frame: input ends inside a frame header, or before the frame before it could be ended (RFC 9639 §9.1)",
            ));
        }
        let Some(h) = self.next else {
            return self.leading_packet(src, start);
        };
        let fe = find_frame_end(src, start, &h, ctx.limits.max_packet as u64)?;
        if cfg!(fuzzing) && fe.next.is_none() {
            // Without the CRC-16 a frame that no header ends (it runs to the
            // end of the input, or to a header the end cuts, or to a repeated
            // number the end leaves unproven) cannot be told from a cut one,
            // nor timed as the whole input would time it: stop before it, so
            // that a prefix of an input gives a prefix of its packets.
            self.pos = file_len;
            return Err(Error::truncated(
                start,
                &"flac frame: not ended by a frame header before the end of the input (RFC 9639 §9)",
            ));
        }
        self.frame_packet(src, ctx, start, h, fe)
    }

    fn seek<S: Source>(&mut self, src: &mut S, ctx: &mut Context, _track: usize, ts: i64) -> Result<()> {
        self.next_picture = self.pictures.len();
        let target = ts.max(0) as u64;
        let first = match self.first {
            Some(f) => f,
            None => {
                let Some(f) = find_first_frame(src, ctx, self.data_start)? else {
                    self.pos = src.len();
                    return Ok(());
                };
                f
            }
        };
        // Walk frames to the one holding the target, at most
        // `Limits::max_fragments` of them.
        let (mut at, mut h) = self.seek_start(src, first, target)?;
        let mut walked = 0u32;
        loop {
            walked += 1;
            if walked > ctx.limits.max_fragments {
                break;
            }
            let fe = find_frame_end(src, at, &h, ctx.limits.max_packet as u64)?;
            match fe.next {
                Some(nh) if self.frame_start(&nh) <= target && fe.end < src.len() => {
                    at = fe.end;
                    h = nh;
                }
                _ => break,
            }
        }
        self.pos = at;
        self.next = Some(h);
        self.cut = false;
        self.prev_block = 0;
        self.prev_end = Some(self.frame_start(&h).min(i64::MAX as u64) as i64);
        Ok(())
    }

    fn next_tag<'s, S: Source>(
        &mut self,
        src: &'s mut S,
        ctx: &Context,
        cur: &mut TagCursor,
    ) -> Result<Option<Tag<'s>>> {
        self.walk_tags(src, ctx, cur)
    }
}
