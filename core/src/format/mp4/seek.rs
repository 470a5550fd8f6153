//! Seeking and the edit list's start: a track's cursor is put at any sample
//! by walking `stsc`, `stts`, `ctts` and `stss` in blocks (§8.6, §8.7), and a
//! fragmented file restarts at the last `moof` whose `tfdt` is at or before
//! the target (§8.8).

use super::boxes::{read_box_header, CttsEntry, StscEntry, SttsEntry};
use super::demuxer::{Mp4Demuxer, Mp4Track};
use super::fragment::Frag;
use super::sample_table::{advance_stts, chunk_group, enter_chunk, next_sample, reset_cursor, sample_size};
use super::sample_table::{scan_entries, table_sample, ChunkMode};
use super::table_window::Windows;
use crate::error::{Error, ErrorKind, Result};
use crate::format::traits::Context;
use crate::limits::MAX_TRACKS;
use crate::source::Source;
use crate::types::{rescale, Rational};

/// Keyframes an edit's start steps back over when composition offsets show
/// a keyframe after the edit's media time (B-frame reordering puts it a few
/// frames later at most; 64 also bounds a damaged `ctts` to 64 walks).
const MAX_EDIT_START_STEPS: u32 = 64;

/// Chunks a seek into a track read by chunk (uncompressed audio) steps
/// over: 2^24 chunks is beyond any real file (hours of audio in 1024-sample
/// chunks) and bounds a damaged `stsc`/`stco` to a fixed walk.
const MAX_SEEK_CHUNKS: u32 = 1 << 24;

/// The first sample ffmpeg keeps for an edit starting at media time
/// `mt`: the last keyframe whose decode time, and then presentation time,
/// is at or before it (audio searches a second earlier for decoder
/// priming).
fn edit_start<S: Source>(src: &mut S, ctx: &mut Context, t: &mut Mp4Track, w: &mut Windows, mt: i64) -> Result<u32> {
    let search = if t.audio {
        mt.saturating_sub(t.timescale as i64).max(0)
    } else {
        mt
    };
    let mut n = sample_at(src, t, search, true)?;
    if t.ctts.count > 0 && t.has_stss {
        // Step back over keyframes shown after the search time.
        let mut guard = 0;
        loop {
            guard += 1;
            position(src, ctx, t, w, n)?;
            let Some(sm) = table_sample(src, ctx, t, w)? else {
                break;
            };
            if sm.dts.saturating_add(sm.cts) <= search || n == 0 || guard > MAX_EDIT_START_STEPS {
                break;
            }
            let prev = n - 1;
            let key = sample_at_key_before(src, t, prev)?;
            if key >= n {
                break;
            }
            n = key;
        }
    }
    Ok(n)
}

/// Puts `t` where a read from the beginning starts: its first sample, or
/// the first sample kept by its edit list; and computes its first
/// pending sample.
pub(super) fn restart<S: Source>(src: &mut S, ctx: &mut Context, t: &mut Mp4Track, w: &mut Windows) -> Result<()> {
    if let (Some((mt, _)), None) = (t.edit, t.chunk) {
        if t.sample_count > 0 {
            let n = edit_start(src, ctx, t, w, mt)?;
            position(src, ctx, t, w, n)?;
        }
    }
    let s = next_sample(src, ctx, t, w)?;
    t.set_pending(s);
    Ok(())
}

/// The last sync sample at or before sample `n` (0-based).
fn sample_at_key_before<S: Source>(src: &mut S, t: &Mp4Track, n: u32) -> Result<u32> {
    let mut key = 0u32;
    scan_entries::<S, 4>(src, t.stss.off, 0, t.stss.count, |_, e| {
        let s = u32::from_be_bytes(e);
        if s == 0 || s - 1 > n {
            return false;
        }
        key = s - 1;
        true
    })?;
    Ok(key)
}

