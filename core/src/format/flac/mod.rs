//! Native FLAC (RFC 9639): the `fLaC` marker, metadata blocks and frames.
//!
//! * Metadata (§8): STREAMINFO (the track and its codec configuration),
//!   VORBIS_COMMENT (tags), PICTURE (an attached-picture track whose one
//!   packet is the picture, and a tag), SEEKTABLE (seeking), CUESHEET and
//!   APPLICATION (tags), PADDING (skipped). An ID3v2 tag in front of `fLaC`
//!   is skipped and its text frames are tags. A file that starts with a frame
//!   header and no `fLaC` is read as frames.
//! * Frames (§9) carry no length: a frame ends where the next frame header
//!   begins. A candidate header is a sync code whose header passes its CRC-8
//!   (§9.1.8); it ends the frame when the frame's CRC-16 (§9.3) checks over
//!   the bytes before it. When no CRC-16 checks (a damaged frame), the first
//!   candidate with the same stream parameters that continues (or, as
//!   ffmpeg's parser also accepts, repeats) the numbering (§9.1.5) ends it. Under `cfg(fuzzing)` the CRC-16 is not checked.
//! * Data before the first frame (after the metadata, or at the start of a
//!   headerless file) is delivered as one packet, as ffmpeg does.
//!
//! Timestamps follow ffmpeg: a fixed-block-size frame's pts is its frame
//! number times its block size, a variable one's is its sample number, the
//! last frame's is the previous frame's end.

mod id3;

use crate::error::{Error, ErrorKind, Result};
use crate::format::traits::{Context, FormatDemuxer};
use crate::format::xiph::comment::{common_name, split_entry, CommentCursor};
use crate::format::xiph::crc::crc16;
use crate::format::xiph::flac::{FrameHeader, Picture, StreamInfo, MAX_FRAME_HEADER, PICTURE_TYPES, STREAMINFO_LEN};
use crate::source::Source;
use crate::tags::{text_or_bytes, Tag, TagCursor, TagKey, TagScope, TagValue};
use crate::types::{ByteRange, Codec, Packet, PacketFlags, Rational, Track, TrackKind};
use id3::Id3Tag;

/// Most PICTURE blocks kept (each becomes a track); more are reported with
/// `flac.picture-capacity` and skipped.
pub const MAX_PICTURES: usize = 4;
/// Most APPLICATION blocks kept as tags.
pub const MAX_APPLICATIONS: usize = 4;
/// Most ID3v2 tags skipped in front of `fLaC`.
const MAX_ID3_TAGS: usize = 4;
/// Bytes examined per step of the frame scan.
const SCAN_CHUNK: usize = 4096;
/// How far the search for the first frame may validate one candidate.
const FIRST_FRAME_PROBE: u64 = 256 << 10;
/// How many candidates the search for the first frame validates.
const FIRST_FRAME_CANDIDATES: u32 = 16;

/// Metadata block types (RFC 9639 §8.1, table 2).
mod block {
    pub const STREAMINFO: u8 = 0;
    pub const PADDING: u8 = 1;
    pub const APPLICATION: u8 = 2;
    pub const SEEKTABLE: u8 = 3;
    pub const VORBIS_COMMENT: u8 = 4;
    pub const CUESHEET: u8 = 5;
    pub const PICTURE: u8 = 6;
}

/// Where a frame ends.
#[derive(Debug, Clone, Copy)]
struct FrameEnd {
    /// Offset of the first byte after the frame.
    end: u64,
    /// The header found there (none at the end of the input).
    next: Option<FrameHeader>,
    /// Whether the frame's CRC-16 checked.
    crc_ok: bool,
    /// Whether the input ends inside the next frame's header, or before a
    /// candidate end could be proven: the frame is the last one given.
    cut: bool,
}

