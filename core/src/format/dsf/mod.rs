//! DSF, Sony's DSD Stream File, after the "DSF File Format Specification"
//! version 1.01 (Sony Corporation, 2009).
//!
//! A file is three little-endian chunks with 64-bit sizes: `DSD ` (28
//! bytes: total file size and a pointer to the metadata chunk), `fmt ` (52
//! bytes: format version 1, format id 0 = DSD raw, channel type, channel
//! count, sampling frequency, bits per sample 1 = LSB first or 8 = MSB
//! first, sample count per channel, block size per channel), and `data`:
//! blocks of `block size` bytes of each channel in turn, the last block of
//! each channel zero-padded. An ID3v2 tag may follow at the metadata
//! pointer.
//!
//! Packets are as ffmpeg's `dsfdec.c` gives them (the oracle of the
//! corpus): one block of every channel (`block size × channels` bytes),
//! timestamps in bytes per channel at `fs / 8` ticks a second. The last
//! packet holds only the real audio of the padded block: each channel's
//! bytes up to the sample count, joined in scratch (the one packet that is
//! not a slice of the input).
//!
//! Entry points: [`DsfDemuxer`] (`demuxer.rs`) and the chunk layouts
//! [`DsdChunk`], [`FmtChunk`].

mod demuxer;
#[cfg(test)]
mod tests;

pub use demuxer::{DsdChunk, DsfDemuxer, FmtChunk};
