//! Chapters from the Nero chapter list, `moov/udta/chpl` (as ffmpeg's
//! `mov_read_chpl` reads it): version (1 byte), flags (3), a 4-byte field
//! when the version is not 0, a chapter count (1 byte), then per chapter a
//! start time (8 bytes, in 100 ns units), a title length (1 byte) and the
//! title. Chapters have no end here; ids are their index from 0.
//!
//! A count that runs past the box ends the walk at the box's end (ffmpeg
//! reads on into the next box). A QuickTime chapter track replaces these
//! entries index by index (`chapter_track.rs`).

use super::boxes::read_box_header;
use super::demuxer::TagBoxes;
use crate::chapters::{title, Chapter, ChapterCursor};
use crate::error::Result;
use crate::source::Source;
use crate::types::Rational;

/// `chpl` times are in units of 100 ns.
const HUNDRED_NS: Rational = Rational {
    num: 1,
    den: 10_000_000,
};

/// Children of `udta` looked at for `chpl`.
const MAX_UDTA_CHILDREN: u32 = 256;

/// The next `chpl` entry. `cur.stage` is 0 before the box is found, then
/// 1 plus the declared count; `cur.index` counts the entries given.
pub(super) fn next<'s, S: Source>(
    boxes: &TagBoxes,
    src: &'s mut S,
    cur: &mut ChapterCursor,
) -> Result<Option<Chapter<'s>>> {
    if cur.stage == 0 {
        cur.stage = 1;
        let Some((body, end)) = find_chpl(src, boxes)? else {
            return Ok(None);
        };
        let Ok([version]) = src.array::<1>(body) else {
            return Ok(None);
        };
        let count_at = body + if version == 0 { 4 } else { 8 };
        if count_at >= end {
            return Ok(None);
        }
        let [count] = src.array::<1>(count_at)?;
        cur.stage = 1 + u32::from(count);
        cur.offset = count_at + 1;
        cur.end = end;
    }
    if cur.index + 1 >= u64::from(cur.stage) || cur.offset.saturating_add(9) > cur.end {
        return Ok(None);
    }
    let start = src.u64_be(cur.offset)?;
    let [len] = src.array::<1>(cur.offset + 8)?;
    let at = cur.offset + 9;
    if at + u64::from(len) > cur.end {
        cur.offset = cur.end;
        return Ok(None);
    }
    cur.offset = at + u64::from(len);
    let id = cur.index;
    cur.index += 1;
    let name = if src.is_slice() || usize::from(len) <= src.scratch_len() {
        title(src.bytes(at, usize::from(len))?)
    } else {
        None
    };
    Ok(Some(Chapter {
        id,
        time_base: HUNDRED_NS,
        start,
        end: None,
        title: name,
    }))
}

/// The body and end of `moov/udta/chpl`, if there is one.
fn find_chpl<S: Source>(src: &mut S, boxes: &TagBoxes) -> Result<Option<(u64, u64)>> {
    let Some((mut at, end)) = boxes.udta else {
        return Ok(None);
    };
    for _ in 0..MAX_UDTA_CHILDREN {
        let Ok(h) = read_box_header(src, at, end) else {
            return Ok(None);
        };
        if &h.kind == b"chpl" {
            return Ok(Some((h.body, h.end)));
        }
        if h.end <= at {
            return Ok(None);
        }
        at = h.end;
    }
    Ok(None)
}

#[cfg(test)]
mod tests {
    extern crate std;
    use super::*;
    use crate::SliceSource;
    use std::vec::Vec;

    fn udta(chpl_body: &[u8], declared_extra: u32) -> Vec<u8> {
        let mut v = Vec::new();
        v.extend_from_slice(&(8 + chpl_body.len() as u32 + declared_extra).to_be_bytes());
        v.extend_from_slice(b"chpl");
        v.extend_from_slice(chpl_body);
        v
    }

    fn entry(start: u64, t: &str) -> Vec<u8> {
        let mut v = start.to_be_bytes().to_vec();
        v.push(t.len() as u8);
        v.extend_from_slice(t.as_bytes());
        v
    }

    fn walk(b: &[u8]) -> Vec<(u64, u64, Option<std::string::String>)> {
        let boxes = TagBoxes {
            udta: Some((0, b.len() as u64)),
            ..TagBoxes::default()
        };
        let mut src = SliceSource::new(b);
        let mut cur = ChapterCursor::default();
        let mut out = Vec::new();
        while let Some(c) = next(&boxes, &mut src, &mut cur).unwrap() {
            assert_eq!(c.time_base.den, 10_000_000);
            out.push((c.id, c.start, c.title.map(std::string::String::from)));
        }
        out
    }

    #[test]
    fn entries() {
        let mut body = std::vec![1, 0, 0, 0, 0, 0, 0, 0, 2];
        body.extend(entry(0, "Intro"));
        body.extend(entry(4_000_000, ""));
        assert_eq!(
            walk(&udta(&body, 0)),
            [(0, 0, Some("Intro".into())), (1, 4_000_000, Some("".into()))]
        );
    }

    #[test]
    fn malformed() {
        // A count past the box: the entries in it, then the end.
        let mut body = std::vec![0, 0, 0, 0, 200];
        body.extend(entry(5, "a"));
        assert_eq!(walk(&udta(&body, 0)), [(0, 5, Some("a".into()))]);
        // A title running past the box; a box too short for its count; a
        // box claiming more than udta: no panic.
        let mut body = std::vec![0, 0, 0, 0, 1];
        body.extend(entry(5, "abc"));
        body.truncate(body.len() - 1);
        assert!(walk(&udta(&body, 0)).is_empty());
        assert!(walk(&udta(&[0, 0], 0)).is_empty());
        assert!(walk(&udta(&[0, 0, 0, 0, 3], 50)).is_empty());
        assert!(walk(&[0, 0, 0, 1]).is_empty());
    }
}
