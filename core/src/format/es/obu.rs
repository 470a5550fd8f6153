//! AV1 low-overhead bitstream format (AV1 spec §5.2, `.obu`, ffmpeg `-f
//! obu`): OBUs with size fields, one after another.
//!
//! Packets are temporal units: from a temporal delimiter OBU to the next
//! (§7.5), as ffmpeg's `obu` demuxer gives them. Like ffprobe, timestamps
//! count frames at the sequence header's timing info (25 fps when absent)
//! in a 1/1 200 000 time base. Keyframes: a temporal unit whose first frame
//! header is a key frame (§5.9.2).

use super::ivf::av1_unit;
use crate::codec::av1::{obu, ObuHeader, SequenceHeader};
use crate::demux::{Context, FormatDemuxer};
use crate::error::{Error, Result};
use crate::limits::Limits;
use crate::source::Source;
use crate::tags::{Tag, TagCursor};
use crate::types::{Codec, Packet, PacketFlags, Rational, Track, TrackKind};

/// ffmpeg's time base for raw video streams.
pub const TIME_BASE_HZ: u32 = 1_200_000;
/// Most OBUs walked in one temporal unit.
const MAX_OBUS: u32 = 1 << 16;

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
    for i in 0..64 {
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
        for _ in 0..64 {
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
            return Err(Error::malformed(0, "no AV1 sequence header (AV1 §5.5)"));
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
                return Err(Error::limit(at, "temporal unit larger than the limits"));
            }
            next = after;
        }
        if next > self.end {
            self.pos = self.end;
            return Err(Error::truncated(self.end, "OBU cut by the end of input"));
        }
        if next == at {
            self.pos = self.end;
            return Err(Error::malformed(at, "invalid OBU header (AV1 §5.3)"));
        }
        self.pos = next;
        let pts = self.pts;
        self.pts += self.frame_duration as i64;
        let mut seq = self.seq;
        let data = src.bytes(at, (next - at) as usize)?;
        let key = av1_unit(data, &mut seq);
        self.seq = seq;
        Ok(Some(Packet {
            track: 0,
            pts: Some(pts),
            dts: Some(pts),
            duration: Some(self.frame_duration),
            flags: PacketFlags {
                keyframe: key,
                discard: false,
            },
            pos: Some(at),
            contiguous: true,
            data,
        }))
    }

    fn seek<S: Source>(&mut self, _src: &mut S, _ctx: &mut Context, _track: usize, _ts: i64) -> Result<()> {
        // Temporal units carry no index: restart from the beginning.
        self.pos = 0;
        self.pts = 0;
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
