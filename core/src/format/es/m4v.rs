//! MPEG-4 Part 2 video elementary streams (`.m4v`, ffmpeg `-f m4v`).
//!
//! References: ISO/IEC 14496-2 §6.2 (start codes, Table 6-3; video object
//! layer §6.2.3; VOP §6.2.5); see [`crate::codec::mpeg4v`].
//!
//! Packets are frames as ffmpeg's `mpeg4video` parser splits them: from a
//! frame's first byte (headers included) to the first start code after its
//! VOP start code. Timestamps as ffprobe gives them for raw MPEG-4 video:
//! pts from each VOP's time (`modulo_time_base` and `vop_time_increment`
//! over the VOL's `vop_time_increment_resolution`) in 1/1 200 000 s; dts
//! equal to pts for low-delay streams, else one frame behind decoding order.
//! Keyframes: I-VOPs.

use super::scan;
use crate::codec::mpeg4v::{FrameSplitter, Mpeg4State};
use crate::error::{Error, Result};
use crate::format::traits::{Context, FormatDemuxer};
use crate::limits::Limits;
use crate::source::Source;
use crate::types::{div_u128, Codec, Packet, PacketFlags, Rational, Track, TrackKind};

/// ffmpeg's time base for raw video streams.
pub const TIME_BASE_HZ: u32 = 1_200_000;
const CHUNK: usize = 4096;
/// Bytes of a frame read to parse its headers.
const HEAD: usize = 512;

/// Demuxer state for an MPEG-4 Part 2 video elementary stream.
#[derive(Debug, Clone)]
pub struct M4vDemuxer {
    pos: u64,
    end: u64,
    index: u64,
    frame_duration: u64,
    state: Mpeg4State,
}

/// Whether the input starts (after at most a few zero bytes) with a visual
/// object sequence, visual object or video object layer start code, and a
/// VOL with a time resolution and a VOP follow within 64 KiB.
pub fn probe<S: Source>(src: &mut S, limits: &Limits) -> Result<bool> {
    let mut h = [0u8; 8];
    let n = src.read_at(0, &mut h)?;
    let h = h.get(..n).unwrap_or(&[]);
    let Some(sc) = h.windows(3).position(|w| w == [0, 0, 1]) else {
        return Ok(false);
    };
    let first = h.get(sc + 3).copied().unwrap_or(0xFF);
    if h.iter().take(sc).any(|&b| b != 0) || !(first == 0xB0 || first <= 0x2F) {
        return Ok(false);
    }
    let limit = (64u64 << 10).min(limits.probe_bytes);
    let Some(vol) = scan(src, 0, limit, 4, |b| {
        b.starts_with(&[0, 0, 1]) && b.get(3).is_some_and(|&x| (0x20..=0x2F).contains(&x))
    })?
    else {
        return Ok(false);
    };
    let mut head = [0u8; 64];
    let n = src.read_at(vol, &mut head)?;
    let mut st = Mpeg4State::default();
    st.parse_frame(head.get(..n).unwrap_or(&[]));
    if st.resolution == 0 {
        return Ok(false);
    }
    Ok(scan(src, vol, limit, 4, |b| b.starts_with(&[0, 0, 1, 0xB6]))?.is_some())
}

impl M4vDemuxer {
    fn frame_end<S: Source>(&self, src: &mut S, at: u64, max: u64) -> Result<(u64, bool)> {
        let mut sp = FrameSplitter::default();
        let mut buf = [0u8; CHUNK];
        let mut off = at;
        let stop = at.saturating_add(max).min(self.end);
        while off < stop {
            let want = ((stop - off) as usize).min(CHUNK);
            let n = src.read_at(off, buf.get_mut(..want).unwrap_or(&mut []))?;
            if n == 0 {
                break;
            }
            if let Some(b) = sp.feed(buf.get(..n).unwrap_or(&[]), off).filter(|&b| b > at) {
                return Ok((b, false));
            }
            off += n as u64;
        }
        if off >= self.end {
            // The last frame, unless the input was cut: a frame whose VOP
            // header is not all there is not given, and a cut start code at
            // the very end is left out (ffmpeg keeps both).
            if sp.after_vop() < 4 {
                return Err(Error::truncated(
                    self.end,
                    &"m4v frame: input ends before its VOP header (ISO/IEC 14496-2 §6.2.5)",
                ));
            }
            let k = super::cut_start_code(src, at, self.end)?;
            Ok((self.end - k, k > 0))
        } else {
            Err(Error::limit(
                at,
                &"m4v frame: larger than Limits::max_packet (ISO/IEC 14496-2 §6.2.5)",
            ))
        }
    }
}

