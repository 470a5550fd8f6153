//! What the AVI muxer writes in `hdrl` (AVI RIFF reference, "AVI Main
//! Header", "AVI Stream Headers"): which codecs it carries and how each is
//! described, `strh` and `strf` (BITMAPINFOHEADER, WAVEFORMATEX,
//! WAVEFORMATEXTENSIBLE; Microsoft `mmreg.h`).
//!
//! Codecs are those ffmpeg's AVI muxer writes with `-c copy` and readers
//! expect in AVI: MPEG-4 Part 2, H.264 in Annex B form (an `avcC`
//! configuration means length-prefixed NAL units, converted on the way
//! out as ffmpeg's `h264_mp4toannexb` does: [`Framing::AvcC`]), MJPEG,
//! MPEG-1/2 video, PCM, MP1/MP2/MP3, AC-3 and AAC (raw frames with the
//! AudioSpecificConfig; ADTS input loses its headers: [`Framing::Adts`]).
//! Video keeps the input's FourCC when it names the same codec (`XVID`,
//! `DIVX`), else ffmpeg's default one (`FMP4`, `H264`, `MJPG`).

use super::layout::{BitmapInfoHeader, StreamHeader};
use crate::codec::adts::AdtsHeader;
use crate::codec::convert::avcc::AvcConfig;
use crate::codec::riff_layout::{WaveFormat, WaveFormatExtensible};
use crate::codec::riff_tags::{bmp_codec, WAVE_FORMAT_EXTENSIBLE};
use crate::error::{Error, Result};
use crate::types::{Codec, Track, TrackKind};
use zerocopy::little_endian::{I32, U16, U32};

/// WAVEFORMATEX `wFormatTag` of raw AAC (`WAVE_FORMAT_MPEG_HEAAC` is
/// 0x1610; ffmpeg writes and players expect 0x00FF, the AudioSpecificConfig
/// as extra bytes).
pub(super) const WAVE_FORMAT_AAC: u16 = 0x00FF;

/// How a stream is described and counted.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Described {
    /// A video stream with this BITMAPINFOHEADER `biCompression`.
    Video([u8; 4]),
    /// Audio counted in blocks of this many bytes (`dwSampleSize`; PCM).
    Pcm { tag: u16, block: u16 },
    /// Audio, one frame a chunk (`dwSampleSize` 0).
    Frames { tag: u16 },
}

/// How a stream's packets are converted on the way out.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Framing {
    /// Written as they come.
    AsIs,
    /// H.264 length-prefixed NAL units (an `avcC` configuration): written
    /// as Annex B with the parameter sets before each IDR picture
    /// (`codec::convert::to_annexb`), the configuration as Annex B too.
    AvcC,
    /// AAC in ADTS frames (an ADTS header as configuration): the headers
    /// dropped (`codec::convert::adts`), the AudioSpecificConfig built
    /// from the first.
    Adts,
}

/// `KSDATAFORMAT_SUBTYPE_*` GUIDs after their first two bytes (the format
/// tag): `-0000-0010-8000-00AA00389B71`.
const GUID_TAIL: [u8; 14] = [
    0x00, 0x00, 0x00, 0x00, 0x10, 0x00, 0x80, 0x00, 0x00, 0xAA, 0x00, 0x38, 0x9B, 0x71,
];

