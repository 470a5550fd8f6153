//! The interface every format muxer implements, and the state it shares
//! with the driver. This file names no format: a muxer author reads this and
//! [`crate::sink::Sink`], not the dispatch over all muxers (`format/any.rs`)
//! or the driver (`mux.rs`). It is the write side's [`super::traits`].
//!
//! The order of calls is fixed and enforced by the driver,
//! [`crate::mux::Muxer`]:
//!
//! ```text
//! add_track × n ─► write_header ─► write_packet × m ─► finish
//! ```
//!
//! How the formats to come fit it:
//!
//! * **Matroska / WebM.** `write_header` writes EBML, the Segment and the
//!   Tracks (codec private bytes from [`MuxContext::config`]). On a sink that
//!   cannot patch ([`crate::sink::Sink::can_patch`]), the Segment and each
//!   Cluster get the unknown size (all ones, RFC 8794 §6.2) and no Cues or a
//!   Cues at the end without a SeekHead entry; on a patchable sink the sizes,
//!   the SeekHead and the duration are patched in `finish`.
//! * **MP4.** `write_header` writes `ftyp` and an `mdat` header whose size is
//!   patched in `finish`, which then writes `moov` after the media (the
//!   sample tables grow with the packets: bounded by the scratch, or past
//!   the caller's bound spilled to a [`SpillStore`] and read back in
//!   `finish`, see `docs/write-side.md`). It needs a patchable sink and says
//!   `Unsupported` in `write_header` otherwise.
//! * **Fragmented MP4** (`format/mp4/fmp4.rs`). `write_header` writes
//!   `ftyp` + `moov` (the init segment); each fragment is a `moof` +
//!   `mdat`. On a patchable sink room for the `moof` is reserved before the
//!   payload and patched when the fragment closes; on a stream the fragment
//!   is held in the driver's caller-supplied scratch
//!   ([`crate::mux::Muxer::with_scratch`]) until it closes. No index grows.

use crate::error::{Error, Result};
use crate::limits::MAX_TRACKS;
use crate::sink::{Sink, Spill, SpillStore};
use crate::types::{Packet, Track};

/// Most codec configuration bytes a muxer keeps for all its tracks together
/// (avcC, hvcC, AudioSpecificConfig, Matroska CodecPrivate): 8 KiB, or
/// 4 KiB with the `few-tracks` feature (a recorder's writer state within
/// 8 KiB, docs/embedded.md). A Vorbis CodecPrivate, with its setup
/// header, is the largest usual one (a few KiB). Beyond it
/// [`MuxContext::push_track`] fails with `CapacityExceeded`.
#[cfg(not(feature = "few-tracks"))]
pub const MAX_CONFIG_BYTES: usize = 8 * 1024;
/// Most codec configuration bytes a muxer keeps for all its tracks together
/// with the `few-tracks` feature: 4 KiB (8 KiB without it).
#[cfg(feature = "few-tracks")]
pub const MAX_CONFIG_BYTES: usize = 4 * 1024;

/// A track to write: its facts, taken from a demuxer's [`Track`] or built by
/// hand, and its codec configuration bytes.
///
/// `track.config` (a range of the demuxer's input) is not read: the bytes
/// come from `config`, which a caller takes from
/// [`crate::Demuxer::codec_config`] or builds itself.
#[derive(Debug, Clone, Copy)]
pub struct TrackSpec<'a> {
    /// Kind, codec, time base, dimensions, sample rate, language ...
    pub track: &'a Track,
    /// Codec configuration record (avcC, esds DecoderSpecificInfo,
    /// CodecPrivate ...), empty when the codec has none.
    pub config: &'a [u8],
}

impl<'a> TrackSpec<'a> {
    /// A track with no codec configuration bytes.
    pub const fn new(track: &'a Track) -> Self {
        TrackSpec { track, config: &[] }
    }

