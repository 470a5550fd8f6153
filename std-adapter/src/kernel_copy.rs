//! Kernel copy of unchanged payload: a [`MappedInput`] tells a
//! [`crate::FileSink`] which addresses are the input file's bytes, so that
//! an appended part lying entirely inside the input's map goes from file to
//! file with `copy_file_range` (Linux) and never passes through user space.
//!
//! Whether a part qualifies is decided by its address alone: a payload the
//! muxer borrowed from the demuxer's map lies inside it; a converted one
//! (Annex B to length prefixes, ADTS stripped, a TS packet joined in the
//! source's scratch) lies in some buffer of the process and does not. The
//! map is shared ([`Arc`]) with the handle, so while the sink holds it the
//! range cannot be unmapped and reused by another allocation: an address
//! inside it always names the byte of the file at the same offset.
//!
//! The kernel's copy reads the file, not the map: a file truncated under
//! the map gives a short copy (the rest is then written from the map, whose
//! lost pages read as zeros, as the plain write would have written them),
//! never a `SIGBUS`.

use memmap2::Mmap;
use std::fs::File;
use std::sync::Arc;

/// The least length of a part handed to the kernel by default: shorter
/// parts are copied into the sink's combining buffer (or written with it),
/// which costs fewer system calls than a `copy_file_range` each
/// (`docs/bench/remux.md`, "Kernel copy").
pub const DEFAULT_KERNEL_COPY_MIN: usize = 64 << 10;

/// An input file's read-only map and a handle on the file, made by
/// [`crate::MmapSource::mapped_input`] and given to
/// [`crate::FileSink::set_input`].
#[derive(Debug)]
pub struct MappedInput {
    map: Arc<Mmap>,
    file: File,
}

impl MappedInput {
    pub(crate) fn new(map: Arc<Mmap>, file: File) -> Self {
        MappedInput { map, file }
    }

    /// The file offset of `part` when every byte of it lies inside the map
    /// (addresses compared as integers; nothing is read).
    pub(crate) fn offset_of(&self, part: &[u8]) -> Option<u64> {
        let base = self.map.as_ptr() as usize;
        let off = (part.as_ptr() as usize).checked_sub(base)?;
        let end = off.checked_add(part.len())?;
        (end <= self.map.len()).then_some(off as u64)
    }

    /// The file the map was made from.
    pub(crate) fn file(&self) -> &File {
        &self.file
    }

    /// The same map with another file handle (tests: a handle the kernel
    /// refuses to copy from, for the fallback).
    #[cfg(test)]
    pub(crate) fn with_file(&self, file: File) -> Self {
        MappedInput {
            map: Arc::clone(&self.map),
            file,
        }
    }
}

/// What a [`crate::FileSink`] handed to the kernel.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct KernelCopyStats {
    /// Parts copied by the kernel (whole or in part).
    pub parts: u64,
    /// Bytes the kernel copied.
    pub bytes: u64,
    /// `copy_file_range` calls that copied bytes.
    pub calls: u64,
    /// Parts that qualified (inside the map, long enough) but were written
    /// the ordinary way because the kernel's copy failed or stopped short,
    /// or had failed before for this sink (after a failure it is not tried
    /// again).
    pub fallbacks: u64,
    /// The `errno` of the failure that turned the kernel copy off
    /// (`EXDEV`, `ENOSYS`, `EINVAL`, ...), if any.
    pub failed_errno: Option<i32>,
}

/// Copies `len` bytes of `src` from `offset` to `out` at `out`'s position
/// (which moves by the bytes copied), going on after short copies and
/// interruptions. Gives the bytes copied, the calls that copied bytes and
/// how it ended: `Ok` when all were copied or `src` ended first (a short
/// count), the error that stopped it otherwise.
pub(crate) fn copy_range(src: &File, offset: u64, out: &File, len: usize) -> (usize, u64, std::io::Result<()>) {
    let mut done = 0usize;
    let mut calls = 0u64;
    while done < len {
        let at = offset.saturating_add(done as u64);
        match copy_once(src, at, out, len - done) {
            Ok(0) => break,
            Ok(n) => {
                done += n;
                calls += 1;
            }
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return (done, calls, Err(e)),
        }
    }
    (done, calls, Ok(()))
}

