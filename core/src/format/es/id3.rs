//! ID3v2 (2.2, 2.3, 2.4), ID3v1/1.1, APEv2 and Lyrics3v2 tags: found,
//! measured and skipped, never copied. The one ID3 reader of the crate:
//! MP3 and ADTS (tags around the stream, their text frames and attached
//! pictures), AC-3 (tags skipped), FLAC (ID3v2 tags in front of `fLaC`) and
//! AIFF (the `ID3 ` chunk) share its header reader, frame walker
//! ([`FrameWalk`]), frame-name table ([`frame_name`]) and frame-to-tag rule
//! ([`RawFrame::tag`], each container choosing its [`FrameTags`]); FLAC's
//! PICTURE shares its picture types and media types ([`PICTURE_TYPES`],
//! [`codec_for_mime`]).
//!
//! Entry points: [`id3v2_at`] and [`skip_id3v2`] (headers), [`FrameWalk`]
//! (frames and their tags), [`find_trailer`] (tags at the end),
//! [`Pictures`] (`APIC` as attached-picture tracks).
//!
//! References: ID3 tag version 2.4.0 – Main Structure (§3.1 header, §3.2
//! extended header, §3.4 footer, §6.2 synchsafe integers, §4 frames); ID3v2.3.0
//! and ID3v2.2.0 informal standards (frame headers of 10 and 6 bytes); ID3v1
//! (128 bytes, `TAG`); APEv2 tag footer (32 bytes, `APETAGEX`); Lyrics3 v2.00
//! (`LYRICSBEGIN` … size(6) `LYRICS200`).

use crate::bytes::{array, be16, be24, be32};
use crate::error::Result;
use crate::format::traits::Context;
use crate::source::Source;
#[cfg(any(feature = "mp3", feature = "aac", feature = "dsf"))]
use crate::tags::TagCursor;
use crate::tags::{text_or_bytes, Tag, TagKey, TagScope, TagValue};
use crate::types::{ByteRange, Codec, Packet, PacketFlags, Rational, Track, TrackKind};
use zerocopy::{FromBytes, Immutable, KnownLayout, Unaligned};

/// Size of an ID3v2 header (and footer).
pub const ID3V2_HEADER: u64 = 10;
/// Size of an ID3v1 tag.
pub const ID3V1_LEN: u64 = 128;
/// Size of an APEv2 footer.
pub const APE_FOOTER: u64 = 32;

/// The ID3v2 header as stored (ID3v2.4 §3.1): `ID3`, version, revision,
/// flags and a synchsafe size.
#[derive(FromBytes, KnownLayout, Immutable, Unaligned, Debug)]
#[repr(C)]
struct HeaderLayout {
    magic: [u8; 3],
    major: u8,
    revision: u8,
    flags: u8,
    size: [u8; 4],
}

/// Decodes a 28-bit synchsafe integer (ID3v2.4 §6.2): the low 7 bits of
/// each byte.
pub(crate) fn synchsafe(b: [u8; 4]) -> u64 {
    b.iter().fold(0u64, |v, &c| (v << 7) | u64::from(c & 0x7F))
}

/// An ID3v2 tag's place in the input.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Id3v2 {
    /// Offset of the `ID3` header.
    pub offset: u64,
    /// Major version (2, 3 or 4).
    pub major: u8,
    /// Header flags (§3.1): 0x80 unsynchronisation, 0x40 extended header,
    /// 0x10 footer present.
    pub flags: u8,
    /// Size of the tag body after the header (synchsafe size field).
    pub size: u64,
    /// Total bytes the tag takes: header, body and footer.
    pub total: u64,
}

impl Id3v2 {
    /// The header's fields, with ffmpeg's acceptance rule: `ID3`, version
    /// and revision not 0xFF, and a synchsafe size.
    fn from_layout(h: &HeaderLayout, offset: u64) -> Option<Id3v2> {
        if &h.magic != b"ID3" || h.major == 0xFF || h.revision == 0xFF || h.size.iter().any(|&x| x & 0x80 != 0) {
            return None;
        }
        let size = synchsafe(h.size);
        // The footer (§3.4) exists in version 4 only.
        let footer = if h.major == 4 && h.flags & 0x10 != 0 {
            ID3V2_HEADER
        } else {
            0
        };
        Some(Id3v2 {
            offset,
            major: h.major,
            flags: h.flags,
            size,
            total: ID3V2_HEADER + size + footer,
        })
    }
}