    /// The same track with these codec configuration bytes.
    pub const fn with_config(self, config: &'a [u8]) -> Self {
        TrackSpec { config, ..self }
    }
}

/// State shared by a format muxer and the driver: the declared tracks, their
/// codec configuration bytes, and what has been written. Fixed capacity:
/// [`MAX_TRACKS`] tracks, [`MAX_CONFIG_BYTES`] configuration bytes.
#[derive(Debug, Clone, Default)]
pub struct MuxContext {
    /// The tracks, in the order packets refer to them (a packet's `track`
    /// indexes this table). Their `config` field is `None`: the bytes are
    /// in [`MuxContext::config`].
    pub tracks: heapless::Vec<Track, MAX_TRACKS>,
    /// All tracks' configuration bytes, one after another.
    configs: heapless::Vec<u8, MAX_CONFIG_BYTES>,
    /// Where each track's configuration bytes end in `configs`.
    config_ends: heapless::Vec<u16, MAX_TRACKS>,
    /// Packets written so far (by `FormatMuxer::write_packet` calls that
    /// succeeded).
    pub packets: u64,
    /// File-level tags to write ([`crate::Muxer::add_tag`]).
    pub tags: crate::mux::tags::MuxTags,
    /// Chapters to write ([`crate::Muxer::add_chapter`]); with the
    /// `chapters` feature.
    #[cfg(feature = "chapters")]
    pub chapters: crate::mux::chapters::MuxChapters,
}

impl MuxContext {
    /// Adds a track and a copy of its configuration bytes; returns its
    /// index.
    ///
    /// Errors: `CapacityExceeded` when [`MAX_TRACKS`] tracks are declared
    /// already or the configuration bytes do not fit in what is left of
    /// [`MAX_CONFIG_BYTES`]; nothing is added then.
    pub fn push_track(&mut self, spec: &TrackSpec<'_>) -> Result<usize> {
        let index = self.tracks.len();
        if self.tracks.is_full() {
            return Err(Error::capacity(0, &"mux: more tracks than MAX_TRACKS"));
        }
        let start = self.configs.len();
        self.configs
            .extend_from_slice(spec.config)
            .map_err(|_| Error::capacity(0, &"mux: codec configuration beyond MAX_CONFIG_BYTES"))?;
        let end = u16::try_from(self.configs.len()).ok();
        let track = Track {
            config: None,
            ..spec.track.clone()
        };
        match end {
            Some(end) if self.config_ends.push(end).is_ok() && self.tracks.push(track).is_ok() => Ok(index),
            _ => {
                self.configs.truncate(start);
                self.config_ends.truncate(index);
                Err(Error::capacity(0, &"mux: track table full"))
            }
        }
    }

    /// The codec configuration bytes of track `index`: empty when it has
    /// none or there is no such track.
    pub fn config(&self, index: usize) -> &[u8] {
        let end = self.config_ends.get(index).map_or(0, |&e| usize::from(e));
        let start = match index.checked_sub(1) {
            Some(prev) => self.config_ends.get(prev).map_or(0, |&e| usize::from(e)),
            None => 0,
        };
        self.configs.get(start..end).unwrap_or(&[])
    }
}

