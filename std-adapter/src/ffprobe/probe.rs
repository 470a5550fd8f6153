//! The `streams` and `format` objects of `probe --json` and
//! `packets --json`, with the facts ffmpeg derives from several places:
//! per-container facts read again from the input ([`super::mp4`]) and
//! the format's start time and duration from its streams'
//! (`update_stream_timings`).

use super::{audio, estimate, format_json, mkv, mp4, stream_json, FormatFacts, TagSet, Timing};
use mediaslice::codec::facts::VideoFacts;
use mediaslice::{Codec, Demuxer, FormatKind, Source};
use serde_json::{Map, Value};

/// Most packets read after the first ones for the end of a transport or
/// program stream.
const TAIL_PACKETS: usize = 1_000_000;
/// How far into the input a probe reads packets for the end (16 MiB; a
/// probe over HTTP may fetch 32 MiB).
const TAIL_BYTES: u64 = 16 << 20;

/// The streams and the format object for `d`, after its tags were read
/// (`tags`) and its first packets seen (`timing`).
pub fn document<S: Source>(
    d: &mut Demuxer<S>,
    tags: &TagSet,
    timing_in: &Timing,
    video: &[Option<VideoFacts>],
    filename: &str,
) -> (Vec<Value>, Value) {
    let format = d.format();
    let mut timing_tail = None;
    let mut tail_read = true;
    let mp3_estimate = format == FormatKind::Mp3 && estimate::mp3_by_bit_rate(d.source_mut());
    if matches!(format, FormatKind::MpegTs | FormatKind::MpegPs | FormatKind::Aac) || mp3_estimate {
        // ffmpeg reads the end of a transport or program stream for its
        // streams' durations (estimate_timings_from_pts): read on to the
        // end (what `packets` already did, nothing is left).
        // Bounded: past TAIL_BYTES the end is not known, and no duration
        // is derived from it.
        let mut t = timing_in.clone();
        let mut ended = true;
        for _ in 0..TAIL_PACKETS {
            match d.next_packet() {
                Ok(Some(p)) if p.pos.is_some_and(|pos| pos > TAIL_BYTES) => {
                    ended = false;
                    break;
                }
                Ok(Some(p)) => t.observe_end(&p),
                Ok(None) | Err(_) => break,
            }
        }
        tail_read = ended;
        timing_tail = Some(t);
    }
    let timing = timing_tail.as_ref().unwrap_or(timing_in);
    let mut tracks = d.tracks().to_vec();
    let configs: Vec<Vec<u8>> = (0..tracks.len())
        .map(|i| {
            let has = tracks.get(i).is_some_and(|t| t.config.is_some());
            if has {
                d.codec_config(i).map(<[u8]>::to_vec).unwrap_or_default()
            } else {
                Vec::new()
            }
        })
        .collect();
    for (i, t) in tracks.iter_mut().enumerate() {
        let config = configs.get(i).map(Vec::as_slice).unwrap_or(&[]);
        audio::refine(t, config, timing.first_packet(i));
        if t.kind == mediaslice::TrackKind::Video && (t.width == 0 || t.height == 0) {
            if let Some((w, h)) = super::facts::picture_size(t.codec, timing.first_packet(i)) {
                (t.width, t.height) = (w, h);
            }
        }
    }
    let mut streams: Vec<Value> = tracks
        .iter()
        .enumerate()
        .map(|(i, t)| {
            let v = video.get(i).and_then(Option::as_ref);
            stream_json(i, t, tags, &timing.facts(i, t, format), v)
        })
        .collect();
    for (i, (t, s)) in tracks.iter().zip(streams.iter_mut()).enumerate() {
        if s.get("bit_rate").is_none() && format != FormatKind::Mp4 {
            if let Some(b) = audio::header_bit_rate(t, timing.first_packet(i)) {
                set(s, "bit_rate", b.to_string().into());
            }
        }
        if format == FormatKind::Mp3 && t.codec == Codec::Mp3 {
            mp3_start(s, t, tags.streams.get(i).map(Vec::as_slice).unwrap_or(&[]));
            if let Some(e) = timing.first_pos(i).and_then(|p| audio::mp3_encoder(d.source_mut(), p)) {
                insert_tag(s, "encoder", &e);
            }
        }
        if format == FormatKind::Ogg {
            ogg_start(s, t, configs.get(i).map(Vec::as_slice).unwrap_or(&[]));
        }
        if matches!(format, FormatKind::Wav | FormatKind::Rf64) && s.get("channel_layout").is_none() {
            // ffmpeg takes a WAVE_FORMAT_EXTENSIBLE speaker mask that
            // names as many speakers as there are channels.
            let layout = audio::wav_channel_mask(d.source_mut())
                .filter(|m| m.count_ones() == u32::from(t.channels))
                .and_then(super::names::mask_layout);
            if let Some(l) = layout {
                set(s, "channel_layout", l.into());
            }
        }
        if format == FormatKind::Dv && t.kind == mediaslice::TrackKind::Audio && t.channels == 2 {
            // ffmpeg's DV demuxer gives its PCM pairs a stereo layout.
            set(s, "channel_layout", "stereo".into());
        }
        if matches!(t.codec, Codec::Mjpeg | Codec::Png | Codec::Bmp | Codec::Gif) {
            let picture = mediaslice::codec::image::parse(t.codec, timing.first_packet(i));
            if let (Some(m), Some(f)) = (s.as_object_mut(), picture) {
                super::facts::insert_image(m, &f);
            }
        }
        if format == FormatKind::Iff {
            if let Some(m) = s.as_object_mut() {
                super::facts::insert_iff(m, t, d.source_mut());
            }
        }
        if t.codec == Codec::Pgs {
            if let Some((w, h)) = pgs_size(timing.first_packet(i)) {
                set(s, "width", w.into());
                set(s, "height", h.into());
            }
        }
        if t.codec == Codec::DvdSub {
            if let Some((w, h)) = vobsub_size(configs.get(i).map(Vec::as_slice).unwrap_or(&[])) {
                set(s, "width", w.into());
                set(s, "height", h.into());
            }
        }
        if t.codec == Codec::Aac && !timing.first_packet(i).is_empty() {
            let config = configs.get(i).map(Vec::as_slice).unwrap_or(&[]);
            if let Some(p) = aac_profile(config, timing.first_packet(i)) {
                set(s, "profile", p.into());
            }
        }
    }
    for (i, (t, s)) in tracks.iter().zip(streams.iter_mut()).enumerate() {
        // With no packet, ffmpeg's decoder never ran: the level is unknown
        // (-99).
        if t.kind == mediaslice::TrackKind::Video && timing.first_packet(i).is_empty() && s.get("level").is_some() {
            set(s, "level", (-99).into());
        }
    }
    let info = d.info().clone();
    let mut facts = FormatFacts {
        filename,
        kind: format,
        nb_streams: tracks.len(),
        size: d.source().len(),
        duration_us: info.duration_us,
        start_us: info.start_us,
        bit_rate: info.bit_rate,
    };
    if matches!(format, FormatKind::Ogg | FormatKind::MpegTs | FormatKind::MpegPs) {
        // The format starts where its earliest stream does
        // (`update_stream_timings`).
        facts.start_us = None;
    }
    if format == FormatKind::Amr {
        estimate::amr_timing(&mut streams, &tracks, timing, facts.size);
        facts.duration_us = None;
    }
    if mp3_estimate {
        estimate::mp3_timing(&mut streams, &tracks, timing, facts.size);
        facts.duration_us = None;
    }
    if format == FormatKind::Aac {
        estimate::adts_timing(&mut streams, &tracks, timing, facts.size);
        facts.duration_us = None;
    }
    if format == FormatKind::Asf && facts.duration_us.is_none() {
        let data_offset = estimate::asf_data_offset(d.source_mut());
        estimate::asf_bit_rate_timing(&mut streams, &tracks, timing, facts.size.saturating_sub(data_offset));
    }
    if matches!(format, FormatKind::MpegTs | FormatKind::MpegPs) && tail_read {
        for (i, s) in streams.iter_mut().enumerate() {
            // ffmpeg reads those packets raw (estimate_timings_from_pts):
            // the end is the latest PES packet's time plus one frame, a
            // video frame's duration from the frame rate, an audio frame's
            // from the codec's frame size (none when the codec has no
            // fixed one).
            let Some(t) = tracks.get(i) else { continue };
            let (Some(mut end), Some(start)) = (timing.raw_end(i), s.get("start_pts").and_then(Value::as_i64)) else {
                continue;
            };
            end += match t.kind {
                mediaslice::TrackKind::Video => frame_ticks(s, t),
                mediaslice::TrackKind::Audio => audio::frame_ticks(t),
                _ => 0,
            };
            if s.get("duration_ts").is_none() && end > start {
                set(s, "duration_ts", (end - start).into());
                set(s, "duration", super::time_string(end - start, t.time_base).into());
            }
        }
        // The format's duration then follows from the streams'.
        facts.duration_us = None;
    }
    let mut format_tags = Map::new();
    if format == FormatKind::Mp4 {
        if let Some(m) = mp4::read(d.source_mut()) {
            apply_mp4(&m, &tracks, timing, &mut streams);
            if m.fragmented {
                // ffmpeg's `mov_read_mvhd` sets no format duration once it
                // has seen `trex`, and takes the streams' (from the
                // fragments) in a fragmented file.
                facts.duration_us = None;
            }
            if let Some(c) = mp4::creation_time(m.creation_time) {
                format_tags.insert("creation_time".into(), c.into());
            }
            for (k, v) in &m.tags {
                format_tags.insert(k.clone(), v.clone().into());
            }
        }
    }
    if format == FormatKind::Matroska {
        if let Some(seg) = mkv::read(d.source_mut()) {
            apply_mkv(&seg, &tracks, &mut streams);
            if let Some(c) = seg.date_utc.and_then(mkv::creation_time) {
                format_tags.insert("creation_time".into(), c.into());
            }
            for (uid, k, v) in &seg.lang_tags {
                match uid {
                    None => {
                        format_tags.insert(k.clone(), v.clone().into());
                    }
                    Some(u) => {
                        let at = seg
                            .tracks
                            .iter()
                            .find(|e| e.uid == *u)
                            .and_then(|e| tracks.iter().position(|t| u64::from(t.id) == e.number));
                        if let Some(s) = at.and_then(|i| streams.get_mut(i)) {
                            insert_tag(s, k, v);
                        }
                    }
                }
            }
        }
    }
    let (start_us, duration_us) = super::timings::update_stream_timings(&streams);
    if facts.start_us.is_none() {
        facts.start_us = start_us;
    }
    if facts.duration_us.is_none() {
        facts.duration_us = duration_us;
    }
    fill_stream_timings(&mut streams, &tracks, &facts);
    let mut f = format_json(&facts, tags);
    if format == FormatKind::MpegTs {
        // ffmpeg makes one program per PAT entry.
        if let (Ok(n @ 1..), Some(o)) = (d.program_count(), f.as_object_mut()) {
            o.insert("nb_programs".into(), n.into());
        }
    }
    if format == FormatKind::Flac {
        flac_channel_mask(&mut f, &mut streams);
    }
    if let Some(obj) = f.as_object_mut() {
        if !format_tags.is_empty() {
            let t = obj.entry("tags").or_insert_with(|| Value::Object(Map::new()));
            if let Some(t) = t.as_object_mut() {
                for (k, v) in format_tags {
                    if !t.keys().any(|x| x.eq_ignore_ascii_case(&k)) {
                        t.insert(k, v);
                    }
                }
            }
        }
    }
    (streams, f)
}

