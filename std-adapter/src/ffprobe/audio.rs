//! Audio facts ffprobe takes from the codec rather than the container: the
//! channel count, sample rate and bit depth the decoder reports, from the
//! codec configuration or the first packet's header.
//!
//! - AAC: the AudioSpecificConfig's channel configuration (1 to 7) wins
//!   over the sample entry's count (an MP4 `mp4a` entry says 2 for mono);
//!   an ADTS header fills a count or rate the container does not state
//!   (MPEG-TS).
//! - AMR: ffmpeg's AMR decoders are mono.
//! - Opus: decoded at 48 kHz, whatever rate the container states.
//! - AC-3 / E-AC-3: the sync frame's `acmod` and `lfeon`, else MP4's
//!   `dac3`.
//! - MPEG audio and DTS: the first frame's header, when the container
//!   states no count or rate.
//! - ALAC: the magic cookie's channel count and bit depth.
//! - the stream bit rate, when the container states none: the first
//!   frame header's (AC-3, E-AC-3, MPEG audio, DTS), as ffmpeg's parsers
//!   set it.
//!
//! An SBR or PS extension that only decoding finds (implicit signalling,
//! HE-AAC's doubled rate, PS's second channel) is not seen.

use mediaslice::codec::ac3::Ac3Header;
use mediaslice::codec::adts::AdtsHeader;
use mediaslice::codec::mpa::MpaHeader;
use mediaslice::{Codec, Track, TrackKind};

/// The channel counts of AAC channel configurations 1 to 7.
const AAC_CHANNELS: [u16; 8] = [0, 1, 2, 3, 4, 5, 6, 8];

/// Refines `t`'s channel count, sample rate and bit depth as described in
/// the module notes; `config` is its codec configuration, `first` its first
/// packet (either may be empty).
pub fn refine(t: &mut Track, config: &[u8], first: &[u8]) {
    if t.kind != TrackKind::Audio {
        return;
    }
    match t.codec {
        Codec::Aac => aac(t, config, first),
        // ffmpeg's Opus decoder always outputs 48 kHz, whatever rate the
        // container states (Matroska's SamplingFrequency, the input rate).
        Codec::Opus => t.sample_rate = 48_000,
        Codec::AmrNb | Codec::AmrWb => {
            t.channels = 1;
            if t.sample_rate == 0 {
                t.sample_rate = if t.codec == Codec::AmrNb { 8000 } else { 16_000 };
            }
        }
        Codec::Ac3 | Codec::Eac3 => {
            if let Some(h) = Ac3Header::parse(first) {
                t.channels = h.channels;
                t.sample_rate = h.sample_rate;
            } else if let Some(c) = dac3_channels(config) {
                t.channels = c;
            }
        }
        Codec::Mp1 | Codec::Mp2 | Codec::Mp3 if t.channels == 0 || t.sample_rate == 0 => {
            if let Some(h) = MpaHeader::parse_bytes(first) {
                t.channels = u16::from(h.channels);
                t.sample_rate = h.sample_rate;
            }
        }
        Codec::Dts if t.channels == 0 || t.sample_rate == 0 => {
            if let Some((c, r)) = dts_core(first) {
                t.channels = c;
                t.sample_rate = r;
            }
        }
        Codec::Alac => {
            // The 24-byte ALACSpecificConfig, after a version and flags
            // or a whole box header when the container keeps them.
            let cookie = match config.len() {
                28 => config.get(4..),
                36 => config.get(12..),
                _ => Some(config),
            };
            if let Some(&[bits, _, _, _, ch]) = cookie.and_then(|c| c.get(5..10)) {
                if ch > 0 {
                    t.channels = u16::from(ch);
                }
                if bits > 0 {
                    t.bits_per_sample = u16::from(bits);
                }
            }
        }
        _ => {}
    }
}

