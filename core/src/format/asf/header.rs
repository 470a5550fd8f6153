//! The ASF header: the walk over its objects, file and stream properties,
//! and the codec tables (ASF Specification rev 1.20 §3, §4, §9).

use super::guids::{self, Guid};
use crate::types::{ByteRange, Codec};

/// Reads little-endian fields from a short buffer without panicking; every
/// accessor returns `None` past its end.
#[derive(Debug, Clone, Copy)]
pub(super) struct Rd<'a> {
    buf: &'a [u8],
    /// Bytes consumed so far.
    pub pos: usize,
}

impl<'a> Rd<'a> {
    pub fn new(buf: &'a [u8]) -> Self {
        Rd { buf, pos: 0 }
    }
    pub fn u8(&mut self) -> Option<u8> {
        let v = *self.buf.get(self.pos)?;
        self.pos += 1;
        Some(v)
    }
    pub fn u16(&mut self) -> Option<u16> {
        let b = self.buf.get(self.pos..self.pos.checked_add(2)?)?;
        self.pos += 2;
        Some(u16::from_le_bytes([*b.first()?, *b.get(1)?]))
    }
    pub fn u32(&mut self) -> Option<u32> {
        let b = self.buf.get(self.pos..self.pos.checked_add(4)?)?;
        self.pos += 4;
        let mut a = [0u8; 4];
        a.copy_from_slice(b);
        Some(u32::from_le_bytes(a))
    }
    pub fn u64(&mut self) -> Option<u64> {
        let lo = self.u32()? as u64;
        let hi = self.u32()? as u64;
        Some(lo | hi << 32)
    }
    pub fn guid(&mut self) -> Option<Guid> {
        let b = self.buf.get(self.pos..self.pos.checked_add(16)?)?;
        self.pos += 16;
        let mut g = [0u8; 16];
        g.copy_from_slice(b);
        Some(g)
    }
    /// A field whose width is given by a 2-bit length type (§5.2.2): 0 = absent
    /// (0), 1 = BYTE, 2 = WORD, 3 = DWORD.
    pub fn var(&mut self, length_type: u8) -> Option<u32> {
        match length_type & 3 {
            0 => Some(0),
            1 => self.u8().map(u32::from),
            2 => self.u16().map(u32::from),
            _ => self.u32(),
        }
    }
}

/// The File Properties Object fields the demuxer uses (§3.2).
#[derive(Debug, Clone, Copy, Default)]
pub(super) struct FileProperties {
    pub file_size: u64,
    pub play_duration: u64,
    pub preroll: u64,
    pub flags: u32,
    pub min_packet_size: u32,
    pub max_packet_size: u32,
    pub max_bitrate: u32,
}

impl FileProperties {
    /// Parses the object body (after the 24-byte object header).
    pub fn parse(b: &[u8]) -> Option<Self> {
        let mut r = Rd::new(b);
        r.guid()?; // File ID
        let file_size = r.u64()?;
        r.u64()?; // Creation Date
        r.u64()?; // Data Packets Count
        let play_duration = r.u64()?;
        r.u64()?; // Send Duration
        let preroll = r.u64()?;
        let flags = r.u32()?;
        let min_packet_size = r.u32()?;
        let max_packet_size = r.u32()?;
        let max_bitrate = r.u32()?;
        Some(FileProperties {
            file_size,
            play_duration,
            preroll: preroll & 0xFFFF_FFFF,
            flags,
            min_packet_size,
            max_packet_size,
            max_bitrate,
        })
    }

    /// The Broadcast flag: sizes and durations are not valid (§3.2).
    pub fn broadcast(&self) -> bool {
        self.flags & 1 != 0
    }
}

/// WAVEFORMATEX as found in an audio stream's type-specific data (§9.1).
#[derive(Debug, Clone, Copy, Default)]
pub(super) struct WaveFormat {
    pub tag: u16,
    pub channels: u16,
    pub sample_rate: u32,
    pub byte_rate: u32,
    pub block_align: u16,
    pub bits: u16,
    /// The codec-specific bytes after the structure (cbSize of them).
    pub extra: Option<ByteRange>,
}

