//! Windows over a track's sample tables (§8.6, §8.7): the table cursor
//! reads each `stsz`/`stz2`, `stco`/`co64`, `stsc`, `stts`, `ctts` and
//! `stss` entry through a [`Window`], which keeps the last 64 bytes read
//! from that table and refills them with one [`Source::read_at`], so most
//! entries cost a bounds check and an index instead of a call into the
//! source. The tables stay in the input: a window holds a few entries,
//! never the table.
//!
//! With the `mp4-windows` feature off (the firmware's build), a
//! [`Window`] is empty and every entry is read through the source as
//! before: no state, no code.
//!
//! Errors are those of reading the entry alone: a window keyed by file
//! offset serves only bytes it holds; when a refill gets fewer bytes than
//! the entry needs (the input ends inside it), the entry is read again
//! through [`Source::array`], which fails exactly as it would have.

use crate::error::Result;
use crate::source::Source;

/// Bytes a window holds: 16 `stsz` or `stco` entries, 8 `stts`, `ctts` or
/// `co64` entries, 5 `stsc` entries.
#[cfg(feature = "mp4-windows")]
const WINDOW: usize = 64;

/// The last bytes read from one sample table.
#[cfg(feature = "mp4-windows")]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Window {
    /// File offset of `buf[0]`.
    at: u64,
    /// Valid bytes in `buf`.
    len: u32,
    buf: [u8; WINDOW],
}

#[cfg(feature = "mp4-windows")]
impl Default for Window {
    fn default() -> Self {
        Window {
            at: 0,
            len: 0,
            buf: [0; WINDOW],
        }
    }
}

#[cfg(feature = "mp4-windows")]
impl Window {
    /// The `N` bytes at `off`, from the window when it holds them; a
    /// refill reads no further than `end`, the end of the table.
    #[inline]
    pub(super) fn get<S: Source, const N: usize>(&mut self, src: &mut S, off: u64, end: u64) -> Result<[u8; N]> {
        if let Some(a) = self.held(off) {
            return Ok(a);
        }
        self.refill(src, off, end)
    }

    /// The `N` bytes at `off` if the window holds them.
    #[inline]
    fn held<const N: usize>(&self, off: u64) -> Option<[u8; N]> {
        // One comparison for both sides: an `off` before the window wraps
        // to a distance far past its length.
        let rel = off.wrapping_sub(self.at);
        let len = u64::from(self.len);
        if rel >= len || len - rel < N as u64 {
            return None;
        }
        // rel < len <= WINDOW: no truncation, no overflow.
        let rel = rel as usize;
        <[u8; N]>::try_from(self.buf.get(rel..rel.wrapping_add(N))?).ok()
    }

    #[cold]
    #[inline(never)]
    fn refill<S: Source, const N: usize>(&mut self, src: &mut S, off: u64, end: u64) -> Result<[u8; N]> {
        let want = usize::try_from(end.saturating_sub(off)).map_or(WINDOW, |n| n.min(WINDOW));
        self.at = off;
        // A failed or short read (the input ends inside the table, a
        // reader that fails further on) keeps what it got; the entry is
        // then read alone, as it was without a window.
        self.len = match self.buf.get_mut(..want).map(|b| src.read_at(off, b)) {
            Some(Ok(got)) => got.min(want) as u32,
            _ => 0,
        };
        match self.held(off) {
            Some(a) => Ok(a),
            None => src.array(off),
        }
    }
}

/// Without `mp4-windows`: every entry is read through the source.
#[cfg(not(feature = "mp4-windows"))]
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(super) struct Window;

#[cfg(not(feature = "mp4-windows"))]
impl Window {
    /// The `N` bytes at `off`, read through the source.
    #[inline(always)]
    pub(super) fn get<S: Source, const N: usize>(&mut self, src: &mut S, off: u64, _end: u64) -> Result<[u8; N]> {
        src.array(off)
    }
}

/// One window per sample table of a track.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(super) struct Windows {
    pub(super) stsz: Window,
    pub(super) stco: Window,
    pub(super) stsc: Window,
    pub(super) stts: Window,
    pub(super) ctts: Window,
    pub(super) stss: Window,
}

/// The demuxer's windows, held outside the tracks so that the demuxer
/// (moved by value a few times while it opens) stays near its size without
/// windows: the track with the most samples has its own set, every other
/// track shares the second. A window is keyed by file offset and serves
/// only bytes it read, so a shared set never gives a track another
/// table's bytes; it only refills more often.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(super) struct WindowSlots {
    own: Windows,
    shared: Windows,
}

impl WindowSlots {
    /// The set of a track: its own when `own`, else the shared one.
    #[inline(always)]
    pub(super) fn of(&mut self, own: bool) -> &mut Windows {
        if own {
            &mut self.own
        } else {
            &mut self.shared
        }
    }
}

impl Window {
    /// A big-endian `u32` at `off`.
    #[inline(always)]
    pub(super) fn u32_be<S: Source>(&mut self, src: &mut S, off: u64, end: u64) -> Result<u32> {
        Ok(u32::from_be_bytes(self.get(src, off, end)?))
    }

    /// A big-endian `u64` at `off`.
    #[inline(always)]
    pub(super) fn u64_be<S: Source>(&mut self, src: &mut S, off: u64, end: u64) -> Result<u64> {
        Ok(u64::from_be_bytes(self.get(src, off, end)?))
    }
}

#[cfg(all(test, feature = "mp4-windows"))]
mod tests {
    extern crate std;
    use super::Window;
    use crate::{SliceSource, Source};
    use std::vec::Vec;

    /// A table that the input cuts: read through a window, every entry
    /// gives what reading it alone gives, the cut one the same error; a
    /// refill reads no further than the table's end.
    #[test]
    fn window_reads_as_the_source_does() {
        let mut t: Vec<u8> = std::vec![0xAA; 5];
        for i in 0..40u32 {
            t.extend_from_slice(&(i * 3).to_be_bytes());
        }
        let end = 5 + 40 * 4;
        for cut in [t.len(), 5 + 17 * 4 + 2, 5 + 16 * 4, 7] {
            let data = t.get(..cut).unwrap();
            let mut w = Window::default();
            let mut a = SliceSource::new(data);
            let mut b = SliceSource::new(data);
            for i in 0..40u64 {
                let off = 5 + i * 4;
                assert_eq!(w.u32_be(&mut a, off, end), b.u32_be(off), "cut {cut}, entry {i}");
            }
            // 40 entries: 3 refills of 64 bytes at most, not 40 reads.
            if cut == t.len() {
                assert!(a.stats().reads <= 3, "{:?}", a.stats());
                assert_eq!(a.stats().bytes_read, 160);
            }
        }
    }
}
