//! UTF-16LE text of ASF descriptors, decoded without allocation.
//!
//! ASF stores every string as UTF-16LE (ASF Specification rev 1.20 §3.10,
//! §3.11, §4.7). A [`crate::Tag`] carries `&str`, so text is decoded into the
//! source's scratch with [`Source::put`] and borrowed back with
//! [`Source::joined`]. With no scratch (or too little), the text cannot be
//! given and the tag is skipped; `Demuxer::next_tag` documents this.

use crate::bytes;
use crate::error::Result;
use crate::source::Source;

/// Decodes UTF-16LE text of at most `len` bytes at `at` into scratch from
/// `dst`, stopping at a NUL or at an invalid surrogate (as ffmpeg's
/// `avio_get_str16le` does). Returns the UTF-8 length written, or `None`
/// when the scratch cannot hold it.
///
/// Errors: a read error, or `Truncated` when the text runs past the input.
pub(super) fn utf16_to_scratch<S: Source>(src: &mut S, at: u64, len: u32, dst: usize) -> Result<Option<usize>> {
    let mut inbuf = [0u8; 128];
    let mut out = [0u8; 256];
    let mut out_len = 0usize;
    let mut written = 0usize;
    let mut high: Option<u16> = None;
    let units = (len / 2) as u64;
    let mut done = 0u64;
    'outer: while done < units {
        let take = (units - done).min(64) as usize;
        let chunk = inbuf.get_mut(..take * 2).unwrap_or(&mut []);
        src.read_exact_at(at + done * 2, chunk)?;
        done += take as u64;
        for pair in chunk.chunks_exact(2) {
            let u = bytes::le16(pair, 0).unwrap_or(0);
            let ch = match (u, high) {
                (0, _) => break 'outer,
                (0xD800..=0xDBFF, None) => {
                    high = Some(u);
                    continue;
                }
                (0xDC00..=0xDFFF, Some(h)) => {
                    high = None;
                    let c = 0x10000 + (((h as u32) - 0xD800) << 10) + ((u as u32) - 0xDC00);
                    char::from_u32(c)
                }
                (0xD800..=0xDFFF, _) | (_, Some(_)) => break 'outer,
                _ => char::from_u32(u as u32),
            };
            let Some(ch) = ch else { break 'outer };
            if out_len + 4 > out.len() {
                if !flush(src, dst, &mut written, out.get(..out_len).unwrap_or(&[]))? {
                    return Ok(None);
                }
                out_len = 0;
            }
            let n = ch
                .encode_utf8(out.get_mut(out_len..out_len + 4).unwrap_or(&mut []))
                .len();
            out_len += n;
        }
    }
    if !flush(src, dst, &mut written, out.get(..out_len).unwrap_or(&[]))? {
        return Ok(None);
    }
    Ok(Some(written))
}

fn flush<S: Source>(src: &mut S, dst: usize, written: &mut usize, bytes: &[u8]) -> Result<bool> {
    let at = dst.saturating_add(*written);
    if at.saturating_add(bytes.len()) > src.scratch_len() {
        return Ok(false);
    }
    src.put(at, bytes)?;
    *written += bytes.len();
    Ok(true)
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
