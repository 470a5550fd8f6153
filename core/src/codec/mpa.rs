//! MPEG audio (MPEG-1/2/2.5 Layer I, II, III) frame headers, and the
//! Xing/Info, LAME and VBRI headers that encoders put in a first, silent frame.
//!
//! References: ISO/IEC 11172-3 §2.4.1.3 and §2.4.2.3 (header), ISO/IEC
//! 13818-3 §2.4.2.3 (lower sampling frequencies), MPEG 2.5 (Fraunhofer
//! extension); the Xing VBR header, the LAME tag rev. 1 and the Fraunhofer
//! VBRI header as published by their authors.

use crate::bytes::{be16, be32};

/// The 11-bit frame sync: twelve ones but for the MPEG 2.5 bit.
pub const SYNC_MASK: u32 = 0xFFE0_0000;

/// Bits of a header that stay the same from frame to frame of one stream
/// (sync, version, layer, sampling frequency): ffmpeg's `SAME_HEADER_MASK`.
pub const SAME_HEADER_MASK: u32 = 0xFFFE_0C00;

/// The mask ffmpeg's mp3 reader uses to match two consecutive headers at
/// open: also the channel mode and emphasis.
pub const STREAM_MASK: u32 = 0xFFFE_0CCF;

/// Kilobits per second by `[lsf][layer-1][index]` (ISO/IEC 11172-3 Table
/// 2.4.2.3; ISO/IEC 13818-3 Table 2.4.2.3 for the lower sampling rates).
const BITRATES: [[[u16; 15]; 3]; 2] = [
    [
        [0, 32, 64, 96, 128, 160, 192, 224, 256, 288, 320, 352, 384, 416, 448],
        [0, 32, 48, 56, 64, 80, 96, 112, 128, 160, 192, 224, 256, 320, 384],
        [0, 32, 40, 48, 56, 64, 80, 96, 112, 128, 160, 192, 224, 256, 320],
    ],
    [
        [0, 32, 48, 56, 64, 80, 96, 112, 128, 144, 160, 176, 192, 224, 256],
        [0, 8, 16, 24, 32, 40, 48, 56, 64, 80, 96, 112, 128, 144, 160],
        [0, 8, 16, 24, 32, 40, 48, 56, 64, 80, 96, 112, 128, 144, 160],
    ],
];

const SAMPLE_RATES: [u32; 3] = [44100, 48000, 32000];

/// Whether `b`, the first bytes of a would-be frame header (fewer than a
/// header), can begin one: the 11-bit frame sync (ISO/IEC 11172-3
/// §2.4.2.3) as far as they go.
pub fn sync_prefix(b: &[u8]) -> bool {
    b.first().is_none_or(|&x| x == 0xFF) && b.get(1).is_none_or(|&x| x & 0xE0 == 0xE0)
}

/// A decoded MPEG audio frame header.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MpaHeader {
    /// The raw 32-bit header.
    pub raw: u32,
    /// 1 for MPEG-1, 2 for MPEG-2 LSF, 25 for MPEG 2.5.
    pub version: u8,
    /// Layer 1, 2 or 3.
    pub layer: u8,
    /// Whether a 16-bit CRC follows the header (protection_bit == 0).
    pub crc: bool,
    /// Bit rate in bits per second; 0 for free format.
    pub bit_rate: u32,
    /// Sampling frequency in Hz.
    pub sample_rate: u32,
    /// 1 (single channel) or 2.
    pub channels: u8,
    /// The channel_mode field (3 = single channel).
    pub mode: u8,
    /// Whether the padding slot is present.
    pub padding: bool,
    /// Length of the whole frame in bytes (header included); 0 for free
    /// format, whose length is found from the next header.
    pub frame_len: u32,
    /// Samples per channel in the frame.
    pub samples: u32,
}

impl MpaHeader {
    /// Whether `h` passes the header checks of ISO/IEC 11172-3 §2.4.2.3 that
    /// ffmpeg's `ff_mpa_check_header` makes: sync, no reserved version,
    /// layer, bit rate index 15 or sampling frequency 3.
    pub const fn check(h: u32) -> bool {
        (h & SYNC_MASK) == SYNC_MASK
            && (h & (3 << 19)) != (1 << 19)
            && (h & (3 << 17)) != 0
            && (h & (0xF << 12)) != (0xF << 12)
            && (h & (3 << 10)) != (3 << 10)
    }

