//! ID3v2 Chapter frames (`CHAP`, ID3v2 Chapter Frame Addendum 1.0 §3):
//! the chapters of an MP3 file's first ID3v2 tag, in file order, as
//! ffmpeg's `read_chapter` and `ff_id3v2_parse_chapters` give them.
//!
//! A `CHAP` body is a NUL-terminated element ID (ISO-8859-1), then start
//! time, end time (milliseconds), start offset and end offset (4 bytes
//! each, big-endian), then sub-frames. The title is the first `TIT2`
//! sub-frame whose text is not empty, in any of the four encodings of
//! ID3v2.4 §4.2 (ISO-8859-1 and UTF-16 decoded into scratch, UTF-8 read in
//! place), else the element ID, as ffmpeg names a chapter without one.
//!
//! Table of contents frames (`CTOC`, §4) are not read: ffprobe 5.1 ignores
//! them too, so chapters keep the order of their `CHAP` frames whatever a
//! `CTOC` lists, nested or naming a missing element.
//!
//! A frame that runs past the tag ends the walk
//! ([`FrameWalk::next_frame`]); one too short for its times, or larger
//! than `max_tag_bytes`, is skipped; one whose sub-frame runs past its
//! body is dropped, as ffmpeg drops it, and takes no id. Sub-frame sizes
//! are synchsafe in an ID3v2.4 tag, as §3 of the addendum says (ffmpeg 5.1
//! reads them as plain integers, so it drops a v2.4 chapter whose title or
//! picture sub-frame is 128 bytes or more; `docs/formats/mp3.md`).

use super::id3::{synchsafe, FrameWalk, Id3v2};
use crate::bytes::be32;
use crate::chapters::{Chapter, ChapterCursor, TitleAt};
use crate::error::Result;
use crate::source::Source;
use crate::text::{to_scratch, Encoding};
use crate::types::Rational;

const MILLISECONDS: Rational = Rational { num: 1, den: 1000 };

/// Longest element ID read (its NUL within this many bytes).
const MAX_ELEMENT_ID: usize = 256;

/// A sub-frame header: id (4), size (4), flags (2).
const SUB_HEADER: u64 = 10;

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
        if f.id() != b"CHAP" || !f.plain || f.size > u64::from(max) {
            continue;
        }
        let Some(c) = read_chap(src, f.body, f.size, walk.major)? else {
            continue;
        };
        let id = cur.index;
        cur.index += 1;
        return Ok(Some(Chapter {
            id,
            time_base: MILLISECONDS,
            start: u64::from(c.start),
            end: Some(u64::from(c.end)),
            title: c.title.borrow(src)?,
        }));
    }
}

/// A `CHAP` body read up to its title's borrow.
struct Chap {
    start: u32,
    end: u32,
    title: TitleAt,
}

/// The times and title of a `CHAP` body; `None` when ffmpeg drops it: too
/// short for its times, an element ID with no NUL (within
/// [`MAX_ELEMENT_ID`] bytes), or a sub-frame past the body.
fn read_chap<S: Source>(src: &mut S, body: u64, size: u64, major: u8) -> Result<Option<Chap>> {
    let mut head = [0u8; MAX_ELEMENT_ID];
    let n = (size as usize).min(head.len());
    let Some(h) = head.get_mut(..n) else { return Ok(None) };
    src.read_exact_at(body, h)?;
    let Some(id_len) = h.iter().position(|&c| c == 0) else {
        return Ok(None);
    };
    let mut at = body + id_len as u64 + 1 + 16;
    let end = body + size;
    if at > end {
        return Ok(None);
    }
    let times: [u8; 8] = src.array(body + id_len as u64 + 1)?;
    let (Some(start), Some(stop)) = (be32(&times, 0), be32(&times, 4)) else {
        return Ok(None);
    };
    // ffmpeg's loop: a sub-frame header while more than one remains; no
    // padding stops it.
    let mut title = None;
    while end - at > SUB_HEADER {
        let h: [u8; 10] = src.array(at)?;
        let [a, b, c, d, e, f, g, k, _, _] = h;
        let n = if major == 4 {
            synchsafe([e, f, g, k])
        } else {
            u64::from(u32::from_be_bytes([e, f, g, k]))
        };
        at += SUB_HEADER;
        if n > end - at {
            return Ok(None);
        }
        if title.is_none() && [a, b, c, d] == *b"TIT2" {
            title = text_frame(src, at, n)?;
        }
        at += n;
    }
    let title = match title {
        Some(t) => t,
        None => latin1(src, body, id_len as u64)?,
    };
    Ok(Some(Chap {
        start,
        end: stop,
        title,
    }))
}

