//! [`FormatKind`]: the name of every container and stream format, and
//! ffprobe's name for it; [`MuxFormat`]: the name of every format the write
//! side produces. A leaf: it imports nothing, so detection, the formats and
//! the drivers can all name a format without importing each other.

/// A container or stream format.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
#[non_exhaustive]
pub enum FormatKind {
    /// ISO base media file format: MP4, MOV, M4A, 3GP, fragmented MP4.
    Mp4,
    /// RIFF WAVE.
    Wav,
    /// RF64 / BW64 (WAVE with a `ds64` chunk for sizes over 4 GiB).
    Rf64,
    /// Sony Wave64.
    Wave64,
    /// ASF: WMV, WMA.
    Asf,
    /// Flash Video.
    Flv,
    /// Matroska, WebM and MKA (EBML DocType `matroska` or `webm`).
    Matroska,
    /// MPEG transport stream (188, 192 or 204-byte packets).
    MpegTs,
    /// MPEG program stream (PS, VOB, MPEG-1 system stream).
    MpegPs,
    /// AVI (RIFF `AVI `), including OpenDML.
    Avi,
    /// AIFF and AIFF-C.
    Aiff,
    /// Apple Core Audio Format.
    Caf,
    /// Sun / NeXT audio (`.au`, `.snd`).
    Au,
    /// TTA (True Audio) lossless, `TTA1`.
    Tta,
    /// Sony DSD Stream File (`DSD `, little-endian chunks).
    Dsf,
    /// Philips DSDIFF (`FRM8`/`DSD `): DSD or DST audio.
    Dff,
    /// EA IFF 85 `FORM` pictures (ILBM, PBM, ACBM, DEEP, RGB8, RGBN) and
    /// sounds (8SVX, 16SV). Only with the `iff` feature, so that the
    /// firmware image, which leaves it out, keeps its size.
    #[cfg(feature = "iff")]
    Iff,
    /// WavPack (`wvpk` blocks).
    WavPack,
    /// Monkey's Audio (`MAC `).
    Ape,
    /// Musepack stream version 7 (`MP+`).
    Musepack7,
    /// Musepack stream version 8 (`MPCK` packets).
    Musepack8,
    /// MXF (SMPTE ST 377-1 header partition pack).
    Mxf,
    /// Ogg (RFC 3533): Vorbis, Opus, Theora, FLAC, Speex.
    Ogg,
    /// Native FLAC (RFC 9639).
    Flac,
    /// MPEG audio elementary stream (MP1, MP2, MP3) with ID3 tags.
    Mp3,
    /// AAC in ADTS frames.
    Aac,
    /// AC-3 (ATSC A/52) elementary stream.
    Ac3,
    /// E-AC-3 (ATSC A/52 Annex E) elementary stream.
    Eac3,
    /// AMR-NB or AMR-WB storage format (RFC 4867 §5).
    Amr,
    /// H.264 Annex B byte stream.
    H264,
    /// H.265 Annex B byte stream.
    Hevc,
    /// IVF (VP8, VP9, AV1 frames with a 32-byte header).
    Ivf,
    /// AV1 low-overhead bitstream format (OBUs with size fields).
    Obu,
    /// AV1 Annex B length-delimited bitstream (AV1 spec Annex B).
    Av1AnnexB,
    /// DV (IEC 61834 / SMPTE 314M DIF stream).
    Dv,
    /// MPEG-1/2 video elementary stream.
    MpegVideo,
    /// MPEG-4 Part 2 video elementary stream.
    M4v,
}

