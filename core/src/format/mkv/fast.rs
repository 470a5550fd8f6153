//! The common Block in one step (feature `mkv-fast`): an unlaced
//! SimpleBlock (RFC 9559 §10.2) inside a Cluster, of a track stored as it
//! is.
//!
//! One 16-byte read at the reading position holds the SimpleBlock's
//! Element ID (1 byte), its data size (1 to 8 bytes, RFC 8794 §6), the
//! TrackNumber (1 byte), the relative timestamp (2 bytes) and the flags
//! (§10.1). When every fact is the usual one the packet is decided here,
//! with the same timing the general path gives (`step`, `start_block`,
//! `Laces::take`, `keep`). Anything else (another element, a laced or
//! empty Block, a size past the Cluster, a TrackNumber over 126, a track
//! with header stripping, compression, Vorbis timing, WebVTT or subtitle
//! rules, a seek in progress, a Cluster without a Timestamp yet or with
//! one past `i64`) returns
//! `None` having changed nothing, and the general path reads the same
//! element and decides: it alone reports diagnostics and errors.
//!
//! From a slice, the frame is borrowed with the 16 bytes after it, which
//! are kept ([`Head`]): the next Block's header is then already at hand,
//! and a packet costs one call on the source.

use super::block::bitstream_key;
use super::{Emit, Encoding, MkvDemuxer, TrackState};
use crate::error::Result;
use crate::format::traits::Context;
use crate::source::Source;
use crate::types::{Codec, Packet, PacketFlags};

/// The SimpleBlock Element ID (RFC 9559 §5.1.3.4), one byte.
const SIMPLE_BLOCK_ID: u8 = 0xA3;

/// Bytes read at once: an ID of 1 byte, a size of up to 8, a TrackNumber of
/// 1, the timestamp's 2 and the flags byte fit, with room to spare.
const WINDOW: usize = 16;

/// The lacing bits of a Block's flags (RFC 9559 §10.1).
const LACING_BITS: u8 = 0x06;

/// The keyframe bit of a SimpleBlock's flags (RFC 9559 §10.2).
const KEYFRAME_BIT: u8 = 0x80;

/// The 16 input bytes at `at`, kept from the last frame's borrow.
#[derive(Debug, Clone)]
pub(super) struct Head {
    at: u64,
    bytes: [u8; WINDOW],
}

impl Default for Head {
    fn default() -> Self {
        Head {
            at: u64::MAX,
            bytes: [0; WINDOW],
        }
    }
}

impl TrackState {
    /// Whether the fast path may decide this track's Blocks: stored as it
    /// is (no header stripping or compression), with no Vorbis timing,
    /// WebVTT or subtitle rules. Fixed at open ([`MkvDemuxer::mark_fast`]).
    fn fast_eligible(&self) -> bool {
        matches!(self.encoding, Encoding::Plain) && self.vorbis.is_none() && !self.webm_vtt && !self.subtitle
    }
}

impl MkvDemuxer {
    /// Marks the tracks the fast path may decide (the tracks and their
    /// ContentEncodings do not change after the open).
    pub(super) fn mark_fast(&mut self) {
        for t in &mut self.tracks {
            t.fast = t.fast_eligible();
        }
    }