/// Parses an ID3v2 header (ID3v2.4 §3.1), with ffmpeg's acceptance rule:
/// `ID3`, version and revision not 0xFF, and a synchsafe size.
pub fn parse_id3v2_header(b: &[u8; 10], offset: u64) -> Option<Id3v2> {
    let h = HeaderLayout::ref_from_bytes(b).ok()?;
    Id3v2::from_layout(h, offset)
}

/// Reads the ID3v2 tag at `at`, if there is one.
pub fn id3v2_at<S: Source>(src: &mut S, at: u64) -> Result<Option<Id3v2>> {
    if at.saturating_add(ID3V2_HEADER) > src.len() {
        return Ok(None);
    }
    // As an array (the slice source's fast path), reinterpreted.
    let h: HeaderLayout = zerocopy::transmute!(src.array::<10>(at)?);
    Ok(Id3v2::from_layout(&h, at))
}

/// Most consecutive ID3v2 tags skipped at the start of an elementary
/// stream (MP3, ADTS, AC-3): bounds the loop of [`skip_id3v2`] (ffmpeg reads
/// tags as long as they follow one another; each tag is at least its 10-byte
/// header, so this only bounds the work on a file of empty tags).
pub const MAX_ID3V2_CHAIN: u32 = 16;

/// Skips consecutive ID3v2 tags from `at` (ffmpeg reads them in a loop),
/// at most `max` of them. Returns the offset after the last one and the
/// first tag.
pub fn skip_id3v2<S: Source>(src: &mut S, mut at: u64, max: u32) -> Result<(u64, Option<Id3v2>)> {
    let mut first = None;
    for _ in 0..max {
        match id3v2_at(src, at)? {
            Some(t) => {
                if first.is_none() {
                    first = Some(t);
                }
                at = at.saturating_add(t.total);
            }
            None => break,
        }
    }
    Ok((at, first))
}

/// The APEv2 tag footer (APEv2 specification, "APE Tag Header / Footer"):
/// little-endian fields.
#[derive(FromBytes, KnownLayout, Immutable, Unaligned, Debug)]
#[repr(C)]
struct ApeFooter {
    preamble: [u8; 8],
    version: zerocopy::little_endian::U32,
    /// Bytes of the items and the footer, not the header.
    size: zerocopy::little_endian::U32,
    items: zerocopy::little_endian::U32,
    /// Bit 31: the tag has a header.
    flags: zerocopy::little_endian::U32,
    reserved: [u8; 8],
}

/// Trailing tags found at the end of the input.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Trailer {
    /// Offset of an ID3v1 tag (`TAG`, 128 bytes, the last bytes).
    pub id3v1: Option<u64>,
    /// Offset of an APEv2 tag (its header when present, else its items).
    pub ape: Option<u64>,
    /// The APEv2 tag's items: their offset, the footer's offset, and the
    /// item count the footer gives.
    pub ape_items: Option<(u64, u64, u32)>,
    /// Offset of a Lyrics3v2 block.
    pub lyrics3: Option<u64>,
    /// Where the audio ends: the first byte of the trailing tags.
    pub audio_end: u64,
}

/// Looks for ID3v1, Lyrics3v2 and APEv2 at the end of the input, in that
/// order from the end (the order taggers write them).
pub fn find_trailer<S: Source>(src: &mut S, start: u64) -> Result<Trailer> {
    let len = src.len();
    let mut t = Trailer {
        audio_end: len,
        ..Trailer::default()
    };
    let mut end = len;
    if end >= start.saturating_add(ID3V1_LEN) {
        let b: [u8; 3] = src.array(end - ID3V1_LEN)?;
        if &b == b"TAG" {
            end -= ID3V1_LEN;
            t.id3v1 = Some(end);
        }
    }
    // Lyrics3 v2.00: ... "LYRICSBEGIN" ... size (6 ASCII digits) "LYRICS200".
    if end >= start.saturating_add(15) {
        let b: [u8; 15] = src.array(end - 15)?;
        if &b[6..] == b"LYRICS200" {
            let mut size = 0u64;
            let mut ok = true;
            for &d in &b[..6] {
                ok &= d.is_ascii_digit();
                size = size * 10 + (d.wrapping_sub(b'0') as u64 % 10);
            }
            let total = size + 15;
            if ok && end >= start.saturating_add(total) {
                let tag: [u8; 11] = src.array(end - total)?;
                if &tag == b"LYRICSBEGIN" {
                    end -= total;
                    t.lyrics3 = Some(end);
                }
            }
        }
    }
    if end >= start.saturating_add(APE_FOOTER) {
        let f: ApeFooter = src.read(end - APE_FOOTER)?;
        if &f.preamble == b"APETAGEX" {
            let size = u64::from(f.size.get());
            let flags = f.flags.get();
            let header = if flags & 0x8000_0000 != 0 { APE_FOOTER } else { 0 };
            let total = size + header;
            if size >= APE_FOOTER && end >= start.saturating_add(total) {
                let footer = end - APE_FOOTER;
                end -= total;
                t.ape = Some(end);
                t.ape_items = Some((end + header, footer, f.items.get()));
            }
        }
    }
    t.audio_end = end;
    Ok(t)
}

