//! MPEG audio elementary streams (MP1, MP2, MP3): `.mp3`, `.mp2`, `.mp1`.
//!
//! References: ISO/IEC 11172-3 §2.4 and ISO/IEC 13818-3 §2.4 (frames, see
//! [`crate::codec::mpa`]); ID3v2.4 / ID3v1 / APEv2 / Lyrics3v2 (see
//! [`super::id3`]); the Xing, LAME and VBRI headers.
//!
//! Packets follow ffmpeg's `mp3` demuxer and `mpegaudio` parser, so they
//! match ffprobe's:
//! * Leading ID3v2 tags are skipped (consecutive ones too). A first frame
//!   carrying a Xing/Info or VBRI header (with frame or byte counts) is not a
//!   packet: its counts give the duration, its LAME tag the encoder delay and
//!   padding (exposed as the tags `encoder_delay` and `encoder_padding`).
//! * The data start is the first frame, within 64 KiB, whose successor is a
//!   frame of the same stream (sync, version, layer, rate, mode and emphasis
//!   alike); without one, data starts right after the tags.
//! * From there, a packet runs from the end of the previous one to the end of
//!   the next valid frame header's frame: junk before a frame goes into that
//!   frame's packet, as ffmpeg's parser does. Free-format frames have no
//!   length and count as junk (as in ffmpeg).
//! * What remains at the end after the last whole frame is a packet of its
//!   own, unless it starts with an ID3v1 (`TAG`, 128 bytes or more) or APEv2
//!   (`APETAGEX`) tag.

use super::id3;
use super::{cut_header_at, scan, Frame};
use crate::codec::mpa::{parse_vbr, sync_prefix, MpaHeader, VbrInfo, SAME_HEADER_MASK, STREAM_MASK};
use crate::error::{Error, Result};
use crate::format::traits::{Context, FormatDemuxer};
use crate::limits::Limits;
use crate::source::Source;
use crate::tags::{Tag, TagCursor, TagKey, TagScope, TagValue};
use crate::types::{Codec, Packet, Rational, Track, TrackKind};

/// ffmpeg's time base for MPEG audio: 14 112 000 Hz, a multiple of every
/// MPEG audio sampling rate, so frame durations are exact.
pub const TIME_BASE_HZ: u32 = 14_112_000;
/// How far ffmpeg's reader looks for the first pair of frames (64 KiB).
pub const START_SEARCH: u64 = 64 * 1024;
pub use super::id3::MAX_ID3V2_CHAIN;

/// Gapless playback facts from a LAME tag or VBRI header.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Gapless {
    /// Samples of encoder delay at the start.
    pub encoder_delay: u16,
    /// Samples of padding at the end.
    pub encoder_padding: u16,
    /// Frames in the stream, from the Xing/VBRI header.
    pub frames: Option<u32>,
}

/// Demuxer state for an MPEG audio elementary stream.
#[derive(Debug, Clone)]
pub struct Mp3Demuxer {
    data_start: u64,
    pos: u64,
    end: u64,
    pts: i64,
    last_duration: u64,
    tags: id3::StreamTags,
    gapless: Option<Gapless>,
    pictures: id3::Pictures,
}

fn header_at<S: Source>(src: &mut S, at: u64) -> Result<Option<MpaHeader>> {
    let mut b = [0u8; 4];
    if src.read_at(at, &mut b)? < 4 {
        return Ok(None);
    }
    Ok(MpaHeader::parse_sized(u32::from_be_bytes(b)))
}

/// Counts consecutive frames of one stream from `at`, up to `max`; with
/// the offset just past the last one counted (which may lie past `end` when
/// the end cuts that frame).
fn run_at<S: Source>(src: &mut S, at: u64, max: u32, end: u64) -> Result<(u32, u64)> {
    let Some(first) = header_at(src, at)? else {
        return Ok((0, at));
    };
    let mut n = 1;
    let mut next = at + first.frame_len as u64;
    while n < max && next != end {
        match header_at(src, next)? {
            Some(h) if h.raw & SAME_HEADER_MASK == first.raw & SAME_HEADER_MASK => {
                n += 1;
                next += h.frame_len as u64;
            }
            _ => break,
        }
    }
    Ok((n, next))
}

/// Whether `b` starts with an MPEG audio frame header of known length (not
/// free format); the `0xFF` test first, since scans call this at every byte.
fn sized_frame(b: &[u8]) -> bool {
    b.first() == Some(&0xFF) && MpaHeader::parse_bytes(b).is_some_and(|h| h.frame_len >= 4)
}