/// The text of a text frame body at `at` of `size` bytes (encoding byte,
/// then text; ID3v2.4 §4.2), up to its first NUL; `None` when it is empty
/// or unreadable (a UTF-16 body without a byte order mark, an unknown
/// encoding), as ffmpeg's `read_ttag` then sets nothing.
fn text_frame<S: Source>(src: &mut S, at: u64, size: u64) -> Result<Option<TitleAt>> {
    if size < 1 {
        return Ok(None);
    }
    let [enc] = src.array::<1>(at)?;
    let (text, len) = (at + 1, size - 1);
    let t = match enc {
        0 => latin1(src, text, len)?,
        3 => match nul_len(src, text, len)?.0 {
            0 => return Ok(None),
            n => TitleAt::InPlace { at: text, len: n },
        },
        1 if len >= 2 => {
            let Some(order) = Encoding::from_bom(src.array(text)?) else {
                return Ok(None);
            };
            utf16(src, text + 2, len - 2, order)?
        }
        2 => utf16(src, text, len, Encoding::Utf16Be)?,
        _ => return Ok(None),
    };
    Ok(match t {
        TitleAt::Decoded(0) | TitleAt::InPlace { len: 0, .. } => None,
        t => Some(t),
    })
}

/// UTF-16 text decoded into scratch.
fn utf16<S: Source>(src: &mut S, at: u64, len: u64, order: Encoding) -> Result<TitleAt> {
    Ok(match to_scratch(src, at, len, order, 0)? {
        Some(n) => TitleAt::Decoded(n),
        None => TitleAt::Unavailable,
    })
}

/// ISO-8859-1 text of at most `len` bytes up to its NUL: in place when it
/// is ASCII, else decoded into scratch.
fn latin1<S: Source>(src: &mut S, at: u64, len: u64) -> Result<TitleAt> {
    let (n, ascii) = nul_len(src, at, len)?;
    if ascii {
        return Ok(TitleAt::InPlace { at, len: n });
    }
    Ok(match to_scratch(src, at, n as u64, Encoding::Latin1, 0)? {
        Some(n) => TitleAt::Decoded(n),
        None => TitleAt::Unavailable,
    })
}

