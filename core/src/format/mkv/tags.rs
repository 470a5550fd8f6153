//! Tags, read in place: Info strings, track names, Tags/SimpleTag (RFC 9559
//! §5.1.8), chapters (§5.1.7) and attachments (§5.1.6).
//!
//! Walk order (the [`TagCursor`] stage): 1 Info (Title, MuxingApp,
//! WritingApp), 2 track Names, 3 Tags, 4 Chapters, 5 Attachments.

use super::ebml::{read_element, read_uint, Children, Element};
use super::{ids, MkvDemuxer};
use crate::error::Result;
use crate::format::traits::Context;
use crate::source::Source;
use crate::tags::{text_or_bytes, Tag, TagCursor, TagKey, TagScope, TagValue};
use crate::types::ByteRange;

const STAGE_INFO: u32 = 1;
const STAGE_NAMES: u32 = 2;
const STAGE_TAGS: u32 = 3;
const STAGE_CHAPTERS: u32 = 4;
const STAGE_ATTACHMENTS: u32 = 5;
const STAGE_DONE: u32 = 6;

/// Tag-walk state kept beside the caller's [`TagCursor`] (reset when the
/// cursor is at its start).
#[derive(Debug, Clone, Copy, Default)]
pub(super) struct TagWalk {
    /// Which Tags element is being walked.
    list: usize,
    /// End of the Tag being walked (0 between Tags).
    tag_end: u64,
    /// The current Tag's scope.
    scope: Option<TagScope>,
}

/// What a tag will borrow: one range of the input, and where its key and
/// value sit in it.
struct Spans {
    start: u64,
    len: usize,
    key: (usize, usize),
    value: Option<(usize, usize)>,
    binary: bool,
}

/// ffprobe's names for common Matroska tag names (RFC 9559 §5.1.8 and the
/// Matroska tagging guidelines); ffmpeg keeps other names as they are.
fn common_name(key: &str) -> Option<&'static str> {
    const NAMES: &[(&str, &str)] = &[
        ("TITLE", "title"),
        ("ARTIST", "artist"),
        ("LEAD_PERFORMER", "performer"),
        ("PART_NUMBER", "track"),
        ("ALBUM", "album"),
        ("COMMENT", "comment"),
        ("GENRE", "genre"),
        ("DATE_RELEASED", "date"),
        ("ENCODER", "encoder"),
        ("COPYRIGHT", "copyright"),
        ("COMPOSER", "composer"),
        ("DESCRIPTION", "description"),
        ("LANGUAGE", "language"),
    ];
    NAMES.iter().find(|(k, _)| k.eq_ignore_ascii_case(key)).map(|&(_, v)| v)
}

