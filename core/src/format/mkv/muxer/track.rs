//! A track as the Matroska muxer writes it: the CodecID (from the
//! demuxer's table, `codec_id.rs`), the CodecPrivate made from the
//! configuration the caller gave (converted where Matroska stores another
//! form), the framing of its packets, and the TrackEntry (RFC 9559
//! §5.1.4.1).

use super::ebml_write::{f64_bits_of_u64, put_bytes, put_float, put_master, put_uint};
use crate::codec::adts::AdtsHeader;
use crate::codec::convert::{adts, avcc, hvcc, NalCodec};
use crate::error::{Error, ErrorKind, Result};
use crate::format::mkv::codec_id::{pcm_bit_depth, to_codec_id};
use crate::format::mkv::ids;
use crate::format::mux_traits::MAX_CONFIG_BYTES;
use crate::sink::Sink;
use crate::types::{Codec, Track, TrackKind};

/// How a track's packets arrive, and so what the muxer does to each.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Framing {
    /// As Matroska stores them: written as they are.
    AsIs,
    /// H.264/H.265 Annex B access units: start codes become 4-byte lengths
    /// (`codec::convert::to_length`), the NAL units borrowed.
    AnnexB(NalCodec),
    /// AAC in ADTS frames: the header is dropped, the raw frame borrowed.
    Adts,
    /// AV1 Temporal Units: leading Temporal Delimiter OBUs are dropped
    /// (the AV1-in-Matroska mapping, §3), the rest borrowed.
    Av1,
    /// WebVTT cue text, written under `D_WEBVTT/SUBTITLES` after an empty
    /// identifier line and an empty settings line (the WebM WebVTT
    /// mapping, which ffmpeg writes and reads in Matroska too).
    WebVttCue,
}

/// The codecs WebM carries (the WebM container guidelines).
fn webm_allows(c: Codec) -> bool {
    matches!(
        c,
        Codec::Vp8 | Codec::Vp9 | Codec::Av1 | Codec::Opus | Codec::Vorbis | Codec::WebVtt
    )
}

/// TrackType (RFC 9559 §5.1.4.1.3) for a track kind.
///
/// Errors: `Unsupported` for data and unknown tracks.
pub(crate) fn track_type(t: &Track) -> Result<u64> {
    match t.kind {
        TrackKind::Video => Ok(1),
        TrackKind::Audio => Ok(2),
        TrackKind::Subtitle => Ok(0x11),
        TrackKind::Data | TrackKind::Unknown => Err(Error::unsupported(
            0,
            &"mkv muxer: a data or unknown track has no Matroska TrackType here (RFC 9559 5.1.4.1.3)",
        )),
    }
}

/// Checks that the target can carry `t`: a CodecID exists, WebM allows the
/// codec, the track is not an attached picture.
///
/// Errors: `Unsupported` with the reason.
pub(crate) fn check(t: &Track, webm: bool) -> Result<()> {
    if t.attached_picture {
        return Err(Error::unsupported(
            0,
            &"mkv muxer: an attached picture is an attachment in Matroska, not written (RFC 9559 5.1.6)",
        ));
    }
    track_type(t)?;
    if webm && !webm_allows(t.codec) {
        return Err(Error::unsupported(
            0,
            &"webm muxer: WebM carries only VP8, VP9, AV1, Opus, Vorbis and WebVTT (WebM container guidelines)",
        ));
    }
    if to_codec_id(t.codec).is_none() {
        return Err(Error::unsupported(
            0,
            &"mkv muxer: no Matroska CodecID for this codec (RFC 9559 5.1.4.1.21)",
        ));
    }
    // WavPack from a `.wv` file: its packets are whole blocks with their
    // `wvpk` headers and no CodecPrivate, which Matroska's A_WAVPACK4
    // strips and needs; that conversion is not written.
    if t.codec == Codec::Wavpack && t.config.is_none() {
        return Err(Error::unsupported(
            0,
            &"mkv muxer: WavPack blocks with wvpk headers (from .wv) are not converted to A_WAVPACK4's form",
        ));
    }
    if t.time_base.num == 0 || t.time_base.den == 0 {
        return Err(Error::new(
            ErrorKind::InvalidArgument,
            0,
            &"mkv muxer: a track time base with a zero term",
        ));
    }
    Ok(())
}

/// Whether `config` is Annex B (starts with a start code).
fn is_annexb(config: &[u8]) -> bool {
    config.starts_with(&[0, 0, 1]) || config.starts_with(&[0, 0, 0, 1])
}

