//! The MXF demuxer: opens the header partition, reads the streams from the
//! header metadata and the index table from the partitions, then walks the
//! KLVs in file order giving each essence element of a known track as a
//! packet (frame wrapping) or cutting a clip-wrapped element into edit
//! units, with ffmpeg's timestamps.

use super::aes3;
use super::essence::{self, Wrapping};
use super::index::IndexTable;
use super::klv;
use super::local::{self, Region};
use super::metadata::{self, StreamInfo};
use super::partition::{self, HEADER};
use crate::error::{Error, Result};
use crate::format::traits::{Context, FormatDemuxer};
use crate::limits::MAX_TRACKS;
use crate::source::Source;
use crate::types::{Codec, Packet, PacketFlags};

const CUT: &str = "mxf: the input ends inside an essence element";
/// ffmpeg cuts clip-wrapped PCM of a small edit unit into packets of a
/// 25th of a second (`mxf_compute_edit_units_per_packet`).
const PCM_PACKETS_PER_SECOND: u64 = 25;
/// Below this EditUnitByteCount a clip-wrapped PCM edit unit is one
/// sample frame and packets gather a 25th of a second of them.
const SMALL_EDIT_UNIT: u32 = 32;

/// Per stream: what the metadata said and the running count (edit units
/// for video, samples for audio).
#[derive(Debug, Clone, Copy, Default)]
struct Stream {
    info: StreamInfo,
    count: u64,
}

/// Inside a clip-wrapped element: the packets still to cut from it.
#[derive(Debug, Clone, Copy, Default)]
struct Clip {
    stream: usize,
    at: u64,
    end: u64,
    /// Bytes per packet.
    unit: u64,
    /// The input ends inside the element.
    cut: bool,
}

/// Demuxer state for MXF.
#[derive(Debug, Clone)]
pub struct MxfDemuxer {
    streams: heapless::Vec<Stream, MAX_TRACKS>,
    index: IndexTable,
    /// Where the packet walk starts (after the header metadata).
    start: u64,
    pos: u64,
    clip: Option<Clip>,
    cut: bool,
}

/// The header metadata after the header partition pack: the KLVs up to the
/// first that is neither fill, the primer pack nor a metadata set.
fn metadata_region<S: Source>(src: &mut S, from: u64) -> Result<Region> {
    let len = src.len();
    let mut at = from;
    let mut n = 0u32;
    while let Some(k) = klv::read(src, at, len)? {
        n += 1;
        let meta = partition::is_fill(&k.key) || partition::is_primer(&k.key) || local::set_kind(&k.key).is_some();
        if !meta || n > local::MAX_SETS {
            break;
        }
        if k.end() > len {
            return Err(Error::truncated(
                k.at,
                &"mxf: the input ends inside the header metadata",
            ));
        }
        at = k.end();
    }
    Ok(Region { start: from, end: at })
}

/// ffmpeg's `av_rescale_q(1, 1/25, 1/rate)`: edit units of `num/den`
/// per 25th of a second, rounded to nearest, at least 1.
fn per_packet(num: u64, den: u64) -> u64 {
    let d = PCM_PACKETS_PER_SECOND.saturating_mul(den).max(1);
    (num.saturating_add(d / 2) / d).max(1)
}

/// Refuses a packet over `Limits::max_packet`.
fn check_size(size: u64, ctx: &Context, at: u64) -> Result<()> {
    if size > u64::from(ctx.limits.max_packet) {
        return Err(Error::limit(
            at,
            &"mxf: an essence element larger than Limits::max_packet",
        ));
    }
    Ok(())
}

/// pts, dts, duration and keyframe flag of a packet.
type Stamp = (Option<i64>, Option<i64>, u64, Option<bool>);

/// The keyframe flag of a video packet without an index entry, from its
/// first picture as ffmpeg's parsers decide it (an I picture, an IDR
/// slice), when the MPEG readers are built in.
#[cfg(any(feature = "ts", feature = "ps"))]
fn payload_keyframe(codec: Codec, data: &[u8]) -> bool {
    crate::format::mpeg::is_keyframe(codec, data)
}

/// Without the MPEG readers, such packets are not marked.
#[cfg(not(any(feature = "ts", feature = "ps")))]
fn payload_keyframe(_codec: Codec, _data: &[u8]) -> bool {
    false
}

impl MxfDemuxer {
    /// The codec of stream `i`.
    fn codec(&self, i: usize) -> Codec {
        self.streams.get(i).map_or(Codec::Unknown, |s| s.info.codec)
    }

