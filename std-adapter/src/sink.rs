//! std sinks: [`FileSink`] (a file written under a temporary name and
//! renamed over its target on [`FileSink::commit`]) and [`StreamSink`] /
//! [`StdoutSink`] (a stream, no patching).

use crate::kernel_copy::{KernelCopy, KernelCopyStats, MappedInput};
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

/// Appends to a [`FileSink`] shorter than this (all parts together) are
/// copied into its combining buffer; longer ones go out vectored, uncopied.
const COMBINE_BELOW: usize = 64 << 10;

/// The size of a [`FileSink`]'s combining buffer, allocated once per sink.
const COMBINE_CAP: usize = 256 << 10;

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
/// Appends are combined: one shorter than 64 KiB (its parts together) is
/// copied into a 256 KiB buffer, allocated once when the sink is made, and
/// the buffer goes to the file in one `write` when the next append would
/// overflow it. A longer append goes out uncopied, with the buffer ahead of
/// it, in one `writev` through the file's own position. Patches of bytes
/// still in the buffer rewrite the buffer; patches of bytes already in the
/// file are positioned writes (`pwrite`), which leave that position where
/// it is. [`Sink::flush`], [`FileSink::copy_from`] and
/// [`FileSink::commit`] write the buffer out first; a sink dropped without
/// a commit drops it with the temporary file. [`Sink::position`] counts the
/// buffered bytes; [`Sink::stats`] counts the system calls made and the
/// bytes they took.
#[derive(Debug)]
pub struct FileSink {
    /// Appends go through the file's own position, as to any stream; its
    /// position is the bytes that reached the file.
    stream: StreamSink<File>,
    /// Appended bytes not yet written, which follow the stream's position;
    /// its capacity is [`COMBINE_CAP`] (or the one given) and it never
    /// grows.
    combine: Vec<u8>,
    /// Appended parts inside the input's map go file to file
    /// ([`FileSink::set_input`]).
    kernel: Option<KernelCopy>,
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
        Self::create_combining(target, COMBINE_CAP)
    }

    /// [`FileSink::create`] with a combining buffer of `bytes` (at least
    /// 64 KiB, the longest append it takes) instead of 256 KiB: less
    /// memory, one `write` per `bytes` of short appends.
    ///
    /// Errors: as [`FileSink::create`].
    pub fn create_combining(target: impl AsRef<Path>, bytes: usize) -> std::io::Result<Self> {
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
                        combine: Vec::with_capacity(bytes.max(COMBINE_BELOW)),
                        kernel: None,
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
    /// `len`. Moves `src`'s own position. Buffered appends are written
    /// first.
    ///
    /// Errors: the read or write error; `UnexpectedEof` when `src` ends
    /// before `len` bytes.
    pub fn copy_from(&mut self, src: &File, start: u64, len: u64) -> std::io::Result<()> {
        use std::io::{Read, Seek, SeekFrom};
        self.write_combined()
            .map_err(|e| std::io::Error::other(e.to_string()))?;
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

    /// Hands appended parts that lie entirely inside `input`'s map and are
    /// at least `min_len` bytes long (0:
    /// [`crate::DEFAULT_KERNEL_COPY_MIN`]) to the kernel: the bytes before
    /// such a part (the combining buffer, the parts ahead of it in the same
    /// append) are written first, then the part goes from the input file
    /// at the same offset with `copy_file_range`, never entering user
    /// space. The output's bytes and their order are those of the ordinary
    /// writes. When the kernel refuses (`EXDEV` across file systems,
    /// `ENOSYS`, `EINVAL`, ...) or stops short, the rest of the part is
    /// written the ordinary way and every later part too, counted in
    /// [`FileSink::kernel_copy_stats`]. Why an address names the file's
    /// byte: [`MappedInput`].
    pub fn set_input(&mut self, input: MappedInput, min_len: usize) {
        self.kernel = Some(KernelCopy::new(input, min_len));
    }

    /// What was handed to the kernel (all zero without
    /// [`FileSink::set_input`]).
    pub fn kernel_copy_stats(&self) -> KernelCopyStats {
        self.kernel.as_ref().map(KernelCopy::stats).unwrap_or_default()
    }

    /// Makes the file durable (`fsync`) and renames it over the target, then
    /// makes the rename durable (`fsync` of the folder, where the system
    /// allows it). Call it after [`mediaslice::Muxer::finish`].
    ///
    /// Errors: the error of the sync or the rename; the temporary file is
    /// then removed and the target is as it was.
    pub fn commit(mut self) -> std::io::Result<()> {
        self.write_combined()
            .map_err(|e| std::io::Error::other(e.to_string()))?;
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

    /// Appends `parts` through the combining buffer (see the type's
    /// documentation).
    fn write_buffered(&mut self, parts: &[&[u8]]) -> Result<()> {
        let total = parts.iter().fold(0usize, |n, p| n.saturating_add(p.len()));
        if total < COMBINE_BELOW {
            if self.combine.len() + total > self.combine.capacity() {
                self.write_combined()?;
            }
            for part in parts {
                self.combine.extend_from_slice(part);
            }
            return Ok(());
        }
        if self.combine.is_empty() || parts.len() >= MAX_IOV {
            self.write_combined()?;
            return self.stream.write_vectored(parts);
        }
        // The buffer and the long append in one `writev`.
        let mut all: [&[u8]; MAX_IOV] = [&[]; MAX_IOV];
        for (slot, part) in all
            .iter_mut()
            .zip(core::iter::once(self.combine.as_slice()).chain(parts.iter().copied()))
        {
            *slot = part;
        }
        self.stream.write_vectored(all.get(..=parts.len()).unwrap_or(&[]))?;
        self.combine.clear();
        Ok(())
    }

    /// Appends `parts`, some of which lie in the input's map: each of those
    /// goes to the kernel after everything before it is written.
    fn write_copying(&mut self, parts: &[&[u8]]) -> Result<()> {
        let mut from = 0;
        for (i, part) in parts.iter().enumerate() {
            let Some(offset) = self.kernel.as_ref().and_then(|k| k.offset_of(part)) else {
                continue;
            };
            self.write_buffered(parts.get(from..i).unwrap_or(&[]))?;
            self.write_combined()?;
            self.copy_part(part, offset)?;
            from = i + 1;
        }
        self.write_buffered(parts.get(from..).unwrap_or(&[]))
    }

    /// Appends `part`, which lies at `offset` in the input, with the
    /// kernel's copy; what the kernel did not copy is written from `part`.
    /// The combining buffer is empty.
    fn copy_part(&mut self, part: &[u8], offset: u64) -> Result<()> {
        let Some(k) = &mut self.kernel else {
            return self.stream.write_vectored(&[part]);
        };
        let (done, calls) = k.copy(part, offset, &self.stream.writer);
        self.stream.pos += done as u64;
        self.stream.stats.writes += calls;
        self.stream.stats.bytes_written += done as u64;
        match part.get(done..) {
            Some(rest) if !rest.is_empty() => {
                k.fell_back(1);
                self.stream.write_vectored(&[rest])
            }
            _ => Ok(()),
        }
    }

    /// Writes the combining buffer to the file (one `write`, more only on
    /// a short write) and empties it.
    fn write_combined(&mut self) -> Result<()> {
        if !self.combine.is_empty() {
            self.stream.write_vectored(&[&self.combine])?;
            self.combine.clear();
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
        self.stream.pos + self.combine.len() as u64
    }

    fn write_all(&mut self, data: &[u8]) -> Result<()> {
        self.write_vectored(&[data])
    }

    fn write_vectored(&mut self, parts: &[&[u8]]) -> Result<()> {
        if let Some(k) = &mut self.kernel {
            let qualifying = parts.iter().filter(|p| k.offset_of(p).is_some()).count() as u64;
            if qualifying > 0 && !k.is_off() {
                return self.write_copying(parts);
            }
            k.fell_back(if k.is_off() { qualifying } else { 0 });
        }
        self.write_buffered(parts)
    }

    fn can_patch(&self) -> bool {
        true
    }

    fn patch_at(&mut self, pos: u64, data: &[u8]) -> Result<()> {
        check_patch(pos, data.len(), self.position())?;
        // The bytes before `flushed` are in the file, the rest in the buffer.
        let flushed = self.stream.pos;
        let in_file = usize::try_from(flushed.saturating_sub(pos))
            .unwrap_or(usize::MAX)
            .min(data.len());
        let (data, buffered) = data.split_at(in_file);
        if !buffered.is_empty() {
            let at = usize::try_from((pos + in_file as u64) - flushed).unwrap_or(usize::MAX);
            self.combine
                .get_mut(at..at.saturating_add(buffered.len()))
                .ok_or(Error::new(
                    ErrorKind::InvalidArgument,
                    pos,
                    &"sink patch: range reaches past the bytes written",
                ))?
                .copy_from_slice(buffered);
        }
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

    /// Writes the combining buffer to the file (see [`FileSink::commit`]
    /// for durability).
    fn flush(&mut self) -> Result<()> {
        self.write_combined()
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

#[cfg(test)]
mod tests {
    #![allow(clippy::indexing_slicing, clippy::unwrap_used)]
    use super::*;

    /// Appends `parts` to the sink and to the model.
    fn append(s: &mut FileSink, model: &mut Vec<u8>, parts: &[&[u8]]) {
        s.write_vectored(parts).unwrap();
        for p in parts {
            model.extend_from_slice(p);
        }
        assert_eq!(s.position(), model.len() as u64);
    }

    /// Patches the sink and the model at `pos`.
    fn patch(s: &mut FileSink, model: &mut [u8], pos: usize, data: &[u8]) {
        s.patch_at(pos as u64, data).unwrap();
        model[pos..pos + data.len()].copy_from_slice(data);
    }

    /// Bytes that differ from packet to packet.
    fn packet(n: usize, len: usize) -> Vec<u8> {
        (0..len).map(|i| (i * 31 + n * 7) as u8).collect()
    }

    #[test]
    fn combined_writes_give_the_bytes_of_the_same_operations_on_a_vec() {
        let dir = std::env::temp_dir().join(format!("mediaslice-combine-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let src_path = dir.join("src.bin");
        let src_bytes = packet(99, 300_000);
        std::fs::write(&src_path, &src_bytes).unwrap();
        let src = File::open(&src_path).unwrap();

        let mut s = FileSink::create(dir.join("out.bin")).unwrap();
        let mut model = Vec::new();
        // 400 small appends (header and payload): the buffer fills and is
        // written more than once.
        for n in 0..400 {
            append(&mut s, &mut model, &[b"hdr:", &packet(n, 956)]);
        }
        // 273 appends of 960 bytes fit in the buffer, the 274th writes it.
        let written = s.stream.pos as usize;
        assert_eq!((written, s.stats().writes), (273 * 960, 1));
        // A patch in the file, one in the buffer, one across the boundary.
        patch(&mut s, &mut model, 10, b"in-file");
        let len = model.len();
        patch(&mut s, &mut model, len - 20, b"in-buffer");
        patch(&mut s, &mut model, written - 3, b"across");
        assert_eq!(s.stream.pos as usize, written, "patches write nothing out");
        // A large append goes out with the buffer ahead of it.
        let writes = s.stats().writes;
        append(&mut s, &mut model, &[b"big:", &packet(1, 100_000)]);
        assert_eq!(s.stats().writes, writes + 1);
        assert_eq!(s.stream.pos as usize, model.len());
        for n in 0..10 {
            append(&mut s, &mut model, &[&packet(n, 500)]);
        }
        // copy_from writes the buffer out first.
        s.copy_from(&src, 1000, 200_000).unwrap();
        model.extend_from_slice(&src_bytes[1000..201_000]);
        assert_eq!(s.position(), model.len() as u64);
        append(&mut s, &mut model, &[b"tail", &packet(3, 70)]);
        let len = model.len();
        patch(&mut s, &mut model, len - 70, b"patched tail");
        patch(&mut s, &mut model, 200, b"patched head");
        assert!(s.patch_at(len as u64 - 2, b"abc").is_err());
        let before = s.stats();
        s.flush().unwrap();
        assert_eq!(s.stats().writes, before.writes + 1);
        assert_eq!(s.stats().patches, 5);
        assert_eq!(std::fs::read(s.temp_path()).unwrap(), model);
        s.flush().unwrap();
        assert_eq!(s.stats().writes, before.writes + 1, "an empty buffer writes nothing");
        // Bytes buffered at the commit reach the target.
        append(&mut s, &mut model, &[b"last"]);
        let target = s.target().to_path_buf();
        s.commit().unwrap();
        assert_eq!(std::fs::read(&target).unwrap(), model);
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_smaller_combining_buffer_writes_the_same_bytes_in_more_writes() {
        let dir = std::env::temp_dir().join(format!("mediaslice-combine-small-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        // 64 KiB; a smaller request still takes the longest append.
        for (bytes, fit) in [(64 << 10, 68), (1000, 68)] {
            let mut s = FileSink::create_combining(dir.join("out.bin"), bytes).unwrap();
            let mut model = Vec::new();
            for n in 0..400 {
                append(&mut s, &mut model, &[b"hdr:", &packet(n, 956)]);
            }
            // 68 appends of 960 bytes fit in 64 KiB, the 69th writes them.
            assert_eq!((s.stream.pos as usize, s.stats().writes), (fit * 960 * 5, 5));
            let target = s.target().to_path_buf();
            s.commit().unwrap();
            assert_eq!(std::fs::read(&target).unwrap(), model);
        }
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
