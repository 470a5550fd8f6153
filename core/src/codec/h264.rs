//! H.264 bitstream pieces: NAL unit types (ITU-T H.264 §7.4.1 Table 7-1),
//! the sequence parameter set (§7.3.2.1.1, with VUI timing §E.1.1) for
//! picture size and frame rate, and an access-unit splitter over Annex B
//! byte streams that draws the boundaries ffmpeg's `h264` parser draws.

use super::{bits::BitReader, vui::VuiHead};

/// NAL unit types of Table 7-1 used here.
pub mod nal {
    /// Coded slice of a non-IDR picture.
    pub const SLICE: u8 = 1;
    /// Coded slice data partition A.
    pub const DPA: u8 = 2;
    /// Coded slice of an IDR picture.
    pub const IDR: u8 = 5;
    /// Supplemental enhancement information.
    pub const SEI: u8 = 6;
    /// Sequence parameter set.
    pub const SPS: u8 = 7;
    /// Picture parameter set.
    pub const PPS: u8 = 8;
    /// Access unit delimiter.
    pub const AUD: u8 = 9;
}

/// What a sequence parameter set says about the pictures.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Sps {
    /// `profile_idc`.
    pub profile: u8,
    /// The byte after `profile_idc`: `constraint_set0_flag` in its top bit
    /// down to `constraint_set5_flag`.
    pub constraints: u8,
    /// `level_idc`.
    pub level: u8,
    /// `seq_parameter_set_id`.
    pub id: u32,
    /// `chroma_format_idc` (1 = 4:2:0).
    pub chroma_format: u32,
    /// Luma bit depth.
    pub bit_depth: u32,
    /// Width in pixels after cropping.
    pub width: u32,
    /// Height in pixels after cropping.
    pub height: u32,
    /// `frame_mbs_only_flag`.
    pub frame_mbs_only: bool,
    /// VUI `num_units_in_tick` and `time_scale`, when present.
    pub timing: Option<(u32, u32)>,
    /// VUI sample aspect ratio, when present.
    pub sar: Option<(u32, u32)>,
    /// VUI `video_full_range_flag`, when `video_signal_type_present_flag`
    /// is set.
    pub full_range: Option<bool>,
    /// VUI `max_num_reorder_frames` (§E.2.1), when the VUI has
    /// `bitstream_restriction_flag` and is read whole up to it (valid HRD
    /// parameters, the SPS not cut before it). ffmpeg's `has_b_frames`.
    pub max_num_reorder_frames: Option<u32>,
}

/// Most `cpb_cnt_minus1 + 1` of hrd_parameters() (§E.2.2: 0..=31).
const MAX_CPB_COUNT: u32 = 32;
/// Most `num_ref_frames_in_pic_order_cnt_cycle` (§7.4.2.1.1: 0..=255).
const MAX_POC_CYCLE: u32 = 255;

/// Skips a `scaling_list()` of `size` entries (H.264 §7.3.2.1.1.1).
pub(crate) fn skip_scaling_list(r: &mut BitReader<'_>, size: u32) {
    // §7.3.2.1.1.1
    let mut last = 8i32;
    let mut next = 8i32;
    for _ in 0..size {
        if next != 0 {
            let delta = r.se() as i64;
            next = (last as i64 + delta).rem_euclid(256) as i32;
        }
        if next != 0 {
            last = next;
        }
        if r.overrun() {
            return;
        }
    }
}

impl Sps {
    /// Parses an SPS NAL unit (`nal` starts at the NAL header byte), reading
    /// through emulation prevention bytes in place. `None` when it is not an
    /// SPS or is cut short.
    pub fn parse(nal: &[u8]) -> Option<Sps> {
        let (&h, rest) = nal.split_first()?;
        if h & 0x1F != nal::SPS {
            return None;
        }
        Sps::parse_payload(rest)
    }

    /// Parses the SPS after its NAL header byte (§7.3.2.1.1), as stored in
    /// an `avcC` record with the header byte skipped; the NAL unit type is
    /// not checked. `None` when it is cut short before the picture size or
    /// has an out-of-range `num_ref_frames_in_pic_order_cnt_cycle`.
    pub fn parse_payload(rbsp: &[u8]) -> Option<Sps> {
        let mut r = BitReader::rbsp(rbsp);
        let mut s = Sps {
            profile: r.bits(8) as u8,
            ..Sps::default()
        };
        s.constraints = r.bits(8) as u8;
        s.level = r.bits(8) as u8;
        s.id = r.ue();
        s.chroma_format = 1;
        s.bit_depth = 8;
        s.chroma_and_scaling(&mut r);
        r.ue(); // log2_max_frame_num_minus4
        match r.ue() {
            0 => {
                r.ue();
            }
            1 => {
                r.skip(1);
                r.se();
                r.se();
                let n = r.ue();
                if n > MAX_POC_CYCLE {
                    return None;
                }
                for _ in 0..n {
                    r.se();
                }
            }
            _ => {}
        }
        r.ue(); // max_num_ref_frames
        r.skip(1);
        s.picture_size(&mut r);
        if r.bit() {
            s.vui(&mut r);
        }
        if r.overrun() && s.width == 0 {
            return None;
        }
        Some(s)
    }

