//! MPEG program streams: MPEG-2 PS and VOB, MPEG-1 system streams
//! (ISO/IEC 13818-1 §2.5, ISO/IEC 11172-1 §2.4; DVD-Video private stream 1
//! sub-streams).
//!
//! A program stream is a sequence of packs (`0x000001BA`), system headers
//! (`BB`), program stream maps (`BC`) and PES packets. Each PES packet is
//! contiguous, so every packet is a slice of the input: the PES payload, after
//! the sub-stream header for private stream 1 (AC-3 `0x80`–`0x87`, DTS
//! `0x88`–`0x8F`, LPCM `0xA0`–`0xAF`: 1 + 3 bytes; TrueHD `0xB0`–`0xBF`: 1 + 4;
//! subpictures `0x20`–`0x3F`: 1), as ffmpeg's `mpeg` demuxer delivers them.
//! Audio payloads are then cut into the frames ffmpeg's parsers cut
//! ([`super::split`]); a frame across two PES is joined in scratch.
//!
//! The probe lists the streams met within `FRONT_SPAN` (1 s) of the first
//! time stamp, and reads the last time stamp from the tail window.

use super::pes::parse_pes_header;
use super::split::{self, Cut, Split};
use crate::error::{Error, ErrorKind, Result};
use crate::format::traits::{Context, FormatDemuxer};
use crate::limits::MAX_TRACKS;
use crate::source::Source;
use crate::tags::{Tag, TagCursor};
use crate::types::{Codec, Packet, PacketFlags, Rational, Track, TrackKind};

/// Per-stream state: the PES stream_id (or 0x100 + sub-stream id for private
/// stream 1) and the track.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
struct Stream {
    id: u16,
    track: usize,
    /// Cutting the PES payloads into codec frames.
    sp: Split,
}

/// Demuxer state for MPEG program streams.
#[derive(Debug, Clone)]
pub struct PsDemuxer {
    first: u64,
    pos: u64,
    streams: heapless::Vec<Stream, MAX_TRACKS>,
    /// The PES payload being cut into frames.
    cut: Option<Cut>,
    /// Scratch offset past the carry slots of the split tracks.
    base: usize,
    /// Carry slots flushed at the end of the input.
    flushing: usize,
}

/// What the next start code at an offset is.
enum Unit {
    /// A pack header, system header, map or padding to skip, with its
    /// length.
    Skip(u64),
    /// A PES packet of a media stream: (stream key, payload offset, payload
    /// length, pts, dts, total length).
    Pes(u16, u64, u64, Option<i64>, Option<i64>, u64),
}

/// Codec and kind of a stream key (ffmpeg `mpeg.c`).
fn codec_for(key: u16) -> Option<(Codec, TrackKind)> {
    Some(match key {
        0xE0..=0xEF => (Codec::Mpeg2Video, TrackKind::Video),
        0xC0..=0xDF => (Codec::Mp2, TrackKind::Audio),
        0x180..=0x187 | 0x1C0..=0x1CF => (Codec::Ac3, TrackKind::Audio),
        0x188..=0x18F | 0x198..=0x19F => (Codec::Dts, TrackKind::Audio),
        0x1A0..=0x1AF => (Codec::Unknown, TrackKind::Audio),
        0x1B0..=0x1BF => (Codec::TrueHd, TrackKind::Audio),
        0x120..=0x13F => (Codec::DvdSub, TrackKind::Subtitle),
        _ => return None,
    })
}

/// Finds the next start code prefix `00 00 01` at or after `from`, scanning
/// at most `limit` bytes.
fn next_start<S: Source>(src: &mut S, from: u64, limit: u64) -> Result<Option<u64>> {
    let len = src.len();
    let stop = from.saturating_add(limit).min(len);
    let mut at = from;
    let mut buf = [0u8; 512];
    while at + 3 < stop {
        let n = src.read_at(at, &mut buf)?;
        if n < 4 {
            break;
        }
        for i in 0..n - 3 {
            if buf.get(i..i + 3) == Some(&[0, 0, 1][..]) {
                return Ok(Some(at + i as u64));
            }
        }
        at += (n - 3) as u64;
    }
    Ok(None)
}

/// Whether a video PES payload holds a sequence header with no sequence
/// extension after it: MPEG-1 video (ISO/IEC 13818-2 §6.1.1.6: an MPEG-2
/// sequence header is always followed by a sequence_extension).
fn mpeg1_video<S: Source>(src: &mut S, off: u64, len: u64) -> Result<bool> {
    let mut b = [0u8; 256];
    let n = src.read_at(off, b.get_mut(..len.min(256) as usize).unwrap_or(&mut []))?;
    let b = b.get(..n).unwrap_or(&[]);
    let code = |c: u8| b.windows(4).position(|w| w == [0, 0, 1, c]);
    Ok(match (code(0xB3), code(0xB5)) {
        (Some(_), None) => true,
        (Some(h), Some(x)) => x < h,
        _ => false,
    })
}

