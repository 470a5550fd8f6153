//! [`FileSource`]: positioned reads on a file, counted.

use crate::scratch::Scratch;
use mediaslice::{Error, ErrorKind, IoStats, Limits, Result, Source};
use std::fs::File;
use std::os::unix::fs::FileExt;
use std::path::Path;

/// Positioned reads (`pread`) on a [`std::fs::File`]: no seeks, no shared file
/// position, and every read is a real system call that [`Source::stats`]
/// counts (`reads` = `pread` calls, `bytes_read` = bytes they returned).
///
/// * Small reads (box and chunk headers, table entries, short tags) go
///   through a fixed cache of blocks ([`FileSource::DEFAULT_BLOCK`] bytes
///   each, [`FileSource::DEFAULT_BLOCKS`] of them, least recently used out),
///   so a table cursor costs one read per block, not one per entry.
/// * A miss reads one block, so a probe that looks at a few places reads a
///   few small blocks. A miss at the block right after the previous read
///   (reading on through a header or a table) reads ahead: 1, 2, 4 ... up
///   to [`FileSource::DEFAULT_READ_AHEAD`] more blocks in the same `pread`.
/// * Reads too large for the cache, and packet payloads, are read straight
///   into an owned scratch buffer that grows on demand up to
///   [`Limits::max_packet`] bytes ([`FileSource::set_scratch_limit`]). A
///   payload borrows the scratch until the next call, as with
///   [`mediaslice::ReaderSource`].
///
/// Memory is the cache plus the largest packet; it does not grow with the
/// file.
#[derive(Debug)]
pub struct FileSource {
    file: File,
    len: u64,
    block_size: usize,
    blocks: Vec<Block>,
    clock: u64,
    /// Block after the end of the last cache fill (for read-ahead).
    next_block: u64,
    /// Current read-ahead, in blocks.
    ahead: usize,
    max_read_ahead: usize,
    /// One read-ahead run, before it is spread over the blocks (allocated
    /// on first use).
    run: Vec<u8>,
    scratch: Scratch,
    stats: IoStats,
}

#[derive(Debug)]
struct Block {
    /// Block number (offset / block size), or `EMPTY`.
    no: u64,
    valid: usize,
    used: u64,
    data: Box<[u8]>,
}

const EMPTY: u64 = u64::MAX;

/// Opens `path` for reading if it is a regular file.
///
/// The open is non-blocking (`O_NONBLOCK`, cleared again afterwards): a
/// FIFO with no writer would otherwise block `open(2)` until one appears.
/// The file type is then checked on the open handle (`fstat`), so what is
/// checked is what is read.
///
/// Errors: the path cannot be opened, or is not a regular file
/// (`InvalidInput`, "not a regular file": a directory, a FIFO with or
/// without a writer, a device, a socket).
pub fn open_regular_file(path: impl AsRef<Path>) -> std::io::Result<File> {
    use std::os::unix::fs::OpenOptionsExt;
    use std::os::unix::io::AsRawFd;
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK)
        .open(path)?;
    if !file.metadata()?.is_file() {
        return Err(std::io::Error::new(
            std::io::ErrorKind::InvalidInput,
            "not a regular file",
        ));
    }
    let fd = file.as_raw_fd();
    // SAFETY: `fd` is the open descriptor `file` owns for this whole call;
    // F_GETFL and F_SETFL only read and set its status flags.
    let cleared = unsafe {
        let flags = libc::fcntl(fd, libc::F_GETFL);
        flags >= 0 && libc::fcntl(fd, libc::F_SETFL, flags & !libc::O_NONBLOCK) == 0
    };
    if !cleared {
        return Err(std::io::Error::last_os_error());
    }
    Ok(file)
}

fn io_error(e: &std::io::Error, offset: u64) -> Error {
    Error::new(ErrorKind::Io(e.kind().into()), offset, &"positioned read failed")
}

/// Reads into `buf` at `offset` until it is full or the file ends; returns
/// the bytes read. Every `pread` is counted.
fn pread(file: &File, stats: &mut IoStats, offset: u64, buf: &mut [u8]) -> Result<usize> {
    let mut done = 0usize;
    while done < buf.len() {
        let at = offset.saturating_add(done as u64);
        let rest = buf.get_mut(done..).unwrap_or(&mut []);
        match file.read_at(rest, at) {
            Ok(0) => break,
            Ok(n) => {
                stats.reads += 1;
                stats.bytes_read += n as u64;
                done += n;
            }
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => {
                stats.reads += 1;
                return Err(io_error(&e, at));
            }
        }
    }
    Ok(done)
}

