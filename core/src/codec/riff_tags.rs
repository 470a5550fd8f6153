//! The codec registry of the Microsoft RIFF family, shared by every
//! container that stores a WAVEFORMATEX or a BITMAPINFOHEADER (WAV/RF64/
//! Wave64, AVI, ASF, Matroska's `A_MS/ACM` and `V_MS/VFW/FOURCC`), as
//! ffmpeg keeps `riff.c`:
//!
//! - [`wave_codec`]: WAVE format tag (`wFormatTag`, RFC 2361 and the
//!   Microsoft registry in `mmreg.h`) and sample size to a codec, after
//!   ffmpeg's `ff_codec_wav_tags` and `ff_wav_codec_get_id`;
//! - [`bmp_codec`]: BITMAPINFOHEADER `biCompression` (FourCC or one of the
//!   `BI_*` numbers) to a codec, after ffmpeg's `ff_codec_bmp_tags`,
//!   compared case-insensitively as ffmpeg's `ff_codec_get_id` does;
//! - [`info_name`]: RIFF `LIST`/`INFO` chunk ids to the names ffprobe gives
//!   them (ffmpeg's `ff_riff_info_conv`).
//!
//! The fixed layouts these tables are looked up from (WAVEFORMATEX,
//! BITMAPINFOHEADER) are in [`super::riff_layout`].

use crate::types::Codec;

/// `WAVE_FORMAT_EXTENSIBLE` (`mmreg.h`): the codec is named by the first two
/// bytes of the SubFormat GUID that follows the WAVEFORMATEX.
pub const WAVE_FORMAT_EXTENSIBLE: u16 = 0xFFFE;

/// `WAVE_FORMAT_PCM`.
const WAVE_FORMAT_PCM: u16 = 0x0001;
/// `WAVE_FORMAT_IEEE_FLOAT`.
const WAVE_FORMAT_IEEE_FLOAT: u16 = 0x0003;

/// WAVE format tags other than PCM and IEEE float (whose codec depends on
/// the sample size), after ffmpeg's `ff_codec_wav_tags`: the union of the
/// tables the WAV, ASF and Matroska readers had.
static WAV_TAGS: &[(u16, Codec)] = &[
    (0x0002, Codec::AdpcmMs),
    (0x0006, Codec::PcmAlaw),
    (0x0007, Codec::PcmMulaw),
    (0x000A, Codec::WmaVoice),
    (0x0011, Codec::AdpcmImaWav),
    (0x0020, Codec::AdpcmYamaha),
    (0x0031, Codec::GsmMs),
    (0x0045, Codec::AdpcmG726),
    (0x0050, Codec::Mp2),
    (0x0055, Codec::Mp3),
    (0x0064, Codec::AdpcmG726),
    (0x00FF, Codec::Aac),
    (0x0160, Codec::Wmav1),
    (0x0161, Codec::Wmav2),
    (0x0162, Codec::WmaPro),
    (0x0163, Codec::WmaLossless),
    (0x1600, Codec::Aac),
    (0x2000, Codec::Ac3),
    (0x2001, Codec::Dts),
    (0x706D, Codec::Aac),
    (0xF1AC, Codec::Flac),
];

/// Maps a WAVE format tag and its `wBitsPerSample` to a codec.
///
/// PCM follows ffmpeg's `ff_get_pcm_codec_id`: the sample size rounded up to
/// whole bytes picks unsigned 8-bit or signed 16/24/32-bit little-endian;
/// 0 bits and sizes over 32 bits are `Unknown`. IEEE float is `pcm_f64le`
/// at 64 bits and `pcm_f32le` otherwise. Other tags ignore `bits`.
pub fn wave_codec(tag: u16, bits: u16) -> Codec {
    match tag {
        WAVE_FORMAT_PCM => match bits {
            1..=8 => Codec::PcmU8,
            9..=16 => Codec::PcmS16Le,
            17..=24 => Codec::PcmS24Le,
            25..=32 => Codec::PcmS32Le,
            _ => Codec::Unknown,
        },
        WAVE_FORMAT_IEEE_FLOAT if bits == 64 => Codec::PcmF64Le,
        WAVE_FORMAT_IEEE_FLOAT => Codec::PcmF32Le,
        _ => WAV_TAGS
            .iter()
            .find(|&&(t, _)| t == tag)
            .map_or(Codec::Unknown, |&(_, c)| c),
    }
}

