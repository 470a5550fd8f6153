//! The CRCs of the crate, with one table builder for all of them (tables
//! built at compile time):
//!
//! * [`Crc32`] / [`crc32`]: CRC-32/ISO-HDLC, the zlib and PNG one (reflected
//!   polynomial 0xEDB88320, initial value and final XOR 0xFFFFFFFF). Used for
//!   `data_hash` output.
//! * [`crc32_poly04c11db7`]: polynomial 0x04C11DB7, most-significant bit
//!   first, continued from the caller's value with no final XOR: the Ogg page
//!   checksum (RFC 3533 §6, from 0).
//! * [`crc16_poly8005`]: polynomial 0x8005, most-significant bit first: the
//!   FLAC frame footer (RFC 9639 §9.3) and the AC-3 `crc2` (A/52 §7.10.1),
//!   both from 0.
//! * [`crc8_poly07`]: polynomial 0x07, most-significant bit first: the FLAC
//!   frame header (RFC 9639 §9.1.8).
//!
//! The 32- and 16-bit CRCs are computed slicing-by-8 ([`SLICES`] tables of
//! 256 entries each: 8 KiB for a 32-bit CRC). With the `compact-crc` feature
//! every CRC is computed four bits at a time from one table of 16 entries
//! (64 bytes for a 32-bit CRC; `compact` below), which saves about 21 KiB of
//! flash for CRCs about 6 times slower than slicing (for firmware, whose
//! CRCs check Ogg pages and FLAC and AC-3 frames of a few KiB).

/// Tables per CRC: 8 (slicing-by-8), or 1 with the `compact-crc` feature
/// (then of 16 entries, four bits at a time).
#[cfg(not(feature = "compact-crc"))]
pub const SLICES: usize = 8;
/// Tables per CRC: 8 (slicing-by-8), or 1 with the `compact-crc` feature
/// (then of 16 entries, four bits at a time).
#[cfg(feature = "compact-crc")]
pub const SLICES: usize = 1;

/// The register `c` after `n` bits with no input, one bit at a time: the
/// definition both table builders ([`tables`], and `compact`'s 16-entry
/// one) evaluate at compile time.
const fn bits(poly: u32, reflected: bool, mut c: u32, n: u32) -> u32 {
    let mut k = 0;
    while k < n {
        c = if reflected {
            if c & 1 != 0 {
                poly ^ (c >> 1)
            } else {
                c >> 1
            }
        } else if c & 0x8000_0000 != 0 {
            (c << 1) ^ poly
        } else {
            c << 1
        };
        k += 1;
    }
    c
}

/// The one table builder. `N` tables for a CRC kept in a `u32` register:
/// table 0 is the CRC of each byte value, table `k` that of the byte followed
/// by `k` zero bytes (for slicing). Most-significant bit first when
/// `reflected` is false, with `poly` in the top bits of the register
/// (0x04C11DB7, 0x8005 << 16, 0x07 << 24); least-significant bit first with
/// the reflected polynomial when `reflected` is true.
// Evaluated at compile time only: an out-of-range index would fail the build,
// not panic at run time.
#[allow(clippy::indexing_slicing)]
#[cfg(not(feature = "compact-crc"))]
const fn tables<const N: usize>(poly: u32, reflected: bool) -> [[u32; 256]; N] {
    let mut t = [[0u32; 256]; N];
    if N == 0 {
        return t;
    }
    let mut i = 0;
    while i < 256 {
        let c = bits(poly, reflected, if reflected { i as u32 } else { (i as u32) << 24 }, 8);
        t[0][i] = c;
        i += 1;
    }
    let mut i = 0;
    while i < 256 {
        let mut s = 1;
        while s < N {
            let prev = t[s - 1][i];
            t[s][i] = if reflected {
                (prev >> 8) ^ t[0][(prev & 0xFF) as usize]
            } else {
                (prev << 8) ^ t[0][(prev >> 24) as usize]
            };
            s += 1;
        }
        i += 1;
    }
    t
}

/// The top 16 bits of each entry of 32-bit-register tables.
#[allow(clippy::indexing_slicing)]
#[cfg(not(feature = "compact-crc"))]
const fn narrow16<const N: usize>(t: [[u32; 256]; N]) -> [[u16; 256]; N] {
    let mut n = [[0u16; 256]; N];
    let mut s = 0;
    while s < N {
        let mut i = 0;
        while i < 256 {
            n[s][i] = (t[s][i] >> 16) as u16;
            i += 1;
        }
        s += 1;
    }
    n
}

