//! [`WavDemuxer`]: `open` (the chunk walk, then the track from `fmt `),
//! packets of ffmpeg's sizes and seeking on their grid.

use super::chunks::{self, Found};
use crate::codec::riff_layout::{WaveFormat, WaveFormatExtensible};
use crate::codec::riff_tags::{wave_codec, WAVE_FORMAT_EXTENSIBLE};
use crate::error::{Error, Result};
use crate::format::traits::{Context, FormatDemuxer};
use crate::source::Source;
use crate::tags::{Tag, TagCursor};
use crate::types::{ByteRange, Codec, Packet, PacketFlags, Rational, Track, TrackKind};
use core::mem::offset_of;

/// ffmpeg's packet size for WAV.
const PACKET_TARGET: u64 = 4096;
/// Smallest `fmt ` chunk holding a WAVEFORMATEXTENSIBLE (`mmreg.h`).
const EXTENSIBLE_SIZE: u64 = core::mem::size_of::<WaveFormatExtensible>() as u64;

/// Demuxer state for WAV, RF64 and Wave64.
#[derive(Debug, Clone)]
pub struct WavDemuxer {
    data_start: u64,
    data_end: u64,
    pos: u64,
    packet_size: u64,
    block_align: u32,
    frames_per_block: u32,
    pub(super) info: Option<ByteRange>,
    pub(super) bext: Option<ByteRange>,
}

impl FormatDemuxer for WavDemuxer {
    #[inline]
    fn open<S: Source>(src: &mut S, ctx: &mut Context) -> Result<Self> {
        let (flavor, first) = chunks::flavor(src)?;
        let found = chunks::walk(src, ctx, flavor, first)?;
        let Found {
            fmt,
            data,
            info,
            bext,
            fact,
        } = found;
        let (f, fmt_body, fmt_size) = fmt.ok_or(Error::malformed(
            first,
            &"wav: no fmt chunk before the data (RIFF MCI, WAVE form)",
        ))?;
        let (data_start, data_end) =
            data.ok_or(Error::malformed(first, &"wav: no data chunk (RIFF MCI, WAVE form)"))?;
        let tag = format_tag(src, &f, fmt_body, fmt_size)?;
        let codec = wave_codec(tag, f.bits_per_sample.get());
        let block_align = f.block_align.get() as u32;
        let frames_per_block = frames_per_block(codec, f.channels.get(), block_align);
        let duration = duration(&f, codec, fact, frames_per_block, data_end - data_start);
        let track = track_of(&f, codec, tag, duration);
        let time_base = track.time_base;
        ctx.add_track(track, fmt_body);
        ctx.info.duration_us = duration.map(|d| time_base.to_micros(d as i64) as u64);
        ctx.info.bit_rate = Some(f.byte_rate.get() as u64 * 8);
        Ok(WavDemuxer {
            data_start,
            data_end,
            pos: data_start,
            packet_size: packet_size(block_align),
            block_align,
            frames_per_block,
            info,
            bext,
        })
    }

    #[inline]
    fn next_packet<'s, S: Source>(&mut self, src: &'s mut S, ctx: &mut Context) -> Result<Option<Packet<'s>>> {
        let _ = ctx;
        if self.pos >= self.data_end {
            return Ok(None);
        }
        let size = self.packet_size.min(self.data_end - self.pos);
        let at = self.pos;
        let data = src.bytes(at, size as usize)?;
        self.pos += size;
        let (pts, duration) = self.timing(at - self.data_start, size);
        Ok(Some(
            Packet::contiguous(0, at, data)
                .with_times(pts, pts, duration)
                .with_flags(PacketFlags::keyframe(true)),
        ))
    }

    fn seek<S: Source>(&mut self, _src: &mut S, _ctx: &mut Context, _track: usize, ts: i64) -> Result<()> {
        let ts = ts.max(0) as u64;
        let ba = self.block_align.max(1) as u64;
        // Land on the packet holding the target, on the same grid of
        // packets as a read from the start.
        let offset = if self.frames_per_block > 0 {
            (ts / self.frames_per_block as u64).saturating_mul(ba) / self.packet_size.max(1) * self.packet_size
        } else {
            0
        };
        self.pos = self.data_start.saturating_add(offset).min(self.data_end);
        Ok(())
    }

    fn next_tag<'s, S: Source>(
        &mut self,
        src: &'s mut S,
        ctx: &Context,
        cur: &mut TagCursor,
    ) -> Result<Option<Tag<'s>>> {
        self.tag(src, ctx, cur)
    }

    fn max_packet_size(&self) -> Option<usize> {
        Some(self.packet_size as usize)
    }
}

