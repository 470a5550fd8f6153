//! Length-prefixed sample → H.264/H.265 Annex B byte stream (for MPEG-TS,
//! PS or raw output): each length field (ISO/IEC 14496-15 §5.3.2, §8.3.2)
//! becomes a start code (H.264/H.265 Annex B, B.1).
//!
//! [`ToAnnexB::new`] writes `00 00 00 01` before every NAL unit.
//! [`ToAnnexB::with_parameter_sets`] does what ffmpeg's bitstream filters
//! do by default on `-c copy` from MP4 to TS or raw, byte for byte (as of
//! ffmpeg 5.1, the oracle of the tests; later versions of
//! `h264_mp4toannexb` also insert the parameter sets before a
//! buffering-period SEI that comes without them):
//!
//! * H.264 (`h264_mp4toannexb`): the avcC's SPS and PPS, with four-byte
//!   start codes, go before the first IDR slice of a picture that brought
//!   none of its own (just the PPS when the picture had only an SPS); a
//!   four-byte start code opens the sample and each SPS/PPS, a three-byte
//!   one every other NAL unit; empty NAL units are dropped. The "picture
//!   has its parameter sets" state carries over from sample to sample, as
//!   in ffmpeg.
//! * H.265 (`hevc_mp4toannexb`): every NAL unit of the hvcC's arrays goes
//!   before the first IRAP NAL unit (types 16 to 23) of each sample, and
//!   every start code has four bytes.

use super::avcc::AvcConfig;
use super::hvcc::HevcConfig;
use super::{CountingSink, LengthSize, NalCodec};
use crate::error::{Error, Result};
use crate::sink::Sink;

const START4: &[u8] = &[0, 0, 0, 1];
const START3: &[u8] = &[0, 0, 1];

/// The NAL units of a length-prefixed sample (ISO/IEC 14496-15 §5.3.2,
/// §8.3.2), as slices of it. A length field cut short, or a length reaching
/// past the sample, yields one `Err` (`Malformed`, at the field's offset)
/// and then the iterator ends.
#[derive(Debug, Clone)]
pub struct LengthPrefixedNalUnits<'a> {
    data: &'a [u8],
    pos: usize,
    size: LengthSize,
}

impl<'a> LengthPrefixedNalUnits<'a> {
    /// The NAL units of `sample`, each after a `size` length field.
    pub fn new(sample: &'a [u8], size: LengthSize) -> Self {
        LengthPrefixedNalUnits {
            data: sample,
            pos: 0,
            size,
        }
    }
}

impl<'a> Iterator for LengthPrefixedNalUnits<'a> {
    type Item = Result<&'a [u8]>;

    fn next(&mut self) -> Option<Result<&'a [u8]>> {
        let at = self.pos;
        let rest = self.data.get(at..).filter(|r| !r.is_empty())?;
        let nal = self.size.decode(rest).and_then(|len| {
            let start = self.size.bytes();
            rest.get(start..start.checked_add(len)?)
        });
        match nal {
            Some(nal) => {
                self.pos = at + self.size.bytes() + nal.len();
                Some(Ok(nal))
            }
            None => {
                self.pos = self.data.len();
                Some(Err(Error::malformed(
                    at as u64,
                    &"nal length: a NAL unit length reaches past the sample (ISO/IEC 14496-15 5.3.2)",
                )))
            }
        }
    }
}

/// Parameter sets to insert, from the track's decoder configuration record.
#[derive(Debug, Clone, Copy)]
enum Insert<'p> {
    None,
    H264(AvcConfig<'p>),
    H265(HevcConfig<'p>),
}

/// Converts length-prefixed samples to Annex B, sample by sample, keeping
/// the little state ffmpeg's filters keep between samples (see the module
/// notes).
#[derive(Debug, Clone)]
pub struct ToAnnexB<'p> {
    codec: NalCodec,
    length_size: LengthSize,
    insert: Insert<'p>,
    /// H.264: the next IDR slice starts a new picture.
    new_idr: bool,
    /// H.264: the current picture brought an SPS / a PPS.
    sps_seen: bool,
    pps_seen: bool,
}

impl<'p> ToAnnexB<'p> {
    /// A converter that writes `00 00 00 01` before each NAL unit and
    /// inserts nothing.
    pub fn new(codec: NalCodec, length_size: LengthSize) -> Self {
        ToAnnexB {
            codec,
            length_size,
            insert: Insert::None,
            new_idr: true,
            sps_seen: false,
            pps_seen: false,
        }
    }

