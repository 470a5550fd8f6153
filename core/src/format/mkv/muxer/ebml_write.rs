//! Writing EBML elements (RFC 8794): element IDs, size VINTs (§4), the
//! unsigned integer, string, binary and float element bodies (§7), and
//! master elements whose size is measured before they are written (through
//! a counting sink, so one writing function serves both passes).

use crate::codec::convert::CountingSink;
use crate::error::{Error, Result};
use crate::sink::Sink;

/// The 8-byte size VINT with every value bit set: an unknown size
/// (RFC 8794 §6.2), for a Segment or Cluster on a sink that cannot patch.
pub(crate) const UNKNOWN_SIZE: [u8; 8] = [0x01, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF];

/// The largest size an 8-byte VINT holds (2^56 - 2; all ones is reserved,
/// RFC 8794 §4.4).
const MAX_SIZE: u64 = (1 << 56) - 2;

/// An element ID as the bytes it is written with (the marker bits are part
/// of the ID, RFC 8794 §5), and how many there are.
pub(crate) fn id_bytes(id: u64) -> ([u8; 8], usize) {
    let b = id.to_be_bytes();
    let skip = b.iter().take_while(|&&x| x == 0).count().min(7);
    let mut out = [0u8; 8];
    let n = 8 - skip;
    if let (Some(dst), Some(src)) = (out.get_mut(..n), b.get(skip..)) {
        dst.copy_from_slice(src);
    }
    (out, n)
}

/// `size` as the shortest size VINT (RFC 8794 §4): bytes and length.
///
/// Errors: `Unsupported` for a size past 2^56 - 2.
pub(crate) fn size_vint(size: u64) -> Result<([u8; 8], usize)> {
    if size > MAX_SIZE {
        return Err(Error::unsupported(
            0,
            &"mkv muxer: an element larger than an 8-byte VINT holds (RFC 8794 4.4)",
        ));
    }
    // Length n holds values up to 2^(7n) - 2 (all ones is reserved).
    let mut n = 1usize;
    while n < 8 && size >= (1u64 << (7 * n)) - 1 {
        n += 1;
    }
    Ok(fixed_size_vint(size, n))
}

/// `size` as a size VINT of exactly `n` bytes (1..=8); the caller checked
/// that it fits.
pub(crate) fn fixed_size_vint(size: u64, n: usize) -> ([u8; 8], usize) {
    let n = n.clamp(1, 8);
    let marked = size | 1u64 << (7 * n);
    let b = marked.to_be_bytes();
    let mut out = [0u8; 8];
    if let (Some(dst), Some(src)) = (out.get_mut(..n), b.get(8 - n..)) {
        dst.copy_from_slice(src);
    }
    (out, n)
}

/// Writes an element's ID and the shortest VINT of `size`.
pub(crate) fn put_head(k: &mut dyn Sink, id: u64, size: u64) -> Result<()> {
    let (i, il) = id_bytes(id);
    let (s, sl) = size_vint(size)?;
    k.write_vectored(&[i.get(..il).unwrap_or(&[]), s.get(..sl).unwrap_or(&[])])
}

/// Writes a binary or string element (RFC 8794 §7.4, §7.5, §7.7).
pub(crate) fn put_bytes(k: &mut dyn Sink, id: u64, data: &[u8]) -> Result<()> {
    let (i, il) = id_bytes(id);
    let (s, sl) = size_vint(data.len() as u64)?;
    k.write_vectored(&[i.get(..il).unwrap_or(&[]), s.get(..sl).unwrap_or(&[]), data])
}

/// Writes an unsigned integer element in as few bytes as hold it (at least
/// one, RFC 8794 §7.2).
pub(crate) fn put_uint(k: &mut dyn Sink, id: u64, v: u64) -> Result<()> {
    let b = v.to_be_bytes();
    let skip = b.iter().take_while(|&&x| x == 0).count().min(7);
    put_bytes(k, id, b.get(skip..).unwrap_or(&[0]))
}

/// Writes an unsigned integer element in exactly 8 bytes, so that it can be
/// patched in place later.
pub(crate) fn put_uint8(k: &mut dyn Sink, id: u64, v: u64) -> Result<()> {
    put_bytes(k, id, &v.to_be_bytes())
}

/// Writes an 8-byte float element (RFC 8794 §7.3) from its IEEE 754 bits.
pub(crate) fn put_float(k: &mut dyn Sink, id: u64, bits: u64) -> Result<()> {
    put_bytes(k, id, &bits.to_be_bytes())
}

/// Writes a master element: measures `body` with a counting sink, writes
/// the ID and the size, then `body` again for real.
pub(crate) fn put_master(k: &mut dyn Sink, id: u64, body: &dyn Fn(&mut dyn Sink) -> Result<()>) -> Result<()> {
    let size = measure(body)?;
    put_head(k, id, size)?;
    body(k)
}

/// The bytes `body` writes, without writing them.
pub(crate) fn measure(body: &dyn Fn(&mut dyn Sink) -> Result<()>) -> Result<u64> {
    let mut c = CountingSink::default();
    body(&mut c)?;
    Ok(c.position())
}

/// The IEEE 754 binary64 bits of the integer `n`, rounded to nearest even,
/// computed in integer arithmetic (no soft-float on targets without an FPU).
pub(crate) fn f64_bits_of_u64(n: u64) -> u64 {
    if n == 0 {
        return 0;
    }
    let mut e = 63 - u64::from(n.leading_zeros());
    let mut m = if e <= 52 {
        n << (52 - e)
    } else {
        let shift = e - 52;
        let m = n >> shift;
        let rem = n & ((1u64 << shift) - 1);
        let half = 1u64 << (shift - 1);
        if rem > half || (rem == half && m & 1 == 1) {
            m + 1
        } else {
            m
        }
    };
    if m >> 53 != 0 {
        m >>= 1;
        e += 1;
    }
    ((e + 1023) << 52) | (m & ((1u64 << 52) - 1))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sink::SliceSink;

    #[test]
    fn vints_ids_and_floats() {
        assert_eq!(size_vint(0).unwrap(), ([0x80, 0, 0, 0, 0, 0, 0, 0], 1));
        assert_eq!(size_vint(126).unwrap().0[0], 0xFE);
        // 127 is all ones in one byte: reserved, so two bytes.
        assert_eq!(size_vint(127).unwrap(), ([0x40, 0x7F, 0, 0, 0, 0, 0, 0], 2));
        assert_eq!(size_vint(MAX_SIZE).unwrap().1, 8);
        assert!(size_vint(MAX_SIZE + 1).is_err());
        assert_eq!(id_bytes(0x1A45_DFA3), ([0x1A, 0x45, 0xDF, 0xA3, 0, 0, 0, 0], 4));
        assert_eq!(id_bytes(0xA3).1, 1);
        for n in [
            1u64,
            2,
            3,
            1000,
            123_456_789,
            (1 << 53) + 1,
            u64::MAX,
            0x1234_5678_9ABC_DEF1,
        ] {
            assert_eq!(f64_bits_of_u64(n), (n as f64).to_bits(), "{n}");
        }
        let mut buf = [0u8; 16];
        let mut s = SliceSink::new(&mut buf);
        put_uint(&mut s, 0xD7, 1).unwrap();
        put_uint(&mut s, 0x2A_D7B1, 1_000_000).unwrap();
        assert_eq!(s.written(), [0xD7, 0x81, 1, 0x2A, 0xD7, 0xB1, 0x83, 0x0F, 0x42, 0x40]);
    }
}
