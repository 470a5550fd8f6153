//! std sources and sinks for mediaslice, and the pieces of the `mediaslice`
//! command-line tool that are worth reusing.
//!
//! * [`MmapSource`]: a read-only memory map of a file. Packets borrow the map
//!   (zero copy), exactly as with [`mediaslice::SliceSource`]; the operating
//!   system pages the file in on demand, so files of any size (over 4 GiB
//!   included) open with little resident memory. A zero-length file, which
//!   cannot be mapped, is served as an empty slice. A file truncated while
//!   it is mapped gives a `Truncated` error, not `SIGBUS` (Linux: a
//!   process-wide guard, see [`MmapSource`]).
//! * [`FileSource`]: positioned reads (`pread`) on a [`std::fs::File`], with a
//!   small fixed cache of blocks for header and table reads and an owned
//!   scratch buffer for packet payloads. Its [`mediaslice::IoStats`] count the
//!   real system calls, so `mediaslice io` reports what a probe costs.
//! * [`HttpSource`]: a resource on an HTTP(S) server, read with closed
//!   `Range` requests through a bounded block cache with read-ahead; its
//!   stats count requests and body bytes; per-open caps bound both, the
//!   bytes skipped for a server that ignores `Range` and the tiny answers,
//!   and a deadline and a least transfer rate bound the time.
//! * [`open_regular_file`]: opens a path for reading only if it is a
//!   regular file, without blocking on a FIFO.
//! * [`FileSink`]: a file for a muxer to write, under a temporary name in
//!   its target's folder until [`FileSink::commit`] renames it over the
//!   target; dropped without a commit, it is removed. Patchable (positioned
//!   writes), with `writev` for a header and a borrowed payload.
//! * [`StdoutSink`] (a [`StreamSink`] over standard output): a stream, not
//!   patchable.
//! * [`remux`]: `mediaslice remux` as a library: any input rewrapped into
//!   Matroska or WebM through [`FileSink`] or [`StdoutSink`].
//! * [`tagedit`]: `mediaslice tags --set/--remove` as a library: FLAC,
//!   MP3, MP4 and WAV tags edited in place when they fit, else by a streaming
//!   copy.
//! * [`StdIo`]: wraps any [`std::io::Read`] + [`std::io::Seek`] as an
//!   [`embedded_io`] reader, for [`mediaslice::ReaderSource`].
//! * [`ffprobe`]: ffprobe-compatible spellings (FourCC strings, times,
//!   codec tags) used by the JSON output.
//!
//! # Features
//!
//! All on by default (the workspace's `cargo build` and `cargo test` build
//! the tool). A library that needs only the mmap, `pread` and file sources
//! and sinks and [`remux`] turns them off with `default-features = false`
//! and builds `memmap2`, `libc`, `embedded-io` and `mediaslice` alone (17
//! packages with this one, against 69 with the defaults; see
//! `docs/packaging.md`).
//!
//! * `http`: [`HttpSource`] over ureq, plain `http://` URLs only.
//! * `https`: `https://` URLs too, through rustls.
//! * `json`: [`ffprobe`] and [`scan`] (serde_json); implies `http`.
//! * `cli`: the `mediaslice` binary (clap, indicatif, crc32fast, walkdir,
//!   glob); implies `json`.

#![cfg_attr(docsrs, feature(doc_cfg))]

pub mod dash;
#[cfg(feature = "json")]
#[cfg_attr(docsrs, doc(cfg(feature = "json")))]
pub mod ffprobe;
mod file;
pub mod fragmented;
#[cfg(feature = "http")]
mod http;
pub mod live;
mod mmap;
pub mod package;
pub mod remux;
pub mod repair;
#[cfg(feature = "json")]
#[cfg_attr(docsrs, doc(cfg(feature = "json")))]
pub mod scan;
mod scratch;
mod sigbus;
mod sink;
mod spill;
mod stdio;
pub mod tagedit;

pub use file::{open_regular_file, FileSource};
#[cfg(feature = "http")]
#[cfg_attr(docsrs, doc(cfg(feature = "http")))]
pub use http::{is_http_url, ErrorLog, HttpConfig, HttpSource, HttpStats};
pub use mmap::MmapSource;
pub use sink::{FileSink, StdoutSink, StreamSink};
pub use spill::TempSpill;
pub use stdio::StdIo;

/// A [`mediaslice::ReaderSource`] over a [`std::fs::File`] with an owned
/// scratch buffer.
pub type FileReaderSource = mediaslice::ReaderSource<StdIo<std::fs::File>, Vec<u8>>;
