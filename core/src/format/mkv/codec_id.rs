//! CodecID strings (RFC 9559 §5.1.4.1.21 and the Matroska codec registry,
//! <https://www.matroska.org/technical/codec_specs.html>) mapped to the codec
//! names ffmpeg uses.

use crate::codec::riff_tags::bmp_codec;
#[cfg(doc)]
use crate::codec::riff_tags::wave_codec;
use crate::types::{Codec, TrackKind};

/// CodecID prefixes in the order ffmpeg's `ff_mkv_codec_tags` tries them: a
/// track's CodecID matches the first entry it starts with (so
/// `A_AAC/MPEG4/LC` is AAC).
const PREFIXES: &[(&[u8], Codec)] = &[
    (b"A_AAC", Codec::Aac),
    (b"A_AC3", Codec::Ac3),
    (b"A_ALAC", Codec::Alac),
    (b"A_DTS", Codec::Dts),
    (b"A_EAC3", Codec::Eac3),
    (b"A_FLAC", Codec::Flac),
    (b"A_MLP", Codec::Mlp),
    (b"A_MPEG/L2", Codec::Mp2),
    (b"A_MPEG/L1", Codec::Mp1),
    (b"A_MPEG/L3", Codec::Mp3),
    (b"A_OPUS", Codec::Opus),
    (b"A_PCM/FLOAT/IEEE", Codec::PcmF32Le),
    (b"A_PCM/INT/BIG", Codec::PcmS16Be),
    (b"A_PCM/INT/LIT", Codec::PcmS16Le),
    (b"A_REAL/14_4", Codec::Ra144),
    (b"A_REAL/28_8", Codec::Ra288),
    (b"A_REAL/ATRC", Codec::Atrac3),
    (b"A_REAL/COOK", Codec::Cook),
    (b"A_REAL/SIPR", Codec::Sipr),
    (b"A_TRUEHD", Codec::TrueHd),
    (b"A_TTA1", Codec::Tta),
    (b"A_VORBIS", Codec::Vorbis),
    (b"A_WAVPACK4", Codec::Wavpack),
    (b"D_WEBVTT/SUBTITLES", Codec::WebVtt),
    (b"D_WEBVTT/CAPTIONS", Codec::WebVtt),
    (b"D_WEBVTT/DESCRIPTIONS", Codec::WebVtt),
    (b"D_WEBVTT/METADATA", Codec::WebVtt),
    (b"S_TEXT/UTF8", Codec::Subrip),
    (b"S_TEXT/ASCII", Codec::Text),
    (b"S_TEXT/ASS", Codec::Ass),
    (b"S_TEXT/SSA", Codec::Ass),
    (b"S_ASS", Codec::Ass),
    (b"S_SSA", Codec::Ass),
    (b"S_VOBSUB", Codec::DvdSub),
    (b"S_DVBSUB", Codec::DvbSub),
    (b"S_HDMV/PGS", Codec::Pgs),
    (b"S_HDMV/TEXTST", Codec::HdmvTextSub),
    (b"S_TEXT/WEBVTT", Codec::WebVtt),
    (b"V_AV1", Codec::Av1),
    (b"V_DIRAC", Codec::Dirac),
    (b"V_FFV1", Codec::Ffv1),
    (b"V_MJPEG", Codec::Mjpeg),
    (b"V_MPEG1", Codec::Mpeg1Video),
    (b"V_MPEG2", Codec::Mpeg2Video),
    (b"V_MPEG4/ISO/ASP", Codec::Mpeg4),
    (b"V_MPEG4/ISO/AP", Codec::Mpeg4),
    (b"V_MPEG4/ISO/SP", Codec::Mpeg4),
    (b"V_MPEG4/ISO/AVC", Codec::H264),
    (b"V_MPEGH/ISO/HEVC", Codec::Hevc),
    (b"V_MPEGI/ISO/VVC", Codec::Vvc),
    (b"V_MPEG4/MS/V3", Codec::Msmpeg4v3),
    (b"V_PRORES", Codec::ProRes),
    (b"V_REAL/RV10", Codec::Rv10),
    (b"V_REAL/RV20", Codec::Rv20),
    (b"V_REAL/RV30", Codec::Rv30),
    (b"V_REAL/RV40", Codec::Rv40),
    (b"V_THEORA", Codec::Theora),
    (b"V_UNCOMPRESSED", Codec::RawVideo),
    (b"V_VP8", Codec::Vp8),
    (b"V_VP9", Codec::Vp9),
];

