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
//! See `docs/architecture.md` for the reading and writing model.
#![no_std]
#![forbid(unsafe_code)]
#![deny(missing_docs)]
#![cfg_attr(
    test,
    allow(clippy::indexing_slicing, clippy::unwrap_used, clippy::expect_used, clippy::panic)
)]

#[cfg(feature = "alloc")]
extern crate alloc;

pub(crate) mod bytes;
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
pub(crate) mod signature;
pub mod sink;
pub mod source;
pub mod tags;
pub mod types;

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
pub use sink::{NoSpill, NullSink, SeekWriterSink, Sink, SinkStats, SliceSink, SpillStore, WriterSink};
pub use source::{IoStats, ReaderSource, SliceSource, Source};
pub use tags::{Tag, TagKey, TagScope, TagValue};
pub use types::{ByteRange, Codec, Packet, PacketFlags, Rational, Track, TrackKind};