/// Whether the head looks like a program stream: a pack header at the start.
pub(crate) fn looks_like_ps(head: &[u8]) -> bool {
    head.get(..4) == Some(&[0, 0, 1, 0xBA][..]) && head.get(4).is_some_and(|b| b & 0xC0 == 0x40 || b & 0xF0 == 0x20)
}

impl PsDemuxer {
    /// Reads the unit starting at `at` (a start code prefix).
    fn unit<S: Source>(&self, src: &mut S, at: u64) -> Result<Option<Unit>> {
        let h: [u8; 6] = match src.array(at) {
            Ok(h) => h,
            Err(e) if e.is_truncation() => return Ok(None),
            Err(e) => return Err(e),
        };
        let code = h[3];
        match code {
            0xBA => {
                // Pack header: MPEG-2 14 bytes + stuffing, MPEG-1 12 bytes.
                if h[4] & 0xC0 == 0x40 {
                    // The input may end inside it: the walk ends there, in
                    // the probe as in reading (a `truncation` fuzz find:
                    // the whole input failed to open where a prefix opened).
                    let b: [u8; 14] = match src.array(at) {
                        Ok(b) => b,
                        Err(e) if e.is_truncation() => return Ok(None),
                        Err(e) => return Err(e),
                    };
                    Ok(Some(Unit::Skip(14 + (b[13] & 7) as u64)))
                } else {
                    Ok(Some(Unit::Skip(12)))
                }
            }
            0xB9 => Ok(Some(Unit::Skip(4))),
            0xBB..=0xFF => {
                let len = u16::from_be_bytes([h[4], h[5]]) as u64;
                let total = 6 + len;
                let key = match code {
                    0xBD => {
                        let mut head = [0u8; 64];
                        let n = (total.min(64)) as usize;
                        let n = src.read_at(at, head.get_mut(..n).unwrap_or(&mut []))?;
                        let Some(p) = parse_pes_header(head.get(..n).unwrap_or(&[])) else {
                            return Ok(Some(Unit::Skip(total)));
                        };
                        let Some(&sub) = head.get(p.header_len) else {
                            return Ok(Some(Unit::Skip(total)));
                        };
                        let skip = match sub {
                            0x80..=0xAF | 0xC0..=0xCF => 4,
                            0xB0..=0xBF => 5,
                            _ => 1,
                        };
                        let off = p.header_len as u64 + skip;
                        if off > total {
                            return Ok(Some(Unit::Skip(total)));
                        }
                        return Ok(Some(Unit::Pes(
                            0x100 | sub as u16,
                            at + off,
                            total - off,
                            p.pts,
                            p.dts,
                            total,
                        )));
                    }
                    0xC0..=0xEF => code as u16,
                    _ => return Ok(Some(Unit::Skip(total))),
                };
                let mut head = [0u8; 64];
                let n = (total.min(64)) as usize;
                // Fewer bytes only where the input ends inside the PES.
                let n = src.read_at(at, head.get_mut(..n).unwrap_or(&mut []))?;
                let Some(p) = parse_pes_header(head.get(..n).unwrap_or(&[])) else {
                    return Ok(Some(Unit::Skip(total)));
                };
                let off = p.header_len as u64;
                if off > total {
                    return Ok(Some(Unit::Skip(total)));
                }
                Ok(Some(Unit::Pes(key, at + off, total - off, p.pts, p.dts, total)))
            }
            _ => Ok(Some(Unit::Skip(3))),
        }
    }
}

