//! The TS demuxer's state and reading loop: per elementary PID, where the
//! PES in progress started and how many TS packets and bytes it has; a PES
//! is completed by the next payload_unit_start_indicator on its PID, its
//! PES_packet_length, or the end of the input (ISO/IEC 13818-1 §2.4.3.2,
//! §2.4.3.6). Also seeking, by bisection on PES time stamps.

use super::packet::{TsPacket, TS_PACKET};
use super::pes::{emit, emit_pieces, Done, Ready, PES_FIXED};
use super::walk::TsWalk;
use crate::error::{Error, ErrorKind, Result};
use crate::format::mpeg::pes::{parse_pes_header, PesStart};
use crate::format::mpeg::split::{self, Cut, Frame, Split};
use crate::format::traits::{Context, FormatDemuxer};
use crate::limits::MAX_TRACKS;
use crate::pieces::PacketPieces;
use crate::source::Source;
use crate::types::Packet;
use zerocopy::FromBytes;

/// Most bisection steps of a seek: 64 halvings narrow any range of TS
/// packets in a `u64` input to one.
const MAX_SEEK_STEPS: u32 = 64;
/// Bytes of a PES start read for the H.265 zero-byte count: the PES header
/// and the zeros of the first start code after it.
const HEVC_HEAD: usize = 40;
/// Bytes of a PES start read for its time stamps (the fixed header, the
/// flags and header length, PTS and DTS; §2.4.3.7).
const PTS_HEAD: usize = 19;
/// Most zero bytes before the first start code that H.265 gives to the
/// access unit before (those of a 4-byte start code, and stuffing; the
/// zeros appended are taken from a 4-byte buffer).
const MAX_LEAD_ZEROS: usize = 4;
/// continuity_counter before the first TS packet of a PID.
const NO_CC: u8 = 0xFF;

/// Per elementary-stream PID state.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(super) struct Es {
    pub(super) pid: u16,
    pub(super) track: usize,
    /// Offset of the TS packet that started the PES in progress.
    pub(super) start: Option<u64>,
    /// TS packets with payload in the PES so far.
    pub(super) pieces: u32,
    /// Payload bytes so far.
    pub(super) bytes: u32,
    /// 6 + PES_packet_length, or 0 when unbounded.
    pub(super) expected: u32,
    /// Last continuity counter, 0xFF before the first.
    pub(super) cc: u8,
    /// Cutting the PES payloads into codec frames.
    pub(super) sp: Split,
    /// H.265: ffmpeg's parser cuts access units at the 3-byte start code.
    pub(super) hevc: bool,
    /// Zero bytes before the first start code of the PES in progress.
    pub(super) lead: u8,
}

/// Demuxer state for MPEG-TS.
#[derive(Debug, Clone)]
pub struct TsDemuxer {
    pub(super) packet_size: u64,
    /// Bytes before the sync byte in each packet (4 for M2TS).
    pub(super) prefix: u64,
    pub(super) first: u64,
    pub(super) pos: u64,
    pub(super) es: heapless::Vec<Es, MAX_TRACKS>,
    /// PES completed, waiting to be delivered (a new PES starting on the same
    /// PID completes the previous one).
    pub(super) ready: Option<Done>,
    pub(super) flushing: usize,
    pub(super) hdmv: bool,
    /// The PES payload being cut into frames.
    pub(super) cut: Option<Cut>,
    /// Scratch offset past the carry slots of the split tracks.
    pub(super) base: usize,
    /// Reading stopped where the sync was lost: what is in progress there
    /// is cut short.
    pub(super) lost: bool,
    /// The caller of this call takes pieces (`next_packet_pieces`): a PES
    /// of a track not cut into frames is left in its TS packets.
    pub(super) scatter: bool,
    /// The walk over the pieces of the PES last handed out in pieces.
    pub(super) pieces: TsWalk,
    /// The 2^33 wrap reference, from the first PES time stamp of the input
    /// (one for all tracks, as ffmpeg's is one per program).
    #[cfg(feature = "ts-unwrap")]
    pub(super) wrap: Option<crate::format::mpeg::wrap::Wrap>,
}

/// What the reading loop hands out next.
enum Next {
    /// A frame cut from a PES payload.
    Frame(Frame),
    /// A whole PES payload.
    Pes(Ready),
}

