//! TS packets (ISO/IEC 13818-1 §2.4.3.2): the 4-byte header and the length
//! of the adaptation field (§2.4.3.4) that comes before the payload; the
//! packet size and the first packet; resynchronisation after junk.
//!
//! Every TS packet passes through [`TsDemuxer::read_packet`]: it reads the
//! header and the adaptation_field_length as one 5-byte array and keeps no
//! other state.

use super::demuxer::TsDemuxer;
use crate::error::Result;
use crate::source::Source;

/// Sync byte (§2.4.3.2).
pub(super) const SYNC: u8 = 0x47;
/// TS packets in a row that must carry the sync byte to accept a packet size.
pub(super) const SYNC_RUN: u64 = 5;
/// Bytes of a TS packet from its sync byte (§2.4.3.1); 192-byte M2TS
/// packets put 4 bytes before it, 204-byte packets 16 after it.
pub(super) const TS_PACKET: u64 = 188;
/// The packet sizes tried, with the bytes before the sync byte in each:
/// 188-byte TS, 192-byte M2TS (a 4-byte timecode first), 204-byte TS (16
/// bytes of Reed-Solomon parity last).
const SIZES: [(u64, u64); 3] = [(188, 0), (192, 4), (204, 0)];
/// TS packets in a row that the detection wants to see carry the sync byte.
const DETECT_RUN: usize = 3;
/// Bytes read per call while scanning for a sync byte.
const SCAN_BLOCK: usize = 256;

/// One TS packet's header facts (§2.4.3.2, §2.4.3.4).
#[derive(Debug, Clone, Copy)]
pub(super) struct TsPacket {
    pub(super) pid: u16,
    /// payload_unit_start_indicator.
    pub(super) pusi: bool,
    /// continuity_counter.
    pub(super) cc: u8,
    pub(super) has_payload: bool,
    /// Payload offset and length.
    pub(super) payload: u64,
    pub(super) payload_len: u64,
}

impl TsDemuxer {
    /// The TS packet at `at`: `None` when it does not start with the sync
    /// byte. Errors: the input ends inside its header.
    #[inline]
    pub(super) fn read_packet<S: Source>(&self, src: &mut S, at: u64) -> Result<Option<TsPacket>> {
        read_ts_packet(src, at, self.prefix)
    }

    /// Whether a resync to `n` is confirmed by `SYNC_RUN` whole packets
    /// before the end of the input (`len`), not only by the end itself.
    pub(super) fn confirmed(&self, n: u64, len: u64) -> bool {
        n.saturating_add(self.prefix)
            .saturating_add(SYNC_RUN * self.packet_size)
            <= len
    }

    /// Finds the next offset at or after `from` where `SYNC_RUN` packets in a
    /// row carry the sync byte, scanning at most `limit` bytes.
    pub(super) fn resync<S: Source>(&self, src: &mut S, from: u64, limit: u64) -> Result<Option<u64>> {
        resync_from(src, from, limit, self.prefix, self.packet_size)
    }
}

/// The TS packet at `at` (`prefix` bytes before its sync byte): `None` when
/// it does not start with the sync byte. Errors: the input ends inside its
/// header.
#[inline]
pub(super) fn read_ts_packet<S: Source>(src: &mut S, at: u64, prefix: u64) -> Result<Option<TsPacket>> {
    // sync_byte, flags and PID, scrambling/adaptation/continuity, then
    // adaptation_field_length (read whether or not there is one).
    let h: [u8; 5] = src.array(at + prefix)?;
    if h[0] != SYNC {
        return Ok(None);
    }
    let pid = u16::from_be_bytes([h[1] & 0x1F, h[2]]);
    let pusi = h[1] & 0x40 != 0;
    let afc = (h[3] >> 4) & 3;
    let cc = h[3] & 0x0F;
    let mut payload = at + prefix + 4;
    if afc & 2 != 0 {
        payload += 1 + h[4] as u64;
    }
    let end = at + prefix + TS_PACKET;
    let has_payload = afc & 1 != 0 && payload < end;
    Ok(Some(TsPacket {
        pid,
        pusi,
        cc,
        has_payload,
        payload,
        payload_len: end.saturating_sub(payload),
    }))
}