/// Whether the input holds an MPEG audio stream: after any ID3v2 tags, a
/// frame right there followed by one more (or ending the audio), or, within
/// `limits.resync_bytes`, a run of four consecutive frames of one stream (or
/// of at least two that ends the audio exactly, or whose bytes, a frame the
/// end cuts counted whole, are over a tenth of what follows the tags: a
/// short file of two or three frames with junk after them, which ffmpeg's
/// probe still calls MPEG audio when nothing else claims it).
pub fn probe<S: Source>(src: &mut S, limits: &Limits) -> Result<bool> {
    let (at, tag) = id3::skip_id3v2(src, 0, MAX_ID3V2_CHAIN)?;
    let trailer = id3::find_trailer(src, at)?;
    let end = trailer.audio_end;
    if tag.is_some() {
        let (n, next) = run_at(src, at, 2, end)?;
        if n >= 2 || (n == 1 && next == end) {
            return Ok(true);
        }
    }
    let limit = at.saturating_add(limits.resync_bytes.min(limits.probe_bytes));
    let mut from = at;
    loop {
        let hit = scan(src, from, limit, 4, sized_frame)?;
        let Some(p) = hit else {
            return Ok(false);
        };
        let (n, next) = run_at(src, p, 4, end)?;
        let short = src.len().saturating_sub(at) / 10 < next - p;
        if n >= 4 || (n >= 2 && (next == end || short)) {
            return Ok(true);
        }
        from = p + 1;
    }
}

impl Mp3Demuxer {
    /// Gapless facts from the LAME tag or VBRI header, when present.
    pub fn gapless(&self) -> Option<Gapless> {
        self.gapless
    }

    /// Finds the next valid frame header at or after `from`, within the
    /// resync limit.
    fn next_header<S: Source>(&self, src: &mut S, from: u64, limits: &Limits) -> Result<Option<(u64, MpaHeader)>> {
        if let Some(h) = header_at(src, from)? {
            return Ok(Some((from, h)));
        }
        let limit = from.saturating_add(limits.resync_bytes).min(self.end);
        let hit = scan(src, from + 1, limit, 4, sized_frame)?;
        match hit {
            Some(p) => Ok(header_at(src, p)?.map(|h| (p, h))),
            None => Ok(None),
        }
    }
}

impl Mp3Demuxer {
    fn advance<S: Source>(&mut self, src: &mut S, ctx: &mut Context) -> Result<Option<Frame>> {
        if self.pos >= self.end {
            return Ok(None);
        }
        let at = self.pos;
        let cut;
        let (stop, dur) = match self.next_header(src, at, &ctx.limits)? {
            Some((p, h)) => {
                let tick = (TIME_BASE_HZ / h.sample_rate.max(1)) as u64;
                let d = h.samples as u64 * tick;
                self.last_duration = d;
                cut = p + h.frame_len as u64 > self.end;
                ((p + h.frame_len as u64).min(self.end), d)
            }
            None => {
                let rest = self.end - at;
                let limited = at.saturating_add(ctx.limits.resync_bytes) < self.end;
                if limited {
                    ctx.diags.report("mp3.lost-sync", at);
                    self.pos = self.end;
                    return Ok(None);
                }
                // ffmpeg's parser flushes the rest, except a trailing ID3v1 or
                // APEv2 tag. A tag cut short (only in a cut file) is dropped
                // too, so that a cut file gives a prefix of the packets.
                let mut head = [0u8; 8];
                let n = src.read_at(at, &mut head)?;
                let h = head.get(..n).unwrap_or(&[]);
                let tag = |t: &[u8]| h.starts_with(t) || (rest < t.len() as u64 && t.starts_with(h));
                if tag(b"TAG") || tag(b"APETAGEX") {
                    self.pos = self.end;
                    return Ok(None);
                }
                // Bytes without a frame header up to the end of the input:
                // a longer input could continue them (junk joins the next
                // frame's packet) or begin a frame in their last bytes. They
                // end where a cut header could begin, flagged, and nothing
                // after them is given (`truncation` fuzz finds: a prefix gave
                // 862 bytes of the whole input's 1 925-byte packet unflagged).
                cut = true;
                (
                    cut_header_at(src, at + 1, self.end, 4, sync_prefix)?.unwrap_or(self.end),
                    self.last_duration,
                )
            }
        };
        let len = stop - at;
        if len > ctx.limits.max_packet as u64 {
            self.pos = self.end;
            return Err(Error::limit(
                at,
                &"mp3 frame: packet larger than Limits::max_packet (ISO/IEC 11172-3 §2.4.1.1)",
            ));
        }
        if cut {
            // A frame cut by the end of input is still given, as ffmpeg does.
            ctx.diags.report("mp3.truncated-frame", at);
        }
        // A packet flagged at the end of the input is the last one: what
        // follows it (a cut header) is not given.
        self.pos = if cut { self.end } else { stop };
        let pts = self.pts;
        self.pts = self.pts.saturating_add(dur as i64);
        Ok(Some(Frame { at, len, pts, dur, cut }))
    }
}

