//! The repair target: arbitrary bytes as a damaged recording, through
//! `mediaslice_std::repair::repair_in_memory` (the routes of `mediaslice
//! repair` but the `mdat` walk, which needs a reference file) into a memory
//! sink, and the output read back.
//!
//! Invariants (docs/fuzzing.md):
//! * no panic;
//! * bounded output: the output is at most [`OUTPUT_RATIO`] times the
//!   input plus [`OUTPUT_CONST`] bytes (a write past it fails the sink and
//!   the case);
//! * a repair that succeeds says so truthfully: its report's
//!   `output_bytes` is what the sink holds, it kept at least one packet,
//!   and the output opens with the demuxer as the family repair says it
//!   wrote, has one track per stream the report lists, reads to its end
//!   without an error or a cut packet, and gives per stream the payload
//!   bytes the report says were kept: exactly, and in at least one packet
//!   when there are any, for Matroska, WebM and AVI; at most for MP4, MOV
//!   and fragmented MP4, whose reader applies the edit list the muxer
//!   writes (the `remux` target explains the rules); H.264, HEVC and AAC,
//!   whose payload the muxers may rewrite (Annex B and length-prefixed NAL
//!   units, ADTS headers), only some bytes when any were kept. Packet counts are not
//!   compared: the report counts empty packets, which readers skip, and the
//!   AVI reader gives PCM chunks in pieces.
//!
//! The last input byte picks the options: bit 0 `--progressive`, bit 1 an
//! output named `.mov` (MP4 inputs) or `.webm` (Matroska inputs).

use super::*;
use mediaslice::{sink::check_patch, Sink, SinkStats};
use mediaslice_std::remux::RemuxFormat;
use mediaslice_std::repair::{repair_in_memory, RepairError, RepairOptions, RepairReport};

/// The output may be this many times the input ...
pub const OUTPUT_RATIO: u64 = 8;
/// ... plus this many bytes (headers, indexes of a tiny input).
pub const OUTPUT_CONST: u64 = 1 << 20;

/// Codecs whose payload a muxer may rewrite (ffmpeg names).
const CONVERTED: &[&str] = &["h264", "hevc", "aac"];

/// A growable memory sink that refuses to pass `cap` bytes (`SinkFull`),
/// and records that it was asked to.
struct CappedVec {
    buf: Vec<u8>,
    cap: u64,
    overflow: bool,
    stats: SinkStats,
}

impl Sink for CappedVec {
    fn position(&self) -> u64 {
        self.buf.len() as u64
    }
    fn write_all(&mut self, data: &[u8]) -> mediaslice::Result<()> {
        if self.buf.len() as u64 + data.len() as u64 > self.cap {
            self.overflow = true;
            return Err(Error::new(
                mediaslice::ErrorKind::SinkFull,
                self.buf.len() as u64,
                &"repair target: output past its bound",
            ));
        }
        self.buf.extend_from_slice(data);
        self.stats.bytes_written += data.len() as u64;
        self.stats.writes += 1;
        Ok(())
    }
    fn can_patch(&self) -> bool {
        true
    }
    fn patch_at(&mut self, pos: u64, data: &[u8]) -> mediaslice::Result<()> {
        let end = check_patch(pos, data.len(), self.buf.len() as u64)? as usize;
        self.buf[pos as usize..end].copy_from_slice(data);
        self.stats.patches += 1;
        Ok(())
    }
    fn flush(&mut self) -> mediaslice::Result<()> {
        Ok(())
    }
    fn stats(&self) -> SinkStats {
        self.stats
    }
}

pub fn run_repair(data: &[u8]) {
    let pick = data.last().copied().unwrap_or(0);
    let opts = RepairOptions {
        reference: None,
        progressive: pick & 1 != 0,
        // How a file is read (`--source`): the input here is a slice.
        ..RepairOptions::default()
    };
    let renamed = pick & 2 != 0;
    let out = match detect(&data[..data.len().min(mediaslice::detect::DETECT_BYTES)], None) {
        Some(FormatKind::Mp4) if renamed => Some(RemuxFormat::Mov),
        Some(FormatKind::Matroska) if renamed => Some(RemuxFormat::WebM),
        _ => None,
    };
    let cap = (data.len() as u64)
        .saturating_mul(OUTPUT_RATIO)
        .saturating_add(OUTPUT_CONST);
    let sink = CappedVec {
        buf: Vec::new(),
        cap,
        overflow: false,
        stats: SinkStats::default(),
    };
    match repair_in_memory(data, out, &opts, sink) {
        Ok((report, sink)) => {
            assert!(!sink.overflow, "repair succeeded after a write past the output bound");
            check_output(&report, &sink.buf);
        }
        Err(RepairError::Output(e)) => {
            let msg = format!("{e}");
            assert!(
                !msg.contains("output past its bound"),
                "repair of {} bytes wrote more than {cap} bytes ({OUTPUT_RATIO} x input + {OUTPUT_CONST}): {msg}",
                data.len()
            );
        }
        Err(_) => {}
    }
}

/// The output read back against the report (see the module notes).
fn check_output(report: &RepairReport, out: &[u8]) {
    assert_eq!(report.output_bytes, out.len() as u64, "report's output_bytes");
    assert!(report.packets() > 0, "repair succeeded with no packet kept");
    let format = report
        .output_format
        .expect("a successful repair names its output format");
    let mut sc = scratch(out.len());
    let mut d = match Demuxer::open(SliceSource::with_scratch(out, &mut sc), None) {
        Ok(d) => d,
        Err(e) => panic!("the repaired output ({format:?}) does not open: {e}"),
    };
    let want = match format {
        RemuxFormat::Matroska | RemuxFormat::WebM => FormatKind::Matroska,
        RemuxFormat::Avi => FormatKind::Avi,
        _ => FormatKind::Mp4,
    };
    assert_eq!(d.format(), want, "the repaired output's format");
    let ntracks = d.tracks().len();
    assert_eq!(
        ntracks,
        report.streams.len(),
        "output tracks against the report's streams"
    );
    let mut bytes = vec![0u64; ntracks];
    let mut packets = vec![0u64; ntracks];
    loop {
        match d.next_packet() {
            Ok(Some(p)) => {
                assert!(!p.flags.truncated, "the repaired output has a cut packet");
                bytes[p.track] += p.data.len() as u64;
                packets[p.track] += 1;
            }
            Ok(None) => break,
            Err(e) => panic!("reading the repaired output ({format:?}) fails: {e}"),
        }
    }
    let exact = matches!(format, RemuxFormat::Matroska | RemuxFormat::WebM | RemuxFormat::Avi);
    for (t, s) in report.streams.iter().enumerate() {
        // The report counts the payload bytes read; the muxers rewrite
        // H.264/HEVC between Annex B and length-prefixed NAL units (a
        // track without a usable configuration is taken as Annex B) and
        // AAC's ADTS headers (docs/write-side.md), so those streams read
        // back other byte counts: only some bytes are required of them
        // (`fuzz/regressions/repair/`).
        if CONVERTED.contains(&s.codec) {
            assert!(
                s.bytes == 0 || bytes[t] > 0,
                "stream {t} ({}): no bytes read back",
                s.codec
            );
            continue;
        }
        if exact {
            assert_eq!(bytes[t], s.bytes, "stream {t} ({}): payload bytes read back", s.codec);
        } else {
            assert!(bytes[t] <= s.bytes, "stream {t} ({}): more bytes read back", s.codec);
        }
        if s.bytes > 0 && exact {
            assert!(packets[t] > 0, "stream {t} ({}): no packet read back", s.codec);
        }
    }
}
