//! Spill stores: where a muxer's growing index goes once it passes the
//! memory its caller allows, and where `finish` reads it back.
//!
//! The MP4 muxers keep a compact sample index until `finish` (about 4 bytes
//! a sample, `format/mp4/muxer_index.rs`). Given a [`SpillStore`]
//! ([`crate::mux::Muxer::with_index_spill`]), the in-memory part is a block
//! of the caller's bound: each time it is full it is appended to the store
//! as it is, in order, and reused; `finish` reads the blocks back in order.
//! Memory stays the bound plus a constant whatever the length of the
//! recording.
//!
//! The interface is the least a store needs: append at the end, read back
//! at a position. [`SliceSink`] is one (a caller's buffer: RAM, or a test);
//! `mediaslice-std` has a temporary file.

use super::{Sink, SliceSink};
use crate::error::{Error, ErrorKind, Result};

/// Bytes written once in order and read back at positions.
pub trait SpillStore {
    /// Appends all of `data` after the bytes appended so far.
    ///
    /// Errors: any that means `data` is not all stored (a full disk, a full
    /// buffer): the muxer stops with it.
    fn append(&mut self, data: &[u8]) -> Result<()>;

    /// Fills `buf` with the appended bytes from `pos` on.
    ///
    /// Errors: `InvalidArgument` when `pos..pos + buf.len()` reaches past
    /// the bytes appended; an I/O error.
    fn read_at(&self, pos: u64, buf: &mut [u8]) -> Result<()>;
}

impl<S: SpillStore + ?Sized> SpillStore for &mut S {
    fn append(&mut self, data: &[u8]) -> Result<()> {
        (**self).append(data)
    }

    fn read_at(&self, pos: u64, buf: &mut [u8]) -> Result<()> {
        (**self).read_at(pos, buf)
    }
}

/// A caller's buffer as a store: `SinkFull` once it is full.
impl SpillStore for SliceSink<'_> {
    fn append(&mut self, data: &[u8]) -> Result<()> {
        self.write_all(data)
    }

    fn read_at(&self, pos: u64, buf: &mut [u8]) -> Result<()> {
        let src = usize::try_from(pos)
            .ok()
            .and_then(|p| self.written().get(p..p.checked_add(buf.len())?))
            .ok_or(Error::new(
                ErrorKind::InvalidArgument,
                pos,
                &"spill store: read past the bytes appended",
            ))?;
        buf.copy_from_slice(src);
        Ok(())
    }
}

/// No store: the type of a [`crate::mux::Muxer`] given none. Never holds a
/// byte (`CapacityExceeded`).
#[derive(Debug, Clone, Copy, Default)]
pub struct NoSpill;

impl SpillStore for NoSpill {
    fn append(&mut self, _data: &[u8]) -> Result<()> {
        Err(Error::capacity(0, &"spill store: none given"))
    }

    fn read_at(&self, pos: u64, _buf: &mut [u8]) -> Result<()> {
        Err(Error::capacity(pos, &"spill store: none given"))
    }
}

/// A format muxer's view of the driver's store: the store, if any, and how
/// many bytes of index it may keep in memory before spilling.
pub struct Spill<'a> {
    /// Where full blocks go.
    pub store: Option<&'a mut dyn SpillStore>,
    /// Most index bytes kept in memory (also bounded by the scratch).
    pub memory: usize,
}

impl Spill<'_> {
    /// No store: the index stays in the scratch.
    #[allow(dead_code, reason = "unused when no format feature is enabled")]
    pub fn none() -> Self {
        Spill {
            store: None,
            memory: usize::MAX,
        }
    }
}

impl core::fmt::Debug for Spill<'_> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("Spill")
            .field("store", &self.store.is_some())
            .field("memory", &self.memory)
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_slice_store_gives_back_what_it_took_and_refuses_the_rest() {
        let mut buf = [0u8; 8];
        let mut s = SliceSink::new(&mut buf);
        s.append(b"abcde").unwrap();
        let mut out = [0u8; 3];
        s.read_at(1, &mut out).unwrap();
        assert_eq!(&out, b"bcd");
        assert_eq!(s.read_at(3, &mut out).unwrap_err().kind(), ErrorKind::InvalidArgument);
        assert_eq!(s.append(b"wxyz").unwrap_err().kind(), ErrorKind::SinkFull);
        assert_eq!(NoSpill.append(b"a").unwrap_err().kind(), ErrorKind::CapacityExceeded);
    }
}
