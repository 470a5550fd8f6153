//! H.264/H.265 Annex B access unit → length-prefixed sample (ISO/IEC
//! 14496-15 §5.3.2 for AVC, §8.3.2 for HEVC): each start code becomes a
//! big-endian length of the NAL unit that follows.
//!
//! The NAL units are split exactly where ffmpeg's `ff_avc_parse_nal_units`
//! splits them (what `ffmpeg -c copy` writes into an MP4), which differs
//! from [`crate::codec::annexb::NalUnits`] in which zero bytes a NAL unit
//! keeps: only the one zero byte of a four-byte start code is dropped before
//! the next start code (further `trailing_zero_8bits` stay in the NAL unit),
//! and nothing is dropped at the end of the access unit. So the samples are
//! byte-equal to ffmpeg's.

use super::{CountingSink, LengthSize, NalCodec};
use crate::codec::annexb::find_start_code;
use crate::error::{Error, ErrorKind, Result};
use crate::sink::Sink;

/// The NAL units of an Annex B byte range, as slices of it, without their
/// start codes, split as ffmpeg's `ff_avc_parse_nal_units` splits them (see
/// the module notes). Bytes before the first start code are skipped. Never
/// fails: any input is a sequence of NAL units (perhaps none).
#[derive(Debug, Clone)]
pub struct AnnexBNalUnits<'a> {
    data: &'a [u8],
    /// Where the next start code (or the zero byte before it) begins.
    next: usize,
}

impl<'a> AnnexBNalUnits<'a> {
    /// The NAL units of `data`.
    pub fn new(data: &'a [u8]) -> Self {
        AnnexBNalUnits {
            data,
            next: find_nal_start(data, 0),
        }
    }

    /// The next NAL unit with its offset in the input.
    pub fn next_with_offset(&mut self) -> Option<(usize, &'a [u8])> {
        let mut p = self.next;
        // Skip the zero bytes of the start code, then its 0x01.
        loop {
            let b = *self.data.get(p)?;
            p += 1;
            if b != 0 {
                break;
            }
        }
        if p >= self.data.len() {
            self.next = p;
            return None;
        }
        let end = find_nal_start(self.data, p);
        self.next = end;
        Some((p, self.data.get(p..end)?))
    }
}

impl<'a> Iterator for AnnexBNalUnits<'a> {
    type Item = &'a [u8];

    fn next(&mut self) -> Option<&'a [u8]> {
        self.next_with_offset().map(|(_, nal)| nal)
    }
}

/// ffmpeg's `ff_nal_find_startcode`: the first `00 00 01` at or after
/// `from` whose `01` is not the last byte, moved back onto a zero byte just
/// before it (a four-byte start code); `data.len()` when there is none.
fn find_nal_start(data: &[u8], from: usize) -> usize {
    let searched = data.get(..data.len().saturating_sub(1)).unwrap_or(&[]);
    match find_start_code(searched, from) {
        Some(i) if i > from && data.get(i - 1) == Some(&0) => i - 1,
        Some(i) => i,
        None => data.len(),
    }
}

/// Which NAL units a conversion keeps.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum KeepNals {
    /// Every NAL unit, as `ffmpeg -c copy` does (in-band parameter sets
    /// stay in the samples).
    #[default]
    All,
    /// Drops parameter sets and access unit delimiters (see
    /// [`NalCodec::is_parameter_set_or_aud`]), for outputs that carry them
    /// only in the sample entry (`avc1`/`hvc1`).
    DropParameterSetsAndAud(NalCodec),
}

impl KeepNals {
    fn keeps(self, nal: &[u8]) -> bool {
        match self {
            KeepNals::All => true,
            KeepNals::DropParameterSetsAndAud(codec) => !codec.is_parameter_set_or_aud(nal),
        }
    }
}

/// How [`write_length_prefixed`] frames the NAL units.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct LengthPrefixOptions {
    /// The size of each length field (the record's `lengthSizeMinusOne + 1`).
    pub length_size: LengthSize,
    /// Which NAL units go into the sample.
    pub keep: KeepNals,
}

/// NAL units handed to the sink in one vectored write: a prefix and a NAL
/// unit each.
const BATCH: usize = 8;

/// Writes the Annex B access unit `au` as a length-prefixed sample
/// (ISO/IEC 14496-15 §5.3.2, §8.3.2): for each NAL unit kept, its length in
/// `opts.length_size` big-endian bytes, then the NAL unit borrowed from
/// `au`. Only the prefixes are made here; the NAL units go to
/// [`Sink::write_vectored`] as they are, up to eight to a call. Returns the
/// bytes written (what [`length_prefixed_size`] says).
///
/// Errors: `InvalidArgument` (at the NAL unit's offset in `au`) when a NAL
/// unit is longer than the length field holds, before anything of that
/// batch is written; the sink's errors.
pub fn write_length_prefixed<K: Sink + ?Sized>(sink: &mut K, au: &[u8], opts: LengthPrefixOptions) -> Result<u64> {
    let mut nals = AnnexBNalUnits::new(au);
    let n = opts.length_size.bytes();
    let mut total = 0u64;
    loop {
        let mut prefixes = [[0u8; 4]; BATCH];
        let mut batch: [&[u8]; BATCH] = [&[]; BATCH];
        let mut count = 0;
        while count < BATCH {
            let Some((at, nal)) = nals.next_with_offset() else {
                break;
            };
            if !opts.keep.keeps(nal) {
                continue;
            }
            let (Some(prefix), Some(slot)) = (prefixes.get_mut(count), batch.get_mut(count)) else {
                break;
            };
            *prefix = opts.length_size.encode(nal.len()).ok_or(Error::new(
                ErrorKind::InvalidArgument,
                at as u64,
                &"nal length: a NAL unit is longer than the length field holds (ISO/IEC 14496-15 5.3.2)",
            ))?;
            *slot = nal;
            count += 1;
        }
        if count == 0 {
            return Ok(total);
        }
        let mut parts: [&[u8]; 2 * BATCH] = [&[]; 2 * BATCH];
        for ((pair, prefix), nal) in parts.chunks_exact_mut(2).zip(&prefixes).zip(&batch).take(count) {
            if let [p, d] = pair {
                *p = prefix.get(..n).unwrap_or(&[]);
                *d = nal;
            }
            total += (n + nal.len()) as u64;
        }
        sink.write_vectored(parts.get(..2 * count).unwrap_or(&[]))?;
    }
}