impl WavDemuxer {
    /// Timestamp and duration of the packet at byte `rel` of the data.
    fn timing(&self, rel: u64, size: u64) -> (Option<i64>, Option<u64>) {
        if self.frames_per_block == 0 || self.block_align == 0 {
            return (None, None);
        }
        let ba = self.block_align as u64;
        let fpb = self.frames_per_block as u64;
        let pts = (rel / ba * fpb) as i64;
        (Some(pts), Some(size / ba * fpb))
    }
}

/// The format tag, from the SubFormat GUID of a WAVEFORMATEXTENSIBLE.
#[inline]
fn format_tag<S: Source>(src: &mut S, f: &WaveFormat, fmt_body: u64, fmt_size: u64) -> Result<u16> {
    let tag = f.format_tag.get();
    if tag == WAVE_FORMAT_EXTENSIBLE && fmt_size >= EXTENSIBLE_SIZE {
        // Only the SubFormat GUID's first two bytes, at their place in the
        // layout: one small read on the open path.
        let at = fmt_body + offset_of!(WaveFormatExtensible, sub_format) as u64;
        return Ok(u16::from_le_bytes(src.array(at)?));
    }
    Ok(tag)
}

/// Sample frames per block: from the ADPCM block layouts (IMA: 4-byte
/// header per channel, 4 bits a sample; MS: 7-byte header holding two
/// samples, 4 bits a sample), 1 for PCM, 0 when unknown.
#[inline]
fn frames_per_block(codec: Codec, channels: u16, block_align: u32) -> u32 {
    let ch = channels as u32;
    match codec {
        Codec::AdpcmImaWav if ch > 0 && block_align > 4 * ch => (block_align - 4 * ch) * 8 / (4 * ch) + 1,
        Codec::AdpcmMs if ch > 0 && block_align > 6 * ch => (block_align - 6 * ch) * 2 / ch + 2,
        _ if codec.ffmpeg_name().starts_with("pcm_") => 1,
        _ => 0,
    }
}

/// The largest multiple of the block alignment not over [`PACKET_TARGET`]
/// (at least one block), as ffmpeg's WAV reader cuts packets.
#[inline]
fn packet_size(block_align: u32) -> u64 {
    if block_align > 1 {
        let ba = block_align as u64;
        PACKET_TARGET.max(ba) / ba * ba
    } else {
        PACKET_TARGET
    }
}

/// The stream duration in samples: compressed audio takes the `fact`
/// chunk's sample count, as ffmpeg uses it; PCM and the rest the data size.
#[inline]
fn duration(f: &WaveFormat, codec: Codec, fact: Option<u64>, frames_per_block: u32, data_len: u64) -> Option<u64> {
    let block_align = f.block_align.get() as u64;
    if let (Some(n), false) = (fact, codec.ffmpeg_name().starts_with("pcm_")) {
        Some(n)
    } else if frames_per_block > 0 && block_align > 0 {
        Some(data_len / block_align * frames_per_block as u64)
    } else if f.byte_rate.get() > 0 {
        Some(data_len.saturating_mul(f.sample_rate.get() as u64) / f.byte_rate.get() as u64)
    } else {
        None
    }
}

/// The track a WAVE format describes.
#[inline]
fn track_of(f: &WaveFormat, codec: Codec, tag: u16, duration: Option<u64>) -> Track {
    let rate = f.sample_rate.get();
    Track {
        id: 0,
        kind: TrackKind::Audio,
        codec,
        codec_tag: tag as u32,
        time_base: Rational::new(1, rate.max(1)),
        duration,
        sample_rate: rate,
        channels: f.channels.get(),
        bits_per_sample: f.bits_per_sample.get(),
        block_align: f.block_align.get() as u32,
        bit_rate: f.byte_rate.get().saturating_mul(8),
        frames: None,
        ..Track::default()
    }
}
