//! H.265 bitstream pieces: NAL unit header (ITU-T H.265 §7.3.1.2, types of
//! Table 7-1), the sequence parameter set's picture size (§7.3.2.2.1,
//! `profile_tier_level` §7.3.3) and an access-unit splitter over Annex B byte
//! streams that draws the boundaries ffmpeg's `hevc` parser draws.

use super::bits::BitReader;

/// NAL unit types of Table 7-1 used here.
pub mod nal {
    /// Last type of the non-IRAP VCL range used by ffmpeg (RASL_R).
    pub const RASL_R: u8 = 9;
    /// BLA_W_LP: first IRAP type.
    pub const BLA_W_LP: u8 = 16;
    /// CRA_NUT: last IRAP type ffmpeg's parser treats as a slice.
    pub const CRA: u8 = 21;
    /// Reserved IRAP types end here.
    pub const IRAP_END: u8 = 23;
    /// Video parameter set.
    pub const VPS: u8 = 32;
    /// Sequence parameter set.
    pub const SPS: u8 = 33;
    /// End of bitstream.
    pub const EOB: u8 = 37;
    /// Prefix SEI.
    pub const SEI_PREFIX: u8 = 39;
}

/// The NAL unit type of a two-byte NAL header.
pub const fn nal_type(b0: u8) -> u8 {
    (b0 >> 1) & 0x3F
}

/// Picture facts from a sequence parameter set.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Sps {
    /// `general_profile_idc`.
    pub profile: u8,
    /// `general_level_idc`.
    pub level: u8,
    /// `chroma_format_idc`.
    pub chroma_format: u32,
    /// Width in pixels after the conformance window.
    pub width: u32,
    /// Height in pixels after the conformance window.
    pub height: u32,
    /// Luma bit depth (`bit_depth_luma_minus8 + 8`).
    pub bit_depth: u32,
    /// `sps_max_sub_layers_minus1`.
    pub max_sub_layers_minus1: u8,
}

impl Sps {
    /// Parses an SPS NAL unit (`nal` starts at the two-byte NAL header),
    /// reading through emulation prevention bytes in place.
    pub fn parse(nal: &[u8]) -> Option<Sps> {
        if nal_type(*nal.first()?) != nal::SPS {
            return None;
        }
        Sps::read(&mut BitReader::rbsp(nal.get(2..)?))
    }

    /// A reader over an SPS NAL unit's RBSP; `None` when `nal` is no SPS.
    pub(crate) fn reader(nal: &[u8]) -> Option<BitReader<'_>> {
        if nal_type(*nal.first()?) != nal::SPS {
            return None;
        }
        Some(BitReader::rbsp(nal.get(2..)?))
    }

    /// Reads the SPS RBSP from its start through `bit_depth_luma_minus8`,
    /// leaving `r` at `bit_depth_chroma_minus8`; `None` when cut short.
    pub(crate) fn read(r: &mut BitReader<'_>) -> Option<Sps> {
        r.skip(4);
        let max_sub_layers_minus1 = r.bits(3);
        r.skip(1);
        // profile_tier_level(1, max_sub_layers_minus1)
        r.skip(2 + 1);
        let profile = r.bits(5) as u8;
        r.skip(32 + 4 + 43 + 1);
        let level = r.bits(8) as u8;
        let mut present = [(false, false); 8];
        for p in present.iter_mut().take(max_sub_layers_minus1 as usize) {
            *p = (r.bit(), r.bit());
        }
        if max_sub_layers_minus1 > 0 {
            for _ in max_sub_layers_minus1..8 {
                r.skip(2);
            }
        }
        for &(prof, lev) in present.iter().take(max_sub_layers_minus1 as usize) {
            if prof {
                r.skip(88);
            }
            if lev {
                r.skip(8);
            }
        }
        r.ue(); // sps_seq_parameter_set_id
        let chroma_format = r.ue();
        if chroma_format == 3 {
            r.skip(1);
        }
        let mut width = r.ue();
        let mut height = r.ue();
        if r.bit() {
            let (sw, sh) = match chroma_format {
                1 => (2, 2),
                2 => (2, 1),
                _ => (1, 1),
            };
            let (l, rt, t, b) = (r.ue(), r.ue(), r.ue(), r.ue());
            width = width.saturating_sub(l.saturating_add(rt).saturating_mul(sw));
            height = height.saturating_sub(t.saturating_add(b).saturating_mul(sh));
        }
        let bit_depth = r.ue().saturating_add(8);
        if r.overrun() {
            return None;
        }
        Some(Sps {
            profile,
            level,
            chroma_format,
            width,
            height,
            bit_depth,
            max_sub_layers_minus1: max_sub_layers_minus1 as u8,
        })
    }
}

/// `sps_max_num_reorder_pics[sps_max_sub_layers_minus1]` of the SPS NAL
/// unit `nal` (§7.4.3.2.1): the most pictures that may precede one in
/// decoding order and follow it in output order, which ffmpeg's `hevc`
/// decoder takes as `has_b_frames`. `None` when `nal` is no SPS or is cut
/// short before it.
#[cfg(feature = "mkv-hevc-dts")]
pub(crate) fn max_num_reorder_pics(nal: &[u8]) -> Option<u32> {
    let mut r = Sps::reader(nal)?;
    let sps = Sps::read(&mut r)?;
    let (_, reorder) = read_ordering(&mut r, sps.max_sub_layers_minus1);
    (!r.overrun()).then_some(reorder)
}

