//! The IFF demuxer: one stream from the chunk walk, one packet (the body
//! chunk's data) as ffmpeg's `iff` demuxer gives it, and the text chunks as
//! tags.

use super::chunk::{self, FormType, FIRST_CHUNK, MAX_CHUNKS};
use super::scan::{self, Scan};
use crate::error::{Error, Result};
use crate::format::traits::{Context, FormatDemuxer};
use crate::source::Source;
use crate::tags::{text_or_bytes, Tag, TagCursor, TagKey, TagScope};
use crate::types::{Codec, Packet, PacketFlags, Rational, Track, TrackKind};

/// ffmpeg's default time base for a stream with none of its own
/// (`avformat_new_stream`): 1/90000.
const VIDEO_TIME_BASE: u32 = 90_000;
/// Tag walk stages ([`TagCursor`] `stage`).
const STAGE_START: u32 = 0;
const STAGE_WALK: u32 = 1;
const STAGE_DONE: u32 = 2;

/// The error once the input ends inside the body chunk.
const CUT: &str = "iff: the input ends inside the BODY chunk";

/// Demuxer state for IFF.
#[derive(Debug, Clone)]
pub struct IffDemuxer {
    /// The body chunk's data: offset and size.
    body_start: u64,
    body_size: u64,
    audio: bool,
    /// Bits of one sample frame (audio), to give the packet's duration.
    frame_bits: u64,
    done: bool,
    cut: bool,
}

/// The audio codec and its bits per sample (ffmpeg `iff_read_header`:
/// `16SV` planar 16-bit, `8SVX` by its `VHDR` compression).
fn audio_codec(s: &Scan) -> Result<(Codec, u16)> {
    match (s.form, s.compression) {
        (FormType::Sv16, _) => Ok((Codec::PcmS16BePlanar, 16)),
        (FormType::Maud, _) => Err(Error::unsupported(8, &"iff: MAUD is not read")),
        (_, Some(0)) => Ok((Codec::PcmS8Planar, 8)),
        (_, Some(1)) => Ok((Codec::Svx8Fib, 4)),
        (_, Some(2)) => Ok((Codec::Svx8Exp, 4)),
        _ => Err(Error::unsupported(
            8,
            &"iff: an 8SVX compression other than none, Fibonacci and exponential delta (8SVX: sCompression)",
        )),
    }
}

/// The track and, for sound, the bits of one sample frame.
fn track(s: &Scan, tag: u32, len: u64, body_start: u64) -> Result<(Track, u64)> {
    if s.video == Some(true) {
        let t = Track {
            id: 0,
            kind: TrackKind::Video,
            codec: Codec::IffIlbm,
            codec_tag: tag,
            time_base: Rational::new(1, VIDEO_TIME_BASE),
            width: u32::from(s.width),
            height: u32::from(s.height),
            bits_per_sample: u16::from(s.bits),
            ..Track::default()
        };
        return Ok((t, 0));
    }
    let (codec, bits) = audio_codec(s)?;
    if s.rate == 0 {
        return Err(Error::malformed(
            FIRST_CHUNK,
            &"iff: sample rate 0 (8SVX: samplesPerSec)",
        ));
    }
    let channels: u16 = if s.stereo { 2 } else { 1 };
    let frame_bits = u64::from(bits) * u64::from(channels);
    // ffmpeg has no duration from the header: it estimates one from the
    // bit rate and the bytes after the header, from the body to the end of
    // the file (rounded to nearest).
    let tail = len - body_start;
    let duration = (tail.saturating_mul(8) + frame_bits / 2) / frame_bits;
    let t = Track {
        id: 0,
        kind: TrackKind::Audio,
        codec,
        codec_tag: tag,
        time_base: Rational::new(1, u32::from(s.rate)),
        duration: Some(duration),
        sample_rate: u32::from(s.rate),
        channels,
        bits_per_sample: bits,
        block_align: u32::from(channels) * u32::from(bits),
        bit_rate: u32::from(s.rate) * u32::from(channels) * u32::from(bits),
        ..Track::default()
    };
    Ok((t, frame_bits))
}

