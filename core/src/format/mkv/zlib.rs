//! zlib-compressed frames (ContentCompAlgo 0, RFC 9559 §5.1.4.1.31.6; the
//! zlib format is RFC 1950 around RFC 1951 DEFLATE), inflated into the
//! caller's scratch.
//!
//! The input is read in small pieces through the source and the output goes
//! through a 32 KiB ring (DEFLATE's largest window) into scratch with
//! [`Source::put`], so nothing is allocated and the packet is then borrowed
//! with [`Source::joined`]. The ring and the decompressor state live on the
//! stack for the duration of one call (about 45 KiB).

use crate::error::{Error, ErrorKind, Result};
use crate::source::Source;
use miniz_oxide::inflate::core::inflate_flags::{
    TINFL_FLAG_COMPUTE_ADLER32, TINFL_FLAG_HAS_MORE_INPUT, TINFL_FLAG_PARSE_ZLIB_HEADER,
};
use miniz_oxide::inflate::core::{decompress, DecompressorOxide};
use miniz_oxide::inflate::TINFLStatus;

/// DEFLATE's largest window (RFC 1951 §2): the ring must hold it.
const RING: usize = 32 * 1024;
/// Compressed bytes read per step.
const CHUNK: usize = 1024;

/// Inflates the zlib stream at `offset..offset + len` into scratch from
/// byte 0 and returns the inflated length, at most `max_out`.
///
/// Errors: `Malformed` for a damaged stream or a wrong Adler-32;
/// `LimitExceeded` when the output would pass `max_out`; `ScratchTooSmall`
/// when it would pass the scratch; a read error.
pub(super) fn inflate<S: Source>(src: &mut S, offset: u64, len: usize, max_out: usize) -> Result<usize> {
    let mut state = DecompressorOxide::new();
    let mut ring = [0u8; RING];
    let mut input = [0u8; CHUNK];
    let (mut read, mut have, mut at) = (0usize, 0usize, 0usize);
    let (mut ring_pos, mut total) = (0usize, 0usize);
    loop {
        let mut refilled = false;
        if at == have && read < len {
            let n = (len - read).min(CHUNK);
            let buf = input.get_mut(..n).unwrap_or(&mut []);
            src.read_exact_at(offset + read as u64, buf)?;
            read += n;
            have = n;
            at = 0;
            refilled = true;
        }
        let more = read < len;
        let mut flags = TINFL_FLAG_PARSE_ZLIB_HEADER | TINFL_FLAG_COMPUTE_ADLER32;
        if more {
            flags |= TINFL_FLAG_HAS_MORE_INPUT;
        }
        let piece = input.get(at..have).unwrap_or(&[]);
        let (status, used, out) = decompress(&mut state, piece, &mut ring, ring_pos, flags);
        at += used;
        if out > 0 {
            if total + out > max_out {
                return Err(Error::limit(
                    offset,
                    &"inflated frame larger than the scratch or Limits::max_packet",
                ));
            }
            let chunk = ring.get(ring_pos..ring_pos + out).unwrap_or(&[]);
            src.put(total, chunk)?;
            total += out;
            ring_pos = (ring_pos + out) & (RING - 1);
        }
        match status {
            TINFLStatus::Done => return Ok(total),
            TINFLStatus::HasMoreOutput => {}
            TINFLStatus::NeedsMoreInput if more || at < have => {}
            TINFLStatus::NeedsMoreInput | TINFLStatus::FailedCannotMakeProgress => {
                return Err(Error::malformed(
                    offset,
                    &"mkv ContentCompression: zlib stream ends early (RFC 1950; RFC 9559 §5.1.4.1.31.6)",
                ))
            }
            _ => {
                return Err(Error::malformed(
                    offset,
                    &"mkv ContentCompression: damaged zlib stream (RFC 1950, RFC 1951; RFC 9559 §5.1.4.1.31.6)",
                ))
            }
        }
        if used == 0 && out == 0 && !refilled {
            return Err(Error::new(
                ErrorKind::Malformed,
                offset,
                &"mkv ContentCompression: zlib stream makes no progress (RFC 1950)",
            ));
        }
    }
}