/// One `copy_file_range(src at offset, out at its position, len)`.
#[cfg(target_os = "linux")]
fn copy_once(src: &File, offset: u64, out: &File, len: usize) -> std::io::Result<usize> {
    use std::os::fd::AsRawFd;
    let mut off_in = libc::loff_t::try_from(offset).map_err(|_| std::io::Error::from_raw_os_error(libc::EOVERFLOW))?;
    // SAFETY: both descriptors are open for the borrows' life (`&File`);
    // `off_in` is a valid, aligned `loff_t` the call may update, and the
    // output offset is null (the file's own position is used and moved).
    // No user memory is read or written: the kernel copies between files.
    let n = unsafe {
        libc::copy_file_range(
            src.as_raw_fd(),
            &mut off_in,
            out.as_raw_fd(),
            std::ptr::null_mut(),
            len,
            0,
        )
    };
    usize::try_from(n).map_err(|_| std::io::Error::last_os_error())
}

/// No kernel copy on this system: every part is written the ordinary way.
#[cfg(not(target_os = "linux"))]
fn copy_once(_src: &File, _offset: u64, _out: &File, _len: usize) -> std::io::Result<usize> {
    Err(std::io::Error::from(std::io::ErrorKind::Unsupported))
}

/// A [`crate::FileSink`]'s kernel copy: the input, the least part length,
/// and what was done.
#[derive(Debug)]
pub(crate) struct KernelCopy {
    input: MappedInput,
    min_len: usize,
    /// Set by the first failure: later parts are written the ordinary way.
    off: bool,
    stats: KernelCopyStats,
}

impl KernelCopy {
    /// Parts of at least `min_len` bytes (0: [`DEFAULT_KERNEL_COPY_MIN`])
    /// inside `input`'s map qualify.
    pub(crate) fn new(input: MappedInput, min_len: usize) -> Self {
        let min_len = match min_len {
            0 => DEFAULT_KERNEL_COPY_MIN,
            n => n,
        };
        KernelCopy {
            input,
            min_len,
            off: false,
            stats: KernelCopyStats::default(),
        }
    }

    /// The file offset of `part` when it qualifies.
    pub(crate) fn offset_of(&self, part: &[u8]) -> Option<u64> {
        if part.len() < self.min_len {
            return None;
        }
        self.input.offset_of(part)
    }

    /// Whether a failure turned the copy off.
    pub(crate) fn is_off(&self) -> bool {
        self.off
    }

    /// Copies `part` (at `offset` in the input) to `out` at its position;
    /// gives the bytes copied and the calls made. The caller writes the
    /// rest, if any, the ordinary way ([`KernelCopy::fell_back`]).
    pub(crate) fn copy(&mut self, part: &[u8], offset: u64, out: &File) -> (usize, u64) {
        if self.off {
            return (0, 0);
        }
        let (done, calls, ended) = copy_range(self.input.file(), offset, out, part.len());
        self.stats.bytes += done as u64;
        self.stats.calls += calls;
        self.stats.parts += u64::from(done > 0);
        if let Err(e) = ended {
            self.off = true;
            self.stats.failed_errno = e.raw_os_error();
        }
        (done, calls)
    }

    /// Counts `n` qualifying parts written the ordinary way.
    pub(crate) fn fell_back(&mut self, n: u64) {
        self.stats.fallbacks += n;
    }

