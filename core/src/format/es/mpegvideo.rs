//! MPEG-1 and MPEG-2 video elementary streams (`.m1v`, `.m2v`, `.mpv`).
//!
//! References: ISO/IEC 11172-2 §2.4.2 and ISO/IEC 13818-2 §6.2; see
//! [`crate::codec::mpegvideo`].
//!
//! Packets are frames (or field pairs) as ffmpeg's `mpegvideo` parser
//! splits them: a frame runs to the first non-slice start code after its
//! slices. Like ffprobe on raw streams, packets carry no timestamps; each
//! lasts one frame at the sequence header's frame rate in a 1/1 200 000 time
//! base. Keyframes: frames with an I picture.

use super::scan;
use crate::codec::mpegvideo::{FrameSplitter, SequenceHeader};
use crate::error::{Error, Result};
use crate::format::traits::{Context, FormatDemuxer};
use crate::limits::Limits;
use crate::source::Source;
use crate::types::{Codec, Packet, PacketFlags, Rational, Track, TrackKind};

/// ffmpeg's time base for raw video streams.
pub const TIME_BASE_HZ: u32 = 1_200_000;
const CHUNK: usize = 4096;

/// Demuxer state for an MPEG video elementary stream.
#[derive(Debug, Clone)]
pub struct MpegVideoDemuxer {
    pos: u64,
    end: u64,
    frame_duration: u64,
    index: u64,
    mpeg2: bool,
    /// ffmpeg's `has_b_frames`: 1 for MPEG-1, `!low_delay` for MPEG-2.
    delayed: bool,
}

/// Whether the input starts with an MPEG video sequence header (after at
/// most a few zero bytes) that parses, followed within the first 64 KiB by
/// a picture start code and a slice.
pub fn probe<S: Source>(src: &mut S, limits: &Limits) -> Result<bool> {
    let mut h = [0u8; 16];
    let n = src.read_at(0, &mut h)?;
    let h = h.get(..n).unwrap_or(&[]);
    let Some(sc) = h.windows(4).position(|w| w == [0, 0, 1, 0xB3]) else {
        return Ok(false);
    };
    if h.iter().take(sc).any(|&b| b != 0) || SequenceHeader::parse(h.get(sc + 4..).unwrap_or(&[])).is_none() {
        return Ok(false);
    }
    let limit = (64u64 << 10).min(limits.probe_bytes);
    let Some(pic) = scan(src, 0, limit, 4, |b| b.starts_with(&[0, 0, 1, 0]))? else {
        return Ok(false);
    };
    Ok(scan(src, pic, limit, 4, |b| {
        b.starts_with(&[0, 0, 1]) && b.get(3).is_some_and(|&x| (1..=0xAF).contains(&x))
    })?
    .is_some())
}

impl FormatDemuxer for MpegVideoDemuxer {
    fn open<S: Source>(src: &mut S, ctx: &mut Context) -> Result<Self> {
        let end = src.len();
        let sc = scan(src, 0, 4096, 4, |b| b.starts_with(&[0, 0, 1, 0xB3]))?.ok_or(Error::malformed(
            0,
            &"mpegvideo: no sequence_header within the first 4 KiB (ISO/IEC 13818-2 §6.2.2.1)",
        ))?;
        let b: [u8; 8] = src.array(sc + 4)?;
        let seq = SequenceHeader::parse(&b).ok_or(Error::malformed(
            sc + 4,
            &"mpegvideo sequence_header: fields not valid (ISO/IEC 13818-2 §6.2.2.1)",
        ))?;
        // MPEG-2 when a sequence extension follows the sequence header.
        let mut after = [0u8; 128];
        let n = src.read_at(sc + 12, &mut after)?;
        let ext = after
            .get(..n)
            .unwrap_or(&[])
            .windows(10)
            .find(|w| w.get(..4) == Some(&[0, 0, 1, 0xB5]) && w.get(4).is_some_and(|x| x >> 4 == 1));
        let mpeg2 = ext.is_some();
        // low_delay: the first bit of the sequence extension's sixth byte.
        let low_delay = ext.and_then(|w| w.get(9)).is_some_and(|x| x >> 7 == 1);
        let (num, den) = seq.frame_rate;
        let frame_duration = (TIME_BASE_HZ as u64 * den as u64 / num.max(1) as u64).max(1);
        let track = Track {
            id: 0,
            kind: TrackKind::Video,
            codec: if mpeg2 { Codec::Mpeg2Video } else { Codec::Mpeg1Video },
            time_base: Rational::new(1, TIME_BASE_HZ),
            width: seq.width,
            height: seq.height,
            bit_rate: seq.bit_rate.saturating_mul(400),
            ..Track::default()
        };
        ctx.add_track(track, sc);
        Ok(MpegVideoDemuxer {
            pos: 0,
            end,
            frame_duration,
            index: 0,
            mpeg2,
            delayed: !low_delay,
        })
    }

