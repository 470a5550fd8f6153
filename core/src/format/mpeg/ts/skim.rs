//! The fast path of the reading loop over a slice source: the TS packets
//! that only continue a PES in progress (no payload_unit_start_indicator on
//! a followed PID) are read from one borrowed window of the input, a header
//! of 4 bytes and the adaptation_field_length each (ISO/IEC 13818-1
//! §2.4.3.2, §2.4.3.4), without a call through the `Source` per packet.
//! Anything else (a PES start, lost sync, the end of the input) is left to
//! `TsDemuxer::read_next`, so both paths keep one behaviour: the same
//! continuity checks and diagnostics, the same PES bounds.
//!
//! A reader source never takes this path (its windows would land in the
//! scratch that holds the carry slots), and a firmware image built for one
//! reader source does not contain it.

use super::demuxer::TsDemuxer;
use super::packet::{TsPacket, SYNC, TS_PACKET};
use crate::error::Result;
use crate::format::traits::Context;
use crate::source::Source;

/// TS packets read from one window: enough that the window's setup costs
/// nothing per packet, few enough that the window stays in the L2 cache.
pub(super) const WINDOW_PACKETS: u64 = 256;

/// The header facts of the TS packet at offset `at` of the input, from
/// `b`, the bytes of the window from its sync byte on (at least 5).
#[inline]
pub(super) fn header(b: &[u8], at: u64, prefix: u64) -> Option<TsPacket> {
    let &[sync, b1, b2, b3, b4, ..] = b else { return None };
    if sync != SYNC {
        return None;
    }
    let afc = (b3 >> 4) & 3;
    let mut payload = at + prefix + 4;
    if afc & 2 != 0 {
        payload += 1 + b4 as u64;
    }
    let end = at + prefix + TS_PACKET;
    Some(TsPacket {
        pid: u16::from_be_bytes([b1 & 0x1F, b2]),
        pusi: b1 & 0x40 != 0,
        cc: b3 & 0x0F,
        has_payload: afc & 1 != 0 && payload < end,
        payload,
        payload_len: end.saturating_sub(payload),
    })
}

impl TsDemuxer {
    /// Reads on from `self.pos` through the TS packets that continue a PES
    /// or belong to no followed PID, in one window of a slice source
    /// (`len` bytes long); stops before a packet that `read_next` must
    /// handle, or after one that completes a PES (then in `self.ready`).
    /// Returns whether it moved on.
    ///
    /// Errors: `LimitExceeded` past `max_packet` bytes, as `read_next`.
    pub(super) fn skim<S: Source>(&mut self, src: &mut S, ctx: &mut Context, len: u64) -> Result<bool> {
        let start = self.pos;
        let span = len.saturating_sub(start).min(WINDOW_PACKETS * self.packet_size);
        let Ok(window) = src.bytes(start, span as usize) else {
            return Ok(false);
        };
        let mut at = start;
        // The stream of the last PID looked up (a PID has 13 bits, so
        // `u16::MAX` matches none): runs of one PID's packets skip the
        // table search.
        let (mut hit_pid, mut hit) = (u16::MAX, 0usize);
        loop {
            let rel = (at - start + self.prefix) as usize;
            // A whole packet must be in the input, as the reading loop asks.
            if at + self.prefix + TS_PACKET > len {
                break;
            }
            let Some(tp) = window.get(rel..).and_then(|b| header(b, at, self.prefix)) else {
                break;
            };
            let i = if tp.pid == hit_pid {
                hit
            } else {
                let Some(i) = self.es.iter().position(|e| e.pid == tp.pid) else {
                    at += self.packet_size;
                    continue;
                };
                (hit_pid, hit) = (tp.pid, i);
                i
            };
            if tp.pusi && tp.has_payload {
                break;
            }
            at += self.packet_size;
            let Some(e) = self.es.get_mut(i) else { break };
            if !tp.has_payload || !e.continuity(&tp, ctx, at - self.packet_size) {
                continue;
            }
            if let Some(done) = e.extend(i, &tp, at - self.packet_size, at, ctx.limits.max_packet)? {
                self.ready = Some(done);
                break;
            }
        }
        self.pos = at;
        Ok(at > start)
    }
}