/// The description of `t` (with configuration `config`) in AVI, and how
/// its packets are converted.
///
/// Errors: `Unsupported` for a codec the muxer does not write, PCM with no
/// block size, AAC with no configuration; `Malformed` for an `avcC` or
/// ADTS header that does not parse.
pub(super) fn describe(t: &Track, config: &[u8]) -> Result<(Described, Framing)> {
    let refuse = |why| Err(Error::unsupported(0, why));
    match t.kind {
        TrackKind::Video => {
            let default = match t.codec {
                Codec::Mpeg4 => *b"FMP4",
                Codec::H264 if config.first() == Some(&1) => {
                    // Annex B now: `H264`, whatever the input's tag (`avc1`).
                    AvcConfig::parse(config)?;
                    return Ok((Described::Video(*b"H264"), Framing::AvcC));
                }
                Codec::H264 => *b"H264",
                Codec::Mjpeg => *b"MJPG",
                Codec::Mpeg1Video => *b"MPG1",
                Codec::Mpeg2Video => *b"MPG2",
                _ => return refuse(
                    &"avi muxer: video codec not written to AVI (MPEG-4 Part 2, H.264 Annex B, MJPEG, MPEG-1/2 are)",
                ),
            };
            let own = t.codec_tag.to_be_bytes();
            let keep = own.iter().all(|b| b.is_ascii_alphanumeric()) && bmp_codec(own) == t.codec;
            Ok((Described::Video(if keep { own } else { default }), Framing::AsIs))
        }
        TrackKind::Audio => {
            let pcm = |tag: u16, bytes: u16| {
                let block = u16::try_from(t.block_align)
                    .ok()
                    .filter(|&b| b > 0)
                    .unwrap_or(t.channels.saturating_mul(bytes));
                if block == 0 || t.sample_rate == 0 {
                    return Err(Error::unsupported(
                        0,
                        &"avi muxer: PCM with no channel count or sample rate",
                    ));
                }
                Ok(Described::Pcm { tag, block })
            };
            let frames = |tag| Ok(Described::Frames { tag });
            let refuse = |why| Err(Error::unsupported(0, why));
            let described = match t.codec {
                Codec::PcmU8 => pcm(0x0001, 1),
                Codec::PcmS16Le => pcm(0x0001, 2),
                Codec::PcmS24Le => pcm(0x0001, 3),
                Codec::PcmS32Le => pcm(0x0001, 4),
                Codec::PcmF32Le => pcm(0x0003, 4),
                Codec::PcmF64Le => pcm(0x0003, 8),
                Codec::PcmAlaw => pcm(0x0006, 1),
                Codec::PcmMulaw => pcm(0x0007, 1),
                Codec::Mp1 | Codec::Mp2 => frames(0x0050),
                Codec::Mp3 => frames(0x0055),
                Codec::Ac3 => frames(0x2000),
                Codec::Aac if AdtsHeader::has_sync(config) => {
                    AdtsHeader::parse(config).ok_or(Error::malformed(
                        0,
                        &"avi muxer: the ADTS header given as AAC configuration does not parse (ISO/IEC 14496-3 1.A.2.2)",
                    ))?;
                    return Ok((Described::Frames { tag: WAVE_FORMAT_AAC }, Framing::Adts));
                }
                Codec::Aac if config.is_empty() => refuse(&"avi muxer: AAC needs an AudioSpecificConfig (or an ADTS header) for WAVEFORMATEX's extra bytes"),
                Codec::Aac => frames(WAVE_FORMAT_AAC),
                _ => refuse(&"avi muxer: audio codec not written to AVI (PCM little-endian, A-law, mu-law, MP1/MP2/MP3, AC-3, AAC are)"),
            };
            Ok((described?, Framing::AsIs))
        }
        _ => refuse(&"avi muxer: only video and audio streams are written"),
    }
}

/// nBlockAlign of a frame-counted audio stream as ffmpeg's
/// `ff_put_wav_header` writes it, and as readers expect it: the samples
/// of an MPEG audio frame (1152, 576 for MPEG-2/2.5 layer III, 384 for
/// layer I), the largest AC-3 frame (3840 bytes). ffmpeg's reader counts a
/// chunk of such a stream as `ceil(size / nBlockAlign)` frames (DirectShow's
/// VBR convention), so the value must be at least a frame's size; 1 would
/// count bytes. The muxer raises it to the largest chunk at the end
/// (an MP2 frame at 384 kbit/s and 32 kHz is 1728 bytes).
pub(super) fn frames_block_align(t: &Track) -> u16 {
    match t.codec {
        Codec::Mp1 => 384,
        Codec::Mp3 if t.sample_rate > 0 && t.sample_rate < 32_000 => 576,
        Codec::Ac3 => 3840,
        // ffmpeg: "maximum bytes per frame", 768 a channel.
        Codec::Aac => 768u16.saturating_mul(t.channels.max(1)),
        _ => 1152,
    }
}

/// Samples in a frame of a frame-counted audio stream whose codec fixes
/// them, as ffmpeg's `frame_size` (which its AVI muxer writes as
/// `dwScale`, the sample rate as `dwRate`): AAC 1024, MP1 384, MP2 1152,
/// MP3 1152 (576 below 32 kHz), AC-3 1536. `None` for video and PCM.
pub(super) fn frame_samples(t: Option<&Track>) -> Option<u32> {
    let t = t?;
    match t.codec {
        Codec::Aac => Some(1024),
        Codec::Mp1 => Some(384),
        Codec::Mp2 => Some(1152),
        Codec::Mp3 if t.sample_rate > 0 && t.sample_rate < 32_000 => Some(576),
        Codec::Mp3 => Some(1152),
        Codec::Ac3 => Some(1536),
        _ => None,
    }
}

