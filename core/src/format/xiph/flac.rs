//! FLAC structures shared by native FLAC and FLAC-in-Ogg: the frame header,
//! STREAMINFO and the PICTURE block (RFC 9639).

use super::crc::crc8;
use crate::bytes::be24;
use crate::error::Result;
use crate::format::es::id3::codec_for_mime;
use crate::source::Source;
use crate::types::{ByteRange, Codec};
use zerocopy::big_endian::{U16, U64};
use zerocopy::{FromBytes, Immutable, KnownLayout, Unaligned};

/// The longest frame header: 4 fixed bytes, a 7-byte coded number, 2 bytes of
/// block size, 2 bytes of sample rate and the CRC-8 (RFC 9639 §9.1).
pub const MAX_FRAME_HEADER: usize = 16;

/// Size of the STREAMINFO block body (RFC 9639 §8.2).
pub const STREAMINFO_LEN: usize = 34;

/// A decoded FLAC frame header (RFC 9639 §9.1).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct FrameHeader {
    /// Variable block size: `number` is a sample number, else a frame
    /// number (§9.1.1).
    pub variable: bool,
    /// Samples per channel in the frame (§9.1.6).
    pub block_size: u32,
    /// Sample rate in Hz; 0 means "as in STREAMINFO" (§9.1.2).
    pub sample_rate: u32,
    /// Channel count (§9.1.3).
    pub channels: u8,
    /// Bits per sample; 0 means "as in STREAMINFO" (§9.1.4).
    pub bits_per_sample: u8,
    /// The coded frame or sample number (§9.1.5).
    pub number: u64,
    /// Length of the header including its CRC-8, in bytes.
    pub len: u8,
}

impl FrameHeader {
    /// Parses a frame header at the start of `b` (which holds up to
    /// [`MAX_FRAME_HEADER`] bytes) and checks its CRC-8 (§9.1.8). Returns
    /// `None` for anything that is not a valid header: no sync code, a
    /// reserved block size, sample rate, channel or sample size code, a set
    /// reserved bit, a malformed coded number, a CRC mismatch, or too few
    /// bytes.
    ///
    /// 32-bit samples (size code 7) are accepted as RFC 9639 §9.1.4 allows;
    /// ffmpeg 5.1 rejects them.
    pub fn parse(b: &[u8]) -> Option<FrameHeader> {
        Self::parse_until(b, &core::cell::Cell::new(false))
    }

    /// Whether `b` could begin a frame header that it cuts short: every
    /// field it holds is valid (§9.1), and the header needs bytes beyond
    /// `b`'s end (so its CRC-8 cannot be checked yet). False for a complete
    /// header, valid or not.
    pub fn could_begin(b: &[u8]) -> bool {
        let short = core::cell::Cell::new(false);
        Self::parse_until(b, &short).is_none() && short.get()
    }

