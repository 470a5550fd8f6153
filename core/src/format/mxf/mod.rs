//! MXF, the Material eXchange Format (SMPTE ST 377-1), operational
//! patterns OP1a and OP-Atom (ST 378, ST 390): a file of KLV triplets in
//! partitions; the header partition's metadata (packages, tracks,
//! descriptors) names the streams, index table segments give the
//! timestamps of reordered video, and essence elements of the generic
//! container (ST 379-1) carry the packets.
//!
//! Packets follow ffmpeg's `mxf` demuxer so that they match ffprobe: one
//! packet per frame-wrapped essence element, the track chosen by the
//! element key's track number; clip-wrapped essence cut by the index
//! table's constant edit unit size (PCM in a 25th of a second). Video
//! timestamps come from the index table's temporal offsets, audio ones
//! from the running sample count.
//!
//! Entry points: [`MxfDemuxer`] (`demuxer.rs`); KLV and BER lengths
//! (`klv.rs`), partition packs (`partition.rs`), local sets
//! (`local.rs`), the structural metadata (`metadata.rs`), essence
//! container labels (`essence.rs`), index tables (`index.rs`).

mod aes3;
mod demuxer;
mod essence;
mod index;
mod klv;
mod local;
mod metadata;
mod partition;
#[cfg(test)]
mod tests;

pub use demuxer::MxfDemuxer;