    /// The High profiles' chroma format, bit depth and scaling matrices.
    fn chroma_and_scaling(&mut self, r: &mut BitReader<'_>) {
        if !matches!(
            self.profile,
            100 | 110 | 122 | 244 | 44 | 83 | 86 | 118 | 128 | 138 | 139 | 134 | 135
        ) {
            return;
        }
        self.chroma_format = r.ue();
        if self.chroma_format == 3 {
            r.skip(1);
        }
        self.bit_depth = r.ue().saturating_add(8);
        r.ue();
        r.skip(1);
        if r.bit() {
            let n = if self.chroma_format == 3 { 12 } else { 8 };
            for i in 0..n {
                if r.bit() {
                    skip_scaling_list(r, if i < 6 { 16 } else { 64 });
                }
            }
        }
    }

    /// From `pic_width_in_mbs_minus1` through the frame cropping: the
    /// picture size after cropping.
    fn picture_size(&mut self, r: &mut BitReader<'_>) {
        let w_mbs = r.ue().saturating_add(1);
        let h_units = r.ue().saturating_add(1);
        self.frame_mbs_only = r.bit();
        if !self.frame_mbs_only {
            r.skip(1);
        }
        r.skip(1);
        let mut crop = [0u32; 4];
        if r.bit() {
            for c in crop.iter_mut() {
                *c = r.ue();
            }
        }
        let (sub_w, sub_h): (u32, u32) = match self.chroma_format {
            1 => (2, 2),
            2 => (2, 1),
            _ => (1, 1),
        };
        let fields = 2 - self.frame_mbs_only as u32;
        let (cx, cy): (u32, u32) = if self.chroma_format == 0 {
            (1, fields)
        } else {
            (sub_w, sub_h * fields)
        };
        let [left, right, top, bottom] = crop;
        let w = w_mbs.saturating_mul(16);
        let h = h_units.saturating_mul(16).saturating_mul(fields);
        self.width = w.saturating_sub(cx.saturating_mul(left.saturating_add(right)));
        self.height = h.saturating_sub(cy.saturating_mul(top.saturating_add(bottom)));
    }

    /// The VUI (§E.1.1): sample aspect ratio, video signal range, timing
    /// (`num_units_in_tick`, `time_scale`) and the reorder depth.
    fn vui(&mut self, r: &mut BitReader<'_>) {
        let head = VuiHead::read(r);
        self.sar = head.sar;
        self.full_range = head.full_range;
        if r.bit() {
            let (units, scale) = (r.bits(32), r.bits(32));
            if !r.overrun() && units > 0 && scale > 0 {
                self.timing = Some((units, scale));
            }
            r.skip(1); // fixed_frame_rate_flag
        }
        self.max_num_reorder_frames = vui_reorder(r).filter(|_| !r.overrun());
    }
}

/// The VUI after `fixed_frame_rate_flag` (§E.1.1) up to
/// `max_num_reorder_frames`; `None` without `bitstream_restriction_flag` or
/// with an HRD of more than [`MAX_CPB_COUNT`] CPBs.
fn vui_reorder(r: &mut BitReader<'_>) -> Option<u32> {
    let nal_hrd = r.bit();
    if nal_hrd {
        hrd(r)?;
    }
    let vcl_hrd = r.bit();
    if vcl_hrd {
        hrd(r)?;
    }
    if nal_hrd || vcl_hrd {
        r.skip(1); // low_delay_hrd_flag
    }
    r.skip(1); // pic_struct_present_flag
    if !r.bit() {
        return None; // no bitstream_restriction
    }
    r.skip(1); // motion_vectors_over_pic_boundaries_flag
    for _ in 0..4 {
        r.ue(); // max_bytes_per_pic_denom .. log2_max_mv_length_vertical
    }
    Some(r.ue())
}

