//! The dispatch over every format demuxer and muxer compiled in: one enum
//! variant per format, no `Box<dyn>`. This is the one file that names every
//! format (as gimli-rs/object's `read/any.rs`); the interfaces they
//! implement are in [`super::traits`] and [`super::mux_traits`], which name
//! none.

// With no format compiled in, the dispatch uses none of its arguments.
#![cfg_attr(
    not(any(
        feature = "mp4",
        feature = "riff",
        feature = "asf",
        feature = "flv",
        feature = "mkv",
        feature = "ts",
        feature = "ps",
        feature = "avi",
        feature = "aiff",
        feature = "caf",
        feature = "au",
        feature = "tta",
        feature = "dsf",
        feature = "dff",
        feature = "iff",
        feature = "wavpack",
        feature = "ape",
        feature = "musepack",
        feature = "mxf",
        feature = "ogg",
        feature = "flac",
        feature = "mp3",
        feature = "aac",
        feature = "ac3",
        feature = "h264",
        feature = "hevc",
        feature = "ivf",
        feature = "amr",
        feature = "obu",
        feature = "dv",
        feature = "mpegvideo",
        feature = "m4v",
    )),
    allow(unused_variables, unused_imports)
)]

#[cfg_attr(
    not(any(feature = "dump", feature = "mkv", feature = "mp4", feature = "avi", feature = "ts")),
    allow(unused_imports)
)]
use super::mux_traits::FormatMuxer;
use super::mux_traits::{MuxContext, TrackSpec};
use super::traits::{Context, FormatDemuxer};
use crate::error::{Error, ErrorKind, Result};
use crate::kind::{FormatKind, MuxFormat};
use crate::pieces::PacketPieces;
use crate::sink::{Sink, Spill, SpillStore};
use crate::source::Source;
use crate::tags::{Tag, TagCursor};
use crate::types::Packet;