/// What the end of the input gives next.
enum Drain {
    /// A PES in progress was completed: deliver it.
    Again,
    /// A frame left in a carry slot.
    Frame(Frame),
    /// Nothing more.
    End,
}

impl Es {
    /// A stream of `pid` on `track`, before its first TS packet.
    pub(super) fn new(pid: u16, track: usize) -> Self {
        Es {
            pid,
            track,
            cc: NO_CC,
            ..Es::default()
        }
    }

    /// Follows the continuity_counter of a TS packet with payload
    /// (§2.4.3.3): `false` for a duplicate packet, to be ignored as ffmpeg
    /// does (`ts.duplicate-packet`); other gaps are reported
    /// (`ts.cc-discontinuity`).
    ///
    /// On the per-packet path, and not generic: `#[inline]` lets it inline
    /// into the reading loop across crates, as it did as part of it.
    #[inline]
    pub(super) fn continuity(&mut self, tp: &TsPacket, ctx: &mut Context, at: u64) -> bool {
        if self.cc != NO_CC {
            if tp.cc == self.cc && !tp.pusi {
                ctx.diags.report("ts.duplicate-packet", at);
                return false;
            }
            if tp.cc != (self.cc + 1) & 0x0F {
                ctx.diags.report("ts.cc-discontinuity", at);
            }
        }
        self.cc = tp.cc;
        true
    }

    /// Adds a TS packet that continues the PES in progress (stream `i`,
    /// the packet at `at`, the next at `end`); returns the PES when its
    /// PES_packet_length is reached.
    ///
    /// Errors: `LimitExceeded` past `max_packet` bytes.
    ///
    /// On the per-packet path: `#[inline]` as [`Es::continuity`].
    #[inline]
    pub(super) fn extend(
        &mut self,
        i: usize,
        tp: &TsPacket,
        at: u64,
        end: u64,
        max_packet: u32,
    ) -> Result<Option<Done>> {
        if self.start.is_none() {
            return Ok(None);
        }
        self.pieces = self.pieces.saturating_add(1);
        self.bytes = self.bytes.saturating_add(tp.payload_len as u32);
        if self.bytes as u64 > max_packet as u64 {
            return Err(Error::limit(
                at,
                &"mpegts PES: larger than Limits::max_packet (ISO/IEC 13818-1 §2.4.3.6)",
            ));
        }
        if self.expected > 0 && self.bytes >= self.expected {
            let start = self.start.take().unwrap_or(at);
            return Ok(Some(Done {
                es: i,
                start,
                end,
                pieces: self.pieces,
                bytes: self.bytes,
                truncated: false,
                skip: self.lead,
                extra: 0,
            }));
        }
        Ok(None)
    }
}

/// 6 + PES_packet_length from the fixed PES header at the start of a
/// payload (§2.4.3.7), or 0 when it is unbounded or the payload does not
/// start with one.
fn pes_expected<S: Source>(src: &mut S, tp: &TsPacket) -> Result<u32> {
    let b: [u8; PES_FIXED] = if tp.payload_len >= PES_FIXED as u64 {
        src.array(tp.payload)?
    } else {
        [0; PES_FIXED]
    };
    let Ok(h) = PesStart::ref_from_bytes(&b) else {
        return Ok(0);
    };
    let l = h.packet_length.get() as u32;
    Ok(if h.is_start() && l > 0 { l + PES_FIXED as u32 } else { 0 })
}

/// H.265 (ffmpeg 5.1's parser): the zero bytes before the first 3-byte
/// start code of a PES payload that end the access unit before, at most
/// [`MAX_LEAD_ZEROS`].
fn hevc_lead_zeros<S: Source>(src: &mut S, tp: &TsPacket) -> Result<u8> {
    let mut b = [0u8; HEVC_HEAD];
    let n = (tp.payload_len as usize).min(b.len());
    let b = b.get_mut(..n).unwrap_or(&mut []);
    src.read_exact_at(tp.payload, b)?;
    if let Some(es) = parse_pes_header(b).and_then(|h| b.get(h.header_len..)) {
        let z = es.iter().take_while(|&&x| x == 0).count();
        if z >= 3 && es.get(z) == Some(&1) {
            return Ok((z - 2).min(MAX_LEAD_ZEROS) as u8);
        }
    }
    Ok(0)
}

