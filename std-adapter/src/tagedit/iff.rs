//! The chunk walk shared by the RIFF (WAV, little-endian sizes) and IFF
//! (AIFF, big-endian sizes) editors: EA IFF 85 chunks, an id, a 32-bit
//! size, the body and a pad byte when the size is odd.

use super::{malformed, read_at};
use std::fs::File;

/// Most chunks walked.
const MAX_CHUNKS: usize = 10_000;

/// A chunk: where its header is, its id, its size (without the pad byte).
#[derive(Debug, Clone, Copy)]
pub(super) struct Chunk {
    pub pos: u64,
    pub id: [u8; 4],
    pub size: u64,
}

impl Chunk {
    /// Where it ends, its pad byte included.
    pub fn end(&self) -> u64 {
        self.pos + 8 + self.size + (self.size & 1)
    }
}

/// The chunks whose headers start at `from` and end by `end`, sizes
/// big-endian when `big`. Errors (`what` naming the format): a chunk whose
/// body runs past `limit` (`limit_name` in the message), more than
/// 10,000 chunks.
pub(super) fn walk(
    file: &File,
    (from, end, limit): (u64, u64, u64),
    big: bool,
    what: &str,
    limit_name: &str,
) -> std::io::Result<Vec<Chunk>> {
    walk_sized(file, (from, end, limit), big, (what, limit_name), None)
}

/// [`walk`], with the size of the `data` chunk taken from `data_size`
/// when its 32-bit size is `0xFFFFFFFF` (RF64's `ds64`, EBU Tech 3306
/// §3).
pub(super) fn walk_sized(
    file: &File,
    (from, end, limit): (u64, u64, u64),
    big: bool,
    (what, limit_name): (&str, &str),
    data_size: Option<u64>,
) -> std::io::Result<Vec<Chunk>> {
    let mut chunks = Vec::new();
    let mut pos = from;
    while pos + 8 <= end {
        if chunks.len() == MAX_CHUNKS {
            return Err(malformed(format!("{what}: more than {MAX_CHUNKS} chunks")));
        }
        let h = read_at(file, pos, 8, &format!("{what}: a chunk header"))?;
        let size = [h[4], h[5], h[6], h[7]];
        let mut c = Chunk {
            pos,
            id: [h[0], h[1], h[2], h[3]],
            size: u64::from(if big {
                u32::from_be_bytes(size)
            } else {
                u32::from_le_bytes(size)
            }),
        };
        if let (Some(n), b"data", u32::MAX) = (data_size, &c.id, c.size as u32) {
            c.size = n;
        }
        if pos + 8 + c.size > limit {
            return Err(malformed(format!(
                "{what}: chunk '{}' at byte {pos} runs past {limit_name}",
                String::from_utf8_lossy(&c.id)
            )));
        }
        chunks.push(c);
        pos = c.end();
    }
    Ok(chunks)
}