/// The codec for CodecID `id`, with the PCM sample size applied
/// (`bit_depth` from the Audio element) as ffmpeg does. `Unknown` when the
/// CodecID is not in the table (`A_MS/ACM` and `V_MS/VFW/FOURCC` are
/// resolved from CodecPrivate by the RIFF registry, [`wave_codec`] and
/// [`bmp_codec`]; `V_QUICKTIME` by [`from_quicktime`]).
pub(crate) fn from_codec_id(id: &[u8], bit_depth: u64) -> Codec {
    let c = PREFIXES
        .iter()
        .find(|(p, _)| id.starts_with(p))
        .map(|&(_, c)| c)
        .unwrap_or(Codec::Unknown);
    match (c, bit_depth) {
        (Codec::PcmS16Le, 8) => Codec::PcmU8,
        (Codec::PcmS16Le, 24) => Codec::PcmS24Le,
        (Codec::PcmS16Le, 32) => Codec::PcmS32Le,
        (Codec::PcmS16Be, 8) => Codec::PcmS8,
        (Codec::PcmS16Be, 24) => Codec::PcmS24Be,
        (Codec::PcmS16Be, 32) => Codec::PcmS32Be,
        (Codec::PcmF32Le, 64) => Codec::PcmF64Le,
        _ => c,
    }
}

/// The CodecID a muxer writes for `c`, read backwards from the same table
/// the demuxer reads ([`from_codec_id`]): the first entry naming the codec
/// (so `V_MPEG4/ISO/ASP` for MPEG-4 Part 2, `D_WEBVTT/SUBTITLES` for
/// WebVTT), with the PCM sample formats folded onto their CodecID (their
/// size goes in BitDepth, [`pcm_bit_depth`]). `None` for a codec with no
/// CodecID of its own in the table (RFC 9559 §5.1.4.1.21).
pub(crate) fn to_codec_id(c: Codec) -> Option<&'static [u8]> {
    let base = match c {
        Codec::PcmU8 | Codec::PcmS24Le | Codec::PcmS32Le => Codec::PcmS16Le,
        Codec::PcmS8 | Codec::PcmS24Be | Codec::PcmS32Be => Codec::PcmS16Be,
        Codec::PcmF64Le => Codec::PcmF32Le,
        other => other,
    };
    PREFIXES.iter().find(|&&(_, k)| k == base).map(|&(id, _)| id)
}

/// The BitDepth (RFC 9559 §5.1.4.1.28.4) that makes [`from_codec_id`] give
/// back this PCM codec; `None` for codecs that are not PCM.
pub(crate) fn pcm_bit_depth(c: Codec) -> Option<u64> {
    Some(match c {
        Codec::PcmU8 | Codec::PcmS8 => 8,
        Codec::PcmS16Le | Codec::PcmS16Be => 16,
        Codec::PcmS24Le | Codec::PcmS24Be => 24,
        Codec::PcmS32Le | Codec::PcmS32Be | Codec::PcmF32Le => 32,
        Codec::PcmF64Le => 64,
        _ => return None,
    })
}

/// QuickTime sample entry types of `V_QUICKTIME` CodecPrivate that are not
/// BITMAPINFOHEADER FourCCs (Apple ProRes, QuickTime File Format "Video
/// sample description"); the rest are looked up as FourCCs.
const QT_PRORES: [[u8; 4]; 6] = [*b"apch", *b"apcn", *b"apcs", *b"apco", *b"ap4h", *b"ap4x"];

/// The codec of a `V_QUICKTIME` sample entry type: ProRes, or the
/// BITMAPINFOHEADER FourCC registry ([`bmp_codec`]).
pub(crate) fn from_quicktime(f: [u8; 4]) -> Codec {
    if QT_PRORES.contains(&f) {
        Codec::ProRes
    } else {
        bmp_codec(f)
    }
}

