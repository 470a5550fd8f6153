//! Sample entries (`stsd`, §8.5.2): the codec of a track from its sample
//! entry type, QuickTime sound descriptions, `esds` (ISO/IEC 14496-14 §5.6),
//! protected entries (`sinf`/`frma`), QuickTime `wave`/`enda` and
//! ISO/IEC 23003-5 `pcmC`; and the codec configuration's byte range.

use super::boxes::{
    for_each_child, read_box_header, AudioSampleEntry, BoxHeader, SoundDescriptionV1, SoundDescriptionV2,
    VisualSampleEntry,
};
use super::sample_table::ChunkMode;
use crate::error::{Error, Result};
use crate::format::traits::Context;
use crate::ieee754::Float;
use crate::source::Source;
use crate::types::{ByteRange, Codec, Track, TrackKind};

/// Child boxes of a sample entry looked at (configuration, `esds`, `sinf`,
/// `wave`, `enda`, `pcmC`, `btrt`, `pasp`, `colr`, ...): real entries have
/// a handful; 64 bounds an entry of tiny boxes.
const MAX_SAMPLE_ENTRY_CHILDREN: u32 = 64;

/// Children of `sinf` or QuickTime `wave` looked at for `frma`, `esds` and
/// `enda`: real files have two to five; 16 bounds the walk.
const MAX_WRAPPER_CHILDREN: u32 = 16;

/// Maps a sample entry's four-character code to a codec (ffmpeg `isom.c`).
fn codec_for(fourcc: &[u8; 4], bits: u16) -> (Codec, TrackKind) {
    use Codec as C;
    use TrackKind::{Audio, Video};
    match fourcc {
        b"raw " if bits > 8 || bits == 0 => (C::RawVideo, Video),
        b"raw " | b"NONE" => (C::PcmU8, Audio),
        b"sowt" | b"twos" if bits == 8 => (C::PcmS8, Audio),
        b"sowt" => (C::PcmS16Le, Audio),
        b"twos" => (C::PcmS16Be, Audio),
        _ => SAMPLE_ENTRIES
            .iter()
            .find(|(_, _, tags)| tags.contains(fourcc))
            .map_or((C::Unknown, TrackKind::Unknown), |&(c, k, _)| (c, k)),
    }
}

/// Sample entry types of `codec_for` (ffmpeg `isom.c`), as a table rather
/// than a `match`: less flash on thumbv7em.
static SAMPLE_ENTRIES: &[(Codec, TrackKind, &[[u8; 4]])] = {
    use Codec as C;
    use TrackKind::{Audio, Subtitle, Video};
    &[
        (C::H264, Video, &[*b"avc1", *b"avc3"]),
        (C::Hevc, Video, &[*b"hvc1", *b"hev1", *b"dvh1", *b"dvhe"]),
        (C::Vvc, Video, &[*b"vvc1", *b"vvi1"]),
        (C::Av1, Video, &[*b"av01"]),
        (C::Vp8, Video, &[*b"vp08"]),
        (C::Vp9, Video, &[*b"vp09"]),
        (C::Mpeg4, Video, &[*b"mp4v"]),
        (C::H263, Video, &[*b"s263", *b"h263", *b"H263"]),
        (C::Mjpeg, Video, &[*b"jpeg", *b"mjpa", *b"mjpb", *b"AVDJ"]),
        (C::Png, Video, &[*b"png "]),
        (
            C::ProRes,
            Video,
            &[*b"apch", *b"apcn", *b"apcs", *b"apco", *b"ap4h", *b"ap4x"],
        ),
        (C::Aac, Audio, &[*b"mp4a"]),
        (C::Mp3, Audio, &[*b".mp3", *b"ms\x00\x55"]),
        (C::Ac3, Audio, &[*b"ac-3", *b"sac3"]),
        (C::Eac3, Audio, &[*b"ec-3"]),
        (C::Ac4, Audio, &[*b"ac-4"]),
        (C::Opus, Audio, &[*b"Opus"]),
        (C::Flac, Audio, &[*b"fLaC"]),
        (C::Alac, Audio, &[*b"alac"]),
        (C::AmrNb, Audio, &[*b"samr"]),
        (C::AmrWb, Audio, &[*b"sawb"]),
        (C::Qcelp, Audio, &[*b"sqcp"]),
        (C::TrueHd, Audio, &[*b"mlpa"]),
        (C::Dts, Audio, &[*b"dtsc", *b"dtsh", *b"dtsl", *b"dtse", *b"dtsx"]),
        (C::Unknown, Audio, &[*b"mhm1", *b"mha1"]),
        (C::PcmS24Be, Audio, &[*b"in24"]),
        (C::PcmS32Be, Audio, &[*b"in32"]),
        (C::PcmF32Be, Audio, &[*b"fl32"]),
        (C::PcmF64Be, Audio, &[*b"fl64"]),
        (C::PcmMulaw, Audio, &[*b"ulaw"]),
        (C::PcmAlaw, Audio, &[*b"alaw"]),
        (C::AdpcmImaQt, Audio, &[*b"ima4"]),
        (C::Unknown, Audio, &[*b"lpcm", *b"ipcm", *b"fpcm"]),
        (C::MovText, Subtitle, &[*b"tx3g", *b"text"]),
        (C::Unknown, Subtitle, &[*b"mp4s"]),
        (C::Eia608, Subtitle, &[*b"c608"]),
        (C::WebVtt, Subtitle, &[*b"wvtt"]),
    ]
};

