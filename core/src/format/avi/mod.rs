//! AVI, with the OpenDML extensions.
//!
//! The writer is [`AviMuxer`] (`muxer.rs`; `muxer_header.rs` the `hdrl`,
//! `muxer_index.rs` the `idx1`, `muxer_odml.rs` the OpenDML extensions).
//!
//! Entry points: [`AviDemuxer`] (`open`, `next_packet`, `seek`, `next_tag`
//! in `demuxer.rs`); `header.rs` reads `hdrl` (`strh`, `strf`) and the tags,
//! `index.rs` `idx1` and the OpenDML indexes, `movi.rs` walks the chunks of
//! `movi`; `layout.rs` holds the fixed layouts, `fourcc.rs` the video FourCC
//! table.
//!
//! References: Microsoft "AVI RIFF File Reference" (`hdrl`, `avih`, `strl`,
//! `strh`, `strf`, `strn`, `movi`, `rec `, `idx1`); OpenDML "AVI File Format
//! Extensions" version 1.02 (`indx` super indexes, `ix##` standard indexes,
//! `odml`/`dmlh`, `RIFF AVIX` extensions past 1 GiB); Microsoft
//! BITMAPINFOHEADER and WAVEFORMATEX/WAVEFORMATEXTENSIBLE for `strf`.
//!
//! Packets are the stream chunks of `movi` (and of each `AVIX`'s `movi`), as
//! slices of the input. They are found through the index, walked in place:
//! the OpenDML standard indexes of every stream, merged by file position,
//! when every audio and video stream has a usable `indx`; else `idx1`, whose
//! offsets are detected as absolute or relative to `movi` the way ffmpeg does
//! (the first indexed chunk is the first chunk of `movi`); else, and after the
//! index runs out or stops matching the file, by walking the chunks of
//! `movi`, with a bounded resynchronisation scan over damage.
//!
//! Timestamps follow ffmpeg: each stream counts frames (video, and audio with
//! `dwSampleSize` 0) or bytes (audio with a sample size); empty chunks
//! (dropped frames) give no packet but advance the count. Audio chunks of a
//! constant-size stream are delivered in pieces of at most 1024 samples, as
//! ffmpeg does.

mod chunk;
mod demuxer;
mod fourcc;
mod header;
mod index;
pub mod layout;
mod movi;
pub mod muxer;
mod muxer_header;
mod muxer_index;
mod muxer_odml;

pub use demuxer::AviDemuxer;
pub use muxer::AviMuxer;

#[cfg(test)]
mod muxer_tests;
#[cfg(test)]
mod tests;