impl TsDemuxer {
    /// The state before any table is read: TS packets of `packet_size`
    /// bytes (`prefix` of them before the sync byte), the first at `first`.
    pub(super) fn fresh(packet_size: u64, prefix: u64, first: u64) -> Self {
        TsDemuxer {
            packet_size,
            prefix,
            first,
            pos: first,
            es: heapless::Vec::new(),
            ready: None,
            flushing: 0,
            hdmv: packet_size == 192,
            cut: None,
            base: 0,
            lost: false,
            scatter: false,
            pieces: TsWalk::default(),
            #[cfg(feature = "ts-unwrap")]
            wrap: None,
        }
    }

    /// Unwraps the time stamps of a PES header (see
    /// [`crate::format::mpeg::wrap`]); its DTS, else its PTS, sets the
    /// reference when none is set yet.
    #[cfg(feature = "ts-unwrap")]
    pub(super) fn unwrap_pes(&mut self, h: &mut crate::format::mpeg::pes::PesHeader) {
        let _ = crate::format::mpeg::wrap::unwrap_time(&mut self.wrap, h.dts.or(h.pts));
        if let Some(w) = self.wrap {
            h.pts = h.pts.map(|t| w.apply(t));
            h.dts = h.dts.map(|t| w.apply(t));
        }
    }

    /// Reads the TS packet at `self.pos` and follows its PES; returns a
    /// PES to hand out now (the older of two that this packet completes).
    fn read_next<S: Source>(&mut self, src: &mut S, ctx: &mut Context, len: u64) -> Result<Option<Ready>> {
        let at = self.pos;
        let Some(tp) = self.read_packet(src, at)? else {
            self.resync_or_stop(src, ctx, at, len)?;
            return Ok(None);
        };
        self.pos = at + self.packet_size;
        let Some(i) = self.es.iter().position(|e| e.pid == tp.pid) else {
            return Ok(None);
        };
        let Some(e) = self.es.get_mut(i) else { return Ok(None) };
        if !tp.has_payload || !e.continuity(&tp, ctx, at) {
            return Ok(None);
        }
        if tp.pusi {
            return self.start_pes(src, ctx, i, tp, at);
        }
        if let Some(done) = e.extend(i, &tp, at, self.pos, ctx.limits.max_packet)? {
            self.ready = Some(done);
        }
        Ok(None)
    }

    /// No sync byte at `at`: moves to the next sync that five packets in a
    /// row confirm (`ts.resync`). Fewer, cut short by the end of the input,
    /// do not (a longer input could reject them): reading stops there
    /// (`ts.sync-lost`) and the PES in progress end there, flagged
    /// truncated.
    fn resync_or_stop<S: Source>(&mut self, src: &mut S, ctx: &mut Context, at: u64, len: u64) -> Result<()> {
        match self.resync(src, at + 1, ctx.limits.resync_bytes)? {
            Some(n) if self.confirmed(n, len) => {
                ctx.diags.report("ts.resync", at);
                self.pos = n;
            }
            _ => {
                ctx.diags.report("ts.sync-lost", at);
                self.pos = len;
                self.lost = true;
            }
        }
        Ok(())
    }

    /// A TS packet with payload_unit_start_indicator on stream `i`: the PES
    /// in progress there is complete, and a new one starts. Returns the
    /// older PES to hand out now when the new one is complete too (that
    /// one waits in `ready`).
    fn start_pes<S: Source>(
        &mut self,
        src: &mut S,
        ctx: &mut Context,
        i: usize,
        tp: TsPacket,
        at: u64,
    ) -> Result<Option<Ready>> {
        let Some(e) = self.es.get_mut(i) else { return Ok(None) };
        let zeros = if e.hevc { hevc_lead_zeros(src, &tp)? } else { 0 };
        let previous = e.start.take().map(|start| Done {
            es: i,
            start,
            end: at,
            pieces: e.pieces,
            bytes: e.bytes,
            truncated: false,
            skip: e.lead,
            extra: zeros,
        });
        // The first access unit keeps its leading zeros.
        e.lead = if previous.is_some() { zeros } else { 0 };
        e.start = Some(at);
        e.pieces = 1;
        e.bytes = tp.payload_len as u32;
        // 0 first: it stays so when the read below fails.
        e.expected = 0;
        e.expected = pes_expected(src, &tp)?;
        let complete = e.expected > 0 && e.bytes >= e.expected;
        if !complete {
            if let Some(p) = previous {
                self.ready = Some(p);
            }
            return Ok(None);
        }
        let done = Done {
            es: i,
            start: at,
            end: self.pos,
            pieces: 1,
            bytes: e.bytes,
            truncated: false,
            skip: e.lead,
            extra: 0,
        };
        e.start = None;
        self.ready = Some(done);
        match previous {
            // Deliver the older one first; this one next.
            Some(p) => self.deliver(src, ctx, p),
            None => Ok(None),
        }
    }

