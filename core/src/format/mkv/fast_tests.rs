//! The fast Block path (`fast.rs`) against the general path alone: the
//! same packets, the same end and the same diagnostics, on the corpus and
//! sample Matroska files, after a seek, and on damaged copies of a file;
//! and `SliceSource`'s own `bytes_and_next` against the trait's default.

extern crate std;
use std::format;
use std::path::PathBuf;
use std::string::String;
use std::vec::Vec;

use super::fast::switch::{DISABLED, TAKEN};
use crate::crc::crc32;
use crate::error::Result;
use crate::source::{IoStats, Source};
use crate::{Demuxer, SliceSource};

/// Everything a read of `data` gives, as text: each packet's facts and
/// payload CRC, the result that ended the loop, the diagnostics; a seek to
/// the middle of track 0 and the packets after it when `seek` is set.
fn read_all(data: &[u8], fast: bool, seek: bool) -> String {
    DISABLED.with(|d| d.set(!fast));
    let mut out = String::new();
    let mut scratch = std::vec![0u8; crate::source::slice_scratch_len(data.len())];
    let mut d = match Demuxer::open(SliceSource::with_scratch(data, &mut scratch), Some("mkv")) {
        Ok(d) => d,
        Err(e) => return format!("open: {e:?}"),
    };
    let mut last_pts = 0;
    let mut end = String::new();
    for _ in 0..1_000_000 {
        match d.next_packet() {
            Ok(Some(p)) => {
                if p.track == 0 {
                    last_pts = p.pts.unwrap_or(last_pts);
                }
                out += &format!(
                    "{} {:?} {:?} {:?} {:?} {:?} {} {} {:08x}\n",
                    p.track,
                    p.pts,
                    p.dts,
                    p.duration,
                    p.flags,
                    p.pos,
                    p.contiguous,
                    p.data.len(),
                    crc32(p.data)
                );
            }
            r => {
                end = format!("end: {r:?}\n");
                break;
            }
        }
    }
    out += &end;
    if seek && !d.tracks().is_empty() {
        out += &format!("seek: {:?}\n", d.seek(0, last_pts / 2));
        for _ in 0..64 {
            match d.next_packet() {
                Ok(Some(p)) => out += &format!("{} {:?} {:?} {:?}\n", p.track, p.pts, p.dts, p.pos),
                r => {
                    out += &format!("end: {r:?}\n");
                    break;
                }
            }
        }
    }
    for (diag, n) in d.diagnostics().iter() {
        out += &format!("{diag:?} x{n}\n");
    }
    DISABLED.with(|d| d.set(false));
    out
}

fn matroska_files() -> Vec<PathBuf> {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..");
    let samples = std::env::var_os("MEDIASLICE_SAMPLES")
        .map(PathBuf::from)
        .unwrap_or_else(|| root.join("../shared/samples"));
    let mut files = Vec::new();
    for dir in [root.join("corpus/files/matroska"), samples.join("matroska")] {
        match std::fs::read_dir(&dir) {
            Ok(rd) => files.extend(rd.flatten().map(|e| e.path())),
            Err(_) => std::println!("note: {} not found: its files are not checked", dir.display()),
        }
    }
    files.sort();
    files
}

/// Every corpus and sample Matroska file gives the same packets, end,
/// seek and diagnostics with the fast path as with the general path alone,
/// and the fast path decides most of their packets.
#[test]
fn fast_path_matches_the_general_path_on_every_file() {
    let files = matroska_files();
    assert!(!files.is_empty(), "no Matroska corpus files");
    TAKEN.with(|n| n.set(0));
    let mut packets = 0usize;
    for f in &files {
        let Ok(data) = std::fs::read(f) else { continue };
        let general = read_all(&data, false, true);
        let fast = read_all(&data, true, true);
        assert_eq!(fast, general, "{}", f.display());
        packets += general
            .lines()
            .filter(|l| !l.starts_with("end") && !l.starts_with("seek"))
            .count();
    }
    let taken = TAKEN.with(core::cell::Cell::get);
    assert!(
        taken as usize * 2 > packets,
        "the fast path decided {taken} of about {packets} packets"
    );
}

