//! Seeking: the Simple Index (ASF Specification rev 1.20 §6.1) and Index
//! Object (§6.2) after the data object, a binary search over data packet
//! send times (§5.2.2) when there is neither, then a walk over payload
//! headers to the exact media object.

use super::data_packet::{load_packet, read_payload, Cursor, FRAME_HEADER_SIZE};
use super::demuxer::AsfDemuxer;
use super::guids;
use super::layout::{IndexFixed, ObjectHeader, SimpleIndexFixed, SIMPLE_INDEX_ENTRY, SIMPLE_INDEX_FIXED};
use super::reassembly::Pending;
use crate::error::Result;
use crate::format::traits::Context;
use crate::source::Source;
use crate::types::ByteRange;

/// How far before the target (ms) the first search for a start packet
/// begins: send times run ahead of presentation times by up to the preroll
/// and the encoder's buffering, which a few seconds cover.
const SEEK_MARGIN_MS: i64 = 10_000;
/// Times the margin is widened (eightfold each time) when no object of the
/// track is found at or before the target: 8 widenings take it from 10 s
/// to about five years; then the search starts from the first packet.
const SEEK_WIDENINGS: u32 = 8;
/// Steps of the binary search over send times: 64 halve any `u64` packet
/// count to one packet.
const MAX_BISECTION_STEPS: u32 = 64;
/// Data packets one walk for the target object reads before it gives up
/// with the best object so far: bounds a seek over a huge or corrupt data
/// object (10 million packets is well past any real file between two
/// index entries).
const MAX_SEEK_PACKETS: u64 = 10_000_000;
/// Sub-payloads of one compressed payload counted when a seek picks one:
/// a payload has at most 65,535 bytes and each sub-payload at least one, but
/// ffmpeg's packets carry far fewer; a larger index is clamped to the last
/// counted.
const MAX_SUB_PAYLOADS: i64 = 256;
/// Objects after the data object looked at for the index objects: the
/// Simple Index and Index Objects come first there in practice; the bound
/// keeps a file of many small trailing objects from being walked whole.
const MAX_TRAILING_OBJECTS: usize = 16;

/// Where a seek landed: the payload (counted from 1 in its data packet)
/// and, for a compressed payload, the sub-payload of the target object.
/// Earlier payloads of the stream in that packet are skipped.
#[derive(Debug, Clone, Copy)]
pub(super) struct SeekFilter {
    pub slot: usize,
    pub packet: u64,
    pub payload: u16,
    pub sub: u16,
}

impl AsfDemuxer {
    /// Lands on the media object of `track` that holds `ts` (audio) or on
    /// the last key object at or before `ts` (video): see
    /// [`crate::format::traits::FormatDemuxer::seek`] for `AsfDemuxer`.
    pub(super) fn seek_to<S: Source>(&mut self, src: &mut S, ctx: &mut Context, track: usize, ts: i64) -> Result<()> {
        let _ = ctx;
        self.next_picture = self.pictures.len();
        self.truncated = false;
        self.seek_filter = None;
        let last = self.cur.last_time;
        self.cur = Cursor {
            last_time: last,
            next_packet: self.lay.data_start,
            ..Cursor::default()
        };
        let slot = self.streams.iter().position(|s| s.track == track);
        for s in self.streams.iter_mut() {
            s.pending = Pending::default();
            s.skip_to_key = s.video && Some(s.track) != Some(track);
        }
        let Some(slot) = slot.filter(|_| ts > 0) else {
            // Seeking to the start replays every packet.
            for s in self.streams.iter_mut() {
                s.skip_to_key = false;
            }
            return Ok(());
        };
        let (number, key_only) = match self.streams.get(slot) {
            Some(s) => (s.number, s.video),
            None => return Ok(()),
        };
        let mut margin = SEEK_MARGIN_MS;
        let mut widenings = 0;
        loop {
            widenings += 1;
            let start = self.packet_before(src, ts.saturating_sub(margin))?;
            let found = self.find_object(src, start, number, key_only, ts)?;
            if let Some(t) = found {
                self.cur.next_packet = t.packet;
                self.seek_filter = Some(SeekFilter { slot, ..t });
                return Ok(());
            }
            if start <= self.lay.data_start || widenings > SEEK_WIDENINGS {
                // Nothing at or before `ts`: start from the beginning.
                self.cur.next_packet = self.lay.data_start;
                if let Some(s) = self.streams.get_mut(slot) {
                    s.skip_to_key = s.video;
                }
                return Ok(());
            }
            margin = margin.saturating_mul(8);
        }
    }