/// The Xing/Info/VBRI header in the frame at `at` (right after the tags),
/// when it gives frame or byte counts: that frame is no packet.
fn vbr_frame<S: Source>(src: &mut S, at: u64) -> Result<Option<(VbrInfo, MpaHeader)>> {
    let Some(h) = header_at(src, at)? else {
        return Ok(None);
    };
    let mut frame = [0u8; VBR_FRAME_HEAD];
    let n = src.read_at(at, &mut frame)?;
    Ok(parse_vbr(frame.get(..n).unwrap_or(&[]), &h)
        .filter(|v| v.frames.unwrap_or(0) != 0 || v.bytes.unwrap_or(0) != 0)
        .map(|v| (v, h)))
}

/// Bytes of the first frame read for its Xing/Info/VBRI header (the
/// header sits within the first 192 bytes of a layer III frame).
const VBR_FRAME_HEAD: usize = 192;

/// Where the data starts, from `off` (after the tags and any VBR frame):
/// as ffmpeg, the first frame within [`START_SEARCH`] followed by a frame of
/// the same stream; `off` without one. Reports `mp3.junk-skipped` and
/// `mp3.unconfirmed-start`.
fn find_start<S: Source>(src: &mut S, ctx: &mut Context, off: u64) -> Result<u64> {
    let end = src.len();
    let mut start = off;
    let limit = off.saturating_add(START_SEARCH).min(end);
    let mut from = off;
    let mut paired = false;
    // A candidate whose successor's header the end of the input cuts:
    // a longer input may pair it and start there.
    let mut unpaired_at_end = false;
    while from < limit {
        let hit = scan(src, from, limit, 4, sized_frame)?;
        let Some(p) = hit else { break };
        if let Some(h) = header_at(src, p)? {
            unpaired_at_end |= (p + h.frame_len as u64).saturating_add(4) > end;
            if let Some(h2) = header_at(src, p + h.frame_len as u64)? {
                if h2.raw & STREAM_MASK == h.raw & STREAM_MASK {
                    start = p;
                    paired = true;
                    break;
                }
            }
        }
        from = p + 1;
    }
    if start > off {
        ctx.diags.report("mp3.junk-skipped", off);
    }
    if (!paired && limit == end) || unpaired_at_end {
        // The input ends within the 64 KiB search without a pair of
        // frames: data starts right after the tags, as ffmpeg starts a
        // file this short, but a longer input may hold a pair further on
        // and start there instead (a `truncation` find). Or a frame
        // before the start chosen had its successor past the end: a
        // longer input may pair it and start earlier (another).
        ctx.diags.report("mp3.unconfirmed-start", off);
    }
    Ok(start)
}

/// The first frame header from `start` on (the scan tries `start`
/// first), starting before `limit`: `Limits::resync_bytes` on, and where a
/// whole header still fits before the trailing tags (a header in an ID3v1
/// tag's text is no audio, and a tag edit rewrites it: a
/// `tagedit_roundtrip` find).
fn first_header<S: Source>(src: &mut S, start: u64, limit: u64) -> Result<MpaHeader> {
    match scan(src, start, limit, 4, sized_frame)? {
        Some(p) => header_at(src, p)?.ok_or(Error::malformed(
            p,
            &"mp3 frame header: not valid where the scan found it (ISO/IEC 11172-3 §2.4.2.3)",
        )),
        None => Err(Error::malformed(
            start,
            &"mp3: no MPEG audio frame found (ISO/IEC 11172-3 §2.4.2.3)",
        )),
    }
}

