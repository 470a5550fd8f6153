//! AIFF and AIFF-C (Apple "Audio Interchange File Format" 1.3, 1989, and the
//! AIFF-C draft of 1991).
//!
//! An AIFF file is an IFF `FORM` of type `AIFF` or `AIFC` holding big-endian
//! chunks: `COMM` (channels, frames, sample size, the sample rate as an 80-bit
//! IEEE 754 extended float, and in AIFF-C a compression type), `SSND` (offset,
//! block size, then the sound data), `FVER`, text chunks (`NAME`, `AUTH`,
//! `(c) `, `ANNO`) and, from other tools, an `ID3 ` chunk with an ID3v2 tag.
//!
//! Packets follow ffmpeg's AIFF reader so that they match ffprobe: for block
//! codecs (`ima4`, GSM, QCELP) one block per packet; for everything else the
//! largest multiple of the block alignment not over 4096 bytes, the last one
//! possibly shorter.

use crate::error::{Error, Result};
use crate::format::es::id3::{self, FrameTags, FrameWalk, ID3V2_HEADER};
use crate::format::traits::{Context, FormatDemuxer};
use crate::ieee754::Float;
use crate::source::Source;
use crate::tags::{text_or_bytes, Tag, TagCursor, TagKey, TagScope, TagValue};
use crate::types::{Codec, Packet, PacketFlags, Rational, Track, TrackKind};
use zerocopy::big_endian::{U16, U32};
use zerocopy::{FromBytes, Immutable, KnownLayout, Unaligned};

/// The fixed part of the `COMM` chunk (AIFF 1.3 §"Common Chunk").
#[derive(FromBytes, KnownLayout, Immutable, Unaligned, Debug)]
#[repr(C)]
pub struct CommonChunk {
    /// numChannels.
    pub channels: U16,
    /// numSampleFrames.
    pub frames: U32,
    /// sampleSize in bits.
    pub sample_size: U16,
    /// sampleRate: 80-bit extended float, sign+exponent first.
    pub rate_exponent: U16,
    /// The 64-bit mantissa of sampleRate (explicit integer bit).
    pub rate_mantissa: [u8; 8],
}

/// The `AIFC` format version 1 timestamp in `FVER` (AIFF-C §"Format Version Chunk").
pub const AIFC_VERSION1: u32 = 0xA280_5140;

/// ffmpeg's packet size target for AIFF.
const PACKET_TARGET: u32 = 4096;

/// Demuxer state for AIFF and AIFF-C.
#[derive(Debug, Clone)]
pub struct AiffDemuxer {
    form_end: u64,
    data_start: u64,
    data_end: u64,
    pos: u64,
    packet_size: u32,
    block_align: u32,
    block_duration: u32,
    /// The frame walk of the `ID3 ` chunk the tag walk is in.
    id3_walk: Option<FrameWalk>,
}

/// Converts an 80-bit IEEE 754 extended value (big-endian exponent word and
/// mantissa) to the nearest integer sample rate, as ffmpeg's AIFF reader does.
/// Returns `None` for zero, negative, non-finite or out-of-range rates.
pub fn extended_to_rate(exponent: u16, mantissa: u64) -> Option<u32> {
    if exponent & 0x8000 != 0 {
        return None;
    }
    let exp = i32::from(exponent & 0x7FFF) - 16383 - 63;
    if !(-63..=63).contains(&exp) {
        return None;
    }
    // mantissa * 2^exp, rounded to nearest: `round(ldexp(mantissa as f64,
    // exp))` in integer arithmetic (`ieee754`).
    let v = Float::from_scaled_u64(mantissa, exp).round_u64()?;
    u32::try_from(v).ok().filter(|&v| v >= 1)
}

