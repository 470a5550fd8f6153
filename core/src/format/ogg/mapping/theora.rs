//! Theora in Ogg: the Theora specification §6.2 (identification header:
//! picture size, frame rate, KFGSHIFT) and §A.2 (the granule position is
//! the keyframe number shifted left by KFGSHIFT plus the frames since it).

use crate::bytes;
use crate::codec::bits::BitReader;
use crate::types::{Codec, Rational, TrackKind};

use super::{head_of, HeaderOutcome, PacketTiming, PacketView, Timing, TrackInfo, NOPTS};

/// The Theora identification header (Theora specification §6.2).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct TheoraIdHeader {
    /// VMAJ.VMIN.VREV as 0xMMmmrr.
    pub version: u32,
    /// Picture width (the frame width when the picture fields disagree).
    pub width: u32,
    /// Picture height.
    pub height: u32,
    /// Frame rate numerator (FRN).
    pub frame_rate_num: u32,
    /// Frame rate denominator (FRD).
    pub frame_rate_den: u32,
    /// Pixel aspect ratio numerator and denominator.
    pub aspect: (u32, u32),
    /// KFGSHIFT: bits of the granule position that count frames since the
    /// last keyframe.
    pub kfgshift: u8,
}

impl TheoraIdHeader {
    /// Parses the identification header as ffmpeg does (its layout for
    /// versions before 3.2 differs). Returns `None` for versions before
    /// 3.1.0 or a short packet.
    pub fn parse(b: &[u8]) -> Option<TheoraIdHeader> {
        if !b.starts_with(b"\x80theora") {
            return None;
        }
        let mut r = BitReader::new(b.get(7..)?);
        let version = r.bits(24);
        if r.overrun() || version < 0x030100 {
            return None;
        }
        let mut width = r.bits(16) << 4;
        let mut height = r.bits(16) << 4;
        if version >= 0x030400 {
            r.skip(32 + 32 + 32 + 4);
        }
        if version >= 0x030200 {
            let w = r.bits(24);
            let h = r.bits(24);
            if w <= width && w + 16 > width && h <= height && h + 16 > height {
                width = w;
                height = h;
            }
            r.skip(16);
        }
        let frame_rate_num = r.bits(32);
        let frame_rate_den = r.bits(32);
        let aspect = (r.bits(24), r.bits(24));
        if version >= 0x030200 {
            r.skip(32 + 6);
        }
        let kfgshift = r.bits(5) as u8;
        if r.overrun() {
            return None;
        }
        Some(TheoraIdHeader {
            version,
            width,
            height,
            frame_rate_num,
            frame_rate_den,
            aspect,
            kfgshift,
        })
    }
}

/// Theora's granule layout.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct TheoraState {
    /// KFGSHIFT.
    pub shift: u8,
    /// The bitstream version.
    pub version: u32,
}

impl TheoraState {
    /// Handles a header packet (Theora §6.1: packet types 0x80, 0x81,
    /// 0x82); a packet without the high bit is the first data packet.
    pub(super) fn header(&mut self, head: &[u8], size: u32) -> HeaderOutcome {
        let b0 = head.first().copied().unwrap_or(0);
        if b0 & 0x80 == 0 {
            return HeaderOutcome::data();
        }
        let mut out = HeaderOutcome {
            slot: Some(b0 & 3),
            ..HeaderOutcome::default()
        };
        match b0 {
            0x80 => match TheoraIdHeader::parse(head_of(head, size)) {
                Some(h) => {
                    self.shift = h.kfgshift;
                    self.version = h.version;
                    out.config = Some((0, size));
                    out.track = Some(track(&h));
                }
                None => out.error = true,
            },
            0x81 => out.comment = Some(7),
            _ => {}
        }
        out
    }

    /// The packet step: the first packet's pts from the page granule (the
    /// frame it names minus the frames the page completes), one tick per
    /// frame.
    #[inline]
    pub(super) fn packet(&mut self, ts: &mut Timing, p: &PacketView<'_>) -> PacketTiming {
        let mut out = PacketTiming::default();
        if ts.first_pending() && !p.eos() {
            let duration = 1 + p.rest().iter().filter(|&&s| s < 255).count() as i64;
            let (frame, key) = theora_frame(self, ts.granule);
            out.key |= key;
            let pts = frame.wrapping_sub(duration);
            ts.set_next(pts);
            if ts.start_time == NOPTS {
                ts.start_time = pts;
            }
        }
        if p.size > 0 {
            out.duration = 1;
        }
        out
    }
}

