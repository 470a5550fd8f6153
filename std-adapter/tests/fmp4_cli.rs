//! `mediaslice remux IN OUT --fragmented [--fragment-ms N]` and `--format
//! fmp4` to standard output: the outputs read back (by our demuxer, and by
//! ffprobe when it is installed) with every input packet, fragments of the
//! asked duration, and a file and a stream that give the same packets;
//! `--hybrid` gives a normal MP4 with the same packets as the fragmented
//! form, and refuses standard output.
#![allow(clippy::indexing_slicing, clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use mediaslice::crc::crc32;
use mediaslice::{Demuxer, SliceSource};
use std::path::{Path, PathBuf};
use std::process::Command;

fn bin() -> Command {
    Command::new(env!("CARGO_BIN_EXE_mediaslice"))
}

fn corpus(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../corpus/files").join(rel)
}

/// Per track: (size, CRC, pts, dts, key) of every packet.
type Packets = Vec<Vec<(usize, u32, Option<i64>, Option<i64>, bool)>>;

fn packets(bytes: &[u8], ext: &str) -> Packets {
    let mut join = vec![0u8; bytes.len() + 4096];
    let mut d = Demuxer::open(SliceSource::with_scratch(bytes, &mut join), Some(ext)).unwrap();
    let mut out = vec![Vec::new(); d.tracks().len()];
    while let Some(p) = d.next_packet().unwrap() {
        out[p.track].push((p.data.len(), crc32(p.data), p.pts, p.dts, p.flags.keyframe));
    }
    out
}

fn moofs(b: &[u8]) -> usize {
    kinds(b).iter().filter(|k| *k == b"moof").count()
}