/// Bytes of the input from `start`, grown on demand: borrowed from the input
/// in slice mode, gathered into scratch in reader mode, so that a frame is
/// read once both to find its end and to deliver it.
struct Window {
    start: u64,
    have: usize,
    slice: bool,
}

impl Window {
    fn new<S: Source>(src: &S, start: u64) -> Self {
        Window {
            start,
            have: 0,
            slice: src.is_slice(),
        }
    }

    /// Up to `want` bytes from the start (fewer at the end of the input, or
    /// when a reader's scratch is full).
    fn get<'s, S: Source>(&mut self, src: &'s mut S, want: usize) -> Result<&'s [u8]> {
        let avail = src.len().saturating_sub(self.start);
        let want = want.min(usize::try_from(avail).unwrap_or(usize::MAX));
        if self.slice {
            return src.bytes(self.start, want);
        }
        let want = want.min(src.scratch_len());
        if want > self.have {
            src.gather(self.start + self.have as u64, want - self.have, self.have)?;
            self.have = want;
        }
        let src: &'s S = src;
        src.joined(self.have)
    }
}

/// Scans for the end of the frame with header `h` at `start` (see the module
/// notes). `max_len` bounds the frame length.
///
/// Errors: `LimitExceeded` when no end is found within `max_len`;
/// `ScratchTooSmall` when a reader's scratch cannot hold the frame.
fn find_frame_end<S: Source>(src: &mut S, start: u64, h: &FrameHeader, max_len: u64) -> Result<FrameEnd> {
    let file_len = src.len();
    let mut win = Window::new(src, start);
    let mut crc = 0u16;
    let mut scanned = 0usize;
    let min_next = h.len as usize;
    let mut fallback: Option<(usize, FrameHeader)> = None;
    // The first header the end of the input cuts (before any fallback), and
    // whether the frame's CRC-16 checks up to it.
    let mut cut_header: Option<(usize, bool)> = None;
    loop {
        let w = win.get(src, scanned.saturating_add(SCAN_CHUNK + MAX_FRAME_HEADER))?;
        let wlen = w.len();
        let at_eof = start.saturating_add(wlen as u64) >= file_len;
        let limit = if at_eof {
            wlen
        } else {
            wlen.saturating_sub(MAX_FRAME_HEADER - 1)
        };
        if scanned >= limit {
            if !at_eof {
                return Err(Error::new(
                    ErrorKind::ScratchTooSmall,
                    start,
                    "FLAC frame larger than the scratch buffer",
                ));
            }
            // Under `cfg(fuzzing)` the CRC-16 is not checked here either: a
            // frame that runs to the end cannot be told from a cut one (a
            // `truncation` find: a prefix whose last bytes happened to be the
            // frame's CRC-16 took it as the first frame, the whole input,
            // whose frame runs on, did not).
            let whole_ok = !cfg!(fuzzing) && crc == 0;
            if let Some((p, ok)) = cut_header {
                // A header the end of the input cuts: the whole input may end
                // the frame at it (by its CRC-16, or by the numbering of a
                // damaged frame), so the frame ends there and the next is
                // cut, flagged unless its CRC-16 checks there. A CRC-16 that
                // checks over all the rest says the frame ends with the
                // input instead (the last byte of a file may be 0xFF).
                if ok || !whole_ok {
                    return Ok(FrameEnd {
                        end: start + p as u64,
                        next: None,
                        crc_ok: ok,
                        cut: true,
                    });
                }
            }
            if let Some((p, nh)) = fallback {
                // The input ends before the CRC had a frame's length past
                // the candidate to prove it false. A candidate that
                // continues the numbering ends the frame (a damaged frame
                // near the end of a file keeps the frames after it). One
                // that only repeats it may be a copy inside the frame, which
                // a longer input would end later (a `truncation` fuzz find):
                // the frame ends there, flagged, and it is the last.
                let repeat = !h.is_followed_by(&nh);
                return Ok(FrameEnd {
                    end: start + p as u64,
                    next: (!repeat).then_some(nh),
                    crc_ok: false,
                    cut: repeat,
                });
            }
            return Ok(FrameEnd {
                end: file_len,
                next: None,
                crc_ok: whole_ok,
                cut: false,
            });
        }
        let mut i = scanned;
        while i < limit {
            // A damaged frame: the CRC-16 gets a frame's length past the
            // numbering candidate to prove it false (a header at or before
            // `2p + MAX_FRAME_HEADER`), then the numbering is trusted. The
            // deadline is a position, not the first 0xFF byte after it: a
            // scan that found no 0xFF there took a later header, which a
            // prefix cut at that header's 0xFF did not (a `truncation` find).
            let deadline = fallback.map(|(p, _)| p.saturating_mul(2).saturating_add(MAX_FRAME_HEADER + 1));
            if let (Some(d), Some((p, nh))) = (deadline, fallback) {
                if i >= d {
                    return Ok(FrameEnd {
                        end: start + p as u64,
                        next: Some(nh),
                        crc_ok: false,
                        cut: false,
                    });
                }
            }
            let stop = deadline.map_or(limit, |d| d.min(limit));
            let rest = w.get(i..stop).unwrap_or(&[]);
            let Some(k) = rest.iter().position(|&b| b == 0xFF) else {
                crc = crc16(crc, rest);
                i = stop;
                continue;
            };
            crc = crc16(crc, rest.get(..k).unwrap_or(&[]));
            i += k;
            if i >= min_next && w.get(i + 1).is_none_or(|&b| b & 0xFE == 0xF8) {
                let end = (i + MAX_FRAME_HEADER).min(wlen);
                if let Some(nh) = w.get(i..end).and_then(FrameHeader::parse) {
                    let crc_ok = if cfg!(fuzzing) { h.is_followed_by(&nh) } else { crc == 0 };
                    if crc_ok {
                        return Ok(FrameEnd {
                            end: start + i as u64,
                            next: Some(nh),
                            crc_ok: true,
                            cut: false,
                        });
                    }
                    if fallback.is_none() && h.may_precede(&nh) {
                        fallback = Some((i, nh));
                    }
                } else if at_eof
                    && fallback.is_none()
                    && cut_header.is_none()
                    && w.get(i..end).is_some_and(FrameHeader::could_begin)
                {
                    // The input cuts a header here; decided at the end (see
                    // above). With a candidate pending, the end-of-input rule
                    // for it decides (the whole input would end the frame
                    // there first).
                    cut_header = Some((i, !cfg!(fuzzing) && crc == 0));
                }
            }
            crc = crc16(crc, &[0xFF]);
            i += 1;
        }
        scanned = i;
        if scanned as u64 > max_len {
            if let Some((p, nh)) = fallback {
                return Ok(FrameEnd {
                    end: start + p as u64,
                    next: Some(nh),
                    crc_ok: false,
                    cut: false,
                });
            }
            return Err(Error::limit(start, "FLAC frame longer than the packet limit"));
        }
    }
}

