//! The reorder depth of a video track from its CodecPrivate, which ffmpeg
//! uses as `has_b_frames` to derive the decoding timestamps that Matroska
//! does not store (see `TrackState::dts_for`):
//!
//! - H.264: `max_num_reorder_frames` of the first SPS in the `avcC` record
//!   (ISO/IEC 14496-15 §5.3.3; ITU-T H.264 §7.3.2.1.1, VUI §E.1.1, parsed
//!   by [`crate::codec::h264::Sps`]), known only when its VUI has
//!   `bitstream_restriction_flag`;
//! - H.265: `sps_max_num_reorder_pics[sps_max_sub_layers_minus1]` of the
//!   first SPS in the `hvcC` record (ISO/IEC 14496-15 §8.3.3.1; ITU-T H.265
//!   §7.3.2.2.1, read by [`crate::codec::hevc::Sps`] and its sub-layer ordering info), as ffmpeg's
//!   `hevc` decoder sets `has_b_frames` (feature `mkv-hevc-dts`).

use crate::bytes::be16;
use crate::codec::h264;
#[cfg(feature = "mkv-hevc-dts")]
use crate::codec::hevc;
use crate::source::Source;
use crate::types::ByteRange;

/// Most bytes of the record read (its first SPS must fit).
const MAX_RECORD: usize = 512;
/// ffmpeg's `MAX_REORDER_DELAY`: deeper reordering is not followed.
pub(super) const MAX_REORDER: usize = 16;

/// The reorder depth `depth_of` finds in the CodecPrivate record at
/// `config` (its first [`MAX_RECORD`] bytes); `None` when it finds none or
/// one deeper than [`MAX_REORDER`].
pub(super) fn reorder_depth<S: Source>(
    src: &mut S,
    config: ByteRange,
    depth_of: impl FnOnce(&[u8]) -> Option<u32>,
) -> Option<u8> {
    let mut record = [0u8; MAX_RECORD];
    let n = (config.len as usize).min(MAX_RECORD);
    let buf = record.get_mut(..n)?;
    src.read_exact_at(config.offset, buf).ok()?;
    let depth = depth_of(buf)?;
    (depth as usize <= MAX_REORDER).then_some(depth as u8)
}

/// H.264: the first SPS of an `avcC` record, after its NAL header byte,
/// walked once by the codec parser (emulation prevention bytes, 00 00 03
/// of H.264 §7.4.1, dropped). Inlined: a call of its own was 16 bytes
/// more of firmware flash.
#[inline(always)]
pub(super) fn avcc(buf: &[u8]) -> Option<u32> {
    if *buf.first()? != 1 || buf.get(5)? & 0x1F == 0 {
        return None;
    }
    let len = be16(buf, 6)? as usize;
    let nal = buf.get(8..8 + len)?;
    h264::Sps::parse_payload(nal.get(1..)?)?.max_num_reorder_frames
}

