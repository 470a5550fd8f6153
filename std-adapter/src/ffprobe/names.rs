//! ffmpeg's names for what a stream's codec and the container state:
//! `format_long_name`, `sample_fmt`, `channel_layout`, `bits_per_sample`
//! and `bits_per_raw_sample`.
//!
//! ffprobe prints the sample format of the decoder ffmpeg would open (the
//! first registered for the codec), and `bits_per_sample` from
//! `av_get_bits_per_sample(codec_id)`: a fixed figure per codec, not what
//! the container says. Both are tables here, keyed by ffmpeg's codec name.

use mediaslice::{Codec, FormatKind, Track};

/// ffprobe's `format_long_name` (the demuxer's `long_name`), for the
/// formats this table knows.
pub fn format_long_name(kind: FormatKind) -> Option<&'static str> {
    Some(match kind {
        FormatKind::Mp4 => "QuickTime / MOV",
        FormatKind::Wav | FormatKind::Rf64 => "WAV / WAVE (Waveform Audio)",
        FormatKind::Wave64 => "Sony Wave64",
        FormatKind::Asf => "ASF (Advanced / Active Streaming Format)",
        FormatKind::Flv => "FLV (Flash Video)",
        FormatKind::Matroska => "Matroska / WebM",
        FormatKind::MpegTs => "MPEG-TS (MPEG-2 Transport Stream)",
        FormatKind::MpegPs => "MPEG-PS (MPEG-2 Program Stream)",
        FormatKind::Avi => "AVI (Audio Video Interleaved)",
        FormatKind::Aiff => "Audio IFF",
        FormatKind::Caf => "Apple CAF (Core Audio Format)",
        FormatKind::Au => "Sun AU",
        FormatKind::Tta => "TTA (True Audio)",
        FormatKind::Dsf => "DSD Stream File (DSF)",
        FormatKind::Dff | FormatKind::Iff => "IFF (Interchange File Format)",
        FormatKind::WavPack => "WavPack",
        FormatKind::Ape => "Monkey's Audio",
        FormatKind::Musepack7 => "Musepack",
        FormatKind::Musepack8 => "Musepack SV8",
        FormatKind::Mxf => "MXF (Material eXchange Format)",
        FormatKind::Ogg => "Ogg",
        FormatKind::Flac => "raw FLAC",
        FormatKind::Mp3 => "MP2/3 (MPEG audio layer 2/3)",
        FormatKind::Aac => "raw ADTS AAC (Advanced Audio Coding)",
        FormatKind::Ac3 => "raw AC-3",
        FormatKind::Eac3 => "raw E-AC-3",
        FormatKind::Amr => "3GPP AMR",
        FormatKind::H264 => "raw H.264 video",
        FormatKind::Hevc => "raw HEVC video",
        FormatKind::Ivf => "On2 IVF",
        FormatKind::Obu => "AV1 low overhead OBU",
        FormatKind::Av1AnnexB => "AV1 Annex B",
        FormatKind::Dv => "DV (Digital Video)",
        FormatKind::MpegVideo => "raw MPEG video",
        FormatKind::M4v => "raw MPEG-4 video",
        _ => return None,
    })
}

/// ffprobe's `nb_programs`: MPEG-TS lists its programs (one per PMT; a
/// transport stream with streams has at least one), other formats none.
pub fn nb_programs(kind: FormatKind, nb_streams: usize) -> usize {
    usize::from(kind == FormatKind::MpegTs && nb_streams > 0)
}

