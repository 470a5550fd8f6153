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

use crate::error::Result;
use crate::source::Source;
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
    /// Title: Matroska's first ChapString, the first non-empty `TIT2`
    /// sub-frame (or, without one, the element ID) of a `CHAP` frame,
    /// `CHAPTERxxxNAME`, a `chpl` entry's name, a QuickTime chapter sample's
    /// text. Text stored as ISO-8859-1 or UTF-16 (ID3v2, QuickTime) is
    /// decoded into the source's scratch. `None` when absent, not valid
    /// UTF-8, or when it needs more scratch than the source has (a
    /// `SliceSource` without scratch decodes nothing).
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

/// A title found in the input, not yet borrowed: the borrow must come last,
/// after every other read of the entry, since in reader mode it lives in
/// the scratch that [`Source::bytes`] fills.
#[allow(dead_code, reason = "unused when no format with chapters is enabled")]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum TitleAt {
    /// UTF-8 (or ASCII) bytes in the input, read up to the first NUL.
    InPlace {
        /// Offset of the text.
        at: u64,
        /// Its length in bytes.
        len: usize,
    },
    /// The first `n` bytes of scratch, UTF-8 written by `crate::text`.
    Decoded(usize),
    /// Text that could not be given (too large for the scratch).
    Unavailable,
}

impl TitleAt {
    /// The title as text (see [`Chapter::title`]).
    #[allow(dead_code, reason = "unused when no format with chapters is enabled")]
    pub(crate) fn borrow<S: Source>(self, src: &mut S) -> Result<Option<&str>> {
        Ok(match self {
            TitleAt::InPlace { at, len } if src.is_slice() || len <= src.scratch_len() => {
                title(S::bytes(src, at, len)?)
            }
            TitleAt::Decoded(n) => core::str::from_utf8(S::joined(src, n)?).ok(),
            TitleAt::InPlace { .. } | TitleAt::Unavailable => None,
        })
    }
}
