//! Bitstream conversions between containers, with no copy of the payload:
//! what a remux needs when the source and target containers frame a codec
//! differently.
//!
//! | module | conversion | spec |
//! |---|---|---|
//! | [`to_length`] | H.264/H.265 Annex B access unit → length-prefixed sample | ISO/IEC 14496-15 §5.3.2, §8.3.2 |
//! | [`to_annexb`] | length-prefixed sample → Annex B (parameter sets inserted before IDR/IRAP as ffmpeg's `h264_mp4toannexb`/`hevc_mp4toannexb`) | ITU-T H.264/H.265 Annex B |
//! | [`avcc`] | `AVCDecoderConfigurationRecord` from in-band SPS/PPS | ISO/IEC 14496-15 §5.3.3.1 |
//! | [`hvcc`] | `HEVCDecoderConfigurationRecord` from in-band VPS/SPS/PPS | ISO/IEC 14496-15 §8.3.3.1 |
//! | [`adts`] | ADTS frame → raw AAC frame + `AudioSpecificConfig` | ISO/IEC 14496-3 §1.6.2.1, §1.A.2 |
//! | [`to_adts`] | raw AAC frame + `AudioSpecificConfig` → ADTS header (the MPEG-TS muxer) | ISO/IEC 14496-3 §1.A.2.2 |
//! | [`dac3`] | AC-3 / E-AC-3 sync frame → `dac3` / `dec3` payload | ETSI TS 102 366 Annex F.4, F.6 |
//!
//! Timestamps are rescaled with [`crate::types::rescale_q`] (ffmpeg's
//! `av_rescale_q`).
//!
//! The conversions borrow: a NAL unit or a raw AAC frame is a sub-slice of
//! the input, and a writer hands it to [`crate::sink::Sink::write_vectored`]
//! beside the few bytes it makes itself (a length prefix, a start code).
//! Every conversion can also tell its output size without writing (an MP4
//! muxer needs sample sizes before the samples). Nothing allocates.
//!
//! The module lives under `codec/` (not at the crate root) because it is
//! about codec bitstreams, not containers: it reads the codec scanners
//! beside it (`annexb`, `adts`, `bits`) and names no container format, so
//! any muxer can call it without an import cycle.
//!
//! Where ffmpeg's `-c copy` remux is the oracle, the byte-level choices
//! follow it (which zero bytes belong to a NAL unit, 3- or 4-byte start
//! codes, the order of parameter-set arrays); each is written down where it
//! is made.

pub mod adts;
pub mod avcc;
pub mod dac3;
pub mod hvcc;
pub mod to_adts;
pub mod to_annexb;
pub mod to_length;

use crate::error::{Error, ErrorKind, Result};
use crate::sink::{Sink, SinkStats, SliceSink};

/// The size of the big-endian length field before each NAL unit in a
/// length-prefixed sample (`lengthSizeMinusOne + 1` of the avcC/hvcC,
/// ISO/IEC 14496-15 §5.3.3.1.2).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum LengthSize {
    /// One byte: NAL units up to 255 bytes.
    One,
    /// Two bytes: NAL units up to 65535 bytes.
    Two,
    /// Four bytes, what ffmpeg and most muxers write.
    #[default]
    Four,
}

impl LengthSize {
    /// Bytes in the field: 1, 2 or 4.
    pub const fn bytes(self) -> usize {
        match self {
            LengthSize::One => 1,
            LengthSize::Two => 2,
            LengthSize::Four => 4,
        }
    }

    /// The size a record's `lengthSizeMinusOne` (its low two bits) names.
    ///
    /// Errors: `Malformed` for the value 2 (a 3-byte length, which
    /// ISO/IEC 14496-15 §5.3.3.1.2 does not allow).
    pub const fn from_minus_one(v: u8) -> Result<Self> {
        match v & 3 {
            0 => Ok(LengthSize::One),
            1 => Ok(LengthSize::Two),
            3 => Ok(LengthSize::Four),
            _ => Err(Error::malformed(
                0,
                &"nal length: lengthSizeMinusOne 2 is not allowed (ISO/IEC 14496-15 5.3.3.1.2)",
            )),
        }
    }

