//! Picture facts a video stream's headers state, derived once (at probe
//! time, never per packet) from its codec configuration record and its
//! first packet: profile, level, chroma format, bit depth, whether the
//! pictures are frames, and the sample aspect ratio.
//!
//! Sources, by codec:
//! - H.264: the first SPS of an `avcC` record, or of an Annex B byte
//!   stream (configuration or first packet).
//! - H.264 and H.265 also the head of the SPS's VUI (H.264 §E.1.1,
//!   H.265 §E.2.1): sample aspect ratio and `video_full_range_flag`.
//! - H.265: the fixed fields of an `hvcC` record and its first SPS, or the
//!   first SPS of an Annex B byte stream.
//! - AV1: the `av1C` record (AV1-ISOBMFF §2.3.3).
//! - VP9: the first frame's uncompressed header (VP9 §6.2, color_config);
//!   VP8: the frame tag's version (RFC 6386 §9.1).
//!
//! No names here: the embedded build carries numbers only; the CLI names
//! them as ffmpeg does.

use super::{annexb::NalUnits, av1, bits::BitReader, convert::hvcc::HevcConfig, h264, hevc, hevc_vui};
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
    /// Chroma format: 0 monochrome, 1 4:2:0, 2 4:2:2, 3 4:4:4, 4 4:1:1
    /// (DV), when stated.
    pub chroma_format: Option<u8>,
    /// Luma bit depth, when stated.
    pub bit_depth: Option<u8>,
    /// `Some(true)` when every picture is a frame (H.264
    /// `frame_mbs_only_flag`; VP8 has no fields).
    pub progressive: Option<bool>,
    /// Sample aspect ratio the bitstream states.
    pub sar: Option<(u32, u32)>,
    /// `Some(true)` for full-range samples (ffmpeg's `pc`), `Some(false)`
    /// for limited range (`tv`), `None` when the headers do not say:
    /// H.264 and H.265 `video_full_range_flag` (§E.2.1), which an H.265
    /// SPS without a video signal type leaves at 0.
    pub full_range: Option<bool>,
    /// For interlaced pictures (`progressive` is `Some(false)`): whether
    /// the top field comes first, when stated (MPEG-2's first picture
    /// coding extension).
    pub top_field_first: Option<bool>,
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
        sar: valid_sar(s.sar),
        full_range: s.full_range,
        top_field_first: None,
    }
}

