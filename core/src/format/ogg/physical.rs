//! The physical bitstream (RFC 3533 §6): the 27-byte page header, the
//! segment table, the CRC-32 check, and the search for the next page after
//! damage. Nothing here knows about logical streams or codecs.

use zerocopy::little_endian::{U32, U64};
use zerocopy::{FromBytes, Immutable, IntoBytes, KnownLayout, Unaligned};

use crate::error::{Error, Result};
use crate::format::xiph::crc::crc32_ogg;
use crate::source::Source;

/// The capture pattern that starts every page (RFC 3533 §6).
pub const CAPTURE: &[u8; 4] = b"OggS";
/// Size of the fixed page header ([`PageHeader`]).
pub const HEADER_LEN: usize = core::mem::size_of::<PageHeader>();
// RFC 3533 §6: the fixed header is 27 bytes.
const _: () = assert!(HEADER_LEN == 27);
/// Most lacing values in a page's segment table (`page_segments` is a byte).
pub const MAX_SEGMENTS: usize = 255;
/// The largest page: header, 255 lacing values, 255 segments of 255 bytes.
pub const MAX_PAGE: u64 = HEADER_LEN as u64 + 255 + 255 * 255;

/// `header_type` flag: the page continues a packet of the previous page.
pub const FLAG_CONTINUED: u8 = 0x01;
/// `header_type` flag: first page of a logical bitstream.
pub const FLAG_BOS: u8 = 0x02;
/// `header_type` flag: last page of a logical bitstream.
pub const FLAG_EOS: u8 = 0x04;

/// The granule position of a page on which no packet ends (RFC 3533 §6).
pub const NO_GRANULE: u64 = u64::MAX;

/// The fixed page header (RFC 3533 §6), 27 bytes little-endian; the segment
/// table of `segments` lacing values follows it.
#[derive(FromBytes, IntoBytes, KnownLayout, Immutable, Unaligned, Clone, Copy, Debug)]
#[repr(C)]
pub struct PageHeader {
    /// `capture_pattern`: `OggS`.
    pub capture: [u8; 4],
    /// `stream_structure_version`: 0.
    pub version: u8,
    /// `header_type_flag`: [`FLAG_CONTINUED`], [`FLAG_BOS`], [`FLAG_EOS`].
    pub header_type: u8,
    /// `granule_position` ([`NO_GRANULE`] when no packet ends on the page).
    pub granule: U64,
    /// `bitstream_serial_number`.
    pub serial: U32,
    /// `page_sequence_number`.
    pub sequence: U32,
    /// `CRC_checksum`, computed with this field zeroed.
    pub crc: U32,
    /// `number_page_segments`: lacing values in the segment table.
    pub segments: u8,
}

/// One page header with its segment table.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Page {
    /// Offset of the capture pattern.
    pub offset: u64,
    /// `header_type` flags.
    pub flags: u8,
    /// `granule_position` (as stored; [`NO_GRANULE`] is -1).
    pub granule: u64,
    /// `bitstream_serial_number`.
    pub serial: u32,
    /// `page_sequence_number`.
    pub seq: u32,
    /// Number of lacing values.
    pub nsegs: u8,
    /// The lacing values.
    pub segs: [u8; MAX_SEGMENTS],
    /// Offset of the first body byte.
    pub body: u64,
    /// Body length (the sum of the lacing values).
    pub body_len: u32,
}

impl Page {
    /// The lacing values in use.
    pub fn lacing(&self) -> &[u8] {
        self.segs.get(..self.nsegs as usize).unwrap_or(&[])
    }

    /// Offset of the first byte after the page.
    pub fn end(&self) -> u64 {
        self.body + self.body_len as u64
    }
}

/// What is at an offset.
// A page header is returned by value and dropped at once; the other
// variants carry nothing.
#[allow(clippy::large_enum_variant)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PageRead {
    /// A page (its CRC checked when asked).
    Page(Page),
    /// A page header whose CRC-32 does not match the page.
    BadCrc,
    /// No valid page starts here.
    Bad,
    /// A page header starts here but the input ends before the page does.
    Cut,
}

