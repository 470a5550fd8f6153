//! mediaslice reads media containers with zero copies and no allocation per
//! packet.
//!
//! The crate is `#![no_std]` and has no I/O of its own: it reads through a
//! [`Source`], either a whole-input slice ([`SliceSource`], packets borrow the
//! input) or an [`embedded_io`] reader with caller scratch ([`ReaderSource`],
//! packets borrow the scratch). One parser per format serves both.
//!
//! It writes through a [`Sink`] the same way: a [`Muxer`] takes packets
//! (borrowed, from a [`Demuxer`] or built by hand) and writes a container to
//! a caller's buffer ([`SliceSink`]), an [`embedded_io`] writer
//! ([`WriterSink`], [`SeekWriterSink`]) or, in `mediaslice-std`, a file.
//!
//! # Reading packets from a byte slice
//!
//! A file in memory (read whole, or memory-mapped with `mediaslice-std`'s
//! `MmapSource`): open it, look at its tracks, pull its packets. Here
//! `wav()` builds a small WAV file (1,000 stereo frames of 16-bit PCM) so
//! that the example runs.
//!
//! ```
//! use mediaslice::{Codec, Demuxer, FormatKind, SliceSource, TrackKind};
//! # fn wav() -> Vec<u8> {
//! #     let data = [0u8; 4000];
//! #     let mut f = b"RIFF".to_vec();
//! #     f.extend_from_slice(&(36 + data.len() as u32).to_le_bytes());
//! #     f.extend_from_slice(b"WAVEfmt ");
//! #     f.extend_from_slice(&16u32.to_le_bytes());
//! #     f.extend_from_slice(&1u16.to_le_bytes()); // PCM
//! #     f.extend_from_slice(&2u16.to_le_bytes()); // channels
//! #     f.extend_from_slice(&8000u32.to_le_bytes()); // sample rate
//! #     f.extend_from_slice(&32000u32.to_le_bytes()); // bytes per second
//! #     f.extend_from_slice(&4u16.to_le_bytes()); // block align
//! #     f.extend_from_slice(&16u16.to_le_bytes()); // bits per sample
//! #     f.extend_from_slice(b"data");
//! #     f.extend_from_slice(&(data.len() as u32).to_le_bytes());
//! #     f.extend_from_slice(&data);
//! #     f
//! # }
//! let bytes: Vec<u8> = wav();
//! let mut demuxer = Demuxer::open(SliceSource::new(&bytes), Some("wav"))?;
//! assert_eq!(demuxer.format(), FormatKind::Wav);
//! let track = demuxer.tracks().first().cloned().unwrap_or_default();
//! assert_eq!((track.kind, track.codec), (TrackKind::Audio, Codec::PcmS16Le));
//! assert_eq!((track.sample_rate, track.channels), (8000, 2));
//!
//! let mut payload = 0;
//! while let Some(packet) = demuxer.next_packet()? {
//!     // `packet.data` borrows `bytes`: `packet.pos` is where it starts.
//!     payload += packet.data.len();
//! }
//! assert_eq!(payload, 4000);
//! # Ok::<(), mediaslice::Error>(())
//! ```
//!
//! MPEG-TS, MPEG-PS, Ogg and ASF split packets across their own units:
//! give those [`SliceSource::with_scratch`] with
//! [`source::slice_scratch_len`] bytes, or a `ScratchTooSmall` error
//! follows.
//!
//! # Remuxing into memory
//!
//! The same input rewrapped as Matroska into a caller's buffer, then read
//! back: [`mux::copy`] is the loop every remux writes (declare each track
//! with its codec configuration, copy each packet with no copy of its
//! payload).
//!
//! ```
//! use mediaslice::mux::copy::{add_tracks, copy_packets};
//! use mediaslice::{Codec, Demuxer, FormatKind, MuxFormat, Muxer, SliceSink, SliceSource};
//! # fn wav() -> Vec<u8> {
//! #     let data = [0u8; 4000];
//! #     let mut f = b"RIFF".to_vec();
//! #     f.extend_from_slice(&(36 + data.len() as u32).to_le_bytes());
//! #     f.extend_from_slice(b"WAVEfmt ");
//! #     f.extend_from_slice(&16u32.to_le_bytes());
//! #     f.extend_from_slice(&1u16.to_le_bytes());
//! #     f.extend_from_slice(&2u16.to_le_bytes());
//! #     f.extend_from_slice(&8000u32.to_le_bytes());
//! #     f.extend_from_slice(&32000u32.to_le_bytes());
//! #     f.extend_from_slice(&4u16.to_le_bytes());
//! #     f.extend_from_slice(&16u16.to_le_bytes());
//! #     f.extend_from_slice(b"data");
//! #     f.extend_from_slice(&(data.len() as u32).to_le_bytes());
//! #     f.extend_from_slice(&data);
//! #     f
//! # }
//! let input = wav();
//! let mut demuxer = Demuxer::open(SliceSource::new(&input), None)?;
//! let mut out = vec![0u8; 16 * 1024];
//! let mut muxer = Muxer::new(SliceSink::new(&mut out), MuxFormat::Matroska)?;
//! let map = add_tracks(&mut demuxer, &mut muxer)?;
//! let packets = copy_packets(&mut demuxer, &mut muxer, &map)?;
//! let written = muxer.finish()?.into_written();
//! assert!(packets > 0);
//!
//! let mut back = Demuxer::open(SliceSource::new(written), None)?;
//! assert_eq!(back.format(), FormatKind::Matroska);
//! assert_eq!(back.tracks().first().map(|t| t.codec), Some(Codec::PcmS16Le));
//! let mut payload = 0;
//! while let Some(packet) = back.next_packet()? {
//!     payload += packet.data.len();
//! }
//! assert_eq!(payload, 4000);
//! # Ok::<(), mediaslice::Error>(())
//! ```
//!
//! # Features
//!
//! Each container format is a cargo feature (all on by default); on
//! docs.rs an item that needs one says so. `alloc` adds heap conveniences,
//! `defmt` derives `defmt::Format`, `few-tracks` and `compact-crc` trade
//! capacity and speed for firmware size.
//!
#![cfg_attr(feature = "document-features", doc = document_features::document_features!())]
#![cfg_attr(
    not(feature = "document-features"),
    doc = "The list, one line each, is in `Cargo.toml` (and on docs.rs, which builds with `document-features`)."
)]
//!
//! `docs/api.md` is this API in one page (and what is `#[doc(hidden)]`:
//! the `codec`, `crc` and `format` modules are the workspace's own
//! internals, not API); `docs/architecture.md` is the reading and writing
//! model.
#![no_std]
#![cfg_attr(docsrs, feature(doc_cfg))]
#![forbid(unsafe_code)]
#![deny(missing_docs)]
#![cfg_attr(
    test,
    allow(clippy::indexing_slicing, clippy::unwrap_used, clippy::expect_used, clippy::panic)
)]