/// Finds the first frame at or after `from`: the header at `from` itself
/// when valid, else the first header within the resync limit whose frame's
/// CRC-16 checks.
fn find_first_frame<S: Source>(src: &mut S, ctx: &Context, from: u64) -> Result<Option<(u64, FrameHeader)>> {
    let file_len = src.len();
    let mut h = [0u8; MAX_FRAME_HEADER];
    let n = src.read_at(from, &mut h)?;
    if let Some(fh) = h.get(..n).and_then(FrameHeader::parse) {
        return Ok(Some((from, fh)));
    }
    let stop = from.saturating_add(ctx.limits.resync_bytes).min(file_len);
    let mut buf = [0u8; 512];
    let mut at = from;
    let mut tried = 0u32;
    while at < stop && tried < FIRST_FRAME_CANDIDATES {
        let n = src.read_at(at, &mut buf)?;
        if n < 2 {
            break;
        }
        let mut next_at = at + (n as u64) - 1;
        for k in 0..n - 1 {
            if buf.get(k) == Some(&0xFF) && buf.get(k + 1).is_some_and(|&b| b & 0xFE == 0xF8) {
                let pos = at + k as u64;
                let m = src.read_at(pos, &mut h)?;
                let Some(fh) = h.get(..m).and_then(FrameHeader::parse) else {
                    continue;
                };
                tried += 1;
                if tried > FIRST_FRAME_CANDIDATES {
                    break;
                }
                match find_frame_end(src, pos, &fh, FIRST_FRAME_PROBE) {
                    Ok(e) if e.crc_ok => return Ok(Some((pos, fh))),
                    // Without the CRC-16 (`cfg(fuzzing)`) a candidate whose
                    // frame the end of the input leaves unended is not
                    // disproved: a longer input may end it by the numbering.
                    // A later candidate lies inside that frame, so the search
                    // ends undecided (a `truncation` find: a prefix took a
                    // later candidate than the whole input). With the CRC-16
                    // such a frame failed its check, and the search goes on.
                    Ok(e) if cfg!(fuzzing) && (e.next.is_none() || e.cut) => return Ok(None),
                    // A failing reader is not a damaged candidate: say so
                    // rather than find no frame (a `slice_vs_stream` find: a
                    // forward-only reader gave no packet and no error).
                    Err(e) if matches!(e.kind(), ErrorKind::Io(_)) => return Err(e),
                    _ => {}
                }
                next_at = next_at.max(pos + 1);
            }
        }
        at = next_at;
    }
    Ok(None)
}