/// The video track of an identification header: timed in frames (the
/// inverse frame rate, 1/25 when either term is 0), at the picture size.
fn track(h: &TheoraIdHeader) -> TrackInfo {
    let (mut num, mut den) = (h.frame_rate_den, h.frame_rate_num);
    if num == 0 || den == 0 {
        (num, den) = (1, 25);
    }
    let g = bytes::gcd(num as u64, den as u64).max(1);
    TrackInfo {
        kind: TrackKind::Video,
        codec: Codec::Theora,
        time_base: Rational::new((num as u64 / g) as u32, (den as u64 / g) as u32),
        width: h.width,
        height: h.height,
        ..TrackInfo::default()
    }
}

/// Theora granule position to frame number (ffmpeg's `theora_gptopts`);
/// also says whether it names a keyframe.
pub fn theora_frame(t: &TheoraState, gp: u64) -> (i64, bool) {
    let shift = t.shift.min(63) as u32;
    let mut iframe = gp >> shift;
    let pframe = gp & ((1u64 << shift) - 1);
    if t.version < 0x030201 {
        iframe = iframe.wrapping_add(1);
    }
    (iframe.wrapping_add(pframe) as i64, pframe == 0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn theora_granules() {
        let t = TheoraState {
            shift: 6,
            version: 0x030201,
        };
        assert_eq!(theora_frame(&t, 3 << 6), (3, true));
        assert_eq!(theora_frame(&t, (3 << 6) | 2), (5, false));
        let old = TheoraState {
            shift: 6,
            version: 0x030200,
        };
        assert_eq!(theora_frame(&old, 3 << 6), (4, true));
    }

    /// Builds an identification header of `version` with every field
    /// filled from `seed`, cut to `len` bytes.
    fn id_header(version: u32, seed: u8, len: usize) -> [u8; 64] {
        let mut b = [0u8; 64];
        b[..7].copy_from_slice(b"\x80theora");
        b[7..10].copy_from_slice(&version.to_be_bytes()[1..]);
        for (i, x) in b[10..].iter_mut().enumerate() {
            *x = seed.wrapping_mul(i as u8 + 1).wrapping_add(i as u8);
        }
        b[len..].fill(0);
        b
    }

    #[test]
    fn id_header_fields_and_short_packets() {
        for version in [0x030000, 0x030100, 0x030200, 0x030201, 0x030400] {
            for seed in [0u8, 1, 7, 0x5A, 0xFF] {
                let b = id_header(version, seed, 64);
                let h = TheoraIdHeader::parse(&b);
                assert_eq!(h.is_some(), version >= 0x030100, "{version:x}");
                let Some(h) = h else { continue };
                assert_eq!(h.version, version);
                // The last field read ends the shortest header that parses.
                let bits = 56
                    + 24
                    + 32
                    + if version >= 0x030400 { 100 } else { 0 }
                    + if version >= 0x030200 { 64 + 38 } else { 0 }
                    + 64
                    + 48
                    + 5;
                let need = (bits as usize).div_ceil(8);
                assert!(TheoraIdHeader::parse(&b[..need]).is_some());
                assert!(TheoraIdHeader::parse(&b[..need - 1]).is_none());
            }
        }
        let mut b = id_header(0x030201, 0, 64);
        // 20x15 macroblocks, a 316x240 picture, 30000/1001 fps, KFGSHIFT 6.
        b[10..12].copy_from_slice(&20u16.to_be_bytes());
        b[12..14].copy_from_slice(&15u16.to_be_bytes());
        b[14..17].copy_from_slice(&316u32.to_be_bytes()[1..]);
        b[17..20].copy_from_slice(&240u32.to_be_bytes()[1..]);
        b[22..26].copy_from_slice(&30000u32.to_be_bytes());
        b[26..30].copy_from_slice(&1001u32.to_be_bytes());
        // QUAL (6 bits) and the first 2 bits of KFGSHIFT in byte 40, its
        // last 3 bits at the top of byte 41.
        b[40] = 0;
        b[41] = 0b1100_0000;
        let h = TheoraIdHeader::parse(&b).unwrap();
        assert_eq!((h.width, h.height), (316, 240));
        assert_eq!((h.frame_rate_num, h.frame_rate_den), (30000, 1001));
        assert_eq!(h.kfgshift, 6);
    }
}
