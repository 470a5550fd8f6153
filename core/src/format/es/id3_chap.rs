//! ID3v2 Chapter frames (`CHAP`, ID3v2 Chapter Frame Addendum 1.0 §3):
//! the chapters of an MP3 file's first ID3v2 tag, in file order.
//!
//! A `CHAP` body is a NUL-terminated element ID, then start time, end time
//! (milliseconds), start offset and end offset (4 bytes each, big-endian),
//! then sub-frames; the title is the `TIT2` sub-frame when its text is
//! ISO-8859-1 or UTF-8 (read in place), else the element ID, as ffmpeg
//! names a chapter without `TIT2`. A frame that runs past the tag ends the
//! walk ([`FrameWalk::next_frame`]); one too short for its times, or larger
//! than `max_tag_bytes` (or than scratch in reader mode), is skipped.

use super::id3::{FrameWalk, Id3v2};
use crate::bytes::be32;
use crate::chapters::{title, Chapter, ChapterCursor};
use crate::error::Result;
use crate::source::Source;
use crate::types::Rational;

const MILLISECONDS: Rational = Rational { num: 1, den: 1000 };

/// The next `CHAP` frame of `tag` as a chapter; `cur.offset` is the next
/// frame header, `cur.index` the count of chapters given (their ids).
pub(crate) fn next_chapter<'s, S: Source>(
    src: &'s mut S,
    tag: Option<Id3v2>,
    max: u32,
    cur: &mut ChapterCursor,
) -> Result<Option<Chapter<'s>>> {
    let Some(tag) = tag else { return Ok(None) };
    let Some(mut walk) = FrameWalk::new(src, &tag)? else {
        return Ok(None);
    };
    if cur.stage == 0 {
        cur.stage = 1;
    } else {
        walk.at = cur.offset;
    }
    loop {
        let Some(f) = walk.next_frame(src)? else {
            cur.offset = walk.end;
            return Ok(None);
        };
        cur.offset = walk.at;
        if f.id() != b"CHAP"
            || !f.plain
            || f.size > u64::from(max)
            || !(src.is_slice() || f.size as usize <= src.scratch_len())
        {
            continue;
        }
        // Find the title's span before borrowing the body.
        let Some(Spans {
            id_len,
            title_at,
            start,
            end,
        }) = spans(src, f.body, f.size, walk.major)?
        else {
            continue;
        };
        let id = cur.index;
        cur.index += 1;
        let b = src.bytes(f.body, f.size as usize)?;
        let name = match title_at {
            Some((a, z)) => b.get(a..z).and_then(title),
            None => None,
        }
        .or_else(|| b.get(..id_len).and_then(title));
        return Ok(Some(Chapter {
            id,
            time_base: MILLISECONDS,
            start: u64::from(start),
            end: Some(u64::from(end)),
            title: name,
        }));
    }
}

/// What a `CHAP` body holds, found before it is borrowed.
struct Spans {
    /// Length of the element ID (before its NUL).
    id_len: usize,
    /// Span (within the body) of the `TIT2` sub-frame's text, when it is
    /// ISO-8859-1 or UTF-8.
    title_at: Option<(usize, usize)>,
    start: u32,
    end: u32,
}

/// The spans and times of a `CHAP` body; `None` when it is too short for
/// its times or its element ID has no NUL in its first 256 bytes.
fn spans<S: Source>(src: &mut S, body: u64, size: u64, major: u8) -> Result<Option<Spans>> {
    // The element ID: up to its NUL, within the first 256 bytes.
    let mut head = [0u8; 256];
    let n = (size as usize).min(head.len());
    let Some(h) = head.get_mut(..n) else { return Ok(None) };
    src.read_exact_at(body, h)?;
    let Some(id_len) = h.iter().position(|&c| c == 0) else {
        return Ok(None);
    };
    let subs = body + id_len as u64 + 1 + 16;
    if subs > body + size {
        return Ok(None);
    }
    let times: [u8; 8] = src.array(body + id_len as u64 + 1)?;
    let (Some(start), Some(end)) = (be32(&times, 0), be32(&times, 4)) else {
        return Ok(None);
    };
    let mut out = Spans {
        id_len,
        title_at: None,
        start,
        end,
    };
    let mut w = FrameWalk {
        at: subs,
        end: body + size,
        major,
    };
    while let Some(s) = w.next_frame(src)? {
        if s.id() == b"TIT2" && s.plain && s.size >= 1 {
            let [enc] = src.array::<1>(s.body)?;
            if enc == 0 || enc == 3 {
                let a = (s.body + 1 - body) as usize;
                out.title_at = Some((a, a + s.size as usize - 1));
                break;
            }
        }
    }
    Ok(Some(out))
}

