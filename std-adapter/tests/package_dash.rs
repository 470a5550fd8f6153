//! `mediaslice package IN OUTDIR --dash`: one Adaptation Set per audio and
//! video stream; each stream's init segment and media segments, joined,
//! hold exactly that stream's input packets (byte for byte from MP4, as
//! many from TS and ADTS, whose bitstreams are converted); the SegmentTimeline (with
//! `S@r` expanded) lists one `S` per segment file, starts at the first
//! decode time and adds up to the stream's length; ffmpeg's DASH reader
//! reads the manifest with no warning.
#![allow(clippy::indexing_slicing, clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use mediaslice::crc::crc32;
use mediaslice::{Demuxer, SliceSource, TrackKind};
use std::path::{Path, PathBuf};
use std::process::Command;

use crate::remux_common::files_under;

fn corpus(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../corpus/files").join(rel)
}

/// (size, CRC, dts, duration) of a packet.
type Stamp = (usize, u32, i64, u64);

/// Per track: its kind and every packet's [`Stamp`].
fn packets(bytes: &[u8], ext: &str) -> Vec<(TrackKind, Vec<Stamp>)> {
    let mut join = vec![0u8; bytes.len() + 4096];
    let mut d = Demuxer::open(SliceSource::with_scratch(bytes, &mut join), Some(ext)).unwrap();
    let mut out: Vec<_> = d.tracks().iter().map(|t| (t.kind, Vec::new())).collect();
    while let Some(p) = d.next_packet().unwrap() {
        out[p.track]
            .1
            .push((p.data.len(), crc32(p.data), p.dts.unwrap_or(0), p.duration.unwrap_or(0)));
    }
    out
}

/// The boxes of `b`: (type, body).
fn boxes(b: &[u8]) -> Vec<([u8; 4], &[u8])> {
    let (mut at, mut v) = (0usize, Vec::new());
    while at + 8 <= b.len() {
        let size = u32::from_be_bytes(b[at..at + 4].try_into().unwrap()) as usize;
        if size < 8 || at + size > b.len() {
            break;
        }
        v.push((b[at + 4..at + 8].try_into().unwrap(), &b[at + 8..at + size]));
        at += size;
    }
    v
}

/// The first `moof/traf/tfdt` decode time of a media segment.
fn tfdt(seg: &[u8]) -> u64 {
    let find = |b: &'static [u8; 4], within: &[u8]| -> Option<Vec<u8>> {
        boxes(within)
            .into_iter()
            .find(|(k, _)| k == b)
            .map(|(_, body)| body.to_vec())
    };
    let moof = find(b"moof", seg).unwrap();
    let traf = find(b"traf", &moof).unwrap();
    let t = find(b"tfdt", &traf).unwrap();
    if t[0] == 1 {
        u64::from_be_bytes(t[4..12].try_into().unwrap())
    } else {
        u64::from(u32::from_be_bytes(t[4..8].try_into().unwrap()))
    }
}

/// An attribute's value in an XML start tag.
fn attr<'a>(tag: &'a str, name: &str) -> Option<&'a str> {
    let at = tag.find(&format!(" {name}=\""))? + name.len() + 3;
    tag[at..].split('"').next()
}

/// Per AdaptationSet: (contentType, segment folder, timescale, the
/// timeline's start, and each segment's duration with `S@r` expanded).
fn sets(mpd: &str) -> Vec<(String, String, u64, u64, Vec<u64>)> {
    let mut out = Vec::new();
    for set in mpd.split("<AdaptationSet").skip(1) {
        let kind = attr(set, "contentType").unwrap().to_owned();
        let tpl = &set[set.find("<SegmentTemplate").unwrap()..];
        let init = attr(tpl, "initialization").unwrap();
        let dir = init.strip_suffix("/init.mp4").unwrap().to_owned();
        assert_eq!(attr(tpl, "media").unwrap(), format!("{dir}/seg_$Number%05d$.m4s"));
        let scale: u64 = attr(tpl, "timescale").unwrap().parse().unwrap();
        let (mut start, mut ds) = (None, Vec::new());
        for s in tpl.split("<S ").skip(1) {
            if start.is_none() {
                start = Some(attr(&format!(" {s}"), "t").unwrap().parse().unwrap());
            }
            let s = format!(" {s}");
            let d: u64 = attr(&s, "d").unwrap().parse().unwrap();
            let r: usize = attr(&s, "r").map_or(0, |r| r.parse().unwrap());
            ds.extend(std::iter::repeat_n(d, r + 1));
        }
        out.push((kind, dir, scale, start.unwrap(), ds));
    }
    out
}