/// `av_get_bits_per_sample(codec_id)`: bits per coded sample of codecs
/// whose samples have a fixed size (PCM, G.711, 4-bit ADPCM), else 0.
pub fn bits_per_sample(codec: Codec) -> u16 {
    match codec {
        Codec::PcmU8 | Codec::PcmS8 | Codec::PcmAlaw | Codec::PcmMulaw => 8,
        Codec::DsdLsbfPlanar | Codec::DsdMsbfPlanar | Codec::DsdMsbf => 8,
        Codec::PcmS8Planar => 8,
        Codec::PcmS16Le | Codec::PcmS16Be | Codec::PcmS16BePlanar => 16,
        Codec::PcmS24Le | Codec::PcmS24Be => 24,
        Codec::PcmS32Le | Codec::PcmS32Be | Codec::PcmF32Le | Codec::PcmF32Be => 32,
        Codec::PcmF64Le | Codec::PcmF64Be => 64,
        Codec::AdpcmImaWav
        | Codec::AdpcmImaQt
        | Codec::AdpcmMs
        | Codec::AdpcmYamaha
        | Codec::AdpcmSwf
        | Codec::AdpcmImaWs
        | Codec::AdpcmG722
        | Codec::Svx8Fib
        | Codec::Svx8Exp => 4,
        _ => 0,
    }
}

/// The sample format and `bits_per_raw_sample` ffmpeg's decoder reports
/// for an audio track, when the codec's table entry knows it. `bits` is
/// the container's (or the codec header's) bits per sample.
pub fn sample_fmt(t: &Track) -> Option<(&'static str, Option<u16>)> {
    let bits = t.bits_per_sample;
    Some(match t.codec {
        Codec::Aac
        | Codec::AacLatm
        | Codec::Mp1
        | Codec::Mp2
        | Codec::Mp3
        | Codec::Ac3
        | Codec::Eac3
        | Codec::Opus
        | Codec::Vorbis
        | Codec::Wmav1
        | Codec::Wmav2
        | Codec::WmaPro
        | Codec::AmrNb
        | Codec::AmrWb
        | Codec::Dts
        | Codec::Nellymoser
        | Codec::Atrac3
        | Codec::Qdm2
        | Codec::Cook => ("fltp", None),
        Codec::Speex | Codec::Dst => ("flt", None),
        Codec::DsdLsbfPlanar | Codec::DsdMsbfPlanar | Codec::DsdMsbf => ("fltp", None),
        Codec::Flac if bits == 0 => return None,
        Codec::Flac if bits <= 16 => ("s16", Some(bits)),
        Codec::Flac => ("s32", Some(bits)),
        Codec::Tta if bits == 0 => return None,
        Codec::Tta if bits <= 8 => ("u8", Some(bits)),
        Codec::Tta if bits <= 16 => ("s16", Some(bits)),
        Codec::Tta => ("s32", Some(bits)),
        // ffmpeg's apedec: u8p, s16p or s32p by the header's bits.
        Codec::Ape if bits == 0 => return None,
        Codec::Ape if bits <= 8 => ("u8p", Some(bits)),
        Codec::Ape if bits <= 16 => ("s16p", Some(bits)),
        Codec::Ape => ("s32p", Some(bits)),
        Codec::Musepack7 | Codec::Musepack8 => ("s16p", None),
        // 32 bits: s32p or, for float data (a flag the track does not
        // carry), fltp; not stated.
        Codec::Wavpack if bits == 0 || bits > 24 => return None,
        Codec::Wavpack if bits <= 8 => ("u8p", Some(bits)),
        Codec::Wavpack if bits <= 16 => ("s16p", Some(bits)),
        Codec::Wavpack => ("s32p", Some(bits)),
        Codec::Alac if bits == 0 => return None,
        Codec::Alac if bits <= 16 => ("s16p", Some(bits)),
        Codec::Alac => ("s32p", Some(bits)),
        Codec::TrueHd | Codec::Mlp => ("s32", Some(24)),
        Codec::PcmU8 | Codec::PcmS8 => ("u8", None),
        // ffmpeg's planar 8-bit PCM and 8SVX delta decoders give u8p.
        Codec::PcmS8Planar | Codec::Svx8Fib | Codec::Svx8Exp => ("u8p", None),
        Codec::PcmS16BePlanar => ("s16p", None),
        Codec::PcmS16Le | Codec::PcmS16Be | Codec::PcmAlaw | Codec::PcmMulaw => ("s16", None),
        Codec::PcmS24Le | Codec::PcmS24Be => ("s32", Some(24)),
        Codec::PcmS32Le | Codec::PcmS32Be => ("s32", None),
        Codec::PcmF32Le | Codec::PcmF32Be => ("flt", None),
        Codec::PcmF64Le | Codec::PcmF64Be => ("dbl", None),
        Codec::AdpcmMs
        | Codec::AdpcmYamaha
        | Codec::AdpcmSwf
        | Codec::AdpcmG722
        | Codec::AdpcmG726
        | Codec::AdpcmG726Le => ("s16", None),
        Codec::AdpcmImaWav | Codec::AdpcmImaQt | Codec::AdpcmImaWs => ("s16p", None),
        Codec::Gsm | Codec::GsmMs | Codec::Qcelp | Codec::Evrc | Codec::Ilbc => ("s16", None),
        _ => return None,
    })
}