    /// The offset of a data packet whose objects start at or before
    /// presentation time `ts` (ms, preroll removed): from the simple index
    /// when there is one, else by a binary search over send times.
    fn packet_before<S: Source>(&self, src: &mut S, ts: i64) -> Result<u64> {
        let start = self.lay.data_start;
        if ts <= 0 || self.lay.packet_size == 0 {
            return Ok(start);
        }
        let psize = self.lay.packet_size as u64;
        let target = ts.saturating_add(self.lay.preroll).max(0) as u64;
        let packets = self.lay.data_end.min(src.len()).saturating_sub(start) / psize;
        if let Some(ix) = self.simple_index {
            if let Some(p) = self.simple_index_packet(src, ix, target, packets)? {
                return Ok(p);
            }
        }
        if let Some(ix) = self.index {
            if let Some(p) = self.index_object_packet(src, ix, ts)? {
                return Ok(p);
            }
        }
        // Send times (§5.2.2) precede presentation times, so the last packet
        // sent at or before the target holds no object starting after it.
        let (mut lo, mut hi) = (0u64, packets);
        let mut steps = 0;
        while lo + 1 < hi && steps < MAX_BISECTION_STEPS {
            steps += 1;
            let mid = lo + (hi - lo) / 2;
            let mut probe = Cursor {
                next_packet: start + mid * psize,
                ..Cursor::default()
            };
            let t = match load_packet(src, &self.lay, &mut probe) {
                Ok(true) => probe.send_time as u64,
                _ => break,
            };
            if t <= target {
                lo = mid;
            } else {
                hi = mid;
            }
        }
        Ok(start + lo * psize)
    }

    /// The data packet the Simple Index (§6.1) gives for `target` (ms,
    /// preroll included): entries at fixed time intervals, each the number
    /// of the packet holding the key frame to start from.
    fn simple_index_packet<S: Source>(
        &self,
        src: &mut S,
        ix: ByteRange,
        target: u64,
        packets: u64,
    ) -> Result<Option<u64>> {
        let head = src.read::<SimpleIndexFixed>(ix.offset)?;
        let interval = head.interval.get();
        let count =
            (head.entries.get() as u64).min((ix.len as u64).saturating_sub(SIMPLE_INDEX_FIXED) / SIMPLE_INDEX_ENTRY);
        if interval > 0 && count > 0 {
            let i = (target.saturating_mul(10_000) / interval).min(count - 1);
            let e: [u8; 4] = src.array(ix.offset + SIMPLE_INDEX_FIXED + i * SIMPLE_INDEX_ENTRY)?;
            let n = u32::from_le_bytes(e) as u64;
            if n < packets.max(1) {
                return Ok(Some(self.lay.data_start + n * self.lay.packet_size as u64));
            }
        }
        Ok(None)
    }

    /// The data packet the Index Object (§6.2) gives for time `ts` (ms):
    /// entry `ts / interval` of the first index block, for the first
    /// specifier, relative to the first data packet.
    pub(super) fn index_object_packet<S: Source>(&self, src: &mut S, ix: ByteRange, ts: i64) -> Result<Option<u64>> {
        let h = src.read::<IndexFixed>(ix.offset)?;
        let interval = h.interval.get() as u64;
        let specs = h.specifiers.get() as u64;
        let blocks = h.blocks.get();
        if interval == 0 || specs == 0 || blocks == 0 {
            return Ok(None);
        }
        let block = ix.offset + 10 + specs * 4;
        let end = ix.offset + ix.len as u64;
        let count = u32::from_le_bytes(src.array(block)?) as u64;
        let entries = block + 4 + specs * 8;
        if count == 0 || entries > end {
            return Ok(None);
        }
        let i = (ts.max(0) as u64 / interval).min(count - 1);
        let at = entries + i * specs * 4;
        if at + 4 > end {
            return Ok(None);
        }
        let base = u64::from_le_bytes(src.array(block + 4)?);
        let off = u32::from_le_bytes(src.array(at)?) as u64;
        let pos = self.lay.data_start.saturating_add(base).saturating_add(off);
        let psize = self.lay.packet_size.max(1) as u64;
        let pos = self.lay.data_start + (pos - self.lay.data_start) / psize * psize;
        if pos >= self.lay.data_end.min(src.len()) {
            return Ok(None);
        }
        Ok(Some(pos))
    }