/// One variant per format demuxer compiled in: dispatch with no `Box<dyn>`.
///
/// Public so that firmware can measure `size_of::<AnyDemuxer>()`, the
/// demuxer state it must budget; its methods are the crate's own.
#[non_exhaustive]
#[allow(clippy::large_enum_variant)]
pub enum AnyDemuxer {
    /// ISO BMFF.
    #[cfg(feature = "mp4")]
    Mp4(crate::format::mp4::Mp4Demuxer),
    /// WAV, RF64, Wave64.
    #[cfg(feature = "riff")]
    Wav(crate::format::riff::WavDemuxer),
    /// ASF: WMV, WMA.
    #[cfg(feature = "asf")]
    Asf(crate::format::asf::AsfDemuxer),
    /// Flash Video.
    #[cfg(feature = "flv")]
    Flv(crate::format::flv::FlvDemuxer),
    /// Matroska, WebM, MKA.
    #[cfg(feature = "mkv")]
    Matroska(crate::format::mkv::MkvDemuxer),
    /// MPEG-TS.
    #[cfg(feature = "ts")]
    Ts(crate::format::mpeg::ts::TsDemuxer),
    /// MPEG-PS.
    #[cfg(feature = "ps")]
    Ps(crate::format::mpeg::ps::PsDemuxer),
    /// AVI and OpenDML.
    #[cfg(feature = "avi")]
    Avi(crate::format::avi::AviDemuxer),
    /// AIFF and AIFF-C.
    #[cfg(feature = "aiff")]
    Aiff(crate::format::aiff::AiffDemuxer),
    /// Apple Core Audio Format.
    #[cfg(feature = "caf")]
    Caf(crate::format::caf::CafDemuxer),
    /// EA IFF 85 pictures and sounds.
    #[cfg(feature = "iff")]
    Iff(crate::format::iff::IffDemuxer),
    /// Sun / NeXT audio.
    #[cfg(feature = "au")]
    Au(crate::format::au::AuDemuxer),
    /// TTA (True Audio).
    #[cfg(feature = "tta")]
    Tta(crate::format::tta::TtaDemuxer),
    /// DSF (Sony DSD Stream File).
    #[cfg(feature = "dsf")]
    Dsf(crate::format::dsf::DsfDemuxer),
    /// DSDIFF.
    #[cfg(feature = "dff")]
    Dff(crate::format::dff::DffDemuxer),
    /// WavPack.
    #[cfg(feature = "wavpack")]
    WavPack(crate::format::wavpack::WavPackDemuxer),
    /// Monkey's Audio.
    #[cfg(feature = "ape")]
    Ape(crate::format::ape::ApeDemuxer),
    /// Musepack SV7 and SV8.
    #[cfg(feature = "musepack")]
    Musepack(crate::format::musepack::MusepackDemuxer),
    /// MXF.
    #[cfg(feature = "mxf")]
    Mxf(crate::format::mxf::MxfDemuxer),
    /// Ogg.
    #[cfg(feature = "ogg")]
    Ogg(crate::format::ogg::OggDemuxer),
    /// Native FLAC.
    #[cfg(feature = "flac")]
    Flac(crate::format::flac::FlacDemuxer),
    /// MPEG audio elementary stream.
    #[cfg(feature = "mp3")]
    Mp3(crate::format::es::mp3::Mp3Demuxer),
    /// AAC in ADTS frames.
    #[cfg(feature = "aac")]
    Adts(crate::format::es::adts::AdtsDemuxer),
    /// AC-3 and E-AC-3.
    #[cfg(feature = "ac3")]
    Ac3(crate::format::es::ac3::Ac3Demuxer),
    /// H.264 Annex B.
    #[cfg(feature = "h264")]
    H264(crate::format::es::annexb::H264Demuxer),
    /// H.265 Annex B.
    #[cfg(feature = "hevc")]
    Hevc(crate::format::es::annexb::HevcDemuxer),
    /// IVF.
    #[cfg(feature = "ivf")]
    Ivf(crate::format::es::ivf::IvfDemuxer),
    /// AMR storage format.
    #[cfg(feature = "amr")]
    Amr(crate::format::es::amr::AmrDemuxer),
    /// AV1 low-overhead OBU stream.
    #[cfg(feature = "obu")]
    Obu(crate::format::es::obu::ObuDemuxer),
    /// AV1 Annex B stream.
    #[cfg(feature = "obu")]
    Av1AnnexB(crate::format::es::obu::Av1AnnexBDemuxer),
    /// DV.
    #[cfg(feature = "dv")]
    Dv(crate::format::es::dv::DvDemuxer),
    /// MPEG-1/2 video elementary stream.
    #[cfg(feature = "mpegvideo")]
    MpegVideo(crate::format::es::mpegvideo::MpegVideoDemuxer),
    /// MPEG-4 Part 2 video elementary stream.
    #[cfg(feature = "m4v")]
    M4v(crate::format::es::m4v::M4vDemuxer),
    /// No value: keeps the enum inhabited-by-type when no format feature is
    /// compiled in, so `core` builds with none (it can never be made).
    #[doc(hidden)]
    NoFormat(core::convert::Infallible),
}

