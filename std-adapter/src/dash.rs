//! The DASH manifest of `mediaslice package --dash`: one static MPD
//! (ISO/IEC 23009-1, the ISOBMFF live profile, §8.4).
//!
//! - One Period; per audio or video stream of the input, one
//!   AdaptationSet (`contentType` video or audio) with one Representation,
//!   whose CMAF segments hold that stream alone (DASH players such as
//!   dash.js take one media type per Adaptation Set; ffmpeg's DASH reader
//!   mistimes a multiplexed one).
//! - `SegmentTemplate` with `$Number%05d$` over `dash/<stream>/seg_00001.m4s`
//!   …, its `timescale` the track's, and a `SegmentTimeline` (§5.3.9.6)
//!   whose first `S@t` is the first fragment's `tfdt` (also the
//!   `presentationTimeOffset`) and whose `S@d` are each segment's `trun`
//!   durations, runs of equal durations folded into `S@r`. So the
//!   timeline is exact, as HLS's `#EXTINF` is.

use crate::package::SegmentLog;
use std::io::Write;

/// One stream's segments and what the manifest states of them.
#[derive(Debug, Default)]
pub struct Representation {
    /// The folder of its `init.mp4` and segments, relative to the MPD.
    pub dir: String,
    /// The `codecs` attribute (RFC 6381).
    pub codecs: String,
    /// Whether it is video (else audio).
    pub video: bool,
    /// Width and height, for video.
    pub resolution: Option<(u16, u16)>,
    /// Peak bit rate over the segments, bits per second.
    pub bandwidth: u64,
    /// Ticks per second of the segments' durations.
    pub timescale: u32,
    /// The first segment's decode time, in those ticks.
    pub start: u64,
    /// The `presentationTimeOffset`: the decode time that is the Period's
    /// start (for a static MPD, `start`; live, the first segment ever
    /// written, so the times stay put while the window moves).
    pub offset: u64,
    /// The number of the first segment listed (`startNumber`).
    pub first_number: u64,
    /// The segments, in order.
    pub segments: SegmentLog,
}

/// `PT<seconds>S` with millisecond precision (xs:duration).
fn duration(seconds: f64) -> String {
    format!("PT{:.3}S", seconds.max(0.0))
}

/// The `S` elements of a timeline starting at `start`, runs of equal
/// durations folded into `S@r` (§5.3.9.6) as the segments are read back.
///
/// Errors: reading the segments back.
fn timeline(x: &mut dyn Write, start: u64, segments: &SegmentLog) -> std::io::Result<()> {
    let mut t = start;
    // The open run (start, duration, repeats) and whether one was written.
    let mut run: Option<(u64, u64, usize)> = None;
    let mut first = true;
    let mut put = |x: &mut dyn Write, (t, d, r): (u64, u64, usize)| {
        // The first S states its start; the others follow on.
        let at = if first { format!(" t=\"{t}\"") } else { String::new() };
        first = false;
        let repeat = if r > 0 { format!(" r=\"{r}\"") } else { String::new() };
        writeln!(x, "            <S{at} d=\"{d}\"{repeat}/>")
    };
    let mut result = Ok(());
    segments.each(|s| {
        match run.as_mut() {
            Some((_, d, r)) if *d == s.ticks => *r += 1,
            _ => {
                if let Some(done) = run.replace((t, s.ticks, 0)) {
                    if result.is_ok() {
                        result = put(x, done);
                    }
                }
            }
        }
        t = t.saturating_add(s.ticks);
    })?;
    result?;
    if let Some(done) = run {
        put(x, done)?;
    }
    Ok(())
}

/// A live presentation's MPD-level figures (ISO/IEC 23009-1 §5.3.1.2,
/// `type="dynamic"`; DASH-IF IOP "live services").
#[derive(Debug, Clone, PartialEq)]
pub struct Dynamic {
    /// `availabilityStartTime`, UTC seconds since 1970: the wall-clock
    /// time of the Period's start (a segment is available from this plus
    /// its end time).
    pub availability_start: f64,
    /// `publishTime`, UTC seconds since 1970: when this MPD was written.
    pub publish: f64,
    /// `minimumUpdatePeriod`, seconds: how often a client re-reads it.
    pub update: f64,
    /// `timeShiftBufferDepth`, seconds, with a sliding window; none: every
    /// segment since the start stays available.
    pub depth: Option<f64>,
    /// `suggestedPresentationDelay`, seconds behind the live edge.
    pub delay: f64,
}

