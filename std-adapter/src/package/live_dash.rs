//! The live MPD of `package --live --dash`: `manifest.mpd`, `type="dynamic"`
//! while the input lasts (ISO/IEC 23009-1 §5.3.1.2; DASH-IF IOP, live
//! services), rewritten (temporary name and rename) after each segment,
//! and `type="static"` once the input has ended.
//!
//! As for a finished file, each audio and video track is one Adaptation
//! Set whose segments hold it alone, under `dash/<track ID>/`: each muxed
//! segment is cut into one fragment per track as it completes
//! ([`super::cmaf_split`]); the muxed segment is read back from disk, one
//! segment at a time. Each track's `SegmentTimeline` lists exactly its
//! files still on disk, `startNumber` the first of them; with `--window` a
//! track's file is deleted with the muxed segment it came from.
//!
//! Memory: with a window, each track's records of the files listed;
//! without one (every file stays), each track's records go to a
//! [`SegmentLog`] whose records pass to a temporary file in the track's
//! folder past the first 256, and each rewrite of the MPD reads them back
//! into a buffered file write ([`crate::dash::write_mpd`]), so nothing
//! grows with the length of the input (the MPD itself does, on disk: an
//! `S` element per run of equal durations).

use super::cmaf_split::{fragment_of, init_of};
use super::live::write_atomic;
use super::{codecs_of, resolution, tfdt, track_scales, trun_ticks, Segment, SegmentLog};
use crate::dash::{write_mpd, Dynamic, Representation};
use std::collections::VecDeque;
use std::io::Write;
use std::path::Path;

/// One track's files and timeline.
#[derive(Default)]
struct Track {
    id: u32,
    dir: String,
    codecs: String,
    video: bool,
    resolution: Option<(u16, u16)>,
    timescale: u32,
    /// With a window: its files on disk, oldest first, with the muxed
    /// segment each came from.
    disk: VecDeque<(Segment, u64)>,
    /// Without one: every file written (none is deleted), spilled past
    /// the first few.
    log: Option<SegmentLog>,
    /// Number of the first file on disk, and of the next one.
    first_number: u64,
    next_number: u64,
    /// Decode time of the first file on disk, and of the first ever (the
    /// `presentationTimeOffset` while live).
    first_time: u64,
    origin: Option<u64>,
    peak: u64,
}

impl Track {
    /// Its file `number`, cut from muxed segment `seq`, is on disk.
    ///
    /// Errors: writing the log's temporary file.
    fn record(&mut self, number: u64, one: Segment, seq: u64) -> std::io::Result<()> {
        match self.log.as_mut() {
            Some(log) => log.push(number, &one),
            None => {
                self.disk.push_back((one, seq));
                Ok(())
            }
        }
    }
}

/// The live MPD's state.
#[derive(Default)]
pub(super) struct LiveDash {
    tracks: Vec<Track>,
    /// `availabilityStartTime`, seconds since 1970, set at the first
    /// segment.
    available: Option<f64>,
    /// No window: every track file stays, and the records go to a
    /// [`SegmentLog`] per track.
    keep_all: bool,
}

/// Seconds since 1970 now.
fn now() -> f64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0.0, |d| d.as_secs_f64())
}

impl LiveDash {
    /// The state of a run with a window (`window`: files leave) or
    /// without one (every file stays listed).
    pub(super) fn new(window: bool) -> Self {
        LiveDash {
            keep_all: !window,
            ..LiveDash::default()
        }
    }

    /// The muxed init segment is known: one init segment per audio or
    /// video track.
    ///
    /// Errors: writing a file; `Unsupported` for a codec with no `codecs`
    /// string.
    pub(super) fn start(&mut self, dir: &Path, init: &[u8]) -> std::io::Result<()> {
        let scales = track_scales(init);
        for (i, (handler, _, _)) in super::tracks(init).iter().enumerate() {
            let video = handler == b"vide";
            if !video && handler != b"soun" {
                continue;
            }
            let id = i as u32 + 1;
            let rel = format!("dash/{id}");
            let one = init_of(init, id);
            let codecs = codecs_of(&one)
                .map_err(|e| std::io::Error::new(std::io::ErrorKind::Unsupported, e.to_string()))?
                .join(",");
            std::fs::create_dir_all(dir.join(&rel))?;
            write_atomic(&dir.join(&rel).join("init.mp4"), &one)?;
            let log = self.keep_all.then(|| SegmentLog::spilled(&dir.join(&rel), "m4s"));
            self.tracks.push(Track {
                id,
                dir: rel,
                codecs,
                video,
                resolution: if video { resolution(&one) } else { None },
                timescale: scales.get(i).copied().unwrap_or(1).max(1),
                first_number: 1,
                next_number: 1,
                log,
                ..Track::default()
            });
        }
        Ok(())
    }

