//! std sinks: [`FileSink`] (a file written under a temporary name and
//! renamed over its target on [`FileSink::commit`]) and [`StreamSink`] /
//! [`StdoutSink`] (a stream, no patching).

use mediaslice::sink::{cannot_patch, check_patch};
use mediaslice::{Error, ErrorKind, Result, Sink, SinkStats};
use std::fs::{File, OpenOptions};
use std::io::{BufWriter, IoSlice, StdoutLock, Write};
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU32, Ordering};

/// Most parts given to one `writev` call; longer lists are written in
/// several.
const MAX_IOV: usize = 16;

fn io_error(e: &std::io::Error, pos: u64) -> Error {
    Error::new(ErrorKind::Io(e.kind().into()), pos, &"the file or stream write failed")
}

fn write_zero(pos: u64) -> Error {
    Error::new(
        ErrorKind::Io(embedded_io::ErrorKind::WriteZero),
        pos,
        &"the file or stream took no bytes",
    )
}

/// Writes every part to `w` with `write_vectored` (one `writev` for a header
/// and its payload), going on after short writes and interruptions.
fn write_parts<W: Write>(w: &mut W, stats: &mut SinkStats, pos: u64, parts: &[&[u8]]) -> Result<()> {
    for chunk in parts.chunks(MAX_IOV) {
        let mut iov = [IoSlice::new(&[]); MAX_IOV];
        for (slot, part) in iov.iter_mut().zip(chunk) {
            *slot = IoSlice::new(part);
        }
        let mut bufs = iov.get_mut(..chunk.len()).unwrap_or(&mut []);
        IoSlice::advance_slices(&mut bufs, 0);
        while !bufs.is_empty() {
            match w.write_vectored(bufs) {
                Ok(0) => return Err(write_zero(pos)),
                Ok(n) => {
                    stats.writes += 1;
                    stats.bytes_written += n as u64;
                    IoSlice::advance_slices(&mut bufs, n);
                }
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(e) => return Err(io_error(&e, pos)),
            }
        }
    }
    Ok(())
}

/// Tells temporary names made by one process apart.
static TEMP_COUNTER: AtomicU32 = AtomicU32::new(0);

/// A file written under a temporary name in its target's folder, and
/// renamed over the target by [`FileSink::commit`]: a failed or abandoned
/// write never leaves a partial file under the output's name, and an
/// existing file of that name stays whole until the new one replaces it in
/// one rename. Dropped without a commit, the temporary file is removed.
///
/// Appends go through the file's own position with `write`/`writev` (a
/// header and a borrowed payload in one system call); patches are
/// positioned writes (`pwrite`), which leave that position where it is.
/// Nothing is buffered in user space, so [`Sink::flush`] has nothing to do.
/// [`Sink::stats`] counts the system calls.
#[derive(Debug)]
pub struct FileSink {
    /// Appends go through the file's own position, as to any stream.
    stream: StreamSink<File>,
    target: PathBuf,
    temp: PathBuf,
    committed: bool,
}

impl FileSink {
    /// Creates an empty temporary file beside `target` (named
    /// `.<target name>.<process id>.<n>.tmp`); `target` itself is not
    /// touched until [`FileSink::commit`].
    ///
    /// Errors: `InvalidInput` when `target` has no file name; the error of
    /// creating the file (a missing folder, no permission).
    pub fn create(target: impl AsRef<Path>) -> std::io::Result<Self> {
        let target = target.as_ref().to_path_buf();
        let name = target.file_name().ok_or(std::io::Error::new(
            std::io::ErrorKind::InvalidInput,
            "file sink: the target has no file name",
        ))?;
        let dir = target.parent().unwrap_or(Path::new(""));
        loop {
            let n = TEMP_COUNTER.fetch_add(1, Ordering::Relaxed);
            let mut temp_name = std::ffi::OsString::from(".");
            temp_name.push(name);
            temp_name.push(format!(".{}.{n}.tmp", std::process::id()));
            let temp = dir.join(temp_name);
            match OpenOptions::new().write(true).create_new(true).open(&temp) {
                Ok(file) => {
                    return Ok(FileSink {
                        stream: StreamSink::new(file),
                        target,
                        temp,
                        committed: false,
                    })
                }
                // A leftover of an earlier process with the same id: next name.
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
                Err(e) => return Err(e),
            }
        }
    }

    /// The name the file gets on commit.
    pub fn target(&self) -> &Path {
        &self.target
    }

    /// The temporary name the file has until then.
    pub fn temp_path(&self) -> &Path {
        &self.temp
    }

