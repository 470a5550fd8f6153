//! The WavPack block header, its flags, the sample rate table and the
//! metadata sub-blocks that the demuxer reads (WavPack 5 file format,
//! "Block Header" and "Metadata Sub-Blocks").

use crate::error::{Error, Result};
use crate::source::Source;
use zerocopy::little_endian::{U16, U32};
use zerocopy::{FromBytes, Immutable, KnownLayout, Unaligned};

/// The 32-byte block header (WavPack 5 file format, "Block Header").
#[derive(FromBytes, KnownLayout, Immutable, Unaligned, Debug, Clone, Copy)]
#[repr(C)]
pub struct BlockHeader {
    /// `wvpk`.
    pub id: [u8; 4],
    /// Bytes of the block after this field (block size − 8).
    pub size: U32,
    /// Stream version, 0x402 to 0x410.
    pub version: U16,
    /// Upper 8 bits of the 40-bit block index (WavPack 5).
    pub block_index_u8: u8,
    /// Upper 8 bits of the 40-bit total samples (WavPack 5).
    pub total_samples_u8: u8,
    /// Samples per channel in the file, 0xFFFF_FFFF when unknown.
    pub total_samples: U32,
    /// Index of the block's first sample.
    pub block_index: U32,
    /// Samples per channel in the block; 0 for a metadata-only block.
    pub block_samples: U32,
    /// Flags (`MONO`, `INITIAL`, `FINAL`, the rate index, ...: the constants of this module).
    pub flags: U32,
    /// CRC of the decoded samples.
    pub crc: U32,
}

/// Bytes of [`BlockHeader`].
pub const HEADER: u64 = 32;
/// The largest block ffmpeg reads (`WV_BLOCK_LIMIT`, 1 MiB).
pub const BLOCK_LIMIT: u32 = 1 << 20;
/// Flags: mono.
pub const MONO: u32 = 1 << 2;
/// Flags: the first block of a span.
pub const INITIAL: u32 = 1 << 11;
/// Flags: the last block of a span.
pub const FINAL: u32 = 1 << 12;
/// Flags: DSD audio (WavPack 5).
pub const DSD: u32 = 1 << 31;

/// Sample rates by the flags' 4-bit index (bits 23-26); index 15 is
/// "custom", given by an `ID_SAMPLE_RATE` sub-block.
const RATES: [u32; 15] = [
    6000, 8000, 9600, 11025, 12000, 16000, 22050, 24000, 32000, 44100, 48000, 64000, 88200, 96000, 192000,
];

/// Metadata sub-block id of the channel count and mask.
const ID_CHANNEL_INFO: u8 = 0xD;
/// Metadata sub-block id of DSD's rate shift (WavPack 5).
const ID_DSD_BLOCK: u8 = 0xE;
/// Metadata sub-block id of a custom sample rate (`ID_OPTIONAL_DATA | 7`).
const ID_SAMPLE_RATE: u8 = 0x27;
/// Most sub-blocks walked in one block.
const MAX_SUB_BLOCKS: u32 = 256;

impl BlockHeader {
    /// Whether the header is one ffmpeg reads (`ff_wv_parse_header` and
    /// the version check of `wv_read_block_header`).
    pub fn is_valid(&self) -> bool {
        &self.id == b"wvpk"
            && (24..=BLOCK_LIMIT).contains(&self.size.get())
            && (0x402..=0x410).contains(&self.version.get())
    }

    /// Bytes of the whole block, header included.
    pub fn block_len(&self) -> u64 {
        u64::from(self.size.get()) + 8
    }

    /// The sample rate of the flags' table, `None` for "custom".
    pub fn table_rate(&self) -> Option<u32> {
        RATES.get(((self.flags.get() >> 23) & 0xF) as usize).copied()
    }

    /// Bits per sample: (bytes per sample, flags bits 0-1) × 8.
    pub fn bits(&self) -> u16 {
        ((self.flags.get() & 3) as u16 + 1) * 8
    }

    /// Whether the block is both initial and final (one block a span).
    pub fn is_whole_span(&self) -> bool {
        self.flags.get() & (INITIAL | FINAL) == INITIAL | FINAL
    }
}

/// What the metadata sub-blocks of one block say.
#[derive(Debug, Default, Clone, Copy)]
pub struct SubBlockFacts {
    /// Channels of `ID_CHANNEL_INFO`.
    pub channels: Option<u16>,
    /// Sample rate of `ID_SAMPLE_RATE`.
    pub rate: Option<u32>,
    /// Rate multiplier of `ID_DSD_BLOCK` (1 << its first byte).
    pub rate_x: Option<u32>,
}

/// Reads the metadata sub-blocks of the block at `at` (WavPack 5 file
/// format, "Metadata Sub-Blocks": an id byte, whose bit 7 means a 24-bit
/// size and bit 6 an odd size, then the size in 16-bit words).
pub fn sub_blocks<S: Source>(src: &mut S, at: u64, h: &BlockHeader) -> Result<SubBlockFacts> {
    let end = at + h.block_len();
    let mut pos = at + HEADER;
    let mut facts = SubBlockFacts::default();
    for _ in 0..MAX_SUB_BLOCKS {
        if pos.saturating_add(2) > end {
            break;
        }
        let [id, s0] = src.array::<2>(pos)?;
        let (mut size, data) = if id & 0x80 != 0 {
            let [a, b, c] = src.array::<3>(pos + 1)?;
            (u64::from(u32::from_le_bytes([a, b, c, 0])), pos + 4)
        } else {
            (u64::from(s0), pos + 2)
        };
        size <<= 1;
        let odd = id & 0x40 != 0;
        if odd {
            size = size.saturating_sub(1);
        }
        if data.saturating_add(size) > end {
            return Err(Error::malformed(
                pos,
                &"wavpack: a sub-block runs past its block (WavPack 5, sub-blocks)",
            ));
        }
        match id & 0x3F {
            ID_CHANNEL_INFO if size >= 1 => {
                let mut b = [0u8; 6];
                let n = size.min(6) as usize;
                src.read_exact_at(data, b.get_mut(..n).unwrap_or(&mut []))?;
                let [c0, _, c2, ..] = b;
                // Sizes 6 and 7: 12-bit count minus one (WavPack 5).
                facts.channels = Some(if size >= 6 {
                    (u16::from(c0) | (u16::from(c2 & 0xF) << 8)) + 1
                } else {
                    u16::from(c0)
                });
            }
            ID_DSD_BLOCK if size >= 1 => facts.rate_x = Some(1 << (src.array::<1>(data)?[0] & 0x1F)),
            ID_SAMPLE_RATE if size >= 3 => {
                let [a, b, c] = src.array::<3>(data)?;
                facts.rate = Some(u32::from_le_bytes([a, b, c, 0]));
            }
            _ => {}
        }
        pos = data + size + u64::from(odd);
    }
    Ok(facts)
}