/// The length of the text of at most `len` bytes at `at` before its first
/// NUL, and whether it is all ASCII.
fn nul_len<S: Source>(src: &mut S, at: u64, len: u64) -> Result<(usize, bool)> {
    let mut buf = [0u8; 128];
    let mut done = 0u64;
    let mut ascii = true;
    while done < len {
        let take = (len - done).min(buf.len() as u64) as usize;
        let b = buf.get_mut(..take).unwrap_or(&mut []);
        src.read_exact_at(at + done, b)?;
        let stop = b.iter().position(|&c| c == 0);
        let text = b.get(..stop.unwrap_or(take)).unwrap_or(&[]);
        ascii &= text.is_ascii();
        done += text.len() as u64;
        if stop.is_some() {
            break;
        }
    }
    Ok((done as usize, ascii))
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

    fn walk_with(b: &[u8], scratch: &mut [u8]) -> Vec<(u64, u64, Option<u64>, Option<std::string::String>)> {
        let mut src = SliceSource::with_scratch(b, scratch);
        let mut cur = ChapterCursor::default();
        let t = super::super::id3::id3v2_at(&mut src, 0).unwrap();
        let mut out = Vec::new();
        while let Some(c) = next_chapter(&mut src, t, 1 << 20, &mut cur).unwrap() {
            out.push((c.id, c.start, c.end, c.title.map(std::string::String::from)));
        }
        out
    }

    fn walk(b: &[u8]) -> Vec<(u64, u64, Option<u64>, Option<std::string::String>)> {
        walk_with(b, &mut [0u8; 64])
    }

    fn titles(b: &[u8]) -> Vec<Option<std::string::String>> {
        walk(b).into_iter().map(|c| c.3).collect()
    }

    fn utf16le(s: &str) -> Vec<u8> {
        s.encode_utf16().flat_map(u16::to_le_bytes).collect()
    }

    #[test]
    fn titles_and_ids() {
        let utf16 = [b"\x01\xFF\xFE".as_slice(), &utf16le("M\u{e9}")].concat();
        let b = tag(
            &[
                frame(b"TIT2", b"\x00Album"),
                chap(b"ch0", 0, 1500, &frame(b"TIT2", b"\x03Intro")),
                chap(b"ch1", 1500, 3000, &[]),
                chap(b"ch2", 3000, 4000, &frame(b"TIT2", &utf16)),
            ],
            0,
        );
        assert_eq!(
            walk(&b),
            [
                (0, 0, Some(1500), Some("Intro".into())),
                (1, 1500, Some(3000), Some("ch1".into())),
                (2, 3000, Some(4000), Some("M\u{e9}".into())),
            ]
        );
    }

    /// Each encoding of ID3v2.4 §4.2, and ffmpeg's rules: the first `TIT2`
    /// with text wins; an empty or unreadable one is passed over; the
    /// element ID is ISO-8859-1; text ends at its NUL.
    #[test]
    fn encodings_as_ffprobe() {
        let be: Vec<u8> = "B\u{e9}".encode_utf16().flat_map(u16::to_be_bytes).collect();
        let two = |a: &[u8], b: &[u8]| [frame(b"TIT2", a), frame(b"TIT2", b)].concat();
        let b = tag(
            &[
                chap(b"c0", 0, 1, &frame(b"TIT2", b"\x00Caf\xE9")),
                chap(b"c1", 1, 2, &frame(b"TIT2", &[b"\x02".as_slice(), &be].concat())),
                chap(
                    b"c2",
                    2,
                    3,
                    &frame(b"TIT2", &[b"\x01\xFE\xFF".as_slice(), &be].concat()),
                ),
                chap(b"c\xE9", 3, 4, &frame(b"TIT2", b"\x03")),
                chap(b"c4", 4, 5, &two(b"\x03\x00", b"\x03X")),
                chap(b"c5", 5, 6, &two(b"\x01\x00\x00x\x00", b"\x03Y")),
                chap(
                    b"c6",
                    6,
                    7,
                    &[frame(b"TPE1", b"\x03Art"), frame(b"TIT2", b"\x03A\x00B")].concat(),
                ),
                chap(b"c7", 7, 8, &frame(b"TIT2", b"\x07Z")),
                chap(b"c8", 8, 9, &two(b"\x03P", b"\x03Q")),
                chap(b"", 9, 10, &[]),
            ],
            0,
        );
        let want = [
            "Caf\u{e9}",
            "B\u{e9}",
            "B\u{e9}",
            "c\u{e9}",
            "X",
            "Y",
            "A",
            "c7",
            "P",
            "",
        ];
        assert_eq!(titles(&b), want.map(|t| Some(t.into())));
        // Without scratch, text that needs decoding has no title; ASCII and
        // UTF-8 are still read in place.
        let got: Vec<_> = walk_with(&b, &mut []).into_iter().map(|c| c.3).collect();
        assert_eq!(got[..4], [None, None, None, None]);
        assert_eq!(got[4], Some("X".into()));
    }

    /// A zero-sized sub-frame and one of zero bytes are walked past, as
    /// ffmpeg's loop walks them (no padding rule inside a `CHAP`).
    #[test]
    fn sub_frames_as_ffmpeg_walks_them() {
        let b = tag(
            &[
                chap(b"c0", 0, 1, b"TIT2\0\0\0\0\0\0"),
                chap(b"c1", 1, 2, &[[0u8; 10].as_slice(), &frame(b"TIT2", b"\x03Q")].concat()),
            ],
            0,
        );
        assert_eq!(titles(&b), [Some("c0".into()), Some("Q".into())]);
    }

    /// `CTOC` frames are not read: chapters come in `CHAP` frame order,
    /// with ids in that order, whatever the tables list.
    #[test]
    fn ctoc_is_ignored() {
        let ctoc = |eid: &[u8], kids: &[&[u8]], subs: &[u8]| {
            let mut b = eid.to_vec();
            b.extend_from_slice(&[0, 3, kids.len() as u8]);
            for k in kids {
                b.extend_from_slice(k);
                b.push(0);
            }
            b.extend_from_slice(subs);
            frame(b"CTOC", &b)
        };
        let b = tag(
            &[
                ctoc(b"toc", &[b"c2", b"sub", b"gone"], &frame(b"TIT2", b"\x03Contents")),
                ctoc(b"sub", &[b"c1", b"c0"], &[]),
                chap(b"c2", 2000, 3000, &frame(b"TIT2", b"\x03C")),
                chap(b"c0", 0, 1000, &frame(b"TIT2", b"\x03A")),
                chap(b"c1", 1000, 2000, &frame(b"TIT2", b"\x03B")),
            ],
            0,
        );
        assert_eq!(
            walk(&b),
            [
                (0, 2000, Some(3000), Some("C".into())),
                (1, 0, Some(1000), Some("A".into())),
                (2, 1000, Some(2000), Some("B".into())),
            ]
        );
    }

    /// Sub-frame sizes are synchsafe in ID3v2.4 (a 200-byte title).
    #[test]
    fn v24_sub_frame_sizes() {
        let mut sub = b"TIT2".to_vec();
        sub.extend_from_slice(&[0, 0, 1, 201 - 128, 0, 0]);
        sub.push(3);
        sub.extend_from_slice(&[b'L'; 200]);
        let mut b = tag(&[chap(b"c0", 0, 1, &sub)], 0);
        b[3] = 4;
        // The CHAP frame's own size, synchsafe too.
        let size = (b.len() - 20) as u32;
        b[14..18].copy_from_slice(&[0, 0, (size >> 7) as u8, (size & 0x7F) as u8]);
        let got = walk_with(&b, &mut [0u8; 300]);
        assert_eq!(got[0].3.as_deref(), Some("L".repeat(200).as_str()));
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
        // A sub-frame running past the CHAP body: the chapter is dropped
        // and takes no id, as in ffmpeg.
        let mut sub = frame(b"TIT2", b"\x00Title");
        sub[7] = 200;
        assert_eq!(
            walk(&tag(&[chap(b"c", 1, 2, &sub), chap(b"d", 2, 3, &[])], 0)),
            [(0, 2, Some(3), Some("d".into()))]
        );
        // No tag at all.
        assert!(walk(b"\xFF\xFB\x14\x64").is_empty());
    }
}