macro_rules! dispatch {
    ($self:expr, $d:ident => $e:expr) => {
        match $self {
            #[cfg(feature = "mp4")]
            AnyDemuxer::Mp4($d) => $e,
            #[cfg(feature = "riff")]
            AnyDemuxer::Wav($d) => $e,
            #[cfg(feature = "asf")]
            AnyDemuxer::Asf($d) => $e,
            #[cfg(feature = "flv")]
            AnyDemuxer::Flv($d) => $e,
            #[cfg(feature = "mkv")]
            AnyDemuxer::Matroska($d) => $e,
            #[cfg(feature = "ts")]
            AnyDemuxer::Ts($d) => $e,
            #[cfg(feature = "ps")]
            AnyDemuxer::Ps($d) => $e,
            #[cfg(feature = "avi")]
            AnyDemuxer::Avi($d) => $e,
            #[cfg(feature = "aiff")]
            AnyDemuxer::Aiff($d) => $e,
            #[cfg(feature = "caf")]
            AnyDemuxer::Caf($d) => $e,
            #[cfg(feature = "iff")]
            AnyDemuxer::Iff($d) => $e,
            #[cfg(feature = "au")]
            AnyDemuxer::Au($d) => $e,
            #[cfg(feature = "tta")]
            AnyDemuxer::Tta($d) => $e,
            #[cfg(feature = "dsf")]
            AnyDemuxer::Dsf($d) => $e,
            #[cfg(feature = "dff")]
            AnyDemuxer::Dff($d) => $e,
            #[cfg(feature = "wavpack")]
            AnyDemuxer::WavPack($d) => $e,
            #[cfg(feature = "ape")]
            AnyDemuxer::Ape($d) => $e,
            #[cfg(feature = "musepack")]
            AnyDemuxer::Musepack($d) => $e,
            #[cfg(feature = "mxf")]
            AnyDemuxer::Mxf($d) => $e,
            #[cfg(feature = "ogg")]
            AnyDemuxer::Ogg($d) => $e,
            #[cfg(feature = "flac")]
            AnyDemuxer::Flac($d) => $e,
            #[cfg(feature = "mp3")]
            AnyDemuxer::Mp3($d) => $e,
            #[cfg(feature = "aac")]
            AnyDemuxer::Adts($d) => $e,
            #[cfg(feature = "ac3")]
            AnyDemuxer::Ac3($d) => $e,
            #[cfg(feature = "h264")]
            AnyDemuxer::H264($d) => $e,
            #[cfg(feature = "hevc")]
            AnyDemuxer::Hevc($d) => $e,
            #[cfg(feature = "ivf")]
            AnyDemuxer::Ivf($d) => $e,
            #[cfg(feature = "amr")]
            AnyDemuxer::Amr($d) => $e,
            #[cfg(feature = "obu")]
            AnyDemuxer::Obu($d) => $e,
            #[cfg(feature = "mpegvideo")]
            AnyDemuxer::MpegVideo($d) => $e,
            #[cfg(feature = "m4v")]
            AnyDemuxer::M4v($d) => $e,
            #[cfg(feature = "obu")]
            AnyDemuxer::Av1AnnexB($d) => $e,
            #[cfg(feature = "dv")]
            AnyDemuxer::Dv($d) => $e,
            AnyDemuxer::NoFormat(never) => match *never {},
        }
    };
}