impl FileSource {
    /// Block size of the header cache: 4 KiB (a page), so a probe that
    /// looks at a handful of places reads a handful of pages.
    pub const DEFAULT_BLOCK: usize = 4 * 1024;
    /// Blocks in the header cache (128 KiB in all).
    pub const DEFAULT_BLOCKS: usize = 32;
    /// Most blocks read ahead in one `pread` while reading on (64 KiB with
    /// the default block; at most half the cache).
    pub const DEFAULT_READ_AHEAD: usize = 15;

    /// Opens the file at `path`.
    ///
    /// Errors: the file cannot be opened or is not a regular file (see
    /// [`open_regular_file`]: a FIFO does not block the open).
    pub fn open(path: impl AsRef<Path>) -> std::io::Result<Self> {
        Self::from_file(open_regular_file(path)?)
    }

    /// Takes an open file, with the default cache.
    ///
    /// Errors: the file is not a regular file.
    pub fn from_file(file: File) -> std::io::Result<Self> {
        Self::with_cache(file, Self::DEFAULT_BLOCK, Self::DEFAULT_BLOCKS)
    }

    /// Takes an open file, with a cache of `blocks` blocks of `block_size`
    /// bytes (`blocks` may be 0: every read is then a system call).
    ///
    /// Errors: the file is not a regular file, or `block_size` is 0.
    pub fn with_cache(file: File, block_size: usize, blocks: usize) -> std::io::Result<Self> {
        let meta = file.metadata()?;
        if !meta.is_file() {
            return Err(std::io::Error::new(
                std::io::ErrorKind::InvalidInput,
                "not a regular file",
            ));
        }
        if block_size == 0 {
            return Err(std::io::Error::new(std::io::ErrorKind::InvalidInput, "block size 0"));
        }
        let blocks: Vec<Block> = (0..blocks)
            .map(|_| Block {
                no: EMPTY,
                valid: 0,
                used: 0,
                data: vec![0u8; block_size].into_boxed_slice(),
            })
            .collect();
        let max_read_ahead = Self::DEFAULT_READ_AHEAD.min((blocks.len() / 2).saturating_sub(1));
        Ok(FileSource {
            file,
            len: meta.len(),
            block_size,
            blocks,
            clock: 0,
            next_block: EMPTY,
            ahead: 0,
            max_read_ahead,
            run: Vec::new(),
            scratch: Scratch::new(Limits::default().max_packet as usize),
            stats: IoStats::default(),
        })
    }

    /// Sets the most bytes the payload scratch may grow to.
    pub fn set_scratch_limit(&mut self, bytes: usize) {
        self.scratch.set_cap(bytes);
    }

    /// Bytes of scratch allocated so far.
    pub fn scratch_allocated(&self) -> usize {
        self.scratch.allocated()
    }

    /// Gives back the file.
    pub fn into_file(self) -> File {
        self.file
    }

    /// Sets the most blocks read ahead in one `pread` (0: none; capped
    /// at half the cache).
    pub fn set_read_ahead(&mut self, blocks: usize) {
        self.max_read_ahead = blocks.min((self.blocks.len() / 2).saturating_sub(1));
    }

    fn slot_of(&self, no: u64) -> Option<usize> {
        self.blocks.iter().position(|b| b.no == no)
    }

    fn victim(&self) -> Result<usize> {
        self.blocks
            .iter()
            .enumerate()
            .min_by_key(|(_, b)| b.used)
            .map(|(i, _)| i)
            .ok_or(Error::capacity(0, &"file cache has no blocks"))
    }

