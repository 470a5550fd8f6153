//! The HEVC decoder configuration record (`hvcC`, ISO/IEC 14496-15
//! §8.3.3.1): built from in-band VPS/SPS/PPS (and SEI) NAL units, byte for
//! byte as ffmpeg's `ff_isom_write_hvcc` writes it for an `hev1` track, and
//! read back for the NAL units it holds.
//!
//! The general profile, tier, compatibility and constraint flags and level
//! come from the `profile_tier_level` (ITU-T H.265 §7.3.3) of every VPS and
//! SPS, merged as ffmpeg merges them (highest tier, profile and level; the
//! flags all sets agree on). `min_spatial_segmentation_idc` comes from the
//! SPS VUI (§E.2.1), so the SPS is walked up to it: ffmpeg's walk, in
//! `crate::codec::hevc` terms, goes much further than its `Sps` parser,
//! which is why it lives here.

use super::avcc::ParameterSets;
use super::to_length::AnnexBNalUnits;
use super::{put_nal, LengthSize};
use crate::codec::bits::BitReader;
use crate::error::{Error, ErrorKind, Result};
use crate::sink::{Sink, SliceSink};

const VPS: u8 = 32;
const SPS: u8 = 33;
const PPS: u8 = 34;
const SEI_PREFIX: u8 = 39;
const SEI_SUFFIX: u8 = 40;
/// ffmpeg's `MAX_SPATIAL_SEGMENTATION`: the largest `u(12)`.
const MAX_SPATIAL_SEGMENTATION: u32 = 4096;
/// `MAX_SHORT_TERM_RPS_COUNT` (H.265 §7.4.3.2.1: at most 64).
const MAX_SHORT_TERM_RPS: usize = 64;

fn nal_type(nal: &[u8]) -> Option<u8> {
    nal.first().map(|h| (h >> 1) & 0x3F)
}

/// The record's fields, as ffmpeg's `HEVCDecoderConfigurationRecord`.
#[derive(Debug, Clone, Copy)]
struct Fields {
    profile_space: u8,
    tier: u8,
    profile_idc: u8,
    compatibility: u32,
    constraints: u64,
    level: u8,
    min_spatial_segmentation: u32,
    parallelism: u8,
    chroma_format: u8,
    luma_depth_minus8: u8,
    chroma_depth_minus8: u8,
    temporal_layers: u8,
    temporal_id_nested: u8,
}

impl Fields {
    /// ffmpeg's `hvcc_init`: flags all set, to be narrowed.
    const fn new() -> Self {
        Fields {
            profile_space: 0,
            tier: 0,
            profile_idc: 0,
            compatibility: u32::MAX,
            constraints: 0xFFFF_FFFF_FFFF,
            level: 0,
            min_spatial_segmentation: MAX_SPATIAL_SEGMENTATION + 1,
            parallelism: 0,
            chroma_format: 0,
            luma_depth_minus8: 0,
            chroma_depth_minus8: 0,
            temporal_layers: 0,
            temporal_id_nested: 0,
        }
    }

    /// `profile_tier_level(1, max_sub_layers_minus1)` (H.265 §7.3.3): the
    /// general part merged in, the sub-layer parts skipped.
    fn profile_tier_level(&mut self, r: &mut BitReader<'_>, max_sub_layers_minus1: u32) {
        let space = r.bits(2) as u8;
        let tier = r.bits(1) as u8;
        let idc = r.bits(5) as u8;
        let compat = (r.bits(16) << 16) | r.bits(16);
        let constraints = (u64::from(r.bits(16)) << 32) | (u64::from(r.bits(16)) << 16) | u64::from(r.bits(16));
        let level = r.bits(8) as u8;
        self.profile_space = space;
        self.level = if self.tier < tier { level } else { self.level.max(level) };
        self.tier = self.tier.max(tier);
        self.profile_idc = self.profile_idc.max(idc);
        self.compatibility &= compat;
        self.constraints &= constraints;
        let mut present = [(false, false); 8];
        for p in present.iter_mut().take(max_sub_layers_minus1 as usize) {
            *p = (r.bit(), r.bit());
        }
        if max_sub_layers_minus1 > 0 {
            r.skip(2 * (8 - max_sub_layers_minus1)); // reserved_zero_2bits
        }
        for &(profile, level) in present.iter().take(max_sub_layers_minus1 as usize) {
            if profile {
                r.skip(88);
            }
            if level {
                r.skip(8);
            }
        }
    }

