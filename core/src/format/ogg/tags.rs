//! The tag walk: the Vorbis comments (Vorbis I §5.2) of every stream's
//! comment packet, read in place; an entry that crosses a page boundary is
//! joined in scratch.

use crate::error::{Error, Result};
use crate::format::traits::Context;
use crate::format::xiph::comment::{common_name, split_entry};
use crate::source::Source;
use crate::tags::{Tag, TagKey, TagScope, TagValue};

use super::logical::{Loc, Stream, Walker};

/// The tag walk over the streams' comment packets.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(super) struct TagWalk {
    /// Index of the stream whose comments are read.
    stream: usize,
    /// Where the next entry's length is.
    walker: Walker,
    /// Entries left in the stream's comment list.
    remaining: u32,
    /// The walker stands in the stream's comment list.
    active: bool,
}

impl TagWalk {
    /// The next tag of any stream, in stream order: `None` after the last.
    ///
    /// Errors: a read error of the source, or a truncated page on the way.
    pub(super) fn next<'s, S: Source>(
        &mut self,
        streams: &[Stream],
        src: &'s mut S,
        ctx: &Context,
    ) -> Result<Option<Tag<'s>>> {
        self.next_then(streams, src, ctx, |_| Ok(None))
    }

    /// As [`TagWalk::next`], with what `at_end` gives after the last
    /// stream's comments.
    ///
    /// Errors: as [`TagWalk::next`], or from `at_end`.
    pub(super) fn next_then<'s, S: Source, F: FnOnce(&'s mut S) -> Result<Option<Tag<'s>>>>(
        &mut self,
        streams: &[Stream],
        src: &'s mut S,
        ctx: &Context,
        at_end: F,
    ) -> Result<Option<Tag<'s>>> {
        let resync = ctx.limits.resync_bytes;
        loop {
            if !self.active {
                let Some(st) = streams.get(self.stream) else {
                    return at_end(src);
                };
                let (Some((loc, skip)), Some(_)) = (st.comment, st.track) else {
                    self.stream += 1;
                    continue;
                };
                self.start(src, resync, st.serial, loc, skip)?;
            }
            let Some(track) = streams.get(self.stream).and_then(|s| s.track) else {
                self.next_stream();
                continue;
            };
            let mut b = [0u8; 4];
            if self.remaining == 0 || self.walker.read(src, resync, &mut b)? < 4 {
                self.next_stream();
                continue;
            }
            self.remaining -= 1;
            let len = u32::from_le_bytes(b);
            if len > self.walker.remaining {
                self.remaining = 0;
                continue;
            }
            if len > ctx.limits.max_tag_bytes {
                self.walker.skip(src, resync, len)?;
                continue;
            }
            let w = self.walker;
            let in_page = w.body_end.saturating_sub(w.pos) >= len as u64 && w.pos < w.body_end;
            if in_page {
                let off = w.pos;
                self.walker.skip(src, resync, len)?;
                let ok = split_entry(src.bytes(off, len as usize)?).is_some_and(|(k, _)| !is_picture(k));
                if !ok {
                    continue;
                }
                let entry = src.bytes(off, len as usize)?;
                let (key, value) = split_entry(entry).ok_or(Error::malformed(off, &ENTRY_ERROR))?;
                return Ok(Some(tag(track, key, value)));
            }
            if (len as usize) > src.scratch_len() {
                self.walker.skip(src, resync, len)?;
                continue;
            }
            let got = self.walker.gather(src, resync, len)?;
            let ok = split_entry(src.joined(got)?).is_some_and(|(k, _)| !is_picture(k));
            if !ok {
                continue;
            }
            let src: &'s S = src;
            let entry = src.joined(got)?;
            let (key, value) = split_entry(entry).ok_or(Error::malformed(0, &ENTRY_ERROR))?;
            return Ok(Some(tag(track, key, value)));
        }
    }

    /// Enters the comment block at `skip` bytes into the packet at `loc`.
    fn start<S: Source>(&mut self, src: &mut S, resync: u64, serial: u32, loc: Loc, skip: u32) -> Result<()> {
        (self.walker, self.remaining) = comment_walker(src, resync, serial, loc, skip)?;
        self.active = true;
        Ok(())
    }

    /// Leaves the current stream's comments for the next stream's.
    fn next_stream(&mut self) {
        self.active = false;
        self.stream += 1;
    }
}

/// A walker at the first entry of the comment block `skip` bytes into the
/// packet at `loc`, past the vendor string and the entry count (Vorbis I
/// §5.2.1), and that count (0 when the block is cut short).
///
/// Errors: a read error of the source, or a truncated page on the way.
pub(super) fn comment_walker<S: Source>(
    src: &mut S,
    resync: u64,
    serial: u32,
    loc: Loc,
    skip: u32,
) -> Result<(Walker, u32)> {
    let mut w = Walker::new(serial, loc);
    w.skip(src, resync, skip)?;
    let mut b = [0u8; 4];
    let mut count = 0;
    if w.read(src, resync, &mut b)? == 4 {
        w.skip(src, resync, u32::from_le_bytes(b))?;
        if w.read(src, resync, &mut b)? == 4 {
            count = u32::from_le_bytes(b);
        }
    }
    Ok((w, count))
}

/// The error for an entry that was checked a moment before: it cannot be
/// returned.
const ENTRY_ERROR: &str = "ogg comment: entry without `KEY=value` (Vorbis I §5.2.3)";

/// Whether an entry is a picture, which is a track rather than a tag.
fn is_picture(key: &str) -> bool {
    #[cfg(feature = "ogg-pictures")]
    return super::pictures::is_picture_key(key);
    #[cfg(not(feature = "ogg-pictures"))]
    return key.is_empty();
}

/// A text tag of `track`, named as ffprobe names it.
fn tag<'s>(track: usize, key: &'s str, value: TagValue<'s>) -> Tag<'s> {
    Tag {
        scope: TagScope::Track(track),
        key: TagKey::Text(key),
        name: common_name(key),
        value,
    }
}
