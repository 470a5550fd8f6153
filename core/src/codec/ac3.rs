//! AC-3 and E-AC-3 sync frames: `syncinfo` and the start of `bsi`
//! (ATSC A/52:2018 §5.3.1–5.3.2 and Annex E §E.1.2 for E-AC-3), and the
//! CRC-16 that closes each frame (§5.4.1.4, §7.10).

/// Bytes needed to parse a sync frame header.
pub const HEADER_LEN: usize = 7;

/// E-AC-3 `strmtyp` (A/52 Annex E Table E1.1).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FrameType {
    /// Independent substream (type 0).
    Independent,
    /// Dependent substream (type 1): extra channels of the preceding
    /// independent substream, in the same packet.
    Dependent,
    /// AC-3 converted to E-AC-3 (type 2); also how plain AC-3 frames count.
    Ac3Convert,
}

/// A decoded sync frame header.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Ac3Header {
    /// `bsid`: ≤ 10 AC-3 (9 and 10 are the half and quarter rate forms),
    /// 11–16 E-AC-3.
    pub bsid: u8,
    /// E-AC-3 substream type (AC-3 frames are `Ac3Convert`).
    pub frame_type: FrameType,
    /// E-AC-3 `substreamid` (0 for AC-3).
    pub substream: u8,
    /// Frame length in bytes.
    pub frame_len: u32,
    /// Sampling frequency in Hz.
    pub sample_rate: u32,
    /// Audio blocks of 256 samples in the frame (6 for AC-3).
    pub blocks: u8,
    /// `acmod`.
    pub acmod: u8,
    /// `lfeon`.
    pub lfe: bool,
    /// Channels: those of `acmod` plus the LFE.
    pub channels: u16,
    /// Bit rate in bits per second.
    pub bit_rate: u32,
}

const RATES: [u32; 3] = [48000, 44100, 32000];
/// Kilobits per second by `frmsizecod >> 1` (A/52 Table 5.18).
const AC3_KBPS: [u32; 19] = [
    32, 40, 48, 56, 64, 80, 96, 112, 128, 160, 192, 224, 256, 320, 384, 448, 512, 576, 640,
];
/// Full-bandwidth channels by `acmod` (A/52 Table 5.8).
const ACMOD_CHANNELS: [u16; 8] = [2, 1, 2, 3, 3, 4, 4, 5];

/// AC-3 frame length in bytes for `frmsizecod` and `fscod` (A/52 Table
/// 5.18): 2 × words, with the 44.1 kHz odd codes one word longer.
fn ac3_frame_len(frmsizecod: u8, fscod: u8) -> Option<u32> {
    let kbps = *AC3_KBPS.get((frmsizecod >> 1) as usize)?;
    let words = match fscod {
        0 => kbps * 2,
        1 => kbps * 96_000 / 44_100 + (frmsizecod & 1) as u32,
        2 => kbps * 3,
        _ => return None,
    };
    Some(words * 2)
}

/// Whether `b`, the first bytes of a would-be sync frame (fewer than a
/// header), can begin one: the sync word 0x0B77 (ATSC A/52 §5.4.1.1) as far
/// as they go.
pub fn sync_prefix(b: &[u8]) -> bool {
    b.first().is_none_or(|&x| x == 0x0B) && b.get(1).is_none_or(|&x| x == 0x77)
}

