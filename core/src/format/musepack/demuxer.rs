//! The Musepack demuxer: SV7 frames or SV8 `AP` packets, the APEv2 tag's
//! text items as format tags.

use super::{sv7, sv8};
use crate::error::{Error, Result};
use crate::format::es::{ape, id3};
use crate::format::traits::{Context, FormatDemuxer};
use crate::source::Source;
use crate::tags::{Tag, TagCursor};
use crate::types::{ByteRange, Codec, Packet, PacketFlags, Rational, Track, TrackKind};

/// Most SV8 packets skipped (before `SH`, or between two `AP`s) in one call.
const MAX_SKIPPED: u32 = 65536;
/// Largest SV7 frame: a 20-bit length in bits, its 20 bits and a word.
const SV7_LARGEST: u64 = ((1 << 20) + 20 + 31 + 31) / 8 + sv7::PREFIX as u64;

/// Which stream version, and its cursor.
#[derive(Debug, Clone, Copy)]
enum Stream {
    /// SV7: the frame count (0: unknown) and the next frame.
    V7 { frames: u32, at: sv7::Cursor },
    /// SV8: the first packet after `SH`, the APEv2 tag's start, the next
    /// packet.
    V8 { first: u64, tag: Option<u64>, at: u64 },
}

/// Demuxer state for Musepack SV7 and SV8.
#[derive(Debug, Clone)]
pub struct MusepackDemuxer {
    stream: Stream,
    /// The APEv2 items, if any.
    tags: Option<(u64, u64, u32)>,
    /// Largest packet allowed (`Limits::max_packet`).
    max_packet: u64,
    // Cursor.
    index: u64,
    cut: bool,
}

/// The error once the input ends inside a frame.
const CUT: &str = "musepack: the input ends inside a frame";

impl MusepackDemuxer {
    /// SV7: the next frame with ffmpeg's 4-byte prefix, joined in scratch.
    fn next_sv7<'s, S: Source>(&mut self, src: &'s mut S, frames: u32, at: sv7::Cursor) -> Result<Option<Packet<'s>>> {
        if frames != 0 && self.index >= u64::from(frames) {
            return Ok(None);
        }
        if frames == 0 && at.pos >= src.len() {
            return Ok(None);
        }
        let f = sv7::frame(src, at).inspect_err(|_| self.cut = true)?;
        if at.pos.saturating_add(f.size) > src.len() {
            // ffmpeg's `mpc_read_packet` gives no short frame.
            self.cut = true;
            return Err(Error::truncated(at.pos, &CUT));
        }
        let last = u8::from(frames != 0 && self.index + 1 > u64::from(frames));
        src.put(0, &[f.start_bit, last, 0, 0])?;
        src.gather(at.pos, f.size as usize, sv7::PREFIX)?;
        let pts = self.index as i64;
        self.index += 1;
        self.stream = Stream::V7 { frames, at: f.next };
        let src: &'s S = src;
        let data = src.joined(sv7::PREFIX + f.size as usize)?;
        // No position, as ffprobe shows (the prefix is not in the input).
        Ok(Some(
            Packet::joined(0, None, data)
                .with_times(Some(pts), Some(pts), Some(1))
                .with_flags(PacketFlags::keyframe(true)),
        ))
    }

    /// SV8: the next `AP` packet's payload, in place.
    fn next_sv8<'s, S: Source>(
        &mut self,
        src: &'s mut S,
        first: u64,
        tag: Option<u64>,
        mut at: u64,
    ) -> Result<Option<Packet<'s>>> {
        // Whether the packet before `at` was `SE`: the input may end there.
        let mut after_se = false;
        for _ in 0..MAX_SKIPPED {
            if tag.is_some_and(|t| at >= t) || sv8::at_ape_tag(src, at)? {
                return Ok(None);
            }
            if at >= src.len() {
                if after_se {
                    return Ok(None);
                }
                // No SE before the end: the input was cut.
                self.cut = true;
                return Err(Error::truncated(at, &CUT));
            }
            let c = sv8::chunk(src, at).inspect_err(|_| self.cut = true)?;
            let end = c.payload.saturating_add(c.len);
            match &c.key {
                b"AP" => {
                    if c.len > self.max_packet || c.len > i32::MAX as u64 {
                        return Err(Error::limit(
                            at,
                            &"musepack: an AP packet larger than Limits::max_packet",
                        ));
                    }
                    let left = src.len().saturating_sub(c.payload);
                    let take = c.len.min(left);
                    let truncated = take < c.len;
                    self.cut = truncated;
                    self.stream = Stream::V8 { first, tag, at: end };
                    let pts = self.index as i64;
                    self.index += 1;
                    let data = src.bytes(c.payload, take as usize)?;
                    return Ok(Some(
                        Packet::contiguous(0, c.payload, data)
                            .with_times(Some(pts), Some(pts), Some(1))
                            .with_flags(PacketFlags {
                                truncated,
                                ..PacketFlags::keyframe(true)
                            }),
                    ));
                }
                // ffmpeg 5.1 reads on after `SE` (a chained stream's
                // packets follow it), up to the tag or the end.
                key => {
                    after_se = key == b"SE";
                    at = end;
                }
            }
        }
        Err(Error::limit(at, &"musepack: too many SV8 packets without audio"))
    }
}