impl FormatDemuxer for M4vDemuxer {
    fn open<S: Source>(src: &mut S, ctx: &mut Context) -> Result<Self> {
        let end = src.len();
        let vol = scan(src, 0, 64 << 10, 4, |b| {
            b.starts_with(&[0, 0, 1]) && b.get(3).is_some_and(|&x| (0x20..=0x2F).contains(&x))
        })?
        .ok_or(Error::malformed(
            0,
            &"m4v: no video object layer header (ISO/IEC 14496-2 §6.2.3)",
        ))?;
        let mut head = [0u8; 64];
        let n = src.read_at(vol, &mut head)?;
        let mut st = Mpeg4State::default();
        st.parse_frame(head.get(..n).unwrap_or(&[]));
        // ffmpeg's frame rate: vop_time_increment_resolution over the fixed
        // increment, or over 1 when the rate is not fixed.
        let inc = st.fixed_increment.filter(|&i| i > 0).unwrap_or(1) as u64;
        let frame_duration = if st.resolution > 0 {
            (TIME_BASE_HZ as u64 * inc / st.resolution as u64).max(1)
        } else {
            if n < head.len() && vol.saturating_add(n as u64) >= end {
                // The end of the input cuts the VOL header before its
                // vop_time_increment_resolution: 25 fps, where a longer
                // input times every frame by the VOL (a `truncation` find).
                ctx.diags.report("m4v.unconfirmed-rate", vol);
            }
            (TIME_BASE_HZ / 25) as u64
        };
        let track = Track {
            id: 0,
            kind: TrackKind::Video,
            codec: Codec::Mpeg4,
            time_base: Rational::new(1, TIME_BASE_HZ),
            width: st.width,
            height: st.height,
            ..Track::default()
        };
        ctx.add_track(track, vol);
        Ok(M4vDemuxer {
            pos: 0,
            end,
            index: 0,
            frame_duration,
            state: Mpeg4State::default(),
        })
    }

    fn next_packet<'s, S: Source>(&mut self, src: &'s mut S, ctx: &mut Context) -> Result<Option<Packet<'s>>> {
        if self.pos >= self.end {
            return Ok(None);
        }
        let at = self.pos;
        let (next, cut) = match self.frame_end(src, at, ctx.limits.max_packet as u64) {
            Ok(n) => n,
            Err(e) => {
                self.pos = self.end;
                return Err(e);
            }
        };
        self.pos = if cut { self.end } else { next };
        let index = self.index;
        self.index += 1;
        let data = src.bytes(at, (next - at) as usize)?;
        let vop = self.state.parse_frame(data.get(..data.len().min(HEAD)).unwrap_or(&[]));
        let res = self.state.resolution as u64;
        let pts = match vop {
            Some(v) if res > 0 => {
                Some(div_u128(v.time as u128 * TIME_BASE_HZ as u128 + res as u128 / 2, res as u128) as i64)
            }
            _ => None,
        };
        let dts = if self.state.low_delay {
            pts
        } else {
            Some((index as i64 - 1) * self.frame_duration as i64)
        };
        Ok(Some(
            Packet::contiguous(0, at, data)
                .with_times(pts, dts, Some(self.frame_duration))
                .with_flags(PacketFlags {
                    truncated: cut,
                    ..PacketFlags::keyframe(vop.is_some_and(|v| v.coding_type == 0))
                }),
        ))
    }

    fn seek<S: Source>(&mut self, src: &mut S, ctx: &mut Context, _track: usize, ts: i64) -> Result<()> {
        // Replay the headers from the start (VOP times depend on them) and
        // stop at the last I-VOP at or before `ts`.
        let mut st = Mpeg4State::default();
        let (mut pos, mut index) = (0u64, 0u64);
        let mut best = (0u64, 0u64, Mpeg4State::default());
        while pos < self.end {
            let Ok((next, _)) = self.frame_end(src, pos, ctx.limits.max_packet as u64) else {
                break;
            };
            let mut head = [0u8; HEAD];
            let n = src.read_at(pos, &mut head)?;
            let before = st;
            let vop = st.parse_frame(head.get(..n).unwrap_or(&[]));
            let res = st.resolution.max(1) as u64;
            let t = vop.map(|v| div_u128(v.time as u128 * TIME_BASE_HZ as u128, res as u128) as i64);
            if t.is_some_and(|t| t > ts) && index > 0 {
                break;
            }
            if vop.is_some_and(|v| v.coding_type == 0) {
                best = (pos, index, before);
            }
            pos = next;
            index += 1;
        }
        (self.pos, self.index, self.state) = best;
        Ok(())
    }
}