/// Positions `t`'s cursor at sample `n` (0-based) by walking `stsc`,
/// `stts`, `ctts` and `stss` in place.
fn position<S: Source>(src: &mut S, ctx: &mut Context, t: &mut Mp4Track, w: &mut Windows, n: u32) -> Result<()> {
    reset_cursor(src, t)?;
    if let Some(mode) = t.chunk {
        return position_in_chunks(src, ctx, t, w, mode, n);
    }
    if let Some(run) = find_stsc_run(src, t, n)? {
        enter_run(src, t, w, run, n)?;
    }
    if t.cur.sample != n {
        t.cur.sample = t.sample_count;
        return Ok(());
    }
    advance_stts(src, t, w, n)?;
    skip_ctts(src, t, n)?;
    if t.has_stss {
        skip_stss(src, t, n)?;
    }
    Ok(())
}

/// [`position`] for a track read by chunk: steps whole chunks until the one
/// holding `n`, then whole packets of it, on the grid a read from the start
/// uses.
fn position_in_chunks<S: Source>(
    src: &mut S,
    ctx: &mut Context,
    t: &mut Mp4Track,
    w: &mut Windows,
    mode: ChunkMode,
    n: u32,
) -> Result<()> {
    let mut guard = 0u32;
    while t.cur.sample < n {
        guard += 1;
        if guard > MAX_SEEK_CHUNKS || !enter_chunk(src, ctx, t, w)? {
            break;
        }
        let spc = t.cur.left_in_chunk;
        if t.cur.sample.saturating_add(spc) > n {
            // Inside this chunk: skip whole packets before the one
            // holding `n`, on the grid a read from the start uses.
            return skip_packets_in_chunk(src, t, w, mode, n);
        }
        t.cur.sample += spc;
        t.cur.left_in_chunk = 0;
        advance_stts(src, t, w, spc)?;
    }
    Ok(())
}

/// Inside the chunk holding sample `n`: skips the packets before the one
/// holding it.
fn skip_packets_in_chunk<S: Source>(
    src: &mut S,
    t: &mut Mp4Track,
    w: &mut Windows,
    mode: ChunkMode,
    n: u32,
) -> Result<()> {
    // Every packet but a chunk's last has the same number of
    // samples: skip the whole ones in one step (a chunk may
    // claim 2^32 samples, 4 million packets).
    let (group, group_size) = chunk_group(mode, u32::MAX);
    if let (Some(a), Some(b)) = (
        (n - t.cur.sample).checked_div(group),
        t.cur.left_in_chunk.checked_div(group),
    ) {
        let k = a.min(b);
        if k > 1 {
            let skip = (k - 1) * group;
            advance_stts(src, t, w, skip)?;
            t.cur.left_in_chunk -= skip;
            t.cur.sample += skip;
            t.cur.offset = t
                .cur
                .offset
                .saturating_add(((k - 1) as u64).saturating_mul(group_size as u64));
        }
    }
    while t.cur.left_in_chunk > 0 {
        let (samples, size) = chunk_group(mode, t.cur.left_in_chunk);
        if t.cur.sample.saturating_add(samples) > n || samples == 0 {
            break;
        }
        advance_stts(src, t, w, samples)?;
        t.cur.left_in_chunk -= samples;
        t.cur.sample += samples;
        t.cur.offset = t.cur.offset.saturating_add(size as u64);
    }
    Ok(())
}

/// The `stsc` run holding a sample (§8.7.4).
#[derive(Debug, Clone, Copy)]
struct StscRun {
    /// Index of the run's `stsc` entry.
    entry: u32,
    /// Its first chunk (1-based).
    first_chunk: u32,
    /// Samples per chunk.
    spc: u32,
    /// The first chunk of the next run.
    next_first: u32,
    /// The run's first sample (0-based).
    first_sample: u32,
}

