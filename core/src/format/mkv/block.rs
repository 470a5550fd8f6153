//! Clusters, Blocks and lacing (RFC 9559 §10, §5.1.3).

use super::ebml::{parse_svint, parse_vint, read_element, read_uint, Children};
use super::{ids, Emit, MkvDemuxer, Skip, TrackState};
use crate::error::{Error, Result};
use crate::format::traits::Context;
use crate::source::Source;
use crate::types::{div_u128, Codec, Packet, PacketFlags};

/// Capacity of the lace table: the most frames one Block can hold. The lace
/// count is stored in one byte as frames − 1 (RFC 9559 §10.4), so every
/// valid Block fits; a larger count could only come from lowering this
/// constant and is then refused with a `CapacityExceeded` error.
pub const MAX_LACES: usize = 256;

/// The frames of the current Block still to deliver.
#[derive(Debug, Clone, Default)]
pub(super) struct Laces {
    track: usize,
    next: usize,
    /// Offset of the next frame's data.
    data: u64,
    sizes: heapless::Vec<u32, MAX_LACES>,
    /// Timestamp of the next frame, in track ticks.
    pts: Option<i64>,
    /// The Block's duration, spread over its frames.
    duration: u64,
    keyframe: bool,
}

impl Laces {
    /// Whether every frame of the Block was delivered.
    #[cfg(feature = "mkv-fast")]
    pub(super) fn is_done(&self) -> bool {
        self.next >= self.sizes.len()
    }

    /// Drops the frames not yet delivered.
    pub(super) fn clear(&mut self) {
        self.sizes.clear();
        self.next = 0;
    }

    /// The next frame of the Block, if any, with ffmpeg's timing: frame `n`
    /// of `N` lasts `D(n+1)/N − Dn/N` of the Block's duration `D`, and only
    /// the first frame carries the Block's keyframe flag.
    pub(super) fn take(&mut self, tracks: &mut [TrackState]) -> Option<Emit> {
        let n = self.next;
        let size = *self.sizes.get(n)?;
        let count = self.sizes.len() as u128;
        self.next += 1;
        let offset = self.data;
        self.data = self.data.saturating_add(size as u64);
        let duration = if count == 1 {
            // An unlaced Block (the common case): its whole duration.
            self.duration
        } else {
            let d = self.duration as u128;
            let i = n as u128;
            (div_u128(d * (i + 1), count) - div_u128(d * i, count)) as u64
        };
        let pts = self.pts;
        self.pts = if duration != 0 {
            pts.map(|p| p.saturating_add(duration.min(i64::MAX as u64) as i64))
        } else {
            None
        };
        let t = tracks.get(self.track)?;
        Some(Emit {
            track: self.track,
            offset,
            size,
            pts,
            dts: pts,
            duration,
            keyframe: (n == 0 && self.keyframe) || t.intra_only,
        })
    }
}

impl TrackState {
    /// The dts ffprobe reports for a packet of this track with `pts`
    /// (libavformat's `compute_pkt_fields`): the pts itself when the codec
    /// does not reorder; with a known reorder depth `d`, the smallest of
    /// the last `d + 1` pts (none for the first `d` packets); else unknown.
    pub(super) fn dts_for(&mut self, pts: Option<i64>) -> Option<i64> {
        if !self.reorders {
            return pts;
        }
        let d = self.depth? as usize;
        let pts = pts?;
        let buf = self.pts_buffer.get_mut(..=d)?;
        *buf.first_mut()? = pts;
        for i in 0..d {
            match (buf.get(i).copied(), buf.get(i + 1).copied()) {
                (Some(a), Some(b)) if a > b => buf.swap(i, i + 1),
                _ => break,
            }
        }
        buf.first().copied().filter(|&v| v != i64::MIN)
    }

