//! ID3v2 (2.2, 2.3, 2.4), ID3v1/1.1, APEv2 and Lyrics3v2 tags around
//! elementary audio streams: found, measured and skipped, never copied.
//!
//! References: ID3 tag version 2.4.0 – Main Structure (§3.1 header, §3.2
//! extended header, §3.4 footer, §6.2 synchsafe integers, §4 frames); ID3v2.3.0
//! and ID3v2.2.0 informal standards (frame headers of 10 and 6 bytes); ID3v1
//! (128 bytes, `TAG`); APEv2 tag footer (32 bytes, `APETAGEX`); Lyrics3 v2.00
//! (`LYRICSBEGIN` … size(6) `LYRICS200`).

use crate::error::Result;
use crate::format::traits::Context;
use crate::source::Source;
use crate::tags::{text_or_bytes, Tag, TagKey, TagScope, TagValue};
use crate::types::{ByteRange, Codec, Packet, PacketFlags, Rational, Track, TrackKind};

/// Size of an ID3v2 header (and footer).
pub const ID3V2_HEADER: u64 = 10;
/// Size of an ID3v1 tag.
pub const ID3V1_LEN: u64 = 128;
/// Size of an APEv2 footer.
pub const APE_FOOTER: u64 = 32;

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

/// Parses an ID3v2 header (ID3v2.4 §3.1), with ffmpeg's acceptance rule:
/// `ID3`, version and revision not 0xFF, and a synchsafe size.
pub fn parse_id3v2_header(b: &[u8; 10], offset: u64) -> Option<Id3v2> {
    if &b[..3] != b"ID3" || b[3] == 0xFF || b[4] == 0xFF || b[6..10].iter().any(|&x| x & 0x80 != 0) {
        return None;
    }
    let size = ((b[6] as u64) << 21) | ((b[7] as u64) << 14) | ((b[8] as u64) << 7) | b[9] as u64;
    // The footer (§3.4) exists in version 4 only.
    let footer = if b[3] == 4 && b[5] & 0x10 != 0 { 10 } else { 0 };
    Some(Id3v2 {
        offset,
        major: b[3],
        flags: b[5],
        size,
        total: ID3V2_HEADER + size + footer,
    })
}

/// Reads the ID3v2 tag at `at`, if there is one.
pub fn id3v2_at<S: Source>(src: &mut S, at: u64) -> Result<Option<Id3v2>> {
    let mut b = [0u8; 10];
    if src.read_at(at, &mut b)? < 10 {
        return Ok(None);
    }
    Ok(parse_id3v2_header(&b, at))
}

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

/// Trailing tags found at the end of the input.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Trailer {
    /// Offset of an ID3v1 tag (`TAG`, 128 bytes, the last bytes).
    pub id3v1: Option<u64>,
    /// Offset of an APEv2 tag (its header when present, else its items).
    pub ape: Option<u64>,
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
        let f: [u8; 32] = src.array(end - APE_FOOTER)?;
        if &f[..8] == b"APETAGEX" {
            let size = u32::from_le_bytes([f[12], f[13], f[14], f[15]]) as u64;
            let flags = u32::from_le_bytes([f[20], f[21], f[22], f[23]]);
            let header = if flags & 0x8000_0000 != 0 { APE_FOOTER } else { 0 };
            let total = size + header;
            if size >= APE_FOOTER && end >= start.saturating_add(total) {
                end -= total;
                t.ape = Some(end);
            }
        }
    }
    t.audio_end = end;
    Ok(t)
}