fn aac(t: &mut Track, config: &[u8], first: &[u8]) {
    if let [a, b, ..] = *config {
        let object_type = a >> 3;
        let sr_index = ((a & 7) << 1) | (b >> 7);
        let channel_config = (b >> 3) & 0xF;
        // A 31 escape or an explicit rate moves the fields: only the plain
        // layout is read.
        if object_type != 31 && sr_index != 15 {
            if let Some(&c) = AAC_CHANNELS.get(usize::from(channel_config)).filter(|&&c| c > 0) {
                t.channels = c;
            }
            if t.sample_rate == 0 {
                t.sample_rate = mediaslice::codec::adts::SAMPLE_RATES
                    .get(usize::from(sr_index))
                    .copied()
                    .unwrap_or(0);
            }
        }
        return;
    }
    if let Some(h) = AdtsHeader::parse(first) {
        if t.channels == 0 {
            t.channels = AAC_CHANNELS.get(usize::from(h.channel_config)).copied().unwrap_or(0);
        }
        if t.sample_rate == 0 {
            t.sample_rate = h.sample_rate;
        }
    }
}

/// The bit rate ffmpeg's parser states for a stream from its first frame's
/// header (AC-3, E-AC-3, MPEG audio, DTS), for containers that state none.
pub fn header_bit_rate(t: &Track, first: &[u8]) -> Option<u32> {
    match t.codec {
        Codec::Ac3 | Codec::Eac3 => Ac3Header::parse(first).map(|h| h.bit_rate),
        Codec::Mp1 | Codec::Mp2 | Codec::Mp3 => MpaHeader::parse_bytes(first).map(|h| h.bit_rate),
        Codec::Dts => dts_bit_rate(first),
        _ => None,
    }
    .filter(|&b| b > 0)
}

/// The samples of one frame as ffmpeg's `av_get_audio_frame_duration`
/// states them for a packet it has not parsed: fixed by the codec (MPEG
/// audio Layer I 384, Layer II 1152, AC-3 1536, AMR 160 and 320), or the
/// decoder's frame size (AAC 1024; Layer III 1152, 576 at the MPEG-2 and
/// 2.5 rates below 32 kHz); 0 where neither is known (E-AC-3, DTS, LATM).
pub fn frame_samples(t: &Track) -> u64 {
    match t.codec {
        Codec::Aac => 1024,
        Codec::Mp1 => 384,
        Codec::Mp2 => 1152,
        Codec::Mp3 if t.sample_rate >= 32_000 => 1152,
        Codec::Mp3 => 576,
        Codec::Ac3 => 1536,
        Codec::AmrNb => 160,
        Codec::AmrWb => 320,
        _ => 0,
    }
}

/// One frame of [`frame_samples`] in `t`'s time base, rounded down (as
/// ffmpeg's `compute_frame_duration` gives a raw packet its duration).
pub fn frame_ticks(t: &Track) -> i64 {
    let den = u128::from(t.sample_rate) * u128::from(t.time_base.num);
    if den == 0 {
        return 0;
    }
    i64::try_from(u128::from(frame_samples(t)) * u128::from(t.time_base.den) / den).unwrap_or(0)
}

/// The bit rate of a DTS core frame header (its `RATE` index).
fn dts_bit_rate(b: &[u8]) -> Option<u32> {
    if b.get(..4)? != [0x7F, 0xFE, 0x80, 0x01] {
        return None;
    }
    let w = u64::from_be_bytes(b.get(4..12)?.try_into().ok()?);
    let rate = ((w >> (64 - 38 - 5)) & 0x1F) as usize;
    [
        32_000u32, 56_000, 64_000, 96_000, 112_000, 128_000, 192_000, 224_000, 256_000, 320_000, 384_000, 448_000,
        512_000, 576_000, 640_000, 768_000, 960_000, 1_024_000, 1_152_000, 1_280_000, 1_344_000, 1_408_000, 1_411_200,
        1_472_000, 1_536_000,
    ]
    .get(rate)
    .copied()
}

/// The channel count of an MP4 `dac3` body (`acmod` and `lfeon`).
fn dac3_channels(c: &[u8]) -> Option<u16> {
    if c.len() != 3 {
        return None;
    }
    let bits = u32::from_be_bytes([0, *c.first()?, *c.get(1)?, *c.get(2)?]);
    let acmod = (bits >> 11) & 7;
    let lfe = (bits >> 10) & 1;
    let base = [2u16, 1, 2, 3, 3, 4, 4, 5].get(acmod as usize).copied()?;
    Some(base + lfe as u16)
}

