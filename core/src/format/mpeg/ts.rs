//! MPEG transport streams: 188-byte TS, 192-byte M2TS/AVCHD (4-byte
//! timecode before each packet) and 204-byte TS (16 bytes of Reed-Solomon
//! parity after each packet) (ISO/IEC 13818-1 §2.4.3, §2.4.4).
//!
//! * The probe looks for the PAT and every PMT it lists, up to
//!   `Limits::probe_bytes` (`ts.tables-not-found` when they are not there).
//! * A PES packet spans many TS packets. The demuxer keeps, per PID, only
//!   where the PES started and how many TS packets it has; when it ends (the
//!   next payload_unit_start_indicator, or its PES_packet_length reached, or
//!   the end of the input), its payloads are joined into scratch with
//!   `Source::gather`. A PES inside one TS packet is a slice of the input.
//! * Packets are PES payloads with the PES time stamps, except audio, which
//!   is cut into the frames ffmpeg's parsers cut ([`super::split`]), and
//!   H.265, whose access units end before the next 3-byte start code.

use super::pes::{crc32_mpeg2, parse_pes_header};
use super::split::{self, Cut, Split};
use crate::error::{Error, ErrorKind, Result};
use crate::format::traits::{Context, FormatDemuxer};
use crate::limits::MAX_TRACKS;
use crate::source::Source;
use crate::tags::{Tag, TagCursor};
use crate::types::{Codec, Packet, PacketFlags, Rational, Track, TrackKind};

/// Sync byte (§2.4.3.2).
const SYNC: u8 = 0x47;
/// TS packets in a row that must carry the sync byte to accept a packet size.
const SYNC_RUN: u64 = 5;
/// Most PMT PIDs followed.
const MAX_PROGRAMS: usize = 8;
/// Largest PSI section (§2.4.4.2: section_length ≤ 1021, plus 3 header bytes).
const MAX_SECTION: usize = 1024;

/// Per elementary-stream PID state.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
struct Es {
    pid: u16,
    track: usize,
    /// Offset of the TS packet that started the PES in progress.
    start: Option<u64>,
    /// TS packets with payload in the PES so far.
    pieces: u32,
    /// Payload bytes so far.
    bytes: u32,
    /// 6 + PES_packet_length, or 0 when unbounded.
    expected: u32,
    /// Last continuity counter, 0xFF before the first.
    cc: u8,
    /// Cutting the PES payloads into codec frames.
    sp: Split,
    /// H.265: ffmpeg's parser cuts access units at the 3-byte start code.
    hevc: bool,
    /// Zero bytes before the first start code of the PES in progress.
    lead: u8,
}

/// A PES ready to deliver.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
struct Done {
    es: usize,
    start: u64,
    /// Offset just past the last TS packet to search.
    end: u64,
    pieces: u32,
    bytes: u32,
    /// The input ends inside this PES (flushed at the end of a cut input).
    truncated: bool,
    /// H.265: zero bytes at the head of the payload that ffmpeg's parser
    /// gives to the access unit before, and zero bytes to append (those of
    /// the next PES).
    skip: u8,
    extra: u8,
}

/// Demuxer state for MPEG-TS.
#[derive(Debug, Clone)]
pub struct TsDemuxer {
    packet_size: u64,
    /// Bytes before the sync byte in each packet (4 for M2TS).
    prefix: u64,
    first: u64,
    pos: u64,
    es: heapless::Vec<Es, MAX_TRACKS>,
    /// PES completed, waiting to be delivered (a new PES starting on the same
    /// PID completes the previous one).
    ready: Option<Done>,
    flushing: usize,
    hdmv: bool,
    /// The PES payload being cut into frames.
    cut: Option<Cut>,
    /// Scratch offset past the carry slots of the split tracks.
    base: usize,
    /// Reading stopped where the sync was lost: what is in progress there
    /// is cut short.
    lost: bool,
}

/// A PES ready to hand out: a range of the input or the joined scratch.
#[derive(Debug, Clone, Copy)]
struct Ready {
    track: usize,
    codec: Codec,
    pts: Option<i64>,
    dts: Option<i64>,
    offset: u64,
    len: usize,
    contiguous: bool,
    truncated: bool,
    /// No whole TS packet follows the PES's last one: the input ends in or
    /// right after it, and a longer input could continue it.
    last: bool,
}

/// Hands out a prepared PES payload.
fn emit<S: Source>(src: &mut S, r: Ready, base: usize) -> Result<Packet<'_>> {
    let data = if r.contiguous {
        split::input_bytes(src, r.offset, r.len, base)?
    } else {
        S::joined(src, base + r.len)?.get(base..).unwrap_or(&[])
    };
    Ok(Packet {
        track: r.track,
        pts: r.pts,
        dts: r.dts,
        duration: None,
        flags: PacketFlags {
            keyframe: super::is_keyframe(r.codec, data),
            truncated: r.truncated,
            ..PacketFlags::default()
        },
        pos: Some(r.offset),
        contiguous: r.contiguous,
        data,
    })
}

