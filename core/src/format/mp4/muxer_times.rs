//! The decode and presentation times of a track's samples, from the index
//! (`muxer_index.rs`), for `stts` and `ctts` (ISO/IEC 14496-12 §8.6.1.2,
//! §8.6.1.3).
//!
//! An input with only presentation times (Matroska, whose blocks have one
//! timestamp) has no decode times; with B-frames its presentation times go
//! back. The muxer then records provisional decode times (the latest
//! presentation time so far, so that no delta is negative) and the true
//! presentation time as a negative composition offset, and marks the track
//! reordered. At `finish` the decode times are rebuilt as ffmpeg's generic
//! code does for such inputs: the presentation times in increasing order,
//! delayed by the reorder depth `D` (the most earlier samples presented
//! after a sample), the first `D` extrapolated backwards one frame apart; so
//! every composition offset is at least 0 and every decode delta too. A
//! window of [`REORDER_WINDOW`] presentation times does it in fixed memory
//! (a deeper reorder keeps decode times monotonic, with some offsets
//! negative, `ctts` version 1):
//! the `k`-th smallest presentation time is the least of the window once
//! the first `k + D + 1` samples are in it, since no sample sits more than
//! `D` places after its rank.

use super::muxer::TrackState;
use super::muxer_index::Sample;
use super::muxer_records::{Index, Records};

/// Most presentation times held while rebuilding decode times: the reorder
/// depth is capped at one less (H.264 allows 16 frames of reorder). A
/// deeper input still gets monotonic decode times, with negative offsets
/// where they must follow a presentation time.
pub const REORDER_WINDOW: usize = 32;

/// The samples of track `tr`, in order.
pub fn samples(index: Index<'_>, tr: u8) -> impl Iterator<Item = Sample> + '_ {
    Records::of(index).filter(move |s| s.track == tr)
}

/// How the decode times of a reordered track are rebuilt.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Rebuild {
    /// The provisional decode time of the first sample (what the index's
    /// deltas add to).
    from: i64,
    /// Reorder depth.
    depth: usize,
    /// The rebuilt decode time of the first sample.
    first: i64,
    /// One frame, for the first `depth` decode times.
    step: i64,
}

impl Rebuild {
    /// Measures track `tr` of `index`, whose first provisional decode time
    /// is `from`; `frame` is the packets' duration when the input gives one
    /// (0 when not).
    fn measure(index: Index<'_>, tr: u8, from: i64, frame: u64) -> Self {
        let mut ring = [0i64; REORDER_WINDOW];
        let mut depth = 0usize;
        let mut head = [i64::MAX; REORDER_WINDOW + 1];
        for (i, (_, pts)) in Times::plain(index, tr, from).enumerate() {
            let seen = i.min(REORDER_WINDOW);
            let later = ring.iter().take(seen).filter(|&&p| p > pts).count();
            depth = depth.max(later).min(REORDER_WINDOW - 1);
            if let Some(slot) = ring.get_mut(i % REORDER_WINDOW) {
                *slot = pts;
            }
            if let Some(slot) = head.get_mut(i) {
                *slot = pts;
            }
        }
        // The smallest two of the first depth + 2 presentation times: the
        // first presented time and one frame's length.
        let mut used = [i64::MAX; REORDER_WINDOW + 1];
        let n = (depth + 2).min(REORDER_WINDOW + 1);
        for (u, h) in used.iter_mut().zip(head.iter()).take(n) {
            *u = *h;
        }
        used.sort_unstable();
        let p0 = used.first().copied().unwrap_or(0);
        // One frame: the packets' own duration, else the gap between the
        // first two presentation times.
        let step = match (i64::try_from(frame), used.get(1)) {
            (Ok(f), _) if f > 0 => f,
            (_, Some(&p1)) if p1 != i64::MAX && p1 > p0 => p1 - p0,
            _ => 1,
        };
        let back = step.saturating_mul(i64::try_from(depth).unwrap_or(0));
        Rebuild {
            from,
            depth,
            first: p0.saturating_sub(back),
            step,
        }
    }
}