impl FormatKind {
    /// ffprobe's `format_name` for this format.
    pub const fn ffmpeg_name(self) -> &'static str {
        match self {
            FormatKind::Mp4 => "mov,mp4,m4a,3gp,3g2,mj2",
            FormatKind::Wav | FormatKind::Rf64 => "wav",
            FormatKind::Wave64 => "w64",
            FormatKind::Asf => "asf",
            FormatKind::Flv => "flv",
            FormatKind::Matroska => "matroska,webm",
            FormatKind::MpegTs => "mpegts",
            FormatKind::MpegPs => "mpeg",
            FormatKind::Avi => "avi",
            FormatKind::Aiff => "aiff",
            FormatKind::Caf => "caf",
            FormatKind::Au => "au",
            FormatKind::Tta => "tta",
            FormatKind::Dsf => "dsf",
            FormatKind::Dff => "iff",
            #[cfg(feature = "iff")]
            FormatKind::Iff => "iff",
            FormatKind::WavPack => "wv",
            FormatKind::Ape => "ape",
            FormatKind::Musepack7 => "mpc",
            FormatKind::Musepack8 => "mpc8",
            FormatKind::Mxf => "mxf",
            FormatKind::Ogg => "ogg",
            FormatKind::Flac => "flac",
            FormatKind::Mp3 => "mp3",
            FormatKind::Aac => "aac",
            FormatKind::Ac3 => "ac3",
            FormatKind::Eac3 => "eac3",
            FormatKind::Amr => "amr",
            FormatKind::H264 => "h264",
            FormatKind::Hevc => "hevc",
            FormatKind::Ivf => "ivf",
            FormatKind::Obu => "obu",
            FormatKind::Av1AnnexB => "av1",
            FormatKind::Dv => "dv",
            FormatKind::MpegVideo => "mpegvideo",
            FormatKind::M4v => "m4v",
        }
    }

    /// A short name for people.
    pub const fn name(self) -> &'static str {
        match self {
            FormatKind::Mp4 => "ISO BMFF (MP4/MOV)",
            FormatKind::Wav => "WAV",
            FormatKind::Rf64 => "RF64",
            FormatKind::Wave64 => "Wave64",
            FormatKind::Asf => "ASF (WMV/WMA)",
            FormatKind::Flv => "FLV",
            FormatKind::Matroska => "Matroska / WebM",
            FormatKind::MpegTs => "MPEG-TS",
            FormatKind::MpegPs => "MPEG-PS",
            FormatKind::Avi => "AVI",
            FormatKind::Aiff => "AIFF",
            FormatKind::Caf => "CAF",
            FormatKind::Au => "Sun AU",
            FormatKind::Tta => "TTA",
            FormatKind::Dsf => "DSF",
            FormatKind::Dff => "DSDIFF",
            #[cfg(feature = "iff")]
            FormatKind::Iff => "IFF",
            FormatKind::WavPack => "WavPack",
            FormatKind::Ape => "Monkey's Audio",
            FormatKind::Musepack7 => "Musepack SV7",
            FormatKind::Musepack8 => "Musepack SV8",
            FormatKind::Mxf => "MXF",
            FormatKind::Ogg => "Ogg",
            FormatKind::Flac => "FLAC",
            FormatKind::Mp3 => "MPEG audio",
            FormatKind::Aac => "AAC (ADTS)",
            FormatKind::Ac3 => "AC-3",
            FormatKind::Eac3 => "E-AC-3",
            FormatKind::Amr => "AMR",
            FormatKind::H264 => "H.264 (Annex B)",
            FormatKind::Hevc => "H.265 (Annex B)",
            FormatKind::Ivf => "IVF",
            FormatKind::Obu => "AV1 (OBU)",
            FormatKind::Av1AnnexB => "AV1 (Annex B)",
            FormatKind::Dv => "DV",
            FormatKind::MpegVideo => "MPEG-1/2 video",
            FormatKind::M4v => "MPEG-4 Part 2 video",
        }
    }
}

impl core::fmt::Display for FormatKind {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str(self.name())
    }
}

