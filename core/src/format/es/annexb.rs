//! H.264 and H.265 Annex B byte streams (`.h264`, `.264`, `.h265`, `.hevc`).
//!
//! References: ITU-T H.264 Annex B and §7.3–7.4 (NAL units, SPS), ITU-T
//! H.265 Annex B and §7.3–7.4; see [`crate::codec::h264`] and
//! [`crate::codec::hevc`].
//!
//! Packets are access units as ffmpeg's `h264`/`hevc` parsers split them
//! (see the splitters in `codec`). Like ffprobe on raw streams, packets have
//! no timestamps; each lasts one frame at the SPS VUI frame rate (25 fps
//! when absent) in a 1/1 200 000 time base. Keyframes: access units with an
//! IDR slice or a recovery point SEI (H.264), or an IRAP slice (H.265).

use super::scan;
use crate::codec::{h264, hevc};
use crate::error::{Error, Result};
use crate::format::traits::{Context, FormatDemuxer};
use crate::limits::Limits;
use crate::source::Source;
use crate::types::{Codec, Packet, PacketFlags, Rational, Track, TrackKind};

/// ffmpeg's time base for raw video streams.
pub const TIME_BASE_HZ: u32 = 1_200_000;
/// Bytes examined for parameter sets while opening and probing.
pub const HEADER_WINDOW: u64 = 1 << 20;
/// Most NAL units looked at by the probe.
const PROBE_NALS: u32 = 64;
/// Bytes read per step while looking for an access unit's end.
const CHUNK: usize = 4096;

/// Which codec the byte stream carries.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AnnexBCodec {
    /// H.264 / AVC.
    H264,
    /// H.265 / HEVC.
    Hevc,
}

/// Demuxer state for an Annex B stream.
#[derive(Debug, Clone)]
pub struct AnnexBDemuxer {
    codec: AnnexBCodec,
    pos: u64,
    end: u64,
    frame_duration: u64,
    index: u64,
}

/// How many zero bytes (up to 4) end the range `at..end`.
pub(crate) fn trailing_zeros<S: Source>(src: &mut S, at: u64, end: u64) -> Result<u64> {
    let n = (end - at).min(4);
    let mut b = [0u8; 4];
    let tail = b.get_mut(..n as usize).unwrap_or(&mut []);
    src.read_exact_at(end - n, tail)?;
    Ok(tail.iter().rev().take_while(|&&x| x == 0).count() as u64)
}

/// Where a start code that the end of the input leaves without the `hdr`
/// bytes after it that decide its access unit begins, counting the zero
/// bytes before it, when it lies after `at`. The access unit in progress ends
/// there or later in the whole input, never earlier.
fn start_code_cut_at_end<S: Source>(src: &mut S, at: u64, end: u64, hdr: usize) -> Result<Option<u64>> {
    let n = (end - at).min(8) as usize;
    let mut b = [0u8; 8];
    let tail = b.get_mut(..n).unwrap_or(&mut []);
    src.read_exact_at(end - n as u64, tail)?;
    for k in 0..hdr {
        let Some(j) = n.checked_sub(3 + k) else { break };
        if tail.get(j..j + 3) == Some(&[0, 0, 1][..]) {
            // At most three zero bytes before the 01 (a four-byte start
            // code), as the end-of-input rule leaves out of a stream that
            // ends in zero bytes: counting every zero the 8-byte window saw
            // made a prefix cut in that zero run end up to four bytes later
            // than the whole input (a `truncation` find, H.265 forced).
            let zeros = tail
                .get(..j + 2)
                .map_or(0, |h| h.iter().rev().take_while(|&&x| x == 0).count())
                .min(3);
            return Ok(Some(end - n as u64 + (j + 2 - zeros) as u64).filter(|&s| s > at));
        }
    }
    Ok(None)
}

/// Where a start code's NAL header is, and its first bytes.
fn next_nal<S: Source>(src: &mut S, from: u64, limit: u64) -> Result<Option<(u64, [u8; 3])>> {
    let Some(p) = scan(src, from, limit, 5, |b| b.starts_with(&[0, 0, 1]))? else {
        return Ok(None);
    };
    let h: [u8; 3] = src.array(p + 3).unwrap_or([0xFF; 3]);
    Ok(Some((p + 3, h)))
}