/// The CodecPrivate for track `t` given `config` (written into `out`,
/// returning its length) and how its packets are framed:
///
/// * H.264 / H.265: an `avcC`/`hvcC` record (first byte 1) is kept and the
///   packets are taken as length-prefixed; Annex B parameter sets are made
///   into a record (ISO/IEC 14496-15 §5.3.3.1, §8.3.3.1, as ffmpeg writes
///   it) and the packets are taken as Annex B.
/// * AAC: an ADTS header (the first frame's) becomes the two-byte
///   AudioSpecificConfig and the packets are taken as ADTS frames; anything
///   else is kept as an AudioSpecificConfig.
/// * FLAC: a bare 34-byte STREAMINFO gets the `fLaC` marker and its block
///   header, as the Matroska codec mapping wants.
/// * Vorbis / Theora: must be the three headers, Xiph-laced (first byte 2).
/// * Opus: must be the OpusHead (a track without it is dropped by mkvmerge).
/// * Others: kept as given.
///
/// Errors: `Unsupported` for a missing record Matroska requires (H.264,
/// H.265, AAC) or a Vorbis/Theora configuration that is not the laced
/// headers; the conversions' errors; `CapacityExceeded` when the result
/// does not fit `out`.
pub(crate) fn codec_private(t: &Track, config: &[u8], out: &mut [u8; MAX_CONFIG_BYTES]) -> Result<(usize, Framing)> {
    let copy = |out: &mut [u8; MAX_CONFIG_BYTES], src: &[u8]| -> Result<usize> {
        out.get_mut(..src.len())
            .ok_or(Error::capacity(0, &"mkv muxer: CodecPrivate beyond MAX_CONFIG_BYTES"))?
            .copy_from_slice(src);
        Ok(src.len())
    };
    let missing = |what: crate::error::Description| Err(Error::unsupported(0, what));
    match t.codec {
        Codec::H264 | Codec::Hevc if config.first() == Some(&1) => Ok((copy(out, config)?, Framing::AsIs)),
        Codec::H264 if is_annexb(config) => Ok((avcc::write_avcc_from_annexb(config, out)?, Framing::AnnexB(NalCodec::H264))),
        Codec::Hevc if is_annexb(config) => Ok((
            hvcc::write_hvcc_from_annexb(config, false, out)?,
            Framing::AnnexB(NalCodec::H265),
        )),
        Codec::H264 | Codec::Hevc => missing(
            &"mkv muxer: H.264/H.265 needs its parameter sets (avcC/hvcC, or Annex B SPS/PPS) as CodecPrivate (RFC 9559 5.1.4.1.23)",
        ),
        Codec::Aac if AdtsHeader::has_sync(config) => {
            let h = AdtsHeader::parse(config).ok_or(Error::malformed(
                0,
                &"mkv muxer: the ADTS header given as AAC configuration does not parse (ISO/IEC 14496-3 1.A.2.2)",
            ))?;
            Ok((copy(out, &adts::audio_specific_config(&h)?)?, Framing::Adts))
        }
        Codec::Aac if config.is_empty() => missing(
            &"mkv muxer: AAC needs an AudioSpecificConfig (or an ADTS header) as CodecPrivate (RFC 9559 5.1.4.1.23)",
        ),
        Codec::Flac if config.len() == 34 => {
            copy(out, b"fLaC\x80\x00\x00\x22")?;
            let rest = out.get_mut(8..42).ok_or(Error::capacity(0, &"mkv muxer: FLAC CodecPrivate"))?;
            rest.copy_from_slice(config);
            Ok((42, Framing::AsIs))
        }
        Codec::Opus if !config.starts_with(b"OpusHead") => missing(
            &"mkv muxer: Opus needs its identification header (OpusHead) as CodecPrivate (RFC 9559 5.1.4.1.23, RFC 7845 5.1)",
        ),
        Codec::Av1 if config.first() == Some(&0x81) => Ok((copy(out, config)?, Framing::Av1)),
        Codec::Av1 => Ok((super::av1::codec_private(config, out)?, Framing::Av1)),
        Codec::Alac => Ok((copy(out, alac_specific_config(config))?, Framing::AsIs)),
        Codec::WebVtt => Ok((copy(out, config)?, Framing::WebVttCue)),
        Codec::Vorbis | Codec::Theora if config.first() != Some(&2) => missing(
            &"mkv muxer: Vorbis/Theora CodecPrivate must be the three headers, Xiph-laced (RFC 9559 5.1.4.1.23, Matroska codec mapping)",
        ),
        _ => Ok((copy(out, config)?, Framing::AsIs)),
    }
}

/// The 24-byte ALACSpecificConfig that A_ALAC's CodecPrivate holds (the
/// Matroska codec mapping; Apple's ALAC magic cookie): found inside an
/// `alac` atom (size 36: header, version and flags, then the config) when
/// the input gives the atom (MP4 `alac` box, CAF `kuki` with `frma`);
/// otherwise the configuration as given.
fn alac_specific_config(config: &[u8]) -> &[u8] {
    let found = config
        .windows(8)
        .position(|w| w == [0, 0, 0, 36, b'a', b'l', b'a', b'c']);
    found.and_then(|i| config.get(i + 12..i + 36)).unwrap_or(config)
}

