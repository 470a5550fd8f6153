//! The codec and picture tables ASF uses, kept together so that one shared
//! codec registry can replace them: WAVE format tags ([`audio_codec`]),
//! BITMAPINFOHEADER FourCCs ([`video_codec`]), `WM/Picture` MIME types
//! ([`picture_codec`]) and picture types ([`PICTURE_TYPES`]). Moved here
//! unchanged from `header.rs`.

use crate::types::Codec;

/// Maps a WAVE format tag to a codec (ffmpeg `riff.c`, plus the Windows
/// Media Audio tags of §9.1's registry).
pub(super) fn audio_codec(tag: u16, bits: u16) -> Codec {
    match (tag, bits) {
        (0x0001, 8) => Codec::PcmU8,
        (0x0001, 24) => Codec::PcmS24Le,
        (0x0001, 32) => Codec::PcmS32Le,
        (0x0001, _) => Codec::PcmS16Le,
        (0x0003, 64) => Codec::PcmF64Le,
        (0x0003, _) => Codec::PcmF32Le,
        (0x0002, _) => Codec::AdpcmMs,
        (0x0006, _) => Codec::PcmAlaw,
        (0x0007, _) => Codec::PcmMulaw,
        (0x000A, _) => Codec::WmaVoice,
        (0x0011, _) => Codec::AdpcmImaWav,
        (0x0031, _) => Codec::GsmMs,
        (0x0050, _) => Codec::Mp2,
        (0x0055, _) => Codec::Mp3,
        (0x00FF | 0x1600 | 0x706D, _) => Codec::Aac,
        (0x0160, _) => Codec::Wmav1,
        (0x0161, _) => Codec::Wmav2,
        (0x0162, _) => Codec::WmaPro,
        (0x0163, _) => Codec::WmaLossless,
        (0x2000, _) => Codec::Ac3,
        (0x2001, _) => Codec::Dts,
        (0xF1AC, _) => Codec::Flac,
        _ => Codec::Unknown,
    }
}

/// Maps a BITMAPINFOHEADER compression FourCC to a codec (ffmpeg's
/// `ff_codec_bmp_tags`, compared case-insensitively as ffmpeg does).
pub(super) fn video_codec(fourcc: [u8; 4]) -> Codec {
    let up = fourcc.map(|c| c.to_ascii_uppercase());
    match &up {
        b"WMV1" => Codec::Wmv1,
        b"WMV2" => Codec::Wmv2,
        b"WMV3" => Codec::Wmv3,
        b"WVC1" | b"WMVA" => Codec::Vc1,
        b"MP42" => Codec::Msmpeg4v2,
        b"MP43" | b"DIV3" => Codec::Msmpeg4v3,
        b"MPG4" => Codec::Msmpeg4v1,
        b"MP4S" | b"M4S2" | b"XVID" | b"DIVX" | b"DX50" | b"FMP4" | b"MP4V" => Codec::Mpeg4,
        b"H264" | b"X264" | b"AVC1" => Codec::H264,
        b"MJPG" => Codec::Mjpeg,
        _ => Codec::Unknown,
    }
}

/// Maps a WM/Picture MIME type to a codec (ffmpeg's `ff_id3v2_mime_tags`).
pub(super) fn picture_codec(mime: &[u16]) -> Option<Codec> {
    const TABLE: [(&str, Codec); 9] = [
        ("image/gif", Codec::Gif),
        ("image/jpeg", Codec::Mjpeg),
        ("image/jpg", Codec::Mjpeg),
        ("image/png", Codec::Png),
        ("image/tiff", Codec::Tiff),
        ("image/bmp", Codec::Bmp),
        ("image/webp", Codec::Webp),
        ("JPG", Codec::Mjpeg),
        ("PNG", Codec::Png),
    ];
    TABLE
        .iter()
        .find(|(m, _)| m.len() == mime.len() && m.bytes().zip(mime.iter()).all(|(a, &b)| a as u16 == b))
        .map(|&(_, c)| c)
}

/// ID3v2 picture types (ID3v2.4 §4.14), as ffmpeg names them; the `comment`
/// tag of an attached picture.
pub(super) const PICTURE_TYPES: [&str; 21] = [
    "Other",
    "32x32 pixels 'file icon'",
    "Other file icon",
    "Cover (front)",
    "Cover (back)",
    "Leaflet page",
    "Media (e.g. label side of CD)",
    "Lead artist/lead performer/soloist",
    "Artist/performer",
    "Conductor",
    "Band/Orchestra",
    "Composer",
    "Lyricist/text writer",
    "Recording Location",
    "During recording",
    "During performance",
    "Movie/video screen capture",
    "A bright coloured fish",
    "Illustration",
    "Band/artist logotype",
    "Publisher/Studio logotype",
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names() {
        assert_eq!(audio_codec(0x161, 16), Codec::Wmav2);
        assert_eq!(video_codec(*b"wmv2"), Codec::Wmv2);
        let gif: [u16; 9] = [105, 109, 97, 103, 101, 47, 103, 105, 102];
        assert_eq!(picture_codec(&gif), Some(Codec::Gif));
    }
}