/// Reads the page at `at`. With `check`, the CRC-32 must match (skipped
/// under `cfg(fuzzing)`) and the version must be 0.
///
/// Errors: a read error of the source.
pub fn read_page<S: Source>(src: &mut S, at: u64, check: bool) -> Result<PageRead> {
    let mut h = [0u8; HEADER_LEN];
    let n = src.read_at(at, &mut h)?;
    let Ok((hdr, _)) = PageHeader::ref_from_prefix(&h) else {
        return Ok(PageRead::Bad);
    };
    let k = n.min(CAPTURE.len());
    if hdr.capture.get(..k) != CAPTURE.get(..k) || (n > CAPTURE.len() && hdr.version != 0) {
        return Ok(PageRead::Bad);
    }
    if n < HEADER_LEN {
        return Ok(PageRead::Cut);
    }
    let nsegs = hdr.segments;
    let mut segs = [0u8; MAX_SEGMENTS];
    let lacing = segs.get_mut(..nsegs as usize).unwrap_or(&mut []);
    let m = src.read_at(at + HEADER_LEN as u64, lacing)?;
    if m < lacing.len() {
        return Ok(PageRead::Cut);
    }
    let body_len: u32 = lacing.iter().map(|&s| s as u32).sum();
    let body = at + HEADER_LEN as u64 + nsegs as u64;
    if body + body_len as u64 > src.len() {
        return Ok(PageRead::Cut);
    }
    let page = Page {
        offset: at,
        flags: hdr.header_type,
        granule: hdr.granule.get(),
        serial: hdr.serial.get(),
        seq: hdr.sequence.get(),
        nsegs,
        segs,
        body,
        body_len,
    };
    if check && !cfg!(fuzzing) {
        let mut zeroed = *hdr;
        zeroed.crc = U32::ZERO;
        let mut crc = crc32_ogg(0, zeroed.as_bytes());
        crc = crc32_ogg(crc, page.lacing());
        crc = body_crc(src, crc, body, body_len)?;
        if crc != hdr.crc.get() {
            return Ok(PageRead::BadCrc);
        }
    }
    Ok(PageRead::Page(page))
}

/// Continues the CRC over the page body: one borrow in slice mode, 512-byte
/// reads through the block cache otherwise.
fn body_crc<S: Source>(src: &mut S, mut crc: u32, body: u64, len: u32) -> Result<u32> {
    if src.is_slice() {
        return Ok(crc32_ogg(crc, src.bytes(body, len as usize)?));
    }
    let mut buf = [0u8; 512];
    let mut done = 0u32;
    while done < len {
        let n = (len - done).min(buf.len() as u32) as usize;
        let b = buf.get_mut(..n).unwrap_or(&mut []);
        src.read_exact_at(body + done as u64, b)?;
        crc = crc32_ogg(crc, b);
        done += n as u32;
    }
    Ok(crc)
}

/// The result of looking for the next page.
#[allow(clippy::large_enum_variant)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Found {
    /// A valid page, how many bytes were skipped before it, and whether a
    /// page with a wrong CRC was among them.
    Page(Page, u64, bool),
    /// The input ends (possibly after garbage) with no further page.
    End,
    /// A page starts but the input ends inside it.
    Cut(u64),
    /// No page within the scan limit.
    Lost,
}

/// Finds the first valid page (CRC checked) at or after `from`, scanning at
/// most `limit` bytes for the capture pattern (RFC 3533 §6: resynchronising
/// after damage or garbage).
///
/// Errors: a read error of the source.
pub fn find_page<S: Source>(src: &mut S, from: u64, limit: u64) -> Result<Found> {
    let len = src.len();
    let mut at = from;
    let stop = from.saturating_add(limit).min(len);
    let mut buf = [0u8; 512];
    let mut bad_crc = false;
    loop {
        if at >= len {
            return Ok(Found::End);
        }
        match read_page(src, at, true)? {
            PageRead::Page(p) => return Ok(Found::Page(p, at - from, bad_crc)),
            PageRead::BadCrc => bad_crc = true,
            PageRead::Cut if at + (HEADER_LEN as u64) >= len || looks_cut(src, at)? => return Ok(Found::Cut(at)),
            _ => {}
        }
        // Scan for the next capture pattern.
        let mut next = None;
        let mut scan = at + 1;
        while next.is_none() && scan < stop {
            let n = src.read_at(scan, &mut buf)?;
            if n < 4 {
                return Ok(Found::End);
            }
            next = buf
                .get(..n)
                .unwrap_or(&[])
                .windows(4)
                .position(|w| w == CAPTURE)
                .map(|k| scan + k as u64)
                .filter(|&p| p < stop);
            scan += (n - 3) as u64;
        }
        match next {
            Some(p) => at = p,
            None if stop >= len => return Ok(Found::End),
            None => return Ok(Found::Lost),
        }
    }
}