impl FormatDemuxer for MusepackDemuxer {
    fn open<S: Source>(src: &mut S, ctx: &mut Context) -> Result<Self> {
        let magic: [u8; 4] = src.array(0)?;
        let (stream, track, trailer) = if &magic == b"MPCK" {
            let mut at = 4;
            let mut found = None;
            for _ in 0..MAX_SKIPPED {
                let c = sv8::chunk(src, at)?;
                if &c.key == b"SH" {
                    found = Some(c);
                    break;
                }
                at = c.payload.saturating_add(c.len);
            }
            let c = found.ok_or(Error::malformed(at, &"musepack: no SV8 stream header (SH)"))?;
            let h = sv8::stream_header(src, &c)?;
            let first = c.payload.saturating_add(c.len);
            let trailer = id3::find_trailer(src, first)?;
            let per = u64::from(h.per_packet);
            let g = crate::bytes::gcd(per, u64::from(h.rate)).max(1);
            let track = Track {
                codec: Codec::Musepack8,
                config: Some(ByteRange {
                    offset: h.extradata,
                    len: 2,
                }),
                time_base: Rational::new((per / g) as u32, (u64::from(h.rate) / g) as u32),
                duration: Some(h.samples / per),
                sample_rate: h.rate,
                channels: h.channels,
                ..Track::default()
            };
            let stream = Stream::V8 {
                first,
                tag: trailer.ape,
                at: first,
            };
            (stream, track, trailer)
        } else {
            let h = sv7::header(src)?;
            let trailer = id3::find_trailer(src, sv7::HEADER)?;
            let g = crate::bytes::gcd(1152, u64::from(h.rate)).max(1);
            let track = Track {
                codec: Codec::Musepack7,
                config: Some(ByteRange { offset: 8, len: 16 }),
                time_base: Rational::new((1152 / g) as u32, (u64::from(h.rate) / g) as u32),
                duration: Some(u64::from(h.frames)),
                sample_rate: h.rate,
                channels: 2,
                ..Track::default()
            };
            let at = sv7::Cursor {
                pos: sv7::HEADER,
                bits: sv7::FIRST_BITS,
            };
            (Stream::V7 { frames: h.frames, at }, track, trailer)
        };
        let tb = track.time_base;
        let duration = track.duration.unwrap_or(0);
        ctx.add_track(
            Track {
                id: 0,
                kind: TrackKind::Audio,
                ..track
            },
            0,
        );
        ctx.info.duration_us = Some(tb.to_micros(duration.min(i64::MAX as u64) as i64).max(0) as u64);
        ctx.info.start_us = Some(0);
        Ok(MusepackDemuxer {
            stream,
            tags: trailer.ape_items,
            max_packet: u64::from(ctx.limits.max_packet),
            index: 0,
            cut: false,
        })
    }

    fn next_packet<'s, S: Source>(&mut self, src: &'s mut S, _ctx: &mut Context) -> Result<Option<Packet<'s>>> {
        if self.cut {
            return Err(Error::truncated(src.len(), &CUT));
        }
        match self.stream {
            Stream::V7 { frames, at } => self.next_sv7(src, frames, at),
            Stream::V8 { first, tag, at } => self.next_sv8(src, first, tag, at),
        }
    }

    fn seek<S: Source>(&mut self, src: &mut S, _ctx: &mut Context, _track: usize, ts: i64) -> Result<()> {
        // No index is kept: walk from the first frame or packet (headers
        // only) to the one at `ts`.
        self.cut = false;
        self.index = 0;
        let target = ts.max(0) as u64;
        match self.stream {
            Stream::V7 { frames, .. } => {
                let mut at = sv7::Cursor {
                    pos: sv7::HEADER,
                    bits: sv7::FIRST_BITS,
                };
                while self.index < target && (frames == 0 || self.index < u64::from(frames)) && at.pos < src.len() {
                    at = sv7::frame(src, at)?.next;
                    self.index += 1;
                }
                self.stream = Stream::V7 { frames, at };
            }
            Stream::V8 { first, tag, .. } => {
                let mut at = first;
                while at < src.len() && tag.is_none_or(|t| at < t) && !sv8::at_ape_tag(src, at)? {
                    let c = sv8::chunk(src, at)?;
                    if &c.key == b"AP" && self.index >= target {
                        break;
                    }
                    self.index += u64::from(&c.key == b"AP");
                    at = c.payload.saturating_add(c.len);
                }
                self.stream = Stream::V8 { first, tag, at };
            }
        }
        Ok(())
    }

    fn max_packet_size(&self) -> Option<usize> {
        match self.stream {
            Stream::V7 { .. } => usize::try_from(SV7_LARGEST).ok(),
            Stream::V8 { .. } => None,
        }
    }

    fn next_tag<'s, S: Source>(
        &'s mut self,
        src: &'s mut S,
        ctx: &Context,
        cur: &mut TagCursor,
    ) -> Result<Option<Tag<'s>>> {
        ape::next_trailer_item(src, self.tags, ctx, cur)
    }
}
