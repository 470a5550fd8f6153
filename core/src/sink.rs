//! Sinks: where a muxer's bytes go. The write side's mirror of
//! [`crate::source`].
//!
//! Every muxer writes through the [`Sink`] trait, at `u64` positions that
//! only grow: [`Sink::write_all`] and [`Sink::write_vectored`] append at
//! [`Sink::position`]. A sink that can seek also lets a muxer rewrite bytes it
//! has already written ([`Sink::patch_at`]): a size it learns at the end (an
//! MP4 `mdat`, a Matroska Segment), a count, a table of offsets. A sink that
//! cannot says so with [`Sink::can_patch`], and the muxer then writes what the
//! format allows without it (Matroska unknown sizes, a fragmented MP4 that
//! holds one fragment in caller memory).
//!
//! Three implementations live here, with no allocation:
//!
//! | sink | over | patching |
//! |---|---|---|
//! | [`SliceSink`] | `&mut [u8]` (RAM on a device, a test buffer) | yes |
//! | [`WriterSink`] | any [`embedded_io::Write`] (a UART, a socket, a pipe) | no |
//! | [`SeekWriterSink`] | [`embedded_io::Write`] + [`embedded_io::Seek`] (a file on an SD card) | yes, by seeking back and forth |
//!
//! `mediaslice-std` adds a file sink (positioned writes, temporary name and
//! rename) and a stdout sink.
//!
//! A muxer's index that outgrows the memory its caller allows spills to a
//! [`SpillStore`] (`sink/spill.rs`), which is also read back.
//!
//! No copy on the way: [`Sink::write_vectored`] takes a header the muxer
//! built and the payload the packet borrows, together, so a muxer never joins
//! them in a buffer of its own.

mod adapters;
mod spill;
use crate::error::{Error, ErrorKind, Result};
pub use adapters::NullSink;
#[cfg(feature = "mp4")]
pub(crate) use adapters::PatchAt;
use embedded_io::{Seek, SeekFrom, Write};
pub(crate) use spill::Spill;
pub use spill::{NoSpill, SpillStore};

/// Bytes and calls a sink has taken, counted by the sink itself.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct SinkStats {
    /// Bytes handed to the underlying output, patches included.
    pub bytes_written: u64,
    /// Calls to the underlying writer (for a slice: copies into it).
    pub writes: u64,
    /// Seeks issued to the underlying writer (0 for a slice and a stream).
    pub seeks: u64,
    /// Calls to [`Sink::patch_at`] that rewrote bytes.
    pub patches: u64,
}

/// An output written at `u64` positions: appends, and optionally patches of
/// bytes already written.
///
/// A failed write leaves the sink in an unspecified state past
/// [`Sink::position`] as it was before the call; a muxer stops at the first
/// error.
pub trait Sink {
    /// Position of the next appended byte: the bytes written so far, or for
    /// a sink over a writer that already held bytes, its position when it
    /// was wrapped plus those.
    fn position(&self) -> u64;

    /// Appends all of `data` at [`Sink::position`].
    ///
    /// Errors: `SinkFull` when a bounded sink has no room (nothing is
    /// written); `Io` when the underlying writer fails or takes no bytes.
    fn write_all(&mut self, data: &[u8]) -> Result<()>;

    /// Appends every part of `parts` in order, as one write where the sink
    /// can (a header and a borrowed payload, with no copy between them).
    /// The default writes the parts one after another.
    ///
    /// Errors: as [`Sink::write_all`].
    fn write_vectored(&mut self, parts: &[&[u8]]) -> Result<()> {
        for part in parts {
            self.write_all(part)?;
        }
        Ok(())
    }

    /// Whether [`Sink::patch_at`] can rewrite earlier bytes.
    fn can_patch(&self) -> bool;

    /// Rewrites `data.len()` bytes at `pos`, all of them already written
    /// (`pos + data.len() <= position()`); the position does not move.
    ///
    /// Errors: `Unsupported` on a sink that cannot seek back (see
    /// [`Sink::can_patch`]); `InvalidArgument` when the range reaches past
    /// [`Sink::position`]; `Io` when the writer fails.
    fn patch_at(&mut self, pos: u64, data: &[u8]) -> Result<()>;