    /// The D-10 sound element of `len` bytes at `at` (key at `key_at`) as
    /// ffmpeg's PCM packet, converted into scratch.
    fn d10_sound<'s, S: Source>(
        &mut self,
        src: &'s mut S,
        i: usize,
        at: u64,
        len: u64,
        key_at: u64,
        truncated: bool,
    ) -> Result<Packet<'s>> {
        let (channels, bits) = self.streams.get(i).map_or((0, 0), |s| (s.info.channels, s.info.bits));
        let n = aes3::convert(src, at, len, channels, bits)?;
        let (pts, dts, duration, _) = self.stamp(src, i, n as u64)?;
        let src: &'s S = src;
        let data = src.joined(n)?;
        Ok(Packet::joined(i, Some(key_at), data)
            .with_times(pts, dts, Some(duration))
            .with_flags(PacketFlags {
                truncated,
                ..PacketFlags::keyframe(true)
            }))
    }

    /// The stream an essence element of track number `number` belongs to.
    fn stream_of(&self, number: u32) -> Option<usize> {
        match self.streams.iter().position(|s| s.info.number == number) {
            Some(i) => Some(i),
            // ffmpeg gives a lone stream the elements of any track number
            // (OP-Atom files with TrackNumber 0).
            None => (self.streams.len() == 1).then_some(0),
        }
    }

    /// Bytes per packet of a clip-wrapped element of stream `i` holding
    /// `len` bytes: the index table's constant edit unit (for PCM of a
    /// small edit unit, a 25th of a second of them, as ffmpeg), else for
    /// PCM a 25th of a second of sample frames, else the whole element.
    fn clip_unit(&self, i: usize, len: u64) -> u64 {
        let Some(s) = self.streams.get(i) else {
            return len;
        };
        match (s.info.video, self.index.constant()) {
            (_, Some((bytes, rate, 1))) if !s.info.video && bytes < SMALL_EDIT_UNIT => {
                u64::from(bytes) * per_packet(u64::from(rate.0), u64::from(rate.1))
            }
            (_, Some((bytes, _, _))) => u64::from(bytes),
            // ffmpeg's stand-in index (`mxf_handle_missing_index_segment`):
            // PCM edit units of one sample frame at the sample rate, else
            // the element split evenly over the track's duration.
            (false, None) if s.info.block_align > 0 && s.info.sample_rate > 0 => {
                u64::from(s.info.block_align) * per_packet(u64::from(s.info.sample_rate), 1)
            }
            (true, None) if s.info.duration > 0 && len % s.info.duration == 0 => len / s.info.duration,
            _ => len,
        }
    }

    /// Timestamps, duration and keyframe flag (`None`: decided from the
    /// payload) of the next packet of stream `i`, `size` bytes long;
    /// advances the stream's count.
    fn stamp<S: Source>(&mut self, src: &mut S, i: usize, size: u64) -> Result<Stamp> {
        let Some(s) = self.streams.get(i).copied() else {
            return Ok((None, None, 0, Some(false)));
        };
        let k = s.count;
        let kk = k.min(i64::MAX as u64) as i64;
        let (pts, dts, duration, key, next) = if s.info.video {
            if self.index.has_entries() && k < self.index.slots() {
                let pts = self.index.pts(src, k)?;
                let key = if s.info.intra {
                    Some(true)
                } else {
                    self.index.keyframe(src, k)?
                };
                (pts, Some(kk.saturating_add(self.index.first_dts)), 1, key, k + 1)
            } else {
                (Some(kk), Some(kk), 1, s.info.intra.then_some(true), k + 1)
            }
        } else {
            let samples = size / u64::from(s.info.block_align.max(1));
            (Some(kk), Some(kk), samples, Some(true), k.saturating_add(samples))
        };
        if let Some(st) = self.streams.get_mut(i) {
            st.count = next;
        }
        Ok((pts, dts, duration, key))
    }

    /// The packet of stream `i`: `size` bytes at `at`. `key_at` is the
    /// element's key for a frame-wrapped element: ffprobe's `pos` is the
    /// key's offset, so the packet is not marked contiguous.
    fn emit<'s, S: Source>(
        &mut self,
        src: &'s mut S,
        i: usize,
        at: u64,
        size: u64,
        truncated: bool,
        key_at: Option<u64>,
    ) -> Result<Packet<'s>> {
        let (pts, dts, duration, key) = self.stamp(src, i, size)?;
        let data = src.bytes(at, size as usize)?;
        let key = key.unwrap_or_else(|| payload_keyframe(self.codec(i), data));
        let p = Packet::contiguous(i, at, data)
            .with_times(pts, dts, Some(duration))
            .with_flags(PacketFlags {
                truncated,
                ..PacketFlags::keyframe(key)
            });
        Ok(match key_at {
            Some(k) => Packet {
                pos: Some(k),
                contiguous: false,
                ..p
            },
            None => p,
        })
    }

    /// The next packet cut from the clip-wrapped element in progress.
    fn clip_packet<'s, S: Source>(&mut self, src: &'s mut S, ctx: &Context, c: Clip) -> Result<Packet<'s>> {
        let size = c.unit.max(1).min(c.end - c.at);
        check_size(size, ctx, c.at)?;
        let next = c.at + size;
        let last = next >= c.end;
        self.clip = (!last).then_some(Clip { at: next, ..c });
        let truncated = last && c.cut;
        self.cut = truncated;
        self.emit(src, c.stream, c.at, size, truncated, None)
    }
}