    /// `video_parameter_set_rbsp` up to its `profile_tier_level`
    /// (H.265 §7.3.2.1).
    fn vps(&mut self, r: &mut BitReader<'_>) {
        r.skip(12);
        let max_sub = r.bits(3);
        self.temporal_layers = self.temporal_layers.max(max_sub as u8 + 1);
        r.skip(17);
        self.profile_tier_level(r, max_sub);
    }

    /// `pic_parameter_set_rbsp` up to `entropy_coding_sync_enabled_flag`
    /// (H.265 §7.3.2.3.1).
    fn pps(&mut self, r: &mut BitReader<'_>) {
        r.ue();
        r.ue();
        r.skip(7);
        r.ue();
        r.ue();
        r.se();
        r.skip(2);
        if r.bit() {
            r.ue();
        }
        r.se();
        r.se();
        r.skip(4);
        let tiles = r.bit();
        let wavefront = r.bit();
        self.parallelism = match (tiles, wavefront) {
            (true, true) => 0,
            (false, true) => 3,
            (true, false) => 2,
            (false, false) => 1,
        };
    }
}

/// `seq_parameter_set_rbsp` up to the VUI (H.265 §7.3.2.2.1), as ffmpeg's
/// `hvcc_parse_sps`.
fn sps(f: &mut Fields, r: &mut BitReader<'_>, nal_len: usize) -> Result<()> {
    r.skip(4);
    let max_sub = r.bits(3);
    f.temporal_layers = f.temporal_layers.max(max_sub as u8 + 1);
    f.temporal_id_nested = r.bits(1) as u8;
    f.profile_tier_level(r, max_sub);
    r.ue();
    let chroma = r.ue();
    if chroma == 3 {
        r.skip(1);
    }
    r.ue();
    r.ue();
    if r.bit() {
        for _ in 0..4 {
            r.ue();
        }
    }
    let (luma, chroma_depth) = (r.ue(), r.ue());
    if chroma > 3 || luma > 8 || chroma_depth > 8 {
        return Err(Error::malformed(
            0,
            &"hvcC: SPS chroma_format_idc or bit depth out of range (ITU-T H.265 7.4.3.2.1)",
        ));
    }
    (f.chroma_format, f.luma_depth_minus8, f.chroma_depth_minus8) = (chroma as u8, luma as u8, chroma_depth as u8);
    let log2_max_poc_lsb_minus4 = r.ue();
    let first = if r.bit() { 0 } else { max_sub };
    for _ in first..=max_sub {
        r.ue();
        r.ue();
        r.ue();
    }
    for _ in 0..6 {
        r.ue();
    }
    if r.bit() && r.bit() {
        skip_scaling_list_data(r);
    }
    r.skip(2);
    if r.bit() {
        r.skip(8);
        r.ue();
        r.ue();
        r.skip(1);
    }
    short_term_ref_pic_sets(r, nal_len)?;
    if r.bit() {
        let n = r.ue();
        if n > 31 {
            return Err(Error::malformed(
                0,
                &"hvcC: SPS num_long_term_ref_pics_sps over 32 (ITU-T H.265 7.4.3.2.1)",
            ));
        }
        for _ in 0..n {
            r.skip(log2_max_poc_lsb_minus4.saturating_add(4).min(16));
            r.skip(1);
        }
    }
    r.skip(2);
    if r.bit() {
        vui(f, r, max_sub);
    }
    Ok(())
}

/// `scaling_list_data()` (H.265 §7.3.4), skipped.
fn skip_scaling_list_data(r: &mut BitReader<'_>) {
    for size in 0..4u32 {
        for _ in 0..(if size == 3 { 2 } else { 6 }) {
            if !r.bit() {
                r.ue();
            } else {
                if size > 1 {
                    r.se();
                }
                for _ in 0..(1u32 << (4 + 2 * size)).min(64) {
                    r.se();
                }
            }
            if r.overrun() {
                return;
            }
        }
    }
}

