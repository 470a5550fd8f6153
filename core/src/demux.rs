//! The driver: [`Demuxer`] detects the format, opens its demuxer through
//! the dispatch in `format/any.rs`, and runs the pull loop. It holds the
//! source; a format demuxer holds only its own state.

use crate::detect::detect_source;
use crate::diag::Diagnostics;
use crate::error::{Error, ErrorKind, Result};
use crate::format::any::AnyDemuxer;
use crate::format::traits::{Context, FormatInfo};
use crate::kind::FormatKind;
use crate::limits::Limits;
use crate::pieces::PacketPieces;
use crate::source::Source;
use crate::tags::{Tag, TagCursor};
use crate::types::{Packet, Track};

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
    #[cfg(feature = "chapters")]
    chapters: crate::chapters::ChapterCursor,
    #[cfg(feature = "programs")]
    programs: crate::programs::ProgramCursor,
    finished: bool,
    delivery: Delivery,
}

/// What the driver counts of the packets it hands out.
#[derive(Debug, Clone, Copy, Default)]
struct Delivery {
    /// Payload bytes that may still be delivered since the open or the
    /// last seek before `bound` is passed.
    left: u64,
    /// The most that may be delivered per pass (`Limits::max_delivery_ratio`).
    bound: u64,
    /// The input range `(start, end)` of the last packet stored
    /// contiguously, for the `packets.overlap` diagnostic; `(0, 0)` before
    /// the first (no range overlaps it).
    last_range: (u64, u64),
}

impl Delivery {
    /// A fresh count (at the open or after a seek) under `bound`.
    fn new(bound: u64) -> Self {
        Delivery {
            left: bound,
            bound,
            last_range: (0, 0),
        }
    }

    /// Counts a packet of `len` payload bytes at `pos` (`contiguous`: the
    /// range `pos..pos+len` of the input). Once per packet, for every
    /// format: a subtraction and, for a contiguous packet, two comparisons.
    ///
    /// Errors: `LimitExceeded` past the bound.
    #[inline(always)]
    fn count(&mut self, diags: &mut Diagnostics, len: u64, pos: Option<u64>, contiguous: bool) -> Result<()> {
        let Some(left) = self.left.checked_sub(len) else {
            return Err(over_bound(pos));
        };
        self.left = left;
        if let (true, Some(pos), true) = (contiguous, pos, len > 0) {
            let end = pos.saturating_add(len);
            let (s, e) = self.last_range;
            if pos < e && s < end {
                diags.report("packets.overlap", pos);
            }
            self.last_range = (pos, end);
        }
        Ok(())
    }
}