/// The next offset at or after `from` where `SYNC_RUN` packets of
/// `packet_size` bytes (`prefix` before each sync byte) in a row carry the
/// sync byte, scanning at most `limit` bytes.
pub(super) fn resync_from<S: Source>(
    src: &mut S,
    from: u64,
    limit: u64,
    prefix: u64,
    packet_size: u64,
) -> Result<Option<u64>> {
    let len = src.len();
    let stop = from.saturating_add(limit).min(len);
    let mut at = from;
    let mut buf = [0u8; SCAN_BLOCK];
    while at < stop {
        let n = src.read_at(at, &mut buf)?;
        if n == 0 {
            break;
        }
        for (i, &b) in buf.iter().take(n).enumerate() {
            if b != SYNC {
                continue;
            }
            let cand = (at + i as u64).saturating_sub(prefix);
            if at + i as u64 >= prefix && sync_run(src, cand + prefix, packet_size)? {
                return Ok(Some(cand));
            }
        }
        at += n as u64;
    }
    Ok(None)
}

/// Whether `SYNC_RUN` packets of `size` bytes from `at` (a sync byte) all
/// carry the sync byte, or the input ends first after at least two.
fn sync_run<S: Source>(src: &mut S, at: u64, size: u64) -> Result<bool> {
    let len = src.len();
    for k in 0..SYNC_RUN {
        let p = at + k * size;
        if p >= len {
            return Ok(k >= 2 || (k >= 1 && at + size >= len));
        }
        let b: [u8; 1] = src.array(p)?;
        if b[0] != SYNC {
            return Ok(false);
        }
    }
    Ok(true)
}

/// Where the first TS packet starts and how it is framed.
#[derive(Debug, Clone, Copy)]
pub(super) struct Start {
    /// Bytes per packet: 188, 192 or 204.
    pub(super) packet_size: u64,
    /// Bytes before the sync byte in each packet (4 for M2TS).
    pub(super) prefix: u64,
    /// Offset of the first packet.
    pub(super) first: u64,
    /// `SYNC_RUN` packets confirm it, not only the end of the input.
    pub(super) confirmed: bool,
}

/// Detects the packet size and the first packet within `limit` bytes.
pub(super) fn find_start<S: Source>(src: &mut S, limit: u64) -> Result<Option<Start>> {
    let len = src.len();
    let stop = limit.min(len);
    let mut buf = [0u8; SCAN_BLOCK];
    let mut at = 0u64;
    while at < stop {
        let n = src.read_at(at, &mut buf)?;
        if n == 0 {
            break;
        }
        for (i, &b) in buf.iter().take(n).enumerate() {
            if b != SYNC {
                continue;
            }
            let s = at + i as u64;
            for (size, prefix) in SIZES {
                if s >= prefix && sync_run(src, s, size)? {
                    return Ok(Some(Start {
                        packet_size: size,
                        prefix,
                        first: s - prefix,
                        confirmed: s.saturating_add((SYNC_RUN - 1) * size) < len,
                    }));
                }
            }
        }
        at += n as u64;
    }
    Ok(None)
}

/// Whether the first bytes look like a transport stream (for detection).
///
/// Three packets in a row must carry the sync byte, starting at the first
/// byte or, after leading junk, anywhere in `head`; or `head` is a whole
/// input of two 188-byte packets, the first a PAT's start (PID 0, payload
/// unit start): the tables a writer puts first and nothing after them, as
/// a recording stopped before its first frame leaves it (ffprobe reads
/// such a file as TS too).
pub(crate) fn looks_like_ts(head: &[u8]) -> bool {
    if head.len() == 2 * 188 && head.first() == Some(&SYNC) && head.get(188) == Some(&SYNC) {
        let pat_start = head.get(1).is_some_and(|b| b & 0x5F == 0x40) && head.get(2) == Some(&0);
        if pat_start {
            return true;
        }
    }
    for start in 0..head.len() {
        if head.get(start) != Some(&SYNC) {
            continue;
        }
        for (size, prefix) in SIZES {
            let (size, prefix) = (size as usize, prefix as usize);
            if start < prefix {
                continue;
            }
            let ok = (0..DETECT_RUN).all(|k| head.get(start + k * size) == Some(&SYNC));
            if ok {
                return true;
            }
        }
    }
    false
}
