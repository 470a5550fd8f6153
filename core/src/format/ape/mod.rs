//! Monkey's Audio (`.ape`), after the headers of Monkey's Audio's MACLib
//! (`APE_DESCRIPTOR`, `APE_HEADER`, `APE_HEADER_OLD`) and ffmpeg's `ape.c`,
//! the oracle of the corpus.
//!
//! A file of version 3.98 or later is a 52-byte descriptor (`MAC `,
//! version, the lengths of the header, seek table, WAV header, frames and
//! WAV trailer, MD5), a 24-byte header (compression, flags, samples per
//! frame, samples in the last frame, frames, bits, channels, rate), the
//! seek table (one 32-bit file offset per frame), the WAV header and the
//! frames. Versions 3.80 to 3.97 have a 32-byte header with an optional
//! peak level and seek table length, the WAV header before the seek table,
//! and before 3.81 a bit table (one byte per frame) after it. An APEv2 tag
//! (or an ID3v1 tag) may end the file.
//!
//! Packets are as ffmpeg's `ape_read_packet` gives them: 8 bytes (the
//! frame's samples per channel and its skip, little-endian) and then the
//! frame's bytes, read from 0 to 3 bytes before its seek table offset (so
//! the frame starts on a 4-byte boundary counted from the first frame) and
//! rounded up to 4 bytes; the last frame runs to the end of the input (less
//! the WAV trailer), trailing tags included, as ffmpeg reads it. The
//! packets are joined in scratch (the prefix is not in the input) and have
//! no position and no duration, as ffprobe shows; pts is the frame index ×
//! samples per frame, in 1/sample-rate ticks.
//!
//! Entry points: [`ApeDemuxer`] (`demuxer.rs`) and the header layouts
//! [`Descriptor`], [`Header`], [`OldHeader`] (`header.rs`).

mod demuxer;
mod header;
#[cfg(test)]
mod tests;

pub use demuxer::ApeDemuxer;
pub use header::{Descriptor, Header, OldHeader};