/// Demuxer state for native FLAC.
#[derive(Debug, Clone)]
pub struct FlacDemuxer {
    /// First byte after the metadata.
    data_start: u64,
    /// Offset of the next packet.
    pos: u64,
    /// The frame header at `pos`, once known.
    next: Option<FrameHeader>,
    /// The first frame, when data precedes it.
    first: Option<(u64, FrameHeader)>,
    /// The input ends inside the header at `pos`.
    cut: bool,
    /// STREAMINFO, when present.
    info: Option<StreamInfo>,
    streaminfo_at: Option<u64>,
    /// The audio track's sample rate (its time base is 1/rate).
    rate: u32,
    /// End of the previous frame in time-base ticks.
    prev_end: Option<i64>,
    /// Block size of the previous frame, 0 before the first.
    prev_block: u32,
    pictures: heapless::Vec<(Picture, usize), MAX_PICTURES>,
    next_picture: usize,
    vorbis: Option<ByteRange>,
    seektable: Option<ByteRange>,
    cuesheet: Option<ByteRange>,
    applications: heapless::Vec<ByteRange, MAX_APPLICATIONS>,
    id3: heapless::Vec<Id3Tag, MAX_ID3_TAGS>,
    comments: CommentCursor,
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
    /// The pts of a frame, and whether ffmpeg would know it from the frame
    /// alone.
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

