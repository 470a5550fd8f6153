//! Sources: where a demuxer's bytes come from.
//!
//! Every parser in this crate reads through the [`Source`] trait, by `u64`
//! offset. Two implementations live here:
//!
//! * [`SliceSource`]: the whole input as one `&[u8]` (an mmap, flash, a
//!   buffer). [`Source::bytes`] returns sub-slices of the input: zero copy.
//! * [`ReaderSource`]: any [`embedded_io::Read`] + [`embedded_io::Seek`], with
//!   a caller-supplied scratch buffer for packet payloads and a small fixed
//!   cache of blocks for the header and table reads that parsers make.
//!
//! Other sources (a sliding mmap window, positioned reads, HTTP ranges) are
//! built on the same trait in `mediaslice-std`.
//!
//! Packets that a container splits across units (an Ogg packet over pages, a
//! PES payload over TS packets) are joined in scratch with [`Source::gather`]
//! and [`Source::put`], then borrowed with [`Source::joined`]. In slice mode
//! that scratch is optional and supplied with [`SliceSource::with_scratch`].

use crate::error::{Error, ErrorKind, Result};
use embedded_io::{Read, Seek, SeekFrom};
use zerocopy::{FromBytes, Immutable, KnownLayout, Unaligned};

/// The largest fixed layout [`Source::read`] reads (bytes): every header
/// struct in this crate is smaller.
#[doc(hidden)]
pub const MAX_LAYOUT_READ: usize = 256;

/// Bytes and calls a source has served, counted by the source itself.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct IoStats {
    /// Bytes delivered from the underlying input (for a reader: bytes read
    /// from it; for a slice: bytes borrowed or copied out of it).
    pub bytes_read: u64,
    /// Calls to the underlying reader (for a slice: accesses).
    pub reads: u64,
    /// Seeks issued to the underlying reader (always 0 for a slice).
    pub seeks: u64,
}

/// Random access to an input by `u64` offset.
///
/// The borrow returned by [`Source::bytes`] and [`Source::joined`] lives until
/// the next call on the source; this is what lets one parser serve a slice (a
/// borrow of the input) and a reader (a borrow of scratch) alike.
pub trait Source {
    /// Length of the input in bytes.
    fn len(&self) -> u64;

    /// Whether the input is empty.
    fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Copies the bytes at `offset` into `buf`. Returns how many were copied,
    /// which is less than `buf.len()` only at the end of the input.
    ///
    /// Errors: an I/O error of the underlying reader.
    fn read_at(&mut self, offset: u64, buf: &mut [u8]) -> Result<usize>;

    /// Borrows exactly `len` bytes at `offset`.
    ///
    /// Errors: `Truncated` when the input ends before `offset + len`;
    /// `ScratchTooSmall` when a reader's scratch cannot hold `len` bytes;
    /// `OffsetOverflow` when the offset is beyond the address space.
    fn bytes(&mut self, offset: u64, len: usize) -> Result<&[u8]>;

    /// Borrows exactly `len` bytes at `offset` as [`Source::bytes`] does,
    /// and, when the source borrows the input itself ([`Source::is_slice`])
    /// and `N` more bytes follow the range, also returns a copy of those
    /// `N` bytes (a parser's look at the next header without a second call).
    /// The counters are those of one `bytes` call of the range served:
    /// `len + N` bytes when the copy is returned, `len` otherwise.
    ///
    /// Errors: those of [`Source::bytes`].
    #[doc(hidden)]
    fn bytes_and_next<const N: usize>(&mut self, offset: u64, len: usize) -> Result<(&[u8], Option<[u8; N]>)> {
        let wide = len
            .checked_add(N)
            .filter(|&w| self.is_slice() && offset.checked_add(w as u64).is_some_and(|end| end <= self.len()));
        let Some(wide) = wide else {
            return Ok((self.bytes(offset, len)?, None));
        };
        let both = self.bytes(offset, wide)?;
        let (data, next) = both.split_at_checked(len).unwrap_or((both, &[]));
        Ok((data, <[u8; N]>::try_from(next).ok()))
    }