    /// For Vorbis, a packet's duration (and, for a frame the container
    /// leaves untimed, its pts) from the packet's mode (`first` is its first
    /// byte), as ffprobe's Vorbis parser gives them.
    fn vorbis_timing(&mut self, e: &mut Emit, first: u8, scale: u64) {
        let Some(v) = self.vorbis.as_mut() else { return };
        let samples = v.samples(first) as u128;
        // Samples to ticks of TimestampScale ns, rounding down (ffmpeg's
        // AV_ROUND_DOWN).
        let den = v.rate as u128 * scale.max(1) as u128;
        let ticks = if den == 0 {
            0
        } else {
            div_u128(samples * 1_000_000_000, den)
        };
        let ticks = ticks.min(i64::MAX as u128) as u64;
        e.pts = e.pts.or(self.next_ts);
        e.dts = e.pts;
        e.duration = ticks;
        if let (Some(p), true) = (e.pts, ticks > 0) {
            self.next_ts = Some(p.saturating_add(ticks as i64));
        }
    }

    /// Forgets the pts seen (after a seek).
    pub(super) fn reset_dts(&mut self) {
        self.pts_buffer = [i64::MIN; super::reorder::MAX_REORDER + 1];
    }
}

/// A small forward reader over the source for lace headers.
struct Bytes {
    buf: [u8; 64],
    base: u64,
    len: usize,
    at: u64,
    end: u64,
}

impl Bytes {
    fn new(at: u64, end: u64) -> Self {
        Bytes {
            buf: [0; 64],
            base: at,
            len: 0,
            at,
            end,
        }
    }

    /// The bytes from the current position (at least `want` when the Block
    /// has them), without consuming them.
    fn peek<S: Source>(&mut self, src: &mut S, want: usize) -> Result<&[u8]> {
        let within = self.at.saturating_sub(self.base) as usize;
        if within + want > self.len || self.at < self.base {
            let n = self.end.saturating_sub(self.at).min(self.buf.len() as u64) as usize;
            let buf = self.buf.get_mut(..n).unwrap_or(&mut []);
            src.read_exact_at(self.at, buf)?;
            self.base = self.at;
            self.len = n;
        }
        let within = (self.at - self.base) as usize;
        Ok(self.buf.get(within..self.len).unwrap_or(&[]))
    }

    fn byte<S: Source>(&mut self, src: &mut S) -> Result<u8> {
        let at = self.at;
        let b = *self.peek(src, 1)?.first().ok_or(Error::malformed(
            at,
            &"mkv Block: lace header runs past its Block (RFC 9559 §10.4)",
        ))?;
        self.at += 1;
        Ok(b)
    }
}

impl MkvDemuxer {
    /// Reads one element at the reading position and acts on it. Returns
    /// `false` at the end of the Segment.
    pub(super) fn step<S: Source>(&mut self, src: &mut S, ctx: &mut Context) -> Result<bool> {
        if self.in_cluster {
            if let Some(end) = self.cluster_end {
                if self.pos >= end {
                    self.in_cluster = false;
                }
            }
        }
        let segment_end = self.data_end(src);
        if self.pos >= segment_end {
            return Ok(false);
        }
        let limit = match (self.in_cluster, self.cluster_end) {
            (true, Some(end)) => end,
            _ => segment_end,
        };
        let e = match read_element(src, self.pos, limit) {
            Ok(e) => e,
            // A live input that ended between two elements (`pos` is
            // before the declared end): it had not said so when asked
            // before the read.
            Err(err) if err.is_truncation() && self.pos >= src.len() => return Ok(false),
            Err(err) if err.is_truncation() => return Err(err),
            Err(_) => return self.resync(src, ctx),
        };
        if !self.in_cluster {
            match e.id {
                ids::CLUSTER => {
                    self.in_cluster = true;
                    self.cluster_ts = None;
                    self.cluster_end = e.end().map(|x| x.min(segment_end));
                    if e.size.is_none() {
                        ctx.diags.report("mkv.unknown-size-cluster", e.start);
                    }
                    self.pos = e.data;
                }
                ids::EBML | ids::SEGMENT => {
                    // A second Segment (a chained file) is not read.
                    ctx.diags.report("mkv.second-segment", e.start);
                    return Ok(false);
                }
                _ => match e.end() {
                    Some(end) if end > self.pos => self.pos = end,
                    _ => {
                        ctx.diags.report("mkv.unknown-size-element", e.start);
                        return Ok(false);
                    }
                },
            }
            return Ok(true);
        }
        if self.cluster_end.is_none() && ids::is_top_level(e.id) {
            // An unknown-size Cluster ends where a Top-Level Element begins
            // (RFC 8794 §6.2).
            self.in_cluster = false;
            return Ok(true);
        }
        let Some(size) = e.size else {
            ctx.diags.report("mkv.unknown-size-child", e.start);
            return self.resync(src, ctx);
        };
        let mut end = e.data.saturating_add(size);
        if end > src.len() && matches!(e.id, ids::SIMPLE_BLOCK | ids::BLOCK_GROUP) {
            return Err(Error::truncated(
                src.len(),
                &"mkv Cluster: SimpleBlock or BlockGroup runs past the end of the input (RFC 9559 §10)",
            ));
        }
        if end > limit {
            ctx.diags.report("mkv.element-overflow", e.start);
            end = limit;
        }
        self.pos = end.max(e.data);
        match e.id {
            ids::TIMESTAMP => {
                let el = super::ebml::Element {
                    size: Some(end - e.data),
                    ..e
                };
                match read_uint(src, &el) {
                    Ok(t) => self.cluster_ts = Some(t),
                    Err(err) if err.is_truncation() => return Err(err),
                    Err(_) => ctx.diags.report("mkv.bad-timestamp", e.start),
                }
            }
            ids::SIMPLE_BLOCK => self.start_block(src, ctx, e.data, end, 0, None)?,
            ids::BLOCK_GROUP => self.block_group(src, ctx, e.data, end)?,
            _ => {}
        }
        Ok(true)
    }

