//! AV1 low-overhead bitstream format (AV1 spec §5.2, `.obu`, ffmpeg `-f
//! obu`): OBUs with size fields, one after another.
//!
//! Packets are temporal units: from a temporal delimiter OBU to the next
//! (§7.5), as ffmpeg's `obu` demuxer gives them. Like ffprobe, timestamps
//! count frames at the sequence header's timing info (25 fps when absent)
//! in a 1/1 200 000 time base. Keyframes: a temporal unit whose first frame
//! header is a key frame (§5.9.2).

use super::ivf::{av1_unit, MAX_UNIT_OBU_STEPS};
use crate::codec::av1::{leb128, obu, write_leb128, ObuHeader, SequenceHeader};
use crate::error::{Error, Result};
use crate::format::traits::{Context, FormatDemuxer};
use crate::limits::Limits;
use crate::source::Source;
use crate::types::{Codec, Packet, PacketFlags, Rational, Track, TrackKind};

/// ffmpeg's time base for raw video streams.
pub const TIME_BASE_HZ: u32 = 1_200_000;
/// Most OBUs walked in one temporal unit.
const MAX_OBUS: u32 = 1 << 16;
/// Most OBUs the low-overhead probe reads from the start (besides
/// `Limits::probe_bytes`): bounds the probe.
const PROBE_MAX_OBUS: u32 = 64;
/// Most OBUs read from the start looking for the sequence header (which
/// AV1 §7.5 puts in the first temporal unit, after a temporal delimiter):
/// bounds the search in `open`.
const MAX_HEAD_OBUS: u32 = 64;
/// Steps (frame units and OBUs counted together) past which the Annex B
/// probe gives up on a temporal unit when it reaches a frame unit: with
/// [`PROBE_MAX_UNIT_STEPS`], bounds the probe of one temporal unit.
const PROBE_MAX_FRAME_UNIT_STEPS: u32 = 64;
/// Steps (frame units and OBUs counted together) past which the Annex B
/// probe gives up on a temporal unit when it reaches an OBU.
const PROBE_MAX_UNIT_STEPS: u32 = 256;
/// Temporal units the Annex B probe wants to see in a row.
const PROBE_UNITS: u32 = 3;

/// Demuxer state for an AV1 OBU stream.
#[derive(Debug, Clone)]
pub struct ObuDemuxer {
    pos: u64,
    end: u64,
    frame_duration: u64,
    pts: i64,
    seq: Option<SequenceHeader>,
}

/// Reads the OBU header at `at`: the header and the offset after the OBU.
fn obu_at<S: Source>(src: &mut S, at: u64) -> Result<Option<(ObuHeader, u64)>> {
    let mut b = [0u8; 10];
    let n = src.read_at(at, &mut b)?;
    let Some(h) = ObuHeader::parse(b.get(..n).unwrap_or(&[])) else {
        return Ok(None);
    };
    let Some(size) = h.size else { return Ok(None) };
    Ok(Some((h, at + h.header_len as u64 + size)))
}

/// Whether the input is a low-overhead AV1 stream: it starts with a
/// temporal delimiter OBU (`12 00`), then a sequence header, and the OBUs
/// chain with valid headers.
pub fn probe<S: Source>(src: &mut S, limits: &Limits) -> Result<bool> {
    let len = src.len();
    let mut at = 0u64;
    let mut seen_seq = false;
    let mut frames = 0;
    for i in 0..PROBE_MAX_OBUS {
        if at >= len || at > limits.probe_bytes {
            break;
        }
        let Some((h, next)) = obu_at(src, at)? else {
            return Ok(false);
        };
        if h.obu_type == 0 || (9..=14).contains(&h.obu_type) || next > len {
            return Ok(false);
        }
        if i == 0 && (h.obu_type != obu::TEMPORAL_DELIMITER || h.size != Some(0)) {
            return Ok(false);
        }
        if h.obu_type == obu::SEQUENCE_HEADER {
            let mut b = [0u8; 64];
            let n = src.read_at(at + h.header_len as u64, &mut b)?;
            if SequenceHeader::parse(b.get(..n).unwrap_or(&[])).is_none() {
                return Ok(false);
            }
            seen_seq = true;
        }
        if matches!(h.obu_type, obu::FRAME | obu::FRAME_HEADER | obu::TILE_GROUP) {
            frames += 1;
            if seen_seq {
                return Ok(true);
            }
        }
        at = next;
    }
    Ok(seen_seq && (frames > 0 || at == len))
}

