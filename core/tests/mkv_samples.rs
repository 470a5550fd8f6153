//! Matroska samples from `../shared/samples/matroska` against ffprobe's
//! packets (per stream: sizes and CRC32), read through both a slice and a
//! reader source, which must give identical packets.
#![cfg(feature = "mkv")]
#![allow(clippy::indexing_slicing, clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use crate::common;

use mediaslice::crc::crc32;
use mediaslice::{Demuxer, ReaderSource, SliceSource, Source};
use std::io::Read as _;
use std::path::{Path, PathBuf};

/// An in-memory reader for `ReaderSource` (embedded-io Read + Seek).
struct Cursor<'a> {
    data: &'a [u8],
    pos: usize,
}

impl embedded_io::ErrorType for Cursor<'_> {
    type Error = core::convert::Infallible;
}

impl embedded_io::Read for Cursor<'_> {
    fn read(&mut self, buf: &mut [u8]) -> Result<usize, Self::Error> {
        let rest = &self.data[self.pos.min(self.data.len())..];
        let n = rest.len().min(buf.len());
        buf[..n].copy_from_slice(&rest[..n]);
        self.pos += n;
        Ok(n)
    }
}

impl embedded_io::Seek for Cursor<'_> {
    fn seek(&mut self, pos: embedded_io::SeekFrom) -> Result<u64, Self::Error> {
        self.pos = match pos {
            embedded_io::SeekFrom::Start(p) => p as usize,
            embedded_io::SeekFrom::End(d) => (self.data.len() as i64 + d) as usize,
            embedded_io::SeekFrom::Current(d) => (self.pos as i64 + d) as usize,
        };
        Ok(self.pos as u64)
    }
}

type Packets = Vec<(usize, Option<i64>, usize, u32, bool)>;

struct Out {
    kinds: Vec<(String, String)>,
    packets: Packets,
    error: Option<String>,
}

fn run<S: Source>(src: S) -> Result<Out, String> {
    let mut d = Demuxer::open(src, None).map_err(|e| e.to_string())?;
    let kinds = d
        .tracks()
        .iter()
        .map(|t| (t.kind.ffmpeg_name().to_string(), t.codec.ffmpeg_name().to_string()))
        .collect();
    let mut packets = Vec::new();
    let mut error = None;
    loop {
        match d.next_packet() {
            Ok(Some(p)) => packets.push((p.track, p.pts, p.data.len(), crc32(p.data), p.flags.keyframe)),
            Ok(None) => break,
            Err(e) => {
                error = Some(e.to_string());
                break;
            }
        }
    }
    Ok(Out { kinds, packets, error })
}

fn samples() -> PathBuf {
    common::samples_root()
}

fn expected(path: &Path) -> Option<serde_json::Value> {
    let mut s = String::new();
    flate2::read::GzDecoder::new(std::fs::File::open(path).ok()?)
        .read_to_string(&mut s)
        .ok()?;
    serde_json::from_str(&s).ok()
}

/// Compares like `shared/tools/conform.py`: streams matched by type then
/// codec name; per stream the list of (size, crc) must be equal.
fn compare(exp: &serde_json::Value, out: &Out) -> Result<(), String> {
    let streams = exp["streams"].as_array().cloned().unwrap_or_default();
    let packets = exp["packets"].as_array().cloned().unwrap_or_default();
    let mut used = vec![false; out.kinds.len()];
    let mut problems = Vec::new();
    for s in &streams {
        let ty = s["codec_type"].as_str().unwrap_or("");
        let name = s["codec_name"].as_str().unwrap_or("");
        if !matches!(ty, "audio" | "video" | "subtitle") {
            continue;
        }
        let idx = s["index"].as_u64().unwrap_or(0) as i64;
        let cand = (0..out.kinds.len())
            .find(|&i| !used[i] && out.kinds[i].0 == ty && out.kinds[i].1 == name)
            .or_else(|| (0..out.kinds.len()).find(|&i| !used[i] && out.kinds[i].0 == ty));
        let want: Vec<(usize, u32)> = packets
            .iter()
            .filter(|p| p["stream_index"].as_i64() == Some(idx))
            .map(|p| {
                let size: usize = p["size"].as_str().unwrap_or("0").parse().unwrap_or(0);
                let h = p["data_hash"].as_str().unwrap_or("").trim_start_matches("CRC32:");
                (size, u32::from_str_radix(h, 16).unwrap_or(0))
            })
            .collect();
        let Some(i) = cand else {
            if ty != "subtitle" {
                problems.push(format!("{ty}:{name} missing"));
            }
            continue;
        };
        used[i] = true;
        if want.is_empty() {
            continue;
        }
        let got: Vec<(usize, u32)> = out.packets.iter().filter(|p| p.0 == i).map(|p| (p.2, p.3)).collect();
        if got != want {
            let first = got
                .iter()
                .zip(&want)
                .position(|(a, b)| a != b)
                .unwrap_or(got.len().min(want.len()));
            problems.push(format!(
                "{ty}:{name} differs: got {} pkts/{} B, want {} pkts/{} B, first difference at {first}",
                got.len(),
                got.iter().map(|x| x.0).sum::<usize>(),
                want.len(),
                want.iter().map(|x| x.0).sum::<usize>()
            ));
        }
    }
    if problems.is_empty() {
        Ok(())
    } else {
        Err(problems.join("; "))
    }
}

#[test]
fn matroska_samples_match_ffprobe() {
    let dir = samples().join("matroska");
    let Ok(rd) = std::fs::read_dir(&dir) else {
        eprintln!("no samples at {}", dir.display());
        return;
    };
    let mut files: Vec<_> = rd.filter_map(|e| e.ok()).map(|e| e.path()).collect();
    files.sort();
    let (mut scored, mut matched) = (0, 0);
    let mut misses = Vec::new();
    for f in files {
        let name = f.file_name().unwrap().to_string_lossy().to_string();
        let exp_path = samples().join("expected/matroska").join(format!("{name}.json.gz"));
        let Some(exp) = expected(&exp_path) else { continue };
        if exp["packets"].as_array().is_none_or(|p| p.is_empty()) {
            continue;
        }
        scored += 1;
        let data = std::fs::read(&f).unwrap();
        let mut scratch = vec![0u8; 1 << 20];
        let slice = run(SliceSource::with_scratch(&data, &mut scratch));
        let reader = run(ReaderSource::<_, _, 8>::with_known_len(
            Cursor { data: &data, pos: 0 },
            vec![0u8; 8 << 20],
            data.len() as u64,
        ));
        match (&slice, &reader) {
            (Ok(a), Ok(b)) => assert_eq!(a.packets, b.packets, "{name}: slice and reader packets differ"),
            (Err(a), Err(b)) => assert_eq!(a, b),
            _ => panic!("{name}: slice and reader disagree on opening"),
        }
        match slice {
            Ok(out) => match compare(&exp, &out) {
                Ok(()) => matched += 1,
                Err(why) => misses.push(format!("{name}: {why} (error: {:?})", out.error)),
            },
            Err(e) => misses.push(format!("{name}: open failed: {e}")),
        }
    }
    for m in &misses {
        eprintln!("MISS {m}");
    }
    eprintln!("matroska samples: {matched}/{scored} packet-exact");
    assert!(
        scored == 0 || matched * 100 >= scored * 95,
        "{matched}/{scored} below 95%"
    );
}
