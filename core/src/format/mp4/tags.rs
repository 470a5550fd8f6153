//! ISO BMFF tags: `ftyp` brands, iTunes `ilst` items (with QuickTime `mdta`
//! keys) and QuickTime/3GPP `udta` strings, named as ffprobe names them
//! (ffmpeg `mov.c`, `mov_read_udta_string`).

use super::boxes::{read_box_header, soft, BoxHeader};
use super::demuxer::TagBoxes;
use crate::error::Result;
use crate::format::traits::Context;
use crate::source::Source;
use crate::tags::{text_or_bytes, Tag, TagCursor, TagKey, TagScope, TagValue};
use core::fmt::Write;

/// ffprobe's name for an `ilst` or `udta` atom.
pub(crate) fn atom_name(k: &[u8; 4]) -> Option<&'static str> {
    Some(match k {
        b"\xa9nam" => "title",
        b"\xa9ART" => "artist",
        b"aART" => "album_artist",
        b"\xa9alb" => "album",
        b"\xa9day" => "date",
        b"\xa9gen" | b"gnre" => "genre",
        b"\xa9cmt" => "comment",
        b"\xa9wrt" => "composer",
        b"\xa9too" | b"\xa9enc" | b"\xa9swr" => "encoder",
        b"\xa9cpy" | b"cprt" => "copyright",
        b"desc" => "description",
        b"ldes" => "synopsis",
        b"trkn" => "track",
        b"disk" => "disc",
        b"\xa9grp" => "grouping",
        b"\xa9lyr" => "lyrics",
        b"tvsh" => "show",
        b"tven" => "episode_id",
        b"tvnn" => "network",
        b"\xa9xyz" => "location",
        b"\xa9mak" => "make",
        b"\xa9mod" => "model",
        b"\xa9inf" => "comment",
        b"\xa9aut" | b"auth" => "artist",
        b"\xa9dir" => "director",
        b"\xa9prd" => "producer",
        b"soal" => "sort_album",
        b"soar" => "sort_artist",
        b"soaa" => "sort_album_artist",
        b"sonm" => "sort_name",
        b"soco" => "sort_composer",
        b"sosn" => "sort_show",
        b"cpil" => "compilation",
        b"pgap" => "gapless_playback",
        b"hdvd" => "hd_video",
        b"stik" => "media_type",
        b"rtng" => "rating",
        b"tmpo" => "tmpo",
        b"purd" => "purchase_date",
        b"titl" => "title",
        b"perf" => "artist",
        b"dscp" => "description",
        b"albm" => "album",
        b"yrrc" => "date",
        b"kywd" => "keywords",
        _ => return None,
    })
}

/// Stages of the walk.
const FTYP: u32 = 0;
const MINOR: u32 = 1;
const BRANDS: u32 = 2;
const ILST_START: u32 = 3;
const ILST: u32 = 4;
const UDTA_START: u32 = 5;
const UDTA: u32 = 6;
const DONE: u32 = 7;

/// A tag found by the walk, before it borrows the input or the key buffer.
enum Found {
    /// A tag that borrows nothing.
    Whole(Tag<'static>),
    /// A tag whose value is `len` bytes of the input at `at`: text when
    /// `text` (bytes if not UTF-8), else bytes. When `key_in_buf`, the key
    /// is the text in the key buffer.
    Input {
        key: TagKey<'static>,
        key_in_buf: bool,
        name: Option<&'static str>,
        at: u64,
        len: usize,
        text: bool,
    },
    /// A tag whose key text (when the key is text) is the key buffer up to
    /// `split`, and whose value is `value` or else the text after `split`.
    Buffered {
        key: TagKey<'static>,
        name: Option<&'static str>,
        split: usize,
        value: Option<TagValue<'static>>,
    },
}

/// The next tag of an ISO BMFF file.
pub(crate) fn next_tag<'s, S: Source>(
    boxes: &TagBoxes,
    key_buf: &'s mut heapless::String<64>,
    src: &'s mut S,
    ctx: &Context,
    cur: &mut TagCursor,
) -> Result<Option<Tag<'s>>> {
    let Some(found) = find_next(boxes, key_buf, src, ctx, cur)? else {
        return Ok(None);
    };
    Ok(Some(match found {
        Found::Whole(tag) => tag,
        Found::Input {
            key,
            key_in_buf,
            name,
            at,
            len,
            text,
        } => {
            let bytes = src.bytes(at, len)?;
            let value = if text {
                text_or_bytes(bytes)
            } else {
                TagValue::Bytes(bytes)
            };
            if key_in_buf {
                finish(key, name, key_buf, key_buf.len(), Some(value))
            } else {
                Tag {
                    scope: TagScope::Format,
                    key,
                    name,
                    value,
                }
            }
        }
        Found::Buffered {
            key,
            name,
            split,
            value,
        } => finish(key, name, key_buf, split, value),
    }))
}