/// A sample aspect ratio with no zero term.
fn valid_sar(sar: Option<(u32, u32)>) -> Option<(u32, u32)> {
    sar.filter(|&(n, d)| n > 0 && d > 0)
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

/// The facts of the first H.265 SPS of an Annex B byte stream: its fixed
/// fields, then what the head of its VUI says.
fn annexb_hevc(data: &[u8]) -> Option<VideoFacts> {
    NalUnits::new(data).find_map(|nal| {
        let mut f = from_hevc(&hevc::Sps::parse(nal)?);
        with_hevc_vui(&mut f, nal);
        Some(f)
    })
}

/// The sample aspect ratio and signal range of the H.265 SPS `nal`, when
/// it can be read through the head of its VUI: ffmpeg's `hevc` decoder
/// takes a stream without `video_signal_type_present_flag` as limited
/// range.
fn with_hevc_vui(f: &mut VideoFacts, nal: &[u8]) {
    if let Some((_, vui)) = hevc_vui::parse(nal) {
        f.sar = valid_sar(vui.sar);
        f.full_range = Some(vui.full_range.unwrap_or(false));
    }
}

/// The fixed fields of an `hvcC` record (ISO/IEC 14496-15 §8.3.3.1), then
/// the VUI head of the first SPS in its arrays.
fn hvcc(c: &[u8]) -> Option<VideoFacts> {
    if c.first() != Some(&1) || c.len() < 23 {
        return None;
    }
    let mut f = VideoFacts {
        profile: Some(c.get(1)? & 0x1F),
        level: Some(*c.get(12)?),
        chroma_format: Some(c.get(16)? & 3),
        bit_depth: Some((c.get(17)? & 7) + 8),
        ..VideoFacts::default()
    };
    let sps = HevcConfig::parse(c).ok().and_then(|cfg| {
        cfg.nal_units()
            .find(|n| n.first().map(|&b| hevc::nal_type(b)) == Some(hevc::nal::SPS))
    });
    if let Some(nal) = sps {
        with_hevc_vui(&mut f, nal);
    }
    Some(f)
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

/// An AV1 sequence header among the OBUs of `data`: low-overhead OBUs with
/// size fields (§5.2, IVF and MP4 samples) or, failing that, Annex B frame
/// units of length-prefixed OBUs (Annex B.2).
fn av1_obus(data: &[u8]) -> Option<VideoFacts> {
    av1_section5(data)
        .or_else(|| av1_annexb(data))
        .map(|(s, c)| VideoFacts {
            profile: Some(s.profile),
            level: Some(c.level),
            chroma_format: Some(match (c.mono, c.subsampling) {
                (true, _) => 0,
                (false, (true, true)) => 1,
                (false, (true, false)) => 2,
                _ => 3,
            }),
            bit_depth: Some(c.bit_depth),
            // ffmpeg's decoders state the render size over the frame size,
            // which an encoder leaves equal.
            sar: Some((1, 1)),
            ..VideoFacts::default()
        })
}

/// At most this many OBUs are looked at for a sequence header.
const MAX_OBUS: usize = 64;

fn av1_section5(data: &[u8]) -> Option<(av1::SequenceHeader, av1::SequenceColor)> {
    let mut at = 0usize;
    for _ in 0..MAX_OBUS {
        let h = av1::ObuHeader::parse(data.get(at..)?)?;
        let start = at.checked_add(h.header_len)?;
        let end = start.checked_add(usize::try_from(h.size?).ok()?)?;
        if h.obu_type == av1::obu::SEQUENCE_HEADER {
            return av1::SequenceHeader::parse_color(data.get(start..end)?);
        }
        at = end;
    }
    None
}

fn av1_annexb(data: &[u8]) -> Option<(av1::SequenceHeader, av1::SequenceColor)> {
    // A frame unit's size, then each OBU's length and the OBU; the first
    // frame unit of a temporal unit holds the sequence header.
    let (fu, n) = av1::leb128(data)?;
    let unit = data.get(n..n.checked_add(usize::try_from(fu).ok()?)?)?;
    let mut at = 0usize;
    for _ in 0..MAX_OBUS {
        let (len, n) = av1::leb128(unit.get(at..)?)?;
        let obu = unit.get(at + n..(at + n).checked_add(usize::try_from(len).ok()?)?)?;
        let h = av1::ObuHeader::parse(obu)?;
        if h.obu_type == av1::obu::SEQUENCE_HEADER {
            return av1::SequenceHeader::parse_color(obu.get(h.header_len..)?);
        }
        at += n + obu.len();
    }
    None
}

/// MPEG-1/2 video (ISO/IEC 13818-2 §6.2.2.1, §6.2.2.3, §6.2.3.1): the
/// sequence header's aspect, then for MPEG-2 the sequence extension
/// (profile, level, chroma format, `progressive_sequence`), the sequence
/// display extension and the first picture coding extension (field
/// order).
fn mpegvideo(data: &[u8]) -> Option<VideoFacts> {
    use super::mpegvideo::{SequenceHeader, EXTENSION, PICTURE, SEQUENCE_HEADER};
    let mut seq: Option<SequenceHeader> = None;
    let mut f = VideoFacts::default();
    let mut display = None;
    let mut progressive_sequence = None;
    let mut at = 0usize;
    while let Some(i) = data.get(at..)?.windows(3).position(|w| w == [0, 0, 1]) {
        let code_at = at + i + 3;
        let code = 0x100 | u32::from(*data.get(code_at)?);
        let body = data.get(code_at + 1..).unwrap_or(&[]);
        at = code_at + 1;
        match code {
            SEQUENCE_HEADER if seq.is_none() => seq = Some(SequenceHeader::parse(body)?),
            EXTENSION if seq.is_some() => match body.first().map(|b| b >> 4) {
                Some(1) => {
                    let mut r = BitReader::new(body);
                    r.skip(4 + 1); // extension id, escape bit
                    f.profile = Some(r.bits(3) as u8);
                    f.level = Some(r.bits(4) as u8);
                    let progressive = r.bit();
                    f.chroma_format = Some(r.bits(2) as u8);
                    f.bit_depth = Some(8);
                    progressive_sequence = Some(progressive);
                }
                Some(2) => {
                    let mut r = BitReader::new(body);
                    r.skip(4 + 3);
                    if r.bit() {
                        r.skip(24);
                    }
                    let w = r.bits(14);
                    r.skip(1);
                    let h = r.bits(14);
                    display = (!r.overrun()).then_some((w, h));
                }
                Some(8) => {
                    let mut r = BitReader::new(body);
                    r.skip(4 + 16 + 2 + 2); // id, f_codes, dc precision, structure
                    let tff = r.bit();
                    r.skip(6); // through repeat_first_field
                    r.skip(1); // chroma_420_type
                    let progressive_frame = r.bit();
                    if !r.overrun() {
                        f.progressive = Some(progressive_sequence == Some(true) || progressive_frame);
                        f.top_field_first = Some(tff);
                    }
                    break;
                }
                _ => {}
            },
            PICTURE if seq.is_some() && progressive_sequence.is_none() => break,
            _ => {}
        }
    }
    let seq = seq?;
    f.sar = mpegvideo_sar(&seq, progressive_sequence.is_some(), display);
    if progressive_sequence.is_none() {
        // MPEG-1: 4:2:0, 8 bits, no profile or level.
        f.chroma_format = Some(1);
        f.bit_depth = Some(8);
    }
    Some(f)
}

/// ffmpeg's sample aspect of an MPEG-1/2 sequence: MPEG-1's code 1 is
/// square pixels; MPEG-2's codes 2–4 are display aspects (4:3, 16:9,
/// 2.21:1) over the display size when that gives 4:3 or 16:9, else over
/// the coded size. MPEG-1's other codes are left unstated.
fn mpegvideo_sar(
    seq: &super::mpegvideo::SequenceHeader,
    mpeg2: bool,
    display: Option<(u32, u32)>,
) -> Option<(u32, u32)> {
    let dar: (u64, u64) = match (mpeg2, seq.aspect) {
        (_, 1) => return Some((1, 1)),
        (true, 2) => (4, 3),
        (true, 3) => (16, 9),
        (true, 4) => (221, 100),
        _ => return None,
    };
    let (w, h) = (u64::from(seq.width), u64::from(seq.height));
    let over = |(dw, dh): (u64, u64)| (dar.0 * dh, dar.1 * dw);
    let by_display = display
        .map(|(dw, dh)| (u64::from(dw), u64::from(dh)))
        .filter(|&(dw, dh)| {
            // The display aspect the display size gives on the coded size.
            let (n, d) = (dar.0 * dh * w, dar.1 * dw * h);
            dw > 0 && dh > 0 && (n * 3 == d * 4 || n * 9 == d * 16)
        });
    let (n, d) = over(by_display.unwrap_or((w, h)));
    let g = gcd(n, d);
    if g == 0 {
        return None;
    }
    Some((u32::try_from(n / g).ok()?, u32::try_from(d / g).ok()?))
}

/// Greatest common divisor (0 for `gcd(0, 0)`).
pub fn gcd(a: u64, b: u64) -> u64 {
    if b == 0 {
        a
    } else {
        gcd(b, a % b)
    }
}

/// MPEG-4 Part 2 (ISO/IEC 14496-2 §6.2.2, §6.2.3): the visual object
/// sequence's `profile_and_level_indication` and the video object layer's
/// `aspect_ratio_info`. Simple profile level 8 is ffmpeg's level 0.
fn mpeg4_part2(data: &[u8]) -> Option<VideoFacts> {
    let mut f = VideoFacts {
        chroma_format: Some(1),
        bit_depth: Some(8),
        ..VideoFacts::default()
    };
    let mut vol = false;
    let mut at = 0usize;
    while let Some(i) = data.get(at..)?.windows(3).position(|w| w == [0, 0, 1]) {
        let code_at = at + i + 3;
        let code = *data.get(code_at)?;
        let body = data.get(code_at + 1..).unwrap_or(&[]);
        at = code_at + 1;
        match code {
            0xB0 => {
                let pli = *body.first()?;
                f.profile = Some(pli >> 4);
                f.level = Some(if pli == 0x08 { 0 } else { pli & 0xF });
            }
            0x20..=0x2F => {
                let mut r = BitReader::new(body);
                r.skip(1 + 8);
                if r.bit() {
                    r.skip(4 + 3);
                }
                let sar = match r.bits(4) {
                    15 => (r.bits(8), r.bits(8)),
                    1 => (1, 1),
                    2 => (12, 11),
                    3 => (10, 11),
                    4 => (16, 11),
                    5 => (40, 33),
                    _ => (0, 0),
                };
                if !r.overrun() && sar.0 > 0 && sar.1 > 0 {
                    f.sar = Some(sar);
                }
                vol = true;
                break;
            }
            0xB6 => break,
            _ => {}
        }
    }
    (vol || f.profile.is_some()).then_some(f)
}

/// A DV frame's DIF header and VAUX packs (IEC 61834-2, SMPTE 314M): the
/// system (`DSF`, 525/60 or 625/50), the application ID (`APT`, IEC or
/// DVCPRO), DV50's signal type, and the video control pack's display
/// aspect. Pixel aspects as ffmpeg's DV profiles state them.
fn dv(frame: &[u8]) -> Option<VideoFacts> {
    // The first DIF block is the header: ID 0x1F 0x07 0x00.
    if frame.get(..3)? != [0x1F, 0x07, 0x00] {
        return None;
    }
    let pal = frame.get(3)? & 0x80 != 0;
    let apt = frame.get(4)? & 7;
    // VAUX source pack (0x60) and source control pack (0x61) of the first
    // VAUX block.
    const SOURCE: usize = 80 * 5 + 48 + 5;
    let stype = if frame.get(SOURCE) == Some(&0x60) {
        frame.get(SOURCE + 3)? & 0x1F
    } else {
        0
    };
    let control = frame.get(SOURCE + 5..SOURCE + 10).filter(|p| p.first() == Some(&0x61));
    let disp = control.and_then(|p| p.get(2)).map_or(0, |b| b & 7);
    let wide = disp == 2 || (apt == 0 && disp == 7);
    let chroma = match (stype, pal) {
        (4, _) => 2, // DV50
        (_, false) => 4,
        (_, true) if apt == 0 => 1,
        (_, true) => 4, // DVCPRO25 625/50
    };
    let sar = match (pal, wide) {
        (false, false) => (8, 9),
        (false, true) => (32, 27),
        (true, false) => (16, 15),
        (true, true) => (64, 45),
    };
    Some(VideoFacts {
        chroma_format: Some(chroma),
        bit_depth: Some(8),
        sar: Some(sar),
        ..VideoFacts::default()
    })
}

/// Theora's identification header (Theora spec §6.2): the pixel format.
/// The configuration holds the three headers; the first starts `\x80theora`.
fn theora(config: &[u8]) -> Option<VideoFacts> {
    let at = config.windows(7).position(|w| w == b"\x80theora")?;
    let id = config.get(at + 7..at + 42)?;
    let pf = id.get(34)? >> 3 & 3;
    Some(VideoFacts {
        chroma_format: Some(match pf {
            0 => 1,
            2 => 2,
            3 => 3,
            _ => return None,
        }),
        bit_depth: Some(8),
        ..VideoFacts::default()
    })
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
        Codec::Hevc => hvcc(config)
            .or_else(|| annexb_hevc(config))
            .or_else(|| annexb_hevc(first)),
        Codec::Av1 => av1c(config).or_else(|| av1_obus(config)).or_else(|| av1_obus(first)),
        Codec::Mpeg1Video | Codec::Mpeg2Video => mpegvideo(first).or_else(|| mpegvideo(config)),
        Codec::Mpeg4 => mpeg4_part2(config).or_else(|| mpeg4_part2(first)),
        Codec::Theora => theora(config),
        Codec::DvVideo => dv(first),
        // Decoded to 8-bit 4:2:0, whatever the headers say.
        Codec::H263 | Codec::Flv1 | Codec::Wmv1 | Codec::Wmv2 | Codec::Wmv3 | Codec::Vc1 => Some(VideoFacts {
            chroma_format: Some(1),
            bit_depth: Some(8),
            ..VideoFacts::default()
        }),
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

    /// libx264 (through ffmpeg 5.1), High, 320x240, from full-range input
    /// with `setsar=16/11`: VUI `aspect_ratio_idc` 4 and
    /// `video_full_range_flag` 1 (ffprobe: `16:11`, `yuvj420p`, `pc`).
    const SPS_FULL_RANGE: [u8; 24] = [
        0x67, 0x64, 0x00, 0x0D, 0xAC, 0xD9, 0x41, 0x41, 0xFB, 0x04, 0x6C, 0x80, 0x00, 0x00, 0x03, 0x00, 0x80, 0x00,
        0x00, 0x19, 0x07, 0x8A, 0x14, 0xCB,
    ];

    /// libx265, 320x240 Main from full-range input with `setsar=4/3`.
    const HEVC_SPS_FULL_RANGE: [u8; 42] = [
        0x42, 0x01, 0x01, 0x01, 0x60, 0x00, 0x00, 0x03, 0x00, 0x90, 0x00, 0x00, 0x03, 0x00, 0x00, 0x03, 0x00, 0x3C,
        0xA0, 0x0A, 0x08, 0x0F, 0x16, 0x59, 0x59, 0xA4, 0x93, 0x2B, 0xC3, 0x9B, 0x02, 0x00, 0x00, 0x03, 0x00, 0x02,
        0x00, 0x00, 0x03, 0x00, 0x32, 0x10,
    ];

    #[test]
    fn h264_vui_aspect_and_range() {
        let mut annexb = [0u8; 4 + SPS_FULL_RANGE.len()];
        annexb[..4].copy_from_slice(&[0, 0, 0, 1]);
        annexb[4..].copy_from_slice(&SPS_FULL_RANGE);
        let f = video(Codec::H264, &[], &annexb).unwrap();
        assert_eq!((f.profile, f.chroma_format, f.bit_depth), (Some(100), Some(1), Some(8)));
        assert_eq!((f.sar, f.full_range), (Some((16, 11)), Some(true)));
        // An SPS without VUI states no range.
        assert_eq!(
            video(
                Codec::H264,
                &[],
                &[0, 0, 0, 1, 0x67, 0x42, 0xC0, 0x0D, 0xD9, 0x01, 0x41, 0xFB, 0x01, 0x10]
            )
            .unwrap()
            .full_range,
            None
        );
    }

    #[test]
    fn hevc_vui_from_hvcc_arrays_and_annexb() {
        // An hvcC with the fixed fields of Main 4:2:0 8-bit and one array
        // holding the SPS.
        let mut c = [0u8; 23 + 3 + 2 + HEVC_SPS_FULL_RANGE.len()];
        c[0] = 1;
        c[1] = 0x01;
        c[12] = 60;
        c[16] = 0xFD;
        c[17] = 0xF8;
        c[22] = 1;
        c[23..28].copy_from_slice(&[0x80 | 33, 0, 1, 0, HEVC_SPS_FULL_RANGE.len() as u8]);
        c[28..].copy_from_slice(&HEVC_SPS_FULL_RANGE);
        let f = video(Codec::Hevc, &c, &[]).unwrap();
        assert_eq!(
            (f.profile, f.level, f.chroma_format, f.bit_depth),
            (Some(1), Some(60), Some(1), Some(8))
        );
        assert_eq!((f.sar, f.full_range), (Some((4, 3)), Some(true)));
        let mut annexb = [0u8; 4 + HEVC_SPS_FULL_RANGE.len()];
        annexb[..4].copy_from_slice(&[0, 0, 0, 1]);
        annexb[4..].copy_from_slice(&HEVC_SPS_FULL_RANGE);
        let g = video(Codec::Hevc, &[], &annexb).unwrap();
        assert_eq!(
            (g.sar, g.full_range, g.chroma_format),
            (Some((4, 3)), Some(true), Some(1))
        );
        // The SPS cut inside its VUI: the fixed facts stay, nothing of the
        // VUI is claimed.
        let h = video(Codec::Hevc, &[], &annexb[..34]).unwrap();
        assert_eq!((h.chroma_format, h.sar, h.full_range), (Some(1), None, None));
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

    #[test]
    fn mpeg2_sequence_and_first_picture() {
        // 720x576, aspect 16:9, 25 Hz; Main@Main, interlaced 4:2:0; a
        // picture whose coding extension says top field first.
        let es: [u8; 37] = [
            0, 0, 1, 0xB3, 0x2D, 0x02, 0x40, 0x33, 0xFF, 0xFF, 0xE0, 0x18, //
            0, 0, 1, 0xB5, 0x14, 0x82, 0x00, 0x01, 0x00, 0x00, //
            0, 0, 1, 0x00, 0, 0x0F, 0xFF, 0xF8, //
            0, 0, 1, 0xB5, 0x8F, 0xFF, 0xF3,
        ];
        let mut with_flags = [0u8; 39];
        with_flags[..37].copy_from_slice(&es);
        with_flags[37] = 0x80;
        let f = video(Codec::Mpeg2Video, &[], &with_flags).unwrap();
        assert_eq!((f.profile, f.level, f.chroma_format), (Some(4), Some(8), Some(1)));
        assert_eq!((f.progressive, f.top_field_first), (Some(false), Some(true)));
        // 16:9 over 720x576.
        assert_eq!(f.sar, Some((64, 45)));
        // Cut before the picture coding extension: no field order.
        let f = video(Codec::Mpeg2Video, &[], &es[..30]).unwrap();
        assert_eq!(f.progressive, None);
    }

    #[test]
    fn mpeg4_profile_level_and_aspect() {
        let es = [0, 0, 1, 0xB0, 0x01, 0, 0, 1, 0x20, 0x00, 0x90, 0x00];
        let f = video(Codec::Mpeg4, &[], &es).unwrap();
        assert_eq!((f.profile, f.level, f.sar), (Some(0), Some(1), Some((16, 11))));
        // Simple profile level 0 is coded as 8.
        let es = [0, 0, 1, 0xB0, 0x08];
        assert_eq!(video(Codec::Mpeg4, &[], &es).unwrap().level, Some(0));
    }

    #[test]
    fn av1_sequence_header_obu_in_a_packet() {
        // A reduced still-picture sequence header: profile 2 (bits 010),
        // level 4, 16x16, then colour config: 12-bit, not mono, no colour
        // description, subsampling_x 1 and subsampling_y 0 (4:2:2).
        let seq = [0x59, 0x0C, 0xFF, 0xC0, 0xC4];
        // A temporal delimiter OBU, then the sequence header OBU (type 1,
        // with a size field).
        let mut p = [0u8; 9];
        p[..2].copy_from_slice(&[0x12, 0]);
        p[2..4].copy_from_slice(&[0x0A, seq.len() as u8]);
        p[4..].copy_from_slice(&seq);
        let f = video(Codec::Av1, &[], &p).unwrap();
        assert_eq!(
            (f.profile, f.level, f.chroma_format, f.bit_depth),
            (Some(2), Some(4), Some(2), Some(12))
        );
        // The same OBU in an Annex B frame unit: the unit's size (7), the
        // OBU's length (6), its header (type 1, no size field), payload.
        let mut a = [0u8; 8];
        a[..3].copy_from_slice(&[7, 6, 0x08]);
        a[3..].copy_from_slice(&seq);
        let f = video(Codec::Av1, &[], &a);
        assert_eq!(f.map(|f| f.bit_depth), Some(Some(12)));
    }
}
