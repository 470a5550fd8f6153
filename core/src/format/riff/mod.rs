//! RIFF audio family: WAV (including WAVE_FORMAT_EXTENSIBLE), RF64/BW64 and
//! Sony Wave64.
//!
//! References: Microsoft "Multimedia Programming Interface and Data
//! Specifications 1.0" (RIFF, `fmt `, `data`, `LIST`/`INFO`); EBU Tech 3306
//! (RF64, `ds64`); EBU Tech 3285 (`bext`); the Sony Wave64 specification
//! (GUID chunk ids, 64-bit sizes, 8-byte alignment).
//!
//! Packets follow ffmpeg's WAV reader so that they match ffprobe exactly: each
//! packet is the largest multiple of the block alignment not over 4096 bytes
//! (at least one block), the last one possibly shorter.

use crate::error::{Error, Result};
use crate::format::traits::{Context, FormatDemuxer};
use crate::signature::W64_RIFF_GUID;
use crate::source::Source;
use crate::tags::{text_or_bytes, Tag, TagCursor, TagKey, TagScope, TagValue};
use crate::types::{ByteRange, Codec, Packet, PacketFlags, Rational, Track, TrackKind};
use zerocopy::little_endian::{U16, U32, U64};
use zerocopy::{FromBytes, Immutable, KnownLayout, Unaligned};

/// WAVEFORMATEX without `cbSize` (Microsoft RIFF spec, "WAVE Form Type").
#[derive(FromBytes, KnownLayout, Immutable, Unaligned, Debug)]
#[repr(C)]
pub struct WaveFormat {
    /// wFormatTag.
    pub format_tag: U16,
    /// nChannels.
    pub channels: U16,
    /// nSamplesPerSec.
    pub sample_rate: U32,
    /// nAvgBytesPerSec.
    pub byte_rate: U32,
    /// nBlockAlign.
    pub block_align: U16,
    /// wBitsPerSample.
    pub bits_per_sample: U16,
}

/// The `ds64` chunk's leading fields (EBU Tech 3306 §3).
#[derive(FromBytes, KnownLayout, Immutable, Unaligned, Debug)]
#[repr(C)]
pub struct Ds64 {
    /// Size of the RF64 form.
    pub riff_size: U64,
    /// Size of the `data` chunk.
    pub data_size: U64,
    /// Sample frames in the file.
    pub sample_count: U64,
}

/// WAVE_FORMAT_EXTENSIBLE.
pub(crate) const FORMAT_EXTENSIBLE: u16 = 0xFFFE;
/// ffmpeg's packet size for WAV.
const PACKET_TARGET: u64 = 4096;

/// The tail shared by every Wave64 GUID after its first four bytes
/// (except `riff`, see [`W64_RIFF_GUID`]).
const W64_GUID_TAIL: [u8; 12] = [0xF3, 0xAC, 0xD3, 0x11, 0x8C, 0xD1, 0x00, 0xC0, 0x4F, 0x8E, 0xDB, 0x8A];

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Flavor {
    Riff,
    Rf64,
    W64,
}

/// Demuxer state for WAV, RF64 and Wave64.
#[derive(Debug, Clone)]
pub struct WavDemuxer {
    data_start: u64,
    data_end: u64,
    pos: u64,
    packet_size: u64,
    block_align: u32,
    frames_per_block: u32,
    info: Option<ByteRange>,
    bext: Option<ByteRange>,
}