/// A track's state as `moov` describes it: for a reordered track, with the
/// decode times rebuilt (first and last decode time, offsets no longer
/// negative).
pub fn settle(index: Index<'_>, tr: u8, st: TrackState) -> TrackState {
    if !st.reordered || st.samples == 0 {
        return st;
    }
    let r = Rebuild::measure(index, tr, st.first_dts.unwrap_or(0), st.last_duration);
    let mut out = TrackState {
        rebuild: Some(r),
        first_dts: Some(r.first),
        negative_cts: false,
        any_cts: true,
        ..st
    };
    for (dts, pts) in Times::new(index, tr, &out) {
        out.last_dts = dts;
        out.negative_cts |= pts < dts;
    }
    out
}

/// Decode and presentation time of each sample of a track: from the index,
/// or rebuilt when the track's state (see [`settle`]) says so.
pub struct Times<'a> {
    inner: Records<'a>,
    track: u8,
    dts: i64,
    rebuild: Option<Rebuild>,
    /// The window, sorted descending: the least is last.
    window: heapless::Vec<i64, REORDER_WINDOW>,
    prev: i64,
    n: usize,
}

impl<'a> Times<'a> {
    /// The times of track `tr` whose state is `st`.
    pub fn new(index: Index<'a>, tr: u8, st: &TrackState) -> Self {
        match st.rebuild {
            Some(r) => Self::with(index, tr, r.from, Some(r)),
            None => Self::plain(index, tr, st.first_dts.unwrap_or(0)),
        }
    }

    /// The times the index records, from a first decode time `from`.
    fn plain(index: Index<'a>, tr: u8, from: i64) -> Self {
        Self::with(index, tr, from, None)
    }

    fn with(index: Index<'a>, tr: u8, from: i64, rebuild: Option<Rebuild>) -> Self {
        Times {
            inner: Records::of(index),
            track: tr,
            dts: from,
            rebuild,
            window: heapless::Vec::new(),
            prev: i64::MIN,
            n: 0,
        }
    }
}

impl Iterator for Times<'_> {
    /// (decode time, presentation time).
    type Item = (i64, i64);

    fn next(&mut self) -> Option<(i64, i64)> {
        let s = loop {
            let s = self.inner.next()?;
            if s.track == self.track {
                break s;
            }
        };
        if self.n > 0 {
            self.dts = self.dts.saturating_add(i64::try_from(s.delta).unwrap_or(i64::MAX));
        }
        let i = self.n;
        self.n += 1;
        let pts = self.dts.saturating_add(s.cts);
        let Some(r) = self.rebuild else {
            return Some((self.dts, pts));
        };
        // The window never holds more than depth + 1 < REORDER_WINDOW
        // times: one goes out for each one in from sample `depth` on.
        let at = self.window.iter().position(|&p| p < pts).unwrap_or(self.window.len());
        if self.window.insert(at, pts).is_err() {
            // Full (cannot happen, see above): the least goes out unused.
            self.window.pop();
        }
        let dts = if i >= r.depth {
            self.window.pop().unwrap_or(pts)
        } else {
            let i = i64::try_from(i).unwrap_or(0);
            r.first.saturating_add(i.saturating_mul(r.step))
        };
        // Never back; not after the sample is shown unless a reorder deeper
        // than the window leaves no other choice (then the offset is
        // negative, and `settle` says so).
        let dts = dts.max(self.prev).min(pts.max(self.prev));
        self.prev = dts;
        Some((dts, pts))
    }
}

#[cfg(test)]
mod tests {
    extern crate std;
    use super::*;
    use crate::format::mp4::muxer_index::append;

