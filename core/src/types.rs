//! Tracks, packets, time bases and codec identifiers shared by every format.

/// A rational number, used for time bases (`num/den` seconds per tick).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct Rational {
    /// Numerator.
    pub num: u32,
    /// Denominator.
    pub den: u32,
}

impl Rational {
    /// `num/den`.
    pub const fn new(num: u32, den: u32) -> Self {
        Rational { num, den }
    }

    /// Converts `ts` ticks of this base to microseconds, rounding to
    /// nearest (as ffmpeg's `av_rescale`), saturating.
    pub fn to_micros(self, ts: i64) -> i64 {
        rescale(ts, self, Rational::new(1, 1_000_000))
    }

    /// Converts microseconds to ticks of this base, rounding down, saturating.
    pub fn from_micros(self, us: i64) -> i64 {
        if self.num == 0 {
            return 0;
        }
        let v = (us as i128) * (self.den as i128) / ((self.num as i128) * 1_000_000);
        v.clamp(i64::MIN as i128, i64::MAX as i128) as i64
    }
}

/// Rescales `v` from base `from` to base `to`, rounding to nearest, saturating.
///
/// Out of line: its 128-bit arithmetic is several hundred bytes of code that
/// every caller would otherwise carry (measured on thumbv7em).
#[inline(never)]
pub fn rescale(v: i64, from: Rational, to: Rational) -> i64 {
    // Fast path in 64 bits when nothing overflows: the same products and the
    // same rounding as the 128-bit path below, without `__divti3` (this runs
    // per packet: MP4 interleaving, Matroska block times).
    let m = u64::from(from.num) * u64::from(to.den);
    let d = u64::from(from.den) * u64::from(to.num);
    if let (Ok(m), Ok(d)) = (i64::try_from(m), i64::try_from(d)) {
        if d != 0 {
            let half = d / 2;
            let sum = v.checked_mul(m).and_then(|n| {
                if n >= 0 {
                    n.checked_add(half)
                } else {
                    n.checked_sub(half)
                }
            });
            if let Some(n) = sum {
                return n / d;
            }
        }
    }
    rescale_wide(v, from, to)
}

/// [`rescale`] in 128 bits: the definition, for any input.
fn rescale_wide(v: i64, from: Rational, to: Rational) -> i64 {
    let num = (v as i128) * (from.num as i128) * (to.den as i128);
    let den = (from.den as u128) * (to.num as u128);
    if den == 0 {
        return 0;
    }
    // |num| < 2^127, so the rounded magnitude fits an i128; the sign is put
    // back after (as `(num ± den/2) / den`, which truncates toward zero).
    let m = div_u128(num.unsigned_abs() + den / 2, den) as i128;
    let r = if num >= 0 { m } else { -m };
    r.clamp(i64::MIN as i128, i64::MAX as i128) as i64
}

/// Rescales `v` from base `from` to base `to` exactly as ffmpeg's
/// `av_rescale_q` (`av_rescale_q_rnd` with `AV_ROUND_NEAR_INF`): the exact
/// quotient rounded to nearest, ties away from zero, `i64::MIN`
/// (`AV_NOPTS_VALUE`) when the result does not fit an `i64` or a base has
/// a zero denominator or `to` a zero numerator, and `i64::MIN` taken as
/// `-i64::MAX`. It differs from [`rescale`] only there ([`rescale`]
/// saturates and gives 0). Bases with a term over `i32::MAX`, which an
/// `AVRational` cannot hold, are computed exactly all the same.
pub fn rescale_q(v: i64, from: Rational, to: Rational) -> i64 {
    let b = u128::from(from.num) * u128::from(to.den);
    let c = u128::from(to.num) * u128::from(from.den);
    if c == 0 {
        return i64::MIN;
    }
    // |v| <= 2^63 - 1 and b < 2^64: the product and c/2 fit 128 bits.
    let a = u128::from(v.max(-i64::MAX).unsigned_abs());
    let m = div_u128(a * b + c / 2, c);
    match i64::try_from(m) {
        Ok(m) if v < 0 => -m,
        Ok(m) => m,
        Err(_) => i64::MIN,
    }
}

/// `n / d` on 128-bit values, out of line: on 32-bit targets every inlined
/// 128-bit division is several hundred bytes of code. Panics when `d` is 0,
/// as `/` does; callers divide by nonzero values.
#[inline(never)]
pub(crate) fn div_u128(n: u128, d: u128) -> u128 {
    n / d
}

