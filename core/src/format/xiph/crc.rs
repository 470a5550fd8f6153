//! The three CRCs of the Xiph formats, all most-significant-bit first (not
//! reflected), with zero initial value and no final XOR. They are computed
//! by [`crate::crc`] (one table builder for every CRC of the crate):
//!
//! * CRC-8, polynomial 0x07: the FLAC frame header (RFC 9639 §9.1.8).
//! * CRC-16, polynomial 0x8005: the FLAC frame footer (RFC 9639 §9.3).
//! * CRC-32, polynomial 0x04C11DB7: the Ogg page checksum (RFC 3533 §6,
//!   computed with the checksum field itself set to zero).

/// Continues a FLAC header CRC-8 over `data`.
pub use crate::crc::crc8_poly07 as crc8;

/// Continues a FLAC frame CRC-16 over `data`. The CRC of a whole frame,
/// footer included, is zero.
pub use crate::crc::crc16_poly8005 as crc16;

/// Continues an Ogg page CRC-32 over `data`.
pub use crate::crc::crc32_poly04c11db7 as crc32_ogg;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn check_values() {
        // The "check" values of the CRC catalogue for "123456789".
        assert_eq!(crc8(0, b"123456789"), 0xF4);
        assert_eq!(crc16(0, b"123456789"), 0xFEE8);
        assert_eq!(crc32_ogg(0, b"123456789"), 0x89A1_897F);
    }

    #[test]
    fn frame_with_footer_is_zero() {
        let mut f = *b"abcdefgh\0\0";
        let c = crc16(0, &f[..8]);
        f[8..].copy_from_slice(&c.to_be_bytes());
        assert_eq!(crc16(0, &f), 0);
    }
}