    /// Decodes header `h`, or `None` when [`MpaHeader::check`] fails.
    pub fn parse(h: u32) -> Option<Self> {
        if !Self::check(h) {
            return None;
        }
        let (version, lsf, shift) = match (h >> 19) & 3 {
            3 => (1u8, 0usize, 0u32),
            2 => (2, 1, 1),
            _ => (25, 1, 2),
        };
        let layer = (4 - ((h >> 17) & 3)) as u8;
        let index = ((h >> 12) & 0xF) as usize;
        let sample_rate = SAMPLE_RATES.get(((h >> 10) & 3) as usize)? >> shift;
        let kbps = *BITRATES.get(lsf)?.get(layer as usize - 1)?.get(index)? as u32;
        let padding = (h >> 9) & 1 == 1;
        let mode = ((h >> 6) & 3) as u8;
        let frame_len = if kbps == 0 {
            0
        } else {
            let p = padding as u32;
            match layer {
                1 => (kbps * 12000 / sample_rate + p) * 4,
                2 => kbps * 144_000 / sample_rate + p,
                _ => kbps * 144_000 / (sample_rate << lsf) + p,
            }
        };
        let samples = match (layer, lsf) {
            (1, _) => 384,
            (2, _) | (3, 0) => 1152,
            _ => 576,
        };
        Some(MpaHeader {
            raw: h,
            version,
            layer,
            crc: (h >> 16) & 1 == 0,
            bit_rate: kbps * 1000,
            sample_rate,
            channels: if mode == 3 { 1 } else { 2 },
            mode,
            padding,
            frame_len,
            samples,
        })
    }

    /// Decodes the header in the first four bytes of `b`.
    pub fn parse_bytes(b: &[u8]) -> Option<Self> {
        let w: [u8; 4] = b.get(..4)?.try_into().ok()?;
        Self::parse(u32::from_be_bytes(w))
    }

    /// Like [`MpaHeader::parse`] but also rejects free format (bit rate index
    /// 0), as ffmpeg's frame parser does: its frames have no length.
    pub fn parse_sized(h: u32) -> Option<Self> {
        Self::parse(h).filter(|x| x.frame_len >= 4)
    }

    /// Whether the stream is MPEG-1 (not LSF).
    pub const fn lsf(&self) -> bool {
        self.version != 1
    }

    /// Byte offset of the Xing/Info tag in the frame: header plus side
    /// information (ISO/IEC 11172-3 §2.4.1.7).
    pub const fn xing_offset(&self) -> usize {
        4 + match (self.lsf(), self.channels) {
            (false, 1) => 17,
            (false, _) => 32,
            (true, 1) => 9,
            (true, _) => 17,
        }
    }
}

/// What a Xing/Info or VBRI header (and a LAME tag) in the first frame says.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct VbrInfo {
    /// `b"Xing"`, `b"Info"` or `b"VBRI"`.
    pub kind: [u8; 4],
    /// Frames in the stream (not counting the header frame), when given.
    pub frames: Option<u32>,
    /// Bytes in the stream, when given.
    pub bytes: Option<u32>,
    /// Samples the encoder added at the start (LAME tag or VBRI delay).
    pub encoder_delay: Option<u16>,
    /// Samples the encoder added at the end (LAME tag).
    pub encoder_padding: Option<u16>,
    /// The encoder string of a LAME tag (9 bytes, e.g. `LAME3.100`).
    pub encoder: Option<[u8; 9]>,
}

