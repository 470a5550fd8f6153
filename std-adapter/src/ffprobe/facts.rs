//! ffmpeg's names for the picture facts of [`mediaslice::codec::facts`]:
//! `profile`, `level`, `pix_fmt`, `color_range`, `field_order`,
//! `sample_aspect_ratio` and `display_aspect_ratio`.
//!
//! `pix_fmt` is the format ffmpeg's decoder outputs for the chroma format
//! and bit depth (`yuv420p`, `yuv422p10le`, `gray`, ...). For full-range
//! 8-bit pictures (VUI `video_full_range_flag`) ffmpeg 5.1's decoders give
//! the JPEG-range formats: `h264` for 4:2:0, 4:2:2 and 4:4:4 (`yuvj420p`,
//! `yuvj422p`, `yuvj444p`; `get_pixel_format` in `h264_slice.c`), `hevc`
//! for 4:2:0 only (`yuvj420p`; its 4:2:2 and 4:4:4 stay `yuv422p` and
//! `yuv444p`, `hevc_ps.c`). Deeper pictures keep their format whatever the
//! range. `color_range` is `pc` or `tv` where the headers say (see
//! [`VideoFacts::full_range`]).

use mediaslice::codec::facts::{gcd, VideoFacts};
use mediaslice::codec::image::{ImageFacts, ImageLayout};
use mediaslice::format::iff::PixelLayout;
use mediaslice::{Codec, Source, Track, TrackKind};
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
        Codec::Mpeg2Video => match p {
            0 => "4:2:2",
            1 => "High",
            2 => "Spatially Scalable",
            3 => "SNR Scalable",
            4 => "Main",
            5 => "Simple",
            _ => return None,
        }
        .to_owned(),
        Codec::Mpeg4 => MPEG4_PROFILES.get(usize::from(p))?.to_string(),
        Codec::Vp9 => format!("Profile {p}"),
        Codec::Vp8 => p.to_string(),
        _ => return None,
    })
}

/// ffmpeg's MPEG-4 Part 2 profile names by the high nibble of
/// `profile_and_level_indication`.
const MPEG4_PROFILES: [&str; 16] = [
    "Simple Profile",
    "Simple Scalable Profile",
    "Core Profile",
    "Main Profile",
    "N-bit Profile",
    "Scalable Texture Profile",
    "Simple Face Animation Profile",
    "Basic Animated Texture Profile",
    "Hybrid Profile",
    "Advanced Real Time Simple Profile",
    "Core Scalable Profile",
    "Advanced Coding Efficiency Profile",
    "Advanced Core Profile",
    "Advanced Scalable Texture Profile",
    "Simple Studio Profile",
    "Advanced Simple Profile",
];

/// ffmpeg's `level`: the header's level number for H.264, H.265 and AV1;
/// -99 (unknown) for the codecs with no level.
pub fn level(codec: Codec, f: Option<&VideoFacts>) -> Option<i32> {
    match codec {
        Codec::H264 | Codec::Hevc | Codec::Av1 | Codec::Mpeg2Video | Codec::Mpeg4 => {
            f.and_then(|f| f.level).map(i32::from)
        }
        Codec::Unknown => None,
        _ => Some(-99),
    }
}