/// Finds the `stsc` run holding sample `n`: each entry's run ends where the
/// next entry starts (the last one's at the last chunk), so an entry is
/// judged when the next one is read.
fn find_stsc_run<S: Source>(src: &mut S, t: &Mp4Track, n: u32) -> Result<Option<StscRun>> {
    let mut first_sample = 0u32;
    let mut prev: Option<(u32, u32, u32)> = None;
    let mut hit: Option<(u32, u32, u32, u32, u32)> = None;
    let count = t.stsc.count;
    scan_entries::<S, 12>(src, t.stsc.off, 0, count, |i, e| {
        let e: StscEntry = zerocopy::transmute!(e);
        let first_chunk = e.first_chunk.get();
        if let Some((pi, pfirst, pspc)) = prev {
            let next_first = first_chunk;
            let samples = next_first.saturating_sub(pfirst).saturating_mul(pspc);
            if pspc > 0 && n < first_sample.saturating_add(samples) {
                hit = Some((pi, pfirst, pspc, next_first, first_sample));
                return false;
            }
            first_sample = first_sample.saturating_add(samples);
        }
        prev = Some((i, first_chunk.max(1), e.samples_per_chunk.get()));
        true
    })?;
    if let (None, Some((pi, pfirst, pspc))) = (hit, prev) {
        let next_first = t.stco.count.saturating_add(1);
        let samples = next_first.saturating_sub(pfirst).saturating_mul(pspc);
        if pspc > 0 && n < first_sample.saturating_add(samples) {
            hit = Some((pi, pfirst, pspc, next_first, first_sample));
        }
    }
    Ok(hit.map(|(entry, first_chunk, spc, next_first, first_sample)| StscRun {
        entry,
        first_chunk,
        spc,
        next_first,
        first_sample,
    }))
}

/// Puts `t`'s chunk cursor at sample `n` of `run`: the chunk, the samples
/// left in it and the sample's offset.
fn enter_run<S: Source>(src: &mut S, t: &mut Mp4Track, w: &mut Windows, run: StscRun, n: u32) -> Result<()> {
    let StscRun {
        entry: i,
        first_chunk,
        spc,
        next_first,
        first_sample,
    } = run;
    let k = (n - first_sample) / spc;
    let chunk = first_chunk - 1 + k;
    let within = (n - first_sample) % spc;
    t.cur.stsc_i = i;
    t.cur.spc = spc;
    t.cur.stsc_next_first = if i + 1 < t.stsc.count { next_first } else { 0 };
    t.cur.next_chunk = chunk + 1;
    t.cur.left_in_chunk = spc - within;
    let base = if t.co64 {
        src.u64_be(t.stco.off + chunk as u64 * 8)?
    } else {
        src.u32_be(t.stco.off + chunk as u64 * 4)? as u64
    };
    let mut off = base;
    if t.stsz_const != 0 {
        // Constant sizes: no table to walk, and `within` may be
        // up to 2^32 (a chunk of that many samples).
        off = off.saturating_add((within as u64).saturating_mul(t.stsz_const as u64));
    } else {
        for s in (n - within)..n {
            off = off.saturating_add(sample_size(src, t, w, s)? as u64);
        }
    }
    t.cur.offset = off;
    t.cur.sample = n;
    Ok(())
}

/// Moves `t`'s `ctts` cursor past `n` samples' worth of entries.
fn skip_ctts<S: Source>(src: &mut S, t: &mut Mp4Track, n: u32) -> Result<()> {
    let mut left = n;
    if left > 0 {
        let (mut off, mut rest) = (t.cur.ctts_off, t.cur.ctts_left);
        let i = scan_entries::<S, 8>(src, t.ctts.off, t.cur.ctts_i, t.ctts.count, |_, e| {
            let e: CttsEntry = zerocopy::transmute!(e);
            let c = e.sample_count.get();
            off = e.sample_offset.get() as i32;
            if c > left {
                rest = c - left;
                left = 0;
                return false;
            }
            left -= c;
            left > 0
        })?;
        // The entry that ended the skip was consumed too.
        t.cur.ctts_i = if i < t.ctts.count { i + 1 } else { i };
        t.cur.ctts_off = off;
        t.cur.ctts_left = rest;
    }
    Ok(())
}

/// Moves `t`'s `stss` cursor to the first sync sample after sample `n`.
fn skip_stss<S: Source>(src: &mut S, t: &mut Mp4Track, n: u32) -> Result<()> {
    let mut next = u32::MAX;
    let i = scan_entries::<S, 4>(src, t.stss.off, t.cur.stss_i, t.stss.count, |_, e| {
        let s = u32::from_be_bytes(e);
        if s > n {
            next = s;
            return false;
        }
        true
    })?;
    t.cur.stss_i = i;
    t.cur.next_sync = next;
    Ok(())
}

