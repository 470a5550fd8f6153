//! Which of ffmpeg's parsers cuts a stream's PES payloads, and what a
//! frame header says to it: length, samples and sample rate (ADTS, AC-3 and
//! E-AC-3, MPEG audio, LATM), and the time step from one frame to the next.

use crate::codec::{ac3::Ac3Header, adts::AdtsHeader, mpa::MpaHeader};
use crate::types::Codec;

/// Which parser cuts a track's PES payloads.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) enum Kind {
    /// Not cut: one packet per PES.
    #[default]
    None,
    Adts,
    Ac3,
    Mpa,
    /// AAC in LATM/LOAS (ISO/IEC 14496-3 §1.7.2 AudioSyncStream).
    Latm,
}

impl Kind {
    pub(crate) fn of(codec: Codec) -> Kind {
        match codec {
            Codec::Aac => Kind::Adts,
            Codec::Ac3 | Codec::Eac3 => Kind::Ac3,
            Codec::Mp2 | Codec::Mp3 => Kind::Mpa,
            Codec::AacLatm => Kind::Latm,
            _ => Kind::None,
        }
    }

    /// Whether `b`, the first bytes of a would-be header (fewer than a
    /// header), can begin one: its sync bits as far as they go (ADTS
    /// 0xFFF, AC-3 0x0B77, MPEG audio 0x7FF, LATM 0x2B7). Every header
    /// [`Kind::measure`] accepts passes.
    pub(super) fn could_start(self, b: &[u8]) -> bool {
        let (s0, s1, m1) = match self {
            Kind::Adts => (0xFF, 0xF0, 0xF0),
            Kind::Ac3 => return crate::codec::ac3::sync_prefix(b),
            Kind::Mpa => return crate::codec::mpa::sync_prefix(b),
            Kind::Latm => (0x56, 0xE0, 0xE0),
            Kind::None => return false,
        };
        b.first().is_none_or(|&x| x == s0) && b.get(1).is_none_or(|&x| x & m1 == s1)
    }

    /// Frame length, samples per channel, sample rate and, for AC-3,
    /// whether it is an E-AC-3 dependent substream.
    pub(super) fn measure(self, h: &[u8]) -> Option<(usize, u32, u32, bool)> {
        match self {
            Kind::Adts => AdtsHeader::parse(h).map(|a| (a.frame_len as usize, a.samples(), a.sample_rate, false)),
            Kind::Ac3 => {
                Ac3Header::parse(h).map(|a| (a.frame_len as usize, a.samples(), a.sample_rate, !a.starts_packet()))
            }
            Kind::Mpa => {
                let w = crate::bytes::be32(h, 0)?;
                MpaHeader::parse_sized(w).map(|m| (m.frame_len as usize, m.samples, m.sample_rate, false))
            }
            Kind::Latm => latm(h),
            Kind::None => None,
        }
    }
}

/// An AudioSyncStream frame (ISO/IEC 14496-3 §1.7.2: syncword 0x2B7,
/// audioMuxLengthBytes), with the sampling frequency of the
/// AudioSpecificConfig when the frame carries its StreamMuxConfig
/// (§1.7.3; 0 when it does not, or when the header bytes do not reach it).
fn latm(h: &[u8]) -> Option<(usize, u32, u32, bool)> {
    let (&[b0, b1, b2], rest) = (<&[u8; 3]>::try_from(h.get(..3)?).ok()?, h.get(3..)?);
    if b0 != 0x56 || b1 & 0xE0 != 0xE0 {
        return None;
    }
    let len = ((((b1 & 0x1F) as usize) << 8) | b2 as usize) + 3;
    let mut r = crate::codec::bits::BitReader::new(rest);
    let mut rate = 0;
    // useSameStreamMux 0, audioMuxVersion 0: allStreamsSameTimeFraming,
    // numSubFrames, numProgram, numLayer, then the AudioSpecificConfig.
    if !r.bit() && !r.bit() {
        r.skip(14);
        if r.bits(5) == 31 {
            r.skip(6);
        }
        rate = *crate::codec::adts::SAMPLE_RATES.get(r.bits(4) as usize)?;
    }
    Some((len, 1024, rate, false))
}

/// `ts` plus one frame of `samples / rate` seconds in 1/90000, as ffmpeg's
/// `av_add_stable` adds it (stays on the frame grid without drifting).
///
/// In 64 bits while no step overflows (every real time stamp: one AAC frame
/// costs a few divisions instead of 128-bit ones, 9% of a TS walk's
/// instructions before); in 128 bits otherwise, with the same result.
pub(super) fn add_stable(ts: i64, samples: u32, rate: u32) -> i64 {
    add_stable_narrow(ts, samples, rate).unwrap_or_else(|| add_stable_wide(ts, samples, rate))
}

/// [`add_stable`] in `i64`; `None` when a step would overflow.
fn add_stable_narrow(ts: i64, samples: u32, rate: u32) -> Option<i64> {
    let (m, d) = (i64::from(samples) * 90_000, i64::from(rate.max(1)));
    if m % d == 0 {
        return ts.checked_add(m / d);
    }
    let near = |a: i64, b: i64, c: i64| Some(a.checked_mul(b)?.checked_add(c / 2)?.div_euclid(c));
    let old = near(ts, d, m)?;
    let old_ts = near(old, m, d)?;
    near(old.checked_add(1)?, m, d)?.checked_add(ts)?.checked_sub(old_ts)
}

/// [`add_stable`] in `i128`.
pub(super) fn add_stable_wide(ts: i64, samples: u32, rate: u32) -> i64 {
    let (m, d) = (samples as i128 * 90_000, rate.max(1) as i128);
    let t = ts as i128;
    if m % d == 0 {
        return (t + m / d) as i64;
    }
    let near = |a: i128, b: i128, c: i128| (a * b + c / 2).div_euclid(c);
    let old = near(t, d, m);
    let old_ts = near(old, m, d);
    (near(old + 1, m, d) + t - old_ts) as i64
}

/// One frame's duration in 1/90000, rounded down.
pub(super) fn ticks(samples: u32, rate: u32) -> u64 {
    (samples as u64 * 90_000) / rate.max(1) as u64
}
