//! [`MmapSource`]: a memory-mapped file as a zero-copy source.

use crate::kernel_copy::MappedInput;
use crate::scratch::Scratch;
use crate::sigbus::Guard;
use mediaslice::{Error, ErrorKind, IoStats, Limits, Result, Source};
use memmap2::{Advice, Mmap, UncheckedAdvice};
use std::fs::File;
use std::path::Path;
use std::sync::Arc;

/// A read-only memory map of a file, served like a
/// [`mediaslice::SliceSource`]: [`Source::bytes`] borrows the map with no
/// copy, and packet positions name ranges of [`MmapSource::data`].
///
/// Resident memory stays bounded for any file size: the map only reserves
/// address space, the kernel pages in the parts that are touched, and once
/// the pages touched since the last release may amount to
/// [`MmapSource::DEFAULT_RESIDENT`] bytes (see
/// [`MmapSource::set_resident_limit`]) the source tells the kernel it no
/// longer needs them (`madvise(MADV_DONTNEED)` on the span from the lowest
/// to the highest byte served, widened to 2 MiB bounds), so a pass over a
/// 4 GiB file does not leave 4 GiB resident. What an access may touch is
/// estimated from how far it lies from the nearest of the last 16 places
/// read: reading on costs its length, a small stride (chunk headers between
/// payloads) costs the gap too, and a jump costs 256 KiB (the kernel maps a
/// whole page-cache folio, often 128 KiB or more, on one fault). Pages needed again are read back from the file (usually from
/// the page cache: a minor fault). Why this is sound: `docs/sources.md`.
/// Large reads (1 MiB and more) are announced with `MADV_WILLNEED`, and
/// [`MmapSource::advise_sequential`] asks for aggressive read-ahead before a
/// pass over every packet. A zero-length file cannot be mapped and is served
/// as an empty slice (every format then fails to open with a clean error).
///
/// Packets that a container splits (Ogg, MPEG-TS) are joined in an owned
/// scratch buffer that grows on demand up to [`Limits::max_packet`] bytes
/// (change it with [`MmapSource::set_scratch_limit`]).
///
/// The stats count accesses, as for a slice: `reads` is the number of
/// `read_at`/`bytes`/`gather` calls and `bytes_read` the bytes they covered,
/// not page faults. Use [`crate::FileSource`] to count real reads.
///
/// # A file that shrinks while it is mapped
///
/// Another process may truncate the file while it is mapped. Reading a lost
/// page would raise `SIGBUS` and kill the process; on Linux and Android the
/// source guards its map instead (a process-wide `SIGBUS` handler, installed
/// on the first open and chained to any handler installed before it):
///
/// * A fault inside the map reads zeros (a zero page is mapped over the lost
///   page) and is recorded. From then on every call on the source fails
///   with a [`ErrorKind::Truncated`] error at the file's new length (or an
///   `Io` error when the file did not shrink: a read error under the map),
///   as [`crate::FileSource`] reports a file that ends early.
/// * `bytes` touches the last byte of the range it returns before returning
///   it, so a range the truncation cut fails in that call and the caller
///   never sees its zeros. A truncation that lands after that check, while
///   the caller reads the slice, shows zeros to the caller and fails the
///   next call; [`MmapSource::faults_absorbed`] lets a caller that holds a
///   packet check before using it.
/// * The bytes from the new end to the end of its page read as zeros
///   without a fault (the kernel zero-fills the last page); the truncation
///   is reported at the first access past that page.
/// * A slice kept from [`MmapSource::data`] stays valid memory; past the
///   new end it reads zeros.
/// * Not guarded: other targets, a map opened while
///   [`MmapSource::GUARDED_MAPS`] maps are open, and a process where another
///   `SIGBUS` handler replaced ours without chaining to it. There a
///   truncated file kills the process as before ([`MmapSource::is_guarded`]
///   tells); use [`crate::FileSource`] for files that may change.
#[derive(Debug)]
pub struct MmapSource {
    /// The registration of `map` with the `SIGBUS` guard. Declared before
    /// `map` so it is dropped (unregistered) before the map is unmapped.
    guard: Option<Guard>,
    /// Shared with the [`MappedInput`]s taken from it, which keep its
    /// addresses reserved after the source is dropped.
    map: Option<Arc<Mmap>>,
    /// A handle on the file, to learn its length after a fault.
    file: File,
    scratch: Scratch,
    stats: IoStats,
    /// Bytes the pages touched since the last release may amount to.
    served: u64,
    /// Where the last few runs of reads ended (`EMPTY_RUN` when unused), and
    /// when each was last used.
    runs: [u64; RUNS],
    run_used: [u64; RUNS],
    /// The run the last read went to.
    last_run: usize,
    clock: u64,
    /// Lowest and highest (exclusive) byte served since then.
    lo: u64,
    hi: u64,
    resident_limit: u64,
    /// Releases done.
    releases: u64,
}