/// One TS packet's header facts.
#[derive(Debug, Clone, Copy)]
struct TsPacket {
    pid: u16,
    pusi: bool,
    cc: u8,
    has_payload: bool,
    /// Payload offset and length.
    payload: u64,
    payload_len: u64,
}

impl TsDemuxer {
    /// The state before any table is read: TS packets of `packet_size`
    /// bytes (`prefix` of them before the sync byte), the first at `first`.
    fn fresh(packet_size: u64, prefix: u64, first: u64) -> Self {
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
        }
    }

    fn read_packet<S: Source>(&self, src: &mut S, at: u64) -> Result<Option<TsPacket>> {
        let h: [u8; 5] = src.array(at + self.prefix)?;
        if h[0] != SYNC {
            return Ok(None);
        }
        let pid = u16::from_be_bytes([h[1] & 0x1F, h[2]]);
        let pusi = h[1] & 0x40 != 0;
        let afc = (h[3] >> 4) & 3;
        let cc = h[3] & 0x0F;
        let mut payload = at + self.prefix + 4;
        if afc & 2 != 0 {
            payload += 1 + h[4] as u64;
        }
        let end = at + self.prefix + 188;
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

    /// Whether a resync to `n` is confirmed by `SYNC_RUN` whole packets
    /// before the end of the input (`len`), not only by the end itself.
    fn confirmed(&self, n: u64, len: u64) -> bool {
        n.saturating_add(self.prefix)
            .saturating_add(SYNC_RUN * self.packet_size)
            <= len
    }

    /// Finds the next offset at or after `from` where `SYNC_RUN` packets in a
    /// row carry the sync byte, scanning at most `limit` bytes.
    fn resync<S: Source>(&self, src: &mut S, from: u64, limit: u64) -> Result<Option<u64>> {
        let len = src.len();
        let stop = from.saturating_add(limit).min(len);
        let mut at = from;
        let mut buf = [0u8; 256];
        while at < stop {
            let n = src.read_at(at, &mut buf)?;
            if n == 0 {
                break;
            }
            for (i, &b) in buf.iter().take(n).enumerate() {
                if b != SYNC {
                    continue;
                }
                let cand = (at + i as u64).saturating_sub(self.prefix);
                if at + i as u64 >= self.prefix && sync_run(src, cand + self.prefix, self.packet_size)? {
                    return Ok(Some(cand));
                }
            }
            at += n as u64;
        }
        Ok(None)
    }
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

/// Detects the packet size and the first packet: returns (size, prefix,
/// first packet offset, whether `SYNC_RUN` packets confirm it rather than
/// only the end of the input).
fn find_start<S: Source>(src: &mut S, limit: u64) -> Result<Option<(u64, u64, u64, bool)>> {
    let len = src.len();
    let stop = limit.min(len);
    let mut buf = [0u8; 256];
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
            for (size, prefix) in [(188u64, 0u64), (192, 4), (204, 0)] {
                if s >= prefix && sync_run(src, s, size)? {
                    let confirmed = s.saturating_add((SYNC_RUN - 1) * size) < len;
                    return Ok(Some((size, prefix, s - prefix, confirmed)));
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
/// byte or, after leading junk, anywhere in `head`.
pub(crate) fn looks_like_ts(head: &[u8]) -> bool {
    for start in 0..head.len() {
        if head.get(start) != Some(&SYNC) {
            continue;
        }
        for (size, prefix) in [(188usize, 0usize), (192, 4), (204, 0)] {
            if start < prefix {
                continue;
            }
            let ok = (0..3).all(|k| head.get(start + k * size) == Some(&SYNC));
            if ok {
                return true;
            }
        }
    }
    false
}

/// Maps a PMT stream_type and its descriptors to a codec (ISO/IEC 13818-1
/// Table 2-34; ATSC A/52 Annex A; ETSI EN 300 468 Annex D; the HDMV types).
fn codec_for(stream_type: u8, reg: Option<[u8; 4]>, desc: Option<u8>, hdmv: bool) -> (Codec, TrackKind) {
    use Codec as C;
    use TrackKind::{Audio as A, Data as D, Subtitle as T, Video as V};
    if let Some(r) = reg {
        match &r {
            b"AC-3" => return (C::Ac3, A),
            b"EAC3" => return (C::Eac3, A),
            b"DTS1" | b"DTS2" | b"DTS3" => return (C::Dts, A),
            b"HEVC" => return (C::Hevc, V),
            b"VC-1" => return (C::Vc1, V),
            b"Opus" => return (C::Opus, A),
            b"ID3 " if stream_type == 0x15 => return (C::TimedId3, D),
            _ => {}
        }
    }
    match (stream_type, hdmv) {
        (0x01 | 0x02, _) => (C::Mpeg2Video, V),
        (0x03 | 0x04, _) => (C::Mp3, A),
        (0x0F, _) => (C::Aac, A),
        (0x10, _) => (C::Mpeg4, V),
        (0x11, _) => (C::AacLatm, A),
        (0x1B, _) => (C::H264, V),
        (0x24, _) => (C::Hevc, V),
        (0x33, _) => (C::Vvc, V),
        (0xEA, _) => (C::Vc1, V),
        (0x80, true) => (C::PcmS16Be, A),
        (0x81, _) => (C::Ac3, A),
        (0x82 | 0x85 | 0x86 | 0xA2, true) => (C::Dts, A),
        (0x83, true) => (C::TrueHd, A),
        (0x84 | 0xA1, true) => (C::Eac3, A),
        (0x87, _) => (C::Eac3, A),
        (0x82 | 0x8A, false) => (C::Dts, A),
        (0x2D | 0x2E, _) => (C::Unknown, A),
        (0x90, true) => (C::Pgs, T),
        (0x86, false) => (C::Unknown, D),
        (0x06, _) => match desc {
            Some(0x6A) => (C::Ac3, A),
            Some(0x7A) => (C::Eac3, A),
            Some(0x7B) => (C::Dts, A),
            Some(0x59) => (C::Unknown, T),
            _ => (C::Unknown, D),
        },
        _ => (C::Unknown, D),
    }
}

/// Reads a complete PSI section for `pid`, starting in the TS packet at
/// `at`, into `buf`; returns its length. Sections that continue in later TS
/// packets of the same PID are followed up to `limit`.
fn read_section<S: Source>(
    d: &TsDemuxer,
    src: &mut S,
    first: TsPacket,
    at: u64,
    buf: &mut [u8; MAX_SECTION],
    limit: u64,
) -> Result<Option<usize>> {
    // pointer_field, then the section.
    let ptr: [u8; 1] = src.array(first.payload)?;
    let start = first.payload + 1 + ptr[0] as u64;
    let in_first = (first.payload + first.payload_len).saturating_sub(start);
    if start >= first.payload + first.payload_len {
        return Ok(None);
    }
    let h: [u8; 3] = src.array(start)?;
    let total = 3 + (u16::from_be_bytes([h[1] & 0x0F, h[2]]) as usize);
    if !(8..=MAX_SECTION).contains(&total) {
        return Ok(None);
    }
    let take = (in_first as usize).min(total);
    src.read_exact_at(start, buf.get_mut(..take).ok_or(Error::malformed(start, "section"))?)?;
    let mut have = take;
    let mut p = at + d.packet_size;
    let len = src.len();
    while have < total && p < limit.min(len) {
        if let Some(tp) = d.read_packet(src, p)? {
            if tp.pid == first.pid && tp.has_payload && !tp.pusi {
                let n = (tp.payload_len as usize).min(total - have);
                src.read_exact_at(
                    tp.payload,
                    buf.get_mut(have..have + n).ok_or(Error::malformed(p, "section"))?,
                )?;
                have += n;
            }
        }
        p += d.packet_size;
    }
    if have < total {
        return Ok(None);
    }
    Ok(Some(total))
}

impl FormatDemuxer for TsDemuxer {
    fn open<S: Source>(src: &mut S, ctx: &mut Context) -> Result<Self> {
        let budget = ctx.limits.probe_bytes;
        let (packet_size, prefix, first, confirmed) = find_start(src, ctx.limits.resync_bytes)?
            .ok_or(Error::malformed(0, "no MPEG-TS sync (ISO/IEC 13818-1 §2.4.3.2)"))?;
        if !confirmed {
            // Fewer than `SYNC_RUN` packets before the end of the input: a
            // longer input could reject this sync (or packet size).
            ctx.diags.report("ts.unconfirmed-sync", first);
        }
        if first > 0 {
            ctx.diags.report("ts.leading-junk", 0);
        }
        let mut d = TsDemuxer::fresh(packet_size, prefix, first);
        let mut pmts: heapless::Vec<(u16, bool), MAX_PROGRAMS> = heapless::Vec::new();
        let mut pat_seen = false;
        let mut buf = [0u8; MAX_SECTION];
        let len = src.len();
        let limit = first.saturating_add(budget).min(len);
        let mut at = first;
        let mut desc_tracks: heapless::Vec<(u16, Track), MAX_TRACKS> = heapless::Vec::new();
        while at + packet_size <= limit || (at < limit && at + 188 + prefix <= len) {
            let Some(tp) = d.read_packet(src, at)? else {
                match d.resync(src, at + 1, ctx.limits.resync_bytes)? {
                    // As in the reading loop, a sync that only the end of
                    // the input confirms is not taken: a longer input could
                    // reject it, and the tables found after it.
                    Some(n) if d.confirmed(n, len) => {
                        ctx.diags.report("ts.resync", at);
                        at = n;
                        continue;
                    }
                    _ => break,
                }
            };
            if tp.pusi && tp.has_payload {
                if tp.pid == 0 && !pat_seen {
                    if let Some(n) = read_section(&d, src, tp, at, &mut buf, limit)? {
                        let sec = buf.get(..n).unwrap_or(&[]);
                        if sec.first() == Some(&0) && check_crc(sec, ctx, at) {
                            // program_number(2) + PID(2) entries after an 8-byte header.
                            let body = sec.get(8..n.saturating_sub(4)).unwrap_or(&[]);
                            for e in body.chunks_exact(4) {
                                let [a, b, c, d] = <[u8; 4]>::try_from(e).unwrap_or([0; 4]);
                                let program = u16::from_be_bytes([a, b]);
                                let pid = u16::from_be_bytes([c & 0x1F, d]);
                                if program != 0 && !pmts.iter().any(|p| p.0 == pid) && pmts.push((pid, false)).is_err()
                                {
                                    ctx.diags.report("ts.program-capacity", at);
                                }
                            }
                            pat_seen = true;
                        }
                    }
                } else if let Some(i) = pmts.iter().position(|p| p.0 == tp.pid && !p.1) {
                    if let Some(n) = read_section(&d, src, tp, at, &mut buf, limit)? {
                        let sec = buf.get(..n).unwrap_or(&[]);
                        if sec.first() == Some(&2) && check_crc(sec, ctx, at) {
                            parse_pmt(sec, &mut d, &mut desc_tracks, ctx, at);
                            if let Some(p) = pmts.get_mut(i) {
                                p.1 = true;
                            }
                        }
                    }
                }
            }
            if pat_seen && !pmts.is_empty() && pmts.iter().all(|p| p.1) {
                break;
            }
            at += packet_size;
        }
        if !pat_seen || pmts.iter().any(|p| !p.1) {
            ctx.diags.report("ts.tables-not-found", at);
            if desc_tracks.is_empty() {
                return Err(Error::new(
                    ErrorKind::Malformed,
                    at,
                    "no PAT/PMT within Limits::probe_bytes (ts.tables-not-found)",
                ));
            }
        }
        // Private data (stream_type 0x06) with no descriptor that names its
        // codec: ffmpeg probes the payload; look at the first PES of each.
        sniff_private(&d, src, ctx, &mut desc_tracks, at, limit)?;
        for (pid, t) in desc_tracks {
            if let Some(track) = ctx.add_track(t, 0) {
                let _ = d.es.push(Es {
                    pid,
                    track,
                    cc: 0xFF,
                    ..Es::default()
                });
            }
        }
        // Start time and duration: the first time stamps after the tables
        // (answered from the blocks already read), and the last ones in the
        // tail window.
        let want = d.es.iter().enumerate().fold(0u32, |m, (i, e)| {
            let media = ctx.tracks.get(e.track).is_some_and(|t| t.kind != TrackKind::Data);
            m | ((media as u32) << i)
        });
        let front_end = at.saturating_add(super::TAIL_WINDOW).min(len);
        let (first_pts, front_last, scanned) = d.scan_pts(src, ctx, d.first, front_end, want)?;
        let grid = |x: u64| d.first + (x.saturating_sub(d.first)).div_ceil(packet_size) * packet_size;
        let tail = grid(len.saturating_sub(super::TAIL_WINDOW).max(scanned));
        let (_, tail_last, _) = d.scan_pts(src, ctx, tail, len, 0)?;
        super::set_span(ctx, first_pts, front_last.max(tail_last));
        for e in d.es.iter_mut() {
            e.hevc = ctx.tracks.get(e.track).is_some_and(|t| t.codec == Codec::Hevc);
        }
        let tracks = &ctx.tracks;
        d.base = split::assign_slots(
            d.es.iter_mut()
                .map(|e| (&mut e.sp, tracks.get(e.track).map(|t| t.codec).unwrap_or_default())),
        );
        Ok(d)
    }

    fn next_packet<'s, S: Source>(&mut self, src: &'s mut S, ctx: &mut Context) -> Result<Option<Packet<'s>>> {
        loop {
            if let Some(f) = split::next_frame(src, &mut self.cut, self.es.iter_mut().map(|x| &mut x.sp))? {
                return f.packet(src, self.base).map(Some);
            }
            if let Some(done) = self.ready.take() {
                if let Some(p) = self.prepare(src, ctx, done)? {
                    if self.begin_cut(p) {
                        continue;
                    }
                    return emit(src, p, self.base).map(Some);
                }
                continue;
            }
            let len = src.len();
            if self.pos + self.prefix + 188 > len {
                // End of input: flush every PES in progress, in PID order.
                // A trailing partial TS packet shows the input was cut: the
                // PES in progress are then flushed flagged `truncated` (as
                // are those shorter than their PES_packet_length).
                let cut = self.lost || (len - self.first) % self.packet_size != 0;
                // Split tracks first: their whole frames come before the
                // cut packets.
                let n = self.es.len();
                while self.flushing < 2 * n {
                    let (i, pass) = (self.flushing % n, self.flushing / n);
                    self.flushing += 1;
                    if let Some(e) = self
                        .es
                        .get_mut(i)
                        .filter(|e| (e.sp.kind == split::Kind::None) == (pass == 1))
                    {
                        if let Some(start) = e.start.take() {
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
                                break;
                            }
                        }
                    }
                }
                if self.ready.is_some() {
                    continue;
                }
                // Then the frames left in the carry slots.
                for e in self.es.iter_mut() {
                    if let Some(f) = e.sp.flush(src, e.track, cut)? {
                        return f.packet(src, self.base).map(Some);
                    }
                }
                if self.pos < len && self.pos + self.prefix < len {
                    ctx.diags.report("ts.truncated-packet", self.pos);
                }
                return Ok(None);
            }
            let at = self.pos;
            let Some(tp) = self.read_packet(src, at)? else {
                match self.resync(src, at + 1, ctx.limits.resync_bytes)? {
                    // Five packets in a row confirm the sync; fewer, cut
                    // short by the end of the input, do not (a longer input
                    // could reject them): the PES in progress end there,
                    // flagged truncated.
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
                continue;
            };
            self.pos = at + self.packet_size;
            let Some(i) = self.es.iter().position(|e| e.pid == tp.pid) else {
                continue;
            };
            let Some(e) = self.es.get_mut(i) else { continue };
            if tp.has_payload {
                if e.cc != 0xFF {
                    if tp.cc == e.cc && !tp.pusi {
                        // A duplicate packet (§2.4.3.3): ignored, as ffmpeg does.
                        ctx.diags.report("ts.duplicate-packet", at);
                        continue;
                    }
                    if tp.cc != (e.cc + 1) & 0x0F {
                        ctx.diags.report("ts.cc-discontinuity", at);
                    }
                }
                e.cc = tp.cc;
            } else {
                continue;
            }
            if tp.pusi {
                // H.265 (ffmpeg 5.1's parser): the zero bytes before the
                // new PES's first 3-byte start code end the access unit
                // before.
                let mut zeros = 0u8;
                if e.hevc {
                    let mut b = [0u8; 40];
                    let n = (tp.payload_len as usize).min(b.len());
                    let b = b.get_mut(..n).unwrap_or(&mut []);
                    src.read_exact_at(tp.payload, b)?;
                    if let Some(es) = parse_pes_header(b).and_then(|h| b.get(h.header_len..)) {
                        let z = es.iter().take_while(|&&x| x == 0).count();
                        if z >= 3 && es.get(z) == Some(&1) {
                            zeros = (z - 2).min(4) as u8;
                        }
                    }
                }
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
                e.expected = 0;
                let h: [u8; 6] = if tp.payload_len >= 6 {
                    src.array(tp.payload)?
                } else {
                    [0; 6]
                };
                if h[..3] == [0, 0, 1] {
                    let l = u16::from_be_bytes([h[4], h[5]]) as u32;
                    if l > 0 {
                        e.expected = l + 6;
                    }
                }
                let complete = e.expected > 0 && e.bytes >= e.expected;
                if complete {
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
                    if previous.is_some() {
                        // Deliver the older one first; this one next.
                        self.ready = Some(done);
                        if let Some(p) = previous {
                            if let Some(pk) = self.prepare(src, ctx, p)? {
                                if self.begin_cut(pk) {
                                    continue;
                                }
                                return emit(src, pk, self.base).map(Some);
                            }
                        }
                        continue;
                    }
                    self.ready = Some(done);
                    continue;
                }
                if let Some(p) = previous {
                    self.ready = Some(p);
                }
                continue;
            }
            if e.start.is_some() {
                e.pieces = e.pieces.saturating_add(1);
                e.bytes = e.bytes.saturating_add(tp.payload_len as u32);
                if e.bytes as u64 > ctx.limits.max_packet as u64 {
                    return Err(Error::limit(at, "PES larger than Limits::max_packet"));
                }
                if e.expected > 0 && e.bytes >= e.expected {
                    let start = e.start.take().unwrap_or(at);
                    self.ready = Some(Done {
                        es: i,
                        start,
                        end: self.pos,
                        pieces: e.pieces,
                        bytes: e.bytes,
                        truncated: false,
                        skip: e.lead,
                        extra: 0,
                    });
                }
            }
        }
    }

    fn seek<S: Source>(&mut self, src: &mut S, ctx: &mut Context, track: usize, ts: i64) -> Result<()> {
        // Bisection on byte offset by the PTS of the track's PES starts, with
        // bounded reads; then read on from the chosen packet.
        let Some(ei) = self.es.iter().position(|e| e.track == track) else {
            return Err(Error::new(ErrorKind::InvalidArgument, 0, "no such track"));
        };
        let pid = self.es.get(ei).map(|e| e.pid).unwrap_or(0);
        let count = src.len().saturating_sub(self.first) / self.packet_size;
        let (mut lo, mut hi) = (0u64, count);
        let mut guard = 0;
        while hi > lo + 1 && guard < 64 {
            guard += 1;
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
            e.cc = 0xFF;
            e.lead = 0;
        }
        Ok(())
    }

    fn next_tag<'s, S: Source>(
        &mut self,
        _src: &'s mut S,
        _ctx: &Context,
        _cur: &mut TagCursor,
    ) -> Result<Option<Tag<'s>>> {
        Ok(None)
    }
}