    /// At the end of the input: the PES in progress, then the frames left
    /// in the carry slots.
    fn drain<S: Source>(&mut self, src: &mut S, ctx: &mut Context, len: u64) -> Result<Drain> {
        // A trailing partial TS packet shows the input was cut: the PES in
        // progress are then flushed flagged `truncated` (as are those
        // shorter than their PES_packet_length).
        let cut = self.lost || (len - self.first) % self.packet_size != 0;
        if self.flush_next_pes(len, cut) {
            return Ok(Drain::Again);
        }
        for e in self.es.iter_mut() {
            if let Some(f) = e.sp.flush(src, e.track, cut)? {
                return Ok(Drain::Frame(f));
            }
        }
        if self.pos < len && self.pos + self.prefix < len {
            ctx.diags.report("ts.truncated-packet", self.pos);
        }
        Ok(Drain::End)
    }

    /// Completes the next PES in progress into `ready`, in PID order, split
    /// tracks first (their whole frames come before the cut packets);
    /// whether there was one.
    fn flush_next_pes(&mut self, len: u64, cut: bool) -> bool {
        let n = self.es.len();
        while self.flushing < 2 * n {
            let (i, pass) = (self.flushing % n, self.flushing / n);
            self.flushing += 1;
            let Some(e) = self
                .es
                .get_mut(i)
                .filter(|e| (e.sp.kind == split::Kind::None) == (pass == 1))
            else {
                continue;
            };
            let Some(start) = e.start.take() else { continue };
            if e.pieces > 0 {
                self.ready = Some(Done {
                    es: i,
                    start,
                    end: len,
                    pieces: e.pieces,
                    bytes: e.bytes,
                    truncated: cut || (e.expected > 0 && e.bytes < e.expected),
                    skip: e.lead,
                    extra: 0,
                });
                return true;
            }
        }
        false
    }

    /// The reading loop: the next frame or PES to hand out, or `None` at
    /// the end of the input. `next_packet` has the same loop written out
    /// (see there why).
    fn next_item<S: Source>(&mut self, src: &mut S, ctx: &mut Context) -> Result<Option<Next>> {
        loop {
            if let Some(f) = split::next_frame(src, &mut self.cut, self.es.iter_mut().map(|x| &mut x.sp))? {
                return Ok(Some(Next::Frame(f)));
            }
            if let Some(done) = self.ready.take() {
                if let Some(r) = self.deliver(src, ctx, done)? {
                    return Ok(Some(Next::Pes(r)));
                }
                continue;
            }
            let len = src.len();
            if self.pos + self.prefix + TS_PACKET > len {
                match self.drain(src, ctx, len)? {
                    Drain::Again => continue,
                    Drain::Frame(f) => return Ok(Some(Next::Frame(f))),
                    Drain::End => return Ok(None),
                }
            }
            if src.is_slice() && self.skim(src, ctx, len)? {
                continue;
            }
            if let Some(r) = self.read_next(src, ctx, len)? {
                return Ok(Some(Next::Pes(r)));
            }
        }
    }

    /// The PTS of the first PES start of `pid` at or after `from`, scanning a
    /// bounded window.
    fn pts_after<S: Source>(&self, src: &mut S, ctx: &Context, from: u64, pid: u16) -> Result<Option<i64>> {
        let stop = from.saturating_add(ctx.limits.resync_bytes).min(src.len());
        let mut at = from;
        while at + self.prefix + TS_PACKET <= stop {
            if let Some(tp) = self.read_packet(src, at)? {
                if tp.pid == pid && tp.pusi && tp.has_payload {
                    let mut head = [0u8; PTS_HEAD];
                    let n = (tp.payload_len as usize).min(PTS_HEAD);
                    src.read_exact_at(tp.payload, head.get_mut(..n).unwrap_or(&mut []))?;
                    if let Some(h) = parse_pes_header(head.get(..n).unwrap_or(&[])) {
                        #[cfg(feature = "ts-unwrap")]
                        if let Some(w) = self.wrap {
                            return Ok(h.dts.or(h.pts).map(|t| w.apply(t)));
                        }
                        return Ok(h.dts.or(h.pts));
                    }
                }
            }
            at += self.packet_size;
        }
        Ok(None)
    }
}