/// Bits per PCM sample of `d` for `t` (wBitsPerSample).
fn pcm_bits(t: &Track, block: u16) -> u16 {
    match t.bits_per_sample {
        0 => (block / t.channels.max(1)).saturating_mul(8),
        b => b,
    }
}

/// The `strh` of a stream (AVISTREAMHEADER's first 48 bytes): `scale`,
/// `rate`, `length` and the buffer size are placeholders that `finish`
/// patches.
pub(super) fn stream_header(d: Described, sample_size: u32) -> StreamHeader {
    let (fcc_type, handler) = match d {
        Described::Video(fourcc) => (*b"vids", fourcc),
        _ => (*b"auds", [0; 4]),
    };
    StreamHeader {
        fcc_type,
        fcc_handler: handler,
        flags: U32::new(0),
        priority: U16::new(0),
        language: U16::new(0),
        initial_frames: U32::new(0),
        scale: U32::new(1),
        rate: U32::new(1),
        start: U32::new(0),
        length: U32::new(0),
        suggested_buffer_size: U32::new(0),
        quality: U32::new(u32::MAX),
        sample_size: U32::new(sample_size),
    }
}

/// The BITMAPINFOHEADER of a video stream; `extra` bytes of
/// configuration follow it.
pub(super) fn bitmap_info(t: &Track, fourcc: [u8; 4], extra: u64) -> BitmapInfoHeader {
    let bits = if t.bits_per_sample == 0 { 24 } else { t.bits_per_sample };
    let size = u32::try_from(extra).unwrap_or(u32::MAX).saturating_add(40);
    let image = u64::from(t.width) * u64::from(t.height) * u64::from(bits) / 8;
    BitmapInfoHeader {
        size: U32::new(size),
        width: I32::new(i32::try_from(t.width).unwrap_or(i32::MAX)),
        height: I32::new(i32::try_from(t.height).unwrap_or(i32::MAX)),
        planes: U16::new(1),
        bit_count: U16::new(bits),
        compression: fourcc,
        size_image: U32::new(u32::try_from(image).unwrap_or(u32::MAX)),
        x_pels_per_meter: I32::new(0),
        y_pels_per_meter: I32::new(0),
        clr_used: U32::new(0),
        clr_important: U32::new(0),
    }
}

/// The WAVEFORMATEX of an audio stream, and whether it is
/// WAVEFORMATEXTENSIBLE: PCM of more than two channels or more than 16
/// bits, as ffmpeg's `ff_put_wav_header` writes it.
pub(super) fn wave_format(t: &Track, d: Described) -> (WaveFormat, Option<WaveFormatExtensible>) {
    let (tag, block, bits) = match d {
        Described::Pcm { tag, block } => (tag, block, pcm_bits(t, block)),
        // ffmpeg writes 16 bits for AAC, 0 for the MPEG audio layers and AC-3.
        Described::Frames { tag: WAVE_FORMAT_AAC } => (WAVE_FORMAT_AAC, frames_block_align(t), 16),
        Described::Frames { tag } => (tag, frames_block_align(t), 0),
        Described::Video(_) => (0, 0, 0),
    };
    let byte_rate = match d {
        Described::Pcm { block, .. } => t.sample_rate.saturating_mul(u32::from(block)),
        _ => t.bit_rate / 8,
    };
    let f = |tag| WaveFormat {
        format_tag: U16::new(tag),
        channels: U16::new(t.channels),
        sample_rate: U32::new(t.sample_rate),
        byte_rate: U32::new(byte_rate),
        block_align: U16::new(block),
        bits_per_sample: U16::new(bits),
    };
    let extensible = matches!(d, Described::Pcm { .. }) && (t.channels > 2 || bits > 16);
    if !extensible {
        return (f(tag), None);
    }
    let mut guid = [0u8; 16];
    for (g, b) in guid.iter_mut().zip(tag.to_le_bytes().iter().chain(&GUID_TAIL)) {
        *g = *b;
    }
    let mask = match t.channels {
        0..=31 => (1u32 << t.channels) - 1,
        _ => 0,
    };
    let ext = WaveFormatExtensible {
        format: f(WAVE_FORMAT_EXTENSIBLE),
        extra_size: U16::new(22),
        valid_bits: U16::new(bits),
        channel_mask: U32::new(mask),
        sub_format: guid,
    };
    (f(tag), Some(ext))
}
