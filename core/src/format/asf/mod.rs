//! ASF: Windows Media (WMV, WMA) and other Advanced Systems Format files.
//!
//! Entry points: [`AsfDemuxer`] in `demuxer.rs` (`open`, `next_packet`,
//! and the packet reader's `step`); the header walk that `open` makes is in
//! `header.rs`, the per-packet parsing in `data_packet.rs`.
//!
//! Reference: "Advanced Systems Format (ASF) Specification", revision 1.20.03
//! (Microsoft, December 2004): the header object and its children (§3), the
//! header extension objects (§4), the data object and data packets (§5), the
//! index objects (§6), and the type-specific data of audio and video streams
//! (§9, WAVEFORMATEX and BITMAPINFOHEADER).
//!
//! Packets follow ffmpeg's `asf` demuxer (`asfdec_f.c`) so that they match
//! ffprobe: one packet per media object, timestamps in milliseconds minus the
//! preroll, audio always marked as a keyframe, a WMA packet's duration from
//! the stream bit rate, and a `WM/Picture` attribute turned into a video
//! track with one packet (an attached picture). A media object stored whole in
//! one payload is a slice of the input; one fragmented over several payloads
//! is joined in the source's scratch (`contiguous == false`). See
//! `docs/formats/asf.md` for what differs from ffprobe and why.
//!
//! Files:
//!
//! * `demuxer.rs`: the state, `FormatDemuxer`, the step over payloads;
//! * `header.rs`: the header object walk, file properties, stream types;
//! * `streams.rs`: stream properties, WAVEFORMATEX, extended stream
//!   properties;
//! * `data_packet.rs`: data packet and payload headers (the hot path);
//! * `reassembly.rs`: fragmented media objects, delivery, descrambling;
//! * `index.rs`: seeking, the simple index and index objects;
//! * `attributes.rs`, `tags.rs`, `pictures.rs`: tag objects, tags, and
//!   `WM/Picture` attached pictures;
//! * `codec_ids.rs`: the codec and picture tables (for the codec registry);
//! * `layout.rs`: the fixed layouts (zerocopy); `guids.rs`: object GUIDs;
//!   `text.rs`: UTF-16LE text into scratch.

mod attributes;
mod codec_ids;
mod data_packet;
mod demuxer;
#[cfg(feature = "asf-pieces")]
mod frag_walk;
mod guids;
mod header;
mod index;
mod layout;
mod pictures;
mod reassembly;
mod streams;
mod tags;
mod text;

#[cfg(test)]
mod tests;

pub use self::demuxer::AsfDemuxer;
pub use self::pictures::MAX_PICTURES;
pub use self::reassembly::MAX_FRAGMENTS;
pub use self::streams::MAX_STREAMS;
pub use self::tags::MAX_TAG_OBJECTS;