/// Whether the input is an Annex B stream of `codec`: it starts with a
/// start code (after at most a few zero bytes), every NAL header seen is
/// well formed, and a parseable SPS, a PPS and a slice show up within the
/// first NAL units.
pub fn probe<S: Source>(src: &mut S, limits: &Limits, codec: AnnexBCodec) -> Result<bool> {
    let head: [u8; 8] = match src.array(0) {
        Ok(h) => h,
        Err(_) => return Ok(false),
    };
    let Some(sc) = head.windows(3).position(|w| w == [0, 0, 1]) else {
        return Ok(false);
    };
    if head.iter().take(sc).any(|&b| b != 0) {
        return Ok(false);
    }
    let limit = HEADER_WINDOW.min(limits.probe_bytes);
    let (mut sps, mut pps, mut slice) = (false, false, false);
    let mut from = 0;
    for _ in 0..PROBE_NALS {
        let Some((at, h)) = next_nal(src, from, limit)? else {
            break;
        };
        from = at;
        match codec {
            AnnexBCodec::H264 => {
                if h[0] & 0x80 != 0 {
                    return Ok(false);
                }
                let t = h[0] & 0x1F;
                let ref_idc = h[0] >> 5;
                match t {
                    1 | 5 => {
                        if t == 5 && ref_idc == 0 {
                            return Ok(false);
                        }
                        slice = true;
                    }
                    7 => {
                        if ref_idc == 0 {
                            return Ok(false);
                        }
                        let mut b = [0u8; 256];
                        let n = src.read_at(at, &mut b)?;
                        match h264::Sps::parse(b.get(..n).unwrap_or(&[])) {
                            Some(s) if s.width > 0 && s.height > 0 && s.width <= 16384 && s.height <= 16384 => {
                                sps = true
                            }
                            _ => return Ok(false),
                        }
                    }
                    8 => pps = true,
                    2..=4 | 6 | 9..=13 | 14 | 15 | 19 | 20 => {}
                    _ => return Ok(false),
                }
            }
            AnnexBCodec::Hevc => {
                if h[0] & 0x80 != 0 || h[1] & 7 == 0 {
                    return Ok(false);
                }
                let t = hevc::nal_type(h[0]);
                match t {
                    0..=9 | 16..=21 => slice = true,
                    32 => {}
                    33 => {
                        let mut b = [0u8; 512];
                        let n = src.read_at(at, &mut b)?;
                        match hevc::Sps::parse(b.get(..n).unwrap_or(&[])) {
                            Some(s) if s.width > 0 && s.height > 0 && s.width <= 16888 && s.height <= 16888 => {
                                sps = true
                            }
                            _ => return Ok(false),
                        }
                    }
                    34 => pps = true,
                    35..=40 => {}
                    _ => return Ok(false),
                }
            }
        }
        if sps && pps && slice {
            return Ok(true);
        }
    }
    Ok(false)
}

impl AnnexBDemuxer {
    /// Opens `src` as an Annex B stream of `codec`.
    pub fn open_codec<S: Source>(src: &mut S, ctx: &mut Context, codec: AnnexBCodec) -> Result<Self> {
        let end = src.len();
        let limit = HEADER_WINDOW.min(ctx.limits.probe_bytes);
        let mut from = 0;
        let mut dims = (0u32, 0u32);
        let mut timing = None;
        // Whether the search for the SPS ran into the end of the input (no
        // more NAL units before it, or an SPS read cut by it): a longer
        // input could give another frame rate.
        let mut reached_end = false;
        for _ in 0..PROBE_NALS {
            let Some((at, h)) = next_nal(src, from, limit)? else {
                reached_end = limit >= end;
                break;
            };
            from = at;
            let mut b = [0u8; 512];
            match codec {
                AnnexBCodec::H264 if h[0] & 0x1F == h264::nal::SPS => {
                    let n = src.read_at(at, &mut b)?;
                    reached_end |= n < b.len() && at.saturating_add(n as u64) >= end;
                    if let Some(s) = h264::Sps::parse(b.get(..n).unwrap_or(&[])) {
                        dims = (s.width, s.height);
                        timing = s.timing;
                        break;
                    }
                }
                AnnexBCodec::Hevc if hevc::nal_type(h[0]) == hevc::nal::SPS => {
                    let n = src.read_at(at, &mut b)?;
                    if let Some(s) = hevc::Sps::parse(b.get(..n).unwrap_or(&[])) {
                        dims = (s.width, s.height);
                        break;
                    }
                }
                _ => {}
            }
        }
        if dims.0 == 0 {
            ctx.diags.report("annexb.no-sps", 0);
        }
        if codec == AnnexBCodec::H264 && timing.is_none() && reached_end {
            // 25 fps, as ffmpeg times a stream this short; a longer input
            // whose SPS (with VUI timing) lies past the end would time every
            // access unit by it (a `truncation` find).
            ctx.diags.report("annexb.unconfirmed-rate", 0);
        }
        // ffmpeg: VUI time_scale / (2 * num_units_in_tick) frames per second.
        let frame_duration = match timing {
            Some((units, scale)) => {
                let d = TIME_BASE_HZ as u64 * 2 * units as u64 / scale as u64;
                if d == 0 {
                    48_000
                } else {
                    d
                }
            }
            None => (TIME_BASE_HZ / 25) as u64,
        };
        let track = Track {
            id: 0,
            kind: TrackKind::Video,
            codec: match codec {
                AnnexBCodec::H264 => Codec::H264,
                AnnexBCodec::Hevc => Codec::Hevc,
            },
            time_base: Rational::new(1, TIME_BASE_HZ),
            width: dims.0,
            height: dims.1,
            ..Track::default()
        };
        ctx.add_track(track, 0);
        Ok(AnnexBDemuxer {
            codec,
            pos: 0,
            end,
            frame_duration,
            index: 0,
        })
    }

