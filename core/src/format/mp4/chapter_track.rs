//! Chapters from a QuickTime chapter track: the track that the last
//! `trak/tref/chap` names (ISO/IEC 14496-12 §8.3.3, QuickTime File Format
//! "Chapter lists"). Each sample is a chapter: a 16-bit big-endian title
//! length, then the title (QuickTime text sample format); it starts at the
//! sample's decode time and ends at the next sample's, the last at the
//! track's `mdhd` duration, in the track's timescale.
//!
//! As ffmpeg's `mov_read_chapters` does, the track's chapter `i` replaces
//! the `chpl` entry `i` (ffmpeg reads `chpl` first and then overwrites by
//! id), a sample whose length does not fit in it keeps the `chpl` entry, and
//! a video chapter track gives no chapters, and a sample past the input ends
//! the track's chapters. Limits: only the first track ID
//! of the `chap` box is used; edit lists of the chapter track are ignored;
//! UTF-16 titles (with a byte order mark) are not converted in place and
//! come without a title.

use super::boxes::{read_box_header, BoxHeader};
use super::demuxer::Mp4Demuxer;
use super::sample_table::{reset_cursor, table_sample};
use crate::chapters::{title, Chapter, ChapterCursor};
use crate::error::Result;
use crate::format::traits::Context;
use crate::source::Source;
use crate::types::{Rational, TrackKind};

/// Children of `tref` looked at for `chap`.
const MAX_TREF_CHILDREN: u32 = 16;

/// The first track ID of a `tref`'s `chap` box.
pub(super) fn read_tref<S: Source>(src: &mut S, h: &BoxHeader) -> Option<u32> {
    let mut at = h.body;
    for _ in 0..MAX_TREF_CHILDREN {
        let c = read_box_header(src, at, h.end).ok()?;
        if &c.kind == b"chap" {
            return if c.body.saturating_add(4) <= c.end {
                src.u32_be(c.body).ok()
            } else {
                None
            };
        }
        if c.end <= at {
            return None;
        }
        at = c.end;
    }
    None
}

/// The next chapter: from the chapter track where it has one, else the
/// `chpl` entry of the same index. The `chpl` walk is kept in step in `cur`.
pub(super) fn next<'s, S: Source>(
    d: &mut Mp4Demuxer,
    src: &'s mut S,
    ctx: &Context,
    cur: &mut ChapterCursor,
) -> Result<Option<Chapter<'s>>> {
    if cur.stage == 0 && cur.index == 0 {
        d.chap_walk = None;
        let found = d.chap_track.and_then(|id| d.tracks.iter().find(|t| t.track_id == id));
        if let Some(t) = found {
            let video = ctx.tracks.get(t.index).is_some_and(|k| k.kind == TrackKind::Video);
            if !video && t.chunk.is_none() && t.timescale > 0 {
                let mut t = t.clone();
                reset_cursor(src, &mut t)?;
                d.chap_walk = Some((t, 0));
            }
        }
    }
    let mut scratch = Context {
        limits: ctx.limits,
        ..Context::default()
    };
    loop {
        let Some((t, i)) = d.chap_walk.as_mut() else {
            return super::chapters::next(&d.tag_boxes, src, cur);
        };
        let Ok(Some(s)) = table_sample(&mut *src, &mut scratch, t) else {
            d.chap_walk = None;
            continue;
        };
        let id = *i;
        *i += 1;
        let start = s.dts.max(0) as u64;
        let next_start = start.saturating_add(u64::from(s.duration));
        let end = if t.cur.sample < t.sample_count {
            Some(next_start)
        } else {
            ctx.tracks.get(t.index).and_then(|k| k.duration).filter(|&e| e >= start)
        };
        let time_base = Rational::new(1, t.timescale);
        // A sample past the input ends the track's chapters (ffmpeg's seek
        // fails): the `chpl` entries from here on stand.
        let Ok(len) = src.array::<2>(s.pos).map(u16::from_be_bytes) else {
            d.chap_walk = None;
            continue;
        };
        let fits = u32::from(len) + 2 <= s.size;
        // Keep the `chpl` walk at the same index.
        let mut ahead = *cur;
        let chpl = super::chapters::next(&d.tag_boxes, &mut *src, &mut ahead)?.is_some();
        if !fits {
            if chpl {
                return super::chapters::next(&d.tag_boxes, src, cur);
            }
            *cur = ahead;
            continue;
        }
        *cur = ahead;
        let at = s.pos + 2;
        let n = usize::from(len);
        let name = if n == 0 {
            Some("")
        } else if src.is_slice() || n <= src.scratch_len() {
            match src.bytes(at, n) {
                Ok([0xFE, 0xFF, ..] | [0xFF, 0xFE, ..]) | Err(_) => None,
                Ok(b) => title(b),
            }
        } else {
            None
        };
        return Ok(Some(Chapter {
            id,
            time_base,
            start,
            end,
            title: name,
        }));
    }
}