/// Parses a Xing/Info (with its LAME tag) or VBRI header in `frame`, the
/// bytes of the first frame from its header on (they may be cut short).
pub fn parse_vbr(frame: &[u8], h: &MpaHeader) -> Option<VbrInfo> {
    if h.layer != 3 {
        return None;
    }
    let x = h.xing_offset();
    let tag: [u8; 4] = frame.get(x..x + 4)?.try_into().ok()?;
    if &tag == b"Xing" || &tag == b"Info" {
        let mut v = VbrInfo {
            kind: tag,
            ..VbrInfo::default()
        };
        let flags = be32(frame, x + 4)?;
        let mut at = x + 8;
        if flags & 1 != 0 {
            v.frames = be32(frame, at);
            at += 4;
        }
        if flags & 2 != 0 {
            v.bytes = be32(frame, at);
            at += 4;
        }
        if flags & 4 != 0 {
            at += 100;
        }
        if flags & 8 != 0 {
            at += 4;
        }
        // LAME tag (rev. 1): encoder string (9), then delay and padding as
        // two 12-bit fields at byte 21.
        if let Some(enc) = frame.get(at..at + 9) {
            let known = enc.starts_with(b"LAME") || enc.starts_with(b"Lavc") || enc.starts_with(b"Lavf");
            if known {
                let mut e = [0u8; 9];
                e.copy_from_slice(enc);
                v.encoder = Some(e);
                if let Some(&[a, b, c]) = frame.get(at + 21..at + 24) {
                    let (a, b, c) = (a as u16, b as u16, c as u16);
                    v.encoder_delay = Some((a << 4) | (b >> 4));
                    v.encoder_padding = Some(((b & 0xF) << 8) | c);
                }
            }
        }
        return Some(v);
    }
    // VBRI: 32 bytes after the header, whatever the mode.
    if frame.get(36..40) == Some(b"VBRI") {
        return Some(VbrInfo {
            kind: *b"VBRI",
            encoder_delay: be16(frame, 42),
            bytes: be32(frame, 46),
            frames: be32(frame, 50),
            ..VbrInfo::default()
        });
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mpeg1_layer3_header() {
        // 128 kbit/s, 44.1 kHz, joint stereo, no padding.
        let h = MpaHeader::parse(0xFFFB_9064).unwrap();
        assert_eq!((h.version, h.layer, h.bit_rate, h.sample_rate), (1, 3, 128_000, 44100));
        assert_eq!(h.frame_len, 417);
        assert_eq!(h.samples, 1152);
        assert_eq!(h.channels, 2);
        assert!(MpaHeader::parse(0xFFFF_FFFF).is_none());
        assert!(MpaHeader::parse(0xFFE0_0000).is_none());
    }

    #[test]
    fn lsf_and_layers() {
        // MPEG-2 layer 3, 64 kbit/s, 22.05 kHz, mono.
        let h = MpaHeader::parse(0xFFF3_80C4).unwrap();
        assert_eq!((h.version, h.sample_rate, h.samples, h.channels), (2, 22050, 576, 1));
        assert_eq!(h.frame_len, 64 * 144_000 / 44100);
        // Layer 1, 32 kbit/s, 32 kHz.
        let h = MpaHeader::parse(0xFFFF_1800).unwrap();
        assert_eq!((h.layer, h.samples, h.frame_len), (1, 384, 48));
        // Free format parses but has no size.
        let h = MpaHeader::parse(0xFFFB_0064).unwrap();
        assert_eq!(h.frame_len, 0);
        assert!(MpaHeader::parse_sized(0xFFFB_0064).is_none());
    }

    #[test]
    fn xing_and_lame() {
        let h = MpaHeader::parse(0xFFFB_9064).unwrap();
        let mut f = [0u8; 417];
        let x = h.xing_offset();
        f[x..x + 4].copy_from_slice(b"Info");
        f[x + 4..x + 8].copy_from_slice(&3u32.to_be_bytes());
        f[x + 8..x + 12].copy_from_slice(&100u32.to_be_bytes());
        f[x + 12..x + 16].copy_from_slice(&41_700u32.to_be_bytes());
        let l = x + 16;
        f[l..l + 9].copy_from_slice(b"LAME3.100");
        f[l + 21..l + 24].copy_from_slice(&[0x24, 0x02, 0x10]);
        let v = parse_vbr(&f, &h).unwrap();
        assert_eq!(v.frames, Some(100));
        assert_eq!(v.bytes, Some(41_700));
        assert_eq!(v.encoder_delay, Some(576));
        assert_eq!(v.encoder_padding, Some(0x210));
    }
}
