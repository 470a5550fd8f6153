//! Text stored as UTF-16 or ISO-8859-1, decoded to UTF-8 in the source's
//! scratch without allocation.
//!
//! A [`crate::Tag`] or a chapter title carries `&str`, so text in another
//! encoding is written into the scratch with [`Source::put`] and borrowed
//! back with [`Source::joined`]. Users: ASF strings (UTF-16LE, ASF
//! Specification rev 1.20 §3.10), ID3v2 chapter titles (ISO-8859-1 and
//! UTF-16, ID3v2.4 §4.2), QuickTime chapter-track samples (UTF-16 with a
//! byte order mark). Decoding stops at a NUL, and at an unpaired surrogate,
//! as ffmpeg's `GET_UTF16` loops (`avio_get_str16le`, id3v2's `decode_str`)
//! stop.

use crate::bytes;
use crate::error::Result;
use crate::source::Source;

/// A byte encoding of text.
#[cfg_attr(not(feature = "chapters"), allow(dead_code, reason = "ASF uses only UTF-16LE"))]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Encoding {
    /// ISO-8859-1: each byte is the code point of the same value.
    Latin1,
    /// UTF-16, little-endian code units.
    Utf16Le,
    /// UTF-16, big-endian code units.
    Utf16Be,
}

impl Encoding {
    /// The UTF-16 byte order a byte order mark (U+FEFF as its first two
    /// bytes) selects, or `None` when `bom` is no mark.
    #[cfg_attr(not(feature = "chapters"), allow(dead_code, reason = "used by chapter titles"))]
    pub(crate) fn from_bom(bom: [u8; 2]) -> Option<Self> {
        match bom {
            [0xFE, 0xFF] => Some(Encoding::Utf16Be),
            [0xFF, 0xFE] => Some(Encoding::Utf16Le),
            _ => None,
        }
    }
}

/// Bytes read from the source at a time.
const CHUNK: usize = 128;
/// UTF-8 bytes gathered before each [`Source::put`].
const OUT: usize = 256;

/// Decodes the text of at most `len` bytes at `at` (for UTF-16, its
/// `len / 2` code units) into scratch from `dst`, stopping at a NUL or an
/// unpaired surrogate. Returns the UTF-8 length written, or `None` when the
/// scratch cannot hold it.
///
/// Errors: a read error, or `Truncated` when the text runs past the input.
pub(crate) fn to_scratch<S: Source>(
    src: &mut S,
    at: u64,
    len: u64,
    enc: Encoding,
    dst: usize,
) -> Result<Option<usize>> {
    let width: u64 = if enc == Encoding::Latin1 { 1 } else { 2 };
    let total = len / width * width;
    let mut inbuf = [0u8; CHUNK];
    let mut out = Utf8Out {
        buf: [0; OUT],
        len: 0,
        dst,
        written: 0,
    };
    let mut high: Option<u16> = None;
    let mut done = 0u64;
    'outer: while done < total {
        let take = (total - done).min(CHUNK as u64) as usize;
        let chunk = inbuf.get_mut(..take).unwrap_or(&mut []);
        src.read_exact_at(at + done, chunk)?;
        done += take as u64;
        for unit in chunk.chunks_exact(width as usize) {
            let u = match enc {
                Encoding::Latin1 => u16::from(unit.first().copied().unwrap_or(0)),
                Encoding::Utf16Le => bytes::le16(unit, 0).unwrap_or(0),
                Encoding::Utf16Be => bytes::be16(unit, 0).unwrap_or(0),
            };
            let ch = match (u, high) {
                (0, _) => break 'outer,
                (0xD800..=0xDBFF, None) => {
                    high = Some(u);
                    continue;
                }
                (0xDC00..=0xDFFF, Some(h)) => {
                    high = None;
                    let c = 0x10000 + ((u32::from(h) - 0xD800) << 10) + (u32::from(u) - 0xDC00);
                    char::from_u32(c)
                }
                (0xD800..=0xDFFF, _) | (_, Some(_)) => break 'outer,
                _ => char::from_u32(u32::from(u)),
            };
            let Some(ch) = ch else { break 'outer };
            if !out.push(src, ch)? {
                return Ok(None);
            }
        }
    }
    if !out.flush(src)? {
        return Ok(None);
    }
    Ok(Some(out.written))
}

/// UTF-8 gathered on the stack and put into scratch in blocks.
struct Utf8Out {
    buf: [u8; OUT],
    len: usize,
    dst: usize,
    written: usize,
}

