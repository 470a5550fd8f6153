//! TTA, the True Audio lossless format (`TTA1`), after the format
//! description published with the TTA reference encoder.
//!
//! A file is a 22-byte little-endian header (`TTA1`, audio format, channels,
//! bits per sample, sample rate, samples per channel, CRC-32), a seek table
//! (one 32-bit size per frame, then its CRC-32) and the frames. Every frame
//! but the last holds `256 × rate / 245` samples per channel. Trailing
//! ID3v1 and APEv2 tags are left out of the audio (`format/es/id3.rs`
//! `find_trailer`).
//!
//! Packets are the frames, sized by the seek table, which is walked in
//! place (one 4-byte read a packet), never copied.
//!
//! Entry points: [`TtaDemuxer`] (`demuxer.rs`) and the header layout
//! [`TtaHeader`].

mod demuxer;
#[cfg(test)]
mod tests;

pub use demuxer::{TtaDemuxer, TtaHeader};
