//! The AVI muxer's `idx1` (AVI RIFF reference, "AVI Index Entries"): one
//! 16-byte AVIOLDINDEX entry per chunk of `movi`, kept in the order the
//! chunks are written and written after `movi` at `finish`.
//!
//! The entries are kept as they will be written, in the caller's scratch
//! ([`crate::mux::Muxer::with_scratch`]). With a spill store
//! ([`crate::mux::Muxer::with_index_spill`]) the scratch holds one block
//! of at most the caller's bound; each full block is appended to the store
//! and the block reused, and `finish` copies the store back through a small
//! stack buffer before the block's own entries. Memory stays the bound
//! whatever the number of chunks; nothing is allocated.

use super::layout::Idx1Entry;
use crate::error::{Error, Result};
use crate::sink::{Sink, Spill};
use zerocopy::{FromBytes, IntoBytes};

/// Bytes of one `idx1` entry.
pub const ENTRY: usize = core::mem::size_of::<Idx1Entry>();

/// Bytes copied from the spill store to the sink at a time in `finish`.
const COPY: usize = 512;

/// Where the entries of the current RIFF are: the block in the scratch
/// and what was spilled since `base`. The offsets in them are from the
/// current RIFF's `movi` FourCC.
#[derive(Debug, Clone, Copy, Default)]
pub(super) struct Idx1 {
    /// Entry bytes in the scratch block.
    pub(super) len: usize,
    /// Entry bytes appended to the spill store.
    pub(super) spilled: u64,
    /// Where the current RIFF's entries start in the store (earlier ones
    /// belong to RIFFs already closed).
    pub(super) base: u64,
}

impl Idx1 {
    /// Entries of the current RIFF kept so far.
    pub(super) fn entries(&self) -> u64 {
        (self.spilled - self.base + self.len as u64) / ENTRY as u64
    }

    /// Starts a new RIFF: the entries kept so far are done with.
    pub(super) fn reset(&mut self) {
        self.base = self.spilled;
        self.len = 0;
    }

    /// Calls `f` with each entry of the current RIFF, in order: the spilled
    /// ones read back through a stack buffer, then the block's.
    ///
    /// Errors: the store's; `f`'s.
    pub(super) fn each(
        &self,
        scratch: &[u8],
        spill: &Spill<'_>,
        mut f: impl FnMut(&Idx1Entry) -> Result<()>,
    ) -> Result<()> {
        let mut run = |bytes: &[u8]| -> Result<()> {
            for raw in bytes.chunks_exact(ENTRY) {
                if let Ok(e) = Idx1Entry::read_from_bytes(raw) {
                    f(&e)?;
                }
            }
            Ok(())
        };
        if self.spilled > self.base {
            let store = spill
                .store
                .as_deref()
                .ok_or(Error::capacity(0, &"avi muxer: idx1 spilled with no store"))?;
            let mut buf = [0u8; COPY];
            let mut at = self.base;
            while at < self.spilled {
                let n = (self.spilled - at).min(COPY as u64) as usize;
                let part = buf.get_mut(..n).unwrap_or(&mut []);
                store.read_at(at, part)?;
                run(part)?;
                at += n as u64;
            }
        }
        run(scratch.get(..self.len).unwrap_or(&[]))
    }

    /// Appends `e`: into the scratch block, which, when full and a store is
    /// given, first goes whole to the store.
    ///
    /// Errors: `CapacityExceeded` when the block is full and there is no
    /// store; the store's error.
    pub(super) fn push(&mut self, scratch: &mut [u8], spill: &mut Spill<'_>, e: &Idx1Entry, pos: u64) -> Result<()> {
        let bound = if spill.store.is_some() {
            spill.memory
        } else {
            usize::MAX
        };
        // Whole entries only: a block is a multiple of 16 bytes.
        let cut = bound.min(scratch.len()) / ENTRY * ENTRY;
        let block = scratch.get_mut(..cut).unwrap_or(&mut []);
        if self.len + ENTRY > block.len() {
            let (Some(store), false) = (spill.store.as_deref_mut(), block.is_empty()) else {
                return Err(Error::capacity(
                    pos,
                    &"avi muxer: the idx1 is full; give Muxer::with_scratch more bytes (16 per chunk) or an index spill store",
                ));
            };
            store.append(block.get(..self.len).unwrap_or(&[]))?;
            self.spilled = self.spilled.saturating_add(self.len as u64);
            self.len = 0;
        }
        if let Some(dst) = block.get_mut(self.len..self.len + ENTRY) {
            dst.copy_from_slice(e.as_bytes());
            self.len += ENTRY;
        }
        Ok(())
    }

    /// Writes the `idx1` chunk of the current (first) RIFF.
    ///
    /// Errors: `CapacityExceeded` for an index over 4 GiB; the store's or
    /// the sink's error.
    pub(super) fn write<K: Sink>(&self, sink: &mut K, scratch: &[u8], spill: &Spill<'_>) -> Result<()> {
        let bytes = self.entries() * ENTRY as u64;
        let size = u32::try_from(bytes).map_err(|_| Error::capacity(sink.position(), &"avi muxer: idx1 over 4 GiB"))?;
        sink.write_vectored(&[b"idx1", &size.to_le_bytes()])?;
        let mut out = Batch::default();
        self.each(scratch, spill, |e| out.push(sink, e.as_bytes()))?;
        out.flush(sink)
    }
}

/// Small writes gathered into one sink write of up to [`COPY`] bytes (a
/// file sink makes one system call a write).
#[derive(Debug)]
pub(super) struct Batch {
    buf: [u8; COPY],
    n: usize,
}

impl Default for Batch {
    fn default() -> Self {
        Batch { buf: [0; COPY], n: 0 }
    }
}

impl Batch {
    /// Adds `data` (at most [`COPY`] bytes), writing what was gathered
    /// first when it would not fit.
    pub(super) fn push<K: Sink>(&mut self, sink: &mut K, data: &[u8]) -> Result<()> {
        if self.n + data.len() > COPY {
            self.flush(sink)?;
        }
        match self.buf.get_mut(self.n..self.n + data.len()) {
            Some(dst) => {
                dst.copy_from_slice(data);
                self.n += data.len();
                Ok(())
            }
            None => sink.write_all(data),
        }
    }

    /// Writes what was gathered.
    pub(super) fn flush<K: Sink>(&mut self, sink: &mut K) -> Result<()> {
        let r = sink.write_all(self.buf.get(..self.n).unwrap_or(&[]));
        self.n = 0;
        r
    }
}
