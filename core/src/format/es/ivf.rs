//! IVF: a 32-byte file header and 12-byte frame headers around VP8, VP9 or
//! AV1 frames (the libvpx/libaom test container; no formal spec, the layout
//! is described in `docs/formats/ivf.md`).
//!
//! Packets are the frames as stored, with the stored timestamps in the
//! header's time base, as ffmpeg's `ivf` demuxer gives them. Keyframes:
//! VP8 frame tag bit 0 clear (RFC 6386 §9.1), VP9 uncompressed header
//! `frame_type` 0 (VP9 bitstream §6.2), AV1 a key frame header (§5.9.2).

use crate::codec::av1::{self, obu, ObuHeader, SequenceHeader};
use crate::error::{Error, Result};
use crate::format::traits::{Context, FormatDemuxer};
use crate::source::Source;
use crate::types::{Codec, Packet, PacketFlags, Rational, Track, TrackKind};
use zerocopy::little_endian::{U16, U32, U64};
use zerocopy::{FromBytes, Immutable, KnownLayout, Unaligned};

/// The 12-byte header of each IVF frame: frame size and timestamp. Read
/// per frame as an array (the slice source's fast path) and reinterpreted.
#[derive(FromBytes, KnownLayout, Immutable, Unaligned, Debug)]
#[repr(C)]
struct IvfFrameHeader {
    size: U32,
    pts: U64,
}

/// The IVF file header.
#[derive(FromBytes, KnownLayout, Immutable, Unaligned, Debug)]
#[repr(C)]
pub struct IvfHeader {
    /// `DKIF`.
    pub magic: [u8; 4],
    /// Version (0).
    pub version: U16,
    /// Header length (32).
    pub header_len: U16,
    /// Codec FourCC: `VP80`, `VP90`, `AV01`.
    pub fourcc: [u8; 4],
    /// Width in pixels.
    pub width: U16,
    /// Height in pixels.
    pub height: U16,
    /// Time base denominator (ticks per second).
    pub rate: U32,
    /// Time base numerator.
    pub scale: U32,
    /// Number of frames.
    pub frames: U32,
    /// Unused.
    pub unused: U32,
}

/// Demuxer state for IVF.
#[derive(Debug, Clone)]
pub struct IvfDemuxer {
    data_start: u64,
    pos: u64,
    codec: Codec,
    seq: Option<SequenceHeader>,
    last_pts: Option<i64>,
    /// The frame at `pos` was given cut: the next call reports the cut.
    cut: bool,
}

fn vp_keyframe(codec: Codec, b: &[u8]) -> bool {
    match codec {
        Codec::Vp8 => b.first().is_some_and(|&x| x & 1 == 0),
        Codec::Vp9 => {
            // frame_marker(2) profile_low(1) profile_high(1) [reserved(1) if
            // profile 3] show_existing_frame(1) frame_type(1)
            let Some(&x) = b.first() else { return false };
            let profile = ((x >> 5) & 1) | (((x >> 4) & 1) << 1);
            let mut bit = 4;
            if profile == 3 {
                bit += 1;
            }
            let word = u16::from_be_bytes([x, b.get(1).copied().unwrap_or(0)]);
            let show_existing = (word >> (15 - bit)) & 1 == 1;
            let frame_type = (word >> (14 - bit)) & 1;
            !show_existing && frame_type == 0
        }
        _ => false,
    }
}

/// Finds the sequence header and whether a temporal unit in low-overhead
/// format holds a key frame.
pub(crate) fn av1_unit(data: &[u8], seq: &mut Option<SequenceHeader>) -> bool {
    let mut at = 0usize;
    let mut steps = 0;
    while at < data.len() && steps < MAX_UNIT_OBU_STEPS {
        steps += 1;
        let Some(h) = data.get(at..).and_then(ObuHeader::parse) else {
            return false;
        };
        let start = at + h.header_len;
        let size = match h.size {
            Some(s) => s as usize,
            None => data.len().saturating_sub(start),
        };
        let payload = data
            .get(start..start.saturating_add(size).min(data.len()))
            .unwrap_or(&[]);
        match h.obu_type {
            obu::SEQUENCE_HEADER => {
                if let Some(s) = SequenceHeader::parse(payload) {
                    *seq = Some(s);
                }
            }
            obu::FRAME | obu::FRAME_HEADER => {
                let s = seq.unwrap_or_default();
                return av1::is_key_frame(payload, &s).unwrap_or(false);
            }
            _ => {}
        }
        at = start.saturating_add(size);
    }
    false
}

/// Most steps (OBUs, and in Annex B frame units too) walked in one temporal
/// unit's bytes looking for the sequence header and the first frame
/// header: bounds [`av1_unit`] and the OBU demuxer's Annex B walk (a
/// unit's OBUs are at least a byte each, so this bounds the work on units
/// of empty OBUs).
pub(crate) const MAX_UNIT_OBU_STEPS: u32 = 4096;

