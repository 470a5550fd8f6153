//! Raw AAC frames + `AudioSpecificConfig` → ADTS (ISO/IEC 14496-3
//! §1.A.2.2), the inverse of [`super::adts`]: a 7-byte header (no CRC)
//! written before each borrowed frame, as ffmpeg's `adts` wrapper does.
//! The MPEG-TS muxer needs it (stream_type 0x0F carries ADTS).

use crate::codec::bits::BitReader;
use crate::error::{Error, Result};

/// The fixed part of the ADTS headers of a stream, from its
/// AudioSpecificConfig (§1.6.2.1).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AdtsFromConfig {
    /// profile_ObjectType: audioObjectType - 1 (1 to 4 only).
    profile: u8,
    sr_index: u8,
    channel_config: u8,
}

/// Most bytes of an ADTS frame: frame_length has 13 bits.
const MAX_FRAME: usize = 0x1FFF;

impl AdtsFromConfig {
    /// The header fields from an AudioSpecificConfig: audioObjectType,
    /// samplingFrequencyIndex, channelConfiguration; for explicit SBR/PS
    /// signalling (types 5, 29) the core object type that follows, as
    /// ffmpeg does.
    ///
    /// Errors: `Unsupported` for what ADTS cannot say: an object type
    /// outside 1..=4, an explicit sampling frequency (index 15), a
    /// channel configuration of 0 (a program_config_element); `Truncated`
    /// when the config is shorter than its fields.
    pub fn parse(asc: &[u8]) -> Result<Self> {
        let short = || {
            Error::truncated(
                0,
                &"ts muxer: AudioSpecificConfig shorter than its fields (ISO/IEC 14496-3 1.6.2.1)",
            )
        };
        let mut r = BitReader::new(asc);
        // `n` bits, or Truncated when the config ends before them.
        let mut read = |n: u32| {
            let v = r.bits(n);
            if r.overrun() {
                Err(short())
            } else {
                Ok(v)
            }
        };
        let mut aot = read(5)?;
        if aot == 31 {
            aot = 32 + read(6)?;
        }
        let sr = read(4)?;
        if sr == 15 {
            return Err(Error::unsupported(
                0,
                &"ts muxer: AAC with an explicit sampling frequency has no ADTS form (ISO/IEC 14496-3 1.A.2.2)",
            ));
        }
        let channels = read(4)?;
        if aot == 5 || aot == 29 {
            // extensionSamplingFrequencyIndex (and its explicit 24-bit
            // frequency), then the core object type.
            if read(4)? == 15 {
                read(24)?;
            }
            aot = read(5)?;
        }
        if !(1..=4).contains(&aot) {
            return Err(Error::unsupported(
                0,
                &"ts muxer: an AAC object type other than Main, LC, SSR, LTP has no ADTS form (ISO/IEC 14496-3 1.A.2.2)",
            ));
        }
        if channels == 0 || channels > 7 {
            return Err(Error::unsupported(
                0,
                &"ts muxer: AAC with channelConfiguration 0 (a program_config_element) is not written as ADTS here",
            ));
        }
        Ok(AdtsFromConfig {
            profile: (aot - 1) as u8,
            sr_index: sr as u8,
            channel_config: channels as u8,
        })
    }

    /// The 7-byte header of a frame of `len` raw bytes: MPEG-4, no CRC,
    /// buffer fullness 0x7FF (variable rate), one raw data block.
    ///
    /// Errors: `Unsupported` when header and frame exceed 8191 bytes.
    pub fn header(&self, len: usize) -> Result<[u8; 7]> {
        let total = len + 7;
        if total > MAX_FRAME {
            return Err(Error::unsupported(
                0,
                &"ts muxer: an AAC frame over 8184 bytes does not fit ADTS's 13-bit frame_length",
            ));
        }
        let t = total as u32;
        Ok([
            0xFF,
            0xF1,
            (self.profile << 6) | (self.sr_index << 2) | (self.channel_config >> 2),
            ((self.channel_config & 3) << 6) | ((t >> 11) as u8 & 3),
            (t >> 3) as u8,
            (((t & 7) as u8) << 5) | 0x1F,
            0xFC,
        ])
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::codec::adts::AdtsHeader;

    #[test]
    fn lc_stereo_48k_header_parses_back() {
        // AAC-LC, 48 kHz (index 3), stereo.
        let a = AdtsFromConfig::parse(&[0x11, 0x90]).unwrap();
        let h = a.header(300).unwrap();
        let p = AdtsHeader::parse(&h).unwrap();
        assert_eq!(
            (p.object_type, p.sample_rate, p.channel_config, p.frame_len, p.crc),
            (2, 48_000, 2, 307, false)
        );
        assert!(a.header(8185).is_err());
        // HE-AAC with explicit signalling: type 5, 24 kHz core, ext
        // 48 kHz, then LC.
        let he = AdtsFromConfig::parse(&[0x2B, 0x11, 0x88, 0x00]).unwrap();
        assert_eq!(he.profile, 1);
        assert!(AdtsFromConfig::parse(&[0x11]).is_err());
        // Object type 42 (USAC) is refused.
        assert!(AdtsFromConfig::parse(&[0xF9, 0x46, 0x40]).is_err());
    }
}
