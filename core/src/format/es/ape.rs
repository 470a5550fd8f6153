//! APEv2 tag items (APE tag specification v2.0, "APE Tag Item"), read in
//! place: each item is a 32-bit value size, 32-bit flags, a key of ASCII
//! ending in NUL, and the value. Text items (flags bits 1-2 = 0) are given
//! as tags under their key as stored, as ffmpeg's `apetag.c` puts them in
//! the format's metadata; binary items (cover art) are skipped.

use crate::error::Result;
use crate::format::traits::Context;
use crate::source::Source;
use crate::tags::{Tag, TagCursor, TagKey, TagScope, TagValue};

/// Bytes of an item's size and flags.
const ITEM_HEADER: u64 = 8;
/// The longest key (APEv2: 2 to 255 characters) and its NUL.
const MAX_KEY: u64 = 256;
/// Most items walked: a bound on the work for a tag of empty items.
const MAX_ITEMS: u32 = 1024;

/// The next text item of the trailing APEv2 tag, if the input has one
/// (`items`: `id3::Trailer::ape_items`): the format tags of WavPack,
/// Monkey's Audio and Musepack, with `Limits::max_tag_bytes` in force.
pub fn next_trailer_item<'s, S: Source>(
    src: &'s mut S,
    items: Option<(u64, u64, u32)>,
    ctx: &Context,
    cur: &mut TagCursor,
) -> Result<Option<Tag<'s>>> {
    match items {
        Some(items) => next_item(src, items, ctx.limits.max_tag_bytes, cur),
        None => Ok(None),
    }
}

/// The next text item of the APEv2 tag whose items run from `items.0` to
/// `items.1` (see `id3::Trailer::ape_items`), `None` after the last.
/// `cur.offset` is the next item (0 before the first), `cur.end` the items
/// walked. Values over `max` bytes are skipped; a malformed item ends the
/// walk (ffmpeg stops there too).
pub fn next_item<'s, S: Source>(
    src: &'s mut S,
    items: (u64, u64, u32),
    max: u32,
    cur: &mut TagCursor,
) -> Result<Option<Tag<'s>>> {
    let (start, end, count) = items;
    if cur.offset == 0 {
        cur.offset = start;
    }
    // Find the next text item first, then borrow it (the borrow must not
    // be taken inside the loop).
    let Some((key_at, key_len, size)) = find_text_item(src, end, count, max, cur)? else {
        return Ok(None);
    };
    let b = src.bytes(key_at, (key_len + 1 + size) as usize)?;
    let Some((k, rest)) = b.split_at_checked(key_len as usize) else {
        return Ok(None);
    };
    let value = rest.get(1..).unwrap_or(&[]);
    let (Ok(k), Ok(v)) = (core::str::from_utf8(k), core::str::from_utf8(value)) else {
        // Checked by `find_text_item`.
        return Ok(None);
    };
    Ok(Some(Tag {
        scope: TagScope::Format,
        key: TagKey::Text(k),
        name: None,
        value: TagValue::Text(v),
    }))
}

/// The next text item from `cur.offset` whose key and value are UTF-8 and
/// whose value is at most `max` bytes: its key offset, key length and value
/// size. `None` after the last item or at a malformed one.
fn find_text_item<S: Source>(
    src: &mut S,
    end: u64,
    count: u32,
    max: u32,
    cur: &mut TagCursor,
) -> Result<Option<(u64, u64, u64)>> {
    loop {
        let at = cur.offset;
        if cur.end >= u64::from(count.min(MAX_ITEMS)) || at.saturating_add(ITEM_HEADER) > end {
            return Ok(None);
        }
        cur.end += 1;
        let head: [u8; 8] = src.array(at)?;
        let [s0, s1, s2, s3, f0, f1, f2, f3] = head;
        let size = u64::from(u32::from_le_bytes([s0, s1, s2, s3]));
        let flags = u32::from_le_bytes([f0, f1, f2, f3]);
        let key_at = at + ITEM_HEADER;
        let mut key = [0u8; MAX_KEY as usize];
        let n = MAX_KEY.min(end - key_at) as usize;
        let key = key.get_mut(..n).unwrap_or(&mut []);
        src.read_exact_at(key_at, key)?;
        let Some(key_len) = key.iter().position(|&b| b == 0) else {
            return Ok(None);
        };
        let key_ok = key_len >= 2 && core::str::from_utf8(key.get(..key_len).unwrap_or(&[])).is_ok();
        let key_len = key_len as u64;
        let value_at = key_at + key_len + 1;
        if value_at.saturating_add(size) > end {
            return Ok(None);
        }
        cur.offset = value_at + size;
        if flags & 6 != 0 || size > u64::from(max) || !key_ok {
            continue;
        }
        let value = src.bytes(value_at, size as usize)?;
        if core::str::from_utf8(value).is_ok() {
            return Ok(Some((key_at, key_len, size)));
        }
    }
}
