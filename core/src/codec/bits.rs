//! Bit readers: MSB-first over a byte slice, with Exp-Golomb codes
//! (ITU-T H.264 §9.1), and an RBSP view that drops emulation prevention bytes
//! (H.264 §7.4.1, H.265 §7.4.2) on the fly, without copying the NAL unit.

/// Reads bits most significant first. Reading past the end yields zero bits
/// and sets [`BitReader::overrun`], so parsers check once at the end.
#[derive(Debug, Clone)]
pub struct BitReader<'a> {
    data: &'a [u8],
    /// Index of the next byte to load.
    byte: usize,
    /// Bits of the current byte not yet consumed (0..=8).
    left: u8,
    cur: u8,
    /// Whether emulation prevention bytes (`00 00 03`) are removed.
    rbsp: bool,
    zeros: u8,
    overrun: bool,
}

impl<'a> BitReader<'a> {
    /// A reader over `data` taken as plain bits.
    pub fn new(data: &'a [u8]) -> Self {
        BitReader {
            data,
            byte: 0,
            left: 0,
            cur: 0,
            rbsp: false,
            zeros: 0,
            overrun: false,
        }
    }

    /// A reader over a NAL unit payload that skips each emulation prevention
    /// byte: a `0x03` after two zero bytes (H.264 §7.3.1 / H.265 §7.3.1.1).
    pub fn rbsp(data: &'a [u8]) -> Self {
        BitReader {
            rbsp: true,
            ..Self::new(data)
        }
    }

    fn load(&mut self) -> bool {
        loop {
            let Some(&b) = self.data.get(self.byte) else {
                self.overrun = true;
                return false;
            };
            self.byte += 1;
            if self.rbsp {
                if self.zeros >= 2 && b == 3 {
                    self.zeros = 0;
                    continue;
                }
                if b == 0 {
                    self.zeros = self.zeros.saturating_add(1);
                } else {
                    self.zeros = 0;
                }
            }
            self.cur = b;
            self.left = 8;
            return true;
        }
    }

    /// One bit.
    pub fn bit(&mut self) -> bool {
        if self.left == 0 && !self.load() {
            return false;
        }
        self.left -= 1;
        (self.cur >> self.left) & 1 == 1
    }

    /// `n` bits (at most 32) as an unsigned value.
    pub fn bits(&mut self, n: u32) -> u32 {
        let mut v = 0u32;
        for _ in 0..n.min(32) {
            v = (v << 1) | self.bit() as u32;
        }
        v
    }

    /// Skips `n` bits.
    pub fn skip(&mut self, n: u32) {
        for _ in 0..n {
            self.bit();
        }
    }

    /// An unsigned Exp-Golomb code `ue(v)` (H.264 §9.1). Codes longer than 32
    /// bits set the overrun flag and return `u32::MAX`.
    pub fn ue(&mut self) -> u32 {
        let mut zeros = 0u32;
        while !self.bit() {
            zeros += 1;
            if zeros > 31 || self.overrun {
                self.overrun = true;
                return u32::MAX;
            }
        }
        let rest = self.bits(zeros);
        ((1u64 << zeros) - 1 + rest as u64).min(u32::MAX as u64) as u32
    }

    /// A signed Exp-Golomb code `se(v)` (H.264 §9.1.1).
    pub fn se(&mut self) -> i32 {
        let k = self.ue() as i64;
        let v = if k & 1 == 1 { (k + 1) / 2 } else { -(k / 2) };
        v.clamp(i32::MIN as i64, i32::MAX as i64) as i32
    }

    /// Whether a read went past the end of the data.
    pub fn overrun(&self) -> bool {
        self.overrun
    }

    /// Whether the reader stands on a byte boundary.
    pub fn byte_aligned(&self) -> bool {
        self.left == 0 || self.left == 8
    }

    /// Skips to the next byte boundary.
    pub fn align(&mut self) {
        self.left = 0;
    }

    /// Bits consumed so far (counting dropped emulation prevention bytes as
    /// not consumed is not attempted: this is the position in the raw data).
    pub fn position_bits(&self) -> u64 {
        (self.byte as u64) * 8 - self.left as u64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exp_golomb() {
        // 1 | 010 | 011 | 00100 | 00101 -> 0, 1, 2, 3, 4
        let d = [0b1010_0110, 0b0100_0010, 0b1000_0000];
        let mut r = BitReader::new(&d);
        assert_eq!([r.ue(), r.ue(), r.ue(), r.ue(), r.ue()], [0, 1, 2, 3, 4]);
        let mut r = BitReader::new(&d[..1]);
        assert_eq!(r.bits(8), 0b1010_0110);
        assert!(!r.overrun());
        r.bit();
        assert!(r.overrun());
    }

    #[test]
    fn rbsp_drops_emulation_prevention() {
        let d = [0x00, 0x00, 0x03, 0x01, 0xFF];
        let mut r = BitReader::rbsp(&d);
        assert_eq!(r.bits(24), 0x000001);
        assert_eq!(r.bits(8), 0xFF);
        let mut r = BitReader::new(&d);
        assert_eq!(r.bits(24), 0x000003);
    }

    #[test]
    fn signed_codes() {
        // ue 1 -> +1, ue 2 -> -1
        let d = [0b0100_1100];
        let mut r = BitReader::new(&d);
        assert_eq!(r.se(), 1);
        assert_eq!(r.se(), -1);
    }
}