impl Utf8Out {
    /// Appends `ch`; `false` when the scratch is full.
    fn push<S: Source>(&mut self, src: &mut S, ch: char) -> Result<bool> {
        if self.len + 4 > self.buf.len() && !self.flush(src)? {
            return Ok(false);
        }
        let n = ch
            .encode_utf8(self.buf.get_mut(self.len..self.len + 4).unwrap_or(&mut []))
            .len();
        self.len += n;
        Ok(true)
    }

    /// Puts what is gathered into scratch; `false` when it does not fit.
    fn flush<S: Source>(&mut self, src: &mut S) -> Result<bool> {
        let bytes = self.buf.get(..self.len).unwrap_or(&[]);
        let at = self.dst.saturating_add(self.written);
        if at.saturating_add(bytes.len()) > src.scratch_len() {
            return Ok(false);
        }
        src.put(at, bytes)?;
        self.written += bytes.len();
        self.len = 0;
        Ok(true)
    }
}

#[cfg(test)]
mod tests {
    extern crate std;
    use super::*;
    use crate::SliceSource;

    fn decode(b: &[u8], enc: Encoding) -> Option<std::string::String> {
        let mut scratch = [0u8; 600];
        let mut src = SliceSource::with_scratch(b, &mut scratch);
        let n = to_scratch(&mut src, 0, b.len() as u64, enc, 3).unwrap()?;
        Some(core::str::from_utf8(&src.joined(3 + n).unwrap()[3..]).unwrap().into())
    }

    #[test]
    fn utf16_both_orders_and_surrogates() {
        // "aé🙁" then NUL then junk.
        let text: [u16; 6] = [0x61, 0xE9, 0xD83D, 0xDE41, 0, 0x62];
        let le: std::vec::Vec<u8> = text.iter().flat_map(|u| u.to_le_bytes()).collect();
        let be: std::vec::Vec<u8> = text.iter().flat_map(|u| u.to_be_bytes()).collect();
        assert_eq!(decode(&le, Encoding::Utf16Le).as_deref(), Some("aé🙁"));
        assert_eq!(decode(&be, Encoding::Utf16Be).as_deref(), Some("aé🙁"));
        // An odd last byte is not a unit; a lone low surrogate stops.
        assert_eq!(decode(b"a\x00b", Encoding::Utf16Le).as_deref(), Some("a"));
        assert_eq!(decode(b"a\x00\x00\xDCb\x00", Encoding::Utf16Le).as_deref(), Some("a"));
        // A high surrogate at the end, or before a non-surrogate, stops.
        assert_eq!(decode(b"\x00a\xD8\x00", Encoding::Utf16Be).as_deref(), Some("a"));
        assert_eq!(decode(b"\x00a\xD8\x00\x00b", Encoding::Utf16Be).as_deref(), Some("a"));
    }

    #[test]
    fn latin1_and_long_text() {
        assert_eq!(decode(b"Caf\xE9\x00x", Encoding::Latin1).as_deref(), Some("Café"));
        // Longer than one input chunk and one output block.
        let long = [0xE9u8; 290];
        assert_eq!(decode(&long, Encoding::Latin1), Some("é".repeat(290)));
    }

    #[test]
    fn scratch_too_small() {
        let b = [b'a', 0, b'b', 0];
        let mut none: [u8; 0] = [];
        let mut src = SliceSource::with_scratch(&b, &mut none);
        assert_eq!(to_scratch(&mut src, 0, 4, Encoding::Utf16Le, 0).unwrap(), None);
        let mut one = [0u8; 1];
        let mut src = SliceSource::with_scratch(&b, &mut one);
        assert_eq!(to_scratch(&mut src, 0, 4, Encoding::Utf16Le, 0).unwrap(), None);
        // Nothing to write fits in no scratch.
        let mut src = SliceSource::with_scratch(&b, &mut none);
        assert_eq!(to_scratch(&mut src, 0, 0, Encoding::Utf16Le, 0).unwrap(), Some(0));
    }

    #[test]
    fn boms() {
        assert_eq!(Encoding::from_bom([0xFE, 0xFF]), Some(Encoding::Utf16Be));
        assert_eq!(Encoding::from_bom([0xFF, 0xFE]), Some(Encoding::Utf16Le));
        assert_eq!(Encoding::from_bom([0, 0]), None);
    }
}