/// The size of the sample [`write_length_prefixed`] would write for `au`,
/// without writing it.
///
/// Errors: as [`write_length_prefixed`] for a NAL unit too long for the
/// length field.
pub fn length_prefixed_size(au: &[u8], opts: LengthPrefixOptions) -> Result<u64> {
    write_length_prefixed(&mut CountingSink::default(), au, opts)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sink::SliceSink;

    fn split(d: &[u8]) -> std::vec::Vec<&[u8]> {
        AnnexBNalUnits::new(d).collect()
    }

    extern crate std;

    #[test]
    fn splits_as_ffmpeg_does() {
        // Three- and four-byte start codes; junk before the first.
        let d = [9, 0, 0, 0, 1, 0x67, 1, 2, 0, 0, 1, 0x68, 3, 0, 0, 0, 1, 0x65, 4];
        assert_eq!(split(&d), [&[0x67, 1, 2][..], &[0x68, 3], &[0x65, 4]]);
        // trailing_zero_8bits: only the start code's own zero is dropped
        // (one of the four zeros here stays); zeros at the end stay.
        let d = [0, 0, 1, 0x09, 0xF0, 0, 0, 0, 0, 1, 0x65, 7, 0, 0];
        assert_eq!(split(&d), [&[0x09, 0xF0, 0][..], &[0x65, 7, 0, 0]]);
        // Two start codes in a row: an empty NAL unit, as ffmpeg writes.
        let d = [0, 0, 1, 0, 0, 1, 0x41];
        assert_eq!(split(&d), [&[][..], &[0x41]]);
        // A start code that ends the input is not one.
        let d = [0, 0, 1, 0x41, 5, 0, 0, 1];
        assert_eq!(split(&d), [&[0x41, 5, 0, 0, 1][..]]);
        // Nothing to split.
        assert!(split(&[]).is_empty());
        assert!(split(&[0, 0, 0]).is_empty());
        assert!(split(&[0, 0, 1]).is_empty());
        assert!(split(&[1, 2, 3, 4]).is_empty());
    }

    #[test]
    fn writes_prefixes_and_borrows_the_nal_units() {
        let au = [0, 0, 0, 1, 0x09, 0xF0, 0, 0, 1, 0x67, 1, 2, 0, 0, 1, 0x65, 4];
        let mut buf = [0u8; 32];
        let mut s = SliceSink::new(&mut buf);
        let n = write_length_prefixed(&mut s, &au, LengthPrefixOptions::default()).unwrap();
        assert_eq!(
            s.written(),
            [0, 0, 0, 2, 0x09, 0xF0, 0, 0, 0, 3, 0x67, 1, 2, 0, 0, 0, 2, 0x65, 4]
        );
        assert_eq!((n, s.stats().writes), (19, 1));
        assert_eq!(length_prefixed_size(&au, LengthPrefixOptions::default()), Ok(19));
        let opts = LengthPrefixOptions {
            length_size: LengthSize::Two,
            keep: KeepNals::DropParameterSetsAndAud(NalCodec::H264),
        };
        let mut buf = [0u8; 32];
        let mut s = SliceSink::new(&mut buf);
        assert_eq!(write_length_prefixed(&mut s, &au, opts), Ok(4));
        assert_eq!(s.written(), [0, 2, 0x65, 4]);
    }

    #[test]
    fn many_nal_units_go_in_batches_and_errors_are_clean() {
        let mut au = [0u8; 4 * 20];
        for c in au.chunks_exact_mut(4) {
            c.copy_from_slice(&[0, 0, 1, 0x41]);
        }
        let mut buf = [0u8; 64];
        let mut s = SliceSink::new(&mut buf);
        let opts = LengthPrefixOptions {
            length_size: LengthSize::One,
            ..Default::default()
        };
        assert_eq!(write_length_prefixed(&mut s, &au, opts), Ok(40));
        assert_eq!(s.stats().writes, 3);
        assert_eq!(&s.written()[..4], [1, 0x41, 1, 0x41]);
        // A NAL unit longer than a one-byte length holds.
        let mut big = [0x41u8; 300];
        big[..3].copy_from_slice(&[0, 0, 1]);
        let e = length_prefixed_size(&big, opts).unwrap_err();
        assert_eq!((e.kind(), e.offset()), (ErrorKind::InvalidArgument, 3));
        // A sink with no room.
        let mut small = [0u8; 3];
        let mut s = SliceSink::new(&mut small);
        let au = [0, 0, 1, 0x65, 1, 2];
        let e = write_length_prefixed(&mut s, &au, LengthPrefixOptions::default()).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::SinkFull);
    }
}