#[test]
fn package_dash_writes_one_adaptation_set_per_stream_that_ffmpeg_reads() {
    for rel in [
        "mp4/h264_aac.mp4",
        "mpegts/h264_aac.ts",
        "mp4/hevc_aac.mp4",
        "adts/aac_lc.aac",
    ] {
        let input = corpus(rel);
        let dir = std::env::temp_dir().join(format!(
            "mediaslice-dash-{}-{}",
            std::process::id(),
            rel.replace('/', "_")
        ));
        let _ = std::fs::remove_dir_all(&dir);
        let o = Command::new(env!("CARGO_BIN_EXE_mediaslice"))
            .arg("package")
            .arg(&input)
            .arg(&dir)
            .args(["--dash", "--segment", "0.5s"])
            .output()
            .unwrap();
        assert!(o.status.success(), "{rel}: {}", String::from_utf8_lossy(&o.stderr));
        // --dash alone writes no HLS playlist.
        assert!(!dir.join("master.m3u8").exists(), "{rel}");
        let mpd = std::fs::read_to_string(dir.join("manifest.mpd")).unwrap();
        assert!(mpd.contains("type=\"static\""), "{mpd}");
        let input_bytes = std::fs::read(&input).unwrap();
        let ext = input.extension().unwrap().to_str().unwrap();
        let streams = packets(&input_bytes, ext);
        let sets = sets(&mpd);
        assert_eq!(sets.len(), streams.len(), "{rel}: one AdaptationSet per stream\n{mpd}");
        for (i, (kind, sdir, scale, start, ds)) in sets.iter().enumerate() {
            let (tk, want) = &streams[i];
            let expected_kind = if *tk == TrackKind::Video { "video" } else { "audio" };
            assert_eq!(kind, expected_kind, "{rel} set {i}");
            let mut joined = std::fs::read(dir.join(sdir).join("init.mp4")).unwrap();
            for n in 1..=ds.len() {
                joined.extend(std::fs::read(dir.join(sdir).join(format!("seg_{n:05}.m4s"))).unwrap());
            }
            // No segment file beyond the timeline.
            assert!(
                !dir.join(sdir).join(format!("seg_{:05}.m4s", ds.len() + 1)).exists(),
                "{rel} set {i}"
            );
            let got = packets(&joined, "mp4");
            assert_eq!(got.len(), 1, "{rel} set {i}: one track per Adaptation Set");
            if ext == "mp4" {
                // The same bitstream: the same bytes, packet by packet.
                let sizes = |v: &[Stamp]| v.iter().map(|p| (p.0, p.1)).collect::<Vec<_>>();
                assert_eq!(sizes(&got[0].1), sizes(want), "{rel} set {i}: the stream's packets");
            } else {
                // Annex B to length-prefixed H.264, ADTS to raw AAC: the
                // same packets, converted.
                assert_eq!(got[0].1.len(), want.len(), "{rel} set {i}: the stream's packets");
            }
            // The timeline starts at the first decode time and adds up to
            // the stream's length, in the track's time scale.
            let mut d = Demuxer::open(SliceSource::new(&joined), Some("mp4")).unwrap();
            assert_eq!(u64::from(d.tracks()[0].time_base.den), *scale, "{rel} set {i}");
            let (mut first, mut end) = (None, 0i64);
            while let Some(p) = d.next_packet().unwrap() {
                first.get_or_insert(p.dts.unwrap());
                end = end.max(p.dts.unwrap() + p.duration.unwrap_or(0) as i64);
            }
            // S@t is the media time of the first segment: its tfdt (an
            // edit list in the init segment, such as AAC priming, shifts
            // the presentation, not the media timeline).
            let seg1 = std::fs::read(dir.join(sdir).join("seg_00001.m4s")).unwrap();
            assert_eq!(*start, tfdt(&seg1), "{rel} set {i}: S@t");
            assert_eq!(
                ds.iter().sum::<u64>() as i64,
                end - first.unwrap(),
                "{rel} set {i}: sum of S@d"
            );
        }
        // One Period start for every set (ISO/IEC 23009-1 §5.3.9.2): each
        // presentationTimeOffset is the earliest set's first time, in the
        // set's own time scale, so the tracks keep their relative timing.
        let offsets: Vec<u64> = mpd
            .split("<SegmentTemplate")
            .skip(1)
            .map(|t| attr(t, "presentationTimeOffset").unwrap().parse().unwrap())
            .collect();
        let zero = sets
            .iter()
            .map(|s| s.3 as f64 / s.2 as f64)
            .fold(f64::INFINITY, f64::min);
        for ((_, _, scale, start, _), pto) in sets.iter().zip(&offsets) {
            assert_eq!(
                *pto,
                (zero * *scale as f64).round() as u64,
                "{rel}: presentationTimeOffset\n{mpd}"
            );
            assert!(
                pto <= start,
                "{rel}: the offset is at or before the set's first segment"
            );
        }
        if Command::new("ffmpeg").arg("-version").output().is_ok() {
            let o = Command::new("ffmpeg")
                .args(["-v", "warning", "-i"])
                .arg(dir.join("manifest.mpd"))
                .args(["-c", "copy", "-f", "null", "-"])
                .output()
                .unwrap();
            assert!(
                o.status.success() && o.stderr.is_empty(),
                "{rel}: ffmpeg: {}",
                String::from_utf8_lossy(&o.stderr)
            );
        } else {
            println!("skip ffmpeg: not installed");
        }
        let _ = std::fs::remove_dir_all(&dir);
    }
}