    /// A converter that behaves as ffmpeg's `h264_mp4toannexb` /
    /// `hevc_mp4toannexb`, with the parameter sets and length size of
    /// `record` (an avcC or hvcC payload, ISO/IEC 14496-15 §5.3.3.1,
    /// §8.3.3.1).
    ///
    /// Errors: `Malformed`/`Truncated` when the record does not parse.
    pub fn with_parameter_sets(codec: NalCodec, record: &'p [u8]) -> Result<Self> {
        let (insert, length_size) = match codec {
            NalCodec::H264 => {
                let c = AvcConfig::parse(record)?;
                (Insert::H264(c), c.length_size)
            }
            NalCodec::H265 => {
                let c = HevcConfig::parse(record)?;
                (Insert::H265(c), c.length_size)
            }
        };
        Ok(ToAnnexB {
            insert,
            ..Self::new(codec, length_size)
        })
    }

    /// Writes `sample` (length-prefixed NAL units) as Annex B: start codes
    /// and inserted parameter sets are the only bytes not borrowed from
    /// `sample` or the record. Returns the bytes written.
    ///
    /// Errors: `Malformed` for a length field that reaches past the sample
    /// (and, in H.265 with parameter sets, a NAL unit under 2 bytes, which
    /// ffmpeg refuses too); the sink's errors. Bytes of the NAL units before
    /// the bad one are already written.
    pub fn write_sample<K: Sink + ?Sized>(&mut self, sink: &mut K, sample: &[u8]) -> Result<u64> {
        let start = sink.position();
        let mut irap_done = false;
        let mut at = 0usize;
        for nal in LengthPrefixedNalUnits::new(sample, self.length_size) {
            let nal = nal?;
            let first = sink.position() == start;
            match self.insert {
                Insert::None => sink.write_vectored(&[START4, nal])?,
                Insert::H264(c) => self.h264_nal(sink, c, nal, first)?,
                Insert::H265(c) => {
                    if nal.len() < 2 {
                        return Err(Error::malformed(
                            at as u64,
                            &"hevc nal: a NAL unit under 2 bytes in a sample (ITU-T H.265 7.3.1.1)",
                        ));
                    }
                    if (16..=23).contains(&self.codec.nal_type(nal).unwrap_or(0)) && !irap_done {
                        irap_done = true;
                        write_config_nals(sink, c.nal_units())?;
                    }
                    sink.write_vectored(&[START4, nal])?;
                }
            }
            at += self.length_size.bytes() + nal.len();
        }
        Ok(sink.position().saturating_sub(start))
    }

    /// One NAL unit of an H.264 sample, as `h264_mp4toannexb` writes it.
    fn h264_nal<K: Sink + ?Sized>(&mut self, sink: &mut K, c: AvcConfig<'p>, nal: &[u8], first: bool) -> Result<()> {
        const SLICE: u8 = 1;
        const IDR: u8 = 5;
        const SPS: u8 = 7;
        const PPS: u8 = 8;
        let Some(t) = self.codec.nal_type(nal) else {
            return Ok(());
        };
        let mut first = first;
        if t == SPS {
            self.sps_seen = true;
            self.new_idr = true;
        } else if t == PPS {
            self.pps_seen = true;
            self.new_idr = true;
            if !self.sps_seen && c.sps_count() > 0 {
                write_config_nals(sink, c.sps())?;
                first = false;
                self.sps_seen = true;
            }
        }
        // An IDR slice with first_mb_in_slice 0 (its first bit set) after an
        // IDR picture starts a new picture.
        if !self.new_idr && t == IDR && nal.get(1).is_some_and(|b| b & 0x80 != 0) {
            self.new_idr = true;
        }
        if self.new_idr && t == IDR && !self.sps_seen && !self.pps_seen {
            first &= c.sps_count() + c.pps_count() == 0;
            write_config_nals(sink, c.sps().chain(c.pps()))?;
            self.new_idr = false;
        } else if self.new_idr && t == IDR && self.sps_seen && !self.pps_seen {
            first &= c.pps_count() == 0;
            write_config_nals(sink, c.pps())?;
        }
        let code = if first || t == SPS || t == PPS { START4 } else { START3 };
        sink.write_vectored(&[code, nal])?;
        if !self.new_idr && t == SLICE {
            self.new_idr = true;
            self.sps_seen = false;
            self.pps_seen = false;
        }
        Ok(())
    }

