//! The rest of an H.265 sequence parameter set (ITU-T H.265 §7.3.2.2.1)
//! after the luma bit depth, walked to the head of its VUI (§E.2.1): the
//! sub-layer ordering info, the coding block sizes, `scaling_list_data()`
//! (§7.3.4), PCM, the short-term reference picture sets (`st_ref_pic_set()`,
//! §7.3.7) and the long-term ones. Read once at probe time for the sample
//! aspect ratio and the video signal range; the demuxers need only
//! [`Sps::parse`].

use super::{
    bits::BitReader,
    hevc::{read_ordering, Sps},
    vui::VuiHead,
};

/// Most `num_short_term_ref_pic_sets` (§7.4.3.2.1: 0..=64).
const MAX_SHORT_TERM_SETS: u32 = 64;
/// Most `num_negative_pics`, and most `num_positive_pics`, of one set: both
/// are at most `sps_max_dec_pic_buffering_minus1` (§7.4.8), under 16.
const MAX_REFS: u32 = 16;
/// Most pictures an inter-predicted set may hold (ffmpeg's bound; §7.4.8
/// allows fewer).
const MAX_PREDICTED: u32 = 32;
/// Most `num_long_term_ref_pics_sps` (§7.4.3.2.1: 0..=32).
const MAX_LONG_TERM: u32 = 32;
/// Most `log2_max_pic_order_cnt_lsb_minus4 + 4` (§7.4.3.2.1: 4..=16).
const MAX_POC_LSB_BITS: u32 = 16;

/// Parses an SPS NAL unit (`nal` starts at the two-byte NAL header) through
/// the head of its VUI. The VUI head is the default (nothing stated) when
/// `vui_parameters_present_flag` is 0. `None` when `nal` is no SPS, is cut
/// short before the VUI head ends, or has a field out of its range.
pub fn parse(nal: &[u8]) -> Option<(Sps, VuiHead)> {
    let mut r = Sps::reader(nal)?;
    let sps = Sps::read(&mut r)?;
    let vui = walk_to_vui(&mut r, sps.max_sub_layers_minus1)?;
    (!r.overrun()).then_some((sps, vui))
}

/// From `bit_depth_chroma_minus8` through `vui_parameters_present_flag`,
/// then the VUI head when present.
fn walk_to_vui(r: &mut BitReader<'_>, max_sub_layers_minus1: u8) -> Option<VuiHead> {
    // Through the sub-layer ordering info, as the demuxers read it.
    let (poc_lsb_bits, _) = read_ordering(r, max_sub_layers_minus1);
    if poc_lsb_bits > MAX_POC_LSB_BITS {
        return None;
    }
    // log2_min_luma_coding_block_size_minus3 through
    // max_transform_hierarchy_depth_intra.
    for _ in 0..6 {
        r.ue();
    }
    // scaling_list_enabled_flag, then sps_scaling_list_data_present_flag.
    if r.bit() && r.bit() {
        skip_scaling_list_data(r);
    }
    r.skip(2); // amp_enabled_flag, sample_adaptive_offset_enabled_flag
    if r.bit() {
        // pcm_sample_bit_depth_luma/chroma_minus1, the PCM block sizes,
        // pcm_loop_filter_disabled_flag.
        r.skip(8);
        r.ue();
        r.ue();
        r.skip(1);
    }
    skip_short_term_sets(r)?;
    if r.bit() {
        let n = r.ue();
        if n > MAX_LONG_TERM {
            return None;
        }
        for _ in 0..n {
            r.skip(poc_lsb_bits); // lt_ref_pic_poc_lsb_sps
            r.skip(1); // used_by_curr_pic_lt_sps_flag
        }
    }
    r.skip(2); // sps_temporal_mvp_enabled_flag, strong_intra_smoothing
    if r.overrun() {
        return None;
    }
    Some(if r.bit() { VuiHead::read(r) } else { VuiHead::default() })
}

/// Skips `scaling_list_data()` (§7.3.4).
fn skip_scaling_list_data(r: &mut BitReader<'_>) {
    for size_id in 0..4u32 {
        let step = if size_id == 3 { 3 } else { 1 };
        for _ in (0..6).step_by(step) {
            if !r.bit() {
                r.ue(); // scaling_list_pred_matrix_id_delta
                continue;
            }
            if size_id > 1 {
                r.se(); // scaling_list_dc_coef_minus8
            }
            let coefs = (1u32 << (4 + (size_id << 1))).min(64);
            for _ in 0..coefs {
                r.se(); // scaling_list_delta_coef
            }
            if r.overrun() {
                return;
            }
        }
    }
}

