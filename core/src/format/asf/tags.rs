//! Tags: the Content Description fields (ASF Specification rev 1.20
//! §3.10), the attributes of the Extended Content Description (§3.11) and
//! Metadata (Library) objects (§4.7, §4.8), and the title and kind of each
//! attached picture, decoded into the source's scratch.

use super::attributes::{Descriptor, Descriptors, TagObject};
use super::codec_ids;
use super::demuxer::AsfDemuxer;
use super::layout::ContentDescriptionFixed;
use super::text;
use crate::error::Result;
use crate::format::traits::Context;
use crate::source::Source;
use crate::tags::{Tag, TagCursor, TagKey, TagScope, TagValue};
use crate::types::ByteRange;

/// Most tag-bearing objects (content description, extended content
/// description, metadata, metadata library) remembered for `next_tag`.
pub const MAX_TAG_OBJECTS: usize = 8;

/// Steps of one `next_tag` call (objects started, fields and attributes
/// passed over) before it gives up and ends the walk. Every step advances
/// the cursor, and an object holds at most 65,535 attributes, so
/// [`MAX_TAG_OBJECTS`] objects and [`super::MAX_PICTURES`] pictures take far
/// fewer; the bound only keeps a walk over a corrupt cursor finite.
const MAX_TAG_STEPS: u32 = 1_000_000;

/// Tag cursor stages: pictures, done, then one per tag object.
const STAGE_PICTURES: u32 = 1;
const STAGE_DONE: u32 = 2;
const STAGE_OBJECTS: u32 = 16;

/// Content Description fields (§3.10) with the keys ffmpeg gives them.
const CONTENT_KEYS: [(&str, &str); 4] = [
    ("title", "title"),
    ("author", "artist"),
    ("copyright", "copyright"),
    ("comment", "comment"),
];

/// ffmpeg's `ff_asf_metadata_conv`: ASF attribute names and the common
/// names ffprobe shows for them (compared case-insensitively).
const TAG_NAMES: [(&str, &str); 16] = [
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
fn tag_name(key: &str) -> Option<&'static str> {
    TAG_NAMES
        .iter()
        .find(|(k, _)| k.eq_ignore_ascii_case(key))
        .map(|&(_, n)| n)
}

/// An attribute value as decoded.
#[derive(Debug, Clone, Copy)]
enum Value {
    Int(i64),
    /// UTF-8 length of the text after the key in scratch.
    Text(usize),
}

impl Value {
    fn len(&self) -> usize {
        match self {
            Value::Int(_) => 0,
            Value::Text(n) => *n,
        }
    }
}

/// A tag found by one step of the walk, its text already in scratch.
enum Found {
    /// A Content Description field of `len` UTF-8 bytes.
    Content {
        key: &'static str,
        name: &'static str,
        len: usize,
    },
    /// An attribute: key of `klen` UTF-8 bytes, then the value.
    Attribute { klen: usize, value: Value },
    /// The picture type of an attached picture.
    PictureKind { track: usize, kind: &'static str },
    /// The description of an attached picture, `len` UTF-8 bytes.
    PictureTitle { track: usize, len: usize },
}

/// What one step of the tag walk gives.
enum Walk {
    Continue,
    End,
    Found(Found),
}

/// The tag that `f` describes, borrowing its text from scratch.
fn found_tag<S: Source>(src: &S, f: Found) -> Result<Tag<'_>> {
    Ok(match f {
        Found::Content { key, name, len } => Tag {
            scope: TagScope::Format,
            key: TagKey::Text(key),
            name: Some(name),
            value: TagValue::Text(core::str::from_utf8(S::joined(src, len)?).unwrap_or("")),
        },
        Found::Attribute { klen, value } => {
            let all = S::joined(src, klen + value.len())?;
            let (k, v) = all.split_at(klen.min(all.len()));
            let k = core::str::from_utf8(k).unwrap_or("");
            let value = match value {
                Value::Int(i) => TagValue::Int(i),
                Value::Text(_) => TagValue::Text(core::str::from_utf8(v).unwrap_or("")),
            };
            Tag {
                scope: TagScope::Format,
                key: TagKey::Text(k),
                name: tag_name(k),
                value,
            }
        }
        Found::PictureKind { track, kind } => Tag {
            scope: TagScope::Track(track),
            key: TagKey::Text("comment"),
            name: Some("comment"),
            value: TagValue::Text(kind),
        },
        Found::PictureTitle { track, len } => Tag {
            scope: TagScope::Track(track),
            key: TagKey::Text("title"),
            name: Some("title"),
            value: TagValue::Text(core::str::from_utf8(S::joined(src, len)?).unwrap_or("")),
        },
    })
}

