//! MPEG-2 systems: transport streams (TS, M2TS) and program streams (PS,
//! VOB, MPEG-1 system streams) (ISO/IEC 13818-1, ISO/IEC 11172-1).

pub(crate) mod pes;
#[cfg(feature = "ps")]
pub mod ps;
pub(crate) mod split;
#[cfg(feature = "ts")]
pub mod ts;

use crate::types::Codec;

/// How far into a PES payload the keyframe check looks for the first
/// picture (parameter sets and SEI come before it).
const KEY_SCAN: usize = 4096;

/// Whether a PES payload starts a random access point, from its first
/// picture: an IDR slice (H.264, ITU-T H.264 §7.4.1.2), an IRAP picture
/// (H.265 §7.4.2.2), an I picture (ISO/IEC 13818-2 §6.3.9). Audio and other
/// codecs are always keyframes.
pub(crate) fn is_keyframe(codec: Codec, data: &[u8]) -> bool {
    let video = matches!(codec, Codec::H264 | Codec::Hevc | Codec::Mpeg2Video | Codec::Mpeg1Video);
    if !video {
        return true;
    }
    let scan = data.get(..data.len().min(KEY_SCAN)).unwrap_or(&[]);
    let mut i = 0;
    while i + 4 < scan.len() {
        if scan.get(i..i + 3) != Some(&[0, 0, 1][..]) {
            i += 1;
            continue;
        }
        let b = scan.get(i + 3).copied().unwrap_or(0);
        match codec {
            Codec::H264 => match b & 0x1F {
                5 => return true,
                1 => return false,
                _ => {}
            },
            Codec::Hevc => match (b >> 1) & 0x3F {
                16..=21 => return true,
                0..=9 => return false,
                _ => {}
            },
            _ if b == 0 => {
                // picture_coding_type: 3 bits after the 10-bit temporal_reference.
                let t = scan.get(i + 5).map(|x| (x >> 3) & 7).unwrap_or(0);
                return t == 1;
            }
            _ => {}
        }
        i += 3;
    }
    false
}
