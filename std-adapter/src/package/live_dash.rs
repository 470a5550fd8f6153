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

use super::cmaf_split::{fragment_of, init_of};
use super::live::write_atomic;
use super::{codecs_of, resolution, tfdt, track_scales, trun_ticks, Segment, SegmentLog};
use crate::dash::{mpd_of, Dynamic, Representation};
use std::collections::VecDeque;
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
    /// Its files on disk, oldest first, with the muxed segment each came
    /// from.
    disk: VecDeque<(Segment, u64)>,
    /// Number of the first file on disk, and of the next one.
    first_number: u64,
    next_number: u64,
    /// Decode time of the first file on disk, and of the first ever (the
    /// `presentationTimeOffset` while live).
    first_time: u64,
    origin: Option<u64>,
    peak: u64,
}

/// The live MPD's state.
#[derive(Default)]
pub(super) struct LiveDash {
    tracks: Vec<Track>,
    /// `availabilityStartTime`, seconds since 1970, set at the first
    /// segment.
    available: Option<f64>,
}

/// Seconds since 1970 now.
fn now() -> f64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0.0, |d| d.as_secs_f64())
}

impl LiveDash {
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
            self.tracks.push(Track {
                id,
                dir: rel,
                codecs,
                video,
                resolution: if video { resolution(&one) } else { None },
                timescale: scales.get(i).copied().unwrap_or(1).max(1),
                first_number: 1,
                next_number: 1,
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
            let name = format!("seg_{:05}.m4s", t.next_number);
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
            t.disk.push_back((one, seq));
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
    /// `mediaPresentationDuration` their sum.
    ///
    /// Errors: none in practice (the segments are held in memory).
    pub(super) fn mpd(&self, update: f64, depth: Option<f64>, end: bool) -> std::io::Result<String> {
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
        for t in &self.tracks {
            let mut segments = SegmentLog::held("m4s");
            for (n, (s, _)) in (t.first_number..).zip(&t.disk) {
                segments.push(n, s)?;
            }
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
        mpd_of(&sets, (!end).then_some(&live))
    }
}