/// Runs of reads remembered for the cost of an access (a demuxer walks a
/// few tables and the payload at once: MP4's `stsz`, `stco`, `stts`, ...
/// per track).
const RUNS: usize = 16;
const EMPTY_RUN: u64 = u64::MAX;
/// What a read far from every recent run may map: a page-cache folio.
const JUMP_COST: u64 = 256 << 10;
/// A read this close after a run's end continues that run (the kernel's
/// fault-around window is 64 KiB); a read farther away starts a run of its
/// own. Two table walks a few hundred KiB apart (MP4's `stsz` and `stco`)
/// are two runs: taking them as one made every alternation a jump, and a
/// release every few packets (5,046 releases and 37,800 page faults on a
/// 100 MB MP4 instead of 50 and 1,700).
const NEAR: u64 = 64 << 10;

/// Releases are widened to multiples of this (the largest folio or huge
/// page a file mapping is likely to use on x86-64 and arm64: 2 MiB).
const RELEASE_ALIGN: u64 = 2 << 20;

fn to_usize(offset: u64) -> Result<usize> {
    usize::try_from(offset)
        .map_err(|_| Error::new(ErrorKind::OffsetOverflow, offset, &"offset beyond the address space"))
}

/// `data[offset..offset + len]`, or the error a slice source gives.
fn range(data: &[u8], offset: u64, len: usize) -> Result<&[u8]> {
    let start = to_usize(offset)?;
    let end = start.checked_add(len).ok_or(Error::new(
        ErrorKind::OffsetOverflow,
        offset,
        &"range beyond the address space",
    ))?;
    data.get(start..end).ok_or(Error::truncated(
        data.len() as u64,
        &"input ends before the requested range",
    ))
}

impl MmapSource {
    /// Maps the file at `path` read-only.
    ///
    /// Errors: the file cannot be opened, is not a regular file (a FIFO does
    /// not block the open: [`crate::open_regular_file`]), or cannot be
    /// mapped.
    pub fn open(path: impl AsRef<Path>) -> std::io::Result<Self> {
        Self::from_file(&crate::open_regular_file(path)?)
    }

    /// Maps an open file read-only. The file may be closed afterwards (the
    /// source keeps a duplicate handle).
    ///
    /// Errors: the file is not a regular file, or cannot be mapped.
    pub fn from_file(file: &File) -> std::io::Result<Self> {
        let meta = file.metadata()?;
        if !meta.is_file() {
            return Err(std::io::Error::new(
                std::io::ErrorKind::InvalidInput,
                "not a regular file",
            ));
        }
        let map = if meta.len() == 0 {
            None
        } else {
            // SAFETY: the map is read-only and private to this source, and
            // nothing writes through it. Its bytes are the file's, so another
            // process may change them (a rewrite in place shows new bytes; a
            // truncation makes the lost pages fault): a `&[u8]` of the map
            // is memory that stays mapped and readable for the map's life,
            // whose contents the file's owner controls, as documented. A
            // fault on a lost page is absorbed by the `SIGBUS` guard
            // registered below (a zero page mapped in its place, see
            // `sigbus.rs`), so the memory behind every slice stays readable.
            Some(Arc::new(unsafe { Mmap::map(file)? }))
        };
        let guard = map.as_ref().and_then(|m| Guard::register(m.as_ptr(), m.len()));
        Ok(MmapSource {
            guard,
            map,
            file: file.try_clone()?,
            scratch: Scratch::new(Limits::default().max_packet as usize),
            stats: IoStats::default(),
            served: 0,
            runs: [EMPTY_RUN; RUNS],
            run_used: [0; RUNS],
            last_run: 0,
            clock: 0,
            lo: u64::MAX,
            hi: 0,
            resident_limit: Self::DEFAULT_RESIDENT,
            releases: 0,
        })
    }