/// Identifies undescribed private streams from their first PES payload:
/// ADTS AAC, AC-3/E-AC-3 or MPEG audio sync words. Reports
/// `ts.unconfirmed-codec` when the input ends (`limit` is clamped to it) ahead of the
/// first PES of such a stream: it stays a data track, which a longer input
/// may identify.
fn sniff_private<S: Source>(
    d: &TsDemuxer,
    src: &mut S,
    ctx: &mut Context,
    tracks: &mut heapless::Vec<(u16, Track), MAX_TRACKS>,
    from: u64,
    limit: u64,
) -> Result<()> {
    let mut at = d.first;
    let stop = limit.max(from);
    let mut left = tracks
        .iter()
        .filter(|(_, t)| t.codec_tag == 0x06 && t.kind == TrackKind::Data)
        .count();
    while left > 0 && at + d.prefix + 188 <= stop.min(src.len()) {
        if let Some(tp) = d.read_packet(src, at)? {
            if tp.pusi && tp.has_payload {
                if let Some((_, t)) = tracks
                    .iter_mut()
                    .find(|(p, t)| *p == tp.pid && t.codec_tag == 0x06 && t.kind == TrackKind::Data)
                {
                    let mut head = [0u8; 64];
                    let n = (tp.payload_len as usize).min(64);
                    src.read_exact_at(tp.payload, head.get_mut(..n).unwrap_or(&mut []))?;
                    if let Some(h) = parse_pes_header(head.get(..n).unwrap_or(&[])) {
                        let es = head.get(h.header_len..n).unwrap_or(&[]);
                        match es {
                            [0xFF, b, ..] if b & 0xF6 == 0xF0 => t.codec = Codec::Aac,
                            [0x0B, 0x77, _, _, _, b5, ..] => {
                                t.codec = if b5 >> 3 > 10 { Codec::Eac3 } else { Codec::Ac3 };
                            }
                            [0xFF, b, ..] if b & 0xE0 == 0xE0 && (b >> 1) & 3 != 0 => {
                                t.codec = if (b >> 1) & 3 == 1 { Codec::Mp3 } else { Codec::Mp2 };
                            }
                            _ => {}
                        }
                        if t.codec != Codec::Unknown {
                            t.kind = TrackKind::Audio;
                        }
                    }
                    left -= 1;
                }
            }
        }
        at += d.packet_size;
    }
    if left > 0 && stop >= src.len() {
        // A `truncation` find: a prefix cut before the first PES of an
        // undescribed private stream gave a data track where the whole
        // input, with that PES, gave AAC.
        ctx.diags.report("ts.unconfirmed-codec", at);
    }
    Ok(())
}