/// The common name ffprobe gives an ID3v2 frame id (ffmpeg `id3v2.c`
/// conversion tables `ff_id3v2_34_metadata_conv`, `ff_id3v2_4_metadata_conv`
/// and `id3v2_2_metadata_conv`): the one table of every container that
/// carries ID3v2 (MP3, ADTS, FLAC, AIFF).
pub fn frame_name(id: &[u8]) -> Option<&'static str> {
    Some(match id {
        b"TALB" | b"TAL" => "album",
        b"TCOM" | b"TCM" => "composer",
        b"TCON" | b"TCO" => "genre",
        b"TCOP" | b"TCR" => "copyright",
        b"TENC" | b"TEN" => "encoded_by",
        b"TIT2" | b"TT2" => "title",
        b"TLAN" | b"TLA" => "language",
        b"TPE1" | b"TP1" => "artist",
        b"TPE2" | b"TP2" => "album_artist",
        b"TPE3" | b"TP3" => "performer",
        b"TPOS" | b"TPA" => "disc",
        b"TPUB" | b"TPB" => "publisher",
        b"TRCK" | b"TRK" => "track",
        b"TSSE" | b"TSS" => "encoder",
        b"TDRC" | b"TYER" | b"TYE" => "date",
        b"TDEN" => "creation_time",
        b"TSOA" => "album-sort",
        b"TSOP" => "artist-sort",
        b"TSOT" => "title-sort",
        b"TIT1" | b"TT1" => "grouping",
        b"COMM" | b"COM" => "comment",
        b"USLT" | b"ULT" => "lyrics",
        _ => return None,
    })
}

/// Cursor state for walking the frames of one ID3v2 tag: where the next
/// frame header is and where the frames end.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FrameWalk {
    /// Offset of the next frame header.
    pub at: u64,
    /// End of the frame area.
    pub end: u64,
    /// Major version of the tag.
    pub major: u8,
}

/// Which frames of an ID3v2 tag a container reports as tags, and how: the
/// demuxers this crate follows differ, and each keeps its rule.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FrameTags {
    /// Text frames stored plainly (see [`RawFrame::is_text`]), of 2 bytes or
    /// more: the text after the encoding byte, as text when ISO-8859-1 or
    /// UTF-8, else as bytes. MP3 and ADTS.
    Text,
    /// Text frames in ISO-8859-1 or UTF-8 of 2 bytes or more: the text after
    /// the encoding byte. AIFF's `ID3 ` chunk.
    Latin1Text,
    /// Every frame: a text frame in ISO-8859-1 or UTF-8 as its text, any
    /// other as its whole body. FLAC (ID3v2 in front of `fLaC`).
    Every,
}

impl FrameTags {
    /// Whether frame `f` is reported, its body at most `max` bytes (the
    /// text at most `max` for [`FrameTags::Latin1Text`]).
    fn reports<S: Source>(self, src: &mut S, f: &RawFrame, max: u32) -> Result<bool> {
        let max = u64::from(max);
        Ok(match self {
            FrameTags::Text => f.plain && f.is_text() && f.size >= 2 && f.size <= max,
            FrameTags::Latin1Text => {
                f.is_text() && f.size >= 2 && f.size - 1 <= max && {
                    let [enc] = src.array::<1>(f.body)?;
                    latin1_or_utf8(enc)
                }
            }
            FrameTags::Every => f.size >= 1 && f.size <= max,
        })
    }
}