/// Maps an AIFF-C compression type to a codec (ffmpeg's `ff_codec_aiff_tags`).
fn codec_for_compression(fourcc: &[u8; 4]) -> Codec {
    match fourcc {
        b"NONE" | b"twos" => Codec::PcmS16Be,
        b"raw " => Codec::PcmU8,
        b"sowt" => Codec::PcmS16Le,
        b"fl32" | b"FL32" => Codec::PcmF32Be,
        b"fl64" | b"FL64" => Codec::PcmF64Be,
        b"alaw" | b"ALAW" => Codec::PcmAlaw,
        b"ulaw" | b"ULAW" => Codec::PcmMulaw,
        b"in24" => Codec::PcmS24Be,
        b"in32" => Codec::PcmS32Be,
        b"ima4" => Codec::AdpcmImaQt,
        b"MAC3" => Codec::Mace3,
        b"MAC6" => Codec::Mace6,
        b"GSM " => Codec::Gsm,
        b"G722" => Codec::AdpcmG722,
        b"G726" => Codec::AdpcmG726Le,
        b"QDMC" => Codec::Qdmc,
        b"QDM2" => Codec::Qdm2,
        b"QCLP" => Codec::Qcelp,
        b"ADP4" => Codec::AdpcmImaWs,
        _ => Codec::Unknown,
    }
}

/// Uncompressed AIFF: the codec for a sample size (AIFF 1.3: 1..=32 bits,
/// stored in whole bytes).
fn pcm_for_bits(bits: u16) -> Codec {
    match bits {
        0..=8 => Codec::PcmS8,
        9..=16 => Codec::PcmS16Be,
        17..=24 => Codec::PcmS24Be,
        25..=32 => Codec::PcmS32Be,
        _ => Codec::Unknown,
    }
}

fn bits_of(codec: Codec) -> u16 {
    match codec {
        Codec::PcmS8 | Codec::PcmU8 | Codec::PcmAlaw | Codec::PcmMulaw => 8,
        Codec::PcmS16Be | Codec::PcmS16Le => 16,
        Codec::PcmS24Be => 24,
        Codec::PcmS32Be | Codec::PcmF32Be => 32,
        Codec::PcmF64Be => 64,
        Codec::AdpcmImaQt | Codec::AdpcmImaWs => 4,
        _ => 0,
    }
}

/// Text chunk ids and the names ffprobe gives them.
fn text_chunk_name(id: &[u8; 4]) -> Option<&'static str> {
    Some(match id {
        b"NAME" => "title",
        b"AUTH" => "author",
        b"(c) " => "copyright",
        b"ANNO" => "comment",
        _ => return None,
    })
}

/// The chunk header (EA IFF 85 / AIFF 1.3 §"Chunks"): id and big-endian
/// size of the body (padded to an even length).
#[derive(FromBytes, KnownLayout, Immutable, Unaligned, Debug)]
#[repr(C)]
struct ChunkHeader {
    id: [u8; 4],
    size: U32,
}

/// The `FORM` header (EA IFF 85): `FORM`, size, form type.
#[derive(FromBytes, KnownLayout, Immutable, Unaligned, Debug)]
#[repr(C)]
struct FormHeader {
    chunk: ChunkHeader,
    form_type: [u8; 4],
}

/// Size of a chunk header.
const CHUNK_HEADER: u64 = 8;
/// Offset of the first chunk in the `FORM`.
const FIRST_CHUNK: u64 = 12;

struct Chunk {
    id: [u8; 4],
    body: u64,
    size: u64,
    next: u64,
}

fn read_chunk<S: Source>(src: &mut S, at: u64) -> Result<Chunk> {
    let h: ChunkHeader = src.read(at)?;
    let size = u64::from(h.size.get());
    let body = at + CHUNK_HEADER;
    Ok(Chunk {
        id: h.id,
        body,
        size,
        next: body.saturating_add(size).saturating_add(size & 1),
    })
}

/// What `COMM` says, once resolved to a codec and a block layout.
struct Common {
    codec: Codec,
    tag: u32,
    channels: u16,
    frames: u32,
    bits: u16,
    rate: u32,
    block_align: u32,
    block_duration: u32,
}

