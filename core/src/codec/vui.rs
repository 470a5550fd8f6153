//! The head of the video usability information that H.264 and H.265 share:
//! H.264 §E.1.1 and H.265 §E.2.1 have the same syntax from
//! `aspect_ratio_info_present_flag` through `chroma_loc_info_present_flag`
//! (sample aspect ratio of Table E-1, overscan, video signal type, chroma
//! sample location). Each codec reads its own fields after it.

use super::bits::BitReader;

/// `aspect_ratio_idc` that announces an explicit `sar_width`/`sar_height`
/// (Table E-1, `EXTENDED_SAR`).
const EXTENDED_SAR: u32 = 255;

/// Sample aspect ratios of `aspect_ratio_idc` 0..=16 (Table E-1, the same
/// in both standards; 0 is "unspecified").
const SAR: [(u32, u32); 17] = [
    (0, 1),
    (1, 1),
    (12, 11),
    (10, 11),
    (16, 11),
    (40, 33),
    (24, 11),
    (20, 11),
    (32, 11),
    (80, 33),
    (18, 11),
    (15, 11),
    (64, 33),
    (160, 99),
    (4, 3),
    (3, 2),
    (2, 1),
];

/// What the shared head of the VUI states.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct VuiHead {
    /// The sample aspect ratio as stated (zeros included), when
    /// `aspect_ratio_info_present_flag` is set and `aspect_ratio_idc` is in
    /// Table E-1 or is `EXTENDED_SAR`.
    pub sar: Option<(u32, u32)>,
    /// `video_full_range_flag`, when `video_signal_type_present_flag` is
    /// set.
    pub full_range: Option<bool>,
}

impl VuiHead {
    /// Reads from `aspect_ratio_info_present_flag` through the chroma
    /// sample location, leaving `r` at the next field (H.264's
    /// `timing_info_present_flag`, H.265's `neutral_chroma_indication_flag`).
    pub fn read(r: &mut BitReader<'_>) -> VuiHead {
        let mut v = VuiHead::default();
        if r.bit() {
            let idc = r.bits(8);
            v.sar = if idc == EXTENDED_SAR {
                Some((r.bits(16), r.bits(16)))
            } else {
                SAR.get(idc as usize).copied()
            };
        }
        if r.bit() {
            r.skip(1); // overscan_appropriate_flag
        }
        if r.bit() {
            r.skip(3); // video_format
            v.full_range = Some(r.bit());
            if r.bit() {
                r.skip(24); // colour_primaries, transfer, matrix
            }
        }
        if r.bit() {
            r.ue(); // chroma_sample_loc_type_top_field
            r.ue(); // chroma_sample_loc_type_bottom_field
        }
        v
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn table_and_extended_sar_and_range() {
        // aspect present, idc 14 (4:3); no overscan; signal type: format 5,
        // full range 1, no colour description; no chroma location.
        // 1 00001110 0 1 101 1 0 0
        let mut r = BitReader::new(&[0x87, 0x36, 0x00]);
        let v = VuiHead::read(&mut r);
        assert_eq!(v.sar, Some((4, 3)));
        assert_eq!(v.full_range, Some(true));
        assert!(!r.overrun());
        // idc 255, 64:45; no overscan; signal type with full range 0.
        // 1 11111111 0000000001000000 0000000000101101 0 1 101 0 0 0
        let mut r = BitReader::new(&[0xFF, 0x80, 0x20, 0x00, 0x16, 0xB4, 0x00]);
        let v = VuiHead::read(&mut r);
        assert_eq!(v.sar, Some((64, 45)));
        assert_eq!(v.full_range, Some(false));
        // No aspect, no signal type: nothing stated; idc 17 is reserved
        // (1 00010001 0).
        assert_eq!(VuiHead::read(&mut BitReader::new(&[0x00])), VuiHead::default());
        assert_eq!(VuiHead::read(&mut BitReader::new(&[0x88, 0x80])).sar, None);
    }
}