/// Whether a text encoding byte (ID3v2.4 §4.2) is ISO-8859-1 (0) or UTF-8
/// (3), the encodings read in place as text.
fn latin1_or_utf8(enc: u8) -> bool {
    enc == 0 || enc == 3
}

impl FrameWalk {
    /// Starts a walk over `tag`, after its header and extended header.
    /// Tags with unsynchronisation on the whole tag are not walked (their
    /// frames would have to be copied to be read): returns `None`.
    pub fn new<S: Source>(src: &mut S, tag: &Id3v2) -> Result<Option<Self>> {
        if tag.flags & 0x80 != 0 && tag.major < 4 {
            return Ok(None);
        }
        let mut at = tag.offset + ID3V2_HEADER;
        let end = at.saturating_add(tag.size).min(src.len());
        if tag.flags & 0x40 != 0 && tag.major >= 3 {
            // Extended header (§3.2): v2.4 size is synchsafe and counts
            // itself; v2.3 size excludes its 4-byte size field.
            let b: [u8; 4] = src.array(at)?;
            let n = if tag.major == 4 {
                synchsafe(b)
            } else {
                u64::from(u32::from_be_bytes(b)) + 4
            };
            at = at.saturating_add(n);
        }
        Ok(Some(FrameWalk {
            at,
            end,
            major: tag.major,
        }))
    }

    /// The next frame of any kind: its id (3 or 4 bytes), body offset and
    /// size, and whether its body is stored plainly (not compressed,
    /// encrypted, unsynchronised, nor with a data length indicator).
    pub fn next_frame<S: Source>(&mut self, src: &mut S) -> Result<Option<RawFrame>> {
        // Frame headers: 6 bytes in ID3v2.2 (id 3, size 3), 10 in 2.3 and
        // 2.4 (id 4, size 4, flags 2; the size synchsafe in 2.4, §4.1).
        let hlen: u64 = if self.major == 2 { 6 } else { 10 };
        if self.at.saturating_add(hlen) > self.end {
            return Ok(None);
        }
        // Within the input (`end` is), so read as arrays: the slice
        // source's fast path.
        let h: [u8; 10] = if self.major == 2 {
            let [a, b, c, d, e, f] = src.array::<6>(self.at)?;
            [a, b, c, d, e, f, 0, 0, 0, 0]
        } else {
            src.array(self.at)?
        };
        if h[0] == 0 {
            // Padding.
            self.at = self.end;
            return Ok(None);
        }
        let (id, id_len, size, flags) = match self.major {
            2 => ([h[0], h[1], h[2], 0], 3u8, be24(&h, 3).map(u64::from), 0u16),
            3 => (
                [h[0], h[1], h[2], h[3]],
                4,
                be32(&h, 4).map(u64::from),
                be16(&h, 8).unwrap_or(0),
            ),
            _ => (
                [h[0], h[1], h[2], h[3]],
                4,
                array(&h, 4).map(synchsafe),
                be16(&h, 8).unwrap_or(0),
            ),
        };
        let size = size.unwrap_or(0);
        let frame = RawFrame {
            id,
            id_len,
            body: self.at + hlen,
            size,
            // Compressed, encrypted or unsynchronised frames, and frames
            // with a data length indicator, are not read in place.
            plain: match self.major {
                3 => flags & 0x00C0 == 0,
                4 => flags & 0x000F == 0,
                _ => true,
            },
        };
        if !frame.id().iter().all(|c| c.is_ascii_uppercase() || c.is_ascii_digit()) {
            self.at = self.end;
            return Ok(None);
        }
        self.at = frame.body.saturating_add(size);
        if self.at > self.end {
            self.at = self.end;
            return Ok(None);
        }
        Ok(Some(frame))
    }

    /// The next frame that `mode` reports, skipping the others; `max` is the
    /// largest body reported. Borrows nothing, so that a tag walk may go on
    /// to other tags when it is `None`.
    pub fn next_reported<S: Source>(&mut self, src: &mut S, max: u32, mode: FrameTags) -> Result<Option<RawFrame>> {
        while let Some(f) = self.next_frame(src)? {
            if mode.reports(src, &f, max)? {
                return Ok(Some(f));
            }
        }
        Ok(None)
    }

    /// The next text frame as a tag, skipping others ([`FrameTags::Text`]).
    /// `max` is the largest value returned.
    pub fn next<'s, S: Source>(&mut self, src: &'s mut S, max: u32) -> Result<Option<Tag<'s>>> {
        match self.next_reported(src, max, FrameTags::Text)? {
            Some(f) => f.tag(src, FrameTags::Text).map(Some),
            None => Ok(None),
        }
    }
}