/// Maps a WAVE format tag and sample size to a codec (ffmpeg's `riff.c` table).
pub(crate) fn codec_for(tag: u16, bits: u16) -> Codec {
    match (tag, bits) {
        (0x0001, 8) => Codec::PcmU8,
        (0x0001, 16) => Codec::PcmS16Le,
        (0x0001, 24) => Codec::PcmS24Le,
        (0x0001, 32) => Codec::PcmS32Le,
        (0x0003, 64) => Codec::PcmF64Le,
        (0x0003, _) => Codec::PcmF32Le,
        (0x0002, _) => Codec::AdpcmMs,
        (0x0006, _) => Codec::PcmAlaw,
        (0x0007, _) => Codec::PcmMulaw,
        (0x0011, _) => Codec::AdpcmImaWav,
        (0x0020, _) => Codec::AdpcmYamaha,
        (0x0031, _) => Codec::GsmMs,
        (0x0045 | 0x0064, _) => Codec::AdpcmG726,
        (0x0050, _) => Codec::Mp2,
        (0x0055, _) => Codec::Mp3,
        (0x00FF | 0x1600 | 0x706D, _) => Codec::Aac,
        (0x0160, _) => Codec::Wmav1,
        (0x0161, _) => Codec::Wmav2,
        (0x2000, _) => Codec::Ac3,
        (0x2001, _) => Codec::Dts,
        (0xF1AC, _) => Codec::Flac,
        _ => Codec::Unknown,
    }
}

/// RIFF INFO chunk ids and the names ffprobe gives them (ffmpeg `riff.c`).
pub(crate) fn info_name(id: &[u8; 4]) -> Option<&'static str> {
    Some(match id {
        b"IART" => "artist",
        b"ICMT" => "comment",
        b"ICOP" => "copyright",
        b"ICRD" => "date",
        b"IGNR" => "genre",
        b"ILNG" => "language",
        b"INAM" => "title",
        b"IPRD" => "album",
        b"IPRT" | b"ITRK" => "track",
        b"ISFT" => "encoder",
        b"ISMP" => "timecode",
        b"ITCH" => "encoded_by",
        b"IENG" => "engineer",
        b"ISBJ" => "subject",
        b"IKEY" => "keywords",
        _ => return None,
    })
}

struct Chunk {
    id: [u8; 4],
    body: u64,
    size: u64,
    next: u64,
}

fn read_chunk<S: Source>(src: &mut S, at: u64, flavor: Flavor) -> Result<Chunk> {
    if flavor == Flavor::W64 {
        let h: [u8; 24] = src.array(at)?;
        let mut id = [0u8; 4];
        id.copy_from_slice(h.get(..4).unwrap_or(&[0; 4]));
        if h.get(4..16) != Some(&W64_GUID_TAIL[..]) {
            // Unknown GUID family: keep it skippable, name it with its bytes.
            id = [b'?'; 4];
        }
        let mut s = [0u8; 8];
        s.copy_from_slice(h.get(16..24).unwrap_or(&[0; 8]));
        let total = u64::from_le_bytes(s);
        if total < 24 {
            return Err(Error::malformed(at, "Wave64 chunk size smaller than its header"));
        }
        let size = total - 24;
        let next = at.saturating_add(total).saturating_add(7) & !7;
        Ok(Chunk {
            id,
            body: at + 24,
            size,
            next,
        })
    } else {
        let h: [u8; 8] = src.array(at)?;
        let id = [h[0], h[1], h[2], h[3]];
        let size = u32::from_le_bytes([h[4], h[5], h[6], h[7]]) as u64;
        let next = at.saturating_add(8).saturating_add(size).saturating_add(size & 1);
        Ok(Chunk {
            id,
            body: at + 8,
            size,
            next,
        })
    }
}