    /// After damage: looks for the next Cluster ID within
    /// `Limits::resync_bytes`. Returns `false` when there is none.
    fn resync<S: Source>(&mut self, src: &mut S, ctx: &mut Context) -> Result<bool> {
        ctx.diags.report("mkv.resync", self.pos);
        self.laces.clear();
        let start = self.pos.saturating_add(1);
        let segment_end = self.data_end(src);
        let stop = start.saturating_add(ctx.limits.resync_bytes).min(segment_end);
        let next = super::resync::next_element(src, start, stop, segment_end, |id| id == ids::CLUSTER)?;
        self.in_cluster = false;
        self.pos = next.unwrap_or(segment_end);
        Ok(next.is_some())
    }

    /// BlockGroup (RFC 9559 §5.1.3.5): the Block with its BlockDuration; a
    /// ReferenceBlock makes it a non-keyframe.
    fn block_group<S: Source>(&mut self, src: &mut S, ctx: &mut Context, data: u64, end: u64) -> Result<()> {
        let mut kids = Children { pos: data, end };
        let mut block = None;
        let mut duration = 0;
        let mut referenced = false;
        loop {
            let c = match kids.next(src) {
                Ok(Some(c)) => c,
                Ok(None) => break,
                Err(err) if err.is_truncation() => return Err(err),
                Err(_) => {
                    ctx.diags.report("mkv.bad-block-group", data);
                    break;
                }
            };
            match c.id {
                ids::BLOCK => block = Some((c.data, c.end_within(end))),
                ids::BLOCK_DURATION => duration = read_uint(src, &c).unwrap_or(0),
                ids::REFERENCE_BLOCK => referenced = true,
                _ => {}
            }
        }
        if let Some((b, e)) = block {
            self.start_block(src, ctx, b, e, duration, Some(!referenced))?;
        }
        Ok(())
    }

