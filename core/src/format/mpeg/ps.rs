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
//! (`super::split`); a frame across two PES is joined in scratch.
//!
//! The probe lists the streams met within `FRONT_SPAN` (1 s) of the first
//! time stamp, and reads the last time stamp from the tail window.

use super::pes::{parse_pes_header, PesHeader};
use super::split::{self, Cut, Split};
use crate::error::{Error, ErrorKind, Result};
use crate::format::traits::{Context, FormatDemuxer};
use crate::limits::MAX_TRACKS;
use crate::source::Source;
use crate::types::{Codec, Packet, PacketFlags, Rational, Track, TrackKind};

/// Bytes of an MPEG-1 pack header (ISO/IEC 11172-1 §2.4.3.2).
const MPEG1_PACK: u64 = 12;
/// Bytes of an MPEG-2 pack header before its stuffing (ISO/IEC 13818-1
/// §2.5.3.3; pack_stuffing_length is the low 3 bits of its last byte).
const MPEG2_PACK: u64 = 14;
/// Bytes of the MPEG_program_end_code (§2.5.3.2).
const PROGRAM_END: u64 = 4;
/// Bytes of a PES packet copied out to read its header: every header with
/// stuffing, and the DVD sub-stream header after it.
const PES_HEAD_COPY: usize = 64;
/// Most turns of the reading loop in one `next_packet` call. Every turn
/// moves on by at least a byte, ends the walk or hands out a frame, so
/// only a fault in that reasoning reaches this (16 Mi turns, well past
/// `Limits::resync_bytes` of junk).
const MAX_WALK_STEPS: u64 = 1 << 24;
/// Most bisection steps of a seek: 64 halvings narrow any `u64` byte range.
const MAX_SEEK_STEPS: u32 = 64;
/// The bisection stops when the range is this many bytes or fewer: the
/// scan from its low end (one `pts_after`) covers the rest.
const SEEK_CLOSE: u64 = 2048;
/// Most units read by one `pts_after` looking for a time stamp, besides
/// its `Limits::resync_bytes` window (a window of tiny units, such as
/// program end codes, would otherwise take one turn per 4 bytes).
const MAX_PTS_SCAN_UNITS: u32 = 100_000;

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

/// Reads the pack header at `at` (ISO/IEC 13818-1 §2.5.3.3: 14 bytes and
/// pack_stuffing_length; ISO/IEC 11172-1 §2.4.3.2: 12 bytes), told apart by
/// `b4`, its fifth byte. `None` when the input ends inside an MPEG-2 one.
fn pack_header<S: Source>(src: &mut S, at: u64, b4: u8) -> Result<Option<Unit>> {
    if b4 & 0xC0 != 0x40 {
        return Ok(Some(Unit::Skip(MPEG1_PACK)));
    }
    // The input may end inside it: the walk ends there, in the probe as
    // in reading (a `truncation` fuzz find: the whole input failed to open
    // where a prefix opened).
    let b: [u8; MPEG2_PACK as usize] = match src.array(at) {
        Ok(b) => b,
        Err(e) if e.is_truncation() => return Ok(None),
        Err(e) => return Err(e),
    };
    Ok(Some(Unit::Skip(MPEG2_PACK + (b[13] & 7) as u64)))
}

/// Reads the PES header of the packet at `at` (`total` bytes): the header
/// copied out, at most [`PES_HEAD_COPY`] bytes (fewer only where the input
/// ends inside the PES), and what it says; `None` when it is not a PES
/// header.
fn pes_head<S: Source>(src: &mut S, at: u64, total: u64) -> Result<Option<([u8; PES_HEAD_COPY], PesHeader)>> {
    let mut head = [0u8; PES_HEAD_COPY];
    let n = (total.min(PES_HEAD_COPY as u64)) as usize;
    let n = src.read_at(at, head.get_mut(..n).unwrap_or(&mut []))?;
    Ok(parse_pes_header(head.get(..n).unwrap_or(&[])).map(|p| (head, p)))
}