    /// An index of one track from provisional (dts, pts) pairs, as the
    /// muxer records an input with presentation times only.
    fn index_of(pts: &[i64], scratch: &mut [u8]) -> (usize, TrackState) {
        let mut len = 0;
        let mut st = TrackState::default();
        let mut run = Default::default();
        for (k, &p) in pts.iter().enumerate() {
            let dts = if k == 0 { p } else { st.last_dts.max(p) };
            st.reordered |= k > 0 && p < st.last_dts;
            let delta = if k == 0 { 0 } else { (dts - st.last_dts) as u64 };
            let s = Sample {
                track: 0,
                key: k == 0,
                size: 100,
                delta,
                cts: p - dts,
            };
            append(scratch, &mut len, &s, &mut run, 0).unwrap();
            st.first_dts.get_or_insert(dts);
            st.last_dts = dts;
            st.samples += 1;
        }
        (len, st)
    }

    #[test]
    fn b_frames_get_decode_times_before_their_presentation() {
        // I P B B P B B (presentation order 0 3 1 2 6 4 5), 10 ticks a frame.
        let pts = [0, 30, 10, 20, 60, 40, 50];
        let mut scratch = [0u8; 256];
        let (len, st) = index_of(&pts, &mut scratch);
        assert!(st.reordered);
        let index = Index::memory(scratch.get(..len).unwrap());
        let st = settle(index, 0, st);
        let times: std::vec::Vec<(i64, i64)> = Times::new(index, 0, &st).collect();
        // Depth 1 (no sample has more than one earlier sample shown after
        // it): decode times -10 0 10 20 30 40 50.
        let dts: std::vec::Vec<i64> = times.iter().map(|t| t.0).collect();
        assert_eq!(dts, [-10, 0, 10, 20, 30, 40, 50]);
        let shown: std::vec::Vec<i64> = times.iter().map(|t| t.1).collect();
        assert_eq!(shown, pts);
        assert!(times.iter().all(|(d, p)| d <= p));
        assert_eq!((st.first_dts, st.last_dts, st.negative_cts), (Some(-10), 50, false));
        // A B-pyramid (I P B b b): a b-frame has P and B before it, depth 2.
        let pts = [0, 40, 20, 10, 30, 80, 60, 50, 70];
        let (len, st) = index_of(&pts, &mut scratch);
        let index = Index::memory(scratch.get(..len).unwrap());
        let st = settle(index, 0, st);
        let dts: std::vec::Vec<i64> = Times::new(index, 0, &st).map(|t| t.0).collect();
        assert_eq!(dts, [-20, -10, 0, 10, 20, 30, 40, 50, 60]);
    }

    #[test]
    fn ordered_times_are_kept() {
        let pts = [0, 10, 20, 30];
        let mut scratch = [0u8; 64];
        let (len, st) = index_of(&pts, &mut scratch);
        assert!(!st.reordered);
        let index = Index::memory(scratch.get(..len).unwrap());
        let st = settle(index, 0, st);
        let times: std::vec::Vec<(i64, i64)> = Times::new(index, 0, &st).collect();
        assert_eq!(times, [(0, 0), (10, 10), (20, 20), (30, 30)]);
    }

    #[test]
    fn a_reorder_deeper_than_the_window_stays_monotonic() {
        // 40 frames shown in reverse after a first one: depth beyond 31.
        let mut pts = std::vec![0i64];
        pts.extend((1..=40).rev().map(|k| k * 10));
        let mut scratch = [0u8; 1024];
        let (len, st) = index_of(&pts, &mut scratch);
        let index = Index::memory(scratch.get(..len).unwrap());
        let st = settle(index, 0, st);
        let times: std::vec::Vec<(i64, i64)> = Times::new(index, 0, &st).collect();
        assert_eq!(times.len(), pts.len());
        assert!(times.windows(2).all(|w| w[0].0 <= w[1].0), "{times:?}");
        let shown: std::vec::Vec<i64> = times.iter().map(|t| t.1).collect();
        assert_eq!(shown, pts);
        // Monotonic decode times cannot all precede such presentation
        // times: the offsets that go negative are declared (ctts v1).
        assert!(times.iter().any(|(d, p)| d > p));
        assert!(st.negative_cts);
    }
}