/// Bits per sample of the PCM codecs, for chunk reading.
pub(super) fn pcm_bits(c: Codec) -> u32 {
    match c {
        Codec::PcmU8 | Codec::PcmS8 | Codec::PcmAlaw | Codec::PcmMulaw => 8,
        Codec::PcmS16Le | Codec::PcmS16Be => 16,
        Codec::PcmS24Le | Codec::PcmS24Be => 24,
        Codec::PcmS32Le | Codec::PcmS32Be | Codec::PcmF32Le | Codec::PcmF32Be => 32,
        Codec::PcmF64Le | Codec::PcmF64Be => 64,
        _ => 0,
    }
}

/// MPEG-4 systems objectTypeIndication to codec (ISO/IEC 14496-1 §7.2.6.6.2,
/// the MP4 registration authority's table).
fn codec_for_oti(oti: u8) -> Option<Codec> {
    Some(match oti {
        0x20 => Codec::Mpeg4,
        0x21 => Codec::H264,
        0x23 => Codec::Hevc,
        0x40 | 0x66..=0x68 => Codec::Aac,
        0x60..=0x65 => Codec::Mpeg2Video,
        0x69 | 0x6B => Codec::Mp3,
        0x6A => Codec::Mpeg1Video,
        0x6C => Codec::Mjpeg,
        0xA5 => Codec::Ac3,
        0xA6 => Codec::Eac3,
        0xA9 | 0xAC => Codec::Dts,
        0xAD => Codec::Opus,
        0xDD => Codec::Vorbis,
        0xE1 => Codec::Qcelp,
        0xE0 => Codec::DvdSub,
        _ => return None,
    })
}

/// Reads an MPEG-4 descriptor header (tag, size with up to 4 continuation
/// bytes; ISO/IEC 14496-1 §8.3.3). Returns (tag, body offset, body length).
fn descriptor<S: Source>(src: &mut S, at: u64, end: u64) -> Result<(u8, u64, u64)> {
    let tag: [u8; 1] = src.array(at)?;
    let mut len = 0u64;
    let mut p = at + 1;
    for _ in 0..4 {
        if p >= end {
            return Err(Error::malformed(
                p,
                &"mp4 esds: descriptor size runs past esds (ISO/IEC 14496-1 8.3.3)",
            ));
        }
        let b: [u8; 1] = src.array(p)?;
        p += 1;
        len = (len << 7) | (b[0] & 0x7F) as u64;
        if b[0] & 0x80 == 0 {
            break;
        }
    }
    Ok((tag[0], p, len.min(end.saturating_sub(p))))
}