/// The error of a packet past [`Delivery`]'s bound.
#[cold]
fn over_bound(pos: Option<u64>) -> Error {
    Error::limit(
        pos.unwrap_or(0),
        &"packets: more payload than Limits::max_delivery_ratio times the input \
         (an index names the same bytes again and again)",
    )
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
            &"no supported format recognised",
        ))?;
        Self::open_as(src, kind, limits)
    }

    /// Reads the headers as format `kind`, without detection.
    #[allow(
        unreachable_code,
        reason = "AnyDemuxer has no value when no format feature is enabled"
    )]
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
            #[cfg(feature = "chapters")]
            chapters: crate::chapters::ChapterCursor::default(),
            #[cfg(feature = "programs")]
            programs: crate::programs::ProgramCursor::default(),
            finished: false,
            delivery: Delivery::new(0),
        }
        .with_delivery_bound())
    }

    /// Sets the bound on payload bytes per pass from the input's length.
    fn with_delivery_bound(mut self) -> Self {
        let limits = &self.ctx.limits;
        self.delivery = Delivery::new(
            self.src
                .len()
                .saturating_mul(u64::from(limits.max_delivery_ratio))
                .saturating_add(u64::from(limits.max_packet)),
        );
        self
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

    /// The source, to read container facts the demuxer does not keep
    /// (positioned reads; the demuxer's state does not depend on them).
    pub fn source_mut(&mut self) -> &mut S {
        &mut self.src
    }

    /// Gives back the source.
    pub fn into_source(self) -> S {
        self.src
    }

    /// The largest packet, when the container tells without reading packets;
    /// size a reader's scratch with it.
    pub fn max_packet_size(&self) -> Option<usize> {
        self.inner.max_packet_size()
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
        match self.inner.next_packet(&mut self.src, &mut self.ctx) {
            Ok(Some(p)) => match self
                .delivery
                .count(&mut self.ctx.diags, p.data.len() as u64, p.pos, p.contiguous)
            {
                Ok(()) => Ok(Some(p)),
                Err(e) => {
                    self.finished = true;
                    Err(e)
                }
            },
            other => {
                self.finished = true;
                other
            }
        }
    }

    /// Like [`Demuxer::next_packet`], with the payload of a packet that the
    /// container splits across its own units (an MPEG-TS PES across TS
    /// packets) left there: [`PacketPieces::next_piece`] reads the pieces
    /// one at a time, borrowed from the input, with no copy into scratch.
    /// Every other packet comes whole. The bytes, in order, and every other
    /// fact are those `next_packet` gives. See `docs/architecture.md`.
    ///
    /// Errors: as [`Demuxer::next_packet`]; a piece's read error comes from
    /// [`PacketPieces::next_piece`].
    pub fn next_packet_pieces(&mut self) -> Result<Option<PacketPieces<'_, S>>> {
        if self.finished {
            return Ok(None);
        }
        match self.inner.next_packet_pieces(&mut self.src, &mut self.ctx) {
            Ok(Some(p)) => {
                match self
                    .delivery
                    .count(&mut self.ctx.diags, p.len() as u64, p.packet.pos, p.packet.contiguous)
                {
                    Ok(()) => Ok(Some(p)),
                    Err(e) => {
                        self.finished = true;
                        Err(e)
                    }
                }
            }
            other => {
                self.finished = true;
                other
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
            return Err(Error::new(ErrorKind::InvalidArgument, 0, &"no such track"));
        }
        self.inner.seek(&mut self.src, &mut self.ctx, track, ts)?;
        self.finished = false;
        self.delivery = Delivery::new(self.delivery.bound);
        Ok(())
    }

    /// The next tag, or `None` when all were given. The tag borrows the
    /// demuxer until the next call. [`Demuxer::rewind_tags`] starts again.
    pub fn next_tag(&mut self) -> Result<Option<Tag<'_>>> {
        self.inner.next_tag(&mut self.src, &self.ctx, &mut self.tags)
    }

    /// Restarts the tag walk.
    pub fn rewind_tags(&mut self) {
        self.tags = TagCursor::default();
    }

    /// The next chapter, in file order, or `None` after the last (see
    /// [`crate::chapters`] for the sources per format). A lending iterator:
    /// the chapter's title borrows the input or scratch until the next call.
    /// [`Demuxer::rewind_chapters`] starts again. A damaged chapter entry is
    /// skipped; errors are read errors.
    #[cfg(feature = "chapters")]
    #[cfg_attr(docsrs, doc(cfg(feature = "chapters")))]
    pub fn next_chapter(&mut self) -> Result<Option<crate::chapters::Chapter<'_>>> {
        self.inner.next_chapter(&mut self.src, &self.ctx, &mut self.chapters)
    }

    /// Restarts the chapter walk.
    #[cfg(feature = "chapters")]
    #[cfg_attr(docsrs, doc(cfg(feature = "chapters")))]
    pub fn rewind_chapters(&mut self) {
        self.chapters = crate::chapters::ChapterCursor::default();
    }

    /// The next program of an MPEG transport stream, in PAT order, or
    /// `None` after the last (and for other formats); see
    /// [`crate::programs`]. The program borrows the demuxer until the next
    /// call. [`Demuxer::rewind_programs`] starts again. Errors are read
    /// errors; damaged tables are skipped.
    #[cfg(feature = "programs")]
    #[cfg_attr(docsrs, doc(cfg(feature = "programs")))]
    pub fn next_program(&mut self) -> Result<Option<crate::programs::Program<'_>>> {
        self.inner.next_program(&mut self.src, &self.ctx, &mut self.programs)
    }

    /// How many programs [`Demuxer::next_program`] gives, read from the
    /// program table alone (the PAT): cheaper than the walk, which also
    /// looks for each program's PMT and service names.
    #[cfg(feature = "programs")]
    #[cfg_attr(docsrs, doc(cfg(feature = "programs")))]
    pub fn program_count(&mut self) -> Result<usize> {
        self.inner.program_count(&mut self.src, &self.ctx)
    }

    /// Restarts the program walk.
    #[cfg(feature = "programs")]
    #[cfg_attr(docsrs, doc(cfg(feature = "programs")))]
    pub fn rewind_programs(&mut self) {
        self.programs.index = 0;
    }

    /// The codec configuration bytes of `track` (avcC, esds
    /// DecoderSpecificInfo, ...), empty when it has none.
    pub fn codec_config(&mut self, track: usize) -> Result<&[u8]> {
        let t = self
            .ctx
            .tracks
            .get(track)
            .ok_or(Error::new(ErrorKind::InvalidArgument, 0, &"no such track"))?;
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
            return Err(Error::new(ErrorKind::InvalidArgument, 0, &"no such track"));
        }
        self.inner.header_packet(&mut self.src, &self.ctx, track, index)
    }
}

/// The format, the tracks and the input's length; the source and the
/// format's state are not shown.
impl<S: Source> core::fmt::Debug for Demuxer<S> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("Demuxer")
            .field("format", &self.format())
            .field("tracks", &self.tracks())
            .field("len", &self.source().len())
            .finish_non_exhaustive()
    }
}
