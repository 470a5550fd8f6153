//! The WavPack demuxer: the first audio block's facts, spans of blocks as
//! packets, the APEv2 tag's text items as format tags.

use super::header::{sub_blocks, BlockHeader, DSD, FINAL, HEADER, MONO};
use crate::error::{Error, Result};
use crate::format::es::{ape, id3};
use crate::format::traits::{Context, FormatDemuxer};
use crate::source::Source;
use crate::tags::{Tag, TagCursor};
use crate::types::{Codec, Packet, PacketFlags, Rational, Track, TrackKind};

/// Most leading zero-sample blocks skipped before the first audio block.
const MAX_LEADING: u32 = 1024;
/// The error once the input ends inside a block.
const CUT: &str = "wavpack: the input ends inside a block (WavPack 5, block header)";

/// Demuxer state for WavPack.
#[derive(Debug, Clone)]
pub struct WavPackDemuxer {
    /// The first audio block.
    first: u64,
    /// Where the audio ends (before the trailing tags).
    audio_end: u64,
    /// Largest packet allowed (`Limits::max_packet`).
    max_packet: u64,
    /// The APEv2 items, if any.
    ape: Option<(u64, u64, u32)>,
    // Cursor.
    pos: u64,
    cut: bool,
}

/// Reads the block header at `at` and checks it.
fn header<S: Source>(src: &mut S, at: u64) -> Result<BlockHeader> {
    let h: BlockHeader = src.read(at)?;
    if !h.is_valid() {
        return Err(Error::malformed(
            at,
            &"wavpack: no valid block header (wvpk, size 24 to 1 MiB, version 0x402 to 0x410)",
        ));
    }
    Ok(h)
}

impl FormatDemuxer for WavPackDemuxer {
    fn open<S: Source>(src: &mut S, ctx: &mut Context) -> Result<Self> {
        let mut at = 0u64;
        let mut h = header(src, at)?;
        let mut skipped = 0;
        while h.block_samples.get() == 0 {
            skipped += 1;
            if skipped > MAX_LEADING {
                return Err(Error::limit(
                    at,
                    &"wavpack: too many blocks without samples at the start",
                ));
            }
            at += h.block_len();
            h = header(src, at)?;
        }
        let flags = h.flags.get();
        let multichannel = !h.is_whole_span();
        let mut channels = if flags & MONO != 0 { 1 } else { 2 };
        let mut rate = h.table_rate();
        if rate.is_none() || multichannel || flags & DSD != 0 {
            let f = sub_blocks(src, at, &h)?;
            if multichannel {
                channels = f.channels.unwrap_or(0);
            }
            rate = f.rate.or(rate);
            if flags & DSD != 0 {
                rate = rate.map(|r| r.saturating_mul(f.rate_x.unwrap_or(1)));
            }
        }
        let rate = rate.ok_or(Error::malformed(
            at,
            &"wavpack: a custom sample rate without an ID_SAMPLE_RATE sub-block (WavPack 5, flags)",
        ))?;
        if rate == 0 || channels == 0 {
            return Err(Error::malformed(
                at,
                &"wavpack: no channels (multichannel without ID_CHANNEL_INFO) or a sample rate of 0",
            ));
        }
        let total = h.total_samples.get();
        let duration = (total != u32::MAX).then_some(u64::from(total));
        let track = Track {
            id: 0,
            kind: TrackKind::Audio,
            codec: Codec::Wavpack,
            time_base: Rational::new(1, rate),
            duration,
            sample_rate: rate,
            channels,
            bits_per_sample: h.bits(),
            ..Track::default()
        };
        ctx.add_track(track, at);
        if let Some(t) = duration {
            ctx.info.duration_us = Some(Rational::new(1, rate).to_micros(i64::from(t as u32)).max(0) as u64);
        }
        ctx.info.start_us = Some(0);
        let trailer = id3::find_trailer(src, at)?;
        Ok(WavPackDemuxer {
            first: at,
            audio_end: trailer.audio_end,
            max_packet: u64::from(ctx.limits.max_packet),
            ape: trailer.ape_items,
            pos: at,
            cut: false,
        })
    }

    fn next_packet<'s, S: Source>(&mut self, src: &'s mut S, _ctx: &mut Context) -> Result<Option<Packet<'s>>> {
        if self.cut {
            return Err(Error::truncated(src.len(), &CUT));
        }
        let at = self.pos;
        if at.saturating_add(HEADER) > self.audio_end {
            if at < self.audio_end {
                self.cut = true;
                return Err(Error::truncated(at, &CUT));
            }
            return Ok(None);
        }
        // The span: blocks from here to the one flagged final, each header
        // read once; the work is bounded by `max_packet` / 32 headers.
        let first = header(src, at)?;
        let mut end = at;
        let mut h = first;
        loop {
            end = end.saturating_add(h.block_len());
            if end - at > self.max_packet {
                return Err(Error::limit(
                    at,
                    &"wavpack: a span of blocks larger than Limits::max_packet",
                ));
            }
            if h.flags.get() & FINAL != 0 || end.saturating_add(HEADER) > self.audio_end {
                break;
            }
            h = header(src, end)?;
        }
        let left = src.len().saturating_sub(at);
        let size = end - at;
        if size > left || h.flags.get() & FINAL == 0 {
            // A span cut by the end of the audio (a block past the input,
            // or no final block before the end) is not given: ffmpeg's
            // `wv_read_packet` drops it too, and the input it was cut from
            // may hold a bad block further on, which would end the whole
            // input with an error before this span (fuzz finding 49).
            self.cut = true;
            return Err(Error::truncated(at.saturating_add(size.min(left)), &CUT));
        }
        let data = src.bytes(at, size as usize)?;
        self.pos = end;
        let pts = i64::from(h.block_index.get());
        Ok(Some(
            Packet::contiguous(0, at, data)
                .with_times(Some(pts), Some(pts), Some(u64::from(h.block_samples.get())))
                .with_flags(PacketFlags::keyframe(true)),
        ))
    }

    fn seek<S: Source>(&mut self, src: &mut S, _ctx: &mut Context, _track: usize, ts: i64) -> Result<()> {
        // Blocks vary in size: walk the headers (one read a block).
        let mut at = self.first;
        let mut last_initial = at;
        while at.saturating_add(HEADER) <= self.audio_end {
            let h = header(src, at)?;
            if h.flags.get() & super::header::INITIAL != 0 {
                if i64::from(h.block_index.get()) > ts {
                    break;
                }
                last_initial = at;
            }
            at = at.saturating_add(h.block_len());
        }
        self.pos = last_initial;
        self.cut = false;
        Ok(())
    }

    fn next_tag<'s, S: Source>(
        &'s mut self,
        src: &'s mut S,
        ctx: &Context,
        cur: &mut TagCursor,
    ) -> Result<Option<Tag<'s>>> {
        ape::next_trailer_item(src, self.ape, ctx, cur)
    }
}
