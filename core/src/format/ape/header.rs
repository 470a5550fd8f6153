//! The Monkey's Audio headers (MACLib `APE_DESCRIPTOR`, `APE_HEADER`,
//! `APE_HEADER_OLD`), read into one [`Layout`]: where the seek table and the
//! first frame are, and the stream's facts.

use crate::error::{Error, Result};
use crate::source::Source;
use zerocopy::little_endian::{U16, U32};
use zerocopy::{FromBytes, Immutable, KnownLayout, Unaligned};

/// The descriptor of versions 3.98 and later (`APE_DESCRIPTOR`, 52 bytes).
#[derive(FromBytes, KnownLayout, Immutable, Unaligned, Debug, Clone, Copy)]
#[repr(C)]
pub struct Descriptor {
    /// `MAC `.
    pub magic: [u8; 4],
    /// Version × 1000 (3980 to 3990).
    pub version: U16,
    /// Padding.
    pub padding: U16,
    /// Bytes of the descriptor (52).
    pub descriptor_len: U32,
    /// Bytes of the header that follows (24).
    pub header_len: U32,
    /// Bytes of the seek table.
    pub seek_table_len: U32,
    /// Bytes of the stored WAV header.
    pub wav_header_len: U32,
    /// Bytes of the frames (low 32 bits).
    pub audio_len: U32,
    /// Bytes of the frames (high 32 bits).
    pub audio_len_high: U32,
    /// Bytes of the stored WAV trailer.
    pub wav_tail_len: U32,
    /// MD5 of the file.
    pub md5: [u8; 16],
}

/// The header after the descriptor (`APE_HEADER`, 24 bytes).
#[derive(FromBytes, KnownLayout, Immutable, Unaligned, Debug, Clone, Copy)]
#[repr(C)]
pub struct Header {
    /// Compression level (1000 fast to 5000 insane).
    pub compression: U16,
    /// Format flags (`MAC_FORMAT_FLAG_*`).
    pub flags: U16,
    /// Samples per channel in each frame but the last.
    pub blocks_per_frame: U32,
    /// Samples per channel in the last frame.
    pub final_frame_blocks: U32,
    /// Frames.
    pub total_frames: U32,
    /// Bits per sample.
    pub bits: U16,
    /// Channels.
    pub channels: U16,
    /// Sample rate.
    pub sample_rate: U32,
}

/// The header of versions before 3.98 (`APE_HEADER_OLD`, 32 bytes).
#[derive(FromBytes, KnownLayout, Immutable, Unaligned, Debug, Clone, Copy)]
#[repr(C)]
pub struct OldHeader {
    /// `MAC `.
    pub magic: [u8; 4],
    /// Version × 1000.
    pub version: U16,
    /// Compression level.
    pub compression: U16,
    /// Format flags.
    pub flags: U16,
    /// Channels.
    pub channels: U16,
    /// Sample rate.
    pub sample_rate: U32,
    /// Bytes of the stored WAV header.
    pub wav_header_len: U32,
    /// Bytes of the stored WAV trailer.
    pub wav_tail_len: U32,
    /// Frames.
    pub total_frames: U32,
    /// Samples per channel in the last frame.
    pub final_frame_blocks: U32,
}

/// `MAC_FORMAT_FLAG_8_BIT`.
const FLAG_8_BIT: u16 = 1;
/// `MAC_FORMAT_FLAG_HAS_PEAK_LEVEL`: a 32-bit peak level follows the old header.
const FLAG_PEAK_LEVEL: u16 = 4;
/// `MAC_FORMAT_FLAG_24_BIT`.
const FLAG_24_BIT: u16 = 8;
/// `MAC_FORMAT_FLAG_HAS_SEEK_ELEMENTS`: the seek table's entry count follows.
const FLAG_SEEK_ELEMENTS: u16 = 16;
/// `MAC_FORMAT_FLAG_CREATE_WAV_HEADER`: no WAV header stored before the table.
const FLAG_CREATE_WAV_HEADER: u16 = 32;

/// Oldest version read (ffmpeg's `APE_MIN_VERSION`).
pub const MIN_VERSION: u16 = 3800;
/// Newest version read (ffmpeg's `APE_MAX_VERSION`).
pub const MAX_VERSION: u16 = 3990;
/// Versions before this one store a bit table after the seek table.
pub const BIT_TABLE_BEFORE: u16 = 3810;