    /// Pushes buffered bytes to the underlying output.
    ///
    /// Errors: `Io` when the writer fails.
    fn flush(&mut self) -> Result<()>;

    /// The bytes and calls taken so far.
    fn stats(&self) -> SinkStats;
}

/// Checks that `pos..pos + len` lies within the `written` bytes; returns the
/// end of the range.
///
/// Errors: `InvalidArgument` when it does not.
pub fn check_patch(pos: u64, len: usize, written: u64) -> Result<u64> {
    pos.checked_add(len as u64)
        .filter(|&end| end <= written)
        .ok_or(Error::new(
            ErrorKind::InvalidArgument,
            pos,
            &"sink patch: range reaches past the bytes written",
        ))
}

/// The error [`Sink::patch_at`] returns on a sink that cannot seek back.
pub const fn cannot_patch(pos: u64) -> Error {
    Error::new(
        ErrorKind::Unsupported,
        pos,
        &"sink patch: this sink cannot seek back (a stream)",
    )
}

/// A caller's buffer as a sink: bytes go into `&mut [u8]`, which may be RAM
/// on a device with no file system. Patchable. A write that does not fit
/// stores nothing and returns `SinkFull`.
pub struct SliceSink<'a> {
    buf: &'a mut [u8],
    len: usize,
    stats: SinkStats,
}

impl<'a> SliceSink<'a> {
    /// An empty sink over `buf`; it holds at most `buf.len()` bytes.
    pub fn new(buf: &'a mut [u8]) -> Self {
        SliceSink {
            buf,
            len: 0,
            stats: SinkStats::default(),
        }
    }

    /// The bytes written so far.
    pub fn written(&self) -> &[u8] {
        self.buf.get(..self.len).unwrap_or(&[])
    }

    /// Room left, in bytes.
    pub fn remaining(&self) -> usize {
        self.buf.len().saturating_sub(self.len)
    }

    /// Gives back the bytes written, borrowing the caller's buffer.
    pub fn into_written(self) -> &'a [u8] {
        let SliceSink { buf, len, .. } = self;
        let buf: &'a [u8] = buf;
        buf.get(..len).unwrap_or(&[])
    }

    /// The room for `n` more bytes, or `SinkFull`.
    fn room(&mut self, n: usize) -> Result<&mut [u8]> {
        let at = self.len;
        at.checked_add(n)
            .and_then(|end| self.buf.get_mut(at..end))
            .ok_or(Error::new(
                ErrorKind::SinkFull,
                at as u64,
                &"slice sink: the buffer has no room for this write",
            ))
    }
}

impl Sink for SliceSink<'_> {
    fn position(&self) -> u64 {
        self.len as u64
    }

    fn write_all(&mut self, data: &[u8]) -> Result<()> {
        self.room(data.len())?.copy_from_slice(data);
        self.len += data.len();
        self.stats.writes += 1;
        self.stats.bytes_written += data.len() as u64;
        Ok(())
    }

    /// All parts or none: when the parts together do not fit, nothing is
    /// written and the error is `SinkFull`.
    fn write_vectored(&mut self, parts: &[&[u8]]) -> Result<()> {
        let total = parts
            .iter()
            .try_fold(0usize, |n, p| n.checked_add(p.len()))
            .ok_or(Error::new(
                ErrorKind::SinkFull,
                self.len as u64,
                &"slice sink: parts longer than the address space",
            ))?;
        let mut room = self.room(total)?;
        for part in parts {
            let (head, rest) = room.split_at_mut(part.len());
            head.copy_from_slice(part);
            room = rest;
        }
        self.len += total;
        self.stats.writes += 1;
        self.stats.bytes_written += total as u64;
        Ok(())
    }

    fn can_patch(&self) -> bool {
        true
    }

    fn patch_at(&mut self, pos: u64, data: &[u8]) -> Result<()> {
        let end = check_patch(pos, data.len(), self.len as u64)?;
        // Both ends are at most `self.len`, a `usize`.
        let dst = self.buf.get_mut(pos as usize..end as usize).ok_or(Error::new(
            ErrorKind::InvalidArgument,
            pos,
            &"slice sink: patch range",
        ))?;
        dst.copy_from_slice(data);
        self.stats.patches += 1;
        self.stats.writes += 1;
        self.stats.bytes_written += data.len() as u64;
        Ok(())
    }

    fn flush(&mut self) -> Result<()> {
        Ok(())
    }

    fn stats(&self) -> SinkStats {
        self.stats
    }
}

