//! Attached-picture tables that several containers share (as ffmpeg's
//! `id3v2.c` serves its ID3v2, FLAC, ASF and Matroska readers): the names of
//! the picture types and the codecs of picture media types. Used by the
//! ID3v2 `APIC` reader, FLAC `PICTURE`, and ASF `WM/Picture`.

use crate::types::Codec;

/// ffprobe's names for the attached picture types (ID3v2.4 §4.14 `APIC`,
/// which RFC 9639 §8.8 table 13 takes for FLAC's PICTURE; ffmpeg's
/// `ff_id3v2_picture_types`): the attached picture stream's `comment` tag.
pub const PICTURE_TYPES: [&str; 21] = [
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

/// Picture media types and their codecs (ffmpeg's `ff_id3v2_mime_tags`,
/// which its ID3v2 `APIC` and FLAC PICTURE readers share; ID3v2.2 `PIC`
/// names the format by `JPG` or `PNG`).
const MIME_CODECS: [(&[u8], Codec); 9] = [
    (b"image/gif", Codec::Gif),
    (b"image/jpeg", Codec::Mjpeg),
    (b"image/jpg", Codec::Mjpeg),
    (b"image/png", Codec::Png),
    (b"image/tiff", Codec::Tiff),
    (b"image/bmp", Codec::Bmp),
    (b"image/webp", Codec::Webp),
    (b"JPG", Codec::Mjpeg),
    (b"PNG", Codec::Png),
];

/// The codec of a picture media type (`MIME_CODECS`), compared as is
/// (ffmpeg's FLAC reader) or ignoring ASCII case (its ID3v2 reader);
/// `Unknown` when not listed.
pub fn codec_for_mime(mime: &[u8], ignore_case: bool) -> Codec {
    MIME_CODECS
        .iter()
        .find(|(m, _)| {
            if ignore_case {
                mime.eq_ignore_ascii_case(m)
            } else {
                mime == *m
            }
        })
        .map_or(Codec::Unknown, |&(_, c)| c)
}

/// The codec of a picture media type given as UTF-16 code units (ASF
/// `WM/Picture`, ASF 1.20 §3.12 / WM metadata), compared exactly; `None`
/// when it is not listed or not ASCII.
pub fn codec_for_utf16_mime(mime: &[u16]) -> Option<Codec> {
    let mut ascii = [0u8; 32];
    let out = ascii.get_mut(..mime.len())?;
    for (o, &u) in out.iter_mut().zip(mime) {
        *o = u8::try_from(u).ok().filter(u8::is_ascii)?;
    }
    Some(codec_for_mime(out, false)).filter(|&c| c != Codec::Unknown)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn media_types_in_either_encoding() {
        assert_eq!(codec_for_mime(b"image/jpeg", false), Codec::Mjpeg);
        assert_eq!(codec_for_mime(b"IMAGE/PNG", true), Codec::Png);
        assert_eq!(codec_for_mime(b"IMAGE/PNG", false), Codec::Unknown);
        let utf16 = |s: &str| {
            let mut b = [0u16; 16];
            s.encode_utf16().zip(b.iter_mut()).for_each(|(u, o)| *o = u);
            (b, s.len())
        };
        let (png, n) = utf16("image/png");
        assert_eq!(codec_for_utf16_mime(&png[..n]), Some(Codec::Png));
        let (caps, n) = utf16("IMAGE/PNG");
        assert_eq!(codec_for_utf16_mime(&caps[..n]), None);
        assert_eq!(codec_for_utf16_mime(&[0x49, 0x4D, 0x2603]), None);
        assert_eq!(codec_for_utf16_mime(&[0x41; 40]), None);
        assert_eq!(PICTURE_TYPES[3], "Cover (front)");
    }
}
