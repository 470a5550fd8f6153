//! The chunk walk of `movi` (AVI RIFF reference, "AVI RIFF Form": `LIST
//! movi`, `LIST rec `; OpenDML 1.02 `RIFF AVIX`): where packets come from
//! without an index or after it, and the resynchronisation over damage.

use super::chunk::{clip, is_data_chunk, next_of, read_header, stream_number, CHUNK_HEADER};
use super::demuxer::{AviDemuxer, Chunk, Mode};
use super::layout::ChunkHeader;
use crate::bytes;
use crate::error::Result;
use crate::format::traits::Context;
use crate::source::Source;

/// Bytes read at a time by the resynchronisation scan: one read serves
/// `RESYNC_WINDOW - 7` candidate header offsets.
const RESYNC_WINDOW: usize = 256;

/// Whether the chunk header `h` at `at` looks like one worth resuming at.
/// `max_packet` is `Limits::max_packet`.
fn plausible_header(h: &ChunkHeader, at: u64, file_len: u64, nstreams: usize, max_packet: u32) -> bool {
    let id = h.id;
    let size = h.size.get();
    // A header whose size runs past the end of the input is still taken
    // when a longer input could hold its chunk whole, so that the walk
    // resumes where the whole file's does: `idx1` (a resync in a cut file
    // went on into the index and read its entries as chunk headers), `LIST`,
    // `RIFF` and `JUNK` (four exact bytes rarely match by chance), and a
    // stream chunk of a size a packet may have (a resync that passed it read
    // chunk headers inside its data). A larger stream chunk size is damage
    // (a random size rarely is that small). Three `truncation` fuzz finds.
    let fits = at.saturating_add(8).saturating_add(u64::from(size)) <= file_len;
    matches!(&id, b"idx1" | b"LIST" | b"RIFF" | b"JUNK")
        || (is_data_chunk(&id, nstreams) && (fits || size <= max_packet))
}

impl AviDemuxer {
    /// The offset of the first stream chunk of `movi`, descending `rec `
    /// lists and skipping JUNK and indexes, within the resync budget.
    pub(super) fn first_movi_chunk<S: Source>(&mut self, src: &mut S, ctx: &mut Context) -> Result<Option<u64>> {
        let saved = (self.mode, self.walk_at, self.resync_from);
        self.mode = Mode::Walk;
        self.walk_at = self.movi_start;
        self.resync_from = self.movi_start;
        let r = self.peek_walk(src, ctx);
        (self.mode, self.walk_at, self.resync_from) = saved;
        match r {
            Ok(c) => Ok(c.map(|c| c.pos)),
            Err(e) if e.is_truncation() => Ok(None),
            Err(e) => Err(e),
        }
    }

    /// Walks chunks from `walk_at` to the next stream chunk: enters `movi`,
    /// `rec ` and `RIFF AVIX`, skips everything else, and resynchronises
    /// over damage within `Limits::resync_bytes`.
    pub(super) fn peek_walk<S: Source>(&mut self, src: &mut S, ctx: &mut Context) -> Result<Option<Chunk>> {
        let file_len = src.len();
        let n = self.streams.len();
        loop {
            let at = self.walk_at;
            if at.saturating_add(8) > file_len {
                return Ok(None);
            }
            let (id, size) = read_header(src, at)?;
            let end = at.saturating_add(8).saturating_add(u64::from(size));
            if is_data_chunk(&id, n) {
                let (size, cut) = clip(file_len, at, size);
                return Ok(Some(Chunk {
                    stream: stream_number(&id).unwrap_or(0),
                    pos: at,
                    size,
                    key: true,
                    cut,
                }));
            }
            match &id {
                b"LIST" | b"RIFF" => {
                    if at.saturating_add(12) > file_len {
                        return Ok(None);
                    }
                    let kind: [u8; 4] = src.array(at + 8)?;
                    if &id == b"RIFF" || matches!(&kind, b"movi" | b"rec ") {
                        self.walk_at = at + 12;
                        self.resync_from = at + 12;
                    } else {
                        self.walk_at = next_of(at, size);
                        self.resync_from = end;
                    }
                    continue;
                }
                _ if id.iter().all(|b| (0x20..0x7F).contains(b)) => {
                    if end > file_len {
                        // Cut inside a chunk that is not a packet: the end.
                        return Ok(None);
                    }
                    // JUNK, idx1, ix##, ##pc and other chunks: skip.
                    self.walk_at = next_of(at, size);
                    self.resync_from = end;
                    continue;
                }
                _ => {}
            }
            // Damage: scan forward for a plausible chunk header.
            ctx.diags.report("avi.resync", at);
            let from = if self.resync_from < at {
                self.resync_from
            } else {
                at + 1
            };
            match self.resync(src, ctx, from)? {
                Some(p) => {
                    self.walk_at = p;
                    self.resync_from = p;
                }
                None => return Ok(None),
            }
        }
    }

    /// Scans from `from` for a plausible chunk header, within
    /// `Limits::resync_bytes`.
    fn resync<S: Source>(&mut self, src: &mut S, ctx: &mut Context, from: u64) -> Result<Option<u64>> {
        let file_len = src.len();
        let n = self.streams.len();
        let stop = from.saturating_add(ctx.limits.resync_bytes).min(file_len);
        let mut buf = [0u8; RESYNC_WINDOW];
        let mut at = from;
        while at.saturating_add(8) <= stop.saturating_add(7).min(file_len) && at < stop {
            let got = src.read_at(at, &mut buf)?;
            if got < 8 {
                return Ok(None);
            }
            for i in 0..=(got - 8) {
                let p = at + i as u64;
                if p >= stop {
                    return Ok(None);
                }
                if let Some(raw) = bytes::array::<{ CHUNK_HEADER as usize }>(&buf, i) {
                    let h: ChunkHeader = zerocopy::transmute!(raw);
                    if plausible_header(&h, p, file_len, n, ctx.limits.max_packet) {
                        return Ok(Some(p));
                    }
                }
            }
            at += (got - 7) as u64;
        }
        Ok(None)
    }
}