impl AnyDemuxer {
    /// Opens the demuxer of format `kind` over `src`.
    pub(crate) fn open<S: Source>(kind: FormatKind, src: &mut S, ctx: &mut Context) -> Result<Self> {
        match kind {
            #[cfg(feature = "mp4")]
            FormatKind::Mp4 => Ok(AnyDemuxer::Mp4(FormatDemuxer::open(src, ctx)?)),
            #[cfg(feature = "riff")]
            FormatKind::Wav | FormatKind::Rf64 | FormatKind::Wave64 => {
                Ok(AnyDemuxer::Wav(FormatDemuxer::open(src, ctx)?))
            }
            #[cfg(feature = "asf")]
            FormatKind::Asf => Ok(AnyDemuxer::Asf(FormatDemuxer::open(src, ctx)?)),
            #[cfg(feature = "flv")]
            FormatKind::Flv => Ok(AnyDemuxer::Flv(FormatDemuxer::open(src, ctx)?)),
            #[cfg(feature = "mkv")]
            FormatKind::Matroska => Ok(AnyDemuxer::Matroska(FormatDemuxer::open(src, ctx)?)),
            #[cfg(feature = "ts")]
            FormatKind::MpegTs => Ok(AnyDemuxer::Ts(FormatDemuxer::open(src, ctx)?)),
            #[cfg(feature = "ps")]
            FormatKind::MpegPs => Ok(AnyDemuxer::Ps(FormatDemuxer::open(src, ctx)?)),
            #[cfg(feature = "avi")]
            FormatKind::Avi => Ok(AnyDemuxer::Avi(FormatDemuxer::open(src, ctx)?)),
            #[cfg(feature = "aiff")]
            FormatKind::Aiff => Ok(AnyDemuxer::Aiff(FormatDemuxer::open(src, ctx)?)),
            #[cfg(feature = "caf")]
            FormatKind::Caf => Ok(AnyDemuxer::Caf(FormatDemuxer::open(src, ctx)?)),
            #[cfg(feature = "iff")]
            FormatKind::Iff => Ok(AnyDemuxer::Iff(FormatDemuxer::open(src, ctx)?)),
            #[cfg(feature = "au")]
            FormatKind::Au => Ok(AnyDemuxer::Au(FormatDemuxer::open(src, ctx)?)),
            #[cfg(feature = "tta")]
            FormatKind::Tta => Ok(AnyDemuxer::Tta(FormatDemuxer::open(src, ctx)?)),
            #[cfg(feature = "dsf")]
            FormatKind::Dsf => Ok(AnyDemuxer::Dsf(FormatDemuxer::open(src, ctx)?)),
            #[cfg(feature = "dff")]
            FormatKind::Dff => Ok(AnyDemuxer::Dff(FormatDemuxer::open(src, ctx)?)),
            #[cfg(feature = "wavpack")]
            FormatKind::WavPack => Ok(AnyDemuxer::WavPack(FormatDemuxer::open(src, ctx)?)),
            #[cfg(feature = "ape")]
            FormatKind::Ape => Ok(AnyDemuxer::Ape(FormatDemuxer::open(src, ctx)?)),
            #[cfg(feature = "musepack")]
            FormatKind::Musepack7 | FormatKind::Musepack8 => Ok(AnyDemuxer::Musepack(FormatDemuxer::open(src, ctx)?)),
            #[cfg(feature = "mxf")]
            FormatKind::Mxf => Ok(AnyDemuxer::Mxf(FormatDemuxer::open(src, ctx)?)),
            #[cfg(feature = "ogg")]
            FormatKind::Ogg => Ok(AnyDemuxer::Ogg(FormatDemuxer::open(src, ctx)?)),
            #[cfg(feature = "flac")]
            FormatKind::Flac => Ok(AnyDemuxer::Flac(FormatDemuxer::open(src, ctx)?)),
            #[cfg(feature = "mp3")]
            FormatKind::Mp3 => Ok(AnyDemuxer::Mp3(FormatDemuxer::open(src, ctx)?)),
            #[cfg(feature = "aac")]
            FormatKind::Aac => Ok(AnyDemuxer::Adts(FormatDemuxer::open(src, ctx)?)),
            #[cfg(feature = "ac3")]
            FormatKind::Ac3 | FormatKind::Eac3 => Ok(AnyDemuxer::Ac3(FormatDemuxer::open(src, ctx)?)),
            #[cfg(feature = "h264")]
            FormatKind::H264 => Ok(AnyDemuxer::H264(FormatDemuxer::open(src, ctx)?)),
            #[cfg(feature = "hevc")]
            FormatKind::Hevc => Ok(AnyDemuxer::Hevc(FormatDemuxer::open(src, ctx)?)),
            #[cfg(feature = "ivf")]
            FormatKind::Ivf => Ok(AnyDemuxer::Ivf(FormatDemuxer::open(src, ctx)?)),
            #[cfg(feature = "amr")]
            FormatKind::Amr => Ok(AnyDemuxer::Amr(FormatDemuxer::open(src, ctx)?)),
            #[cfg(feature = "obu")]
            FormatKind::Obu => Ok(AnyDemuxer::Obu(FormatDemuxer::open(src, ctx)?)),
            #[cfg(feature = "dv")]
            FormatKind::Dv => Ok(AnyDemuxer::Dv(FormatDemuxer::open(src, ctx)?)),
            #[cfg(feature = "obu")]
            FormatKind::Av1AnnexB => Ok(AnyDemuxer::Av1AnnexB(FormatDemuxer::open(src, ctx)?)),
            #[cfg(feature = "mpegvideo")]
            FormatKind::MpegVideo => Ok(AnyDemuxer::MpegVideo(FormatDemuxer::open(src, ctx)?)),
            #[cfg(feature = "m4v")]
            FormatKind::M4v => Ok(AnyDemuxer::M4v(FormatDemuxer::open(src, ctx)?)),
            #[allow(unreachable_patterns)]
            _ => Err(Error::new(
                ErrorKind::UnknownFormat,
                0,
                &"format not compiled into this build",
            )),
        }
    }