fn check_crc(sec: &[u8], ctx: &mut Context, at: u64) -> bool {
    if cfg!(fuzzing) || crc32_mpeg2(sec) == 0 {
        true
    } else {
        ctx.diags.report("ts.psi-crc-mismatch", at);
        false
    }
}

/// Parses a PMT section (§2.4.4.8) into tracks.
fn parse_pmt(
    sec: &[u8],
    d: &mut TsDemuxer,
    out: &mut heapless::Vec<(u16, Track), MAX_TRACKS>,
    ctx: &mut Context,
    at: u64,
) {
    let n = sec.len().saturating_sub(4);
    let Some(pil) = sec.get(10..12).map(|b| {
        <[u8; 2]>::try_from(b)
            .map(|[x, y]| u16::from_be_bytes([x & 0x0F, y]) as usize)
            .unwrap_or(0)
    }) else {
        return;
    };
    // Program-level descriptors: an HDMV registration marks Blu-ray types.
    let prog = sec.get(12..(12 + pil).min(n)).unwrap_or(&[]);
    if find_registration(prog) == Some(*b"HDMV") {
        d.hdmv = true;
    }
    let mut i = 12 + pil;
    while i + 5 <= n {
        let Some(&[stream_type, p0, p1, l0, l1]) = sec.get(i..i + 5) else {
            break;
        };
        let pid = u16::from_be_bytes([p0 & 0x1F, p1]);
        let eil = u16::from_be_bytes([l0 & 0x0F, l1]) as usize;
        let descs = sec.get(i + 5..(i + 5 + eil).min(n)).unwrap_or(&[]);
        i += 5 + eil;
        let reg = find_registration(descs);
        let mut key_desc = None;
        let mut lang = crate::types::Language::new();
        walk_descriptors(descs, |tag, body| match tag {
            0x6A | 0x7A | 0x7B | 0x59 | 0x56 if key_desc.is_none() => key_desc = Some(tag),
            0x0A if lang.is_empty() => {
                for &c in body.iter().take(3) {
                    if c.is_ascii_alphabetic() {
                        let _ = lang.push(c as char);
                    }
                }
            }
            _ => {}
        });
        let (codec, kind) = codec_for(stream_type, reg, key_desc, d.hdmv);
        if out.iter().any(|(p, _)| *p == pid) {
            continue;
        }
        let t = Track {
            id: pid as u32,
            kind,
            codec,
            codec_tag: stream_type as u32,
            time_base: Rational::new(1, 90_000),
            language: lang,
            ..Track::default()
        };
        if out.push((pid, t)).is_err() {
            ctx.diags.report("track-capacity", at);
        }
    }
}

