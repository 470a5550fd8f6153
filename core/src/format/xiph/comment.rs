//! Vorbis comments (the Vorbis I specification §5, reused by FLAC's
//! VORBIS_COMMENT block, RFC 9639 §8.6, and by Opus, Theora and Speex in
//! Ogg): a vendor string, then `count` entries of `KEY=value`, every length a
//! 32-bit little-endian integer.
//!
//! [`CommentCursor`] walks a comment block that is contiguous in the input
//! (FLAC); Ogg, where a comment packet may span pages, maps the same walk over
//! its pages and shares [`split_entry`] and [`common_name`].

use crate::error::Result;
use crate::source::Source;
use crate::tags::{text_or_bytes, TagValue};

/// Position of a walk over a contiguous comment block.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct CommentCursor {
    /// Offset of the next entry's length field.
    pub pos: u64,
    /// End of the block.
    pub end: u64,
    /// Entries the block still announces.
    pub remaining: u32,
}

impl CommentCursor {
    /// Starts a walk over the comment block of `len` bytes at `offset`: skips
    /// the vendor string and reads the entry count. Returns `None` when the
    /// vendor string does not fit (the block is then ignored, as ffmpeg
    /// does).
    ///
    /// Errors: a read error of the source.
    pub fn begin<S: Source>(src: &mut S, offset: u64, len: u64) -> Result<Option<CommentCursor>> {
        let end = offset.saturating_add(len);
        if len < 8 {
            return Ok(None);
        }
        let vendor = u32::from_le_bytes(src.array(offset)?) as u64;
        let count_at = offset + 4 + vendor;
        if count_at.saturating_add(4) > end {
            return Ok(None);
        }
        let remaining = u32::from_le_bytes(src.array(count_at)?);
        Ok(Some(CommentCursor {
            pos: count_at + 4,
            end,
            remaining,
        }))
    }

    /// The next entry's range (offset, length), or `None` at the end of the
    /// block or of the announced entries. An entry that overruns the block
    /// ends the walk.
    ///
    /// Errors: a read error of the source.
    pub fn next_entry<S: Source>(&mut self, src: &mut S) -> Result<Option<(u64, u32)>> {
        if self.remaining == 0 || self.pos.saturating_add(4) > self.end {
            return Ok(None);
        }
        let len = u32::from_le_bytes(src.array(self.pos)?);
        let start = self.pos + 4;
        if start.saturating_add(len as u64) > self.end {
            self.remaining = 0;
            return Ok(None);
        }
        self.pos = start + len as u64;
        self.remaining -= 1;
        Ok(Some((start, len)))
    }
}

/// Splits a `KEY=value` entry. Returns `None` when there is no `=`, the key
/// or the value is empty (ffmpeg skips those), or the key is not UTF-8.
pub fn split_entry(entry: &[u8]) -> Option<(&str, TagValue<'_>)> {
    let eq = entry.iter().position(|&c| c == b'=')?;
    let key = entry.get(..eq)?;
    let value = entry.get(eq + 1..)?;
    if key.is_empty() || value.is_empty() {
        return None;
    }
    let key = core::str::from_utf8(key).ok()?;
    Some((key, text_or_bytes(value)))
}

/// The name ffprobe shows for a Vorbis comment key, when it renames it
/// (ffmpeg's `ff_vorbiscomment_metadata_conv`), or the conventional
/// lower-case name of the common fields (Vorbis I §5.2.2).
pub fn common_name(key: &str) -> Option<&'static str> {
    const NAMES: [(&str, &str); 16] = [
        ("ALBUMARTIST", "album_artist"),
        ("TRACKNUMBER", "track"),
        ("DISCNUMBER", "disc"),
        ("DESCRIPTION", "comment"),
        ("TITLE", "title"),
        ("ARTIST", "artist"),
        ("ALBUM", "album"),
        ("DATE", "date"),
        ("GENRE", "genre"),
        ("COMMENT", "comment"),
        ("COPYRIGHT", "copyright"),
        ("COMPOSER", "composer"),
        ("PERFORMER", "performer"),
        ("ENCODER", "encoder"),
        ("LANGUAGE", "language"),
        ("ORGANIZATION", "publisher"),
    ];
    NAMES.iter().find(|(k, _)| k.eq_ignore_ascii_case(key)).map(|&(_, n)| n)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::SliceSource;

    #[test]
    fn walks_a_block() {
        let mut b = [0u8; 64];
        b[0] = 3;
        b[4..7].copy_from_slice(b"ven");
        b[7] = 3; // three entries announced, two present
        b[11] = 9;
        b[15..24].copy_from_slice(b"TITLE=abc");
        b[24] = 4;
        b[28..32].copy_from_slice(b"X=yz");
        let mut src = SliceSource::new(&b[..32]);
        let mut c = CommentCursor::begin(&mut src, 0, 32).unwrap().unwrap();
        assert_eq!(c.next_entry(&mut src).unwrap(), Some((15, 9)));
        assert_eq!(c.next_entry(&mut src).unwrap(), Some((28, 4)));
        assert_eq!(c.next_entry(&mut src).unwrap(), None);
        assert_eq!(split_entry(b"TITLE=abc"), Some(("TITLE", TagValue::Text("abc"))));
        assert_eq!(split_entry(b"TITLE="), None);
        assert_eq!(split_entry(b"=x"), None);
        assert_eq!(split_entry(b"nothing"), None);
        assert_eq!(common_name("tracknumber"), Some("track"));
        assert_eq!(common_name("X"), None);
    }
}
