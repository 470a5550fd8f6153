//! The H.264 reorder depth from an `avcC` record (ISO/IEC 14496-15 §5.3.3)
//! and its first sequence parameter set (ITU-T H.264 §7.3.2.1.1, VUI
//! §E.1.1): `max_num_reorder_frames`, which ffmpeg uses as `has_b_frames`
//! to derive the decoding timestamps that Matroska does not store.

use crate::codec::bits::BitReader;
use crate::codec::h264::{skip_scaling_list, vui_head};
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
    let len = u16::from_be_bytes([*buf.get(6)?, *buf.get(7)?]) as usize;
    let nal = buf.get(8..8 + len)?;
    // The RBSP after the NAL header byte, emulation prevention bytes
    // (00 00 03, H.264 §7.4.1) dropped by the reader.
    let mut r = BitReader::rbsp(nal.get(1..)?);
    let depth = parse_sps(&mut r)?;
    (!r.overrun() && depth as usize <= MAX_REORDER).then_some(depth as u8)
}

/// Walks an SPS (H.264 §7.3.2.1.1) to its VUI (§E.1.1) and returns
/// `max_num_reorder_frames`. Reads past the end give zero bits; the caller
/// checks [`BitReader::overrun`].
fn parse_sps(r: &mut BitReader) -> Option<u32> {
    let profile = r.bits(8);
    r.skip(16); // constraint flags, level_idc
    r.ue(); // seq_parameter_set_id
    if matches!(
        profile,
        100 | 110 | 122 | 244 | 44 | 83 | 86 | 118 | 128 | 138 | 139 | 134 | 135
    ) {
        let chroma = r.ue();
        if chroma == 3 {
            r.skip(1);
        }
        r.ue();
        r.ue();
        r.skip(1);
        if r.bit() {
            for i in 0..if chroma == 3 { 12 } else { 8 } {
                if r.bit() {
                    skip_scaling_list(r, if i < 6 { 16 } else { 64 });
                }
            }
        }
    }
    r.ue(); // log2_max_frame_num_minus4
    match r.ue() {
        0 => {
            r.ue();
        }
        1 => {
            r.skip(1);
            r.se();
            r.se();
            let cycle = r.ue();
            if cycle > 255 {
                return None;
            }
            for _ in 0..cycle {
                r.se();
            }
        }
        _ => {}
    }
    r.ue(); // max_num_ref_frames
    r.skip(1);
    r.ue();
    r.ue();
    if !r.bit() {
        r.skip(1); // mb_adaptive_frame_field_flag
    }
    r.skip(1);
    if r.bit() {
        for _ in 0..4 {
            r.ue();
        }
    }
    if !r.bit() {
        return None; // no VUI
    }
    if vui_head(r).1.is_some() {
        r.skip(1); // fixed_frame_rate_flag
    }
    let nal_hrd = r.bit();
    if nal_hrd {
        hrd(r)?;
    }
    let vcl_hrd = r.bit();
    if vcl_hrd {
        hrd(r)?;
    }
    if nal_hrd || vcl_hrd {
        r.skip(1);
    }
    r.skip(1); // pic_struct_present_flag
    if !r.bit() {
        return None; // no bitstream_restriction
    }
    r.skip(1);
    for _ in 0..4 {
        r.ue();
    }
    Some(r.ue()) // max_num_reorder_frames
}

/// hrd_parameters() (H.264 §E.1.2).
fn hrd(r: &mut BitReader) -> Option<()> {
    let count = r.ue().saturating_add(1);
    if count > 32 {
        return None;
    }
    r.skip(8);
    for _ in 0..count {
        r.ue();
        r.ue();
        r.skip(1);
    }
    r.skip(20);
    Some(())
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