impl FormatDemuxer for ObuDemuxer {
    fn open<S: Source>(src: &mut S, ctx: &mut Context) -> Result<Self> {
        let end = src.len();
        let mut seq = None;
        let mut at = 0;
        for _ in 0..MAX_HEAD_OBUS {
            let Some((h, next)) = obu_at(src, at)? else { break };
            if h.obu_type == obu::SEQUENCE_HEADER {
                let mut b = [0u8; 64];
                let n = src.read_at(at + h.header_len as u64, &mut b)?;
                seq = SequenceHeader::parse(b.get(..n).unwrap_or(&[]));
                break;
            }
            at = next;
        }
        let Some(s) = seq else {
            return Err(Error::malformed(0, &"obu: no sequence header OBU (AV1 §5.5)"));
        };
        let frame_duration = match s.timing {
            Some((units, scale)) => (TIME_BASE_HZ as u64 * units as u64 / scale as u64).max(1),
            None => (TIME_BASE_HZ / 25) as u64,
        };
        let track = Track {
            id: 0,
            kind: TrackKind::Video,
            codec: Codec::Av1,
            time_base: Rational::new(1, TIME_BASE_HZ),
            width: s.width,
            height: s.height,
            ..Track::default()
        };
        ctx.add_track(track, 0);
        Ok(ObuDemuxer {
            pos: 0,
            end,
            frame_duration,
            pts: 0,
            seq: None,
        })
    }

    fn next_packet<'s, S: Source>(&mut self, src: &'s mut S, ctx: &mut Context) -> Result<Option<Packet<'s>>> {
        if self.pos >= self.end {
            return Ok(None);
        }
        let at = self.pos;
        let mut next = at;
        let mut n = 0u32;
        while next < self.end {
            let Some((h, after)) = obu_at(src, next)? else {
                ctx.diags.report("obu.bad-obu-header", next);
                break;
            };
            if n > 0 && h.obu_type == obu::TEMPORAL_DELIMITER {
                break;
            }
            n += 1;
            if n > MAX_OBUS || after - at > ctx.limits.max_packet as u64 {
                self.pos = self.end;
                return Err(Error::limit(
                    at,
                    &"obu temporal unit: more than MAX_OBUS OBUs or larger than Limits::max_packet (AV1 §7.5)",
                ));
            }
            next = after;
        }
        if next > self.end {
            self.pos = self.end;
            return Err(Error::truncated(self.end, &"obu: input ends inside an OBU (AV1 §5.3)"));
        }
        if next == at {
            self.pos = self.end;
            return Err(Error::malformed(
                at,
                &"obu header: not valid, the stream makes no progress (AV1 §5.3.1)",
            ));
        }
        self.pos = next;
        let pts = self.pts;
        self.pts += self.frame_duration as i64;
        let mut seq = self.seq;
        let data = src.bytes(at, (next - at) as usize)?;
        let key = av1_unit(data, &mut seq);
        self.seq = seq;
        Ok(Some(
            Packet::contiguous(0, at, data)
                .with_times(Some(pts), Some(pts), Some(self.frame_duration))
                .with_flags(PacketFlags::keyframe(key)),
        ))
    }

    fn seek<S: Source>(&mut self, src: &mut S, ctx: &mut Context, _track: usize, ts: i64) -> Result<()> {
        // Walk the temporal units from the start to the last key frame at or
        // before the unit holding `ts`; only each unit's first bytes are read.
        let target = ts.max(0) as u64 / self.frame_duration.max(1);
        let (mut pos, mut index, mut seq) = (0u64, 0u64, None);
        let mut best = (0u64, 0u64, None);
        while pos < self.end && index <= target {
            let mut next = pos;
            let mut n = 0u32;
            while next < self.end {
                let Some((h, after)) = obu_at(src, next)? else { break };
                if n > 0 && h.obu_type == obu::TEMPORAL_DELIMITER {
                    break;
                }
                n += 1;
                if n > MAX_OBUS || after - pos > ctx.limits.max_packet as u64 {
                    break;
                }
                next = after;
            }
            if next <= pos {
                break;
            }
            let before = seq;
            let mut head = [0u8; 256];
            let k = src.read_at(pos, head.get_mut(..((next - pos).min(256) as usize)).unwrap_or(&mut []))?;
            if av1_unit(head.get(..k).unwrap_or(&[]), &mut seq) {
                best = (pos, index, before);
            }
            pos = next;
            index += 1;
        }
        (self.pos, self.seq) = (best.0, best.2);
        self.pts = (best.1 * self.frame_duration) as i64;
        Ok(())
    }
}