fn walk_descriptors(mut b: &[u8], mut f: impl FnMut(u8, &[u8])) {
    while let Some(&[tag, len]) = b.get(..2) {
        let len = len as usize;
        let body = b.get(2..2 + len).unwrap_or(&[]);
        f(tag, body);
        b = b.get(2 + len..).unwrap_or(&[]);
    }
}

fn find_registration(descs: &[u8]) -> Option<[u8; 4]> {
    let mut r = None;
    walk_descriptors(descs, |tag, body| {
        if tag == 0x05 && r.is_none() {
            if let Some(b) = body.get(..4) {
                r = <[u8; 4]>::try_from(b).ok();
            }
        }
    });
    r
}

impl TsDemuxer {
    /// Starts cutting `r` into frames when its track is split.
    fn begin_cut(&mut self, r: Ready) -> bool {
        let Some(i) = self.es.iter().position(|e| e.track == r.track) else {
            return false;
        };
        let Some(e) = self.es.get_mut(i).filter(|e| e.sp.kind != split::Kind::None) else {
            return false;
        };
        e.sp.begin(r.pts);
        self.cut = Some(Cut {
            stream: i,
            track: r.track,
            input: r.contiguous.then_some(r.offset),
            at: self.base,
            len: r.len,
            pos: r.offset,
            done: 0,
            last: r.last,
        });
        true
    }

