//! AVI, AIFF and CAF against ffprobe: every file of these families in
//! `../shared/samples` and `corpus/files` is demuxed through a `SliceSource`
//! and a `ReaderSource`, which must give identical packets, and each
//! stream's packets are compared with ffprobe's (size and CRC32 per packet:
//! packet-exact; or the CRC32 and size of the whole stream: stream-exact).
//! Files listed in `EXCEPTIONS` are the documented differences (see
//! `docs/formats/<family>.md`); any other miss fails the test.
// Test code: a panic is the failure report.
#![allow(clippy::indexing_slicing, clippy::unwrap_used, clippy::expect_used, clippy::panic)]
#![allow(clippy::type_complexity)]

use crate::common;

use mediaslice::crc::crc32;
use mediaslice::{Demuxer, ReaderSource, SliceSource, Source};
use std::path::{Path, PathBuf};

/// Files whose packets differ from ffprobe's for a documented reason.
const EXCEPTIONS: &[&str] = &[];

#[derive(Debug, Clone, PartialEq)]
struct Pkt {
    track: usize,
    size: usize,
    crc: u32,
    pts: Option<i64>,
    key: bool,
}

struct Mem {
    data: Vec<u8>,
    pos: u64,
}

impl embedded_io::ErrorType for Mem {
    type Error = core::convert::Infallible;
}

impl embedded_io::Read for Mem {
    fn read(&mut self, buf: &mut [u8]) -> Result<usize, Self::Error> {
        let start = (self.pos as usize).min(self.data.len());
        // Short reads exercise the reader path.
        let n = buf.len().min(self.data.len() - start).min(1000);
        buf[..n].copy_from_slice(&self.data[start..start + n]);
        self.pos += n as u64;
        Ok(n)
    }
}

impl embedded_io::Seek for Mem {
    fn seek(&mut self, pos: embedded_io::SeekFrom) -> Result<u64, Self::Error> {
        self.pos = match pos {
            embedded_io::SeekFrom::Start(p) => p,
            embedded_io::SeekFrom::End(d) => (self.data.len() as i64 + d) as u64,
            embedded_io::SeekFrom::Current(d) => (self.pos as i64 + d) as u64,
        };
        Ok(self.pos)
    }
}

fn collect<S: Source>(d: &mut Demuxer<S>) -> (Vec<Pkt>, Option<String>) {
    let mut v = Vec::new();
    loop {
        match d.next_packet() {
            Ok(Some(p)) => v.push(Pkt {
                track: p.track,
                size: p.data.len(),
                crc: crc32(p.data),
                pts: p.pts,
                key: p.flags.keyframe,
            }),
            Ok(None) => return (v, None),
            Err(e) => return (v, Some(e.to_string())),
        }
    }
}

fn demux(data: &[u8], ext: Option<&str>) -> Result<(Vec<&'static str>, Vec<Pkt>, Option<String>), String> {
    let mut d = Demuxer::open(SliceSource::new(data), ext).map_err(|e| e.to_string())?;
    let kinds = d.tracks().iter().map(|t| t.kind.ffmpeg_name()).collect();
    let (a, err) = collect(&mut d);
    let rs = ReaderSource::<_, _, 4>::with_blocks(
        Mem {
            data: data.to_vec(),
            pos: 0,
        },
        vec![0u8; 8 << 20],
    )
    .unwrap();
    let mut d2 = Demuxer::open(rs, ext).map_err(|e| e.to_string())?;
    let (b, err2) = collect(&mut d2);
    assert_eq!(a, b, "slice and reader packets differ");
    assert_eq!(err, err2, "slice and reader errors differ");
    Ok((kinds, a, err))
}

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

