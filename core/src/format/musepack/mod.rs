//! Musepack (`.mpc`): stream version 7 (`MP+`) and 8 (`MPCK`), after the
//! SV7 and SV8 stream specifications (musepack.net) and ffmpeg's `mpc.c`
//! and `mpc8.c`, the oracles of the corpus.
//!
//! SV7 frames are packed bit after bit with no byte alignment (`sv7.rs`):
//! packets are as ffmpeg's `mpc_read_packet` gives them, 4 bytes of
//! ffmpeg's own (the bit where the frame starts, a last-frame flag, two
//! zeros) and then the whole 32-bit words that hold the frame, joined in
//! scratch, with no position; pts is the frame index in 1152/rate ticks,
//! duration 1. A frame cut by the end of the input is not given.
//!
//! SV8 is a run of keyed packets (`sv8.rs`): the payloads of `AP` packets
//! are the packets, in place (their position is the payload's), pts their
//! index in (1152 × 4^k)/rate ticks, duration 1, up to the APEv2 tag (as
//! its footer places it, or its `APETAGEX` header) or the end of the
//! input: `SE` does not end them, as ffmpeg 5.1 reads on after it. An `AP` cut by the end of the input is given up to the cut,
//! flagged truncated.
//!
//! Text items of an APEv2 tag at the end are the format tags.
//!
//! Entry point: [`MusepackDemuxer`] (`demuxer.rs`).

mod demuxer;
mod sv7;
mod sv8;
#[cfg(test)]
mod tests;

pub use demuxer::MusepackDemuxer;
