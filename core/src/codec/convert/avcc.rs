//! The AVC decoder configuration record (`avcC`, ISO/IEC 14496-15
//! §5.3.3.1): built from in-band SPS/PPS NAL units, byte for byte as
//! ffmpeg's `ff_isom_write_avcc` writes it, and read back for the parameter
//! sets it holds.

use super::to_length::AnnexBNalUnits;
use super::{put_nal, LengthSize};
use crate::codec::bits::BitReader;
use crate::error::{Error, ErrorKind, Result};
use crate::sink::{Sink, SliceSink};

const SPS: u8 = 7;
const PPS: u8 = 8;
const SPS_EXT: u8 = 13;
/// ffmpeg's `H264_MAX_SPS_COUNT`: a record with this many SPS is refused.
const MAX_SPS: usize = 32;
/// ffmpeg's `H264_MAX_PPS_COUNT`.
const MAX_PPS: usize = 256;

fn nal_type(nal: &[u8]) -> Option<u8> {
    nal.first().map(|h| h & 0x1F)
}

/// The SPS fields the record repeats for the High profiles
/// (ISO/IEC 14496-15 §5.3.3.1.2): `chroma_format_idc` and the bit depths.
/// `crate::codec::h264::Sps` has no chroma bit depth, so the few fields
/// are read here (ITU-T H.264 §7.3.2.1.1).
fn high_profile_fields(sps: &[u8]) -> Result<[u8; 3]> {
    let mut r = BitReader::rbsp(sps.get(1..).unwrap_or(&[]));
    let profile = r.bits(8);
    r.skip(16);
    r.ue(); // seq_parameter_set_id
    let mut fields = [1, 0, 0];
    if matches!(
        profile,
        100 | 110 | 122 | 244 | 44 | 83 | 86 | 118 | 128 | 138 | 139 | 134 | 135
    ) {
        let chroma = r.ue();
        if chroma == 3 {
            r.skip(1); // separate_colour_plane_flag
        }
        let luma = r.ue();
        let chroma_depth = r.ue();
        if r.overrun() {
            return Err(Error::truncated(0, &"avcC: SPS cut short (ITU-T H.264 7.3.2.1.1)"));
        }
        if chroma > 3 || luma > 6 || chroma_depth > 6 {
            return Err(Error::malformed(
                0,
                &"avcC: SPS chroma_format_idc or bit depth out of range (ITU-T H.264 7.4.2.1.1)",
            ));
        }
        fields = [chroma as u8, luma as u8, chroma_depth as u8];
    }
    if r.overrun() {
        return Err(Error::truncated(0, &"avcC: SPS cut short (ITU-T H.264 7.3.2.1.1)"));
    }
    Ok(fields)
}

/// Writes the `avcC` payload (without the box header) for the parameter
/// sets among `nals` into `out`, and returns its length: every SPS (type
/// 7), then every PPS (8), in the order given, each with a 16-bit length;
/// profile, compatibility and level copied from the first SPS;
/// `lengthSizeMinusOne` 3; and for profiles other than 66, 77 and 88 the
/// chroma format, bit depths and SPS extensions (13). Other NAL units are
/// ignored. This is ffmpeg's `ff_isom_write_avcc`, so a record built from
/// the in-band parameter sets of a stream equals the one `ffmpeg -c copy`
/// writes into an MP4.
///
/// Errors: `InvalidArgument` when there is no SPS of at least 4 bytes or no
/// PPS, or 32 SPS or more; `Malformed`/`Truncated` for an SPS whose High
/// profile fields do not parse; `Unsupported` for a parameter set over
/// 65535 bytes; `SinkFull` when `out` is too small (it then holds part of a record).
pub fn write_avcc<'n, I>(nals: I, out: &mut [u8]) -> Result<usize>
where
    I: Iterator<Item = &'n [u8]> + Clone,
{
    let of = |t: u8| nals.clone().filter(move |n| nal_type(n) == Some(t));
    let first_sps = of(SPS).next().unwrap_or(&[]);
    let (sps_n, pps_n, ext_n) = (of(SPS).count(), of(PPS).count(), of(SPS_EXT).count());
    let [_, profile, compat, level, ..] = *first_sps else {
        return Err(Error::new(
            ErrorKind::InvalidArgument,
            0,
            &"avcC: no SPS of at least 4 bytes (ISO/IEC 14496-15 5.3.3.1)",
        ));
    };
    if pps_n == 0 || sps_n >= MAX_SPS || pps_n >= MAX_PPS || ext_n >= MAX_PPS {
        return Err(Error::new(
            ErrorKind::InvalidArgument,
            0,
            &"avcC: no PPS, or too many parameter sets (ISO/IEC 14496-15 5.3.3.1)",
        ));
    }
    let mut w = SliceSink::new(out);
    w.write_all(&[1, profile, compat, level, 0xFF, 0xE0 | sps_n as u8])?;
    for sps in of(SPS) {
        put_nal(&mut w, sps)?;
    }
    w.write_all(&[pps_n as u8])?;
    for pps in of(PPS) {
        put_nal(&mut w, pps)?;
    }
    if !matches!(profile, 66 | 77 | 88) {
        let [chroma, luma, chroma_depth] = high_profile_fields(first_sps)?;
        w.write_all(&[0xFC | chroma, 0xF8 | luma, 0xF8 | chroma_depth, ext_n as u8])?;
        for ext in of(SPS_EXT) {
            put_nal(&mut w, ext)?;
        }
    }
    Ok(w.written().len())
}

