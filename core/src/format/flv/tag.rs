//! FLV tags (Adobe FLV 10.1 Annex E.4): the 11-byte tag header (E.4.1),
//! and what an audio (E.4.2) or video (E.4.3, Enhanced RTMP) tag header
//! says its body is: a media packet, a sequence header, or nothing.

use crate::bytes;
use crate::error::Result;
use crate::source::Source;
use crate::types::{Codec, Rational};
use zerocopy::{FromBytes, Immutable, KnownLayout, Unaligned};

/// FLV timestamps are milliseconds (Annex E.4.1).
pub(super) const MS: Rational = Rational::new(1, 1000);

/// `FLVTAG` header (Adobe FLV 10.1 Annex E.4.1): 11 bytes, big-endian.
/// zerocopy has no 24-bit integer, so the UI24 fields are byte arrays read
/// through the accessors.
#[derive(FromBytes, KnownLayout, Immutable, Unaligned, Debug, Clone, Copy)]
#[repr(C)]
pub(super) struct TagHeader {
    /// Reserved (2 bits), Filter (1 bit), TagType (5 bits: 8 audio, 9
    /// video, 18 script data).
    type_byte: u8,
    /// DataSize (UI24): bytes after the header, up to the PreviousTagSize.
    data_size: [u8; 3],
    /// Timestamp (UI24): the lower 24 bits, in milliseconds.
    timestamp: [u8; 3],
    /// TimestampExtended (UI8): the upper 8 bits of the timestamp.
    timestamp_extended: u8,
    /// StreamID (UI24): always 0.
    stream_id: [u8; 3],
}

/// Size of a tag header (Annex E.4.1).
pub(super) const TAG_HEADER: u64 = core::mem::size_of::<TagHeader>() as u64;

impl TagHeader {
    /// TagType, without the reserved and filter bits.
    #[inline]
    pub(super) fn tag_type(&self) -> u8 {
        self.type_byte & 0x1F
    }

    /// DataSize.
    #[inline]
    pub(super) fn data_size(&self) -> u32 {
        let [a, b, c] = self.data_size;
        u32::from_be_bytes([0, a, b, c])
    }

    /// The 32-bit timestamp: TimestampExtended over Timestamp.
    #[inline]
    pub(super) fn timestamp(&self) -> u32 {
        let [a, b, c] = self.timestamp;
        u32::from_be_bytes([self.timestamp_extended, a, b, c])
    }

    /// StreamID (always 0 in a valid file; not checked, as ffmpeg).
    #[allow(dead_code)]
    pub(super) fn stream_id(&self) -> u32 {
        let [a, b, c] = self.stream_id;
        u32::from_be_bytes([0, a, b, c])
    }
}

/// One tag header, read and placed (Annex E.4.1).
#[derive(Debug, Clone, Copy)]
pub(super) struct TagHead {
    /// Offset of the tag header.
    pub(super) at: u64,
    /// TagType.
    pub(super) kind: u8,
    /// DataSize.
    pub(super) size: u32,
    /// The timestamp (ms), which is the dts.
    pub(super) dts: i64,
    /// Offset of the tag body.
    pub(super) body: u64,
}

impl TagHead {
    /// End of the tag body (where its PreviousTagSize is).
    pub(super) fn end(&self) -> u64 {
        self.body + self.size as u64
    }
}

/// Reads the tag header at `at`, or `None` at the end of the input.
pub(super) fn read_tag<S: Source>(src: &mut S, at: u64) -> Result<Option<TagHead>> {
    if at.saturating_add(TAG_HEADER) > src.len() {
        return Ok(None);
    }
    // A fixed-size array (the slice fast path of a per-tag read), seen as
    // the layout: the sizes agree at compile time.
    let raw: [u8; core::mem::size_of::<TagHeader>()] = src.array(at)?;
    let h: TagHeader = zerocopy::transmute!(raw);
    Ok(Some(TagHead {
        at,
        kind: h.tag_type(),
        size: h.data_size(),
        dts: h.timestamp() as i64,
        body: at + TAG_HEADER,
    }))
}

