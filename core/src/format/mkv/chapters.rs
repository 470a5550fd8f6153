//! Chapters (RFC 9559 §5.1.7): the top-level ChapterAtoms of every
//! EditionEntry, in file order, for `Demuxer::next_chapter`.
//!
//! Each chapter is its ChapterUID (§5.1.7.1.4.2), ChapterTimeStart and
//! ChapterTimeEnd (§5.1.7.1.4.3-4, nanoseconds, whatever the
//! TimestampScale) and the first ChapString (§5.1.7.1.4.10). Nested
//! ChapterAtoms are not walked (ffmpeg reads only the top level). An atom
//! without ChapterTimeStart (mandatory) is skipped, as is one whose header
//! is damaged: the walk ends at the damage.

use super::ebml::{read_element, read_uint, Children};
use super::{ids, MkvDemuxer};
use crate::chapters::{title, Chapter, ChapterCursor};
use crate::error::Result;
use crate::format::traits::Context;
use crate::source::Source;
use crate::types::{ByteRange, Rational};

/// Matroska chapter times are in nanoseconds.
const NANOSECONDS: Rational = Rational {
    num: 1,
    den: 1_000_000_000,
};

/// A ChapterAtom's fields, before its title is borrowed.
struct Atom {
    uid: u64,
    start: Option<u64>,
    end: Option<u64>,
    title: Option<ByteRange>,
}

impl MkvDemuxer {
    /// The next chapter: `cur.offset` walks the Chapters element, entering
    /// EditionEntries and stepping over each ChapterAtom.
    pub(super) fn chapter<'s, S: Source>(
        &mut self,
        src: &'s mut S,
        ctx: &Context,
        cur: &mut ChapterCursor,
    ) -> Result<Option<Chapter<'s>>> {
        let Some((start, end)) = self.chapters else {
            return Ok(None);
        };
        if cur.stage == 0 {
            cur.stage = 1;
            cur.offset = start;
            cur.end = end;
        }
        // Every turn moves the cursor forward by at least one byte.
        while cur.offset < cur.end {
            let Ok(e) = read_element(src, cur.offset, cur.end) else {
                cur.offset = cur.end;
                break;
            };
            let e_end = e.end_within(cur.end);
            cur.offset = match e.id {
                ids::EDITION_ENTRY => e.data,
                _ => e_end,
            }
            .max(cur.offset + 1);
            if e.id != ids::CHAPTER_ATOM {
                continue;
            }
            let a = atom(src, &e, e_end);
            let Some(start) = a.start else { continue };
            let max = ctx.limits.max_tag_bytes as usize;
            let title = match a.title {
                Some(r) if (r.len as usize) <= max && (src.is_slice() || r.len as usize <= src.scratch_len()) => {
                    title(src.bytes(r.offset, r.len as usize)?)
                }
                _ => None,
            };
            return Ok(Some(Chapter {
                id: a.uid,
                time_base: NANOSECONDS,
                start,
                end: a.end,
                title,
            }));
        }
        Ok(None)
    }
}

/// Reads one ChapterAtom's children; damage ends the read with what was
/// found.
fn atom<S: Source>(src: &mut S, e: &super::ebml::Element, limit: u64) -> Atom {
    let mut a = Atom {
        uid: 0,
        start: None,
        end: None,
        title: None,
    };
    let mut kids = Children::of(e, limit);
    while let Ok(Some(c)) = kids.next(src) {
        match c.id {
            ids::CHAPTER_UID => a.uid = read_uint(src, &c).unwrap_or(0),
            ids::CHAPTER_TIME_START => a.start = read_uint(src, &c).ok(),
            ids::CHAPTER_TIME_END => a.end = read_uint(src, &c).ok(),
            ids::CHAPTER_DISPLAY if a.title.is_none() => {
                let mut d = Children::of(&c, kids.end);
                while let Ok(Some(x)) = d.next(src) {
                    if x.id == ids::CHAP_STRING {
                        a.title = super::range_of(&x);
                        break;
                    }
                }
            }
            _ => {}
        }
    }
    a
}

#[cfg(test)]
mod tests {
    extern crate std;
    use super::super::tests::{cat, el, file, uint};
    use super::ids;
    use crate::{Demuxer, SliceSource};
    use std::vec::Vec;

    fn chapters(f: &[u8]) -> Vec<(u64, u64, Option<u64>, Option<std::string::String>)> {
        let mut d = Demuxer::open(SliceSource::new(f), None).unwrap();
        let mut out = Vec::new();
        while let Some(c) = d.next_chapter().unwrap() {
            assert_eq!((c.time_base.num, c.time_base.den), (1, 1_000_000_000));
            out.push((c.id, c.start, c.end, c.title.map(std::string::String::from)));
        }
        out
    }

    fn atom(parts: &[Vec<u8>]) -> Vec<u8> {
        el(ids::CHAPTER_ATOM, &cat(parts))
    }

    #[test]
    fn editions_atoms_and_titles() {
        let ch = el(
            ids::CHAPTERS,
            &cat(&[
                el(
                    ids::EDITION_ENTRY,
                    &cat(&[
                        atom(&[
                            uint(ids::CHAPTER_UID, 11),
                            uint(ids::CHAPTER_TIME_START, 0),
                            uint(ids::CHAPTER_TIME_END, 1_500_000_000),
                            el(ids::CHAPTER_DISPLAY, &el(ids::CHAP_STRING, b"Intro")),
                            el(ids::CHAPTER_DISPLAY, &el(ids::CHAP_STRING, b"Second")),
                        ]),
                        // No ChapterTimeStart: skipped.
                        atom(&[
                            uint(ids::CHAPTER_UID, 12),
                            el(ids::CHAPTER_DISPLAY, &el(ids::CHAP_STRING, b"x")),
                        ]),
                        // No title, no end.
                        atom(&[uint(ids::CHAPTER_UID, 13), uint(ids::CHAPTER_TIME_START, 2_000_000_000)]),
                    ]),
                ),
                el(
                    ids::EDITION_ENTRY,
                    &atom(&[uint(ids::CHAPTER_UID, 21), uint(ids::CHAPTER_TIME_START, 5)]),
                ),
            ]),
        );
        let got = chapters(&file(false, &[ch]));
        assert_eq!(
            got,
            [
                (11, 0, Some(1_500_000_000), Some("Intro".into())),
                (13, 2_000_000_000, None, None),
                (21, 5, None, None),
            ]
        );
    }

    #[test]
    fn no_chapters_and_damage() {
        assert!(chapters(&file(false, &[])).is_empty());
        // A ChapterAtom whose size runs past Chapters, then garbage: the
        // atom is cut to its parent and the walk ends, no panic.
        let mut body = atom(&[uint(ids::CHAPTER_UID, 1), uint(ids::CHAPTER_TIME_START, 7)]);
        body.truncate(body.len() - 3);
        body.extend_from_slice(&[0x00, 0x00, 0x00]);
        let ch = el(ids::CHAPTERS, &el(ids::EDITION_ENTRY, &body));
        let got = chapters(&file(false, &[ch]));
        assert!(got.len() <= 1);
        // A title that is not UTF-8 is dropped, the chapter kept.
        let ch = el(
            ids::CHAPTERS,
            &el(
                ids::EDITION_ENTRY,
                &atom(&[
                    uint(ids::CHAPTER_TIME_START, 1),
                    el(ids::CHAPTER_DISPLAY, &el(ids::CHAP_STRING, &[0xFF, 0xFE])),
                ]),
            ),
        );
        assert_eq!(chapters(&file(false, &[ch])), [(0, 1, None, None)]);
    }
}
