//! Chapters: named points or spans of the presentation, read in place
//! (cargo feature `chapters`).
//!
//! Formats yield [`Chapter`]s through `Demuxer::next_chapter`, a lending
//! iterator like the tag walk: each chapter's title borrows the input (slice
//! mode) or scratch (reader mode) until the next call. Sources: Matroska
//! `Chapters` (RFC 9559 §5.1.7), ID3v2 `CHAP` frames (MP3), Vorbis comment
//! `CHAPTERxxx` fields (Ogg), the Nero `chpl` box and QuickTime chapter
//! tracks (MP4). Chapters come in
//! file order as stored; ffprobe's ordering and end rules belong to the
//! caller (see `docs/cli.md`).

use crate::types::Rational;

/// One chapter.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct Chapter<'a> {
    /// The container's id for it: Matroska ChapterUID, the number of an Ogg
    /// `CHAPTERxxx` field, the index of an ID3v2 `CHAP` frame, `chpl`
    /// entry (from 0).
    pub id: u64,
    /// Unit of `start` and `end`.
    pub time_base: Rational,
    /// Start, in `time_base`.
    pub start: u64,
    /// End, in `time_base`, when the container stores one.
    pub end: Option<u64>,
    /// Title: Matroska's first ChapString, the `TIT2` sub-frame (or, without
    /// one, the element ID) of a `CHAP` frame, `CHAPTERxxxNAME`, a `chpl`
    /// entry's name. `None` when absent or not borrowable as UTF-8 in place.
    pub title: Option<&'a str>,
}

/// Position of a format's chapter walk; opaque to callers.
#[doc(hidden)]
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ChapterCursor {
    pub(crate) stage: u32,
    pub(crate) offset: u64,
    pub(crate) end: u64,
    pub(crate) index: u64,
}

/// Text borrowed in place: the bytes up to the first NUL, when UTF-8.
#[allow(dead_code, reason = "unused when no format with chapters is enabled")]
pub(crate) fn title(b: &[u8]) -> Option<&str> {
    let n = b.iter().position(|&c| c == 0).unwrap_or(b.len());
    core::str::from_utf8(b.get(..n)?).ok()
}
