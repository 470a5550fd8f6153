//! The write side's driver: [`Muxer`] holds the sink, the caller's scratch
//! and the state shared with the format muxer, opens that muxer through the
//! dispatch in `format/any.rs`, and keeps the order of calls. The interface a
//! format muxer implements is in `format/mux_traits.rs`.
//!
//! ```
//! use mediaslice::{Demuxer, MuxFormat, Muxer, SliceSink, SliceSource, TrackSpec};
//! # fn run(input: &[u8], out: &mut [u8]) -> mediaslice::Result<usize> {
//! let mut demuxer = Demuxer::open(SliceSource::new(input), None)?;
//! let mut muxer = Muxer::new(SliceSink::new(out), MuxFormat::Dump)?;
//! for i in 0..demuxer.tracks().len() {
//!     let track = demuxer.tracks().get(i).cloned().unwrap_or_default();
//!     muxer.add_track(&TrackSpec::new(&track).with_config(demuxer.codec_config(i)?))?;
//! }
//! while let Some(p) = demuxer.next_packet()? {
//!     muxer.write_packet(&p)?;
//! }
//! let sink = muxer.finish()?;
//! # Ok(sink.written().len()) }
//! ```

pub mod attachments;
#[cfg(feature = "chapters")]
#[cfg_attr(docsrs, doc(cfg(feature = "chapters")))]
pub mod chapters;
pub mod copy;
#[cfg(feature = "dump")]
#[doc(hidden)]
pub mod dump;
#[doc(hidden)]
pub mod tags;

use crate::error::{Error, ErrorKind, Result};
use crate::format::any::AnyMuxer;
use crate::format::mux_traits::{MuxContext, TrackSpec};
use crate::kind::MuxFormat;
use crate::sink::{NoSpill, Sink, Spill, SpillStore};
use crate::types::{Packet, Track};

/// Where a [`Muxer`] is in its fixed order of calls.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Stage {
    /// Tracks may be added; nothing is written yet.
    Tracks,
    /// The header is written; packets may follow.
    Packets,
    /// A call failed: the output is incomplete and nothing more is written.
    Failed,
}

/// A muxer writing format `format` to a [`Sink`]: declare tracks, write
/// packets, finish.
///
/// `B` is caller memory for a format that must hold bytes back (a
/// fragmented MP4 on a stream sink holds one fragment); none by default.
/// Nothing here allocates: the state is fixed-capacity
/// ([`MuxContext`]), and each packet's payload goes from its borrow to the
/// sink.
///
/// `S` is where an index that grows with the packets (MP4's) goes past a
/// bound the caller sets ([`Muxer::with_index_spill`]); none by default.
pub struct Muxer<K: Sink, B: AsMut<[u8]> = [u8; 0], S: SpillStore = NoSpill> {
    sink: K,
    scratch: B,
    /// The spill store and the index bytes kept in memory before it.
    spill: Option<(S, usize)>,
    format: MuxFormat,
    inner: AnyMuxer,
    ctx: MuxContext,
    stage: Stage,
}

impl<K: Sink> Muxer<K> {
    /// A muxer of `format` over `sink`, with no scratch. Writes nothing yet.
    ///
    /// Errors: `UnknownFormat` when `format` is not compiled into this
    /// build.
    pub fn new(sink: K, format: MuxFormat) -> Result<Self> {
        Self::with_scratch(sink, format, [])
    }
}

impl<K: Sink, B: AsMut<[u8]>> Muxer<K, B> {
    /// A muxer of `format` over `sink` with `scratch` for a format that must
    /// hold bytes back. Writes nothing yet.
    ///
    /// Errors: `UnknownFormat` when `format` is not compiled into this
    /// build.
    pub fn with_scratch(sink: K, format: MuxFormat, scratch: B) -> Result<Self> {
        Ok(Muxer {
            sink,
            scratch,
            spill: None,
            format,
            inner: AnyMuxer::new(format)?,
            ctx: MuxContext::default(),
            stage: Stage::Tracks,
        })
    }
}

impl<K: Sink, B: AsMut<[u8]>> Muxer<K, B, NoSpill> {
    /// The same muxer, whose sample index (MP4, MOV, hybrid MP4) keeps at
    /// most `memory` bytes in the scratch and appends each full block of
    /// them to `store`, read back at `finish`; the file written is the same
    /// byte for byte. Without a store the index stops at the scratch (the
    /// progressive muxer fails with `CapacityExceeded`, the hybrid one
    /// leaves a fragmented MP4). Give it before the first packet. Other
    /// formats ignore it.
    ///
    /// A store's error ends the muxer: [`Muxer::write_packet`] or
    /// [`Muxer::finish`] returns it, and a file sink then leaves no file.
    pub fn with_index_spill<S: SpillStore>(self, store: S, memory: usize) -> Muxer<K, B, S> {
        Muxer {
            sink: self.sink,
            scratch: self.scratch,
            spill: Some((store, memory)),
            format: self.format,
            inner: self.inner,
            ctx: self.ctx,
            stage: self.stage,
        }
    }
}

