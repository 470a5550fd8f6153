//! The Monkey's Audio demuxer: the header, the seek table walked in place,
//! frames as packets in ffmpeg's shape, the APEv2 tag's text items as
//! format tags.

use super::header::{Layout, BIT_TABLE_BEFORE};
use crate::error::{Error, Result};
use crate::format::es::{ape, id3};
use crate::format::traits::{Context, FormatDemuxer};
use crate::source::Source;
use crate::tags::{Tag, TagCursor};
use crate::types::{Codec, Packet, PacketFlags, Rational, Track, TrackKind};
use zerocopy::little_endian::U32;

/// Bytes ffmpeg puts before each frame: its sample count and its skip.
pub const PREFIX: usize = 8;
/// The error once the input ends inside a frame.
const CUT: &str = "ape: the input ends inside a frame (seek table)";

/// Demuxer state for Monkey's Audio.
#[derive(Debug, Clone)]
pub struct ApeDemuxer {
    l: Layout,
    /// The input's length when opened: the last frame runs to it.
    len: u64,
    /// Largest packet, prefix included.
    largest: u64,
    /// The APEv2 items, if any.
    tags: Option<(u64, u64, u32)>,
    // Cursor.
    index: u32,
    cut: bool,
}

/// One frame as ffmpeg reads it: from `start` (its seek table offset less
/// its skip), `size` bytes (a multiple of 4), with that skip.
#[derive(Debug, Clone, Copy)]
struct Frame {
    start: u64,
    size: u64,
    skip: u32,
}

impl ApeDemuxer {
    /// Entry `i` of the seek table (the first frame's is where the header
    /// puts it).
    fn offset<S: Source>(&self, src: &mut S, i: u32) -> Result<u64> {
        if i == 0 {
            return Ok(self.l.first);
        }
        let e: U32 = src.read(self.l.table + u64::from(i) * 4)?;
        Ok(u64::from(e.get()))
    }

    /// Byte `i` of the bit table of versions before 3.81.
    fn bit<S: Source>(&self, src: &mut S, i: u32) -> Result<u32> {
        let [b]: [u8; 1] = src.array(self.l.table + self.l.table_len + u64::from(i))?;
        Ok(u32::from(b))
    }

    /// Frame `i` by ffmpeg's rules (`ape_read_header`): a frame runs to the
    /// next entry, the last one to the end of the input less the WAV
    /// trailer (rounded down to 4 bytes; the sample count × 8 when that is
    /// not positive); each starts `skip` = (offset − first) mod 4 bytes
    /// early and its size is rounded up to 4 bytes. Before 3.81 the bit
    /// table adds 4 bytes when the next frame's bit is set, and the skip
    /// becomes bits.
    fn frame<S: Source>(&self, src: &mut S, i: u32) -> Result<Frame> {
        let pos = self.offset(src, i)?;
        let last = i + 1 == self.l.frames;
        let raw: i64 = if last {
            let mut f = self.len as i64 - pos as i64 - self.l.wav_tail as i64;
            f -= f & 3;
            if f <= 0 {
                i64::from(self.l.final_blocks.wrapping_mul(8) as i32)
            } else {
                f
            }
        } else {
            // ffmpeg keeps the size in an int.
            i64::from((self.offset(src, i + 1)? as i64 - pos as i64) as i32)
        };
        let skip = (pos.wrapping_sub(self.l.first) & 3) as u32;
        let mut size = (raw + i64::from(skip) + 3) & !3;
        let mut skip_out = skip;
        if self.l.version < BIT_TABLE_BEFORE {
            if !last && self.bit(src, i + 1)? != 0 {
                size += 4;
            }
            skip_out = (skip << 3) + self.bit(src, i)?;
        }
        if size <= 0 || size > i64::from(i32::MAX) - PREFIX as i64 {
            return Err(Error::malformed(
                self.l.table + u64::from(i) * 4,
                &"ape: a frame of no bytes or over 2 GiB (seek table entries out of order)",
            ));
        }
        Ok(Frame {
            start: pos - u64::from(skip),
            size: size as u64,
            skip: skip_out,
        })
    }

    /// Samples per channel in frame `i`.
    fn blocks(&self, i: u32) -> u32 {
        if i + 1 == self.l.frames {
            self.l.final_blocks
        } else {
            self.l.blocks_per_frame
        }
    }
}