fn parse_comm<S: Source>(src: &mut S, c: &Chunk, aifc: bool) -> Result<Common> {
    if c.size < 18 {
        return Err(Error::malformed(
            c.body,
            &"aiff COMM: shorter than its 18 bytes of fields (AIFF 1.3 §Common Chunk)",
        ));
    }
    let comm: CommonChunk = src.read(c.body)?;
    let rate =
        extended_to_rate(comm.rate_exponent.get(), u64::from_be_bytes(comm.rate_mantissa)).ok_or(Error::malformed(
            c.body + 8,
            &"aiff COMM: sampleRate not a positive 80-bit extended number (AIFF 1.3 §Common Chunk)",
        ))?;
    let channels = comm.channels.get();
    let mut bits = comm.sample_size.get();
    let mut tag = 0u32;
    let mut codec = Codec::PcmS16Be;
    if aifc && c.size >= 22 {
        let t: [u8; 4] = src.array(c.body + 18)?;
        tag = u32::from_be_bytes(t);
        codec = codec_for_compression(&t);
    }
    let ch = u32::from(channels);
    let mut block_align = 0u32;
    let block_duration;
    if codec == Codec::PcmS16Be {
        // `NONE`, `twos` and plain AIFF: the sample size decides.
        codec = pcm_for_bits(bits);
        bits = bits_of(codec);
        block_duration = 1;
    } else {
        match codec {
            Codec::AdpcmImaQt => {
                block_align = 34u32.saturating_mul(ch);
                block_duration = 64;
            }
            Codec::Mace3 => {
                block_align = 2u32.saturating_mul(ch);
                block_duration = 6;
            }
            Codec::Mace6 => {
                block_align = ch;
                block_duration = 6;
            }
            Codec::AdpcmG726Le | Codec::AdpcmImaWs | Codec::AdpcmG722 => {
                block_align = ch;
                // Samples per byte per channel: G.726 at 5 bits rounds down to 1.
                block_duration = if codec == Codec::AdpcmG726Le { 1 } else { 2 };
            }
            Codec::Gsm => {
                block_align = 33;
                block_duration = 160;
            }
            Codec::Qcelp => {
                // Full rate unless a `wave` chunk says otherwise (ffmpeg's default).
                block_align = 35;
                block_duration = 160;
            }
            _ => block_duration = 1,
        }
    }
    if block_align == 0 {
        block_align = u32::from(bits_of(codec)).saturating_mul(ch) >> 3;
    }
    Ok(Common {
        codec,
        tag,
        channels,
        frames: comm.frames.get(),
        bits: if bits_of(codec) > 0 { bits_of(codec) } else { bits },
        rate,
        block_align,
        block_duration,
    })
}

/// The stages of the tag walk, kept in `TagCursor::stage`.
mod stage {
    /// Nothing read yet.
    pub const START: u32 = 0;
    /// Walking the chunks: `offset` is the next chunk, `end` the walk's end.
    pub const CHUNKS: u32 = 1;
    /// At the start of an `ID3 ` chunk's tag: `offset` is the chunk body,
    /// `end` the chunk's end.
    pub const ID3_START: u32 = 2;
    /// In the frames of an `ID3 ` chunk's tag (the walk in the demuxer):
    /// `end` is the chunk's end.
    pub const ID3_FRAMES: u32 = 3;
    /// Done.
    pub const DONE: u32 = 9;
}

