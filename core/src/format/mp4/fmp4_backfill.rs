//! Decode times the input gives late: the fragmented MP4 muxer's
//! back-fill of a track's first decode times (`fmp4.rs`).
//!
//! Matroska stores presentation times only; with B-frames its reader
//! derives decode times from the reorder depth `D` and gives none to a
//! track's first `D` packets (`mkv/block.rs`, `TrackState::dts_for`). The
//! fragmented muxer cannot wait for `finish` as the progressive one does
//! (`muxer_times.rs`), but it need not: a fragment's sample records stay in
//! the caller's scratch until the fragment closes. So those packets are
//! recorded with a provisional decode time (their presentation time, a
//! composition offset of 0) and counted as *waiting*; when the track's
//! first packet with a decode time `d` comes, the `k` waiting records get
//! `d − (k − j)·step` (`j` from 0), one frame apart and before `d`. That is
//! the progressive rebuild's rule for its first `D` samples (the first
//! presented time delayed by `D` frames), so both muxers give a reader the
//! same decode times; `step` is the packet's duration, else the gap
//! between the two least presentation times of these packets (the
//! rebuild's fallback too), else 1 tick.
//! A track that ends while waiting takes `d` = its least presentation time.
//!
//! The track's decode-time shift (the `elst` media time, `fmp4.rs`) is fixed
//! only then, from the first back-filled time, and patched into the init
//! segment (on a sink that cannot patch, the init segment is still held:
//! it goes out when the first fragment closes). No fragment closes by
//! duration while a track waits; one that must close for room (the records
//! or `moof` room of the scratch are full) is refused with a clear error
//! rather than written with wrong times. ISO/IEC 14496-12 §8.8.8 (`trun`),
//! §8.8.12 (`tfdt`), §8.6.6 (`elst`).

use super::fmp4_boxes::{Rec, RECORD};
use crate::error::{Error, Result};
use crate::limits::MAX_TRACKS;
use crate::types::Packet;

/// Per track, how many of its first records wait for a decode time.
#[derive(Debug, Clone, Copy, Default)]
pub(super) struct Waiting([u16; MAX_TRACKS]);

impl Waiting {
    /// Records of track `i` waiting.
    pub(super) fn count(&self, i: usize) -> u16 {
        self.0.get(i).copied().unwrap_or(0)
    }

    /// Whether any track waits.
    pub(super) fn any(&self) -> bool {
        self.0.iter().any(|&n| n > 0)
    }

    /// One more record of track `i` waits.
    pub(super) fn add(&mut self, i: usize, pos: u64) -> Result<()> {
        let n = self
            .0
            .get_mut(i)
            .ok_or(Error::capacity(pos, &"fmp4 muxer: no such track"))?;
        *n = n.checked_add(1).ok_or(Error::capacity(
            pos,
            &"fmp4 muxer: too many packets without a decode time at a track's start",
        ))?;
        Ok(())
    }

    /// Takes track `i`'s count (it waits no more).
    pub(super) fn take(&mut self, i: usize) -> u16 {
        self.0.get_mut(i).map_or(0, core::mem::take)
    }
}

/// The error for a decode time below 0 as written (by a track's shift).
pub(super) const NEGATIVE_TFDT: &str =
    "fmp4 muxer: a decode time before the track's first one, after the init segment is out (tfdt is unsigned, ISO/IEC 14496-12 8.8.12)";

/// The error when a fragment must close while a track waits.
pub(super) fn closed_while_waiting(pos: u64) -> Error {
    Error::capacity(
        pos,
        &"fmp4 muxer: a fragment filled before a track's first decode times were known (Matroska B-frames; a larger scratch or Fragmenting::max_samples)",
    )
}

/// The first packet of the track with a decode time, in the media time
/// scale: decode time, presentation time, duration (0: unknown).
#[derive(Debug, Clone, Copy)]
pub(super) struct Next {
    pub dts: i64,
    pub pts: i64,
    pub duration: i64,
}

impl Next {
    /// The times of packet `p` in the media time scale (times multiplied
    /// by the time base numerator `num`; a time that overflows it is
    /// refused when the packet itself is prepared, right after).
    pub(super) fn of(p: &Packet<'_>, num: u32) -> Next {
        let scaled = |t: Option<i64>| t.unwrap_or(0).saturating_mul(i64::from(num));
        let duration = p.duration.map(|d| i64::try_from(d).unwrap_or(i64::MAX));
        Next {
            dts: scaled(p.dts),
            pts: scaled(p.pts.or(p.dts)),
            duration: scaled(duration),
        }
    }
}

/// The back-filled decode times: the first and the last (unshifted), and
/// one frame between them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Plan {
    pub first: i64,
    pub last: i64,
    step: i64,
}

/// What a back-fill found: some composition offset not 0, some below 0.
#[derive(Debug, Clone, Copy, Default)]
pub(super) struct Filled {
    pub any_cts: bool,
    pub negative: bool,
}

/// The presentation times of the first `n` records of `track` (each
/// waiting record holds its presentation time as decode time plus offset).
fn waiting_pts(records: &[u8], track: u8, n: u16) -> impl Iterator<Item = i64> + '_ {
    records
        .chunks_exact(RECORD)
        .map(Rec::decode)
        .filter(move |r| r.track == track)
        .take(usize::from(n))
        .map(|r| r.dts.saturating_add(i64::from(r.cts)))
}

