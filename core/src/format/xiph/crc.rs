//! The three CRCs of the Xiph formats, all most-significant-bit first (not
//! reflected), with zero initial value and no final XOR, and their tables
//! built at compile time:
//!
//! * CRC-8, polynomial 0x07: the FLAC frame header (RFC 9639 §9.1.8).
//! * CRC-16, polynomial 0x8005: the FLAC frame footer (RFC 9639 §9.3).
//! * CRC-32, polynomial 0x04C11DB7: the Ogg page checksum (RFC 3533 §6,
//!   computed with the checksum field itself set to zero).

// Compile-time table construction: every index is bounded by its loop.
#[allow(clippy::indexing_slicing)]
const fn table8(poly: u8) -> [u8; 256] {
    let mut t = [0u8; 256];
    let mut i = 0;
    while i < 256 {
        let mut c = i as u8;
        let mut k = 0;
        while k < 8 {
            c = if c & 0x80 != 0 { (c << 1) ^ poly } else { c << 1 };
            k += 1;
        }
        t[i] = c;
        i += 1;
    }
    t
}

/// Eight tables for slicing-by-8 over a 16-bit MSB-first CRC: table `k`
/// holds the CRC of a byte followed by `k` zero bytes.
#[allow(clippy::indexing_slicing)]
const fn tables16(poly: u16) -> [[u16; 256]; 8] {
    let mut t = [[0u16; 256]; 8];
    let mut i = 0;
    while i < 256 {
        let mut c = (i as u16) << 8;
        let mut k = 0;
        while k < 8 {
            c = if c & 0x8000 != 0 { (c << 1) ^ poly } else { c << 1 };
            k += 1;
        }
        t[0][i] = c;
        i += 1;
    }
    let mut i = 0;
    while i < 256 {
        let mut s = 1;
        while s < 8 {
            let prev = t[s - 1][i];
            t[s][i] = (prev << 8) ^ t[0][(prev >> 8) as usize];
            s += 1;
        }
        i += 1;
    }
    t
}

/// Eight tables for slicing-by-8 over a 32-bit MSB-first CRC.
#[allow(clippy::indexing_slicing)]
const fn tables32(poly: u32) -> [[u32; 256]; 8] {
    let mut t = [[0u32; 256]; 8];
    let mut i = 0;
    while i < 256 {
        let mut c = (i as u32) << 24;
        let mut k = 0;
        while k < 8 {
            c = if c & 0x8000_0000 != 0 { (c << 1) ^ poly } else { c << 1 };
            k += 1;
        }
        t[0][i] = c;
        i += 1;
    }
    let mut i = 0;
    while i < 256 {
        let mut s = 1;
        while s < 8 {
            let prev = t[s - 1][i];
            t[s][i] = (prev << 8) ^ t[0][(prev >> 24) as usize];
            s += 1;
        }
        i += 1;
    }
    t
}

static CRC8: [u8; 256] = table8(0x07);
static CRC16: [[u16; 256]; 8] = tables16(0x8005);
static CRC32: [[u32; 256]; 8] = tables32(0x04C1_1DB7);

/// Continues a FLAC header CRC-8 over `data`.
pub fn crc8(mut crc: u8, data: &[u8]) -> u8 {
    for &b in data {
        crc = CRC8.get((crc ^ b) as usize).copied().unwrap_or(0);
    }
    crc
}

#[inline(always)]
fn t16(s: usize, i: u8) -> u16 {
    CRC16.get(s).and_then(|t| t.get(i as usize)).copied().unwrap_or(0)
}

/// Continues a FLAC frame CRC-16 over `data` (slicing-by-8). The CRC of a
/// whole frame, footer included, is zero.
pub fn crc16(mut crc: u16, data: &[u8]) -> u16 {
    let mut chunks = data.chunks_exact(8);
    for ch in &mut chunks {
        let mut w = [0u8; 8];
        w.copy_from_slice(ch);
        let [hi, lo] = crc.to_be_bytes();
        crc = t16(7, w[0] ^ hi)
            ^ t16(6, w[1] ^ lo)
            ^ t16(5, w[2])
            ^ t16(4, w[3])
            ^ t16(3, w[4])
            ^ t16(2, w[5])
            ^ t16(1, w[6])
            ^ t16(0, w[7]);
    }
    for &b in chunks.remainder() {
        crc = (crc << 8) ^ t16(0, (crc >> 8) as u8 ^ b);
    }
    crc
}

#[inline(always)]
fn t32(s: usize, i: u32) -> u32 {
    CRC32
        .get(s)
        .and_then(|t| t.get((i & 0xFF) as usize))
        .copied()
        .unwrap_or(0)
}

/// Continues an Ogg page CRC-32 over `data`.
pub fn crc32_ogg(mut crc: u32, data: &[u8]) -> u32 {
    let mut chunks = data.chunks_exact(4);
    for ch in &mut chunks {
        let w = crc
            ^ u32::from_be_bytes([
                ch.first().copied().unwrap_or(0),
                ch.get(1).copied().unwrap_or(0),
                ch.get(2).copied().unwrap_or(0),
                ch.get(3).copied().unwrap_or(0),
            ]);
        crc = t32(3, w >> 24) ^ t32(2, w >> 16) ^ t32(1, w >> 8) ^ t32(0, w);
    }
    for &b in chunks.remainder() {
        crc = (crc << 8) ^ t32(0, (crc >> 24) ^ b as u32);
    }
    crc
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn check_values() {
        // The "check" values of the CRC catalogue for "123456789".
        assert_eq!(crc8(0, b"123456789"), 0xF4);
        assert_eq!(crc16(0, b"123456789"), 0xFEE8);
        assert_eq!(crc32_ogg(0, b"123456789"), 0x89A1_897F);
        let c = crc32_ogg(crc32_ogg(0, b"12345"), b"6789");
        assert_eq!(c, 0x89A1_897F);
        let c = crc16(crc16(0, b"1234"), b"56789");
        assert_eq!(c, 0xFEE8);
        // Every split agrees with the bytewise definition.
        let data: [u8; 37] = core::array::from_fn(|i| (i as u8).wrapping_mul(37).wrapping_add(11));
        for cut in 0..data.len() {
            assert_eq!(crc16(crc16(0, &data[..cut]), &data[cut..]), crc16_slow(&data));
            assert_eq!(crc32_ogg(crc32_ogg(0, &data[..cut]), &data[cut..]), crc32_slow(&data));
        }
    }

    fn crc16_slow(d: &[u8]) -> u16 {
        let mut c = 0u16;
        for &b in d {
            c ^= (b as u16) << 8;
            for _ in 0..8 {
                c = if c & 0x8000 != 0 { (c << 1) ^ 0x8005 } else { c << 1 };
            }
        }
        c
    }

    fn crc32_slow(d: &[u8]) -> u32 {
        let mut c = 0u32;
        for &b in d {
            c ^= (b as u32) << 24;
            for _ in 0..8 {
                c = if c & 0x8000_0000 != 0 {
                    (c << 1) ^ 0x04C1_1DB7
                } else {
                    c << 1
                };
            }
        }
        c
    }

    #[test]
    fn frame_with_footer_is_zero() {
        let mut f = *b"abcdefgh\0\0";
        let c = crc16(0, &f[..8]);
        f[8..].copy_from_slice(&c.to_be_bytes());
        assert_eq!(crc16(0, &f), 0);
    }
}