    /// The field for a NAL unit of `len` bytes, in the first
    /// [`LengthSize::bytes`] bytes of the array; `None` when `len` does not
    /// fit the field.
    pub fn encode(self, len: usize) -> Option<[u8; 4]> {
        let n = u32::try_from(len).ok()?;
        match self {
            LengthSize::One => u8::try_from(n).ok().map(|b| [b, 0, 0, 0]),
            LengthSize::Two => u16::try_from(n).ok().map(|v| {
                let [a, b] = v.to_be_bytes();
                [a, b, 0, 0]
            }),
            LengthSize::Four => Some(n.to_be_bytes()),
        }
    }

    /// Reads a field of this size at the start of `b`; `None` when `b` is
    /// shorter.
    pub fn decode(self, b: &[u8]) -> Option<usize> {
        let field = b.get(..self.bytes())?;
        Some(field.iter().fold(0usize, |v, &x| (v << 8) | usize::from(x)))
    }
}

/// Which NAL unit header a stream uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NalCodec {
    /// ITU-T H.264: one header byte, `nal_unit_type` in its low 5 bits.
    H264,
    /// ITU-T H.265: two header bytes, `nal_unit_type` in bits 1..7 of the first.
    H265,
}

impl NalCodec {
    /// `nal_unit_type` of `nal` (H.264 §7.3.1, H.265 §7.3.1.2); `None` for
    /// an empty NAL unit.
    pub fn nal_type(self, nal: &[u8]) -> Option<u8> {
        let h = *nal.first()?;
        Some(match self {
            NalCodec::H264 => h & 0x1F,
            NalCodec::H265 => (h >> 1) & 0x3F,
        })
    }

    /// Whether `nal` is a parameter set or an access unit delimiter: H.264
    /// SPS, PPS, AUD, SPS extension, subset SPS (types 7, 8, 9, 13, 15);
    /// H.265 VPS, SPS, PPS, AUD (32 to 35).
    pub fn is_parameter_set_or_aud(self, nal: &[u8]) -> bool {
        matches!(
            (self, self.nal_type(nal)),
            (NalCodec::H264, Some(7 | 8 | 9 | 13 | 15)) | (NalCodec::H265, Some(32..=35))
        )
    }
}

/// A sink that keeps nothing and counts the bytes: how a conversion tells
/// its output size without a second implementation.
#[derive(Debug, Default)]
pub(crate) struct CountingSink {
    stats: SinkStats,
}

impl Sink for CountingSink {
    fn position(&self) -> u64 {
        self.stats.bytes_written
    }
    fn write_all(&mut self, data: &[u8]) -> Result<()> {
        self.stats.bytes_written = self.stats.bytes_written.saturating_add(data.len() as u64);
        self.stats.writes += 1;
        Ok(())
    }
    fn can_patch(&self) -> bool {
        false
    }
    fn patch_at(&mut self, pos: u64, _data: &[u8]) -> Result<()> {
        Err(crate::sink::cannot_patch(pos))
    }
    fn flush(&mut self) -> Result<()> {
        Ok(())
    }
    fn stats(&self) -> SinkStats {
        self.stats
    }
}

/// Appends a parameter set as a decoder configuration record stores it: a
/// 16-bit length, then the NAL unit (emulation prevention bytes kept).
///
/// Errors: `Unsupported` for a NAL unit over 65535 bytes; `SinkFull`.
pub(crate) fn put_nal(w: &mut SliceSink<'_>, nal: &[u8]) -> Result<()> {
    let len = u16::try_from(nal.len()).map_err(|_| {
        Error::new(
            ErrorKind::Unsupported,
            w.position(),
            &"decoder configuration record: a parameter set over 65535 bytes (ISO/IEC 14496-15 5.3.3.1)",
        )
    })?;
    w.write_vectored(&[&len.to_be_bytes(), nal])
}