/// A PES packet of private stream 1 at `at` (`total` bytes): its payload
/// after the DVD sub-stream header (1 byte of sub-stream id, and 3 more
/// for AC-3, DTS and LPCM, 4 more for TrueHD), keyed 0x100 + sub-stream id.
fn private_stream_1<S: Source>(src: &mut S, at: u64, total: u64) -> Result<Option<Unit>> {
    let Some((head, p)) = pes_head(src, at, total)? else {
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
    Ok(Some(Unit::Pes(
        0x100 | sub as u16,
        at + off,
        total - off,
        p.pts,
        p.dts,
        total,
    )))
}

/// A PES packet of an audio or video stream (`key`, its stream_id) at `at`
/// (`total` bytes).
fn media_pes<S: Source>(src: &mut S, at: u64, total: u64, key: u16) -> Result<Option<Unit>> {
    let Some((_, p)) = pes_head(src, at, total)? else {
        return Ok(Some(Unit::Skip(total)));
    };
    let off = p.header_len as u64;
    if off > total {
        return Ok(Some(Unit::Skip(total)));
    }
    Ok(Some(Unit::Pes(key, at + off, total - off, p.pts, p.dts, total)))
}

/// `at` when a start code prefix is there (or the input ends there), else
/// the next start code within `limit` bytes; `None` when there is none.
fn realign<S: Source>(src: &mut S, at: u64, limit: u64) -> Result<Option<u64>> {
    match src.array::<3>(at) {
        Ok(b) if b != [0, 0, 1] => next_start(src, at, limit),
        _ => Ok(Some(at)),
    }
}

impl PsDemuxer {
    /// Reads the unit starting at `at` (a start code prefix): pack header,
    /// program end code, system header, map, padding or PES packet
    /// (ISO/IEC 13818-1 §2.5.3, Table 2-22). `None` when the input ends
    /// inside its first bytes.
    fn unit<S: Source>(&self, src: &mut S, at: u64) -> Result<Option<Unit>> {
        // The start code, then PES_packet_length (or a pack header's first
        // byte).
        let h: [u8; 6] = match src.array(at) {
            Ok(h) => h,
            Err(e) if e.is_truncation() => return Ok(None),
            Err(e) => return Err(e),
        };
        let code = h[3];
        match code {
            0xBA => pack_header(src, at, h[4]),
            0xB9 => Ok(Some(Unit::Skip(PROGRAM_END))),
            0xBB..=0xFF => {
                let total = 6 + u16::from_be_bytes([h[4], h[5]]) as u64;
                match code {
                    0xBD => private_stream_1(src, at, total),
                    0xC0..=0xEF => media_pes(src, at, total, code as u16),
                    _ => Ok(Some(Unit::Skip(total))),
                }
            }
            _ => Ok(Some(Unit::Skip(3))),
        }
    }

    /// Adds the track of stream `key` at its first PES packet (the unit at
    /// `at`, its payload `plen` bytes at `off`) when it is a media stream
    /// not met before; MPEG video is named MPEG-1 or MPEG-2 from it.
    fn add_stream<S: Source>(
        &mut self,
        src: &mut S,
        ctx: &mut Context,
        key: u16,
        (off, plen, at): (u64, u64, u64),
    ) -> Result<()> {
        if self.streams.iter().any(|s| s.id == key) {
            return Ok(());
        }
        let Some((mut codec, kind)) = codec_for(key) else {
            return Ok(());
        };
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
            let _ = self.streams.push(Stream {
                id: key,
                track,
                sp: Split::default(),
            });
        }
        Ok(())
    }

    /// A PES packet of stream `key` met while reading (payload `plen`
    /// bytes at `off`): `None` when it is not a known stream's, is empty,
    /// or is cut into frames (then `self.cut` holds it); else the track,
    /// the bytes there are and whether the input cuts them.
    fn take_pes(
        &mut self,
        len: u64,
        key: u16,
        (off, plen): (u64, u64),
        pts: Option<i64>,
    ) -> Option<(usize, usize, bool)> {
        let i = self.streams.iter().position(|s| s.id == key)?;
        let avail = len.saturating_sub(off);
        let truncated = plen > avail;
        let n = plen.min(avail) as usize;
        if n == 0 {
            return None;
        }
        let s = self.streams.get_mut(i)?;
        if s.sp.kind == split::Kind::None {
            return Some((s.track, n, truncated));
        }
        s.sp.begin(pts);
        self.cut = Some(Cut {
            stream: i,
            track: s.track,
            input: Some(off),
            at: self.base,
            len: n,
            pos: off,
            done: 0,
            last: off.saturating_add(n as u64) >= len,
        });
        None
    }
}