/// The top 8 bits of each entry of a 32-bit-register table.
#[allow(clippy::indexing_slicing)]
#[cfg(not(feature = "compact-crc"))]
const fn narrow8(t: [[u32; 256]; 1]) -> [u8; 256] {
    let mut n = [0u8; 256];
    let mut i = 0;
    while i < 256 {
        n[i] = (t[0][i] >> 24) as u8;
        i += 1;
    }
    n
}

#[cfg(not(feature = "compact-crc"))]
static ISO_HDLC: [[u32; 256]; SLICES] = tables(0xEDB8_8320, true);
#[cfg(not(feature = "compact-crc"))]
static POLY_04C11DB7: [[u32; 256]; SLICES] = tables(0x04C1_1DB7, false);
#[cfg(not(feature = "compact-crc"))]
static POLY_8005: [[u16; 256]; SLICES] = narrow16(tables(0x8005 << 16, false));
#[cfg(not(feature = "compact-crc"))]
static POLY_07: [u8; 256] = narrow8(tables(0x07 << 24, false));

/// Entry `i & 0xFF` of table `s` (every caller passes `s` < [`SLICES`]).
#[cfg(not(feature = "compact-crc"))]
#[inline(always)]
fn at<T: Copy + Default>(t: &[[T; 256]; SLICES], s: usize, i: u32) -> T {
    t.get(s)
        .and_then(|t| t.get((i & 0xFF) as usize))
        .copied()
        .unwrap_or_default()
}

/// Eight bytes as two little-endian words (slicing-by-8 steps).
#[cfg(not(feature = "compact-crc"))]
#[inline(always)]
fn words(ch: &[u8]) -> (u32, u32) {
    let mut w = [0u8; 8];
    w.copy_from_slice(ch);
    let [a, b, c, d, e, f, g, h] = w;
    (u32::from_le_bytes([a, b, c, d]), u32::from_le_bytes([e, f, g, h]))
}

/// A running CRC-32 (ISO-HDLC, as zlib).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Crc32(u32);

impl Default for Crc32 {
    fn default() -> Self {
        Self::new()
    }
}

impl Crc32 {
    /// A fresh CRC.
    pub const fn new() -> Self {
        Crc32(0xFFFF_FFFF)
    }

    /// Feeds `data`.
    #[cfg(feature = "compact-crc")]
    pub fn update(&mut self, data: &[u8]) {
        self.0 = compact::reflected(&compact::ISO_HDLC, self.0, data);
    }

    /// Feeds `data`.
    #[cfg(not(feature = "compact-crc"))]
    pub fn update(&mut self, data: &[u8]) {
        let t = &ISO_HDLC;
        let mut c = self.0;
        let mut rest = data;
        if SLICES >= 8 {
            let mut chunks = data.chunks_exact(8);
            for ch in &mut chunks {
                let (lo, hi) = words(ch);
                let lo = lo ^ c;
                c = at(t, 7, lo)
                    ^ at(t, 6, lo >> 8)
                    ^ at(t, 5, lo >> 16)
                    ^ at(t, 4, lo >> 24)
                    ^ at(t, 3, hi)
                    ^ at(t, 2, hi >> 8)
                    ^ at(t, 1, hi >> 16)
                    ^ at(t, 0, hi >> 24);
            }
            rest = chunks.remainder();
        }
        for &b in rest {
            c = at(t, 0, c ^ b as u32) ^ (c >> 8);
        }
        self.0 = c;
    }

    /// The CRC of everything fed so far.
    pub const fn finish(&self) -> u32 {
        !self.0
    }
}

/// The CRC-32 (ISO-HDLC, as zlib) of `data`.
pub fn crc32(data: &[u8]) -> u32 {
    let mut c = Crc32::new();
    c.update(data);
    c.finish()
}

/// Continues an MSB-first CRC-32 with polynomial 0x04C11DB7 over `data`
/// (no final XOR; the Ogg page checksum starts from 0).
#[cfg(not(feature = "compact-crc"))]
pub fn crc32_poly04c11db7(mut crc: u32, data: &[u8]) -> u32 {
    let t = &POLY_04C11DB7;
    let mut rest = data;
    if SLICES >= 8 {
        let mut chunks = data.chunks_exact(8);
        for ch in &mut chunks {
            let (a, b) = words(ch);
            let hi = crc ^ a.swap_bytes();
            let lo = b.swap_bytes();
            crc = at(t, 7, hi >> 24)
                ^ at(t, 6, hi >> 16)
                ^ at(t, 5, hi >> 8)
                ^ at(t, 4, hi)
                ^ at(t, 3, lo >> 24)
                ^ at(t, 2, lo >> 16)
                ^ at(t, 1, lo >> 8)
                ^ at(t, 0, lo);
        }
        rest = chunks.remainder();
    }
    for &b in rest {
        crc = (crc << 8) ^ at(t, 0, (crc >> 24) ^ b as u32);
    }
    crc
}

