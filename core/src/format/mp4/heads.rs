//! The tracks' pending samples as the pick sees them (with `mp4-windows`):
//! each track's decode time in microseconds and file offset, kept side by
//! side in two small arrays with a bit per track that has one, so that
//! [`Heads::pick`] (ffmpeg `mov_find_next_sample`) reads 16 bytes a track
//! instead of walking the tracks' states, and each time is rescaled once,
//! when its sample becomes pending. [`Heads::set`] follows every change of
//! one track's `pending`; [`Heads::sync`] rebuilds all of them after an
//! open or a seek. Without the feature the pick walks the tracks
//! ([`super::demuxer::Mp4Demuxer`]).

use super::demuxer::Mp4Track;
use crate::limits::MAX_TRACKS;
use crate::types::{rescale, Rational};

// One bit of `live` per track.
const _: () = assert!(MAX_TRACKS <= 32);

/// The pending samples of the tracks, for the pick.
#[derive(Debug, Clone, Copy, Default)]
pub(super) struct Heads {
    /// Track `i`'s pending sample: decode time in microseconds after the
    /// edit list's shift, and file offset.
    at: [(i64, u64); MAX_TRACKS],
    /// Bit `i` set: track `i` has a pending sample.
    live: u32,
}

impl Heads {
    /// Notes track `i`'s pending sample (after [`Mp4Track::set_pending`]).
    #[inline(always)]
    pub(super) fn set(&mut self, i: usize, t: &Mp4Track) {
        let bit = 1u32.checked_shl(i as u32).unwrap_or(0);
        match (&t.pending, self.at.get_mut(i)) {
            (Some(s), Some(h)) => {
                *h = (micros(s.dts.saturating_sub(t.shift), t.timescale), s.pos);
                self.live |= bit;
            }
            _ => self.live &= !bit,
        }
    }

    /// Notes every track's pending sample.
    pub(super) fn sync(&mut self, tracks: &[Mp4Track]) {
        self.live = 0;
        for (i, t) in tracks.iter().enumerate() {
            self.set(i, t);
        }
    }

    /// The track whose pending sample comes next (ffmpeg
    /// `mov_find_next_sample`): the first track with a pending sample is
    /// the best so far; a later one replaces it when it is within a second
    /// of it and stored before it, or more than a second earlier.
    #[inline(always)]
    pub(super) fn pick(&self) -> Option<usize> {
        let mut live = self.live;
        if live == 0 {
            return None;
        }
        let mut best = live.trailing_zeros() as usize;
        let (mut bd, mut bp) = self.at.get(best).copied().unwrap_or_default();
        live &= live - 1;
        while live != 0 {
            let i = live.trailing_zeros() as usize;
            live &= live - 1;
            let Some(&(dts, pos)) = self.at.get(i) else { break };
            let better = if dts.abs_diff(bd) <= 1_000_000 {
                pos < bp
            } else {
                dts < bd
            };
            if better {
                (best, bd, bp) = (i, dts, pos);
            }
        }
        Some(best)
    }
}

/// `v` ticks of `1/timescale` in microseconds: [`rescale`] to `1/1000000`
/// inlined for the pending sample of every packet, with the same product,
/// the same rounding (to nearest, half away from zero) and, when the
/// product overflows 64 bits or `timescale` is 0, `rescale` itself.
#[inline(always)]
pub(super) fn micros(v: i64, timescale: u32) -> i64 {
    let d = i64::from(timescale);
    let half = d / 2;
    let sum = v.checked_mul(1_000_000).and_then(|n| {
        if n >= 0 {
            n.checked_add(half)
        } else {
            n.checked_sub(half)
        }
    });
    match sum {
        Some(n) if d != 0 => n / d,
        _ => rescale(v, Rational::new(1, timescale), Rational::new(1, 1_000_000)),
    }
}

#[cfg(test)]
mod tests {
    use super::super::demuxer::Mp4Track;
    use super::super::sample_table::Sample;
    use super::{micros, Heads};
    use crate::limits::MAX_TRACKS;
    use crate::types::{rescale, Rational};

    /// The pick over the heads is the pick over the tracks (each time
    /// rescaled there): for sets of tracks of different timescales,
    /// shifts, times a second apart or less, equal times and offsets,
    /// and tracks without a pending sample.
    #[test]
    fn pick_over_heads_is_the_pick_over_tracks() {
        let walk = |tracks: &[Mp4Track]| {
            let mut best: Option<(usize, i64, u64)> = None;
            for (i, t) in tracks.iter().enumerate() {
                let Some(s) = &t.pending else { continue };
                let us = rescale(
                    s.dts.saturating_sub(t.shift),
                    Rational::new(1, t.timescale),
                    Rational::new(1, 1_000_000),
                );
                let better = match best {
                    None => true,
                    Some((_, bd, bp)) if us.abs_diff(bd) <= 1_000_000 => s.pos < bp,
                    Some((_, bd, _)) => us < bd,
                };
                if better {
                    best = Some((i, us, s.pos));
                }
            }
            best.map(|b| b.0)
        };
        let scales = [90_000u32, 44_100, 1000, 600];
        let mut seed = 0x2545_f491_u32;
        let mut next = move || {
            seed ^= seed << 13;
            seed ^= seed >> 17;
            seed ^= seed << 5;
            seed
        };
        for round in 0..2000 {
            let n = 1 + round % MAX_TRACKS;
            let mut tracks: [Mp4Track; MAX_TRACKS] = core::array::from_fn(|_| Mp4Track::default());
            let mut heads = Heads::default();
            for t in tracks.iter_mut().take(n) {
                t.timescale = scales[(next() % 4) as usize];
                t.shift = i64::from(next() % 3) * 1000 - 1000;
                t.pending = (next() % 5 != 0).then(|| Sample {
                    pos: u64::from(next() % 8) * 1000,
                    dts: i64::from(next() % (3 * t.timescale)),
                    ..Sample::default()
                });
            }
            heads.sync(&tracks[..n]);
            assert_eq!(heads.pick(), walk(&tracks[..n]), "round {round}");
            // One track's pending sample changed, as a packet changes it.
            let i = (next() as usize) % n;
            tracks[i].pending = None;
            heads.set(i, &tracks[i]);
            assert_eq!(heads.pick(), walk(&tracks[..n]), "round {round}, track {i} ended");
        }
    }

    /// The inlined conversion gives `rescale`'s value for every timescale
    /// kind (dividing 10^6 or not, odd, 0, the largest) and for times of
    /// both signs, ties, and products past 64 bits.
    #[test]
    fn micros_is_rescale() {
        let scales = [
            0u32,
            1,
            2,
            3,
            600,
            1000,
            15_360,
            44_100,
            48_000,
            90_000,
            1_000_000,
            3_000_001,
            u32::MAX,
        ];
        let times = [
            0i64,
            1,
            -1,
            7,
            -7,
            22_050,
            -22_050,
            45_000,
            1 << 40,
            -(1 << 40),
            i64::MAX / 1_000_000,
            i64::MAX / 1_000_000 + 1,
            i64::MAX,
            i64::MIN,
        ];
        for &ts in &scales {
            for &v in &times {
                for d in -3..=3i64 {
                    let v = v.saturating_add(d);
                    let want = rescale(v, Rational::new(1, ts), Rational::new(1, 1_000_000));
                    assert_eq!(micros(v, ts), want, "{v} ticks of 1/{ts}");
                }
            }
        }
    }
}