/// Walks the OBUs of one Annex B temporal unit's content (frame units of
/// length-prefixed OBUs, AV1 spec Annex B.2): finds a sequence header and
/// whether the first frame header is a key frame.
fn annexb_unit_key(data: &[u8], seq: &mut Option<SequenceHeader>) -> bool {
    let mut at = 0usize;
    let mut steps = 0;
    while at < data.len() && steps < MAX_UNIT_OBU_STEPS {
        steps += 1;
        let Some((fu, n)) = data.get(at..).and_then(leb128) else {
            return false;
        };
        let fu_end = (at + n).saturating_add(fu as usize).min(data.len());
        at += n;
        while at < fu_end && steps < MAX_UNIT_OBU_STEPS {
            steps += 1;
            let Some((len, n)) = data.get(at..).and_then(leb128) else {
                return false;
            };
            let obu_start = at + n;
            let obu_end = obu_start.saturating_add(len as usize).min(fu_end);
            at = obu_end;
            let Some(obu) = data.get(obu_start..obu_end) else {
                return false;
            };
            let Some(h) = ObuHeader::parse(obu) else { return false };
            let payload = obu.get(h.header_len..).unwrap_or(&[]);
            match h.obu_type {
                obu::SEQUENCE_HEADER => {
                    if let Some(s) = SequenceHeader::parse(payload) {
                        *seq = Some(s);
                    }
                }
                obu::FRAME | obu::FRAME_HEADER => {
                    let s = seq.unwrap_or_default();
                    return crate::codec::av1::is_key_frame(payload, &s).unwrap_or(false);
                }
                _ => {}
            }
        }
        at = fu_end;
    }
    false
}

/// Reads the `leb128()` at `at` (up to 8 bytes): value and length.
fn leb_at<S: Source>(src: &mut S, at: u64) -> Result<Option<(u64, usize)>> {
    let mut b = [0u8; 8];
    let n = src.read_at(at, &mut b)?;
    Ok(leb128(b.get(..n).unwrap_or(&[])))
}

/// Checks the Annex B temporal unit at `at`: its frame units and OBU
/// lengths nest exactly and its first OBU is a temporal delimiter. Returns
/// the offset after it and whether it holds a sequence header.
fn annexb_unit_ok<S: Source>(src: &mut S, at: u64) -> Result<Option<(u64, bool)>> {
    let Some((tu, n)) = leb_at(src, at)? else {
        return Ok(None);
    };
    let start = at + n as u64;
    let end = start + tu;
    if tu == 0 || end > src.len() {
        return Ok(None);
    }
    let mut p = start;
    let mut first = true;
    let mut seq = false;
    let mut guard = 0;
    while p < end {
        guard += 1;
        let Some((fu, n)) = leb_at(src, p)? else {
            return Ok(None);
        };
        let fu_end = p + n as u64 + fu;
        if fu == 0 || fu_end > end || guard > PROBE_MAX_FRAME_UNIT_STEPS {
            return Ok(None);
        }
        p += n as u64;
        while p < fu_end {
            guard += 1;
            let Some((len, n)) = leb_at(src, p)? else {
                return Ok(None);
            };
            let o = p + n as u64;
            if len == 0 || o + len > fu_end || guard > PROBE_MAX_UNIT_STEPS {
                return Ok(None);
            }
            let mut hb = [0u8; 10];
            let k = src.read_at(o, &mut hb)?;
            let Some(h) = ObuHeader::parse(hb.get(..k).unwrap_or(&[])) else {
                return Ok(None);
            };
            if first && h.obu_type != obu::TEMPORAL_DELIMITER {
                return Ok(None);
            }
            if h.obu_type == 0 || (9..=14).contains(&h.obu_type) {
                return Ok(None);
            }
            seq |= h.obu_type == obu::SEQUENCE_HEADER;
            first = false;
            p = o + len;
        }
    }
    Ok((p == end).then_some((end, seq)))
}