/// The decode times of the `n` waiting records of `track` in `records`,
/// given the track's first packet with a decode time (`None`: the track
/// ended).
pub(super) fn plan(records: &[u8], track: u8, n: u16, next: Option<Next>) -> Plan {
    // The two least presentation times, of the waiting packets and `next`
    // (as the progressive rebuild takes the two least of its first D + 2).
    let (mut p0, mut p1) = (i64::MAX, i64::MAX);
    for p in waiting_pts(records, track, n).chain(next.map(|x| x.pts)) {
        if p < p0 {
            (p0, p1) = (p, p0);
        } else if p > p0 && p < p1 {
            p1 = p;
        }
    }
    let d = next.map_or(p0, |x| x.dts);
    let step = match next.map_or(0, |x| x.duration) {
        f if f > 0 => f,
        _ if p1 != i64::MAX => p1.saturating_sub(p0),
        _ => 1,
    };
    Plan {
        first: d.saturating_sub(step.saturating_mul(i64::from(n))),
        last: d.saturating_sub(step),
        step,
    }
}

/// Rewrites the `n` waiting records of `track`: decode times as `plan`
/// says plus `shift` (as written), composition offsets to keep their
/// presentation times. Errors when a decode time as written is below 0
/// (§8.8.12) or an offset leaves i32 (§8.8.8).
pub(super) fn fill(records: &mut [u8], track: u8, n: u16, plan: Plan, shift: i64, pos: u64) -> Result<Filled> {
    if plan.first.saturating_add(shift) < 0 {
        return Err(Error::unsupported(pos, &NEGATIVE_TFDT));
    }
    let mut out = Filled::default();
    let (mut dts, mut left) = (plan.first, n);
    for b in records.chunks_exact_mut(RECORD) {
        let mut r = Rec::decode(b);
        if r.track != track {
            continue;
        }
        if left == 0 {
            break;
        }
        left -= 1;
        let pts = r.dts.saturating_add(i64::from(r.cts));
        r.cts = i32::try_from(pts.saturating_sub(dts)).map_err(|_| {
            Error::unsupported(
                pos,
                &"fmp4 muxer: a composition offset outside i32 (ISO/IEC 14496-12 8.8.8)",
            )
        })?;
        r.dts = dts.saturating_add(shift);
        out.any_cts |= r.cts != 0;
        out.negative |= r.cts < 0;
        b.copy_from_slice(&r.encode());
        dts = dts.saturating_add(plan.step);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn records(recs: &[Rec]) -> [u8; 8 * RECORD] {
        let mut out = [0u8; 8 * RECORD];
        for (b, r) in out.chunks_exact_mut(RECORD).zip(recs) {
            b.copy_from_slice(&r.encode());
        }
        out
    }

    fn waiting(track: u8, pts: i64) -> Rec {
        Rec {
            track,
            dts: pts,
            size: 10,
            ..Rec::default()
        }
    }

    #[test]
    fn first_decode_times_go_back_one_frame_each_from_the_first_given() {
        // I P B b (B-pyramid, depth 2): presentation 21 181 (no decode
        // times), then 101 with decode time 21; an audio record between.
        let mut b = records(&[waiting(0, 21), waiting(1, 0), waiting(0, 181)]);
        let next = Next {
            dts: 21,
            pts: 101,
            duration: 40,
        };
        let p = plan(&b, 0, 2, Some(next));
        assert_eq!((p.first, p.last), (-59, -19));
        let f = fill(&mut b, 0, 2, p, 59, 0).unwrap_or_default();
        assert!(f.any_cts && !f.negative);
        let recs: [Rec; 3] = core::array::from_fn(|k| Rec::decode(b.get(k * RECORD..).unwrap_or(&[])));
        let [v0, a, v1] = recs;
        // As written (shifted by 59): 0 and 40, offsets 80 and 200.
        assert_eq!((v0.dts, v0.cts, v1.dts, v1.cts), (0, 80, 40, 200));
        assert_eq!(a, waiting(1, 0), "another track's record is untouched");
    }

    #[test]
    fn without_a_duration_the_step_is_the_next_presentation_gap() {
        let b = records(&[waiting(0, 0), waiting(0, 30)]);
        let next = Next {
            dts: 0,
            pts: 10,
            duration: 0,
        };
        assert_eq!(plan(&b, 0, 2, Some(next)).first, -20);
        // A track that ends while waiting: from its least presentation time.
        let p = plan(&b, 0, 2, None);
        assert_eq!((p.first, p.last), (-60, -30));
    }

    #[test]
    fn counts_are_per_track() {
        let mut w = Waiting::default();
        assert!(!w.any());
        assert!(w.add(1, 0).is_ok() && w.add(1, 0).is_ok());
        assert_eq!((w.count(0), w.count(1)), (0, 2));
        assert!(w.any());
        assert_eq!(w.take(1), 2);
        assert!(!w.any());
        assert!(w.add(MAX_TRACKS, 0).is_err());
    }
}