impl<K: Sink, B: AsMut<[u8]>, S: SpillStore> Muxer<K, B, S> {
    /// The target format.
    pub fn format(&self) -> MuxFormat {
        self.format
    }

    /// The declared tracks; a packet's `track` indexes this slice.
    pub fn tracks(&self) -> &[Track] {
        &self.ctx.tracks
    }

    /// Packets written so far.
    pub fn packets(&self) -> u64 {
        self.ctx.packets
    }

    /// What a fragmented muxer ([`MuxFormat::Fmp4`]) has written so far:
    /// fragments, fragments closed early, the largest one; `None` for
    /// other formats.
    pub fn fragment_stats(&self) -> Option<crate::format::mux_traits::FragmentStats> {
        self.inner.fragment_stats()
    }

    /// The sink, for its position and counters.
    pub fn sink(&self) -> &K {
        &self.sink
    }

    /// Declares a track (its facts and a copy of its codec configuration
    /// bytes); returns its index, which packets of it carry in `track`.
    ///
    /// Errors: `InvalidArgument` once the header is written (after the first
    /// packet) or after a failure; `Unsupported` when the format cannot
    /// carry the codec; `CapacityExceeded` past
    /// [`crate::MAX_TRACKS`] tracks or
    /// [`crate::format::mux_traits::MAX_CONFIG_BYTES`] configuration bytes.
    pub fn add_track(&mut self, spec: &TrackSpec<'_>) -> Result<usize> {
        if self.stage != Stage::Tracks {
            return Err(self.out_of_order(&"mux: a track added after the header or a failure"));
        }
        // A refused track leaves the muxer usable: nothing was written.
        self.inner.add_track(&mut self.ctx, spec)
    }

    /// Reserves `bytes` before the media for the index the format writes at
    /// `finish`: MP4 then places `moov` ahead of `mdat` (what ffmpeg calls
    /// `faststart`) with no second copy of the payload. The size comes from
    /// a first pass over the same packets into a [`crate::NullSink`]
    /// ([`Muxer::index_size_ahead`]); too little space makes `finish` fail
    /// (`CapacityExceeded`) before it writes anything.
    ///
    /// Errors: `InvalidArgument` after the header; `Unsupported` for a
    /// format with no such index.
    pub fn reserve_index(&mut self, bytes: u64) -> Result<()> {
        if self.stage != Stage::Tracks {
            return Err(self.out_of_order(&"mux: an index reserved after the header"));
        }
        self.inner.reserve_index(bytes)
    }

    /// After the last packet, before [`Muxer::finish`]: the bytes the
    /// format's index would take ahead of the media in a second pass over
    /// the same packets with [`Muxer::reserve_index`]; `None` for a format
    /// without one.
    ///
    /// Errors: `InvalidArgument` before the header or after a failure.
    pub fn index_size_ahead(&mut self) -> Result<Option<u64>> {
        if self.stage != Stage::Packets {
            return Err(self.out_of_order(&"mux: index size asked before the first packet or after a failure"));
        }
        let end = self.sink.position();
        let store = self.spill.as_ref().map(|(s, _)| s as &dyn SpillStore);
        self.inner
            .index_size_ahead(self.scratch.as_mut(), store, &self.ctx, end)
    }

    /// Adds a file-level tag (`title`, `artist`, ... as ffprobe names
    /// them, or a container's own text key) for the format to write; before
    /// the header. Formats without tags here (MP4 for now, the dump) keep
    /// them unwritten.
    ///
    /// Errors: `InvalidArgument` after the header; as
    /// [`tags::MuxTags::push`].
    pub fn add_tag(&mut self, name: &str, value: &str) -> Result<()> {
        if self.stage != Stage::Tracks {
            return Err(self.out_of_order(&"mux: a tag added after the header"));
        }
        self.ctx.tags.push(name, value)
    }

    /// Adds a chapter for the format to write; before the header: Matroska
    /// `Chapters`, MP4/MOV (and a hybrid MP4's final `moov`) a Nero
    /// `chpl` (starts and titles only). Formats without chapters here (the
    /// fragmented MP4, the dump) keep them unwritten.
    ///
    /// Errors: `InvalidArgument` after the header; as
    /// [`chapters::MuxChapters::push`].
    #[cfg(feature = "chapters")]
    #[cfg_attr(docsrs, doc(cfg(feature = "chapters")))]
    pub fn add_chapter(&mut self, chapter: &chapters::MuxChapter<'_>) -> Result<()> {
        if self.stage != Stage::Tracks {
            return Err(self.out_of_order(&"mux: a chapter added after the header"));
        }
        self.ctx.chapters.push(chapter)
    }