/// `ff_codec_bmp_tags` (upper case) as a table rather than a `match`: a
/// third of the flash on thumbv7em. The union of the AVI, ASF and Matroska
/// tables (AVI's held all the others' entries once compared upper case).
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

/// Maps a BITMAPINFOHEADER `biCompression` to a codec: `BI_RGB` (0) and
/// `BI_BITFIELDS` (3) are raw video, `BI_RLE8`/`BI_RLE4` (1, 2) Microsoft
/// RLE, FourCCs are matched case-insensitively.
pub fn bmp_codec(fourcc: [u8; 4]) -> Codec {
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

/// RIFF `INFO` chunk ids (Microsoft RIFF specification, "INFO List Chunk")
/// and the names ffprobe gives them (ffmpeg's `ff_riff_info_conv`).
pub fn info_name(id: &[u8; 4]) -> Option<&'static str> {
    Some(match id {
        b"IART" => "artist",
        b"ICMT" => "comment",
        b"ICOP" => "copyright",
        b"ICRD" => "date",
        b"IGNR" => "genre",
        b"ILNG" => "language",
        b"INAM" => "title",
        b"IPRD" => "album",
        b"IPRT" | b"ITRK" => "track",
        b"ISFT" => "encoder",
        b"ISMP" => "timecode",
        b"ITCH" => "encoded_by",
        b"IENG" => "engineer",
        b"ISBJ" => "subject",
        b"IKEY" => "keywords",
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wave_tags_union_and_pcm_sizes() {
        assert_eq!(wave_codec(1, 8), Codec::PcmU8);
        assert_eq!(wave_codec(1, 12), Codec::PcmS16Le);
        assert_eq!(wave_codec(1, 16), Codec::PcmS16Le);
        assert_eq!(wave_codec(1, 20), Codec::PcmS24Le);
        assert_eq!(wave_codec(1, 32), Codec::PcmS32Le);
        assert_eq!(wave_codec(1, 0), Codec::Unknown);
        assert_eq!(wave_codec(1, 64), Codec::Unknown);
        assert_eq!(wave_codec(3, 64), Codec::PcmF64Le);
        assert_eq!(wave_codec(3, 32), Codec::PcmF32Le);
        // riff's entries, asf's and mkv's.
        assert_eq!(wave_codec(0x0020, 4), Codec::AdpcmYamaha);
        assert_eq!(wave_codec(0x0064, 4), Codec::AdpcmG726);
        assert_eq!(wave_codec(0x000A, 16), Codec::WmaVoice);
        assert_eq!(wave_codec(0x0163, 16), Codec::WmaLossless);
        assert_eq!(wave_codec(0x706D, 16), Codec::Aac);
        assert_eq!(wave_codec(0x4600, 0), Codec::Unknown);
    }

    #[test]
    fn bmp_fourccs_any_case() {
        assert_eq!(bmp_codec(*b"xvid"), Codec::Mpeg4);
        assert_eq!(bmp_codec(*b"Xvid"), Codec::Mpeg4);
        assert_eq!(bmp_codec(*b"AVRn"), Codec::Mjpeg);
        assert_eq!(bmp_codec(*b"hev1"), Codec::Hevc);
        assert_eq!(bmp_codec(*b"MJPG"), Codec::Mjpeg);
        assert_eq!(bmp_codec([0; 4]), Codec::RawVideo);
        assert_eq!(bmp_codec([1, 0, 0, 0]), Codec::Msrle);
        assert_eq!(bmp_codec(*b"zzzz"), Codec::Unknown);
        assert_eq!(info_name(b"INAM"), Some("title"));
        assert_eq!(info_name(b"XXXX"), None);
    }
}