impl FormatDemuxer for IvfDemuxer {
    fn open<S: Source>(src: &mut S, ctx: &mut Context) -> Result<Self> {
        let h: IvfHeader = src.read(0)?;
        if &h.magic != b"DKIF" {
            return Err(Error::malformed(
                0,
                &"ivf header: signature not DKIF (IVF, libvpx ivfdec)",
            ));
        }
        let codec = match &h.fourcc {
            b"VP80" => Codec::Vp8,
            b"VP90" => Codec::Vp9,
            b"AV01" => Codec::Av1,
            _ => {
                ctx.diags.report("ivf.unknown-fourcc", 8);
                Codec::Unknown
            }
        };
        let (rate, scale) = (h.rate.get(), h.scale.get());
        if rate == 0 || scale == 0 {
            return Err(Error::malformed(
                16,
                &"ivf header: time base with a zero term (IVF, libvpx ivfdec)",
            ));
        }
        let header_len = (h.header_len.get() as u64).max(32);
        let track = Track {
            id: 0,
            kind: TrackKind::Video,
            codec,
            codec_tag: u32::from_be_bytes(h.fourcc),
            time_base: Rational::new(scale, rate),
            duration: Some(h.frames.get() as u64),
            frames: Some(h.frames.get() as u64),
            width: h.width.get() as u32,
            height: h.height.get() as u32,
            ..Track::default()
        };
        ctx.add_track(track, 0);
        ctx.info.duration_us = Some(Rational::new(scale, rate).to_micros(h.frames.get() as i64).max(0) as u64);
        Ok(IvfDemuxer {
            data_start: header_len,
            pos: header_len,
            codec,
            seq: None,
            last_pts: None,
            cut: false,
        })
    }

    fn next_packet<'s, S: Source>(&mut self, src: &'s mut S, ctx: &mut Context) -> Result<Option<Packet<'s>>> {
        let at = self.pos;
        let len = src.len();
        if at.saturating_add(12) > len {
            return Ok(None);
        }
        let fh: IvfFrameHeader = zerocopy::transmute!(src.array::<12>(at)?);
        let size = u64::from(fh.size.get());
        let pts = fh.pts.get() as i64;
        if size > ctx.limits.max_packet as u64 {
            self.pos = src.len();
            return Err(Error::limit(
                at,
                &"ivf frame header: frame larger than Limits::max_packet (IVF, libvpx ivfdec)",
            ));
        }
        // A frame the end cuts is given as far as it goes, flagged, as
        // ffprobe gives it; the next call reports the cut.
        let body = at + 12;
        let cut = body + size > len;
        if cut && (self.cut || body == len) {
            self.pos = len;
            return Err(Error::truncated(
                len,
                &"ivf frame: input ends inside it (IVF, libvpx ivfdec)",
            ));
        }
        self.cut = cut;
        let size = size.min(len - body);
        self.pos = if cut { at } else { body + size };
        let duration = self.last_pts.map(|_| 1u64).or(Some(1));
        self.last_pts = Some(pts);
        let codec = self.codec;
        let mut seq = self.seq;
        let data = src.bytes(body, size as usize)?;
        let key = match codec {
            Codec::Av1 => av1_unit(data, &mut seq),
            c => vp_keyframe(c, data),
        };
        self.seq = seq;
        Ok(Some(
            Packet::contiguous(0, body, data)
                .with_times(Some(pts), Some(pts), duration)
                .with_flags(PacketFlags {
                    truncated: cut,
                    ..PacketFlags::keyframe(key)
                }),
        ))
    }

    fn seek<S: Source>(&mut self, src: &mut S, _ctx: &mut Context, _track: usize, ts: i64) -> Result<()> {
        // Walk the frame headers: the last keyframe at or before `ts`.
        let mut at = self.data_start;
        let mut best = self.data_start;
        let mut steps = 0u32;
        while at.saturating_add(12) <= src.len() && steps < super::MAX_SEEK_STEPS {
            steps += 1;
            let fh: IvfFrameHeader = zerocopy::transmute!(src.array::<12>(at)?);
            let size = u64::from(fh.size.get());
            if fh.pts.get() as i64 > ts {
                break;
            }
            let mut head = [0u8; 64];
            let n = src.read_at(at + 12, head.get_mut(..(size.min(64) as usize)).unwrap_or(&mut []))?;
            let mut seq = self.seq;
            let key = match self.codec {
                Codec::Av1 => av1_unit(head.get(..n).unwrap_or(&[]), &mut seq),
                c => vp_keyframe(c, head.get(..n).unwrap_or(&[])),
            };
            if key {
                best = at;
            }
            at = at + 12 + size;
        }
        self.pos = best;
        self.cut = false;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use crate::{Demuxer, SliceSource};

    #[test]
    fn frames_and_vp8_keyframes() {
        let mut f = [0u8; 32 + 2 * 12 + 10 + 6];
        f[..4].copy_from_slice(b"DKIF");
        f[6..8].copy_from_slice(&32u16.to_le_bytes());
        f[8..12].copy_from_slice(b"VP80");
        f[12..14].copy_from_slice(&160u16.to_le_bytes());
        f[14..16].copy_from_slice(&120u16.to_le_bytes());
        f[16..20].copy_from_slice(&30u32.to_le_bytes());
        f[20..24].copy_from_slice(&1u32.to_le_bytes());
        f[24..28].copy_from_slice(&2u32.to_le_bytes());
        f[32..36].copy_from_slice(&10u32.to_le_bytes());
        f[44] = 0x10; // key frame: bit 0 clear
        f[54..58].copy_from_slice(&6u32.to_le_bytes());
        f[58..66].copy_from_slice(&3u64.to_le_bytes());
        f[66] = 0x01; // inter frame
        let mut d = Demuxer::open(SliceSource::new(&f), None).unwrap();
        assert_eq!(d.tracks()[0].time_base, crate::Rational::new(1, 30));
        let p = d.next_packet().unwrap().unwrap();
        assert_eq!((p.data.len(), p.pts, p.flags.keyframe), (10, Some(0), true));
        let p = d.next_packet().unwrap().unwrap();
        assert_eq!((p.data.len(), p.pts, p.flags.keyframe), (6, Some(3), false));
        assert!(d.next_packet().unwrap().is_none());
    }
}
