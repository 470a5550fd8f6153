//! The walk over the TS packets of one completed PES (ISO/IEC 13818-1
//! §2.4.3.2, §2.4.3.6): the payload byte ranges of its PID's packets, from
//! the packet that started it, past the PES header, up to the payload's
//! length. One walk serves both ways of handing a PES out: joined into
//! scratch (`pes.rs`) and as pieces of the input ([`crate::pieces`]).

use super::packet::{read_ts_packet, resync_from};
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

impl TsWalk {
    /// The input range of the next piece, or `None` after the last.
    pub(super) fn next_range<S: Source>(&mut self, src: &mut S) -> Result<Option<(u64, usize)>> {
        while self.at < self.end && self.pieces > 0 && self.left > 0 {
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
            self.at = at + self.packet_size;
            if tp.pid != self.pid || !tp.has_payload {
                continue;
            }
            if self.started && tp.pusi {
                self.end = at;
                break;
            }
            self.started = true;
            self.pieces -= 1;
            let s = self.skip.min(tp.payload_len as usize);
            self.skip -= s;
            let n = (tp.payload_len as usize - s).min(self.left);
            if n > 0 {
                self.left -= n;
                return Ok(Some((tp.payload + s as u64, n)));
            }
        }
        Ok(None)
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
