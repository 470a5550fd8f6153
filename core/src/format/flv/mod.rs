//! FLV: Flash Video, and enhanced FLV (FourCC video).
//!
//! Entry points: [`FlvDemuxer`] (`open`, `next_packet`, `seek`, `next_tag`
//! in `demuxer.rs`); `tag.rs` reads tag headers, `script.rs` the script
//! data and `onMetaData`, `amf.rs` AMF0 values.
//!
//! References: Adobe "Video File Format Specification" version 10.1, Annex E
//! (E.2 the FLV header, E.3 the FLV file body, E.4.1 FLV tags, E.4.2 audio
//! tags, E.4.3 video tags, E.4.4 data tags, E.5 `onMetaData`); Adobe "Action
//! Message Format -- AMF 0" (§2.2–§2.12, the script data values); Veovera
//! "Enhanced RTMP" v1/v2 (the extended video tag header: `IsExHeader`,
//! `PacketType`, `FourCC` for `hvc1`, `av01`, `vp09`).
//!
//! Packets follow ffmpeg's `flv` demuxer (`flvdec.c`) so that they match
//! ffprobe: one packet per audio or video tag, timestamps in milliseconds,
//! AAC and AVC sequence headers taken as codec configuration (the first one
//! becomes `Track::config`; later ones are dropped), composition time offsets
//! giving `pts = dts + cts`, video info/command frames and empty tags
//! skipped, and a script tag other than the header metadata becoming a
//! subtitle or data packet. Every packet is a slice of the input.

mod amf;
mod demuxer;
mod script;
mod tag;

#[cfg(fuzzing)]
pub use amf::fuzz_amf0;
pub use demuxer::FlvDemuxer;

#[cfg(test)]
mod tests;