    /// How many maps can be guarded against truncation at once.
    pub const GUARDED_MAPS: usize = crate::sigbus::SLOTS;

    /// Whether a truncation of the file under this map is reported as an
    /// error (true on Linux and Android while fewer than
    /// [`MmapSource::GUARDED_MAPS`] maps are open; true for an empty file,
    /// which has no map).
    pub fn is_guarded(&self) -> bool {
        self.map.is_none() || self.guard.is_some()
    }

    /// Faults absorbed so far in every guarded map of this process: when
    /// this changes while a caller holds a slice of a map, its bytes may be
    /// zeros that stand for a lost part of a truncated file.
    pub fn faults_absorbed() -> u64 {
        crate::sigbus::total()
    }

    /// `Ok` unless the map has faulted: then the file shrank under it
    /// (`Truncated` at its new length) or could not be read (`Io`).
    pub fn check(&self) -> Result<()> {
        let Some(g) = &self.guard else { return Ok(()) };
        if g.faults() == 0 {
            return Ok(());
        }
        let first = g.first_fault().unwrap_or(0);
        match self.file.metadata() {
            Ok(m) if m.len() < self.data().len() as u64 => {
                Err(Error::truncated(m.len(), &"the file shrank while it was mapped"))
            }
            _ => Err(Error::new(
                ErrorKind::Io(std::io::ErrorKind::Other.into()),
                first,
                &"the mapped file could not be read (a fault under the map)",
            )),
        }
    }

    /// Bytes served between two releases of the map's resident pages: 2 MiB,
    /// so the pages of the file that are resident at once stay a few MiB
    /// (the 8 MiB peak RSS budget of `docs/bench/memory.md`).
    pub const DEFAULT_RESIDENT: u64 = 2 << 20;

    /// Reads of at least this many bytes are announced to the kernel with
    /// `MADV_WILLNEED` (read-ahead of the whole range at once).
    pub const WILLNEED_FROM: usize = 1 << 20;

    /// Sets how many bytes may be served before the map's resident pages are
    /// released; 0 never releases them.
    pub fn set_resident_limit(&mut self, bytes: u64) {
        self.resident_limit = bytes;
    }

    /// Asks the kernel for aggressive read-ahead (`MADV_SEQUENTIAL`), for a
    /// pass over every packet. A failure is ignored (it is only a hint).
    pub fn advise_sequential(&self) {
        if let Some(map) = &self.map {
            let _ = map.advise(Advice::Sequential);
        }
    }

    /// How many times the served pages were released.
    pub fn releases(&self) -> u64 {
        self.releases
    }

    /// Counts `len` bytes at `offset` about to be served; past the limit,
    /// first releases the pages served since the last release. Called only
    /// from `&mut self` methods, before the new borrow is made, so no borrow
    /// that this source handed out is alive (see `docs/sources.md`).
    fn serve(&mut self, offset: u64, len: usize) {
        let end = offset.saturating_add(len as u64).min(self.data().len() as u64);
        let cost = self.touch_cost(offset, len as u64);
        self.served = self.served.saturating_add(cost);
        if self.resident_limit != 0 && self.served >= self.resident_limit {
            self.release();
        }
        if offset < end {
            self.lo = self.lo.min(offset);
            self.hi = self.hi.max(end);
        }
        if len >= Self::WILLNEED_FROM && offset < end {
            if let Some(map) = &self.map {
                let _ = map.advise_range(Advice::WillNeed, offset as usize, (end - offset) as usize);
            }
        }
    }