/// Skips hrd_parameters() (§E.1.2); `None` when `cpb_cnt_minus1` is out of
/// range.
fn hrd(r: &mut BitReader<'_>) -> Option<()> {
    let count = r.ue().saturating_add(1);
    if count > MAX_CPB_COUNT {
        return None;
    }
    r.skip(8); // bit_rate_scale, cpb_size_scale
    for _ in 0..count {
        r.ue();
        r.ue();
        r.skip(1);
    }
    r.skip(20); // the four delay lengths and time_offset_length
    Some(())
}

/// Finds access-unit boundaries in an Annex B H.264 stream the way ffmpeg's
/// `h264` parser does (`h264_find_frame_end`): a new access unit starts at
/// an SEI, SPS, PPS or AUD NAL unit after a slice, or at a slice whose
/// `first_mb_in_slice` is not greater than the previous slice's. The
/// boundary is the first byte of that NAL unit's start code (a four-byte
/// start code's leading zero included).
///
/// Feed bytes in order with [`AuSplitter::feed`]; start a fresh splitter at
/// each access unit.
#[derive(Debug, Clone)]
pub struct AuSplitter {
    state: u8,
    frame_start_found: bool,
    last_mb: u32,
    history: [u8; 6],
    history_len: u8,
    sei_next: bool,
    idr_pending: bool,
    pending: Option<u64>,
    /// Whether a NAL unit that comes before slices (SEI, SPS, PPS, AUD) was
    /// seen in this access unit.
    pub has_prefix: bool,
    /// Whether an IDR slice was seen in the current access unit.
    pub idr: bool,
    /// Whether a recovery point SEI was seen in the current access unit.
    pub recovery_point: bool,
    /// Whether a slice was seen.
    pub has_slice: bool,
}

impl Default for AuSplitter {
    fn default() -> Self {
        AuSplitter {
            state: 7,
            frame_start_found: false,
            last_mb: 0,
            history: [0; 6],
            history_len: 0,
            sei_next: false,
            idr_pending: false,
            pending: None,
            has_prefix: false,
            idr: false,
            recovery_point: false,
            has_slice: false,
        }
    }
}

impl AuSplitter {
    /// Feeds `data`, which sits at absolute offset `base` of the stream.
    /// Returns the absolute offset where the next access unit starts, when
    /// found in these bytes (it may lie up to 11 bytes before `base`: a
    /// four-byte start code, the NAL header and a `first_mb_in_slice` of up
    /// to six bytes).
    pub fn feed(&mut self, data: &[u8], base: u64) -> Option<u64> {
        for (i, &b) in data.iter().enumerate() {
            let at = base + i as u64;
            if self.sei_next {
                self.sei_next = false;
                if b == 6 {
                    self.recovery_point = true;
                }
            }
            if self.state == 7 {
                if b == 0 {
                    self.state = 2;
                }
                // ffmpeg jumps to a candidate zero and then moves one past
                // it: a zero is counted as the first of the prefix.
                continue;
            }
            if self.state <= 2 {
                if b == 1 {
                    self.state ^= 5;
                    if self.state <= 5 {
                        self.pending = Some((at + 1).saturating_sub(3 + (self.state == 5) as u64));
                    }
                } else if b != 0 {
                    self.state = 7;
                } else {
                    self.state >>= 1;
                }
                continue;
            }
            if self.state <= 5 {
                let t = b & 0x1F;
                match t {
                    nal::SEI | nal::SPS | nal::PPS | nal::AUD => {
                        if self.frame_start_found {
                            // Boundary: the start code before this header.
                            return Some((at + 1).saturating_sub((self.state & 5) as u64));
                        }
                        self.has_prefix = true;
                        if t == nal::SEI {
                            self.sei_next = true;
                        }
                    }
                    nal::SLICE | nal::DPA | nal::IDR => {
                        if t == nal::IDR {
                            self.idr_pending = true;
                        }
                        self.state += 8;
                        continue;
                    }
                    _ => {}
                }
                self.pending = None;
                self.state = 7;
                continue;
            }
            // first_mb_in_slice, ue(v), from the bytes after the header
            // (emulation prevention bytes not removed, as in ffmpeg).
            if let Some(h) = self.history.get_mut(self.history_len as usize) {
                *h = b;
            }
            self.history_len += 1;
            let n = self.history_len as usize;
            let mut r = BitReader::new(self.history.get(..n).unwrap_or(&[]));
            let mb = r.ue();
            let left = !r.overrun() && r.position_bits() < (n as u64) * 8;
            if left || n > 5 {
                let last = self.last_mb;
                self.last_mb = mb;
                let idr = self.idr_pending;
                self.idr_pending = false;
                if self.frame_start_found {
                    if mb <= last {
                        let header = at + 1 - n as u64;
                        return Some(header.saturating_sub((self.state & 5) as u64));
                    }
                } else {
                    self.frame_start_found = true;
                }
                self.idr |= idr;
                self.has_slice = true;
                self.pending = None;
                self.history_len = 0;
                self.state = 7;
            }
        }
        None
    }
}

