//! The walk over the fragments of one media object (ASF Specification rev
//! 1.20 §5.2.3) that arrived in order: each fragment starts where the one
//! before ended, from byte 0, and together they fill the object. Such an
//! object is its fragments' bytes in order, so with the `asf-pieces`
//! feature it is handed out as those pieces of the input
//! ([`crate::pieces`]), and its join in scratch gathers what the same walk
//! gives. Objects whose fragments came out of order, overlap, were more
//! than [`MAX_FRAGMENTS`], or are descrambled (audio spread) are joined as
//! ffmpeg fills its packet (`reassembly.rs`).

use crate::error::Result;
use crate::pieces::PieceWalk;
use crate::source::Source;

use super::reassembly::{Done, Fragment, MAX_FRAGMENTS};

/// The fragments of one object in order, and how far the walk has come.
#[derive(Debug, Clone, Default)]
pub(super) struct FragWalk {
    frags: heapless::Vec<Fragment, MAX_FRAGMENTS>,
    next: usize,
}

impl FragWalk {
    /// The walk over `done`'s fragments when they lie in order from byte 0,
    /// all remembered, and fill the object exactly; `None` otherwise.
    pub(super) fn in_order(done: &Done) -> Option<Self> {
        let p = &done.pending;
        if p.overflow.is_some() || p.truncated {
            return None;
        }
        let mut at = 0u32;
        for f in &p.frags {
            if f.off != at {
                return None;
            }
            at = at.checked_add(f.len)?;
        }
        (at == done.size).then(|| FragWalk {
            frags: p.frags.clone(),
            next: 0,
        })
    }

    /// Fragments in the walk.
    pub(super) fn pieces(&self) -> usize {
        self.frags.len()
    }

    /// The input range of the next piece, or `None` after the last.
    fn next_range(&mut self) -> Option<(u64, usize)> {
        let f = self.frags.get(self.next)?;
        self.next += 1;
        Some((f.data, f.len as usize))
    }

    /// Joins the pieces in scratch from offset 0.
    pub(super) fn gather<S: Source>(&mut self, src: &mut S) -> Result<()> {
        let mut at = 0usize;
        while let Some((off, n)) = self.next_range() {
            src.gather(off, n, at)?;
            at += n;
        }
        Ok(())
    }
}

impl<S: Source> PieceWalk<S> for FragWalk {
    fn next_piece<'s>(&mut self, src: &'s mut S) -> Result<Option<&'s [u8]>> {
        match self.next_range() {
            Some((off, n)) => src.bytes(off, n).map(Some),
            None => Ok(None),
        }
    }
}