/// Whether the header at `at` is plausible (version 0) so that a page cut
/// by the end of the input is reported as such rather than as garbage.
fn looks_cut<S: Source>(src: &mut S, at: u64) -> Result<bool> {
    let mut h = [0u8; 5];
    let n = src.read_at(at, &mut h)?;
    let [.., version] = h;
    Ok(n < h.len() || version == 0)
}

/// The error for a page cut by the end of the input.
pub fn cut_error(at: u64) -> Error {
    Error::truncated(at, &"ogg page: input ends inside the page (RFC 3533 §6)")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::SliceSource;

    /// Builds a page with a correct CRC.
    pub(crate) fn page(flags: u8, granule: u64, serial: u32, seq: u32, lacing: &[u8], body: &[u8]) -> [u8; 1024] {
        let mut p = [0u8; 1024];
        p[..4].copy_from_slice(CAPTURE);
        p[5] = flags;
        p[6..14].copy_from_slice(&granule.to_le_bytes());
        p[14..18].copy_from_slice(&serial.to_le_bytes());
        p[18..22].copy_from_slice(&seq.to_le_bytes());
        p[26] = lacing.len() as u8;
        p[27..27 + lacing.len()].copy_from_slice(lacing);
        let b = 27 + lacing.len();
        p[b..b + body.len()].copy_from_slice(body);
        let crc = crc32_ogg(0, &p[..b + body.len()]);
        p[22..26].copy_from_slice(&crc.to_le_bytes());
        p
    }

    #[test]
    fn reads_and_checks_pages() {
        let p = page(FLAG_BOS, 7, 42, 0, &[3], b"abc");
        let len = 27 + 1 + 3;
        let mut src = SliceSource::new(&p[..len]);
        let PageRead::Page(pg) = read_page(&mut src, 0, true).unwrap() else {
            panic!("a page")
        };
        assert_eq!(
            (pg.flags, pg.granule, pg.serial, pg.body, pg.body_len),
            (FLAG_BOS, 7, 42, 28, 3)
        );
        let mut bad = p;
        bad[len - 1] ^= 1;
        let mut src = SliceSource::new(&bad[..len]);
        if !cfg!(fuzzing) {
            assert_eq!(read_page(&mut src, 0, true).unwrap(), PageRead::BadCrc);
        }
        let mut src = SliceSource::new(&p[..len - 1]);
        assert_eq!(read_page(&mut src, 0, true).unwrap(), PageRead::Cut);
    }

    #[test]
    fn finds_a_page_after_garbage() {
        let p = page(0, 0, 1, 0, &[1], b"x");
        let mut f = [0u8; 64];
        f[..5].copy_from_slice(b"OggSx");
        f[10..10 + 29].copy_from_slice(&p[..29]);
        let mut src = SliceSource::new(&f[..39]);
        match find_page(&mut src, 0, 1000).unwrap() {
            Found::Page(pg, skipped, crc) => assert_eq!((pg.offset, skipped, crc), (10, 10, false)),
            other => panic!("{other:?}"),
        }
        let mut src = SliceSource::new(&f[..9]);
        assert_eq!(find_page(&mut src, 0, 1000).unwrap(), Found::End);
        assert_eq!(find_page(&mut SliceSource::new(&f[..39]), 0, 3).unwrap(), Found::Lost);
    }
}
