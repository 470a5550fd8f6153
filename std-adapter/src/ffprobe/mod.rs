//! ffprobe-compatible output: the field names, types and spellings of
//! `ffprobe -of json -show_format -show_streams -show_packets -show_data_hash
//! CRC32` (ffprobe 5.1), so that a script written for ffprobe reads
//! `mediaslice packets --json` unchanged.
//!
//! Packets are written one at a time with no allocation
//! ([`write_packet`]); streams and the format are small and built as
//! [`serde_json::Value`]s.

pub mod audio;
pub mod chapters;
pub mod estimate;
pub mod facts;
pub mod gather;
pub mod mkv;
pub mod mp4;
mod mp4_moov;
pub mod names;
pub mod probe;
pub mod programs;
pub mod rates;
pub mod timings;

use mediaslice::{FormatKind, Packet, Rational, Tag, TagKey, TagValue, Track, TrackKind};
pub use rates::{StreamTiming, Timing};
use serde_json::{Map, Value};
use std::fmt::Write as _;
use std::io::{self, Write};

/// ffmpeg's `av_fourcc_make_string`: the four bytes of `tag` (least
/// significant first) as characters when they are alphanumeric or one of
/// `. -_`, else as `[N]`.
pub fn fourcc_string(tag: u32) -> String {
    let mut s = String::new();
    for c in tag.to_le_bytes() {
        if c.is_ascii_alphanumeric() || matches!(c, b'.' | b' ' | b'-' | b'_') {
            s.push(c as char);
        } else {
            let _ = write!(s, "[{c}]");
        }
    }
    s
}

/// The codec tag as ffmpeg stores it (`AVCodecParameters.codec_tag`).
///
/// `Track::codec_tag` holds a FourCC as a big-endian `u32` (`avc1` is
/// 0x61766331) or a 16-bit format tag (WAVE `wFormatTag`). ffmpeg keeps
/// FourCCs little-endian (`avc1` is 0x31637661) and format tags as they are.
/// A value above 0xFFFF is taken to be a FourCC.
pub fn ffmpeg_codec_tag(track_tag: u32) -> u32 {
    if track_tag > 0xFFFF {
        track_tag.swap_bytes()
    } else {
        track_tag
    }
}

/// ffprobe's `%.6f` of a timestamp: `ts * av_q2d(time_base)`.
pub fn time_string(ts: i64, tb: Rational) -> String {
    format!("{:.6}", seconds(ts, tb))
}

/// `ts` in seconds, computed as ffprobe does (`ts * (num / (double)den)`).
pub fn seconds(ts: i64, tb: Rational) -> f64 {
    if tb.den == 0 {
        return 0.0;
    }
    ts as f64 * (tb.num as f64 / tb.den as f64)
}

/// A tag key as text: a text key as it is, a FourCC with each byte taken as
/// Latin-1 (so iTunes `©nam` reads as it looks).
pub fn key_text(key: &TagKey<'_>) -> String {
    match key {
        TagKey::Text(s) => (*s).to_owned(),
        TagKey::FourCc(b) => b.iter().map(|&c| c as char).collect(),
    }
}

/// The name a tag goes under in ffprobe's `tags` objects: its common name
/// when it has one, else its key as text.
pub fn tag_name(tag: &Tag<'_>) -> String {
    match tag.name {
        Some(n) => n.to_owned(),
        None => key_text(&tag.key),
    }
}

/// A tag value as ffprobe prints it (tags are strings); `None` for binary
/// values, which ffprobe does not print.
pub fn tag_value(value: &TagValue<'_>) -> Option<String> {
    match value {
        TagValue::Text(s) => Some((*s).to_owned()),
        TagValue::Int(i) => Some(i.to_string()),
        TagValue::Bytes(_) => None,
    }
}

/// Tags copied out of the demuxer: per scope, `(name, value)` in the order
/// the container gives them.
#[derive(Debug, Default, Clone)]
pub struct TagSet {
    /// Format-scope tags.
    pub format: Vec<(String, String)>,
    /// Per track (index into the track list).
    pub streams: Vec<Vec<(String, String)>>,
}