/// Parses WAVEFORMATEX (and WAVEFORMATEXTENSIBLE) of `size` bytes at file
/// offset `at`, given its first bytes in `b`.
pub(super) fn parse_wave_format(b: &[u8], at: u64, size: u32) -> Option<WaveFormat> {
    if size < 14 {
        return None;
    }
    let mut r = Rd::new(b);
    let mut f = WaveFormat {
        tag: r.u16()?,
        channels: r.u16()?,
        sample_rate: r.u32()?,
        byte_rate: r.u32()?,
        block_align: r.u16()?,
        bits: 8,
        extra: None,
    };
    if size >= 16 {
        f.bits = r.u16()?;
    }
    if size >= 18 {
        let cb = r.u16()? as u32;
        let mut cb = cb.min(size - 18);
        let mut start = at + 18;
        if f.tag == 0xFFFE && cb >= 22 {
            r.u16()?; // wValidBitsPerSample
            r.u32()?; // dwChannelMask
            f.tag = r.u16()?; // first two bytes of the SubFormat GUID
            start += 22;
            cb -= 22;
        }
        if cb > 0 {
            f.extra = Some(ByteRange { offset: start, len: cb });
        }
    }
    Some(f)
}

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

/// What a Stream Properties Object's Stream Type GUID says (§3.3, §10.4).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum StreamType {
    Audio,
    Video,
    Jfif,
    Command,
    Binary,
}

/// Classifies a stream type GUID; `None` for types ffmpeg does not read.
pub(super) fn stream_type(g: &Guid) -> Option<StreamType> {
    const TYPES: [(Guid, StreamType); 5] = [
        (guids::AUDIO_MEDIA, StreamType::Audio),
        (guids::VIDEO_MEDIA, StreamType::Video),
        (guids::JFIF_MEDIA, StreamType::Jfif),
        (guids::COMMAND_MEDIA, StreamType::Command),
        (guids::BINARY_MEDIA, StreamType::Binary),
    ];
    guids::lookup(g, &TYPES)
}

/// ffmpeg's `ff_asf_metadata_conv`: ASF attribute names and the common
/// names ffprobe shows for them (compared case-insensitively).
pub(super) const TAG_NAMES: [(&str, &str); 16] = [
    ("WM/AlbumArtist", "album_artist"),
    ("WM/AlbumTitle", "album"),
    ("Author", "artist"),
    ("Description", "comment"),
    ("WM/Composer", "composer"),
    ("WM/EncodedBy", "encoded_by"),
    ("WM/EncodingSettings", "encoder"),
    ("WM/Genre", "genre"),
    ("WM/Language", "language"),
    ("WM/OriginalFilename", "filename"),
    ("WM/PartOfSet", "disc"),
    ("WM/Publisher", "publisher"),
    ("WM/Tool", "encoder"),
    ("WM/TrackNumber", "track"),
    ("WM/MediaStationCallSign", "service_provider"),
    ("WM/MediaStationName", "service_name"),
];

/// The common name of an attribute, if it has one.
pub(super) fn tag_name(key: &str) -> Option<&'static str> {
    TAG_NAMES
        .iter()
        .find(|(k, _)| k.eq_ignore_ascii_case(key))
        .map(|&(_, n)| n)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn var_fields() {
        let b = [1u8, 2, 3, 4, 5, 6, 7];
        let mut r = Rd::new(&b);
        assert_eq!(r.var(0), Some(0));
        assert_eq!(r.var(1), Some(1));
        assert_eq!(r.var(2), Some(0x0302));
        assert_eq!(r.var(3), Some(0x0706_0504));
        assert_eq!(r.var(1), None);
    }

    #[test]
    fn wave_format_extra() {
        let mut b = [0u8; 28];
        b[0..2].copy_from_slice(&0x161u16.to_le_bytes());
        b[16..18].copy_from_slice(&10u16.to_le_bytes());
        let f = parse_wave_format(&b, 100, 28).unwrap();
        assert_eq!(audio_codec(f.tag, f.bits), Codec::Wmav2);
        assert_eq!(f.extra, Some(ByteRange { offset: 118, len: 10 }));
        // cbSize larger than the structure is clamped.
        b[16..18].copy_from_slice(&999u16.to_le_bytes());
        assert_eq!(parse_wave_format(&b, 0, 28).unwrap().extra.unwrap().len, 10);
    }

    #[test]
    fn names() {
        assert_eq!(tag_name("author"), Some("artist"));
        assert_eq!(tag_name("WM/TrackNumber"), Some("track"));
        assert_eq!(tag_name("WM/Track"), None);
        assert_eq!(video_codec(*b"wmv2"), Codec::Wmv2);
        let gif: [u16; 9] = [105, 109, 97, 103, 101, 47, 103, 105, 102];
        assert_eq!(picture_codec(&gif), Some(Codec::Gif));
    }
}