/// ffmpeg's `fill_all_stream_timings`: a stream whose first timestamp was
/// never seen (an attached picture, a text track with no packet among the
/// first ones) takes the format's start and duration, each rescaled to its
/// time base with rounding to nearest.
fn fill_stream_timings(streams: &mut [Value], tracks: &[mediaslice::Track], facts: &FormatFacts) {
    let Some(start_us) = facts.start_us else { return };
    for (s, t) in streams.iter_mut().zip(tracks) {
        if s.get("start_pts").is_some() {
            continue;
        }
        let tb = t.time_base;
        let Some(start) = rescale_us(start_us, tb) else {
            continue;
        };
        set(s, "start_pts", start.into());
        set(s, "start_time", super::time_string(start, tb).into());
        if s.get("duration_ts").is_none() {
            let dur = facts
                .duration_us
                .and_then(|d| i64::try_from(d).ok())
                .and_then(|d| rescale_us(d, tb));
            if let Some(d) = dur {
                set(s, "duration_ts", d.into());
                set(s, "duration", super::time_string(d, tb).into());
            }
        }
    }
}

/// `us` microseconds in ticks of `tb`, rounded to nearest (half away from
/// zero, as `av_rescale_q`).
fn rescale_us(us: i64, tb: mediaslice::Rational) -> Option<i64> {
    let div = i128::from(tb.num) * 1_000_000;
    if div <= 0 {
        return None;
    }
    let n = i128::from(us) * i128::from(tb.den);
    let r = if n >= 0 {
        (n + div / 2) / div
    } else {
        -((-n + div / 2) / div)
    };
    i64::try_from(r).ok()
}

