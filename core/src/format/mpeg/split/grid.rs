//! The `av_add_stable` frame grid kept from one AAC/LATM frame to the next,
//! so that a step along it is an addition with carry instead of the two to
//! four 64-bit divisions of [`add_stable`] (feature `ts-fast`).
//!
//! [`add_stable`] on `ts`, with `m = samples * 90000` and `d = rate`, finds
//! the grid index `k = round(ts * d / m)`, the grid point
//! `q(k) = round(k * m / d)` and gives `q(k + 1) + (ts - q(k))`. Fed its own
//! result, it finds `k + 1` again exactly when
//! `0 <= e * d + d/2 + m/2 - r(k + 1) < m`, where `e = ts - q(k)` (the same
//! along the chain) and `r(k + 1)` is the remainder of `q(k + 1)`'s
//! division: then the next step is `q(k + 2) + e`, and `q(k + 2)`, `r(k + 2)`
//! follow from `q(k + 1)`, `r(k + 1)` by adding `m / d` and `m % d` with a
//! carry. Any other time stamp, frame size, rate, or an overflow takes
//! [`add_stable`] again, which gives the same results.

use super::kind::add_stable;

/// The grid after the last step (see the module's documentation).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(super) struct Grid {
    /// The last step's result, for which `q`, `r` hold; `None`: no chain.
    pub(super) next: Option<i64>,
    samples: u32,
    rate: u32,
    /// `m`, `m / d` and `m % d`.
    m: i64,
    quot: i64,
    rem: i64,
    /// `q(k + 1)` and `r(k + 1)` of the last step.
    q: i64,
    r: i64,
    /// `e * d + d/2 + m/2` and `e`.
    bound: i64,
    e: i64,
}

impl Grid {
    /// `add_stable(ts, samples, rate)`, along the kept grid when `ts` is the
    /// last result for the same frame size and rate.
    pub(super) fn add(&mut self, ts: i64, samples: u32, rate: u32) -> i64 {
        if self.next == Some(ts) && self.samples == samples && self.rate == rate {
            if let Some(t) = self.step() {
                return t;
            }
        }
        match self.enter(ts, samples, rate) {
            Some(t) => t,
            None => {
                self.next = None;
                add_stable(ts, samples, rate)
            }
        }
    }

    /// One step from the last result: `q(k + 2) + e`, when `k + 1` is the
    /// grid index of that result.
    fn step(&mut self) -> Option<i64> {
        if !(0..self.m).contains(&self.bound.saturating_sub(self.r)) {
            return None;
        }
        let mut r = self.r + self.rem;
        let mut q = self.q.checked_add(self.quot)?;
        let d = i64::from(self.rate.max(1));
        if r >= d {
            r -= d;
            q = q.checked_add(1)?;
        }
        let t = q.checked_add(self.e)?;
        (self.q, self.r, self.next) = (q, r, Some(t));
        Some(t)
    }

    /// A new chain from `ts`: [`add_stable`]'s divisions, keeping the grid.
    fn enter(&mut self, ts: i64, samples: u32, rate: u32) -> Option<i64> {
        let (m, d) = (i64::from(samples) * 90_000, i64::from(rate.max(1)));
        let (quot, rem) = (m / d, m % d);
        if rem == 0 {
            // Exact steps: no grid to keep.
            self.next = None;
            return ts.checked_add(quot);
        }
        let k = ts.checked_mul(d)?.checked_add(m / 2)?.div_euclid(m);
        let a = k.checked_mul(m)?.checked_add(d / 2)?;
        let (qk, rk) = (a.div_euclid(d), a.rem_euclid(d));
        let mut r = rk + rem;
        let mut q = qk.checked_add(quot)?;
        if r >= d {
            r -= d;
            q = q.checked_add(1)?;
        }
        let e = ts.checked_sub(qk)?;
        let t = q.checked_add(e)?;
        let bound = e.checked_mul(d)?.checked_add(d / 2)?.checked_add(m / 2)?;
        *self = Grid {
            next: Some(t),
            samples,
            rate,
            m,
            quot,
            rem,
            q,
            r,
            bound,
            e,
        };
        Some(t)
    }
}