impl AuSplitter {
    /// At the end of the input: where a start code seen last, whose NAL
    /// unit the input cuts before the split could be decided, begins, when
    /// it follows a slice (so it may start the next access unit).
    pub fn unfinished(&self) -> Option<u64> {
        self.pending.filter(|_| self.frame_start_found)
    }

    /// At the end of the input: whether a NAL unit was cut before the
    /// splitter could classify it.
    pub fn cut_nal(&self) -> bool {
        self.pending.is_some()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A Baseline SPS NAL (profile 66, constraints 0xC0, level 30) whose
    /// bits after level_idc are `bits` ('0'/'1', spaces ignored).
    fn baseline_sps(bits: &str) -> [u8; 12] {
        let mut nal = [0u8; 12];
        nal[..4].copy_from_slice(&[0x67, 66, 0xC0, 30]);
        for (n, c) in bits.chars().filter(|c| *c != ' ').enumerate() {
            if c == '1' {
                nal[4 + n / 8] |= 0x80 >> (n % 8);
            }
        }
        nal
    }

    #[test]
    fn sps_dimensions() {
        // Baseline 176x144 (11x9 macroblocks), frame_mbs_only, no VUI.
        // profile 66, constraints 0xC0, level 30, sps_id 0 (1),
        // log2_max_frame_num-4 = 0 (1), poc_type 0 (1), log2_max_poc-4 = 0 (1),
        // max_ref 1 (010), gaps 0, w-1 = 10 (0001011), h-1 = 8 (0001001),
        // frame_mbs_only 1, direct8x8 1, crop 0, vui 0.
        let bits = "1 1 1 1 010 0 0001011 0001001 1 1 0 0 1";
        let nal = baseline_sps(bits);
        let s = Sps::parse(&nal).unwrap();
        assert_eq!((s.width, s.height, s.profile, s.level), (176, 144, 66, 30));
        assert_eq!(s.max_num_reorder_frames, None);
    }

    #[test]
    fn sps_reorder_depth_from_bitstream_restriction() {
        // As sps_dimensions, with a VUI: nothing but bitstream_restriction
        // (motion vectors 1, four ue(0), max_num_reorder_frames 2,
        // max_dec_frame_buffering 2), then the stop bit.
        let bits = "1 1 1 1 010 0 0001011 0001001 1 1 0 1 00000 00 0 1 1 1111 011 011 1";
        let nal = baseline_sps(bits);
        let s = Sps::parse(&nal).unwrap();
        assert_eq!((s.width, s.height), (176, 144));
        assert_eq!(s.max_num_reorder_frames, Some(2));
        assert_eq!(Sps::parse_payload(&nal[1..]), Some(s));
    }

    #[test]
    fn hostile_scaling_list_does_not_overflow() {
        // High profile, scaling matrix present, a delta_scale of 39 leading
        // zeros (found by the mutation test).
        let nal = [0x67, 100, 0, 0, 0b1010_1101, 0b1000_0000, 0, 0, 0, 0, 0x80];
        let _ = Sps::parse(&nal);
    }

    #[test]
    fn splits_access_units() {
        // SPS, PPS, IDR(mb 0), slice(mb 0), slice(mb 5), AUD, slice(mb 0)
        let d = [
            0,
            0,
            0,
            1,
            0x67,
            9,
            0,
            0,
            1,
            0x68,
            9,
            0,
            0,
            1,
            0x65,
            0x80,
            9,
            0,
            0,
            1,
            0x41,
            0x80,
            9,
            0,
            0,
            1,
            0x41,
            0b0001_1000,
            9,
            0,
            0,
            0,
            1,
            0x09,
            0xF0,
            0,
            0,
            1,
            0x41,
            0x80,
        ];
        let mut s = AuSplitter::default();
        let b1 = s.feed(&d, 0).unwrap();
        assert_eq!(b1, 17);
        assert!(s.idr);
        let mut s = AuSplitter::default();
        let b2 = s.feed(&d[b1 as usize..], b1).unwrap();
        assert_eq!(b2, 29);
        let mut s = AuSplitter::default();
        assert_eq!(s.feed(&d[b2 as usize..], b2), None);
    }
}
