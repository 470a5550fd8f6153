//! `package` with hundreds of segments (more than the 256 records a
//! `SegmentLog` holds in memory, so the rest go through its temporary
//! file): the playlist lists every segment file in order with the
//! report's durations, the target duration is the longest, each DASH
//! timeline (`S@r` expanded) has one `S` per segment file, at most 256
//! records stay in memory, and no temporary file is left in the output;
//! the same for live packaging without a window, HLS and DASH.
#![allow(clippy::indexing_slicing, clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use crate::live_common::fast;
use mediaslice_std::live::LiveInput;
use mediaslice_std::package::{package_live, PackageReport, Segment};
use std::path::{Path, PathBuf};
use std::process::Command;

/// Segment files (`seg_*.m4s`) in `dir`.
fn seg_files(dir: &Path) -> usize {
    std::fs::read_dir(dir)
        .unwrap()
        .filter(|e| e.as_ref().unwrap().file_name().to_string_lossy().starts_with("seg_"))
        .count()
}

/// The checks every run here shares: more segments than the records held
/// in memory, at most 256 held, one file per record, and the media
/// playlist listing each, in order, with its duration. Returns the
/// records and the playlist.
fn check_listing(out: &Path, report: &PackageReport) -> (Vec<Segment>, String) {
    let n = report.segments.len();
    assert!(n > 256, "{n} segments: too few to pass the records held in memory");
    assert!(
        report.segments.held_records() <= 256,
        "{} held",
        report.segments.held_records()
    );
    assert_eq!(seg_files(out), n);
    let listed = report.segments.to_vec().unwrap();
    let media = std::fs::read_to_string(out.join("media.m3u8")).unwrap();
    let lines: Vec<&str> = media.lines().collect();
    let inf: Vec<(&str, &str)> = lines
        .windows(2)
        .filter_map(|w| w[0].strip_prefix("#EXTINF:").map(|d| (d.trim_end_matches(','), w[1])))
        .collect();
    assert_eq!(inf.len(), n);
    for (k, ((d, name), s)) in inf.iter().zip(&listed).enumerate() {
        assert_eq!(*name, format!("seg_{:05}.m4s", k + 1));
        assert_eq!(s.name, *name);
        assert_eq!(*d, format!("{:.6}", s.seconds), "{name}");
    }
    (listed, media)
}

/// Each DASH timeline of `out/manifest.mpd` (`S@r` expanded) has one `S`
/// per segment file of its folder, `dash/<first + set>`; returns the MPD.
fn check_timelines(out: &Path, first: usize) -> String {
    let mpd = std::fs::read_to_string(out.join("manifest.mpd")).unwrap();
    let sets = mpd.split("<SegmentTimeline>").skip(1).collect::<Vec<_>>();
    assert!(!sets.is_empty(), "{mpd}");
    for (i, set) in sets.into_iter().enumerate() {
        let set = set.split("</SegmentTimeline>").next().unwrap();
        let count: usize = set
            .split("<S ")
            .skip(1)
            .map(|s| {
                s.split(" r=\"")
                    .nth(1)
                    .map_or(1, |r| r.split('"').next().unwrap().parse::<usize>().unwrap() + 1)
            })
            .sum();
        assert_eq!(count, seg_files(&out.join(format!("dash/{}", first + i))), "set {i}");
    }
    mpd
}

