//! The packet table's entries (CAF spec, "Packet Table chunk"): per
//! packet, its size when `desc` gives none (mBytesPerPacket 0), then its
//! frames when `desc` gives none (mFramesPerPacket 0), each a
//! variable-length integer. The table is never expanded: a cursor reads
//! the entry of each packet as it is needed.

use crate::error::{Error, Result};
use crate::source::Source;

/// Bytes of a packet-table integer that ffmpeg reads (7 bits each).
const VARINT_MAX_BYTES: u32 = 4;

/// Reads one packet-table integer (7 bits per byte, high bit = more) at
/// `at`, at most [`VARINT_MAX_BYTES`] bytes as ffmpeg does, not past `end`.
/// Returns the value and the offset after it.
///
/// Errors: `Malformed` when the table ends inside it.
fn read_varint<S: Source>(src: &mut S, at: u64, end: u64) -> Result<(u64, u64)> {
    let mut v = 0u64;
    let mut p = at;
    for _ in 0..VARINT_MAX_BYTES {
        if p >= end {
            return Err(Error::malformed(
                p,
                &"caf pakt: the table ends inside an entry (CAF spec, Packet Table chunk)",
            ));
        }
        let [b] = src.array::<1>(p)?;
        p += 1;
        v = (v << 7) | u64::from(b & 0x7F);
        if b & 0x80 == 0 {
            break;
        }
    }
    Ok((v, p))
}

/// The size and frames of the packet whose entry is at `at` (a table
/// ending at `end`), each from `desc` when it gives one (`bytes_per_packet`,
/// `frames_per_packet` not 0) and from the table otherwise; and the offset
/// of the next entry.
///
/// Errors: `Malformed` when the table ends inside the entry.
pub(super) fn entry<S: Source>(
    src: &mut S,
    at: u64,
    end: u64,
    bytes_per_packet: u64,
    frames_per_packet: u64,
) -> Result<(u64, u64, u64)> {
    let mut p = at;
    let size = if bytes_per_packet > 0 {
        bytes_per_packet
    } else {
        let (v, n) = read_varint(src, p, end)?;
        p = n;
        v
    };
    let frames = if frames_per_packet > 0 {
        frames_per_packet
    } else {
        let (v, n) = read_varint(src, p, end)?;
        p = n;
        v
    };
    Ok((size, frames, p))
}