/// The common name ffprobe gives an ID3v2 frame id (ffmpeg `id3v2.c`
/// conversion table, 2.3/2.4 and 2.2 ids).
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
                ((b[0] as u64 & 0x7F) << 21) | ((b[1] as u64 & 0x7F) << 14) | ((b[2] as u64 & 0x7F) << 7) | b[3] as u64
            } else {
                u32::from_be_bytes(b) as u64 + 4
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
        let hlen: u64 = if self.major == 2 { 6 } else { 10 };
        if self.at.saturating_add(hlen) <= self.end {
            let h: [u8; 10] = {
                let mut b = [0u8; 10];
                src.read_at(self.at, b.get_mut(..hlen as usize).unwrap_or(&mut []))?;
                b
            };
            if h[0] == 0 {
                // Padding.
                self.at = self.end;
                return Ok(None);
            }
            let (id, idlen, size, flags) = match self.major {
                2 => (
                    [h[0], h[1], h[2], 0],
                    3usize,
                    u32::from_be_bytes([0, h[3], h[4], h[5]]) as u64,
                    0u16,
                ),
                3 => (
                    [h[0], h[1], h[2], h[3]],
                    4,
                    u32::from_be_bytes([h[4], h[5], h[6], h[7]]) as u64,
                    u16::from_be_bytes([h[8], h[9]]),
                ),
                _ => (
                    [h[0], h[1], h[2], h[3]],
                    4,
                    ((h[4] as u64 & 0x7F) << 21)
                        | ((h[5] as u64 & 0x7F) << 14)
                        | ((h[6] as u64 & 0x7F) << 7)
                        | h[7] as u64,
                    u16::from_be_bytes([h[8], h[9]]),
                ),
            };
            if !id
                .iter()
                .take(idlen)
                .all(|c| c.is_ascii_uppercase() || c.is_ascii_digit())
            {
                self.at = self.end;
                return Ok(None);
            }
            let body = self.at + hlen;
            self.at = body.saturating_add(size);
            if self.at > self.end {
                self.at = self.end;
                return Ok(None);
            }
            // Compressed, encrypted or unsynchronised frames, and frames
            // with a data length indicator, are not read in place.
            let plain = match self.major {
                3 => flags & 0x00C0 == 0,
                4 => flags & 0x000F == 0,
                _ => true,
            };
            return Ok(Some(RawFrame {
                id,
                id_len: idlen as u8,
                body,
                size,
                plain,
            }));
        }
        Ok(None)
    }

    /// The next text frame as a tag, skipping others. `max` is the largest
    /// value returned.
    pub fn next<'s, S: Source>(&mut self, src: &'s mut S, max: u32) -> Result<Option<Tag<'s>>> {
        let mut found = None;
        while let Some(f) = self.next_frame(src)? {
            let texty = f.id[0] == b'T' && f.id[1] != b'X';
            if f.plain && texty && f.size >= 2 && f.size <= max as u64 {
                found = Some(f);
                break;
            }
        }
        let Some(RawFrame {
            id, id_len, body, size, ..
        }) = found
        else {
            return Ok(None);
        };
        let idlen = id_len as usize;
        let b = src.bytes(body, size as usize)?;
        let (enc, text) = b.split_first().map(|(e, t)| (*e, t)).unwrap_or((0, &[]));
        let value = match enc {
            0 | 3 => text_or_bytes(text),
            _ => TagValue::Bytes(text),
        };
        let name = frame_name(id.get(..idlen).unwrap_or(&[]));
        Ok(Some(Tag {
            scope: TagScope::Format,
            key: TagKey::FourCc(id),
            name,
            value,
        }))
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

/// Most attached pictures exposed as video tracks.
pub const MAX_PICTURES: usize = 4;

/// Attached pictures (`APIC`, ID3v2.2 `PIC`) of a tag, exposed as one-packet
/// video tracks as ffmpeg does (disposition `attached_pic`).
#[derive(Debug, Clone, Default)]
pub struct Pictures {
    items: heapless::Vec<(ByteRange, Codec, usize), MAX_PICTURES>,
    next: usize,
}

fn image_codec(mime: &[u8]) -> Codec {
    let eq = |a: &[u8]| mime.eq_ignore_ascii_case(a);
    if eq(b"image/jpeg") || eq(b"image/jpg") || eq(b"JPG") {
        Codec::Mjpeg
    } else if eq(b"image/png") || eq(b"PNG") {
        Codec::Png
    } else {
        Codec::Unknown
    }
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
            let apic = &f.id == b"APIC" || (f.id_len == 3 && &f.id[..3] == b"PIC");
            if !apic || !f.plain || f.size < 4 || out.items.is_full() {
                continue;
            }
            // encoding(1), MIME (NUL-terminated; 3 bytes in 2.2), type(1),
            // description (NUL-terminated, two NULs for UTF-16), data.
            let mut h = [0u8; 256];
            let n = src.read_at(f.body, h.get_mut(..(f.size.min(256) as usize)).unwrap_or(&mut []))?;
            let h = h.get(..n).unwrap_or(&[]);
            let enc = h.first().copied().unwrap_or(0);
            let (mime, after_mime) = if f.id_len == 3 {
                (h.get(1..4).unwrap_or(&[]), 4usize)
            } else {
                let Some(z) = h.iter().skip(1).position(|&c| c == 0) else {
                    continue;
                };
                (h.get(1..1 + z).unwrap_or(&[]), 2 + z)
            };
            let codec = image_codec(mime);
            if codec == Codec::Unknown {
                continue;
            }
            let desc = after_mime + 1;
            let rest = h.get(desc..).unwrap_or(&[]);
            let dlen = if enc == 1 || enc == 2 {
                let Some(z) = rest.chunks(2).position(|c| c == [0, 0]) else {
                    continue;
                };
                z * 2 + 2
            } else {
                let Some(z) = rest.iter().position(|&c| c == 0) else {
                    continue;
                };
                z + 1
            };
            let data = (desc + dlen) as u64;
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
        Ok(Some(Packet {
            track,
            pts: None,
            dts: None,
            duration: None,
            flags: PacketFlags {
                keyframe: true,
                ..PacketFlags::default()
            },
            pos: Some(r.offset),
            contiguous: true,
            data,
        }))
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

/// An ID3v1 field as a tag.
pub fn id3v1_field<'s, S: Source>(src: &'s mut S, at: u64, index: u32) -> Result<Option<Tag<'s>>> {
    // ID3v1: "TAG" title(30) artist(30) album(30) year(4) comment(30) genre(1).
    const FIELDS: [(u64, usize, &str); 5] = [
        (3, 30, "title"),
        (33, 30, "artist"),
        (63, 30, "album"),
        (93, 4, "date"),
        (97, 28, "comment"),
    ];
    let Some(&(off, len, name)) = FIELDS.get(index as usize) else {
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