/// Where things are and the stream's facts, from either header layout.
#[derive(Debug, Clone, Copy, Default)]
pub struct Layout {
    /// Version × 1000.
    pub version: u16,
    /// Where the seek table starts.
    pub table: u64,
    /// Bytes of the seek table.
    pub table_len: u64,
    /// Where the first frame starts.
    pub first: u64,
    /// Samples per channel in each frame but the last.
    pub blocks_per_frame: u32,
    /// Samples per channel in the last frame.
    pub final_blocks: u32,
    /// Frames.
    pub frames: u32,
    /// Bits per sample.
    pub bits: u16,
    /// Channels.
    pub channels: u16,
    /// Sample rate.
    pub rate: u32,
    /// Bytes of the WAV trailer after the frames.
    pub wav_tail: u64,
    /// Where the frames end, when the descriptor says (3.98 and later).
    pub audio_end: Option<u64>,
}

impl Layout {
    /// Reads the header at 0 of either layout (ffmpeg `ape_read_header`).
    pub fn read<S: Source>(src: &mut S) -> Result<Layout> {
        let d: Descriptor = src.read(0)?;
        if &d.magic != b"MAC " {
            return Err(Error::malformed(0, &"ape: no MAC magic (APE_DESCRIPTOR)"));
        }
        let version = d.version.get();
        if !(MIN_VERSION..=MAX_VERSION).contains(&version) {
            return Err(Error::unsupported(
                4,
                &"ape: a version before 3.80 or after 3.99 (ffmpeg reads 3800 to 3990)",
            ));
        }
        if version >= 3980 {
            Self::new_layout(src, &d)
        } else {
            Self::old_layout(src)
        }
    }

    /// Descriptor, header, seek table, WAV header, frames (3.98 and later).
    fn new_layout<S: Source>(src: &mut S, d: &Descriptor) -> Result<Layout> {
        let desc_len = u64::from(d.descriptor_len.get());
        let at = desc_len.max(52);
        let h: Header = src.read(at)?;
        let table_len = u64::from(d.seek_table_len.get());
        let audio = u64::from(d.audio_len.get()) | u64::from(d.audio_len_high.get()) << 32;
        let first = desc_len + u64::from(d.header_len.get()) + table_len + u64::from(d.wav_header_len.get());
        Ok(Layout {
            version: d.version.get(),
            table: at + 24,
            table_len,
            first,
            blocks_per_frame: h.blocks_per_frame.get(),
            final_blocks: h.final_frame_blocks.get(),
            frames: h.total_frames.get(),
            bits: h.bits.get(),
            channels: h.channels.get(),
            rate: h.sample_rate.get(),
            wav_tail: u64::from(d.wav_tail_len.get()),
            audio_end: first.checked_add(audio),
        })
    }

    /// Header, peak level, seek element count, WAV header, seek table,
    /// frames (before 3.98).
    fn old_layout<S: Source>(src: &mut S) -> Result<Layout> {
        let h: OldHeader = src.read(0)?;
        let version = h.version.get();
        let flags = h.flags.get();
        let compression = h.compression.get();
        let frames = h.total_frames.get();
        let mut header_len = 32u64;
        if flags & FLAG_PEAK_LEVEL != 0 {
            header_len += 4;
        }
        let table_len = if flags & FLAG_SEEK_ELEMENTS != 0 {
            let n: U32 = src.read(header_len)?;
            header_len += 4;
            u64::from(n.get()) * 4
        } else {
            u64::from(frames) * 4
        };
        let bits = if flags & FLAG_8_BIT != 0 {
            8
        } else if flags & FLAG_24_BIT != 0 {
            24
        } else {
            16
        };
        let blocks_per_frame = if version >= 3950 {
            73728 * 4
        } else if version >= 3900 || compression >= 4000 {
            73728
        } else {
            9216
        };
        let wav_header = u64::from(h.wav_header_len.get());
        let stored_wav = if flags & FLAG_CREATE_WAV_HEADER == 0 {
            wav_header
        } else {
            0
        };
        let mut first = header_len + table_len + wav_header;
        if version < BIT_TABLE_BEFORE {
            first += u64::from(frames);
        }
        Ok(Layout {
            version,
            table: header_len + stored_wav,
            table_len,
            first,
            blocks_per_frame,
            final_blocks: h.final_frame_blocks.get(),
            frames,
            bits,
            channels: h.channels.get(),
            rate: h.sample_rate.get(),
            wav_tail: u64::from(h.wav_tail_len.get()),
            audio_end: None,
        })
    }
}
