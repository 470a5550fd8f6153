//! Finding the next element of a kind after damage: a forward scan for a
//! 4-byte Element ID (RFC 8794 §5) that `wanted` accepts and whose header
//! then reads, bounded by `Limits::resync_bytes`. Used after a Cluster's
//! damage (the next Cluster) and after a Top-Level Element whose declared
//! size runs past its Segment (the next Top-Level Element, as ffmpeg
//! recovers from such a size).

use super::ebml::read_element;
use crate::error::Result;
use crate::source::Source;

/// Bytes read at a time.
const WINDOW: usize = 512;

/// The first position in `from..stop` where an element with an ID that
/// `wanted` accepts begins and its header reads within `end` (or is cut by
/// the end of the input); `None` when there is none.
///
/// Errors: the source's.
///
/// Not inlined: a rare path, called from two places (flash size).
#[inline(never)]
pub(crate) fn next_element<S: Source>(
    src: &mut S,
    from: u64,
    stop: u64,
    end: u64,
    wanted: fn(u64) -> bool,
) -> Result<Option<u64>> {
    let mut at = from;
    let mut buf = [0u8; WINDOW];
    while at < stop {
        let n = src.read_at(at, &mut buf)?;
        let window = buf.get(..n).unwrap_or(&[]);
        for (i, w) in window.windows(4).enumerate() {
            let &[a, b, c, d] = w else { continue };
            let id = u64::from(u32::from_be_bytes([a, b, c, d]));
            let p = at + i as u64;
            // A header cut by the end of the input still counts: reading
            // it then says the input is truncated.
            let reads = |src: &mut S| read_element(src, p, end).map_or_else(|e| e.is_truncation(), |_| true);
            if p < stop && wanted(id) && reads(src) {
                return Ok(Some(p));
            }
        }
        if n < 4 {
            break;
        }
        at += (n - 3) as u64;
    }
    Ok(None)
}
