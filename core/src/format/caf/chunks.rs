//! CAF's fixed layouts and its chunk walk (Apple "Core Audio Format
//! Specification 1.0": CAF File Header, chunk headers, Audio Description,
//! Packet Table chunks): the header, the `desc` chunk that must come
//! first, then every chunk up to the end of the file, noting where `data`,
//! `pakt`, `kuki`, `info` and `chan` are.

use crate::error::{Error, Result};
use crate::format::traits::Context;
use crate::ieee754::Float;
use crate::source::Source;
use crate::types::{ByteRange, Codec};
use zerocopy::big_endian::{F64, I64, U16, U32, U64};
use zerocopy::{FromBytes, Immutable, KnownLayout, Unaligned};

/// The file header: CAFFileHeader (CAF spec, "CAF File Header").
#[derive(FromBytes, KnownLayout, Immutable, Unaligned, Debug)]
#[repr(C)]
struct FileHeader {
    /// mFileType: `caff`.
    file_type: [u8; 4],
    /// mFileVersion: 1.
    version: U16,
    /// mFileFlags: 0.
    flags: U16,
}

/// A chunk header: CAFChunkHeader (CAF spec, "CAF Chunk Header").
#[derive(FromBytes, KnownLayout, Immutable, Unaligned, Debug)]
#[repr(C)]
struct ChunkHeader {
    /// mChunkType.
    chunk_type: [u8; 4],
    /// mChunkSize: bytes of the body; -1 for a `data` chunk that runs to
    /// the end of the file.
    size: I64,
}

/// The `desc` chunk: CAFAudioDescription (CAF spec §"Audio Description Chunk").
#[derive(FromBytes, KnownLayout, Immutable, Unaligned, Debug)]
#[repr(C)]
pub struct AudioDescription {
    /// mSampleRate.
    pub sample_rate: F64,
    /// mFormatID.
    pub format_id: U32,
    /// mFormatFlags.
    pub format_flags: U32,
    /// mBytesPerPacket (0 = variable).
    pub bytes_per_packet: U32,
    /// mFramesPerPacket (0 = variable).
    pub frames_per_packet: U32,
    /// mChannelsPerFrame.
    pub channels: U32,
    /// mBitsPerChannel.
    pub bits_per_channel: U32,
}

impl AudioDescription {
    /// mSampleRate truncated to whole hertz, when it is from 1 to
    /// `u32::MAX` (compared and truncated in integer arithmetic, see
    /// `ieee754`).
    pub fn rate_hz(&self) -> Option<u32> {
        let rate = Float::from_f64_bits(self.sample_rate.get().to_bits())?;
        if rate.cmp_i64(1).is_lt() || rate.cmp_i64(u32::MAX.into()).is_gt() {
            return None;
        }
        u32::try_from(rate.trunc_u64()?).ok()
    }
}

/// The head of the `pakt` chunk: CAFPacketTableHeader.
#[derive(FromBytes, KnownLayout, Immutable, Unaligned, Debug)]
#[repr(C)]
pub struct PacketTableHeader {
    /// mNumberPackets.
    pub packets: U64,
    /// mNumberValidFrames.
    pub valid_frames: U64,
    /// mPrimingFrames.
    pub priming_frames: U32,
    /// mRemainderFrames.
    pub remainder_frames: U32,
}

/// Offset of the first chunk, after the file header.
pub(super) const FIRST_CHUNK: u64 = core::mem::size_of::<FileHeader>() as u64;
/// Bytes of a chunk header.
const CHUNK_HEADER: u64 = core::mem::size_of::<ChunkHeader>() as u64;
/// Bytes of the `desc` chunk's body.
pub(super) const DESC_LEN: u64 = core::mem::size_of::<AudioDescription>() as u64;
/// Bytes of the `pakt` chunk's header, before its entries.
const PAKT_HEADER: u64 = core::mem::size_of::<PacketTableHeader>() as u64;
/// Bytes of the `data` chunk's mEditCount, before the audio.
const EDIT_COUNT: u64 = 4;
/// kCAFLinearPCMFormatFlagIsFloat.
const LPCM_FLOAT: u32 = 1;
/// kCAFLinearPCMFormatFlagIsLittleEndian.
const LPCM_LITTLE_ENDIAN: u32 = 2;