/// The picture size of an H.264 or H.265 track from the first SPS of its
/// `avcC`/`hvcC` CodecPrivate (ITU-T H.264 §7.3.2.1.1, H.265 §7.3.2.2),
/// for an input whose container did not give one (MPEG-TS, elementary
/// streams): Matroska requires PixelWidth and PixelHeight (RFC 9559
/// §5.1.4.1.28.6), an MP4 sample entry and `tkhd` carry them, an HLS
/// playlist gives them as RESOLUTION.
pub fn picture_size(codec: crate::types::Codec, private: &[u8]) -> Option<(u32, u32)> {
    match codec {
        crate::types::Codec::H264 => {
            let sps = avcc::AvcConfig::parse(private).ok()?.sps().next()?;
            let s = crate::codec::h264::Sps::parse(sps)?;
            Some((s.width, s.height))
        }
        crate::types::Codec::Hevc => {
            let cfg = hvcc::HevcConfig::parse(private).ok()?;
            let s = cfg.nal_units().find_map(crate::codec::hevc::Sps::parse)?;
            Some((s.width, s.height))
        }
        _ => None,
    }
    .filter(|&(w, h)| w > 0 && h > 0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn length_sizes_encode_and_decode() {
        assert_eq!(LengthSize::Four.encode(0x0102_0304), Some([1, 2, 3, 4]));
        assert_eq!(LengthSize::Two.encode(0x1_0000), None);
        assert_eq!(LengthSize::One.encode(255), Some([255, 0, 0, 0]));
        assert_eq!(LengthSize::One.encode(256), None);
        assert_eq!(LengthSize::Two.decode(&[1, 2, 3]), Some(0x102));
        assert_eq!(LengthSize::Four.decode(&[1, 2, 3]), None);
        assert_eq!(LengthSize::from_minus_one(0xFF), Ok(LengthSize::Four));
        assert_eq!(
            LengthSize::from_minus_one(0xFE).unwrap_err().kind(),
            ErrorKind::Malformed
        );
        assert!(NalCodec::H264.is_parameter_set_or_aud(&[0x67]));
        assert!(!NalCodec::H264.is_parameter_set_or_aud(&[0x65]));
        assert!(NalCodec::H265.is_parameter_set_or_aud(&[0x40, 1]));
        assert!(!NalCodec::H265.is_parameter_set_or_aud(&[0x26, 1]));
        assert!(!NalCodec::H265.is_parameter_set_or_aud(&[]));
    }

    /// Noise and near-miss inputs through every conversion: errors or
    /// output, never a panic.
    #[test]
    fn noise_never_panics() {
        use crate::sink::SliceSink;
        let mut seed = 0x2545_F491_4F6C_DD1Du64;
        let mut buf = [0u8; 512];
        let mut out = [0u8; 2048];
        for round in 0..3000 {
            let len = round % 300;
            for b in buf.iter_mut().take(len) {
                seed ^= seed << 13;
                seed ^= seed >> 7;
                seed ^= seed << 17;
                // Mostly start-code and header bytes, so the parsers go deep.
                *b = match seed % 8 {
                    0..=2 => 0,
                    3 => 1,
                    4 => 0xFF,
                    _ => (seed >> 8) as u8,
                };
            }
            let input = &buf[..len];
            let _ = to_length::length_prefixed_size(input, to_length::LengthPrefixOptions::default());
            let _ = avcc::write_avcc_from_annexb(input, &mut out);
            let _ = hvcc::write_hvcc_from_annexb(input, round % 2 == 0, &mut out);
            let _ = avcc::write_avcc([&[0x67][..], input, &[0x68, 1]].into_iter(), &mut out);
            let _ = hvcc::write_hvcc([&[0x40, 1][..], input, &[0x44, 1]].into_iter(), true, &mut out);
            let _ = adts::adts_to_raw(input);
            let _ = avcc::AvcConfig::parse(input).map(|c| c.sps().chain(c.pps()).count());
            let _ = hvcc::HevcConfig::parse(input).map(|c| c.nal_units().count());
            for codec in [NalCodec::H264, NalCodec::H265] {
                let mut sink = SliceSink::new(&mut out);
                let mut c = to_annexb::ToAnnexB::new(codec, LengthSize::Two);
                let _ = c.write_sample(&mut sink, input);
            }
            let avcc = [1, 0x42, 0xC0, 0x0B, 0xFF, 0xE1, 0, 2, 0x67, 0x42, 1, 0, 2, 0x68, 0xCE];
            let mut c = to_annexb::ToAnnexB::with_parameter_sets(NalCodec::H264, &avcc).unwrap();
            let _ = c.write_sample(&mut SliceSink::new(&mut out), input);
        }
    }
}