    #[cfg(any(feature = "avi", feature = "ts"))]
    /// The state carried from one sample to the next, for a writer that
    /// keeps it between packets without borrowing the record.
    pub(crate) fn state(&self) -> AnnexBState {
        AnnexBState {
            new_idr: self.new_idr,
            sps_seen: self.sps_seen,
            pps_seen: self.pps_seen,
        }
    }

    #[cfg(any(feature = "avi", feature = "ts"))]
    /// This converter in the state [`ToAnnexB::state`] gave.
    pub(crate) fn resume(self, s: AnnexBState) -> Self {
        ToAnnexB {
            new_idr: s.new_idr,
            sps_seen: s.sps_seen,
            pps_seen: s.pps_seen,
            ..self
        }
    }

    /// The size [`ToAnnexB::write_sample`] would write for `sample` in the
    /// converter's present state, without writing it or changing the state.
    ///
    /// Errors: as [`ToAnnexB::write_sample`].
    pub fn sample_size(&self, sample: &[u8]) -> Result<u64> {
        self.clone().write_sample(&mut CountingSink::default(), sample)
    }
}

#[cfg(any(feature = "avi", feature = "ts"))]
/// What [`ToAnnexB`] carries between samples (H.264 parameter-set
/// insertion), kept by a writer that cannot hold the borrowed record.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct AnnexBState {
    new_idr: bool,
    sps_seen: bool,
    pps_seen: bool,
}

#[cfg(any(feature = "avi", feature = "ts"))]
impl Default for AnnexBState {
    /// The state of a new converter.
    fn default() -> Self {
        AnnexBState {
            new_idr: true,
            sps_seen: false,
            pps_seen: false,
        }
    }
}

#[cfg(feature = "avi")]
/// The parameter sets of an `avcC` record as Annex B (each after a
/// four-byte start code), as ffmpeg's `h264_mp4toannexb` gives them for
/// the stream's extradata; returns the bytes written.
///
/// Errors: `Malformed`/`Truncated` when the record does not parse; the
/// sink's errors.
pub(crate) fn write_avcc_as_annexb<K: Sink + ?Sized>(sink: &mut K, record: &[u8]) -> Result<u64> {
    let c = AvcConfig::parse(record)?;
    let start = sink.position();
    write_config_nals(sink, c.sps().chain(c.pps()))?;
    Ok(sink.position().saturating_sub(start))
}

#[cfg(feature = "avi")]
/// The size [`write_avcc_as_annexb`] writes for `record`.
pub(crate) fn avcc_as_annexb_size(record: &[u8]) -> Result<u64> {
    write_avcc_as_annexb(&mut CountingSink::default(), record)
}

