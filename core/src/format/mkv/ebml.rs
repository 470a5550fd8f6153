//! EBML: variable-size integers, element headers and element values, read
//! through a [`Source`] (RFC 8794).
//!
//! An element is an ID (RFC 8794 §5, 1 to 8 bytes, marker bits kept as part
//! of the ID), a data size (§6, 1 to 8 bytes, marker bit removed; all value
//! bits set means "unknown size", §6.2) and the data. Nothing here allocates
//! or keeps a borrow of the source.
//!
//! `pub` (hidden) for `mediaslice-std`, whose `probe --json` Matroska facts
//! and Matroska tag editor read element headers with [`read_element`] too
//! (one EBML header reader in the workspace; docs/api.md).

use crate::error::{Error, Result};
use crate::ieee754::Float;
use crate::source::Source;

/// Longest element header: an 8-byte ID and an 8-byte size.
pub(crate) const MAX_HEADER: usize = 16;

/// One element header as found in the input.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Element {
    /// The Element ID with its marker bits (RFC 8794 §5), as the specs write it.
    pub id: u64,
    /// Offset of the first byte of the ID.
    pub start: u64,
    /// Offset of the first byte of the data.
    pub data: u64,
    /// The data size, `None` for an unknown size (RFC 8794 §6.2).
    pub size: Option<u64>,
}

impl Element {
    /// Offset just past the data, when the size is known.
    pub fn end(&self) -> Option<u64> {
        self.data.checked_add(self.size?)
    }

    /// Offset just past the data, an unknown or overflowing size being taken
    /// to run to `limit`; never beyond `limit`.
    pub fn end_within(&self, limit: u64) -> u64 {
        self.end().unwrap_or(limit).min(limit)
    }
}

/// Length in bytes of a variable-size integer from its first byte (RFC 8794
/// §4: the count of leading zero bits plus one), `None` for a zero byte.
pub(crate) fn vint_len(first: u8) -> Option<usize> {
    if first == 0 {
        None
    } else {
        Some(first.leading_zeros() as usize + 1)
    }
}

/// The first variable-size integer of `b` as read (RFC 8794 §4): its bytes
/// big-endian with the marker kept, the mask of its value bits, its length.
/// `None` when `b` is too short or the first byte is zero.
fn raw_vint(b: &[u8]) -> Option<(u64, u64, usize)> {
    let n = vint_len(*b.first()?)?;
    let raw = b.get(..n)?.iter().fold(0u64, |v, &x| (v << 8) | x as u64);
    // At most 56 value bits: `n` is at most 8.
    Some((raw, (1u64 << (7 * n as u32)) - 1, n))
}

/// Parses an Element ID (RFC 8794 §5) at the start of `b`: the ID with its
/// marker bits and its length. `None` when `b` is too short or the ID is
/// invalid (a zero first byte, or all value bits set, §5).
pub(crate) fn parse_id(b: &[u8]) -> Option<(u64, usize)> {
    let (id, mask, n) = raw_vint(b)?;
    (id & mask != mask).then_some((id, n))
}

/// Parses a variable-size integer (RFC 8794 §4) at the start of `b`: its
/// value with the marker removed, `None` for "unknown" (all value bits set),
/// and its length. The outer `None` means `b` is too short or the first byte
/// is zero.
pub(crate) fn parse_vint(b: &[u8]) -> Option<(Option<u64>, usize)> {
    let (raw, mask, n) = raw_vint(b)?;
    let v = raw & mask;
    Some(((v != mask).then_some(v), n))
}

/// Parses a signed variable-size integer as used by EBML lacing (RFC 9559
/// §10.4.4): the unsigned value minus half its range.
pub(crate) fn parse_svint(b: &[u8]) -> Option<(i64, usize)> {
    let (raw, mask, n) = raw_vint(b)?;
    Some(((raw & mask) as i64 - (mask >> 1) as i64, n))
}