/// Continues an MSB-first CRC-16 with polynomial 0x8005 over `data` (no
/// final XOR). The CRC of a whole FLAC frame or AC-3 frame, check bytes
/// included, is zero.
#[cfg(not(feature = "compact-crc"))]
pub fn crc16_poly8005(mut crc: u16, data: &[u8]) -> u16 {
    let t = &POLY_8005;
    let mut rest = data;
    if SLICES >= 8 {
        let mut chunks = data.chunks_exact(8);
        for ch in &mut chunks {
            let (a, b) = words(ch);
            // The register meets the first two bytes, high byte first.
            let hi = (crc as u32) ^ ((a & 0xFF) << 8 | (a >> 8) & 0xFF);
            crc = at(t, 7, hi >> 8)
                ^ at(t, 6, hi)
                ^ at(t, 5, a >> 16)
                ^ at(t, 4, a >> 24)
                ^ at(t, 3, b)
                ^ at(t, 2, b >> 8)
                ^ at(t, 1, b >> 16)
                ^ at(t, 0, b >> 24);
        }
        rest = chunks.remainder();
    }
    for &b in rest {
        crc = (crc << 8) ^ at(t, 0, (crc >> 8) as u32 ^ b as u32);
    }
    crc
}

/// Continues an MSB-first CRC-8 with polynomial 0x07 over `data`.
#[cfg(not(feature = "compact-crc"))]
pub fn crc8_poly07(mut crc: u8, data: &[u8]) -> u8 {
    for &b in data {
        crc = POLY_07.get((crc ^ b) as usize).copied().unwrap_or(0);
    }
    crc
}

/// Continues an MSB-first CRC-32 with polynomial 0x04C11DB7 over `data`
/// (no final XOR; the Ogg page checksum starts from 0).
#[cfg(feature = "compact-crc")]
pub fn crc32_poly04c11db7(crc: u32, data: &[u8]) -> u32 {
    compact::msb_first(&compact::POLY_04C11DB7, crc, data)
}

/// Continues an MSB-first CRC-16 with polynomial 0x8005 over `data` (no
/// final XOR). The CRC of a whole FLAC frame or AC-3 frame, check bytes
/// included, is zero.
#[cfg(feature = "compact-crc")]
pub fn crc16_poly8005(crc: u16, data: &[u8]) -> u16 {
    (compact::msb_first(&compact::POLY_8005, (crc as u32) << 16, data) >> 16) as u16
}

/// Continues an MSB-first CRC-8 with polynomial 0x07 over `data`.
#[cfg(feature = "compact-crc")]
pub fn crc8_poly07(crc: u8, data: &[u8]) -> u8 {
    (compact::msb_first(&compact::POLY_07, (crc as u32) << 24, data) >> 24) as u8
}

/// The `compact-crc` path: four bits at a time from a table of 16 entries
/// per CRC, the register in a `u32` (MSB-first CRCs of width W in its top W
/// bits, as [`tables`] keeps them).
#[cfg(feature = "compact-crc")]
mod compact {
    /// The CRC of each 4-bit value, for the register layout of [`super`]:
    /// least-significant bit first with the reflected polynomial when
    /// `reflected`, else most-significant bit first with `poly` in the top
    /// bits.
    // Evaluated at compile time only.
    #[allow(clippy::indexing_slicing)]
    const fn nibbles(poly: u32, reflected: bool) -> [u32; 16] {
        let mut t = [0u32; 16];
        let mut i = 0;
        while i < 16 {
            let c = super::bits(poly, reflected, if reflected { i as u32 } else { (i as u32) << 28 }, 4);
            t[i] = c;
            i += 1;
        }
        t
    }

    pub(super) static ISO_HDLC: [u32; 16] = nibbles(0xEDB8_8320, true);
    pub(super) static POLY_04C11DB7: [u32; 16] = nibbles(0x04C1_1DB7, false);
    pub(super) static POLY_8005: [u32; 16] = nibbles(0x8005 << 16, false);
    pub(super) static POLY_07: [u32; 16] = nibbles(0x07 << 24, false);

    /// Entry `i & 15` of `t`.
    #[inline(always)]
    fn at(t: &[u32; 16], i: u32) -> u32 {
        t.get((i & 15) as usize).copied().unwrap_or(0)
    }

    /// Continues a reflected CRC over `data`.
    pub(super) fn reflected(t: &[u32; 16], mut c: u32, data: &[u8]) -> u32 {
        for &b in data {
            c ^= b as u32;
            c = (c >> 4) ^ at(t, c);
            c = (c >> 4) ^ at(t, c);
        }
        c
    }