    /// Finds the end of the access unit starting at `at`; returns it and
    /// whether the access unit is a keyframe.
    fn access_unit<S: Source>(&self, src: &mut S, at: u64, max: u64) -> Result<(u64, bool, bool)> {
        let mut s264 = h264::AuSplitter::default();
        let mut s265 = hevc::AuSplitter::default();
        let mut buf = [0u8; CHUNK];
        let mut off = at;
        let stop = at.saturating_add(max).min(self.end);
        while off < stop {
            let want = ((stop - off) as usize).min(CHUNK);
            let n = src.read_at(off, buf.get_mut(..want).unwrap_or(&mut []))?;
            if n == 0 {
                break;
            }
            let data = buf.get(..n).unwrap_or(&[]);
            let found = match self.codec {
                AnnexBCodec::H264 => s264.feed(data, off),
                AnnexBCodec::Hevc => s265.feed(data, off),
            };
            if let Some(b) = found.filter(|&b| b > at) {
                let key = match self.codec {
                    AnnexBCodec::H264 => s264.idr || s264.recovery_point,
                    AnnexBCodec::Hevc => s265.irap,
                };
                return Ok((b, key, false));
            }
            off += n as u64;
        }
        if off < self.end {
            return Err(Error::limit(
                at,
                &"annexb access unit: larger than Limits::max_packet (ITU-T H.264 Annex B, H.265 Annex B)",
            ));
        }
        // The input ends without a boundary: this is the last access unit,
        // unless the input was cut. A start code whose NAL unit was cut
        // before the split could be decided ends the access unit (as it
        // would in the whole input); an access unit with parameter sets or
        // SEI but no slice yet, or only a cut NAL header, is given whole
        // and flagged `truncated` (ffmpeg's parser flushes it as the last
        // packet; in a cut input it is the start of a longer one); and one
        // to three zero bytes at the very end (a cut start code) are left
        // out. ffmpeg keeps these zero bytes; on whole inputs the result is
        // the same.
        let (key, unfinished, has_slice, has_prefix, cut_nal) = match self.codec {
            AnnexBCodec::H264 => (
                s264.idr || s264.recovery_point,
                s264.unfinished(),
                s264.has_slice,
                s264.has_prefix,
                s264.cut_nal(),
            ),
            AnnexBCodec::Hevc => (
                s265.irap,
                s265.unfinished(),
                s265.has_slice,
                s265.has_prefix,
                s265.cut_nal(),
            ),
        };
        if let Some(b) = unfinished.filter(|&b| b > at) {
            // Whether the cut NAL unit starts a new access unit is not known:
            // the access unit ends at its start code or runs on past it. Give
            // the part before the start code, flagged, and end there: a
            // prefix of the whole input's access unit either way (a fuzz
            // find: an empty NAL unit followed by another start code did not
            // end the access unit in the whole input).
            return Ok((b, key, true));
        }
        // NAL header plus the byte that decides a new picture.
        let hdr = match self.codec {
            AnnexBCodec::H264 => 2,
            AnnexBCodec::Hevc => 3,
        };
        if let Some(sc) = start_code_cut_at_end(src, at, self.end, hdr)? {
            // A start code at the very end whose NAL header is cut, which the
            // scan did not see (it overlaps the NAL unit before it).
            return Ok((sc, key, true));
        }
        // The zero bytes at the very end could be followed by "01", "00 01"
        // or "00 00 01" in a longer input, and the start code's three bytes
        // before its 01 begin the next access unit there: up to three of
        // them are left out, however many there are (a fuzz find: ten zero
        // bytes at the end of a prefix kept one that the whole input gives
        // to the next access unit's "00 00 00 01").
        // When nothing but those zero bytes is left, nothing is given.
        let zeros = trailing_zeros(src, at, self.end)?.min(3);
        let trimmed = (zeros > 0).then(|| (self.end - zeros).max(at));
        if !has_slice && (has_prefix || cut_nal) {
            // Its zero bytes at the very end are left out too (a fuzz find:
            // bytes before the first start code, "01 00" cut from
            // "01 00 00 01 ..", gave both bytes where the whole gives one).
            return Ok((trimmed.unwrap_or(self.end), key, true));
        }
        if let Some(t) = trimmed {
            return Ok((t, key, true));
        }
        Ok((self.end, key, false))
    }
}