impl FormatDemuxer for MxfDemuxer {
    fn open<S: Source>(src: &mut S, ctx: &mut Context) -> Result<Self> {
        let Some(header) = partition::read(src, 0)? else {
            return Err(Error::malformed(
                0,
                &"mxf: no header partition pack at the start (ST 377-1 §7.1)",
            ));
        };
        if header.kind != HEADER {
            return Err(Error::malformed(
                0,
                &"mxf: the first partition is not a header partition (ST 377-1 §7.1)",
            ));
        }
        let region = metadata_region(src, header.end)?;
        let mut streams: heapless::Vec<Stream, MAX_TRACKS> = heapless::Vec::new();
        let mut full = false;
        metadata::streams(src, region, |found| {
            if streams.is_full() || ctx.tracks.is_full() {
                full = true;
                return false;
            }
            // ffmpeg reads OP-Atom essence as clip-wrapped whatever its
            // container label says (ffmpeg's OP-Atom muxer labels PCM
            // frame-wrapped and writes one element).
            let mut info = found.info;
            if header.op_atom {
                info.wrapping = Wrapping::Clip;
            }
            if ctx.add_track(found.track, region.start).is_some() {
                let _ = streams.push(Stream { info, count: 0 });
            }
            true
        })?;
        if full {
            ctx.diags.report("track-capacity", region.start);
        }
        if streams.is_empty() {
            return Err(Error::unsupported(
                region.start,
                &"mxf: no picture or sound track resolves to a descriptor in the header metadata",
            ));
        }
        let mut index = IndexTable::default();
        partition::collect_index(src, &header, &mut index, &mut ctx.diags)?;
        let mut longest = 0u64;
        for t in &ctx.tracks {
            if let Some(d) = t.duration {
                let us = t.time_base.to_micros(d.min(i64::MAX as u64) as i64).max(0) as u64;
                longest = longest.max(us);
            }
        }
        ctx.info.duration_us = (longest > 0).then_some(longest);
        ctx.info.start_us = Some(0);
        Ok(MxfDemuxer {
            streams,
            index,
            start: region.end,
            pos: region.end,
            clip: None,
            cut: false,
        })
    }

    fn next_packet<'s, S: Source>(&mut self, src: &'s mut S, ctx: &mut Context) -> Result<Option<Packet<'s>>> {
        if self.cut {
            return Err(Error::truncated(src.len(), &CUT));
        }
        if let Some(c) = self.clip {
            return self.clip_packet(src, ctx, c).map(Some);
        }
        let len = src.len();
        loop {
            let Some(k) = klv::read(src, self.pos, len)? else {
                return Ok(None);
            };
            let stream = essence::element_track(&k.key).and_then(|n| self.stream_of(n));
            let Some(i) = stream else {
                if k.end() > len {
                    return Err(Error::truncated(k.at, &"mxf: the input ends inside a KLV"));
                }
                self.pos = k.end();
                continue;
            };
            let cut = k.end() > len;
            let end = k.end().min(len);
            self.pos = end;
            let wrapping = self.streams.get(i).map(|s| s.info.wrapping);
            if wrapping == Some(Wrapping::Clip) {
                let unit = self.clip_unit(i, k.len);
                if end == k.value_at {
                    continue;
                }
                let c = Clip {
                    stream: i,
                    at: k.value_at,
                    end,
                    unit,
                    cut,
                };
                return self.clip_packet(src, ctx, c).map(Some);
            }
            let size = end - k.value_at;
            check_size(size, ctx, k.at)?;
            if cut && size == 0 {
                return Err(Error::truncated(k.at, &CUT));
            }
            let video = self.streams.get(i).is_some_and(|s| s.info.video);
            if !video && aes3::is_d10_sound(&k.key) {
                self.cut = cut;
                return self.d10_sound(src, i, k.value_at, size, k.at, cut).map(Some);
            }
            self.cut = cut;
            return self.emit(src, i, k.value_at, size, cut, Some(k.at)).map(Some);
        }
    }

    fn seek<S: Source>(&mut self, _src: &mut S, _ctx: &mut Context, _track: usize, _ts: i64) -> Result<()> {
        // Restarts at the first essence: at or before any timestamp.
        self.pos = self.start;
        self.clip = None;
        self.cut = false;
        for s in &mut self.streams {
            s.count = 0;
        }
        Ok(())
    }
}