impl FormatDemuxer for PsDemuxer {
    fn open<S: Source>(src: &mut S, ctx: &mut Context) -> Result<Self> {
        let first = next_start(src, 0, ctx.limits.resync_bytes)?
            .ok_or(Error::malformed(0, "no MPEG start code (ISO/IEC 13818-1 §2.5.3)"))?;
        let mut d = PsDemuxer {
            first,
            pos: first,
            streams: heapless::Vec::new(),
            cut: None,
            base: 0,
            flushing: 0,
        };
        // Probe: walk units within the probe budget and create a track for
        // every media stream, in order of appearance.
        let limit = first.saturating_add(ctx.limits.probe_bytes).min(src.len());
        let mut at = first;
        let mut guard = 0u32;
        let (mut start, mut last): (Option<i64>, Option<i64>) = (None, None);
        while at < limit {
            guard += 1;
            if guard > ctx.limits.max_top_level {
                break;
            }
            let Some(u) = d.unit(src, at)? else { break };
            match u {
                Unit::Skip(n) => at += n.max(1),
                Unit::Pes(key, off, plen, pts, _, total) => {
                    // The front window: streams that start within
                    // `FRONT_SPAN` of the first time stamp.
                    if let (Some(s0), Some(p)) = (start, pts) {
                        if codec_for(key).is_some() && super::ticks_between(s0, p) > super::FRONT_SPAN {
                            break;
                        }
                    }
                    if codec_for(key).is_some() {
                        start = match (start, pts) {
                            (Some(a), Some(b)) => Some(a.min(b)),
                            (a, b) => a.or(b),
                        };
                        last = last.max(pts);
                    }
                    if !d.streams.iter().any(|s| s.id == key) {
                        if let Some((mut codec, kind)) = codec_for(key) {
                            if codec == Codec::Mpeg2Video && mpeg1_video(src, off, plen)? {
                                codec = Codec::Mpeg1Video;
                            }
                            let t = Track {
                                id: if key >= 0x100 {
                                    key as u32 & 0xFF
                                } else {
                                    0x100 | key as u32
                                },
                                kind,
                                codec,
                                time_base: Rational::new(1, 90_000),
                                ..Track::default()
                            };
                            if let Some(track) = ctx.add_track(t, at) {
                                let _ = d.streams.push(Stream {
                                    id: key,
                                    track,
                                    sp: Split::default(),
                                });
                            }
                        }
                    }
                    at += total;
                }
            }
            // Realign on the next start code when a unit is followed by junk.
            if let Ok(b) = src.array::<3>(at) {
                if b != [0, 0, 1] {
                    match next_start(src, at, ctx.limits.resync_bytes)? {
                        Some(n) => at = n,
                        None => break,
                    }
                }
            }
        }
        if d.streams.is_empty() {
            return Err(Error::new(
                ErrorKind::Malformed,
                first,
                "no media stream in the program stream",
            ));
        }
        // The duration: the last time stamp in the tail window.
        let tail = src.len().saturating_sub(super::TAIL_WINDOW).max(at);
        let last = last.max(d.last_pts(src, ctx, tail)?);
        super::set_span(ctx, start, last);
        let tracks = &ctx.tracks;
        d.base = split::assign_slots(
            d.streams
                .iter_mut()
                .map(|s| (&mut s.sp, tracks.get(s.track).map(|t| t.codec).unwrap_or_default())),
        );
        Ok(d)
    }