/// ffmpeg's FLAC demuxer: a `WAVEFORMATEXTENSIBLE_CHANNEL_MASK` comment
/// (read as C's `strtol` with base 0 does) sets the audio stream's layout
/// and leaves the format's tags; an invalid one (0, or bits past the 18
/// speakers) stays and is ignored.
fn flac_channel_mask(format: &mut Value, streams: &mut [Value]) {
    const KEY: &str = "WAVEFORMATEXTENSIBLE_CHANNEL_MASK";
    let Some(tags) = format.get_mut("tags").and_then(Value::as_object_mut) else {
        return;
    };
    let Some(key) = tags.keys().find(|k| k.eq_ignore_ascii_case(KEY)).cloned() else {
        return;
    };
    let v = tags.get(&key).and_then(Value::as_str).unwrap_or("").trim();
    let mask = if let Some(h) = v.strip_prefix("0x").or_else(|| v.strip_prefix("0X")) {
        u32::from_str_radix(h, 16).ok()
    } else if v.len() > 1 && v.starts_with('0') {
        u32::from_str_radix(v.get(1..).unwrap_or(""), 8).ok()
    } else {
        v.parse().ok()
    };
    let Some(layout) = mask
        .filter(|&m| m != 0 && m < 1 << 18)
        .and_then(super::names::mask_layout)
    else {
        return;
    };
    tags.remove(&key);
    if tags.is_empty() {
        if let Some(o) = format.as_object_mut() {
            o.remove("tags");
        }
    }
    if let Some(s) = streams
        .iter_mut()
        .find(|s| s.get("codec_type").and_then(Value::as_str) == Some("audio"))
    {
        set(s, "channel_layout", layout.into());
    }
}

