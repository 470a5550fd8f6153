//! CRC-32 (ISO-HDLC, the zlib and PNG one: reflected polynomial 0xEDB88320),
//! slicing-by-8, table built at compile time. Used for `data_hash` output and
//! by containers that carry this CRC.

// Evaluated at compile time only: an out-of-range index would fail the build,
// not panic at run time.
#[allow(clippy::indexing_slicing)]
const fn make_tables() -> [[u32; 256]; 8] {
    let mut t = [[0u32; 256]; 8];
    let mut i = 0;
    while i < 256 {
        let mut c = i as u32;
        let mut k = 0;
        while k < 8 {
            c = if c & 1 != 0 { 0xEDB8_8320 ^ (c >> 1) } else { c >> 1 };
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
            t[s][i] = (prev >> 8) ^ t[0][(prev & 0xFF) as usize];
            s += 1;
        }
        i += 1;
    }
    t
}

static TABLES: [[u32; 256]; 8] = make_tables();

#[inline(always)]
fn tb(s: usize, i: u32) -> u32 {
    // `i` is masked to 0..=255 by every caller and `s` < 8.
    TABLES
        .get(s)
        .and_then(|t| t.get((i & 0xFF) as usize))
        .copied()
        .unwrap_or(0)
}

/// A running CRC-32.
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
    pub fn update(&mut self, data: &[u8]) {
        let mut c = self.0;
        let mut chunks = data.chunks_exact(8);
        for ch in &mut chunks {
            let mut w = [0u8; 8];
            w.copy_from_slice(ch);
            let lo = u32::from_le_bytes([w[0], w[1], w[2], w[3]]) ^ c;
            let hi = u32::from_le_bytes([w[4], w[5], w[6], w[7]]);
            c = tb(7, lo)
                ^ tb(6, lo >> 8)
                ^ tb(5, lo >> 16)
                ^ tb(4, lo >> 24)
                ^ tb(3, hi)
                ^ tb(2, hi >> 8)
                ^ tb(1, hi >> 16)
                ^ tb(0, hi >> 24);
        }
        for &b in chunks.remainder() {
            c = tb(0, c ^ b as u32) ^ (c >> 8);
        }
        self.0 = c;
    }

    /// The CRC of everything fed so far.
    pub const fn finish(&self) -> u32 {
        !self.0
    }
}

/// The CRC-32 of `data`.
pub fn crc32(data: &[u8]) -> u32 {
    let mut c = Crc32::new();
    c.update(data);
    c.finish()
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
    }
}