impl FormatDemuxer for AnnexBDemuxer {
    fn open<S: Source>(src: &mut S, ctx: &mut Context) -> Result<Self> {
        let codec = if probe(src, &ctx.limits, AnnexBCodec::Hevc)? {
            AnnexBCodec::Hevc
        } else {
            AnnexBCodec::H264
        };
        Self::open_codec(src, ctx, codec)
    }

    fn next_packet<'s, S: Source>(&mut self, src: &'s mut S, ctx: &mut Context) -> Result<Option<Packet<'s>>> {
        if self.pos >= self.end {
            return Ok(None);
        }
        let at = self.pos;
        let (stop, key, cut) = match self.access_unit(src, at, ctx.limits.max_packet as u64) {
            Ok(x) => x,
            Err(e) => {
                self.pos = self.end;
                return Err(e);
            }
        };
        // A trimmed last access unit (`cut`) ends the stream.
        self.pos = if cut { self.end } else { stop };
        if stop <= at {
            // Only zero bytes that may begin a start code were left.
            return Ok(None);
        }
        self.index += 1;
        let data = src.bytes(at, (stop - at) as usize)?;
        Ok(Some(
            Packet::contiguous(0, at, data)
                .with_times(None, None, Some(self.frame_duration))
                .with_flags(PacketFlags {
                    truncated: cut,
                    ..PacketFlags::keyframe(key)
                }),
        ))
    }

    fn seek<S: Source>(&mut self, src: &mut S, ctx: &mut Context, _track: usize, ts: i64) -> Result<()> {
        // Walk access units from the start; stop at the last keyframe at or
        // before the frame that holds `ts`.
        let target = (ts.max(0) as u64) / self.frame_duration.max(1);
        let (mut pos, mut index) = (0u64, 0u64);
        let (mut best, mut best_index) = (0u64, 0u64);
        while pos < self.end && index <= target {
            let Ok((stop, key, cut)) = self.access_unit(src, pos, ctx.limits.max_packet as u64) else {
                break;
            };
            if stop <= pos {
                // Only zero bytes that may begin a start code: no packet.
                break;
            }
            if key {
                best = pos;
                best_index = index;
            }
            // A cut last access unit ends the stream, as in `next_packet`.
            pos = if cut { self.end } else { stop };
            index += 1;
        }
        self.pos = best;
        self.index = best_index;
        Ok(())
    }
}

/// The H.264 demuxer: [`AnnexBDemuxer`] fixed to H.264.
#[derive(Debug, Clone)]
pub struct H264Demuxer(pub AnnexBDemuxer);

/// The H.265 demuxer: [`AnnexBDemuxer`] fixed to H.265.
#[derive(Debug, Clone)]
pub struct HevcDemuxer(pub AnnexBDemuxer);

macro_rules! fixed {
    ($t:ident, $c:expr) => {
        impl FormatDemuxer for $t {
            fn open<S: Source>(src: &mut S, ctx: &mut Context) -> Result<Self> {
                Ok($t(AnnexBDemuxer::open_codec(src, ctx, $c)?))
            }
            fn next_packet<'s, S: Source>(&mut self, src: &'s mut S, ctx: &mut Context) -> Result<Option<Packet<'s>>> {
                self.0.next_packet(src, ctx)
            }
            fn seek<S: Source>(&mut self, src: &mut S, ctx: &mut Context, track: usize, ts: i64) -> Result<()> {
                self.0.seek(src, ctx, track, ts)
            }
        }
    };
}

fixed!(H264Demuxer, AnnexBCodec::H264);
fixed!(HevcDemuxer, AnnexBCodec::Hevc);