    /// What reading `len` bytes at `offset` may add to the resident pages:
    /// the length, plus the gap from the nearest recent run of reads (capped
    /// at `JUMP_COST`: a far jump maps a folio, not the gap).
    ///
    /// The run the last read went to is tried first: a demuxer's next read
    /// nearly always continues it (a TS header, then its payload, then the
    /// next header), and the search over every run was 30% of `packets
    /// --summary` on a TS file. When that run is near, it is taken even if
    /// another run is nearer still: the gap is then under `NEAR` either way.
    fn touch_cost(&mut self, offset: u64, len: u64) -> u64 {
        self.clock += 1;
        let last = self.last_run;
        if let (Some(r), Some(u)) = (self.runs.get_mut(last), self.run_used.get_mut(last)) {
            let gap = offset.abs_diff(*r);
            if *r != EMPTY_RUN && gap < NEAR {
                *r = offset.saturating_add(len);
                *u = self.clock;
                return len.saturating_add(gap.min(JUMP_COST));
            }
        }
        let mut best = None;
        let mut gap = u64::MAX;
        for (i, &e) in self.runs.iter().enumerate() {
            if e != EMPTY_RUN && offset.abs_diff(e) < gap {
                gap = offset.abs_diff(e);
                best = Some(i);
            }
        }
        let slot = match best {
            Some(i) if gap < NEAR => i,
            _ => {
                // A new run, in place of the least recently used.
                let mut lru = 0;
                for (i, &u) in self.run_used.iter().enumerate() {
                    if u < self.run_used.get(lru).copied().unwrap_or(0) {
                        lru = i;
                    }
                }
                lru
            }
        };
        if let (Some(r), Some(u)) = (self.runs.get_mut(slot), self.run_used.get_mut(slot)) {
            *r = offset.saturating_add(len);
            *u = self.clock;
        }
        self.last_run = slot;
        len.saturating_add(gap.min(JUMP_COST))
    }

    /// Drops the resident pages of the span served since the last release.
    fn release(&mut self) {
        let (lo, hi) = (self.lo, self.hi);
        self.served = 0;
        self.lo = u64::MAX;
        self.hi = 0;
        if lo >= hi {
            return;
        }
        // Widened to `RELEASE_ALIGN` boundaries on both sides: the kernel
        // may map a whole large folio of the page cache (or a fault-around
        // window) on one fault, so pages just before `lo` and just after
        // `hi` can be mapped without being served. Releasing a page that is
        // about to be used costs a minor fault, nothing more.
        let len = self.data().len() as u64;
        let start = lo / RELEASE_ALIGN * RELEASE_ALIGN;
        let end = hi.div_ceil(RELEASE_ALIGN).saturating_mul(RELEASE_ALIGN).min(len);
        let (Ok(start), Ok(hi)) = (usize::try_from(start), usize::try_from(end)) else {
            return;
        };
        let Some(map) = &self.map else { return };
        // SAFETY: the map is read-only, private and file-backed (`Mmap`,
        // never written), so its pages are clean copies of the file: dropping
        // them loses nothing, and the next access maps them again from the
        // page cache or the file, at the same addresses with the same
        // contents. No borrow this source handed out is alive (this runs in
        // a `&mut self` call), and a slice a caller took from `data()`
        // stays valid memory. A failure only means the pages stay resident.
        let _ = unsafe { map.unchecked_advise_range(UncheckedAdvice::DontNeed, start, hi - start) };
        self.releases += 1;
    }

    /// The map and the file behind it, for a [`crate::FileSink`] that
    /// hands appends of the map's bytes to the kernel
    /// ([`crate::FileSink::set_input`]); `None` for a zero-length file.
    /// The map stays in place while the handle lives, so an address inside
    /// it always names this file's bytes.
    ///
    /// Errors: the file handle cannot be duplicated.
    pub fn mapped_input(&self) -> std::io::Result<Option<MappedInput>> {
        let Some(map) = &self.map else { return Ok(None) };
        Ok(Some(MappedInput::new(Arc::clone(map), self.file.try_clone()?)))
    }

    /// The whole file as a slice (empty for a zero-length file).
    pub fn data(&self) -> &[u8] {
        self.map.as_deref().map_or(&[][..], |m| &m[..])
    }

    /// Sets the most bytes the join scratch may grow to.
    pub fn set_scratch_limit(&mut self, bytes: usize) {
        self.scratch.set_cap(bytes);
    }

    /// Bytes of scratch allocated so far.
    pub fn scratch_allocated(&self) -> usize {
        self.scratch.allocated()
    }
}

impl Source for MmapSource {
    fn len(&self) -> u64 {
        self.data().len() as u64
    }

    fn read_at(&mut self, offset: u64, buf: &mut [u8]) -> Result<usize> {
        self.check()?;
        self.serve(offset, buf.len());
        let data = self.map.as_deref().map_or(&[][..], |m| &m[..]);
        let avail = match usize::try_from(offset) {
            Ok(s) => data.get(s..).unwrap_or(&[]),
            Err(_) => &[],
        };
        let n = avail.len().min(buf.len());
        if let (Some(dst), Some(src)) = (buf.get_mut(..n), avail.get(..n)) {
            dst.copy_from_slice(src);
        }
        self.check()?;
        self.stats.reads += 1;
        self.stats.bytes_read += n as u64;
        Ok(n)
    }

