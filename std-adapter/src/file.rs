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

fn io_error(e: &std::io::Error, offset: u64) -> Error {
    Error::new(ErrorKind::Io(e.kind().into()), offset, "positioned read failed")
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
    /// Block size of the header cache.
    pub const DEFAULT_BLOCK: usize = 16 * 1024;
    /// Blocks in the header cache.
    pub const DEFAULT_BLOCKS: usize = 8;

    /// Opens the file at `path`.
    ///
    /// Errors: the file cannot be opened or is not a regular file.
    pub fn open(path: impl AsRef<Path>) -> std::io::Result<Self> {
        Self::from_file(File::open(path)?)
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
        let blocks = (0..blocks)
            .map(|_| Block {
                no: EMPTY,
                valid: 0,
                used: 0,
                data: vec![0u8; block_size].into_boxed_slice(),
            })
            .collect();
        Ok(FileSource {
            file,
            len: meta.len(),
            block_size,
            blocks,
            clock: 0,
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

    /// Returns the slot holding block `no`, reading it if needed.
    fn block(&mut self, no: u64) -> Result<usize> {
        self.clock += 1;
        let clock = self.clock;
        if let Some(i) = self.blocks.iter().position(|b| b.no == no) {
            if let Some(b) = self.blocks.get_mut(i) {
                b.used = clock;
            }
            return Ok(i);
        }
        let victim = self
            .blocks
            .iter()
            .enumerate()
            .min_by_key(|(_, b)| b.used)
            .map(|(i, _)| i)
            .ok_or(Error::capacity(0, "file cache has no blocks"))?;
        let start = no.saturating_mul(self.block_size as u64);
        let avail = self.len.saturating_sub(start).min(self.block_size as u64) as usize;
        let b = self
            .blocks
            .get_mut(victim)
            .ok_or(Error::capacity(start, "file cache has no blocks"))?;
        b.no = EMPTY;
        let n = pread(
            &self.file,
            &mut self.stats,
            start,
            b.data.get_mut(..avail).unwrap_or(&mut []),
        )?;
        b.no = no;
        b.valid = n;
        b.used = clock;
        Ok(victim)
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
                .ok_or(Error::new(ErrorKind::OffsetOverflow, offset, "range beyond u64"))?;
        if end > self.len {
            return Err(Error::truncated(self.len, "input ends before the requested range"));
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
                .ok_or(Error::truncated(offset, "file ended inside a cached block"));
        }
        let dst = self.scratch.range_mut(offset, 0, len)?;
        let n = pread(&self.file, &mut self.stats, offset, dst)?;
        if n < len {
            return Err(Error::truncated(offset.saturating_add(n as u64), "file ended early"));
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
                .ok_or(Error::new(ErrorKind::OffsetOverflow, offset, "range beyond u64"))?;
        if end > self.len {
            return Err(Error::truncated(self.len, "input ends before the requested range"));
        }
        let dst = self.scratch.range_mut(offset, at, len)?;
        let n = pread(&self.file, &mut self.stats, offset, dst)?;
        if n < len {
            return Err(Error::truncated(offset.saturating_add(n as u64), "file ended early"));
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
    fn no_cache_still_works() {
        let p = temp("file-nocache", b"abcdefgh");
        let mut s = FileSource::with_cache(File::open(&p).unwrap(), 4096, 0).unwrap();
        assert_eq!(s.bytes(2, 3).unwrap(), b"cde");
        assert_eq!(s.u32_be(0).unwrap(), u32::from_be_bytes(*b"abcd"));
        std::fs::remove_file(p).unwrap();
    }
}
