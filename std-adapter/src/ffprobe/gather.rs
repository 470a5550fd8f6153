//! What `probe --json` reads of a demuxer, in the order ffprobe reads it:
//! the tags, the first packets of each stream (`find_stream_info`), the
//! picture facts of each video stream; and [`probe_json`], which puts them
//! into one object (`streams`, `format`, `diagnostics`) for the CLI's
//! `probe --json`, its batch mode and the Python bindings.

use super::{probe, TagSet, Timing};
use mediaslice::codec::facts::VideoFacts;
use mediaslice::{Demuxer, Source};
use serde_json::{json, Map, Value};

/// Tags read at most from one input (a hostile file may declare millions).
pub const MAX_TAGS: usize = 100_000;

/// Packets read at most for the stream facts that come from the first
/// packets (ffprobe reads them too; see [`super::rates`]).
pub const PROBE_PACKET_LIMIT: usize = 2_000;

/// Copies every tag out of the demuxer. A tag error ends the walk and is
/// returned beside what was read.
pub fn collect_tags<S: Source>(d: &mut Demuxer<S>) -> (TagSet, Option<mediaslice::Error>) {
    let mut set = TagSet::default();
    d.rewind_tags();
    for _ in 0..MAX_TAGS {
        match d.next_tag() {
            Ok(Some(t)) => set.add(&t),
            Ok(None) => return (set, None),
            Err(e) => return (set, Some(e)),
        }
    }
    (set, None)
}

/// [`collect_tags`] as ffprobe shows them: without the Ogg comments that
/// ffmpeg turns into chapters ([`super::chapters::drop_ogm_chapter_tags`]).
pub fn ffprobe_tags<S: Source>(d: &mut Demuxer<S>) -> (TagSet, Option<mediaslice::Error>) {
    let (mut tags, err) = collect_tags(d);
    if d.format() == mediaslice::FormatKind::Ogg {
        super::chapters::drop_ogm_chapter_tags(&mut tags);
    }
    (tags, err)
}

/// The first packets' timestamps of each stream, read as ffprobe's
/// `find_stream_info` does; a packet error ends the reading (the facts
/// then come from what was read).
pub fn first_packets<S: Source>(d: &mut Demuxer<S>) -> Timing {
    let mut timing = Timing::new(d.tracks().len());
    for _ in 0..PROBE_PACKET_LIMIT {
        match d.next_packet() {
            Ok(Some(p)) => timing.observe(&p),
            Ok(None) | Err(_) => break,
        }
        if timing.full() {
            break;
        }
    }
    timing
}

/// The picture facts of each video track, from its codec configuration and
/// first packet (once, after the packets were read).
pub fn video_facts<S: Source>(d: &mut Demuxer<S>, timing: &Timing) -> Vec<Option<VideoFacts>> {
    let tracks = d.tracks().to_vec();
    tracks
        .iter()
        .enumerate()
        .map(|(i, t)| {
            if t.kind != mediaslice::TrackKind::Video || t.attached_picture {
                return None;
            }
            let config = if t.config.is_some() {
                d.codec_config(i).map(<[u8]>::to_vec).unwrap_or_default()
            } else {
                Vec::new()
            };
            mediaslice::codec::facts::video(t.codec, &config, timing.first_packet(i))
        })
        .collect()
}

/// The diagnostics of `d` as `[{"code", "offset", "count"}]`.
pub fn diagnostics_json<S: Source>(d: &Demuxer<S>) -> Vec<Value> {
    d.diagnostics()
        .iter()
        .map(|(g, n)| json!({"code": g.code, "offset": g.offset, "count": n}))
        .collect()
}

/// `probe --json` of an open demuxer: `{"streams": [...], "format": {...}}`
/// as ffprobe 5.1 writes them, then `"diagnostics"` when there are any.
/// `filename` is the format's `filename`. A tag error is returned beside
/// the object, which holds what was read before it.
pub fn probe_json<S: Source>(d: &mut Demuxer<S>, filename: &str) -> (Map<String, Value>, Option<mediaslice::Error>) {
    probe_json_with(d, filename, Sections::default())
}

/// The sections beyond `streams` and `format` that `probe --json` prints
/// when asked (ffprobe's `-show_chapters`, `-show_programs`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Sections {
    /// `chapters`, after `streams` (see [`super::chapters`]).
    pub chapters: bool,
    /// `programs`, before `streams` (see [`super::programs`]).
    pub programs: bool,
}

/// [`probe_json`] with the extra `sections`, in ffprobe's order:
/// `programs`, `streams`, `chapters`, `format`.
pub fn probe_json_with<S: Source>(
    d: &mut Demuxer<S>,
    filename: &str,
    sections: Sections,
) -> (Map<String, Value>, Option<mediaslice::Error>) {
    let (tags, tag_err) = ffprobe_tags(d);
    let timing = first_packets(d);
    let video = video_facts(d, &timing);
    let (streams, format) = probe::document(d, &tags, &timing, &video, filename);
    let mut doc = Map::new();
    if sections.programs {
        doc.insert("programs".into(), Value::Array(super::programs::to_json(d, &streams)));
    }
    doc.insert("streams".into(), Value::Array(streams));
    if sections.chapters {
        let mut ch = super::chapters::collect(d);
        super::chapters::fill_ends(&mut ch, format_end_us(&format));
        doc.insert("chapters".into(), Value::Array(super::chapters::to_json(&ch)));
    }
    doc.insert("format".into(), format);
    let diags = diagnostics_json(d);
    if !diags.is_empty() {
        doc.insert("diagnostics".into(), Value::Array(diags));
    }
    (doc, tag_err)
}

/// The chapters `probe --json --chapters` prints, ends filled as ffmpeg
/// fills them (from the format's `start_time + duration`, so this probes
/// the file as [`probe_json`] does, but only when there are chapters), and
/// the format's `start_time` in microseconds when it has one (`None` when
/// there are no chapters).
pub fn probe_chapters<S: Source>(d: &mut Demuxer<S>) -> (Vec<super::chapters::ChapterEntry>, Option<i64>) {
    // No chapters, no probe: the probe reads what the JSON needs (an MP4's
    // whole `moov`, 10 MiB for a 2.5-hour recording) only for their ends.
    if super::chapters::collect(d).is_empty() {
        return (Vec::new(), None);
    }
    let (tags, _) = ffprobe_tags(d);
    let timing = first_packets(d);
    let video = video_facts(d, &timing);
    let (_, format) = probe::document(d, &tags, &timing, &video, "");
    let mut ch = super::chapters::collect(d);
    super::chapters::fill_ends(&mut ch, format_end_us(&format));
    let start = format
        .get("start_time")
        .and_then(Value::as_str)
        .and_then(|s| s.parse::<f64>().ok())
        .map(|s| (s * 1e6).round() as i64);
    (ch, start)
}

/// The format's `start_time + duration` in microseconds, from the strings
/// ffprobe prints (`%f` of microsecond values, so exact), as ffmpeg's
/// `compute_chapters_end` takes it; `None` without a positive duration.
fn format_end_us(format: &Value) -> Option<i64> {
    let us = |k: &str| {
        format
            .get(k)
            .and_then(Value::as_str)
            .and_then(|s| s.parse::<f64>().ok())
            .map(|s| (s * 1e6).round() as i64)
    };
    let dur = us("duration").filter(|&d| d > 0)?;
    Some(dur + us("start_time").unwrap_or(0))
}
