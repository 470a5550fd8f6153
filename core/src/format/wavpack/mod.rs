//! WavPack (`.wv`), after the "WavPack 5 File Format" description
//! (David Bryant, wavpack.com `file_format.txt`).
//!
//! A file is a run of blocks, each a 32-byte little-endian header (`wvpk`,
//! block size − 8, stream version, total samples, block index, samples in
//! the block, flags, CRC) and sub-blocks of metadata and audio. A stereo or
//! mono stream is one block per time span; a multichannel stream is
//! several consecutive blocks per span, the first flagged "initial" and
//! the last "final". An APEv2 tag (or an ID3v1 tag) may end the file.
//!
//! Packets are as ffmpeg's `wvdec.c` gives them (the oracle of the corpus):
//! the blocks of one span, initial to final, joined as stored (so one slice
//! of the input); pts is the block index, duration the block's samples, in
//! 1/sample-rate ticks. Blocks of zero samples before the first audio are
//! skipped. The sample rate is the flags' table entry, or the
//! `ID_SAMPLE_RATE` sub-block; the channel count is the flags' mono bit, or
//! for multichannel streams the `ID_CHANNEL_INFO` sub-block. Text items of
//! the APEv2 tag are the format tags.
//!
//! Entry points: [`WavPackDemuxer`] (`demuxer.rs`) and the header layout
//! [`BlockHeader`] (`header.rs`).

mod demuxer;
mod header;
#[cfg(test)]
mod tests;

pub use demuxer::WavPackDemuxer;
pub use header::BlockHeader;