/// The sample index at or before decode time `ts` (raw units) and, for
/// tracks with `stss`, the sync sample at or before it.
fn sample_at<S: Source>(src: &mut S, t: &Mp4Track, ts: i64, want_key: bool) -> Result<u32> {
    let mut dts = 0i64;
    let mut n = 0u32;
    scan_entries::<S, 8>(src, t.stts.off, 0, t.stts.count, |_, e| {
        let e: SttsEntry = zerocopy::transmute!(e);
        let count = e.sample_count.get();
        let delta = e.sample_delta.get() as i64;
        let span = (count as i64).saturating_mul(delta);
        if dts.saturating_add(span) > ts {
            let k = if delta > 0 {
                ((ts - dts) / delta).clamp(0, count as i64) as u32
            } else {
                0
            };
            n = n.saturating_add(k);
            return false;
        }
        dts = dts.saturating_add(span);
        n = n.saturating_add(count);
        true
    })?;
    n = n.min(t.sample_count.saturating_sub(1));
    if want_key && t.has_stss {
        n = sample_at_key_before(src, t, n)?;
    }
    Ok(n)
}

/// Microseconds.
const MICROS: Rational = Rational::new(1, 1_000_000);

impl Mp4Demuxer {
    /// Seeks every track to `ts` in the time base of `track` (the anchor).
    pub(super) fn seek_inner<S: Source>(
        &mut self,
        src: &mut S,
        ctx: &mut Context,
        track: usize,
        ts: i64,
    ) -> Result<()> {
        let Some(anchor) = self.tracks.iter().find(|t| t.index == track) else {
            return Err(Error::new(
                ErrorKind::InvalidArgument,
                0,
                &"mp4 seek: no track with this index (FormatDemuxer::seek)",
            ));
        };
        let (start, shift) = (anchor.start, anchor.shift);
        if self.tracks.iter().any(|t| t.sample_count > 0) {
            if ts <= start {
                return self.seek_to_start(src, ctx);
            }
            return self.seek_tables(src, ctx, track, ts);
        }
        self.seek_fragments(src, ctx, track, ts.saturating_add(shift))
    }

    /// At or before the start: every track restarts where a read from the
    /// beginning starts (including samples before an edit).
    fn seek_to_start<S: Source>(&mut self, src: &mut S, ctx: &mut Context) -> Result<()> {
        for t in self.tracks.iter_mut() {
            let w = self.windows.of(t.own_windows);
            position(src, ctx, t, w, 0)?;
            restart(src, ctx, t, w)?;
        }
        self.in_fragments = false;
        self.next_cover = 0;
        Ok(())
    }

    /// Seeks the anchor track to its keyframe at or before `ts`, then every
    /// other track to the anchor's resulting time.
    fn seek_tables<S: Source>(&mut self, src: &mut S, ctx: &mut Context, track: usize, ts: i64) -> Result<()> {
        let ai = self.tracks.iter().position(|t| t.index == track).unwrap_or(0);
        let mut target_us = 0i64;
        if let Some(t) = self.tracks.get_mut(ai) {
            let raw = ts.saturating_add(t.shift);
            let n = sample_at(src, t, raw, !t.audio)?;
            let w = self.windows.of(t.own_windows);
            position(src, ctx, t, w, n)?;
            let base = Rational::new(1, t.timescale);
            target_us = rescale(t.cur.dts.saturating_sub(t.shift), base, MICROS);
            let s = next_sample(src, ctx, t, w)?;
            t.set_pending(s);
        }
        for (i, t) in self.tracks.iter_mut().enumerate() {
            if i == ai {
                continue;
            }
            let tb = Rational::new(1, t.timescale);
            let raw = rescale(target_us, MICROS, tb).saturating_add(t.shift);
            let n = sample_at(src, t, raw, !t.audio)?;
            let w = self.windows.of(t.own_windows);
            position(src, ctx, t, w, n)?;
            let s = next_sample(src, ctx, t, w)?;
            t.set_pending(s);
        }
        self.in_fragments = false;
        Ok(())
    }