/// A format the write side produces: the target of a
/// [`crate::mux::Muxer`]. Apart from [`FormatKind`] because a write target
/// says more than a read format (fragmented or not, WebM or Matroska) and
/// includes writers with no reader.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
#[non_exhaustive]
pub enum MuxFormat {
    /// mediaslice's packet dump (`mux::dump`, feature `dump`): every packet
    /// with a fixed header, length-prefixed. The write side's test target
    /// and a debugging aid; no other program reads it.
    Dump,
    /// Matroska (`.mkv`, `.mka`; feature `mkv`, `format::mkv::muxer`).
    Matroska,
    /// WebM (`.webm`): Matroska with DocType `webm`, restricted to VP8,
    /// VP9, AV1, Opus and Vorbis (feature `mkv`).
    WebM,
    /// ISO base media file format, progressive (`moov` after `mdat`;
    /// feature `mp4`, `format/mp4/muxer.rs`): brands `isom`, `iso2`,
    /// `avc1`, `mp41`.
    Mp4,
    /// QuickTime movie: the MP4 muxer with the `qt  ` brand (feature `mp4`).
    Mov,
    /// Fragmented MP4 / CMAF (feature `mp4`, `format/mp4/fmp4.rs`): an
    /// init segment (`ftyp` `iso6`, `moov` with `mvex`), then `moof` +
    /// `mdat` fragments cut as [`Fragmenting`] says (ISO/IEC 14496-12
    /// §8.8, ISO/IEC 23000-19). Writes to a sink that cannot patch too.
    Fmp4(Fragmenting),
    /// Hybrid MP4 (feature `mp4`, `format/mp4/fmp4_hybrid.rs`): written as
    /// [`MuxFormat::Fmp4`], so a cut recording keeps every complete
    /// fragment; at `finish` a progressive `moov` over the same payload is
    /// appended and the init `moov` becomes the header of one `mdat`, so
    /// the finished file is a normal MP4. Needs a sink that can patch and
    /// scratch for the index (about 4 bytes a sample) beside the
    /// fragment's.
    HybridMp4(Fragmenting),
    /// AVI (feature `avi`, `format/avi/muxer.rs`): `RIFF AVI ` with
    /// `hdrl`, `movi` and `idx1`; past 1 GiB OpenDML `RIFF AVIX`
    /// extensions with `indx`/`ix##` indexes. Needs a sink that can patch.
    Avi,
    /// MPEG transport stream (feature `ts`, `format/mpeg/ts_mux/`): SDT
    /// (ETSI EN 300 468), PAT, one PMT, one PES per packet in 188-byte
    /// packets (ISO/IEC 13818-1).
    /// Writes to a stream: nothing is patched.
    Ts,
}

/// How [`MuxFormat::Fmp4`] cuts fragments.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct Fragmenting {
    /// Least duration of a fragment, in milliseconds: a fragment closes at
    /// the first keyframe of the first video track (any packet of the first
    /// track when there is no video) that starts at least this long after
    /// the fragment's first sample of that track.
    pub duration_ms: u32,
    /// Adds the CMAF brand `cmfc` (ISO/IEC 23000-19 §7.2) to `ftyp`. A
    /// file with one track is then a CMAF track file.
    pub cmaf: bool,
    /// Most samples (all tracks) in one fragment: the records the muxer
    /// keeps in the caller's scratch, 24 bytes each. A fragment that
    /// reaches it is closed early and counted (`FragmentStats`).
    pub max_samples: u32,
    /// Writes a segment type box (`styp`, brand `msdh`, ISO/IEC 14496-12
    /// §8.16.2, ISO/IEC 23009-1 §6.3.4.2) before each fragment, so that
    /// each is a DASH media segment that says so (24 bytes a fragment).
    /// Not in a hybrid MP4.
    pub styp: bool,
    /// Writes a segment index (`sidx`, §8.16.3: one reference to the
    /// fragment, its earliest presentation time, duration and whether it
    /// starts with a sync sample, for the track that cuts the fragments)
    /// before each fragment (52 bytes a fragment). Not in a hybrid MP4.
    pub sidx: bool,
}

impl Fragmenting {
    /// 2-second fragments, CMAF brand, at most 4096 samples a fragment, no
    /// `styp` or `sidx`.
    pub const DEFAULT: Fragmenting = Fragmenting {
        duration_ms: 2000,
        cmaf: true,
        max_samples: 4096,
        styp: false,
        sidx: false,
    };

    /// [`Fragmenting::DEFAULT`] with fragments of at least `ms`.
    pub const fn with_duration_ms(ms: u32) -> Self {
        Fragmenting {
            duration_ms: ms,
            ..Fragmenting::DEFAULT
        }
    }
}

impl Default for Fragmenting {
    fn default() -> Self {
        Fragmenting::DEFAULT
    }
}

impl MuxFormat {
    /// A short name for people.
    pub const fn name(self) -> &'static str {
        match self {
            MuxFormat::Dump => "mediaslice packet dump",
            MuxFormat::Matroska => "Matroska",
            MuxFormat::WebM => "WebM",
            MuxFormat::Mp4 => "MP4 (ISO base media file format)",
            MuxFormat::Mov => "QuickTime movie",
            MuxFormat::Fmp4(_) => "fragmented MP4 (CMAF)",
            MuxFormat::HybridMp4(_) => "hybrid MP4 (fragmented while written, progressive when finished)",
            MuxFormat::Avi => "AVI",
            MuxFormat::Ts => "MPEG transport stream",
        }
    }
}

impl core::fmt::Display for MuxFormat {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str(self.name())
    }
}
