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
