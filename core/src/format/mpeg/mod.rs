//! MPEG-2 systems: transport streams (TS, M2TS) and program streams (PS,
//! VOB, MPEG-1 system streams) (ISO/IEC 13818-1, ISO/IEC 11172-1).

pub(crate) mod pes;
#[cfg(feature = "ps")]
pub mod ps;
pub(crate) mod split;
#[cfg(feature = "ts")]
pub mod ts;
#[cfg(feature = "ts")]
pub mod ts_mux;
#[cfg(feature = "ts-unwrap")]
pub(crate) mod wrap;

use crate::format::traits::Context;
use crate::types::Codec;

/// How far past the first time stamp the program stream probe looks for
/// streams: 1 s in 1/90000 (ffprobe analyses up to 7 s of MPEG streams, or
/// until every stream is described, which takes less).
#[cfg(feature = "ps")]
pub(crate) const FRONT_SPAN: i64 = 90_000;

/// Bytes at the end of the input read for the last time stamp (the
/// duration): 256 KiB, about ffmpeg's `DURATION_MAX_READ_SIZE` (250 000).
pub(crate) const TAIL_WINDOW: u64 = 256 << 10;

/// `b - a` for 33-bit time stamps that may have wrapped once (within half
/// the 33-bit range either way).
pub(crate) fn ticks_between(a: i64, b: i64) -> i64 {
    let d = b.wrapping_sub(a).rem_euclid(1 << 33);
    if d > 1 << 32 {
        d - (1 << 33)
    } else {
        d
    }
}

/// Start time and duration from the first and the last time stamps (in
/// 1/90000).
pub(crate) fn set_span(ctx: &mut Context, first: Option<i64>, last: Option<i64>) {
    if let Some(f) = first {
        ctx.info.start_us = Some((f * 100 + 4).div_euclid(9));
        if let Some(l) = last {
            ctx.info.duration_us = Some(ticks_between(f, l).max(0) as u64 * 100 / 9);
        }
    }
}

/// [`set_span`] for unwrapped time stamps (`wrap`): the duration is their
/// plain difference.
#[cfg(feature = "ts-unwrap")]
pub(crate) fn set_span_unwrapped(ctx: &mut Context, first: Option<i64>, last: Option<i64>) {
    if let Some(f) = first {
        ctx.info.start_us = Some((f * 100 + 4).div_euclid(9));
        if let Some(l) = last {
            ctx.info.duration_us = Some((l - f).max(0) as u64 * 100 / 9);
        }
    }
}

/// How far into a PES payload the keyframe check looks for the first
/// picture (parameter sets and SEI come before it).
pub(crate) const KEY_SCAN: usize = 4096;

/// Whether a PES payload starts a random access point, from its first
/// picture: an IDR slice (H.264, ITU-T H.264 §7.4.1.2), an IRAP picture
/// (H.265 §7.4.2.2), an I picture (ISO/IEC 13818-2 §6.3.9), an I-VOP
/// (MPEG-4 Part 2, ISO/IEC 14496-2 §6.2.5). Audio and other
/// codecs are always keyframes.
pub(crate) fn is_keyframe(codec: Codec, data: &[u8]) -> bool {
    let scan = data.get(..data.len().min(KEY_SCAN)).unwrap_or(&[]);
    keyframe_in(codec, scan).unwrap_or(false)
}

/// [`is_keyframe`] on the first bytes of a payload: `None` when they do not
/// decide it (no picture start in them yet). A decision on a prefix is the
/// decision on the whole payload, so a payload in pieces is decided from
/// its first piece when that holds the first picture.
pub(crate) fn keyframe_in(codec: Codec, scan: &[u8]) -> Option<bool> {
    let video = matches!(
        codec,
        Codec::H264 | Codec::Hevc | Codec::Mpeg2Video | Codec::Mpeg1Video | Codec::Mpeg4
    );
    if !video {
        return Some(true);
    }
    let mut from = 0;
    // The skipping start-code search (a byte compare per three bytes on
    // coded data) rather than a 3-byte window at every offset.
    while let Some(i) = crate::codec::annexb::find_start_code(scan, from) {
        if i + 4 >= scan.len() {
            return None;
        }
        let b = scan.get(i + 3).copied().unwrap_or(0);
        match codec {
            Codec::H264 => match b & 0x1F {
                5 => return Some(true),
                1 => return Some(false),
                _ => {}
            },
            Codec::Hevc => match (b >> 1) & 0x3F {
                16..=21 => return Some(true),
                0..=9 => return Some(false),
                _ => {}
            },
            // MPEG-4 Part 2 VOP: vop_coding_type 0 is an I-VOP (ISO/IEC
            // 14496-2 §6.2.5).
            Codec::Mpeg4 if b == 0xB6 => return Some(scan.get(i + 4).is_some_and(|x| x >> 6 == 0)),
            Codec::Mpeg4 => {}
            // picture_coding_type: 3 bits after the 10-bit temporal_reference.
            _ if b == 0 => return scan.get(i + 5).map(|x| (x >> 3) & 7 == 1),
            _ => {}
        }
        from = i + 3;
    }
    None
}