/// The video size a PGS display set states: its first segment is a
/// Presentation Composition Segment (type 0x16, a 16-bit length, then
/// width and height), which ffmpeg's PGS decoder takes as the stream's.
fn pgs_size(packet: &[u8]) -> Option<(u32, u32)> {
    let body = match packet {
        [0x16, _, _, body @ ..] => body,
        _ => return None,
    };
    let w = u32::from(u16::from_be_bytes([*body.first()?, *body.get(1)?]));
    let h = u32::from(u16::from_be_bytes([*body.get(2)?, *body.get(3)?]));
    (w > 0 && h > 0).then_some((w, h))
}

/// ffmpeg's AAC profile name: from the AudioSpecificConfig's object type,
/// else from an ADTS header (its profile is the object type minus one).
/// An SBR or PS extension that only the decoder finds (implicit
/// signalling) is not seen, so such streams read as `LC`.
fn aac_profile(config: &[u8], first_packet: &[u8]) -> Option<&'static str> {
    let object_type = match (config.first(), first_packet) {
        (Some(&b), _) => b >> 3,
        (None, [0xFF, b1, b2, ..]) if b1 & 0xF0 == 0xF0 => (b2 >> 6) + 1,
        _ => return None,
    };
    Some(match object_type {
        1 => "Main",
        2 => "LC",
        3 => "SSR",
        4 => "LTP",
        5 => "HE-AAC",
        23 => "LD",
        29 => "HE-AACv2",
        39 => "ELD",
        _ => return None,
    })
}

/// ffmpeg's MP3 start: the encoder delay of the LAME header plus the
/// decoder's 529 samples are skipped (`start_skip_samples`), and the
/// stream's start time is where they end. A delay of 0 is taken for no
/// LAME header (a VBRI header states one too, which ffmpeg ignores).
fn mp3_start(s: &mut Value, t: &mediaslice::Track, tags: &[(String, String)]) {
    let Some(delay) = tags
        .iter()
        .find(|(k, _)| k == "encoder_delay")
        .and_then(|(_, v)| v.parse::<i64>().ok())
        .filter(|&d| d > 0)
    else {
        return;
    };
    let (num, den) = (i128::from(t.time_base.num), i128::from(t.time_base.den));
    if t.sample_rate == 0 || num == 0 {
        return;
    }
    let ticks = i128::from(delay + 529) * den / (i128::from(t.sample_rate) * num);
    if let Ok(start) = i64::try_from(ticks) {
        set(s, "start_pts", start.into());
        set(s, "start_time", super::time_string(start, t.time_base).into());
    }
}