/// The pixel format `codec`'s decoder gives for a chroma format, bit depth
/// and signal range.
pub fn pix_fmt(codec: Codec, f: &VideoFacts) -> Option<String> {
    let chroma = f.chroma_format?;
    let jpeg_range = f.full_range == Some(true)
        && f.bit_depth == Some(8)
        && match codec {
            Codec::H264 => matches!(chroma, 1..=3),
            Codec::Hevc => chroma == 1,
            _ => false,
        };
    let base = match chroma {
        0 => "gray",
        1 => "yuv420p",
        2 => "yuv422p",
        3 => "yuv444p",
        4 => "yuv411p",
        _ => return None,
    };
    Some(match f.bit_depth? {
        8 if jpeg_range => base.replacen("yuv", "yuvj", 1),
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

/// The pixel format ffmpeg's picture decoders give a still picture: JPEG
/// in full range (`yuvj*`) by its sampling factors, PNG by colour type
/// and depth, BMP by depth and colour masks.
pub fn image_pix_fmt(l: &ImageLayout) -> Option<&'static str> {
    Some(match *l {
        ImageLayout::Jpeg {
            precision: 8,
            components: 1,
            ..
        } => "gray",
        ImageLayout::Jpeg {
            precision: 8,
            components: 3,
            sampling: [y, cb, cr],
            ..
        } if cb == cr && cb != 0 => {
            let (h, v) = (y >> 4, y & 0xF);
            let (ch, cv) = (cb >> 4, cb & 0xF);
            if ch == 0 || cv == 0 || h % ch != 0 || v % cv != 0 {
                return None;
            }
            match (h / ch, v / cv) {
                (1, 1) => "yuvj444p",
                (2, 1) => "yuvj422p",
                (2, 2) => "yuvj420p",
                (1, 2) => "yuvj440p",
                (4, 1) => "yuvj411p",
                _ => return None,
            }
        }
        ImageLayout::Png { color_type, depth } => match (color_type, depth) {
            (0, 1) => "monob",
            (0, 8) => "gray",
            (0, 16) => "gray16be",
            (2, 8) => "rgb24",
            (2, 16) => "rgb48be",
            (3, 1..=8) => "pal8",
            (4, 8) => "ya8",
            (4, 16) => "ya16be",
            (6, 8) => "rgba",
            (6, 16) => "rgba64be",
            _ => return None,
        },
        ImageLayout::Gif => "bgra",
        ImageLayout::Bmp { bits, masks } => match (bits, masks) {
            (32, _) => "bgra",
            (24, _) => "bgr24",
            (16, [0xF800, 0x07E0, 0x001F]) => "rgb565le",
            (16, [0x0F00, 0x00F0, 0x000F]) => "rgb444le",
            (16, _) => "rgb555le",
            (1, _) => "monob",
            (4 | 8, _) => "pal8",
            _ => return None,
        },
        ImageLayout::Jpeg { .. } => return None,
    })
}

/// Inserts what a still picture's header says into its stream object: the
/// size when the container states none, the pixel format, the JPEG
/// profile and precision, the pixel and display aspect.
pub fn insert_image(m: &mut Map<String, Value>, f: &ImageFacts) {
    if m.get("width").and_then(Value::as_u64).unwrap_or(0) == 0 {
        m.insert("width".into(), f.width.into());
        m.insert("height".into(), f.height.into());
    }
    if let Some(p) = image_pix_fmt(&f.layout) {
        m.insert("pix_fmt".into(), p.into());
    }
    if let ImageLayout::Jpeg { process, precision, .. } = f.layout {
        let profile = match process {
            0 => Some("Baseline"),
            1 => Some("Sequential"),
            2 => Some("Progressive"),
            3 => Some("Lossless"),
            _ => None,
        };
        if let Some(p) = profile {
            m.insert("profile".into(), p.into());
        }
        m.insert("bits_per_raw_sample".into(), precision.to_string().into());
    }
    if let Some((n, d)) = f.sar {
        insert_aspect(m, (n, d), (f.width, f.height));
    }
}

/// ffmpeg's name for an IFF picture's pixel layout (the `iff_ilbm`
/// decoder's output on a little-endian machine).
fn iff_pix_fmt(l: PixelLayout) -> &'static str {
    match l {
        PixelLayout::Pal8 => "pal8",
        PixelLayout::Gray8 => "gray",
        PixelLayout::Bgra => "bgra",
        PixelLayout::Rgb0 => "rgb0",
        PixelLayout::Rgba => "rgba",
        PixelLayout::Rgb444Le => "rgb444le",
        PixelLayout::Rgb24 => "rgb24",
        PixelLayout::Argb => "argb",
        PixelLayout::Abgr => "abgr",
    }
}

/// An IFF stream as ffprobe shows it: a picture's `pix_fmt` and aspect
/// from its header chunks; no start time (ffmpeg's `iff` demuxer sets
/// none, and its one sound packet's time does not make one).
pub fn insert_iff<S: Source>(m: &mut Map<String, Value>, t: &Track, src: &mut S) {
    m.remove("start_pts");
    m.remove("start_time");
    if t.kind != TrackKind::Video {
        return;
    }
    let Ok(Some(f)) = mediaslice::format::iff::picture_facts(src) else {
        return;
    };
    if let Some(l) = f.layout {
        m.insert("pix_fmt".into(), iff_pix_fmt(l).into());
    }
    if let Some(sar) = f.sar {
        insert_aspect(m, sar, (t.width, t.height));
    }
}

/// `sample_aspect_ratio` and `display_aspect_ratio`, each reduced.
fn insert_aspect(m: &mut Map<String, Value>, (n, d): (u32, u32), (width, height): (u32, u32)) {
    let g = gcd(u64::from(n), u64::from(d)).max(1);
    m.insert(
        "sample_aspect_ratio".into(),
        format!("{}:{}", u64::from(n) / g, u64::from(d) / g).into(),
    );
    let (w, h) = (u64::from(width) * u64::from(n), u64::from(height) * u64::from(d));
    if w > 0 && h > 0 {
        let g = gcd(w, h);
        m.insert("display_aspect_ratio".into(), format!("{}:{}", w / g, h / g).into());
    }
}

/// Inserts the picture facts ffprobe states into a stream object.
pub fn insert(m: &mut Map<String, Value>, t: &Track, f: Option<&VideoFacts>) {
    if let Some(p) = f.and_then(|f| profile_name(t.codec, f)) {
        m.insert("profile".into(), p.into());
    }
    if let Some(p) = f.and_then(|f| pix_fmt(t.codec, f)) {
        m.insert("pix_fmt".into(), p.into());
        // The H.264 decoder reports its luma bit depth.
        if let (Codec::H264, Some(b)) = (t.codec, f.and_then(|f| f.bit_depth)) {
            m.insert("bits_per_raw_sample".into(), b.to_string().into());
        }
    }
    if let Some(l) = level(t.codec, f) {
        m.insert("level".into(), l.into());
    }
    if let Some(full) = f.and_then(|f| f.full_range) {
        m.insert("color_range".into(), if full { "pc" } else { "tv" }.into());
    }
    match f.map(|f| (f.progressive, f.top_field_first)) {
        Some((Some(true), _)) => {
            m.insert("field_order".into(), "progressive".into());
        }
        Some((Some(false), Some(tff))) => {
            m.insert("field_order".into(), if tff { "tt" } else { "bb" }.into());
        }
        _ => {}
    }
    if let Some(sar) = f.and_then(|f| f.sar) {
        insert_aspect(m, sar, (t.width, t.height));
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
        assert_eq!(pix_fmt(Codec::H264, &f).as_deref(), Some("yuv444p10le"));
        let f = VideoFacts {
            chroma_format: Some(1),
            bit_depth: Some(8),
            ..VideoFacts::default()
        };
        assert_eq!(pix_fmt(Codec::H264, &f).as_deref(), Some("yuv420p"));
        assert_eq!(level(Codec::Vp8, None), Some(-99));
        assert_eq!(level(Codec::H264, None), None);
    }

    /// ffmpeg 5.1 on libx264/libx265 streams made from full-range input:
    /// `h264` gives `yuvj*` for every 8-bit chroma format, `hevc` for
    /// 4:2:0 only; 10-bit streams keep their format; all say `pc`.
    #[test]
    fn full_range_formats_follow_each_decoder() {
        let full = |chroma, depth| VideoFacts {
            chroma_format: Some(chroma),
            bit_depth: Some(depth),
            full_range: Some(true),
            ..VideoFacts::default()
        };
        let cases = [
            (Codec::H264, 1, 8, "yuvj420p"),
            (Codec::H264, 2, 8, "yuvj422p"),
            (Codec::H264, 3, 8, "yuvj444p"),
            (Codec::H264, 1, 10, "yuv420p10le"),
            (Codec::Hevc, 1, 8, "yuvj420p"),
            (Codec::Hevc, 2, 8, "yuv422p"),
            (Codec::Hevc, 1, 10, "yuv420p10le"),
        ];
        for (codec, chroma, depth, want) in cases {
            assert_eq!(pix_fmt(codec, &full(chroma, depth)).as_deref(), Some(want), "{codec:?}");
            let t = Track {
                codec,
                ..Track::default()
            };
            let mut m = Map::new();
            insert(&mut m, &t, Some(&full(chroma, depth)));
            assert_eq!(m["color_range"], "pc");
        }
        let limited = VideoFacts {
            full_range: Some(false),
            ..full(1, 8)
        };
        assert_eq!(pix_fmt(Codec::H264, &limited).as_deref(), Some("yuv420p"));
        let t = Track {
            codec: Codec::H264,
            ..Track::default()
        };
        let mut m = Map::new();
        insert(&mut m, &t, Some(&limited));
        assert_eq!(m["color_range"], "tv");
        let mut m = Map::new();
        insert(&mut m, &t, Some(&VideoFacts::default()));
        assert!(m.get("color_range").is_none());
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

    #[test]
    fn iff_pictures_name_the_decoders_format_and_aspect() {
        // FORM ILBM: a 20-byte BMHD (64 x 32, 6 planes, aspect 10:11), a
        // CAMG with the HAM bit, a BODY.
        let mut bmhd = vec![0, 64, 0, 32, 0, 0, 0, 0, 6, 0, 0, 0, 0, 0, 10, 11, 0, 64, 0, 32];
        let mut file = b"FORM\0\0\0\0ILBMBMHD\0\0\0\x14".to_vec();
        file.append(&mut bmhd);
        file.extend_from_slice(b"CAMG\0\0\0\x04\0\0\x08\0BODY\0\0\0\x02\0\0");
        let t = Track {
            kind: TrackKind::Video,
            width: 64,
            height: 32,
            ..Track::default()
        };
        let mut m = Map::new();
        m.insert("start_pts".into(), 0.into());
        insert_iff(&mut m, &t, &mut mediaslice::SliceSource::new(&file[..]));
        assert_eq!(m["pix_fmt"], "rgb0");
        assert_eq!(m["sample_aspect_ratio"], "10:11");
        assert_eq!(m["display_aspect_ratio"], "20:11");
        assert!(m.get("start_pts").is_none());
    }
}
