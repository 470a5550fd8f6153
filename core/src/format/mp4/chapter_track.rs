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
//! of the `chap` box is used; edit lists of the chapter track are ignored.
//!
//! A title that starts with a byte order mark (FE FF or FF FE) is UTF-16 in
//! that order, decoded into the source's scratch (`crate::text`) up to its
//! NUL, as `mov_read_chapters` does; any other is UTF-8 read in place up to
//! its NUL. ffmpeg 5.1 reads the UTF-16 text `len` bytes past the mark,
//! two bytes more than the sample's text holds: where a sample ends with
//! its `encd` atom (ffmpeg's and Apple's writers), those two bytes are the
//! atom's size, 00 00, and the titles agree; we read only the text.

use super::boxes::{read_box_header, BoxHeader};
use super::demuxer::Mp4Demuxer;
use super::sample_table::{reset_cursor, table_sample};
use crate::chapters::{Chapter, ChapterCursor, TitleAt};
use crate::error::Result;
use crate::format::traits::Context;
use crate::source::Source;
use crate::text::{to_scratch, Encoding};
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
        let Ok(Some(s)) = table_sample(&mut *src, &mut scratch, t, d.windows.of(false)) else {
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
        let name = if len == 0 {
            Some("")
        } else {
            title_at(src, at, u64::from(len)).borrow(src).unwrap_or(None)
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

/// Where the title of a chapter sample is: `len` bytes at `at` (its length
/// field read), UTF-16 when they start with a byte order mark.
fn title_at<S: Source>(src: &mut S, at: u64, len: u64) -> TitleAt {
    let bom = if len >= 2 {
        src.array::<2>(at).ok().and_then(Encoding::from_bom)
    } else {
        None
    };
    match bom {
        Some(order) => match to_scratch(src, at + 2, len - 2, order, 0) {
            Ok(Some(n)) => TitleAt::Decoded(n),
            Ok(None) | Err(_) => TitleAt::Unavailable,
        },
        None => TitleAt::InPlace { at, len: len as usize },
    }
}
