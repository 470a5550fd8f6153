//! RIFF audio family: WAV (including WAVE_FORMAT_EXTENSIBLE), RF64/BW64 and
//! Sony Wave64.
//!
//! References: Microsoft "Multimedia Programming Interface and Data
//! Specifications 1.0" (RIFF, `fmt `, `data`, `LIST`/`INFO`); EBU Tech 3306
//! (RF64, `ds64`); EBU Tech 3285 (`bext`); the Sony Wave64 specification
//! (GUID chunk ids, 64-bit sizes, 8-byte alignment).
//!
//! Packets follow ffmpeg's WAV reader so that they match ffprobe exactly: each
//! packet is the largest multiple of the block alignment not over 4096 bytes
//! (at least one block), the last one possibly shorter.
//!
//! The format tag → codec table, the INFO names and the WAVEFORMATEX layout
//! are the crate's RIFF registry ([`crate::codec::riff_tags`],
//! [`crate::codec::riff_layout`]), shared with AVI, ASF and Matroska.
//!
//! Entry points: [`WavDemuxer`] (`open` in `demuxer.rs`: `chunks` walks the
//! chunks, `demuxer.rs` turns `fmt ` into the track; `next_packet`, `seek`),
//! `next_tag` in `tags.rs` (`LIST`/`INFO`, then `bext`).

mod chunks;
mod demuxer;
mod tags;
#[cfg(test)]
mod tests;

pub use crate::codec::riff_layout::WaveFormat;
pub use chunks::Ds64;
pub use demuxer::WavDemuxer;