    /// [`FrameHeader::parse`], setting `short` when it stops for want of a
    /// byte rather than for an invalid field.
    fn parse_until(b: &[u8], short: &core::cell::Cell<bool>) -> Option<FrameHeader> {
        let at = |i: usize| {
            let v = b.get(i).copied();
            if v.is_none() {
                short.set(true);
            }
            v
        };
        if at(0)? != 0xFF || at(1)? & 0xFE != 0xF8 {
            return None;
        }
        let variable = at(1)? & 1 == 1;
        let bs_code = at(2)? >> 4;
        let sr_code = at(2)? & 0x0F;
        let ch_code = at(3)? >> 4;
        let bps_code = (at(3)? >> 1) & 7;
        if bs_code == 0 || sr_code == 15 || ch_code > 10 || bps_code == 3 || at(3)? & 1 != 0 {
            return None;
        }
        let channels = if ch_code < 8 { ch_code + 1 } else { 2 };
        let bits_per_sample = [0u8, 8, 12, 0, 16, 20, 24, 32].get(bps_code as usize).copied()?;
        // §9.1.5: the coded number, UTF-8 style, up to 7 bytes.
        let first = at(4)?;
        let (mut number, extra) = match first {
            0x00..=0x7F => (first as u64, 0usize),
            0xC0..=0xDF => ((first & 0x1F) as u64, 1),
            0xE0..=0xEF => ((first & 0x0F) as u64, 2),
            0xF0..=0xF7 => ((first & 0x07) as u64, 3),
            0xF8..=0xFB => ((first & 0x03) as u64, 4),
            0xFC..=0xFD => ((first & 0x01) as u64, 5),
            0xFE => (0, 6),
            _ => return None,
        };
        let mut i = 5usize;
        for _ in 0..extra {
            let c = at(i)?;
            if c & 0xC0 != 0x80 {
                return None;
            }
            number = (number << 6) | (c & 0x3F) as u64;
            i += 1;
        }
        let block_size = match bs_code {
            1 => 192,
            2..=5 => 576u32 << (bs_code - 2),
            6 => {
                i += 1;
                at(i - 1)? as u32 + 1
            }
            7 => {
                i += 2;
                u16::from_be_bytes([at(i - 2)?, at(i - 1)?]) as u32 + 1
            }
            _ => 256u32 << (bs_code - 8),
        };
        let sample_rate = match sr_code {
            0 => 0,
            1..=11 => [
                88200u32, 176400, 192000, 8000, 16000, 22050, 24000, 32000, 44100, 48000, 96000,
            ]
            .get(sr_code as usize - 1)
            .copied()?,
            12 => {
                i += 1;
                at(i - 1)? as u32 * 1000
            }
            13 => {
                i += 2;
                u16::from_be_bytes([at(i - 2)?, at(i - 1)?]) as u32
            }
            _ => {
                i += 2;
                u16::from_be_bytes([at(i - 2)?, at(i - 1)?]) as u32 * 10
            }
        };
        let crc = at(i)?;
        if crc8(0, b.get(..i)?) != crc {
            return None;
        }
        Some(FrameHeader {
            variable,
            block_size,
            sample_rate,
            channels,
            bits_per_sample,
            number,
            len: (i + 1) as u8,
        })
    }

    /// Whether `next` can directly follow this frame: the same blocking
    /// strategy and the next frame number (fixed) or sample number
    /// (variable), as RFC 9639 §9.1.5 numbers them.
    pub fn is_followed_by(&self, next: &FrameHeader) -> bool {
        if next.variable != self.variable {
            return false;
        }
        if self.variable {
            self.number.checked_add(self.block_size as u64) == Some(next.number)
        } else {
            self.number.checked_add(1) == Some(next.number)
        }
    }
}

impl FrameHeader {
    /// Whether `next` may end this frame without its CRC-16: the same
    /// blocking strategy, sample rate, sample size and channel count, and a
    /// number that continues this one's or repeats it. These are the headers
    /// ffmpeg's FLAC parser links without a CRC check (it counts a repeated
    /// number as expected).
    pub fn may_precede(&self, next: &FrameHeader) -> bool {
        next.variable == self.variable
            && next.sample_rate == self.sample_rate
            && next.bits_per_sample == self.bits_per_sample
            && next.channels == self.channels
            && (self.is_followed_by(next) || next.number == self.number)
    }
}

/// The STREAMINFO block (RFC 9639 §8.2).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct StreamInfo {
    /// Minimum block size in samples.
    pub min_block_size: u16,
    /// Maximum block size in samples.
    pub max_block_size: u16,
    /// Minimum frame size in bytes, 0 when unknown.
    pub min_frame_size: u32,
    /// Maximum frame size in bytes, 0 when unknown.
    pub max_frame_size: u32,
    /// Sample rate in Hz.
    pub sample_rate: u32,
    /// Channel count (1-8).
    pub channels: u8,
    /// Bits per sample (4-32).
    pub bits_per_sample: u8,
    /// Total samples per channel, 0 when unknown.
    pub total_samples: u64,
}

/// The STREAMINFO body as stored (RFC 9639 §8.2): block sizes, frame sizes
/// (24-bit), then rate (20 bits), channels − 1 (3), bits − 1 (5) and total
/// samples (36) packed in 64 bits; the MD5 signature follows.
#[derive(FromBytes, KnownLayout, Immutable, Unaligned, Debug)]
#[repr(C)]
struct StreamInfoLayout {
    min_block_size: U16,
    max_block_size: U16,
    min_frame_size: [u8; 3],
    max_frame_size: [u8; 3],
    packed: U64,
    md5: [u8; 16],
}