    /// [`Muxer::write_header`] with files attached: their bytes are
    /// borrowed for this call and go to the sink with no copy.
    ///
    /// Errors: as [`Muxer::write_header`]; `Unsupported` when the format
    /// stores no attachments (all but Matroska) and `attachments` is not
    /// empty.
    pub fn write_header_with_attachments(&mut self, attachments: &[attachments::Attachment<'_>]) -> Result<()> {
        if self.stage != Stage::Tracks || self.ctx.tracks.is_empty() {
            return Err(self.out_of_order(&"mux: header with no track, twice, or after a failure"));
        }
        let r = self
            .inner
            .write_header_with(&mut self.sink, self.scratch.as_mut(), &mut self.ctx, attachments);
        self.settle(r, Stage::Packets)
    }

    /// Writes the header, which closes the track list. Called by the first
    /// [`Muxer::write_packet`] (or [`Muxer::finish`]) when not called before.
    ///
    /// Errors: `InvalidArgument` with no track, a second time, or after a
    /// failure; `Unsupported` when the format needs a patchable sink; a
    /// sink error.
    pub fn write_header(&mut self) -> Result<()> {
        if self.stage != Stage::Tracks || self.ctx.tracks.is_empty() {
            return Err(self.out_of_order(&"mux: header with no track, twice, or after a failure"));
        }
        let r = self
            .inner
            .write_header(&mut self.sink, self.scratch.as_mut(), &mut self.ctx);
        self.settle(r, Stage::Packets)
    }

    /// Writes one packet, whose payload is borrowed and not copied on the
    /// way to the sink. `packet.track` indexes [`Muxer::tracks`]; its times
    /// are in that track's time base.
    ///
    /// Errors: `InvalidArgument` for a track index out of range (the muxer
    /// stays usable) or after a failure; the format's refusal of the packet
    /// or a sink error (after which the muxer is failed, and only
    /// [`Muxer::finish`] remains, which returns an error).
    pub fn write_packet(&mut self, packet: &Packet<'_>) -> Result<()> {
        if self.stage == Stage::Tracks {
            self.write_header()?;
        }
        if self.stage != Stage::Packets || packet.track >= self.ctx.tracks.len() {
            return Err(self.out_of_order(&"mux: a packet of an undeclared track, or after a failure"));
        }
        let memory = self.spill.as_ref().map_or(usize::MAX, |s| s.1);
        let mut spill = Spill {
            store: self.spill.as_mut().map(|(s, _)| s as &mut dyn SpillStore),
            memory,
        };
        let r = self
            .inner
            .write_packet(&mut self.sink, self.scratch.as_mut(), &mut spill, &mut self.ctx, packet);
        self.settle(r, Stage::Packets)?;
        self.ctx.packets += 1;
        Ok(())
    }

    /// Writes the end (index, trailer), patches what the format patches,
    /// flushes, and gives back the sink and the scratch.
    ///
    /// Errors: `InvalidArgument` after an earlier failure; otherwise as
    /// [`Muxer::write_header`] and a sink error. The sink is dropped on
    /// error: a std file sink then removes its temporary file.
    pub fn finish_parts(mut self) -> Result<(K, B)> {
        if self.stage == Stage::Tracks {
            self.write_header()?;
        }
        if self.stage != Stage::Packets {
            return Err(self.out_of_order(&"mux: finish after a failure"));
        }
        let memory = self.spill.as_ref().map_or(usize::MAX, |s| s.1);
        let mut spill = Spill {
            store: self.spill.as_mut().map(|(s, _)| s as &mut dyn SpillStore),
            memory,
        };
        self.inner
            .finish(&mut self.sink, self.scratch.as_mut(), &mut spill, &mut self.ctx)?;
        self.sink.flush()?;
        Ok((self.sink, self.scratch))
    }

    /// [`Muxer::finish_parts`], giving back only the sink.
    pub fn finish(self) -> Result<K> {
        self.finish_parts().map(|(sink, _)| sink)
    }

    /// `InvalidArgument` at the sink's position: a call out of its order.
    fn out_of_order(&self, what: crate::error::Description) -> Error {
        Error::new(ErrorKind::InvalidArgument, self.sink.position(), what)
    }

    /// Moves to `next` when `r` is fine, to `Failed` when not.
    fn settle(&mut self, r: Result<()>, next: Stage) -> Result<()> {
        self.stage = if r.is_ok() { next } else { Stage::Failed };
        r
    }
}

/// The format, the stage, the tracks, the packets written and the sink's
/// counts; not the format's state, the scratch or the sink itself.
impl<K: Sink, B: AsMut<[u8]>, S: SpillStore> core::fmt::Debug for Muxer<K, B, S> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("Muxer")
            .field("format", &self.format)
            .field("stage", &self.stage)
            .field("tracks", &self.ctx.tracks.len())
            .field("packets", &self.ctx.packets)
            .field("sink", &self.sink.stats())
            .finish_non_exhaustive()
    }
}