impl TagSet {
    /// Adds `tag` (binary values are skipped).
    pub fn add(&mut self, tag: &Tag<'_>) {
        let Some(v) = tag_value(&tag.value) else {
            return;
        };
        match tag.scope {
            mediaslice::TagScope::Format => self.format.push((tag_name(tag), v)),
            mediaslice::TagScope::Track(i) => {
                if self.streams.len() <= i {
                    self.streams.resize_with(i + 1, Vec::new);
                }
                if let Some(s) = self.streams.get_mut(i) {
                    s.push((tag_name(tag), v));
                }
            }
        }
    }

    /// The format tags as a JSON object (a later value of a name replaces an
    /// earlier one, keeping its place, as ffmpeg's dictionaries do).
    pub fn format_json(&self) -> Map<String, Value> {
        to_map(&self.format)
    }

    /// Track `i`'s tags as a JSON object, with `language` from the track
    /// when no tag gave one.
    pub fn stream_json(&self, i: usize, track: &Track) -> Map<String, Value> {
        let mut m = Map::new();
        if !track.language.is_empty() {
            m.insert("language".into(), Value::String(track.language.as_str().to_owned()));
        }
        if let Some(t) = self.streams.get(i) {
            for (k, v) in t {
                m.insert(k.clone(), Value::String(v.clone()));
            }
        }
        m
    }
}

fn to_map(tags: &[(String, String)]) -> Map<String, Value> {
    let mut m = Map::new();
    for (k, v) in tags {
        m.insert(k.clone(), Value::String(v.clone()));
    }
    m
}

/// ffprobe's packet `flags`: `K` for a keyframe, `D` for discard, `_` else.
pub fn flags(p: &Packet<'_>) -> &'static str {
    match (p.flags.keyframe, p.flags.discard) {
        (true, false) => "K_",
        (false, false) => "__",
        (true, true) => "KD",
        (false, true) => "_D",
    }
}

/// Writes one packet object of ffprobe's `packets` array, without
/// allocating: `codec_type`, `stream_index`, `pts`/`pts_time`,
/// `dts`/`dts_time`, `duration`/`duration_time` (each omitted when unknown,
/// as ffprobe does), `size` and `pos` (strings), `flags` and `data_hash`
/// (`CRC32:xxxxxxxx` of the payload). `track` is the packet's track, when the
/// index is valid.
pub fn write_packet<W: Write>(w: &mut W, p: &Packet<'_>, track: Option<&Track>, crc: u32) -> io::Result<()> {
    let kind = track.map(|t| t.kind).unwrap_or(TrackKind::Unknown);
    let tb = track.map(|t| t.time_base).unwrap_or(Rational::new(0, 0));
    write!(
        w,
        "{{\"codec_type\": \"{}\", \"stream_index\": {}",
        kind.ffmpeg_name(),
        p.track
    )?;
    if let Some(pts) = p.pts {
        write!(w, ", \"pts\": {pts}, \"pts_time\": \"{:.6}\"", seconds(pts, tb))?;
    }
    if let Some(dts) = p.dts {
        write!(w, ", \"dts\": {dts}, \"dts_time\": \"{:.6}\"", seconds(dts, tb))?;
    }
    if let Some(d) = p.duration {
        let secs = seconds(i64::try_from(d).unwrap_or(i64::MAX), tb);
        write!(w, ", \"duration\": {d}, \"duration_time\": \"{secs:.6}\"")?;
    }
    write!(w, ", \"size\": \"{}\"", p.data.len())?;
    if let Some(pos) = p.pos {
        write!(w, ", \"pos\": \"{pos}\"")?;
    }
    write!(w, ", \"flags\": \"{}\", \"data_hash\": \"CRC32:{crc:08x}\"}}", flags(p))
}

/// One stream object of ffprobe's `streams` array; `timing` holds what the
/// first packets tell (see [`rates`]),
/// `video` the picture facts of its headers ([`facts`]).
pub fn stream_json(
    index: usize,
    t: &Track,
    tags: &TagSet,
    timing: &StreamTiming,
    video: Option<&mediaslice::codec::facts::VideoFacts>,
) -> Value {
    let mut m = Map::new();
    m.insert("index".into(), index.into());
    m.insert("codec_name".into(), t.codec.ffmpeg_name().into());
    m.insert("codec_type".into(), t.kind.ffmpeg_name().into());
    let tag = ffmpeg_codec_tag(t.codec_tag);
    m.insert("codec_tag_string".into(), fourcc_string(tag).into());
    m.insert("codec_tag".into(), format!("0x{tag:04x}").into());
    match t.kind {
        TrackKind::Video => {
            m.insert("width".into(), t.width.into());
            m.insert("height".into(), t.height.into());
            facts::insert(&mut m, t, video);
        }
        TrackKind::Audio => {
            m.insert("sample_rate".into(), t.sample_rate.to_string().into());
            m.insert("channels".into(), t.channels.into());
            if let Some(l) = names::channel_layout(t) {
                m.insert("channel_layout".into(), l.into());
            }
            if let Some((f, raw)) = names::sample_fmt(t) {
                m.insert("sample_fmt".into(), f.into());
                if let Some(b) = raw {
                    m.insert("bits_per_raw_sample".into(), b.to_string().into());
                }
            }
            m.insert("bits_per_sample".into(), names::bits_per_sample(t.codec).into());
        }
        _ => {}
    }
    m.insert("r_frame_rate".into(), rates::rate_string(timing.r_frame_rate).into());
    m.insert(
        "avg_frame_rate".into(),
        rates::rate_string(timing.avg_frame_rate).into(),
    );
    m.insert(
        "time_base".into(),
        format!("{}/{}", t.time_base.num, t.time_base.den).into(),
    );
    if let Some(s) = timing.start_pts {
        m.insert("start_pts".into(), s.into());
        m.insert("start_time".into(), time_string(s, t.time_base).into());
    }
    if let Some(d) = t.duration {
        m.insert("duration_ts".into(), d.into());
        let secs = seconds(i64::try_from(d).unwrap_or(i64::MAX), t.time_base);
        m.insert("duration".into(), format!("{secs:.6}").into());
    }
    if t.bit_rate > 0 {
        m.insert("bit_rate".into(), t.bit_rate.to_string().into());
    }
    if let Some(n) = t.frames {
        m.insert("nb_frames".into(), n.to_string().into());
    }
    if let Some(c) = t.config {
        m.insert("extradata_size".into(), c.len.into());
    }
    let mut disp = Map::new();
    disp.insert("default".into(), u8::from(t.default).into());
    disp.insert("attached_pic".into(), u8::from(t.attached_picture).into());
    m.insert("disposition".into(), Value::Object(disp));
    let st = tags.stream_json(index, t);
    if !st.is_empty() {
        m.insert("tags".into(), Value::Object(st));
    }
    Value::Object(m)
}

/// Facts for ffprobe's `format` object.
#[derive(Debug, Clone)]
pub struct FormatFacts<'a> {
    /// The file name as given.
    pub filename: &'a str,
    /// The detected format.
    pub kind: FormatKind,
    /// Number of tracks.
    pub nb_streams: usize,
    /// Input size in bytes.
    pub size: u64,
    /// Duration in microseconds, when known.
    pub duration_us: Option<u64>,
    /// Start time in microseconds, when known.
    pub start_us: Option<i64>,
    /// Bit rate the container states, when it does.
    pub bit_rate: Option<u64>,
}