/// Damaged copies of a corpus file (bytes changed in the Clusters, a
/// simple deterministic generator) read alike on both paths.
#[test]
fn fast_path_matches_the_general_path_on_damaged_input() {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..");
    let data = std::fs::read(root.join("corpus/files/matroska/h264_aac.mkv")).unwrap_or_default();
    assert!(!data.is_empty(), "corpus/files/matroska/h264_aac.mkv missing");
    let mut seed = 0x2545_F491_4F6C_DD1Du64;
    let mut next = || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed
    };
    for _ in 0..200 {
        let mut bad = data.clone();
        for _ in 0..4 {
            let at = (next() % bad.len() as u64) as usize;
            if let Some(b) = bad.get_mut(at) {
                *b = next() as u8;
            }
        }
        let cut = bad.len() - (next() % 64) as usize;
        bad.truncate(cut);
        assert_eq!(read_all(&bad, true, false), read_all(&bad, false, false));
    }
}

/// A `SliceSource` seen through the `Source` trait's default
/// `bytes_and_next` (every other method forwarded).
struct Defaults<'a>(SliceSource<'a>);

impl Source for Defaults<'_> {
    fn len(&self) -> u64 {
        self.0.len()
    }
    fn read_at(&mut self, offset: u64, buf: &mut [u8]) -> Result<usize> {
        self.0.read_at(offset, buf)
    }
    fn array<const N: usize>(&mut self, offset: u64) -> Result<[u8; N]> {
        self.0.array(offset)
    }
    fn bytes(&mut self, offset: u64, len: usize) -> Result<&[u8]> {
        self.0.bytes(offset, len)
    }
    fn scratch_len(&self) -> usize {
        self.0.scratch_len()
    }
    fn gather(&mut self, offset: u64, len: usize, at: usize) -> Result<()> {
        self.0.gather(offset, len, at)
    }
    fn put(&mut self, at: usize, data: &[u8]) -> Result<()> {
        self.0.put(at, data)
    }
    fn joined(&self, len: usize) -> Result<&[u8]> {
        self.0.joined(len)
    }
    fn is_slice(&self) -> bool {
        self.0.is_slice()
    }
    fn stats(&self) -> IoStats {
        self.0.stats()
    }
}

/// Every packet's position, size and CRC, then the result that ended the
/// loop and the source's counters.
fn packets_and_stats<S: Source>(src: S) -> String {
    let mut d = match Demuxer::open(src, Some("mkv")) {
        Ok(d) => d,
        Err(e) => return format!("open: {e:?}"),
    };
    let mut out = String::new();
    for _ in 0..1_000_000 {
        match d.next_packet() {
            Ok(Some(p)) => out += &format!("{:?} {} {:08x}\n", p.pos, p.data.len(), crc32(p.data)),
            r => {
                out += &format!("end: {r:?}\n");
                break;
            }
        }
    }
    out + &format!("{:?}\n", d.source().stats())
}

/// `SliceSource::bytes_and_next` (the fast path's one call a packet) gives
/// the same bytes and the same I/O counts as the trait's default, on every
/// corpus and sample Matroska file and on cut copies of one (the last
/// frame then has fewer than 16 bytes after it).
#[test]
fn slice_bytes_and_next_counts_as_the_default() {
    let files = matroska_files();
    assert!(!files.is_empty(), "no Matroska corpus files");
    for f in &files {
        let Ok(data) = std::fs::read(f) else { continue };
        let cuts = [data.len(), data.len().saturating_sub(7), data.len().saturating_sub(40)];
        for cut in cuts {
            let data = data.get(..cut).unwrap_or_default();
            let own = packets_and_stats(SliceSource::new(data));
            let default = packets_and_stats(Defaults(SliceSource::new(data)));
            assert_eq!(own, default, "{} cut at {cut}", f.display());
        }
    }
}
