//! Reading the MP4 muxer's sample index back (`muxer_index.rs` writes it):
//! the records in write order, from the blocks spilled to a
//! [`SpillStore`] and then the part still in memory, as one byte stream.
//!
//! A spilled index is read through a block of [`READ_BLOCK`] bytes held by
//! each reader, so `finish` needs no memory sized by the index. The
//! tables of `moov` (ISO/IEC 14496-12 §8.6.1.2 `stts` to §8.7.5 `stco`) walk
//! the records several times, each walk one sequential read of the store.
//! A store that fails to read ends the walk early; the error is kept in
//! the [`Index`]'s cell, and `muxer_moov.rs` returns it instead of the
//! truncated `moov`.

use super::muxer_index::{RunState, Sample, HAS_CTS, KEY, SAME_DELTA, SAME_SIZE};
use crate::error::Error;
use crate::sink::SpillStore;
use core::cell::Cell;

/// Bytes each reader of a spilled index reads from the store at once.
pub const READ_BLOCK: usize = 1024;

/// Where an index's bytes are: the first `spilled` in a store, the rest in
/// memory (`tail`).
#[derive(Clone, Copy)]
pub struct Index<'a> {
    store: Option<&'a dyn SpillStore>,
    spilled: u64,
    tail: &'a [u8],
    /// The first read error of the store.
    failed: Option<&'a Cell<Option<Error>>>,
}

impl<'a> Index<'a> {
    /// An index entirely in memory.
    #[cfg(test)]
    pub fn memory(tail: &'a [u8]) -> Self {
        Index {
            store: None,
            spilled: 0,
            tail,
            failed: None,
        }
    }

    /// An index whose first `spilled` bytes are in `store`; a read error
    /// goes to `failed`.
    pub fn spilled(
        store: Option<&'a dyn SpillStore>,
        spilled: u64,
        tail: &'a [u8],
        failed: &'a Cell<Option<Error>>,
    ) -> Self {
        Index {
            store,
            spilled: if store.is_some() { spilled } else { 0 },
            tail,
            failed: Some(failed),
        }
    }

    /// Keeps the first read error.
    fn fail(&self, e: Error) {
        if let Some(c) = self.failed {
            if c.get().is_none() {
                c.set(Some(e));
            }
        }
    }
}

impl core::fmt::Debug for Index<'_> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("Index")
            .field("spilled", &self.spilled)
            .field("tail", &self.tail.len())
            .finish()
    }
}

/// Reads the records of an index back, in write order, for every track.
#[derive(Debug, Clone)]
pub struct Records<'a> {
    index: Index<'a>,
    at: u64,
    runs: [RunState; 16],
    /// The store's bytes `block_at..block_at + block_len`.
    block: [u8; READ_BLOCK],
    block_at: u64,
    block_len: usize,
}

impl<'a> Records<'a> {
    /// The records in `bytes` (the used part of the scratch).
    #[cfg(test)]
    pub fn new(bytes: &'a [u8]) -> Self {
        Self::of(Index::memory(bytes))
    }

    /// The records of `index`.
    pub fn of(index: Index<'a>) -> Self {
        Records {
            index,
            at: 0,
            runs: [RunState::default(); 16],
            block: [0; READ_BLOCK],
            block_at: 0,
            block_len: 0,
        }
    }

    /// Byte `at` of the index; `None` past its end or when the store
    /// fails (the error kept).
    fn byte(&mut self, at: u64) -> Option<u8> {
        let Some(in_tail) = at.checked_sub(self.index.spilled) else {
            return self.spilled_byte(at);
        };
        self.index.tail.get(usize::try_from(in_tail).ok()?).copied()
    }

    fn spilled_byte(&mut self, at: u64) -> Option<u8> {
        let off = at.wrapping_sub(self.block_at);
        if at < self.block_at || off >= self.block_len as u64 {
            let store = self.index.store?;
            let n = usize::try_from(self.index.spilled.saturating_sub(at)).map_or(READ_BLOCK, |n| n.min(READ_BLOCK));
            let buf = self.block.get_mut(..n)?;
            if let Err(e) = store.read_at(at, buf) {
                self.index.fail(e);
                self.block_len = 0;
                return None;
            }
            (self.block_at, self.block_len) = (at, n);
            return self.block.first().copied();
        }
        self.block.get(usize::try_from(off).ok()?).copied()
    }

    fn leb(&mut self, at: &mut u64) -> Option<u64> {
        let mut v = 0u64;
        for shift in (0..70).step_by(7) {
            let x = self.byte(*at)?;
            *at += 1;
            v |= u64::from(x & 0x7F).checked_shl(shift)?;
            if x & 0x80 == 0 {
                return Some(v);
            }
        }
        None
    }
}

impl Iterator for Records<'_> {
    type Item = Sample;

    fn next(&mut self) -> Option<Sample> {
        let flags = self.byte(self.at)?;
        let mut at = self.at + 1;
        let track = flags & 0x0F;
        let mut run = *self.runs.get(usize::from(track))?;
        let size = if flags & SAME_SIZE != 0 {
            run.size
        } else {
            self.leb(&mut at)?
        };
        let delta = if flags & SAME_DELTA != 0 {
            run.delta
        } else {
            self.leb(&mut at)?
        };
        let cts = if flags & HAS_CTS != 0 {
            let code = self.leb(&mut at)?;
            run.cts_of(code)
        } else {
            0
        };
        run.size = size;
        run.delta = delta;
        run.started = true;
        if let Some(r) = self.runs.get_mut(usize::from(track)) {
            *r = run;
        }
        self.at = at;
        Some(Sample {
            track,
            key: flags & KEY != 0,
            size,
            delta,
            cts,
        })
    }
}