    fn bytes(&mut self, offset: u64, len: usize) -> Result<&[u8]> {
        self.check()?;
        self.serve(offset, len);
        let r = range(self.map.as_deref().map_or(&[][..], |m| &m[..]), offset, len)?;
        if let Some(last) = r.last() {
            // A truncation cuts a suffix of the file: if the range lost any
            // byte, it lost its last one. Touching it now makes the fault
            // (and the error) happen here, before the caller reads zeros.
            // SAFETY: `last` is a valid, aligned reference to a byte.
            let _ = unsafe { std::ptr::read_volatile(last) };
            self.check()?;
        }
        self.stats.reads += 1;
        self.stats.bytes_read += len as u64;
        Ok(r)
    }

    fn scratch_len(&self) -> usize {
        self.scratch.cap()
    }

    fn gather(&mut self, offset: u64, len: usize, at: usize) -> Result<()> {
        self.check()?;
        self.serve(offset, len);
        let src = range(self.map.as_deref().map_or(&[][..], |m| &m[..]), offset, len)?;
        self.scratch.range_mut(offset, at, len)?.copy_from_slice(src);
        self.check()?;
        self.stats.reads += 1;
        self.stats.bytes_read += len as u64;
        Ok(())
    }

    fn put(&mut self, at: usize, data: &[u8]) -> Result<()> {
        self.scratch.put(at, data)
    }

    fn joined(&self, len: usize) -> Result<&[u8]> {
        self.check()?;
        self.scratch.joined(len)
    }

    fn is_slice(&self) -> bool {
        true
    }