/// Walks the stages to the next tag.
fn find_next<S: Source>(
    boxes: &TagBoxes,
    key_buf: &mut heapless::String<64>,
    src: &mut S,
    ctx: &Context,
    cur: &mut TagCursor,
) -> Result<Option<Found>> {
    let max = ctx.limits.max_tag_bytes as u64;
    loop {
        let found = match cur.stage {
            FTYP | MINOR | BRANDS => ftyp_tag(boxes, src, cur)?,
            ILST_START => {
                if let Some((b, e)) = boxes.ilst {
                    cur.offset = b;
                    cur.end = e;
                    cur.stage = ILST;
                } else {
                    cur.stage = UDTA_START;
                }
                None
            }
            ILST => ilst_item(boxes, key_buf, src, max, cur)?,
            UDTA_START => {
                if let Some((b, e)) = boxes.udta {
                    cur.offset = b;
                    cur.end = e;
                    cur.stage = UDTA;
                } else {
                    cur.stage = DONE;
                }
                None
            }
            UDTA => udta_item(src, max, cur)?,
            _ => return Ok(None),
        };
        if found.is_some() {
            return Ok(found);
        }
    }
}

/// The `ftyp` stages: major brand, minor version, compatible brands.
fn ftyp_tag<S: Source>(boxes: &TagBoxes, src: &mut S, cur: &mut TagCursor) -> Result<Option<Found>> {
    let Some(f) = boxes.ftyp else {
        cur.stage = ILST_START;
        return Ok(None);
    };
    let stage = cur.stage;
    cur.stage += 1;
    if f.len < 8 {
        cur.stage = ILST_START;
        return Ok(None);
    }
    let brands = |name, at, len| Found::Input {
        key: TagKey::Text(name),
        key_in_buf: false,
        name: Some(name),
        at,
        len,
        text: true,
    };
    Ok(Some(match stage {
        FTYP => brands("major_brand", f.offset, 4),
        MINOR => {
            let v = src.u32_be(f.offset + 4)?;
            Found::Whole(format_tag("minor_version", TagValue::Int(v as i64)))
        }
        _ => brands("compatible_brands", f.offset + 8, (f.len - 8) as usize),
    }))
}

/// The next box of the list at `cur` (`ilst` items, `udta` strings),
/// advancing `cur` past it; at the end of the list or at a damaged header,
/// moves on to stage `next` and returns `None`.
fn next_box<S: Source>(src: &mut S, cur: &mut TagCursor, next: u32) -> Result<Option<BoxHeader>> {
    if cur.offset.saturating_add(8) > cur.end {
        cur.stage = next;
        return Ok(None);
    }
    let Some(b) = soft(read_box_header(src, cur.offset, cur.end))? else {
        cur.stage = next;
        return Ok(None);
    };
    cur.offset = if b.end > cur.offset { b.end } else { cur.end };
    Ok(Some(b))
}

/// The next item of `ilst`: `None` when it gives no tag (or the list ends).
fn ilst_item<S: Source>(
    boxes: &TagBoxes,
    key_buf: &mut heapless::String<64>,
    src: &mut S,
    max: u64,
    cur: &mut TagCursor,
) -> Result<Option<Found>> {
    let Some(item) = next_box(src, cur, UDTA_START)? else {
        return Ok(None);
    };
    // The item holds a `data` box: size, 'data', type (4), locale (4).
    let Some(data) = soft(read_box_header(src, item.body, item.end))? else {
        return Ok(None);
    };
    if &data.kind != b"data" || data.body_len() < 8 || data.body_len() - 8 > max {
        return Ok(None);
    }
    let ty = src.u32_be(data.body)? & 0xFF_FFFF;
    let vlen = (data.body_len() - 8) as usize;
    let vat = data.body + 8;
    // Key: a FourCC, or a 1-based index into `keys` (mdta).
    let mut key = TagKey::FourCc(item.kind);
    let mut name = atom_name(&item.kind);
    if let Some((kb, ke)) = boxes.keys {
        let idx = u32::from_be_bytes(item.kind);
        if (1..0x1000).contains(&idx) {
            key_buf.clear();
            if copy_key(src, kb, ke, idx, key_buf)? {
                key = TagKey::Text("");
                name = None;
            }
        }
    }
    let value = match (ty, &item.kind) {
        (0, b"trkn") | (0, b"disk") if vlen >= 6 => {
            let b: [u8; 6] = src.array(vat)?;
            let n = u16::from_be_bytes([b[2], b[3]]);
            let total = u16::from_be_bytes([b[4], b[5]]);
            if matches!(key, TagKey::FourCc(_)) {
                key_buf.clear();
            }
            // The numbers go after any key text in the buffer.
            let split = key_buf.len();
            let _ = if total > 0 {
                write!(key_buf, "{n}/{total}")
            } else {
                write!(key_buf, "{n}")
            };
            return Ok(Some(Found::Buffered {
                key,
                name,
                split,
                value: None,
            }));
        }
        (21, _) | (22, _) if (1..=8).contains(&vlen) => {
            let mut b = [0u8; 8];
            src.read_exact_at(vat, b.get_mut(..vlen).unwrap_or(&mut []))?;
            let mut v: i64 = 0;
            for (i, x) in b.iter().take(vlen).enumerate() {
                if i == 0 && ty == 21 && x & 0x80 != 0 {
                    v = -1;
                }
                v = (v << 8) | *x as i64;
            }
            Some(TagValue::Int(v))
        }
        _ => None,
    };
    if let Some(v) = value {
        let split = key_buf.len();
        return Ok(Some(Found::Buffered {
            key,
            name,
            split,
            value: Some(v),
        }));
    }
    Ok(Some(Found::Input {
        key,
        key_in_buf: matches!(key, TagKey::Text(_)),
        name,
        at: vat,
        len: vlen,
        text: ty == 1,
    }))
}