/// What the walk found next, before it is borrowed from the input.
enum Next {
    /// A string element: Info strings, track Names, ChapString.
    Text {
        scope: TagScope,
        range: ByteRange,
        key: &'static str,
        name: Option<&'static str>,
    },
    /// A SimpleTag's TagName and TagString/TagBinary.
    Simple(TagScope, Spans),
    /// An AttachedFile's FileName and FileData.
    Attachment(Spans),
    /// ChapterTimeStart or ChapterTimeEnd.
    Int(&'static str, u64),
}

impl MkvDemuxer {
    /// The next tag (see the module documentation for the order).
    pub(super) fn tag<'s, S: Source>(
        &mut self,
        src: &'s mut S,
        ctx: &Context,
        cur: &mut TagCursor,
    ) -> Result<Option<Tag<'s>>> {
        let Some(next) = self.find(src, cur, ctx.limits.max_tag_bytes as u64) else {
            return Ok(None);
        };
        Ok(Some(match next {
            Next::Text {
                scope,
                range,
                key,
                name,
            } => Tag {
                scope,
                key: TagKey::Text(key),
                name,
                value: text_or_bytes(src.bytes(range.offset, range.len as usize)?),
            },
            Next::Simple(scope, sp) => {
                let (key, v) = key_and_value(src.bytes(sp.start, sp.len)?, &sp);
                Tag {
                    scope,
                    key: TagKey::Text(key),
                    name: common_name(key),
                    value: if sp.binary {
                        TagValue::Bytes(v)
                    } else {
                        text_or_bytes(v)
                    },
                }
            }
            Next::Attachment(sp) => {
                let (key, v) = key_and_value(src.bytes(sp.start, sp.len)?, &sp);
                Tag {
                    scope: TagScope::Format,
                    key: TagKey::Text(key),
                    name: None,
                    value: TagValue::Bytes(v),
                }
            }
            Next::Int(key, v) => Tag {
                scope: TagScope::Format,
                key: TagKey::Text(key),
                name: None,
                value: TagValue::Int(v.min(i64::MAX as u64) as i64),
            },
        }))
    }

    /// Moves the cursor to the next tag, stage by stage; `None` at the end.
    fn find<S: Source>(&mut self, src: &mut S, cur: &mut TagCursor, max: u64) -> Option<Next> {
        // Every turn of this loop moves the cursor forward.
        loop {
            let next = match cur.stage {
                0 => {
                    self.tag_walk = TagWalk::default();
                    cur.stage = STAGE_INFO;
                    cur.offset = 0;
                    continue;
                }
                STAGE_INFO => self.info_step(src, cur, max),
                STAGE_NAMES => self.name_step(src, cur, max),
                STAGE_TAGS => self.tags_step(src, cur, max),
                STAGE_CHAPTERS => self.chapters_step(src, cur, max),
                STAGE_ATTACHMENTS => self.attachments_step(src, cur, max),
                _ => return None,
            };
            if next.is_some() {
                return next;
            }
        }
    }

    /// Info (RFC 9559 §5.1.2): Title, MuxingApp, WritingApp.
    fn info_step<S: Source>(&mut self, src: &mut S, cur: &mut TagCursor, max: u64) -> Option<Next> {
        let i = cur.offset;
        cur.offset += 1;
        let (r, key, name) = match i {
            0 => (self.title, "Title", Some("title")),
            1 => (self.muxing_app, "MuxingApp", Some("encoder")),
            2 => (self.writing_app, "WritingApp", None),
            _ => {
                cur.stage = STAGE_NAMES;
                cur.offset = 0;
                return None;
            }
        };
        let range = r.filter(|r| r.len > 0 && r.len as u64 <= max && fits(src, r.len as usize))?;
        Some(Next::Text {
            scope: TagScope::Format,
            range,
            key,
            name,
        })
    }

    /// Track Names (RFC 9559 §5.1.4.1.18).
    fn name_step<S: Source>(&mut self, src: &mut S, cur: &mut TagCursor, max: u64) -> Option<Next> {
        let i = cur.offset as usize;
        cur.offset += 1;
        let Some(t) = self.tracks.get(i) else {
            cur.stage = STAGE_TAGS;
            cur.offset = 0;
            cur.end = 0;
            self.tag_walk = TagWalk::default();
            return None;
        };
        let range = t
            .name
            .filter(|r| r.len > 0 && r.len as u64 <= max && fits(src, r.len as usize))?;
        Some(Next::Text {
            scope: TagScope::Track(i),
            range,
            key: "Name",
            name: Some("title"),
        })
    }

    /// Tags (RFC 9559 §5.1.8): one element of the Tags elements in turn;
    /// a Tag's Targets give the scope of its SimpleTags, nested ones
    /// included.
    fn tags_step<S: Source>(&mut self, src: &mut S, cur: &mut TagCursor, max: u64) -> Option<Next> {
        if cur.offset >= cur.end {
            // Next Tags element.
            let Some(&(s, e)) = self.tags.get(self.tag_walk.list) else {
                cur.stage = STAGE_CHAPTERS;
                cur.offset = 0;
                cur.end = 0;
                return None;
            };
            self.tag_walk.list += 1;
            self.tag_walk.tag_end = 0;
            cur.offset = s;
            cur.end = e;
            return None;
        }
        let in_tag = cur.offset < self.tag_walk.tag_end;
        let limit = if in_tag { self.tag_walk.tag_end } else { cur.end };
        let e = next_element(src, cur, limit)?;
        if !in_tag {
            if e.id == ids::TAG {
                self.tag_walk.scope = self.target_scope(src, &e, limit);
                self.tag_walk.tag_end = e.end_within(limit);
                if self.tag_walk.scope.is_some() {
                    // Walk the Tag's children.
                    cur.offset = e.data;
                }
            }
            return None;
        }
        if e.id != ids::SIMPLE_TAG {
            return None;
        }
        // Descend: nested SimpleTags follow as the walk goes on.
        cur.offset = e.data;
        let scope = self.tag_walk.scope?;
        let sp = simple_tag_spans(src, &e, limit, max)?;
        (fits(src, sp.len) && key_is_text(src, &sp)).then_some(Next::Simple(scope, sp))
    }

    /// Chapters (RFC 9559 §5.1.7): ChapterTimeStart, ChapterTimeEnd and
    /// ChapString of every ChapterAtom, in file order.
    fn chapters_step<S: Source>(&mut self, src: &mut S, cur: &mut TagCursor, max: u64) -> Option<Next> {
        let (e, _) = next_in(src, cur, self.chapters, STAGE_ATTACHMENTS)?;
        match e.id {
            ids::EDITION_ENTRY | ids::CHAPTER_ATOM | ids::CHAPTER_DISPLAY => {
                cur.offset = e.data;
                None
            }
            ids::CHAPTER_TIME_START | ids::CHAPTER_TIME_END => {
                let v = read_uint(src, &e).ok()?;
                let key = if e.id == ids::CHAPTER_TIME_START {
                    "ChapterTimeStart"
                } else {
                    "ChapterTimeEnd"
                };
                Some(Next::Int(key, v))
            }
            ids::CHAP_STRING => {
                let range = super::range_of(&e).filter(|r| r.len as u64 <= max && fits(src, r.len as usize))?;
                Some(Next::Text {
                    scope: TagScope::Format,
                    range,
                    key: "ChapString",
                    name: None,
                })
            }
            _ => None,
        }
    }

    /// Attachments (RFC 9559 §5.1.6): each AttachedFile's FileName and
    /// FileData.
    fn attachments_step<S: Source>(&mut self, src: &mut S, cur: &mut TagCursor, max: u64) -> Option<Next> {
        let (e, limit) = next_in(src, cur, self.attachments, STAGE_DONE)?;
        if e.id != ids::ATTACHED_FILE {
            return None;
        }
        let sp = attachment_spans(src, &e, limit, max)?;
        (fits(src, sp.len) && key_is_text(src, &sp)).then_some(Next::Attachment(sp))
    }

    /// A Tag's scope from its Targets (RFC 9559 §5.1.8.1.1): the track with
    /// the TagTrackUID, the file when there is no UID, `None` (skipped) for
    /// chapters, editions, attachments and unknown tracks.
    fn target_scope<S: Source>(&self, src: &mut S, tag: &Element, limit: u64) -> Option<TagScope> {
        let mut kids = Children::of(tag, limit);
        while let Ok(Some(c)) = kids.next(src) {
            if c.id != ids::TARGETS {
                continue;
            }
            let mut scope = TagScope::Format;
            let mut t = Children::of(&c, kids.end);
            while let Ok(Some(x)) = t.next(src) {
                let uid = read_uint(src, &x).unwrap_or(0);
                match x.id {
                    ids::TAG_TRACK_UID if uid != 0 => {
                        let i = self.tracks.iter().position(|t| t.uid == uid && t.picture.is_none())?;
                        scope = TagScope::Track(i);
                    }
                    ids::TAG_EDITION_UID | ids::TAG_CHAPTER_UID | ids::TAG_ATTACHMENT_UID if uid != 0 => return None,
                    _ => {}
                }
            }
            return Some(scope);
        }
        Some(TagScope::Format)
    }
}