/// ffmpeg's Ogg starts: Vorbis at its first packet's time but not before
/// 0 (`vorbis_packet`); Opus after the pre-skip of its `OpusHead`
/// (`skip_samples` added to the first time).
fn ogg_start(s: &mut Value, t: &mediaslice::Track, config: &[u8]) {
    let Some(first) = s.get("start_pts").and_then(Value::as_i64) else {
        return;
    };
    let start = match t.codec {
        Codec::Vorbis => first.max(0),
        Codec::Opus => match (config.get(..8), config.get(10..12)) {
            (Some(b"OpusHead"), Some(&[lo, hi])) => first + i64::from(u16::from_le_bytes([lo, hi])),
            _ => return,
        },
        _ => return,
    };
    set(s, "start_pts", start.into());
    set(s, "start_time", super::time_string(start, t.time_base).into());
}

/// The picture size a VobSub `.idx` header states (`size: 720x480`), which
/// ffmpeg's DVD subtitle decoder reports.
fn vobsub_size(config: &[u8]) -> Option<(u32, u32)> {
    let text = String::from_utf8_lossy(config);
    let line = text.lines().find_map(|l| l.trim().strip_prefix("size:"))?;
    let (w, h) = line.trim().split_once('x')?;
    Some((w.trim().parse().ok()?, h.trim().parse().ok()?))
}

/// A video frame's duration in `t`'s time base from the stream's
/// `r_frame_rate`, rounded down (ffmpeg's `compute_frame_duration`).
fn frame_ticks(stream: &Value, t: &mediaslice::Track) -> i64 {
    let r = stream.get("r_frame_rate").and_then(Value::as_str).unwrap_or("0/0");
    let (n, d) = r.split_once('/').unwrap_or(("0", "0"));
    let (n, d): (i128, i128) = (n.parse().unwrap_or(0), d.parse().unwrap_or(0));
    let den = n * i128::from(t.time_base.num);
    if den <= 0 {
        return 0;
    }
    i64::try_from(i128::from(t.time_base.den) * d / den).unwrap_or(0)
}

/// Adds tag `k` to a stream unless a tag of that name in any case is there.
fn insert_tag(s: &mut Value, k: &str, v: &str) {
    if let Some(o) = s.as_object_mut() {
        let t = o.entry("tags").or_insert_with(|| Value::Object(Map::new()));
        if let Some(t) = t.as_object_mut() {
            if !t.keys().any(|x| x.eq_ignore_ascii_case(k)) {
                t.insert(k.to_owned(), v.into());
            }
        }
    }
}

pub(super) fn set(s: &mut Value, key: &str, v: Value) {
    if let Some(o) = s.as_object_mut() {
        o.insert(key.into(), v);
    }
}

/// The Matroska facts of [`mkv`] put into the stream objects.
fn apply_mkv(seg: &mkv::Segment, tracks: &[mediaslice::Track], streams: &mut [Value]) {
    // The attached pictures are the image attachments, in order.
    let pictures = seg
        .attachments
        .iter()
        .filter(|a| mediaslice::codec::picture::codec_for_mime(a.mime.as_bytes(), false) != Codec::Unknown);
    let picture_streams = tracks
        .iter()
        .zip(streams.iter_mut())
        .filter(|(t, _)| t.attached_picture);
    for (a, (_, s)) in pictures.zip(picture_streams) {
        insert_tag(s, "filename", &a.name);
        insert_tag(s, "mimetype", &a.mime);
        if let Some(d) = &a.description {
            insert_tag(s, "title", d);
        }
    }
    for (t, s) in tracks.iter().zip(streams.iter_mut()) {
        let Some(e) = seg.track(t.id) else { continue };
        let lang = e.language.as_deref().unwrap_or("eng");
        if let Some(o) = s.as_object_mut() {
            let st = o.entry("tags").or_insert_with(|| Value::Object(Map::new()));
            if let Some(st) = st.as_object_mut() {
                // ffmpeg states no language for "und" (a tag may still).
                if lang != "und" {
                    st.insert("language".into(), lang.into());
                }
                if st.is_empty() {
                    o.remove("tags");
                }
            }
        }
        if let Some(m) = mkv::stereo_mode_name(e.stereo_mode) {
            insert_tag(s, "stereo_mode", m);
        }
        if let (mediaslice::TrackKind::Video, false, Some(dd)) = (t.kind, t.attached_picture, e.default_duration) {
            let (n, d) = super::rates::reduce(1_000_000_000, dd, 30_000);
            set(s, "avg_frame_rate", super::rates::rate_string((n, d)).into());
            if n < d * 1000 && n > d * 5 {
                set(s, "r_frame_rate", super::rates::rate_string((n, d)).into());
            }
        }
        if let (mediaslice::TrackKind::Video, false, Some((n, d))) = (t.kind, t.attached_picture, e.sar) {
            set(s, "sample_aspect_ratio", format!("{n}:{d}").into());
            let (w, h) = (u64::from(t.width) * n, u64::from(t.height) * d);
            if w > 0 && h > 0 {
                let (a, b) = super::rates::reduce(w, h, 1024 * 1024);
                set(s, "display_aspect_ratio", format!("{a}:{b}").into());
            }
        }
    }
}

