//! The picture-type checks that ffprobe's parsers apply to AVI keyframe
//! flags. The FourCC table itself is the shared registry
//! (`crate::codec::riff_tags::bmp_codec`).

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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn picture_types() {
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
