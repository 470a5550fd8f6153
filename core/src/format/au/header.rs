//! The AU header (`audio_filehdr`, 24 bytes, big-endian) and the encodings
//! this reader maps to codecs.

use crate::error::{Error, Result};
use crate::source::Source;
use crate::types::Codec;
use zerocopy::big_endian::U32;
use zerocopy::{FromBytes, Immutable, KnownLayout, Unaligned};

/// The fixed header at offset 0 (Sun `audio_filehdr`).
#[derive(FromBytes, KnownLayout, Immutable, Unaligned, Debug, Clone, Copy)]
#[repr(C)]
pub struct AuHeader {
    /// `.snd` (0x2E736E64).
    pub magic: [u8; 4],
    /// hdr_size: offset of the audio data (at least 24).
    pub data_offset: U32,
    /// data_size: bytes of audio data, `0xFFFFFFFF` when unknown.
    pub data_size: U32,
    /// encoding: the sample format (see [`Encoding`]).
    pub encoding: U32,
    /// sample_rate in frames per second.
    pub sample_rate: U32,
    /// channels, interleaved.
    pub channels: U32,
}

/// Bytes of [`AuHeader`]: the least data offset.
pub const HEADER_LEN: u64 = 24;
/// `data_size` when the writer did not know it.
pub const SIZE_UNKNOWN: u32 = 0xFFFF_FFFF;

/// An encoding this reader knows: the codec, its bits per sample, and
/// whether a block is `bits × channels` bytes (G.726) rather than one
/// sample frame.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Encoding {
    /// The codec.
    pub codec: Codec,
    /// Bits per sample of one channel.
    pub bits: u32,
    /// G.726: a block is eight frames, `bits × channels` bytes.
    pub g726: bool,
}

impl Encoding {
    /// The encodings of the Sun/NeXT table that ffmpeg reads: 1 µ-law,
    /// 2–5 linear PCM of 8/16/24/32 bits, 6/7 IEEE float of 32/64 bits,
    /// 23 G.721 (G.726 at 4 bits), 24 G.722, 25 G.723 at 3 bits, 26 G.723
    /// at 5 bits, 27 A-law.
    pub const fn from_id(id: u32) -> Option<Self> {
        let (codec, bits) = match id {
            1 => (Codec::PcmMulaw, 8),
            2 => (Codec::PcmS8, 8),
            3 => (Codec::PcmS16Be, 16),
            4 => (Codec::PcmS24Be, 24),
            5 => (Codec::PcmS32Be, 32),
            6 => (Codec::PcmF32Be, 32),
            7 => (Codec::PcmF64Be, 64),
            23 => (Codec::AdpcmG726Le, 4),
            24 => (Codec::AdpcmG722, 4),
            25 => (Codec::AdpcmG726Le, 3),
            26 => (Codec::AdpcmG726Le, 5),
            27 => (Codec::PcmAlaw, 8),
            _ => return None,
        };
        Some(Encoding {
            codec,
            bits,
            g726: matches!(id, 23 | 25 | 26),
        })
    }
}

/// What the header says once checked.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Header {
    pub encoding_id: u32,
    pub encoding: Encoding,
    pub rate: u32,
    pub channels: u16,
    /// Where the samples start (the data offset, at least 24).
    pub data_start: u64,
    /// The data size, `None` when unknown.
    pub data_size: Option<u64>,
}

/// Reads and checks the header.
///
/// Errors: `Malformed` for a wrong magic, a zero sample rate or channel
/// count, a data offset past the end of the input; `Unsupported` for an
/// encoding with no codec mapping or more channels than a track holds.
pub(crate) fn read_header<S: Source>(src: &mut S) -> Result<Header> {
    let h: AuHeader = src.read(0)?;
    if &h.magic != b".snd" {
        return Err(Error::malformed(0, &"au: no .snd magic (au(4): magic)"));
    }
    let encoding_id = h.encoding.get();
    let encoding = Encoding::from_id(encoding_id).ok_or(Error::unsupported(
        12,
        &"au: an encoding with no codec mapping (au(4): encoding)",
    ))?;
    let rate = h.sample_rate.get();
    if rate == 0 {
        return Err(Error::malformed(16, &"au: sample rate 0 (au(4): sample_rate)"));
    }
    let channels = h.channels.get();
    if channels == 0 {
        return Err(Error::malformed(20, &"au: no channels (au(4): channels)"));
    }
    let channels = u16::try_from(channels)
        .map_err(|_| Error::unsupported(20, &"au: more than 65535 channels (au(4): channels)"))?;
    // ffmpeg reads a data offset under 24 as 24: the header is always there.
    let data_start = u64::from(h.data_offset.get()).max(HEADER_LEN);
    if data_start > src.len() {
        return Err(Error::truncated(
            4,
            &"au: the data offset is past the end of the input (au(4): hdr_size)",
        ));
    }
    let size = h.data_size.get();
    Ok(Header {
        encoding_id,
        encoding,
        rate,
        channels,
        data_start,
        data_size: (size != SIZE_UNKNOWN).then_some(u64::from(size)),
    })
}