    /// Reads a Block's header (RFC 9559 §10.1) and lace table (§10.4) and
    /// queues its frames.
    fn start_block<S: Source>(
        &mut self,
        src: &mut S,
        ctx: &mut Context,
        body: u64,
        end: u64,
        duration: u64,
        keyframe: Option<bool>,
    ) -> Result<()> {
        let n = (end.saturating_sub(body)).min(12) as usize;
        let mut h = [0u8; 12];
        if n == 12 {
            // The common case, as one fixed-size read (`Source::array`).
            h = src.array::<12>(body)?;
        } else {
            src.read_exact_at(body, h.get_mut(..n).unwrap_or(&mut []))?;
        }
        let hb = h.get(..n).unwrap_or(&[]);
        let Some((Some(number), len)) = parse_vint(hb) else {
            ctx.diags.report("mkv.bad-block", body);
            return Ok(());
        };
        let Some(ti) = self.tracks.iter().position(|t| t.number == number) else {
            ctx.diags.report("mkv.unknown-track", body);
            return Ok(());
        };
        // ffmpeg drops a Block with no byte after its header.
        if end.saturating_sub(body) <= len as u64 + 3 {
            return Ok(());
        }
        let (Some(&t0), Some(&t1), Some(&flags)) = (hb.get(len), hb.get(len + 1), hb.get(len + 2)) else {
            return Ok(());
        };
        let rel = i16::from_be_bytes([t0, t1]) as i64;
        let keyframe = keyframe.unwrap_or(flags & 0x80 != 0);
        let data = body + len as u64 + 3;
        self.laces.clear();
        let first = match self.read_laces(src, (flags >> 1) & 3, data, end) {
            Ok(first) => first,
            Err(err) if err.is_truncation() || err.kind() == crate::error::ErrorKind::CapacityExceeded => {
                return Err(err)
            }
            Err(_) => {
                ctx.diags.report("mkv.bad-lacing", body);
                self.laces.clear();
                return Ok(());
            }
        };
        let scale = self.scale.max(1) as u128;
        let Some(t) = self.tracks.get_mut(ti) else {
            return Ok(());
        };
        let count = self.laces.sizes.len() as u128;
        let duration = if duration != 0 {
            duration
        } else {
            match t.default_duration.checked_mul(count as u64) {
                Some(total) => total / scale as u64,
                None => div_u128(t.default_duration as u128 * count, scale).min(u64::MAX as u128) as u64,
            }
        };
        let cluster = match self.cluster_ts {
            Some(c) => c,
            None => {
                ctx.diags.report("mkv.missing-cluster-timestamp", body);
                0
            }
        };
        let abs = cluster as i128 + rel as i128;
        let pts = (abs >= 0).then(|| (abs - t.codec_delay as i128).clamp(i64::MIN as i128, i64::MAX as i128) as i64);
        let mut keyframe = keyframe;
        if let (true, Some(p)) = (t.subtitle, pts) {
            // ffmpeg: a subtitle starting before the previous one ends is not
            // a keyframe.
            if p < t.end_ts {
                keyframe = false;
            }
            t.end_ts = t.end_ts.max(p.saturating_add(duration.min(i64::MAX as u64) as i64));
        }
        self.laces.track = ti;
        self.laces.data = first;
        self.laces.pts = pts;
        self.laces.duration = duration;
        self.laces.keyframe = keyframe;
        Ok(())
    }