/// The kinds of tracks FLV carries, in ffmpeg's stream-type order.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Kind {
    Video = 0,
    Audio = 1,
    Subtitle = 2,
    Data = 3,
}

/// What a tag carries, after its audio or video tag header.
#[derive(Debug, Clone, Copy)]
pub(super) enum Content {
    /// A media packet: the payload range, pts, keyframe.
    Packet {
        kind: Kind,
        data: u64,
        len: u32,
        pts: i64,
        key: bool,
    },
    /// Codec configuration (a sequence header).
    Config { kind: Kind, data: u64, len: u32 },
    /// Nothing to deliver.
    Skip,
}

/// Bytes of a tag body read to classify it: the longest media header (an
/// enhanced video tag header with a composition time: 1 + 4 + 3).
const MEDIA_HEADER: usize = 8;

/// A pts further than this from the dts (ms) is replaced by the dts, as
/// ffmpeg does for AVC composition times (15 minutes).
const MAX_CTS_MS: i64 = 1000 * 60 * 15;

/// The signed 24-bit CompositionTime (SI24) at `at` of `h`, 0 when `h` is
/// too short (Annex E.4.3.2; Enhanced RTMP CodedFrames).
fn composition_time(h: &[u8], at: usize) -> i64 {
    bytes::be24(h, at).map(|c| ((c << 8) as i32 >> 8) as i64).unwrap_or(0)
}

/// A media packet of `kind` after `hdr` bytes of codec headers, or
/// [`Content::Skip`] when nothing follows them (an AVC end of sequence, an
/// empty tag: ffprobe shows no packet).
fn media_packet(t: &TagHead, kind: Kind, hdr: u64, pts: i64, key: bool) -> Content {
    let end = t.end();
    let data = t.body + hdr;
    if data >= end {
        return Content::Skip;
    }
    Content::Packet {
        kind,
        data: data.min(end),
        len: end.saturating_sub(data) as u32,
        pts,
        key,
    }
}

/// Codec configuration of `kind` after `hdr` bytes of codec headers.
fn sequence_header(t: &TagHead, kind: Kind, hdr: u32) -> Content {
    Content::Config {
        kind,
        data: t.body + u64::from(hdr),
        len: t.size.saturating_sub(hdr),
    }
}

/// Classifies the tag `t`: a media packet, a sequence header, or nothing
/// (Annex E.4.2, E.4.3; Enhanced RTMP). Script tags are handled by the
/// caller.
pub(super) fn content<S: Source>(src: &mut S, t: &TagHead) -> Result<Content> {
    if t.size == 0 {
        return Ok(Content::Skip);
    }
    let take = (t.size as usize).min(MEDIA_HEADER);
    let mut hb = [0u8; MEDIA_HEADER];
    src.read_exact_at(t.body, hb.get_mut(..take).unwrap_or(&mut []))?;
    let h = hb.get(..take).unwrap_or(&[]);
    Ok(match t.kind {
        8 => audio_content(t, h),
        9 => video_content(t, h),
        _ => Content::Skip,
    })
}

/// AUDIODATA (Annex E.4.2): SoundFormat 10 (AAC) has an AACPacketType.
fn audio_content(t: &TagHead, h: &[u8]) -> Content {
    let b0 = h.first().copied().unwrap_or(0);
    if b0 >> 4 != 10 {
        return media_packet(t, Kind::Audio, 1, t.dts, true);
    }
    if t.size < 2 {
        return Content::Skip;
    }
    // AACPacketType (Annex E.4.2.2): 0 = AudioSpecificConfig.
    if h.get(1).copied().unwrap_or(1) == 0 {
        return sequence_header(t, Kind::Audio, 2);
    }
    media_packet(t, Kind::Audio, 2, t.dts, true)
}