    /// Returns the slot holding block `no`, reading it if needed (with
    /// read-ahead when the miss continues the previous fill).
    fn block(&mut self, no: u64) -> Result<usize> {
        self.clock += 1;
        let clock = self.clock;
        if let Some(i) = self.slot_of(no) {
            if let Some(b) = self.blocks.get_mut(i) {
                b.used = clock;
            }
            if no == self.next_block {
                // Reading on through a cached block keeps the read-ahead.
                self.next_block = no + 1;
            }
            return Ok(i);
        }
        let bs = self.block_size as u64;
        self.ahead = if no == self.next_block {
            (self.ahead * 2)
                .clamp(1, self.max_read_ahead.max(1))
                .min(self.max_read_ahead)
        } else {
            0
        };
        let last_block = self.len.saturating_sub(1) / bs;
        let mut count = 1u64;
        while count <= self.ahead as u64 && no + count <= last_block && self.slot_of(no + count).is_none() {
            count += 1;
        }
        let start = no.saturating_mul(bs);
        let want = self.len.saturating_sub(start).min(count * bs) as usize;
        if count == 1 {
            // One block: straight into its slot.
            let victim = self.victim()?;
            let b = self
                .blocks
                .get_mut(victim)
                .ok_or(Error::capacity(start, &"file cache has no blocks"))?;
            b.no = EMPTY;
            let n = pread(
                &self.file,
                &mut self.stats,
                start,
                b.data.get_mut(..want).unwrap_or(&mut []),
            )?;
            b.no = no;
            b.valid = n;
            b.used = clock;
            self.next_block = no + 1;
            return Ok(victim);
        }
        // A run: one pread, then spread over the blocks.
        if self.run.len() < want {
            self.run.resize(want, 0);
        }
        let n = pread(
            &self.file,
            &mut self.stats,
            start,
            self.run.get_mut(..want).unwrap_or(&mut []),
        )?;
        let mut first = None;
        for k in 0..count {
            let from = (k * bs) as usize;
            if from >= n && k > 0 {
                break;
            }
            let victim = self.victim()?;
            self.clock += 1;
            let used = self.clock;
            let src = self.run.get(from..n.min(from + self.block_size)).unwrap_or(&[]);
            let b = self
                .blocks
                .get_mut(victim)
                .ok_or(Error::capacity(start, &"file cache has no blocks"))?;
            if let Some(d) = b.data.get_mut(..src.len()) {
                d.copy_from_slice(src);
            }
            b.no = no + k;
            b.valid = src.len();
            b.used = used;
            first.get_or_insert(victim);
        }
        self.next_block = no + count;
        first.ok_or(Error::capacity(start, &"file cache has no blocks"))
    }

    /// Whether `offset..offset+len` is small and inside one cache block.
    fn cacheable(&self, offset: u64, len: usize) -> bool {
        !self.blocks.is_empty()
            && len <= self.block_size / 4
            && (offset % self.block_size as u64) as usize + len <= self.block_size
    }
}

impl Source for FileSource {
    fn len(&self) -> u64 {
        self.len
    }

    fn read_at(&mut self, offset: u64, buf: &mut [u8]) -> Result<usize> {
        if offset >= self.len {
            return Ok(0);
        }
        let want = (self.len - offset).min(buf.len() as u64) as usize;
        let buf = buf.get_mut(..want).unwrap_or(&mut []);
        if want > self.block_size || self.blocks.is_empty() {
            return pread(&self.file, &mut self.stats, offset, buf);
        }
        let bs = self.block_size as u64;
        let mut done = 0usize;
        while done < want {
            let at = offset + done as u64;
            let slot = self.block(at / bs)?;
            let within = (at % bs) as usize;
            let src = self
                .blocks
                .get(slot)
                .and_then(|b| b.data.get(within..b.valid))
                .unwrap_or(&[]);
            if src.is_empty() {
                // The file shrank under us: report what there is.
                break;
            }
            let n = src.len().min(want - done);
            if let (Some(d), Some(s)) = (buf.get_mut(done..done + n), src.get(..n)) {
                d.copy_from_slice(s);
            }
            done += n;
        }
        Ok(done)
    }

    fn bytes(&mut self, offset: u64, len: usize) -> Result<&[u8]> {
        let end =
            offset
                .checked_add(len as u64)
                .ok_or(Error::new(ErrorKind::OffsetOverflow, offset, &"range beyond u64"))?;
        if end > self.len {
            return Err(Error::truncated(self.len, &"input ends before the requested range"));
        }
        if self.cacheable(offset, len) {
            let bs = self.block_size as u64;
            let slot = self.block(offset / bs)?;
            let within = (offset % bs) as usize;
            return self
                .blocks
                .get(slot)
                .and_then(|b| b.data.get(..b.valid))
                .and_then(|d| d.get(within..within + len))
                .ok_or(Error::truncated(offset, &"file ended inside a cached block"));
        }
        let dst = self.scratch.range_mut(offset, 0, len)?;
        let n = pread(&self.file, &mut self.stats, offset, dst)?;
        if n < len {
            return Err(Error::truncated(offset.saturating_add(n as u64), &"file ended early"));
        }
        self.scratch.joined(len)
    }

    fn scratch_len(&self) -> usize {
        self.scratch.cap()
    }

    fn gather(&mut self, offset: u64, len: usize, at: usize) -> Result<()> {
        let end =
            offset
                .checked_add(len as u64)
                .ok_or(Error::new(ErrorKind::OffsetOverflow, offset, &"range beyond u64"))?;
        if end > self.len {
            return Err(Error::truncated(self.len, &"input ends before the requested range"));
        }
        let dst = self.scratch.range_mut(offset, at, len)?;
        let n = pread(&self.file, &mut self.stats, offset, dst)?;
        if n < len {
            return Err(Error::truncated(offset.saturating_add(n as u64), &"file ended early"));
        }
        Ok(())
    }