impl AsfDemuxer {
    /// Remembers the tag object whose body is `body..end` (cut at the end
    /// of the input) for the tag walk.
    pub(super) fn remember_tags(
        &mut self,
        ctx: &mut Context,
        kind: TagObject,
        body: u64,
        end: u64,
        file_len: u64,
        at: u64,
    ) {
        let end = end.min(file_len);
        if end <= body {
            return;
        }
        let r = ByteRange {
            offset: body,
            len: (end - body).min(u32::MAX as u64) as u32,
        };
        if self.tag_objects.push((kind, r)).is_err() {
            ctx.diags.report("asf.tag-object-capacity", at);
        }
    }

    /// The tag walk: content description fields, then attributes of the
    /// extended content description and metadata objects, then the title
    /// and kind of each attached picture.
    ///
    /// Text is decoded into the source's scratch: a tag whose UTF-8 key and
    /// value do not fit there is skipped. Byte-array and GUID attributes are
    /// skipped (ffmpeg skips them too; `WM/Picture` becomes a track).
    pub(super) fn tag_walk<'s, S: Source>(
        &mut self,
        src: &'s mut S,
        ctx: &Context,
        cur: &mut TagCursor,
    ) -> Result<Option<Tag<'s>>> {
        let mut steps = 0u32;
        loop {
            steps += 1;
            if steps > MAX_TAG_STEPS {
                return Ok(None);
            }
            let walk = if cur.stage == 0 {
                cur.stage = STAGE_OBJECTS;
                cur.end = u64::MAX;
                cur.offset = 0;
                Walk::Continue
            } else if cur.stage >= STAGE_OBJECTS {
                self.object_step(src, ctx, cur)?
            } else if cur.stage == STAGE_PICTURES {
                self.picture_step(src, cur)?
            } else {
                Walk::End
            };
            match walk {
                Walk::Continue => {}
                Walk::End => return Ok(None),
                Walk::Found(f) => return found_tag(&*src, f).map(Some),
            }
        }
    }

    /// One step in tag object `cur.stage - STAGE_OBJECTS`: `cur.end` is
    /// `u64::MAX` before it starts, then the attributes left; `cur.offset`
    /// is the next content field index or attribute position.
    fn object_step<S: Source>(&mut self, src: &mut S, ctx: &Context, cur: &mut TagCursor) -> Result<Walk> {
        let index = (cur.stage - STAGE_OBJECTS) as usize;
        let Some(&(kind, range)) = self.tag_objects.get(index) else {
            cur.stage = STAGE_PICTURES;
            cur.offset = 0;
            return Ok(Walk::Continue);
        };
        let obj_end = range.offset + range.len as u64;
        if cur.end == u64::MAX {
            if kind == TagObject::Content {
                cur.offset = 0;
                cur.end = 0;
            } else {
                let it = Descriptors::new(src, kind, range.offset, obj_end)?;
                cur.offset = it.at;
                cur.end = it.left as u64;
            }
            return Ok(Walk::Continue);
        }
        if kind == TagObject::Content {
            return content_step(src, ctx, cur, range);
        }
        let mut it = Descriptors::resume(kind, cur.offset, obj_end, cur.end as u32);
        let Some(dsc) = it.next(src)? else {
            cur.stage += 1;
            cur.end = u64::MAX;
            return Ok(Walk::Continue);
        };
        cur.offset = it.at;
        cur.end = it.left as u64;
        Ok(match self.attribute(src, ctx, kind, dsc)? {
            Some((klen, value)) => Walk::Found(Found::Attribute { klen, value }),
            None => Walk::Continue,
        })
    }

    /// One step over the attached pictures: `cur.offset` counts two tags a
    /// picture, its title then its kind.
    fn picture_step<S: Source>(&self, src: &mut S, cur: &mut TagCursor) -> Result<Walk> {
        let i = (cur.offset / 2) as usize;
        let second = cur.offset % 2 == 1;
        cur.offset += 1;
        let Some(p) = self.pictures.get(i).copied() else {
            cur.stage = STAGE_DONE;
            return Ok(Walk::Continue);
        };
        if second {
            let kind = codec_ids::PICTURE_TYPES
                .get(p.kind as usize)
                .copied()
                .unwrap_or("Other");
            return Ok(Walk::Found(Found::PictureKind { track: p.track, kind }));
        }
        if p.desc.len == 0 {
            return Ok(Walk::Continue);
        }
        let Some(len) = text::utf16_to_scratch(src, p.desc.offset, p.desc.len, 0)? else {
            return Ok(Walk::Continue);
        };
        Ok(Walk::Found(Found::PictureTitle { track: p.track, len }))
    }

    /// Decodes one attribute's name and value into scratch. Returns the key
    /// length and the value, or `None` to skip the attribute.
    fn attribute<S: Source>(
        &self,
        src: &mut S,
        ctx: &Context,
        kind: TagObject,
        d: Descriptor,
    ) -> Result<Option<(usize, Value)>> {
        if d.value_len > ctx.limits.max_tag_bytes || d.name_len > ctx.limits.max_tag_bytes {
            return Ok(None);
        }
        let Some(klen) = text::utf16_to_scratch(src, d.name, d.name_len, 0)? else {
            return Ok(None);
        };
        if klen == 0 {
            return Ok(None);
        }
        // ffmpeg takes AspectRatioX/Y as the sample aspect ratio, not as
        // tags, and skips XMP unless asked.
        let k = S::joined(&*src, klen)?;
        if k.starts_with(b"xmp") || k == b"AspectRatioX" || k == b"AspectRatioY" {
            return Ok(None);
        }
        let bool_bytes = if kind == TagObject::Metadata { 2 } else { 4 };
        let int_len = match d.kind {
            0 => {
                let Some(vlen) = text::utf16_to_scratch(src, d.value, d.value_len, klen)? else {
                    return Ok(None);
                };
                if vlen == 0 {
                    return Ok(None);
                }
                return Ok(Some((klen, Value::Text(vlen))));
            }
            2 => bool_bytes,
            3 => 4,
            4 => 8,
            5 => 2,
            _ => return Ok(None),
        };
        if d.value_len < int_len {
            return Ok(None);
        }
        let mut b = [0u8; 8];
        src.read_exact_at(d.value, b.get_mut(..int_len as usize).unwrap_or(&mut []))?;
        let v = u64::from_le_bytes(b);
        Ok(Some((klen, Value::Int(v.min(i64::MAX as u64) as i64))))
    }
}

