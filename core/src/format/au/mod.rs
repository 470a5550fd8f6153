//! Sun / NeXT audio (`.au`, `.snd`), after Sun's `audio_filehdr` (the
//! `au(4)` manual page) and the NeXT "Sound" file layout.
//!
//! A file is a 24-byte big-endian header (`.snd`, the offset of the audio
//! data, its size in bytes or `0xFFFFFFFF` when unknown, the encoding, the
//! sample rate and the channel count), then an annotation field that runs
//! to the data offset, then the samples. No chunks, no index.
//!
//! Packets follow ffmpeg's `au` demuxer (its raw PCM reader) so that they
//! match ffprobe: `sample_rate / 25` blocks per packet (at least 1, at most
//! 1024), a block being the bytes of one sample frame (PCM,
//! G.711) or, for G.726, `bits × channels` bytes (eight frames); the last
//! packet holds what is left. ffmpeg reads to the end of the file whatever
//! the data size says, and so does this reader; the data size gives the
//! duration. The annotation's `key=value` lines give the tags
//! (`annotation.rs`).
//!
//! Entry points: [`AuDemuxer`] (`demuxer.rs`), the header layout
//! [`AuHeader`] and the encoding table [`Encoding`] (`header.rs`).

mod annotation;
mod demuxer;
mod header;
#[cfg(test)]
mod tests;

pub use demuxer::AuDemuxer;
pub use header::{AuHeader, Encoding};
