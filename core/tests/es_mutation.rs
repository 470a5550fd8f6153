//! A mutation smoke test for the elementary-stream demuxers, for machines
//! without cargo-fuzz: samples of the ES families get random bit flips,
//! byte changes, cuts and insertions (xorshift, `SEED`), and each mutant is
//! read as every ES format and through detection, via a slice and a 7-byte
//! reader that must agree, within 5 s. Ignored by default; run with
//! `SEED=1 ITERS=3000 cargo test --release -p mediaslice --test suite es_mutation:: -- --ignored`.
//! Failing inputs are written to `/tmp/pfuzz/`.
#![allow(
    clippy::all,
    clippy::indexing_slicing,
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic
)]
use crate::common;

use mediaslice::{Demuxer, FormatKind, Limits, ReaderSource, SliceSource, Source};

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
        let n = buf.len().min(self.data.len() - start).min(7);
        buf[..n].copy_from_slice(&self.data[start..start + n]);
        self.pos += n as u64;
        Ok(n)
    }
}
impl embedded_io::Seek for Cursor<'_> {
    fn seek(&mut self, pos: embedded_io::SeekFrom) -> Result<u64, Self::Error> {
        self.pos = match pos {
            embedded_io::SeekFrom::Start(p) => p,
            embedded_io::SeekFrom::End(d) => (self.data.len() as i64 + d).max(0) as u64,
            embedded_io::SeekFrom::Current(d) => (self.pos as i64 + d).max(0) as u64,
        };
        Ok(self.pos)
    }
}
fn pull<S: Source>(src: S, kind: Option<FormatKind>) -> Vec<(usize, usize, u32)> {
    let limits = Limits {
        max_packet: 1 << 20,
        resync_bytes: 64 << 10,
        ..Limits::default()
    };
    let mut out = Vec::new();
    let d = match kind {
        Some(k) => Demuxer::open_as(src, k, limits),
        None => Demuxer::open_with(src, None, limits),
    };
    let Ok(mut d) = d else { return out };
    while let Ok(Some(p)) = d.next_packet() {
        out.push((p.track, p.data.len(), mediaslice::crc::crc32(p.data)));
        if out.len() > 100_000 {
            break;
        }
    }
    while let Ok(Some(_)) = d.next_tag() {}
    for t in 0..d.tracks().len() {
        let _ = d.seek(t, 1000);
        let _ = d.next_packet();
    }
    out
}
#[test]
#[ignore]
fn mutated_samples_do_not_panic() {
    let _ = std::fs::create_dir_all("/tmp/pfuzz");
    let root = common::samples_root();
    let kinds = [
        FormatKind::Mp3,
        FormatKind::Aac,
        FormatKind::Ac3,
        FormatKind::Amr,
        FormatKind::H264,
        FormatKind::Hevc,
        FormatKind::Ivf,
        FormatKind::Obu,
        FormatKind::Av1AnnexB,
        FormatKind::Dv,
        FormatKind::MpegVideo,
        FormatKind::M4v,
    ];
    let mut files = Vec::new();
    for fam in ["mp3", "adts", "ac3", "amr", "h264", "h265", "ivf", "av1obu", "dv"] {
        for e in std::fs::read_dir(root.join(fam)).unwrap() {
            let d = std::fs::read(e.unwrap().path()).unwrap();
            if d.len() < 300_000 {
                files.push(d);
            }
        }
    }
    let mut x: u64 = std::env::var("SEED").ok().and_then(|s| s.parse().ok()).unwrap_or(7);
    let mut rnd = || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x
    };
    let iters: usize = std::env::var("ITERS").ok().and_then(|s| s.parse().ok()).unwrap_or(300);
    for it in 0..iters {
        let mut d = files[(rnd() % files.len() as u64) as usize].clone();
        let m = rnd() % 4;
        for _ in 0..(1 + rnd() % 20) {
            if d.is_empty() {
                break;
            }
            let i = (rnd() % d.len() as u64) as usize;
            match m {
                0 => d[i] ^= 1 << (rnd() % 8),
                1 => d[i] = rnd() as u8,
                2 => {
                    let n = (rnd() % 64) as usize;
                    d.truncate(d.len().saturating_sub(n));
                }
                _ => {
                    let v = rnd() as u8;
                    d.insert(i, v);
                }
            }
        }
        let t = std::time::Instant::now();
        for k in kinds.iter().map(|k| Some(*k)).chain([None]) {
            let mut s1 = vec![0u8; 2 << 20];
            let a = pull(SliceSource::with_scratch(&d, &mut s1), k);
            let b = pull(
                ReaderSource::<_, _, 4>::with_blocks_and_len(
                    Cursor { data: &d, pos: 0 },
                    vec![0u8; 2 << 20],
                    d.len() as u64,
                ),
                k,
            );
            if a != b {
                std::fs::write(format!("/tmp/pfuzz/diff-{it}-{k:?}"), &d).unwrap();
                panic!("slice/reader differ it {it} kind {k:?}");
            }
        }
        if t.elapsed().as_secs() > 5 {
            std::fs::write(format!("/tmp/pfuzz/slow-{it}"), &d).unwrap();
            panic!("slow it {it}: {:?}", t.elapsed());
        }
    }
}
