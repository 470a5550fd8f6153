//! Unwrapping the 33-bit PES time stamps (ISO/IEC 13818-1 §2.4.3.7: PTS and
//! DTS count 90 kHz ticks modulo 2^33, about 26.5 hours) once, as ffmpeg
//! does: a reference 60 s before the first time stamp read decides, for
//! every later one, whether it is before or after the wrap.
//!
//! The rule (ffmpeg's behaviour, `correct_ts_overflow`): with `first` the
//! first time stamp (its DTS, else its PTS), `reference = first - 60 s`;
//! when `first` is not within the last 60 s before 2^33, a time stamp below
//! the reference gets 2^33 added (it comes after the wrap); otherwise one
//! at or above the reference gets 2^33 taken off (it comes before the
//! wrap: times then start negative). Times are continuous over the 2^33
//! ticks from the reference; a file longer than that (26.5 hours less
//! 60 s) jumps back by 2^33 there, as ffmpeg's times do.

/// 2^33: the period of PES time stamps.
const PERIOD: i64 = 1 << 33;
/// 60 s in 90 kHz ticks: how far before the first time stamp the reference
/// lies.
const LEAD: i64 = 60 * 90_000;

/// The wrap reference of a stream (ffmpeg's `pts_wrap_reference` and
/// `pts_wrap_behavior`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Wrap {
    reference: i64,
    /// Add 2^33 below the reference (else take it off at and above it).
    add: bool,
}

impl Wrap {
    /// The reference set by the first time stamp `first` (33 bits).
    pub(crate) fn new(first: i64) -> Self {
        let first = first & (PERIOD - 1);
        Wrap {
            reference: first - LEAD,
            add: first < PERIOD - LEAD,
        }
    }

    /// The time stamp `t` (33 bits) unwrapped.
    pub(crate) fn apply(self, t: i64) -> i64 {
        match self.add {
            true if t < self.reference => t + PERIOD,
            false if t >= self.reference => t - PERIOD,
            _ => t,
        }
    }
}

/// `t` unwrapped by `wrap`, which the first time stamp seen sets.
pub(crate) fn unwrap_time(wrap: &mut Option<Wrap>, t: Option<i64>) -> Option<i64> {
    let t = t?;
    Some(wrap.get_or_insert_with(|| Wrap::new(t)).apply(t))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn adds_after_the_wrap_or_takes_off_before_it() {
        // First time 3 minutes before the wrap: later small times are after it.
        let w = Wrap::new(PERIOD - 180 * 90_000);
        assert_eq!(w.apply(PERIOD - 180 * 90_000), PERIOD - 180 * 90_000);
        assert_eq!(w.apply(5), PERIOD + 5);
        assert_eq!(w.apply(PERIOD - 200 * 90_000), PERIOD - 200 * 90_000);
        assert_eq!(w.apply(PERIOD - 250 * 90_000), 2 * PERIOD - 250 * 90_000);
        // First time 2 s before the wrap: times before it are negative.
        let w = Wrap::new(PERIOD - 180_000);
        assert_eq!(w.apply(PERIOD - 180_000), -180_000);
        assert_eq!(w.apply(7), 7);
        assert_eq!(w.apply(PERIOD - 63 * 90_000), PERIOD - 63 * 90_000);
        // First time under 60 s: nothing ever changes.
        let w = Wrap::new(90_000);
        assert_eq!((w.apply(0), w.apply(PERIOD - 1)), (0, PERIOD - 1));
        let mut o = None;
        assert_eq!(unwrap_time(&mut o, None), None);
        assert_eq!(unwrap_time(&mut o, Some(PERIOD - 90_000)), Some(-90_000));
        assert_eq!(unwrap_time(&mut o, Some(3)), Some(3));
    }
}