/// Writes the TrackEntry of track `t`, TrackNumber `number`, with
/// CodecPrivate `private` (RFC 9559 §5.1.4.1). TrackUID is the number
/// (unique in the file; no random source in core). FlagLacing 0: no lacing
/// is written.
///
/// FlagDefault 0 is written only for a track that is not the default when
/// another track of its kind is (`kind_has_default`): an input that marks
/// no default keeps Matroska's default of 1 on every track.
pub(crate) fn write_entry(
    k: &mut dyn Sink,
    t: &Track,
    number: u64,
    private: &[u8],
    kind_has_default: bool,
) -> Result<()> {
    let kind = track_type(t)?;
    let codec_id = to_codec_id(t.codec).ok_or(Error::unsupported(
        0,
        &"mkv muxer: no Matroska CodecID for this codec (RFC 9559 5.1.4.1.21)",
    ))?;
    put_master(k, ids::TRACK_ENTRY, &|k| {
        put_uint(k, ids::TRACK_NUMBER, number)?;
        put_uint(k, ids::TRACK_UID, number)?;
        put_uint(k, ids::TRACK_TYPE, kind)?;
        put_uint(k, FLAG_LACING, 0)?;
        if !t.default && kind_has_default {
            put_uint(k, ids::FLAG_DEFAULT, 0)?;
        }
        if t.forced {
            put_uint(k, ids::FLAG_FORCED, 1)?;
        }
        let lang = t.language.as_bytes();
        if lang.len() == 3 && lang.iter().all(u8::is_ascii_lowercase) {
            put_bytes(k, ids::LANGUAGE, lang)?;
        }
        put_bytes(k, ids::CODEC_ID, codec_id)?;
        if !private.is_empty() {
            put_bytes(k, ids::CODEC_PRIVATE, private)?;
        }
        if let Some(ns) = codec_delay_ns(t.codec, private) {
            put_uint(k, ids::CODEC_DELAY, ns)?;
            put_uint(k, SEEK_PRE_ROLL, OPUS_SEEK_PRE_ROLL_NS)?;
        }
        match t.kind {
            TrackKind::Video if t.width > 0 && t.height > 0 => put_master(k, ids::VIDEO, &|k| {
                put_uint(k, ids::PIXEL_WIDTH, u64::from(t.width))?;
                put_uint(k, ids::PIXEL_HEIGHT, u64::from(t.height))
            }),
            TrackKind::Audio => put_master(k, ids::AUDIO, &|k| {
                if t.sample_rate > 0 {
                    put_float(k, ids::SAMPLING_FREQUENCY, f64_bits_of_u64(u64::from(t.sample_rate)))?;
                }
                if t.channels > 0 {
                    put_uint(k, ids::CHANNELS, u64::from(t.channels))?;
                }
                // BitDepth where it names the codec (PCM), and for TTA,
                // whose decoder header a reader builds from it (ffmpeg's
                // matroskadec; ffmpeg's muxer writes it), as ffmpeg.
                match pcm_bit_depth(t.codec) {
                    Some(d) => put_uint(k, ids::BIT_DEPTH, d),
                    None if t.codec == Codec::Tta && t.bits_per_sample > 0 => {
                        put_uint(k, ids::BIT_DEPTH, u64::from(t.bits_per_sample))
                    }
                    None => Ok(()),
                }
            }),
            _ => Ok(()),
        }
    })
}

/// CodecDelay in ns (RFC 9559 §5.1.4.1.25) for a track: an Opus track's
/// pre-skip (OpusHead bytes 10..12, little-endian, in 48 kHz samples; RFC
/// 7845 §5.1), as ffmpeg writes it; `None` for other codecs.
pub(crate) fn codec_delay_ns(codec: Codec, private: &[u8]) -> Option<u64> {
    if codec != Codec::Opus {
        return None;
    }
    let pre_skip = u64::from(u16::from_le_bytes([*private.get(10)?, *private.get(11)?]));
    Some(pre_skip * 1_000_000_000 / 48_000)
}

/// SeekPreRoll for Opus (RFC 9559 §5.1.4.1.26): 80 ms, as RFC 7845 §4.6
/// advises and ffmpeg writes.
const OPUS_SEEK_PRE_ROLL_NS: u64 = 80_000_000;
/// SeekPreRoll's ID.
const SEEK_PRE_ROLL: u64 = 0x56BB;

/// FlagLacing (RFC 9559 §5.1.4.1.12): 0, no laced Blocks.
const FLAG_LACING: u64 = 0x9C;