    /// Appends `n` zero bytes to a prepared payload (joining it first when
    /// it is a slice of the input).
    fn append_zeros<S: Source>(&self, src: &mut S, mut r: Ready, n: u8) -> Result<Option<Ready>> {
        if n == 0 {
            return Ok(Some(r));
        }
        if r.contiguous {
            src.gather(r.offset, r.len, self.base)?;
            r.contiguous = false;
        }
        src.put(self.base + r.len, [0u8; 4].get(..n as usize).unwrap_or(&[]))?;
        r.len += n as usize;
        Ok(Some(r))
    }

    /// Reads a completed PES's header and, when it spans TS packets, joins
    /// its payloads in scratch. `None` when it holds no usable PES header.
    fn prepare<S: Source>(&mut self, src: &mut S, ctx: &mut Context, done: Done) -> Result<Option<Ready>> {
        let e = *self.es.get(done.es).ok_or(Error::malformed(done.start, "PES state"))?;
        let total = done.bytes as usize;
        let first = self
            .read_packet(src, done.start)?
            .ok_or(Error::malformed(done.start, "PES start"))?;
        // The PES header, copied out (64 bytes cover every header with
        // stuffing that fits one TS packet).
        let mut head = [0u8; 64];
        let hn = (first.payload_len as usize).min(64);
        src.read_exact_at(first.payload, head.get_mut(..hn).unwrap_or(&mut []))?;
        let Some(h) = parse_pes_header(head.get(..hn).unwrap_or(&[])) else {
            ctx.diags.report("ts.bad-pes-header", done.start);
            return Ok(None);
        };
        let mut size = total;
        if h.packet_length > 0 {
            size = size.min(6 + h.packet_length as usize);
        }
        if h.header_len > size || h.header_len > hn {
            ctx.diags.report("ts.bad-pes-header", done.start);
            return Ok(None);
        }
        let hl = h.header_len + (done.skip as usize).min(size - h.header_len);
        let payload_len = size - hl;
        let mut r = Ready {
            track: e.track,
            codec: ctx.tracks.get(e.track).map(|t| t.codec).unwrap_or_default(),
            pts: h.pts,
            dts: h.dts.or(h.pts),
            offset: first.payload + hl as u64,
            len: payload_len,
            contiguous: true,
            truncated: done.truncated,
            last: done.end.saturating_add(self.prefix + 188) > src.len(),
        };
        // The whole PES in one TS packet is a slice of the input. For a
        // track whose PES are split into frames that holds only when the
        // PES is known complete there (its length field says so): a PES
        // that the end of the input (or a PES of unknown length) leaves in
        // one packet is joined in scratch like one spanning packets, so a
        // prefix gives its frames the same offsets and `contiguous` as the
        // whole input does (truncation fuzz, third session of 2 December).
        let complete = h.packet_length > 0 && total >= 6 + h.packet_length as usize;
        let slice = complete || e.sp.kind == split::Kind::None;
        if slice && (done.pieces == 1 || (first.payload_len as usize) >= size) {
            return self.append_zeros(src, r, done.extra);
        }
        // Join: walk the TS packets of this PID from the start.
        let mut at = done.start;
        let mut have = 0usize;
        let mut skip = hl;
        let mut pieces = 0u32;
        while at < done.end && pieces < done.pieces && have < payload_len {
            let Some(tp) = self.read_packet(src, at)? else {
                // Junk between packets: find the next packet the way the
                // reading loop did.
                match self.resync(src, at + 1, ctx.limits.resync_bytes)? {
                    Some(n) => at = n,
                    None => break,
                }
                continue;
            };
            {
                if tp.pid == e.pid && tp.has_payload {
                    if pieces > 0 && tp.pusi {
                        break;
                    }
                    pieces += 1;
                    let s = skip.min(tp.payload_len as usize);
                    skip -= s;
                    let n = (tp.payload_len as usize - s).min(payload_len - have);
                    if n > 0 {
                        if self.base + have + n > src.scratch_len() {
                            return Err(Error::new(
                                ErrorKind::ScratchTooSmall,
                                at,
                                "a PES spanning TS packets needs scratch (SliceSource::with_scratch)",
                            ));
                        }
                        src.gather(tp.payload + s as u64, n, self.base + have)?;
                        have += n;
                    }
                }
            }
            at += self.packet_size;
        }
        r.len = have;
        r.contiguous = false;
        self.append_zeros(src, r, done.extra)
    }

