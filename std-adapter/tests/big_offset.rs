//! Offsets past 4 GiB through every std source: a sparse RF64 file whose
//! `data` chunk starts after 4.25 GiB of `JUNK` (two chunks, since a chunk's
//! 32-bit size cannot span it alone), so the header walk, the packet
//! positions and the reads all need 64-bit arithmetic. The file takes about
//! 1 MiB of disk (the rest is a hole) and is removed at the end.
//!
//! 64-bit hosts only: on 32-bit, mapping it is an `OffsetOverflow` error by
//! design, which core's tests cover.

#![cfg(target_pointer_width = "64")]

use crate::http_common as common;

use common::RangeServer;
use mediaslice::crc::{crc32, Crc32};
use mediaslice::{Demuxer, Source};
use mediaslice_std::{FileSource, HttpConfig, HttpSource, MmapSource};
use std::fs::File;
use std::os::unix::fs::FileExt;
use std::path::PathBuf;
use std::time::Duration;

const JUNK1: u64 = 0xF000_0000;
const JUNK2: u64 = 0x2000_0000;
const DATA_LEN: u64 = 1 << 20;

/// Writes the sparse file; returns its path and where the samples start.
fn sparse_rf64() -> (PathBuf, u64) {
    let p = std::env::temp_dir().join(format!("mediaslice-big-offset-{}.wav", std::process::id()));
    let f = File::create(&p).unwrap();
    let mut h = Vec::new();
    h.extend_from_slice(b"RF64");
    h.extend_from_slice(&u32::MAX.to_le_bytes());
    h.extend_from_slice(b"WAVE");
    // ds64 (EBU Tech 3306 §3): riff size, data size, sample count, table 0.
    let fmt_end = 12 + 8 + 28 + 8 + 16;
    let data_start = fmt_end + 8 + JUNK1 + 8 + JUNK2 + 8;
    let total = data_start + DATA_LEN;
    h.extend_from_slice(b"ds64");
    h.extend_from_slice(&28u32.to_le_bytes());
    h.extend_from_slice(&(total - 8).to_le_bytes());
    h.extend_from_slice(&DATA_LEN.to_le_bytes());
    h.extend_from_slice(&(DATA_LEN / 4).to_le_bytes());
    h.extend_from_slice(&0u32.to_le_bytes());
    h.extend_from_slice(b"fmt ");
    h.extend_from_slice(&16u32.to_le_bytes());
    h.extend_from_slice(&1u16.to_le_bytes()); // PCM
    h.extend_from_slice(&2u16.to_le_bytes()); // stereo
    h.extend_from_slice(&48_000u32.to_le_bytes());
    h.extend_from_slice(&192_000u32.to_le_bytes());
    h.extend_from_slice(&4u16.to_le_bytes());
    h.extend_from_slice(&16u16.to_le_bytes());
    assert_eq!(h.len() as u64, fmt_end);
    f.write_all_at(&h, 0).unwrap();
    let mut at = fmt_end;
    for size in [JUNK1, JUNK2] {
        let mut c = b"JUNK".to_vec();
        c.extend_from_slice(&(size as u32).to_le_bytes());
        f.write_all_at(&c, at).unwrap();
        at += 8 + size;
    }
    let mut c = b"data".to_vec();
    c.extend_from_slice(&u32::MAX.to_le_bytes());
    f.write_all_at(&c, at).unwrap();
    assert_eq!(at + 8, data_start);
    f.write_all_at(&samples(), data_start).unwrap();
    assert_eq!(f.metadata().unwrap().len(), total);
    (p, data_start)
}

fn samples() -> Vec<u8> {
    (0..DATA_LEN)
        .map(|i| (i.wrapping_mul(2_654_435_761) >> 13) as u8)
        .collect()
}

/// Opens, checks the packets (positions past 4 GiB, data, CRC), then seeks
/// to the last 10 ms and checks the packet there.
fn check<S: Source>(src: S, data_start: u64, what: &str) {
    let want = samples();
    let mut d = Demuxer::open(src, Some("wav")).unwrap_or_else(|e| panic!("{what}: {e}"));
    assert_eq!(d.tracks().len(), 1, "{what}");
    assert_eq!(d.tracks()[0].duration, Some(DATA_LEN / 4), "{what}");
    let mut crc = Crc32::new();
    let mut pos = data_start;
    let mut n = 0;
    while let Some(p) = d.next_packet().unwrap() {
        assert_eq!(p.pos, Some(pos), "{what}");
        assert!(p.pos.unwrap() > 1 << 32);
        crc.update(p.data);
        pos += p.data.len() as u64;
        n += 1;
    }
    assert!(n > 1, "{what}");
    assert_eq!(pos, data_start + DATA_LEN, "{what}");
    assert_eq!(crc.finish(), crc32(&want), "{what}");
    // Seek to sample 250 000 (of 262 144): an exact packet for audio.
    d.seek(0, 250_000).unwrap();
    let p = d.next_packet().unwrap().unwrap();
    let off = p.pos.unwrap() - data_start;
    assert!(
        off <= 250_000 * 4 && off + p.data.len() as u64 > 250_000 * 4,
        "{what}: {off}"
    );
    assert_eq!(p.data, &want[off as usize..off as usize + p.data.len()], "{what}");
}

#[test]
fn offsets_past_4_gib_through_mmap_pread_and_http() {
    let (p, data_start) = sparse_rf64();
    assert!(data_start > (1 << 32) + (1 << 28));
    check(MmapSource::open(&p).unwrap(), data_start, "mmap");
    let mut m = MmapSource::open(&p).unwrap();
    m.set_resident_limit(64 << 10);
    check(m, data_start, "mmap, pages released every 64 KiB");
    check(FileSource::open(&p).unwrap(), data_start, "pread");
    let server = RangeServer::start();
    let cfg = HttpConfig {
        env_proxy: false,
        read_timeout: Some(Duration::from_secs(10)),
        ..HttpConfig::default()
    };
    let src = HttpSource::open_with(&server.url("range", &p), cfg).unwrap();
    assert_eq!(src.len(), data_start + DATA_LEN);
    check(src, data_start, "http");
    std::fs::remove_file(&p).unwrap();
}
