//! Helpers for the muxer tests: remux a file in memory and note the
//! packets the output should hold, read an output back, a seekable `Vec`
//! target, ffprobe's packets.
#![allow(
    dead_code,
    clippy::indexing_slicing,
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic
)]

use super::*;
use mediaslice::codec::convert::adts::adts_to_raw;
use mediaslice::codec::convert::to_length::{write_length_prefixed, LengthPrefixOptions};
use mediaslice::crc::crc32;
use mediaslice::mux::copy::{add_tracks, TrackMap};
use mediaslice::types::rescale_q;
use mediaslice::{
    Codec, Demuxer, MuxFormat, Muxer, Packet, PacketFlags, Rational, Sink, SliceSink, SliceSource, Track,
};

/// One packet as compared: CRC of the payload as the MP4 holds it, times
/// as exact fractions of a second, keyframe flag.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Seen {
    pub crc: u32,
    pub size: usize,
    pub pts: Option<(i128, i128)>,
    pub dts: Option<(i128, i128)>,
    pub key: bool,
}

pub fn secs(v: Option<i64>, tb: Rational) -> Option<(i128, i128)> {
    // Reduced to lowest terms so equal instants compare equal.
    v.map(|v| {
        let (mut n, mut d) = (i128::from(v) * i128::from(tb.num), i128::from(tb.den));
        let g = gcd(n.abs(), d);
        if g > 1 {
            n /= g;
            d /= g;
        }
        (n, d)
    })
}

pub fn gcd(a: i128, b: i128) -> i128 {
    if b == 0 {
        a.max(1)
    } else {
        gcd(b, a % b)
    }
}

/// The payload an MP4 sample holds for an input packet of `t`.
pub fn converted(t: &Track, config_empty_or_annexb: bool, data: &[u8]) -> Vec<u8> {
    match t.codec {
        Codec::H264 | Codec::Hevc if config_empty_or_annexb => {
            let mut out = vec![0u8; data.len() * 2 + 64];
            let mut sink = SliceSink::new(&mut out);
            write_length_prefixed(&mut sink, data, LengthPrefixOptions::default()).unwrap();
            sink.written().to_vec()
        }
        Codec::Aac if config_empty_or_annexb => adts_to_raw(data).map(|x| x.1.to_vec()).unwrap_or_default(),
        _ => data.to_vec(),
    }
}

/// Remuxes `bytes` to `format` into `sink` with `index` bytes of scratch;
/// gives the sink, the track map and the input's expected packets per
/// output track.
pub fn remux<K: Sink>(
    bytes: &[u8],
    ext: Option<&str>,
    format: MuxFormat,
    sink: K,
    index: usize,
) -> mediaslice::Result<(K, TrackMap, Vec<Vec<Seen>>)> {
    let mut join = scratch_for(bytes.len());
    let mut d = Demuxer::open(SliceSource::with_scratch(bytes, &mut join), ext)?;
    let mut m = Muxer::with_scratch(sink, format, vec![0u8; index])?;
    let map = add_tracks(&mut d, &mut m)?;
    // What each kept track's packets should become.
    let mut annexb = Vec::new();
    for i in 0..d.tracks().len() {
        let c = d.codec_config(i)?;
        annexb.push(c.is_empty() || c.starts_with(&[0, 0, 1]) || c.starts_with(&[0, 0, 0, 1]));
    }
    let tracks = d.tracks().to_vec();
    let mut want = vec![Vec::new(); m.tracks().len()];
    while let Some(p) = d.next_packet()? {
        let Some(&Some(j)) = map.get(p.track) else { continue };
        let t = &tracks[p.track];
        let data = converted(t, annexb[p.track], p.data);
        want[j].push(Seen {
            crc: crc32(&data),
            size: data.len(),
            pts: secs(p.pts, t.time_base),
            // A decode time only where the input gives one: where it does
            // not (Matroska's first packets of a reordering track), the
            // muxer rebuilds it (muxer_times.rs); the pts check covers
            // those packets.
            dts: secs(p.dts, t.time_base),
            key: p.flags.keyframe,
        });
        m.write_packet(&Packet { track: j, ..p })?;
    }
    Ok((m.finish()?, map, want))
}

/// Every packet of an MP4 in `bytes`, per track.
pub fn read_back(bytes: &[u8]) -> (Vec<Track>, Vec<Vec<Seen>>) {
    let mut d = Demuxer::open(SliceSource::new(bytes), Some("mp4")).unwrap();
    let tracks = d.tracks().to_vec();
    let mut got = vec![Vec::new(); tracks.len()];
    while let Some(p) = d.next_packet().unwrap() {
        let tb = tracks[p.track].time_base;
        got[p.track].push(Seen {
            crc: crc32(p.data),
            size: p.data.len(),
            pts: secs(p.pts, tb),
            dts: secs(p.dts, tb),
            key: p.flags.keyframe,
        });
    }
    (tracks, got)
}

