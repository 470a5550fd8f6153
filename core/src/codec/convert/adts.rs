//! ADTS frame → raw AAC frame and `AudioSpecificConfig` (ISO/IEC 14496-3
//! §1.A.2 for ADTS, §1.6.2.1 for the config), as ffmpeg's `aac_adtstoasc`
//! filter does on `-c copy` from ADTS to MP4, Matroska or FLV.
//!
//! The raw frame is the ADTS frame past its header (7 bytes, or 9 with
//! `adts_error_check`): a sub-slice, nothing copied. The two-byte config is
//! built from the first frame's header.

use crate::codec::adts::{AdtsHeader, HEADER_LEN};
use crate::error::{Error, ErrorKind, Result};

/// The raw AAC frame inside the ADTS frame at the start of `frame`, and
/// the frame's header: `frame[header..aac_frame_length]`, where the header
/// is 7 bytes, 9 with a CRC. Bytes of `frame` past `aac_frame_length` are
/// not part of it.
///
/// Errors: `Malformed` when `frame` does not start with a valid ADTS
/// header or the frame holds no payload; `Truncated` when `frame` is
/// shorter than `aac_frame_length`; `Unsupported` for a frame of more than
/// one raw data block (`number_of_raw_data_blocks_in_frame > 0`: an MP4
/// sample holds one, ISO/IEC 14496-3 §1.6.2.1; ffmpeg refuses these too
/// when they carry a CRC, and passes them whole otherwise).
pub fn adts_to_raw(frame: &[u8]) -> Result<(AdtsHeader, &[u8])> {
    let h = AdtsHeader::parse(frame).ok_or(Error::malformed(
        0,
        &"adts: no valid header (syncword, sampling_frequency_index, aac_frame_length; ISO/IEC 14496-3 1.A.2.2)",
    ))?;
    if h.blocks > 1 {
        return Err(Error::unsupported(
            0,
            &"adts: more than one raw_data_block in a frame (ISO/IEC 14496-3 1.A.2.2.1)",
        ));
    }
    let header = HEADER_LEN + if h.crc { 2 } else { 0 };
    let end = usize::from(h.frame_len);
    if end <= header {
        return Err(Error::malformed(
            0,
            &"adts: aac_frame_length leaves no raw data block (ISO/IEC 14496-3 1.A.2.2.2)",
        ));
    }
    let raw = frame.get(header..end).ok_or(Error::new(
        ErrorKind::Truncated,
        frame.len() as u64,
        &"adts: the frame is shorter than aac_frame_length (ISO/IEC 14496-3 1.A.2.2.2)",
    ))?;
    Ok((h, raw))
}

/// The two-byte `AudioSpecificConfig` (ISO/IEC 14496-3 §1.6.2.1) for a
/// stream of ADTS frames with header `h`: `audioObjectType` (the ADTS
/// profile + 1), `samplingFrequencyIndex`, `channelConfiguration`, then
/// `GASpecificConfig` with `frameLengthFlag`, `dependsOnCoreCoder` and
/// `extensionFlag` all 0. These are the bytes ffmpeg puts in the `esds`.
///
/// Errors: `Unsupported` for `channel_configuration` 0, where the channels
/// are given by a program config element in the payload (ffmpeg copies
/// that PCE into the config; this does not).
pub fn audio_specific_config(h: &AdtsHeader) -> Result<[u8; 2]> {
    if h.channel_config == 0 {
        return Err(Error::unsupported(
            0,
            &"adts: channel_configuration 0 (a program config element) is not carried over (ISO/IEC 14496-3 1.6.2.1)",
        ));
    }
    let ot = h.object_type & 0x1F;
    let sr = h.sr_index & 0xF;
    let ch = h.channel_config & 0xF;
    Ok([ot << 3 | sr >> 1, (sr & 1) << 7 | ch << 3])
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An ADTS header: AAC LC, sampling index `sr`, `ch` channels, `len`
    /// bytes in all, CRC present or not, `blocks` raw data blocks.
    fn header(sr: u8, ch: u8, len: u16, crc: bool, blocks: u8) -> [u8; 7] {
        [
            0xFF,
            0xF0 | u8::from(!crc),
            0x40 | sr << 2 | ch >> 2,
            (ch & 3) << 6 | (len >> 11) as u8,
            (len >> 3) as u8,
            ((len & 7) << 5) as u8 | 0x1F,
            0xFC | (blocks - 1),
        ]
    }

    #[test]
    fn strips_the_header_and_builds_the_config() {
        let mut f = [0xAAu8; 20];
        f[..7].copy_from_slice(&header(4, 2, 12, false, 1));
        let (h, raw) = adts_to_raw(&f).unwrap();
        assert_eq!(raw, [0xAA; 5]);
        // 44.1 kHz stereo LC: 12 10, as in ffmpeg's esds.
        assert_eq!(audio_specific_config(&h), Ok([0x12, 0x10]));
        // With a CRC: 9 header bytes.
        f[..7].copy_from_slice(&header(11, 1, 12, true, 1));
        let (h, raw) = adts_to_raw(&f).unwrap();
        assert_eq!(raw.len(), 3);
        // 8 kHz mono LC: 15 88.
        assert_eq!(audio_specific_config(&h), Ok([0x15, 0x88]));
    }

    #[test]
    fn malformed_frames_are_errors() {
        let mut f = [0u8; 16];
        f[..7].copy_from_slice(&header(4, 2, 16, false, 1));
        assert_eq!(adts_to_raw(&f[..15]).unwrap_err().kind(), ErrorKind::Truncated);
        assert_eq!(adts_to_raw(&f[..6]).unwrap_err().kind(), ErrorKind::Malformed);
        assert_eq!(adts_to_raw(&[0; 16]).unwrap_err().kind(), ErrorKind::Malformed);
        f[..7].copy_from_slice(&header(4, 2, 7, false, 1));
        assert_eq!(adts_to_raw(&f).unwrap_err().kind(), ErrorKind::Malformed);
        f[..7].copy_from_slice(&header(4, 2, 9, true, 1));
        assert_eq!(adts_to_raw(&f).unwrap_err().kind(), ErrorKind::Malformed);
        f[..7].copy_from_slice(&header(4, 2, 16, false, 2));
        assert_eq!(adts_to_raw(&f).unwrap_err().kind(), ErrorKind::Unsupported);
        f[..7].copy_from_slice(&header(4, 0, 16, false, 1));
        let (h, _) = adts_to_raw(&f).unwrap();
        assert_eq!(audio_specific_config(&h).unwrap_err().kind(), ErrorKind::Unsupported);
        for cut in 0..16 {
            let _ = adts_to_raw(&f[..cut]);
        }
    }
}