    /// Fragmented: restarts at the last fragment that starts at or before
    /// the raw decode time `raw` of `track`, then finds the anchor's landing
    /// sample in it.
    fn seek_fragments<S: Source>(&mut self, src: &mut S, ctx: &mut Context, track: usize, raw: i64) -> Result<()> {
        let best = self.last_moof_before(src, ctx, track, raw)?;
        self.frag = Frag {
            top: best,
            ..Frag::default()
        };
        self.in_fragments = true;
        for t in self.tracks.iter_mut() {
            t.pending = None;
        }
        self.find_landing(src, ctx, track, raw)
    }

    /// The last `moof` whose `traf` of `track` starts at or before `raw`,
    /// found by walking moof headers (bounded by the limits); the first
    /// `moof` when none does.
    fn last_moof_before<S: Source>(&mut self, src: &mut S, ctx: &mut Context, track: usize, raw: i64) -> Result<u64> {
        let first = self.first_moof(src, ctx)?;
        self.frag = Frag {
            top: first,
            ..Frag::default()
        };
        let mut best = first;
        let mut guard = 0u32;
        while self.next_moof(src, ctx)? {
            guard += 1;
            if guard > ctx.limits.max_fragments {
                break;
            }
            let moof = self.frag.moof_start;
            match self.traf_start(src, ctx, track)? {
                Some(dts) if dts <= raw => best = moof,
                Some(_) => break,
                None => {}
            }
        }
        Ok(best)
    }

    /// The decode time of the last `traf` of `track` in the current `moof`.
    fn traf_start<S: Source>(&mut self, src: &mut S, ctx: &mut Context, track: usize) -> Result<Option<i64>> {
        let mut at = self.frag.moof_child;
        let mut found = None;
        while at.saturating_add(8) <= self.frag.moof_end {
            let h = read_box_header(src, at, self.frag.moof_end)?;
            if &h.kind == b"traf"
                && self.enter_traf(src, ctx, &h)?
                && self.tracks.get(self.frag.track).map(|t| t.index) == Some(track)
            {
                found = Some(self.frag.dts);
            }
            if h.end <= at {
                break;
            }
            at = h.end;
        }
        Ok(found)
    }

    /// Within the fragment the seek restarts at, finds the anchor's landing
    /// sample: the last keyframe (video) or sample (audio) starting at or
    /// before the target. Headers only; the state is restored afterwards.
    fn find_landing<S: Source>(&mut self, src: &mut S, ctx: &mut Context, track: usize, raw: i64) -> Result<()> {
        let saved = self.frag;
        let saved_dts: heapless::Vec<i64, MAX_TRACKS> = self.tracks.iter().map(|t| t.next_dts).collect();
        let ai = self.tracks.iter().position(|t| t.index == track).unwrap_or(0);
        let audio = self.tracks.get(ai).map(|t| t.audio).unwrap_or(true);
        let (mut seen, mut land, mut land_dts) = (0u32, 0u32, None);
        let mut first_fragment = None;
        while let Some((i, s)) = self.next_fragment_sample(src, ctx)? {
            let frag_no = *first_fragment.get_or_insert(self.frag.fragments);
            if self.frag.fragments != frag_no {
                break;
            }
            if i == ai {
                if s.dts <= raw && (audio || s.key) {
                    land = seen;
                    land_dts = Some(s.dts);
                }
                seen += 1;
            }
        }
        self.frag = saved;
        for (t, d) in self.tracks.iter_mut().zip(saved_dts) {
            t.next_dts = d;
        }
        self.frag_skip = land_dts.map(|d| {
            let us = self
                .tracks
                .get(ai)
                .map(|t| rescale(d.saturating_sub(t.shift), Rational::new(1, t.timescale), MICROS))
                .unwrap_or(0);
            (ai, land, us)
        });
        Ok(())
    }
}