impl FormatDemuxer for TsDemuxer {
    fn open<S: Source>(src: &mut S, ctx: &mut Context) -> Result<Self> {
        Self::probe(src, ctx)
    }

    #[cfg(feature = "programs")]
    fn next_program<'c, S: Source>(
        &mut self,
        src: &mut S,
        ctx: &Context,
        cur: &'c mut crate::programs::ProgramCursor,
    ) -> Result<Option<crate::programs::Program<'c>>> {
        self.program(src, ctx, cur)
    }

    #[cfg(feature = "programs")]
    fn program_count<S: Source>(&mut self, src: &mut S, ctx: &Context) -> Result<usize> {
        self.count_programs(src, ctx)
    }

    // The loop of `next_item`, written out: handing the frame or PES back
    // through `Next` costs 850 bytes of firmware flash on thumbv7em (the
    // embedded budget), returning the packet from inside the loop does not.
    fn next_packet<'s, S: Source>(&mut self, src: &'s mut S, ctx: &mut Context) -> Result<Option<Packet<'s>>> {
        self.scatter = false;
        loop {
            if let Some(f) = split::next_frame(src, &mut self.cut, self.es.iter_mut().map(|x| &mut x.sp))? {
                return f.packet(src, self.base).map(Some);
            }
            if let Some(done) = self.ready.take() {
                if let Some(r) = self.deliver(src, ctx, done)? {
                    return emit(src, r, self.base).map(Some);
                }
                continue;
            }
            let len = src.len();
            if self.pos + self.prefix + TS_PACKET > len {
                match self.drain(src, ctx, len)? {
                    Drain::Again => continue,
                    Drain::Frame(f) => return f.packet(src, self.base).map(Some),
                    Drain::End => return Ok(None),
                }
            }
            if src.is_slice() && self.skim(src, ctx, len)? {
                continue;
            }
            if let Some(r) = self.read_next(src, ctx, len)? {
                return emit(src, r, self.base).map(Some);
            }
        }
    }

    fn next_packet_pieces<'s, S: Source>(
        &'s mut self,
        src: &'s mut S,
        ctx: &mut Context,
    ) -> Result<Option<PacketPieces<'s, S>>> {
        self.scatter = true;
        match self.next_item(src, ctx)? {
            Some(Next::Frame(f)) => f.packet(src, self.base).map(|p| Some(PacketPieces::whole(p))),
            Some(Next::Pes(r)) if r.scattered => emit_pieces(src, &mut self.pieces, r, self.base).map(Some),
            Some(Next::Pes(r)) => emit(src, r, self.base).map(|p| Some(PacketPieces::whole(p))),
            None => Ok(None),
        }
    }

    fn seek<S: Source>(&mut self, src: &mut S, ctx: &mut Context, track: usize, ts: i64) -> Result<()> {
        // Bisection on byte offset by the PTS of the track's PES starts, with
        // bounded reads; then read on from the chosen packet.
        let Some(ei) = self.es.iter().position(|e| e.track == track) else {
            return Err(Error::new(
                ErrorKind::InvalidArgument,
                0,
                &"mpegts seek: no such track (no PMT stream entry, ISO/IEC 13818-1 §2.4.4.8)",
            ));
        };
        let pid = self.es.get(ei).map(|e| e.pid).unwrap_or(0);
        let count = src.len().saturating_sub(self.first) / self.packet_size;
        let (mut lo, mut hi) = (0u64, count);
        let mut steps = 0;
        while hi > lo + 1 && steps < MAX_SEEK_STEPS {
            steps += 1;
            let mid = lo + (hi - lo) / 2;
            match self.pts_after(src, ctx, self.first + mid * self.packet_size, pid)? {
                Some(p) if p <= ts => lo = mid,
                _ => hi = mid,
            }
        }
        self.pos = self.first + lo * self.packet_size;
        self.ready = None;
        self.flushing = 0;
        self.cut = None;
        self.lost = false;
        for e in self.es.iter_mut() {
            e.sp.reset();
            e.start = None;
            e.pieces = 0;
            e.bytes = 0;
            e.cc = NO_CC;
            e.lead = 0;
        }
        Ok(())
    }
}