/// The attached-picture codec for an attachment's media type, as ffmpeg's
/// `ff_mkv_image_mime_tags` has them; `None` for files that are not pictures.
pub(crate) fn from_image_mime(mime: &[u8]) -> Option<Codec> {
    Some(match mime {
        b"image/gif" => Codec::Gif,
        b"image/jpeg" => Codec::Mjpeg,
        b"image/png" => Codec::Png,
        b"image/tiff" => Codec::Tiff,
        b"image/bmp" => Codec::Bmp,
        b"image/webp" => Codec::Webp,
        _ => return None,
    })
}

/// The kind a codec implies, for tracks whose TrackType is missing or odd.
pub(crate) fn kind_of(c: Codec) -> TrackKind {
    use Codec::*;
    match c {
        Unknown => TrackKind::Unknown,
        Subrip | Text | Ass | DvdSub | DvbSub | DvbTeletext | Pgs | HdmvTextSub | WebVtt | MovText | Eia608 => {
            TrackKind::Subtitle
        }
        H264 | Hevc | Vvc | Av1 | Vp8 | Vp9 | Mpeg4 | Mpeg1Video | Mpeg2Video | H263 | Mjpeg | Png | ProRes
        | Theora | Wmv1 | Wmv2 | Wmv3 | Vc1 | Flv1 | DvVideo | RawVideo | Ffv1 | Dirac | Msmpeg4v3 | Rv10 | Rv20
        | Rv30 | Rv40 | Gif | Bmp | Webp | Tiff => TrackKind::Video,
        TimedId3 | BinData => TrackKind::Data,
        _ => TrackKind::Audio,
    }
}

/// Whether every packet of the codec is a keyframe in ffmpeg's view (its
/// codec descriptor has `AV_CODEC_PROP_INTRA_ONLY`), so that ffprobe flags
/// every packet `K` whatever the block says.
pub(crate) fn intra_only(c: Codec) -> bool {
    use Codec::*;
    match c {
        TrueHd | Mlp | Unknown => false,
        Mjpeg | Png | ProRes | RawVideo | DvVideo | Ffv1 | Gif | Bmp | Webp | Tiff => true,
        _ => kind_of(c) == TrackKind::Audio,
    }
}

/// Whether the codec may reorder pictures, so that decoding order differs
/// from presentation order and a Matroska timestamp (a presentation time,
/// RFC 9559 §11.1) says nothing of the decoding time.
pub(crate) fn may_reorder(c: Codec) -> bool {
    use Codec::*;
    matches!(
        c,
        H264 | Hevc | Vvc | Mpeg4 | Mpeg1Video | Mpeg2Video | Vc1 | Wmv3 | Dirac | Rv30 | Rv40
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prefixes_and_pcm() {
        assert_eq!(from_codec_id(b"A_AAC/MPEG4/LC/SBR", 0), Codec::Aac);
        assert_eq!(from_codec_id(b"V_MPEG4/ISO/AVC", 0), Codec::H264);
        assert_eq!(from_codec_id(b"A_PCM/INT/LIT", 24), Codec::PcmS24Le);
        assert_eq!(from_codec_id(b"A_PCM/INT/LIT", 8), Codec::PcmU8);
        assert_eq!(from_codec_id(b"A_PCM/FLOAT/IEEE", 64), Codec::PcmF64Le);
        assert_eq!(from_codec_id(b"S_TEXT/ASS", 0), Codec::Ass);
        assert_eq!(from_codec_id(b"X_UNKNOWN", 0), Codec::Unknown);
        assert_eq!(from_quicktime(*b"apcn"), Codec::ProRes);
        assert_eq!(from_quicktime(*b"avc1"), Codec::H264);
        assert!(intra_only(Codec::Opus));
        assert!(!intra_only(Codec::TrueHd));
        assert!(!intra_only(Codec::Vp9));
    }

    #[test]
    fn codec_ids_read_back() {
        for c in [
            Codec::H264,
            Codec::Hevc,
            Codec::Aac,
            Codec::Opus,
            Codec::Vorbis,
            Codec::Vp9,
            Codec::Mpeg4,
            Codec::WebVtt,
            Codec::PcmS24Le,
            Codec::PcmU8,
            Codec::PcmS32Be,
            Codec::PcmF64Le,
        ] {
            let id = to_codec_id(c).unwrap();
            assert_eq!(from_codec_id(id, pcm_bit_depth(c).unwrap_or(0)), c, "{c:?}");
        }
        assert_eq!(to_codec_id(Codec::Unknown), None);
    }
}
