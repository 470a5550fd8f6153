//! Picture facts a video stream's headers state, derived once (at probe
//! time, never per packet) from its codec configuration record and its
//! first packet: profile, level, chroma format, bit depth, whether the
//! pictures are frames, and the sample aspect ratio.
//!
//! Sources, by codec:
//! - H.264: the first SPS of an `avcC` record, or of an Annex B byte
//!   stream (configuration or first packet).
//! - H.265: the fixed fields of an `hvcC` record, or the first SPS of an
//!   Annex B byte stream.
//! - AV1: the `av1C` record (AV1-ISOBMFF §2.3.3).
//! - VP9: the first frame's uncompressed header (VP9 §6.2, color_config);
//!   VP8: the frame tag's version (RFC 6386 §9.1).
//!
//! No names here: the embedded build carries numbers only; the CLI names
//! them as ffmpeg does.

use super::{annexb::NalUnits, bits::BitReader, h264, hevc};
use crate::types::Codec;

/// What a video stream's headers say about its pictures.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct VideoFacts {
    /// The codec's profile number (`profile_idc`, `seq_profile`, VP8's
    /// version), when stated.
    pub profile: Option<u8>,
    /// H.264 `constraint_set0..5` flags (top bit first), else 0.
    pub constraints: u8,
    /// The codec's level number (`level_idc`, `seq_level_idx_0`), when
    /// stated.
    pub level: Option<u8>,
    /// Chroma format: 0 monochrome, 1 4:2:0, 2 4:2:2, 3 4:4:4, when stated.
    pub chroma_format: Option<u8>,
    /// Luma bit depth, when stated.
    pub bit_depth: Option<u8>,
    /// `Some(true)` when every picture is a frame (H.264
    /// `frame_mbs_only_flag`; VP8 has no fields).
    pub progressive: Option<bool>,
    /// Sample aspect ratio the bitstream states.
    pub sar: Option<(u32, u32)>,
}

fn u8_of(v: u32) -> u8 {
    u8::try_from(v).unwrap_or(u8::MAX)
}

fn from_h264(s: &h264::Sps) -> VideoFacts {
    VideoFacts {
        profile: Some(s.profile),
        constraints: s.constraints,
        level: Some(s.level),
        chroma_format: Some(u8_of(s.chroma_format)),
        bit_depth: Some(u8_of(s.bit_depth)),
        progressive: Some(s.frame_mbs_only),
        sar: s.sar.filter(|&(n, d)| n > 0 && d > 0),
    }
}

fn from_hevc(s: &hevc::Sps) -> VideoFacts {
    VideoFacts {
        profile: Some(s.profile),
        level: Some(s.level),
        chroma_format: Some(u8_of(s.chroma_format)),
        bit_depth: Some(u8_of(s.bit_depth)),
        ..VideoFacts::default()
    }
}

/// The first SPS of an `avcC` record.
fn avcc_sps(c: &[u8]) -> Option<h264::Sps> {
    if c.first() != Some(&1) || c.get(5).map(|b| b & 0x1F).unwrap_or(0) == 0 {
        return None;
    }
    let len = usize::from(u16::from_be_bytes([*c.get(6)?, *c.get(7)?]));
    h264::Sps::parse(c.get(8..8 + len)?)
}

fn annexb_h264(data: &[u8]) -> Option<h264::Sps> {
    NalUnits::new(data).find_map(h264::Sps::parse)
}

fn annexb_hevc(data: &[u8]) -> Option<hevc::Sps> {
    NalUnits::new(data).find_map(hevc::Sps::parse)
}

/// The fixed fields of an `hvcC` record (ISO/IEC 14496-15 §8.3.3.1).
fn hvcc(c: &[u8]) -> Option<VideoFacts> {
    if c.first() != Some(&1) || c.len() < 23 {
        return None;
    }
    Some(VideoFacts {
        profile: Some(c.get(1)? & 0x1F),
        level: Some(*c.get(12)?),
        chroma_format: Some(c.get(16)? & 3),
        bit_depth: Some((c.get(17)? & 7) + 8),
        ..VideoFacts::default()
    })
}

/// An `av1C` record: marker 1 and version 1, then `seq_profile`,
/// `seq_level_idx_0` and the color flags.
fn av1c(c: &[u8]) -> Option<VideoFacts> {
    let (&b0, &b1, &b2) = (c.first()?, c.get(1)?, c.get(2)?);
    if b0 != 0x81 {
        return None;
    }
    let high = b2 & 0x40 != 0;
    let twelve = b2 & 0x20 != 0;
    let mono = b2 & 0x10 != 0;
    let (sx, sy) = (b2 & 0x08 != 0, b2 & 0x04 != 0);
    Some(VideoFacts {
        profile: Some(b1 >> 5),
        level: Some(b1 & 0x1F),
        chroma_format: Some(match (mono, sx, sy) {
            (true, _, _) => 0,
            (false, true, true) => 1,
            (false, true, false) => 2,
            _ => 3,
        }),
        bit_depth: Some(match (high, twelve) {
            (true, true) => 12,
            (true, false) => 10,
            _ => 8,
        }),
        ..VideoFacts::default()
    })
}