/// A write+seek target over a `Vec`, for `SeekWriterSink`.
#[derive(Default)]
pub struct VecFile {
    pub data: Vec<u8>,
    pub at: usize,
}

impl embedded_io::ErrorType for VecFile {
    type Error = embedded_io::ErrorKind;
}

impl embedded_io::Write for VecFile {
    fn write(&mut self, buf: &[u8]) -> Result<usize, Self::Error> {
        let end = self.at + buf.len();
        if self.data.len() < end {
            self.data.resize(end, 0);
        }
        self.data[self.at..end].copy_from_slice(buf);
        self.at = end;
        Ok(buf.len())
    }
    fn flush(&mut self) -> Result<(), Self::Error> {
        Ok(())
    }
}

impl embedded_io::Seek for VecFile {
    fn seek(&mut self, pos: embedded_io::SeekFrom) -> Result<u64, Self::Error> {
        self.at = match pos {
            embedded_io::SeekFrom::Start(p) => p as usize,
            embedded_io::SeekFrom::Current(d) => (self.at as i64 + d) as usize,
            embedded_io::SeekFrom::End(d) => (self.data.len() as i64 + d) as usize,
        };
        Ok(self.at as u64)
    }
}

pub fn corpus_file(family: &str, name: &str) -> (Vec<u8>, Option<String>) {
    let f = family_files(family)
        .into_iter()
        .find(|f| f.origin == Origin::Corpus && f.name == name)
        .unwrap_or_else(|| panic!("corpus/files/{family}/{name}"));
    (f.read(), f.ext())
}

