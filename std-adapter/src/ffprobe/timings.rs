//! The format's start and duration from its streams', as ffmpeg's
//! `update_stream_timings` (libavformat 5.1) derives them when the
//! container states none it believes:
//!
//! - subtitle and data streams ("text") count apart from the others: the
//!   format starts at the earliest other stream's start unless a text
//!   stream starts less than a second before it (then there), and ends at
//!   the latest other stream's end unless a text stream ends less than a
//!   second after it (an outlier caption track does not stretch a movie);
//!   a file of text streams only takes theirs;
//! - the duration is the longer of the longest stream duration (text
//!   likewise within a second) and the end less the start;
//! - a stream with no start time counts only with its duration.

use serde_json::Value;

/// One second in microseconds (`AV_TIME_BASE`).
const SECOND: i64 = 1_000_000;

#[derive(Default, Clone, Copy)]
struct Extremes {
    start: Option<i64>,
    end: Option<i64>,
    duration: Option<i64>,
}

impl Extremes {
    fn add(&mut self, start: Option<i64>, duration: Option<i64>) {
        if let Some(s) = start {
            self.start = Some(self.start.map_or(s, |x| x.min(s)));
            if let Some(d) = duration {
                let e = s.saturating_add(d);
                self.end = Some(self.end.map_or(e, |x| x.max(e)));
            }
        }
        if let Some(d) = duration {
            self.duration = Some(self.duration.map_or(d, |x| x.max(d)));
        }
    }
}

/// `main` unless it is missing or `text` lies on the `later` side of it
/// by less than a second.
fn pick(main: Option<i64>, text: Option<i64>, later: bool) -> Option<i64> {
    match (main, text) {
        (None, t) => t,
        (Some(m), Some(t)) if later && t > m && t - m < SECOND => Some(t),
        (Some(m), Some(t)) if !later && t < m && m - t < SECOND => Some(t),
        (m, _) => m,
    }
}

fn micros(stream: &Value, key: &str) -> Option<i64> {
    let s: f64 = stream.get(key)?.as_str()?.parse().ok()?;
    Some((s * 1e6).round() as i64)
}

/// The format's start and duration in microseconds from `streams` (their
/// `codec_type`, `start_time` and `duration`); a duration only when
/// positive.
pub fn update_stream_timings(streams: &[Value]) -> (Option<i64>, Option<u64>) {
    let (mut main, mut text) = (Extremes::default(), Extremes::default());
    for s in streams {
        let is_text = matches!(s.get("codec_type").and_then(Value::as_str), Some("subtitle" | "data"));
        let slot = if is_text { &mut text } else { &mut main };
        slot.add(micros(s, "start_time"), micros(s, "duration"));
    }
    let start = pick(main.start, text.start, false);
    let end = pick(main.end, text.end, true);
    let mut duration = pick(main.duration, text.duration, true);
    if let (Some(s), Some(e)) = (start, end) {
        duration = Some(duration.map_or(e - s, |d| d.max(e - s)));
    }
    (start, duration.filter(|&d| d > 0).and_then(|d| u64::try_from(d).ok()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn stream(kind: &str, start: &str, duration: &str) -> Value {
        json!({"codec_type": kind, "start_time": start, "duration": duration})
    }

    #[test]
    fn an_outlier_caption_track_does_not_stretch_the_movie() {
        // A video track from 10.041708 s for 17.590917 s; CEA-608
        // captions from 10 s for 23.706 s (ending 6 s after the video).
        let s = [
            stream("video", "10.041708", "17.590917"),
            stream("subtitle", "10.000000", "23.706000"),
        ];
        // The captions' start is within a second before the video's: it
        // counts; their end is not.
        assert_eq!(update_stream_timings(&s), (Some(10_000_000), Some(17_632_625)));
    }

    #[test]
    fn text_within_a_second_counts_and_text_alone_is_taken() {
        let s = [
            stream("audio", "0.000000", "5.000000"),
            stream("subtitle", "0.000000", "5.500000"),
        ];
        assert_eq!(update_stream_timings(&s), (Some(0), Some(5_500_000)));
        let s = [stream("subtitle", "1.000000", "2.000000")];
        assert_eq!(update_stream_timings(&s), (Some(1_000_000), Some(2_000_000)));
    }

    #[test]
    fn the_longest_duration_wins_over_the_span() {
        // A stream without a start counts with its duration only.
        let s = [
            stream("audio", "0.500000", "1.000000"),
            json!({"codec_type": "video", "duration": "3.000000"}),
        ];
        assert_eq!(update_stream_timings(&s), (Some(500_000), Some(3_000_000)));
        assert_eq!(
            update_stream_timings(&[stream("audio", "0.000000", "0.000000")]),
            (Some(0), None)
        );
    }
}
