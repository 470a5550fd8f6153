//! Video FourCCs of AVI (`biCompression`) and the picture-type checks that
//! ffprobe's parsers apply to keyframe flags.

use crate::types::Codec;

/// Which picture-type check decides a video packet's keyframe flag, as
/// ffmpeg's parsers do for these codecs regardless of the index flags.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(crate) enum PictureCheck {
    /// The index (or "every packet", without one) decides.
    #[default]
    Index,
    /// MPEG-4 Part 2: the first VOP's `vop_coding_type` (ISO/IEC 14496-2 §6.2.5).
    Mpeg4,
    /// MPEG-1/2 video: the first picture header's `picture_coding_type`
    /// (ISO/IEC 13818-2 §6.2.3).
    Mpeg12,
}

impl PictureCheck {
    pub(crate) fn for_codec(codec: Codec) -> Self {
        match codec {
            Codec::Mpeg4 => PictureCheck::Mpeg4,
            Codec::Mpeg1Video | Codec::Mpeg2Video => PictureCheck::Mpeg12,
            _ => PictureCheck::Index,
        }
    }

    /// Whether `data` starts with an intra picture; `None` when no picture
    /// header is found (the index flag then stands).
    pub(crate) fn is_intra(self, data: &[u8]) -> Option<bool> {
        let code = match self {
            PictureCheck::Index => return None,
            PictureCheck::Mpeg4 => 0xB6,
            PictureCheck::Mpeg12 => 0x00,
        };
        let mut i = 0usize;
        while let Some(w) = data.get(i..i + 4) {
            if w == [0, 0, 1, code] {
                return match self {
                    PictureCheck::Mpeg4 => data.get(i + 4).map(|b| b >> 6 == 0),
                    _ => data.get(i + 5).map(|b| (b >> 3) & 7 == 1),
                };
            }
            i += 1;
        }
        None
    }
}