#[test]
fn remux_fragmented_to_a_file_and_to_stdout() {
    let dir = std::env::temp_dir().join(format!("mediaslice-fmp4cli-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    for rel in ["mp4/h264_aac_fragmented.mp4", "mpegts/h264_aac.ts", "adts/aac_lc.aac"] {
        let input = corpus(rel);
        let out = dir.join("out.mp4");
        let o = bin()
            .arg("remux")
            .arg(&input)
            .arg(&out)
            .args(["--fragmented", "--fragment-ms", "500"])
            .output()
            .unwrap();
        assert!(o.status.success(), "{rel}: {}", String::from_utf8_lossy(&o.stderr));
        let file = std::fs::read(&out).unwrap();
        let o = bin()
            .arg("remux")
            .arg(&input)
            .arg("-")
            .args(["--format", "fmp4"])
            .output()
            .unwrap();
        assert!(o.status.success(), "{rel}: {}", String::from_utf8_lossy(&o.stderr));
        let stream = o.stdout;
        assert_eq!(&stream[4..8], b"ftyp", "{rel}");
        // 500 ms fragments in the file, 2 s (the default) on stdout.
        let (a, b) = (moofs(&file), moofs(&stream));
        assert!(a > b && b >= 1, "{rel}: {a} and {b} fragments");
        let (pf, ps) = (packets(&file, "mp4"), packets(&stream, "mp4"));
        assert_eq!(pf, ps, "{rel}: the file and the stream hold the same packets");
        // As many packets per track as the input.
        let input_bytes = std::fs::read(&input).unwrap();
        let ext = input.extension().unwrap().to_str().unwrap();
        let pi = packets(&input_bytes, ext);
        let counts = |p: &Packets| p.iter().map(Vec::len).collect::<Vec<_>>();
        assert_eq!(counts(&pf), counts(&pi), "{rel}: packets per track");
        if Command::new("ffprobe").arg("-version").output().is_ok() {
            let o = Command::new("ffprobe")
                .args([
                    "-v",
                    "warning",
                    "-count_packets",
                    "-show_entries",
                    "stream=nb_read_packets",
                    "-of",
                    "csv=p=0",
                ])
                .arg(&out)
                .output()
                .unwrap();
            assert!(
                o.stderr.is_empty(),
                "{rel}: ffprobe: {}",
                String::from_utf8_lossy(&o.stderr)
            );
            let n: Vec<usize> = String::from_utf8_lossy(&o.stdout)
                .lines()
                .filter_map(|l| l.trim().parse().ok())
                .collect();
            assert_eq!(n, counts(&pi), "{rel}: ffprobe's packet counts");
        } else {
            println!("skip ffprobe: not installed");
        }
        println!(
            "{rel}: {a} fragments (500 ms), {b} (2 s), {} packets",
            pf.iter().map(Vec::len).sum::<usize>()
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// `mediaslice package IN OUTDIR --hls --segment 0.5s`: init segment and
/// media segments that, joined, hold every input packet; playlists with
/// the version, target duration, map, exact `#EXTINF`s (their sum is the
/// video track's length) and CODECS; ffmpeg reads the multivariant
/// playlist with no warning.
/// Top-level box types (64-bit sizes followed).
fn top_level(b: &[u8]) -> Vec<[u8; 4]> {
    let (mut at, mut v) = (0usize, Vec::new());
    while at + 8 <= b.len() {
        let mut size = u32::from_be_bytes(b[at..at + 4].try_into().unwrap()) as u64;
        if size == 1 && at + 16 <= b.len() {
            size = u64::from_be_bytes(b[at + 8..at + 16].try_into().unwrap());
        }
        v.push(b[at + 4..at + 8].try_into().unwrap());
        if size < 8 {
            break;
        }
        at += size as usize;
    }
    v
}

#[test]
fn remux_hybrid_gives_a_normal_mp4_with_the_fragmented_forms_packets() {
    let dir = std::env::temp_dir().join(format!("mediaslice-hybridcli-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    for rel in ["mp4/h264_aac.mp4", "mpegts/h264_aac.ts", "matroska/vp9_opus.webm"] {
        let input = corpus(rel);
        let (hybrid, fragmented) = (dir.join("h.mp4"), dir.join("f.mp4"));
        for (out, flag) in [(&hybrid, "--hybrid"), (&fragmented, "--fragmented")] {
            let o = bin()
                .arg("remux")
                .arg(&input)
                .arg(out)
                .args([flag, "--fragment-ms", "500"])
                .output()
                .unwrap();
            assert!(
                o.status.success(),
                "{rel} {flag}: {}",
                String::from_utf8_lossy(&o.stderr)
            );
        }
        let h = std::fs::read(&hybrid).unwrap();
        assert_eq!(top_level(&h), [*b"ftyp", *b"free", *b"mdat", *b"moov"], "{rel}");
        let f = std::fs::read(&fragmented).unwrap();
        assert!(moofs(&f) > 1, "{rel}");
        assert_eq!(
            packets(&h, "mp4"),
            packets(&f, "mp4"),
            "{rel}: hybrid and fragmented packets"
        );
        // Standard output cannot take the header rewrite at the end.
        let o = bin()
            .arg("remux")
            .arg(&input)
            .arg("-")
            .arg("--hybrid")
            .output()
            .unwrap();
        assert!(!o.status.success(), "{rel}: --hybrid to stdout");
        assert!(o.stdout.is_empty(), "{rel}: nothing written to stdout");
        println!("{rel}: hybrid {} bytes, fragmented {}", h.len(), f.len());
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn package_hls_writes_segments_and_playlists_that_ffmpeg_reads() {
    for (rel, codecs) in [
        ("mp4/h264_aac_fragmented.mp4", "avc1.64000b,mp4a.40.2"),
        ("mpegts/h264_aac.ts", "avc1.64000b,mp4a.40.2"),
        ("adts/aac_lc.aac", "mp4a.40.2"),
        // From the hvcC (ISO/IEC 14496-15 E.3): Main, compatibility
        // flags 1 and 2, level 3, constraint byte 0x90.
        ("mp4/hevc_aac.mp4", "hvc1.1.6.L30.90,mp4a.40.2"),
    ] {
        let input = corpus(rel);
        let dir = std::env::temp_dir().join(format!(
            "mediaslice-hls-{}-{}",
            std::process::id(),
            rel.replace('/', "_")
        ));
        let _ = std::fs::remove_dir_all(&dir);
        let o = bin()
            .arg("package")
            .arg(&input)
            .arg(&dir)
            .args(["--hls", "--segment", "0.5s"])
            .output()
            .unwrap();
        assert!(o.status.success(), "{rel}: {}", String::from_utf8_lossy(&o.stderr));
        let master = std::fs::read_to_string(dir.join("master.m3u8")).unwrap();
        let media = std::fs::read_to_string(dir.join("media.m3u8")).unwrap();
        assert!(master.starts_with("#EXTM3U\n#EXT-X-VERSION:7\n"), "{master}");
        assert!(master.contains(&format!("CODECS=\"{codecs}\"")), "{rel}: {master}");
        for tag in [
            "#EXT-X-VERSION:7",
            "#EXT-X-TARGETDURATION:",
            "#EXT-X-MAP:URI=\"init.mp4\"",
            "#EXT-X-INDEPENDENT-SEGMENTS",
            "#EXT-X-ENDLIST",
        ] {
            assert!(media.contains(tag), "{rel}: {tag} in\n{media}");
        }
        let extinf: Vec<f64> = media
            .lines()
            .filter_map(|l| l.strip_prefix("#EXTINF:"))
            .map(|l| l.trim_end_matches(',').parse().unwrap())
            .collect();
        let target: f64 = media
            .lines()
            .find_map(|l| l.strip_prefix("#EXT-X-TARGETDURATION:"))
            .unwrap()
            .parse()
            .unwrap();
        assert!(extinf.len() >= 2, "{rel}: {media}");
        assert!(extinf.iter().all(|&d| d.round() <= target && d > 0.0), "{rel}: {media}");
        // Joined, the segments hold every input packet; the EXTINFs add up
        // to the timing track's length.
        let mut joined = std::fs::read(dir.join("init.mp4")).unwrap();
        for name in media.lines().filter(|l| l.ends_with(".m4s")) {
            joined.extend(std::fs::read(dir.join(name)).unwrap());
        }
        let input_bytes = std::fs::read(&input).unwrap();
        let ext = input.extension().unwrap().to_str().unwrap();
        let (pi, pj) = (packets(&input_bytes, ext), packets(&joined, "mp4"));
        let counts = |p: &Packets| p.iter().map(Vec::len).collect::<Vec<_>>();
        assert_eq!(counts(&pj), counts(&pi), "{rel}: packets per track");
        let mut d = Demuxer::open(SliceSource::new(&joined), Some("mp4")).unwrap();
        let tb = d.tracks()[0].time_base;
        let (mut first, mut end) = (None, 0i64);
        while let Some(p) = d.next_packet().unwrap() {
            if p.track == 0 {
                first.get_or_insert(p.dts.unwrap());
                end = end.max(p.dts.unwrap() + p.duration.unwrap_or(0) as i64);
            }
        }
        let length = (end - first.unwrap()) as f64 * f64::from(tb.num) / f64::from(tb.den);
        let sum: f64 = extinf.iter().sum();
        assert!(
            (sum - length).abs() < 1e-5,
            "{rel}: EXTINF sum {sum}, track 0 length {length}"
        );
        if Command::new("ffmpeg").arg("-version").output().is_ok() {
            let o = Command::new("ffmpeg")
                .args(["-v", "warning", "-i"])
                .arg(dir.join("master.m3u8"))
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
        println!(
            "{rel}: {} segments, EXTINF sum {sum:.6} s, CODECS {codecs}",
            extinf.len()
        );
        let _ = std::fs::remove_dir_all(&dir);
    }
}

/// Top-level box types of `b`, in order.
fn kinds(b: &[u8]) -> Vec<[u8; 4]> {
    let (mut at, mut v) = (0usize, Vec::new());
    while at + 8 <= b.len() {
        let size = u32::from_be_bytes(b[at..at + 4].try_into().unwrap()) as usize;
        v.push(b[at + 4..at + 8].try_into().unwrap());
        if size < 8 {
            break;
        }
        at += size;
    }
    v
}

#[test]
fn sidx_puts_a_styp_and_a_sidx_before_each_fragment() {
    let dir = std::env::temp_dir().join(format!("mediaslice-fmp4sidx-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let input = corpus("mpegts/h264_aac.ts");
    let (plain, indexed) = (dir.join("plain.mp4"), dir.join("indexed.mp4"));
    for (out, extra) in [(&plain, None), (&indexed, Some("--sidx"))] {
        let o = bin()
            .arg("remux")
            .arg(&input)
            .arg(out)
            .args(["--fragmented", "--fragment-ms", "500"])
            .args(extra)
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    }
    let (p, i) = (std::fs::read(&plain).unwrap(), std::fs::read(&indexed).unwrap());
    assert_eq!(packets(&p, "mp4"), packets(&i, "mp4"), "the same packets");
    let k = kinds(&i);
    assert!(moofs(&i) >= 2, "fragments: {}", moofs(&i));
    for (n, kind) in k.iter().enumerate() {
        if kind == b"moof" {
            assert_eq!(&k[n - 2..n], &[*b"styp", *b"sidx"], "before fragment at box {n}");
        }
    }
    // On standard output too.
    let o = bin()
        .arg("remux")
        .arg(&input)
        .arg("-")
        .args(["--format", "fmp4", "--sidx"])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let k = kinds(&o.stdout);
    assert_eq!(k.iter().filter(|x| *x == b"sidx").count(), moofs(&o.stdout));
    // Not for a progressive MP4: a usage error, and no file.
    let bad = dir.join("progressive.mp4");
    let o = bin().arg("remux").arg(&input).arg(&bad).arg("--sidx").output().unwrap();
    assert_eq!(o.status.code(), Some(64), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(String::from_utf8_lossy(&o.stderr).contains("--sidx"));
    assert!(!bad.exists());
    std::fs::remove_dir_all(&dir).ok();
}