/// A VP9 frame's uncompressed header: the profile, and for a key frame the
/// bit depth and chroma subsampling of color_config.
fn vp9(frame: &[u8]) -> Option<VideoFacts> {
    let mut r = BitReader::new(frame);
    if r.bits(2) != 2 {
        return None;
    }
    let lo = r.bits(1);
    let hi = r.bits(1);
    let profile = (hi << 1 | lo) as u8;
    if profile == 3 {
        r.skip(1);
    }
    let mut f = VideoFacts {
        profile: Some(profile),
        ..VideoFacts::default()
    };
    if r.bit() {
        return Some(f); // show_existing_frame
    }
    let key = !r.bit();
    r.skip(2); // show_frame, error_resilient_mode
    if !key || r.bits(24) != 0x49_8342 {
        return Some(f);
    }
    let bits = if profile >= 2 {
        if r.bit() {
            12
        } else {
            10
        }
    } else {
        8
    };
    let cs = r.bits(3);
    let chroma = if cs != 7 {
        r.skip(1); // color_range
        if profile == 1 || profile == 3 {
            match (r.bit(), r.bit()) {
                (true, true) => 1,
                (true, false) => 2,
                _ => 3,
            }
        } else {
            1
        }
    } else {
        3
    };
    if r.overrun() {
        return Some(f);
    }
    f.bit_depth = Some(bits);
    f.chroma_format = Some(chroma);
    Some(f)
}

/// The facts of a video stream of `codec`, from its configuration record
/// `config` (empty when none) and its first packet `first` (empty when
/// none). `None` when neither states anything this module reads.
pub fn video(codec: Codec, config: &[u8], first: &[u8]) -> Option<VideoFacts> {
    match codec {
        Codec::H264 => avcc_sps(config)
            .or_else(|| annexb_h264(config))
            .or_else(|| annexb_h264(first))
            .map(|s| from_h264(&s)),
        Codec::Hevc => hvcc(config).or_else(|| {
            annexb_hevc(config)
                .or_else(|| annexb_hevc(first))
                .map(|s| from_hevc(&s))
        }),
        Codec::Av1 => av1c(config),
        Codec::Vp9 => vp9(first),
        Codec::Vp8 => {
            let b0 = *first.first()?;
            Some(VideoFacts {
                profile: Some((b0 >> 1) & 7),
                chroma_format: Some(1),
                bit_depth: Some(8),
                progressive: Some(true),
                ..VideoFacts::default()
            })
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    // x264 baseline SPS, 320x240, level 1.3, constraint_set0/1.
    const SPS_CB: [u8; 10] = [0x67, 0x42, 0xC0, 0x0D, 0xD9, 0x01, 0x41, 0xFB, 0x01, 0x10];

    #[test]
    fn h264_from_avcc_and_annexb() {
        let mut avcc = [0u8; 8 + SPS_CB.len()];
        avcc[..8].copy_from_slice(&[1, 0x42, 0xC0, 0x0D, 0xFF, 0xE1, 0, SPS_CB.len() as u8]);
        avcc[8..].copy_from_slice(&SPS_CB);
        let f = video(Codec::H264, &avcc, &[]).unwrap();
        assert_eq!(f.profile, Some(66));
        assert_eq!(f.constraints, 0xC0);
        assert_eq!(f.level, Some(13));
        assert_eq!(f.chroma_format, Some(1));
        assert_eq!(f.bit_depth, Some(8));
        let mut annexb = [0u8; 4 + SPS_CB.len()];
        annexb[..4].copy_from_slice(&[0, 0, 0, 1]);
        annexb[4..].copy_from_slice(&SPS_CB);
        assert_eq!(video(Codec::H264, &[], &annexb), Some(f));
        assert_eq!(video(Codec::H264, &[], &[0, 0, 1, 0x65, 0x88]), None);
    }

    #[test]
    fn hvcc_fixed_fields() {
        let mut c = [0u8; 23];
        c[0] = 1;
        c[1] = 0x02; // Main 10
        c[12] = 120;
        c[16] = 0xFD; // chroma 1
        c[17] = 0xFA; // luma depth 10
        let f = video(Codec::Hevc, &c, &[]).unwrap();
        assert_eq!(
            (f.profile, f.level, f.chroma_format, f.bit_depth),
            (Some(2), Some(120), Some(1), Some(10))
        );
    }

    #[test]
    fn av1c_record() {
        // profile 2, level 8, high bitdepth + twelve bit, 4:2:0.
        let f = video(Codec::Av1, &[0x81, 0x48, 0x6C, 0], &[]).unwrap();
        assert_eq!(
            (f.profile, f.level, f.chroma_format, f.bit_depth),
            (Some(2), Some(8), Some(1), Some(12))
        );
        assert_eq!(video(Codec::Av1, &[0x01, 0, 0], &[]), None);
    }

    #[test]
    fn vp9_key_frame_color_config() {
        // Profile 0 key frame: marker 10, profile 00, show_existing 0,
        // frame_type 0, show_frame 1, error_res 0, sync code, cs=1, range 0.
        let f = video(Codec::Vp9, &[0x82, 0x49, 0x83, 0x42, 0x20], &[]);
        assert_eq!(f, None, "VP9 facts come from the first packet");
        let f = video(Codec::Vp9, &[], &[0x82, 0x49, 0x83, 0x42, 0x20]).unwrap();
        assert_eq!((f.profile, f.chroma_format, f.bit_depth), (Some(0), Some(1), Some(8)));
        // Profile 3 (lo=1, hi=1, reserved 0), key frame, 10 bit, cs=1, 4:4:4.
        let f = video(Codec::Vp9, &[], &[0xB0, 0x92, 0x4C, 0x1A, 0x84, 0x20]).unwrap();
        assert_eq!(f.profile, Some(3));
    }

    #[test]
    fn vp8_version_is_the_profile() {
        let f = video(Codec::Vp8, &[], &[0x12, 0, 0]).unwrap();
        assert_eq!(f.profile, Some(1));
        assert_eq!(video(Codec::Vp8, &[], &[]), None);
    }
}
