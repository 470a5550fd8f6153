//! The AC-3 and E-AC-3 specific boxes of an ISO BMFF sample entry, built
//! from the first sync frame: `dac3` (`AC3SpecificBox`, ETSI TS 102 366
//! Annex F.4) and `dec3` (`EC3SpecificBox`, Annex F.6). What a remux from a
//! raw `.ac3`/`.eac3` stream or an MPEG-TS needs, since those carry no
//! configuration record.
//!
//! `dac3`, 24 bits: `fscod`(2) `bsid`(5) `bsmod`(3) `acmod`(3) `lfeon`(1)
//! `bit_rate_code`(5) `reserved`(5), all from the AC-3 `syncinfo` and `bsi`
//! (ATSC A/52 §5.3.1–5.3.2).
//!
//! `dec3` for one independent substream without dependent substreams,
//! 40 bits: `data_rate`(13, kbit/s) `num_ind_sub`(3, count − 1), then
//! `fscod`(2) `bsid`(5) `reserved`(1) `asvc`(1) `bsmod`(3) `acmod`(3)
//! `lfeon`(1) `reserved`(3) `num_dep_sub`(4) `reserved`(1). E-AC-3 carries
//! `bsmod` only in the optional `infomdat` of its `bsi`, after fields of
//! variable length; it is written 0 (main audio service, complete main), as
//! ffmpeg's header parser leaves it for E-AC-3. A packet with a dependent
//! substream (7.1 and more channels) or a second independent one is
//! refused: their channel locations are not parsed here.

use crate::codec::ac3::{Ac3Header, FrameType};

/// The 3-byte `dac3` payload for the AC-3 sync frame at the start of
/// `frame`, or `None` when it is not an AC-3 (`bsid` ≤ 10) frame.
pub fn dac3(frame: &[u8]) -> Option<[u8; 3]> {
    let h = Ac3Header::parse(frame)?;
    if h.is_eac3() {
        return None;
    }
    let b4 = *frame.get(4)?;
    let b5 = *frame.get(5)?;
    let fscod = u32::from(b4 >> 6);
    let bit_rate_code = u32::from((b4 & 0x3F) >> 1);
    let bsid = u32::from(b5 >> 3);
    let bsmod = u32::from(b5 & 7);
    let v =
        fscod << 22 | bsid << 17 | bsmod << 14 | u32::from(h.acmod) << 11 | u32::from(h.lfe) << 10 | bit_rate_code << 5;
    let [_, a, b, c] = v.to_be_bytes();
    Some([a, b, c])
}

/// The 5-byte `dec3` payload for the E-AC-3 packet `packet` (its sync
/// frames), or `None` when its first frame is not E-AC-3 or the packet
/// holds more than one substream (see the module documentation).
pub fn dec3(packet: &[u8]) -> Option<[u8; 5]> {
    let h = Ac3Header::parse(packet)?;
    if !h.is_eac3() || h.frame_type == FrameType::Dependent || h.substream != 0 {
        return None;
    }
    // Only one substream: nothing after the first frame but another frame
    // of the same independent substream.
    let mut at = h.frame_len as usize;
    while let Some(rest) = packet.get(at..).filter(|r| !r.is_empty()) {
        let next = Ac3Header::parse(rest)?;
        if next.frame_type == FrameType::Dependent || next.substream != 0 {
            return None;
        }
        at = at.checked_add(next.frame_len as usize)?;
    }
    let fscod = u64::from(*packet.get(4)? >> 6);
    let data_rate = u64::from(h.bit_rate / 1000).min(0x1FFF);
    let v = data_rate << 27
        // num_ind_sub 0: one independent substream.
        | fscod << 22
        | u64::from(h.bsid) << 17
        | u64::from(h.acmod) << 9
        | u64::from(h.lfe) << 8;
    let [_, _, _, a, b, c, d, e] = v.to_be_bytes();
    Some([a, b, c, d, e])
}

#[cfg(test)]
mod tests {
    extern crate std;
    use super::*;

    /// An AC-3 sync frame header: 48 kHz, 192 kbit/s (frmsizecod 20),
    /// bsid 8, bsmod 0, acmod 2 (2/0), dsurmod 0, lfeon 0.
    const AC3_STEREO: [u8; 8] = [0x0B, 0x77, 0, 0, 0x14, 0x40, 0x40, 0x00];

    #[test]
    fn dac3_fields_from_the_header() {
        let mut frame = [0u8; 768];
        frame[..8].copy_from_slice(&AC3_STEREO);
        // fscod 0, bsid 8, bsmod 0, acmod 2, lfeon 0, bit_rate_code 10.
        let want = (8u32 << 17) | (2 << 11) | (10 << 5);
        let [_, a, b, c] = want.to_be_bytes();
        assert_eq!(dac3(&frame), Some([a, b, c]));
        // 5.1 at 44.1 kHz, 448 kbit/s (frmsizecod 30), bsmod 1: acmod 7
        // has cmixlev and surmixlev before lfeon.
        let mut f = [0u8; 8];
        f[..4].copy_from_slice(&[0x0B, 0x77, 0, 0]);
        f[4] = (1 << 6) | 30;
        f[5] = (8 << 3) | 1;
        f[6] = (7 << 5) | 1; // cmixlev 00, surmixlev 00, lfeon 1
        let want = (1u32 << 22) | (8 << 17) | (1 << 14) | (7 << 11) | (1 << 10) | (15 << 5);
        let [_, a, b, c] = want.to_be_bytes();
        assert_eq!(dac3(&f), Some([a, b, c]));
        assert_eq!(dac3(&f[..5]), None);
    }

    /// An E-AC-3 independent frame: substream 0, frmsiz for `words` 16-bit
    /// words, 48 kHz, 6 blocks, acmod 2, no LFE, bsid 16.
    fn eac3_frame(words: u16, strmtyp: u8, substream: u8) -> std::vec::Vec<u8> {
        let frmsiz = words - 1;
        let mut f = std::vec![0u8; usize::from(words) * 2];
        f[0] = 0x0B;
        f[1] = 0x77;
        f[2] = (strmtyp << 6) | (substream << 3) | ((frmsiz >> 8) as u8 & 7);
        f[3] = frmsiz as u8;
        f[4] = (3 << 4) | (2 << 1); // fscod 0, numblkscod 3, acmod 2, lfeon 0
        f[5] = 16 << 3;
        f
    }

    #[test]
    fn dec3_for_one_independent_substream() {
        let f = eac3_frame(384, 0, 0); // 768 bytes: 192 kbit/s at 48 kHz
        let want = (192u64 << 27) | (16 << 17) | (2 << 9);
        let w = want.to_be_bytes();
        assert_eq!(dec3(&f), Some([w[3], w[4], w[5], w[6], w[7]]));
        // Two frames of the same substream in one packet: the same box.
        let two: std::vec::Vec<u8> = f.iter().chain(f.iter()).copied().collect();
        assert_eq!(dec3(&two), dec3(&f));
        // A dependent substream after it: refused.
        let dep: std::vec::Vec<u8> = f.iter().chain(eac3_frame(128, 1, 0).iter()).copied().collect();
        assert_eq!(dec3(&dep), None);
        // A second independent substream: refused.
        let ind: std::vec::Vec<u8> = f.iter().chain(eac3_frame(128, 0, 1).iter()).copied().collect();
        assert_eq!(dec3(&ind), None);
        // AC-3 is not E-AC-3, and the other way round.
        assert_eq!(dec3(&AC3_STEREO), None);
        assert_eq!(dac3(&f), None);
    }
}
