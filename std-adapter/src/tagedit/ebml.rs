//! EBML for the Matroska tag editor: element headers read from a buffer,
//! elements, sizes and `Void`s written, and a master element's `CRC-32`
//! child recomputed (RFC 8794 §4-§6, §11.3). Reading works on buffers the
//! editor holds (Info, Tags, SeekHead: small), never on media data.

use super::malformed;
use mediaslice::format::mkv::ebml;
use std::io;

/// `Void` (RFC 8794 §11.3.2): content ignored by readers.
pub(super) const VOID: u64 = 0xEC;
/// `CRC-32` (RFC 8794 §11.3.1): the CRC of its parent's data after it,
/// little-endian, as the first child.
pub(super) const CRC32: u64 = 0xBF;
/// Fewest bytes a `Void` can take: its ID and a one-byte size of zero.
pub(super) const MIN_VOID: u64 = 2;

/// One element header: the ID with its marker bits, where it starts, where
/// its data starts, its data size (`None`: unknown, §6.2).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Header {
    pub id: u64,
    pub start: u64,
    pub data: u64,
    pub size: Option<u64>,
}

impl Header {
    /// Where the data ends (the data start for an unknown size).
    pub fn end(&self) -> u64 {
        self.data + self.size.unwrap_or(0)
    }
    /// Bytes the whole element takes (header and known-size data).
    pub fn len(&self) -> u64 {
        self.end() - self.start
    }
}

/// Parses the element header at the start of `b`, which sits at `at` in
/// the file, with the demuxer's reader (`mediaslice::format::mkv::ebml`).
/// `None` when `b` ends inside it. Errors: an invalid ID or size (a zero
/// first byte, an ID of all ones, §5), or an ID over 4 bytes (Matroska's
/// EBMLMaxIDLength, RFC 8794 §11.2.4).
pub(super) fn parse_header(b: &[u8], at: u64) -> io::Result<Option<Header>> {
    let bad = || {
        malformed(format!(
            "matroska: invalid element header at byte {at} (RFC 8794 §5-§6)"
        ))
    };
    // A first byte under 0x10 starts an ID of 5 bytes or more (§4.1).
    if b.first().is_some_and(|&first| first < 0x10) {
        return Err(bad());
    }
    let mut src = mediaslice::SliceSource::new(b);
    let e = match ebml::read_element(&mut src, 0, b.len() as u64) {
        Ok(e) => e,
        Err(e) if e.is_truncation() => return Ok(None),
        Err(_) => return Err(bad()),
    };
    Ok(Some(Header {
        id: e.id,
        start: at,
        data: at + e.data,
        size: e.size,
    }))
}

/// The children of the master element whose data is `b[from..to]`, in
/// order. Errors: a child of unknown size, or past its parent (§6.2,
/// RFC 9559 §5.1: none of the elements edited may have an unknown size).
pub(super) fn children(b: &[u8], from: usize, to: usize, what: &str) -> io::Result<Vec<Header>> {
    let mut out = Vec::new();
    let mut at = from;
    while at < to {
        let h = parse_header(b.get(at..to).unwrap_or(&[]), at as u64)?
            .ok_or_else(|| malformed(format!("matroska {what}: a child header runs past its parent")))?;
        if h.size.is_none() {
            return Err(malformed(format!(
                "matroska {what}: a child of unknown size (RFC 8794 §6.2)"
            )));
        }
        if h.end() > to as u64 {
            return Err(malformed(format!(
                "matroska {what}: element 0x{:X} at byte {at} runs past its parent (RFC 8794 §6)",
                h.id
            )));
        }
        at = h.end() as usize;
        out.push(h);
    }
    Ok(out)
}

/// The bytes of `h` in `b` (header and data).
pub(super) fn bytes_of<'a>(b: &'a [u8], h: &Header) -> &'a [u8] {
    b.get(h.start as usize..h.end() as usize).unwrap_or(&[])
}

/// The data of `h` in `b`.
pub(super) fn data_of<'a>(b: &'a [u8], h: &Header) -> &'a [u8] {
    b.get(h.data as usize..h.end() as usize).unwrap_or(&[])
}

/// An unsigned integer element's value (RFC 8794 §7.2): big-endian, up to
/// 8 bytes.
pub(super) fn uint(data: &[u8]) -> Option<u64> {
    (data.len() <= 8).then(|| data.iter().fold(0u64, |a, &x| (a << 8) | u64::from(x)))
}

/// The data size `v` as a variable-size integer of `width` bytes; `None`
/// when it does not fit (all value bits set is reserved for "unknown").
pub(super) fn size_vint(v: u64, width: usize) -> Option<Vec<u8>> {
    if !(1..=8).contains(&width) || v >= (1u64 << (7 * width)) - 1 {
        return None;
    }
    let marked = v | (1u64 << (7 * width));
    Some(marked.to_be_bytes().get(8 - width..).unwrap_or(&[]).to_vec())
}

