//! UTF-16LE text of ASF descriptors, decoded without allocation.
//!
//! ASF stores every string as UTF-16LE (ASF Specification rev 1.20 §3.10,
//! §3.11, §4.7). A [`crate::Tag`] carries `&str`, so text is decoded into the
//! source's scratch with [`Source::put`] and borrowed back with
//! [`Source::joined`]. With no scratch (or too little), the text cannot be
//! given and the tag is skipped; `Demuxer::next_tag` documents this. The
//! decoder is the crate's one (`crate::text`).

use crate::bytes;
use crate::error::Result;
use crate::source::Source;
use crate::text::{to_scratch, Encoding};

/// Decodes UTF-16LE text of at most `len` bytes at `at` into scratch from
/// `dst`, stopping at a NUL or at an invalid surrogate (as ffmpeg's
/// `avio_get_str16le` does). Returns the UTF-8 length written, or `None`
/// when the scratch cannot hold it.
///
/// Errors: a read error, or `Truncated` when the text runs past the input.
pub(super) fn utf16_to_scratch<S: Source>(src: &mut S, at: u64, len: u32, dst: usize) -> Result<Option<usize>> {
    to_scratch(src, at, u64::from(len), Encoding::Utf16Le, dst)
}

/// Whether the UTF-16LE units in `b` spell `s` (ASCII), followed by a NUL or
/// the end of `b`.
pub(super) fn utf16_eq(b: &[u8], s: &str) -> bool {
    let mut units = b.chunks_exact(2).map(|p| bytes::le16(p, 0).unwrap_or(0));
    for c in s.bytes() {
        if units.next() != Some(c as u16) {
            return false;
        }
    }
    matches!(units.next(), None | Some(0))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::SliceSource;

    #[test]
    fn decodes_bmp_and_surrogates() {
        // "aé🙁" then NUL then junk.
        let text: [u16; 6] = [0x61, 0xE9, 0xD83D, 0xDE41, 0, 0x62];
        let mut b = [0u8; 12];
        for (i, u) in text.iter().enumerate() {
            b[2 * i..2 * i + 2].copy_from_slice(&u.to_le_bytes());
        }
        let mut scratch = [0u8; 32];
        let mut src = SliceSource::with_scratch(&b, &mut scratch);
        let n = utf16_to_scratch(&mut src, 0, 12, 3).unwrap().unwrap();
        assert_eq!(core::str::from_utf8(&src.joined(3 + n).unwrap()[3..]).unwrap(), "aé🙁");
        let mut none: [u8; 0] = [];
        let mut src = SliceSource::with_scratch(&b, &mut none);
        assert_eq!(utf16_to_scratch(&mut src, 0, 12, 0).unwrap(), None);
    }

    #[test]
    fn compares() {
        let b = [b'W', 0, b'M', 0, 0, 0];
        assert!(utf16_eq(&b, "WM"));
        assert!(!utf16_eq(&b, "W"));
        assert!(utf16_eq(&b[..4], "WM"));
    }
}