/// Duration (in [`TIME_BASE_HZ`] ticks) and bit rate: from the VBR
/// header's counts when it has a frame count, else from the first frame's
/// bit rate over `audio_len` bytes.
fn duration_and_bit_rate(vbr: Option<(VbrInfo, MpaHeader)>, first: &MpaHeader, audio_len: u64) -> (Option<u64>, u32) {
    let rate = first.sample_rate.max(1);
    let tick = (TIME_BASE_HZ / rate) as u64;
    match vbr {
        Some((v, h)) if v.frames.unwrap_or(0) != 0 => {
            let frames = v.frames.unwrap_or(0) as u64;
            let d = frames * h.samples as u64 * tick;
            let br = match v.bytes {
                Some(b) if frames > 0 && &v.kind != b"Info" => {
                    (b as u64 * 8 * rate as u64 / (frames * h.samples as u64)) as u32
                }
                _ => first.bit_rate,
            };
            (Some(d), br)
        }
        _ if first.bit_rate > 0 => (
            Some(audio_len.saturating_mul(8).saturating_mul(TIME_BASE_HZ as u64) / first.bit_rate as u64),
            first.bit_rate,
        ),
        _ => (None, 0),
    }
}

impl FormatDemuxer for Mp3Demuxer {
    fn open<S: Source>(src: &mut S, ctx: &mut Context) -> Result<Self> {
        let end = src.len();
        let (mut off, first_id3v2) = id3::skip_id3v2(src, 0, MAX_ID3V2_CHAIN)?;
        let trailer = id3::find_trailer(src, off)?;
        // Xing/Info/VBRI in the frame right after the tags.
        let vbr = vbr_frame(src, off)?;
        if let Some((_, h)) = vbr {
            off += h.frame_len as u64;
        }
        let start = find_start(src, ctx, off)?;
        let limit = start
            .saturating_add(ctx.limits.resync_bytes)
            .min(trailer.audio_end.saturating_sub(3));
        let first = first_header(src, start, limit)?;
        let codec = match first.layer {
            1 => Codec::Mp1,
            2 => Codec::Mp2,
            _ => Codec::Mp3,
        };
        let rate = first.sample_rate.max(1);
        let tick = (TIME_BASE_HZ / rate) as u64;
        let gapless = vbr.map(|(v, _)| Gapless {
            encoder_delay: v.encoder_delay.unwrap_or(0),
            encoder_padding: v.encoder_padding.unwrap_or(0),
            frames: v.frames,
        });
        let audio_len = trailer.audio_end.saturating_sub(start);
        let (duration, bit_rate) = duration_and_bit_rate(vbr, &first, audio_len);
        let track = Track {
            id: 0,
            kind: TrackKind::Audio,
            codec,
            time_base: Rational::new(1, TIME_BASE_HZ),
            duration,
            sample_rate: first.sample_rate,
            channels: first.channels as u16,
            bit_rate,
            ..Track::default()
        };
        ctx.add_track(track, start);
        let pictures = match first_id3v2 {
            Some(t) => id3::Pictures::find(src, &t, ctx)?,
            None => id3::Pictures::default(),
        };
        let tb = Rational::new(1, TIME_BASE_HZ);
        ctx.info.duration_us = duration.map(|d| tb.to_micros(d as i64).max(0) as u64);
        ctx.info.bit_rate = (bit_rate > 0).then_some(bit_rate as u64);
        if let Some(g) = gapless {
            if g.encoder_delay > 0 {
                // ffmpeg adds the decoder's own delay of 528 + 1 samples.
                let skip = g.encoder_delay as i64 + 529;
                ctx.info.start_us = Some(skip * 1_000_000 / rate as i64);
            }
        }
        Ok(Mp3Demuxer {
            data_start: start,
            pos: start,
            end,
            pts: 0,
            last_duration: first.samples as u64 * tick,
            tags: id3::StreamTags::new(first_id3v2, trailer.id3v1),
            gapless,
            pictures,
        })
    }