    fn put(&mut self, at: usize, data: &[u8]) -> Result<()> {
        self.scratch.put(at, data)
    }

    fn joined(&self, len: usize) -> Result<&[u8]> {
        self.scratch.joined(len)
    }

    fn is_slice(&self) -> bool {
        false
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
    fn small_reads_are_cached_large_reads_go_straight() {
        let data: Vec<u8> = (0..100_000u32).map(|i| (i * 7) as u8).collect();
        let p = temp("file-cache", &data);
        let mut s = FileSource::with_cache(File::open(&p).unwrap(), 4096, 2).unwrap();
        assert_eq!(s.len(), 100_000);
        // Many small reads in one block: one pread.
        for i in 0..100u64 {
            let b: [u8; 8] = s.array(i * 8).unwrap();
            assert_eq!(&b[..], &data[i as usize * 8..i as usize * 8 + 8]);
        }
        assert_eq!(s.stats().reads, 1);
        assert_eq!(s.stats().bytes_read, 4096);
        // A read spanning two blocks.
        let mut b = [0u8; 100];
        assert_eq!(s.read_at(4050, &mut b).unwrap(), 100);
        assert_eq!(&b[..], &data[4050..4150]);
        assert_eq!(s.stats().reads, 2);
        // A payload: straight into scratch.
        assert_eq!(s.bytes(10_000, 20_000).unwrap(), &data[10_000..30_000]);
        assert_eq!(s.stats().reads, 3);
        // Short read at the end.
        let mut b = [0u8; 10];
        assert_eq!(s.read_at(99_995, &mut b).unwrap(), 5);
        assert_eq!(s.read_at(100_000, &mut b).unwrap(), 0);
        assert!(s.bytes(99_995, 10).unwrap_err().is_truncation());
        // Joining.
        s.gather(0, 3, 0).unwrap();
        s.gather(50_000, 3, 3).unwrap();
        s.put(6, b"xy").unwrap();
        let j = s.joined(8).unwrap();
        assert_eq!(&j[..3], &data[..3]);
        assert_eq!(&j[3..6], &data[50_000..50_003]);
        assert_eq!(&j[6..], b"xy");
        s.set_scratch_limit(1000);
        assert_eq!(s.bytes(0, 2000).unwrap_err().kind(), ErrorKind::ScratchTooSmall);
        std::fs::remove_file(p).unwrap();
    }

    #[test]
    fn reading_on_reads_ahead_and_jumps_read_one_block() {
        let data: Vec<u8> = (0..400_000u32).map(|i| (i * 31 + i / 7) as u8).collect();
        let p = temp("file-ahead", &data);
        let mut s = FileSource::open(&p).unwrap();
        // Scattered small reads: one default block each.
        for off in [0u64, 100_000, 300_000] {
            let b: [u8; 8] = s.array(off).unwrap();
            assert_eq!(&b[..], &data[off as usize..off as usize + 8]);
        }
        assert_eq!(s.stats().reads, 3);
        assert_eq!(s.stats().bytes_read, 3 * FileSource::DEFAULT_BLOCK as u64);
        // Reading on from 0 through 200 KB, in small steps: read-ahead grows
        // to 16 blocks per pread, and nothing is read twice.
        let before = s.stats();
        for off in (8..200_000u64).step_by(100) {
            let b: [u8; 8] = s.array(off).unwrap();
            assert_eq!(&b[..], &data[off as usize..off as usize + 8]);
        }
        let reads = s.stats().reads - before.reads;
        let bytes = s.stats().bytes_read - before.bytes_read;
        assert!(reads <= 9, "{reads} preads for 49 blocks");
        assert!(bytes <= 200_000 + 16 * 4096, "{bytes}");
        // The end of the file inside a run.
        let mut b = [0u8; 16];
        assert_eq!(s.read_at(399_990, &mut b).unwrap(), 10);
        assert_eq!(&b[..10], &data[399_990..]);
        std::fs::remove_file(p).unwrap();
    }

    #[test]
    fn no_cache_still_works() {
        let p = temp("file-nocache", b"abcdefgh");
        let mut s = FileSource::with_cache(File::open(&p).unwrap(), 4096, 0).unwrap();
        assert_eq!(s.bytes(2, 3).unwrap(), b"cde");
        assert_eq!(s.u32_be(0).unwrap(), u32::from_be_bytes(*b"abcd"));
        std::fs::remove_file(p).unwrap();
    }
}