/// The MP4 facts of [`mp4`] put into the stream objects.
fn apply_mp4(m: &mp4::Moov, tracks: &[mediaslice::Track], timing: &Timing, streams: &mut [Value]) {
    let last = m.traks.last().map(|t| t.id);
    let no_packets = (0..tracks.len()).all(|i| timing.first_packet(i).is_empty());
    for (i, (t, s)) in tracks.iter().zip(streams.iter_mut()).enumerate() {
        let Some(k) = m.trak(t.id) else { continue };
        if let Some(d) = s.get_mut("disposition").and_then(Value::as_object_mut) {
            d.insert("default".into(), u8::from(k.enabled).into());
        }
        let mut tags = Map::new();
        if let Some(c) = mp4::creation_time(k.creation_time) {
            tags.insert("creation_time".into(), c.into());
        }
        if let (true, Some(l)) = (t.language.is_empty(), &k.language) {
            tags.insert("language".into(), l.clone().into());
        }
        if let Some(h) = &k.handler {
            tags.insert("handler_name".into(), h.clone().into());
        }
        let av = matches!(t.kind, mediaslice::TrackKind::Video | mediaslice::TrackKind::Audio);
        if let (true, Some(v)) = (av, k.vendor) {
            tags.insert("vendor_id".into(), super::fourcc_string(u32::from_le_bytes(v)).into());
        }
        if let (mediaslice::TrackKind::Video, Some(e)) = (t.kind, &k.encoder) {
            tags.insert("encoder".into(), e.clone().into());
        }
        if !tags.is_empty() {
            if let Some(o) = s.as_object_mut() {
                let st = o.entry("tags").or_insert_with(|| Value::Object(Map::new()));
                if let Some(st) = st.as_object_mut() {
                    for (key, v) in tags {
                        st.entry(key).or_insert(v);
                    }
                }
            }
        }
        if let (mediaslice::TrackKind::Video, false, Some(r)) = (t.kind, t.attached_picture, k.r_frame_rate()) {
            set(s, "r_frame_rate", super::rates::rate_string(r).into());
        }
        if let (mediaslice::TrackKind::Video, Some((h, v))) = (t.kind, k.pasp) {
            if h > 0 && v > 0 {
                let (n, d) = super::rates::reduce(u64::from(h), u64::from(v), i32::MAX as u64);
                set(s, "sample_aspect_ratio", format!("{n}:{d}").into());
                let (w, hh) = (u64::from(t.width) * n, u64::from(t.height) * d);
                if w > 0 && hh > 0 {
                    let (a, b) = super::rates::reduce(w, hh, 1024 * 1024);
                    set(s, "display_aspect_ratio", format!("{a}:{b}").into());
                }
            }
        }
        if t.time_base.den == k.timescale && k.timescale > 0 {
            let (dur, rate) = if m.fragmented {
                (k.fragmented_duration(m.timescale), k.fragmented_bit_rate(m.timescale))
            } else {
                (k.ffmpeg_duration(m.timescale), k.bit_rate())
            };
            if !m.fragmented || dur > 0 || no_packets {
                set(s, "duration_ts", dur.into());
                set(s, "duration", super::time_string(dur as i64, t.time_base).into());
            }
            if let Some(b) = rate {
                set(s, "bit_rate", b.to_string().into());
            }
        }
        if let (Some(p), true, Some(first)) = (
            m.priming,
            Some(t.id) == last && t.codec == Codec::Aac,
            timing_first(timing, i, t),
        ) {
            let start = first + i64::from(p);
            set(s, "start_pts", start.into());
            set(s, "start_time", super::time_string(start, t.time_base).into());
        }
    }
}

fn timing_first(timing: &Timing, i: usize, t: &mediaslice::Track) -> Option<i64> {
    timing.facts(i, t, FormatKind::Mp4).first_pts
}