/// A chunk's header as read.
pub(super) struct Chunk {
    pub(super) id: [u8; 4],
    pub(super) body: u64,
    /// None for a size of -1 (to the end of the file).
    pub(super) size: Option<u64>,
}

/// The packet table: where its entries start and end, and how many
/// packets it lists.
#[derive(Debug, Clone, Copy)]
pub(super) struct Pakt {
    pub(super) first: u64,
    pub(super) end: u64,
    pub(super) packets: u64,
}

/// What the chunk walk found after `desc`.
#[derive(Default)]
pub(super) struct Chunks {
    /// The first `data` chunk: audio start, end (clamped to the file) and
    /// end as the chunk says.
    pub(super) data: Option<(u64, u64, u64)>,
    pub(super) pakt: Option<Pakt>,
    /// Frames the packet table accounts for: valid, priming and remainder.
    pub(super) total_frames: Option<u64>,
    pub(super) kuki: Option<ByteRange>,
    pub(super) info: Option<ByteRange>,
    pub(super) chan: Option<ByteRange>,
}

/// Reads the chunk header at `at`.
///
/// Errors: `Truncated` when the input ends inside it.
pub(super) fn read_chunk<S: Source>(src: &mut S, at: u64) -> Result<Chunk> {
    let h = src.read::<ChunkHeader>(at)?;
    Ok(Chunk {
        id: h.chunk_type,
        body: at + CHUNK_HEADER,
        size: u64::try_from(h.size.get()).ok(),
    })
}

/// Checks the file header and reads the `desc` chunk that must follow it;
/// returns the chunk and the description.
///
/// Errors: `Malformed` for another file type or version, a first chunk
/// other than a 32-byte `desc`, or a sample rate that is not a positive
/// number; `Truncated` when the input ends first.
pub(super) fn read_desc<S: Source>(src: &mut S) -> Result<(Chunk, AudioDescription)> {
    let head = src.read::<FileHeader>(0)?;
    if &head.file_type != b"caff" || head.version.get() != 1 {
        return Err(Error::malformed(
            0,
            &"caf header: not a `caff` file of version 1 (CAF spec, CAF File Header)",
        ));
    }
    let first = read_chunk(src, FIRST_CHUNK)?;
    if &first.id != b"desc" || first.size != Some(DESC_LEN) {
        return Err(Error::malformed(
            FIRST_CHUNK,
            &"caf desc: the first chunk is not a 32-byte desc (CAF spec, Audio Description chunk)",
        ));
    }
    let desc = src.read::<AudioDescription>(first.body)?;
    if desc.rate_hz().is_none() {
        return Err(Error::malformed(
            first.body,
            &"caf desc: mSampleRate is not a positive number (CAF spec, Audio Description chunk)",
        ));
    }
    Ok((first, desc))
}

/// Walks the chunks from `at` to the end of the file (at most
/// `Limits::max_top_level` of them, `caf.too-many-chunks`), noting the
/// first `data` chunk and the last `pakt`, `kuki`, `info` and `chan`.
///
/// Errors: `Malformed` for a `pakt` chunk of size -1 or shorter than its
/// header; `Truncated` when the input ends inside a header read.
pub(super) fn walk_chunks<S: Source>(src: &mut S, ctx: &mut Context, mut at: u64) -> Result<Chunks> {
    let file_len = src.len();
    let mut found = Chunks::default();
    let mut walked = 0u32;
    while at.saturating_add(CHUNK_HEADER) <= file_len {
        walked += 1;
        if walked > ctx.limits.max_top_level {
            ctx.diags.report("caf.too-many-chunks", at);
            break;
        }
        let c = read_chunk(src, at)?;
        let avail = file_len.saturating_sub(c.body);
        let range = |len: u64| ByteRange {
            offset: c.body,
            len: len.min(avail).min(u32::MAX as u64) as u32,
        };
        match &c.id {
            b"data" => {
                let data = data_chunk(ctx, &c, at, file_len);
                found.data = found.data.or(Some(data));
            }
            b"pakt" => {
                let (pakt, frames) = pakt_chunk(src, &c, at, file_len)?;
                found.pakt = Some(pakt);
                found.total_frames = Some(frames);
            }
            b"kuki" => found.kuki = c.size.map(range),
            b"info" => found.info = c.size.map(range),
            b"chan" => found.chan = c.size.map(range),
            _ => {}
        }
        match c.size {
            Some(s) => {
                let next = c.body.saturating_add(s);
                if next <= at {
                    break;
                }
                at = next;
            }
            None => break,
        }
    }
    Ok(found)
}

