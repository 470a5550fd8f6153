//! Elementary-stream conformance: every sample of the elementary-stream
//! families in `../shared/samples` and `corpus/` is demuxed through both a
//! `SliceSource` and a `ReaderSource` (which must give identical packets) and
//! compared per stream with ffprobe's packets: packet-exact (size and CRC32 of
//! each packet) or stream-exact (total size and CRC32 of the concatenation),
//! the rule of `shared/tools/conform.py`.
//!
//! Run with `--nocapture` to see the per-family table and the misses.

#![allow(clippy::indexing_slicing, clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use crate::common;

use mediaslice::crc::crc32;
use mediaslice::{Demuxer, ReaderSource, SliceSource, TrackKind};
use std::collections::BTreeMap;
use std::io::Read as _;
use std::path::{Path, PathBuf};

/// (folder, lowest acceptable share of exact files in percent).
const FAMILIES: &[(&str, f64)] = &[
    ("mp3", 95.0),
    ("adts", 95.0),
    ("ac3", 95.0),
    ("h264", 95.0),
    ("h265", 95.0),
    ("ivf", 95.0),
    ("amr", 95.0),
    ("av1obu", 50.0),
    ("mpegvideo", 95.0),
    ("dv", 95.0),
    ("m4v", 95.0),
];

struct Cursor<'a> {
    data: &'a [u8],
    pos: u64,
}

impl embedded_io::ErrorType for Cursor<'_> {
    type Error = core::convert::Infallible;
}

impl embedded_io::Read for Cursor<'_> {
    fn read(&mut self, buf: &mut [u8]) -> Result<usize, Self::Error> {
        let start = (self.pos as usize).min(self.data.len());
        let n = buf.len().min(self.data.len() - start).min(1000);
        buf[..n].copy_from_slice(&self.data[start..start + n]);
        self.pos += n as u64;
        Ok(n)
    }
}

impl embedded_io::Seek for Cursor<'_> {
    fn seek(&mut self, pos: embedded_io::SeekFrom) -> Result<u64, Self::Error> {
        self.pos = match pos {
            embedded_io::SeekFrom::Start(p) => p,
            embedded_io::SeekFrom::End(d) => (self.data.len() as i64 + d) as u64,
            embedded_io::SeekFrom::Current(d) => (self.pos as i64 + d) as u64,
        };
        Ok(self.pos)
    }
}

type Streams = Vec<(TrackKind, Vec<(usize, u32)>)>;
type Flat = Vec<(usize, i64, usize)>;

fn demux<S: mediaslice::Source>(src: S) -> Option<(Streams, Flat)> {
    let mut d = Demuxer::open(src, None).ok()?;
    let mut out: Streams = d.tracks().iter().map(|t| (t.kind, Vec::new())).collect();
    let mut all = Vec::new();
    while let Ok(Some(p)) = d.next_packet() {
        out[p.track].1.push((p.data.len(), crc32(p.data)));
        all.push((p.track, p.pts.unwrap_or(i64::MIN), p.data.len()));
    }
    Some((out, all))
}

fn crc32_combine(mut crc1: u32, crc2: u32, mut len2: u64) -> u32 {
    fn times(mat: &[u32; 32], mut vec: u32) -> u32 {
        let mut s = 0;
        let mut i = 0;
        while vec != 0 {
            if vec & 1 != 0 {
                s ^= mat[i];
            }
            vec >>= 1;
            i += 1;
        }
        s
    }
    fn square(mat: &[u32; 32]) -> [u32; 32] {
        let mut o = [0u32; 32];
        for (i, m) in mat.iter().enumerate() {
            o[i] = times(mat, *m);
        }
        o
    }
    if len2 == 0 {
        return crc1;
    }
    let mut odd = [0u32; 32];
    odd[0] = 0xEDB8_8320;
    for (i, v) in odd.iter_mut().enumerate().skip(1) {
        *v = 1 << (i - 1);
    }
    let mut even = square(&odd);
    odd = square(&even);
    loop {
        even = square(&odd);
        if len2 & 1 != 0 {
            crc1 = times(&even, crc1);
        }
        len2 >>= 1;
        if len2 == 0 {
            break;
        }
        odd = square(&even);
        if len2 & 1 != 0 {
            crc1 = times(&odd, crc1);
        }
        len2 >>= 1;
        if len2 == 0 {
            break;
        }
    }
    crc1 ^ crc2
}

fn combined(p: &[(usize, u32)]) -> (u32, u64) {
    let mut c = 0;
    let mut t = 0u64;
    for &(s, h) in p {
        c = crc32_combine(c, h, s as u64);
        t += s as u64;
    }
    (c, t)
}

fn kind_name(k: TrackKind) -> &'static str {
    k.ffmpeg_name()
}