/// `v` as a variable-size integer of the fewest bytes.
fn size_min(v: u64) -> Vec<u8> {
    (1..=8).find_map(|w| size_vint(v, w)).unwrap_or_default()
}

/// The bytes of an Element ID (its marker bits included).
pub(super) fn id_bytes(id: u64) -> Vec<u8> {
    let n = (8 - id.leading_zeros() as usize / 8).max(1);
    id.to_be_bytes().get(8 - n..).unwrap_or(&[]).to_vec()
}

/// An element: ID, the fewest-byte size, `data`.
pub(super) fn element(id: u64, data: &[u8]) -> Vec<u8> {
    let mut out = id_bytes(id);
    out.extend(size_min(data.len() as u64));
    out.extend_from_slice(data);
    out
}

/// An unsigned integer element of the fewest bytes (at least one).
pub(super) fn uint_element(id: u64, v: u64) -> Vec<u8> {
    let n = (8 - v.leading_zeros() as usize / 8).max(1);
    element(id, v.to_be_bytes().get(8 - n..).unwrap_or(&[]))
}

/// An unsigned integer element of `v` in `width` bytes when it fits,
/// else in the fewest (RFC 8794 §7.2 allows leading zero bytes).
pub(super) fn uint_sized(id: u64, v: u64, width: usize) -> Vec<u8> {
    if (1..=8).contains(&width) && (width == 8 || v < 1u64 << (8 * width)) {
        element(id, v.to_be_bytes().get(8 - width..).unwrap_or(&[]))
    } else {
        uint_element(id, v)
    }
}

/// The header of a `Void` of `len` bytes in all (at least [`MIN_VOID`]):
/// a one-byte size up to 128 bytes, an eight-byte size past that, so every
/// length from 2 up has a header (RFC 8794 §6.1 allows either width).
pub(super) fn void_header(len: u64) -> Vec<u8> {
    if len <= 128 {
        vec![0xEC, 0x80 | (len.saturating_sub(2) as u8)]
    } else {
        let mut h = vec![0xEC];
        h.extend(size_vint(len - 9, 8).unwrap_or_default());
        h
    }
}

/// A master element of `id` around `children` (their bytes in order); a
/// `CRC-32` among them (as the first child, where RFC 8794 §11.3.1 puts
/// it) is recomputed over the rest.
pub(super) fn master(id: u64, children: &[Vec<u8>]) -> Vec<u8> {
    master_like(None, id, children)
}

/// [`master`], its size written in the width of the size of `like` (an
/// element it replaces) when the new size fits it, so that an element
/// that keeps its length keeps its place.
pub(super) fn master_like(like: Option<&[u8]>, id: u64, children: &[Vec<u8>]) -> Vec<u8> {
    let mut data: Vec<u8> = children.concat();
    if let Some(first) = children.first() {
        let head = id_bytes(CRC32);
        if first.len() == head.len() + 5 && first.starts_with(&head) {
            let at = first.len();
            let crc = mediaslice::crc::crc32(data.get(at..).unwrap_or(&[]));
            if let Some(slot) = data.get_mut(at - 4..at) {
                slot.copy_from_slice(&crc.to_le_bytes());
            }
        }
    }
    let width = like
        .and_then(|b| parse_header(b, 0).ok().flatten())
        .filter(|h| h.id == id)
        .map(|h| (h.data - h.start) as usize - id_bytes(id).len());
    match width.and_then(|w| size_vint(data.len() as u64, w)) {
        Some(size) => [id_bytes(id), size, data].concat(),
        None => element(id, &data),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn voids_of_every_small_length_parse_back() {
        for len in 2..300u64 {
            let h = void_header(len);
            let mut v = h.clone();
            v.resize(len as usize, 0);
            let p = parse_header(&v, 0).unwrap().unwrap();
            assert_eq!((p.id, p.len()), (VOID, len), "void of {len}");
        }
    }

    #[test]
    fn sizes_and_crc() {
        assert_eq!(size_vint(126, 1), Some(vec![0xFE]));
        assert_eq!(size_vint(127, 1), None);
        assert_eq!(id_bytes(0x1549_A966), [0x15, 0x49, 0xA9, 0x66]);
        let crc = element(CRC32, &[0; 4]);
        let m = master(0x7373, &[crc, uint_element(0x68CA, 50)]);
        let kids = children(&m, 3, m.len(), "test").unwrap();
        let stored = u32::from_le_bytes(data_of(&m, &kids[0]).try_into().unwrap());
        assert_eq!(stored, mediaslice::crc::crc32(bytes_of(&m, &kids[1])));
        assert!(parse_header(&[0x00, 0x81], 0).is_err());
        assert_eq!(parse_header(&[0x1A, 0x45], 0).unwrap(), None);
    }
}
