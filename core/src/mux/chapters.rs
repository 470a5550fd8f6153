//! Chapters a muxer writes: id, start, end and title, added with
//! [`crate::Muxer::add_chapter`] before the header and kept in fixed
//! tables ([`MAX_MUX_CHAPTERS`] chapters, [`MAX_CHAPTER_TITLE_BYTES`] of
//! titles). Times are nanoseconds, Matroska's unscaled chapter unit
//! (RFC 9559 §5.1.7.1.4.3); each format writes them its way (Matroska
//! `Chapters`, RFC 9559 §5.1.7).

use crate::error::{Error, ErrorKind, Result};

/// Most chapters kept: 64, or 8 with the `few-tracks` feature; one more is
/// refused with `CapacityExceeded`.
#[cfg(not(feature = "few-tracks"))]
pub const MAX_MUX_CHAPTERS: usize = 64;
/// Most chapters kept with the `few-tracks` feature: 8 (64 without it).
#[cfg(feature = "few-tracks")]
pub const MAX_MUX_CHAPTERS: usize = 8;

/// Most bytes of all chapter titles together: 2 KiB, or 256 with the
/// `few-tracks` feature.
#[cfg(not(feature = "few-tracks"))]
pub const MAX_CHAPTER_TITLE_BYTES: usize = 2 * 1024;
/// Most bytes of chapter titles with the `few-tracks` feature: 256.
#[cfg(feature = "few-tracks")]
pub const MAX_CHAPTER_TITLE_BYTES: usize = 256;

/// One chapter as a muxer writes it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MuxChapter<'a> {
    /// Its id, unique in the file and not 0 (Matroska's ChapterUID).
    pub id: u64,
    /// Start, in nanoseconds from the start of the presentation.
    pub start_ns: u64,
    /// End, in nanoseconds (at least `start_ns`).
    pub end_ns: u64,
    /// Title (`Some("")` is an empty one, written as such).
    pub title: Option<&'a str>,
}

#[derive(Debug, Clone, Copy)]
struct Entry {
    id: u64,
    start_ns: u64,
    end_ns: u64,
    /// Where its title ends in the title bytes.
    title_end: u16,
    has_title: bool,
}

/// The chapters to write, in the order they were added.
#[derive(Debug, Clone, Default)]
pub struct MuxChapters {
    entries: heapless::Vec<Entry, MAX_MUX_CHAPTERS>,
    titles: heapless::Vec<u8, MAX_CHAPTER_TITLE_BYTES>,
}

impl MuxChapters {
    /// Adds a chapter.
    ///
    /// Errors: `InvalidArgument` for id 0, an id already added, or an end
    /// before the start; `CapacityExceeded` past [`MAX_MUX_CHAPTERS`] or
    /// [`MAX_CHAPTER_TITLE_BYTES`] (nothing is added).
    pub fn push(&mut self, c: &MuxChapter<'_>) -> Result<()> {
        if c.id == 0 || c.end_ns < c.start_ns || self.entries.iter().any(|e| e.id == c.id) {
            return Err(Error::new(
                ErrorKind::InvalidArgument,
                0,
                &"mux chapters: id 0 or used twice, or an end before the start (RFC 9559 5.1.7.1.4)",
            ));
        }
        let start = self.titles.len();
        let title = c.title.unwrap_or("");
        let end = start.saturating_add(title.len());
        let fits = u16::try_from(end).is_ok() && !self.entries.is_full();
        if !fits || self.titles.extend_from_slice(title.as_bytes()).is_err() {
            return Err(Error::capacity(
                0,
                &"mux chapters: beyond MAX_MUX_CHAPTERS or MAX_CHAPTER_TITLE_BYTES",
            ));
        }
        let entry = Entry {
            id: c.id,
            start_ns: c.start_ns,
            end_ns: c.end_ns,
            title_end: end as u16,
            has_title: c.title.is_some(),
        };
        if self.entries.push(entry).is_err() {
            self.titles.truncate(start);
            return Err(Error::capacity(0, &"mux chapters: beyond MAX_MUX_CHAPTERS"));
        }
        Ok(())
    }

    /// Whether there is none.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// The chapters, in the order they were added.
    pub fn iter(&self) -> impl Iterator<Item = MuxChapter<'_>> + '_ {
        let mut from = 0usize;
        self.entries.iter().map(move |e| {
            let to = usize::from(e.title_end);
            // Pushed as `str` whole, one after another: valid UTF-8.
            let title = self
                .titles
                .get(from..to)
                .and_then(|b| core::str::from_utf8(b).ok())
                .filter(|_| e.has_title);
            from = to;
            MuxChapter {
                id: e.id,
                start_ns: e.start_ns,
                end_ns: e.end_ns,
                title,
            }
        })
    }
}

#[cfg(test)]
mod tests {
    extern crate std;
    use super::*;

    fn ch(id: u64, start_ns: u64, end_ns: u64, title: &str) -> MuxChapter<'_> {
        MuxChapter {
            id,
            start_ns,
            end_ns,
            title: (title != "-").then_some(title),
        }
    }

    #[test]
    fn chapters_come_back_in_order_and_refusals_keep_the_rest() {
        let mut c = MuxChapters::default();
        assert!(c.is_empty());
        c.push(&ch(1, 0, 10, "Ünïcode")).unwrap();
        c.push(&ch(2, 10, 20, "")).unwrap();
        assert_eq!(
            c.push(&ch(0, 0, 1, "x")).unwrap_err().kind(),
            ErrorKind::InvalidArgument
        );
        assert_eq!(
            c.push(&ch(2, 0, 1, "x")).unwrap_err().kind(),
            ErrorKind::InvalidArgument
        );
        assert_eq!(
            c.push(&ch(3, 5, 1, "x")).unwrap_err().kind(),
            ErrorKind::InvalidArgument
        );
        let long = "x".repeat(MAX_CHAPTER_TITLE_BYTES);
        assert_eq!(
            c.push(&ch(4, 0, 1, &long)).unwrap_err().kind(),
            ErrorKind::CapacityExceeded
        );
        c.push(&ch(5, 20, 30, "-")).unwrap();
        c.push(&ch(6, 30, 40, "end")).unwrap();
        let v: std::vec::Vec<MuxChapter<'_>> = c.iter().collect();
        assert_eq!(
            v,
            [
                ch(1, 0, 10, "Ünïcode"),
                ch(2, 10, 20, ""),
                ch(5, 20, 30, "-"),
                ch(6, 30, 40, "end")
            ]
        );
        let mut c = MuxChapters::default();
        for i in 1..=MAX_MUX_CHAPTERS as u64 {
            c.push(&ch(i, i, i, "")).unwrap();
        }
        let e = c.push(&ch(1000, 0, 0, "")).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::CapacityExceeded);
    }
}