/// Audio that starts 0.5 s after the video in the input (an MPEG-TS that
/// ffmpeg makes with `-itsoffset`) keeps that lead in the DASH sets: each
/// set is packaged alone, yet on the input's common timeline (before, each
/// set started at 0 and the audio played 0.5 s early).
#[test]
fn a_late_stream_stays_late_across_the_adaptation_sets() {
    if Command::new("ffmpeg").arg("-version").output().is_err() {
        println!("skip: ffmpeg not installed (it makes the input)");
        return;
    }
    let dir = std::env::temp_dir().join(format!("mediaslice-dash-late-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let input = dir.join("late.ts");
    let st = Command::new("ffmpeg")
        .args(["-v", "error", "-y", "-f", "lavfi", "-i", "testsrc=s=160x120:r=25:d=3"])
        .args(["-itsoffset", "0.5", "-f", "lavfi", "-i", "sine=r=48000:d=2.5"])
        .args(["-map", "0", "-map", "1", "-c:v", "libx264", "-bf", "0", "-c:a", "aac"])
        .arg(&input)
        .status()
        .unwrap();
    assert!(st.success(), "ffmpeg could not make the input");
    // The input's lead, from our reader: first times in seconds.
    let bytes = std::fs::read(&input).unwrap();
    let mut scratch = vec![0u8; 1 << 20];
    let mut d = Demuxer::open(SliceSource::with_scratch(&bytes, &mut scratch), Some("ts")).unwrap();
    let tracks = d.tracks().to_vec();
    let mut first = vec![None; tracks.len()];
    while let Some(p) = d.next_packet().unwrap() {
        let tb = tracks[p.track].time_base;
        let t = p.dts.or(p.pts).unwrap() as f64 * tb.num as f64 / tb.den as f64;
        first[p.track].get_or_insert(t);
    }
    let lead = first[1].unwrap() - first[0].unwrap();
    assert!(lead > 0.4, "the input's audio starts {lead} s after the video");
    let out = dir.join("out");
    let o = Command::new(env!("CARGO_BIN_EXE_mediaslice"))
        .arg("package")
        .arg(&input)
        .arg(&out)
        .args(["--dash", "--segment", "1s"])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let mpd = std::fs::read_to_string(out.join("manifest.mpd")).unwrap();
    let sets = sets(&mpd);
    let offsets: Vec<f64> = mpd
        .split("<SegmentTemplate")
        .skip(1)
        .map(|t| attr(t, "presentationTimeOffset").unwrap().parse::<f64>().unwrap())
        .collect();
    // Period times: (S@t - presentationTimeOffset) / timescale.
    let at: Vec<f64> = sets
        .iter()
        .zip(&offsets)
        .map(|(s, pto)| (s.3 as f64 - pto) / s.2 as f64)
        .collect();
    assert_eq!(at.len(), 2, "{mpd}");
    assert!(
        (at[1] - at[0] - lead).abs() < 0.001,
        "the audio set starts {} s after the video set, the input's audio {lead} s\n{mpd}",
        at[1] - at[0]
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// A codec with no `CODECS` string (MPEG-4 Part 2 video) is refused before
/// any file is written: the check once came after the whole pass, which
/// left every segment of a 4.5 GiB AVI in OUTDIR.
#[test]
fn a_codec_without_codecs_string_is_refused_before_any_file() {
    let input = corpus("avi/mpeg4_mp3.avi");
    for mode in [&["--hls"][..], &["--dash"], &["--hls", "--dash"]] {
        let dir = std::env::temp_dir().join(format!(
            "mediaslice-dash-nocodecs-{}-{}",
            std::process::id(),
            mode.join("")
        ));
        let _ = std::fs::remove_dir_all(&dir);
        let out = Command::new(env!("CARGO_BIN_EXE_mediaslice"))
            .arg("package")
            .arg(&input)
            .arg(&dir)
            .args(mode)
            .args(["--segment", "1s"])
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success(), "{mode:?}: accepted");
        assert!(err.contains("no CODECS string"), "{mode:?}: {err}");
        let left = if dir.exists() { files_under(&dir) } else { Vec::new() };
        assert!(left.is_empty(), "{mode:?}: files left in OUTDIR: {left:?}");
        let _ = std::fs::remove_dir_all(&dir);
    }
}