impl AiffDemuxer {
    /// The text chunks as tags, and for an `ID3 ` chunk its raw tag then its
    /// text frames ([`FrameTags::Latin1Text`]); at most
    /// `Limits::max_top_level` steps per call.
    fn walk_tags<'s, S: Source>(
        &mut self,
        src: &'s mut S,
        ctx: &Context,
        cur: &mut TagCursor,
    ) -> Result<Option<Tag<'s>>> {
        if cur.stage == stage::START {
            cur.stage = stage::CHUNKS;
            cur.offset = FIRST_CHUNK;
            cur.end = self.form_end;
        }
        let max = ctx.limits.max_tag_bytes;
        let mut walked = 0u32;
        loop {
            walked += 1;
            if walked > ctx.limits.max_top_level {
                break;
            }
            if cur.stage == stage::ID3_START {
                // The tag's header (ID3v2.4 §3.1) and extended header; the
                // frames end with the tag or the chunk, whichever is first.
                self.id3_walk = match id3::id3v2_at(src, cur.offset)? {
                    Some(t) if t.offset + ID3V2_HEADER <= cur.end => FrameWalk::new(src, &t)?.map(|w| FrameWalk {
                        end: w.end.min(cur.end),
                        ..w
                    }),
                    _ => None,
                };
                cur.stage = stage::ID3_FRAMES;
            }
            if cur.stage == stage::ID3_FRAMES {
                let frame = match self.id3_walk.as_mut() {
                    Some(w) => w.next_reported(src, max, FrameTags::Latin1Text)?,
                    None => None,
                };
                if let Some(f) = frame {
                    return f.tag(src, FrameTags::Latin1Text).map(Some);
                }
                // Back to the chunk after the `ID3 ` chunk.
                self.id3_walk = None;
                cur.stage = stage::CHUNKS;
                cur.offset = cur.end.saturating_add(cur.end & 1);
                cur.end = self.form_end;
                continue;
            }
            if cur.stage != stage::CHUNKS || cur.offset.saturating_add(CHUNK_HEADER) > cur.end {
                break;
            }
            let c = read_chunk(src, cur.offset)?;
            if c.next <= cur.offset {
                break;
            }
            cur.offset = c.next;
            let is_id3 = &c.id == b"ID3 ";
            let name = text_chunk_name(&c.id);
            if (name.is_none() && !is_id3) || c.size == 0 || c.body.saturating_add(c.size) > cur.end {
                continue;
            }
            if is_id3 {
                // The raw tag first (for callers with an ID3v2 reader), then
                // its text frames.
                cur.stage = stage::ID3_START;
                cur.end = c.body + c.size;
                cur.offset = c.body;
                if c.size > u64::from(max) {
                    continue;
                }
                let v = src.bytes(c.body, c.size as usize)?;
                return Ok(Some(Tag {
                    scope: TagScope::Format,
                    key: TagKey::FourCc(c.id),
                    name: None,
                    value: TagValue::Bytes(v),
                }));
            }
            if c.size > u64::from(max) {
                continue;
            }
            let v = src.bytes(c.body, c.size as usize)?;
            // ffmpeg keeps a text chunk up to its first NUL.
            let n = v.iter().position(|&b| b == 0).unwrap_or(v.len());
            return Ok(Some(Tag {
                scope: TagScope::Format,
                key: TagKey::FourCc(c.id),
                name,
                value: text_or_bytes(v.get(..n).unwrap_or(&[])),
            }));
        }
        cur.stage = stage::DONE;
        Ok(None)
    }
}

/// The sound data of `SSND`: its start and end in the input.
type SoundData = (u64, u64);

/// Walks the chunks of the `FORM` (up to `walk_end`, at most
/// `Limits::max_top_level` of them) for the first `COMM` (parsed) and the
/// first `SSND` (its sound data: start and end, within the input).
fn find_comm_and_ssnd<S: Source>(
    src: &mut S,
    ctx: &mut Context,
    walk_end: u64,
    aifc: bool,
) -> Result<(Option<Common>, Option<SoundData>)> {
    let file_len = src.len();
    let mut at = FIRST_CHUNK;
    let mut comm: Option<Common> = None;
    let mut ssnd: Option<SoundData> = None;
    let mut walked = 0u32;
    while at.saturating_add(CHUNK_HEADER) <= walk_end {
        walked += 1;
        if walked > ctx.limits.max_top_level {
            ctx.diags.report("aiff.too-many-chunks", at);
            break;
        }
        let c = read_chunk(src, at)?;
        match &c.id {
            b"COMM" if comm.is_none() => comm = Some(parse_comm(src, &c, aifc)?),
            b"SSND" if ssnd.is_none() => {
                if c.size < 8 {
                    return Err(Error::malformed(
                        c.body,
                        &"aiff SSND: shorter than its offset and blockSize fields (AIFF 1.3 §Sound Data Chunk)",
                    ));
                }
                let offset = src.u32_be(c.body)? as u64;
                let start = c.body.saturating_add(8).saturating_add(offset);
                let end = c.body.saturating_add(c.size);
                if end > file_len {
                    ctx.diags.report("aiff.data-beyond-eof", c.body);
                }
                ssnd = Some((start.min(end), end.min(file_len)));
            }
            _ => {}
        }
        if c.next <= at {
            break;
        }
        at = c.next;
    }
    Ok((comm, ssnd))
}

