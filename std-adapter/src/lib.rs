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
//!   writes), with `writev` for a header and a borrowed payload, and
//!   `copy_file_range` for a long payload borrowed from the input's map
//!   ([`FileSink::set_input`] with a [`MappedInput`]).
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
//! # Reading a file: memory map, positioned reads, or any reader
//!
//! The same demuxer over three sources. `clip()` writes a small WAV file
//! (1,000 stereo frames of 16-bit PCM) so that the examples run.
//!
//! ```
//! use mediaslice::{Codec, Demuxer, FormatKind, ReaderSource};
//! use mediaslice_std::{FileSource, MmapSource, StdIo};
//! # fn clip() -> std::io::Result<std::path::PathBuf> {
//! #     let data = [0u8; 4000];
//! #     let mut f = b"RIFF".to_vec();
//! #     f.extend_from_slice(&(36 + data.len() as u32).to_le_bytes());
//! #     f.extend_from_slice(b"WAVEfmt ");
//! #     f.extend_from_slice(&16u32.to_le_bytes());
//! #     f.extend_from_slice(&1u16.to_le_bytes());
//! #     f.extend_from_slice(&2u16.to_le_bytes());
//! #     f.extend_from_slice(&8000u32.to_le_bytes());
//! #     f.extend_from_slice(&32000u32.to_le_bytes());
//! #     f.extend_from_slice(&4u16.to_le_bytes());
//! #     f.extend_from_slice(&16u16.to_le_bytes());
//! #     f.extend_from_slice(b"data");
//! #     f.extend_from_slice(&(data.len() as u32).to_le_bytes());
//! #     f.extend_from_slice(&data);
//! #     let path = std::env::temp_dir().join(format!("mediaslice-doc-{}.wav", std::process::id()));
//! #     std::fs::write(&path, f)?;
//! #     Ok(path)
//! # }
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let path = clip()?;
//!
//! // A memory map: packets borrow the map, zero copy, any file size.
//! let mut demuxer = Demuxer::open(MmapSource::open(&path)?, None)?;
//! assert_eq!(demuxer.format(), FormatKind::Wav);
//! assert_eq!(demuxer.tracks().first().map(|t| t.codec), Some(Codec::PcmS16Le));
//! let mut mapped = 0;
//! while let Some(packet) = demuxer.next_packet()? {
//!     mapped += packet.data.len();
//! }
//!
//! // Positioned reads (`pread`) with a small block cache: for files on
//! // network shares, or where a map is unwelcome.
//! let mut demuxer = Demuxer::open(FileSource::open(&path)?, None)?;
//! let mut read = 0;
//! while let Some(packet) = demuxer.next_packet()? {
//!     read += packet.data.len();
//! }
//!
//! // Any `std::io::Read + Seek`, seen as an `embedded_io` reader: core's
//! // `ReaderSource` with a scratch buffer the caller sizes.
//! let file = std::fs::File::open(&path)?;
//! let source = ReaderSource::new(StdIo(file), vec![0u8; 64 * 1024])?;
//! let mut demuxer = Demuxer::open(source, Some("wav"))?;
//! let mut streamed = 0;
//! while let Some(packet) = demuxer.next_packet()? {
//!     streamed += packet.data.len();
//! }
//! assert_eq!((mapped, read, streamed), (4000, 4000, 4000));
//! # std::fs::remove_file(&path)?;
//! # Ok(())
//! # }
//! ```
//!
//! # Reading over HTTP
//!
//! [`HttpSource`] (feature `http`) reads a URL with `Range` requests
//! through a bounded block cache; its [`HttpStats`] say what the reads
//! cost. `serve()` answers range requests for a WAV file on a local port so
//! that the example runs.
//!
//! ```
//! # #[cfg(feature = "http")]
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! use mediaslice::{Demuxer, FormatKind};
//! use mediaslice_std::HttpSource;
//! # fn serve() -> std::io::Result<String> {
//! #     use std::io::{BufRead, BufReader, Write};
//! #     let data = [0u8; 4000];
//! #     let mut f = b"RIFF".to_vec();
//! #     f.extend_from_slice(&(36 + data.len() as u32).to_le_bytes());
//! #     f.extend_from_slice(b"WAVEfmt ");
//! #     f.extend_from_slice(&16u32.to_le_bytes());
//! #     f.extend_from_slice(&1u16.to_le_bytes());
//! #     f.extend_from_slice(&2u16.to_le_bytes());
//! #     f.extend_from_slice(&8000u32.to_le_bytes());
//! #     f.extend_from_slice(&32000u32.to_le_bytes());
//! #     f.extend_from_slice(&4u16.to_le_bytes());
//! #     f.extend_from_slice(&16u16.to_le_bytes());
//! #     f.extend_from_slice(b"data");
//! #     f.extend_from_slice(&(data.len() as u32).to_le_bytes());
//! #     f.extend_from_slice(&data);
//! #     let listener = std::net::TcpListener::bind("127.0.0.1:0")?;
//! #     let url = format!("http://{}/clip.wav", listener.local_addr()?);
//! #     std::thread::spawn(move || {
//! #         for mut stream in listener.incoming().flatten() {
//! #             let (mut from, mut to) = (0, f.len() - 1);
//! #             let mut reader = BufReader::new(&mut stream);
//! #             let mut line = String::new();
//! #             while reader.read_line(&mut line).map_or(false, |n| n > 2) {
//! #                 let lower = line.trim().to_ascii_lowercase();
//! #                 if let Some((a, b)) = lower.strip_prefix("range: bytes=").and_then(|r| r.split_once('-')) {
//! #                     from = a.parse().unwrap_or(0);
//! #                     to = b.parse().unwrap_or(to).min(f.len() - 1);
//! #                 }
//! #                 line.clear();
//! #             }
//! #             let body = &f[from.min(to)..=to];
//! #             let head = format!(
//! #                 "HTTP/1.1 206 Partial Content\r\nContent-Range: bytes {from}-{to}/{}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
//! #                 f.len(),
//! #                 body.len()
//! #             );
//! #             let _ = stream.write_all(head.as_bytes()).and_then(|_| stream.write_all(body));
//! #         }
//! #     });
//! #     Ok(url)
//! # }
//! let url = serve()?;
//! let mut demuxer = Demuxer::open(HttpSource::open(&url)?, None)?;
//! assert_eq!(demuxer.format(), FormatKind::Wav);
//! let mut payload = 0;
//! while let Some(packet) = demuxer.next_packet()? {
//!     payload += packet.data.len();
//! }
//! assert_eq!(payload, 4000);
//! let stats = demuxer.source().http_stats();
//! assert!(stats.requests >= 1);
//! # Ok(())
//! # }
//! # #[cfg(not(feature = "http"))]
//! # fn main() {}
//! ```
//!
//! # Features
//!
#![cfg_attr(feature = "document-features", doc = document_features::document_features!())]
//!
#![cfg_attr(
    not(feature = "document-features"),
    doc = "All on by default; `Cargo.toml` documents each (`cli`, `json`, `http`, `https`)."
)]
//!
//! All are on by default (the workspace's `cargo build` and `cargo test`
//! build the tool). A library that needs only the mmap, `pread` and file
//! sources and sinks and [`remux`] turns them off with
//! `default-features = false` and builds `memmap2`, `libc`, `embedded-io`
//! and `mediaslice` alone (17 packages with this one, against 69 with the
//! defaults; see `docs/packaging.md`).

#![cfg_attr(docsrs, feature(doc_cfg))]

mod civil_time;
pub mod dash;
#[cfg(feature = "json")]
#[cfg_attr(docsrs, doc(cfg(feature = "json")))]
pub mod ffprobe;
mod file;
pub mod fragmented;
#[cfg(feature = "http")]
mod http;
pub mod input;
mod kernel_copy;
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
pub use input::{InputRead, InputSource};
pub use kernel_copy::{KernelCopyStats, MappedInput, DEFAULT_KERNEL_COPY_MIN};
pub use mmap::MmapSource;
pub use sink::{FileSink, StdoutSink, StreamSink};
pub use spill::TempSpill;
pub use stdio::StdIo;

/// A [`mediaslice::ReaderSource`] over a [`std::fs::File`] with an owned
/// scratch buffer.
pub type FileReaderSource = mediaslice::ReaderSource<StdIo<std::fs::File>, Vec<u8>>;
