//! Apple Core Audio Format (CAF), after Apple's "Core Audio Format
//! Specification 1.0" (2006).
//!
//! A CAF file is the header `caff`, version 1, flags 0, then chunks with a
//! big-endian four-character type and a signed 64-bit size: `desc` (the
//! audio description, first), `data` (an edit count, then the audio; its size
//! may be -1 when it is the last chunk and was never finalised), `pakt` (the
//! packet table for variable-size or variable-duration packets), `kuki` (the
//! codec's magic cookie), `info` (key/value strings) and `chan` (the channel
//! layout).
//!
//! The packet table is never expanded: a cursor walks its variable-length
//! integers (CAF spec §"Packet Table Chunk") in step with the packets, one or
//! two small reads per packet through the source.
//!
//! Packets follow ffmpeg's CAF reader: constant-size packets of one frame
//! (linear PCM, A-law, mu-law) are grouped up to 4096 bytes; other
//! constant-size packets (IMA4) are one packet each; variable packets are the
//! packet table's entries.
//!
//! Entry points: [`CafDemuxer`] (`demuxer.rs`), and the `desc` and `pakt`
//! layouts [`AudioDescription`] and [`PacketTableHeader`] (`chunks.rs`,
//! with the chunk walk); `pakt.rs` reads the packet table's entries.

mod chunks;
mod demuxer;
mod pakt;
#[cfg(test)]
mod tests;

pub use chunks::{AudioDescription, PacketTableHeader};
pub use demuxer::CafDemuxer;