    fn next_packet<'s, S: Source>(&mut self, src: &'s mut S, ctx: &mut Context) -> Result<Option<Packet<'s>>> {
        if self.pos >= self.end {
            return Ok(None);
        }
        let at = self.pos;
        let (next, sp, cut) = match self.frame_end(src, at, ctx.limits.max_packet as u64) {
            Ok(x) => x,
            Err(e) => {
                self.pos = self.end;
                return Err(e);
            }
        };
        // A last frame shortened by a cut start code ends the stream.
        self.pos = if cut { self.end } else { next };
        // ffmpeg's timestamps for raw video with a decoding delay: dts counts
        // frames; a B picture shows at its dts; I and P pictures get no pts
        // (but the first MPEG-1 frame shows at 0).
        let dts = (self.index * self.frame_duration) as i64;
        let pts = if !self.delayed || sp.picture_type == 3 || (self.index == 0 && !self.mpeg2) {
            Some(dts)
        } else {
            None
        };
        self.index += 1;
        let data = src.bytes(at, (next - at) as usize)?;
        Ok(Some(
            Packet::contiguous(0, at, data)
                .with_times(pts, Some(dts), Some(self.frame_duration))
                .with_flags(PacketFlags {
                    truncated: cut,
                    ..PacketFlags::keyframe(sp.intra)
                }),
        ))
    }

    fn seek<S: Source>(&mut self, src: &mut S, ctx: &mut Context, _track: usize, ts: i64) -> Result<()> {
        // Walk frames from the start to the last one with an I picture at
        // or before the frame holding `ts` (in decoding order).
        let target = ts.max(0) as u64 / self.frame_duration.max(1);
        let (mut pos, mut index, mut best, mut best_index) = (0u64, 0u64, 0u64, 0u64);
        while pos < self.end && index <= target {
            let Ok((next, sp, _)) = self.frame_end(src, pos, ctx.limits.max_packet as u64) else {
                break;
            };
            if sp.intra {
                (best, best_index) = (pos, index);
            }
            pos = next;
            index += 1;
        }
        self.pos = best;
        self.index = best_index;
        Ok(())
    }
}

impl MpegVideoDemuxer {
    /// Finds where the frame starting at `at` ends, with what the splitter
    /// saw of it.
    fn frame_end<S: Source>(&self, src: &mut S, at: u64, max: u64) -> Result<(u64, FrameSplitter, bool)> {
        let mut sp = FrameSplitter::default();
        let mut buf = [0u8; CHUNK];
        let mut off = at;
        let stop = at.saturating_add(max).min(self.end);
        let mut boundary = None;
        while off < stop {
            let want = ((stop - off) as usize).min(CHUNK);
            let n = src.read_at(off, buf.get_mut(..want).unwrap_or(&mut []))?;
            if n == 0 {
                break;
            }
            if let Some(b) = sp.feed(buf.get(..n).unwrap_or(&[]), off).filter(|&b| b > at) {
                boundary = Some(b);
                break;
            }
            off += n as u64;
        }
        match boundary {
            Some(b) => Ok((b, sp, false)),
            None if off >= self.end => {
                // The last frame, unless the input was cut: a frame that has
                // not reached its slices is not given, and a cut start code
                // at the very end is left out (ffmpeg keeps both; whole
                // inputs are not affected).
                if !sp.in_slices() {
                    return Err(Error::truncated(
                        self.end,
                        &"mpegvideo picture: input ends before its slices (ISO/IEC 13818-2 §6.2.3)",
                    ));
                }
                let k = super::cut_start_code(src, at, self.end)?;
                Ok((self.end - k, sp, k > 0))
            }
            None => Err(Error::limit(
                at,
                &"mpegvideo picture: larger than Limits::max_packet (ISO/IEC 13818-2 §6.2.3)",
            )),
        }
    }
}