impl FormatDemuxer for AiffDemuxer {
    fn open<S: Source>(src: &mut S, ctx: &mut Context) -> Result<Self> {
        let head: FormHeader = src.read(0)?;
        if &head.chunk.id != b"FORM" {
            return Err(Error::malformed(
                0,
                &"aiff FORM: not an IFF FORM chunk (EA IFF 85, AIFF 1.3 §Form Chunk)",
            ));
        }
        let aifc = match &head.form_type {
            b"AIFF" => false,
            b"AIFC" => true,
            _ => {
                return Err(Error::malformed(
                    8,
                    &"aiff FORM: formType neither AIFF nor AIFC (AIFF 1.3 §Form Chunk)",
                ))
            }
        };
        let form_size = u64::from(head.chunk.size.get());
        let file_len = src.len();
        let form_end = 8u64.saturating_add(form_size);
        if form_end > file_len {
            ctx.diags.report("aiff.form-beyond-eof", 4);
        }
        let walk_end = form_end.min(file_len);
        let (comm, ssnd) = find_comm_and_ssnd(src, ctx, walk_end, aifc)?;
        let Some(cm) = comm else {
            return Err(Error::malformed(
                FIRST_CHUNK,
                &"aiff FORM: no COMM chunk (AIFF 1.3 §Common Chunk: required)",
            ));
        };
        let (data_start, data_end) = match ssnd {
            Some((s, e)) => (s.min(e), e),
            None => {
                // AIFF 1.3 allows no SSND when numSampleFrames is 0.
                ctx.diags.report("aiff.no-ssnd", 12);
                (walk_end, walk_end)
            }
        };
        if cm.codec == Codec::Unknown {
            ctx.diags.report("aiff.unknown-compression", 12);
        }
        let block_align = cm.block_align.max(1);
        let packet_size = match cm.codec {
            Codec::AdpcmImaQt | Codec::Gsm | Codec::Qcelp | Codec::Qdm2 => block_align,
            _ => (PACKET_TARGET / block_align).max(1).saturating_mul(block_align),
        };
        let duration = u64::from(cm.frames).saturating_mul(u64::from(cm.block_duration));
        let bit_rate = if cm.block_duration > 0 {
            (u64::from(cm.rate) * u64::from(block_align) * 8 / u64::from(cm.block_duration)).min(u32::MAX as u64) as u32
        } else {
            0
        };
        let track = Track {
            id: 0,
            kind: TrackKind::Audio,
            codec: cm.codec,
            codec_tag: cm.tag,
            time_base: Rational::new(1, cm.rate),
            duration: Some(duration),
            // numSampleFrames, as ffprobe's nb_frames (blocks for ima4).
            frames: Some(u64::from(cm.frames)),
            sample_rate: cm.rate,
            channels: cm.channels,
            bits_per_sample: cm.bits,
            block_align,
            bit_rate,
            ..Track::default()
        };
        let tb = track.time_base;
        ctx.add_track(track, 12);
        ctx.info.duration_us = Some(tb.to_micros(duration.min(i64::MAX as u64) as i64).max(0) as u64);
        ctx.info.start_us = Some(0);
        Ok(AiffDemuxer {
            form_end: walk_end,
            data_start,
            data_end,
            pos: data_start,
            packet_size,
            block_align,
            block_duration: cm.block_duration,
            id3_walk: None,
        })
    }

