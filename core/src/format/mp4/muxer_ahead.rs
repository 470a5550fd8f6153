//! `moov` ahead of `mdat` (what ffmpeg calls `faststart`): a player can
//! start before the whole file has arrived (ISO/IEC 14496-12 §6.2.3 allows
//! either order; progressive download needs `moov` first).
//!
//! The payload is written once. A first pass over the same packets into a
//! [`NullSink`] builds the sample index; `index_size_ahead` then gives the
//! exact size `moov` will have once the media moves up by that much (the
//! move can switch `stco` to `co64` past 4 GiB, so the size is settled by
//! iterating). The second pass reserves that space after `ftyp` as a `free`
//! box and, at `finish`, writes `moov` into it through [`PatchAt`]; any room
//! left over stays a `free` box.

use super::muxer::Mp4Muxer;
use super::muxer_box::BoxWriter;
use super::muxer_moov::write_moov;
use crate::error::{Error, Result};
use crate::format::mux_traits::MuxContext;
use crate::sink::{NullSink, PatchAt, Sink, SpillStore};

/// Writes a `free` box of `bytes` bytes in all (§8.1.2): the space `moov`
/// will take.
///
/// Errors: `InvalidArgument` below 8 bytes or past 4 GiB; a sink error.
pub(crate) fn write_reserve<K: Sink>(w: &mut BoxWriter<'_, K>, bytes: u64) -> Result<()> {
    let size = u32::try_from(bytes).ok().filter(|&b| b >= 8).ok_or(Error::new(
        crate::error::ErrorKind::InvalidArgument,
        w.position(),
        &"mp4 muxer: room reserved for moov must be 8 bytes to 4 GiB (ISO/IEC 14496-12 8.1.2)",
    ))?;
    w.u32(size)?;
    w.put(b"free")?;
    let zeros = [0u8; 512];
    let mut left = bytes - 8;
    while left > 0 {
        let n = left.min(zeros.len() as u64);
        w.put(zeros.get(..n as usize).unwrap_or(&[]))?;
        left -= n;
    }
    Ok(())
}

/// The size of `moov` for media that ends at `end`.
fn moov_size(m: &Mp4Muxer, scratch: &[u8], store: Option<&dyn SpillStore>, ctx: &MuxContext, end: u64) -> Result<u64> {
    let mut n = NullSink::new();
    write_moov(m, &mut n, scratch, store, ctx, end)?;
    Ok(n.position())
}

/// The size of `moov` placed ahead of media that ends at `end` with
/// nothing reserved: the media then ends that much later.
pub(crate) fn size_ahead(
    m: &Mp4Muxer,
    scratch: &[u8],
    store: Option<&dyn SpillStore>,
    ctx: &MuxContext,
    end: u64,
) -> Result<u64> {
    let mut size = moov_size(m, scratch, store, ctx, end)?;
    // Growing only by the switch to 64-bit chunk offsets, once.
    for _ in 0..3 {
        let again = moov_size(m, scratch, store, ctx, end.saturating_add(size))?;
        if again == size {
            break;
        }
        size = again;
    }
    Ok(size)
}

/// Writes `moov` into the `reserve` bytes at `at`, the rest a `free` box.
///
/// Errors: `CapacityExceeded` (nothing written) when it does not fit, or
/// leaves fewer than the 8 bytes a `free` box needs; a sink error.
pub(crate) fn finish_ahead<K: Sink>(
    m: &Mp4Muxer,
    sink: &mut K,
    scratch: &[u8],
    store: Option<&dyn SpillStore>,
    ctx: &MuxContext,
    (at, reserve): (u64, u64),
) -> Result<()> {
    let end = sink.position();
    let size = moov_size(m, scratch, store, ctx, end)?;
    let rest = reserve.checked_sub(size).filter(|&r| r == 0 || r >= 8);
    let Some(rest) = rest else {
        return Err(Error::capacity(
            at,
            &"mp4 muxer: moov does not fit the room reserved for it (Muxer::index_size_ahead gives the size)",
        ));
    };
    write_moov(m, &mut PatchAt::new(sink, at), scratch, store, ctx, end)?;
    if rest > 0 {
        let mut h = [0u8; 8];
        for (d, s) in h.iter_mut().zip(
            u32::try_from(rest)
                .unwrap_or(u32::MAX)
                .to_be_bytes()
                .into_iter()
                .chain(*b"free"),
        ) {
            *d = s;
        }
        sink.patch_at(at.saturating_add(size), &h)?;
    }
    sink.flush()
}