    fn reads_metadata<S: Source>(&mut self, src: &mut S, ctx: &mut Context, mut at: u64) -> Result<u64> {
        let file_len = src.len();
        let mut blocks = 0u32;
        loop {
            blocks += 1;
            if blocks > ctx.limits.max_top_level {
                ctx.diags.report("flac.too-many-blocks", at);
                return Ok(at);
            }
            let h: [u8; 4] = match src.array(at) {
                Ok(h) => h,
                Err(e) if e.is_truncation() => {
                    ctx.diags.report("flac.truncated-metadata", at);
                    return Ok(file_len);
                }
                Err(e) => return Err(e),
            };
            let last = h[0] & 0x80 != 0;
            let kind = h[0] & 0x7F;
            let len = u32::from_be_bytes([0, h[1], h[2], h[3]]) as u64;
            let body = at + 4;
            let next = body + len;
            if next > file_len {
                ctx.diags.report("flac.block-beyond-eof", at);
            }
            if kind != block::STREAMINFO
                && self.info.is_none()
                && !matches!(kind, block::PICTURE | block::SEEKTABLE | block::CUESHEET)
            {
                // §8.2: STREAMINFO must come first; ffmpeg refuses the file.
                ctx.diags.report("flac.streaminfo-not-first", at);
            }
            let range = ByteRange {
                offset: body,
                len: len.min(file_len.saturating_sub(body)) as u32,
            };
            match kind {
                block::STREAMINFO => {
                    if self.info.is_some() {
                        ctx.diags.report("flac.duplicate-streaminfo", at);
                    } else if len != STREAMINFO_LEN as u64 {
                        ctx.diags.report("flac.bad-streaminfo", at);
                    } else {
                        let b: [u8; STREAMINFO_LEN] = src.array(body)?;
                        self.info = StreamInfo::parse(&b);
                        self.streaminfo_at = Some(body);
                    }
                }
                block::VORBIS_COMMENT => {
                    if self.vorbis.is_none() {
                        self.vorbis = Some(range);
                    }
                }
                block::SEEKTABLE => {
                    if self.seektable.is_none() {
                        self.seektable = Some(range);
                    }
                }
                block::CUESHEET => self.cuesheet = Some(range),
                block::APPLICATION => {
                    if len >= 4 && self.applications.push(range).is_err() {
                        ctx.diags.report("flac.application-capacity", at);
                    }
                }
                block::PICTURE => match Picture::read(src, body, range.len as u64)? {
                    Some(p) => {
                        if self.pictures.is_full() {
                            ctx.diags.report("flac.picture-capacity", at);
                        } else {
                            let _ = self.pictures.push((p, usize::MAX));
                        }
                    }
                    None => ctx.diags.report("flac.bad-picture", at),
                },
                block::PADDING => {}
                127 => ctx.diags.report("flac.invalid-block-type", at),
                _ => ctx.diags.report("flac.unknown-block", at),
            }
            if last || next >= file_len {
                return Ok(next.min(file_len));
            }
            at = next;
        }
    }
}

