//! MPEG-1 and MPEG-2 video (ISO/IEC 11172-2 §2.4.2, ISO/IEC 13818-2 §6.2):
//! start codes, the sequence header's size and frame rate, and a frame
//! splitter that draws the boundaries ffmpeg's `mpegvideo` parser draws
//! (`ff_mpeg1_find_frame_end`), field pairs included.

/// `picture_start_code` value.
pub const PICTURE: u32 = 0x100;
/// First slice start code.
pub const SLICE_MIN: u32 = 0x101;
/// Last slice start code.
pub const SLICE_MAX: u32 = 0x1AF;
/// `sequence_header_code`.
pub const SEQUENCE_HEADER: u32 = 0x1B3;
/// `extension_start_code`.
pub const EXTENSION: u32 = 0x1B5;
/// `sequence_end_code`.
pub const SEQUENCE_END: u32 = 0x1B7;
/// `group_start_code`.
pub const GOP: u32 = 0x1B8;

/// Frame rates by `frame_rate_code` (ISO/IEC 13818-2 Table 6-4), with the
/// codes 9–13 that Xing and libmpeg3 wrote and ffmpeg accepts.
pub const FRAME_RATES: [(u32, u32); 14] = [
    (0, 1),
    (24000, 1001),
    (24, 1),
    (25, 1),
    (30000, 1001),
    (30, 1),
    (50, 1),
    (60000, 1001),
    (60, 1),
    (15, 1),
    (5, 1),
    (10, 1),
    (12, 1),
    (15, 1),
];

/// What a sequence header says.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SequenceHeader {
    /// `horizontal_size_value`.
    pub width: u32,
    /// `vertical_size_value`.
    pub height: u32,
    /// `aspect_ratio_information`.
    pub aspect: u8,
    /// Frame rate as a fraction, from `frame_rate_code`.
    pub frame_rate: (u32, u32),
    /// `bit_rate_value` in units of 400 bit/s.
    pub bit_rate: u32,
}

impl SequenceHeader {
    /// Parses the 8 bytes after a sequence header start code.
    pub fn parse(b: &[u8]) -> Option<Self> {
        let h: [u8; 8] = b.get(..8)?.try_into().ok()?;
        let width = ((h[0] as u32) << 4) | (h[1] as u32 >> 4);
        let height = (((h[1] & 0xF) as u32) << 8) | h[2] as u32;
        let code = h[3] & 0xF;
        let frame_rate = *FRAME_RATES.get(code as usize)?;
        if width == 0 || height == 0 || code == 0 || h[3] >> 4 == 0 {
            return None;
        }
        Some(SequenceHeader {
            width,
            height,
            aspect: h[3] >> 4,
            frame_rate,
            bit_rate: ((h[4] as u32) << 10) | ((h[5] as u32) << 2) | (h[6] as u32 >> 6),
        })
    }
}

/// Frame splitter with ffmpeg's states: 0 frame start, 1 first extension
/// after it, 2 first field started, 3 second extension, 4 in slices.
#[derive(Debug, Clone)]
pub struct FrameSplitter {
    state: u32,
    found: u8,
    /// Whether an I picture (`picture_coding_type` 1) was seen.
    pub intra: bool,
    /// `picture_coding_type` of the first picture (1 I, 2 P, 3 B), 0 before
    /// one is seen.
    pub picture_type: u8,
    /// Whether the MPEG-2 sequence extension was seen.
    pub mpeg2: bool,
    pic_byte: u8,
}

impl Default for FrameSplitter {
    fn default() -> Self {
        FrameSplitter {
            state: u32::MAX,
            found: 0,
            intra: false,
            picture_type: 0,
            mpeg2: false,
            pic_byte: 0,
        }
    }
}

impl FrameSplitter {
    /// Whether the frame being split has reached its slices.
    pub fn in_slices(&self) -> bool {
        self.found == 4
    }

    /// Feeds `data` at absolute offset `base`; returns where the next frame
    /// starts when found (up to 3 bytes before `base`).
    pub fn feed(&mut self, data: &[u8], base: u64) -> Option<u64> {
        for (i, &b) in data.iter().enumerate() {
            let at = base + i as u64;
            if self.pic_byte > 0 {
                // picture_coding_type: bits 3..5 of the second byte after
                // the picture start code (10-bit temporal_reference first).
                self.pic_byte -= 1;
                let t = (b >> 3) & 7;
                if self.pic_byte == 0 && t == 1 {
                    self.intra = true;
                }
                if self.pic_byte == 0 && self.picture_type == 0 {
                    self.picture_type = t;
                }
            }
            if self.found & 1 == 1 {
                if self.state == EXTENSION && b & 0xF0 != 0x80 {
                    if b & 0xF0 == 0x10 {
                        self.mpeg2 = true;
                    }
                    self.found -= 1;
                } else if self.state == EXTENSION + 2 {
                    if b & 3 == 3 {
                        self.found = 0;
                    } else {
                        self.found = (self.found + 1) & 3;
                    }
                }
                self.state = self.state.wrapping_add(1);
                continue;
            }
            self.state = (self.state << 8) | b as u32;
            if self.state & 0xFFFF_FF00 != 0x100 {
                continue;
            }
            let s = self.state;
            if self.found == 0 && (SLICE_MIN..=SLICE_MAX).contains(&s) {
                self.found = 4;
            }
            if s == SEQUENCE_END {
                self.found = 0;
                self.state = u32::MAX;
                return Some(at + 1);
            }
            if self.found == 2 && s == SEQUENCE_HEADER {
                self.found = 0;
            }
            if self.found < 4 && s == EXTENSION {
                self.found += 1;
            }
            if self.found == 4 && !(SLICE_MIN..=SLICE_MAX).contains(&s) {
                self.found = 0;
                self.state = u32::MAX;
                return Some(at.saturating_sub(3));
            }
            if s == PICTURE {
                self.pic_byte = 2;
            }
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splits_frames_and_reads_sequence_header() {
        let d = [
            0, 0, 1, 0xB3, 0x14, 0x00, 0xF0, 0x13, 0, 0, 0, 0, 0, 0, 1, 0x00, 0, 0x08, 0, 0, 1, 0x01, 9, 0, 0, 1, 0x00,
            0, 0x10, 0, 0, 1, 0x01, 9,
        ];
        let s = SequenceHeader::parse(&d[4..]).unwrap();
        assert_eq!((s.width, s.height, s.frame_rate), (320, 240, (25, 1)));
        let mut f = FrameSplitter::default();
        assert_eq!(f.feed(&d, 0), Some(23));
        assert!(f.intra);
        let mut f = FrameSplitter::default();
        assert_eq!(f.feed(&d[23..], 23), None);
    }
}