fn expected_streams(doc: &serde_json::Value) -> Vec<(String, Vec<(usize, u32, Option<i64>, bool)>)> {
    let mut out: Vec<(String, Vec<_>)> = doc["streams"]
        .as_array()
        .map(|s| {
            s.iter()
                .map(|s| (s["codec_type"].as_str().unwrap_or("").to_string(), Vec::new()))
                .collect()
        })
        .unwrap_or_default();
    for p in doc["packets"].as_array().into_iter().flatten() {
        let si = p["stream_index"].as_u64().unwrap() as usize;
        let size: usize = p["size"].as_str().unwrap().parse().unwrap();
        let crc = u32::from_str_radix(p["data_hash"].as_str().unwrap().trim_start_matches("CRC32:"), 16).unwrap();
        let pts = p["pts"].as_i64();
        let key = p["flags"].as_str().unwrap_or("").starts_with('K');
        if let Some(s) = out.get_mut(si) {
            s.1.push((size, crc, pts, key));
        }
    }
    out
}

fn gf2_times(mat: &[u32; 32], mut vec: u32) -> u32 {
    let mut sum = 0;
    let mut i = 0;
    while vec != 0 {
        if vec & 1 != 0 {
            sum ^= mat[i];
        }
        vec >>= 1;
        i += 1;
    }
    sum
}

fn gf2_square(mat: &[u32; 32]) -> [u32; 32] {
    let mut out = [0u32; 32];
    for (i, o) in out.iter_mut().enumerate() {
        *o = gf2_times(mat, mat[i]);
    }
    out
}

/// zlib's crc32_combine: the CRC of A||B from CRC(A), CRC(B) and len(B).
fn crc32_combine(mut crc1: u32, crc2: u32, mut len2: u64) -> u32 {
    if len2 == 0 {
        return crc1;
    }
    let mut odd = [0u32; 32];
    odd[0] = 0xEDB8_8320;
    for (i, o) in odd.iter_mut().enumerate().skip(1) {
        *o = 1 << (i - 1);
    }
    let mut even = gf2_square(&odd);
    odd = gf2_square(&even);
    loop {
        even = gf2_square(&odd);
        if len2 & 1 != 0 {
            crc1 = gf2_times(&even, crc1);
        }
        len2 >>= 1;
        if len2 == 0 {
            break;
        }
        odd = gf2_square(&even);
        if len2 & 1 != 0 {
            crc1 = gf2_times(&odd, crc1);
        }
        len2 >>= 1;
        if len2 == 0 {
            break;
        }
    }
    crc1 ^ crc2
}

/// Size and CRC32 of the concatenation of packets given as (size, crc).
fn combined(p: &[(usize, u32)]) -> (usize, u32) {
    p.iter()
        .fold((0, 0), |(n, c), &(s, k)| (n + s, crc32_combine(c, k, s as u64)))
}