/// One ID3v2 frame's place in the input.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RawFrame {
    /// Frame id (the fourth byte is 0 for ID3v2.2's 3-byte ids).
    pub id: [u8; 4],
    /// Length of the id: 3 or 4.
    pub id_len: u8,
    /// Offset of the frame body.
    pub body: u64,
    /// Size of the frame body.
    pub size: u64,
    /// Whether the body is stored as is.
    pub plain: bool,
}

impl RawFrame {
    /// The frame id, 3 or 4 bytes.
    pub fn id(&self) -> &[u8] {
        self.id.get(..usize::from(self.id_len)).unwrap_or(&self.id)
    }

    /// Whether this is a text information frame (ID3v2.4 §4.2: `T…`), but
    /// not the user-defined one (`TXXX`, ID3v2.2 `TXX`).
    pub fn is_text(&self) -> bool {
        self.id[0] == b'T' && self.id[1] != b'X'
    }

    /// This frame as a tag, its value read in place as `mode` says (see
    /// [`FrameTags`]); its key is the frame id, its name the common one
    /// ([`frame_name`]).
    ///
    /// Errors: the input ends inside the frame body.
    pub fn tag<'s, S: Source>(&self, src: &'s mut S, mode: FrameTags) -> Result<Tag<'s>> {
        let b = src.bytes(self.body, self.size as usize)?;
        let (enc, text) = b.split_first().map(|(e, t)| (*e, t)).unwrap_or((0, &[]));
        let value = match mode {
            FrameTags::Text if latin1_or_utf8(enc) => text_or_bytes(text),
            FrameTags::Text => TagValue::Bytes(text),
            FrameTags::Latin1Text => text_or_bytes(text),
            FrameTags::Every if self.is_text() && !b.is_empty() && latin1_or_utf8(enc) => text_or_bytes(text),
            FrameTags::Every => TagValue::Bytes(b),
        };
        Ok(Tag {
            scope: TagScope::Format,
            key: TagKey::FourCc(self.id),
            name: frame_name(self.id()),
            value,
        })
    }
}

/// The tags around an MPEG audio or ADTS stream: its first ID3v2 tag and
/// its ID3v1 tag, and the state of their walk.
#[cfg(any(feature = "mp3", feature = "aac", feature = "dsf"))]
#[derive(Debug, Clone, Default)]
pub(crate) struct StreamTags {
    /// The first ID3v2 tag at the start.
    pub first_id3v2: Option<Id3v2>,
    /// Offset of the ID3v1 tag at the end.
    pub id3v1: Option<u64>,
    /// The frame walk of the ID3v2 tag, while in it.
    walk: Option<FrameWalk>,
}

#[cfg(any(feature = "mp3", feature = "aac", feature = "dsf"))]
impl StreamTags {
    /// The tags of a stream with these ID3v2 and ID3v1 tags.
    pub fn new(first_id3v2: Option<Id3v2>, id3v1: Option<u64>) -> Self {
        StreamTags {
            first_id3v2,
            id3v1,
            walk: None,
        }
    }

    /// The next tag, stages 0 to 3 of `cur`: the text frames of the ID3v2
    /// tag ([`FrameTags::Text`]), then the non-empty fields of the ID3v1
    /// tag. `None` once both are done, with `cur.stage` at
    /// [`STREAM_TAGS_DONE`], where the caller's own tags follow. `max` is
    /// the largest value returned.
    pub fn next<'s, S: Source>(&mut self, src: &'s mut S, max: u32, cur: &mut TagCursor) -> Result<Option<Tag<'s>>> {
        loop {
            match cur.stage {
                0 => {
                    cur.stage = 2;
                    if let Some(t) = self.first_id3v2 {
                        self.walk = FrameWalk::new(src, &t)?;
                        cur.stage = 1;
                    }
                }
                1 => {
                    let Some(mut w) = self.walk else {
                        cur.stage = 2;
                        continue;
                    };
                    let Some(f) = w.next_reported(src, max, FrameTags::Text)? else {
                        self.walk = None;
                        cur.stage = 2;
                        continue;
                    };
                    self.walk = Some(w);
                    return f.tag(src, FrameTags::Text).map(Some);
                }
                2 => {
                    cur.stage = STREAM_TAGS_DONE;
                    if let Some(at) = self.id3v1 {
                        cur.offset = at;
                        cur.end = 0;
                        cur.stage = 3;
                    }
                }
                3 => {
                    let i = cur.end as u32;
                    cur.end += 1;
                    if i >= ID3V1_FIELDS.len() as u32 {
                        cur.stage = STREAM_TAGS_DONE;
                        continue;
                    }
                    let empty = matches!(
                        id3v1_field(src, cur.offset, i)?,
                        Some(Tag {
                            value: TagValue::Text(""),
                            ..
                        })
                    );
                    if empty {
                        continue;
                    }
                    return id3v1_field(src, cur.offset, i);
                }
                _ => return Ok(None),
            }
        }
    }
}