    /// The muxed segment `seg` (number `seq` from 0) is complete in `dir`:
    /// its fragment per track written.
    ///
    /// Errors: reading or writing a file; a segment not as the muxer
    /// writes them.
    pub(super) fn push(&mut self, dir: &Path, seg: &Segment, seq: u64) -> std::io::Result<()> {
        let bytes = std::fs::read(dir.join(&seg.name))?;
        // The segment starts with its moof (checked by fragment_of).
        let moof = bytes.get(..super::be32(&bytes, 0) as usize).unwrap_or(&[]);
        if self.available.is_none() {
            // The first segment is available as soon as it is written: the
            // Period started its duration before now.
            self.available = Some(now() - seg.seconds);
        }
        for t in &mut self.tracks {
            let Some(frag) = fragment_of(&bytes, t.id)? else {
                continue;
            };
            let ticks = trun_ticks(moof, t.id);
            if t.origin.is_none() {
                let start = tfdt(moof, t.id);
                (t.origin, t.first_time) = (Some(start), start);
            }
            let number = t.next_number;
            let name = format!("seg_{number:05}.m4s");
            t.next_number += 1;
            let path = dir.join(&t.dir).join(&name);
            let mut tmp = path.as_os_str().to_owned();
            tmp.push(".part");
            std::fs::write(&tmp, &frag)?;
            std::fs::rename(&tmp, &path)?;
            let seconds = ticks as f64 / f64::from(t.timescale);
            t.peak = t.peak.max((frag.len() as f64 * 8.0 / seconds.max(0.001)).ceil() as u64);
            let one = Segment {
                name,
                bytes: frag.len() as u64,
                seconds,
                ticks,
            };
            t.record(number, one, seq)?;
        }
        Ok(())
    }

    /// The muxed segments up to number `gone` were deleted: so are the
    /// tracks' files cut from them.
    pub(super) fn drop_through(&mut self, dir: &Path, gone: u64) {
        for t in &mut self.tracks {
            while t.disk.front().is_some_and(|(_, from)| *from <= gone) {
                if let Some((s, _)) = t.disk.pop_front() {
                    let _ = std::fs::remove_file(dir.join(&t.dir).join(&s.name));
                    t.first_time += s.ticks;
                    t.first_number += 1;
                }
            }
        }
    }

    /// The MPD over the files on disk: dynamic while the input lasts
    /// (`update` the target segment duration in seconds, `depth` the
    /// window's span); at its end static, the Period starting at the first
    /// segment on disk (`presentationTimeOffset` its time) and
    /// `mediaPresentationDuration` their sum. Written to `x` as it is
    /// made, each track's timeline as its records are read back.
    ///
    /// Errors: reading a track's records back, writing `x`.
    pub(super) fn write_mpd(
        &mut self,
        x: &mut dyn Write,
        update: f64,
        depth: Option<f64>,
        end: bool,
    ) -> std::io::Result<()> {
        // One Period start for all tracks, in seconds of media time (the
        // earliest track's), so that the tracks stay in sync: a track
        // that starts later starts later in the Period.
        let secs = |t: &Track| {
            let at = if end { t.first_time } else { t.origin.unwrap_or(0) };
            at as f64 / f64::from(t.timescale)
        };
        let zero = self.tracks.iter().map(secs).fold(f64::INFINITY, f64::min);
        let zero = if zero.is_finite() { zero } else { 0.0 };
        let mut sets = Vec::with_capacity(self.tracks.len());
        for t in &mut self.tracks {
            // A track's log is lent to its Representation for the write
            // and given back below.
            let segments = match t.log.as_mut() {
                Some(log) => std::mem::take(log),
                None => {
                    let mut held = SegmentLog::held("m4s");
                    for (n, (s, _)) in (t.first_number..).zip(&t.disk) {
                        held.push(n, s)?;
                    }
                    held
                }
            };
            sets.push(Representation {
                dir: t.dir.clone(),
                codecs: t.codecs.clone(),
                video: t.video,
                resolution: t.resolution,
                bandwidth: t.peak,
                timescale: t.timescale,
                start: t.first_time,
                offset: (zero * f64::from(t.timescale)).round() as u64,
                first_number: t.first_number,
                segments,
            });
        }
        // DASH-IF IOP (live): re-read about once a segment, play a few
        // segments behind the live edge; the time-shift buffer is the
        // window's span (the files stay a window longer, as for HLS).
        let live = Dynamic {
            availability_start: self.available.unwrap_or_else(now),
            publish: now(),
            update,
            depth,
            delay: 3.0 * update,
        };
        let written = write_mpd(x, &sets, (!end).then_some(&live));
        for (t, r) in self.tracks.iter_mut().zip(sets) {
            if let Some(log) = t.log.as_mut() {
                *log = r.segments;
            }
        }
        written
    }