    /// Walks payload headers from the packet at `from` for the last object
    /// of stream `number` (a key object when `key_only`) whose presentation
    /// time is at or before `ts`. Stops at the first later object.
    fn find_object<S: Source>(
        &self,
        src: &mut S,
        from: u64,
        number: u8,
        key_only: bool,
        ts: i64,
    ) -> Result<Option<SeekFilter>> {
        let mut cur = Cursor {
            next_packet: from,
            ..Cursor::default()
        };
        let mut best = None;
        let mut packets = 0u64;
        loop {
            if !cur.in_packet {
                packets += 1;
                let p = cur.next_packet;
                if p >= self.lay.data_end || p >= src.len() || packets > MAX_SEEK_PACKETS {
                    return Ok(best);
                }
                match load_packet(src, &self.lay, &mut cur) {
                    Err(e) if e.is_truncation() => return Ok(best),
                    r => {
                        r?;
                    }
                }
                if cur.next_packet <= p {
                    return Ok(best);
                }
                continue;
            }
            if cur.size_left < FRAME_HEADER_SIZE || cur.segments < 1 {
                cur.in_packet = false;
                continue;
            }
            let p = match read_payload(src, &mut cur) {
                Err(e) if e.is_truncation() => return Ok(best),
                r => r?,
            };
            let Some(p) = p else {
                cur.in_packet = false;
                continue;
            };
            cur.at = p.data.saturating_add(p.frag_size as u64);
            cur.size_left -= p.frag_size as i64;
            if p.stream != number {
                continue;
            }
            let here = SeekFilter {
                slot: 0,
                packet: cur.packet,
                payload: cur.payload,
                sub: 0,
            };
            if let Some((start, delta)) = p.compressed {
                // Sub-payload k is presented at start + k * delta.
                let (Some(first), true) = ((start as i64).checked_sub(self.lay.preroll), p.key || !key_only) else {
                    continue;
                };
                if first > ts {
                    return Ok(best);
                }
                let k = if delta > 0 {
                    ts.saturating_sub(first) / delta as i64
                } else {
                    0
                };
                let count = sub_payloads(src, p.data, p.data.saturating_add(p.frag_size as u64))?;
                let k = k.min(count - 1).max(0);
                best = Some(SeekFilter { sub: k as u16, ..here });
                continue;
            }
            if p.frag_off != 0 {
                continue;
            }
            let Some(time) = p.time else { continue };
            if time as i64 - self.lay.preroll > ts {
                return Ok(best);
            }
            if p.key || !key_only {
                best = Some(here);
            }
        }
    }

    /// Looks for a Simple Index Object (§6.1) and an Index Object (§6.2)
    /// after the data object.
    pub(super) fn find_index<S: Source>(&mut self, src: &mut S, ctx: &mut Context) {
        if self.lay.data_end == u64::MAX {
            return;
        }
        let mut at = self.lay.data_end;
        for _ in 0..MAX_TRAILING_OBJECTS {
            let Ok(h) = src.read::<ObjectHeader>(at) else { return };
            let g = h.guid;
            let size = h.size.get();
            if size < 24 || at.saturating_add(size) > src.len() {
                if g == guids::SIMPLE_INDEX || g == guids::INDEX {
                    ctx.diags.report("asf.bad-index", at);
                }
                return;
            }
            if g == guids::INDEX && size >= 34 && self.index.is_none() {
                self.index = Some(ByteRange {
                    offset: at + 24,
                    len: (size - 24).min(u32::MAX as u64) as u32,
                });
            }
            if g == guids::SIMPLE_INDEX && size >= 56 && self.simple_index.is_none() {
                self.simple_index = Some(ByteRange {
                    offset: at + 24,
                    len: (size - 24).min(u32::MAX as u64) as u32,
                });
            }
            at += size;
        }
    }
}

/// Counts the sub-payloads (§5.2.3.3: a length BYTE, then the data) of a
/// compressed payload at `data..end`, at most [`MAX_SUB_PAYLOADS`].
fn sub_payloads<S: Source>(src: &mut S, data: u64, end: u64) -> Result<i64> {
    let mut count = 0i64;
    let mut at = data;
    while at < end.min(src.len()) && count < MAX_SUB_PAYLOADS {
        let [len]: [u8; 1] = src.array(at)?;
        at = at.saturating_add(1 + len as u64);
        count += 1;
    }
    Ok(count)
}
