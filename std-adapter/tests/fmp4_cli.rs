//! `mediaslice remux IN OUT --fragmented [--fragment-ms N]` and `--format
//! fmp4` to standard output: the outputs read back (by our demuxer, and by
//! ffprobe when it is installed) with every input packet, fragments of the
//! asked duration, and a file and a stream that give the same packets.
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
    let (mut at, mut n) = (0usize, 0);
    while at + 8 <= b.len() {
        let size = u32::from_be_bytes(b[at..at + 4].try_into().unwrap()) as usize;
        n += usize::from(&b[at + 4..at + 8] == b"moof");
        if size < 8 {
            break;
        }
        at += size;
    }
    n
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