#[cfg(feature = "alloc")]
extern crate alloc;

pub(crate) mod bytes;
#[cfg(feature = "chapters")]
#[cfg_attr(docsrs, doc(cfg(feature = "chapters")))]
pub mod chapters;
#[doc(hidden)]
pub mod codec;
#[doc(hidden)]
pub mod crc;
pub mod demux;
pub mod detect;
pub mod diag;
pub mod error;
#[doc(hidden)]
pub mod format;
pub(crate) mod ieee754;
pub mod kind;
mod language;
pub mod limits;
pub mod mux;
pub mod pieces;
#[cfg(feature = "programs")]
#[cfg_attr(docsrs, doc(cfg(feature = "programs")))]
pub mod programs;
pub(crate) mod signature;
pub mod sink;
pub mod source;
pub mod tags;
#[cfg(any(feature = "asf", feature = "chapters"))]
pub(crate) mod text;
pub mod types;

#[cfg(feature = "chapters")]
pub use chapters::Chapter;
pub use demux::Demuxer;
pub use detect::detect;
pub use diag::{Diagnostic, Diagnostics};
pub use error::{Error, ErrorKind, Result};
#[doc(hidden)]
pub use format::any::{AnyDemuxer, AnyMuxer};
#[doc(hidden)]
pub use format::mux_traits::MuxContext;
pub use format::mux_traits::{FragmentStats, TrackSpec};
#[doc(hidden)]
pub use format::traits::Context;
pub use format::traits::FormatInfo;
pub use kind::{FormatKind, Fragmenting, MuxFormat};
pub use language::Language;
pub use limits::{Limits, MAX_TRACKS};
pub use mux::Muxer;
pub use pieces::PacketPieces;
#[cfg(feature = "programs")]
pub use programs::Program;
pub use sink::{NoSpill, NullSink, SeekWriterSink, Sink, SinkStats, SliceSink, SpillStore, WriterSink};
pub use source::{IoStats, ReaderSource, SliceSource, Source};
pub use tags::{Tag, TagKey, TagScope, TagValue};
pub use types::{ByteRange, Codec, Packet, PacketFlags, Rational, Track, TrackKind};

/// `docs/api.md`'s examples, compiled as doctests so that the page stays
/// true (only under `cargo test --doc`: the page is outside the package).
#[cfg(doctest)]
#[doc = include_str!("../../docs/api.md")]
pub struct ApiPage;
