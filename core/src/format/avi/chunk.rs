//! RIFF chunks as AVI uses them (AVI RIFF reference, "RIFF File Format"):
//! a chunk header, where the next chunk starts, how much of a chunk the
//! input holds, and the stream number in a `##dc`-style chunk id.

use super::layout::ChunkHeader;
use crate::error::Result;
use crate::source::Source;

/// Size of a chunk header (ckID, ckSize).
pub(super) const CHUNK_HEADER: u64 = core::mem::size_of::<ChunkHeader>() as u64;

/// Reads the chunk header at `at`: its id and data size.
pub(super) fn read_header<S: Source>(src: &mut S, at: u64) -> Result<([u8; 4], u32)> {
    // A fixed-size array (the slice fast path: this is read per packet),
    // seen as the layout: the sizes agree at compile time.
    let raw: [u8; CHUNK_HEADER as usize] = src.array(at)?;
    let h: ChunkHeader = zerocopy::transmute!(raw);
    Ok((h.id, h.size.get()))
}

/// The part of a chunk's `size` bytes of data (header at `at`) that the
/// input holds, and whether it is cut short.
pub(super) fn clip(file_len: u64, at: u64, size: u32) -> (u32, bool) {
    let avail = file_len.saturating_sub(at.saturating_add(8));
    if u64::from(size) > avail {
        (avail as u32, true)
    } else {
        (size, false)
    }
}

/// The offset of the chunk after the one at `at` with `size` bytes of
/// data, past its pad byte.
pub(super) fn next_of(at: u64, size: u32) -> u64 {
    at.saturating_add(8)
        .saturating_add(u64::from(size))
        .saturating_add(u64::from(size & 1))
}

/// The stream number of a chunk id such as `01wb`, when its first two
/// bytes are decimal digits.
pub(super) fn stream_number(id: &[u8; 4]) -> Option<u8> {
    let [a, b, _, _] = *id;
    if a.is_ascii_digit() && b.is_ascii_digit() {
        Some((a - b'0') * 10 + (b - b'0'))
    } else {
        None
    }
}

/// Whether `id` is a data chunk of stream `n` (not a palette change or an
/// index).
pub(super) fn is_data_chunk(id: &[u8; 4], n: usize) -> bool {
    match stream_number(id) {
        Some(s) if (s as usize) < n => !matches!(&id[2..], b"pc" | b"ix"),
        _ => false,
    }
}