/// The stage of a [`TagCursor`] where [`StreamTags::next`] is done.
#[cfg(any(feature = "mp3", feature = "aac", feature = "dsf"))]
pub(crate) const STREAM_TAGS_DONE: u32 = 4;

pub use crate::codec::picture::{codec_for_mime, PICTURE_TYPES};

/// Most attached pictures exposed as video tracks.
pub const MAX_PICTURES: usize = 4;

/// Bytes of an `APIC` frame read to find its picture data: the encoding,
/// MIME type, picture type and description must fit (longer ones are
/// skipped).
const APIC_HEAD: usize = 256;

/// Attached pictures (`APIC`, ID3v2.2 `PIC`) of a tag, exposed as one-packet
/// video tracks as ffmpeg does (disposition `attached_pic`).
#[derive(Debug, Clone, Default)]
pub struct Pictures {
    items: heapless::Vec<(ByteRange, Codec, usize), MAX_PICTURES>,
    next: usize,
}

/// Where the picture data of an `APIC` frame begins, from the start of its
/// body, and its codec; `None` for an image type not exposed (only JPEG
/// and PNG are) or fields that do not fit in [`APIC_HEAD`] bytes.
fn apic_data(h: &[u8], v22: bool) -> Option<(u64, Codec)> {
    // encoding(1), MIME (NUL-terminated; 3 bytes in 2.2), type(1),
    // description (NUL-terminated, two NULs for UTF-16), data.
    let enc = h.first().copied().unwrap_or(0);
    let (mime, after_mime) = if v22 {
        (h.get(1..4).unwrap_or(&[]), 4usize)
    } else {
        let z = h.iter().skip(1).position(|&c| c == 0)?;
        (h.get(1..1 + z).unwrap_or(&[]), 2 + z)
    };
    let codec = match codec_for_mime(mime, true) {
        c @ (Codec::Mjpeg | Codec::Png) => c,
        _ => return None,
    };
    let desc = after_mime + 1;
    let rest = h.get(desc..).unwrap_or(&[]);
    let dlen = if enc == 1 || enc == 2 {
        rest.chunks(2).position(|c| c == [0, 0])? * 2 + 2
    } else {
        rest.iter().position(|&c| c == 0)? + 1
    };
    Some(((desc + dlen) as u64, codec))
}

impl Pictures {
    /// Finds the pictures of `tag` whose image type ffmpeg knows (JPEG,
    /// PNG) and adds a video track for each.
    pub fn find<S: Source>(src: &mut S, tag: &Id3v2, ctx: &mut Context) -> Result<Self> {
        let mut out = Pictures::default();
        let Some(mut walk) = FrameWalk::new(src, tag)? else {
            return Ok(out);
        };
        while let Some(f) = walk.next_frame(src)? {
            let apic = f.id() == b"APIC" || f.id() == b"PIC";
            if !apic || !f.plain || f.size < 4 || out.items.is_full() {
                continue;
            }
            let mut h = [0u8; APIC_HEAD];
            let n = src.read_at(
                f.body,
                h.get_mut(..(f.size.min(APIC_HEAD as u64) as usize)).unwrap_or(&mut []),
            )?;
            let Some((data, codec)) = apic_data(h.get(..n).unwrap_or(&[]), f.id_len == 3) else {
                continue;
            };
            if data >= f.size {
                continue;
            }
            let range = ByteRange {
                offset: f.body + data,
                len: (f.size - data).min(u32::MAX as u64) as u32,
            };
            let track = Track {
                id: ctx.tracks.len() as u32,
                kind: TrackKind::Video,
                codec,
                time_base: Rational::new(1, 90_000),
                frames: Some(1),
                attached_picture: true,
                ..Track::default()
            };
            if let Some(i) = ctx.add_track(track, f.body) {
                let _ = out.items.push((range, codec, i));
            }
        }
        Ok(out)
    }