    fn next_packet<'s, S: Source>(&mut self, src: &'s mut S, ctx: &mut Context) -> Result<Option<Packet<'s>>> {
        let len = src.len();
        let mut guard = 0u64;
        loop {
            guard += 1;
            if guard > 1 << 24 {
                return Err(Error::malformed(self.pos, "program stream walk does not advance"));
            }
            if let Some(f) = split::next_frame(src, &mut self.cut, self.streams.iter_mut().map(|x| &mut x.sp))? {
                return f.packet(src, self.base).map(Some);
            }
            if self.pos + 4 > len {
                // The end: frames left in the carry slots.
                while let Some(s) = self.streams.get_mut(self.flushing) {
                    self.flushing += 1;
                    if let Some(f) = s.sp.flush(src, s.track, self.pos > len)? {
                        return f.packet(src, self.base).map(Some);
                    }
                }
                return Ok(None);
            }
            let b: [u8; 3] = src.array(self.pos)?;
            if b != [0, 0, 1] {
                ctx.diags.report("ps.resync", self.pos);
                // No start code within the resync window: the walk ends
                // here, and the frames left in the carry slots are given
                // as at the end of the input (a `truncation` fuzz find: a
                // prefix that ended at the junk gave them, the whole did not).
                self.pos = next_start(src, self.pos, ctx.limits.resync_bytes)?.unwrap_or(len);
                continue;
            }
            let at = self.pos;
            let Some(u) = self.unit(src, at)? else {
                self.pos = len;
                continue;
            };
            match u {
                Unit::Skip(n) => self.pos = at + n.max(1),
                Unit::Pes(key, off, plen, pts, dts, total) => {
                    self.pos = at + total;
                    let Some(i) = self.streams.iter().position(|s| s.id == key) else {
                        continue;
                    };
                    let avail = len.saturating_sub(off);
                    let truncated = plen > avail;
                    let n = plen.min(avail) as usize;
                    if n == 0 {
                        continue;
                    }
                    let Some(s) = self.streams.get_mut(i) else { continue };
                    if s.sp.kind != split::Kind::None {
                        s.sp.begin(pts);
                        self.cut = Some(Cut {
                            stream: i,
                            track: s.track,
                            input: Some(off),
                            at: self.base,
                            len: n,
                            pos: off,
                            done: 0,
                            last: off.saturating_add(n as u64) >= src.len(),
                        });
                        continue;
                    }
                    let track = s.track;
                    let codec = ctx.tracks.get(track).map(|t| t.codec).unwrap_or_default();
                    let data = split::input_bytes(src, off, n, self.base)?;
                    return Ok(Some(Packet {
                        track,
                        pts,
                        dts: dts.or(pts),
                        duration: None,
                        flags: PacketFlags {
                            keyframe: super::is_keyframe(codec, data),
                            truncated,
                            ..PacketFlags::default()
                        },
                        pos: Some(off),
                        contiguous: true,
                        data,
                    }));
                }
            }
        }
    }

    fn seek<S: Source>(&mut self, src: &mut S, ctx: &mut Context, track: usize, ts: i64) -> Result<()> {
        // Bisection on byte offset by the time stamps of the track's PES.
        let Some(key) = self.streams.iter().find(|s| s.track == track).map(|s| s.id) else {
            return Err(Error::new(ErrorKind::InvalidArgument, 0, "no such track"));
        };
        let (mut lo, mut hi) = (self.first, src.len());
        let mut guard = 0;
        while hi > lo + 2048 && guard < 64 {
            guard += 1;
            let mid = lo + (hi - lo) / 2;
            // Only the upper half can hold the answer: scanning past `hi`
            // would make every step rescan to the end of the input.
            match self.pts_after(src, ctx, mid, hi, key)? {
                Some((p, _)) if p <= ts => lo = mid,
                _ => hi = mid,
            }
        }
        self.pos = match self.pts_after(src, ctx, lo, src.len(), key)? {
            Some((_, at)) if lo > self.first => at,
            _ => self.first,
        };
        self.cut = None;
        self.flushing = 0;
        for s in self.streams.iter_mut() {
            s.sp.reset();
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

impl PsDemuxer {
    /// The largest time stamp of a known stream's PES from the first pack
    /// header at or after `from` to the end.
    fn last_pts<S: Source>(&self, src: &mut S, ctx: &Context, from: u64) -> Result<Option<i64>> {
        let len = src.len();
        let mut at = from;
        // A pack header: start codes inside payloads are not units.
        loop {
            let Some(n) = next_start(src, at, len.saturating_sub(at))? else {
                return Ok(None);
            };
            if src.array::<4>(n)?.get(3) == Some(&0xBA) {
                at = n;
                break;
            }
            at = n + 3;
        }
        let mut last: Option<i64> = None;
        let mut guard = 0u32;
        while at < len && guard < ctx.limits.max_top_level {
            guard += 1;
            match self.unit(src, at)? {
                Some(Unit::Pes(k, _, _, pts, _, total)) => {
                    if self.streams.iter().any(|s| s.id == k) {
                        last = last.max(pts);
                    }
                    at += total.max(1);
                }
                Some(Unit::Skip(n)) => at += n.max(1),
                None => break,
            }
            if src.array::<3>(at).is_ok_and(|b| b != [0, 0, 1]) {
                match next_start(src, at, ctx.limits.resync_bytes)? {
                    Some(n) => at = n,
                    None => break,
                }
            }
        }
        Ok(last)
    }

    /// The time stamp and offset of the first PES of `key` at or after
    /// `from` and before `until` that carries one, within
    /// `Limits::resync_bytes`.
    fn pts_after<S: Source>(
        &self,
        src: &mut S,
        ctx: &Context,
        from: u64,
        until: u64,
        key: u16,
    ) -> Result<Option<(i64, u64)>> {
        let stop = from.saturating_add(ctx.limits.resync_bytes).min(src.len()).min(until);
        let mut at = match next_start(src, from, stop.saturating_sub(from))? {
            Some(a) => a,
            None => return Ok(None),
        };
        let mut guard = 0;
        while at < stop && guard < 100_000 {
            guard += 1;
            match self.unit(src, at)? {
                Some(Unit::Pes(k, _, _, pts, dts, total)) => {
                    if k == key {
                        if let Some(t) = dts.or(pts) {
                            return Ok(Some((t, at)));
                        }
                    }
                    at += total.max(1);
                }
                Some(Unit::Skip(n)) => at += n.max(1),
                None => break,
            }
            if let Ok(b) = src.array::<3>(at) {
                if b != [0, 0, 1] {
                    match next_start(src, at, stop.saturating_sub(at))? {
                        Some(n) => at = n,
                        None => break,
                    }
                }
            }
        }
        Ok(None)
    }
}