    /// Appends `len` bytes of `src` from `start`, unchanged, through
    /// [`std::io::copy`], which on Linux hands a file-to-file copy to the
    /// kernel (`copy_file_range`, falling back to `sendfile`): the bytes
    /// do not pass through user space, and memory does not grow with
    /// `len`. Moves `src`'s own position.
    ///
    /// Errors: the read or write error; `UnexpectedEof` when `src` ends
    /// before `len` bytes.
    pub fn copy_from(&mut self, src: &File, start: u64, len: u64) -> std::io::Result<()> {
        use std::io::{Read, Seek, SeekFrom};
        let mut reader = src;
        reader.seek(SeekFrom::Start(start))?;
        let n = std::io::copy(&mut reader.take(len), &mut self.stream.writer)?;
        self.stream.pos += n;
        self.stream.stats.writes += 1;
        self.stream.stats.bytes_written += n;
        if n != len {
            return Err(std::io::Error::new(
                std::io::ErrorKind::UnexpectedEof,
                "file sink: the source ended before the range copied from it",
            ));
        }
        Ok(())
    }

    /// Makes the file durable (`fsync`) and renames it over the target, then
    /// makes the rename durable (`fsync` of the folder, where the system
    /// allows it). Call it after [`mediaslice::Muxer::finish`].
    ///
    /// Errors: the error of the sync or the rename; the temporary file is
    /// then removed and the target is as it was.
    pub fn commit(mut self) -> std::io::Result<()> {
        self.stream.writer.sync_all()?;
        std::fs::rename(&self.temp, &self.target)?;
        self.committed = true;
        let dir = self.target.parent().filter(|d| !d.as_os_str().is_empty());
        if let Ok(d) = File::open(dir.unwrap_or(Path::new("."))) {
            // Best effort: some systems cannot sync a folder.
            let _ = d.sync_all();
        }
        Ok(())
    }
}

impl Drop for FileSink {
    fn drop(&mut self) {
        if !self.committed {
            let _ = std::fs::remove_file(&self.temp);
        }
    }
}

impl Sink for FileSink {
    fn position(&self) -> u64 {
        self.stream.pos
    }

    fn write_all(&mut self, data: &[u8]) -> Result<()> {
        self.stream.write_all(data)
    }

    fn write_vectored(&mut self, parts: &[&[u8]]) -> Result<()> {
        self.stream.write_vectored(parts)
    }

    fn can_patch(&self) -> bool {
        true
    }

    fn patch_at(&mut self, pos: u64, data: &[u8]) -> Result<()> {
        check_patch(pos, data.len(), self.stream.pos)?;
        let stats = &mut self.stream.stats;
        let mut done = 0usize;
        while let Some(rest) = data.get(done..).filter(|r| !r.is_empty()) {
            let at = pos + done as u64;
            match self.stream.writer.write_at(rest, at) {
                Ok(0) => return Err(write_zero(at)),
                Ok(n) => {
                    done += n;
                    stats.writes += 1;
                    stats.bytes_written += n as u64;
                }
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(e) => return Err(io_error(&e, at)),
            }
        }
        stats.patches += 1;
        Ok(())
    }

    /// Nothing to do: a file sink buffers nothing in user space (see
    /// [`FileSink::commit`] for durability).
    fn flush(&mut self) -> Result<()> {
        Ok(())
    }

    fn stats(&self) -> SinkStats {
        self.stream.stats
    }
}

/// Any [`std::io::Write`] as a stream sink: appended to, never sought, so
/// not patchable ([`Sink::patch_at`] is `Unsupported`). Vectored writes go
/// to the writer's `write_vectored`.
#[derive(Debug)]
pub struct StreamSink<W: Write> {
    writer: W,
    pos: u64,
    stats: SinkStats,
}

/// Standard output as a sink, through a 64 KiB buffer: made by
/// [`StdoutSink::stdout`].
pub type StdoutSink = StreamSink<BufWriter<StdoutLock<'static>>>;

impl StdoutSink {
    /// Locks standard output for the life of the sink and buffers it (64
    /// KiB). Bytes reach the terminal or pipe on [`Sink::flush`] (which
    /// [`mediaslice::Muxer::finish`] calls) or when the buffer fills.
    pub fn stdout() -> Self {
        StreamSink::new(BufWriter::with_capacity(64 << 10, std::io::stdout().lock()))
    }
}

impl<W: Write> StreamSink<W> {
    /// Wraps `writer`; positions count from 0, the first byte written here.
    pub fn new(writer: W) -> Self {
        StreamSink {
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

impl<W: Write> Sink for StreamSink<W> {
    fn position(&self) -> u64 {
        self.pos
    }

    fn write_all(&mut self, data: &[u8]) -> Result<()> {
        self.write_vectored(&[data])
    }

    fn write_vectored(&mut self, parts: &[&[u8]]) -> Result<()> {
        let before = self.stats.bytes_written;
        write_parts(&mut self.writer, &mut self.stats, self.pos, parts)?;
        self.pos += self.stats.bytes_written - before;
        Ok(())
    }

    fn can_patch(&self) -> bool {
        false
    }

    fn patch_at(&mut self, pos: u64, _data: &[u8]) -> Result<()> {
        Err(cannot_patch(pos))
    }

    fn flush(&mut self) -> Result<()> {
        self.writer.flush().map_err(|e| io_error(&e, self.pos))
    }

    fn stats(&self) -> SinkStats {
        self.stats
    }
}