/// What a fragmented muxer ([`crate::MuxFormat::Fmp4`]) has written, for
/// a caller that watches its fragments: counts, and the largest fragment.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct FragmentStats {
    /// Fragments (`moof` + `mdat`) written.
    pub fragments: u32,
    /// Fragments closed before their duration because the sample records
    /// (or, on a patchable sink, the space reserved for the `moof`) were
    /// full: the next fragment may then start at a non-keyframe.
    pub closed_early: u32,
    /// Most samples in one fragment.
    pub most_samples: u32,
    /// Most payload bytes in one fragment.
    pub most_payload: u64,
    /// Bytes of `free` boxes left where the reserved `moof` space was not
    /// used (patchable sinks only).
    pub padding: u64,
    /// Sink position where the last fragment written starts (its `moof`,
    /// or the `free` box before it) and where it ends.
    pub last_fragment: (u64, u64),
    /// Sink position where the init segment ends (0 until written).
    pub init_end: u64,
    /// Hybrid MP4: bytes of the progressive sample index kept so far
    /// (about 4 a sample); 0 for a fragmented MP4.
    pub index_bytes: u64,
    /// Hybrid MP4: bytes of the index spilled to the caller's store
    /// ([`crate::mux::Muxer::with_index_spill`]), part of `index_bytes`.
    pub index_spilled: u64,
    /// Hybrid MP4: samples in the index (those of the closed fragments).
    pub index_samples: u64,
    /// Hybrid MP4: the index outgrew its part of the scratch, so `finish`
    /// leaves a plain fragmented MP4 (every sample is still in it).
    pub index_full: bool,
}

/// What each format muxer implements. The driver, [`crate::mux::Muxer`],
/// holds the sink, the scratch and the [`MuxContext`]; a format muxer holds
/// only its own fixed-capacity state (positions to patch, per-track
/// counters), so its size does not depend on the sink type.
///
/// Every method but [`FormatMuxer::new`] and [`FormatMuxer::add_track`]
/// writes through `sink`; `scratch` is the caller's memory for a format that
/// must hold bytes back (empty unless the caller gave some). After any error
/// the driver calls nothing more.
// Unused in a build with no muxer (`--no-default-features`).
#[allow(dead_code)]
pub(crate) trait FormatMuxer: Sized {
    /// A muxer with no tracks; writes nothing.
    fn new() -> Self;

    /// Declares a track: checks that the format can carry its codec, then
    /// records it with [`MuxContext::push_track`]. Returns its index. The
    /// default accepts every track.
    ///
    /// Errors: `Unsupported` for a codec the format cannot carry;
    /// `CapacityExceeded` from the context.
    fn add_track(&mut self, ctx: &mut MuxContext, spec: &TrackSpec<'_>) -> Result<usize> {
        ctx.push_track(spec)
    }

    /// Writes what precedes the first packet, once every track is declared.
    ///
    /// Errors: `Unsupported` when the format needs a patchable sink and this
    /// one is not; a sink error.
    fn write_header<K: Sink>(&mut self, sink: &mut K, scratch: &mut [u8], ctx: &mut MuxContext) -> Result<()>;

