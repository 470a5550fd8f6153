//! The DSF demuxer: the `DSD ` and `fmt ` chunks, blocks of all channels
//! as packets, the padded last block cut to the sample count, the ID3v2
//! tag at the metadata pointer as format tags.

use crate::error::{Error, Result};
use crate::format::es::id3::{self, StreamTags};
use crate::format::traits::{Context, FormatDemuxer};
use crate::source::Source;
use crate::tags::{Tag, TagCursor};
use crate::types::{Codec, Packet, PacketFlags, Rational, Track, TrackKind};
use zerocopy::little_endian::{U32, U64};
use zerocopy::{FromBytes, Immutable, KnownLayout, Unaligned};

/// The `DSD ` chunk (DSF File Format Specification 1.01, "DSD chunk").
#[derive(FromBytes, KnownLayout, Immutable, Unaligned, Debug, Clone, Copy)]
#[repr(C)]
pub struct DsdChunk {
    /// `DSD `.
    pub id: [u8; 4],
    /// 28.
    pub size: U64,
    /// Bytes of the whole file.
    pub file_size: U64,
    /// Offset of the metadata (ID3v2) chunk, 0 when there is none.
    pub metadata: U64,
}

/// The `fmt ` chunk (DSF File Format Specification 1.01, "fmt chunk").
#[derive(FromBytes, KnownLayout, Immutable, Unaligned, Debug, Clone, Copy)]
#[repr(C)]
pub struct FmtChunk {
    /// `fmt `.
    pub id: [u8; 4],
    /// 52.
    pub size: U64,
    /// Format version, 1.
    pub version: U32,
    /// Format id, 0 = DSD raw.
    pub format_id: U32,
    /// Channel type: 1 mono, 2 stereo, 3 3 channels, 4 quad, 5 4
    /// channels, 6 5 channels, 7 5.1.
    pub channel_type: U32,
    /// Channel count.
    pub channels: U32,
    /// Sampling frequency in Hz (2822400, 5644800, ...).
    pub sample_rate: U32,
    /// Bits per sample: 1 = LSB first, 8 = MSB first.
    pub bits: U32,
    /// 1-bit samples per channel.
    pub sample_count: U64,
    /// Bytes per channel in a block (4096).
    pub block_size: U32,
    /// Zero.
    pub reserved: U32,
}

/// Where the `fmt ` chunk is (after the 28-byte `DSD ` chunk).
const FMT_AT: u64 = 28;
/// Where the `data` chunk is: ffmpeg, like the specification, takes it
/// right after the 52-byte `fmt ` chunk.
const DATA_AT: u64 = 80;
/// The `data` chunk header: id and 64-bit size.
const DATA_HEADER: u64 = 12;
/// The error once the input ends inside a block.
const CUT: &str = "dsf: the input ends inside a block (DSF spec, data chunk)";

/// Demuxer state for DSF.
#[derive(Debug, Clone)]
pub struct DsfDemuxer {
    channels: u64,
    /// Bytes of one packet: a block of every channel.
    block_align: u64,
    /// Where the sample data starts.
    data_start: u64,
    /// Where the data chunk ends, as its size says.
    data_end: u64,
    /// Bytes of real audio, all channels (sample count / 8 × channels).
    audio_size: u64,
    tags: StreamTags,
    // Cursor.
    pos: u64,
    cut: bool,
}

impl DsfDemuxer {
    /// Bytes of stored data, padding included.
    fn data_size(&self) -> u64 {
        self.data_end - self.data_start
    }

    /// The padded last block cut to the audio: each channel's real bytes
    /// joined in scratch (ffmpeg `dsf_read_packet`, `last_packet`).
    fn last_block<'s, S: Source>(&mut self, src: &'s mut S, at: u64) -> Result<Packet<'s>> {
        let data_pos = at - self.data_start;
        let size = self
            .audio_size
            .checked_sub(data_pos)
            .filter(|&s| s > 0)
            .ok_or(Error::malformed(
                at,
                &"dsf: the sample count ends before the last block (DSF spec, fmt chunk)",
            ))?;
        let per_channel = size / self.channels;
        let stride = self.block_align / self.channels;
        for c in 0..self.channels {
            let from = at + c * stride;
            let want = per_channel.min(src.len().saturating_sub(from));
            if want < per_channel {
                self.cut = true;
                return Err(Error::truncated(from, &CUT));
            }
            src.gather(from, per_channel as usize, (c * per_channel) as usize)?;
        }
        self.pos = self.data_end;
        let pts = (data_pos / self.channels).min(i64::MAX as u64) as i64;
        let src: &'s S = src;
        let data = src.joined((per_channel * self.channels) as usize)?;
        Ok(Packet::joined(0, Some(at), data)
            .with_times(Some(pts), Some(pts), Some(per_channel))
            .with_flags(PacketFlags::keyframe(true)))
    }
}

