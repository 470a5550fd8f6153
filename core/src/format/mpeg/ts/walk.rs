//! The walk over the TS packets of one completed PES (ISO/IEC 13818-1
//! §2.4.3.2, §2.4.3.6): the payload byte ranges of its PID's packets, from
//! the packet that started it, past the PES header, up to the payload's
//! length. One walk serves both ways of handing a PES out: joined into
//! scratch (`pes.rs`) and as pieces of the input ([`crate::pieces`]). The
//! join over a slice source reads the TS headers from one borrowed window
//! of the input at a time ([`TsWalk::skim`]); every path follows
//! [`TsWalk::visit`].

use super::packet::{read_ts_packet, resync_from, TsPacket};
use super::skim::{header, WINDOW_PACKETS};
use crate::error::Result;
use crate::format::mpeg::split;
use crate::pieces::PieceWalk;
use crate::source::Source;

/// Where a PES's payload pieces are, and how far the walk has come.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(super) struct TsWalk {
    pub(super) pid: u16,
    /// The next TS packet to look at.
    pub(super) at: u64,
    /// Just past the last TS packet of the PES.
    pub(super) end: u64,
    /// TS packets with payload of the PES not walked yet.
    pub(super) pieces: u32,
    /// PES header bytes (and H.265 leading zeros) still to skip.
    pub(super) skip: usize,
    /// Payload bytes still to give.
    pub(super) left: usize,
    /// Whether the first packet of the PES was passed (a later
    /// payload_unit_start_indicator on the PID ends the walk).
    pub(super) started: bool,
    pub(super) packet_size: u64,
    pub(super) prefix: u64,
    /// Most bytes scanned for a sync byte after junk between packets.
    pub(super) resync_bytes: u64,
    /// Scratch offset where a reader source puts a piece (past the carry
    /// slots of the split tracks).
    pub(super) base: usize,
}

/// What one TS packet of the walk gives.
enum Visit {
    /// A piece of the payload: offset and length.
    Piece(u64, usize),
    /// Nothing: another PID, no payload, or only PES header bytes.
    Pass,
    /// A new PES starts on the PID: the walk ends.
    End,
}

impl TsWalk {
    /// The input range of the next piece, or `None` after the last.
    ///
    /// Reads one TS header per call through the source: a window here
    /// would be set up for a piece or two (the pieces, the first piece's
    /// keyframe check) and cost more than it saves, in process and on a
    /// map (tried: `packets --summary` on `hd1080.ts` +4%). The join takes
    /// its pieces from windows ([`TsWalk::skim`]).
    pub(super) fn next_range<S: Source>(&mut self, src: &mut S) -> Result<Option<(u64, usize)>> {
        while self.walking() {
            let at = self.at;
            let Some(tp) = read_ts_packet(src, at, self.prefix)? else {
                // Junk between packets: find the next packet the way the
                // reading loop did.
                match resync_from(src, at + 1, self.resync_bytes, self.prefix, self.packet_size)? {
                    Some(n) => self.at = n,
                    None => self.end = at,
                }
                continue;
            };
            match self.visit(at, &tp) {
                Visit::Piece(off, n) => return Ok(Some((off, n))),
                Visit::End => break,
                Visit::Pass => {}
            }
        }
        Ok(None)
    }

    /// Walks on from `self.at` through one window of a slice source,
    /// putting the pieces found in `out`; returns how many. Stops when
    /// `out` is full, at the end of the walk or of the window, and at a
    /// packet without the sync byte (left at `self.at` for
    /// [`TsWalk::next_range`], which then resynchronises). Returns 0 when
    /// the window cannot be borrowed: `next_range` then reads on.
    pub(super) fn skim<S: Source>(&mut self, src: &mut S, out: &mut [(u64, usize)]) -> usize {
        let start = self.at;
        let span = self.end.saturating_sub(start).min(WINDOW_PACKETS * self.packet_size);
        let Ok(window) = src.bytes(start, span as usize) else {
            return 0;
        };
        let mut k = 0;
        while k < out.len() && self.walking() {
            let at = self.at;
            let rel = (at - start + self.prefix) as usize;
            let Some(tp) = window.get(rel..).and_then(|b| header(b, at, self.prefix)) else {
                break;
            };
            match self.visit(at, &tp) {
                Visit::Piece(off, n) => {
                    if let Some(o) = out.get_mut(k) {
                        *o = (off, n);
                    }
                    k += 1;
                }
                Visit::End => break,
                Visit::Pass => {}
            }
        }
        k
    }

    /// Whether pieces may follow: packets, pieces and bytes are left.
    #[inline(always)]
    fn walking(&self) -> bool {
        self.at < self.end && self.pieces > 0 && self.left > 0
    }

    /// Follows the TS packet `tp` at `at` (read whole: the next one is at
    /// `at + packet_size`).
    ///
    /// `inline(always)`: in a firmware image `next_range` is its one caller
    /// (the embedded flash budget: the image stays as it was with the loop
    /// written out).
    #[inline(always)]
    fn visit(&mut self, at: u64, tp: &TsPacket) -> Visit {
        self.at = at + self.packet_size;
        if tp.pid != self.pid || !tp.has_payload {
            return Visit::Pass;
        }
        if self.started && tp.pusi {
            self.end = at;
            return Visit::End;
        }
        self.started = true;
        self.pieces -= 1;
        let s = self.skip.min(tp.payload_len as usize);
        self.skip -= s;
        let n = (tp.payload_len as usize - s).min(self.left);
        if n == 0 {
            return Visit::Pass;
        }
        self.left -= n;
        Visit::Piece(tp.payload + s as u64, n)
    }
}

impl<S: Source> PieceWalk<S> for TsWalk {
    fn next_piece<'s>(&mut self, src: &'s mut S) -> Result<Option<&'s [u8]>> {
        match self.next_range(src)? {
            Some((off, n)) => split::input_bytes(src, off, n, self.base).map(Some),
            None => Ok(None),
        }
    }
}