/// The SPS's `st_ref_pic_set(i)` list (H.265 §7.3.7), skipped.
fn short_term_ref_pic_sets(r: &mut BitReader<'_>, nal_len: usize) -> Result<()> {
    let bad = |what| Err(Error::malformed(0, what));
    let count = r.ue() as usize;
    if count > MAX_SHORT_TERM_RPS {
        return bad(&"hvcC: SPS num_short_term_ref_pic_sets over 64 (ITU-T H.265 7.4.3.2.1)");
    }
    let mut delta_pocs = [0u32; MAX_SHORT_TERM_RPS];
    for i in 0..count {
        let n = if i > 0 && r.bit() {
            // inter_ref_pic_set_prediction_flag
            r.skip(1);
            r.ue();
            let prev = delta_pocs.get(i - 1).copied().unwrap_or(0);
            let mut n = 0u32;
            for _ in 0..=prev {
                let used = r.bit();
                if used || r.bit() {
                    n += 1;
                }
            }
            n
        } else {
            let (neg, pos) = (u64::from(r.ue()), u64::from(r.ue()));
            if (neg + pos) * 2 > nal_len as u64 * 8 {
                return bad(&"hvcC: SPS st_ref_pic_set larger than the SPS (ITU-T H.265 7.3.7)");
            }
            for _ in 0..neg + pos {
                r.ue();
                r.skip(1);
            }
            (neg + pos) as u32
        };
        if let Some(d) = delta_pocs.get_mut(i) {
            *d = n;
        }
        if r.overrun() {
            return Err(Error::truncated(0, &"hvcC: SPS cut short (ITU-T H.265 7.3.2.2.1)"));
        }
    }
    Ok(())
}

/// `vui_parameters()` (H.265 §E.2.1) up to `min_spatial_segmentation_idc`.
fn vui(f: &mut Fields, r: &mut BitReader<'_>, max_sub: u32) {
    if r.bit() && r.bits(8) == 255 {
        r.skip(32);
    }
    if r.bit() {
        r.skip(1);
    }
    if r.bit() {
        r.skip(4);
        if r.bit() {
            r.skip(24);
        }
    }
    if r.bit() {
        r.ue();
        r.ue();
    }
    r.skip(3);
    if r.bit() {
        for _ in 0..4 {
            r.ue();
        }
    }
    if r.bit() {
        r.skip(64);
        if r.bit() {
            r.ue();
        }
        if r.bit() {
            skip_hrd_parameters(r, max_sub);
        }
    }
    if r.bit() {
        r.skip(3);
        f.min_spatial_segmentation = f.min_spatial_segmentation.min(r.ue());
        for _ in 0..4 {
            r.ue();
        }
    }
}

/// `hrd_parameters(1, max_sub_layers_minus1)` (H.265 §E.2.2), skipped; it
/// stops early on a `cpb_cnt_minus1` over 31, as ffmpeg's does (and the VUI
/// walk then goes on from there, as ffmpeg's does).
fn skip_hrd_parameters(r: &mut BitReader<'_>, max_sub: u32) {
    let (nal, vcl) = (r.bit(), r.bit());
    let mut sub_pic = false;
    if nal || vcl {
        sub_pic = r.bit();
        if sub_pic {
            r.skip(19);
        }
        r.skip(8);
        if sub_pic {
            r.skip(4);
        }
        r.skip(15);
    }
    for _ in 0..=max_sub {
        let general = r.bit();
        // ffmpeg reads fixed_pic_rate_within_cvs_flag only when the general
        // flag is 0, and otherwise takes it as 0 (the spec infers 1).
        let within = !general && r.bit();
        let low_delay = if within {
            r.ue();
            false
        } else {
            r.bit()
        };
        let mut cpb = 0;
        if !low_delay {
            cpb = r.ue();
            if cpb > 31 {
                return;
            }
        }
        for _ in 0..(u32::from(nal) + u32::from(vcl)) {
            for _ in 0..=cpb {
                r.ue();
                r.ue();
                if sub_pic {
                    r.ue();
                    r.ue();
                }
                r.skip(1);
            }
        }
        if r.overrun() {
            return;
        }
    }
}