impl FormatDemuxer for WavDemuxer {
    fn open<S: Source>(src: &mut S, ctx: &mut Context) -> Result<Self> {
        let head: [u8; 12] = src.array(0)?;
        let (flavor, first) = match head.get(0..4) {
            Some(b"RIFF") => (Flavor::Riff, 12u64),
            Some(b"RF64") | Some(b"BW64") => (Flavor::Rf64, 12),
            _ => {
                let g: [u8; 16] = src.array(0)?;
                if g != W64_RIFF_GUID {
                    return Err(Error::malformed(0, "not a RIFF, RF64 or Wave64 file"));
                }
                (Flavor::W64, 40)
            }
        };
        let file_len = src.len();
        let mut at = first;
        let mut fmt: Option<(WaveFormat, u64, u64)> = None;
        let mut data: Option<(u64, u64)> = None;
        let mut ds64_data: Option<u64> = None;
        let mut info = None;
        let mut bext = None;
        let mut fact: Option<u64> = None;
        let mut walked = 0u32;
        while at.saturating_add(8) <= file_len {
            walked += 1;
            if walked > ctx.limits.max_top_level {
                ctx.diags.report("wav.too-many-chunks", at);
                break;
            }
            let c = match read_chunk(src, at, flavor) {
                Ok(c) => c,
                Err(e) if e.is_truncation() => break,
                Err(e) => return Err(e),
            };
            match &c.id {
                b"ds64" if flavor == Flavor::Rf64 => {
                    let b: [u8; 24] = src.array(c.body)?;
                    if let Ok(d) = Ds64::read_from_bytes(&b) {
                        ds64_data = Some(d.data_size.get());
                    }
                }
                b"fmt " => {
                    if c.size < 16 {
                        return Err(Error::malformed(c.body, "fmt chunk shorter than WAVEFORMAT (16 bytes)"));
                    }
                    let b: [u8; 16] = src.array(c.body)?;
                    let f = WaveFormat::read_from_bytes(&b).map_err(|_| Error::malformed(c.body, "fmt chunk"))?;
                    fmt = Some((f, c.body, c.size));
                }
                b"data" => {
                    let mut size = c.size;
                    if flavor == Flavor::Rf64 && c.size == 0xFFFF_FFFF {
                        size = ds64_data.unwrap_or(u64::MAX);
                    }
                    let end = c.body.saturating_add(size);
                    if end > file_len {
                        ctx.diags.report("wav.data-beyond-eof", c.body);
                    }
                    if data.is_none() {
                        data = Some((c.body, end.min(file_len)));
                    }
                    if end >= file_len {
                        break;
                    }
                    // Keep walking past the data for LIST/bext chunks after it,
                    // as ffmpeg does on seekable input.
                    let next = if flavor == Flavor::W64 {
                        c.next
                    } else {
                        end.saturating_add(size & 1)
                    };
                    at = next;
                    continue;
                }
                b"LIST" if c.size >= 4 => {
                    let kind: [u8; 4] = src.array(c.body)?;
                    if &kind == b"INFO" && info.is_none() {
                        let len = c.size.min(file_len.saturating_sub(c.body));
                        info = Some(ByteRange {
                            offset: c.body + 4,
                            len: len.saturating_sub(4).min(u32::MAX as u64) as u32,
                        });
                    }
                }
                b"fact" if c.size >= 4 => {
                    let b: [u8; 4] = src.array(c.body)?;
                    let n = u32::from_le_bytes(b);
                    if n > 0 {
                        fact = Some(n as u64);
                    }
                }
                b"bext" if c.size >= 602 => {
                    bext = Some(ByteRange {
                        offset: c.body,
                        len: c.size.min(u32::MAX as u64) as u32,
                    });
                }
                _ => {}
            }
            if c.next <= at {
                break;
            }
            at = c.next;
        }
        let (f, fmt_body, fmt_size) = fmt.ok_or(Error::malformed(first, "no fmt chunk before the data"))?;
        let (data_start, data_end) = data.ok_or(Error::malformed(first, "no data chunk"))?;
        let mut tag = f.format_tag.get();
        let bits = f.bits_per_sample.get();
        if tag == FORMAT_EXTENSIBLE && fmt_size >= 40 {
            // WAVEFORMATEXTENSIBLE: cbSize(2) validBits(2) channelMask(4) SubFormat GUID.
            let sub: [u8; 2] = src.array(fmt_body + 24)?;
            tag = u16::from_le_bytes(sub);
        }
        let codec = codec_for(tag, bits);
        let channels = f.channels.get();
        let rate = f.sample_rate.get();
        let block_align = f.block_align.get() as u32;
        let frames_per_block = match codec {
            Codec::AdpcmImaWav if channels > 0 && block_align > 4 * channels as u32 => {
                (block_align - 4 * channels as u32) * 8 / (4 * channels as u32) + 1
            }
            Codec::AdpcmMs if channels > 0 && block_align > 6 * channels as u32 => {
                (block_align - 6 * channels as u32) * 2 / channels as u32 + 2
            }
            _ if codec.ffmpeg_name().starts_with("pcm_") => 1,
            _ => 0,
        };
        let mut packet_size = PACKET_TARGET;
        if block_align > 1 {
            let ba = block_align as u64;
            packet_size = packet_size.max(ba) / ba * ba;
        }
        let data_len = data_end - data_start;
        // Compressed audio: the `fact` chunk's sample count, as ffmpeg uses
        // it; PCM: the data size.
        let duration = if let (Some(n), false) = (fact, codec.ffmpeg_name().starts_with("pcm_")) {
            Some(n)
        } else if frames_per_block > 0 && block_align > 0 {
            Some(data_len / block_align as u64 * frames_per_block as u64)
        } else if f.byte_rate.get() > 0 {
            Some(data_len.saturating_mul(rate as u64) / f.byte_rate.get() as u64)
        } else {
            None
        };
        let track = Track {
            id: 0,
            kind: TrackKind::Audio,
            codec,
            codec_tag: tag as u32,
            time_base: Rational::new(1, rate.max(1)),
            duration,
            sample_rate: rate,
            channels,
            bits_per_sample: bits,
            block_align,
            bit_rate: f.byte_rate.get().saturating_mul(8),
            frames: None,
            ..Track::default()
        };
        let time_base = track.time_base;
        ctx.add_track(track, fmt_body);
        ctx.info.duration_us = duration.map(|d| time_base.to_micros(d as i64) as u64);
        ctx.info.bit_rate = Some(f.byte_rate.get() as u64 * 8);
        Ok(WavDemuxer {
            data_start,
            data_end,
            pos: data_start,
            packet_size,
            block_align,
            frames_per_block,
            info,
            bext,
        })
    }

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
        Ok(Some(Packet {
            track: 0,
            pts,
            dts: pts,
            duration,
            flags: PacketFlags {
                keyframe: true,
                ..PacketFlags::default()
            },
            pos: Some(at),
            contiguous: true,
            data,
        }))
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
        loop {
            match cur.stage {
                0 => {
                    if let Some(r) = self.info {
                        cur.offset = r.offset;
                        cur.end = r.offset + r.len as u64;
                        cur.stage = 1;
                    } else {
                        cur.stage = 2;
                    }
                }
                1 => {
                    if cur.offset.saturating_add(8) > cur.end {
                        cur.stage = 2;
                        continue;
                    }
                    let h: [u8; 8] = src.array(cur.offset)?;
                    let id = [h[0], h[1], h[2], h[3]];
                    let size = u32::from_le_bytes([h[4], h[5], h[6], h[7]]) as u64;
                    let body = cur.offset + 8;
                    cur.offset = body.saturating_add(size).saturating_add(size & 1);
                    if size == 0 || size > ctx.limits.max_tag_bytes as u64 || body + size > cur.end {
                        continue;
                    }
                    let v = src.bytes(body, size as usize)?;
                    return Ok(Some(Tag {
                        scope: TagScope::Format,
                        key: TagKey::FourCc(id),
                        name: info_name(&id),
                        value: text_or_bytes(v),
                    }));
                }
                2 => {
                    let Some(r) = self.bext else {
                        cur.stage = 9;
                        continue;
                    };
                    // EBU Tech 3285: Description (256), Originator (32),
                    // OriginatorReference (32), OriginationDate (10),
                    // OriginationTime (8), TimeReference (u64).
                    // Keys are the spec's field names; names are ffprobe's.
                    const FIELDS: [(u64, usize, &str, &str); 5] = [
                        (0, 256, "description", "comment"),
                        (256, 32, "originator", "encoded_by"),
                        (288, 32, "originator_reference", "originator_reference"),
                        (320, 10, "origination_date", "date"),
                        (330, 8, "origination_time", "creation_time"),
                    ];
                    let i = cur.offset as usize;
                    cur.offset += 1;
                    if let Some(&(off, len, key, name)) = FIELDS.get(i) {
                        let empty = matches!(text_or_bytes(src.bytes(r.offset + off, len)?), TagValue::Text(""));
                        if empty {
                            continue;
                        }
                        let value = text_or_bytes(src.bytes(r.offset + off, len)?);
                        return Ok(Some(Tag {
                            scope: TagScope::Format,
                            key: TagKey::Text(key),
                            name: Some(name),
                            value,
                        }));
                    }
                    if i == FIELDS.len() {
                        let b: [u8; 8] = src.array(r.offset + 338)?;
                        return Ok(Some(Tag {
                            scope: TagScope::Format,
                            key: TagKey::Text("time_reference"),
                            name: Some("time_reference"),
                            value: TagValue::Int(u64::from_le_bytes(b).min(i64::MAX as u64) as i64),
                        }));
                    }
                    cur.stage = 9;
                }
                _ => return Ok(None),
            }
            if cur.stage == 2 {
                cur.offset = 0;
            }
        }
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Demuxer, SliceSource};

    fn wav(data_len: usize, block_align: u16) -> [u8; 8192 + 44] {
        let mut f = [0u8; 8192 + 44];
        f[..4].copy_from_slice(b"RIFF");
        f[4..8].copy_from_slice(&((36 + data_len) as u32).to_le_bytes());
        f[8..16].copy_from_slice(b"WAVEfmt ");
        f[16..20].copy_from_slice(&16u32.to_le_bytes());
        f[20..22].copy_from_slice(&1u16.to_le_bytes());
        f[22..24].copy_from_slice(&(block_align / 2).to_le_bytes());
        f[24..28].copy_from_slice(&8000u32.to_le_bytes());
        f[28..32].copy_from_slice(&(8000 * block_align as u32).to_le_bytes());
        f[32..34].copy_from_slice(&block_align.to_le_bytes());
        f[34..36].copy_from_slice(&16u16.to_le_bytes());
        f[36..40].copy_from_slice(b"data");
        f[40..44].copy_from_slice(&(data_len as u32).to_le_bytes());
        for (i, b) in f[44..].iter_mut().enumerate() {
            *b = i as u8;
        }
        f
    }

    #[test]
    fn packets_follow_ffmpeg_sizes() {
        // 6-byte blocks: 4096 rounds down to 4092.
        let f = wav(8000, 6);
        let mut d = Demuxer::open(SliceSource::new(&f[..44 + 8000]), None).unwrap();
        assert_eq!(d.tracks()[0].codec, Codec::PcmS16Le);
        assert_eq!(d.tracks()[0].channels, 3);
        let mut sizes = [0usize; 4];
        let mut n = 0;
        while let Some(p) = d.next_packet().unwrap() {
            sizes[n] = p.data.len();
            n += 1;
        }
        assert_eq!(&sizes[..n], &[4092, 3908]);
    }

    #[test]
    fn data_beyond_eof_is_clamped_and_reported() {
        let f = wav(8192, 2);
        let mut d = Demuxer::open(SliceSource::new(&f[..44 + 5000]), None).unwrap();
        let mut total = 0;
        while let Some(p) = d.next_packet().unwrap() {
            total += p.data.len();
        }
        assert_eq!(total, 5000);
        assert!(d.diagnostics().contains("wav.data-beyond-eof"));
    }
}