#[cfg(test)]
mod tests {
    extern crate std;
    use super::*;
    use crate::SliceSource;
    use std::vec::Vec;

    fn frame(id: &[u8; 4], body: &[u8]) -> Vec<u8> {
        let mut v = id.to_vec();
        v.extend_from_slice(&(body.len() as u32).to_be_bytes());
        v.extend_from_slice(&[0, 0]);
        v.extend_from_slice(body);
        v
    }

    fn chap(eid: &[u8], start: u32, end: u32, subs: &[u8]) -> Vec<u8> {
        let mut b = eid.to_vec();
        b.push(0);
        for x in [start, end, u32::MAX, u32::MAX] {
            b.extend_from_slice(&x.to_be_bytes());
        }
        b.extend_from_slice(subs);
        frame(b"CHAP", &b)
    }

    /// An ID3v2.3 tag of these frames (sizes plain, not synchsafe).
    fn tag(frames: &[Vec<u8>], declared_extra: i64) -> Vec<u8> {
        let body: Vec<u8> = frames.concat();
        let n = (body.len() as i64 + declared_extra) as u32;
        let mut v = b"ID3\x03\x00\x00".to_vec();
        v.extend_from_slice(&[
            (n >> 21) as u8 & 0x7F,
            (n >> 14) as u8 & 0x7F,
            (n >> 7) as u8 & 0x7F,
            n as u8 & 0x7F,
        ]);
        v.extend_from_slice(&body);
        v
    }

    fn walk(b: &[u8]) -> Vec<(u64, u64, Option<u64>, Option<std::string::String>)> {
        let mut src = SliceSource::new(b);
        let mut cur = ChapterCursor::default();
        let t = super::super::id3::id3v2_at(&mut src, 0).unwrap();
        let mut out = Vec::new();
        while let Some(c) = next_chapter(&mut src, t, 1 << 20, &mut cur).unwrap() {
            out.push((c.id, c.start, c.end, c.title.map(std::string::String::from)));
        }
        out
    }

    #[test]
    fn titles_and_ids() {
        let b = tag(
            &[
                frame(b"TIT2", b"\x00Album"),
                chap(b"ch0", 0, 1500, &frame(b"TIT2", b"\x03Intro")),
                chap(b"ch1", 1500, 3000, &[]),
                // UTF-16 title: the element ID instead.
                chap(b"ch2", 3000, 4000, &frame(b"TIT2", b"\x01\xFF\xFEx\x00")),
            ],
            0,
        );
        assert_eq!(
            walk(&b),
            [
                (0, 0, Some(1500), Some("Intro".into())),
                (1, 1500, Some(3000), Some("ch1".into())),
                (2, 3000, Some(4000), Some("ch2".into())),
            ]
        );
    }

    #[test]
    fn malformed() {
        // A CHAP frame past the end of the tag: the walk ends.
        let f = chap(b"ch0", 0, 10, &[]);
        let b = tag(&[chap(b"a", 0, 5, &[]), f.clone()], -4);
        let mut with_data = b.clone();
        with_data.extend_from_slice(&[0u8; 16]);
        assert_eq!(walk(&with_data), [(0, 0, Some(5), Some("a".into()))]);
        // A CHAP too short for its times, one without a NUL: skipped.
        let short = frame(b"CHAP", b"x\x00\x00\x00");
        let no_nul = frame(b"CHAP", b"abcdefgh");
        assert!(walk(&tag(&[short, no_nul], 0)).is_empty());
        // A sub-frame running past the CHAP body: no title but the ID.
        let mut sub = frame(b"TIT2", b"\x00Title");
        sub[7] = 200;
        assert_eq!(
            walk(&tag(&[chap(b"c", 1, 2, &sub)], 0)),
            [(0, 1, Some(2), Some("c".into()))]
        );
        // No tag at all.
        assert!(walk(b"\xFF\xFB\x14\x64").is_empty());
    }
}