/// A fresh folder and in it `long.ts`: the corpus's H.264 + AAC TS looped
/// 251 times (about 1,000 s); `None`, said on stdout, without ffmpeg.
fn long_input(name: &str) -> Option<(std::path::PathBuf, std::path::PathBuf)> {
    if Command::new("ffmpeg").arg("-version").output().is_err() {
        println!("skip: ffmpeg not installed (it makes the long input)");
        return None;
    }
    let dir = std::env::temp_dir().join(format!("ms-package-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("../corpus/files/mpegts/h264_aac.ts");
    let input = dir.join("long.ts");
    let st = Command::new("ffmpeg")
        .args(["-v", "error", "-y", "-stream_loop", "250", "-i"])
        .arg(&src)
        .args(["-c", "copy"])
        .arg(&input)
        .status()
        .unwrap();
    assert!(st.success());
    Some((dir, input))
}

#[test]
fn many_segments_are_listed_from_the_spilled_records() {
    let Some((dir, input)) = long_input("many") else {
        return;
    };
    let out = dir.join("out");
    let report =
        mediaslice_std::package::package(&input, &out, 1000, true, true, mediaslice_std::InputRead::default()).unwrap();
    let (listed, media) = check_listing(&out, &report);
    let longest = listed.iter().map(|s| s.seconds.ceil() as u64).max().unwrap();
    assert!(media.contains(&format!("#EXT-X-TARGETDURATION:{longest}\n")), "{media}");
    check_timelines(&out, 0);
    let hidden: Vec<_> = std::fs::read_dir(&out)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with('.') || n.ends_with(".tmp") || n.ends_with(".part"))
        .collect();
    assert!(hidden.is_empty(), "{hidden:?}");
    std::fs::remove_dir_all(&dir).unwrap();
}

/// The long input (in a fresh folder `dir`) packaged live into
/// `dir/live` with 1 s segments and no window (`dash`: `--dash` too),
/// checked as [`check_listing`] does: `(dir, input, out, media playlist)`.
fn live_without_window(name: &str, dash: bool) -> Option<(PathBuf, PathBuf, PathBuf, String)> {
    let (dir, input) = long_input(name)?;
    let out = dir.join("live");
    let live = LiveInput::stream(Box::new(std::fs::File::open(&input).unwrap()), fast(16 << 10));
    let report = package_live(&live, &out, 1000, None, dash).unwrap();
    let (_, media) = check_listing(&out, &report);
    Some((dir, input, out, media))
}

/// `package --live` without a window (an `EVENT` playlist, which keeps
/// every segment): past 256 segments the records go to the log's
/// temporary file as in a finished file's run, and the playlist, rewritten
/// from them after each segment, lists the same segments with the same
/// durations as the finished file's.
#[test]
fn a_live_event_playlist_keeps_its_records_on_disk() {
    let Some((dir, input, out, media)) = live_without_window("event", false) else {
        return;
    };
    assert!(media.contains("#EXT-X-PLAYLIST-TYPE:EVENT\n"), "{media}");
    assert!(media.ends_with("#EXT-X-ENDLIST\n"), "{media}");
    let vod = dir.join("vod");
    mediaslice_std::package::package(&input, &vod, 1000, true, false, mediaslice_std::InputRead::default()).unwrap();
    let finished = std::fs::read_to_string(vod.join("media.m3u8")).unwrap();
    let segments = |m: &str| -> Vec<String> {
        m.lines()
            .skip_while(|l| !l.starts_with("#EXTINF:"))
            .map(str::to_owned)
            .collect()
    };
    assert_eq!(segments(&media), segments(&finished));
    let hidden: Vec<_> = std::fs::read_dir(&out)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".tmp"))
        .collect();
    assert!(hidden.is_empty(), "{hidden:?}");
    std::fs::remove_dir_all(&dir).unwrap();
}

/// `package --live --dash` without a window: each track's records go to
/// its log's temporary file past 256 (as the `EVENT` playlist's), and the
/// MPD, rewritten from them after each segment, ends static with one `S`
/// per file of each track, and no temporary file is left in a track's
/// folder.
#[test]
fn a_live_mpd_without_a_window_lists_every_track_file_from_its_log() {
    let Some((dir, _, out, _)) = live_without_window("event-dash", true) else {
        return;
    };
    // The live MPD's sets are the tracks, numbered from 1.
    let mpd = check_timelines(&out, 1);
    assert!(mpd.contains("type=\"static\""), "{mpd}");
    for track in ["dash/1", "dash/2"] {
        let files: Vec<_> = std::fs::read_dir(out.join(track))
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        assert!(
            files.iter().filter(|n| n.starts_with("seg_")).count() > 256,
            "{track}: {files:?}"
        );
        assert!(
            files
                .iter()
                .all(|n| n == "init.mp4" || (n.starts_with("seg_") && n.ends_with(".m4s"))),
            "{track}: {files:?}"
        );
    }
    std::fs::remove_dir_all(&dir).unwrap();
}
