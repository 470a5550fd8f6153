//! The walk over the pieces of one Ogg packet (RFC 3533 §5: a packet's
//! segments continue on the next page of its stream): the runs kept while
//! its pages went by, or, for a packet over more pages than are kept, a
//! [`Walker`] that finds them again. One walk serves both ways of handing a
//! packet out: joined into scratch ([`PacketWalk::gather`], `demuxer.rs`)
//! and, with the `ogg-pieces` feature, as pieces of the input
//! ([`crate::pieces`]), so the two cannot disagree on its bytes.

use crate::error::Result;
use crate::source::Source;

use super::logical::{Extracted, Piece, Walker, MAX_PIECES};

/// Where the pieces of one packet are, and how far the walk has come.
#[derive(Debug, Clone, Default)]
pub(super) struct PacketWalk {
    /// The packet's runs, when it has at most [`MAX_PIECES`].
    pieces: heapless::Vec<Piece, MAX_PIECES>,
    /// The next of `pieces` to give.
    next: usize,
    /// More runs than were kept: the walker that finds them.
    walker: Option<Walker>,
    /// Most bytes scanned for a page after damage (the limits' resync).
    resync: u64,
}

impl PacketWalk {
    /// A walk over the packet `ex` of the stream `serial`.
    pub(super) fn new(ex: &Extracted, serial: u32, resync: u64) -> Self {
        PacketWalk {
            pieces: if ex.overflow {
                heapless::Vec::new()
            } else {
                ex.pieces.clone()
            },
            next: 0,
            walker: ex.overflow.then(|| Walker::new(serial, ex.loc)),
            resync,
        }
    }

    /// The input range of the next piece, or `None` after the last.
    pub(super) fn next_range<S: Source>(&mut self, src: &mut S) -> Result<Option<(u64, usize)>> {
        if let Some(w) = self.walker.as_mut() {
            return Ok(w
                .next_run(src, self.resync, u32::MAX)?
                .map(|(off, n)| (off, n as usize)));
        }
        let p = self.pieces.get(self.next).copied();
        self.next += 1;
        Ok(p.map(|p| (p.off, p.len as usize)))
    }

    /// Joins the packet's pieces in scratch from offset 0; returns the
    /// bytes joined.
    pub(super) fn gather<S: Source>(&mut self, src: &mut S) -> Result<usize> {
        let mut at = 0usize;
        while let Some((off, n)) = self.next_range(src)? {
            src.gather(off, n, at)?;
            at += n;
        }
        Ok(at)
    }
}

#[cfg(feature = "ogg-pieces")]
impl<S: Source> crate::pieces::PieceWalk<S> for PacketWalk {
    fn next_piece<'s>(&mut self, src: &'s mut S) -> Result<Option<&'s [u8]>> {
        match self.next_range(src)? {
            Some((off, n)) => src.bytes(off, n).map(Some),
            None => Ok(None),
        }
    }
}