/// What a track carries.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
#[non_exhaustive]
pub enum TrackKind {
    /// Pictures.
    Video,
    /// Sound.
    Audio,
    /// Text or bitmap subtitles and captions.
    Subtitle,
    /// Timed data (timecodes, metadata, hint tracks).
    Data,
    /// Anything else.
    #[default]
    Unknown,
}

impl TrackKind {
    /// ffprobe's `codec_type` spelling.
    pub const fn ffmpeg_name(self) -> &'static str {
        match self {
            TrackKind::Video => "video",
            TrackKind::Audio => "audio",
            TrackKind::Subtitle => "subtitle",
            TrackKind::Data => "data",
            TrackKind::Unknown => "unknown",
        }
    }
}

macro_rules! codecs {
    (
        $( $(#[$m:meta])* $v:ident => $n:literal, )*
        // After `;`, codecs of formats left out of some builds: the
        // variant and its name exist only with the feature, so the firmware
        // image's name table does not grow for a format it does not read.
        // Last, so the discriminants of the others stay put.
        ; $( #[cfg($c:meta)] $gv:ident => $gn:literal, )*
    ) => {
        /// A codec, as far as the container says.
        ///
        /// [`Codec::ffmpeg_name`] gives ffprobe's `codec_name` spelling.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
        #[cfg_attr(feature = "defmt", derive(defmt::Format))]
        #[non_exhaustive]
        pub enum Codec {
            $( $(#[$m])* #[doc = $n] $v, )*
            $( #[cfg($c)] #[doc = $gn] $gv, )*
        }
        /// ffprobe's names in declaration order: one table of `&str`
        /// (a `match` compiles to a pointer table and a length table that
        /// LLVM widens to 256 entries each past 128 variants, 1 KiB more
        /// flash in the firmware image).
        const CODEC_NAMES: &[&str] = &[ $( $n, )* $( #[cfg($c)] $gn, )* ];
        impl Codec {
            /// ffprobe's `codec_name` for this codec.
            pub const fn ffmpeg_name(self) -> &'static str {
                let i = self as usize;
                if i < CODEC_NAMES.len() {
                    #[allow(clippy::indexing_slicing, reason = "i is below the length, checked above")]
                    CODEC_NAMES[i]
                } else {
                    "none"
                }
            }
        }
    };
}

codecs! {
    #[default]
    Unknown => "none",
    H264 => "h264",
    Hevc => "hevc",
    Vvc => "vvc",
    Av1 => "av1",
    Vp8 => "vp8",
    Vp9 => "vp9",
    Mpeg4 => "mpeg4",
    Mpeg1Video => "mpeg1video",
    Mpeg2Video => "mpeg2video",
    H263 => "h263",
    Mjpeg => "mjpeg",
    Png => "png",
    Bmp => "bmp",
    ProRes => "prores",
    Theora => "theora",
    Wmv1 => "wmv1",
    Wmv2 => "wmv2",
    Wmv3 => "wmv3",
    Vc1 => "vc1",
    Flv1 => "flv1",
    DvVideo => "dvvideo",
    Jpeg2000 => "jpeg2000",
    Dnxhd => "dnxhd",
    RawVideo => "rawvideo",
    Aac => "aac",
    Mp1 => "mp1",
    Mp2 => "mp2",
    Mp3 => "mp3",
    Ac3 => "ac3",
    Eac3 => "eac3",
    Ac4 => "ac4",
    Dts => "dts",
    TrueHd => "truehd",
    Mlp => "mlp",
    Opus => "opus",
    Vorbis => "vorbis",
    Flac => "flac",
    Alac => "alac",
    Speex => "speex",
    AmrNb => "amr_nb",
    AmrWb => "amr_wb",
    Wmav1 => "wmav1",
    Wmav2 => "wmav2",
    WmaPro => "wmapro",
    WmaLossless => "wmalossless",
    Mp4Als => "mp4als",
    Qcelp => "qcelp",
    Evrc => "evrc",
    Gsm => "gsm",
    GsmMs => "gsm_ms",
    AdpcmImaWav => "adpcm_ima_wav",
    AdpcmImaQt => "adpcm_ima_qt",
    AdpcmMs => "adpcm_ms",
    AdpcmG726 => "adpcm_g726",
    AdpcmYamaha => "adpcm_yamaha",
    PcmU8 => "pcm_u8",
    PcmS8 => "pcm_s8",
    PcmS16Le => "pcm_s16le",
    PcmS16Be => "pcm_s16be",
    PcmS24Le => "pcm_s24le",
    PcmS24Be => "pcm_s24be",
    PcmS32Le => "pcm_s32le",
    PcmS32Be => "pcm_s32be",
    PcmF32Le => "pcm_f32le",
    PcmF32Be => "pcm_f32be",
    PcmF64Le => "pcm_f64le",
    PcmF64Be => "pcm_f64be",
    PcmAlaw => "pcm_alaw",
    PcmMulaw => "pcm_mulaw",
    MovText => "mov_text",
    Eia608 => "eia_608",
    WebVtt => "webvtt",
    Subrip => "subrip",
    Ass => "ass",
    DvdSub => "dvd_subtitle",
    Pgs => "hdmv_pgs_subtitle",
    TimedId3 => "timed_id3",
    BinData => "bin_data",
    Text => "text",
    DvbSub => "dvb_subtitle",
    DvbTeletext => "dvb_teletext",
    HdmvTextSub => "hdmv_text_subtitle",
    Wavpack => "wavpack",
    Tta => "tta",
    Ape => "ape",
    Musepack7 => "musepack7",
    Musepack8 => "musepack8",
    DsdLsbfPlanar => "dsd_lsbf_planar",
    DsdMsbfPlanar => "dsd_msbf_planar",
    DsdMsbf => "dsd_msbf",
    Dst => "dst",
    Dirac => "dirac",
    Rv10 => "rv10",
    Rv20 => "rv20",
    Rv30 => "rv30",
    Rv40 => "rv40",
    Cook => "cook",
    Ra144 => "ra_144",
    Ra288 => "ra_288",
    Atrac3 => "atrac3",
    Sipr => "sipr",
    Gif => "gif",
    Webp => "webp",
    Tiff => "tiff",
    Msmpeg4v1 => "msmpeg4v1",
    Msmpeg4v2 => "msmpeg4v2",
    Msmpeg4v3 => "msmpeg4v3",
    Huffyuv => "huffyuv",
    Ffv1 => "ffv1",
    Cinepak => "cinepak",
    Msvideo1 => "msvideo1",
    Msrle => "msrle",
    Mace3 => "mace3",
    Mace6 => "mace6",
    Qdm2 => "qdm2",
    Qdmc => "qdmc",
    Ilbc => "ilbc",
    AdpcmG722 => "adpcm_g722",
    AdpcmG726Le => "adpcm_g726le",
    AdpcmImaWs => "adpcm_ima_ws",
    WmaVoice => "wmavoice",
    Vp6f => "vp6f",
    Vp6a => "vp6a",
    FlashSv => "flashsv",
    FlashSv2 => "flashsv2",
    AdpcmSwf => "adpcm_swf",
    Nellymoser => "nellymoser",
    AacLatm => "aac_latm",
    ;
    #[cfg(feature = "iff")]
    IffIlbm => "iff_ilbm",
    #[cfg(feature = "iff")]
    PcmS8Planar => "pcm_s8_planar",
    #[cfg(feature = "iff")]
    PcmS16BePlanar => "pcm_s16be_planar",
    #[cfg(feature = "iff")]
    Svx8Fib => "8svx_fib",
    #[cfg(feature = "iff")]
    Svx8Exp => "8svx_exp",
}

/// A byte range of the input (for codec configuration, tags, attachments).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct ByteRange {
    /// Offset of the first byte.
    pub offset: u64,
    /// Length in bytes.
    pub len: u32,
}

pub use crate::language::Language;

/// One track (stream) of the input.
#[derive(Debug, Clone, Default, PartialEq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct Track {
    /// The container's own identifier (MP4 track_ID, Matroska TrackNumber,
    /// TS PID, or the index where the container has none).
    pub id: u32,
    /// Video, audio, subtitle or data.
    pub kind: TrackKind,
    /// The codec.
    pub codec: Codec,
    /// The container's codec tag (FourCC as big-endian u32, or WAVE format
    /// tag), 0 when absent.
    pub codec_tag: u32,
    /// Seconds per timestamp tick of this track's packets.
    pub time_base: Rational,
    /// Duration in `time_base` ticks, when the container says.
    pub duration: Option<u64>,
    /// Number of packets, when known without reading them.
    pub frames: Option<u64>,
    /// Picture width in pixels (video).
    pub width: u32,
    /// Picture height in pixels (video).
    pub height: u32,
    /// Samples per second (audio).
    pub sample_rate: u32,
    /// Channel count (audio).
    pub channels: u16,
    /// Bits per coded sample, 0 when not applicable.
    pub bits_per_sample: u16,
    /// Bytes per block of interleaved samples (PCM and ADPCM), 0 when unknown.
    pub block_align: u32,
    /// Average bit rate in bits per second, 0 when unknown.
    pub bit_rate: u32,
    /// Language, empty when unknown or undetermined.
    pub language: Language,
    /// Codec configuration record in the input (avcC, hvcC, esds
    /// DecoderSpecificInfo, dOps, CodecPrivate, ...), read with
    /// `Demuxer::codec_config`.
    pub config: Option<ByteRange>,
    /// Whether the container marks this the default track of its kind.
    pub default: bool,
    /// Whether the container marks this track forced (subtitles to show even
    /// when subtitles are off: Matroska FlagForced).
    pub forced: bool,
    /// The track is a picture attached to the file (cover art) that
    /// ffprobe shows as a one-packet video stream.
    pub attached_picture: bool,
}

/// Flags of a packet.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct PacketFlags {
    /// A random access point: decoding can start here.
    pub keyframe: bool,
    /// The container says the packet is to be decoded but not shown (for
    /// example, before an edit list's start).
    pub discard: bool,
    /// The input ends inside this packet: `data` holds only the bytes before
    /// the cut (ffprobe reports such a packet too). The next call reports the
    /// truncation.
    pub truncated: bool,
}

/// One packet: a borrow of the input (slice mode) or of scratch (reader mode),
/// valid until the next call on the demuxer.
///
/// `Debug` shows the payload's length and first bytes, not the payload.
#[derive(Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct Packet<'a> {
    /// Index into the demuxer's track list.
    pub track: usize,
    /// Presentation timestamp in the track's `time_base`.
    pub pts: Option<i64>,
    /// Decoding timestamp in the track's `time_base`.
    pub dts: Option<i64>,
    /// Duration in the track's `time_base`.
    pub duration: Option<u64>,
    /// Keyframe and discard flags.
    pub flags: PacketFlags,
    /// Byte offset of the payload in the input (of its first piece, when
    /// joined).
    pub pos: Option<u64>,
    /// Whether `data` is the contiguous range `pos..pos+data.len()` of the
    /// input, so a caller holding the input slice may keep that range.
    pub contiguous: bool,
    /// The payload.
    pub data: &'a [u8],
}

impl<'a> Packet<'a> {
    /// A packet of `track` stored contiguously in the input at `pos`, with
    /// `data` its bytes: no timestamps, no flags. Add them with
    /// [`Packet::with_times`] and [`Packet::with_flags`].
    pub const fn contiguous(track: usize, pos: u64, data: &'a [u8]) -> Self {
        Packet {
            track,
            pts: None,
            dts: None,
            duration: None,
            flags: PacketFlags {
                keyframe: false,
                discard: false,
                truncated: false,
            },
            pos: Some(pos),
            contiguous: true,
            data,
        }
    }

    /// A packet of `track` joined from pieces of the input (in scratch),
    /// whose first piece is at `pos`.
    pub const fn joined(track: usize, pos: Option<u64>, data: &'a [u8]) -> Self {
        Packet {
            pos,
            contiguous: false,
            ..Packet::contiguous(track, 0, data)
        }
    }

    /// The same packet with these timestamps and duration.
    pub const fn with_times(self, pts: Option<i64>, dts: Option<i64>, duration: Option<u64>) -> Self {
        Packet {
            pts,
            dts,
            duration,
            ..self
        }
    }

    /// The same packet with these flags.
    pub const fn with_flags(self, flags: PacketFlags) -> Self {
        Packet { flags, ..self }
    }
}

impl PacketFlags {
    /// Flags with only `keyframe` set as given.
    pub const fn keyframe(keyframe: bool) -> Self {
        PacketFlags {
            keyframe,
            discard: false,
            truncated: false,
        }
    }
}

impl Packet<'_> {
    /// The payload's range in the input when it is stored contiguously.
    pub fn input_range(&self) -> Option<ByteRange> {
        if self.contiguous {
            Some(ByteRange {
                offset: self.pos?,
                len: u32::try_from(self.data.len()).ok()?,
            })
        } else {
            None
        }
    }
}

/// `num/den`, as ffprobe prints a time base.
impl core::fmt::Display for Rational {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        write!(f, "{}/{}", self.num, self.den)
    }
}

/// ffmpeg's name of the kind (`video`, `audio`, `subtitle`, `data`, ...).
impl core::fmt::Display for TrackKind {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str(self.ffmpeg_name())
    }
}

