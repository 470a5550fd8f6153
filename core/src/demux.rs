//! The demuxer: detection, dispatch over the format demuxers, and the pull
//! loop.

use crate::detect::{detect_source, FormatKind};
use crate::diag::Diagnostics;
use crate::error::{Error, ErrorKind, Result};
use crate::limits::{Limits, MAX_TRACKS};
use crate::source::Source;
use crate::tags::{Tag, TagCursor};
use crate::types::{Packet, Track};

/// Facts about the whole input that a format demuxer finds while opening.
#[derive(Debug, Clone, Default, PartialEq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct FormatInfo {
    /// Duration of the whole presentation in microseconds, when known.
    pub duration_us: Option<u64>,
    /// Start time in microseconds, when known.
    pub start_us: Option<i64>,
    /// Overall bit rate in bits per second, when the container says.
    pub bit_rate: Option<u64>,
}

/// State shared by a format demuxer and the driver: limits, diagnostics,
/// tracks and format facts.
#[derive(Debug, Clone, Default)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct Context {
    /// The limits in force.
    pub limits: Limits,
    /// Findings so far.
    pub diags: Diagnostics,
    /// The tracks, in the order packets refer to them.
    pub tracks: heapless::Vec<Track, MAX_TRACKS>,
    /// Facts about the whole input.
    pub info: FormatInfo,
}

impl Context {
    /// Adds a track, or reports `track-capacity` when the table is full.
    /// Returns its index.
    pub(crate) fn add_track(&mut self, t: Track, offset: u64) -> Option<usize> {
        let i = self.tracks.len();
        if self.tracks.push(t).is_err() {
            self.diags.report("track-capacity", offset);
            return None;
        }
        Some(i)
    }
}

/// What each format module implements. The driver, [`Demuxer`], holds the
/// source; a format demuxer holds only its own state, so its size does not
/// depend on the source type.
pub(crate) trait FormatDemuxer: Sized {
    /// Reads the headers: tracks, durations, table positions.
    fn open<S: Source>(src: &mut S, ctx: &mut Context) -> Result<Self>;
    /// The next packet in delivery order, or `None` at the end.
    fn next_packet<'s, S: Source>(&mut self, src: &'s mut S, ctx: &mut Context) -> Result<Option<Packet<'s>>>;
    /// Positions the demuxer so that `track` restarts at or before `ts`.
    fn seek<S: Source>(&mut self, src: &mut S, ctx: &mut Context, track: usize, ts: i64) -> Result<()>;
    /// The next tag, or `None` when all were given. The tag may borrow the
    /// demuxer's own state as well as the source (for keys kept apart from
    /// their values, such as QuickTime `keys`).
    fn next_tag<'s, S: Source>(
        &'s mut self,
        src: &'s mut S,
        ctx: &Context,
        cur: &mut TagCursor,
    ) -> Result<Option<Tag<'s>>>;
    /// The largest packet, when the container can tell without reading them.
    fn max_packet_size(&self) -> Option<usize> {
        None
    }
    /// Header packet `index` of `track` for codecs whose configuration is
    /// several packets (Vorbis, Theora in Ogg), or `None`.
    fn header_packet<'s, S: Source>(
        &mut self,
        src: &'s mut S,
        ctx: &Context,
        track: usize,
        index: usize,
    ) -> Result<Option<&'s [u8]>> {
        let _ = (src, ctx, track, index);
        Ok(None)
    }
}

/// One variant per format demuxer compiled in: dispatch with no `Box<dyn>`.
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
        }
    };
}

impl AnyDemuxer {
    fn open<S: Source>(kind: FormatKind, src: &mut S, ctx: &mut Context) -> Result<Self> {
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
                "format not compiled into this build",
            )),
        }
    }
}

/// A demuxer over a [`Source`]: open it, read its tracks, pull packets.
///
/// ```
/// use mediaslice::{Demuxer, SliceSource};
/// # fn run(bytes: &[u8]) -> mediaslice::Result<()> {
/// let mut demuxer = Demuxer::open(SliceSource::new(bytes), None)?;
/// for t in demuxer.tracks() {
///     let _ = (t.kind, t.codec.ffmpeg_name());
/// }
/// while let Some(packet) = demuxer.next_packet()? {
///     let _ = (packet.track, packet.pts, packet.data.len());
/// }
/// # Ok(()) }
/// ```
pub struct Demuxer<S: Source> {
    src: S,
    kind: FormatKind,
    inner: AnyDemuxer,
    ctx: Context,
    tags: TagCursor,
    finished: bool,
}

impl<S: Source> Demuxer<S> {
    /// Detects the format and reads the headers with default [`Limits`].
    /// `ext` is an optional file-name extension hint.
    ///
    /// Errors: `UnknownFormat` when no compiled-in format matches; any error
    /// of the format's header parser.
    pub fn open(src: S, ext: Option<&str>) -> Result<Self> {
        Self::open_with(src, ext, Limits::default())
    }