    /// The next picture packet, or `None` when all were given.
    pub fn next_packet<'s, S: Source>(&mut self, src: &'s mut S) -> Result<Option<Packet<'s>>> {
        let Some(&(r, _, track)) = self.items.get(self.next) else {
            return Ok(None);
        };
        self.next += 1;
        let data = src.bytes(r.offset, r.len as usize)?;
        Ok(Some(
            Packet::contiguous(track, r.offset, data).with_flags(PacketFlags::keyframe(true)),
        ))
    }

    /// Whether a picture packet is still to come.
    pub fn pending(&self) -> bool {
        self.next < self.items.len()
    }

    /// Starts the picture packets again (after a seek to the start).
    pub fn rewind(&mut self) {
        self.next = 0;
    }
}

/// The ID3v1 fields reported, after `TAG`: offset, length and name
/// (title(30) artist(30) album(30) year(4) comment(30, the last 2 bytes
/// the ID3v1.1 track number) genre(1)).
const ID3V1_FIELDS: [(u64, usize, &str); 5] = [
    (3, 30, "title"),
    (33, 30, "artist"),
    (63, 30, "album"),
    (93, 4, "date"),
    (97, 28, "comment"),
];

/// An ID3v1 field as a tag.
pub fn id3v1_field<'s, S: Source>(src: &'s mut S, at: u64, index: u32) -> Result<Option<Tag<'s>>> {
    let Some(&(off, len, name)) = ID3V1_FIELDS.get(index as usize) else {
        return Ok(None);
    };
    let b = src.bytes(at + off, len)?;
    let mut end = b.iter().position(|&c| c == 0).unwrap_or(b.len());
    while end > 0 && b.get(end - 1) == Some(&b' ') {
        end -= 1;
    }
    let v = b.get(..end).unwrap_or(&[]);
    Ok(Some(Tag {
        scope: TagScope::Format,
        key: TagKey::Text(name),
        name: Some(name),
        value: text_or_bytes(v),
    }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::SliceSource;

    #[test]
    fn header_and_chain() {
        let mut f = [0u8; 64];
        f[..10].copy_from_slice(b"ID3\x04\x00\x10\x00\x00\x00\x05");
        f[25..35].copy_from_slice(b"ID3\x03\x00\x00\x00\x00\x00\x02");
        let mut s = SliceSource::new(&f);
        let (end, first) = skip_id3v2(&mut s, 0, 8).unwrap();
        assert_eq!(first.unwrap().total, 25);
        assert_eq!(end, 25 + 12);
        assert!(parse_id3v2_header(b"ID3\x04\x00\x00\x80\x00\x00\x00", 0).is_none());
    }

    #[test]
    fn trailer_tags() {
        let mut f = [0u8; 400];
        f[400 - 128..400 - 125].copy_from_slice(b"TAG");
        let ape = 400 - 128 - 32;
        f[ape..ape + 8].copy_from_slice(b"APETAGEX");
        f[ape + 12..ape + 16].copy_from_slice(&32u32.to_le_bytes());
        let mut s = SliceSource::new(&f);
        let t = find_trailer(&mut s, 0).unwrap();
        assert_eq!(t.id3v1, Some(272));
        assert_eq!(t.ape, Some(240));
        assert_eq!(t.audio_end, 240);
    }

    #[test]
    fn walks_text_frames() {
        let mut f = [0u8; 40];
        f[..10].copy_from_slice(b"ID3\x03\x00\x00\x00\x00\x00\x1E");
        f[10..20].copy_from_slice(b"TIT2\x00\x00\x00\x04\x00\x00");
        f[20..24].copy_from_slice(b"\x00abc");
        let mut s = SliceSource::new(&f);
        let t = id3v2_at(&mut s, 0).unwrap().unwrap();
        let mut w = FrameWalk::new(&mut s, &t).unwrap().unwrap();
        let tag = w.next(&mut s, 1000).unwrap().unwrap();
        assert_eq!(tag.name, Some("title"));
        assert_eq!(tag.value, TagValue::Text("abc"));
        assert!(w.next(&mut s, 1000).unwrap().is_none());
    }
}