/// The next element of a stage that walks one element range (`range`, entered
/// when `cur.end` is 0), with the range's end; at the end of the range (or
/// without one) the cursor moves to `next_stage` and this is `None`, as it
/// is on damage.
fn next_in<S: Source>(
    src: &mut S,
    cur: &mut TagCursor,
    range: Option<(u64, u64)>,
    next_stage: u32,
) -> Option<(Element, u64)> {
    if cur.end == 0 {
        let Some((s, e)) = range else {
            cur.stage = next_stage;
            return None;
        };
        cur.offset = s;
        cur.end = e;
    }
    if cur.offset >= cur.end {
        cur.stage = next_stage;
        cur.offset = 0;
        cur.end = 0;
        return None;
    }
    let limit = cur.end;
    Some((next_element(src, cur, limit)?, limit))
}

/// Reads the element at the cursor and moves the cursor past it; `None`
/// (with the cursor at `limit`) on damage.
fn next_element<S: Source>(src: &mut S, cur: &mut TagCursor, limit: u64) -> Option<Element> {
    match read_element(src, cur.offset, limit) {
        Ok(e) => {
            let end = e.end_within(limit);
            cur.offset = end.max(e.data).max(cur.offset + 1);
            Some(e)
        }
        Err(_) => {
            cur.offset = limit;
            None
        }
    }
}