/// The audio of a `data` chunk (header at `at`): start, end clamped to the
/// file (`caf.data-beyond-eof`; `caf.data-size-unknown` for size -1) and
/// end as the chunk says.
fn data_chunk(ctx: &mut Context, c: &Chunk, at: u64, file_len: u64) -> (u64, u64, u64) {
    let start = c.body.saturating_add(EDIT_COUNT);
    let end = match c.size {
        Some(s) => {
            let e = c.body.saturating_add(s);
            if e > file_len {
                ctx.diags.report("caf.data-beyond-eof", c.body);
            }
            e.min(file_len)
        }
        None => {
            ctx.diags.report("caf.data-size-unknown", at);
            file_len
        }
    };
    let claimed = c.size.map_or(end, |s| c.body.saturating_add(s).max(end));
    (start.min(end), end, claimed)
}

/// The packet table of a `pakt` chunk (header at `at`) and the frames it
/// accounts for.
///
/// Errors: `Malformed` for size -1 or a chunk shorter than its header.
fn pakt_chunk<S: Source>(src: &mut S, c: &Chunk, at: u64, file_len: u64) -> Result<(Pakt, u64)> {
    let size = c.size.ok_or(Error::malformed(
        at,
        &"caf pakt: chunk size -1, which only data may have (CAF spec, Packet Table chunk)",
    ))?;
    if size < PAKT_HEADER {
        return Err(Error::malformed(
            c.body,
            &"caf pakt: shorter than its 24-byte header (CAF spec, Packet Table chunk)",
        ));
    }
    let ph = src.read::<PacketTableHeader>(c.body)?;
    let pakt = Pakt {
        first: c.body + PAKT_HEADER,
        end: c.body.saturating_add(size).min(file_len),
        packets: ph.packets.get(),
    };
    let frames = ph
        .valid_frames
        .get()
        .saturating_add(u64::from(ph.priming_frames.get()))
        .saturating_add(u64::from(ph.remainder_frames.get()));
    Ok((pakt, frames))
}

/// The codec of a `desc` mFormatID, with the format flags and bits per
/// channel for linear PCM (CAF spec, "Audio Description chunk" format IDs).
pub(super) fn codec_for(format_id: &[u8; 4], flags: u32, bits: u32) -> Codec {
    match format_id {
        b"lpcm" => lpcm_codec(flags, bits),
        b"aac " => Codec::Aac,
        b"alac" => Codec::Alac,
        b"samr" => Codec::AmrNb,
        b"ima4" => Codec::AdpcmImaQt,
        b"ilbc" => Codec::Ilbc,
        b"MAC3" => Codec::Mace3,
        b"MAC6" => Codec::Mace6,
        b".mp1" => Codec::Mp1,
        b".mp2" => Codec::Mp2,
        b".mp3" => Codec::Mp3,
        b"opus" => Codec::Opus,
        b"QDMC" => Codec::Qdmc,
        b"QDM2" => Codec::Qdm2,
        b"Qclp" => Codec::Qcelp,
        b"ulaw" => Codec::PcmMulaw,
        b"alaw" => Codec::PcmAlaw,
        b"flac" => Codec::Flac,
        _ => Codec::Unknown,
    }
}

/// The linear PCM codec of these format flags and bits per channel.
fn lpcm_codec(flags: u32, bits: u32) -> Codec {
    let le = flags & LPCM_LITTLE_ENDIAN != 0;
    if flags & LPCM_FLOAT != 0 {
        match (bits, le) {
            (32, false) => Codec::PcmF32Be,
            (32, true) => Codec::PcmF32Le,
            (64, false) => Codec::PcmF64Be,
            (64, true) => Codec::PcmF64Le,
            _ => Codec::Unknown,
        }
    } else {
        match (bits, le) {
            (8, _) => Codec::PcmS8,
            (16, false) => Codec::PcmS16Be,
            (16, true) => Codec::PcmS16Le,
            (24, false) => Codec::PcmS24Be,
            (24, true) => Codec::PcmS24Le,
            (32, false) => Codec::PcmS32Be,
            (32, true) => Codec::PcmS32Le,
            _ => Codec::Unknown,
        }
    }
}