/// The channel count and rate of a DTS core frame header.
fn dts_core(b: &[u8]) -> Option<(u16, u32)> {
    if b.get(..4)? != [0x7F, 0xFE, 0x80, 0x01] {
        return None;
    }
    let w = u64::from_be_bytes(b.get(4..12)?.try_into().ok()?);
    // After the sync word: FTYPE 1, SHORT 5, CPF 1, NBLKS 7, FSIZE 14,
    // AMODE 6, SFREQ 4, RATE 5, then 10 flag bits, LFF 2.
    let field = |at: u32, n: u32| ((w >> (64 - at - n)) & ((1 << n) - 1)) as usize;
    let amode = field(28, 6);
    let sfreq = field(34, 4);
    let lff = field(53, 2);
    let channels = [1u16, 2, 2, 2, 2, 3, 3, 4, 4, 5, 6, 6, 6, 7, 8, 8]
        .get(amode)
        .copied()?;
    let rate = [
        0u32, 8000, 16_000, 32_000, 0, 0, 11_025, 22_050, 44_100, 0, 0, 12_000, 24_000, 48_000, 0, 0,
    ]
    .get(sfreq)
    .copied()
    .filter(|&r| r > 0)?;
    Some((channels + u16::from(lff != 0), rate))
}

/// The encoder string of an MP3's Xing/Info frame (the LAME extension's
/// first 9 bytes), which ffmpeg states as the stream's `encoder` tag when
/// it begins `LAME`, `Lavf` or `Lavc`. The Info frame is the one just
/// before the first audio packet at `first_pos`.
pub fn mp3_encoder<S: mediaslice::Source>(src: &mut S, first_pos: u64) -> Option<String> {
    const WINDOW: u64 = 2048;
    let from = first_pos.saturating_sub(WINDOW);
    let mut buf = vec![0u8; usize::try_from(first_pos - from).ok()?];
    let n = src.read_at(from, &mut buf).ok()?;
    let buf = buf.get(..n)?;
    let at = buf.windows(4).position(|w| w == b"Xing" || w == b"Info")?;
    // The tag follows the frame header and the side information (32, 17
    // or 9 bytes).
    let synced = [36usize, 21, 13].iter().any(|&back| {
        at.checked_sub(back)
            .and_then(|h| buf.get(h..h + 2))
            .is_some_and(|b| b[0] == 0xFF && b[1] & 0xE0 == 0xE0)
    });
    if !synced {
        return None;
    }
    let flags = u32::from_be_bytes(buf.get(at + 4..at + 8)?.try_into().ok()?);
    let mut off = at + 8;
    for (bit, len) in [(1, 4), (2, 4), (4, 100), (8, 4)] {
        if flags & bit != 0 {
            off += len;
        }
    }
    let version = buf.get(off..off + 9)?;
    if !matches!(version.get(..4), Some(b"LAME" | b"Lavf" | b"Lavc")) {
        return None;
    }
    let end = version.iter().position(|&b| b == 0).unwrap_or(version.len());
    Some(String::from_utf8_lossy(version.get(..end)?).into_owned())
}