/// Whether the input is an AV1 Annex B stream: its first temporal units
/// nest exactly (temporal unit, frame unit and OBU lengths), start with a
/// temporal delimiter, and the first holds a sequence header.
pub fn probe_annexb<S: Source>(src: &mut S, limits: &Limits) -> Result<bool> {
    let Some((mut at, seq)) = annexb_unit_ok(src, 0)? else {
        return Ok(false);
    };
    if !seq {
        return Ok(false);
    }
    let mut units = 1;
    while units < PROBE_UNITS && at < src.len() && at < limits.probe_bytes {
        match annexb_unit_ok(src, at)? {
            Some((next, _)) => at = next,
            None => return Ok(false),
        }
        units += 1;
    }
    Ok(true)
}

/// Demuxer state for an AV1 Annex B stream (ffmpeg's `av1` demuxer).
///
/// Each packet is one temporal unit rewritten as low-overhead OBUs, as
/// ffmpeg gives it: the OBUs are joined in the caller's scratch, each with
/// a size field (so this format needs scratch as large as a temporal unit,
/// also in slice mode). ffmpeg re-serialises headers through its CBS layer;
/// where a stream stores headers with padding, its bytes differ from ours:
/// see `docs/formats/obu.md`.
#[derive(Debug, Clone)]
pub struct Av1AnnexBDemuxer {
    pos: u64,
    end: u64,
    frame_duration: u64,
    pts: i64,
    seq: Option<SequenceHeader>,
}

impl FormatDemuxer for Av1AnnexBDemuxer {
    fn open<S: Source>(src: &mut S, ctx: &mut Context) -> Result<Self> {
        let end = src.len();
        let (tu, n) = leb_at(src, 0)?.ok_or(Error::malformed(
            0,
            &"av1 annex b: temporal_unit_size not a valid leb128 (AV1 Annex B.2)",
        ))?;
        let len = tu.min(end.saturating_sub(n as u64)).min(1 << 20) as usize;
        let mut seq = None;
        {
            let data = src.bytes(n as u64, len)?;
            annexb_unit_key(data, &mut seq);
        }
        let s = seq.unwrap_or_default();
        let frame_duration = match s.timing {
            Some((units, scale)) => (TIME_BASE_HZ as u64 * units as u64 / scale as u64).max(1),
            None => (TIME_BASE_HZ / 25) as u64,
        };
        let track = Track {
            id: 0,
            kind: TrackKind::Video,
            codec: Codec::Av1,
            time_base: Rational::new(1, TIME_BASE_HZ),
            width: s.width,
            height: s.height,
            ..Track::default()
        };
        ctx.add_track(track, 0);
        Ok(Av1AnnexBDemuxer {
            pos: 0,
            end,
            frame_duration,
            pts: 0,
            seq: None,
        })
    }

