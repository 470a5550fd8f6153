//! `mediaslice remux IN OUT.mp4 --fragmented` and `mediaslice package IN
//! OUTDIR --hls` on Matroska with B-frames, whose first video packets have
//! no decode time (issues 18/19: "decode times go back"): the outputs read
//! back with every input packet (count, size, CRC, pts per track) and
//! strictly increasing decode times; ffprobe shows the same pts and dts as
//! our reader, and ffmpeg copies them with no warning.
#![allow(clippy::indexing_slicing, clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use mediaslice::crc::crc32;
use mediaslice::{Demuxer, SliceSource};
use std::path::{Path, PathBuf};
use std::process::Command;

fn bin() -> Command {
    Command::new(env!("CARGO_BIN_EXE_mediaslice"))
}

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// The inputs: the corpus's; Matroska copies (by ffmpeg, into `dir`,
/// where it is installed) of the corpus's MP4s with B-frames, H.264 and
/// HEVC, the HEVC one's video 80 times over (2000 pictures, 80 s: more
/// than the first fragment has room for, so that its decode times must
/// come from the reorder depth of its SPS, feature `mkv-hevc-dts`: a track
/// without any waits whole in the first fragment, `CapacityExceeded`, see
/// docs/write-side.md; without its audio, which ffmpeg's `-stream_loop`
/// gives a repeated time at each seam); the samples' where present (with
/// the streams MP4 carries).
fn inputs(dir: &Path) -> Vec<(PathBuf, Option<&'static str>)> {
    let mut v = vec![
        (root().join("corpus/files/matroska/h264_aac.mkv"), None),
        (
            root().join("corpus/files/matroska/h264_aac_unknown_size_clusters.mkv"),
            None,
        ),
    ];
    for (name, loops, streams) in [("h264_bframes_aac", "0", "0"), ("hevc_aac", "79", "0:v")] {
        let mkv = dir.join(format!("{name}.mkv"));
        let made = Command::new("ffmpeg")
            .args(["-v", "error", "-y", "-stream_loop", loops, "-i"])
            .arg(root().join(format!("corpus/files/mp4/{name}.mp4")))
            .args(["-map", streams, "-c", "copy"])
            .arg(&mkv)
            .status();
        match made {
            Ok(s) if s.success() => v.push((mkv, None)),
            _ => println!("skip {name}.mkv: ffmpeg could not make it (not installed?)"),
        }
    }
    let samples = std::env::var_os("MEDIASLICE_SAMPLES")
        .map(PathBuf::from)
        .unwrap_or_else(|| root().join("../shared/samples"));
    for (name, streams) in [
        ("media__sample.mkv", None),
        ("media__sample_with_srt.mkv", Some("0,1")),
        ("music-metadata__matroska-test-w1-test5-short.mkv", Some("0,1")),
    ] {
        let p = samples.join("matroska").join(name);
        if p.is_file() {
            v.push((p, streams));
        } else {
            println!("skip {}: absent", p.display());
        }
    }
    v
}

/// Per track: (size, CRC, pts, dts) of every packet.
type Packets = Vec<Vec<(usize, u32, Option<i64>, Option<i64>)>>;

fn packets(bytes: &[u8], ext: &str) -> Packets {
    let mut join = vec![0u8; bytes.len() + 4096];
    let mut d = Demuxer::open(SliceSource::with_scratch(bytes, &mut join), Some(ext)).unwrap();
    let mut out = vec![Vec::new(); d.tracks().len()];
    while let Some(p) = d.next_packet().unwrap() {
        out[p.track].push((p.data.len(), crc32(p.data), p.pts, p.dts));
    }
    out
}

/// Checks `out` (an MP4) against `input`'s packets of the tracks kept:
/// sizes, CRCs (H.264 in Matroska is length-prefixed already) equal, pts
/// equal but for one shift for the whole file (remux starts a file whose
/// first time is above 0 at 0; Matroska's time bases are all the
/// TimestampScale's), dts strictly increasing.
fn check(label: &str, input: &Packets, out: &[u8]) -> Packets {
    let got = packets(out, "mp4");
    assert_eq!(got.len(), input.len(), "{label}: tracks");
    let first = |p: &Packets| {
        p.iter()
            .filter_map(|t| t.iter().filter_map(|x| x.2).min())
            .min()
            .unwrap()
    };
    let shift = first(&got) - first(input);
    for (t, (g, w)) in got.iter().zip(input).enumerate() {
        assert_eq!(g.len(), w.len(), "{label} track {t}: packets");
        for (k, (g, w)) in g.iter().zip(w).enumerate() {
            let pts = w.2.map(|p| p + shift);
            assert_eq!((g.0, g.1, g.2), (w.0, w.1, pts), "{label} track {t} packet {k}");
        }
        let dts: Vec<i64> = g.iter().map(|p| p.3.unwrap()).collect();
        assert!(
            dts.windows(2).all(|w| w[0] < w[1]),
            "{label} track {t}: decode times not increasing: {dts:?}"
        );
    }
    got
}

fn have(tool: &str) -> bool {
    Command::new(tool).arg("-version").output().is_ok()
}

