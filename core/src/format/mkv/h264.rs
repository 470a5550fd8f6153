//! The H.264 reorder depth from an `avcC` record (ISO/IEC 14496-15 §5.3.3)
//! and its first sequence parameter set (ITU-T H.264 §7.3.2.1.1, VUI
//! §E.1.1): `max_num_reorder_frames`, which ffmpeg uses as `has_b_frames`
//! to derive the decoding timestamps that Matroska does not store.

use crate::source::Source;
use crate::types::ByteRange;

/// Most bytes of the `avcC` record read (its first SPS must fit).
const MAX_AVCC: usize = 512;
/// ffmpeg's `MAX_REORDER_DELAY`: deeper reordering is not followed.
pub(super) const MAX_REORDER: usize = 16;

/// A reader of bits, MSB first, with Exp-Golomb codes (H.264 §9.1). Reads
/// past the end give `None`.
struct Bits<'a> {
    b: &'a [u8],
    pos: usize,
}

impl Bits<'_> {
    fn u(&mut self, n: u32) -> Option<u32> {
        let mut v = 0u32;
        for _ in 0..n {
            let byte = *self.b.get(self.pos / 8)?;
            v = (v << 1) | ((byte >> (7 - self.pos % 8)) & 1) as u32;
            self.pos += 1;
        }
        Some(v)
    }

    fn flag(&mut self) -> Option<bool> {
        Some(self.u(1)? == 1)
    }

    fn ue(&mut self) -> Option<u32> {
        let mut zeros = 0;
        while self.u(1)? == 0 {
            zeros += 1;
            if zeros > 31 {
                return None;
            }
        }
        Some(((1u64 << zeros) - 1 + self.u(zeros)? as u64).min(u32::MAX as u64) as u32)
    }

    fn se(&mut self) -> Option<i32> {
        let k = self.ue()?;
        Some(if k & 1 == 1 {
            k.div_ceil(2) as i32
        } else {
            -((k / 2) as i32)
        })
    }
}

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
    // Drop emulation prevention bytes (00 00 03, H.264 §7.4.1) in place
    // into a second buffer, skipping the NAL header byte.
    let mut rbsp = [0u8; MAX_AVCC];
    let mut out = 0;
    let mut zeros = 0;
    for &x in nal.get(1..)? {
        if zeros >= 2 && x == 3 {
            zeros = 0;
            continue;
        }
        *rbsp.get_mut(out)? = x;
        out += 1;
        zeros = if x == 0 { zeros + 1 } else { 0 };
    }
    let depth = parse_sps(&mut Bits {
        b: rbsp.get(..out)?,
        pos: 0,
    })?;
    (depth as usize <= MAX_REORDER).then_some(depth as u8)
}

/// Walks an SPS (H.264 §7.3.2.1.1) to its VUI (§E.1.1) and returns
/// `max_num_reorder_frames`.
fn parse_sps(r: &mut Bits) -> Option<u32> {
    let profile = r.u(8)?;
    r.u(16)?; // constraint flags, level_idc
    r.ue()?; // seq_parameter_set_id
    if matches!(
        profile,
        100 | 110 | 122 | 244 | 44 | 83 | 86 | 118 | 128 | 138 | 139 | 134 | 135
    ) {
        let chroma = r.ue()?;
        if chroma == 3 {
            r.u(1)?;
        }
        r.ue()?;
        r.ue()?;
        r.u(1)?;
        if r.flag()? {
            for i in 0..if chroma == 3 { 12 } else { 8 } {
                if r.flag()? {
                    // scaling_list(): delta_scale until next_scale is 0.
                    let (mut last, mut next) = (8i32, 8i32);
                    for _ in 0..if i < 6 { 16 } else { 64 } {
                        if next != 0 {
                            next = (last + r.se()? + 256) % 256;
                        }
                        if next != 0 {
                            last = next;
                        }
                    }
                }
            }
        }
    }
    r.ue()?; // log2_max_frame_num_minus4
    match r.ue()? {
        0 => {
            r.ue()?;
        }
        1 => {
            r.u(1)?;
            r.se()?;
            r.se()?;
            let cycle = r.ue()?;
            if cycle > 255 {
                return None;
            }
            for _ in 0..cycle {
                r.se()?;
            }
        }
        _ => {}
    }
    r.ue()?; // max_num_ref_frames
    r.u(1)?;
    r.ue()?;
    r.ue()?;
    if !r.flag()? {
        r.u(1)?; // mb_adaptive_frame_field_flag
    }
    r.u(1)?;
    if r.flag()? {
        for _ in 0..4 {
            r.ue()?;
        }
    }
    if !r.flag()? {
        return None; // no VUI
    }
    if r.flag()? && r.u(8)? == 255 {
        r.u(32)?;
    }
    if r.flag()? {
        r.u(1)?;
    }
    if r.flag()? {
        r.u(4)?;
        if r.flag()? {
            r.u(24)?;
        }
    }
    if r.flag()? {
        r.ue()?;
        r.ue()?;
    }
    if r.flag()? {
        r.u(32)?;
        r.u(32)?;
        r.u(1)?;
    }
    let nal_hrd = r.flag()?;
    if nal_hrd {
        hrd(r)?;
    }
    let vcl_hrd = r.flag()?;
    if vcl_hrd {
        hrd(r)?;
    }
    if nal_hrd || vcl_hrd {
        r.u(1)?;
    }
    r.u(1)?; // pic_struct_present_flag
    if !r.flag()? {
        return None; // no bitstream_restriction
    }
    r.u(1)?;
    for _ in 0..4 {
        r.ue()?;
    }
    r.ue() // max_num_reorder_frames
}

/// hrd_parameters() (H.264 §E.1.2).
fn hrd(r: &mut Bits) -> Option<()> {
    let count = r.ue()? + 1;
    if count > 32 {
        return None;
    }
    r.u(8)?;
    for _ in 0..count {
        r.ue()?;
        r.ue()?;
        r.u(1)?;
    }
    r.u(20)?;
    Some(())
}
