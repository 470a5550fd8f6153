//! How the write commands (`remux`, `package`, `repair`) read their input
//! file: [`InputRead`] names the source, [`InputSource`] opens it once per
//! pass. Every format is read by the same demuxers whichever source serves
//! the bytes, so the outputs are the same (tested:
//! `std-adapter/tests/input_read.rs`); only memory and system calls differ
//! (`docs/sources.md`).

use crate::{open_regular_file, FileReaderSource, FileSource, MappedInput, MmapSource, StdIo};
use mediaslice::{Demuxer, Limits, ReaderSource, Source};
use std::path::Path;

/// How a write command reads its input file (the CLI's `--source`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum InputRead {
    /// Positioned reads through [`FileSource`]: payloads are copied into a
    /// scratch buffer the size of the largest packet, and nothing of the
    /// file stays mapped, so the resident memory does not depend on how the
    /// kernel holds the file's page cache. The default: with large
    /// page-cache folios a map keeps 4 to 11 MiB of the input resident on a
    /// 4.5 GiB file (`docs/bench/package-memory.md`).
    #[default]
    Pread,
    /// A read-only memory map ([`MmapSource`]): packets borrow the map (no
    /// copy), and its pages are released every 2 MiB served; a page-cache
    /// folio of up to 2 MiB is mapped whole on one fault. `--kernel-copy`
    /// needs it (the sink knows a payload by its address in the map).
    Mmap,
    /// core's streaming [`mediaslice::ReaderSource`] over the file
    /// ([`FileReaderSource`]): the embedded path, 4 KiB of header cache and
    /// a scratch of 16 MiB (or the demuxer's stated largest packet), of
    /// which only the pages a packet fills become resident.
    Reader,
}

/// A source a write command opens on a file path, once per pass.
pub trait InputSource: Source + Sized {
    /// The source over the file at `path`.
    ///
    /// Errors: the file cannot be opened, is not a regular file, or (a
    /// map) cannot be mapped.
    fn open_path(path: &Path) -> std::io::Result<Self>;

    /// A demuxer over this source, the format detected with `ext` as the
    /// hint.
    ///
    /// Errors: the demuxer's.
    fn demuxer(self, ext: Option<&str>) -> mediaslice::Result<Demuxer<Self>> {
        Demuxer::open(self, ext)
    }

    /// [`InputSource::open_path`], then [`InputSource::demuxer`]: one pass's
    /// demuxer.
    ///
    /// Errors: the file cannot be opened (`InvalidArgument`, "cannot open
    /// the input"), or the demuxer's.
    fn open_demuxer(path: &Path, ext: Option<&str>) -> mediaslice::Result<Demuxer<Self>> {
        let src = Self::open_path(path)
            .map_err(|_| mediaslice::Error::new(mediaslice::ErrorKind::InvalidArgument, 0, &"cannot open the input"))?;
        src.demuxer(ext)
    }

    /// The map behind the source, for [`crate::FileSink::set_input`];
    /// `None` for a source that copies.
    ///
    /// Errors: the file handle cannot be duplicated.
    fn mapped_input(&self) -> std::io::Result<Option<MappedInput>> {
        Ok(None)
    }
}

impl InputSource for MmapSource {
    fn open_path(path: &Path) -> std::io::Result<Self> {
        MmapSource::open(path)
    }
    /// Every packet is read in order: read-ahead is asked for
    /// (`MADV_SEQUENTIAL`).
    fn demuxer(self, ext: Option<&str>) -> mediaslice::Result<Demuxer<Self>> {
        self.advise_sequential();
        Demuxer::open(self, ext)
    }
    fn mapped_input(&self) -> std::io::Result<Option<MappedInput>> {
        MmapSource::mapped_input(self)
    }
}

impl InputSource for FileSource {
    fn open_path(path: &Path) -> std::io::Result<Self> {
        FileSource::open(path)
    }
}

impl InputSource for FileReaderSource {
    fn open_path(path: &Path) -> std::io::Result<Self> {
        let file = open_regular_file(path)?;
        ReaderSource::new(StdIo(file), vec![0u8; READER_SCRATCH]).map_err(|e| std::io::Error::other(e.to_string()))
    }
    /// The scratch grows to the demuxer's stated largest packet when it is
    /// larger than [`READER_SCRATCH`] (see [`reader_demuxer`]).
    fn demuxer(self, ext: Option<&str>) -> mediaslice::Result<Demuxer<Self>> {
        let d = Demuxer::open(self, ext)?;
        let max = Limits::default().max_packet as usize;
        match d.max_packet_size() {
            Some(n) if n > READER_SCRATCH => {
                let (reader, mut scratch) = d.into_source().into_inner();
                scratch.resize(n.min(max), 0);
                Demuxer::open(ReaderSource::new(reader, scratch)?, ext)
            }
            _ => Ok(d),
        }
    }
}

/// Scratch a [`FileReaderSource`] gets before the demuxer can say how large
/// its packets are: 16 MiB, zeroed, so that only the pages a packet fills
/// become resident.
pub const READER_SCRATCH: usize = 16 << 20;

/// A demuxer over `file` through core's streaming reader: the scratch is
/// [`READER_SCRATCH`], or the demuxer's own bound when it states a larger
/// one (then the headers are read again with the larger scratch), at most
/// [`Limits::max_packet`].
///
/// Errors: the demuxer's.
pub fn reader_demuxer(file: std::fs::File, ext: Option<&str>) -> mediaslice::Result<Demuxer<FileReaderSource>> {
    ReaderSource::new(StdIo(file), vec![0u8; READER_SCRATCH])?.demuxer(ext)
}

/// Runs `$body` with the type alias `$s` naming the source `$read` chooses
/// (a generic function called with `::<$s>`).
macro_rules! with_input {
    ($read:expr, $s:ident => $body:expr) => {
        match $read {
            $crate::input::InputRead::Pread => {
                type $s = $crate::FileSource;
                $body
            }
            $crate::input::InputRead::Mmap => {
                type $s = $crate::MmapSource;
                $body
            }
            $crate::input::InputRead::Reader => {
                type $s = $crate::FileReaderSource;
                $body
            }
        }
    };
}
pub(crate) use with_input;
