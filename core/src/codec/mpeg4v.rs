//! MPEG-4 Part 2 video (ISO/IEC 14496-2): start codes (§6.2, Table 6-3), the
//! video object layer header's timing fields (§6.2.3), the VOP header's
//! coding type and time (§6.2.5), and a frame splitter that draws the
//! boundaries ffmpeg's `mpeg4video` parser draws (`ff_mpeg4_find_frame_end`).

use super::bits::BitReader;

/// `vop_start_code` value.
pub const VOP: u32 = 0x1B6;
/// `visual_object_sequence_start_code`.
pub const VOS: u32 = 0x1B0;
/// `group_of_vop_start_code`.
pub const GOV: u32 = 0x1B3;

/// Splits a stream into frames: a frame runs from its start to the first
/// start code after its VOP start code.
#[derive(Debug, Clone, Default)]
pub struct FrameSplitter {
    state: u32,
    vop_found: bool,
    after_vop: u32,
}

impl FrameSplitter {
    /// Bytes seen after the VOP start code (0 before it).
    pub fn after_vop(&self) -> u32 {
        self.after_vop
    }

    /// Feeds `data` at absolute offset `base`; returns where the next frame
    /// starts when found (up to 3 bytes before `base`).
    pub fn feed(&mut self, data: &[u8], base: u64) -> Option<u64> {
        for (i, &b) in data.iter().enumerate() {
            self.state = (self.state << 8) | b as u32;
            if !self.vop_found {
                if self.state == VOP {
                    self.vop_found = true;
                }
                continue;
            }
            self.after_vop = self.after_vop.saturating_add(1);
            if self.state & 0xFFFF_FF00 == 0x100 {
                self.vop_found = false;
                self.state = u32::MAX;
                return Some((base + i as u64).saturating_sub(3));
            }
        }
        None
    }
}

/// What the headers of a stream say, kept across frames to time VOPs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Mpeg4State {
    /// `vop_time_increment_resolution` (ticks per second), 0 before a VOL.
    pub resolution: u32,
    /// Bits of `vop_time_increment`.
    pub increment_bits: u32,
    /// `fixed_vop_time_increment` when `fixed_vop_rate` is set.
    pub fixed_increment: Option<u32>,
    /// `low_delay` (no B-VOPs), from the VOL control parameters or, as
    /// ffmpeg guesses, the object type.
    pub low_delay: bool,
    /// Picture size from a rectangular VOL.
    pub width: u32,
    /// Picture height.
    pub height: u32,
    time_base: u64,
    last_time_base: u64,
}

/// One VOP's facts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Vop {
    /// `vop_coding_type`: 0 I, 1 P, 2 B, 3 S.
    pub coding_type: u8,
    /// Its time in `resolution` ticks (ffmpeg's `s->time`).
    pub time: u64,
}

impl Mpeg4State {
    fn parse_vol(&mut self, p: &[u8]) {
        let mut r = BitReader::new(p);
        r.skip(1);
        let vo_type = r.bits(8);
        let mut verid = 1;
        if r.bit() {
            verid = r.bits(4);
            r.skip(3);
        }
        if r.bits(4) == 0xF {
            r.skip(16);
        }
        if r.bit() {
            r.skip(2);
            self.low_delay = r.bit();
            if r.bit() {
                r.skip(15 + 1 + 15 + 1 + 15 + 1 + 3 + 11 + 1 + 15 + 1);
            }
        } else {
            // ffmpeg: simple and advanced simple profiles are low delay.
            self.low_delay = matches!(vo_type, 1 | 17);
        }
        let shape = r.bits(2);
        if shape == 3 && verid != 1 {
            r.skip(4);
        }
        r.skip(1);
        let resolution = r.bits(16);
        r.skip(1);
        if resolution == 0 || r.overrun() {
            return;
        }
        let bits = (32 - (resolution - 1).leading_zeros()).max(1);
        self.fixed_increment = None;
        if r.bit() {
            self.fixed_increment = Some(r.bits(bits));
        }
        if shape == 0 {
            r.skip(1);
            let w = r.bits(13);
            r.skip(1);
            let h = r.bits(13);
            if !r.overrun() {
                self.width = w;
                self.height = h;
            }
        }
        self.resolution = resolution;
        self.increment_bits = bits;
    }