/// Reads the element header at `at`, which must be before `limit` (the end
/// of the parent). A data size that runs past `limit` is kept as read; use
/// [`Element::end_within`] to clamp.
///
/// Errors: `Truncated` when the input ends inside the header; `Malformed` for
/// an invalid ID or size (RFC 8794 §5, §6).
pub fn read_element<S: Source>(src: &mut S, at: u64, limit: u64) -> Result<Element> {
    let mut b = [0u8; MAX_HEADER];
    let avail = limit.saturating_sub(at).min(MAX_HEADER as u64) as usize;
    let n = if avail == MAX_HEADER {
        // The common case, as one fixed-size read (`Source::array`); near
        // the end of the input the partial read below says how much is there.
        match src.array::<MAX_HEADER>(at) {
            Ok(a) => {
                b = a;
                MAX_HEADER
            }
            Err(e) if e.is_truncation() => src.read_at(at, &mut b)?,
            Err(e) => return Err(e),
        }
    } else {
        src.read_at(at, b.get_mut(..avail).unwrap_or(&mut []))?
    };
    let h = b.get(..n).unwrap_or(&[]);
    // Too few bytes: the input ended (truncation) or the parent did (damage).
    let eof = limit >= src.len();
    let short = || {
        if n < avail || eof {
            Error::truncated(
                at.saturating_add(n as u64),
                &"mkv EBML: input ends inside an element header (RFC 8794 §4)",
            )
        } else {
            Error::malformed(at, &"mkv EBML: element header runs past its parent (RFC 8794 §6)")
        }
    };
    let first = *h.first().ok_or_else(short)?;
    if vint_len(first).is_none_or(|l| l > 8) {
        return Err(Error::malformed(at, &"mkv EBML: invalid Element ID (RFC 8794 §5)"));
    }
    let id_len = vint_len(first).unwrap_or(1);
    if h.len() < id_len {
        return Err(short());
    }
    let (id, _) = parse_id(h).ok_or(Error::malformed(at, &"mkv EBML: invalid Element ID (RFC 8794 §5)"))?;
    let rest = h.get(id_len..).unwrap_or(&[]);
    let size_first = *rest.first().ok_or_else(short)?;
    let size_len = vint_len(size_first).ok_or(Error::malformed(
        at,
        &"mkv EBML: invalid Element Data Size (RFC 8794 §6)",
    ))?;
    if rest.len() < size_len {
        return Err(short());
    }
    let (size, _) = parse_vint(rest).ok_or_else(short)?;
    Ok(Element {
        id,
        start: at,
        data: at + (id_len + size_len) as u64,
        size,
    })
}

/// Reads an unsigned integer element's data (RFC 8794 §7.2): 0 to 8 bytes,
/// big-endian; an empty element is 0.
///
/// Errors: `Malformed` for a size over 8; a read error.
pub(crate) fn read_uint<S: Source>(src: &mut S, e: &Element) -> Result<u64> {
    let size = e.size.unwrap_or(u64::MAX);
    if size > 8 {
        return Err(Error::malformed(
            e.start,
            &"mkv EBML: unsigned integer element longer than 8 bytes (RFC 8794 §7.2)",
        ));
    }
    let mut b = [0u8; 8];
    let buf = b.get_mut(..size as usize).unwrap_or(&mut []);
    src.read_exact_at(e.data, buf)?;
    Ok(buf.iter().fold(0u64, |v, &x| (v << 8) | x as u64))
}

/// Reads a float element's data (RFC 8794 §7.3): 0, 4 or 8 bytes; `None`
/// for an infinity or a NaN.
///
/// Errors: `Malformed` for another size; a read error.
pub(crate) fn read_float<S: Source>(src: &mut S, e: &Element) -> Result<Option<Float>> {
    match e.size {
        Some(0) => Ok(Some(Float::ZERO)),
        Some(4) => Ok(Float::from_be_f32(src.array(e.data)?)),
        Some(8) => Ok(Float::from_be_f64(src.array(e.data)?)),
        _ => Err(Error::malformed(
            e.start,
            &"mkv EBML: float element not 0, 4 or 8 bytes (RFC 8794 §7.3)",
        )),
    }
}

/// Copies a short string element's data into `out` (RFC 8794 §7.4, §7.5),
/// stopping at the first NUL. Returns the bytes copied, at most `out.len()`
/// (longer strings are cut).
pub(crate) fn read_str<'b, S: Source>(src: &mut S, e: &Element, out: &'b mut [u8]) -> Result<&'b [u8]> {
    let size = e.size.unwrap_or(0).min(out.len() as u64) as usize;
    let buf = out.get_mut(..size).unwrap_or(&mut []);
    src.read_exact_at(e.data, buf)?;
    let end = buf.iter().position(|&c| c == 0).unwrap_or(buf.len());
    Ok(buf.get(..end).unwrap_or(&[]))
}

/// Walks the children of a master element in `pos..end`, one header at a
/// time. Each step advances by at least the header, so the walk ends.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Children {
    /// Offset of the next child.
    pub pos: u64,
    /// End of the parent's data.
    pub end: u64,
}

impl Children {
    /// The children of `e`, within `limit` (the input length or the
    /// parent's end) when `e`'s size is unknown or runs past it.
    pub fn of(e: &Element, limit: u64) -> Self {
        Children {
            pos: e.data,
            end: e.end_within(limit),
        }
    }