/// Parses an `esds` payload for the codec and DecoderSpecificInfo
/// (ISO/IEC 14496-14 §5.6, ISO/IEC 14496-1 §7.2.6.5).
fn parse_esds<S: Source>(src: &mut S, body: u64, end: u64, t: &mut Track) -> Result<()> {
    let mut p = body + 4; // version and flags
    let (tag, b, len) = descriptor(src, p, end)?;
    if tag != 0x03 {
        return Ok(());
    }
    let es_end = b + len;
    let flags: [u8; 3] = src.array(b)?;
    p = b + 3;
    if flags[2] & 0x80 != 0 {
        p += 2;
    }
    if flags[2] & 0x40 != 0 {
        let l: [u8; 1] = src.array(p)?;
        p += 1 + l[0] as u64;
    }
    if flags[2] & 0x20 != 0 {
        p += 2;
    }
    if p >= es_end {
        return Ok(());
    }
    let (tag, b, len) = descriptor(src, p, es_end)?;
    if tag != 0x04 || len < 13 {
        return Ok(());
    }
    let oti: [u8; 1] = src.array(b)?;
    if let Some(c) = codec_for_oti(oti[0]) {
        t.codec = c;
    }
    let br = src.u32_be(b + 9)?;
    if br > 0 {
        t.bit_rate = br;
    }
    let dc_end = b + len;
    let p = b + 13;
    if p < dc_end {
        let (tag, b, len) = descriptor(src, p, dc_end)?;
        if tag == 0x05 && len > 0 {
            t.config = Some(ByteRange {
                offset: b,
                len: len.min(u32::MAX as u64) as u32,
            });
        }
    }
    Ok(())
}

/// Reads the first sample entry of `stsd` (§8.5.2) into `t`; returns the
/// chunk-reading parameters for uncompressed audio.
pub(super) fn parse_stsd<S: Source>(src: &mut S, ctx: &mut Context, h: &BoxHeader, t: &mut Track) -> Result<ChunkMode> {
    let mut mode = ChunkMode::default();
    let count = src.u32_be(h.body + 4)?;
    if count == 0 {
        return Ok(mode);
    }
    let e = read_box_header(src, h.body + 8, h.end)?;
    let mut fourcc = e.kind;
    t.codec_tag = u32::from_be_bytes(fourcc);
    let children = match t.kind {
        TrackKind::Video => {
            let v: VisualSampleEntry = src.read(e.body)?;
            t.width = v.width.get() as u32;
            t.height = v.height.get() as u32;
            e.body + 78
        }
        TrackKind::Audio => read_sound_description(src, &e, t, &mut mode)?,
        _ => e.body + 8,
    };
    let (codec, kind) = if t.kind == TrackKind::Audio && &fourcc == b"raw " {
        (Codec::PcmU8, TrackKind::Audio)
    } else {
        codec_for(&fourcc, t.bits_per_sample)
    };
    if t.codec == Codec::Unknown {
        t.codec = codec;
    }
    if t.kind == TrackKind::Unknown {
        t.kind = kind;
    }
    let little_endian = read_entry_children(src, &e, children, t, &mut fourcc)?;
    if little_endian {
        t.codec = match t.codec {
            Codec::PcmS16Be => Codec::PcmS16Le,
            Codec::PcmS24Be => Codec::PcmS24Le,
            Codec::PcmS32Be => Codec::PcmS32Le,
            Codec::PcmF32Be => Codec::PcmF32Le,
            Codec::PcmF64Be => Codec::PcmF64Le,
            c => c,
        };
    }
    if t.codec == Codec::AdpcmImaQt {
        mode.samples_per_frame = 64;
        mode.bytes_per_frame = 34 * t.channels as u32;
    }
    let bits = pcm_bits(t.codec);
    if bits > 0 {
        mode.frame_bytes = bits / 8 * t.channels as u32;
        t.bits_per_sample = bits as u16;
    }
    let _ = ctx;
    Ok(mode)
}

