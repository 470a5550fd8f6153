//! `package` with hundreds of segments (more than the 256 records a
//! `SegmentLog` holds in memory, so the rest go through its temporary
//! file): the playlist lists every segment file in order with the
//! report's durations, the target duration is the longest, each DASH
//! timeline (`S@r` expanded) has one `S` per segment file, at most 256
//! records stay in memory, and no temporary file is left in the output.
#![allow(clippy::indexing_slicing, clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::path::Path;
use std::process::Command;

/// Segment files (`seg_*.m4s`) in `dir`.
fn seg_files(dir: &Path) -> usize {
    std::fs::read_dir(dir)
        .unwrap()
        .filter(|e| e.as_ref().unwrap().file_name().to_string_lossy().starts_with("seg_"))
        .count()
}

#[test]
fn many_segments_are_listed_from_the_spilled_records() {
    if Command::new("ffmpeg").arg("-version").output().is_err() {
        println!("skip: ffmpeg not installed (it makes the long input)");
        return;
    }
    let dir = std::env::temp_dir().join(format!("ms-package-many-{}", std::process::id()));
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
    let out = dir.join("out");
    let report =
        mediaslice_std::package::package(&input, &out, 1000, true, true, mediaslice_std::InputRead::default()).unwrap();
    let n = report.segments.len();
    assert!(n > 256, "{n} segments: too few to pass the records held in memory");
    assert!(
        report.segments.held_records() <= 256,
        "{} held",
        report.segments.held_records()
    );
    assert_eq!(seg_files(&out), n);
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
    let longest = listed.iter().map(|s| s.seconds.ceil() as u64).max().unwrap();
    assert!(media.contains(&format!("#EXT-X-TARGETDURATION:{longest}\n")), "{media}");
    let mpd = std::fs::read_to_string(out.join("manifest.mpd")).unwrap();
    for (i, set) in mpd.split("<SegmentTimeline>").skip(1).enumerate() {
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
        assert_eq!(count, seg_files(&out.join(format!("dash/{i}"))), "set {i}");
    }
    let hidden: Vec<_> = std::fs::read_dir(&out)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with('.') || n.ends_with(".tmp") || n.ends_with(".part"))
        .collect();
    assert!(hidden.is_empty(), "{hidden:?}");
    std::fs::remove_dir_all(&dir).unwrap();
}
