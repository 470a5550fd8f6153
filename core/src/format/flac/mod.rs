//! Native FLAC (RFC 9639): the `fLaC` marker, metadata blocks and frames.
//!
//! * Metadata (§8): STREAMINFO (the track and its codec configuration),
//!   VORBIS_COMMENT (tags), PICTURE (an attached-picture track whose one
//!   packet is the picture, and a tag), SEEKTABLE (seeking), CUESHEET and
//!   APPLICATION (tags), PADDING (skipped). An ID3v2 tag in front of `fLaC`
//!   is skipped and its frames are tags (read with the shared ID3 module,
//!   [`crate::format::es::id3`]). A file that starts with a frame
//!   header and no `fLaC` is read as frames.
//! * Frames (§9) carry no length: a frame ends where the next frame header
//!   begins. A candidate header is a sync code whose header passes its CRC-8
//!   (§9.1.8); it ends the frame when the frame's CRC-16 (§9.3) checks over
//!   the bytes before it. When no CRC-16 checks (a damaged frame), the first
//!   candidate with the same stream parameters that continues (or, as
//!   ffmpeg's parser also accepts, repeats) the numbering (§9.1.5) ends it.
//!   Under `cfg(fuzzing)` the CRC-16 is not checked.
//! * Data before the first frame (after the metadata, or at the start of a
//!   headerless file) is delivered as one packet, as ffmpeg does.
//!
//! Timestamps follow ffmpeg: a fixed-block-size frame's pts is its frame
//! number times its block size, a variable one's is its sample number, the
//! last frame's is the previous frame's end.

//! Entry points: [`FlacDemuxer`] (`demuxer.rs`: open, packets, seeking);
//! `frame_scan.rs` (where a frame ends, the first frame, a seek landing
//! point); `sync.rs` (the word-at-a-time sync code search of the frame
//! scan); `metadata.rs` (ID3v2 tags in front, metadata blocks); `tags.rs`
//! (the tag walk).

mod demuxer;
mod frame_scan;
mod metadata;
mod sync;
mod tags;

pub use demuxer::FlacDemuxer;

/// Most PICTURE blocks kept (each becomes a track); more are reported with
/// `flac.picture-capacity` and skipped.
pub const MAX_PICTURES: usize = 4;
/// Most APPLICATION blocks kept as tags; more are reported with
/// `flac.application-capacity`.
pub const MAX_APPLICATIONS: usize = 4;

#[cfg(test)]
mod tests;