/// `YYYY-MM-DDThh:mm:ss.sssZ` (xs:dateTime, UTC) of seconds since 1970.
fn date_time(unix: f64) -> String {
    let ms = (unix.max(0.0) * 1000.0).round() as i64;
    let (secs, frac) = (ms.div_euclid(1000), ms.rem_euclid(1000));
    format!("{}.{frac:03}Z", crate::civil_time::date_time(secs))
}

/// The static MPD over `sets` (a finished presentation).
///
/// Errors: reading the segments back.
pub fn mpd(sets: &[Representation]) -> std::io::Result<String> {
    mpd_of(sets, None)
}

/// The MPD over `sets`: static (`live` none: `mediaPresentationDuration`
/// the longest set's segments) or dynamic (the live attributes, no
/// duration: the presentation is still growing).
///
/// Errors: reading the segments back.
pub fn mpd_of(sets: &[Representation], live: Option<&Dynamic>) -> std::io::Result<String> {
    let mut x = Vec::new();
    write_mpd(&mut x, sets, live)?;
    String::from_utf8(x).map_err(std::io::Error::other)
}

/// [`mpd_of`] written to `x` as it is made, its timelines as their
/// segments are read back (so a long presentation's MPD is never whole in
/// memory).
///
/// Errors: reading the segments back, writing `x`.
pub fn write_mpd(x: &mut dyn Write, sets: &[Representation], live: Option<&Dynamic>) -> std::io::Result<()> {
    let mut total = 0.0;
    let mut longest = 1.0;
    for r in sets {
        // As `Iterator::sum` of f64, which starts at -0.0.
        let mut sum = -0.0;
        r.segments.each(|s| {
            sum += s.seconds;
            longest = f64::max(longest, s.seconds);
        })?;
        total = f64::max(total, sum);
    }
    x.write_all(b"<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n")?;
    let kind = match live {
        None => format!("type=\"static\" mediaPresentationDuration=\"{}\"", duration(total)),
        Some(l) => {
            let depth = l
                .depth
                .map_or(String::new(), |d| format!(" timeShiftBufferDepth=\"{}\"", duration(d)));
            format!(
                "type=\"dynamic\" availabilityStartTime=\"{}\" publishTime=\"{}\" minimumUpdatePeriod=\"{}\"{depth} \
                 suggestedPresentationDelay=\"{}\"",
                date_time(l.availability_start),
                date_time(l.publish),
                duration(l.update),
                duration(l.delay)
            )
        }
    };
    writeln!(
        x,
        "<MPD xmlns=\"urn:mpeg:dash:schema:mpd:2011\" profiles=\"urn:mpeg:dash:profile:isoff-live:2011\" \
         {kind} minBufferTime=\"{}\">",
        duration(longest)
    )?;
    x.write_all("  <Period id=\"0\" start=\"PT0S\">\n".as_bytes())?;
    for (i, r) in sets.iter().enumerate() {
        let (kind, mime) = if r.video {
            ("video", "video/mp4")
        } else {
            ("audio", "audio/mp4")
        };
        writeln!(
            x,
            "    <AdaptationSet id=\"{i}\" contentType=\"{kind}\" mimeType=\"{mime}\" segmentAlignment=\"true\" startWithSAP=\"1\">"
        )?;
        write!(
            x,
            "      <Representation id=\"{i}\" bandwidth=\"{}\" codecs=\"{}\"",
            r.bandwidth.max(1),
            r.codecs
        )?;
        if let Some((w, h)) = r.resolution {
            write!(x, " width=\"{w}\" height=\"{h}\"")?;
        }
        x.write_all(">\n".as_bytes())?;
        writeln!(
            x,
            "        <SegmentTemplate timescale=\"{}\" initialization=\"{}/init.mp4\" media=\"{}/seg_$Number%05d$.m4s\" \
             startNumber=\"{}\" presentationTimeOffset=\"{}\">",
            r.timescale.max(1),
            r.dir,
            r.dir,
            r.first_number.max(1),
            r.offset
        )?;
        x.write_all("          <SegmentTimeline>\n".as_bytes())?;
        timeline(x, r.start, &r.segments)?;
        x.write_all("          </SegmentTimeline>\n        </SegmentTemplate>\n".as_bytes())?;
        x.write_all("      </Representation>\n    </AdaptationSet>\n".as_bytes())?;
    }
    x.write_all("  </Period>\n</MPD>\n".as_bytes())?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A log of segments from number `first` with these durations.
    fn log(first: u64, ticks: &[u64]) -> SegmentLog {
        let mut log = SegmentLog::held("m4s");
        for (n, &ticks) in (first..).zip(ticks) {
            let s = crate::package::Segment {
                name: String::new(),
                bytes: 1000,
                seconds: ticks as f64 / 90_000.0,
                ticks,
            };
            log.push(n, &s).unwrap();
        }
        log
    }

    #[test]
    fn timeline_folds_equal_durations() {
        let v = Representation {
            dir: "dash/0".into(),
            codecs: "avc1.64001f".into(),
            video: true,
            resolution: Some((640, 360)),
            bandwidth: 800_000,
            timescale: 90_000,
            start: 3_000,
            offset: 3_000,
            first_number: 1,
            segments: log(1, &[540_000, 540_000, 540_000, 90_000]),
        };
        let a = Representation {
            dir: "dash/1".into(),
            codecs: "mp4a.40.2".into(),
            timescale: 48_000,
            segments: log(1, &[90_000]),
            ..Representation::default()
        };
        let x = mpd(&[v, a]).unwrap();
        assert!(x.contains("<S t=\"3000\" d=\"540000\" r=\"2\"/>"), "{x}");
        assert!(x.contains("<S d=\"90000\"/>"), "{x}");
        assert!(x.contains("mediaPresentationDuration=\"PT19.000S\""), "{x}");
        assert!(x.contains("width=\"640\" height=\"360\""), "{x}");
        assert!(x.contains("presentationTimeOffset=\"3000\""), "{x}");
        assert!(x.contains("contentType=\"audio\" mimeType=\"audio/mp4\""), "{x}");
        assert!(x.contains("initialization=\"dash/1/init.mp4\""), "{x}");
    }

    #[test]
    fn a_dynamic_mpd_states_the_live_attributes() {
        let v = Representation {
            dir: "dash/1".into(),
            timescale: 90_000,
            start: 540_000,
            offset: 0,
            first_number: 7,
            segments: log(7, &[540_000]),
            ..Representation::default()
        };
        let live = Dynamic {
            // 2026-12-07T10:00:00.250Z
            availability_start: 1_796_637_600.25,
            publish: 1_796_637_660.0,
            update: 6.0,
            depth: Some(30.0),
            delay: 18.0,
        };
        let x = mpd_of(&[v], Some(&live)).unwrap();
        assert!(
            x.contains("type=\"dynamic\" availabilityStartTime=\"2026-12-07T10:00:00.250Z\""),
            "{x}"
        );
        assert!(x.contains("publishTime=\"2026-12-07T10:01:00.000Z\""), "{x}");
        assert!(
            x.contains("minimumUpdatePeriod=\"PT6.000S\" timeShiftBufferDepth=\"PT30.000S\""),
            "{x}"
        );
        assert!(x.contains("suggestedPresentationDelay=\"PT18.000S\""), "{x}");
        assert!(x.contains("startNumber=\"7\" presentationTimeOffset=\"0\""), "{x}");
        assert!(x.contains("<S t=\"540000\" d=\"540000\"/>"), "{x}");
        assert!(!x.contains("mediaPresentationDuration"), "{x}");
    }
}
