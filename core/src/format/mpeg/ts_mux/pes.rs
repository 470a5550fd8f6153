//! What each codec is in a transport stream, and the PES packet header the
//! muxer writes before each packet (ISO/IEC 13818-1 §2.4.3.6, §2.4.3.7).

use crate::error::{Error, Result};
use crate::types::{Codec, Track, TrackKind};

/// How one codec is carried: its PMT stream_type (§2.4.4.10, Table 2-34,
/// and ATSC A/52 Annex A for AC-3 / E-AC-3) and its PES stream_id
/// (§2.4.3.7, Table 2-22).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Carriage {
    /// stream_type of the PMT.
    pub stream_type: u8,
    /// stream_id of the PES packets.
    pub stream_id: u8,
}

/// Video stream_id 0xE0, MPEG audio 0xC0, private_stream_1 0xBD (AC-3),
/// the first of each range as ffmpeg's muxer uses.
const VIDEO: u8 = 0xE0;
const AUDIO: u8 = 0xC0;
const PRIVATE_1: u8 = 0xBD;

/// The carriage of `track`'s codec, as ffmpeg's muxer chooses it:
/// H.264 0x1B, H.265 0x24, MPEG-2 video 0x02, MPEG-1 video 0x01, MPEG-4
/// Part 2 0x10, AAC in ADTS 0x0F, MPEG audio 0x03 (0x04 below 32 kHz, the
/// MPEG-2 sample rates), AC-3 0x81 and E-AC-3 0x87 (the ATSC types,
/// ffmpeg's default) in private_stream_1.
///
/// Errors: `Unsupported` for any other codec.
pub fn carriage(track: &Track) -> Result<Carriage> {
    let c = |stream_type, stream_id| Ok(Carriage { stream_type, stream_id });
    match track.codec {
        Codec::H264 => c(0x1B, VIDEO),
        Codec::Hevc => c(0x24, VIDEO),
        Codec::Mpeg2Video => c(0x02, VIDEO),
        Codec::Mpeg1Video => c(0x01, VIDEO),
        Codec::Mpeg4 => c(0x10, VIDEO),
        Codec::Aac => c(0x0F, AUDIO),
        Codec::Mp1 | Codec::Mp2 | Codec::Mp3 if track.sample_rate > 0 && track.sample_rate < 32_000 => c(0x04, AUDIO),
        Codec::Mp1 | Codec::Mp2 | Codec::Mp3 => c(0x03, AUDIO),
        Codec::Ac3 => c(0x81, PRIVATE_1),
        Codec::Eac3 => c(0x87, PRIVATE_1),
        _ => Err(Error::unsupported(
            0,
            &"ts muxer: this codec has no MPEG-TS mapping here (H.264, H.265, MPEG-1/2/4 video, AAC, MPEG audio, AC-3, E-AC-3 are written)",
        )),
    }
}

/// Whether `track` is video (PES_packet_length 0, PAT/PMT before its
/// keyframes).
pub fn is_video(track: &Track) -> bool {
    track.kind == TrackKind::Video
}

/// Most bytes of a PES header written here: 9 + PTS + DTS.
pub const MAX_PES_HEADER: usize = 19;

/// A 33-bit time stamp in the 5-byte PTS/DTS form (§2.4.3.7): the 4-bit
/// `prefix`, then the bits 32..30, 29..15, 14..0, each followed by a
/// marker bit.
fn time_field(prefix: u8, t: u64) -> [u8; 5] {
    let t = t & ((1 << 33) - 1);
    [
        (prefix << 4) | (((t >> 30) as u8 & 7) << 1) | 1,
        (t >> 22) as u8,
        (((t >> 15) as u8) << 1) | 1,
        (t >> 7) as u8,
        ((t as u8) << 1) | 1,
    ]
}

/// The PES header for a payload of `payload` bytes; gives the bytes in a
/// buffer and its used length. PTS_DTS_flags `10` with a PTS, `11` when
/// `dts` is given (the caller leaves it out when it equals the PTS);
/// PES_packet_length 0 for video or for a packet over 65535 bytes
/// (§2.4.3.7: allowed for video in a transport stream), else the size.
pub fn pes_header(
    stream_id: u8,
    video: bool,
    payload: u64,
    pts: Option<u64>,
    dts: Option<u64>,
) -> ([u8; MAX_PES_HEADER], usize) {
    let mut h = [0u8; MAX_PES_HEADER];
    let (flags, data_len) = match (pts, dts) {
        (Some(_), Some(_)) => (0xC0, 10),
        (Some(_), None) => (0x80, 5),
        _ => (0, 0),
    };
    let after_length = 3 + data_len as u64 + payload;
    let length = match u16::try_from(after_length) {
        Ok(n) if !video => n,
        _ => 0,
    };
    let [l0, l1] = length.to_be_bytes();
    let fixed = [0, 0, 1, stream_id, l0, l1, 0x80, flags, data_len];
    let times = match (pts, dts) {
        (Some(p), Some(d)) => [time_field(3, p), time_field(1, d)],
        (Some(p), None) => [time_field(2, p), [0; 5]],
        _ => [[0; 5]; 2],
    };
    let src = fixed.iter().chain(times.iter().flatten());
    for (d, s) in h.iter_mut().zip(src) {
        *d = *s;
    }
    (h, 9 + usize::from(data_len))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pts_and_dts_fields() {
        // 1.4 s: 126000 = 0x1EC30.
        let (h, n) = pes_header(0xE0, true, 1000, Some(129_003), Some(126_000));
        assert_eq!(n, 19);
        assert_eq!(h[..9], [0, 0, 1, 0xE0, 0, 0, 0x80, 0xC0, 10]);
        assert_eq!(h[14..19], [0x11, 0x00, 0x07, 0xD8, 0x61]);
        let (h, n) = pes_header(0xC0, false, 100, Some((1 << 33) - 1), None);
        assert_eq!(n, 14);
        assert_eq!(h[4..6], [0, 108]);
        assert_eq!(h[9..14], [0x2F, 0xFF, 0xFF, 0xFF, 0xFF]);
        // Audio over 65535 bytes: length 0.
        let (h, _) = pes_header(0xBD, false, 70_000, None, None);
        assert_eq!((h[4], h[5], h[8]), (0, 0, 0));
    }

    #[test]
    fn carriage_follows_ffmpeg() {
        let t = |codec, rate| Track {
            codec,
            sample_rate: rate,
            ..Track::default()
        };
        assert_eq!(carriage(&t(Codec::Mp2, 48_000)).unwrap().stream_type, 0x03);
        assert_eq!(carriage(&t(Codec::Mp3, 22_050)).unwrap().stream_type, 0x04);
        assert_eq!(
            carriage(&t(Codec::Ac3, 48_000)).unwrap(),
            Carriage {
                stream_type: 0x81,
                stream_id: 0xBD
            }
        );
        assert!(carriage(&t(Codec::Opus, 48_000)).is_err());
    }
}