    fn parse_vop(&mut self, p: &[u8]) -> Option<Vop> {
        let mut r = BitReader::new(p);
        let coding_type = r.bits(2) as u8;
        let mut incr = 0u64;
        while r.bit() {
            incr += 1;
            if incr > 60 || r.overrun() {
                return None;
            }
        }
        r.skip(1);
        let inc = r.bits(self.increment_bits) as u64;
        if r.overrun() || self.resolution == 0 {
            return Some(Vop { coding_type, time: 0 });
        }
        let res = self.resolution as u64;
        let time = if coding_type != 2 {
            self.last_time_base = self.time_base;
            self.time_base = self.time_base.saturating_add(incr);
            self.time_base.saturating_mul(res).saturating_add(inc)
        } else {
            self.last_time_base
                .saturating_add(incr)
                .saturating_mul(res)
                .saturating_add(inc)
        };
        Some(Vop { coding_type, time })
    }

    /// Reads the headers of one frame (`frame` from its first byte; a few
    /// hundred bytes suffice): VOL, GOV, then the VOP, which it returns.
    pub fn parse_frame(&mut self, frame: &[u8]) -> Option<Vop> {
        let mut i = 0usize;
        while i + 4 <= frame.len() {
            if frame.get(i..i + 3) != Some(&[0, 0, 1][..]) {
                i += 1;
                continue;
            }
            let code = 0x100 | frame.get(i + 3).copied().unwrap_or(0) as u32;
            let body = frame.get(i + 4..).unwrap_or(&[]);
            match code {
                0x120..=0x12F => self.parse_vol(body),
                GOV => {
                    let mut r = BitReader::new(body);
                    let (h, m) = (r.bits(5) as u64, r.bits(6) as u64);
                    r.skip(1);
                    let s = r.bits(6) as u64;
                    if !r.overrun() && body.get(..3).is_some_and(|b| b.iter().any(|&x| x != 0)) {
                        self.time_base = s + 60 * (m + 60 * h);
                    }
                }
                VOP => return self.parse_vop(body),
                _ => {}
            }
            i += 4;
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn frames_and_timing() {
        // VOL: random_accessible 0, type 1, no id, aspect 1, no control,
        // shape 0, marker, resolution 25, marker, fixed 1 + increment 1
        // (5 bits), marker, 176, marker, 144, marker.
        let mut bits = [0u8; 16];
        let fields: [(u32, u32); 14] = [
            (1, 0),
            (8, 1),
            (1, 0),
            (4, 1),
            (1, 0),
            (2, 0),
            (1, 1),
            (16, 25),
            (1, 1),
            (1, 1),
            (5, 1),
            (1, 1),
            (13, 176),
            (1, 1),
        ];
        let mut n = 0;
        for (len, v) in fields.iter().chain([(13u32, 144u32), (1, 1)].iter()) {
            for k in (0..*len).rev() {
                if (v >> k) & 1 == 1 {
                    bits[n / 8] |= 0x80 >> (n % 8);
                }
                n += 1;
            }
        }
        let mut s = Mpeg4State::default();
        s.parse_vol(&bits);
        assert_eq!((s.resolution, s.increment_bits, s.fixed_increment), (25, 5, Some(1)));
        assert_eq!((s.width, s.height, s.low_delay), (176, 144, true));
        // I-VOP at increment 0, then P at 1: coding type(2) modulo(0) marker inc(5) marker.
        let v = s.parse_frame(&[0, 0, 1, 0xB6, 0b0001_0000, 0b0100_0000]).unwrap();
        assert_eq!(
            v,
            Vop {
                coding_type: 0,
                time: 0
            }
        );
        let v = s.parse_frame(&[0, 0, 1, 0xB6, 0b0101_0000, 0b1100_0000]).unwrap();
        assert_eq!(
            v,
            Vop {
                coding_type: 1,
                time: 1
            }
        );
        let d = [0, 0, 1, 0xB0, 1, 0, 0, 1, 0xB6, 0x10, 0, 0, 1, 0xB6, 0x50];
        let mut f = FrameSplitter::default();
        assert_eq!(f.feed(&d, 0), Some(10));
    }
}
