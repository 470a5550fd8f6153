//! ADTS frame headers (ISO/IEC 13818-7 §6.2 `adts_fixed_header` and
//! `adts_variable_header`; ISO/IEC 14496-3 §1.A.2.2).

/// Length of an ADTS header without CRC.
pub const HEADER_LEN: usize = 7;

/// Sampling frequencies by `sampling_frequency_index` (ISO/IEC 14496-3
/// Table 1.18); 0 marks the reserved indexes.
pub const SAMPLE_RATES: [u32; 16] = [
    96000, 88200, 64000, 48000, 44100, 32000, 24000, 22050, 16000, 12000, 11025, 8000, 7350, 0, 0, 0,
];

/// A decoded ADTS header.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AdtsHeader {
    /// `ID`: true for MPEG-2 AAC, false for MPEG-4.
    pub mpeg2: bool,
    /// `layer` (always 0 in valid streams).
    pub layer: u8,
    /// Whether a CRC (`adts_error_check`) follows the header.
    pub crc: bool,
    /// Audio object type: `profile_ObjectType` + 1 (2 = AAC LC).
    pub object_type: u8,
    /// `sampling_frequency_index`.
    pub sr_index: u8,
    /// Sampling frequency in Hz.
    pub sample_rate: u32,
    /// `channel_configuration` (0 = defined in the payload).
    pub channel_config: u8,
    /// `aac_frame_length`: the whole frame with its header.
    pub frame_len: u16,
    /// `number_of_raw_data_blocks_in_frame` + 1.
    pub blocks: u8,
}

impl AdtsHeader {
    /// Whether `b` starts with the 12-bit ADTS sync word.
    pub fn has_sync(b: &[u8]) -> bool {
        matches!(b, [0xFF, x, ..] if x & 0xF0 == 0xF0)
    }

    /// Parses the header at the start of `b` with the checks ffmpeg's
    /// `ff_adts_header_parse` makes: sync word, a defined sampling
    /// frequency, a frame length of at least the header.
    pub fn parse(b: &[u8]) -> Option<Self> {
        let h: [u8; 7] = b.get(..HEADER_LEN)?.try_into().ok()?;
        if h[0] != 0xFF || h[1] & 0xF0 != 0xF0 {
            return None;
        }
        let sr_index = (h[2] >> 2) & 0xF;
        let sample_rate = *SAMPLE_RATES.get(sr_index as usize)?;
        if sample_rate == 0 {
            return None;
        }
        let frame_len = (((h[3] & 3) as u16) << 11) | ((h[4] as u16) << 3) | ((h[5] >> 5) as u16);
        if (frame_len as usize) < HEADER_LEN {
            return None;
        }
        Some(AdtsHeader {
            mpeg2: h[1] & 0x08 != 0,
            layer: (h[1] >> 1) & 3,
            crc: h[1] & 1 == 0,
            object_type: (h[2] >> 6) + 1,
            sr_index,
            sample_rate,
            channel_config: ((h[2] & 1) << 2) | (h[3] >> 6),
            frame_len,
            blocks: (h[6] & 3) + 1,
        })
    }

    /// Samples per channel in the frame (1024 per raw data block).
    pub const fn samples(&self) -> u32 {
        self.blocks as u32 * 1024
    }

    /// Channel count implied by `channel_configuration` (ISO/IEC 14496-3
    /// Table 1.19; 7 is 8 channels), 0 when the payload defines it.
    pub const fn channels(&self) -> u16 {
        match self.channel_config {
            7 => 8,
            c => c as u16,
        }
    }

    /// Whether two headers belong to one stream (same ID, layer, profile,
    /// sampling frequency and channel configuration).
    pub fn same_stream(&self, o: &Self) -> bool {
        self.mpeg2 == o.mpeg2
            && self.layer == o.layer
            && self.object_type == o.object_type
            && self.sr_index == o.sr_index
            && self.channel_config == o.channel_config
    }
}

/// The start of the next ADTS sync word (12 ones) in `data` at or after
/// `from`.
pub fn find_sync(data: &[u8], from: usize) -> Option<usize> {
    let rest = data.get(from..)?;
    rest.windows(2)
        .position(|w| matches!(w, [0xFF, x] if x & 0xF0 == 0xF0))
        .map(|p| p + from)
}

/// An ADTS header with no CRC and one raw data block, `b2` its third
/// byte (profile, sampling frequency index, private bit, channel
/// configuration's high bit), for a frame of `len` bytes (header
/// included); channel configuration 2. For tests.
#[cfg(test)]
pub(crate) fn test_header(b2: u8, len: u16) -> [u8; 7] {
    [
        0xFF,
        0xF1,
        b2,
        0x80 | (len >> 11) as u8,
        (len >> 3) as u8,
        ((len & 7) << 5) as u8 | 0x1F,
        0xFC,
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_lc_stereo_44k() {
        // AAC LC, 44.1 kHz, 2 channels, 371 bytes, one block, no CRC.
        let h = test_header(0x50, 371);
        let a = AdtsHeader::parse(&h).unwrap();
        assert_eq!(
            (a.object_type, a.sample_rate, a.channels(), a.frame_len),
            (2, 44100, 2, 371)
        );
        assert!(!a.crc && !a.mpeg2);
        assert_eq!(a.samples(), 1024);
        assert_eq!(find_sync(&[0, 1, 0xFF, 0xF1], 0), Some(2));
        assert!(AdtsHeader::parse(&[0xFF, 0xF1, 0x7C, 0, 0, 0, 0]).is_none());
    }
}