/// The audio sample entry `e` (§12.2.3) with its QuickTime sound
/// description version 1 or 2 fields; returns where its child boxes start.
fn read_sound_description<S: Source>(src: &mut S, e: &BoxHeader, t: &mut Track, mode: &mut ChunkMode) -> Result<u64> {
    let a: AudioSampleEntry = src.read(e.body)?;
    t.channels = a.channels.get();
    t.bits_per_sample = a.sample_size.get();
    t.sample_rate = a.sample_rate.get() >> 16;
    let mut children = e.body + 28;
    match a.version.get() {
        1 => {
            let v1: SoundDescriptionV1 = src.read(children)?;
            mode.samples_per_frame = v1.samples_per_packet.get();
            mode.bytes_per_frame = v1.bytes_per_frame.get();
            children += 16;
        }
        2 => {
            let v2: SoundDescriptionV2 = src.read(children)?;
            // audioSampleRate, a binary64: kept when above 0 and below 4e9,
            // truncated (integer arithmetic, see `ieee754`).
            let rate = Float::from_f64_bits(v2.sample_rate.get()).filter(|r| r.is_positive());
            if let Some(hz) = rate
                .filter(|r| r.cmp_i64(4_000_000_000).is_lt())
                .and_then(Float::trunc_u64)
            {
                t.sample_rate = hz as u32;
            }
            t.channels = v2.channels.get().min(u16::MAX as u32) as u16;
            t.bits_per_sample = v2.const_bits_per_channel.get().min(u16::MAX as u32) as u16;
            let flags = v2.format_specific_flags.get();
            mode.bytes_per_frame = v2.const_bytes_per_audio_packet.get();
            mode.samples_per_frame = v2.const_lpcm_frames_per_audio_packet.get();
            if &e.kind == b"lpcm" {
                t.codec = lpcm_codec(flags, t.bits_per_sample);
            }
            children += 36;
        }
        _ => {}
    }
    Ok(children)
}

/// Child boxes of the sample entry `e` from `at`: codec configuration and
/// QuickTime `wave`/`enda`/`frma`, ISO 23003-5 `pcmC`. Returns whether
/// `enda` says the samples are little-endian.
fn read_entry_children<S: Source>(
    src: &mut S,
    e: &BoxHeader,
    at: u64,
    t: &mut Track,
    fourcc: &mut [u8; 4],
) -> Result<bool> {
    let mut little_endian = false;
    for_each_child(src, at, e.end, MAX_SAMPLE_ENTRY_CHILDREN, |src, c| {
        match &c.kind {
            b"avcC" | b"hvcC" | b"av1C" | b"vpcC" | b"dOps" | b"dac3" | b"dec3" | b"dfLa" | b"alac" | b"glbl"
            | b"vvcC" | b"dac4" | b"ddts" | b"dmlp"
                if t.config.is_none() =>
            {
                t.config = Some(config_range(c));
            }
            b"esds" => parse_esds(src, c.body, c.end, t)?,
            b"sinf" => read_sinf(src, c, t, fourcc)?,
            b"wave" => read_wave(src, c, t, fourcc, &mut little_endian)?,
            b"enda" => {
                let v: [u8; 2] = src.array(c.body)?;
                little_endian = v != [0, 0];
            }
            b"pcmC" => read_pcmc(src, c, t, fourcc)?,
            _ => {}
        }
        Ok(())
    })?;
    Ok(little_endian)
}

/// The codec configuration in box `c`, past the version and flags of the
/// configuration boxes that are full boxes.
fn config_range(c: &BoxHeader) -> ByteRange {
    let skip = if matches!(&c.kind, b"vpcC" | b"dfLa" | b"alac" | b"vvcC") {
        4
    } else {
        0
    };
    let len = c.body_len().saturating_sub(skip);
    ByteRange {
        offset: c.body + skip,
        len: len.min(u32::MAX as u64) as u32,
    }
}

/// A protected sample entry's `sinf` (ISO/IEC 14496-12 §8.12): the
/// original format is in `frma`.
fn read_sinf<S: Source>(src: &mut S, c: &BoxHeader, t: &mut Track, fourcc: &mut [u8; 4]) -> Result<()> {
    for_each_child(src, c.body, c.end, MAX_WRAPPER_CHILDREN, |src, x| {
        if &x.kind == b"frma" {
            *fourcc = src.array(x.body)?;
            t.codec_tag = u32::from_be_bytes(*fourcc);
            let (codec, _) = codec_for(fourcc, t.bits_per_sample);
            if codec != Codec::Unknown {
                t.codec = codec;
            }
        }
        Ok(())
    })
}