/// The next string of `udta`: `None` when it gives no tag (or `udta` ends).
fn udta_item<S: Source>(src: &mut S, max: u64, cur: &mut TagCursor) -> Result<Option<Found>> {
    let Some(b) = next_box(src, cur, DONE)? else {
        return Ok(None);
    };
    let k = b.kind;
    if atom_name(&k).is_none() || b.body_len() < 4 || b.body_len() > max {
        return Ok(None);
    }
    let text = |at, len| Found::Input {
        key: TagKey::FourCc(k),
        key_in_buf: false,
        name: atom_name(&k),
        at,
        len,
        text: true,
    };
    if k[0] == 0xA9 {
        // QuickTime international text: u16 length, u16 language.
        let h: [u8; 4] = src.array(b.body)?;
        let len = (u16::from_be_bytes([h[0], h[1]]) as u64).min(b.body_len() - 4);
        return Ok(Some(text(b.body + 4, len as usize)));
    }
    // 3GPP asset (TS 26.244 §8): full box, packed language, text.
    if b.body_len() > 6 && !matches!(&k, b"yrrc" | b"gnre" | b"trkn" | b"disk") {
        return Ok(Some(text(b.body + 6, (b.body_len() - 6) as usize)));
    }
    Ok(None)
}

fn format_tag<'a>(name: &'static str, value: TagValue<'a>) -> Tag<'a> {
    Tag {
        scope: TagScope::Format,
        key: TagKey::Text(name),
        name: Some(name),
        value,
    }
}

/// Builds a tag whose key text is `buf[..split]` (when the key is text) and
/// whose value is `value` or else the text `buf[split..]`.
fn finish<'s>(
    key: TagKey<'s>,
    name: Option<&'static str>,
    buf: &'s heapless::String<64>,
    split: usize,
    value: Option<TagValue<'s>>,
) -> Tag<'s> {
    let s = buf.as_str();
    let key = match key {
        TagKey::Text(_) => TagKey::Text(s.get(..split).unwrap_or("")),
        k => k,
    };
    let value = value.unwrap_or(TagValue::Text(s.get(split..).unwrap_or("")));
    Tag {
        scope: TagScope::Format,
        key,
        name,
        value,
    }
}

/// Copies the name of key `idx` (1-based) of a `keys` box into `out`.
/// Returns false when there is no such key.
fn copy_key<S: Source>(src: &mut S, body: u64, end: u64, idx: u32, out: &mut heapless::String<64>) -> Result<bool> {
    let count = src.u32_be(body + 4)?;
    if idx > count {
        return Ok(false);
    }
    let mut at = body + 8;
    for i in 1..=idx {
        if at.saturating_add(8) > end {
            return Ok(false);
        }
        let size = src.u32_be(at)? as u64;
        if size < 8 {
            return Ok(false);
        }
        if i == idx {
            let mut b = [0u8; 64];
            let n = (size - 8).min(64) as usize;
            let dst = b.get_mut(..n).unwrap_or(&mut []);
            src.read_exact_at(at + 8, dst)?;
            match core::str::from_utf8(dst) {
                Ok(s) => {
                    let _ = out.push_str(s);
                    return Ok(true);
                }
                Err(_) => return Ok(false),
            }
        }
        at = at.saturating_add(size);
    }
    Ok(false)
}