fn io_error<E: embedded_io::Error>(e: E, pos: u64) -> Error {
    Error::new(ErrorKind::Io(e.kind()), pos, &"the writer failed")
}

/// Writes all of `data` to `w`, counting calls and bytes. A writer that
/// takes no bytes is an `Io(WriteZero)` error (where `embedded_io`'s own
/// `write_all` would panic).
fn write_fully<W: Write>(w: &mut W, stats: &mut SinkStats, pos: u64, mut data: &[u8]) -> Result<()> {
    while !data.is_empty() {
        let n = w.write(data).map_err(|e| io_error(e, pos))?;
        stats.writes += 1;
        if n == 0 {
            return Err(Error::new(
                ErrorKind::Io(embedded_io::ErrorKind::WriteZero),
                pos,
                &"the writer took no bytes",
            ));
        }
        stats.bytes_written += n as u64;
        data = data.get(n..).unwrap_or(&[]);
    }
    Ok(())
}

/// A stream: any [`embedded_io::Write`], appended to and never sought. Not
/// patchable: a muxer writes the forms that need no patching (Matroska
/// unknown sizes) or refuses with `Unsupported`.
pub struct WriterSink<W> {
    writer: W,
    pos: u64,
    stats: SinkStats,
}

impl<W: Write> WriterSink<W> {
    /// Wraps `writer`; positions count from 0, the first byte written here.
    pub fn new(writer: W) -> Self {
        WriterSink {
            writer,
            pos: 0,
            stats: SinkStats::default(),
        }
    }

    /// Gives back the writer (not flushed: call [`Sink::flush`] first).
    pub fn into_inner(self) -> W {
        self.writer
    }
}

impl<W: Write> Sink for WriterSink<W> {
    fn position(&self) -> u64 {
        self.pos
    }

    fn write_all(&mut self, data: &[u8]) -> Result<()> {
        write_fully(&mut self.writer, &mut self.stats, self.pos, data)?;
        self.pos = self.pos.saturating_add(data.len() as u64);
        Ok(())
    }

    fn can_patch(&self) -> bool {
        false
    }

    fn patch_at(&mut self, pos: u64, _data: &[u8]) -> Result<()> {
        Err(cannot_patch(pos))
    }

    fn flush(&mut self) -> Result<()> {
        self.writer.flush().map_err(|e| io_error(e, self.pos))
    }

    fn stats(&self) -> SinkStats {
        self.stats
    }
}

/// A writer that can seek ([`embedded_io::Write`] + [`embedded_io::Seek`],
/// a file on an SD card): appends as [`WriterSink`], and patches by seeking
/// to the bytes, writing them and seeking back to the end (two seeks a
/// patch). Positions are the writer's own stream positions.
pub struct SeekWriterSink<W> {
    stream: WriterSink<W>,
}

impl<W: Write + Seek> SeekWriterSink<W> {
    /// Wraps `writer`, asking it (one seek) where it stands: the first byte
    /// written goes there, and positions are the writer's.
    ///
    /// Errors: `Io` when the seek fails.
    pub fn new(mut writer: W) -> Result<Self> {
        let pos = writer.seek(SeekFrom::Current(0)).map_err(|e| io_error(e, 0))?;
        let mut stream = WriterSink::new(writer);
        stream.pos = pos;
        stream.stats.seeks = 1;
        Ok(SeekWriterSink { stream })
    }