/// Whether `len` bytes can be borrowed from `src`: always from a slice; from
/// a reader, when they fit its scratch. A tag that cannot be borrowed is
/// skipped, not an error.
fn fits<S: Source>(src: &S, len: usize) -> bool {
    src.is_slice() || len <= src.scratch_len()
}

/// Whether a tag's key is UTF-8 of at most [`MAX_KEY`] bytes, read before
/// the tag is borrowed (so that a tag is either returned or not borrowed).
fn key_is_text<S: Source>(src: &mut S, sp: &Spans) -> bool {
    let mut b = [0u8; MAX_KEY];
    let n = sp.key.1 - sp.key.0;
    let Some(buf) = b.get_mut(..n) else { return false };
    src.read_exact_at(sp.start + sp.key.0 as u64, buf).is_ok() && core::str::from_utf8(buf).is_ok()
}

/// Longest tag key (TagName, FileName) read; longer ones are skipped.
const MAX_KEY: usize = 256;

/// The key (NULs at its end dropped) and the value of a tag borrowed as
/// one range `b`.
fn key_and_value<'s>(b: &'s [u8], sp: &Spans) -> (&'s str, &'s [u8]) {
    let key = b
        .get(sp.key.0..sp.key.1)
        .and_then(|k| core::str::from_utf8(k).ok())
        .unwrap_or("");
    let v = sp.value.and_then(|(a, z)| b.get(a..z)).unwrap_or(&[]);
    (trim_nul(key), v)
}

fn trim_nul(s: &str) -> &str {
    s.trim_end_matches('\0')
}

/// The one range covering a SimpleTag's TagName and TagString/TagBinary,
/// when it is at most `max` bytes.
fn simple_tag_spans<S: Source>(src: &mut S, e: &Element, limit: u64, max: u64) -> Option<Spans> {
    let mut name = None;
    let mut value = None;
    let mut binary = false;
    let mut kids = Children::of(e, limit);
    while let Ok(Some(c)) = kids.next(src) {
        match c.id {
            ids::TAG_NAME => name = super::range_of(&c),
            ids::TAG_STRING => value = super::range_of(&c),
            ids::TAG_BINARY => {
                value = super::range_of(&c);
                binary = true;
            }
            _ => {}
        }
    }
    spans(name?, value, binary, max)
}

/// The one range covering an AttachedFile's FileName and FileData.
fn attachment_spans<S: Source>(src: &mut S, e: &Element, limit: u64, max: u64) -> Option<Spans> {
    let mut name = None;
    let mut data = None;
    let mut kids = Children::of(e, limit);
    while let Ok(Some(c)) = kids.next(src) {
        match c.id {
            ids::FILE_NAME => name = super::range_of(&c),
            ids::FILE_DATA => data = super::range_of(&c),
            _ => {}
        }
    }
    spans(name?, data, true, max)
}

fn spans(name: ByteRange, value: Option<ByteRange>, binary: bool, max: u64) -> Option<Spans> {
    let end_of = |r: ByteRange| r.offset.saturating_add(r.len as u64);
    let start = value.map_or(name.offset, |v| v.offset.min(name.offset));
    let end = value.map_or(end_of(name), |v| end_of(v).max(end_of(name)));
    let len = end.checked_sub(start)?;
    if len > max {
        return None;
    }
    let rel = |r: ByteRange| {
        let a = (r.offset - start) as usize;
        (a, a + r.len as usize)
    };
    Some(Spans {
        start,
        len: len as usize,
        key: rel(name),
        value: value.map(rel),
        binary,
    })
}