    /// [`FormatMuxer::write_header`] with files attached (borrowed, written
    /// with no copy). The default writes none.
    ///
    /// Errors: `Unsupported` for a format without attachments when
    /// `attachments` is not empty; as [`FormatMuxer::write_header`].
    fn write_header_with<K: Sink>(
        &mut self,
        sink: &mut K,
        scratch: &mut [u8],
        ctx: &mut MuxContext,
        attachments: &[crate::mux::attachments::Attachment<'_>],
    ) -> Result<()> {
        if !attachments.is_empty() {
            return Err(Error::unsupported(0, &"mux: this format stores no attached files"));
        }
        self.write_header(sink, scratch, ctx)
    }

    /// Writes one packet; `packet.data` is borrowed, and goes to the sink
    /// with no copy (see [`Sink::write_vectored`]). `packet.track` is a valid
    /// index into `ctx.tracks` (the driver checked).
    ///
    /// Errors: `Unsupported` for a packet the format cannot store (for
    /// example timestamps going back where it forbids it); a sink error.
    fn write_packet<K: Sink>(
        &mut self,
        sink: &mut K,
        scratch: &mut [u8],
        ctx: &mut MuxContext,
        packet: &Packet<'_>,
    ) -> Result<()>;

    /// Writes what follows the last packet (an index, a trailer) and
    /// patches what it could not know before (sizes, counts, durations).
    ///
    /// Errors: a sink error.
    fn finish<K: Sink>(&mut self, sink: &mut K, scratch: &mut [u8], ctx: &mut MuxContext) -> Result<()>;

    /// [`FormatMuxer::write_packet`] for a format whose index grows with
    /// the packets (MP4): past `spill.memory` bytes in the scratch it goes
    /// to `spill.store` when there is one. The default ignores `spill`.
    ///
    /// Errors: as [`FormatMuxer::write_packet`]; the store's error.
    fn write_packet_spilling<K: Sink>(
        &mut self,
        sink: &mut K,
        scratch: &mut [u8],
        spill: &mut Spill<'_>,
        ctx: &mut MuxContext,
        packet: &Packet<'_>,
    ) -> Result<()> {
        let _ = spill;
        self.write_packet(sink, scratch, ctx, packet)
    }

    /// [`FormatMuxer::finish`] reading back what
    /// [`FormatMuxer::write_packet_spilling`] spilled. The default ignores
    /// `spill`.
    ///
    /// Errors: as [`FormatMuxer::finish`]; the store's error.
    fn finish_spilling<K: Sink>(
        &mut self,
        sink: &mut K,
        scratch: &mut [u8],
        spill: &mut Spill<'_>,
        ctx: &mut MuxContext,
    ) -> Result<()> {
        let _ = spill;
        self.finish(sink, scratch, ctx)
    }

    /// Reserves `bytes` before the media for the index that `finish`
    /// writes (MP4 `moov` ahead of `mdat`). Called before the header.
    ///
    /// Errors: `Unsupported` for a format that writes no such index.
    fn reserve_index(&mut self, bytes: u64) -> Result<()> {
        let _ = bytes;
        Err(Error::unsupported(
            0,
            &"mux: this format has no index to place before the media",
        ))
    }

    /// After the last packet: the bytes the index would take placed before
    /// the media, for a second pass with [`FormatMuxer::reserve_index`]
    /// (`end` is the sink's position); `None` for a format with no such
    /// index.
    ///
    /// Errors: those of computing it (the index unreadable).
    fn index_size_ahead(&self, scratch: &[u8], ctx: &MuxContext, end: u64) -> Result<Option<u64>> {
        let _ = (scratch, ctx, end);
        Ok(None)
    }

    /// [`FormatMuxer::index_size_ahead`] with the index's spilled part in
    /// `store`. The default ignores `store`.
    ///
    /// Errors: as [`FormatMuxer::index_size_ahead`]; the store's error.
    fn index_size_ahead_spilling(
        &self,
        scratch: &[u8],
        store: Option<&dyn SpillStore>,
        ctx: &MuxContext,
        end: u64,
    ) -> Result<Option<u64>> {
        let _ = store;
        self.index_size_ahead(scratch, ctx, end)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::ErrorKind;

    #[test]
    fn context_keeps_each_tracks_config_and_refuses_what_does_not_fit() {
        let t = Track::default();
        let mut ctx = MuxContext::default();
        assert_eq!(ctx.push_track(&TrackSpec::new(&t).with_config(b"avcC")).unwrap(), 0);
        assert_eq!(ctx.push_track(&TrackSpec::new(&t)).unwrap(), 1);
        assert_eq!(ctx.push_track(&TrackSpec::new(&t).with_config(b"esds")).unwrap(), 2);
        assert_eq!(
            (ctx.config(0), ctx.config(1), ctx.config(2)),
            (&b"avcC"[..], &b""[..], &b"esds"[..])
        );
        assert_eq!(ctx.config(3), b"");
        let big = [0u8; MAX_CONFIG_BYTES];
        let e = ctx.push_track(&TrackSpec::new(&t).with_config(&big)).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::CapacityExceeded);
        assert_eq!((ctx.tracks.len(), ctx.config(2)), (3, &b"esds"[..]));
        while ctx.tracks.len() < MAX_TRACKS {
            ctx.push_track(&TrackSpec::new(&t)).unwrap();
        }
        let e = ctx.push_track(&TrackSpec::new(&t)).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::CapacityExceeded);
    }
}