    fn next_packet<'s, S: Source>(&mut self, src: &'s mut S, ctx: &mut Context) -> Result<Option<Packet<'s>>> {
        if self.pictures.pending() {
            return self.pictures.next_packet(src);
        }
        let Some(f) = self.advance(src, ctx)? else {
            return Ok(None);
        };
        let data = src.bytes(f.at, f.len as usize)?;
        Ok(Some(f.packet(data)))
    }

    fn seek<S: Source>(&mut self, src: &mut S, ctx: &mut Context, _track: usize, ts: i64) -> Result<()> {
        self.pos = self.data_start;
        self.pts = 0;
        super::seek_audio(self, src, ctx, ts, |d, s, c| d.advance(s, c))
    }

    fn next_tag<'s, S: Source>(
        &mut self,
        src: &'s mut S,
        ctx: &Context,
        cur: &mut TagCursor,
    ) -> Result<Option<Tag<'s>>> {
        if cur.stage < id3::STREAM_TAGS_DONE {
            let t = self.tags.next(src, ctx.limits.max_tag_bytes, cur)?;
            if t.is_some() {
                return Ok(t);
            }
        }
        // Then the LAME tag's gapless facts.
        let Some(g) = self.gapless else {
            return Ok(None);
        };
        let (name, value) = match cur.stage {
            4 => ("encoder_delay", g.encoder_delay),
            5 => ("encoder_padding", g.encoder_padding),
            _ => return Ok(None),
        };
        cur.stage += 1;
        Ok(Some(Tag {
            scope: TagScope::Track(0),
            key: TagKey::Text(name),
            name: Some(name),
            value: TagValue::Int(value as i64),
        }))
    }

    #[cfg(feature = "chapters")]
    fn next_chapter<'s, S: Source>(
        &mut self,
        src: &'s mut S,
        ctx: &Context,
        cur: &mut crate::chapters::ChapterCursor,
    ) -> Result<Option<crate::chapters::Chapter<'s>>> {
        super::id3_chap::next_chapter(src, self.tags.first_id3v2, ctx.limits.max_tag_bytes, cur)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Demuxer, SliceSource};

    /// MPEG-1 layer 3, 32 kbit/s, 48 kHz: 96-byte frames.
    const H: [u8; 4] = [0xFF, 0xFB, 0x14, 0x64];

    fn stream(frames: usize, junk: usize, buf: &mut [u8]) -> usize {
        let mut at = 0;
        for i in 0..junk {
            buf[at] = (i * 7 + 1) as u8 & 0x7F;
            at += 1;
        }
        for _ in 0..frames {
            buf[at..at + 4].copy_from_slice(&H);
            at += 96;
        }
        at
    }

    #[test]
    fn frames_become_packets() {
        let mut buf = [0u8; 2000];
        let n = stream(10, 0, &mut buf);
        let mut d = Demuxer::open(SliceSource::new(&buf[..n]), None).unwrap();
        assert_eq!(d.format(), crate::FormatKind::Mp3);
        assert_eq!(d.tracks()[0].sample_rate, 48000);
        let mut count = 0;
        while let Some(p) = d.next_packet().unwrap() {
            assert_eq!(p.data.len(), 96);
            assert_eq!(p.pts, Some(count * 1152 * 294));
            count += 1;
        }
        assert_eq!(count, 10);
    }

    #[test]
    fn junk_before_frames_is_found() {
        let mut buf = [0u8; 3000];
        let n = stream(8, 333, &mut buf);
        let mut d = Demuxer::open(SliceSource::new(&buf[..n]), None).unwrap();
        let mut sizes = [0usize; 16];
        let mut k = 0;
        while let Some(p) = d.next_packet().unwrap() {
            sizes[k] = p.data.len();
            k += 1;
        }
        assert_eq!(k, 8);
        assert!(sizes[..8].iter().all(|&s| s == 96));
    }

    /// Two frames and then junk (ffprobe 5.1 on these bytes: three packets,
    /// 96, 96 and the 1700 junk bytes; with 32 more junk bytes, "Invalid
    /// data found when processing input"): MPEG audio while the frames are
    /// over a tenth of the input.
    #[test]
    fn two_frames_then_junk() {
        let mut buf = [0u8; 2000];
        let n = stream(2, 0, &mut buf);
        for (i, b) in buf[n..].iter_mut().enumerate() {
            *b = b"junk"[i % 4];
        }
        let mut d = Demuxer::open(SliceSource::new(&buf[..n + 1700]), None).unwrap();
        assert_eq!(d.format(), crate::FormatKind::Mp3);
        let mut sizes = [0usize; 4];
        let mut k = 0;
        while let Some(p) = d.next_packet().unwrap() {
            sizes[k] = p.data.len();
            k += 1;
        }
        assert_eq!(sizes[..k], [96, 96, 1700]);
        let mut s = SliceSource::new(&buf[..n + 1732]);
        assert!(!probe(&mut s, &Limits::default()).unwrap());
    }

    #[test]
    fn random_data_is_not_mp3() {
        let mut buf = [0u8; 4096];
        let mut x = 0x1234_5678u32;
        for b in buf.iter_mut() {
            x ^= x << 13;
            x ^= x >> 17;
            x ^= x << 5;
            *b = x as u8;
        }
        let mut s = SliceSource::new(&buf);
        assert!(!probe(&mut s, &Limits::default()).unwrap());
    }
}