/// [`write_avcc`] over the SPS and PPS among the NAL units of an Annex B
/// byte range (an access unit), leaving SPS extensions out: what ffmpeg
/// writes for a raw H.264 stream, whose `extract_extradata` filter keeps
/// only the SPS and PPS of the first access unit.
///
/// Errors: as [`write_avcc`].
pub fn write_avcc_from_annexb(annexb: &[u8], out: &mut [u8]) -> Result<usize> {
    let sets = AnnexBNalUnits::new(annexb).filter(|n| matches!(nal_type(n), Some(SPS | PPS)));
    write_avcc(sets, out)
}

/// A parsed `avcC` payload: its length size and parameter sets, borrowed.
#[derive(Debug, Clone, Copy)]
pub struct AvcConfig<'a> {
    /// `lengthSizeMinusOne + 1`.
    pub length_size: LengthSize,
    /// `AVCProfileIndication`.
    pub profile: u8,
    /// `profile_compatibility`.
    pub compatibility: u8,
    /// `AVCLevelIndication`.
    pub level: u8,
    sps: ParameterSets<'a>,
    pps: ParameterSets<'a>,
}

impl<'a> AvcConfig<'a> {
    /// Parses an `avcC` payload (ISO/IEC 14496-15 §5.3.3.1.1), checking
    /// that every parameter set lies within it.
    ///
    /// Errors: `Truncated` when a length reaches past the record,
    /// `Malformed` for a version other than 1 or a 3-byte length size.
    pub fn parse(record: &'a [u8]) -> Result<Self> {
        let [version, profile, compatibility, level, size, nsps, ref rest @ ..] = *record else {
            return Err(Error::truncated(
                0,
                &"avcC: shorter than its fixed fields (ISO/IEC 14496-15 5.3.3.1.1)",
            ));
        };
        if version != 1 {
            return Err(Error::malformed(
                0,
                &"avcC: configurationVersion is not 1 (ISO/IEC 14496-15 5.3.3.1.2)",
            ));
        }
        let length_size = LengthSize::from_minus_one(size)?;
        let (sps, rest) = ParameterSets::split(rest, usize::from(nsps & 0x1F), 6)?;
        let (&npps, rest) = rest.split_first().ok_or(Error::truncated(
            0,
            &"avcC: numOfPictureParameterSets missing (ISO/IEC 14496-15 5.3.3.1.1)",
        ))?;
        let (pps, _) = ParameterSets::split(rest, usize::from(npps), 0)?;
        Ok(AvcConfig {
            length_size,
            profile,
            compatibility,
            level,
            sps,
            pps,
        })
    }

    /// The sequence parameter sets, in record order.
    pub fn sps(&self) -> ParameterSets<'a> {
        self.sps
    }

    /// The picture parameter sets, in record order.
    pub fn pps(&self) -> ParameterSets<'a> {
        self.pps
    }

    /// How many SPS the record holds.
    pub fn sps_count(&self) -> usize {
        self.sps.left
    }

    /// How many PPS the record holds.
    pub fn pps_count(&self) -> usize {
        self.pps.left
    }
}

/// NAL units stored as a 16-bit length and the bytes (the parameter set
/// lists of avcC and hvcC), checked to fit when the record was parsed.
#[derive(Debug, Clone, Copy)]
pub struct ParameterSets<'a> {
    data: &'a [u8],
    left: usize,
}