    fn next_packet<'s, S: Source>(&mut self, src: &'s mut S, ctx: &mut Context) -> Result<Option<Packet<'s>>> {
        if self.pos >= self.end {
            return Ok(None);
        }
        let at = self.pos;
        let Some((tu, n)) = leb_at(src, at)? else {
            self.pos = self.end;
            return Err(Error::malformed(
                at,
                &"av1 annex b: temporal_unit_size not a valid leb128 (AV1 Annex B.2)",
            ));
        };
        let body = at + n as u64;
        if tu > ctx.limits.max_packet as u64 {
            self.pos = self.end;
            return Err(Error::limit(
                at,
                &"av1 annex b temporal unit: larger than Limits::max_packet (AV1 Annex B.2)",
            ));
        }
        if body + tu > self.end {
            self.pos = self.end;
            return Err(Error::truncated(
                self.end,
                &"av1 annex b temporal unit: input ends inside it (AV1 Annex B.2)",
            ));
        }
        self.pos = body + tu;
        let pts = self.pts;
        self.pts += self.frame_duration as i64;
        let w = convert_unit(src, body, body + tu)?;
        let mut seq = self.seq;
        let shared: &'s S = src;
        let data = shared.joined(w)?;
        let key = super::ivf::av1_unit(data, &mut seq);
        self.seq = seq;
        Ok(Some(
            Packet::joined(0, Some(body), data)
                .with_times(Some(pts), Some(pts), Some(self.frame_duration))
                .with_flags(PacketFlags::keyframe(key)),
        ))
    }

    fn seek<S: Source>(&mut self, src: &mut S, _ctx: &mut Context, _track: usize, ts: i64) -> Result<()> {
        // Walk the temporal unit sizes to the last key frame at or before the
        // unit holding `ts`; only each unit's first bytes are read.
        let target = ts.max(0) as u64 / self.frame_duration.max(1);
        let (mut pos, mut index, mut seq) = (0u64, 0u64, None);
        let mut best = (0u64, 0u64, None);
        while pos < self.end && index <= target {
            let Some((tu, n)) = leb_at(src, pos)? else { break };
            let body = pos + n as u64;
            if tu == 0 || body + tu > self.end {
                break;
            }
            let before = seq;
            let mut head = [0u8; 256];
            let k = src.read_at(body, head.get_mut(..(tu.min(256) as usize)).unwrap_or(&mut []))?;
            if annexb_unit_key(head.get(..k).unwrap_or(&[]), &mut seq) {
                best = (pos, index, before);
            }
            pos = body + tu;
            index += 1;
        }
        (self.pos, self.seq) = (best.0, best.2);
        self.pts = (best.1 * self.frame_duration) as i64;
        Ok(())
    }
}

/// The length of `len` bytes at `at` without their trailing zero bytes.
fn last_nonzero<S: Source>(src: &mut S, at: u64, len: u64) -> Result<u64> {
    let mut end = len;
    let mut buf = [0u8; 64];
    while end > 0 {
        let n = end.min(64);
        let chunk = buf.get_mut(..n as usize).unwrap_or(&mut []);
        src.read_exact_at(at + end - n, chunk)?;
        match chunk.iter().rposition(|&b| b != 0) {
            Some(i) => return Ok(end - n + i as u64 + 1),
            None => end -= n,
        }
    }
    Ok(0)
}