    /// See [`FormatDemuxer::max_packet_size`].
    pub(crate) fn max_packet_size(&self) -> Option<usize> {
        dispatch!(self, d => d.max_packet_size())
    }

    /// See [`FormatDemuxer::next_packet`].
    pub(crate) fn next_packet<'s, S: Source>(
        &mut self,
        src: &'s mut S,
        ctx: &mut Context,
    ) -> Result<Option<Packet<'s>>> {
        dispatch!(self, d => d.next_packet(src, ctx))
    }

    /// See [`FormatDemuxer::next_packet_pieces`].
    pub(crate) fn next_packet_pieces<'s, S: Source>(
        &'s mut self,
        src: &'s mut S,
        ctx: &mut Context,
    ) -> Result<Option<PacketPieces<'s, S>>> {
        dispatch!(self, d => d.next_packet_pieces(src, ctx))
    }

    /// See [`FormatDemuxer::seek`].
    pub(crate) fn seek<S: Source>(&mut self, src: &mut S, ctx: &mut Context, track: usize, ts: i64) -> Result<()> {
        dispatch!(self, d => d.seek(src, ctx, track, ts))
    }

    /// See [`FormatDemuxer::next_tag`].
    pub(crate) fn next_tag<'s, S: Source>(
        &'s mut self,
        src: &'s mut S,
        ctx: &Context,
        cur: &mut TagCursor,
    ) -> Result<Option<Tag<'s>>> {
        dispatch!(self, d => d.next_tag(src, ctx, cur))
    }

    /// See [`FormatDemuxer::next_chapter`].
    #[cfg(feature = "chapters")]
    pub(crate) fn next_chapter<'s, S: Source>(
        &mut self,
        src: &'s mut S,
        ctx: &Context,
        cur: &mut crate::chapters::ChapterCursor,
    ) -> Result<Option<crate::chapters::Chapter<'s>>> {
        dispatch!(self, d => d.next_chapter(src, ctx, cur))
    }

    /// See [`FormatDemuxer::next_program`].
    #[cfg(feature = "programs")]
    pub(crate) fn next_program<'c, S: Source>(
        &mut self,
        src: &mut S,
        ctx: &Context,
        cur: &'c mut crate::programs::ProgramCursor,
    ) -> Result<Option<crate::programs::Program<'c>>> {
        dispatch!(self, d => d.next_program(src, ctx, cur))
    }

    /// See [`FormatDemuxer::program_count`].
    #[cfg(feature = "programs")]
    pub(crate) fn program_count<S: Source>(&mut self, src: &mut S, ctx: &Context) -> Result<usize> {
        dispatch!(self, d => d.program_count(src, ctx))
    }

    /// See [`FormatDemuxer::header_packet`].
    pub(crate) fn header_packet<'s, S: Source>(
        &mut self,
        src: &'s mut S,
        ctx: &Context,
        track: usize,
        index: usize,
    ) -> Result<Option<&'s [u8]>> {
        dispatch!(self, d => d.header_packet(src, ctx, track, index))
    }
}