/// The channel layout ffmpeg's decoder reports, named as ffmpeg names it,
/// for codecs whose decoders set one from the channel count (PCM in WAV or
/// AIFF has none unless the container gives a channel mask, which
/// [`Track`] does not carry, so no layout is stated for PCM).
pub fn channel_layout(t: &Track) -> Option<&'static str> {
    let decoder_sets_layout = matches!(
        t.codec,
        Codec::Aac
            | Codec::AacLatm
            | Codec::Mp1
            | Codec::Mp2
            | Codec::Mp3
            | Codec::Ac3
            | Codec::Eac3
            | Codec::Dts
            | Codec::Opus
            | Codec::Vorbis
            | Codec::Flac
            | Codec::Alac
            | Codec::AmrNb
            | Codec::AmrWb
            | Codec::TrueHd
            | Codec::Wavpack
            | Codec::Ape
            | Codec::Musepack7
            | Codec::Musepack8
            | Codec::DsdLsbfPlanar
            | Codec::DsdMsbfPlanar
            | Codec::DsdMsbf
            | Codec::Dst
            // ffmpeg's iff demuxer sets mono or stereo.
            | Codec::PcmS8Planar
            | Codec::PcmS16BePlanar
            | Codec::Svx8Fib
            | Codec::Svx8Exp
            // G.722 and G.726 decoders are mono-only and say so.
            | Codec::AdpcmG722
            | Codec::AdpcmG726
            | Codec::AdpcmG726Le
    );
    if !decoder_sets_layout {
        return None;
    }
    // Dolby and DTS decoders put the surround pair at the side; so do the
    // DSF channel types and DSDIFF speaker ids (`LS  `, `RS  `) of 5.1.
    let side = matches!(
        t.codec,
        Codec::Ac3
            | Codec::Eac3
            | Codec::Dts
            | Codec::DsdLsbfPlanar
            | Codec::DsdMsbfPlanar
            | Codec::DsdMsbf
            | Codec::Dst
    );
    Some(match (t.channels, side) {
        (1, _) => "mono",
        (2, _) => "stereo",
        (3, _) => "3.0",
        (4, _) => "quad",
        (5, false) => "5.0",
        (5, true) => "5.0(side)",
        (6, false) => "5.1",
        (6, true) => "5.1(side)",
        (7, _) => "6.1",
        (8, _) => "7.1",
        _ => return None,
    })
}

/// ffmpeg's named layouts by speaker mask (`channel_layout_map`).
const NAMED_MASKS: [(u32, &str); 27] = [
    (0x4, "mono"),
    (0x3, "stereo"),
    (0xB, "2.1"),
    (0x7, "3.0"),
    (0x103, "3.0(back)"),
    (0x107, "4.0"),
    (0x33, "quad"),
    (0x603, "quad(side)"),
    (0xF, "3.1"),
    (0x37, "5.0"),
    (0x607, "5.0(side)"),
    (0x10F, "4.1"),
    (0x3F, "5.1"),
    (0x60F, "5.1(side)"),
    (0x707, "6.0"),
    (0x6C3, "6.0(front)"),
    (0x137, "hexagonal"),
    (0x70F, "6.1"),
    (0x13F, "6.1(back)"),
    (0x6CB, "6.1(front)"),
    (0x637, "7.0"),
    (0x6C7, "7.0(front)"),
    (0x63F, "7.1"),
    (0x6CF, "7.1(wide)"),
    (0xFF, "7.1(wide-side)"),
    (0x737, "octagonal"),
    (0x60000603, "downmix"),
];