    fn stats(&self) -> IoStats {
        self.stats
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    fn temp(name: &str, bytes: &[u8]) -> std::path::PathBuf {
        let p = std::env::temp_dir().join(format!("mediaslice-std-{}-{name}", std::process::id()));
        std::fs::File::create(&p).unwrap().write_all(bytes).unwrap();
        p
    }

    #[test]
    fn serves_like_a_slice() {
        let p = temp("mmap", b"0123456789");
        let mut s = MmapSource::open(&p).unwrap();
        assert_eq!(s.len(), 10);
        assert_eq!(s.bytes(2, 3).unwrap(), b"234");
        let mut b = [0u8; 4];
        assert_eq!(s.read_at(8, &mut b).unwrap(), 2);
        assert_eq!(&b[..2], b"89");
        assert_eq!(s.read_at(u64::MAX, &mut b).unwrap(), 0);
        assert!(s.bytes(8, 3).unwrap_err().is_truncation());
        assert!(s.bytes(u64::MAX, 3).is_err());
        s.gather(0, 2, 0).unwrap();
        s.gather(5, 2, 2).unwrap();
        s.put(4, b"!").unwrap();
        assert_eq!(s.joined(5).unwrap(), b"0156!");
        assert!(s.is_slice());
        assert_eq!(s.stats().reads, 5);
        std::fs::remove_file(p).unwrap();
    }

    #[test]
    fn released_pages_read_back_the_same() {
        let data: Vec<u8> = (0..300_000u32).map(|i| (i * 13) as u8).collect();
        let p = temp("mmap-release", &data);
        let mut s = MmapSource::open(&p).unwrap();
        s.set_resident_limit(10_000);
        let mut crc = 0u32;
        for pass in 0..2 {
            let mut c = mediaslice::crc::Crc32::new();
            for off in (0..300_000u64).step_by(4096) {
                let n = 4096.min(300_000 - off as usize);
                c.update(s.bytes(off, n).unwrap());
            }
            if pass == 1 {
                assert_eq!(c.finish(), crc);
            }
            crc = c.finish();
        }
        assert_eq!(crc, mediaslice::crc::crc32(&data));
        std::fs::remove_file(p).unwrap();
    }

    /// Resident KiB of the mapping that starts at `ptr` (its `Rss:` line in
    /// /proc/self/smaps), so other tests and the test binary do not count.
    fn resident_kib(ptr: *const u8) -> u64 {
        let s = std::fs::read_to_string("/proc/self/smaps").unwrap();
        let want = ptr as usize;
        let mut inside = false;
        for l in s.lines() {
            if let Some((range, _)) = l.split_once(' ') {
                if let Some((a, _)) = range.split_once('-') {
                    if let Ok(a) = usize::from_str_radix(a, 16) {
                        if l.contains('-') && range.chars().all(|c| c.is_ascii_hexdigit() || c == '-') {
                            inside = a == want;
                            continue;
                        }
                    }
                }
            }
            if inside {
                if let Some(v) = l.strip_prefix("Rss:") {
                    return v.split_whitespace().next().unwrap().parse().unwrap();
                }
            }
        }
        panic!("mapping not found")
    }

    #[test]
    fn a_pass_over_a_large_file_keeps_few_pages_resident() {
        // 48 MiB, sparse (holes read as zeros through the page cache).
        let p = std::env::temp_dir().join(format!("mediaslice-std-{}-rss", std::process::id()));
        let f = File::create(&p).unwrap();
        f.set_len(48 << 20).unwrap();
        drop(f);
        let mut s = MmapSource::open(&p).unwrap();
        // A slice of the map kept by the caller across releases.
        let kept = s.data().as_ptr();
        let mut peak = 0;
        let mut sum = 0u64;
        for off in (0..48u64 << 20).step_by(64 << 10) {
            sum += s.bytes(off, 64 << 10).unwrap().iter().map(|&b| b as u64).sum::<u64>();
            if off % (1 << 20) == 0 {
                peak = peak.max(resident_kib(kept));
            }
        }
        assert_eq!(sum, 0);
        assert!(s.releases() >= 20, "{}", s.releases());
        // Default: released every 2 MiB served (widened to 2 MiB bounds);
        // without the release the whole 48 MiB would be resident.
        assert!(peak <= 6 << 10, "{peak} KiB resident");
        assert_eq!(s.data().as_ptr(), kept);
        assert_eq!(s.data()[1 << 20], 0);
        std::fs::remove_file(p).unwrap();
    }

    #[test]
    fn strided_and_interleaved_reads_stay_bounded() {
        let p = std::env::temp_dir().join(format!("mediaslice-std-{}-stride", std::process::id()));
        let f = File::create(&p).unwrap();
        f.set_len(96 << 20).unwrap();
        drop(f);
        // Chunk headers every 8 KiB (an index-less walk, a seek that
        // replays headers): few bytes served, every page touched.
        let mut s = MmapSource::open(&p).unwrap();
        let base = s.data().as_ptr();
        let mut peak = 0;
        for off in (0..48u64 << 20).step_by(8 << 10) {
            let _: [u8; 8] = s.array(off).unwrap();
            if off % (1 << 20) == 0 {
                peak = peak.max(resident_kib(base));
            }
        }
        assert!(peak <= 6 << 10, "strided: {peak} KiB resident");
        // Payload read on from the start while four table cursors advance
        // far away (an MP4 with its moov at the end): bounded, and not
        // released on every packet.
        let mut s = MmapSource::open(&p).unwrap();
        let base = s.data().as_ptr();
        let mut peak = 0;
        for (k, off) in (0..48u64 << 20).step_by(4096).enumerate() {
            let _ = s.bytes(off, 4096).unwrap();
            for t in 0..4u64 {
                let _: [u8; 4] = s.array((60 << 20) + t * (8 << 20) + 4 * k as u64).unwrap();
            }
            if off % (1 << 20) == 0 {
                peak = peak.max(resident_kib(base));
            }
        }
        assert!(peak <= 6 << 10, "interleaved: {peak} KiB resident");
        assert!(s.releases() <= 40, "{} releases", s.releases());
        std::fs::remove_file(p).unwrap();
    }

    #[test]
    fn empty_file_is_an_empty_slice() {
        let p = temp("empty", b"");
        let mut s = MmapSource::open(&p).unwrap();
        assert_eq!(s.len(), 0);
        assert!(s.data().is_empty());
        let mut b = [0u8; 4];
        assert_eq!(s.read_at(0, &mut b).unwrap(), 0);
        assert!(s.bytes(0, 1).is_err());
        assert!(mediaslice::Demuxer::open(s, None).is_err());
        std::fs::remove_file(p).unwrap();
    }

    #[test]
    fn directory_is_refused() {
        assert!(MmapSource::open(std::env::temp_dir()).is_err());
    }
}