    /// The next child, or `None` at the parent's end. A child of unknown
    /// size is taken to run to the parent's end; a child running past the
    /// parent is cut to it.
    ///
    /// Errors: a header error from [`read_element`].
    pub fn next<S: Source>(&mut self, src: &mut S) -> Result<Option<Element>> {
        if self.pos >= self.end {
            return Ok(None);
        }
        let mut e = read_element(src, self.pos, self.end)?;
        let end = e.end_within(self.end);
        e.size = Some(end.saturating_sub(e.data));
        self.pos = end.max(e.data);
        if e.data > self.end {
            return Ok(None);
        }
        Ok(Some(e))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::SliceSource;

    #[test]
    fn vints() {
        assert_eq!(parse_vint(&[0x81]), Some((Some(1), 1)));
        assert_eq!(parse_vint(&[0x40, 0x02]), Some((Some(2), 2)));
        assert_eq!(parse_vint(&[0xFF]), Some((None, 1)));
        assert_eq!(
            parse_vint(&[0x01, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF]),
            Some((None, 8))
        );
        assert_eq!(parse_vint(&[0x01, 0, 0, 0, 0, 0, 0, 5]), Some((Some(5), 8)));
        assert_eq!(parse_vint(&[0x00]), None);
        assert_eq!(parse_vint(&[0x40]), None);
        assert_eq!(parse_id(&[0x1A, 0x45, 0xDF, 0xA3]), Some((0x1A45_DFA3, 4)));
        assert_eq!(parse_id(&[0xFF]), None);
        assert_eq!(parse_svint(&[0xBF]), Some((0, 1)));
        assert_eq!(parse_svint(&[0x80]), Some((-63, 1)));
        assert_eq!(parse_svint(&[0x5F, 0xFF]), Some((0, 2)));
    }

    #[test]
    fn headers() {
        let b = [0x1A, 0x45, 0xDF, 0xA3, 0x84, 1, 2, 3, 4];
        let mut s = SliceSource::new(&b);
        let e = read_element(&mut s, 0, 9).unwrap();
        assert_eq!((e.id, e.data, e.size), (0x1A45_DFA3, 5, Some(4)));
        assert_eq!(read_uint(&mut s, &e).unwrap(), 0x0102_0304);
        let cut = [0x1A, 0x45];
        let mut s = SliceSource::new(&cut);
        assert!(read_element(&mut s, 0, 2).unwrap_err().is_truncation());
        let bad = [0x00, 0x81];
        let mut s = SliceSource::new(&bad);
        assert!(!read_element(&mut s, 0, 2).unwrap_err().is_truncation());
    }
}

/// Walks `data` as EBML for the standalone fuzz target of the element reader
/// (`fuzz/fuzz_targets/shared_parsers.rs`): every element (nested up to 8
/// levels, at most 10 000 in all) is read as an unsigned integer, a float
/// and a string, and its children are walked both by [`Children`] and by
/// element ends. Built only under `cfg(fuzzing)`.
#[cfg(fuzzing)]
pub fn fuzz_walk(data: &[u8]) {
    /// Deepest nesting the fuzz walk descends to.
    const FUZZ_MAX_DEPTH: u32 = 8;
    /// Most elements the fuzz walk reads in all.
    const FUZZ_BUDGET: u32 = 10_000;
    fn walk<S: Source>(src: &mut S, from: u64, limit: u64, depth: u32, budget: &mut u32) {
        let mut at = from;
        while at < limit && *budget > 0 {
            *budget -= 1;
            let Ok(e) = read_element(src, at, limit) else { return };
            let _ = read_uint(src, &e);
            let _ = read_float(src, &e);
            let mut b = [0u8; 64];
            let _ = read_str(src, &e, &mut b);
            let end = e.end_within(limit);
            if depth < FUZZ_MAX_DEPTH {
                walk(src, e.data, end, depth + 1, budget);
                let mut kids = Children::of(&e, limit);
                while *budget > 0 {
                    *budget -= 1;
                    match kids.next(src) {
                        Ok(Some(_)) => {}
                        _ => break,
                    }
                }
            }
            if end <= at {
                return;
            }
            at = end;
        }
    }
    let mut src = crate::source::SliceSource::new(data);
    let mut budget = FUZZ_BUDGET;
    walk(&mut src, 0, data.len() as u64, 0, &mut budget);
    for i in 0..data.len().min(64) {
        let rest = data.get(i..).unwrap_or(&[]);
        let _ = (
            parse_id(rest),
            parse_vint(rest),
            parse_svint(rest),
            vint_len(rest.first().copied().unwrap_or(0)),
        );
    }
}
