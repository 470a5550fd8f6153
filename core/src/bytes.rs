//! Small byte readers over slices, shared by every parser: big- and
//! little-endian integers at an offset, each `None` when the slice is too
//! short, and a greatest common divisor for reducing rates. Fixed layouts
//! of several fields are zerocopy structs instead (see each format's
//! layout file and [`crate::source::Source::read`]).

// Some readers are used only by format modules behind features.
#![allow(dead_code)]

/// The `N` bytes at `at`, or `None` when `b` is too short.
#[inline]
pub(crate) fn array<const N: usize>(b: &[u8], at: usize) -> Option<[u8; N]> {
    b.get(at..at.checked_add(N)?)?.try_into().ok()
}

/// Big-endian `u16` at `at`.
#[inline]
pub(crate) fn be16(b: &[u8], at: usize) -> Option<u16> {
    array(b, at).map(u16::from_be_bytes)
}

/// Big-endian 24-bit unsigned integer at `at`.
#[inline]
pub(crate) fn be24(b: &[u8], at: usize) -> Option<u32> {
    array::<3>(b, at).map(|[x, y, z]| u32::from_be_bytes([0, x, y, z]))
}

/// Big-endian `u32` at `at`.
#[inline]
pub(crate) fn be32(b: &[u8], at: usize) -> Option<u32> {
    array(b, at).map(u32::from_be_bytes)
}

/// Big-endian `u64` at `at`.
#[inline]
pub(crate) fn be64(b: &[u8], at: usize) -> Option<u64> {
    array(b, at).map(u64::from_be_bytes)
}

/// Little-endian `u16` at `at`.
#[inline]
pub(crate) fn le16(b: &[u8], at: usize) -> Option<u16> {
    array(b, at).map(u16::from_le_bytes)
}

/// Little-endian `u32` at `at`.
#[inline]
pub(crate) fn le32(b: &[u8], at: usize) -> Option<u32> {
    array(b, at).map(u32::from_le_bytes)
}

/// Little-endian `u64` at `at`.
#[inline]
pub(crate) fn le64(b: &[u8], at: usize) -> Option<u64> {
    array(b, at).map(u64::from_le_bytes)
}

/// Greatest common divisor (Euclid); `gcd(0, 0)` is 0.
pub(crate) fn gcd(mut a: u64, mut b: u64) -> u64 {
    while b != 0 {
        (a, b) = (b, a % b);
    }
    a
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn integers_at_offsets_and_short_slices() {
        let b = [1u8, 2, 3, 4, 5, 6, 7, 8, 9];
        assert_eq!(be16(&b, 1), Some(0x0203));
        assert_eq!(be24(&b, 0), Some(0x010203));
        assert_eq!(be32(&b, 5), Some(0x06070809));
        assert_eq!(be32(&b, 6), None);
        assert_eq!(le16(&b, 0), Some(0x0201));
        assert_eq!(le32(&b, 0), Some(0x04030201));
        assert_eq!(be64(&b, 1), Some(0x0203040506070809));
        assert_eq!(le64(&b, 2), None);
        assert_eq!(be16(&b, usize::MAX), None);
        assert_eq!(gcd(48_000, 44_100), 300);
        assert_eq!(gcd(0, 7), 7);
        assert_eq!(gcd(0, 0), 0);
    }
}