/// Rewrites the Annex B temporal unit content in `start..end` as
/// low-overhead OBUs (each header with `obu_has_size_field` set and a
/// minimal `leb128` size, AV1 §5.3) into scratch, as ffmpeg does; returns
/// the bytes written.
fn convert_unit<S: Source>(src: &mut S, start: u64, end: u64) -> Result<usize> {
    let mut w = 0usize;
    let mut p = start;
    let mut guard = 0u32;
    while p < end {
        let (fu, n) = leb_at(src, p)?.ok_or(Error::malformed(
            p,
            &"av1 annex b: frame_unit_size not a valid leb128 (AV1 Annex B.2)",
        ))?;
        let fu_end = (p + n as u64).saturating_add(fu).min(end);
        p += n as u64;
        while p < fu_end {
            guard += 1;
            if guard > MAX_OBUS {
                return Err(Error::limit(
                    p,
                    &"av1 annex b temporal unit: more than MAX_OBUS OBUs (AV1 Annex B.2)",
                ));
            }
            let (len, n) = leb_at(src, p)?.ok_or(Error::malformed(
                p,
                &"av1 annex b: obu_length not a valid leb128 (AV1 Annex B.2)",
            ))?;
            let o = p + n as u64;
            let o_end = o.saturating_add(len);
            if o_end > fu_end || len == 0 {
                return Err(Error::malformed(
                    p,
                    &"av1 annex b: obu_length zero or past its frame unit (AV1 Annex B.2)",
                ));
            }
            let mut hb = [0u8; 10];
            let k = src.read_at(o, hb.get_mut(..(len.min(10) as usize)).unwrap_or(&mut []))?;
            let h = ObuHeader::parse(hb.get(..k).unwrap_or(&[]))
                .ok_or(Error::malformed(o, &"av1 annex b: OBU header not valid (AV1 §5.3.1)"))?;
            let base = 1 + h.extension as usize;
            let (mut pay, mut pay_len) = match h.size {
                Some(s) => (
                    o + h.header_len as u64,
                    s.min(o_end.saturating_sub(o + h.header_len as u64)),
                ),
                None => (o + base as u64, len.saturating_sub(base as u64)),
            };
            // ffmpeg's CBS re-serialises the OBUs it parses: trailing zero
            // bytes after the trailing bits are dropped, and a metadata
            // type is rewritten as a minimal leb128.
            let mut meta = [0u8; 8];
            let mut meta_len = 0usize;
            if matches!(
                h.obu_type,
                obu::SEQUENCE_HEADER | obu::FRAME_HEADER | obu::METADATA | obu::REDUNDANT_FRAME_HEADER | obu::PADDING
            ) {
                pay_len = last_nonzero(src, pay, pay_len)?;
                if h.obu_type == obu::METADATA {
                    if let Some((v, k)) = leb_at(src, pay)?.filter(|&(_, k)| k as u64 <= pay_len) {
                        meta_len = write_leb128(v, &mut meta);
                        pay += k as u64;
                        pay_len -= k as u64;
                    }
                }
            }
            let mut head = [0u8; 10];
            if let (Some(d), Some(s)) = (head.get_mut(..base), hb.get(..base)) {
                d.copy_from_slice(s);
            }
            if let Some(first) = head.first_mut() {
                *first |= 0x02;
            }
            let mut leb = [0u8; 8];
            let m = write_leb128(pay_len + meta_len as u64, &mut leb);
            if let (Some(d), Some(s)) = (head.get_mut(base..base + m), leb.get(..m)) {
                d.copy_from_slice(s);
            }
            src.put(w, head.get(..base + m).unwrap_or(&[]))?;
            w += base + m;
            src.put(w, meta.get(..meta_len).unwrap_or(&[]))?;
            w += meta_len;
            src.gather(pay, pay_len as usize, w)?;
            w += pay_len as usize;
            p = o_end;
        }
        p = fu_end;
    }
    Ok(w)
}

#[cfg(test)]
mod tests {
    use crate::{Demuxer, SliceSource};

    /// A temporal delimiter, a reduced still-picture sequence header
    /// (160x120) and a frame OBU, twice.
    const TU: [u8; 2 + 7 + 4] = [
        0x12, 0x00, // temporal delimiter
        0x0A, 0x05, 0x08, 0x1D, 0xE7, 0xDD, 0xC0, // sequence header
        0x32, 0x02, 0x10, 0x00, // frame
    ];

    #[test]
    fn temporal_units_are_packets() {
        let mut f = [0u8; 26];
        f[..13].copy_from_slice(&TU);
        f[13..].copy_from_slice(&TU);
        let mut s = SliceSource::new(&f);
        assert!(super::probe(&mut s, &crate::Limits::default()).unwrap());
        let mut d = Demuxer::open(SliceSource::new(&f), None).unwrap();
        assert_eq!(d.format(), crate::FormatKind::Obu);
        assert_eq!((d.tracks()[0].width, d.tracks()[0].height), (160, 120));
        let p = d.next_packet().unwrap().unwrap();
        assert_eq!((p.data.len(), p.pts, p.flags.keyframe), (13, Some(0), true));
        let p = d.next_packet().unwrap().unwrap();
        assert_eq!((p.data.len(), p.pts), (13, Some(48_000)));
        assert!(d.next_packet().unwrap().is_none());
    }
}
