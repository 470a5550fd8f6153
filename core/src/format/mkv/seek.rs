//! Seeking: Cues walked in place (RFC 9559 §5.1.5), or a bounded forward
//! scan of Clusters when there are none.

use super::block::skip_from;
use super::ebml::{parse_vint, read_element, read_uint, Children};
use super::{ids, MkvDemuxer};
use crate::error::{Error, ErrorKind, Result};
use crate::format::traits::Context;
use crate::source::Source;
use crate::types::TrackKind;

impl MkvDemuxer {
    /// Positions the reader at the Cluster holding the keyframe at or before
    /// `ts` (video) or the packet containing `ts` (other tracks), then drops
    /// packets until that one.
    pub(super) fn seek_to<S: Source>(&mut self, src: &mut S, ctx: &mut Context, track: usize, ts: i64) -> Result<()> {
        let t = self.tracks.get(track).ok_or(Error::new(
            ErrorKind::InvalidArgument,
            0,
            &"mkv seek: no such track (RFC 9559 §5.1.4)",
        ))?;
        let number = t.number;
        let delay = t.codec_delay;
        let video = ctx.tracks.get(track).is_some_and(|x| x.kind == TrackKind::Video) && !t.intra_only;
        let sparse = t.subtitle || t.number == 0;
        self.laces.clear();
        self.pictures_done = true;
        self.skip = None;
        for t in self.tracks.iter_mut() {
            t.end_ts = i64::MIN;
            t.reset_dts();
            t.next_ts = None;
            if let Some(v) = t.vorbis.as_mut() {
                v.reset();
            }
        }
        // Cues and Cluster timestamps are in Segment ticks, before CodecDelay.
        let seg_ts = ts.saturating_add(delay);
        let mut found = None;
        if let Some(cues) = self.cues {
            match self.cue_lookup(src, ctx, cues, number, seg_ts) {
                Ok(x) => found = x,
                Err(err) if err.is_truncation() => {}
                Err(_) => ctx.diags.report("mkv.bad-cues", cues.0),
            }
            if let Some((pos, _)) = found {
                let is_cluster = matches!(read_element(src, pos, self.segment_end), Ok(e) if e.id == ids::CLUSTER);
                if !is_cluster {
                    ctx.diags.report("mkv.bad-cue-position", pos);
                    found = None;
                }
            }
        }
        let (pos, from) = match found {
            Some((pos, cue_time)) if video => (pos, (cue_time.min(i64::MAX as u64) as i64).saturating_sub(delay)),
            Some((pos, _)) => (pos, ts),
            None => self.scan(src, ctx, number, delay, ts, video)?,
        };
        self.pos = pos;
        self.in_cluster = false;
        self.cluster_end = None;
        self.cluster_ts = None;
        self.skip = Some(skip_from(track, from, video, sparse));
        Ok(())
    }

    /// The last CuePoint at or before `ts` with a position for track
    /// `number` (or, when the track has none, for any track): its Cluster's
    /// offset and its time. Walks every CuePoint once, through the source.
    fn cue_lookup<S: Source>(
        &mut self,
        src: &mut S,
        ctx: &mut Context,
        (start, end): (u64, u64),
        number: u64,
        ts: i64,
    ) -> Result<Option<(u64, u64)>> {
        let mut best: Option<(u64, u64)> = None;
        let mut any: Option<(u64, u64)> = None;
        let mut kids = Children { pos: start, end };
        let mut budget = ctx.limits.max_fragments;
        while let Some(point) = kids.next(src)? {
            budget = budget.saturating_sub(1);
            if budget == 0 {
                ctx.diags.report("mkv.seek-scan-limit", point.start);
                break;
            }
            if point.id != ids::CUE_POINT {
                continue;
            }
            let (mut time, mut mine, mut other) = (None, None, None);
            let mut inner = Children::of(&point, end);
            while let Some(c) = inner.next(src)? {
                match c.id {
                    ids::CUE_TIME => time = Some(read_uint(src, &c)?),
                    ids::CUE_TRACK_POSITIONS => {
                        let (mut track, mut pos) = (None, None);
                        let mut p = Children::of(&c, inner.end);
                        while let Some(x) = p.next(src)? {
                            match x.id {
                                ids::CUE_TRACK => track = Some(read_uint(src, &x)?),
                                ids::CUE_CLUSTER_POSITION => pos = Some(read_uint(src, &x)?),
                                _ => {}
                            }
                        }
                        if let Some(pos) = pos {
                            if track == Some(number) {
                                mine = Some(pos);
                            }
                            other.get_or_insert(pos);
                        }
                    }
                    _ => {}
                }
            }
            let Some(time) = time else { continue };
            if i128::from(time) > i128::from(ts) {
                continue;
            }
            if let Some(p) = mine {
                if best.is_none_or(|(t, _)| time >= t) {
                    best = Some((time, p));
                }
            }
            if let Some(p) = other {
                if any.is_none_or(|(t, _)| time >= t) {
                    any = Some((time, p));
                }
            }
        }
        Ok(best.or(any).map(|(t, p)| (self.segment_start.saturating_add(p), t)))
    }

