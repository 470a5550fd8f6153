//! Entry points: [`OggDemuxer`] (`demuxer.rs`: open, packets, header
//! packets; `seek.rs`, `tags.rs`), [`physical::read_page`] and
//! [`physical::find_page`] for pages, [`mapping`] for what each codec's
//! headers and packets mean.
//!
//! Ogg (RFC 3533) with Vorbis, Opus (RFC 7845), Theora, FLAC (RFC 9639 §10.1)
//! and Speex, in layers as the format is:
//!
//! * [`physical`]: pages (RFC 3533 §6), the [`physical::PageHeader`] layout,
//!   their CRC-32 (not checked under `cfg(fuzzing)`); a page that fails, or
//!   garbage between pages, is skipped by scanning for the next capture
//!   pattern, at most `Limits::resync_bytes`.
//! * `logical.rs`: logical streams (RFC 3533 §4), told apart by serial
//!   number in a table of [`MAX_STREAMS`]; streams that end and are followed
//!   by a new one with the same codec (a chain) continue on the same track,
//!   as ffmpeg does. Packets are taken from the lacing values (§5): one that
//!   ends on the page where it starts is delivered as a slice of the input;
//!   one that spans pages is joined in the caller's scratch
//!   (`Source::gather`, then `Source::joined`). Each page's payload is read
//!   once for its CRC and once more for its packets.
//! * [`mapping`]: one file per codec. Header packets are not packets: they
//!   are parsed for the tracks, kept as codec configuration (the
//!   identification header, or FLAC's STREAMINFO) and comment tags, and are
//!   available whole through `Demuxer::header_packet`. Header parsing stops
//!   at the first data packet of any stream, as in ffmpeg; headers of other
//!   streams after it are still recognised.
//! * `demuxer.rs`, `seek.rs`, `tags.rs`: the `FormatDemuxer` over them.
//!
//! Timestamps follow ffmpeg's Ogg demuxer, which ffprobe reports: see
//! [`mapping`] for the per-codec rules and `docs/formats/ogg.md`.

#[cfg(feature = "chapters")]
mod chapters;
mod demuxer;
mod logical;
pub mod mapping;
pub mod physical;
#[cfg(feature = "ogg-pictures")]
mod pictures;
mod seek;
mod tags;
mod walk;

pub use demuxer::OggDemuxer;
pub use logical::MAX_STREAMS;
pub use mapping::opus::OpusHead;
pub use mapping::speex::SpeexHeader;
pub use mapping::theora::TheoraIdHeader;
pub use mapping::vorbis::VorbisIdHeader;
pub use mapping::OggCodec;
#[cfg(feature = "ogg-pictures")]
pub use pictures::MAX_PICTURES;

#[cfg(test)]
mod tests;