    fn next_packet<'s, S: Source>(&mut self, src: &'s mut S, ctx: &mut Context) -> Result<Option<Packet<'s>>> {
        if self.pos >= self.data_end {
            return Ok(None);
        }
        let size = u64::from(self.packet_size).min(self.data_end - self.pos);
        if size > u64::from(ctx.limits.max_packet) {
            return Err(Error::limit(
                self.pos,
                &"aiff SSND: packet larger than Limits::max_packet (AIFF 1.3 §Sound Data Chunk)",
            ));
        }
        let at = self.pos;
        let ba = u64::from(self.block_align);
        let bd = u64::from(self.block_duration);
        let pts = ((at - self.data_start) / ba).saturating_mul(bd) as i64;
        let data = src.bytes(at, size as usize)?;
        self.pos += size;
        Ok(Some(
            Packet::contiguous(0, at, data)
                .with_times(Some(pts), Some(pts), Some((size / ba).saturating_mul(bd)))
                .with_flags(PacketFlags::keyframe(true)),
        ))
    }

    fn seek<S: Source>(&mut self, _src: &mut S, _ctx: &mut Context, _track: usize, ts: i64) -> Result<()> {
        let ts = ts.max(0) as u64;
        let blocks = ts / u64::from(self.block_duration.max(1));
        // The start of the packet holding that block.
        let ps = u64::from(self.packet_size.max(1));
        let offset = blocks.saturating_mul(u64::from(self.block_align)) / ps * ps;
        self.pos = self.data_start.saturating_add(offset).min(self.data_end);
        Ok(())
    }

    fn next_tag<'s, S: Source>(
        &'s mut self,
        src: &'s mut S,
        ctx: &Context,
        cur: &mut TagCursor,
    ) -> Result<Option<Tag<'s>>> {
        self.walk_tags(src, ctx, cur)
    }

    fn max_packet_size(&self) -> Option<usize> {
        Some(self.packet_size as usize)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Demuxer, FormatKind, SliceSource};

    /// 44100 Hz as an 80-bit extended number.
    const RATE_44100: [u8; 10] = [0x40, 0x0E, 0xAC, 0x44, 0, 0, 0, 0, 0, 0];

    fn aiff(buf: &mut [u8], aifc: Option<&[u8; 4]>, channels: u16, bits: u16, data_len: usize) -> usize {
        let mut w = 0usize;
        let mut put = |b: &[u8], w: &mut usize| {
            buf[*w..*w + b.len()].copy_from_slice(b);
            *w += b.len();
        };
        put(b"FORM\0\0\0\0", &mut w);
        put(if aifc.is_some() { b"AIFC" } else { b"AIFF" }, &mut w);
        put(b"COMM", &mut w);
        put(&(if aifc.is_some() { 24u32 } else { 18 }).to_be_bytes(), &mut w);
        put(&channels.to_be_bytes(), &mut w);
        let frames = (data_len / (channels as usize * bits.div_ceil(8) as usize).max(1)) as u32;
        put(&frames.to_be_bytes(), &mut w);
        put(&bits.to_be_bytes(), &mut w);
        put(&RATE_44100, &mut w);
        if let Some(t) = aifc {
            put(t, &mut w);
            put(&[0, 0], &mut w);
        }
        put(b"NAME\0\0\0\x03abc\0", &mut w);
        // An ID3v2.4 tag with TIT2 "Hi" (UTF-8) and a TXXX frame.
        put(b"ID3 \0\0\0\x2a", &mut w);
        put(b"ID3\x04\0\0\0\0\0\x20", &mut w);
        put(b"TIT2\0\0\0\x03\0\0\x03Hi", &mut w);
        put(b"TXXX\0\0\0\x03\0\0\x03a\0", &mut w);
        put(&[0; 6], &mut w);
        put(b"SSND", &mut w);
        put(&(8 + data_len as u32).to_be_bytes(), &mut w);
        put(&[0; 8], &mut w);
        for i in 0..data_len {
            put(&[i as u8], &mut w);
        }
        let form = (w - 8) as u32;
        buf[4..8].copy_from_slice(&form.to_be_bytes());
        w
    }

    #[test]
    fn extended_rates() {
        assert_eq!(extended_to_rate(0x400E, 0xAC44_0000_0000_0000), Some(44100));
        assert_eq!(extended_to_rate(0x400B, 0xFA00_0000_0000_0000), Some(8000));
        assert_eq!(extended_to_rate(0xFA00, 0xFA00_0000_0000_0000), None);
        assert_eq!(extended_to_rate(0x400E, 0), None);
    }

    #[test]
    fn pcm_packets_and_tags() {
        let mut buf = [0u8; 16384];
        let n = aiff(&mut buf, None, 2, 24, 6 * 1000);
        let mut d = Demuxer::open(SliceSource::new(&buf[..n]), None).unwrap();
        assert_eq!(d.format(), FormatKind::Aiff);
        let t = &d.tracks()[0];
        assert_eq!(
            (t.codec, t.sample_rate, t.channels, t.block_align),
            (Codec::PcmS24Be, 44100, 2, 6)
        );
        let mut sizes = heapless::Vec::<usize, 8>::new();
        let mut last_pts = 0;
        while let Some(p) = d.next_packet().unwrap() {
            sizes.push(p.data.len()).unwrap();
            last_pts = p.pts.unwrap();
        }
        assert_eq!(&sizes[..], &[4092, 1908]);
        assert_eq!(last_pts, 682);
        let tag = d.next_tag().unwrap().unwrap();
        assert_eq!(tag.name, Some("title"));
        assert_eq!(tag.value, TagValue::Text("abc"));
        let tag = d.next_tag().unwrap().unwrap();
        assert_eq!(tag.key, TagKey::FourCc(*b"ID3 "));
        let tag = d.next_tag().unwrap().unwrap();
        assert_eq!((tag.name, tag.value), (Some("title"), TagValue::Text("Hi")));
        assert!(d.next_tag().unwrap().is_none());
    }

    /// The `ID3 ` chunk is read with the shared ID3 module and its one
    /// frame-name table: `TSOP` is `artist-sort` now (AIFF's own table
    /// lacked it), and UTF-16 text frames are still left out.
    #[test]
    fn id3_chunk_uses_the_shared_frame_names() {
        let mut buf = [0u8; 4096];
        let n = aiff(&mut buf, None, 1, 16, 100);
        // Replace the ID3 chunk's frames: TSOP "Abc" (ISO-8859-1), TIT1 in
        // UTF-16 (left out), then padding.
        let at = buf.windows(4).position(|w| w == b"ID3 ").unwrap() + 18;
        buf[at..at + 14].copy_from_slice(b"TSOP\0\0\0\x04\0\0\0Abc");
        buf[at + 14..at + 26].copy_from_slice(b"TIT1\0\0\0\x02\0\0\x01\0");
        let mut d = Demuxer::open(SliceSource::new(&buf[..n]), None).unwrap();
        assert_eq!(d.next_tag().unwrap().unwrap().name, Some("title"));
        let t = d.next_tag().unwrap().unwrap();
        assert_eq!(t.value, TagValue::Bytes(&buf[at - 10..at + 32]));
        let t = d.next_tag().unwrap().unwrap();
        assert_eq!((t.name, t.value), (Some("artist-sort"), TagValue::Text("Abc")));
        assert!(d.next_tag().unwrap().is_none());
    }

    #[test]
    fn aifc_ima4_is_one_block_per_packet() {
        let mut buf = [0u8; 4096];
        let n = aiff(&mut buf, Some(b"ima4"), 1, 16, 34 * 3);
        let mut d = Demuxer::open(SliceSource::new(&buf[..n]), None).unwrap();
        assert_eq!(d.tracks()[0].codec, Codec::AdpcmImaQt);
        let mut n = 0;
        while let Some(p) = d.next_packet().unwrap() {
            assert_eq!(p.data.len(), 34);
            assert_eq!(p.pts, Some(64 * n));
            n += 1;
        }
        assert_eq!(n, 3);
    }

    #[test]
    fn unknown_compression_and_truncation_do_not_panic() {
        let mut buf = [0u8; 4096];
        let n = aiff(&mut buf, Some(b"zzzz"), 1, 16, 100);
        let d = Demuxer::open(SliceSource::new(&buf[..n]), None).unwrap();
        assert_eq!(d.tracks()[0].codec, Codec::Unknown);
        let n = aiff(&mut buf, None, 1, 16, 1000);
        for cut in 0..n {
            if let Ok(mut d) = Demuxer::open(SliceSource::new(&buf[..cut]), None) {
                while let Ok(Some(_)) = d.next_packet() {}
            }
        }
    }
}