/// Parses one parameter set into `f` (after its two-byte header, through
/// emulation prevention bytes).
fn parse_into(f: &mut Fields, t: u8, nal: &[u8]) -> Result<()> {
    let mut r = BitReader::rbsp(nal.get(2..).unwrap_or(&[]));
    match t {
        VPS => f.vps(&mut r),
        SPS => sps(f, &mut r, nal.len())?,
        PPS => f.pps(&mut r),
        _ => return Ok(()),
    }
    if r.overrun() {
        return Err(Error::truncated(
            0,
            &"hvcC: a parameter set cut short (ITU-T H.265 7.3.2)",
        ));
    }
    Ok(())
}

/// Writes the `hvcC` payload (without the box header) for the parameter
/// sets among `nals` into `out`, and returns its length; this is ffmpeg's
/// `ff_isom_write_hvcc`. `array_completeness` is set on the VPS, SPS and
/// PPS arrays when `complete` is (ffmpeg sets it for an `hvc1` sample
/// entry, whose parameter sets are all in the record, ISO/IEC 14496-15
/// §8.4.1.1, and clears it for `hev1`, its default). One array per NAL unit type among VPS, SPS, PPS and
/// prefix/suffix SEI, in the order each type first appears, each holding
/// that type's NAL units in order; the general profile fields merged from
/// every VPS and SPS; chroma format, bit depths and `temporalIdNested` from
/// the last SPS; `parallelismType` from the last PPS (0 when no
/// `min_spatial_segmentation_idc` was found); `avgFrameRate` and
/// `constantFrameRate` 0; `lengthSizeMinusOne` 3. Other NAL units are
/// ignored.
///
/// Errors: `InvalidArgument` when a VPS, SPS or PPS is missing or there are
/// more than 16 VPS, 16 SPS or 64 PPS; `Malformed`/`Truncated` for a
/// parameter set that does not parse; `Unsupported` for one over 65535
/// bytes; `SinkFull` when `out` is too small (it then holds part of a record).
pub fn write_hvcc<'n, I>(nals: I, complete: bool, out: &mut [u8]) -> Result<usize>
where
    I: Iterator<Item = &'n [u8]> + Clone,
{
    let mut f = Fields::new();
    let mut order = [0u8; 5];
    let mut arrays = 0usize;
    let mut counts = [0usize; 3];
    for nal in nals.clone() {
        let Some(t @ (VPS | SPS | PPS | SEI_PREFIX | SEI_SUFFIX)) = nal_type(nal) else {
            continue;
        };
        if !order.iter().take(arrays).any(|&o| o == t) {
            if let Some(slot) = order.get_mut(arrays) {
                *slot = t;
                arrays += 1;
            }
        }
        if let Some(c) = counts.get_mut(usize::from(t.wrapping_sub(VPS))) {
            *c += 1;
        }
        parse_into(&mut f, t, nal)?;
    }
    let [vps_n, sps_n, pps_n] = counts;
    if !(1..=16).contains(&vps_n) || !(1..=16).contains(&sps_n) || !(1..=64).contains(&pps_n) {
        return Err(Error::new(
            ErrorKind::InvalidArgument,
            0,
            &"hvcC: a VPS, SPS or PPS missing, or too many (ISO/IEC 14496-15 8.3.3.1)",
        ));
    }
    if f.min_spatial_segmentation > MAX_SPATIAL_SEGMENTATION {
        f.min_spatial_segmentation = 0;
    }
    if f.min_spatial_segmentation == 0 {
        f.parallelism = 0;
    }
    let mut w = SliceSink::new(out);
    let [_, _, c0, c1, c2, c3, c4, c5] = f.constraints.to_be_bytes();
    let [s0, s1] = (0xF000 | f.min_spatial_segmentation as u16).to_be_bytes();
    w.write_all(&[1, f.profile_space << 6 | f.tier << 5 | f.profile_idc])?;
    w.write_all(&f.compatibility.to_be_bytes())?;
    w.write_all(&[c0, c1, c2, c3, c4, c5, f.level, s0, s1, 0xFC | f.parallelism])?;
    w.write_all(&[
        0xFC | f.chroma_format,
        0xF8 | f.luma_depth_minus8,
        0xF8 | f.chroma_depth_minus8,
        0,
        0,
    ])?;
    // numTemporalLayers is 3 bits, but a stream with 8 sub-layers makes it
    // 8, which ffmpeg shifts in unmasked: so is it here.
    w.write_all(&[
        f.temporal_layers << 3 | (f.temporal_id_nested & 1) << 2 | 3,
        arrays as u8,
    ])?;
    for &t in order.iter().take(arrays) {
        let of_type = nals.clone().filter(|n| nal_type(n) == Some(t));
        let n = of_type.clone().count();
        let n16 = u16::try_from(n).unwrap_or(u16::MAX);
        let [n0, n1] = n16.to_be_bytes();
        let completeness = if complete && matches!(t, VPS | SPS | PPS) {
            0x80
        } else {
            0
        };
        w.write_all(&[completeness | t & 0x3F, n0, n1])?;
        for nal in of_type.take(usize::from(n16)) {
            put_nal(&mut w, nal)?;
        }
    }
    Ok(w.written().len())
}