impl StreamInfo {
    /// Parses the 34-byte STREAMINFO body. Returns `None` when `b` is
    /// shorter.
    pub fn parse(b: &[u8]) -> Option<StreamInfo> {
        let (l, _) = StreamInfoLayout::ref_from_prefix(b).ok()?;
        let packed = l.packed.get();
        Some(StreamInfo {
            min_block_size: l.min_block_size.get(),
            max_block_size: l.max_block_size.get(),
            min_frame_size: be24(&l.min_frame_size, 0)?,
            max_frame_size: be24(&l.max_frame_size, 0)?,
            sample_rate: (packed >> 44) as u32,
            channels: ((packed >> 41) & 7) as u8 + 1,
            bits_per_sample: ((packed >> 36) & 31) as u8 + 1,
            total_samples: packed & ((1 << 36) - 1),
        })
    }
}

/// A PICTURE block (RFC 9639 §8.8), located in the input.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Picture {
    /// The picture type (§8.8, table 13): 3 is the front cover.
    pub kind: u32,
    /// The codec named by the media type, or guessed from the data.
    pub codec: Codec,
    /// The media type string.
    pub mime: ByteRange,
    /// The UTF-8 description.
    pub description: ByteRange,
    /// Width in pixels, as the block says.
    pub width: u32,
    /// Height in pixels, as the block says.
    pub height: u32,
    /// The picture data.
    pub data: ByteRange,
}

/// Guesses a picture codec from its first bytes.
fn codec_for_magic(b: &[u8]) -> Codec {
    if b.starts_with(b"\x89PNG\r\n\x1a\n") {
        Codec::Png
    } else if b.starts_with(&[0xFF, 0xD8, 0xFF]) {
        Codec::Mjpeg
    } else if b.starts_with(b"GIF8") {
        Codec::Gif
    } else if b.starts_with(b"BM") {
        Codec::Bmp
    } else {
        Codec::Unknown
    }
}

