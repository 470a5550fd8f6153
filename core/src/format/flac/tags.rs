//! FLAC's tags, in order: the frames of the ID3v2 tags in front of `fLaC`
//! (every frame, [`FrameTags::Every`]), the Vorbis comments (§8.6), two tags
//! per attached picture (its type as `comment`, its block as
//! `METADATA_BLOCK_PICTURE`), the cue sheet (§8.7) and the APPLICATION
//! blocks (§8.4).
//!
//! The walk first finds the next tag's place without borrowing the input
//! ([`Found`]), then reads it: a stage that finds nothing goes on to the
//! next.

use super::demuxer::FlacDemuxer;
use crate::error::{Error, Result};
use crate::format::es::id3::{FrameTags, FrameWalk, RawFrame, PICTURE_TYPES};
use crate::format::traits::Context;
use crate::format::xiph::comment::{common_name, split_entry, CommentCursor};
use crate::source::Source;
use crate::tags::{Tag, TagCursor, TagKey, TagScope, TagValue};
use crate::types::ByteRange;

/// The stages of the walk, kept in `TagCursor::stage`.
mod stage {
    /// Nothing read yet.
    pub const START: u32 = 0;
    /// ID3v2 frames: `end` is the index of the tag walked (its frame walk in
    /// the demuxer).
    pub const ID3: u32 = 1;
    /// Vorbis comments (the cursor in the demuxer).
    pub const COMMENTS: u32 = 2;
    /// Pictures: `offset` counts two tags per picture.
    pub const PICTURES: u32 = 3;
    /// The cue sheet.
    pub const CUESHEET: u32 = 4;
    /// APPLICATION blocks: `offset` is the index.
    pub const APPLICATIONS: u32 = 5;
    /// Done.
    pub const DONE: u32 = 6;
}

/// The next tag's place, found before the input is borrowed for it.
enum Found {
    /// An ID3v2 frame.
    Id3(RawFrame),
    /// A Vorbis comment entry: offset and length.
    Comment(u64, u32),
    /// A picture track's type name.
    PictureKind(usize, &'static str),
    /// Bytes of the input under a text key.
    Bytes(TagScope, &'static str, ByteRange),
    /// An APPLICATION block: its id, then its data.
    Application(ByteRange),
}

impl FlacDemuxer {
    /// The next tag (see the module notes).
    pub(super) fn walk_tags<'s, S: Source>(
        &mut self,
        src: &'s mut S,
        ctx: &Context,
        cur: &mut TagCursor,
    ) -> Result<Option<Tag<'s>>> {
        let Some(found) = self.find_tag(src, ctx, cur)? else {
            return Ok(None);
        };
        Ok(Some(match found {
            Found::Id3(f) => f.tag(src, FrameTags::Every)?,
            Found::Comment(off, len) => {
                let entry = src.bytes(off, len as usize)?;
                let (key, value) = split_entry(entry).ok_or(Error::malformed(
                    off,
                    &"flac VORBIS_COMMENT: entry without '=' (RFC 9639 §8.6)",
                ))?;
                Tag {
                    scope: TagScope::Format,
                    key: TagKey::Text(key),
                    name: common_name(key),
                    value,
                }
            }
            Found::PictureKind(track, name) => Tag {
                scope: TagScope::Track(track),
                key: TagKey::Text("comment"),
                name: Some("comment"),
                value: TagValue::Text(name),
            },
            Found::Bytes(scope, key, r) => Tag {
                scope,
                key: TagKey::Text(key),
                name: None,
                value: TagValue::Bytes(src.bytes(r.offset, r.len as usize)?),
            },
            Found::Application(r) => {
                let id: [u8; 4] = src.array(r.offset)?;
                Tag {
                    scope: TagScope::Format,
                    key: TagKey::FourCc(id),
                    name: None,
                    value: TagValue::Bytes(src.bytes(r.offset + 4, r.len as usize - 4)?),
                }
            }
        }))
    }

    /// Where the next tag is, going through the stages; `None` when done.
    /// Each stage ends: the loop runs at most once per stage plus once per
    /// item skipped.
    fn find_tag<S: Source>(&mut self, src: &mut S, ctx: &Context, cur: &mut TagCursor) -> Result<Option<Found>> {
        let max = ctx.limits.max_tag_bytes;
        loop {
            match cur.stage {
                stage::START => {
                    cur.stage = stage::ID3;
                    cur.end = 0;
                    self.id3_walk = None;
                }
                stage::ID3 => {
                    if let Some(f) = self.next_id3_frame(src, max, cur)? {
                        return Ok(Some(Found::Id3(f)));
                    }
                    cur.stage = stage::COMMENTS;
                    self.comments = match self.vorbis {
                        Some(r) => CommentCursor::begin(src, r.offset, r.len as u64)?.unwrap_or_default(),
                        None => CommentCursor::default(),
                    };
                }
                stage::COMMENTS => {
                    let Some((off, len)) = self.comments.next_entry(src)? else {
                        cur.stage = stage::PICTURES;
                        cur.offset = 0;
                        continue;
                    };
                    if len <= max && split_entry(src.bytes(off, len as usize)?).is_some() {
                        return Ok(Some(Found::Comment(off, len)));
                    }
                }
                stage::PICTURES => {
                    // Two tags per picture: its type as `comment`, then its bytes.
                    let i = (cur.offset / 2) as usize;
                    let part = cur.offset % 2;
                    cur.offset += 1;
                    let Some(&(p, track)) = self.pictures.get(i) else {
                        cur.stage = stage::CUESHEET;
                        continue;
                    };
                    if track == usize::MAX {
                        continue;
                    }
                    if part == 0 {
                        let name = PICTURE_TYPES.get(p.kind as usize).copied().unwrap_or("Other");
                        return Ok(Some(Found::PictureKind(track, name)));
                    }
                    if p.data.len <= max {
                        return Ok(Some(Found::Bytes(
                            TagScope::Track(track),
                            "METADATA_BLOCK_PICTURE",
                            p.data,
                        )));
                    }
                }
                stage::CUESHEET => {
                    cur.stage = stage::APPLICATIONS;
                    cur.offset = 0;
                    if let Some(r) = self.cuesheet.filter(|r| r.len <= max) {
                        return Ok(Some(Found::Bytes(TagScope::Format, "CUESHEET", r)));
                    }
                }
                stage::APPLICATIONS => {
                    let i = cur.offset as usize;
                    cur.offset += 1;
                    let Some(&r) = self.applications.get(i) else {
                        cur.stage = stage::DONE;
                        continue;
                    };
                    // A block the end of the input cuts below its 4-byte
                    // id is skipped (as an oversized one is).
                    if r.len.checked_sub(4).is_some_and(|n| n <= max) {
                        return Ok(Some(Found::Application(r)));
                    }
                }
                _ => return Ok(None),
            }
        }
    }

    /// The next reported frame of the ID3v2 tags, tag `cur.end` on; `None`
    /// after the last tag.
    fn next_id3_frame<S: Source>(&mut self, src: &mut S, max: u32, cur: &mut TagCursor) -> Result<Option<RawFrame>> {
        loop {
            if let Some(w) = self.id3_walk.as_mut() {
                if let Some(f) = w.next_reported(src, max, FrameTags::Every)? {
                    return Ok(Some(f));
                }
                self.id3_walk = None;
                cur.end += 1;
            }
            let Some(t) = self.id3.get(cur.end as usize).copied() else {
                return Ok(None);
            };
            match FrameWalk::new(src, &t)? {
                Some(w) => self.id3_walk = Some(w),
                None => cur.end += 1,
            }
        }
    }
}