    /// Records held in memory now, over all tracks (at most 256 a track
    /// without a window).
    #[cfg(test)]
    fn held_records(&self) -> usize {
        self.tracks
            .iter()
            .map(|t| t.log.as_ref().map_or(t.disk.len(), SegmentLog::held_records))
            .sum()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A live state with one video track of 90 kHz and `n` files whose
    /// durations go in runs of 1 to 3 equal ones; without a window
    /// (`keep_all`) its log spills to a temporary file in `dir`.
    fn state(dir: &Path, keep_all: bool, n: u64) -> LiveDash {
        let mut d = LiveDash::new(!keep_all);
        d.available = Some(1_000_000.0);
        d.tracks.push(Track {
            id: 1,
            dir: "dash/1".into(),
            codecs: "avc1.64001f".into(),
            video: true,
            timescale: 90_000,
            first_number: 1,
            next_number: n + 1,
            origin: Some(0),
            peak: 800_000,
            log: keep_all.then(|| SegmentLog::spilled(dir, "m4s")),
            ..Track::default()
        });
        for i in 1..=n {
            let ticks = 180_000 + (i / 3 % 4) * 3_000;
            let one = Segment {
                name: format!("seg_{i:05}.m4s"),
                bytes: 10_000 + i,
                seconds: ticks as f64 / 90_000.0,
                ticks,
            };
            if let Some(t) = d.tracks.first_mut() {
                t.record(i, one, i - 1).unwrap();
            }
        }
        d
    }

    #[test]
    fn without_a_window_the_records_spill_and_the_mpd_is_the_same() {
        let dir = std::env::temp_dir().join(format!("live-dash-test-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let n = 1_000;
        let mut spilled = state(&dir, true, n);
        let mut held = state(&dir, false, n);
        assert!(spilled.held_records() <= 256, "{} held", spilled.held_records());
        assert_eq!(held.held_records(), n as usize);
        let mpd = |d: &mut LiveDash, end: bool| {
            let mut x = Vec::new();
            d.write_mpd(&mut x, 2.0, None, end).unwrap();
            String::from_utf8(x).unwrap()
        };
        // Static (no clock in it): the same text either way, every file
        // in its timeline; twice, so the log lent to the write came back.
        let whole = mpd(&mut held, true);
        assert_eq!(mpd(&mut spilled, true), whole);
        assert_eq!(mpd(&mut spilled, true), whole);
        let listed: u64 = whole
            .split("<S ")
            .skip(1)
            .map(|s| {
                s.split(" r=\"")
                    .nth(1)
                    .map_or(1, |r| r.split('"').next().unwrap().parse::<u64>().unwrap() + 1)
            })
            .sum();
        assert_eq!(listed, n);
        // Dynamic: the same timeline.
        let timeline = |m: &str| m.split("<SegmentTimeline>").nth(1).unwrap().to_owned();
        assert_eq!(timeline(&mpd(&mut spilled, false)), timeline(&whole));
        assert_eq!(
            std::fs::read_dir(&dir).unwrap().count(),
            0,
            "the spill file has no name"
        );
        drop(spilled);
        std::fs::remove_dir(&dir).unwrap();
    }
}