/// QuickTime `wave`: holds `frma`, `esds`, `enda`.
fn read_wave<S: Source>(
    src: &mut S,
    c: &BoxHeader,
    t: &mut Track,
    fourcc: &mut [u8; 4],
    little_endian: &mut bool,
) -> Result<()> {
    for_each_child(src, c.body, c.end, MAX_WRAPPER_CHILDREN, |src, x| {
        match &x.kind {
            b"esds" => parse_esds(src, x.body, x.end, t)?,
            b"enda" => {
                let v: [u8; 2] = src.array(x.body)?;
                *little_endian = v != [0, 0];
            }
            b"frma" => {
                *fourcc = src.array(x.body)?;
                if t.codec == Codec::Unknown {
                    t.codec = codec_for(fourcc, t.bits_per_sample).0;
                }
            }
            _ => {}
        }
        Ok(())
    })
}

/// ISO/IEC 23003-5 `pcmC`: endianness and sample size of `ipcm`/`fpcm`.
fn read_pcmc<S: Source>(src: &mut S, c: &BoxHeader, t: &mut Track, fourcc: &[u8; 4]) -> Result<()> {
    let v: [u8; 6] = src.array(c.body)?;
    let le = v[4] & 1 != 0;
    t.bits_per_sample = v[5] as u16;
    t.codec = match (fourcc, le, v[5]) {
        (b"fpcm", true, 64) => Codec::PcmF64Le,
        (b"fpcm", false, 64) => Codec::PcmF64Be,
        (b"fpcm", true, _) => Codec::PcmF32Le,
        (b"fpcm", false, _) => Codec::PcmF32Be,
        (_, true, 16) => Codec::PcmS16Le,
        (_, false, 16) => Codec::PcmS16Be,
        (_, true, 24) => Codec::PcmS24Le,
        (_, false, 24) => Codec::PcmS24Be,
        (_, true, 32) => Codec::PcmS32Le,
        (_, false, 32) => Codec::PcmS32Be,
        _ => t.codec,
    };
    Ok(())
}

/// QuickTime `lpcm` format flags (kAudioFormatFlagIsFloat = 1,
/// IsBigEndian = 2) to a PCM codec.
fn lpcm_codec(flags: u32, bits: u16) -> Codec {
    let float = flags & 1 != 0;
    let be = flags & 2 != 0;
    match (float, be, bits) {
        (true, false, 64) => Codec::PcmF64Le,
        (true, true, 64) => Codec::PcmF64Be,
        (true, false, _) => Codec::PcmF32Le,
        (true, true, _) => Codec::PcmF32Be,
        (false, _, 8) => Codec::PcmS8,
        (false, false, 16) => Codec::PcmS16Le,
        (false, true, 16) => Codec::PcmS16Be,
        (false, false, 24) => Codec::PcmS24Le,
        (false, true, 24) => Codec::PcmS24Be,
        (false, false, 32) => Codec::PcmS32Le,
        (false, true, 32) => Codec::PcmS32Be,
        _ => Codec::Unknown,
    }
}

#[cfg(test)]
mod codec_tests {
    use super::*;

    #[test]
    fn sample_entry_codecs() {
        use TrackKind::{Audio, Subtitle, Video};
        assert_eq!(codec_for(b"avc1", 24), (Codec::H264, Video));
        assert_eq!(codec_for(b"raw ", 24), (Codec::RawVideo, Video));
        assert_eq!(codec_for(b"raw ", 0), (Codec::RawVideo, Video));
        assert_eq!(codec_for(b"raw ", 8), (Codec::PcmU8, Audio));
        assert_eq!(codec_for(b"NONE", 16), (Codec::PcmU8, Audio));
        assert_eq!(codec_for(b"sowt", 8), (Codec::PcmS8, Audio));
        assert_eq!(codec_for(b"sowt", 16), (Codec::PcmS16Le, Audio));
        assert_eq!(codec_for(b"twos", 8), (Codec::PcmS8, Audio));
        assert_eq!(codec_for(b"twos", 16), (Codec::PcmS16Be, Audio));
        assert_eq!(codec_for(b"ms\x00\x55", 16), (Codec::Mp3, Audio));
        assert_eq!(codec_for(b"mha1", 16), (Codec::Unknown, Audio));
        assert_eq!(codec_for(b"wvtt", 0), (Codec::WebVtt, Subtitle));
        assert_eq!(codec_for(b"zzzz", 0), (Codec::Unknown, TrackKind::Unknown));
    }
}