impl FormatDemuxer for ApeDemuxer {
    fn open<S: Source>(src: &mut S, ctx: &mut Context) -> Result<Self> {
        let l = Layout::read(src)?;
        if l.frames == 0 {
            return Err(Error::malformed(4, &"ape: no frames in the file (APE_HEADER)"));
        }
        if l.table_len / 4 < u64::from(l.frames) {
            return Err(Error::malformed(
                4,
                &"ape: fewer seek table entries than frames (APE_DESCRIPTOR)",
            ));
        }
        if l.channels == 0 || l.rate == 0 {
            return Err(Error::malformed(
                4,
                &"ape: no channels or a sample rate of 0 (APE_HEADER)",
            ));
        }
        let table_end = l.table
            + l.table_len
            + if l.version < BIT_TABLE_BEFORE {
                u64::from(l.frames)
            } else {
                0
            };
        if table_end > src.len() {
            return Err(Error::truncated(
                l.table,
                &"ape: the seek table runs past the end of the input",
            ));
        }
        let total = u64::from(l.final_blocks) + u64::from(l.blocks_per_frame) * (u64::from(l.frames) - 1);
        let track = Track {
            id: 0,
            kind: TrackKind::Audio,
            codec: Codec::Ape,
            codec_tag: u32::from_be_bytes(*b"APE "),
            frames: Some(u64::from(l.frames)),
            time_base: Rational::new(1, l.rate),
            duration: Some(total),
            sample_rate: l.rate,
            channels: l.channels,
            bits_per_sample: l.bits,
            ..Track::default()
        };
        ctx.add_track(track, 0);
        ctx.info.duration_us = Some(Rational::new(1, l.rate).to_micros(total as i64).max(0) as u64);
        ctx.info.start_us = Some(0);
        let trailer = id3::find_trailer(src, l.first)?;
        let mut d = ApeDemuxer {
            l,
            len: src.len(),
            largest: 0,
            tags: trailer.ape_items,
            index: 0,
            cut: false,
        };
        // The largest frame, for scratch: one pass over the table, which
        // the input holds (checked above), so the work is bounded by it.
        let mut largest = 0;
        for i in 0..l.frames {
            largest = largest.max(d.frame(src, i).map_or(0, |f| f.size));
        }
        let largest = largest + PREFIX as u64;
        if largest > u64::from(ctx.limits.max_packet) {
            return Err(Error::limit(
                l.table,
                &"ape: a frame larger than Limits::max_packet (seek table)",
            ));
        }
        d.largest = largest;
        Ok(d)
    }

    fn next_packet<'s, S: Source>(&mut self, src: &'s mut S, _ctx: &mut Context) -> Result<Option<Packet<'s>>> {
        if self.cut {
            return Err(Error::truncated(src.len(), &CUT));
        }
        if self.index >= self.l.frames {
            return Ok(None);
        }
        let i = self.index;
        let f = self.frame(src, i)?;
        let left = src.len().saturating_sub(f.start);
        if left == 0 {
            self.cut = true;
            return Err(Error::truncated(f.start, &CUT));
        }
        let take = f.size.min(left);
        let last = i + 1 == self.l.frames;
        // The last frame runs to the end of the input (ffmpeg's rule): it is
        // cut only when the descriptor's audio length says the input ends
        // early.
        let truncated = if last {
            self.l.audio_end.is_some_and(|e| e > src.len())
        } else {
            take < f.size
        };
        let mut head = [0u8; PREFIX];
        let (n, s) = head.split_at_mut(4);
        n.copy_from_slice(&self.blocks(i).to_le_bytes());
        s.copy_from_slice(&f.skip.to_le_bytes());
        src.put(0, &head)?;
        src.gather(f.start, take as usize, PREFIX)?;
        self.index += 1;
        self.cut = truncated;
        let pts = i64::from(i) * i64::from(self.l.blocks_per_frame);
        let src: &'s S = src;
        let data = src.joined(PREFIX + take as usize)?;
        // ffmpeg gives no position (the prefix is not in the input) and no
        // duration.
        Ok(Some(
            Packet::joined(0, None, data)
                .with_times(Some(pts), Some(pts), None)
                .with_flags(PacketFlags {
                    truncated,
                    ..PacketFlags::keyframe(true)
                }),
        ))
    }

    fn seek<S: Source>(&mut self, _src: &mut S, _ctx: &mut Context, _track: usize, ts: i64) -> Result<()> {
        let per = u64::from(self.l.blocks_per_frame.max(1));
        let target = (ts.max(0) as u64 / per).min(u64::from(self.l.frames));
        self.index = target as u32;
        self.cut = false;
        Ok(())
    }

    fn max_packet_size(&self) -> Option<usize> {
        usize::try_from(self.largest).ok()
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