#[cfg(all(test, feature = "dump"))]
mod tests {
    extern crate std;
    use super::dump::{DumpHeader, DUMP_MAGIC, DUMP_UNKNOWN_COUNT};
    use super::*;
    use crate::sink::{SliceSink, WriterSink};
    use crate::types::{Codec, Rational};
    use zerocopy::FromBytes;

    fn track() -> Track {
        Track {
            codec: Codec::Opus,
            time_base: Rational::new(1, 48_000),
            ..Track::default()
        }
    }

    /// A known byte layout: header, one track record, two packets, trailer.
    #[test]
    fn dump_bytes_are_as_documented() {
        let t = track();
        let mut buf = [0u8; 256];
        let mut m = Muxer::new(SliceSink::new(&mut buf), MuxFormat::Dump).unwrap();
        assert_eq!(m.add_track(&TrackSpec::new(&t).with_config(b"OpusHead")).unwrap(), 0);
        let p = Packet::contiguous(0, 100, b"abc").with_times(Some(960), None, None);
        m.write_packet(&p).unwrap();
        m.write_packet(&Packet::joined(0, None, b"")).unwrap();
        let out = m.finish().unwrap().into_written();
        let mut want = std::vec::Vec::new();
        want.extend_from_slice(&DUMP_MAGIC);
        want.extend_from_slice(&1u32.to_be_bytes());
        want.extend_from_slice(&2u64.to_be_bytes()); // patched
        want.extend_from_slice(b"\x04opus");
        want.extend_from_slice(&[0, 0, 0, 1, 0, 0, 0xBB, 0x80, 0, 0, 0, 8]);
        want.extend_from_slice(b"OpusHead");
        want.extend_from_slice(&0u32.to_be_bytes());
        want.extend_from_slice(&960i64.to_be_bytes());
        want.extend_from_slice(&i64::MIN.to_be_bytes());
        want.extend_from_slice(&[0, 0, 0, 0, 3]);
        want.extend_from_slice(b"abc");
        want.extend_from_slice(&0u32.to_be_bytes());
        want.extend_from_slice(&i64::MIN.to_be_bytes());
        want.extend_from_slice(&i64::MIN.to_be_bytes());
        want.extend_from_slice(&[0, 0, 0, 0, 0]);
        want.extend_from_slice(&[0xFF; 4]);
        want.extend_from_slice(&2u64.to_be_bytes());
        assert_eq!(out, &want[..]);
    }

    /// On a stream the header keeps the unknown count; the trailer says it.
    #[test]
    fn a_stream_sink_keeps_the_unknown_count() {
        let t = track();
        let mut buf = [0u8; 128];
        let mut m = Muxer::new(WriterSink::new(&mut buf[..]), MuxFormat::Dump).unwrap();
        m.add_track(&TrackSpec::new(&t)).unwrap();
        m.write_packet(&Packet::contiguous(0, 0, b"x")).unwrap();
        let len = m.finish().unwrap().position() as usize;
        let out = &buf[..len];
        let (h, _) = DumpHeader::read_from_prefix(out).unwrap();
        assert_eq!(h.packets.get(), DUMP_UNKNOWN_COUNT);
        assert_eq!(&out[out.len() - 8..], &1u64.to_be_bytes());
    }

    #[test]
    fn the_order_of_calls_is_kept() {
        let t = track();
        let mut buf = [0u8; 64];
        let mut m = Muxer::new(SliceSink::new(&mut buf), MuxFormat::Dump).unwrap();
        // No track: no header.
        assert_eq!(m.write_header().unwrap_err().kind(), ErrorKind::InvalidArgument);
        m.add_track(&TrackSpec::new(&t)).unwrap();
        // An undeclared track is refused, and the muxer stays usable.
        let e = m.write_packet(&Packet::contiguous(1, 0, b"x")).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::InvalidArgument);
        assert_eq!(
            m.add_track(&TrackSpec::new(&t)).unwrap_err().kind(),
            ErrorKind::InvalidArgument
        );
        // A packet that does not fit fails the muxer: nothing more is written.
        let big = [7u8; 64];
        let e = m.write_packet(&Packet::contiguous(0, 0, &big)).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::SinkFull);
        let e = m.write_packet(&Packet::contiguous(0, 0, b"x")).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::InvalidArgument);
        assert_eq!(m.packets(), 0);
        assert_eq!(m.finish().err().map(|e| e.kind()), Some(ErrorKind::InvalidArgument));
    }
}