/// The `dwChannelMask` of a RIFF WAVE file's `fmt ` chunk when it is a
/// WAVE_FORMAT_EXTENSIBLE (tag 0xFFFE with at least 22 extra bytes). The
/// chunks are walked from the start, at most 64 of them.
pub fn wav_channel_mask<S: mediaslice::Source>(src: &mut S) -> Option<u32> {
    let mut at = 12u64;
    for _ in 0..64 {
        let mut h = [0u8; 8];
        if src.read_at(at, &mut h).ok()? < 8 {
            return None;
        }
        let len = u64::from(u32::from_le_bytes(h.get(4..8)?.try_into().ok()?));
        if h.get(..4)? == b"fmt " {
            let mut f = [0u8; 24];
            if len < 40 || src.read_at(at + 8, &mut f).ok()? < 24 {
                return None;
            }
            let tag = u16::from_le_bytes(f.get(..2)?.try_into().ok()?);
            let extra = u16::from_le_bytes(f.get(16..18)?.try_into().ok()?);
            if tag != 0xFFFE || extra < 22 {
                return None;
            }
            return Some(u32::from_le_bytes(f.get(20..24)?.try_into().ok()?));
        }
        at = at.checked_add(8 + len + (len & 1))?;
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn audio(codec: Codec, channels: u16) -> Track {
        Track {
            kind: TrackKind::Audio,
            codec,
            channels,
            sample_rate: 44_100,
            ..Track::default()
        }
    }

    #[test]
    fn aac_config_gives_the_count() {
        let mut t = audio(Codec::Aac, 2);
        // LC, 44.1 kHz, mono.
        refine(&mut t, &[0x12, 0x08], &[]);
        assert_eq!(t.channels, 1);
        let mut t = audio(Codec::AmrNb, 2);
        refine(&mut t, &[], &[]);
        assert_eq!(t.channels, 1);
    }

    #[test]
    fn raw_frame_durations() {
        let mut t = audio(Codec::Aac, 2);
        t.sample_rate = 48_000;
        t.time_base = mediaslice::Rational::new(1, 90_000);
        // 1024 samples at 48 kHz: 1920 ticks of 90 kHz.
        assert_eq!(frame_ticks(&t), 1920);
        t.codec = Codec::Mp3;
        t.sample_rate = 22_050;
        // 576 samples at 22.05 kHz: 2351.02 ticks, rounded down.
        assert_eq!(frame_ticks(&t), 2351);
        t.codec = Codec::Eac3;
        assert_eq!(frame_ticks(&t), 0);
        t.sample_rate = 0;
        t.codec = Codec::Ac3;
        assert_eq!(frame_ticks(&t), 0);
    }

    #[test]
    fn dac3_counts_lfe() {
        // fscod 0, bsid 8, bsmod 0, acmod 7, lfeon 1.
        assert_eq!(dac3_channels(&[0x10, 0x3C, 0x00]), Some(6));
    }

    #[test]
    fn dts_core_header() {
        // AMODE 9 (5 channels), SFREQ 13 (48 kHz), LFF 1.
        let w: u64 = (9 << 30) | (13 << 26) | (1 << 9);
        let mut b = vec![0x7F, 0xFE, 0x80, 0x01];
        b.extend_from_slice(&w.to_be_bytes());
        assert_eq!(dts_core(&b), Some((6, 48_000)));
        let w: u64 = 15 << 21;
        let mut b = vec![0x7F, 0xFE, 0x80, 0x01];
        b.extend_from_slice(&w.to_be_bytes());
        assert_eq!(dts_bit_rate(&b), Some(768_000));
    }

    #[test]
    fn mp3_info_frame_encoder() {
        // An MPEG-1 Layer III stereo frame header, 32 bytes of side
        // information, then "Info" with frames and bytes, then LAME's
        // version string; the first audio frame follows at 200.
        let mut b = vec![0u8; 200];
        b[..4].copy_from_slice(&[0xFF, 0xFB, 0x90, 0x00]);
        b[36..40].copy_from_slice(b"Info");
        b[40..44].copy_from_slice(&3u32.to_be_bytes());
        b[52..61].copy_from_slice(b"LAME3.99r");
        let mut src = mediaslice::SliceSource::new(&b);
        assert_eq!(mp3_encoder(&mut src, 200).as_deref(), Some("LAME3.99r"));
        // Another encoder's string is not ffmpeg's `encoder`.
        b[52..56].copy_from_slice(b"GOGO");
        let mut src = mediaslice::SliceSource::new(&b);
        assert_eq!(mp3_encoder(&mut src, 200), None);
    }

    #[test]
    fn wave_extensible_mask() {
        let mut b = b"RIFF\0\0\0\0WAVEfmt \x28\0\0\0".to_vec();
        let mut fmt = [0u8; 40];
        fmt[..2].copy_from_slice(&0xFFFEu16.to_le_bytes());
        fmt[16..18].copy_from_slice(&22u16.to_le_bytes());
        fmt[20..24].copy_from_slice(&0x3Fu32.to_le_bytes());
        b.extend_from_slice(&fmt);
        let mut src = mediaslice::SliceSource::new(&b);
        assert_eq!(wav_channel_mask(&mut src), Some(0x3F));
        // Plain PCM states no mask.
        b[20] = 1;
        b[21] = 0;
        let mut src = mediaslice::SliceSource::new(&b);
        assert_eq!(wav_channel_mask(&mut src), None);
    }
}