    /// Gives back the writer, positioned at the end of what was written
    /// (not flushed: call [`Sink::flush`] first).
    pub fn into_inner(self) -> W {
        self.stream.writer
    }

    fn seek_to(&mut self, pos: u64) -> Result<()> {
        self.stream.stats.seeks += 1;
        match self.stream.writer.seek(SeekFrom::Start(pos)) {
            Ok(_) => Ok(()),
            Err(e) => Err(io_error(e, pos)),
        }
    }
}

impl<W: Write + Seek> Sink for SeekWriterSink<W> {
    fn position(&self) -> u64 {
        self.stream.pos
    }

    fn write_all(&mut self, data: &[u8]) -> Result<()> {
        self.stream.write_all(data)
    }

    fn can_patch(&self) -> bool {
        true
    }

    fn patch_at(&mut self, pos: u64, data: &[u8]) -> Result<()> {
        let end = self.stream.pos;
        check_patch(pos, data.len(), end)?;
        self.seek_to(pos)?;
        write_fully(&mut self.stream.writer, &mut self.stream.stats, pos, data)?;
        self.stream.stats.patches += 1;
        self.seek_to(end)
    }

    fn flush(&mut self) -> Result<()> {
        self.stream.flush()
    }

    fn stats(&self) -> SinkStats {
        self.stream.stats
    }
}

/// The capacity, the bytes held and the counts; not the bytes.
impl core::fmt::Debug for SliceSink<'_> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("SliceSink")
            .field("capacity", &self.buf.len())
            .field("len", &self.len)
            .field("stats", &self.stats)
            .finish()
    }
}

/// The position and the counts; the writer is not shown.
impl<W> core::fmt::Debug for WriterSink<W> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("WriterSink")
            .field("pos", &self.pos)
            .field("stats", &self.stats)
            .finish_non_exhaustive()
    }
}

/// As [`WriterSink`]'s.
impl<W> core::fmt::Debug for SeekWriterSink<W> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("SeekWriterSink")
            .field("pos", &self.stream.pos)
            .field("stats", &self.stream.stats)
            .finish_non_exhaustive()
    }
}