/// One variant per format muxer compiled in: the write side's
/// [`AnyDemuxer`], dispatch with no `Box<dyn>`.
///
/// Public so that firmware can measure `size_of::<AnyMuxer>()`; its methods
/// are the crate's own, reached through [`crate::mux::Muxer`].
// The Matroska muxer's fixed cue table (about 8 KiB) and the MP4 muxer's
// per-track counters and built configuration records (about 3 KiB) make the
// variants uneven; the driver holds one muxer, not an array of them, and
// boxing would need an allocator, which core does not have.
#[allow(clippy::large_enum_variant)]
#[non_exhaustive]
pub enum AnyMuxer {
    /// The packet dump (`mux::dump`).
    #[cfg(feature = "dump")]
    Dump(crate::mux::dump::DumpMuxer),
    /// Matroska and WebM (`format::mkv::muxer`).
    #[cfg(feature = "mkv")]
    Matroska(crate::format::mkv::MkvMuxer),
    /// Progressive MP4 and MOV (`format/mp4/muxer.rs`).
    #[cfg(feature = "mp4")]
    Mp4(super::mp4::muxer::Mp4Muxer),
    /// Fragmented MP4 / CMAF (`format/mp4/fmp4.rs`).
    #[cfg(feature = "mp4")]
    Fmp4(super::mp4::fmp4::Fmp4Muxer),
    /// AVI (`format/avi/muxer.rs`).
    #[cfg(feature = "avi")]
    Avi(super::avi::AviMuxer),
    /// MPEG transport stream (`format/mpeg/ts_mux/`).
    #[cfg(feature = "ts")]
    Ts(super::mpeg::ts_mux::TsMuxer),
    /// No value: keeps the enum inhabited-by-type when no muxer is compiled
    /// in, so `core` builds with none (it can never be made).
    #[doc(hidden)]
    NoFormat(core::convert::Infallible),
}

macro_rules! dispatch_mux {
    ($self:expr, $m:ident => $e:expr) => {
        match $self {
            #[cfg(feature = "dump")]
            AnyMuxer::Dump($m) => $e,
            #[cfg(feature = "mkv")]
            AnyMuxer::Matroska($m) => $e,
            #[cfg(feature = "mp4")]
            AnyMuxer::Mp4($m) => $e,
            #[cfg(feature = "mp4")]
            AnyMuxer::Fmp4($m) => $e,
            #[cfg(feature = "avi")]
            AnyMuxer::Avi($m) => $e,
            #[cfg(feature = "ts")]
            AnyMuxer::Ts($m) => $e,
            AnyMuxer::NoFormat(never) => match *never {},
        }
    };
}

// With no muxer compiled in, the dispatch uses none of its arguments.
#[cfg_attr(
    not(any(feature = "dump", feature = "mkv", feature = "mp4", feature = "avi", feature = "ts")),
    allow(unused_variables)
)]
impl AnyMuxer {
    /// An empty muxer of `format`.
    ///
    /// Errors: `UnknownFormat` when `format` is not compiled into this build.
    pub(crate) fn new(format: MuxFormat) -> Result<Self> {
        match format {
            #[cfg(feature = "dump")]
            MuxFormat::Dump => Ok(AnyMuxer::Dump(FormatMuxer::new())),
            #[cfg(feature = "mkv")]
            MuxFormat::Matroska => Ok(AnyMuxer::Matroska(crate::format::mkv::MkvMuxer::with_doc_type(false))),
            #[cfg(feature = "mkv")]
            MuxFormat::WebM => Ok(AnyMuxer::Matroska(crate::format::mkv::MkvMuxer::with_doc_type(true))),
            #[cfg(feature = "mp4")]
            MuxFormat::Mp4 => Ok(AnyMuxer::Mp4(super::mp4::muxer::Mp4Muxer::with_brand(false))),
            #[cfg(feature = "mp4")]
            MuxFormat::Mov => Ok(AnyMuxer::Mp4(super::mp4::muxer::Mp4Muxer::with_brand(true))),
            #[cfg(feature = "mp4")]
            MuxFormat::Fmp4(opts) => Ok(AnyMuxer::Fmp4(super::mp4::fmp4::Fmp4Muxer::with_options(opts))),
            #[cfg(feature = "mp4")]
            MuxFormat::HybridMp4(opts) => Ok(AnyMuxer::Fmp4(super::mp4::fmp4::Fmp4Muxer::hybrid(opts))),
            #[cfg(feature = "avi")]
            MuxFormat::Avi => Ok(AnyMuxer::Avi(FormatMuxer::new())),
            #[cfg(feature = "ts")]
            MuxFormat::Ts => Ok(AnyMuxer::Ts(FormatMuxer::new())),
            #[allow(unreachable_patterns)]
            _ => Err(Error::new(
                ErrorKind::UnknownFormat,
                0,
                &"muxer not compiled into this build",
            )),
        }
    }