/// Scores one family folder; returns (matched, scored, misses).
fn score(family: &str, files: &Path, expected: &Path, stream_exact: bool) -> (usize, usize, Vec<String>) {
    let mut matched = 0;
    let mut scored = 0;
    let mut misses = Vec::new();
    let Ok(dir) = std::fs::read_dir(files) else {
        return (0, 0, misses);
    };
    let mut names: Vec<_> = dir.flatten().map(|e| e.path()).collect();
    names.sort();
    for path in names {
        let name = path.file_name().unwrap().to_string_lossy().to_string();
        let exp_path = expected.join(format!("{name}.json.gz"));
        let Ok(gz) = std::fs::File::open(&exp_path) else {
            continue;
        };
        let mut text = String::new();
        std::io::Read::read_to_string(&mut flate2::read::GzDecoder::new(gz), &mut text).unwrap();
        let doc: serde_json::Value = serde_json::from_str(&text).unwrap_or(serde_json::Value::Null);
        if doc["packets"].as_array().is_none_or(|p| p.is_empty()) {
            continue;
        }
        scored += 1;
        let data = std::fs::read(&path).unwrap();
        let ext = path.extension().and_then(|e| e.to_str());
        let got = match demux(&data, ext) {
            Ok(g) => g,
            Err(e) => {
                misses.push(format!("{family}/{name}: open failed: {e}"));
                continue;
            }
        };
        let (kinds, pkts, err) = got;
        let exp = expected_streams(&doc);
        let mut ok = true;
        let mut why = String::new();
        for (i, (kind, ep)) in exp.iter().enumerate() {
            if kind != "audio" && kind != "video" || ep.is_empty() {
                continue;
            }
            if kinds.get(i).copied() != Some(kind.as_str()) {
                ok = false;
                why += &format!(" stream {i}: kind {:?} != {kind}", kinds.get(i));
                continue;
            }
            let gp: Vec<_> = pkts.iter().filter(|p| p.track == i).collect();
            let e2: Vec<(usize, u32)> = ep.iter().map(|x| (x.0, x.1)).collect();
            let g2: Vec<(usize, u32)> = gp.iter().map(|p| (p.size, p.crc)).collect();
            if e2 == g2 {
                let ts_ok = ep.iter().zip(&gp).all(|(e, g)| e.2.is_none() || e.2 == g.pts);
                let key_ok = ep.iter().zip(&gp).all(|(e, g)| e.3 == g.key);
                if !ts_ok || !key_ok {
                    println!("{family}/{name} stream {i}: packet-exact; pts ok {ts_ok}, keyframes ok {key_ok}");
                }
                continue;
            }
            let (total_e, crc_e) = combined(&e2);
            let (total_g, crc_g) = combined(&g2);
            if stream_exact && total_e == total_g && crc_e == crc_g {
                // Stream-exact: the same bytes in other packet boundaries.
                continue;
            }
            ok = false;
            let first_diff = e2.iter().zip(&g2).position(|(a, b)| a != b);
            why += &format!(
                " stream {i}: expected {} pkts/{total_e} B, got {} pkts/{total_g} B, first diff at {first_diff:?}",
                e2.len(),
                g2.len()
            );
        }
        if ok {
            matched += 1;
        } else {
            misses.push(format!("{family}/{name}:{why} (end: {err:?})"));
        }
    }
    (matched, scored, misses)
}

fn run(family: &str, stream_exact: bool) {
    let r = root();
    let mut total = (0, 0);
    let mut misses = Vec::new();
    for (files, expected) in [
        (
            common::samples_root().join(family),
            common::samples_root().join("expected").join(family),
        ),
        (
            r.join("corpus/files").join(family),
            r.join("corpus/expected").join(family),
        ),
    ] {
        let (m, s, mut x) = score(family, &files, &expected, stream_exact);
        total.0 += m;
        total.1 += s;
        misses.append(&mut x);
    }
    println!("{family}: {}/{} files match ffprobe", total.0, total.1);
    let unexplained: Vec<_> = misses
        .iter()
        .filter(|m| !EXCEPTIONS.iter().any(|e| m.starts_with(&format!("{family}/{e}"))))
        .collect();
    for m in &misses {
        println!("MISS {m}");
    }
    assert!(unexplained.is_empty(), "unexplained misses: {unexplained:#?}");
}

#[test]
fn avi_matches_ffprobe() {
    run("avi", false);
}

#[test]
fn aiff_matches_ffprobe() {
    run("aiff", true);
}

#[test]
fn caf_matches_ffprobe() {
    run("caf", false);
}

/// Every fuzz and misnamed sample terminates quickly, without panic, in
/// both input modes (whatever its format; most are not ours).
#[test]
fn malformed_files_terminate() {
    for dir in ["fuzz", "other"] {
        let Ok(rd) = std::fs::read_dir(common::samples_root().join(dir)) else {
            continue;
        };
        for e in rd.flatten() {
            let data = std::fs::read(e.path()).unwrap();
            let ext = e.path().extension().and_then(|x| x.to_str().map(str::to_string));
            let t = std::time::Instant::now();
            let _ = demux(&data, ext.as_deref());
            assert!(t.elapsed().as_secs() < 5, "{:?} took {:?}", e.path(), t.elapsed());
        }
    }
}