impl<K: Sink + ?Sized> Sink for &mut K {
    fn position(&self) -> u64 {
        (**self).position()
    }
    fn write_all(&mut self, data: &[u8]) -> Result<()> {
        (**self).write_all(data)
    }
    fn write_vectored(&mut self, parts: &[&[u8]]) -> Result<()> {
        (**self).write_vectored(parts)
    }
    fn can_patch(&self) -> bool {
        (**self).can_patch()
    }
    fn patch_at(&mut self, pos: u64, data: &[u8]) -> Result<()> {
        (**self).patch_at(pos, data)
    }
    fn flush(&mut self) -> Result<()> {
        (**self).flush()
    }
    fn stats(&self) -> SinkStats {
        (**self).stats()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slice_sink_appends_patches_and_reports_full() {
        let mut buf = [0u8; 8];
        let mut s = SliceSink::new(&mut buf);
        s.write_all(b"ab").unwrap();
        s.write_vectored(&[b"cd", b"", b"ef"]).unwrap();
        assert_eq!((s.position(), s.written()), (6, &b"abcdef"[..]));
        s.patch_at(1, b"XY").unwrap();
        assert_eq!(s.written(), b"aXYdef");
        // Past the bytes written: refused, nothing changes.
        assert_eq!(s.patch_at(5, b"zz").unwrap_err().kind(), ErrorKind::InvalidArgument);
        assert_eq!(
            s.patch_at(u64::MAX, b"z").unwrap_err().kind(),
            ErrorKind::InvalidArgument
        );
        // Full: all or nothing, the position stays.
        let e = s.write_vectored(&[b"g", b"hi"]).unwrap_err();
        assert_eq!((e.kind(), e.offset(), s.position()), (ErrorKind::SinkFull, 6, 6));
        assert_eq!(s.write_all(b"xyz").unwrap_err().kind(), ErrorKind::SinkFull);
        s.write_all(b"gh").unwrap();
        assert_eq!(s.remaining(), 0);
        let st = s.stats();
        assert_eq!((st.bytes_written, st.writes, st.patches, st.seeks), (10, 4, 1, 0));
        assert_eq!(s.into_written(), b"aXYdefgh");
    }

    /// A writer over a fixed array that takes at most `chunk` bytes a call,
    /// and seeks.
    struct Chunky {
        data: [u8; 16],
        at: usize,
        end: usize,
        chunk: usize,
    }

    impl embedded_io::ErrorType for Chunky {
        type Error = embedded_io::ErrorKind;
    }

    impl Write for Chunky {
        fn write(&mut self, buf: &[u8]) -> core::result::Result<usize, Self::Error> {
            let n = buf.len().min(self.chunk).min(self.data.len() - self.at);
            self.data[self.at..self.at + n].copy_from_slice(&buf[..n]);
            self.at += n;
            self.end = self.end.max(self.at);
            Ok(n)
        }
        fn flush(&mut self) -> core::result::Result<(), Self::Error> {
            Ok(())
        }
    }

    impl Seek for Chunky {
        fn seek(&mut self, pos: SeekFrom) -> core::result::Result<u64, Self::Error> {
            match pos {
                SeekFrom::Start(p) => self.at = p as usize,
                SeekFrom::Current(d) => self.at = (self.at as i64 + d) as usize,
                SeekFrom::End(d) => self.at = (self.end as i64 + d) as usize,
            }
            Ok(self.at as u64)
        }
    }

    fn chunky(chunk: usize) -> Chunky {
        Chunky {
            data: [0; 16],
            at: 0,
            end: 0,
            chunk,
        }
    }

    #[test]
    fn writer_sink_loops_over_short_writes_and_cannot_patch() {
        let mut s = WriterSink::new(chunky(3));
        s.write_vectored(&[b"hello", b" ", b"world"]).unwrap();
        s.flush().unwrap();
        assert_eq!(s.position(), 11);
        assert!(!s.can_patch());
        assert_eq!(s.patch_at(0, b"H").unwrap_err().kind(), ErrorKind::Unsupported);
        // 5 bytes in 2 calls, 1 in 1, 5 in 2.
        assert_eq!(s.stats().writes, 5);
        let w = s.into_inner();
        assert_eq!(&w.data[..11], b"hello world");
        // A full writer (it takes 0 bytes) is an error, not a panic.
        let mut s = WriterSink::new(chunky(16));
        s.write_all(&[1; 16]).unwrap();
        let e = s.write_all(b"x").unwrap_err();
        assert_eq!(e.kind(), ErrorKind::Io(embedded_io::ErrorKind::WriteZero));
    }

    #[test]
    fn seek_writer_sink_patches_and_returns_to_the_end() {
        let mut w = chunky(4);
        w.write(b"ab").unwrap();
        let mut s = SeekWriterSink::new(w).unwrap();
        assert_eq!(s.position(), 2);
        s.write_all(b"cdefgh").unwrap();
        s.patch_at(2, b"CD").unwrap();
        s.write_all(b"ij").unwrap();
        assert_eq!(s.patch_at(9, b"zz").unwrap_err().kind(), ErrorKind::InvalidArgument);
        let st = s.stats();
        assert_eq!((st.seeks, st.patches), (3, 1));
        let w = s.into_inner();
        assert_eq!(&w.data[..w.end], b"abCDefghij");
    }

    #[test]
    fn a_mutable_borrow_is_a_sink() {
        fn write_through<K: Sink>(mut k: K) {
            k.write_vectored(&[b"a", b"b"]).unwrap();
            assert!(k.can_patch());
            k.patch_at(0, b"A").unwrap();
            k.flush().unwrap();
        }
        let mut buf = [0u8; 4];
        let mut s = SliceSink::new(&mut buf);
        write_through(&mut s);
        assert_eq!((s.written(), s.stats().patches), (&b"Ab"[..], 1));
    }
}
