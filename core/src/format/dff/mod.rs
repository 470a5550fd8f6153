//! DSDIFF, Philips' Direct Stream Digital Interchange File Format, after
//! the "DSDIFF File Format Specification" version 1.5 (Philips, 2004).
//!
//! A file is one `FRM8` chunk of form type `DSD `: an IFF with 64-bit
//! big-endian chunk sizes, every chunk padded to an even size. Its chunks:
//! `FVER` (version), `PROP` of type `SND ` (§3.2: `FS  ` sampling frequency,
//! `CHNL` channel count and ids, `CMPR` compression type `DSD ` or `DST `,
//! `ABSS`, `LSCO`), then the sound data: `DSD ` (§3.3, uncompressed, one
//! byte of each channel in turn, MSB first) or `DST ` (§3.4: `FRTE` frame
//! count and rate, then one `DSTF` chunk per frame of 1/75 s, each maybe
//! followed by a `DSTC` CRC chunk).
//!
//! Packets are as ffmpeg's `iff.c` gives them (the oracle of the corpus):
//! uncompressed sound in runs of 8192 bytes per channel, timestamps in bytes
//! per channel at `fs / 8` ticks a second; DST sound one packet per `DSTF`
//! frame (its payload, `pos` at the chunk header), `fs / 8 / 75` ticks each.
//! Chunks after the sound data (`DIIN`, `COMT`, `ID3 `) are not read.
//!
//! Entry point: [`DffDemuxer`] (`demuxer.rs`) and the chunk header layout
//! [`ChunkHeader`].

mod demuxer;
#[cfg(test)]
mod tests;

pub use demuxer::{ChunkHeader, DffDemuxer};