impl FormatDemuxer for IffDemuxer {
    fn open<S: Source>(src: &mut S, ctx: &mut Context) -> Result<Self> {
        let s = scan::scan(src)?;
        if s.stopped {
            ctx.diags.report("iff.too-many-chunks", FIRST_CHUNK);
        }
        if matches!(s.form, FormType::Anim) {
            return Err(Error::unsupported(8, &"iff: ANIM animations are not read"));
        }
        if s.video.is_none() {
            return Err(Error::malformed(
                FIRST_CHUNK,
                &"iff: no BMHD, DGBL or VHDR header chunk (ILBM, DEEP, 8SVX)",
            ));
        }
        let (body_start, body_size) = s.body.ok_or(Error::malformed(FIRST_CHUNK, &"iff: no BODY chunk"))?;
        if body_size == 0 || body_size > i32::MAX as u64 {
            return Err(Error::malformed(
                body_start,
                &"iff: a BODY chunk of 0 bytes or over 2 GiB",
            ));
        }
        if body_size > u64::from(ctx.limits.max_packet) {
            return Err(Error::limit(body_start, &"iff: the BODY is over Limits::max_packet"));
        }
        let len = src.len();
        if body_start.saturating_add(body_size) > len {
            ctx.diags.report("iff.body-beyond-eof", body_start);
        }
        let tag = src.read::<zerocopy::big_endian::U32>(8)?.get();
        let (t, frame_bits) = track(&s, tag, len, body_start)?;
        if let Some(d) = t.duration {
            ctx.info.duration_us = Some(t.time_base.to_micros(d.min(i64::MAX as u64) as i64).max(0) as u64);
        }
        let audio = t.kind == TrackKind::Audio;
        ctx.add_track(t, 0);
        Ok(IffDemuxer {
            body_start,
            body_size,
            audio,
            frame_bits,
            done: false,
            cut: false,
        })
    }

    fn next_packet<'s, S: Source>(&mut self, src: &'s mut S, _ctx: &mut Context) -> Result<Option<Packet<'s>>> {
        if self.cut {
            self.cut = false;
            return Err(Error::truncated(src.len(), &CUT));
        }
        if self.done {
            return Ok(None);
        }
        let at = self.body_start;
        let left = src.len().saturating_sub(at);
        if left == 0 {
            return Err(Error::truncated(at, &CUT));
        }
        let truncated = self.body_size > left;
        let size = self.body_size.min(left);
        self.done = true;
        self.cut = truncated;
        let data = src.bytes(at, size as usize)?;
        let flags = PacketFlags {
            truncated,
            ..PacketFlags::keyframe(true)
        };
        let p = Packet::contiguous(0, at, data).with_flags(flags);
        if !self.audio {
            return Ok(Some(p));
        }
        let duration = size.saturating_mul(8) / self.frame_bits.max(1);
        Ok(Some(p.with_times(Some(0), Some(0), Some(duration))))
    }

    fn seek<S: Source>(&mut self, _src: &mut S, _ctx: &mut Context, _track: usize, _ts: i64) -> Result<()> {
        // One packet: any seek goes back to it.
        self.done = false;
        self.cut = false;
        Ok(())
    }

    fn next_tag<'s, S: Source>(
        &'s mut self,
        src: &'s mut S,
        ctx: &Context,
        cur: &mut TagCursor,
    ) -> Result<Option<Tag<'s>>> {
        if cur.stage == STAGE_START {
            cur.stage = STAGE_WALK;
            cur.offset = FIRST_CHUNK;
            // `end` counts the chunks walked: the walk is bounded as open's.
            cur.end = 0;
        }
        while cur.stage == STAGE_WALK {
            let Some((c, next)) = chunk::next_chunk(src, cur.offset)? else {
                cur.stage = STAGE_DONE;
                break;
            };
            cur.offset = next;
            cur.end += 1;
            if cur.end > u64::from(MAX_CHUNKS) {
                cur.stage = STAGE_DONE;
                break;
            }
            // ffmpeg's names for the text chunks (EA IFF 85 "Strings").
            let name = match &c.id {
                b"NAME" => "title",
                b"AUTH" => "artist",
                b"(c) " => "copyright",
                b"ANNO" | b"TEXT" => "comment",
                _ => continue,
            };
            let len = c
                .size
                .min(u64::from(ctx.limits.max_tag_bytes))
                .min(src.len().saturating_sub(c.data)) as usize;
            let raw = src.bytes(c.data, len)?;
            // A C string: the text ends at the first NUL.
            let text = raw.split(|&b| b == 0).next().unwrap_or(&[]);
            return Ok(Some(Tag {
                scope: TagScope::Format,
                key: TagKey::Text(name),
                name: Some(name),
                value: text_or_bytes(text),
            }));
        }
        Ok(None)
    }

    fn max_packet_size(&self) -> Option<usize> {
        usize::try_from(self.body_size).ok()
    }
}
