//! Decoding timestamps of HEVC in Matroska (feature `mkv-hevc-dts`):
//! Matroska stores only presentation times, and the reader derives the
//! decoding times from the reorder depth of the SPS in the `hvcC`
//! CodecPrivate (`sps_max_num_reorder_pics`, ITU-T H.265 §7.3.2.2.1), as
//! ffmpeg does from `has_b_frames`. The file is the corpus's HEVC + AAC MP4
//! (B-frames, reorder depth 2) copied four times over into Matroska by
//! ffmpeg at test time (no HEVC Matroska file is in the corpus or the
//! samples); every packet's dts is checked against ffprobe's. Without
//! ffmpeg/ffprobe the test prints why and skips.
#![cfg(feature = "mkv-hevc-dts")]

use crate::common;

use mediaslice::types::Codec;
use mediaslice::{Demuxer, SliceSource};
use std::process::Command;

/// ffprobe's (pts, dts) of every packet of stream 0 of `path` (`None` for
/// N/A), in the stream's time base.
fn ffprobe_video(path: &std::path::Path) -> Option<Vec<(Option<i64>, Option<i64>)>> {
    let o = Command::new("ffprobe")
        .args(["-v", "error", "-select_streams", "v:0"])
        .args(["-show_entries", "packet=pts,dts", "-of", "csv=p=0"])
        .arg(path)
        .output()
        .ok()?;
    assert!(o.status.success(), "ffprobe: {}", String::from_utf8_lossy(&o.stderr));
    let v = String::from_utf8_lossy(&o.stdout)
        .lines()
        .map(|l| {
            let f: Vec<Option<i64>> = l.split(',').map(|x| x.trim().parse().ok()).collect();
            (f[0], f[1])
        })
        .collect();
    Some(v)
}

#[test]
fn hevc_b_frames_in_matroska_get_ffprobes_decode_times() {
    let dir = std::env::temp_dir().join(format!("mediaslice-hevc-dts-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let mkv = dir.join("hevc_aac.mkv");
    let src = common::repo_root().join("corpus/files/mp4/hevc_aac.mp4");
    let made = Command::new("ffmpeg")
        .args(["-v", "error", "-y", "-stream_loop", "3", "-i"])
        .arg(&src)
        .args(["-c", "copy"])
        .arg(&mkv)
        .status();
    if !matches!(made, Ok(s) if s.success()) {
        println!(
            "skip: ffmpeg could not make {} from {} ({made:?})",
            mkv.display(),
            src.display()
        );
        return;
    }
    let Some(want) = ffprobe_video(&mkv) else {
        println!("skip: ffprobe not runnable");
        return;
    };
    let bytes = std::fs::read(&mkv).unwrap();
    let _ = std::fs::remove_dir_all(&dir);

    let mut d = Demuxer::open(SliceSource::new(&bytes), Some("mkv")).unwrap();
    let video = d
        .tracks()
        .iter()
        .position(|t| t.codec == Codec::Hevc)
        .expect("an HEVC track");
    let mut got = Vec::new();
    while let Some(p) = d.next_packet().unwrap() {
        if p.track == video {
            got.push((p.pts, p.dts));
        }
    }
    assert_eq!(got.len(), want.len(), "video packets");
    assert!(got.len() >= 100, "{} video packets", got.len());
    // ffprobe's depth: its first packets without a dts.
    let depth = want.iter().take_while(|w| w.1.is_none()).count();
    assert!((1..=16).contains(&depth), "ffprobe leaves {depth} packets without dts");
    let dts: Vec<i64> = got
        .iter()
        .skip(depth)
        .map(|g| g.1.expect("a dts after the first few"))
        .collect();
    assert!(
        dts.windows(2).all(|w| w[0] < w[1]),
        "decode times not increasing: {dts:?}"
    );
    for (k, g) in got.iter().enumerate() {
        if let (Some(p), Some(d)) = g {
            assert!(d <= p, "packet {k}: dts {d} after pts {p}");
        }
    }
    // B-frames: some decode times are before their presentation times.
    assert!(got.iter().any(|g| g.1 < g.0), "no packet reordered");
    assert_eq!(got, want, "(pts, dts) of every video packet, ours and ffprobe's");
}