    /// Capacity of the scratch available to [`Source::gather`].
    fn scratch_len(&self) -> usize;

    /// Copies `len` input bytes at `offset` into scratch at `at`.
    ///
    /// Errors: `ScratchTooSmall` when `at + len` exceeds the scratch;
    /// `Truncated` when the input ends early.
    fn gather(&mut self, offset: u64, len: usize, at: usize) -> Result<()>;

    /// Writes `data` into scratch at `at` (for bytes a container stripped,
    /// such as Matroska header stripping).
    fn put(&mut self, at: usize, data: &[u8]) -> Result<()>;

    /// Borrows the first `len` bytes of scratch.
    fn joined(&self, len: usize) -> Result<&[u8]>;

    /// Whether [`Source::bytes`] borrows the input itself, so a packet's
    /// `pos` and size also name it in the caller's slice.
    fn is_slice(&self) -> bool;

    /// The bytes and calls served so far.
    fn stats(&self) -> IoStats;

    /// Reads exactly `buf.len()` bytes at `offset`.
    ///
    /// Errors: `Truncated` when the input ends early.
    fn read_exact_at(&mut self, offset: u64, buf: &mut [u8]) -> Result<()> {
        let n = self.read_at(offset, buf)?;
        if n == buf.len() {
            Ok(())
        } else {
            Err(Error::truncated(
                offset.saturating_add(n as u64),
                &"input ends inside a structure",
            ))
        }
    }

    /// Reads a fixed-size array at `offset` (a parser helper).
    #[doc(hidden)]
    fn array<const N: usize>(&mut self, offset: u64) -> Result<[u8; N]> {
        let mut b = [0u8; N];
        self.read_exact_at(offset, &mut b)?;
        Ok(b)
    }

    /// Reads a fixed layout `T` (a zerocopy struct of at most
    /// [`MAX_LAYOUT_READ`] bytes) at `offset`: one call that says what it
    /// reads, in place of a hand-sized array.
    ///
    /// Errors: `Truncated` when the input ends inside it;
    /// `InvalidArgument` when `T` is larger than [`MAX_LAYOUT_READ`].
    #[doc(hidden)]
    fn read<T: FromBytes + KnownLayout + Immutable + Unaligned>(&mut self, offset: u64) -> Result<T>
    where
        Self: Sized,
    {
        // A buffer of the size class of `T` (the branch is decided at
        // compile time), so a 16-byte header does not zero 256 bytes.
        let n = core::mem::size_of::<T>();
        if n <= 16 {
            read_layout::<T, Self, 16>(self, offset)
        } else if n <= 64 {
            read_layout::<T, Self, 64>(self, offset)
        } else {
            read_layout::<T, Self, MAX_LAYOUT_READ>(self, offset)
        }
    }

    /// Reads a big-endian `u32` at `offset` (a parser helper).
    #[doc(hidden)]
    fn u32_be(&mut self, offset: u64) -> Result<u32> {
        Ok(u32::from_be_bytes(self.array(offset)?))
    }

    /// Reads a big-endian `u64` at `offset` (a parser helper).
    #[doc(hidden)]
    fn u64_be(&mut self, offset: u64) -> Result<u64> {
        Ok(u64::from_be_bytes(self.array(offset)?))
    }
}

/// [`Source::read`] through a stack buffer of `N` bytes.
#[inline]
fn read_layout<T, S, const N: usize>(src: &mut S, offset: u64) -> Result<T>
where
    T: FromBytes + KnownLayout + Immutable + Unaligned,
    S: Source,
{
    let mut buf = [0u8; N];
    let b = buf.get_mut(..core::mem::size_of::<T>()).ok_or(Error::new(
        ErrorKind::InvalidArgument,
        offset,
        &"source read: layout larger than MAX_LAYOUT_READ",
    ))?;
    src.read_exact_at(offset, b)?;
    T::read_from_bytes(b).map_err(|_| Error::new(ErrorKind::InvalidArgument, offset, &"source read: layout size"))
}

