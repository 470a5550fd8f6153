//! The interface every format demuxer implements, and the state it shares
//! with the driver. This file names no format: a format author reads this
//! and [`crate::source::Source`], not the dispatch over all formats
//! (`format/any.rs`) or the driver (`demux.rs`).

use crate::diag::Diagnostics;
use crate::error::Result;
use crate::limits::{Limits, MAX_TRACKS};
use crate::pieces::PacketPieces;
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
    #[allow(dead_code, reason = "unused when no format feature is enabled")]
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
#[allow(dead_code, reason = "unused when no format feature is enabled")]
pub(crate) trait FormatDemuxer: Sized {
    /// Reads the headers: tracks, durations, table positions.
    fn open<S: Source>(src: &mut S, ctx: &mut Context) -> Result<Self>;
    /// The next packet in delivery order, or `None` at the end.
    fn next_packet<'s, S: Source>(&mut self, src: &'s mut S, ctx: &mut Context) -> Result<Option<Packet<'s>>>;
    /// The next packet with its payload possibly in pieces of the input
    /// ([`PacketPieces`]). By default, a format whose packets are one
    /// slice each gives [`FormatDemuxer::next_packet`]'s packet whole.
    fn next_packet_pieces<'s, S: Source>(
        &'s mut self,
        src: &'s mut S,
        ctx: &mut Context,
    ) -> Result<Option<PacketPieces<'s, S>>> {
        Ok(self.next_packet(src, ctx)?.map(PacketPieces::whole))
    }
    /// Positions the demuxer so that `track` restarts at or before `ts`.
    fn seek<S: Source>(&mut self, src: &mut S, ctx: &mut Context, track: usize, ts: i64) -> Result<()>;
    /// The next tag, or `None` when all were given. The tag may borrow the
    /// demuxer's own state as well as the source (for keys kept apart from
    /// their values, such as QuickTime `keys`).
    /// None by default: a format without tags (most elementary streams).
    fn next_tag<'s, S: Source>(
        &'s mut self,
        _src: &'s mut S,
        _ctx: &Context,
        _cur: &mut TagCursor,
    ) -> Result<Option<Tag<'s>>> {
        Ok(None)
    }
    /// The next chapter, or `None` when all were given. None by default.
    #[cfg(feature = "chapters")]
    fn next_chapter<'s, S: Source>(
        &mut self,
        _src: &'s mut S,
        _ctx: &Context,
        _cur: &mut crate::chapters::ChapterCursor,
    ) -> Result<Option<crate::chapters::Chapter<'s>>> {
        Ok(None)
    }
    /// The next program, or `None` when all were given. None by default.
    #[cfg(feature = "programs")]
    fn next_program<'c, S: Source>(
        &mut self,
        _src: &mut S,
        _ctx: &Context,
        _cur: &'c mut crate::programs::ProgramCursor,
    ) -> Result<Option<crate::programs::Program<'c>>> {
        Ok(None)
    }
    /// How many programs [`FormatDemuxer::next_program`] gives, from the
    /// program table alone. 0 by default.
    #[cfg(feature = "programs")]
    fn program_count<S: Source>(&mut self, _src: &mut S, _ctx: &Context) -> Result<usize> {
        Ok(0)
    }
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