/// Skips `num_short_term_ref_pic_sets` and its `st_ref_pic_set()`s
/// (§7.3.7), each of which may be predicted from the one before it;
/// `None` when a count is out of range.
fn skip_short_term_sets(r: &mut BitReader<'_>) -> Option<()> {
    let sets = r.ue();
    if sets > MAX_SHORT_TERM_SETS {
        return None;
    }
    // NumDeltaPocs of the set before (§7.4.8).
    let mut before = 0u32;
    for i in 0..sets {
        // inter_ref_pic_set_prediction_flag, never in the first set.
        before = if i != 0 && r.bit() {
            r.skip(1); // delta_rps_sign
            r.ue(); // abs_delta_rps_minus1
            let mut kept = 0u32;
            for _ in 0..=before {
                // used_by_curr_pic_flag, else use_delta_flag.
                if r.bit() || r.bit() {
                    kept += 1;
                }
            }
            if kept > MAX_PREDICTED {
                return None;
            }
            kept
        } else {
            let negative = r.ue();
            let positive = r.ue();
            if negative >= MAX_REFS || positive >= MAX_REFS {
                return None;
            }
            for _ in 0..negative + positive {
                r.ue(); // delta_poc_s0/s1_minus1
                r.skip(1); // used_by_curr_pic_s0/s1_flag
            }
            negative + positive
        };
        if r.overrun() {
            return None;
        }
    }
    Some(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An SPS libx265 (through ffmpeg 5.1) wrote for 320x240 8-bit 4:2:0
    /// from full-range input with `setsar=4/3`: `aspect_ratio_idc` 14,
    /// `video_full_range_flag` 1 (ffprobe: `4:3`, `yuvj420p`, `pc`).
    const X265_SAR_4_3_FULL: [u8; 42] = [
        0x42, 0x01, 0x01, 0x01, 0x60, 0x00, 0x00, 0x03, 0x00, 0x90, 0x00, 0x00, 0x03, 0x00, 0x00, 0x03, 0x00, 0x3C,
        0xA0, 0x0A, 0x08, 0x0F, 0x16, 0x59, 0x59, 0xA4, 0x93, 0x2B, 0xC3, 0x9B, 0x02, 0x00, 0x00, 0x03, 0x00, 0x02,
        0x00, 0x00, 0x03, 0x00, 0x32, 0x10,
    ];

    /// libx265 with `scaling-list=default` and 4:4:4 full-range input with
    /// `setsar=64/45`: `scaling_list_enabled_flag` 1, `EXTENDED_SAR` 64:45,
    /// full range (ffprobe: `64:45`, `pc`).
    const X265_EXTENDED_SAR: [u8; 49] = [
        0x42, 0x01, 0x01, 0x04, 0x08, 0x00, 0x00, 0x03, 0x00, 0x9E, 0x08, 0x00, 0x00, 0x03, 0x00, 0x00, 0x3C, 0x90,
        0x01, 0x41, 0x01, 0xE2, 0xCB, 0x33, 0x15, 0x24, 0x9C, 0xAF, 0xFF, 0x00, 0x40, 0x00, 0x2D, 0x6E, 0x04, 0x04,
        0x00, 0x08, 0x00, 0x00, 0x03, 0x00, 0x08, 0x00, 0x00, 0x03, 0x00, 0xC8, 0x40,
    ];

    /// A 320x180 Main SPS with explicit `scaling_list_data()` and no video
    /// signal type (the `hvcC` of shaka-player's `h265-cea-init.mp4`;
    /// ffprobe: `1:1`, `tv`).
    const SCALING_LISTS_SAR_1_1: [u8; 89] = [
        0x42, 0x01, 0x01, 0x01, 0x60, 0x00, 0x00, 0x03, 0x00, 0xB0, 0x00, 0x00, 0x03, 0x00, 0x00, 0x03, 0x00, 0x5A,
        0xA0, 0x0A, 0x08, 0x0B, 0x9F, 0x79, 0x0D, 0x12, 0xE4, 0x21, 0x35, 0x55, 0x84, 0x3F, 0xFF, 0xFF, 0xFF, 0xFF,
        0xFF, 0xFF, 0xFF, 0x91, 0x88, 0x28, 0xD0, 0x87, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xF9, 0x18, 0x82,
        0x8D, 0x08, 0x7F, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x92, 0xBC, 0x04, 0x14, 0x00, 0x00, 0x0F, 0xA4,
        0x00, 0x01, 0xD4, 0xC3, 0xC1, 0x08, 0x20, 0x9C, 0x00, 0xC9, 0x20, 0x00, 0xC9, 0x2F, 0xF7, 0x18, 0x2D,
    ];

    #[test]
    fn vui_heads_of_encoder_parameter_sets() {
        let (sps, vui) = parse(&X265_SAR_4_3_FULL).unwrap();
        assert_eq!((sps.width, sps.height, sps.chroma_format), (320, 240, 1));
        assert_eq!((vui.sar, vui.full_range), (Some((4, 3)), Some(true)));
        let (sps, vui) = parse(&X265_EXTENDED_SAR).unwrap();
        assert_eq!(sps.chroma_format, 3);
        assert_eq!((vui.sar, vui.full_range), (Some((64, 45)), Some(true)));
        let (sps, vui) = parse(&SCALING_LISTS_SAR_1_1).unwrap();
        assert_eq!((sps.width, sps.height), (320, 180));
        assert_eq!((vui.sar, vui.full_range), (Some((1, 1)), None));
        // Cut inside the VUI head, or not an SPS: nothing.
        assert_eq!(parse(&X265_SAR_4_3_FULL[..30]), None);
        assert_eq!(parse(&[0x40, 0x01, 0x0C]), None);
    }

    #[test]
    fn short_term_sets_explicit_and_predicted() {
        // Two sets: the first explicit (one negative picture, used), the
        // second predicted from it (two entries: used; unused and
        // use_delta_flag 0, so dropped), then the bits 1010.
        // 011 | 010 1 1 1 | 1 0 1 1 0 0 | 1010
        let mut r = BitReader::new(&[0x6B, 0xD9, 0x40]);
        assert_eq!(skip_short_term_sets(&mut r), Some(()));
        assert_eq!(r.bits(4), 0b1010);
        assert!(!r.overrun());
        // 65 sets; a set of 16 negative pictures: out of range.
        assert_eq!(skip_short_term_sets(&mut BitReader::new(&[0x02, 0x10])), None);
        assert_eq!(skip_short_term_sets(&mut BitReader::new(&[0x41, 0x18])), None);
    }
}