impl<'a> ParameterSets<'a> {
    /// Splits `count` length-prefixed NAL units off the front of `data`;
    /// returns them and the rest. `at` is the offset of `data` in its record,
    /// for the error.
    pub(crate) fn split(data: &'a [u8], count: usize, at: usize) -> Result<(Self, &'a [u8])> {
        let mut pos = 0usize;
        for _ in 0..count {
            let len = data
                .get(pos..pos + 2)
                .map(|b| b.iter().fold(0usize, |v, &x| (v << 8) | usize::from(x)));
            pos = match len {
                Some(len) if pos + 2 + len <= data.len() => pos + 2 + len,
                _ => return Err(Error::truncated(
                    (at + pos) as u64,
                    &"decoder configuration record: a parameter set reaches past the record (ISO/IEC 14496-15 5.3.3.1)",
                )),
            };
        }
        let (mine, rest) = data.split_at_checked(pos).unwrap_or((data, &[]));
        Ok((
            ParameterSets {
                data: mine,
                left: count,
            },
            rest,
        ))
    }
}

impl<'a> Iterator for ParameterSets<'a> {
    type Item = &'a [u8];

    fn next(&mut self) -> Option<&'a [u8]> {
        if self.left == 0 {
            return None;
        }
        let [a, b, ref rest @ ..] = *self.data else {
            return None;
        };
        let (nal, rest) = rest.split_at_checked(usize::from(u16::from_be_bytes([a, b])))?;
        self.data = rest;
        self.left -= 1;
        Some(nal)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The avcC ffmpeg 5.1 writes for `corpus/files/h264/high_bframes.h264`.
    const HIGH: &str = "0164000bffe100196764000bacd942847e5c0440000003004000000c83c50a658001000468ef8fcbfdf8f800";

    fn hex(s: &str) -> std::vec::Vec<u8> {
        (0..s.len())
            .step_by(2)
            .map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap())
            .collect()
    }

    extern crate std;

    #[test]
    fn builds_the_high_profile_record_ffmpeg_writes() {
        let want = hex(HIGH);
        let c = AvcConfig::parse(&want).unwrap();
        assert_eq!((c.profile, c.level, c.sps_count(), c.pps_count()), (100, 11, 1, 1));
        // Annex B in, with an AUD and a slice to ignore.
        let mut annexb = std::vec![0, 0, 0, 1, 9, 0x10];
        for n in c.sps().chain(c.pps()) {
            annexb.extend_from_slice(&[0, 0, 0, 1]);
            annexb.extend_from_slice(n);
        }
        annexb.extend_from_slice(&[0, 0, 1, 0x65, 0x88, 0x80]);
        let mut out = [0u8; 64];
        let n = write_avcc_from_annexb(&annexb, &mut out).unwrap();
        assert_eq!(&out[..n], &want[..]);
        // Too small a buffer.
        let e = write_avcc_from_annexb(&annexb, &mut out[..10]).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::SinkFull);
    }

    #[test]
    fn baseline_has_no_high_fields_and_errors_are_clean() {
        let sps: &[u8] = &[0x67, 0x42, 0xC0, 0x0B, 0xDA];
        let pps: &[u8] = &[0x68, 0xCE, 0x0F, 0xC8];
        let mut out = [0u8; 32];
        let n = write_avcc([sps, pps].into_iter(), &mut out).unwrap();
        assert_eq!(
            &out[..n],
            [1, 0x42, 0xC0, 0x0B, 0xFF, 0xE1, 0, 5, 0x67, 0x42, 0xC0, 0x0B, 0xDA, 1, 0, 4, 0x68, 0xCE, 0x0F, 0xC8]
        );
        let e = write_avcc([sps].into_iter(), &mut out).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::InvalidArgument);
        let e = write_avcc([&sps[..3], pps].into_iter(), &mut out).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::InvalidArgument);
        // A High SPS cut before its bit depths.
        let e = write_avcc([&[0x67, 100, 0, 11][..], pps].into_iter(), &mut out).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::Truncated);
        // Records cut anywhere parse to an error, never a panic.
        let rec = hex(HIGH);
        for cut in 0..rec.len() - 4 {
            let _ = AvcConfig::parse(&rec[..cut]);
        }
        assert_eq!(AvcConfig::parse(&rec[..20]).unwrap_err().kind(), ErrorKind::Truncated);
        let mut bad = rec.clone();
        bad[0] = 2;
        assert_eq!(AvcConfig::parse(&bad).unwrap_err().kind(), ErrorKind::Malformed);
    }
}