    /// What a fragmented muxer has written; `None` for other formats.
    pub(crate) fn fragment_stats(&self) -> Option<super::mux_traits::FragmentStats> {
        match self {
            #[cfg(feature = "mp4")]
            AnyMuxer::Fmp4(m) => Some(m.stats()),
            _ => None,
        }
    }

    /// See [`FormatMuxer::add_track`].
    pub(crate) fn add_track(&mut self, ctx: &mut MuxContext, spec: &TrackSpec<'_>) -> Result<usize> {
        dispatch_mux!(self, m => m.add_track(ctx, spec))
    }

    /// See [`FormatMuxer::write_header`].
    pub(crate) fn write_header<K: Sink>(
        &mut self,
        sink: &mut K,
        scratch: &mut [u8],
        ctx: &mut MuxContext,
    ) -> Result<()> {
        dispatch_mux!(self, m => m.write_header(sink, scratch, ctx))
    }

    /// See [`FormatMuxer::write_header_with`].
    pub(crate) fn write_header_with<K: Sink>(
        &mut self,
        sink: &mut K,
        scratch: &mut [u8],
        ctx: &mut MuxContext,
        attachments: &[crate::mux::attachments::Attachment<'_>],
    ) -> Result<()> {
        dispatch_mux!(self, m => m.write_header_with(sink, scratch, ctx, attachments))
    }

    /// See [`FormatMuxer::write_packet_spilling`].
    pub(crate) fn write_packet<K: Sink>(
        &mut self,
        sink: &mut K,
        scratch: &mut [u8],
        spill: &mut Spill<'_>,
        ctx: &mut MuxContext,
        packet: &Packet<'_>,
    ) -> Result<()> {
        dispatch_mux!(self, m => m.write_packet_spilling(sink, scratch, spill, ctx, packet))
    }

    /// See [`FormatMuxer::finish_spilling`].
    pub(crate) fn finish<K: Sink>(
        &mut self,
        sink: &mut K,
        scratch: &mut [u8],
        spill: &mut Spill<'_>,
        ctx: &mut MuxContext,
    ) -> Result<()> {
        dispatch_mux!(self, m => m.finish_spilling(sink, scratch, spill, ctx))
    }

    /// See [`FormatMuxer::reserve_index`].
    pub(crate) fn reserve_index(&mut self, bytes: u64) -> Result<()> {
        dispatch_mux!(self, m => m.reserve_index(bytes))
    }

    /// See [`FormatMuxer::index_size_ahead_spilling`].
    pub(crate) fn index_size_ahead(
        &self,
        scratch: &[u8],
        store: Option<&dyn SpillStore>,
        ctx: &MuxContext,
        end: u64,
    ) -> Result<Option<u64>> {
        dispatch_mux!(self, m => m.index_size_ahead_spilling(scratch, store, ctx, end))
    }
}