impl FormatDemuxer for DsfDemuxer {
    fn open<S: Source>(src: &mut S, ctx: &mut Context) -> Result<Self> {
        let d: DsdChunk = src.read(0)?;
        if &d.id != b"DSD " || d.size.get() != 28 {
            return Err(Error::malformed(
                0,
                &"dsf: no DSD chunk of 28 bytes (DSF spec, DSD chunk)",
            ));
        }
        let f: FmtChunk = src.read(FMT_AT)?;
        if &f.id != b"fmt " || f.size.get() != 52 {
            return Err(Error::malformed(
                FMT_AT,
                &"dsf: no fmt chunk of 52 bytes after the DSD chunk (DSF spec, fmt chunk)",
            ));
        }
        if f.version.get() != 1 || f.format_id.get() != 0 {
            return Err(Error::unsupported(
                FMT_AT + 12,
                &"dsf: format version other than 1 or format id other than DSD raw",
            ));
        }
        let channels = f.channels.get();
        let codec = match f.bits.get() {
            1 => Codec::DsdLsbfPlanar,
            8 => Codec::DsdMsbfPlanar,
            _ => {
                return Err(Error::malformed(
                    FMT_AT + 32,
                    &"dsf: bits per sample neither 1 nor 8 (DSF spec, fmt chunk)",
                ))
            }
        };
        let rate = f.sample_rate.get() / 8;
        let block = u64::from(f.block_size.get());
        if channels == 0 || channels > u32::from(u16::MAX) || rate == 0 || block == 0 {
            return Err(Error::malformed(
                FMT_AT + 24,
                &"dsf: no channels, a sampling frequency under 8 or a block size of 0 (DSF spec, fmt chunk)",
            ));
        }
        let ch = u64::from(channels);
        let block_align = block * ch;
        if block_align > u64::from(ctx.limits.max_packet) {
            return Err(Error::limit(
                FMT_AT + 52,
                &"dsf: a block of all channels larger than Limits::max_packet",
            ));
        }
        let head: [u8; 4] = src.array(DATA_AT)?;
        let size = src.read::<U64>(DATA_AT + 4)?.get();
        if &head != b"data" || size < DATA_HEADER {
            return Err(Error::malformed(
                DATA_AT,
                &"dsf: no data chunk after the fmt chunk (DSF spec, data chunk)",
            ));
        }
        let data_start = DATA_AT + DATA_HEADER;
        let data_end = DATA_AT.saturating_add(size);
        let samples = f.sample_count.get();
        let track = Track {
            id: 0,
            kind: TrackKind::Audio,
            codec,
            time_base: Rational::new(1, rate),
            duration: Some(samples / 8),
            sample_rate: rate,
            channels: channels as u16,
            block_align: block_align as u32,
            bit_rate: u32::try_from(ch * 8 * u64::from(rate)).unwrap_or(0),
            ..Track::default()
        };
        ctx.add_track(track, FMT_AT);
        ctx.info.duration_us = Some(
            Rational::new(1, rate)
                .to_micros((samples / 8).min(i64::MAX as u64) as i64)
                .max(0) as u64,
        );
        ctx.info.start_us = Some(0);
        let pointer = d.metadata.get();
        // ffmpeg reads an ID3v2 tag wherever the pointer points.
        let id3 = id3::id3v2_at(src, pointer)?;
        Ok(DsfDemuxer {
            channels: ch,
            block_align,
            data_start,
            data_end,
            audio_size: (samples / 8).saturating_mul(ch),
            tags: StreamTags::new(id3, None),
            pos: data_start,
            cut: false,
        })
    }

    fn next_packet<'s, S: Source>(&mut self, src: &'s mut S, _ctx: &mut Context) -> Result<Option<Packet<'s>>> {
        if self.cut {
            return Err(Error::truncated(src.len(), &CUT));
        }
        let at = self.pos;
        if at >= self.data_end {
            return Ok(None);
        }
        if self.data_size() > self.audio_size && at == self.data_end.saturating_sub(self.block_align) {
            return self.last_block(src, at).map(Some);
        }
        let size = (self.data_end - at).min(self.block_align);
        let left = src.len().saturating_sub(at);
        if left == 0 {
            return Err(Error::truncated(at, &CUT));
        }
        let truncated = size > left;
        let size = size.min(left);
        let pts = ((at - self.data_start) / self.channels).min(i64::MAX as u64) as i64;
        let data = src.bytes(at, size as usize)?;
        self.pos = at + size;
        self.cut = truncated;
        Ok(Some(
            Packet::contiguous(0, at, data)
                .with_times(Some(pts), Some(pts), Some(self.block_align / self.channels))
                .with_flags(PacketFlags {
                    truncated,
                    ..PacketFlags::keyframe(true)
                }),
        ))
    }

    fn seek<S: Source>(&mut self, _src: &mut S, _ctx: &mut Context, _track: usize, ts: i64) -> Result<()> {
        let per_channel = self.block_align / self.channels;
        let block = (ts.max(0) as u64 / per_channel).min(self.data_size() / self.block_align);
        self.pos = self.data_start + block * self.block_align;
        self.cut = false;
        Ok(())
    }

    fn next_tag<'s, S: Source>(
        &'s mut self,
        src: &'s mut S,
        ctx: &Context,
        cur: &mut TagCursor,
    ) -> Result<Option<Tag<'s>>> {
        self.tags.next(src, ctx.limits.max_tag_bytes, cur)
    }

    fn max_packet_size(&self) -> Option<usize> {
        usize::try_from(self.block_align).ok()
    }
}