/// A fresh folder for a test that hands files to ffprobe, named by `tag`
/// and the process; `None` (after saying so) when ffprobe is not
/// installed.
pub fn ffprobe_dir(tag: &str) -> Option<std::path::PathBuf> {
    if std::process::Command::new("ffprobe").arg("-version").output().is_err() {
        println!("skip: ffprobe is not installed");
        return None;
    }
    // One folder a call: tests of one binary run as threads of one
    // process, and two of them with the same tag wrote and removed the
    // same folder under each other.
    static CALLS: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let n = CALLS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let dir = std::env::temp_dir().join(format!("mediaslice-{tag}-{}-{n}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    Some(dir)
}

/// What ffprobe said of `bytes`: written as `name` in a fresh folder
/// ([`ffprobe_dir`] with `tag`, removed afterwards), probed with `-v error`, `args` and
/// `-of json`; whether it succeeded, its stderr, and its JSON. `None`
/// (after saying so) when ffprobe is not installed.
pub fn ffprobe_json(tag: &str, name: &str, bytes: &[u8], args: &[&str]) -> Option<(bool, String, serde_json::Value)> {
    let dir = ffprobe_dir(tag)?;
    let path = dir.join(name);
    std::fs::write(&path, bytes).unwrap();
    let out = std::process::Command::new("ffprobe")
        .args(["-v", "error"])
        .args(args)
        .args(["-of", "json"])
        .arg(&path)
        .output()
        .unwrap();
    let _ = std::fs::remove_dir_all(&dir);
    let doc = serde_json::from_slice(&out.stdout).unwrap_or(serde_json::Value::Null);
    Some((
        out.status.success(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
        doc,
    ))
}

/// One ffprobe packet: pts_time, dts_time, size, keyframe.
pub type ProbePkt = (Option<f64>, Option<f64>, usize, bool);

/// ffprobe's packets of a file, per stream.
pub fn ffprobe_packets(path: &std::path::Path) -> Option<Vec<Vec<ProbePkt>>> {
    let out = std::process::Command::new("ffprobe")
        .args(["-v", "error", "-show_packets", "-of", "json"])
        .arg(path)
        .output()
        .ok()?;
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).ok()?;
    let mut streams: Vec<Vec<_>> = Vec::new();
    for p in doc["packets"].as_array()? {
        let s = p["stream_index"].as_u64()? as usize;
        if streams.len() <= s {
            streams.resize(s + 1, Vec::new());
        }
        let t = |k: &str| p[k].as_str().and_then(|v| v.parse::<f64>().ok());
        let size = p["size"].as_str().and_then(|v| v.parse().ok()).unwrap_or(0);
        let key = p["flags"].as_str().is_some_and(|f| f.starts_with('K'));
        streams[s].push((t("pts_time"), t("dts_time"), size, key));
    }
    Some(streams)
}

/// A camera's tracks: 1080p H.264 (90 kHz) and 48 kHz stereo AAC, with an
/// avcC of a High profile stream and an AAC-LC AudioSpecificConfig.
pub fn camera_tracks() -> ([Track; 2], Vec<u8>, Vec<u8>) {
    use mediaslice::TrackKind;
    let video = Track {
        codec: Codec::H264,
        kind: TrackKind::Video,
        time_base: Rational::new(1, 90_000),
        width: 1920,
        height: 1080,
        ..Track::default()
    };
    let audio = Track {
        codec: Codec::Aac,
        kind: TrackKind::Audio,
        time_base: Rational::new(1, 48_000),
        sample_rate: 48_000,
        channels: 2,
        ..Track::default()
    };
    let avcc = vec![
        1, 0x64, 0, 0x28, 0xFF, 0xE1, 0, 4, 0x67, 0x64, 0, 0x28, 1, 0, 4, 0x68, 0xEE, 0x3C, 0x80,
    ];
    ([video, audio], avcc, vec![0x11, 0x90])
}

/// Runs `check` on every corpus and sample file of `families` (it gives
/// `None` for a file it skips, after saying why) and asserts that at least
/// 8 were remuxed to `target`; gives the count.
pub fn round_trip_families(
    families: &[&str],
    target: &str,
    mut check: impl FnMut(&TestFile) -> Option<usize>,
) -> usize {
    let mut done = 0;
    for fam in families {
        for f in family_files(fam) {
            if check(&f).is_some() {
                done += 1;
            }
        }
    }
    if samples_dir().is_none() {
        println!("skip ../shared/samples: absent");
    }
    println!("{done} files remuxed to {target} and read back");
    assert!(done >= 8, "only {done} files remuxed");
    done
}

/// One input packet, owned.
pub struct Owned {
    track: usize,
    pts: Option<i64>,
    dts: Option<i64>,
    duration: Option<u64>,
    flags: PacketFlags,
    data: Vec<u8>,
}

/// `name` of the corpus family `fam` written to TS `loops` times in a row,
/// each loop after the one before (its end rounded up to 10 ms), all its times moved by
/// `offset_ms`, with `tags` (name, value) added to the muxer. Gives the TS, the tracks
/// and per track the 90 kHz decode times expected (unwrapped).
pub fn looped_ts(
    fam: &str,
    name: &str,
    loops: i64,
    offset_ms: i64,
    tags: &[(&str, &str)],
) -> (Vec<u8>, Vec<Track>, Vec<Vec<i64>>) {
    let (bytes, ext) = corpus_file(fam, name);
    let mut join = scratch_for(bytes.len());
    let mut d = Demuxer::open(SliceSource::with_scratch(&bytes, &mut join), ext.as_deref()).unwrap();
    let mut out = vec![0u8; bytes.len() * loops as usize * 2 + 64 * 1024];
    let mut m = Muxer::new(SliceSink::new(&mut out), MuxFormat::Ts).unwrap();
    let map = add_tracks(&mut d, &mut m).unwrap();
    let n = d.tracks().len();
    assert!(map[..n].iter().all(Option::is_some), "{name}: every track kept");
    for (k, v) in tags {
        m.add_tag(k, v).unwrap();
    }
    let tracks = d.tracks().to_vec();
    let mut input = Vec::new();
    while let Some(p) = d.next_packet().unwrap() {
        input.push(Owned {
            track: p.track,
            pts: p.pts,
            dts: p.dts,
            duration: p.duration,
            flags: p.flags,
            data: p.data.to_vec(),
        });
    }
    let ms = Rational::new(1, 1000);
    let end = input
        .iter()
        .map(|p| {
            let tb = tracks[p.track].time_base;
            let t = p.pts.or(p.dts).unwrap() + p.duration.unwrap_or(0) as i64;
            rescale_q(t, tb, ms) + 1
        })
        .max()
        .unwrap();
    let period = (end + 9) / 10 * 10;
    let mut want = vec![Vec::new(); tracks.len()];
    for k in 0..loops {
        for p in &input {
            let tb = tracks[p.track].time_base;
            let by = rescale_q(offset_ms + k * period, ms, tb);
            let (pts, dts) = (p.pts.map(|v| v + by), p.dts.map(|v| v + by));
            let decode = dts.or(pts).unwrap();
            want[p.track]
                .push(rescale_q(decode, tb, Rational::new(1, 90_000)) + mediaslice::format::mpeg::ts_mux::START_OFFSET);
            m.write_packet(&Packet {
                track: p.track,
                pts,
                dts,
                duration: p.duration,
                flags: p.flags,
                pos: None,
                contiguous: false,
                data: &p.data,
            })
            .unwrap();
        }
    }
    let n = m.finish().unwrap().written().len();
    out.truncate(n);
    (out, tracks, want)
}