/// Speaker names by mask bit, as ffmpeg abbreviates them.
const SPEAKERS: [&str; 18] = [
    "FL", "FR", "FC", "LFE", "BL", "BR", "FLC", "FRC", "BC", "SL", "SR", "TC", "TFL", "TFC", "TFR", "TBL", "TBC", "TBR",
];

/// ffmpeg's description of a speaker mask (a WAVE_FORMAT_EXTENSIBLE
/// `dwChannelMask`): a layout's name, else `N channels (FL+FR+...)`.
/// `None` for a mask with bits ffmpeg has no name for here.
pub fn mask_layout(mask: u32) -> Option<String> {
    if let Some((_, n)) = NAMED_MASKS.iter().find(|(m, _)| *m == mask) {
        return Some((*n).to_owned());
    }
    if mask == 0 || mask >> SPEAKERS.len() != 0 {
        return None;
    }
    let names: Vec<&str> = SPEAKERS
        .iter()
        .enumerate()
        .filter(|(i, _)| mask & (1 << i) != 0)
        .map(|(_, n)| *n)
        .collect();
    Some(format!("{} channels ({})", names.len(), names.join("+")))
}

#[cfg(test)]
mod tests {
    use super::*;
    use mediaslice::TrackKind;

    fn audio(codec: Codec, channels: u16, bits: u16) -> Track {
        Track {
            kind: TrackKind::Audio,
            codec,
            channels,
            bits_per_sample: bits,
            ..Track::default()
        }
    }

    #[test]
    fn sample_formats_follow_the_decoder() {
        assert_eq!(sample_fmt(&audio(Codec::Flac, 2, 16)), Some(("s16", Some(16))));
        assert_eq!(sample_fmt(&audio(Codec::Flac, 2, 24)), Some(("s32", Some(24))));
        assert_eq!(sample_fmt(&audio(Codec::Flac, 2, 0)), None);
        assert_eq!(sample_fmt(&audio(Codec::Aac, 2, 16)), Some(("fltp", None)));
        assert_eq!(sample_fmt(&audio(Codec::PcmS24Le, 2, 24)), Some(("s32", Some(24))));
        assert_eq!(sample_fmt(&audio(Codec::Alac, 2, 20)), Some(("s32p", Some(20))));
    }

    #[test]
    fn bits_per_sample_is_the_codecs() {
        assert_eq!(bits_per_sample(Codec::Flac), 0);
        assert_eq!(bits_per_sample(Codec::PcmMulaw), 8);
        assert_eq!(bits_per_sample(Codec::AdpcmMs), 4);
        assert_eq!(bits_per_sample(Codec::PcmF32Be), 32);
    }

    #[test]
    fn layouts_by_count() {
        assert_eq!(channel_layout(&audio(Codec::Aac, 1, 0)), Some("mono"));
        assert_eq!(channel_layout(&audio(Codec::Eac3, 6, 0)), Some("5.1(side)"));
        assert_eq!(channel_layout(&audio(Codec::Opus, 6, 0)), Some("5.1"));
        assert_eq!(channel_layout(&audio(Codec::PcmS16Le, 2, 16)), None);
        assert_eq!(channel_layout(&audio(Codec::Mp3, 0, 0)), None);
    }

    #[test]
    fn programs_only_in_ts() {
        assert_eq!(nb_programs(FormatKind::MpegTs, 3), 1);
        assert_eq!(nb_programs(FormatKind::Mp4, 3), 0);
        assert_eq!(format_long_name(FormatKind::Flac), Some("raw FLAC"));
    }

    #[test]
    fn speaker_masks_as_ffmpeg_names_them() {
        assert_eq!(mask_layout(0x3).as_deref(), Some("stereo"));
        assert_eq!(mask_layout(0x3F).as_deref(), Some("5.1"));
        assert_eq!(mask_layout(0x1).as_deref(), Some("1 channels (FL)"));
        assert_eq!(mask_layout(0x5).as_deref(), Some("2 channels (FL+FC)"));
        assert_eq!(mask_layout(0), None);
        assert_eq!(mask_layout(1 << 20), None);
    }
}