impl Ac3Header {
    /// Parses the sync frame header at the start of `b`, with the checks of
    /// ffmpeg's `ff_ac3_parse_header`: sync word 0x0B77, `bsid` ≤ 16, a
    /// defined sampling frequency and frame size.
    pub fn parse(b: &[u8]) -> Option<Self> {
        let h: [u8; 7] = b.get(..HEADER_LEN)?.try_into().ok()?;
        if h[0] != 0x0B || h[1] != 0x77 {
            return None;
        }
        let bsid = h[5] >> 3;
        if bsid > 16 {
            return None;
        }
        if bsid <= 10 {
            let fscod = h[4] >> 6;
            let frmsizecod = h[4] & 0x3F;
            if fscod == 3 || frmsizecod > 37 {
                return None;
            }
            let acmod = h[6] >> 5;
            // lfeon follows optional 2-bit fields (A/52 §5.3.2).
            let mut bit = 3u32; // bits of h[6] used after acmod
            if acmod == 2 {
                bit += 2;
            } else {
                if acmod & 1 != 0 && acmod != 1 {
                    bit += 2;
                }
                if acmod & 4 != 0 {
                    bit += 2;
                }
            }
            let word = u16::from_be_bytes([h[6], b.get(7).copied().unwrap_or(0)]);
            let lfe = (word >> (15 - bit)) & 1 == 1;
            let shift = bsid.max(8) - 8;
            let sample_rate = RATES.get(fscod as usize)? >> shift;
            let kbps = *AC3_KBPS.get((frmsizecod >> 1) as usize)?;
            return Some(Ac3Header {
                bsid,
                frame_type: FrameType::Ac3Convert,
                substream: 0,
                frame_len: ac3_frame_len(frmsizecod, fscod)?,
                sample_rate,
                blocks: 6,
                acmod,
                lfe,
                channels: ACMOD_CHANNELS.get(acmod as usize)? + lfe as u16,
                bit_rate: (kbps * 1000) >> shift,
            });
        }
        // E-AC-3 (Annex E §E.1.2.2): strmtyp(2) substreamid(3) frmsiz(11)
        // fscod(2) fscod2/numblkscod(2) acmod(3) lfeon(1).
        let frame_type = match h[2] >> 6 {
            0 => FrameType::Independent,
            1 => FrameType::Dependent,
            2 => FrameType::Ac3Convert,
            _ => return None,
        };
        let substream = (h[2] >> 3) & 7;
        let frame_len = ((((h[2] & 7) as u32) << 8) | h[3] as u32) + 1;
        let frame_len = frame_len * 2;
        if (frame_len as usize) < HEADER_LEN {
            return None;
        }
        let fscod = h[4] >> 6;
        let x = (h[4] >> 4) & 3;
        let (sample_rate, blocks) = if fscod == 3 {
            if x == 3 {
                return None;
            }
            (RATES.get(x as usize)? / 2, 6u8)
        } else {
            (
                *RATES.get(fscod as usize)?,
                match x {
                    0 => 1u8,
                    1 => 2,
                    2 => 3,
                    _ => 6,
                },
            )
        };
        let acmod = (h[4] >> 1) & 7;
        let lfe = h[4] & 1 == 1;
        Some(Ac3Header {
            bsid,
            frame_type,
            substream,
            frame_len,
            sample_rate,
            blocks,
            acmod,
            lfe,
            channels: ACMOD_CHANNELS.get(acmod as usize)? + lfe as u16,
            bit_rate: (8 * frame_len as u64 * sample_rate as u64 / (blocks as u64 * 256)) as u32,
        })
    }

    /// Whether this is E-AC-3 (`bsid` 11–16).
    pub const fn is_eac3(&self) -> bool {
        self.bsid > 10
    }

    /// Samples per channel in the frame.
    pub const fn samples(&self) -> u32 {
        self.blocks as u32 * 256
    }

    /// Whether the frame starts a new packet (all but dependent
    /// substreams, which ffmpeg's parser joins to the frame before).
    pub fn starts_packet(&self) -> bool {
        self.frame_type != FrameType::Dependent
    }
}

/// CRC-16 with the A/52 polynomial x^16 + x^15 + x^2 + 1, MSB first, initial
/// value 0 (the table-driven [`crate::crc::crc16_poly8005`], as FLAC's).
pub fn crc16(data: &[u8]) -> u16 {
    crate::crc::crc16_poly8005(0, data)
}

/// Whether a whole sync frame's `crc2` checks: the CRC over everything
/// after the sync word is zero (A/52 §7.10.1; Annex E for E-AC-3).
pub fn frame_crc_ok(frame: &[u8]) -> bool {
    frame.get(2..).is_some_and(|d| crc16(d) == 0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ac3_header() {
        // 48 kHz, 384 kbit/s (frmsizecod 28), bsid 8, acmod 7 (3/2), lfe on.
        // acmod 7: cmixlev(2) and surmixlev(2), then lfeon in the last bit of byte 6.
        let h = [0x0B, 0x77, 0, 0, 28, 8 << 3, 0b1110_0001, 0];
        let a = Ac3Header::parse(&h).unwrap();
        assert_eq!((a.frame_len, a.sample_rate, a.acmod), (1536, 48000, 7));
        assert!(a.lfe);
        assert_eq!(a.channels, 6);
        assert_eq!(a.samples(), 1536);
        assert_eq!(ac3_frame_len(0, 1), Some(138));
        assert_eq!(ac3_frame_len(1, 1), Some(140));
    }

    #[test]
    fn eac3_header() {
        // strmtyp 0, substream 0, frmsiz 767 -> 1536 bytes, 48 kHz, 6 blocks, acmod 2.
        let h = [0x0B, 0x77, 0x02, 0xFF, 0b0011_0100, 16 << 3, 0];
        let a = Ac3Header::parse(&h).unwrap();
        assert!(a.is_eac3());
        assert_eq!((a.frame_len, a.sample_rate, a.blocks, a.channels), (1536, 48000, 6, 2));
        let mut d = h;
        d[2] = 0x42;
        assert_eq!(Ac3Header::parse(&d).unwrap().frame_type, FrameType::Dependent);
    }

    #[test]
    fn crc_polynomial() {
        // A frame whose CRC covers itself leaves a zero remainder.
        let mut f = [0u8; 10];
        f[2..8].copy_from_slice(b"abcdef");
        let c = crc16(&f[2..8]);
        f[8..10].copy_from_slice(&c.to_be_bytes());
        assert!(frame_crc_ok(&f));
    }
}
