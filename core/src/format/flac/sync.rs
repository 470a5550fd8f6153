//! The search for a FLAC frame sync code (RFC 9639 §9.1): the 15-bit
//! pattern `0b1111_1111_1111_100` followed by the blocking-strategy bit,
//! that is the byte 0xFF followed by 0xF8 (fixed block size) or 0xF9
//! (variable). Every frame end is found by this search, so it looks for the
//! 0xFF byte 32 bytes at a time rather than byte by byte (with the
//! `compact-crc` feature, for firmware, byte by byte: smaller code).

/// The first sync code of `w` that begins at or after `from` and before
/// `limit`: a 0xFF byte followed by 0xF8 or 0xF9. A 0xFF that is the last
/// byte of `w` counts (the input may cut a header after its first byte);
/// the byte after a 0xFF is read from `w` even past `limit`.
#[cfg(not(feature = "compact-crc"))]
#[inline]
pub(super) fn find_sync(w: &[u8], from: usize, limit: usize) -> Option<usize> {
    let limit = limit.min(w.len());
    let mut i = from;
    while i < limit {
        let p = i + find_ff(w.get(i..limit)?)?;
        if w.get(p + 1).is_none_or(|&b| b & 0xFE == 0xF8) {
            return Some(p);
        }
        i = p + 1;
    }
    None
}

/// The lowest bit of each byte of a word.
#[cfg(not(feature = "compact-crc"))]
const ONES: u64 = 0x0101_0101_0101_0101;
/// The highest bit of each byte of a word.
#[cfg(not(feature = "compact-crc"))]
const HIGHS: u64 = 0x8080_8080_8080_8080;

/// Bytes tested per step of [`find_ff`]: four words.
#[cfg(not(feature = "compact-crc"))]
const STEP: usize = 32;

/// The index of the first 0xFF byte of `s`, four words (32 bytes) per
/// step. In the complement `x` of a word, a 0xFF byte is a zero byte, and
/// `(x - ONES) & !x & HIGHS` is non-zero exactly when `x` has a zero byte
/// (the usual SWAR test). The four words' flags are combined without an
/// early exit, which compilers turn into vector instructions where the
/// target has them (SSE2 on x86-64: two 16-byte loads a step); the step that has a
/// 0xFF is then searched a byte at a time.
#[cfg(not(feature = "compact-crc"))]
#[inline]
fn find_ff(s: &[u8]) -> Option<usize> {
    let mut base = 0;
    for step in s.chunks_exact(STEP) {
        let flags = step.chunks_exact(8).fold(0u64, |acc, word| {
            let mut b = [0u8; 8];
            b.copy_from_slice(word);
            let x = !u64::from_le_bytes(b);
            acc | (x.wrapping_sub(ONES) & !x & HIGHS)
        });
        if flags != 0 {
            break;
        }
        base += STEP;
    }
    s.get(base..)?.iter().position(|&b| b == 0xFF).map(|k| base + k)
}

/// [`find_sync`] a byte at a time: the smaller code, for firmware
/// (`compact-crc` keeps the frame scan small as well as the CRC tables).
#[cfg(feature = "compact-crc")]
#[inline]
pub(super) fn find_sync(w: &[u8], from: usize, limit: usize) -> Option<usize> {
    (from..limit).find(|&p| w.get(p) == Some(&0xFF) && w.get(p + 1).is_none_or(|&b| b & 0xFE == 0xF8))
}

#[cfg(test)]
mod tests {
    extern crate std;

    use super::*;

    /// The definition: every position, byte by byte.
    fn naive(w: &[u8], from: usize, limit: usize) -> Option<usize> {
        (from..limit.min(w.len())).find(|&p| w[p] == 0xFF && w.get(p + 1).is_none_or(|&b| b & 0xFE == 0xF8))
    }

    /// Random-ish bytes, with 0xFF, 0xF8 and 0xF9 made common.
    fn bytes(seed: u32, n: usize) -> std::vec::Vec<u8> {
        let mut s = seed.wrapping_mul(2_654_435_761).wrapping_add(1);
        (0..n)
            .map(|_| {
                s ^= s << 13;
                s ^= s >> 17;
                s ^= s << 5;
                match s % 7 {
                    0 | 1 => 0xFF,
                    2 => 0xF8,
                    3 => 0xF9,
                    _ => (s >> 8) as u8,
                }
            })
            .collect()
    }

    #[test]
    fn agrees_with_the_naive_search_on_every_range() {
        for seed in 0..40 {
            let w = bytes(seed, 100);
            for from in 0..=w.len() {
                for limit in from..=w.len() + 2 {
                    assert_eq!(
                        find_sync(&w, from, limit),
                        naive(&w, from, limit),
                        "seed {seed} from {from} limit {limit}"
                    );
                }
            }
        }
    }

    #[test]
    fn a_sync_at_every_position_and_a_last_0xff() {
        for len in 1..72 {
            for at in 0..len {
                for second in [0xF8, 0xF9, 0xFA, 0xFE, 0xFF, 0x00] {
                    let mut w = std::vec![0x55u8; len];
                    w[at] = 0xFF;
                    if let Some(b) = w.get_mut(at + 1) {
                        *b = second;
                    }
                    let want = naive(&w, 0, len);
                    // A sync there, or a 0xFF as the last byte, is found
                    // (the second 0xFF may be that last byte).
                    let expect = if at + 1 == len || second & 0xFE == 0xF8 {
                        Some(at)
                    } else if second == 0xFF && at + 2 == len {
                        Some(at + 1)
                    } else {
                        None
                    };
                    assert_eq!(want, expect, "len {len} at {at} second {second:#x}");
                    assert_eq!(find_sync(&w, 0, len), want, "len {len} at {at} second {second:#x}");
                    // The byte after the 0xFF is read past the limit.
                    assert_eq!(find_sync(&w, 0, at + 1), naive(&w, 0, at + 1));
                    // Misaligned starts.
                    for from in 0..=at {
                        assert_eq!(find_sync(&w, from, len), want, "from {from}");
                    }
                    assert_eq!(find_sync(&w, at + 1, len), naive(&w, at + 1, len));
                }
            }
        }
    }

    #[test]
    fn no_0xff_and_no_sync() {
        let w: std::vec::Vec<u8> = (0..100u8).map(|b| b % 0xFF).collect();
        assert_eq!(find_sync(&w, 0, w.len()), None);
        // 0xFF bytes that no 0xF8/0xF9 follows, one per word alignment.
        let w: std::vec::Vec<u8> = (0..100usize).map(|i| if i % 9 == 0 { 0xFF } else { 0xF0 }).collect();
        assert_eq!(find_sync(&w, 0, w.len() - 1), None);
        assert_eq!(find_sync(&[], 0, 0), None);
        assert_eq!(find_sync(&[0xFF], 1, 1), None);
    }
}