impl Picture {
    /// Reads a PICTURE block body of `len` bytes at `offset` (RFC 9639
    /// §8.8). Returns `Ok(None)` when the lengths inside do not fit the
    /// block.
    ///
    /// Errors: a read error of the source.
    pub fn read<S: Source>(src: &mut S, offset: u64, len: u64) -> Result<Option<Picture>> {
        let end = offset.saturating_add(len);
        let mut at = offset;
        let field = |src: &mut S, at: &mut u64| -> Result<Option<u32>> {
            if at.saturating_add(4) > end {
                return Ok(None);
            }
            let v = src.u32_be(*at)?;
            *at += 4;
            Ok(Some(v))
        };
        let Some(kind) = field(src, &mut at)? else {
            return Ok(None);
        };
        let Some(mime_len) = field(src, &mut at)? else {
            return Ok(None);
        };
        let mime = ByteRange {
            offset: at,
            len: mime_len,
        };
        at = at.saturating_add(mime_len as u64);
        let Some(desc_len) = field(src, &mut at)? else {
            return Ok(None);
        };
        let description = ByteRange {
            offset: at,
            len: desc_len,
        };
        at = at.saturating_add(desc_len as u64);
        let (Some(width), Some(height)) = (field(src, &mut at)?, field(src, &mut at)?) else {
            return Ok(None);
        };
        at = at.saturating_add(8); // colour depth, palette size
        let Some(data_len) = field(src, &mut at)? else {
            return Ok(None);
        };
        if at.saturating_add(data_len as u64) > end {
            return Ok(None);
        }
        let data = ByteRange {
            offset: at,
            len: data_len,
        };
        let mut codec = Codec::Unknown;
        if mime_len <= 32 {
            let mut m = [0u8; 32];
            let m = m.get_mut(..mime_len as usize).unwrap_or(&mut []);
            src.read_exact_at(mime.offset, m)?;
            codec = codec_for_mime(m, false);
        }
        let mut head = [0u8; 8];
        let n = src.read_at(
            data.offset,
            head.get_mut(..(data_len as usize).min(8)).unwrap_or(&mut []),
        )?;
        let magic = codec_for_magic(head.get(..n).unwrap_or(&[]));
        if codec == Codec::Unknown || magic == Codec::Png {
            codec = magic;
        }
        Ok(Some(Picture {
            kind,
            codec,
            mime,
            description,
            width,
            height,
            data,
        }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Builds a frame header with a correct CRC-8.
    pub(crate) fn header(variable: bool, bs_code: u8, sr_code: u8, number: &[u8], tail: &[u8]) -> ([u8; 16], usize) {
        let mut h = [0u8; 16];
        h[0] = 0xFF;
        h[1] = 0xF8 | variable as u8;
        h[2] = (bs_code << 4) | sr_code;
        h[3] = (1 << 4) | (4 << 1); // stereo, 16 bits
        let mut n = 4;
        for &b in number.iter().chain(tail) {
            h[n] = b;
            n += 1;
        }
        h[n] = crc8(0, &h[..n]);
        (h, n + 1)
    }

    #[test]
    fn parses_headers() {
        let (h, len) = header(false, 0xC, 9, &[5], &[]);
        let f = FrameHeader::parse(&h[..len]).unwrap();
        assert_eq!(f.block_size, 4096);
        assert_eq!(f.sample_rate, 44100);
        assert_eq!(f.channels, 2);
        assert_eq!(f.bits_per_sample, 16);
        assert_eq!(f.number, 5);
        assert_eq!(f.len as usize, len);
        // Two-byte coded number, 16-bit block size, 16-bit sample rate.
        let (h, len) = header(true, 7, 13, &[0xC2, 0x80], &[0x01, 0x00, 0xAC, 0x44]);
        let f = FrameHeader::parse(&h[..len]).unwrap();
        assert!(f.variable);
        assert_eq!(f.number, 128);
        assert_eq!(f.block_size, 257);
        assert_eq!(f.sample_rate, 44100);
        // A wrong CRC, a truncated header, a reserved code.
        let mut bad = h;
        bad[len - 1] ^= 1;
        assert!(FrameHeader::parse(&bad[..len]).is_none());
        assert!(FrameHeader::parse(&h[..len - 1]).is_none());
        let (h, len) = header(false, 0, 9, &[0], &[]);
        assert!(FrameHeader::parse(&h[..len]).is_none());
    }

    #[test]
    fn could_begin_only_a_header_cut_short() {
        // Two-byte coded number, 16-bit block size and sample rate: 11 bytes.
        let (h, len) = header(true, 7, 13, &[0xC2, 0x80], &[0x01, 0x00, 0xAC, 0x44]);
        for n in 1..len {
            assert!(FrameHeader::could_begin(&h[..n]), "{n} of {len} bytes");
        }
        // A whole header, valid or not, is not a cut one.
        assert!(!FrameHeader::could_begin(&h[..len]));
        let mut bad = h;
        bad[len - 1] ^= 1;
        assert!(!FrameHeader::could_begin(&bad[..len]));
        // A field that no more bytes can make valid: reserved block size
        // code, a set reserved bit, a bad continuation byte of the number.
        let (h, _) = header(false, 0, 9, &[0], &[]);
        assert!(!FrameHeader::could_begin(&h[..4]));
        let mut r = header(false, 0xC, 9, &[5], &[]).0;
        r[3] |= 1;
        assert!(!FrameHeader::could_begin(&r[..5]));
        let (h, _) = header(true, 7, 13, &[0xC2, 0x00], &[]);
        assert!(!FrameHeader::could_begin(&h[..6]));
        assert!(!FrameHeader::could_begin(&[0xFF, 0x00]));
        assert!(FrameHeader::could_begin(&[0xFF]));
    }

    #[test]
    fn follows() {
        let a = FrameHeader {
            number: 3,
            block_size: 4096,
            ..FrameHeader::default()
        };
        assert!(a.is_followed_by(&FrameHeader { number: 4, ..a }));
        assert!(!a.is_followed_by(&FrameHeader { number: 5, ..a }));
        let v = FrameHeader { variable: true, ..a };
        assert!(v.is_followed_by(&FrameHeader { number: 4099, ..v }));
    }

    #[test]
    fn streaminfo() {
        let mut b = [0u8; 34];
        b[..4].copy_from_slice(&[0x10, 0, 0x10, 0]);
        // 44100 Hz, 2 channels, 16 bits, 1000 samples.
        let packed: u64 = (44100 << 44) | (1 << 41) | (15 << 36) | 1000;
        b[10..18].copy_from_slice(&packed.to_be_bytes());
        let s = StreamInfo::parse(&b).unwrap();
        assert_eq!((s.sample_rate, s.channels, s.bits_per_sample), (44100, 2, 16));
        assert_eq!(s.total_samples, 1000);
        assert_eq!(s.max_block_size, 4096);
        assert!(StreamInfo::parse(&b[..33]).is_none());
    }
}