    /// Like [`Demuxer::open`] with explicit limits.
    pub fn open_with(mut src: S, ext: Option<&str>, limits: Limits) -> Result<Self> {
        let kind = detect_source(&mut src, ext, &limits)?.ok_or(Error::new(
            ErrorKind::UnknownFormat,
            0,
            "no supported format recognised",
        ))?;
        Self::open_as(src, kind, limits)
    }

    /// Reads the headers as format `kind`, without detection.
    pub fn open_as(mut src: S, kind: FormatKind, limits: Limits) -> Result<Self> {
        let mut ctx = Context {
            limits,
            ..Context::default()
        };
        let inner = AnyDemuxer::open(kind, &mut src, &mut ctx)?;
        Ok(Demuxer {
            src,
            kind,
            inner,
            ctx,
            tags: TagCursor::default(),
            finished: false,
        })
    }

    /// The detected format.
    pub fn format(&self) -> FormatKind {
        self.kind
    }

    /// The tracks; a packet's `track` indexes this slice.
    pub fn tracks(&self) -> &[Track] {
        &self.ctx.tracks
    }

    /// Facts about the whole input (duration, bit rate).
    pub fn info(&self) -> &FormatInfo {
        &self.ctx.info
    }

    /// Non-fatal findings so far.
    pub fn diagnostics(&self) -> &Diagnostics {
        &self.ctx.diags
    }

    /// The limits in force.
    pub fn limits(&self) -> &Limits {
        &self.ctx.limits
    }

    /// The source, for its I/O counters.
    pub fn source(&self) -> &S {
        &self.src
    }

    /// Gives back the source.
    pub fn into_source(self) -> S {
        self.src
    }

    /// The largest packet, when the container tells without reading packets;
    /// size a reader's scratch with it.
    pub fn max_packet_size(&self) -> Option<usize> {
        dispatch!(&self.inner, d => d.max_packet_size())
    }

    /// The next packet in the container's delivery order, or `None` at the
    /// end. The packet borrows the demuxer until the next call.
    ///
    /// Errors: after every complete packet before damage or a cut has been
    /// delivered, the error that stopped reading (for a cut, a `Truncated`
    /// error); after that, `Ok(None)`.
    pub fn next_packet(&mut self) -> Result<Option<Packet<'_>>> {
        if self.finished {
            return Ok(None);
        }
        let r = dispatch!(&mut self.inner, d => d.next_packet(&mut self.src, &mut self.ctx));
        match r {
            Ok(Some(p)) => Ok(Some(p)),
            Ok(None) => {
                self.finished = true;
                Ok(None)
            }
            Err(e) => {
                self.finished = true;
                Err(e)
            }
        }
    }

    /// Repositions so that the next packets of track `track` start at the
    /// keyframe at or before `ts` (video) or at the packet containing `ts`
    /// (audio); `ts` is in that track's `time_base`. Other tracks resume at
    /// the matching position.
    ///
    /// Errors: `InvalidArgument` for a track index out of range; a read error.
    pub fn seek(&mut self, track: usize, ts: i64) -> Result<()> {
        if track >= self.ctx.tracks.len() {
            return Err(Error::new(ErrorKind::InvalidArgument, 0, "no such track"));
        }
        dispatch!(&mut self.inner, d => d.seek(&mut self.src, &mut self.ctx, track, ts))?;
        self.finished = false;
        Ok(())
    }

    /// The next tag, or `None` when all were given. The tag borrows the
    /// demuxer until the next call. [`Demuxer::rewind_tags`] starts again.
    pub fn next_tag(&mut self) -> Result<Option<Tag<'_>>> {
        dispatch!(&mut self.inner, d => d.next_tag(&mut self.src, &self.ctx, &mut self.tags))
    }

    /// Restarts the tag walk.
    pub fn rewind_tags(&mut self) {
        self.tags = TagCursor::default();
    }

    /// The codec configuration bytes of `track` (avcC, esds
    /// DecoderSpecificInfo, ...), empty when it has none.
    pub fn codec_config(&mut self, track: usize) -> Result<&[u8]> {
        let t = self
            .ctx
            .tracks
            .get(track)
            .ok_or(Error::new(ErrorKind::InvalidArgument, 0, "no such track"))?;
        match t.config {
            Some(r) => self.src.bytes(r.offset, r.len as usize),
            None => Ok(&[]),
        }
    }

    /// Header packet `index` (0, 1, 2, ...) of `track` where the codec keeps
    /// its configuration in several packets that the container does not
    /// deliver as packets: Vorbis and Theora in Ogg (identification,
    /// comment, setup), Opus and Speex in Ogg (head, tags), FLAC in Ogg
    /// (mapping header with STREAMINFO, then metadata blocks). `None` when
    /// there is no such packet. A header packet that spans Ogg pages is
    /// joined in the source's scratch.
    ///
    /// Errors: `InvalidArgument` for a track index out of range; a read
    /// error; `ScratchTooSmall` when a spanning packet does not fit.
    pub fn header_packet(&mut self, track: usize, index: usize) -> Result<Option<&[u8]>> {
        if track >= self.ctx.tracks.len() {
            return Err(Error::new(ErrorKind::InvalidArgument, 0, "no such track"));
        }
        dispatch!(&mut self.inner, d => d.header_packet(&mut self.src, &self.ctx, track, index))
    }
}
