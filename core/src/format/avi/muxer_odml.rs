//! The AVI muxer's OpenDML part (OpenDML "AVI File Format Extensions"
//! 1.02): what lets a file pass 1 GiB.
//!
//! Each stream's `strl` gets a `JUNK` chunk with room for a super index of
//! [`MAX_RIFFS`] entries, and `hdrl` a `LIST odml` with `dmlh`. When the
//! movie outgrows its RIFF, every stream's standard index (`ix##`, one
//! entry a chunk of this RIFF: the data's offset from the `movi` FourCC
//! and its size, bit 31 set for a non-key frame) is written at the end of
//! that RIFF's `movi`, its place patched into the stream's super index, and
//! the movie goes on in a `RIFF AVIX` with a `LIST movi` of its own. At
//! `finish` the last RIFF gets its standard indexes and each `JUNK` becomes
//! the `indx` super index. A file that stays in one RIFF keeps the `JUNK`
//! and `idx1` only, as ffmpeg's muxer writes it.

use super::layout::{IndexHeader, SuperIndexEntry, INDEX_OF_CHUNKS, INDEX_OF_INDEXES, STDINDEX_DELTAFRAME};
use super::muxer_index::{Batch, Idx1};
use crate::error::Result;
use crate::sink::{Sink, Spill};
use zerocopy::little_endian::{U16, U32, U64};
use zerocopy::IntoBytes;

/// RIFFs a file may have: the super index entries reserved per stream
/// (ffmpeg's `AVI_MASTER_INDEX_SIZE`); 256 RIFFs of 1 GiB at most.
pub const MAX_RIFFS: u32 = 256;

/// Bytes of an index header (AVIMETAINDEX).
const HEAD: u32 = core::mem::size_of::<IndexHeader>() as u32;
/// Bytes of the reserved super index: header and [`MAX_RIFFS`] entries.
pub(super) const SUPER_SIZE: u32 = HEAD + 16 * MAX_RIFFS;
/// Bytes of `dmlh` (ODMLExtendedAVIHeader: dwTotalFrames and reserved).
pub(super) const DMLH_SIZE: u32 = 248;

/// Writes `n` zero bytes.
pub(super) fn zeros<K: Sink>(sink: &mut K, mut n: u32) -> Result<()> {
    const Z: [u8; 256] = [0; 256];
    while n > 0 {
        let k = n.min(256);
        sink.write_all(Z.get(..k as usize).unwrap_or(&[]))?;
        n -= k;
    }
    Ok(())
}

/// Reserves a stream's super index as a `JUNK` chunk; returns its position.
pub(super) fn reserve_super<K: Sink>(sink: &mut K) -> Result<u64> {
    let at = sink.position();
    sink.write_vectored(&[b"JUNK", &SUPER_SIZE.to_le_bytes()])?;
    zeros(sink, SUPER_SIZE)?;
    Ok(at)
}

/// Bytes the standard indexes of `streams` streams with `entries` chunks
/// in all take.
pub(super) fn std_index_bytes(streams: usize, entries: u64) -> u64 {
    streams as u64 * u64::from(8 + HEAD) + entries * 8
}

/// Writes the standard index `ix##` of the stream whose chunks are `id`,
/// `count` of them among `idx1`'s entries, whose offsets are from the
/// `movi` FourCC at `movi`. Returns its position and size (header
/// included).
pub(super) fn write_std_index<K: Sink>(
    sink: &mut K,
    idx1: &Idx1,
    scratch: &[u8],
    spill: &Spill<'_>,
    id: [u8; 4],
    count: u32,
    movi: u64,
) -> Result<(u64, u32)> {
    let at = sink.position();
    let size = HEAD + 8 * count;
    let [a, b, ..] = id;
    let head = IndexHeader {
        longs_per_entry: U16::new(2),
        sub_type: 0,
        index_type: INDEX_OF_CHUNKS,
        entries: U32::new(count),
        chunk_id: id,
        base_offset: U64::new(movi),
        reserved: U32::new(0),
    };
    sink.write_vectored(&[&[b'i', b'x', a, b], &size.to_le_bytes(), head.as_bytes()])?;
    let mut out = Batch::default();
    idx1.each(scratch, spill, |e| {
        if e.chunk_id != id {
            return Ok(());
        }
        // The data's offset (past the chunk header) from the base.
        let offset = e.offset.get().saturating_add(8);
        let mut size = e.size.get();
        if e.flags.get() & super::layout::AVIIF_KEYFRAME == 0 {
            size |= STDINDEX_DELTAFRAME;
        }
        let mut entry = [0u8; 8];
        for (d, s) in entry
            .iter_mut()
            .zip(offset.to_le_bytes().iter().chain(&size.to_le_bytes()))
        {
            *d = *s;
        }
        out.push(sink, &entry)
    })?;
    out.flush(sink)?;
    Ok((at, size + 8))
}

/// Patches entry `k` of the super index reserved at `junk`: the standard
/// index at `ix` of `size` bytes, covering `duration` ticks.
pub(super) fn patch_super_entry<K: Sink>(
    sink: &mut K,
    junk: u64,
    k: u32,
    ix: u64,
    size: u32,
    duration: u32,
) -> Result<()> {
    let e = SuperIndexEntry {
        offset: U64::new(ix),
        size: U32::new(size),
        duration: U32::new(duration),
    };
    sink.patch_at(junk + 8 + u64::from(HEAD) + 16 * u64::from(k), e.as_bytes())
}

/// Turns the `JUNK` at `junk` into the `indx` super index of the stream
/// `id`, with `entries` entries.
pub(super) fn finish_super<K: Sink>(sink: &mut K, junk: u64, id: [u8; 4], entries: u32) -> Result<()> {
    let head = IndexHeader {
        longs_per_entry: U16::new(4),
        sub_type: 0,
        index_type: INDEX_OF_INDEXES,
        entries: U32::new(entries),
        chunk_id: id,
        base_offset: U64::new(0),
        reserved: U32::new(0),
    };
    sink.patch_at(junk, b"indx")?;
    sink.patch_at(junk + 8, head.as_bytes())
}