impl FormatDemuxer for FlacDemuxer {
    fn open<S: Source>(src: &mut S, ctx: &mut Context) -> Result<Self> {
        let file_len = src.len();
        let mut d = FlacDemuxer {
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
            comments: CommentCursor::default(),
        };
        let mut at = 0u64;
        while let Some(t) = id3::read_tag(src, at)? {
            if d.id3.push(t).is_err() {
                ctx.diags.report("flac.id3-capacity", at);
            }
            at = t.next;
        }
        let mut marker = [0u8; 4];
        let n = src.read_at(at, &mut marker)?;
        if n == 4 && &marker == b"fLaC" {
            at = d.reads_metadata(src, ctx, at + 4)?;
            if d.info.is_none() {
                ctx.diags.report("flac.no-streaminfo", at);
            }
        }
        d.data_start = at;
        d.pos = at;
        match find_first_frame(src, ctx, at)? {
            Some((off, h)) if off == at => d.next = Some(h),
            Some((off, h)) => {
                ctx.diags.report("flac.junk-before-frames", at);
                d.first = Some((off, h));
            }
            None => {
                if at < file_len {
                    ctx.diags.report("flac.no-frames", at);
                }
                d.pos = file_len;
            }
        }
        let first_header = d.next.or(d.first.map(|f| f.1));
        if d.info.is_none() && first_header.is_none() {
            return Err(Error::malformed(
                at,
                "no STREAMINFO and no frame header (RFC 9639 §8.2, §9.1)",
            ));
        }
        let (rate, channels, bits) = match (d.info, first_header) {
            (Some(i), _) => (i.sample_rate, i.channels, i.bits_per_sample),
            (None, Some(h)) => (h.sample_rate, h.channels, h.bits_per_sample),
            (None, None) => (0, 0, 0),
        };
        d.rate = if rate > 0 {
            rate
        } else {
            first_header.map_or(0, |h| h.sample_rate)
        };
        let total = d.info.map_or(0, |i| i.total_samples);
        let duration = (total > 0 && d.rate > 0).then_some(total);
        let track = Track {
            id: 0,
            kind: TrackKind::Audio,
            codec: Codec::Flac,
            time_base: Rational::new(1, d.rate.max(1)),
            duration,
            sample_rate: d.rate,
            channels: channels as u16,
            bits_per_sample: bits as u16,
            config: d.streaminfo_at.map(|o| ByteRange {
                offset: o,
                len: STREAMINFO_LEN as u32,
            }),
            ..Track::default()
        };
        let tb = track.time_base;
        ctx.add_track(track, d.data_start);
        for (p, t) in d.pictures.iter_mut() {
            let track = Track {
                id: 0,
                kind: TrackKind::Video,
                codec: p.codec,
                time_base: Rational::new(1, 90000),
                width: p.width,
                height: p.height,
                frames: Some(1),
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
        Ok(d)
    }

    fn next_packet<'s, S: Source>(&mut self, src: &'s mut S, ctx: &mut Context) -> Result<Option<Packet<'s>>> {
        // Attached pictures first, as ffmpeg queues them.
        while let Some(&(p, track)) = self.pictures.get(self.next_picture) {
            self.next_picture += 1;
            if track == usize::MAX {
                continue;
            }
            let data = src.bytes(p.data.offset, p.data.len as usize)?;
            return Ok(Some(Packet {
                track,
                pts: None,
                dts: None,
                duration: None,
                flags: PacketFlags {
                    keyframe: true,
                    ..PacketFlags::default()
                },
                pos: Some(p.data.offset),
                contiguous: true,
                data,
            }));
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
                "input ends inside a FLAC frame header, or before the frame before it could be ended",
            ));
        }
        let Some(h) = self.next else {
            // Data before the first frame: one packet, as ffmpeg's parser
            // delivers it, timed just before the first frame.
            let Some((first, fh)) = self.first else {
                self.pos = file_len;
                return Ok(None);
            };
            let len = usize::try_from(first - start).map_err(|_| Error::limit(start, "leading data too long"))?;
            let data = src.bytes(start, len)?;
            self.pos = first;
            self.next = Some(fh);
            let dur = ticks(
                fh.block_size,
                if fh.sample_rate > 0 { fh.sample_rate } else { self.rate },
                self.rate,
            );
            let pts = self.frame_pts(&fh, true).saturating_sub(dur as i64);
            return Ok(Some(Packet {
                track: 0,
                pts: Some(pts),
                dts: Some(pts),
                duration: Some(dur),
                flags: PacketFlags {
                    keyframe: true,
                    ..PacketFlags::default()
                },
                pos: Some(start),
                contiguous: true,
                data,
            }));
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
                "FLAC frame not ended by a header before the end of the input",
            ));
        }
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
                "input ends where a FLAC frame header may begin, before the damaged frame before it can be timed",
            ));
        }
        self.prev_block = h.block_size;
        let pts = self.frame_pts(&h, followed || (cut_short && !last));
        self.prev_end = Some(pts.saturating_add(duration as i64));
        self.pos = fe.end;
        self.next = fe.next;
        self.cut = fe.cut;
        let len = usize::try_from(fe.end - start).map_err(|_| Error::limit(start, "frame too long"))?;
        let data = if src.is_slice() {
            src.bytes(start, len)?
        } else {
            // The scan gathered the frame into scratch.
            let src: &'s S = src;
            src.joined(len)?
        };
        Ok(Some(Packet {
            track: 0,
            pts: Some(pts),
            dts: Some(pts),
            duration: Some(duration),
            flags: PacketFlags {
                keyframe: true,
                // The last frame, whose CRC-16 fails: most likely cut short.
                truncated: cut_short,
                ..PacketFlags::default()
            },
            pos: Some(start),
            contiguous: true,
            data,
        }))
    }

    fn seek<S: Source>(&mut self, src: &mut S, ctx: &mut Context, _track: usize, ts: i64) -> Result<()> {
        self.next_picture = self.pictures.len();
        let target = ts.max(0) as u64;
        let (first_off, first_h) = match (self.first, self.next) {
            (Some(f), _) => f,
            (None, _) => {
                let Some(f) = find_first_frame(src, ctx, self.data_start)? else {
                    self.pos = src.len();
                    return Ok(());
                };
                f
            }
        };
        let mut start = (first_off, first_h);
        // SEEKTABLE (§8.5): the last seek point at or before the target.
        if let Some(st) = self.seektable {
            let n = st.len as u64 / 18;
            for i in 0..n {
                let b: [u8; 18] = src.array(st.offset + i * 18)?;
                let mut s = [0u8; 8];
                s.copy_from_slice(&b[..8]);
                let sample = u64::from_be_bytes(s);
                s.copy_from_slice(&b[8..16]);
                let offset = u64::from_be_bytes(s);
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
        } else {
            // Bisection on frame headers.
            let mut lo = start;
            let mut hi = src.len();
            let mut rounds = 0;
            while hi.saturating_sub(lo.0) > 1 << 16 && rounds < 64 {
                rounds += 1;
                let mid = lo.0 + (hi - lo.0) / 2;
                match find_first_frame_near(src, mid, hi, &first_h)? {
                    Some((at, fh)) if self.frame_start(&fh) <= target => lo = (at, fh),
                    _ => hi = mid,
                }
            }
            start = lo;
        }
        // Walk frames to the one holding the target.
        let (mut at, mut h) = start;
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
        // Stages: 0 start, 1 ID3v2 frames (offset = next frame, end = tag
        // index), 2 Vorbis comments, 3 pictures (offset = index), 4 cue
        // sheet, 5 applications (offset = index), 6 done.
        loop {
            match cur.stage {
                0 => {
                    cur.stage = 1;
                    cur.end = 0;
                    cur.offset = self.id3.first().map_or(0, |t| t.frames);
                }
                1 => {
                    let Some(t) = self.id3.get(cur.end as usize).copied() else {
                        cur.stage = 2;
                        self.comments = match self.vorbis {
                            Some(r) => CommentCursor::begin(src, r.offset, r.len as u64)?.unwrap_or_default(),
                            None => CommentCursor::default(),
                        };
                        continue;
                    };
                    let frame = if t.readable {
                        id3::next_frame(src, &t, &mut cur.offset)?
                    } else {
                        None
                    };
                    let Some(f) = frame else {
                        cur.end += 1;
                        cur.offset = self.id3.get(cur.end as usize).map_or(0, |t| t.frames);
                        continue;
                    };
                    if f.len == 0 || f.len > ctx.limits.max_tag_bytes {
                        continue;
                    }
                    let b = src.bytes(f.body, f.len as usize)?;
                    let value = match (f.id[0], b.first()) {
                        (b'T', Some(0 | 3)) if &f.id != b"TXXX" => text_or_bytes(b.get(1..).unwrap_or(&[])),
                        _ => TagValue::Bytes(b),
                    };
                    return Ok(Some(Tag {
                        scope: TagScope::Format,
                        key: TagKey::FourCc(f.id),
                        name: id3::frame_name(&f.id),
                        value,
                    }));
                }
                2 => {
                    let Some((off, len)) = self.comments.next_entry(src)? else {
                        cur.stage = 3;
                        cur.offset = 0;
                        continue;
                    };
                    if len > ctx.limits.max_tag_bytes {
                        continue;
                    }
                    let ok = split_entry(src.bytes(off, len as usize)?).is_some();
                    if !ok {
                        continue;
                    }
                    let entry = src.bytes(off, len as usize)?;
                    let (key, value) = split_entry(entry).ok_or(Error::malformed(off, "Vorbis comment entry"))?;
                    return Ok(Some(Tag {
                        scope: TagScope::Format,
                        key: TagKey::Text(key),
                        name: common_name(key),
                        value,
                    }));
                }
                3 => {
                    // Two tags per picture: its type as `comment`, then its bytes.
                    let i = (cur.offset / 2) as usize;
                    let part = cur.offset % 2;
                    cur.offset += 1;
                    let Some(&(p, track)) = self.pictures.get(i) else {
                        cur.stage = 4;
                        continue;
                    };
                    if track == usize::MAX {
                        continue;
                    }
                    if part == 0 {
                        let name = PICTURE_TYPES.get(p.kind as usize).copied().unwrap_or("Other");
                        return Ok(Some(Tag {
                            scope: TagScope::Track(track),
                            key: TagKey::Text("comment"),
                            name: Some("comment"),
                            value: TagValue::Text(name),
                        }));
                    }
                    if p.data.len > ctx.limits.max_tag_bytes {
                        continue;
                    }
                    let b = src.bytes(p.data.offset, p.data.len as usize)?;
                    return Ok(Some(Tag {
                        scope: TagScope::Track(track),
                        key: TagKey::Text("METADATA_BLOCK_PICTURE"),
                        name: None,
                        value: TagValue::Bytes(b),
                    }));
                }
                4 => {
                    cur.stage = 5;
                    cur.offset = 0;
                    if let Some(r) = self.cuesheet {
                        if r.len <= ctx.limits.max_tag_bytes {
                            let b = src.bytes(r.offset, r.len as usize)?;
                            return Ok(Some(Tag {
                                scope: TagScope::Format,
                                key: TagKey::Text("CUESHEET"),
                                name: None,
                                value: TagValue::Bytes(b),
                            }));
                        }
                    }
                }
                5 => {
                    let i = cur.offset as usize;
                    cur.offset += 1;
                    let Some(&r) = self.applications.get(i) else {
                        cur.stage = 6;
                        continue;
                    };
                    if r.len - 4 > ctx.limits.max_tag_bytes {
                        continue;
                    }
                    let id: [u8; 4] = src.array(r.offset)?;
                    let b = src.bytes(r.offset + 4, r.len as usize - 4)?;
                    return Ok(Some(Tag {
                        scope: TagScope::Format,
                        key: TagKey::FourCc(id),
                        name: None,
                        value: TagValue::Bytes(b),
                    }));
                }
                _ => return Ok(None),
            }
        }
    }
}

/// Finds a frame header at or after `from` (before `until`) that agrees with
/// the first frame's blocking strategy, channels and sample size: a seek
/// landing point.
fn find_first_frame_near<S: Source>(
    src: &mut S,
    from: u64,
    until: u64,
    like: &FrameHeader,
) -> Result<Option<(u64, FrameHeader)>> {
    let mut buf = [0u8; 512];
    let mut at = from;
    let stop = until.min(from.saturating_add(1 << 17));
    while at < stop {
        let n = src.read_at(at, &mut buf)?;
        if n <= MAX_FRAME_HEADER {
            return Ok(None);
        }
        for k in 0..n - MAX_FRAME_HEADER {
            if buf.get(k) != Some(&0xFF) {
                continue;
            }
            if let Some(fh) = buf.get(k..k + MAX_FRAME_HEADER).and_then(FrameHeader::parse) {
                if fh.variable == like.variable
                    && fh.channels == like.channels
                    && fh.bits_per_sample == like.bits_per_sample
                    && fh.sample_rate == like.sample_rate
                {
                    return Ok(Some((at + k as u64, fh)));
                }
            }
        }
        at += (n - MAX_FRAME_HEADER) as u64;
    }
    Ok(None)
}

#[cfg(test)]
mod tests;
