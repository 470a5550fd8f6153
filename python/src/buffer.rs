//! [`BufferSource`]: a [`Source`] that owns (or borrows) its bytes, so an
//! iterator kept by Python between calls can hold its demuxer. Reads borrow
//! the buffer as core's `SliceSource` does; packets split by their
//! container are joined in a scratch that grows on demand, up to
//! `slice_scratch_len` of the input.

use mediaslice::source::slice_scratch_len;
use mediaslice::{Error, ErrorKind, IoStats, Result, Source};

/// The bytes of a `bytes`, `bytearray` or `memoryview` source.
pub struct BufferSource<D> {
    data: D,
    scratch: Vec<u8>,
    stats: IoStats,
}

impl<D: AsRef<[u8]>> BufferSource<D> {
    /// A source over `data` with an empty scratch.
    pub fn new(data: D) -> Self {
        BufferSource {
            data,
            scratch: Vec::new(),
            stats: IoStats::default(),
        }
    }

    /// The whole input.
    pub fn data(&self) -> &[u8] {
        self.data.as_ref()
    }
}

/// `len` bytes of `scratch` from `at`, grown to reach them but never past
/// `cap`.
fn scratch_range(scratch: &mut Vec<u8>, cap: usize, offset: u64, at: usize, len: usize) -> Result<&mut [u8]> {
    let too_small = Error::new(
        ErrorKind::ScratchTooSmall,
        offset,
        &"python buffer source: a joined packet longer than the input",
    );
    let end = at.checked_add(len).filter(|&end| end <= cap).ok_or(too_small)?;
    if scratch.len() < end {
        scratch.resize(end, 0);
    }
    scratch.get_mut(at..end).ok_or(too_small)
}

/// `data[offset..offset + len]`, or the error a slice source gives.
fn range(data: &[u8], offset: u64, len: usize) -> Result<&[u8]> {
    let start = usize::try_from(offset)
        .map_err(|_| Error::new(ErrorKind::OffsetOverflow, offset, &"offset beyond the address space"))?;
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

impl<D: AsRef<[u8]>> Source for BufferSource<D> {
    fn len(&self) -> u64 {
        self.data().len() as u64
    }

    fn read_at(&mut self, offset: u64, buf: &mut [u8]) -> Result<usize> {
        let data = self.data.as_ref();
        let avail = usize::try_from(offset).ok().and_then(|s| data.get(s..)).unwrap_or(&[]);
        let n = avail.len().min(buf.len());
        if let (Some(dst), Some(src)) = (buf.get_mut(..n), avail.get(..n)) {
            dst.copy_from_slice(src);
        }
        self.stats.reads += 1;
        self.stats.bytes_read += n as u64;
        Ok(n)
    }

    fn bytes(&mut self, offset: u64, len: usize) -> Result<&[u8]> {
        self.stats.reads += 1;
        self.stats.bytes_read += len as u64;
        range(self.data.as_ref(), offset, len)
    }

    fn scratch_len(&self) -> usize {
        slice_scratch_len(self.data().len())
    }

    fn gather(&mut self, offset: u64, len: usize, at: usize) -> Result<()> {
        let cap = slice_scratch_len(self.data().len());
        let src = range(self.data.as_ref(), offset, len)?;
        scratch_range(&mut self.scratch, cap, offset, at, len)?.copy_from_slice(src);
        self.stats.reads += 1;
        self.stats.bytes_read += len as u64;
        Ok(())
    }

    fn put(&mut self, at: usize, data: &[u8]) -> Result<()> {
        let cap = slice_scratch_len(self.data().len());
        scratch_range(&mut self.scratch, cap, 0, at, data.len())?.copy_from_slice(data);
        Ok(())
    }

    fn joined(&self, len: usize) -> Result<&[u8]> {
        self.scratch.get(..len).ok_or(Error::new(
            ErrorKind::ScratchTooSmall,
            0,
            &"joined length exceeds scratch",
        ))
    }

    fn is_slice(&self) -> bool {
        true
    }

    fn stats(&self) -> IoStats {
        self.stats
    }
}
