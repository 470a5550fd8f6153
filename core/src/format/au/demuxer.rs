//! The AU demuxer: the header, packets of `rate / 25` blocks (at most
//! 1024) to the end of the input as ffmpeg's `au` demuxer cuts them, seeking, and the annotation's
//! tags.

use super::annotation;
use super::header::{self, Header, HEADER_LEN};
use crate::error::{Error, Result};
use crate::format::traits::{Context, FormatDemuxer};
use crate::source::Source;
use crate::tags::{text_or_bytes, Tag, TagCursor, TagKey, TagScope};
use crate::types::{Packet, PacketFlags, Rational, Track, TrackKind};

/// Most blocks per packet (ffmpeg's raw PCM reader).
const MAX_BLOCKS_PER_PACKET: u64 = 1024;
/// Packets per second ffmpeg's raw PCM reader aims at: a packet is
/// `rate / 25` blocks (at least 1, at most 1024).
const PACKETS_PER_SECOND: u64 = 25;
/// Tag walk stages ([`TagCursor`] `stage`): not started, in the
/// annotation, done.
const STAGE_START: u32 = 0;
const STAGE_ANNOTATION: u32 = 1;
const STAGE_DONE: u32 = 2;

/// Demuxer state for AU.
#[derive(Debug, Clone)]
pub struct AuDemuxer {
    data_start: u64,
    /// The end of the input: packets run to it.
    end: u64,
    /// Bytes of a whole packet.
    packet_bytes: u64,
    /// Bits of one sample frame (bits per sample × channels).
    frame_bits: u64,
    // Cursor.
    pos: u64,
    frame: u64,
}

/// Frames in `bytes` bytes of samples of `frame_bits` bits each.
fn frames_in(bytes: u64, frame_bits: u64) -> u64 {
    bytes.saturating_mul(8) / frame_bits.max(1)
}

/// The track the header describes, with the duration in frames.
fn audio_track(h: &Header, duration: u64) -> Track {
    let bits = h.encoding.bits;
    let bit_rate = u64::from(h.rate)
        .saturating_mul(u64::from(h.channels))
        .saturating_mul(u64::from(bits))
        .min(u64::from(u32::MAX)) as u32;
    Track {
        id: 0,
        kind: TrackKind::Audio,
        codec: h.encoding.codec,
        codec_tag: h.encoding_id,
        time_base: Rational::new(1, h.rate),
        duration: Some(duration),
        sample_rate: h.rate,
        channels: h.channels,
        bits_per_sample: bits as u16,
        block_align: (u32::from(h.channels) * bits / 8).max(1),
        bit_rate,
        ..Track::default()
    }
}

impl FormatDemuxer for AuDemuxer {
    fn open<S: Source>(src: &mut S, ctx: &mut Context) -> Result<Self> {
        let h = header::read_header(src)?;
        let frame_bits = u64::from(h.encoding.bits) * u64::from(h.channels);
        // A block: one frame, at least a byte; for G.726 eight frames.
        let block = if h.encoding.g726 {
            frame_bits
        } else {
            (frame_bits / 8).max(1)
        };
        let blocks = (u64::from(h.rate) / PACKETS_PER_SECOND).clamp(1, MAX_BLOCKS_PER_PACKET);
        let packet_bytes = block * blocks;
        if packet_bytes > u64::from(ctx.limits.max_packet) {
            return Err(Error::limit(
                20,
                &"au: a packet of rate/25 blocks is over Limits::max_packet",
            ));
        }
        let end = src.len();
        let in_file = end - h.data_start;
        let data = match h.data_size {
            Some(d) => {
                if d > in_file {
                    ctx.diags.report("au.data-beyond-eof", 8);
                }
                d
            }
            None => {
                // ffprobe estimates the duration from the bit rate and the
                // bytes after the header: the same figure.
                ctx.diags.report("au.data-size-unknown", 8);
                in_file
            }
        };
        let duration = frames_in(data, frame_bits);
        let track = audio_track(&h, duration);
        let tb = track.time_base;
        ctx.add_track(track, 0);
        ctx.info.duration_us = Some(tb.to_micros(duration.min(i64::MAX as u64) as i64).max(0) as u64);
        ctx.info.start_us = Some(0);
        Ok(AuDemuxer {
            data_start: h.data_start,
            end,
            packet_bytes,
            frame_bits,
            pos: h.data_start,
            frame: 0,
        })
    }

    fn next_packet<'s, S: Source>(&mut self, src: &'s mut S, _ctx: &mut Context) -> Result<Option<Packet<'s>>> {
        if self.pos >= self.end {
            return Ok(None);
        }
        let size = self.packet_bytes.min(self.end - self.pos);
        let frames = frames_in(size, self.frame_bits);
        let at = self.pos;
        let pts = self.frame.min(i64::MAX as u64) as i64;
        let data = src.bytes(at, size as usize)?;
        self.pos += size;
        self.frame = self.frame.saturating_add(frames);
        Ok(Some(
            Packet::contiguous(0, at, data)
                .with_times(Some(pts), Some(pts), Some(frames))
                .with_flags(PacketFlags::keyframe(true)),
        ))
    }

    fn seek<S: Source>(&mut self, _src: &mut S, _ctx: &mut Context, _track: usize, ts: i64) -> Result<()> {
        let per_packet = frames_in(self.packet_bytes, self.frame_bits).max(1);
        let packets = (ts.max(0) as u64 / per_packet).min((self.end - self.data_start) / self.packet_bytes);
        self.pos = self.data_start + packets * self.packet_bytes;
        self.frame = packets * per_packet;
        Ok(())
    }

    fn next_tag<'s, S: Source>(
        &'s mut self,
        src: &'s mut S,
        ctx: &Context,
        cur: &mut TagCursor,
    ) -> Result<Option<Tag<'s>>> {
        if cur.stage == STAGE_START {
            cur.stage = STAGE_ANNOTATION;
            cur.offset = HEADER_LEN;
            // The scan is bounded like any tag: a huge annotation is not
            // walked to its end.
            cur.end = self.data_start.min(HEADER_LEN + u64::from(ctx.limits.max_tag_bytes));
        }
        while cur.stage == STAGE_ANNOTATION {
            let Some(pair) = annotation::next_pair(src, cur.offset, cur.end)? else {
                cur.stage = STAGE_DONE;
                break;
            };
            match pair.next {
                Some(n) => cur.offset = n,
                None => cur.stage = STAGE_DONE,
            }
            let Some(name) = pair.name else {
                continue;
            };
            let len = pair.value_len.min(u64::from(ctx.limits.max_tag_bytes)) as usize;
            let value = src.bytes(pair.value_at, len)?;
            return Ok(Some(Tag {
                scope: TagScope::Format,
                key: TagKey::Text(name),
                name: Some(name),
                value: text_or_bytes(value),
            }));
        }
        Ok(None)
    }

    fn max_packet_size(&self) -> Option<usize> {
        usize::try_from(self.packet_bytes.min(self.end - self.data_start)).ok()
    }
}