/// H.265: the first SPS among the NAL units of an `hvcC` record's arrays
/// (after its 23 fixed bytes: per array a type byte and a 16-bit count,
/// per NAL unit a 16-bit length).
#[cfg(feature = "mkv-hevc-dts")]
pub(super) fn hvcc(buf: &[u8]) -> Option<u32> {
    if *buf.first()? != 1 {
        return None;
    }
    let mut at = 23;
    for _ in 0..*buf.get(22)? {
        let count = be16(buf, at + 1)?;
        at += 3;
        for _ in 0..count {
            let len = be16(buf, at)? as usize;
            let nal = buf.get(at + 2..at + 2 + len)?;
            if let Some(depth) = hevc::max_num_reorder_pics(nal) {
                return Some(depth);
            }
            at += 2 + len;
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::source::SliceSource;

    /// Bits MSB first.
    struct W(Vec<u8>, u32);
    impl W {
        fn put(&mut self, v: u64, n: u32) {
            for i in (0..n).rev() {
                if self.1 % 8 == 0 {
                    self.0.push(0);
                }
                let b = ((v >> i) & 1) as u8;
                *self.0.last_mut().unwrap() |= b << (7 - self.1 % 8);
                self.1 += 1;
            }
        }
        fn ue(&mut self, k: u64) {
            let z = 64 - (k + 1).leading_zeros() - 1;
            self.put(0, z);
            self.put(k + 1, z + 1);
        }
    }
    extern crate std;
    use std::vec::Vec;

    fn avcc(sps: &[u8]) -> Vec<u8> {
        let mut a = std::vec![1, 100, 0, 40, 0xFF, 0xE1];
        a.extend_from_slice(&(sps.len() as u16 + 1).to_be_bytes());
        a.push(0x67);
        a.extend_from_slice(sps);
        a
    }

    fn depth(a: &[u8]) -> Option<u8> {
        let mut src = SliceSource::new(a);
        reorder_depth(
            &mut src,
            ByteRange {
                offset: 0,
                len: a.len() as u32,
            },
            super::avcc,
        )
    }

    /// High profile SPS up to the scaling lists.
    fn high_head(w: &mut W) {
        w.put(100, 8); // profile_idc
        w.put(0, 8); // constraint flags
        w.put(40, 8); // level_idc
        w.ue(0); // seq_parameter_set_id
        w.ue(1); // chroma_format_idc
        w.ue(0); // bit_depth_luma_minus8
        w.ue(0); // bit_depth_chroma_minus8
        w.put(0, 1); // qpprime_y_zero_transform_bypass_flag
    }

    /// The rest of an SPS after the scaling matrix, with a VUI whose
    /// bitstream_restriction gives `reorder`.
    fn tail(w: &mut W, reorder: u64) {
        w.ue(0); // log2_max_frame_num_minus4
        w.ue(2); // pic_order_cnt_type
        w.ue(4); // max_num_ref_frames
        w.put(0, 1); // gaps_in_frame_num_value_allowed_flag
        w.ue(119); // pic_width_in_mbs_minus1
        w.ue(67); // pic_height_in_map_units_minus1
        w.put(1, 1); // frame_mbs_only_flag
        w.put(1, 1); // direct_8x8_inference_flag
        w.put(0, 1); // frame_cropping_flag
        w.put(1, 1); // vui_parameters_present_flag
        w.put(0, 5); // aspect, overscan, video signal, chroma loc, timing
        w.put(0, 2); // nal_hrd, vcl_hrd
        w.put(0, 1); // pic_struct_present_flag
        w.put(1, 1); // bitstream_restriction_flag
        w.put(1, 1); // motion_vectors_over_pic_boundaries_flag
        for _ in 0..4 {
            w.ue(0);
        }
        w.ue(reorder); // max_num_reorder_frames
        w.ue(4); // max_dec_frame_buffering
        w.put(1, 1); // rbsp_stop_one_bit
    }

    #[test]
    fn reorder_depth_from_the_vui() {
        let mut w = W(Vec::new(), 0);
        high_head(&mut w);
        w.put(1, 1); // seq_scaling_matrix_present_flag
        w.put(1, 1); // list 0 present
        w.ue(15); // se(+8): next 16
        w.ue(32); // se(-16): next 0, the rest of the list repeats
        w.put(0, 7); // lists 1..7 absent
        tail(&mut w, 2);
        assert_eq!(depth(&avcc(&w.0)), Some(2));
        // Cut inside the VUI: not known.
        let cut = avcc(&w.0[..w.0.len() - 2]);
        assert_eq!(depth(&cut), None);
    }

    #[test]
    fn a_huge_delta_scale_is_not_an_overflow() {
        let mut w = W(Vec::new(), 0);
        high_head(&mut w);
        w.put(1, 1); // seq_scaling_matrix_present_flag
        w.put(1, 1); // list 0 present
        w.ue(4_294_967_293); // se(v) = 2^31 - 1
        for _ in 0..15 {
            w.ue(0);
        }
        w.put(0, 7);
        tail(&mut w, 1);
        // Whatever the answer, no panic.
        let _ = depth(&avcc(&w.0));
    }
    #[cfg(feature = "mkv-hevc-dts")]
    /// An `hvcC` record with a VPS-typed array of one junk NAL unit, then
    /// an SPS with two sub-layers whose reorder depths are `reorder`
    /// (both stated when `all`, else only the highest).
    fn hvcc_record(all: bool, reorder: [u64; 2]) -> Vec<u8> {
        let mut w = W(std::vec![0x42, 0x01], 16); // NAL header: SPS
        w.put(0, 4); // sps_video_parameter_set_id
        w.put(1, 3); // sps_max_sub_layers_minus1
        w.put(1, 1); // sps_temporal_id_nesting_flag
        w.put(1, 8); // general_profile_space, tier, profile_idc (Main)
        w.put(0, 40); // compatibility flags, source and constraint flags
        w.put(0, 40);
        w.put(93, 8); // general_level_idc
        w.put(0, 2); // sub_layer_profile/level_present_flag[0]
        w.put(0, 2 * 7); // reserved_zero_2bits for 1..8
        w.ue(0); // sps_seq_parameter_set_id
        w.ue(1); // chroma_format_idc
        w.ue(1280);
        w.ue(720);
        w.put(0, 1); // conformance_window_flag
        w.ue(0); // bit_depth_luma_minus8
        w.ue(0); // bit_depth_chroma_minus8
        w.ue(4); // log2_max_pic_order_cnt_lsb_minus4
        w.put(u64::from(all), 1); // sps_sub_layer_ordering_info_present_flag
        for &r in reorder.iter().skip(usize::from(!all)) {
            w.ue(4); // sps_max_dec_pic_buffering_minus1
            w.ue(r); // sps_max_num_reorder_pics
            w.ue(0); // sps_max_latency_increase_plus1
        }
        w.put(1, 1); // (the rest of the SPS is not read)
        let mut a = std::vec![1u8; 22];
        a.push(2); // numOfArrays
        a.extend_from_slice(&[0x20, 0, 1, 0, 2, 0x40, 0x01]);
        a.extend_from_slice(&[0x21, 0, 1]);
        a.extend_from_slice(&(w.0.len() as u16).to_be_bytes());
        a.extend_from_slice(&w.0);
        a
    }

    #[cfg(feature = "mkv-hevc-dts")]
    fn hevc_depth(a: &[u8]) -> Option<u8> {
        let mut src = SliceSource::new(a);
        let config = ByteRange {
            offset: 0,
            len: a.len() as u32,
        };
        reorder_depth(&mut src, config, hvcc)
    }

    #[cfg(feature = "mkv-hevc-dts")]
    #[test]
    fn hevc_reorder_depth_of_the_highest_sub_layer() {
        assert_eq!(hevc_depth(&hvcc_record(true, [1, 3])), Some(3));
        assert_eq!(hevc_depth(&hvcc_record(false, [9, 2])), Some(2));
        // Deeper than ffmpeg follows: not used.
        assert_eq!(hevc_depth(&hvcc_record(false, [0, 17])), None);
        // The record cut inside the SPS, or before its array: not known.
        let a = hvcc_record(true, [1, 3]);
        assert_eq!(hevc_depth(&a[..a.len() - 3]), None);
        assert_eq!(hevc_depth(&a[..30]), None);
        // Not configurationVersion 1.
        let mut v = a;
        v[0] = 0;
        assert_eq!(hevc_depth(&v), None);
    }
}