    /// The smallest and largest PTS of the PES that start in `from..to` on
    /// the PIDs in `self.es`, and where the scan stopped: once each PID of
    /// the `want` mask (bits by `self.es` index) has given one, when `want`
    /// is not 0.
    ///
    /// MPEG audio tracks (stream types 3 and 4) are named by the layer of
    /// their first frame there, as ffmpeg names them (mp2 or mp3).
    fn scan_pts<S: Source>(
        &self,
        src: &mut S,
        ctx: &mut Context,
        from: u64,
        to: u64,
        want: u32,
    ) -> Result<(Option<i64>, Option<i64>, u64)> {
        let (mut lo, mut hi, mut seen) = (None::<i64>, None::<i64>, 0u32);
        let mut at = from;
        while at + self.prefix + 188 <= to && (want == 0 || seen & want != want) {
            let tp = self.read_packet(src, at)?;
            at += self.packet_size;
            let Some(tp) = tp.filter(|t| t.pusi && t.has_payload) else {
                continue;
            };
            let Some(i) = self.es.iter().position(|e| e.pid == tp.pid) else {
                continue;
            };
            let mut head = [0u8; 40];
            let n = (tp.payload_len as usize).min(head.len());
            let head = head.get_mut(..n).unwrap_or(&mut []);
            src.read_exact_at(tp.payload, head)?;
            let Some(h) = parse_pes_header(head) else { continue };
            let bit = 1u32.checked_shl(i as u32).unwrap_or(0);
            let track = self.es.get(i).and_then(|e| ctx.tracks.get_mut(e.track));
            if let (Some(t), Some(&[0xFF, b, ..])) = (track, head.get(h.header_len..)) {
                if want & bit != 0 && t.codec == Codec::Mp3 && (b >> 1) & 3 == 2 {
                    t.codec = Codec::Mp2;
                }
            }
            if let Some(p) = h.pts {
                lo = Some(lo.map_or(p, |l: i64| l.min(p)));
                hi = hi.max(Some(p));
                seen |= bit;
            }
        }
        Ok((lo, hi, at))
    }