/// One Content Description field (§3.10): five WORD lengths, then the
/// strings in order; `cur.offset` is the field index.
fn content_step<S: Source>(src: &mut S, ctx: &Context, cur: &mut TagCursor, range: ByteRange) -> Result<Walk> {
    let obj_end = range.offset + range.len as u64;
    let field = cur.offset as usize;
    let Some(&(key, name)) = CONTENT_KEYS.get(field) else {
        cur.stage += 1;
        cur.end = u64::MAX;
        return Ok(Walk::Continue);
    };
    cur.offset += 1;
    let lens = src.read::<ContentDescriptionFixed>(range.offset)?;
    let len_of = |i: usize| lens.lens.get(i).map_or(0, |l| l.get() as u64);
    let mut at = range.offset + core::mem::size_of::<ContentDescriptionFixed>() as u64;
    for i in 0..field {
        at += len_of(i);
    }
    let len = len_of(field);
    if len == 0 || at + len > obj_end || len > ctx.limits.max_tag_bytes as u64 {
        return Ok(Walk::Continue);
    }
    let Some(n) = text::utf16_to_scratch(src, at, len as u32, 0)? else {
        return Ok(Walk::Continue);
    };
    if n == 0 {
        return Ok(Walk::Continue);
    }
    Ok(Walk::Found(Found::Content { key, name, len: n }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names() {
        assert_eq!(tag_name("author"), Some("artist"));
        assert_eq!(tag_name("WM/TrackNumber"), Some("track"));
        assert_eq!(tag_name("WM/Track"), None);
    }
}