    /// Fills the lace table for a Block whose frames start at `data` (after
    /// the flags byte) and end at `end`. Returns the offset of the first
    /// frame.
    fn read_laces<S: Source>(&mut self, src: &mut S, lacing: u8, data: u64, end: u64) -> Result<u64> {
        let sizes = &mut self.laces.sizes;
        let push = |sizes: &mut heapless::Vec<u32, MAX_LACES>, s: u64| -> Result<()> {
            let s = u32::try_from(s)
                .map_err(|_| Error::malformed(data, &"mkv Block: laced frame larger than 4 GiB (RFC 9559 §10.4)"))?;
            sizes
                .push(s)
                .map_err(|_| Error::capacity(data, &"mkv Block: more laced frames than MAX_LACES (RFC 9559 §10.4)"))
        };
        if lacing == 0 {
            push(sizes, end.saturating_sub(data))?;
            return Ok(data);
        }
        let mut r = Bytes::new(data, end);
        let count = r.byte(src)? as usize + 1;
        if count > MAX_LACES {
            return Err(Error::capacity(
                data,
                &"mkv Block: more laced frames than MAX_LACES (RFC 9559 §10.4)",
            ));
        }
        let mut total = 0u64;
        match lacing {
            // Xiph lacing (RFC 9559 §10.4.2): sizes as runs of 255 plus a
            // final byte below 255.
            1 => {
                for _ in 0..count - 1 {
                    let mut s = 0u64;
                    loop {
                        let b = r.byte(src)?;
                        s += b as u64;
                        if b != 255 {
                            break;
                        }
                    }
                    total += s;
                    push(sizes, s)?;
                }
            }
            // EBML lacing (RFC 9559 §10.4.4): the first size as a vint, the
            // others as signed differences from the previous one.
            3 => {
                let mut prev = 0i64;
                for i in 0..count - 1 {
                    let b = r.peek(src, 8)?;
                    let (s, n) = if i == 0 {
                        match parse_vint(b) {
                            Some((Some(v), n)) => (i64::try_from(v).unwrap_or(i64::MAX), n),
                            _ => {
                                return Err(Error::malformed(
                                    r.at,
                                    &"mkv Block: invalid EBML lace size (RFC 9559 §10.4.4)",
                                ))
                            }
                        }
                    } else {
                        match parse_svint(b) {
                            Some((d, n)) => (prev.saturating_add(d), n),
                            None => {
                                return Err(Error::malformed(
                                    r.at,
                                    &"mkv Block: invalid EBML lace size (RFC 9559 §10.4.4)",
                                ))
                            }
                        }
                    };
                    if s < 0 {
                        return Err(Error::malformed(
                            r.at,
                            &"mkv Block: negative EBML lace size (RFC 9559 §10.4.4)",
                        ));
                    }
                    r.at += n as u64;
                    prev = s;
                    total = total.saturating_add(s as u64);
                    push(sizes, s as u64)?;
                }
            }
            // Fixed-size lacing (RFC 9559 §10.4.3): equal frames.
            _ => {
                let rest = end.saturating_sub(r.at);
                if rest % count as u64 != 0 {
                    return Err(Error::malformed(
                        r.at,
                        &"mkv Block: fixed-size lacing does not divide the Block (RFC 9559 §10.4.3)",
                    ));
                }
                for _ in 0..count {
                    push(sizes, rest / count as u64)?;
                }
                return Ok(r.at);
            }
        }
        let rest = end.saturating_sub(r.at);
        if total > rest {
            return Err(Error::malformed(
                r.at,
                &"mkv Block: laced frames larger than their Block (RFC 9559 §10.4)",
            ));
        }
        push(sizes, rest - total)?;
        Ok(r.at)
    }

    /// Whether a decided packet is delivered: not when its track's encoding
    /// is unsupported, nor while a seek drops packets before its target.
    pub(super) fn keep(&mut self, ctx: &mut Context, e: &mut Emit) -> Result<bool> {
        let Some(t) = self.tracks.get(e.track) else {
            return Ok(false);
        };
        if t.encoding == super::Encoding::Unsupported {
            return Ok(false);
        }
        if let Some(s) = self.skip {
            let Some(pts) = e.pts else { return Ok(false) };
            if s.sparse {
                if pts < s.from {
                    return Ok(false);
                }
                self.skip = None;
            } else if e.track == s.track {
                let reached = if s.key {
                    e.keyframe && pts >= s.from
                } else {
                    pts.saturating_add(e.duration.min(i64::MAX as u64) as i64) > s.from
                        || (e.duration == 0 && pts >= s.from)
                };
                if !reached {
                    return Ok(false);
                }
                self.skip = None;
            } else if pts < s.from {
                return Ok(false);
            }
        }
        if e.size > ctx.limits.max_packet {
            return Err(Error::limit(e.offset, &"packet larger than Limits::max_packet"));
        }
        if let Some(t) = self.tracks.get_mut(e.track) {
            e.dts = t.dts_for(e.pts);
        }
        Ok(true)
    }

    /// Applies codec-level timing that needs the frame's first byte (Vorbis).
    pub(super) fn codec_timing<S: Source>(&mut self, src: &mut S, e: &mut Emit) -> Result<()> {
        let scale = self.scale;
        let Some(t) = self.tracks.get_mut(e.track) else {
            return Ok(());
        };
        if t.vorbis.is_none() || e.size == 0 {
            return Ok(());
        }
        let first = match &t.encoding {
            super::Encoding::Strip(h) if !h.is_empty() => h.first().copied().unwrap_or(0),
            _ => {
                let b: [u8; 1] = src.array(e.offset)?;
                b[0]
            }
        };
        t.vorbis_timing(e, first, scale);
        Ok(())
    }

