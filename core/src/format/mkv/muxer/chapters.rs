//! The Matroska muxer's Chapters ([`crate::Muxer::add_chapter`]): one
//! `EditionEntry` (RFC 9559 §5.1.7.1) holding a `ChapterAtom` (§5.1.7.1.4)
//! per chapter: ChapterUID, ChapterTimeStart, ChapterTimeEnd (nanoseconds,
//! unscaled), and, for a chapter with a title, a ChapterDisplay with the
//! ChapString and ChapLanguage `und`, as ffmpeg's Matroska muxer writes
//! them. Without the `chapters` feature there is no chapter table and
//! nothing is written.

#[cfg(feature = "chapters")]
use super::ebml_write::{put_bytes, put_master, put_uint};
use crate::error::Result;
#[cfg(feature = "chapters")]
use crate::format::mkv::ids;
use crate::format::mux_traits::MuxContext;
use crate::sink::Sink;

/// Writes the `Chapters` element (nothing when there is no chapter).
#[cfg(not(feature = "chapters"))]
pub(crate) fn write(_k: &mut dyn Sink, _ctx: &MuxContext) -> Result<()> {
    Ok(())
}

/// Writes the `Chapters` element (nothing when there is no chapter).
#[cfg(feature = "chapters")]
pub(crate) fn write(k: &mut dyn Sink, ctx: &MuxContext) -> Result<()> {
    if ctx.chapters.is_empty() {
        return Ok(());
    }
    put_master(k, ids::CHAPTERS, &|k| {
        put_master(k, ids::EDITION_ENTRY, &|k| {
            for c in ctx.chapters.iter() {
                put_master(k, ids::CHAPTER_ATOM, &|k| {
                    put_uint(k, ids::CHAPTER_UID, c.id)?;
                    put_uint(k, ids::CHAPTER_TIME_START, c.start_ns)?;
                    put_uint(k, ids::CHAPTER_TIME_END, c.end_ns)?;
                    if let Some(title) = c.title {
                        put_master(k, ids::CHAPTER_DISPLAY, &|k| {
                            put_bytes(k, ids::CHAP_STRING, title.as_bytes())?;
                            put_bytes(k, ids::CHAP_LANGUAGE, b"und")
                        })?;
                    }
                    Ok(())
                })?;
            }
            Ok(())
        })
    })
}