    /// The packet of the SimpleBlock at the reading position when it is the
    /// common case (see the module docs), with the reading position moved
    /// past it; `None`, with nothing changed, for anything else.
    #[inline(always)]
    pub(super) fn fast_block<S: Source>(&mut self, src: &mut S, ctx: &Context) -> Option<Emit> {
        #[cfg(test)]
        if switch::DISABLED.with(core::cell::Cell::get) {
            return None;
        }
        if !self.in_cluster || self.skip.is_some() {
            return None;
        }
        // A Cluster of unknown size runs to the Segment's end (the general
        // path's bound); a SimpleBlock is no Top-Level Element that would end it.
        let cluster_ts = self.cluster_ts?;
        let cluster_end = self.cluster_end.unwrap_or_else(|| self.data_end(src));
        let pos = self.pos;
        let h: [u8; WINDOW] = if self.head.at == pos {
            self.head.bytes
        } else {
            src.array(pos).ok()?
        };
        let [id, size_first, ..] = h;
        if id != SIMPLE_BLOCK_ID || size_first == 0 {
            return None;
        }
        // The data size (RFC 8794 §6): 1 to 8 bytes, marker removed.
        let size_len = size_first.leading_zeros() as usize + 1;
        let raw = u64::from_be_bytes(h.get(1..9)?.try_into().ok()?) >> (8 * (8 - size_len));
        let mask = (1u64 << (7 * size_len)) - 1;
        let size = raw & mask;
        // Unknown (all ones), or no byte after the Block's header, which
        // ffmpeg drops: the general path.
        if size == mask || size <= 4 {
            return None;
        }
        let data = pos + 1 + size_len as u64;
        let end = data.checked_add(size)?;
        if end > cluster_end {
            return None;
        }
        let head = h.get(1 + size_len..5 + size_len)?;
        let &[number, t0, t1, flags] = head else { return None };
        // A TrackNumber of one byte (RFC 8794 §4: 0x81 to 0xFE), unlaced.
        if number & 0x80 == 0 || number == 0xFF || flags & LACING_BITS != 0 {
            return None;
        }
        let frame = u32::try_from(size - 4).ok().filter(|&f| f <= ctx.limits.max_packet)?;
        let number = u64::from(number & 0x7F);
        let ti = self.tracks.iter().position(|t| t.number == number)?;
        let t = self.tracks.get_mut(ti)?;
        if !t.fast {
            return None;
        }
        // As `start_block` and `Laces::take` for one frame with no
        // BlockDuration: the DefaultDuration in TimestampScale ticks.
        let duration = t.default_duration / self.scale.max(1);
        // A Cluster Timestamp past i64 (or a sum past it) is left to the
        // general path.
        let abs = i64::try_from(cluster_ts)
            .ok()?
            .checked_add(i64::from(i16::from_be_bytes([t0, t1])))?;
        let pts = (abs >= 0).then(|| abs.saturating_sub(t.codec_delay));
        let mut keyframe = flags & KEYFRAME_BIT != 0 || t.intra_only;
        if matches!(t.codec, Codec::Vp8 | Codec::Vp9) {
            // VP8 and VP9 take the flag from the frame's first bytes, which
            // the window holds (at least 3 of them, or the whole frame).
            let first = h.get(5 + size_len..)?;
            let first = first.get(..first.len().min(frame as usize))?;
            keyframe = bitstream_key(t.codec, first).unwrap_or(keyframe);
        }
        let dts = if t.reorders { t.dts_for(pts) } else { pts };
        self.pos = end;
        #[cfg(test)]
        switch::TAKEN.with(|n| n.set(n.get() + 1));
        Some(Emit {
            track: ti,
            offset: data + 4,
            size: frame,
            pts,
            dts,
            duration,
            keyframe,
        })
    }
}

/// The packet [`MkvDemuxer::fast_block`] decided: the frame borrowed from
/// the source, from a slice with the next 16 bytes kept in `head`.
///
/// Errors: those of [`Source::bytes_and_next`] (none for a slice: the frame lies
/// inside the Cluster, inside the input).
#[inline(always)]
pub(super) fn packet<'s, S: Source>(src: &'s mut S, head: &mut Head, e: Emit) -> Result<Packet<'s>> {
    let (data, after) = src.bytes_and_next::<WINDOW>(e.offset, e.size as usize)?;
    if let Some(bytes) = after {
        *head = Head {
            at: e.offset + u64::from(e.size),
            bytes,
        };
    }
    Ok(Packet {
        track: e.track,
        pts: e.pts,
        dts: e.dts,
        duration: (e.duration != 0).then_some(e.duration),
        flags: PacketFlags::keyframe(e.keyframe),
        pos: Some(e.offset),
        contiguous: true,
        data,
    })
}

/// Test-only switches (per thread, so tests may run in parallel).
#[cfg(test)]
pub(super) mod switch {
    extern crate std;
    std::thread_local! {
        /// The general path reads every Block.
        pub(in super::super) static DISABLED: core::cell::Cell<bool> = const { core::cell::Cell::new(false) };
        /// Count of the packets the fast path decided.
        pub(in super::super) static TAKEN: core::cell::Cell<u64> = const { core::cell::Cell::new(0) };
    }
}