/// ffprobe's (stream, pts, dts) of every packet of `path`, per stream,
/// in the streams' time bases.
fn ffprobe_times(path: &Path) -> Vec<Vec<(i64, i64)>> {
    let o = Command::new("ffprobe")
        .args([
            "-v",
            "error",
            "-show_entries",
            "packet=stream_index,pts,dts",
            "-of",
            "csv=p=0",
        ])
        .arg(path)
        .output()
        .unwrap();
    assert!(o.stderr.is_empty(), "ffprobe: {}", String::from_utf8_lossy(&o.stderr));
    let mut out: Vec<Vec<(i64, i64)>> = Vec::new();
    for l in String::from_utf8_lossy(&o.stdout).lines() {
        let f: Vec<i64> = l.split(',').map(|x| x.trim().parse().unwrap()).collect();
        let s = f[0] as usize;
        if out.len() <= s {
            out.resize(s + 1, Vec::new());
        }
        out[s].push((f[1], f[2]));
    }
    out
}

/// ffmpeg copies `path` to nowhere and says nothing.
fn ffmpeg_quiet(label: &str, path: &Path) {
    let o = Command::new("ffmpeg")
        .args(["-v", "warning", "-i"])
        .arg(path)
        .args(["-c", "copy", "-f", "null", "-"])
        .output()
        .unwrap();
    assert!(
        o.status.success() && o.stderr.is_empty(),
        "{label}: ffmpeg: {}",
        String::from_utf8_lossy(&o.stderr)
    );
}

#[test]
fn matroska_b_frames_remux_to_fragmented_mp4_and_package_to_hls() {
    let dir = std::env::temp_dir().join(format!("mediaslice-bframes-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let ff = have("ffprobe") && have("ffmpeg");
    if !ff {
        println!("skip the ffprobe/ffmpeg checks: not installed");
    }
    for (input, streams) in inputs(&dir) {
        let label = input.file_name().unwrap().to_string_lossy().to_string();
        let bytes = std::fs::read(&input).unwrap();
        let mut want = packets(&bytes, "mkv");
        if let Some(s) = streams {
            let keep: Vec<usize> = s.split(',').map(|x| x.parse().unwrap()).collect();
            want = keep.iter().map(|&i| want[i].clone()).collect();
        }
        assert!(
            want.iter().flatten().any(|p| p.2.is_some() && p.3.is_none()),
            "{label}: the input should have packets without a decode time"
        );
        let with_streams = |c: &mut Command| {
            if let Some(s) = streams {
                c.args(["--streams", s]);
            }
        };
        // A file (fragments of 500 ms) and standard output.
        let out = dir.join("out.mp4");
        let mut c = bin();
        c.arg("remux")
            .arg(&input)
            .arg(&out)
            .args(["--fragmented", "--fragment-ms", "500"]);
        with_streams(&mut c);
        let o = c.output().unwrap();
        assert!(o.status.success(), "{label}: {}", String::from_utf8_lossy(&o.stderr));
        let file = std::fs::read(&out).unwrap();
        let got = check(&label, &want, &file);
        let mut c = bin();
        c.arg("remux").arg(&input).arg("-").args(["--format", "fmp4"]);
        with_streams(&mut c);
        let o = c.output().unwrap();
        assert!(o.status.success(), "{label}: {}", String::from_utf8_lossy(&o.stderr));
        assert_eq!(
            check(&format!("{label} (stdout)"), &want, &o.stdout),
            got,
            "{label}: file and stdout"
        );
        // HLS: the init segment and the media segments joined (package
        // has no --streams: only for inputs whose every track MP4 carries).
        let hls = dir.join("hls");
        let _ = std::fs::remove_dir_all(&hls);
        if streams.is_none() {
            let o = bin()
                .arg("package")
                .arg(&input)
                .arg(&hls)
                .args(["--hls", "--segment", "0.5s"])
                .output()
                .unwrap();
            assert!(o.status.success(), "{label}: {}", String::from_utf8_lossy(&o.stderr));
            let media = std::fs::read_to_string(hls.join("media.m3u8")).unwrap();
            let mut joined = std::fs::read(hls.join("init.mp4")).unwrap();
            for name in media.lines().filter(|l| l.ends_with(".m4s")) {
                joined.extend(std::fs::read(hls.join(name)).unwrap());
            }
            check(&format!("{label} (hls)"), &want, &joined);
            if ff {
                ffmpeg_quiet(&format!("{label} (hls)"), &hls.join("master.m3u8"));
            }
        } else {
            println!("skip package {label}: a track MP4 cannot carry, and package has no --streams");
        }
        if ff {
            // ffprobe reads the times our reader reads.
            let ours: Vec<Vec<(i64, i64)>> = got
                .iter()
                .map(|t| t.iter().map(|p| (p.2.unwrap(), p.3.unwrap())).collect())
                .collect();
            assert_eq!(ffprobe_times(&out), ours, "{label}: ffprobe's pts and dts");
            ffmpeg_quiet(&label, &out);
        }
        println!(
            "{label}: {} packets, fragmented and stdout (and HLS) read back",
            got.iter().map(Vec::len).sum::<usize>()
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
}