fn to_usize(offset: u64) -> Result<usize> {
    usize::try_from(offset)
        .map_err(|_| Error::new(ErrorKind::OffsetOverflow, offset, &"offset beyond the address space"))
}

/// The whole input as one slice: packets borrow it with no copy.
pub struct SliceSource<'a> {
    data: &'a [u8],
    scratch: &'a mut [u8],
    stats: IoStats,
}

/// Scratch that lets a [`SliceSource`] over an input of `input_len` bytes
/// join every packet of every format: the input's size plus 64 KiB (the
/// MPEG-TS/PS carry slots). No joined packet can be larger than the input.
///
/// ```
/// use mediaslice::{source::slice_scratch_len, Demuxer, SliceSource};
/// # fn run(bytes: &[u8]) -> mediaslice::Result<()> {
/// let mut scratch = vec![0u8; slice_scratch_len(bytes.len())];
/// let mut demuxer = Demuxer::open(SliceSource::with_scratch(bytes, &mut scratch), None)?;
/// while let Some(packet) = demuxer.next_packet()? {
///     let _ = packet.data; // the input's bytes, or joined in the scratch
/// }
/// # Ok(()) }
/// ```
pub const fn slice_scratch_len(input_len: usize) -> usize {
    input_len.saturating_add(64 << 10)
}

impl<'a> SliceSource<'a> {
    /// A source over `data`, with no scratch: enough for every container
    /// whose packets are contiguous (MP4, Matroska, AVI, WAV, FLAC, ...),
    /// not for those that split packets across their units (MPEG-TS and
    /// PS, Ogg pages, ASF): give those [`SliceSource::with_scratch`] of
    /// [`slice_scratch_len`] bytes, or a `ScratchTooSmall` error follows.
    pub fn new(data: &'a [u8]) -> Self {
        SliceSource {
            data,
            scratch: &mut [],
            stats: IoStats::default(),
        }
    }

    /// A source over `data` with `scratch` for packets that must be joined.
    pub fn with_scratch(data: &'a [u8], scratch: &'a mut [u8]) -> Self {
        SliceSource {
            data,
            scratch,
            stats: IoStats::default(),
        }
    }

    /// The input slice.
    pub fn data(&self) -> &'a [u8] {
        self.data
    }

    fn range(&self, offset: u64, len: usize) -> Result<&'a [u8]> {
        let start = to_usize(offset)?;
        let end = start.checked_add(len).ok_or(Error::new(
            ErrorKind::OffsetOverflow,
            offset,
            &"range beyond the address space",
        ))?;
        self.data.get(start..end).ok_or(Error::truncated(
            self.data.len() as u64,
            &"input ends before the requested range",
        ))
    }
}