    /// Without Cues: scans Clusters forward from the first, reading only
    /// element headers (and, for video, Block headers), until a Cluster
    /// starts after `ts`. At most `Limits::max_fragments` elements are read;
    /// past that the best position so far is used (`mkv.seek-scan-limit`).
    /// Returns the Cluster to read from and the time to drop packets before.
    fn scan<S: Source>(
        &mut self,
        src: &mut S,
        ctx: &mut Context,
        number: u64,
        delay: i64,
        ts: i64,
        video: bool,
    ) -> Result<(u64, i64)> {
        let mut best = (self.first_cluster, if video { i64::MIN } else { ts });
        let mut budget = ctx.limits.max_fragments;
        let mut at = self.first_cluster;
        let seg_ts = i128::from(ts) + i128::from(delay);
        while at < self.segment_end {
            let Ok(cluster) = read_element(src, at, self.segment_end) else {
                break;
            };
            if cluster.id != ids::CLUSTER {
                match cluster.end() {
                    Some(e) if e > at => {
                        at = e;
                        continue;
                    }
                    _ => break,
                }
            }
            let cend = cluster.end().map(|e| e.min(self.segment_end));
            let limit = cend.unwrap_or(self.segment_end);
            let mut p = cluster.data;
            let mut cts: Option<u64> = None;
            while p < limit {
                budget = budget.saturating_sub(1);
                if budget == 0 {
                    ctx.diags.report("mkv.seek-scan-limit", p);
                    return Ok(best);
                }
                let Ok(c) = read_element(src, p, limit) else { break };
                if cend.is_none() && ids::is_top_level(c.id) {
                    break;
                }
                let Some(end) = c.end().filter(|&e| e > p) else { break };
                match c.id {
                    ids::TIMESTAMP => {
                        let t = read_uint(src, &c).unwrap_or(0);
                        cts = Some(t);
                        if i128::from(t) > seg_ts {
                            return Ok(best);
                        }
                        if !video {
                            best = (cluster.start, ts);
                            if cend.is_some() {
                                break;
                            }
                        }
                    }
                    ids::SIMPLE_BLOCK | ids::BLOCK_GROUP if video => {
                        if let Some((n, rel, key)) = block_key(src, &c, end)? {
                            let pts = i128::from(cts.unwrap_or(0)) + i128::from(rel);
                            if n == number && key && pts >= 0 {
                                if pts > seg_ts {
                                    return Ok(best);
                                }
                                best = (cluster.start, (pts - i128::from(delay)) as i64);
                            }
                        }
                    }
                    _ => {}
                }
                p = end;
            }
            let next = cend.unwrap_or(p);
            if next <= at {
                break;
            }
            at = next;
        }
        Ok(best)
    }
}

/// A SimpleBlock's or BlockGroup's track number, relative timestamp and
/// keyframe flag, read from headers only.
fn block_key<S: Source>(src: &mut S, e: &super::ebml::Element, end: u64) -> Result<Option<(u64, i16, bool)>> {
    let (body, key) = if e.id == ids::SIMPLE_BLOCK {
        (e.data, None)
    } else {
        let mut block = None;
        let mut referenced = false;
        let mut kids = Children { pos: e.data, end };
        while let Ok(Some(c)) = kids.next(src) {
            match c.id {
                ids::BLOCK => block = Some(c.data),
                ids::REFERENCE_BLOCK => referenced = true,
                _ => {}
            }
        }
        let Some(b) = block else { return Ok(None) };
        (b, Some(!referenced))
    };
    let mut h = [0u8; 11];
    let n = end.saturating_sub(body).min(11) as usize;
    let hb = h.get_mut(..n).unwrap_or(&mut []);
    src.read_exact_at(body, hb)?;
    let Some((Some(number), len)) = parse_vint(hb) else {
        return Ok(None);
    };
    let (Some(&a), Some(&b), Some(&flags)) = (hb.get(len), hb.get(len + 1), hb.get(len + 2)) else {
        return Ok(None);
    };
    Ok(Some((
        number,
        i16::from_be_bytes([a, b]),
        key.unwrap_or(flags & 0x80 != 0),
    )))
}