    /// The next attached picture not yet delivered.
    pub(super) fn next_picture(&mut self) -> Option<Emit> {
        let i = self.tracks.iter().position(|t| t.picture.is_some())?;
        let t = self.tracks.get_mut(i)?;
        let p = t.picture.take()?;
        // Keep the range for a later seek back? ffprobe delivers it once.
        Some(Emit {
            track: i,
            offset: p.offset,
            size: p.len,
            pts: None,
            dts: None,
            duration: 0,
            keyframe: true,
        })
    }

    /// Borrows a packet already written to scratch (`len` bytes from 0): an
    /// inflated zlib frame.
    #[cfg(feature = "mkv-zlib")]
    pub(super) fn emit_joined<'s, S: Source>(&self, src: &'s mut S, e: Emit, len: usize) -> Result<Packet<'s>> {
        let data = S::joined(src, len)?;
        Ok(Packet::joined(e.track, Some(e.offset), data)
            .with_times(e.pts, e.dts, (e.duration != 0).then_some(e.duration))
            .with_flags(PacketFlags::keyframe(e.keyframe)))
    }

    /// Borrows a decided packet: a slice of the input, or, for a
    /// header-stripped track, the stripped bytes and the frame joined in
    /// scratch.
    pub(super) fn emit<'s, S: Source>(&self, src: &'s mut S, e: Emit) -> Result<Packet<'s>> {
        let t = self.tracks.get(e.track).ok_or(Error::malformed(
            e.offset,
            &"mkv Block: TrackNumber names no TrackEntry (RFC 9559 §10.1)",
        ))?;
        let size = e.size as usize;
        let (pts, dts, duration) = (e.pts, e.dts, (e.duration != 0).then_some(e.duration));
        if let super::Encoding::Strip(head) = &t.encoding {
            let h = head.len();
            src.put(0, head)?;
            src.gather(e.offset, size, h)?;
            let data = S::joined(src, h + size)?;
            let flags = PacketFlags::keyframe(bitstream_key(t.codec, data).unwrap_or(e.keyframe));
            return Ok(Packet::joined(e.track, Some(e.offset), data)
                .with_times(pts, dts, duration)
                .with_flags(flags));
        }
        let data = src.bytes(e.offset, size)?;
        let flags = PacketFlags::keyframe(bitstream_key(t.codec, data).unwrap_or(e.keyframe));
        Ok(Packet::contiguous(e.track, e.offset, data)
            .with_times(pts, dts, duration)
            .with_flags(flags))
    }
}

/// The keyframe flag a VP8 or VP9 frame header gives (VP8: RFC 6386 §9.1,
/// frame tag bit 0 clear; VP9: bitstream spec §6.2, `frame_type` 0 in a
/// shown frame), which is what ffprobe reports for these codecs in
/// Matroska: its parsers replace the Block's flag. `None` for other codecs
/// or a header too short to tell.
pub(super) fn bitstream_key(codec: Codec, data: &[u8]) -> Option<bool> {
    match codec {
        Codec::Vp8 => {
            let b = *data.first()?;
            // Profiles above 3 are not VP8; ffmpeg's parser then says nothing.
            (data.len() >= 3 && (b >> 1) & 7 <= 3).then_some(b & 1 == 0)
        }
        Codec::Vp9 => {
            let b = *data.first()?;
            // frame_marker(2) profile_low(1) profile_high(1) [reserved(1)]
            // show_existing_frame(1) frame_type(1), MSB first.
            let profile = ((b >> 5) & 1) | (((b >> 4) & 1) << 1);
            let mut bit = 3u32;
            if profile == 3 {
                if (b >> bit) & 1 == 1 {
                    return None;
                }
                bit -= 1;
            }
            if (b >> bit) & 1 == 1 {
                return Some(false);
            }
            Some((b >> (bit - 1)) & 1 == 0)
        }
        _ => None,
    }
}

/// Starts a seek's packet dropping.
pub(super) fn skip_from(track: usize, from: i64, key: bool, sparse: bool) -> Skip {
    Skip {
        track,
        from,
        key,
        sparse,
    }
}