impl Source for SliceSource<'_> {
    fn len(&self) -> u64 {
        self.data.len() as u64
    }

    /// A fixed-size read straight from the slice (the hot path of table
    /// cursors); anything unusual falls back to `read_exact_at`, so errors
    /// and counters are the same.
    fn array<const N: usize>(&mut self, offset: u64) -> Result<[u8; N]> {
        let fast = usize::try_from(offset)
            .ok()
            .and_then(|s| self.data.get(s..s.checked_add(N)?))
            .and_then(|b| <[u8; N]>::try_from(b).ok());
        if let Some(a) = fast {
            self.stats.reads += 1;
            self.stats.bytes_read += N as u64;
            return Ok(a);
        }
        let mut b = [0u8; N];
        self.read_exact_at(offset, &mut b)?;
        Ok(b)
    }

    fn read_at(&mut self, offset: u64, buf: &mut [u8]) -> Result<usize> {
        let start = match usize::try_from(offset) {
            Ok(s) if s < self.data.len() => s,
            _ => return Ok(0),
        };
        let avail = self.data.get(start..).unwrap_or(&[]);
        let n = avail.len().min(buf.len());
        if let (Some(dst), Some(src)) = (buf.get_mut(..n), avail.get(..n)) {
            dst.copy_from_slice(src);
        }
        self.stats.reads += 1;
        self.stats.bytes_read += n as u64;
        Ok(n)
    }

    fn bytes(&mut self, offset: u64, len: usize) -> Result<&[u8]> {
        let r = self.range(offset, len)?;
        self.stats.reads += 1;
        self.stats.bytes_read += len as u64;
        Ok(r)
    }

    /// Both borrows straight from the slice with one range check, counted
    /// as the default's one `bytes` call of `len + N` bytes; anything
    /// unusual (the range or the `N` bytes past the input) falls back to
    /// `bytes` of the range alone, as the default does.
    #[inline]
    fn bytes_and_next<const N: usize>(&mut self, offset: u64, len: usize) -> Result<(&[u8], Option<[u8; N]>)> {
        let data = self.data;
        let fast = usize::try_from(offset).ok().and_then(|s| {
            let wide = len.checked_add(N)?;
            let both = data.get(s..s.checked_add(wide)?)?;
            let (frame, next) = both.split_at_checked(len)?;
            Some((frame, <[u8; N]>::try_from(next).ok()?, wide))
        });
        if let Some((frame, next, wide)) = fast {
            self.stats.reads += 1;
            self.stats.bytes_read += wide as u64;
            return Ok((frame, Some(next)));
        }
        Ok((self.bytes(offset, len)?, None))
    }

    fn scratch_len(&self) -> usize {
        self.scratch.len()
    }

    fn gather(&mut self, offset: u64, len: usize, at: usize) -> Result<()> {
        let src = self.range(offset, len)?;
        let dst = at
            .checked_add(len)
            .and_then(|end| self.scratch.get_mut(at..end))
            .ok_or(Error::new(
                ErrorKind::ScratchTooSmall,
                offset,
                &"scratch too small to join a packet (source::slice_scratch_len)",
            ))?;
        dst.copy_from_slice(src);
        self.stats.reads += 1;
        self.stats.bytes_read += len as u64;
        Ok(())
    }

    fn put(&mut self, at: usize, data: &[u8]) -> Result<()> {
        put_into(self.scratch, at, data)
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

fn put_into(scratch: &mut [u8], at: usize, data: &[u8]) -> Result<()> {
    let dst = at
        .checked_add(data.len())
        .and_then(|end| scratch.get_mut(at..end))
        .ok_or(Error::new(
            ErrorKind::ScratchTooSmall,
            0,
            &"scratch too small to join a packet",
        ))?;
    dst.copy_from_slice(data);
    Ok(())
}

/// Size in bytes of one block of a [`ReaderSource`]'s header cache.
pub const CACHE_BLOCK: usize = 512;

/// A reader with caller-supplied scratch: packets borrow the scratch.
///
/// Small reads (box headers, sample-table entries) go through a cache of
/// `BLOCKS` blocks of [`CACHE_BLOCK`] bytes, least recently used first out,
/// so table cursors that advance in step (`stsz`, `stco`, `stts` and the
/// rest) cost one read per block, not one per entry. Packet payloads are read
/// straight into the scratch, which must be at least as large as the largest
/// packet (see `Demuxer::max_packet_size`).
pub struct ReaderSource<R, B, const BLOCKS: usize = DEFAULT_CACHE_BLOCKS> {
    reader: R,
    scratch: B,
    len: u64,
    pos: Option<u64>,
    blocks: [[u8; CACHE_BLOCK]; BLOCKS],
    tags: [u64; BLOCKS],
    valid: [u16; BLOCKS],
    used: [u32; BLOCKS],
    clock: u32,
    stats: IoStats,
}

const NO_BLOCK: u64 = u64::MAX;

/// Blocks of the header cache of a [`ReaderSource`] made by
/// [`ReaderSource::new`] (4 KiB).
pub const DEFAULT_CACHE_BLOCKS: usize = 8;

impl<R: Read + Seek, B: AsRef<[u8]> + AsMut<[u8]>> ReaderSource<R, B, DEFAULT_CACHE_BLOCKS> {
    /// Wraps `reader`, finding its length with one seek to the end, with a
    /// header cache of [`DEFAULT_CACHE_BLOCKS`] blocks. (Its type needs no
    /// annotation; [`ReaderSource::with_blocks`] chooses another cache.)
    ///
    /// Errors: the reader's own error, as `Io`.
    pub fn new(reader: R, scratch: B) -> Result<Self> {
        Self::with_blocks(reader, scratch)
    }

    /// Wraps `reader` whose length is already known, with no seek, with a
    /// header cache of [`DEFAULT_CACHE_BLOCKS`] blocks.
    pub fn with_known_len(reader: R, scratch: B, len: u64) -> Self {
        Self::with_blocks_and_len(reader, scratch, len)
    }
}

impl<R: Read + Seek, B: AsRef<[u8]> + AsMut<[u8]>, const BLOCKS: usize> ReaderSource<R, B, BLOCKS> {
    /// [`ReaderSource::new`] with a header cache of `BLOCKS` blocks of
    /// [`CACHE_BLOCK`] bytes (`ReaderSource::<_, _, 2>::with_blocks(r, s)`
    /// for 1 KiB).
    ///
    /// Errors: the reader's own error, as `Io`.
    pub fn with_blocks(mut reader: R, scratch: B) -> Result<Self> {
        let len = reader.seek(SeekFrom::End(0)).map_err(|e| io_error(e, 0))?;
        Ok(Self::with_len(reader, scratch, len, None))
    }

    /// [`ReaderSource::with_known_len`] with a header cache of `BLOCKS`
    /// blocks.
    pub fn with_blocks_and_len(reader: R, scratch: B, len: u64) -> Self {
        Self::with_len(reader, scratch, len, None)
    }

    fn with_len(reader: R, scratch: B, len: u64, pos: Option<u64>) -> Self {
        ReaderSource {
            reader,
            scratch,
            len,
            pos,
            blocks: [[0; CACHE_BLOCK]; BLOCKS],
            tags: [NO_BLOCK; BLOCKS],
            valid: [0; BLOCKS],
            used: [0; BLOCKS],
            clock: 0,
            stats: IoStats {
                bytes_read: 0,
                reads: 0,
                seeks: 1,
            },
        }
    }

    /// Gives back the reader and the scratch.
    pub fn into_inner(self) -> (R, B) {
        (self.reader, self.scratch)
    }

    fn raw_read(reader: &mut R, pos: &mut Option<u64>, stats: &mut IoStats, offset: u64, buf: &mut [u8]) -> Result<()> {
        if *pos != Some(offset) {
            reader.seek(SeekFrom::Start(offset)).map_err(|e| io_error(e, offset))?;
            stats.seeks += 1;
            *pos = Some(offset);
        }
        let mut done = 0usize;
        while done < buf.len() {
            let rest = buf.get_mut(done..).unwrap_or(&mut []);
            let n = reader.read(rest).map_err(|e| io_error(e, offset))?;
            stats.reads += 1;
            if n == 0 {
                *pos = None;
                return Err(Error::truncated(
                    offset.saturating_add(done as u64),
                    &"reader ended early",
                ));
            }
            done += n;
            stats.bytes_read += n as u64;
            *pos = Some(offset.saturating_add(done as u64));
        }
        Ok(())
    }

    /// Returns the cache slot holding block `no`, loading it if needed.
    fn block(&mut self, no: u64) -> Result<usize> {
        self.clock = self.clock.wrapping_add(1);
        if let Some(i) = self.tags.iter().position(|&t| t == no) {
            if let Some(u) = self.used.get_mut(i) {
                *u = self.clock;
            }
            return Ok(i);
        }
        let mut victim = 0;
        let mut oldest = u32::MAX;
        for (i, &u) in self.used.iter().enumerate() {
            if u < oldest {
                oldest = u;
                victim = i;
            }
        }
        let start = no.saturating_mul(CACHE_BLOCK as u64);
        let avail = self.len.saturating_sub(start).min(CACHE_BLOCK as u64) as usize;
        let slot = self
            .blocks
            .get_mut(victim)
            .ok_or(Error::capacity(start, &"block cache has no slots"))?;
        let dst = slot.get_mut(..avail).unwrap_or(&mut []);
        if let Some(t) = self.tags.get_mut(victim) {
            *t = NO_BLOCK;
        }
        Self::raw_read(&mut self.reader, &mut self.pos, &mut self.stats, start, dst)?;
        if let (Some(t), Some(v), Some(u)) = (
            self.tags.get_mut(victim),
            self.valid.get_mut(victim),
            self.used.get_mut(victim),
        ) {
            *t = no;
            *v = avail as u16;
            *u = self.clock;
        }
        Ok(victim)
    }

    /// Finds a cached block that holds all of `offset..offset+len`.
    fn cached(&self, offset: u64, len: usize) -> Option<&[u8]> {
        let no = offset / CACHE_BLOCK as u64;
        let i = self.tags.iter().position(|&t| t == no)?;
        let within = (offset % CACHE_BLOCK as u64) as usize;
        let valid = *self.valid.get(i)? as usize;
        self.blocks.get(i)?.get(..valid)?.get(within..within.checked_add(len)?)
    }
}

fn io_error<E: embedded_io::Error>(e: E, offset: u64) -> Error {
    Error::new(ErrorKind::Io(e.kind()), offset, &"the reader failed")
}

impl<R: Read + Seek, B: AsRef<[u8]> + AsMut<[u8]>, const BLOCKS: usize> Source for ReaderSource<R, B, BLOCKS> {
    fn len(&self) -> u64 {
        self.len
    }

    fn read_at(&mut self, offset: u64, buf: &mut [u8]) -> Result<usize> {
        if offset >= self.len {
            return Ok(0);
        }
        let want = (self.len - offset).min(buf.len() as u64) as usize;
        let buf = buf.get_mut(..want).unwrap_or(&mut []);
        if want > CACHE_BLOCK || BLOCKS == 0 {
            Self::raw_read(&mut self.reader, &mut self.pos, &mut self.stats, offset, buf)?;
            return Ok(want);
        }
        let mut done = 0usize;
        while done < want {
            let at = offset + done as u64;
            let slot = self.block(at / CACHE_BLOCK as u64)?;
            let within = (at % CACHE_BLOCK as u64) as usize;
            let valid = self.valid.get(slot).copied().unwrap_or(0) as usize;
            let src = self.blocks.get(slot).and_then(|b| b.get(within..valid)).unwrap_or(&[]);
            if src.is_empty() {
                return Err(Error::truncated(at, &"input ends inside a structure"));
            }
            let n = src.len().min(want - done);
            if let (Some(d), Some(s)) = (buf.get_mut(done..done + n), src.get(..n)) {
                d.copy_from_slice(s);
            }
            done += n;
        }
        Ok(want)
    }

    fn bytes(&mut self, offset: u64, len: usize) -> Result<&[u8]> {
        let end =
            offset
                .checked_add(len as u64)
                .ok_or(Error::new(ErrorKind::OffsetOverflow, offset, &"range beyond u64"))?;
        if end > self.len {
            return Err(Error::truncated(self.len, &"input ends before the requested range"));
        }
        if len <= CACHE_BLOCK / 4 {
            // Small reads (tag items, short headers) are served from the block
            // cache when they fall inside one block.
            let within = (offset % CACHE_BLOCK as u64) as usize;
            if within + len <= CACHE_BLOCK && BLOCKS > 0 {
                self.block(offset / CACHE_BLOCK as u64)?;
                if self.cached(offset, len).is_some() {
                    return self.cached(offset, len).ok_or(Error::truncated(offset, &"cache block"));
                }
            }
        }
        let scratch = self.scratch.as_mut();
        let dst = scratch.get_mut(..len).ok_or(Error::new(
            ErrorKind::ScratchTooSmall,
            offset,
            &"packet larger than the scratch buffer",
        ))?;
        Self::raw_read(&mut self.reader, &mut self.pos, &mut self.stats, offset, dst)?;
        Ok(dst)
    }

    fn scratch_len(&self) -> usize {
        self.scratch.as_ref().len()
    }

    fn gather(&mut self, offset: u64, len: usize, at: usize) -> Result<()> {
        let end =
            offset
                .checked_add(len as u64)
                .ok_or(Error::new(ErrorKind::OffsetOverflow, offset, &"range beyond u64"))?;
        if end > self.len {
            return Err(Error::truncated(self.len, &"input ends before the requested range"));
        }
        let scratch = self.scratch.as_mut();
        let dst = at
            .checked_add(len)
            .and_then(|e| scratch.get_mut(at..e))
            .ok_or(Error::new(
                ErrorKind::ScratchTooSmall,
                offset,
                &"scratch too small to join a packet (source::slice_scratch_len)",
            ))?;
        Self::raw_read(&mut self.reader, &mut self.pos, &mut self.stats, offset, dst)
    }

    fn put(&mut self, at: usize, data: &[u8]) -> Result<()> {
        put_into(self.scratch.as_mut(), at, data)
    }

    fn joined(&self, len: usize) -> Result<&[u8]> {
        self.scratch.as_ref().get(..len).ok_or(Error::new(
            ErrorKind::ScratchTooSmall,
            0,
            &"joined length exceeds scratch",
        ))
    }

    fn is_slice(&self) -> bool {
        false
    }

    fn stats(&self) -> IoStats {
        self.stats
    }
}

impl<S: Source + ?Sized> Source for &mut S {
    fn len(&self) -> u64 {
        (**self).len()
    }
    fn read_at(&mut self, offset: u64, buf: &mut [u8]) -> Result<usize> {
        (**self).read_at(offset, buf)
    }
    fn bytes(&mut self, offset: u64, len: usize) -> Result<&[u8]> {
        (**self).bytes(offset, len)
    }
    fn bytes_and_next<const N: usize>(&mut self, offset: u64, len: usize) -> Result<(&[u8], Option<[u8; N]>)> {
        (**self).bytes_and_next(offset, len)
    }
    fn scratch_len(&self) -> usize {
        (**self).scratch_len()
    }
    fn gather(&mut self, offset: u64, len: usize, at: usize) -> Result<()> {
        (**self).gather(offset, len, at)
    }
    fn put(&mut self, at: usize, data: &[u8]) -> Result<()> {
        (**self).put(at, data)
    }
    fn joined(&self, len: usize) -> Result<&[u8]> {
        (**self).joined(len)
    }
    fn is_slice(&self) -> bool {
        (**self).is_slice()
    }
    fn stats(&self) -> IoStats {
        (**self).stats()
    }
}

/// The input's and the scratch's lengths and the I/O counts.
impl core::fmt::Debug for SliceSource<'_> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("SliceSource")
            .field("len", &self.data.len())
            .field("scratch", &self.scratch.len())
            .field("stats", &self.stats)
            .finish()
    }
}

/// The input's length, the position and the I/O counts; the reader, the
/// scratch and the cache are not shown.
impl<R, B, const BLOCKS: usize> core::fmt::Debug for ReaderSource<R, B, BLOCKS> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("ReaderSource")
            .field("len", &self.len)
            .field("pos", &self.pos)
            .field("blocks", &BLOCKS)
            .field("stats", &self.stats)
            .finish_non_exhaustive()
    }
}
