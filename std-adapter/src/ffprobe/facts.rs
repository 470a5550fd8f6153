//! ffmpeg's names for the picture facts of [`mediaslice::codec::facts`]:
//! `profile`, `level`, `pix_fmt`, `field_order`, `sample_aspect_ratio` and
//! `display_aspect_ratio`.
//!
//! `pix_fmt` is the format ffmpeg's decoder outputs for the chroma format
//! and bit depth (`yuv420p`, `yuv422p10le`, `gray`, ...). ffmpeg's
//! full-range variants (`yuvj420p`) depend on VUI/colour flags that the
//! facts do not carry, so limited range is assumed.

use mediaslice::codec::facts::VideoFacts;
use mediaslice::{Codec, Track};
use serde_json::{Map, Value};

/// ffmpeg's profile name for `codec`'s profile number.
pub fn profile_name(codec: Codec, f: &VideoFacts) -> Option<String> {
    let p = f.profile?;
    let intra = f.constraints & 0x10 != 0;
    Some(match codec {
        Codec::H264 => match p {
            66 if f.constraints & 0x40 != 0 => "Constrained Baseline",
            66 => "Baseline",
            77 => "Main",
            88 => "Extended",
            100 => "High",
            110 if intra => "High 10 Intra",
            110 => "High 10",
            122 if intra => "High 4:2:2 Intra",
            122 => "High 4:2:2",
            244 if intra => "High 4:4:4 Intra",
            244 => "High 4:4:4 Predictive",
            44 => "CAVLC 4:4:4",
            _ => return None,
        }
        .to_owned(),
        Codec::Hevc => match p {
            1 => "Main",
            2 => "Main 10",
            3 => "Main Still Picture",
            4 => "Rext",
            _ => return None,
        }
        .to_owned(),
        Codec::Av1 => match p {
            0 => "Main",
            1 => "High",
            2 => "Professional",
            _ => return None,
        }
        .to_owned(),
        Codec::Vp9 => format!("Profile {p}"),
        Codec::Vp8 => p.to_string(),
        _ => return None,
    })
}

/// ffmpeg's `level`: the header's level number for H.264, H.265 and AV1;
/// -99 (unknown) for the codecs with no level.
pub fn level(codec: Codec, f: Option<&VideoFacts>) -> Option<i32> {
    match codec {
        Codec::H264 | Codec::Hevc | Codec::Av1 => f.and_then(|f| f.level).map(i32::from),
        Codec::Mpeg2Video | Codec::Mpeg4 | Codec::Unknown => None,
        _ => Some(-99),
    }
}

/// The decoder's pixel format for a chroma format and bit depth.
pub fn pix_fmt(f: &VideoFacts) -> Option<String> {
    let base = match f.chroma_format? {
        0 => "gray",
        1 => "yuv420p",
        2 => "yuv422p",
        3 => "yuv444p",
        _ => return None,
    };
    Some(match f.bit_depth? {
        8 => base.to_owned(),
        b @ (9 | 10 | 12 | 14 | 16) => format!("{base}{b}le"),
        _ => return None,
    })
}

/// The picture size of a video stream whose container states none
/// (MPEG-TS, MPEG-PS), from the parameter sets or sequence header in its
/// first packet: H.264 and H.265 after cropping, MPEG-1/2 as coded.
pub fn picture_size(codec: Codec, first: &[u8]) -> Option<(u32, u32)> {
    use mediaslice::codec::{annexb::NalUnits, h264, hevc, mpegvideo};
    let size = match codec {
        Codec::H264 => NalUnits::new(first)
            .find_map(h264::Sps::parse)
            .map(|s| (s.width, s.height)),
        Codec::Hevc => NalUnits::new(first)
            .find_map(hevc::Sps::parse)
            .map(|s| (s.width, s.height)),
        Codec::Mpeg1Video | Codec::Mpeg2Video => first
            .windows(4)
            .position(|w| w == [0, 0, 1, 0xB3])
            .and_then(|at| first.get(at + 4..))
            .and_then(mpegvideo::SequenceHeader::parse)
            .map(|h| (h.width, h.height)),
        _ => None,
    };
    size.filter(|&(w, h)| w > 0 && h > 0)
}

fn gcd(a: u64, b: u64) -> u64 {
    if b == 0 {
        a
    } else {
        gcd(b, a % b)
    }
}

/// Inserts the picture facts ffprobe states into a stream object.
pub fn insert(m: &mut Map<String, Value>, t: &Track, f: Option<&VideoFacts>) {
    if let Some(p) = f.and_then(|f| profile_name(t.codec, f)) {
        m.insert("profile".into(), p.into());
    }
    if let Some(p) = f.and_then(pix_fmt) {
        m.insert("pix_fmt".into(), p.into());
        // The H.264 decoder reports its luma bit depth.
        if let (Codec::H264, Some(b)) = (t.codec, f.and_then(|f| f.bit_depth)) {
            m.insert("bits_per_raw_sample".into(), b.to_string().into());
        }
    }
    if let Some(l) = level(t.codec, f) {
        m.insert("level".into(), l.into());
    }
    if f.and_then(|f| f.progressive) == Some(true) {
        m.insert("field_order".into(), "progressive".into());
    }
    if let Some((n, d)) = f.and_then(|f| f.sar) {
        let g = gcd(u64::from(n), u64::from(d)).max(1);
        m.insert(
            "sample_aspect_ratio".into(),
            format!("{}:{}", u64::from(n) / g, u64::from(d) / g).into(),
        );
        let (w, h) = (u64::from(t.width) * u64::from(n), u64::from(t.height) * u64::from(d));
        if w > 0 && h > 0 {
            let g = gcd(w, h);
            m.insert("display_aspect_ratio".into(), format!("{}:{}", w / g, h / g).into());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn h264_profiles_use_constraint_flags() {
        let f = VideoFacts {
            profile: Some(66),
            constraints: 0xC0,
            ..VideoFacts::default()
        };
        assert_eq!(profile_name(Codec::H264, &f).as_deref(), Some("Constrained Baseline"));
        let f = VideoFacts {
            profile: Some(244),
            ..VideoFacts::default()
        };
        assert_eq!(profile_name(Codec::H264, &f).as_deref(), Some("High 4:4:4 Predictive"));
        let f = VideoFacts {
            profile: Some(3),
            ..VideoFacts::default()
        };
        assert_eq!(profile_name(Codec::Vp9, &f).as_deref(), Some("Profile 3"));
    }

    #[test]
    fn pixel_formats() {
        let f = VideoFacts {
            chroma_format: Some(3),
            bit_depth: Some(10),
            ..VideoFacts::default()
        };
        assert_eq!(pix_fmt(&f).as_deref(), Some("yuv444p10le"));
        let f = VideoFacts {
            chroma_format: Some(1),
            bit_depth: Some(8),
            ..VideoFacts::default()
        };
        assert_eq!(pix_fmt(&f).as_deref(), Some("yuv420p"));
        assert_eq!(level(Codec::Vp8, None), Some(-99));
        assert_eq!(level(Codec::H264, None), None);
    }

    #[test]
    fn aspect_ratios_reduce() {
        let t = Track {
            width: 1280,
            height: 720,
            ..Track::default()
        };
        let f = VideoFacts {
            sar: Some((2, 2)),
            ..VideoFacts::default()
        };
        let mut m = Map::new();
        insert(&mut m, &t, Some(&f));
        assert_eq!(m["sample_aspect_ratio"], "1:1");
        assert_eq!(m["display_aspect_ratio"], "16:9");
    }
}