/// ffmpeg's codec name (`h264`, `aac`, `pcm_s16le`, ...).
impl core::fmt::Display for Codec {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str(self.ffmpeg_name())
    }
}

/// The packet's fields with the payload's length and its first 8 bytes
/// in place of the payload (a video frame would fill a log).
impl core::fmt::Debug for Packet<'_> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("Packet")
            .field("track", &self.track)
            .field("pts", &self.pts)
            .field("dts", &self.dts)
            .field("duration", &self.duration)
            .field("flags", &self.flags)
            .field("pos", &self.pos)
            .field("contiguous", &self.contiguous)
            .field("len", &self.data.len())
            .field("head", &self.data.get(..8).unwrap_or(self.data))
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The signed 128-bit form `rescale` had before it divided magnitudes
    /// (and before its 64-bit fast path): the definition both must keep.
    fn rescale_signed(v: i64, from: Rational, to: Rational) -> i64 {
        let num = (v as i128) * (from.num as i128) * (to.den as i128);
        let den = (from.den as i128) * (to.num as i128);
        if den == 0 {
            return 0;
        }
        let half = den / 2;
        let r = if num >= 0 {
            (num + half) / den
        } else {
            (num - half) / den
        };
        r.clamp(i64::MIN as i128, i64::MAX as i128) as i64
    }

    #[test]
    fn rescale_matches_the_signed_form() {
        let vs = [
            0,
            1,
            -1,
            2,
            -2,
            3,
            -3,
            1001,
            -1001,
            90_000,
            -90_000,
            i64::MAX,
            i64::MIN,
            i64::MAX - 1,
            i64::MIN + 1,
            12_345,
            -12_345,
            1 << 33,
            -(1 << 33),
            i64::from(i32::MAX),
            i64::MAX / 3,
        ];
        let bases = [
            Rational::new(1, 1_000_000),
            Rational::new(1, 44_100),
            Rational::new(1, 1),
            Rational::new(1, 1000),
            Rational::new(1, 90_000),
            Rational::new(1001, 30_000),
            Rational::new(3, 2),
            Rational::new(u32::MAX, 1),
            Rational::new(1, u32::MAX),
            Rational::new(u32::MAX, u32::MAX - 1),
            Rational::new(0, 1),
            Rational::new(1, 0),
        ];
        for &v in &vs {
            for &a in &bases {
                for &b in &bases {
                    assert_eq!(rescale(v, a, b), rescale_signed(v, a, b), "{v} {a:?} {b:?}");
                }
            }
        }
        assert_eq!(div_u128(u128::MAX, 3), u128::MAX / 3);
    }

    /// `rescale_q` as libavutil's `av_rescale_q` (values checked against
    /// libavutil 57 in `core/tests/convert_ffmpeg.rs`): ties away from
    /// zero, `i64::MIN` when it does not fit or a base is degenerate.
    #[test]
    fn rescale_q_as_av_rescale_q() {
        let (tb90k, ms, tb48k) = (
            Rational::new(1, 90_000),
            Rational::new(1, 1000),
            Rational::new(1, 48_000),
        );
        assert_eq!(rescale_q(45, tb90k, ms), 1); // 0.5 up
        assert_eq!(rescale_q(-45, tb90k, ms), -1); // -0.5 away from zero
        assert_eq!(rescale_q(44, tb90k, ms), 0);
        assert_eq!(rescale_q(-135, tb90k, ms), -2); // -1.5
        assert_eq!(rescale_q(1, ms, tb90k), 90);
        assert_eq!(rescale_q(1024, tb48k, tb90k), 1920);
        assert_eq!(rescale_q(1001, tb90k, tb48k), 534); // 533.87
        assert_eq!(rescale_q(-1001, tb90k, tb48k), -534);
        assert_eq!(rescale_q(3, Rational::new(1, 2), Rational::new(1, 1)), 2); // 1.5
        assert_eq!(rescale_q(i64::MAX, ms, tb90k), i64::MIN); // overflow
        assert_eq!(rescale_q(-i64::MAX, ms, tb90k), i64::MIN);
        assert_eq!(rescale_q(i64::MAX, tb90k, ms), 102_481_911_520_608_620);
        assert_eq!(rescale_q(i64::MIN, tb90k, ms), -102_481_911_520_608_620);
        assert_eq!(rescale_q(5, Rational::new(1, 0), ms), i64::MIN);
        assert_eq!(rescale_q(5, ms, Rational::new(0, 1)), i64::MIN);
        assert_eq!(rescale_q(5, Rational::new(0, 1), ms), 0);
        // Where nothing overflows, it is `rescale`.
        for v in [-1_000_000_007i64, -3, 0, 7, 1 << 40] {
            assert_eq!(rescale_q(v, tb90k, tb48k), rescale(v, tb90k, tb48k));
        }
    }
}