/// Reads the SPS from `bit_depth_chroma_minus8` (where [`Sps::read`] leaves
/// off) through the sub-layer ordering info (§7.3.2.2.1): returns
/// `log2_max_pic_order_cnt_lsb_minus4 + 4` and the highest sub-layer's
/// `sps_max_num_reorder_pics`.
pub(crate) fn read_ordering(r: &mut BitReader<'_>, max_sub_layers_minus1: u8) -> (u32, u32) {
    r.ue(); // bit_depth_chroma_minus8
    let poc_lsb_bits = r.ue().saturating_add(4);
    // sps_sub_layer_ordering_info_present_flag: every sub-layer, or the
    // highest only; the highest comes last.
    let first = if r.bit() { 0 } else { max_sub_layers_minus1 };
    let mut reorder = 0;
    for _ in first..=max_sub_layers_minus1 {
        r.ue(); // sps_max_dec_pic_buffering_minus1
        reorder = r.ue(); // sps_max_num_reorder_pics
        r.ue(); // sps_max_latency_increase_plus1
    }
    (poc_lsb_bits, reorder)
}

/// Finds access-unit boundaries in an Annex B H.265 stream the way ffmpeg's
/// `hevc` parser does (`hevc_find_frame_end`): in layer 0, a parameter set,
/// AUD, EOS/EOB, prefix SEI or reserved/unspecified NAL unit after a slice,
/// or a slice with `first_slice_segment_in_pic_flag` set after another,
/// starts a new access unit, at the first byte of its three-byte start code
/// prefix.
#[derive(Debug, Clone, Default)]
pub struct AuSplitter {
    state: u64,
    seen: u8,
    frame_start_found: bool,
    pending: Option<u64>,
    /// Whether an IRAP slice (BLA, IDR, CRA) was seen in this access unit.
    pub irap: bool,
    /// Whether a slice was seen in this access unit.
    pub has_slice: bool,
    /// Whether a NAL unit that comes before slices (parameter set, AUD,
    /// prefix SEI) was seen.
    pub has_prefix: bool,
}

impl AuSplitter {
    /// Feeds `data` at absolute offset `base`; returns where the next access
    /// unit starts when found (up to 6 bytes before `base`).
    pub fn feed(&mut self, data: &[u8], base: u64) -> Option<u64> {
        for (i, &b) in data.iter().enumerate() {
            self.state = (self.state << 8) | b as u64;
            self.seen = self.seen.saturating_add(1);
            let at = base + i as u64;
            if self.state & 0xFF_FFFF == 1 {
                self.pending = Some(at.saturating_sub(2));
            }
            if self.seen < 6 || (self.state >> 24) & 0xFF_FFFF != 1 {
                continue;
            }
            self.pending = None;
            let nut = ((self.state >> 17) & 0x3F) as u8;
            let layer = (self.state >> 11) & 0x3F;
            if layer > 0 {
                continue;
            }
            // ffmpeg 5.1 cuts three bytes before the NAL header: the leading
            // zero of a four-byte start code stays with the access unit
            // before.
            let boundary = at.saturating_sub(5);
            if (nal::VPS..=nal::EOB).contains(&nut)
                || nut == nal::SEI_PREFIX
                || (41..=44).contains(&nut)
                || (48..=55).contains(&nut)
            {
                if self.frame_start_found {
                    return Some(boundary);
                }
                self.has_prefix |= !matches!(nut, 36 | 37);
            } else if nut <= nal::RASL_R || (nal::BLA_W_LP..=nal::CRA).contains(&nut) {
                if b >> 7 == 1 {
                    if self.frame_start_found {
                        return Some(boundary);
                    }
                    self.frame_start_found = true;
                }
                if (nal::BLA_W_LP..=nal::IRAP_END).contains(&nut) {
                    self.irap = true;
                }
                self.has_slice = true;
            }
        }
        None
    }

    /// At the end of the input: where a start code seen last, whose NAL
    /// header the input cuts before the split could be decided, begins,
    /// when it follows a slice (so it would start the next access unit).
    pub fn unfinished(&self) -> Option<u64> {
        self.pending.filter(|_| self.frame_start_found)
    }

    /// At the end of the input: whether a NAL unit was cut before its
    /// header could be read.
    pub fn cut_nal(&self) -> bool {
        self.pending.is_some()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splits_access_units() {
        // VPS, IDR (first slice), TRAIL (first slice) -> boundary before TRAIL.
        let d = [
            0, 0, 0, 1, 0x40, 0x01, 0x0C, 0, 0, 1, 0x26, 0x01, 0x80, 7, 0, 0, 0, 1, 0x02, 0x01, 0x80, 7,
        ];
        let mut s = AuSplitter::default();
        assert_eq!(s.feed(&d, 0), Some(15));
        assert!(s.irap);
        let mut s = AuSplitter::default();
        assert_eq!(s.feed(&d[15..], 15), None);
        assert!(!s.irap);
    }
}