    /// The PTS of the first PES start of `pid` at or after `from`, scanning a
    /// bounded window.
    fn pts_after<S: Source>(&self, src: &mut S, ctx: &Context, from: u64, pid: u16) -> Result<Option<i64>> {
        let stop = from.saturating_add(ctx.limits.resync_bytes).min(src.len());
        let mut at = from;
        while at + self.prefix + 188 <= stop {
            if let Some(tp) = self.read_packet(src, at)? {
                if tp.pid == pid && tp.pusi && tp.has_payload {
                    let mut head = [0u8; 19];
                    let n = (tp.payload_len as usize).min(19);
                    src.read_exact_at(tp.payload, head.get_mut(..n).unwrap_or(&mut []))?;
                    if let Some(h) = parse_pes_header(head.get(..n).unwrap_or(&[])) {
                        return Ok(h.dts.or(h.pts));
                    }
                }
            }
            at += self.packet_size;
        }
        Ok(None)
    }
}

/// Standalone fuzz entry for the PSI parsers (`fuzz/fuzz_targets/shared_parsers.rs`):
/// `data` as one PMT section (§2.4.4.8) with its CRC checked, then parsed
/// into tracks (as a 188- and as a 192-byte stream, whose HDMV rules
/// differ), and its descriptors walked. Built only under `cfg(fuzzing)`.
#[cfg(fuzzing)]
pub fn fuzz_psi(data: &[u8]) {
    let mut ctx = Context::default();
    let _ = check_crc(data, &mut ctx, 0);
    for packet_size in [188u64, 192] {
        let mut d = TsDemuxer::fresh(packet_size, packet_size - 188, 0);
        let mut out: heapless::Vec<(u16, Track), MAX_TRACKS> = heapless::Vec::new();
        parse_pmt(data, &mut d, &mut out, &mut ctx, 0);
    }
    walk_descriptors(data, |_, _| {});
    let _ = find_registration(data);
}