/// ffprobe's `format` object.
pub fn format_json(f: &FormatFacts<'_>, tags: &TagSet) -> Value {
    let mut m = Map::new();
    m.insert("filename".into(), f.filename.into());
    m.insert("nb_streams".into(), f.nb_streams.into());
    m.insert("nb_programs".into(), names::nb_programs(f.kind, f.nb_streams).into());
    m.insert("format_name".into(), f.kind.ffmpeg_name().into());
    if let Some(l) = names::format_long_name(f.kind) {
        m.insert("format_long_name".into(), l.into());
    }
    if let Some(s) = f.start_us {
        m.insert("start_time".into(), format!("{:.6}", s as f64 / 1e6).into());
    }
    if let Some(d) = f.duration_us {
        m.insert("duration".into(), format!("{:.6}", d as f64 / 1e6).into());
    }
    m.insert("size".into(), f.size.to_string().into());
    // ffmpeg derives the format's bit rate from the file size and the
    // duration whenever the duration is known (libavformat
    // update_stream_timings); the container's own figure only otherwise.
    let bit_rate = match f.duration_us.filter(|&d| d > 0) {
        Some(d) => Some((f.size as f64 * 8.0 * 1e6 / d as f64) as u64),
        None => f.bit_rate.filter(|&b| b > 0),
    };
    if let Some(b) = bit_rate {
        m.insert("bit_rate".into(), b.to_string().into());
    }
    let t = tags.format_json();
    if !t.is_empty() {
        m.insert("tags".into(), Value::Object(t));
    }
    Value::Object(m)
}