    pub(crate) fn stats(&self) -> KernelCopyStats {
        self.stats
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::indexing_slicing, clippy::unwrap_used)]
    use super::*;
    use crate::{FileSink, MmapSource};
    use mediaslice::Sink;

    /// Bytes that differ from place to place.
    fn bytes(seed: usize, len: usize) -> Vec<u8> {
        (0..len).map(|i| (i * 131 + seed * 17 + i / 251) as u8).collect()
    }

    /// Appends to `s` and to `model` a mix of parts from the input's map
    /// (`data`), long and short, and parts of the process's own memory,
    /// with patches in the file and in the combining buffer; gives the
    /// number of map parts of at least `min` bytes appended.
    fn mixed_appends(s: &mut FileSink, model: &mut Vec<u8>, data: &[u8], min: usize) -> u64 {
        let own = bytes(7, 100_000);
        let mut qualifying = 0u64;
        let mut append = |s: &mut FileSink, model: &mut Vec<u8>, parts: &[&[u8]]| {
            s.write_vectored(parts).unwrap();
            for p in parts {
                model.extend_from_slice(p);
                qualifying += u64::from(p.len() >= min && data.as_ptr_range().contains(&p.as_ptr()));
            }
            assert_eq!(s.position(), model.len() as u64);
        };
        append(s, model, &[b"head"]);
        // A header and a long payload of the map, as a muxer writes them.
        append(s, model, &[b"[hdr]", &data[1000..71_000]]);
        // A short one: combined, not copied.
        append(s, model, &[b"[hdr]", &data[5..900]]);
        // A long part of the process's memory: written, not copied.
        append(s, model, &[b"[own]", &own]);
        // Map, own, map, and a map part at the very end of the map.
        let end = data.len();
        append(
            s,
            model,
            &[&data[200_000..300_000], b"mid", &own[..300], &data[end - 66_000..]],
        );
        // Copied bytes land where the patches expect them.
        s.patch_at(4 + 5 + 3, b"PATCHED").unwrap();
        model[12..19].copy_from_slice(b"PATCHED");
        append(s, model, &[b"tail"]);
        let at = model.len() - 3;
        s.patch_at(at as u64, b"END").unwrap();
        model[at..].copy_from_slice(b"END");
        qualifying
    }

    fn setup(name: &str) -> (std::path::PathBuf, MmapSource) {
        let dir = std::env::temp_dir().join(format!("mediaslice-kcopy-{}-{name}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("in.bin"), bytes(1, 400_000)).unwrap();
        let src = MmapSource::open(dir.join("in.bin")).unwrap();
        (dir, src)
    }

    #[test]
    fn parts_inside_the_map_go_to_the_kernel_and_give_the_same_bytes() {
        let (dir, src) = setup("copy");
        for min in [1usize, 4096, DEFAULT_KERNEL_COPY_MIN] {
            let mut s = FileSink::create(dir.join("out.bin")).unwrap();
            s.set_input(src.mapped_input().unwrap().unwrap(), min);
            let mut model = Vec::new();
            let qualifying = mixed_appends(&mut s, &mut model, src.data(), min);
            let k = s.kernel_copy_stats();
            let target = s.target().to_path_buf();
            s.commit().unwrap();
            assert_eq!(std::fs::read(&target).unwrap(), model, "min {min}");
            assert!(qualifying > 0, "min {min}: the test appends qualifying parts");
            if cfg!(target_os = "linux") {
                assert_eq!(
                    (k.parts, k.fallbacks, k.failed_errno),
                    (qualifying, 0, None),
                    "min {min}"
                );
            } else {
                assert_eq!((k.parts, k.fallbacks), (0, qualifying), "min {min}");
            }
        }
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_refused_copy_falls_back_to_writes_and_is_counted() {
        let (dir, src) = setup("fallback");
        // A handle open for writing only: the kernel refuses to copy from it
        // (EBADF), as it refuses across file systems (EXDEV).
        let write_only = std::fs::OpenOptions::new()
            .write(true)
            .open(dir.join("in.bin"))
            .unwrap();
        let mut s = FileSink::create(dir.join("out.bin")).unwrap();
        s.set_input(src.mapped_input().unwrap().unwrap().with_file(write_only), 1);
        let mut model = Vec::new();
        let qualifying = mixed_appends(&mut s, &mut model, src.data(), 1);
        let k = s.kernel_copy_stats();
        assert_eq!((k.parts, k.bytes, k.fallbacks), (0, 0, qualifying));
        if cfg!(target_os = "linux") {
            assert_eq!(k.failed_errno, Some(libc::EBADF));
        }
        let target = s.target().to_path_buf();
        s.commit().unwrap();
        assert_eq!(std::fs::read(&target).unwrap(), model);
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn only_slices_wholly_inside_the_map_have_an_offset() {
        let (dir, src) = setup("offsets");
        let m = src.mapped_input().unwrap().unwrap();
        let data = src.data();
        assert_eq!(m.offset_of(&data[123..456]), Some(123));
        assert_eq!(m.offset_of(&data[data.len() - 1..]), Some(data.len() as u64 - 1));
        let copy = data[..1000].to_vec();
        assert_eq!(m.offset_of(&copy), None);
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
