//! The H.264 reorder depth from an `avcC` record (ISO/IEC 14496-15 §5.3.3)
//! and its first sequence parameter set (ITU-T H.264 §7.3.2.1.1, VUI
//! §E.1.1, parsed by [`crate::codec::h264::Sps`]): `max_num_reorder_frames`,
//! which ffmpeg uses as `has_b_frames` to derive the decoding timestamps
//! that Matroska does not store.

use crate::bytes::be16;
use crate::codec::h264::Sps;
use crate::source::Source;
use crate::types::ByteRange;

/// Most bytes of the `avcC` record read (its first SPS must fit).
const MAX_AVCC: usize = 512;
/// ffmpeg's `MAX_REORDER_DELAY`: deeper reordering is not followed.
pub(super) const MAX_REORDER: usize = 16;

/// `max_num_reorder_frames` of the first SPS in the `avcC` at `config`, when
/// its VUI has `bitstream_restriction_flag`; `None` otherwise (the depth is
/// then not known from the headers).
pub(super) fn reorder_depth<S: Source>(src: &mut S, config: ByteRange) -> Option<u8> {
    let mut avcc = [0u8; MAX_AVCC];
    let n = (config.len as usize).min(MAX_AVCC);
    let buf = avcc.get_mut(..n)?;
    src.read_exact_at(config.offset, buf).ok()?;
    if *buf.first()? != 1 || buf.get(5)? & 0x1F == 0 {
        return None;
    }
    let len = be16(buf, 6)? as usize;
    let nal = buf.get(8..8 + len)?;
    // The SPS after the NAL header byte, walked once by the codec parser
    // (emulation prevention bytes, 00 00 03 of H.264 §7.4.1, dropped).
    let depth = Sps::parse_payload(nal.get(1..)?)?.max_num_reorder_frames?;
    (depth as usize <= MAX_REORDER).then_some(depth as u8)
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
}