/// [`write_hvcc`] over the VPS, SPS and PPS among the NAL units of an
/// Annex B byte range (an access unit), leaving SEI out: what ffmpeg
/// writes for a raw HEVC stream, whose `extract_extradata` filter keeps
/// only the parameter sets of the first access unit.
///
/// Errors: as [`write_hvcc`].
pub fn write_hvcc_from_annexb(annexb: &[u8], complete: bool, out: &mut [u8]) -> Result<usize> {
    let sets = AnnexBNalUnits::new(annexb).filter(|n| matches!(nal_type(n), Some(VPS | SPS | PPS)));
    write_hvcc(sets, complete, out)
}

/// Bytes before the arrays of an `hvcC` payload.
const HVCC_FIXED: usize = 23;

/// A parsed `hvcC` payload: its length size and NAL unit arrays, borrowed.
#[derive(Debug, Clone, Copy)]
pub struct HevcConfig<'a> {
    /// `lengthSizeMinusOne + 1`.
    pub length_size: LengthSize,
    /// `general_profile_idc`.
    pub profile_idc: u8,
    /// `general_level_idc`.
    pub level: u8,
    arrays: &'a [u8],
    count: usize,
}

impl<'a> HevcConfig<'a> {
    /// Parses an `hvcC` payload (ISO/IEC 14496-15 §8.3.3.1.1), checking
    /// that every NAL unit lies within it.
    ///
    /// Errors: `Truncated` when the record is cut short, `Malformed` for a
    /// version other than 1 or a 3-byte length size.
    pub fn parse(record: &'a [u8]) -> Result<Self> {
        let (fixed, arrays) = record.split_at_checked(HVCC_FIXED).ok_or(Error::truncated(
            0,
            &"hvcC: shorter than its fixed fields (ISO/IEC 14496-15 8.3.3.1.1)",
        ))?;
        let [version, ptl, .., level, _, _, _, _, _, _, _, _, size, count] = *fixed else {
            return Err(Error::truncated(0, &"hvcC: fixed fields"));
        };
        if version != 1 {
            return Err(Error::malformed(
                0,
                &"hvcC: configurationVersion is not 1 (ISO/IEC 14496-15 8.3.3.1.2)",
            ));
        }
        let length_size = LengthSize::from_minus_one(size)?;
        let mut rest = arrays;
        for _ in 0..count {
            let [_, a, b, ref tail @ ..] = *rest else {
                return Err(Error::truncated(
                    (record.len() - rest.len()) as u64,
                    &"hvcC: an array header reaches past the record (ISO/IEC 14496-15 8.3.3.1.1)",
                ));
            };
            let at = record.len() - tail.len();
            rest = ParameterSets::split(tail, usize::from(u16::from_be_bytes([a, b])), at)?.1;
        }
        Ok(HevcConfig {
            length_size,
            profile_idc: ptl & 0x1F,
            level,
            arrays,
            count: usize::from(count),
        })
    }