/// VIDEODATA (Annex E.4.3), or an Enhanced RTMP ExVideoTagHeader when the
/// top bit is set.
fn video_content(t: &TagHead, h: &[u8]) -> Content {
    let b0 = h.first().copied().unwrap_or(0);
    if b0 & 0x80 != 0 {
        return ex_video_content(t, h, b0);
    }
    let frame = b0 >> 4;
    if frame == 5 {
        // Video info / command frame (Annex E.4.3.1).
        return Content::Skip;
    }
    let key = frame == 1;
    match b0 & 0x0F {
        7 | 9 => {
            // AVCPacketType and CompositionTime (Annex E.4.3.2).
            if t.size < 2 {
                return Content::Skip;
            }
            let ptype = h.get(1).copied().unwrap_or(1);
            let cts = composition_time(h, 2);
            if ptype == 0 {
                return sequence_header(t, Kind::Video, 5);
            }
            let mut pts = t.dts.saturating_add(cts);
            if (pts - t.dts).abs() > MAX_CTS_MS && cts >= 0 {
                pts = t.dts;
            }
            media_packet(t, Kind::Video, 5, pts, key)
        }
        4 | 5 => media_packet(t, Kind::Video, 2, t.dts, key),
        _ => media_packet(t, Kind::Video, 1, t.dts, key),
    }
}

/// Enhanced RTMP ExVideoTagHeader: IsExHeader, FrameType (3 bits),
/// PacketType (4 bits), then a FourCC.
fn ex_video_content(t: &TagHead, h: &[u8], b0: u8) -> Content {
    let frame = (b0 >> 4) & 7;
    let ptype = b0 & 0x0F;
    let key = frame == 1;
    if frame == 5 {
        return Content::Skip;
    }
    let Some(f) = bytes::array::<4>(h, 1) else {
        return Content::Skip;
    };
    match ptype {
        0 | 5 => sequence_header(t, Kind::Video, 5),
        1 => {
            // CodedFrames: hvc1 and avc1 carry a composition time offset
            // (SI24).
            if &f == b"hvc1" || &f == b"avc1" {
                let cts = composition_time(h, 5);
                media_packet(t, Kind::Video, 8, t.dts.saturating_add(cts), key)
            } else {
                media_packet(t, Kind::Video, 5, t.dts, key)
            }
        }
        3 => media_packet(t, Kind::Video, 5, t.dts, key),
        _ => Content::Skip,
    }
}

/// The codec of an audio tag's SoundFormat (Annex E.4.2.1), as ffmpeg maps it.
pub(super) fn audio_codec(flags: u8) -> Codec {
    let bits16 = flags & 0x02 != 0;
    match flags >> 4 {
        0 | 3 => {
            if bits16 {
                Codec::PcmS16Le
            } else {
                Codec::PcmU8
            }
        }
        1 => Codec::AdpcmSwf,
        2 | 14 => Codec::Mp3,
        4..=6 => Codec::Nellymoser,
        7 => Codec::PcmAlaw,
        8 => Codec::PcmMulaw,
        10 => Codec::Aac,
        11 => Codec::Speex,
        _ => Codec::Unknown,
    }
}

/// The sample rate of an audio tag's flags (Annex E.4.2.1 SoundRate, with
/// the fixed rates of Nellymoser, G.711, Speex and MP3 8 kHz).
pub(super) fn audio_rate(flags: u8) -> u32 {
    match flags >> 4 {
        4 | 11 => 16000,
        5 | 7 | 8 | 14 => 8000,
        _ => 44100 << ((flags >> 2) & 3) >> 3,
    }
}

/// The codec of a video tag's CodecID (Annex E.4.3.1), as ffmpeg maps it.
pub(super) fn video_codec(id: u8) -> Codec {
    match id {
        2 => Codec::Flv1,
        3 => Codec::FlashSv,
        4 => Codec::Vp6f,
        5 => Codec::Vp6a,
        6 => Codec::FlashSv2,
        7 => Codec::H264,
        8 => Codec::H263,
        9 => Codec::Mpeg4,
        _ => Codec::Unknown,
    }
}

/// The codec of an enhanced-FLV video FourCC (Enhanced RTMP v1 §"ExVideoTagHeader").
pub(super) fn fourcc_codec(f: &[u8; 4]) -> Codec {
    match f {
        b"hvc1" => Codec::Hevc,
        b"av01" => Codec::Av1,
        b"vp09" => Codec::Vp9,
        b"avc1" => Codec::H264,
        b"vp08" => Codec::Vp8,
        _ => Codec::Unknown,
    }
}
