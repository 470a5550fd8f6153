//! Essence containers and elements (SMPTE ST 379-1 generic container):
//! the wrapping a container label names, the codec a descriptor's coding
//! label or container label names (ST 381 MPEG, ST 381-3 H.264, ST 382
//! AES3/BWF audio, ST 383 DV, ST 422 JPEG 2000, ST 2019-4 VC-3), and the
//! essence element key whose last four bytes are the track number.

use super::klv::{self, Ul};
use crate::types::Codec;

/// How essence sits in its container (ST 379-1 §6.2).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) enum Wrapping {
    /// One essence element per edit unit (a packet per KLV).
    #[default]
    Frame,
    /// One essence element for the whole clip (packets cut by edit unit).
    Clip,
}

/// The generic container label prefix (ST 379-1 §8), up to byte 12.
const GC_PREFIX: [u8; 12] = [0x06, 0x0e, 0x2b, 0x34, 0x04, 0x01, 0x01, 0x01, 0x0d, 0x01, 0x03, 0x01];
/// The generic container essence element key prefix (ST 379-1 §7.1).
const ELEMENT_PREFIX: [u8; 12] = [0x06, 0x0e, 0x2b, 0x34, 0x01, 0x02, 0x01, 0x01, 0x0d, 0x01, 0x03, 0x01];
/// Avid's essence element key prefix (ffmpeg accepts it too).
const AVID_ELEMENT_PREFIX: [u8; 12] = [0x06, 0x0e, 0x2b, 0x34, 0x01, 0x02, 0x01, 0x01, 0x0e, 0x04, 0x03, 0x01];
/// Picture essence coding labels (SMPTE RP 224), up to byte 12.
const PICTURE_CODING_PREFIX: [u8; 12] = [0x06, 0x0e, 0x2b, 0x34, 0x04, 0x01, 0x01, 0x01, 0x04, 0x01, 0x02, 0x02];
/// Sound compression labels for uncompressed PCM (RP 224), up to byte 12.
const SOUND_PCM_PREFIX: [u8; 12] = [0x06, 0x0e, 0x2b, 0x34, 0x04, 0x01, 0x01, 0x01, 0x04, 0x02, 0x02, 0x01];

/// The track number of an essence element key, `None` for other keys.
/// The element's item type (byte 12) must be a picture, sound, data or
/// compound item of the generic container or a content package item.
pub(crate) fn element_track(key: &Ul) -> Option<u32> {
    if key[..12] != ELEMENT_PREFIX[..12] && key[..12] != AVID_ELEMENT_PREFIX[..12] {
        return None;
    }
    // Byte 12 0x04 is the system item (ST 385), never a stream's essence.
    if matches!(key[12], 0x04 | 0x14) {
        return None;
    }
    Some(u32::from_be_bytes([key[12], key[13], key[14], key[15]]))
}

/// The wrapping an essence container label names (ffmpeg's
/// `mxf_get_wrapping_kind`); frame wrapping when it names none.
pub(crate) fn wrapping(container: &Ul) -> Wrapping {
    if !klv::matches(container, &GC_PREFIX) || container[12] != 0x02 {
        return Wrapping::Frame;
    }
    // Where each mapping keeps its frame/clip byte, and how it codes it.
    let v = |i: usize| container.get(i).copied().unwrap_or(0);
    let w = match container[13] {
        // MPEG elementary streams (ST 381), H.264 (ST 381-3), DV (ST 383).
        0x04 | 0x10 | 0x02 => v(15),
        // Uncompressed pictures (ST 384): 1/2 frame/clip, plus line variants.
        0x05 => v(15) % 4,
        // BWF/AES3 (ST 382): 1 BWF frame, 2 BWF clip, 3 AES frame, 4 AES clip.
        0x06 => match v(14) {
            3 => 1,
            4 => 2,
            x => x,
        },
        // JPEG 2000 (ST 422): 2 clip, anything else frame.
        0x0c if v(14) == 2 => 2,
        0x0c => 1,
        // VC-3, VC-1, TIFF, VC-2, VC-5, ProRes.
        0x11 | 0x12 | 0x14 | 0x15 | 0x1b | 0x1c => v(14),
        _ => 1,
    };
    if w == 2 {
        Wrapping::Clip
    } else {
        Wrapping::Frame
    }
}

/// The codec of a picture track: by its picture essence coding label,
/// else by its essence container label.
pub(crate) fn picture_codec(coding: Option<&Ul>, container: &Ul) -> Codec {
    if let Some(c) = coding.filter(|c| klv::matches(c, &PICTURE_CODING_PREFIX)) {
        let by_coding = match (c[12], c[13]) {
            // MPEG-1/2 video profiles and D-10 (ST 381, ST 356).
            (0x01, 0x01..=0x1f) => Codec::Mpeg2Video,
            (0x01, 0x20..=0x2f) => Codec::Mpeg4,
            // H.264 (ST 381-3).
            (0x01, 0x30..=0x3f) => Codec::H264,
            // DV (ST 383).
            (0x02, _) => Codec::DvVideo,
            // JPEG 2000 (ST 422).
            (0x03, 0x01) => Codec::Jpeg2000,
            // VC-3 (ST 2019-4).
            (0x71, _) => Codec::Dnxhd,
            _ => Codec::Unknown,
        };
        if by_coding != Codec::Unknown {
            return by_coding;
        }
    }
    if !klv::matches(container, &GC_PREFIX) || container[12] != 0x02 {
        return Codec::Unknown;
    }
    match container[13] {
        0x01 | 0x04 => Codec::Mpeg2Video,
        0x02 => Codec::DvVideo,
        0x0c => Codec::Jpeg2000,
        0x10 => Codec::H264,
        0x11 => Codec::Dnxhd,
        0x12 => Codec::Vc1,
        0x1c => Codec::ProRes,
        _ => Codec::Unknown,
    }
}

/// The codec of a sound track: PCM by its compression label or a BWF,
/// AES3 or D-10 container, little-endian at 16, 24 or 32 bits as ffmpeg
/// names it (16-bit for other depths).
pub(crate) fn sound_codec(compression: Option<&Ul>, container: &Ul, bits: u16) -> Codec {
    let pcm = compression.is_some_and(|c| klv::matches(c, &SOUND_PCM_PREFIX))
        || (klv::matches(container, &GC_PREFIX) && container[12] == 0x02 && matches!(container[13], 0x01 | 0x06));
    if !pcm {
        return Codec::Unknown;
    }
    match bits {
        24 => Codec::PcmS24Le,
        32 => Codec::PcmS32Le,
        _ => Codec::PcmS16Le,
    }
}

/// Codecs whose every packet is a keyframe.
pub(crate) fn intra_only(codec: Codec) -> bool {
    matches!(codec, Codec::Jpeg2000 | Codec::Dnxhd | Codec::DvVideo | Codec::ProRes)
}