    /// Every NAL unit of every array, in record order.
    pub fn nal_units(&self) -> HevcConfigNalUnits<'a> {
        HevcConfigNalUnits {
            rest: self.arrays,
            arrays_left: self.count,
            current: None,
        }
    }
}

/// The NAL units of an [`HevcConfig`], array after array.
#[derive(Debug, Clone)]
pub struct HevcConfigNalUnits<'a> {
    rest: &'a [u8],
    arrays_left: usize,
    current: Option<ParameterSets<'a>>,
}

impl<'a> Iterator for HevcConfigNalUnits<'a> {
    type Item = &'a [u8];

    fn next(&mut self) -> Option<&'a [u8]> {
        loop {
            if let Some(nal) = self.current.as_mut().and_then(Iterator::next) {
                return Some(nal);
            }
            if self.arrays_left == 0 {
                return None;
            }
            self.arrays_left -= 1;
            let [_, a, b, ref tail @ ..] = *self.rest else {
                return None;
            };
            let (sets, rest) = ParameterSets::split(tail, usize::from(u16::from_be_bytes([a, b])), 0).ok()?;
            self.current = Some(sets);
            self.rest = rest;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    extern crate std;
    use std::vec::Vec;

    /// The hvcC ffmpeg 5.1 writes for `corpus/files/h265/main.hevc`.
    const MAIN: &str = "0101600000009000000000001ef000fcfdf8f800000f03200001001840010c01ffff01600000030090000003000003001e959809210001002942010101600000030090000003000003001ea014207965959a4932bc05a0200000030020000003032122000100074401c172b42240";

    fn hex(s: &str) -> Vec<u8> {
        (0..s.len())
            .step_by(2)
            .map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap())
            .collect()
    }

    #[test]
    fn rebuilds_the_record_ffmpeg_writes() {
        let want = hex(MAIN);
        let c = HevcConfig::parse(&want).unwrap();
        assert_eq!((c.profile_idc, c.level, c.length_size), (1, 30, LengthSize::Four));
        let nals: Vec<&[u8]> = c.nal_units().collect();
        assert_eq!(nals.len(), 3);
        let mut out = [0u8; 256];
        let n = write_hvcc(nals.iter().copied(), false, &mut out).unwrap();
        assert_eq!(&out[..n], &want[..]);
        // Through Annex B, with a slice to ignore.
        let mut annexb = Vec::new();
        for n in &nals {
            annexb.extend_from_slice(&[0, 0, 0, 1]);
            annexb.extend_from_slice(n);
        }
        annexb.extend_from_slice(&[0, 0, 1, 0x26, 1, 0xAF]);
        let n = write_hvcc_from_annexb(&annexb, false, &mut out).unwrap();
        assert_eq!(&out[..n], &want[..]);
        assert_eq!(
            write_hvcc_from_annexb(&annexb, false, &mut out[..40])
                .unwrap_err()
                .kind(),
            ErrorKind::SinkFull
        );
        // Without a PPS.
        let e = write_hvcc(nals[..2].iter().copied(), false, &mut out).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::InvalidArgument);
    }

    #[test]
    fn cut_parameter_sets_and_records_are_errors() {
        let want = hex(MAIN);
        let c = HevcConfig::parse(&want).unwrap();
        let nals: Vec<&[u8]> = c.nal_units().collect();
        let mut out = [0u8; 256];
        for cut in 2..nals[1].len() - 8 {
            let set = [nals[0], &nals[1][..cut], nals[2]];
            assert!(
                write_hvcc(set.iter().copied(), false, &mut out).is_err(),
                "sps cut at {cut}"
            );
        }
        for cut in 0..want.len() {
            let _ = HevcConfig::parse(&want[..cut]).map(|c| c.nal_units().count());
        }
        assert_eq!(HevcConfig::parse(&want[..30]).unwrap_err().kind(), ErrorKind::Truncated);
        // Garbage parameter sets: no panic.
        let junk = [0x42u8, 1, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF];
        let _ = write_hvcc([nals[0], &junk[..], nals[2]].iter().copied(), true, &mut out);
    }
}