impl FormatDemuxer for PsDemuxer {
    fn open<S: Source>(src: &mut S, ctx: &mut Context) -> Result<Self> {
        let first = next_start(src, 0, ctx.limits.resync_bytes)?.ok_or(Error::malformed(
            0,
            &"mpegps: no start code within Limits::resync_bytes (ISO/IEC 13818-1 §2.5.3)",
        ))?;
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
        let mut walked = 0u32;
        let (mut start, mut last): (Option<i64>, Option<i64>) = (None, None);
        while at < limit {
            walked += 1;
            if walked > ctx.limits.max_top_level {
                break;
            }
            let Some(u) = d.unit(src, at)? else { break };
            match u {
                Unit::Skip(n) => at += n.max(1),
                Unit::Pes(key, off, plen, pts, _, total) => {
                    let media = codec_for(key).is_some();
                    // The front window: streams that start within
                    // `FRONT_SPAN` of the first time stamp.
                    if let (Some(s0), Some(p)) = (start, pts) {
                        if media && super::ticks_between(s0, p) > super::FRONT_SPAN {
                            break;
                        }
                    }
                    if media {
                        start = match (start, pts) {
                            (Some(a), Some(b)) => Some(a.min(b)),
                            (a, b) => a.or(b),
                        };
                        last = last.max(pts);
                    }
                    d.add_stream(src, ctx, key, (off, plen, at))?;
                    at += total;
                }
            }
            // Realign on the next start code when a unit is followed by junk.
            match realign(src, at, ctx.limits.resync_bytes)? {
                Some(n) => at = n,
                None => break,
            }
        }
        if d.streams.is_empty() {
            return Err(Error::new(
                ErrorKind::Malformed,
                first,
                &"mpegps: no PES packet of an audio or video stream within Limits::probe_bytes \
                 (ISO/IEC 13818-1 §2.4.3.7, Table 2-22)",
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
        let mut steps = 0u64;
        loop {
            steps += 1;
            if steps > MAX_WALK_STEPS {
                return Err(Error::malformed(
                    self.pos,
                    &"mpegps: the unit walk does not advance (ISO/IEC 13818-1 §2.5.3)",
                ));
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
            let (key, off, plen, pts, dts) = match u {
                Unit::Skip(n) => {
                    self.pos = at + n.max(1);
                    continue;
                }
                Unit::Pes(key, off, plen, pts, dts, total) => {
                    self.pos = at + total;
                    (key, off, plen, pts, dts)
                }
            };
            let Some((track, n, truncated)) = self.take_pes(len, key, (off, plen), pts) else {
                continue;
            };
            let codec = ctx.tracks.get(track).map(|t| t.codec).unwrap_or_default();
            let data = split::input_bytes(src, off, n, self.base)?;
            let flags = PacketFlags {
                truncated,
                ..PacketFlags::keyframe(super::is_keyframe(codec, data))
            };
            return Ok(Some(
                Packet::contiguous(track, off, data)
                    .with_times(pts, dts.or(pts), None)
                    .with_flags(flags),
            ));
        }
    }

    fn seek<S: Source>(&mut self, src: &mut S, ctx: &mut Context, track: usize, ts: i64) -> Result<()> {
        // Bisection on byte offset by the time stamps of the track's PES.
        let Some(key) = self.streams.iter().find(|s| s.track == track).map(|s| s.id) else {
            return Err(Error::new(
                ErrorKind::InvalidArgument,
                0,
                &"mpegps seek: no such track (no PES of that stream met while probing)",
            ));
        };
        let (mut lo, mut hi) = (self.first, src.len());
        let mut steps = 0;
        while hi > lo + SEEK_CLOSE && steps < MAX_SEEK_STEPS {
            steps += 1;
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
        let mut walked = 0u32;
        while at < len && walked < ctx.limits.max_top_level {
            walked += 1;
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
            match realign(src, at, ctx.limits.resync_bytes)? {
                Some(n) => at = n,
                None => break,
            }
        }
        Ok(last)
    }

    /// The time stamp and offset of the first PES of `key` at or after
    /// `from` and before `until` that carries one, within
    /// `Limits::resync_bytes` (and [`MAX_PTS_SCAN_UNITS`] units).
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
        let mut walked = 0;
        while at < stop && walked < MAX_PTS_SCAN_UNITS {
            walked += 1;
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
            match realign(src, at, stop.saturating_sub(at))? {
                Some(n) => at = n,
                None => break,
            }
        }
        Ok(None)
    }
}