#[cfg(test)]
mod tests {
    use super::*;
    use mediaslice::{Codec, PacketFlags, TagScope};

    #[test]
    fn fourcc_strings_match_ffmpeg() {
        assert_eq!(fourcc_string(1), "[1][0][0][0]");
        assert_eq!(fourcc_string(0x11), "[17][0][0][0]");
        assert_eq!(fourcc_string(ffmpeg_codec_tag(u32::from_be_bytes(*b"avc1"))), "avc1");
        assert_eq!(ffmpeg_codec_tag(u32::from_be_bytes(*b"avc1")), 0x3163_7661);
        assert_eq!(fourcc_string(u32::from_le_bytes(*b"a.-_")), "a.-_");
        assert_eq!(fourcc_string(u32::from_le_bytes([0xA9, b'n', b'a', b'm'])), "[169]nam");
    }

    #[test]
    fn times_are_six_decimals() {
        assert_eq!(time_string(2048, Rational::new(1, 44100)), "0.046440");
        assert_eq!(time_string(-2002, Rational::new(1, 30000)), "-0.066733");
        assert_eq!(time_string(5, Rational::new(1, 0)), "0.000000");
    }

    #[test]
    fn packet_json_is_ffprobe_shaped() {
        let t = Track {
            kind: TrackKind::Audio,
            codec: Codec::PcmS16Le,
            time_base: Rational::new(1, 44100),
            ..Track::default()
        };
        let data = [1u8, 2, 3];
        let p = Packet {
            track: 0,
            pts: Some(2048),
            dts: Some(2048),
            duration: Some(2048),
            flags: PacketFlags {
                keyframe: true,
                ..PacketFlags::default()
            },
            pos: Some(4174),
            contiguous: true,
            data: &data,
        };
        let mut out = Vec::new();
        write_packet(&mut out, &p, Some(&t), mediaslice::crc::crc32(&data)).unwrap();
        let v: Value = serde_json::from_slice(&out).unwrap();
        assert_eq!(v["codec_type"], "audio");
        assert_eq!(v["stream_index"], 0);
        assert_eq!(v["pts"], 2048);
        assert_eq!(v["pts_time"], "0.046440");
        assert_eq!(v["size"], "3");
        assert_eq!(v["pos"], "4174");
        assert_eq!(v["flags"], "K_");
        assert_eq!(v["data_hash"], format!("CRC32:{:08x}", mediaslice::crc::crc32(&data)));
        let q = Packet {
            pts: None,
            dts: None,
            duration: None,
            pos: None,
            flags: PacketFlags {
                discard: true,
                ..PacketFlags::default()
            },
            ..p
        };
        let mut out = Vec::new();
        write_packet(&mut out, &q, None, 0).unwrap();
        let v: Value = serde_json::from_slice(&out).unwrap();
        let keys: Vec<&str> = v.as_object().unwrap().keys().map(|k| k.as_str()).collect();
        assert_eq!(keys, ["codec_type", "stream_index", "size", "flags", "data_hash"]);
        assert_eq!(v["flags"], "_D");
        assert_eq!(v["codec_type"], "unknown");
    }

    #[test]
    fn tags_go_to_their_scope() {
        let mut s = TagSet::default();
        s.add(&Tag {
            scope: TagScope::Format,
            key: TagKey::FourCc(*b"INAM"),
            name: Some("title"),
            value: TagValue::Text("x"),
        });
        s.add(&Tag {
            scope: TagScope::Track(1),
            key: TagKey::Text("handler"),
            name: None,
            value: TagValue::Int(7),
        });
        s.add(&Tag {
            scope: TagScope::Format,
            key: TagKey::FourCc([0xA9, b'c', b'm', b't']),
            name: None,
            value: TagValue::Bytes(&[0, 1]),
        });
        assert_eq!(s.format, vec![("title".to_owned(), "x".to_owned())]);
        let t = Track {
            language: mediaslice::Language::new("eng").unwrap(),
            ..Track::default()
        };
        let j = s.stream_json(1, &t);
        assert_eq!(j["language"], "eng");
        assert_eq!(j["handler"], "7");
        assert!(s.stream_json(0, &Track::default()).is_empty());
        assert_eq!(key_text(&TagKey::FourCc([0xA9, b'n', b'a', b'm'])), "©nam");
    }
}