/// `ff_codec_bmp_tags` (upper case) as a table rather than a `match`: a
/// third of the flash on thumbv7em.
static BMP_TAGS: &[(Codec, &[[u8; 4]])] = &[
    (
        Codec::H264,
        &[
            *b"H264", *b"X264", *b"AVC1", *b"DAVC", *b"SMV2", *b"VSSH", *b"Q264", *b"V264", *b"GAVC", *b"UMSV",
            *b"TSHD", *b"INMC",
        ],
    ),
    (Codec::Hevc, &[*b"HEVC", *b"H265", *b"X265", *b"HVC1", *b"HEV1"]),
    (
        Codec::Mpeg4,
        &[
            *b"FMP4", *b"DIVX", *b"DX50", *b"XVID", *b"MP4S", *b"M4S2", *b"MP4V", *b"DIV1", *b"BLZ0", *b"3IV2",
            *b"3IVX", *b"SEDG", *b"RMP4", *b"UMP4", *b"WV1F", *b"SMP4", *b"FVFW", *b"DREX", *b"M4CC", *b"GEOX",
            *b"HDX4", *b"DMK2", *b"DIGI", *b"EPHV", *b"EM4A", *b"M4T3", *b"SN40", *b"VSPX", *b"ULDX", *b"GEOV",
            *b"SIPP", *b"XVIX", *b"DXGM", *b"VIDM", *b"MVES", *b"YMP4", *b"ZMP4", *b"DYM4", *b"MNM4",
        ],
    ),
    (
        Codec::Msmpeg4v3,
        &[
            *b"MP43", *b"DIV3", *b"MPG3", *b"DIV4", *b"DIV5", *b"DIV6", *b"AP41", *b"COL1", *b"COL0",
        ],
    ),
    (Codec::Msmpeg4v2, &[*b"MP42", *b"DIV2"]),
    (Codec::Msmpeg4v1, &[*b"MP41", *b"MPG4"]),
    (Codec::Wmv1, &[*b"WMV1"]),
    (Codec::Wmv2, &[*b"WMV2"]),
    (Codec::Wmv3, &[*b"WMV3"]),
    (Codec::Vc1, &[*b"WVC1", *b"WMVA"]),
    (
        Codec::Mjpeg,
        &[
            *b"MJPG", *b"AVRN", *b"LJPG", *b"JPGL", *b"IJPG", *b"ACDV", *b"QIVG", *b"SLMJ", *b"CJPG", *b"DMB1",
            *b"MMJP", *b"JPEG", *b"AVDJ",
        ],
    ),
    (Codec::Mpeg1Video, &[*b"MPG1", *b"PIM1", *b"VCR2"]),
    (
        Codec::Mpeg2Video,
        &[
            *b"MPG2", *b"MPEG", *b"MMES", *b"PIM2", *b"DVR ", *b"MX5P", *b"EM2V", *b"SLIF", *b"M701", *b"M702",
            *b"M703", *b"M704", *b"M705", *b"HDV1", *b"HDV2", *b"HDV3", *b"HDV5", *b"HDV6", *b"HDV7", *b"HDV8",
            *b"HDV9", *b"HDVA", *b"HDVF",
        ],
    ),
    (
        Codec::H263,
        &[
            *b"H263", *b"X263", *b"U263", *b"M263", *b"VX1K", *b"S263", *b"L263", *b"D263",
        ],
    ),
    (Codec::Flv1, &[*b"FLV1"]),
    (Codec::Vp8, &[*b"VP80"]),
    (Codec::Vp9, &[*b"VP90"]),
    (Codec::Av1, &[*b"AV01"]),
    (
        Codec::DvVideo,
        &[
            *b"DVSD", *b"DVHD", *b"DVSL", *b"DV25", *b"DV50", *b"CDVC", *b"CDVH", *b"DVC ", *b"DVCP", *b"DVPP",
            *b"DV5P", *b"DV5N", *b"DVH1", *b"DVIS", *b"PDVC", *b"SL25", *b"SLDV", *b"AVD1",
        ],
    ),
    (Codec::Huffyuv, &[*b"HFYU"]),
    (Codec::Ffv1, &[*b"FFV1"]),
    (Codec::Cinepak, &[*b"CVID"]),
    (Codec::Msvideo1, &[*b"MSVC", *b"CRAM", *b"WHAM"]),
    (Codec::Msrle, &[*b"MRLE"]),
    (Codec::Png, &[*b"MPNG", *b"PNG1", *b"PNG "]),
    (
        Codec::RawVideo,
        &[
            *b"RAW ", *b"DIB ", *b"Y800", *b"YV12", *b"I420", *b"YUY2", *b"UYVY", *b"NV12", *b"BGR ", *b"RGB ",
        ],
    ),
];

/// Maps a BITMAPINFOHEADER compression value to a codec (after ffmpeg's
/// `ff_codec_bmp_tags`, matched case-insensitively as ffmpeg does).
pub(crate) fn video_codec(fourcc: [u8; 4]) -> Codec {
    match u32::from_le_bytes(fourcc) {
        0 | 3 => return Codec::RawVideo,
        1 | 2 => return Codec::Msrle,
        _ => {}
    }
    let u = fourcc.map(|b| b.to_ascii_uppercase());
    BMP_TAGS
        .iter()
        .find(|(_, tags)| tags.contains(&u))
        .map_or(Codec::Unknown, |&(c, _)| c)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fourccs_and_pictures() {
        assert_eq!(video_codec(*b"xvid"), Codec::Mpeg4);
        assert_eq!(video_codec(*b"MJPG"), Codec::Mjpeg);
        assert_eq!(video_codec([0; 4]), Codec::RawVideo);
        assert_eq!(video_codec(*b"zzzz"), Codec::Unknown);
        let i_vop = [0, 0, 1, 0xB6, 0x10, 0];
        let p_vop = [0, 0, 1, 0xB6, 0x50, 0];
        assert_eq!(PictureCheck::Mpeg4.is_intra(&i_vop), Some(true));
        assert_eq!(PictureCheck::Mpeg4.is_intra(&p_vop), Some(false));
        assert_eq!(PictureCheck::Mpeg4.is_intra(&[0, 0, 1]), None);
        // temporal_reference 0, picture_coding_type 1 (I).
        assert_eq!(PictureCheck::Mpeg12.is_intra(&[0, 0, 1, 0, 0, 0x08]), Some(true));
        assert_eq!(PictureCheck::Mpeg12.is_intra(&[0, 0, 1, 0, 0, 0x10]), Some(false));
    }
}