/// Compares one file; returns None when ffprobe has no packets (not scored).
fn check(file: &Path, expected: &Path) -> Option<(bool, String)> {
    let mut gz = Vec::new();
    flate2::read::GzDecoder::new(std::fs::File::open(expected).ok()?)
        .read_to_end(&mut gz)
        .ok()?;
    let exp: serde_json::Value = serde_json::from_slice(&gz).ok()?;
    let pk = exp.get("packets")?.as_array()?;
    if pk.is_empty() {
        return None;
    }
    let mut per: BTreeMap<i64, Vec<(usize, u32)>> = BTreeMap::new();
    for p in pk {
        let si = p.get("stream_index")?.as_i64()?;
        let size: usize = p.get("size")?.as_str()?.parse().ok()?;
        let h = p.get("data_hash")?.as_str()?;
        let h = u32::from_str_radix(h.split(':').next_back()?, 16).ok()?;
        per.entry(si).or_default().push((size, h));
    }
    let data = std::fs::read(file).ok()?;
    let mut sscratch = vec![0u8; 8 << 20];
    let got = demux(SliceSource::with_scratch(&data, &mut sscratch));
    let mut scratch = vec![0u8; 8 << 20];
    let got_r = demux(ReaderSource::<_, _, 8>::new(Cursor { data: &data, pos: 0 }, &mut scratch[..]).ok()?);
    if got.as_ref().map(|g| &g.1) != got_r.as_ref().map(|g| &g.1) {
        return Some((false, "slice and reader packets differ".into()));
    }
    let Some((got, _)) = got else {
        return Some((false, "open failed".into()));
    };
    let mut used = vec![false; got.len()];
    let mut ok = true;
    let mut why = String::new();
    for s in exp.get("streams")?.as_array()? {
        let ty = s.get("codec_type")?.as_str()?;
        if ty != "audio" && ty != "video" {
            continue;
        }
        let idx = s.get("index")?.as_i64()?;
        let ep = per.get(&idx).cloned().unwrap_or_default();
        let cand = (0..got.len()).find(|&i| !used[i] && kind_name(got[i].0) == ty);
        let Some(i) = cand else {
            ok = false;
            why += &format!(" {ty}:missing");
            continue;
        };
        used[i] = true;
        if ep.is_empty() {
            continue;
        }
        let ap = &got[i].1;
        if &ep == ap {
            continue;
        }
        if std::env::var("ES_DUMP").is_ok() {
            println!("exp {:?}", ep.iter().map(|x| x.0).collect::<Vec<_>>());
            println!("got {:?}", ap.iter().map(|x| x.0).collect::<Vec<_>>());
        }
        if combined(&ep) == combined(ap) {
            why += &format!(" {ty}:stream-exact");
            continue;
        }
        ok = false;
        let first_diff = ep
            .iter()
            .zip(ap.iter())
            .position(|(a, b)| a != b)
            .unwrap_or(ep.len().min(ap.len()));
        why += &format!(
            " {ty}: exp {} pkts/{} B, got {} pkts/{} B, first diff #{first_diff} exp {:?} got {:?}",
            ep.len(),
            combined(&ep).1,
            ap.len(),
            combined(ap).1,
            ep.get(first_diff).map(|x| x.0),
            ap.get(first_diff).map(|x| x.0),
        );
    }
    Some((ok, why))
}

fn roots() -> Vec<(PathBuf, PathBuf)> {
    let m = Path::new(env!("CARGO_MANIFEST_DIR"));
    vec![
        (common::samples_root(), common::samples_root().join("expected")),
        (m.join("../corpus/files"), m.join("../corpus/expected")),
    ]
}

#[test]
fn es_families_match_ffprobe() {
    let only = std::env::var("ES_FAMILY").ok();
    let mut failed = Vec::new();
    for &(fam, min) in FAMILIES {
        if only.as_deref().is_some_and(|o| o != fam) {
            continue;
        }
        let (mut good, mut total) = (0, 0);
        for (files, expected) in roots() {
            let Ok(rd) = std::fs::read_dir(expected.join(fam)) else {
                continue;
            };
            let mut names: Vec<_> = rd.filter_map(|e| e.ok()).map(|e| e.file_name()).collect();
            names.sort();
            for n in names {
                let n = n.to_string_lossy().to_string();
                let Some(base) = n.strip_suffix(".json.gz") else {
                    continue;
                };
                let f = files.join(fam).join(base);
                if !f.exists() {
                    continue;
                }
                if let Some((ok, why)) = check(&f, &expected.join(fam).join(&n)) {
                    total += 1;
                    if ok {
                        good += 1;
                        if !why.is_empty() {
                            println!("OK {fam}/{base}:{why}");
                        }
                    } else {
                        println!("MISS {fam}/{base}:{why}");
                    }
                }
            }
        }
        let rate = 100.0 * good as f64 / total.max(1) as f64;
        println!("{fam:10} {good:3}/{total:<3} {rate:5.1}%");
        if total > 0 && rate < min {
            failed.push(fam);
        }
    }
    assert!(failed.is_empty(), "families below their threshold: {failed:?}");
}

#[test]
fn ac3_crcs_check_on_every_sample() {
    // A wrong CRC-16 would flag every frame of these valid streams.
    let mut checked = 0;
    for (files, _) in roots() {
        let Ok(rd) = std::fs::read_dir(files.join("ac3")) else {
            continue;
        };
        for f in rd.filter_map(|e| e.ok()) {
            let data = std::fs::read(f.path()).unwrap();
            let Ok(mut d) = Demuxer::open(SliceSource::new(&data), None) else {
                continue;
            };
            while let Ok(Some(_)) = d.next_packet() {}
            assert!(
                !d.diagnostics().contains("ac3.crc-mismatch"),
                "{}: CRC mismatch reported",
                f.path().display()
            );
            checked += 1;
        }
    }
    assert!(checked > 0);
}