/// Writes each NAL unit of `nals` after a four-byte start code.
fn write_config_nals<'n, K: Sink + ?Sized>(sink: &mut K, nals: impl Iterator<Item = &'n [u8]>) -> Result<()> {
    for nal in nals {
        sink.write_vectored(&[START4, nal])?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::ErrorKind;
    use crate::sink::SliceSink;

    #[test]
    fn iterates_and_reports_bad_lengths() {
        let s = [0, 2, 0x65, 1, 0, 1, 0x41, 0, 9, 1];
        let mut it = LengthPrefixedNalUnits::new(&s, LengthSize::Two);
        assert_eq!(it.next(), Some(Ok(&[0x65, 1][..])));
        assert_eq!(it.next(), Some(Ok(&[0x41][..])));
        let e = it.next().unwrap().unwrap_err();
        assert_eq!((e.kind(), e.offset()), (ErrorKind::Malformed, 7));
        assert_eq!(it.next(), None);
        // A length field cut short.
        let mut it = LengthPrefixedNalUnits::new(&[0, 0, 0], LengthSize::Four);
        assert!(it.next().unwrap().is_err());
        assert!(LengthPrefixedNalUnits::new(&[], LengthSize::Four).next().is_none());
    }

    #[test]
    fn plain_conversion_writes_four_byte_start_codes() {
        let s = [0, 0, 0, 2, 0x65, 1, 0, 0, 0, 1, 0x41];
        let mut buf = [0u8; 32];
        let mut k = SliceSink::new(&mut buf);
        let mut c = ToAnnexB::new(NalCodec::H264, LengthSize::Four);
        assert_eq!(c.sample_size(&s), Ok(11));
        assert_eq!(c.write_sample(&mut k, &s), Ok(11));
        assert_eq!(k.written(), [0, 0, 0, 1, 0x65, 1, 0, 0, 0, 1, 0x41]);
        let e = c.write_sample(&mut k, &[0, 0, 0, 9, 1]).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::Malformed);
    }

    /// avcC with one SPS `67 42` and one PPS `68 ce`, 4-byte lengths.
    const AVCC: &[u8] = &[1, 0x42, 0xC0, 0x0B, 0xFF, 0xE1, 0, 2, 0x67, 0x42, 1, 0, 2, 0x68, 0xCE];

    #[test]
    fn h264_inserts_parameter_sets_before_idr_as_ffmpeg() {
        let mut c = ToAnnexB::with_parameter_sets(NalCodec::H264, AVCC).unwrap();
        let mut buf = [0u8; 64];
        let mut k = SliceSink::new(&mut buf);
        // IDR without parameter sets: SPS, PPS, then the slice after a
        // three-byte start code.
        let idr = [0, 0, 0, 2, 0x65, 0x88];
        c.write_sample(&mut k, &idr).unwrap();
        assert_eq!(
            k.written(),
            [0, 0, 0, 1, 0x67, 0x42, 0, 0, 0, 1, 0x68, 0xCE, 0, 0, 1, 0x65, 0x88]
        );
        // A non-IDR picture, with two slices: four bytes for the first
        // start code, three after.
        let mut buf = [0u8; 64];
        let mut k = SliceSink::new(&mut buf);
        c.write_sample(&mut k, &[0, 0, 0, 2, 0x41, 0x9A, 0, 0, 0, 1, 0x41])
            .unwrap();
        assert_eq!(k.written(), [0, 0, 0, 1, 0x41, 0x9A, 0, 0, 1, 0x41]);
        // An IDR that brings its own SPS and PPS: nothing inserted.
        let s = [0, 0, 0, 2, 0x67, 1, 0, 0, 0, 2, 0x68, 2, 0, 0, 0, 2, 0x65, 0x88];
        assert_eq!(c.sample_size(&s), Ok(4 + 2 + 4 + 2 + 3 + 2));
        // Only an SPS in-band: the PPS is inserted.
        let s = [0, 0, 0, 2, 0x67, 1, 0, 0, 0, 2, 0x65, 0x88];
        let mut c2 = c.clone();
        let mut buf = [0u8; 64];
        let mut k = SliceSink::new(&mut buf);
        c2.write_sample(&mut k, &s).unwrap();
        assert_eq!(
            k.written(),
            [0, 0, 0, 1, 0x67, 1, 0, 0, 0, 1, 0x68, 0xCE, 0, 0, 1, 0x65, 0x88]
        );
    }

    #[test]
    fn h265_inserts_the_arrays_before_the_first_irap() {
        // hvcC: 22 header bytes, 2 arrays: VPS 40 01, SPS 42 01.
        let mut hvcc = [0u8; 22 + 1 + 2 * 7];
        hvcc[0] = 1;
        hvcc[21] = 0x0F;
        hvcc[22] = 2;
        hvcc[23..30].copy_from_slice(&[0x20, 0, 1, 0, 2, 0x40, 1]);
        hvcc[30..37].copy_from_slice(&[0x21, 0, 1, 0, 2, 0x42, 1]);
        let mut c = ToAnnexB::with_parameter_sets(NalCodec::H265, &hvcc).unwrap();
        // IDR_W_RADL (19) twice: parameter sets once.
        let s = [0, 0, 0, 2, 0x26, 1, 0, 0, 0, 2, 0x26, 1];
        let mut buf = [0u8; 64];
        let mut k = SliceSink::new(&mut buf);
        c.write_sample(&mut k, &s).unwrap();
        assert_eq!(
            k.written(),
            [0, 0, 0, 1, 0x40, 1, 0, 0, 0, 1, 0x42, 1, 0, 0, 0, 1, 0x26, 1, 0, 0, 0, 1, 0x26, 1]
        );
        // A one-byte NAL unit is refused, as ffmpeg does.
        assert_eq!(
            c.sample_size(&[0, 0, 0, 1, 0x26]).unwrap_err().kind(),
            ErrorKind::Malformed
        );
    }
}
