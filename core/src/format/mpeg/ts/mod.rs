//! MPEG transport streams: 188-byte TS, 192-byte M2TS/AVCHD (4-byte
//! timecode before each packet) and 204-byte TS (16 bytes of Reed-Solomon
//! parity after each packet) (ISO/IEC 13818-1 §2.4.3, §2.4.4).
//!
//! * The probe looks for the PAT and every PMT it lists, up to
//!   `Limits::probe_bytes` (`ts.tables-not-found` when they are not there).
//! * A PES packet spans many TS packets. The demuxer keeps, per PID, only
//!   where the PES started and how many TS packets it has; when it ends (the
//!   next payload_unit_start_indicator, or its PES_packet_length reached, or
//!   the end of the input), its payloads are joined into scratch with
//!   `Source::gather`. A PES inside one TS packet is a slice of the input.
//! * Packets are PES payloads with the PES time stamps, except audio, which
//!   is cut into the frames ffmpeg's parsers cut (`super::split`), and
//!   H.265, whose access units end before the next 3-byte start code.
//!
//! Entry points: [`TsDemuxer`] (opened by `probe.rs`, read by
//! `demuxer.rs`), `looks_like_ts` (detection, `packet.rs`) and, under
//! `cfg(fuzzing)`, `fuzz_psi` (`psi.rs`).
//!
//! Files, in the order the bytes meet them: `packet.rs` (TS packet header
//! and adaptation field length, packet size, resync), `psi.rs` (PSI
//! sections, PAT, PMT, descriptors, stream types), `probe.rs` (opening:
//! tables, private streams, start time and duration), `demuxer.rs` (the
//! per-PID state, the reading loop, seeking), `pes.rs` (a completed PES
//! read, joined and handed out).

mod demuxer;
mod packet;
mod pes;
mod probe;
#[cfg(feature = "programs")]
mod programs;
mod psi;
mod skim;
mod walk;

pub use demuxer::TsDemuxer;
pub(crate) use packet::looks_like_ts;
#[cfg(fuzzing)]
pub use psi::fuzz_psi;