    /// Continues an MSB-first CRC (register in the top bits) over `data`.
    pub(super) fn msb_first(t: &[u32; 16], mut c: u32, data: &[u8]) -> u32 {
        for &b in data {
            c ^= (b as u32) << 24;
            c = (c << 4) ^ at(t, c >> 28);
            c = (c << 4) ^ at(t, c >> 28);
        }
        c
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn known_values() {
        assert_eq!(crc32(b""), 0);
        assert_eq!(crc32(b"123456789"), 0xCBF4_3926);
        let mut c = Crc32::new();
        c.update(b"12345");
        c.update(b"6789");
        assert_eq!(c.finish(), 0xCBF4_3926);
        // The "check" values of the CRC catalogue for "123456789".
        assert_eq!(crc8_poly07(0, b"123456789"), 0xF4);
        assert_eq!(crc16_poly8005(0, b"123456789"), 0xFEE8);
        assert_eq!(crc32_poly04c11db7(0, b"123456789"), 0x89A1_897F);
        // CRC-32/MPEG-2 is the same register from all ones.
        assert_eq!(crc32_poly04c11db7(0xFFFF_FFFF, b"123456789"), 0x0376_E6E7);
    }

    fn slow_msb(poly: u32, width: u32, init: u32, d: &[u8]) -> u32 {
        let top = 1u32 << (width - 1);
        let mask = if width == 32 { u32::MAX } else { (1 << width) - 1 };
        let mut c = init;
        for &b in d {
            c ^= (b as u32) << (width - 8);
            for _ in 0..8 {
                c = if c & top != 0 { (c << 1) ^ poly } else { c << 1 } & mask;
            }
        }
        c
    }

    fn slow_zlib(d: &[u8]) -> u32 {
        let mut c = !0u32;
        for &b in d {
            c ^= b as u32;
            for _ in 0..8 {
                c = if c & 1 != 0 { (c >> 1) ^ 0xEDB8_8320 } else { c >> 1 };
            }
        }
        !c
    }

    /// The CRC-16 of the FLAC frame scan, slicing-by-8 (without
    /// `compact-crc`), against the same CRC a byte per call (the byte-at-a-time
    /// table path) and the bitwise definition: every length 0..64 at every
    /// misalignment 0..8 of the buffer, from several register values.
    #[test]
    fn crc16_over_all_short_lengths_and_alignments() {
        let mut s = 0x9E37_79B9u32;
        let buf: [u8; 72] = core::array::from_fn(|_| {
            s ^= s << 13;
            s ^= s >> 17;
            s ^= s << 5;
            (s >> 7) as u8
        });
        for init in [0u16, 0xFFFF, 0x8005, 0x1234] {
            for skew in 0..8 {
                for len in 0..64 {
                    let d = &buf[skew..skew + len];
                    let bytewise = d.iter().fold(init, |c, &b| crc16_poly8005(c, &[b]));
                    let got = crc16_poly8005(init, d);
                    assert_eq!(got, bytewise, "init {init:#x} skew {skew} len {len}");
                    assert_eq!(got as u32, slow_msb(0x8005, 16, init as u32, d));
                }
            }
        }
    }

    #[test]
    fn every_split_agrees_with_the_bitwise_definition() {
        let data: [u8; 41] = core::array::from_fn(|i| (i as u8).wrapping_mul(37).wrapping_add(11));
        for start in 0..data.len() {
            let d = &data[start..];
            assert_eq!(crc32(d), slow_zlib(d));
            assert_eq!(
                crc32_poly04c11db7(0x1234_5678, d),
                slow_msb(0x04C1_1DB7, 32, 0x1234_5678, d)
            );
            assert_eq!(crc16_poly8005(0x1234, d) as u32, slow_msb(0x8005, 16, 0x1234, d));
            assert_eq!(crc8_poly07(0x5A, d) as u32, slow_msb(0x07, 8, 0x5A, d));
            for cut in 0..d.len() {
                let (a, b) = d.split_at(cut);
                let mut c = Crc32::new();
                c.update(a);
                c.update(b);
                assert_eq!(c.finish(), slow_zlib(d));
                assert_eq!(
                    crc32_poly04c11db7(crc32_poly04c11db7(0, a), b),
                    slow_msb(0x04C1_1DB7, 32, 0, d)
                );
                assert_eq!(
                    crc16_poly8005(crc16_poly8005(0, a), b) as u32,
                    slow_msb(0x8005, 16, 0, d)
                );
            }
        }
    }
}
