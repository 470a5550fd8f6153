//! `mediaslice`: probe media files, list their packets and tags, and count
//! the I/O a probe costs, with ffprobe's JSON field names.
//!
//! See `docs/cli.md` for the commands, the JSON fields and the exit codes.

use clap::{Args, Parser, Subcommand, ValueEnum};
// CRC-32 of payloads (`--summary`, `data_hash`): crc32fast picks a
// carry-less-multiply (PCLMULQDQ / PMULL) kernel at run time, 6.5x core's
// portable slicing-by-8 on this machine; the values are the same (IEEE CRC-32).
use crc32fast::{hash as crc32, Hasher as Crc32};
use mediaslice::codec::facts::VideoFacts;
use mediaslice::{Demuxer, Limits, ReaderSource, Source, TagKey, TagScope, TagValue};
use mediaslice_std::ffprobe::{self, FormatFacts, TagSet, Timing};
use mediaslice_std::{
    is_http_url, open_regular_file, ErrorLog, FileReaderSource, FileSource, HttpConfig, HttpSource, MmapSource, StdIo,
};
use std::fmt;
use std::io::IsTerminal;
use std::io::{self, BufWriter, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::{Duration, Instant};

/// Exit code: success.
const EXIT_OK: u8 = 0;
/// Exit code: the file could not be read (missing, unreadable, unsupported,
/// damaged headers), or reading stopped at damage after some output.
const EXIT_FAILED: u8 = 1;
/// Exit code: the input is truncated; everything before the cut was printed.
const EXIT_TRUNCATED: u8 = 2;
/// Exit code: the command line was not understood.
const EXIT_USAGE: u8 = 64;

/// Scratch given to `--source reader` before the demuxer can say how large
/// its packets are.
const READER_SCRATCH: usize = 16 << 20;
/// Most tags read from one file (a guard; demuxers bound their own walks).
const MAX_TAGS: usize = 100_000;

#[derive(Parser, Debug)]
#[command(
    name = "mediaslice",
    version,
    about = "Zero-copy media demuxer: probe, packets, tags and I/O counts"
)]
struct Cli {
    /// How to read the file: `mmap` (memory map, zero copy; the default),
    /// `pread` (positioned reads, counted; the default of `io`), `reader`
    /// (mediaslice's streaming ReaderSource over the file).
    #[arg(long, global = true, value_enum)]
    source: Option<SourceKind>,
    /// Shorthand for `--source reader`.
    #[arg(long, global = true, conflicts_with = "source")]
    reader: bool,
    /// HTTP(S) URLs: seconds to wait for a connection, a response or a
    /// read of its body.
    #[arg(long, global = true, value_name = "SECS", default_value_t = 30.0)]
    http_timeout: f64,
    /// HTTP(S) URLs: most redirects followed per request.
    #[arg(long, global = true, value_name = "N", default_value_t = 5)]
    http_redirects: u32,
    /// HTTP(S) URLs: most requests per run (default: 250 for `probe`,
    /// `tags` and `io`; for `packets`, 2000 plus one per 16 KiB of the
    /// resource).
    #[arg(long, global = true, value_name = "N")]
    http_max_requests: Option<u64>,
    /// HTTP(S) URLs: most body bytes received per run (default: 32 MiB for
    /// `probe`, `tags` and `io`; for `packets`, the resource's length plus
    /// an eighth plus 16 MiB).
    #[arg(long, global = true, value_name = "BYTES")]
    http_max_bytes: Option<u64>,
    /// HTTP(S) URLs: most body bytes skipped per run when the server ignores
    /// `Range` and sends the whole body.
    #[arg(long, global = true, value_name = "BYTES", default_value_t = HttpSource::DEFAULT_MAX_SKIP)]
    http_max_skip: u64,
    /// HTTP(S) URLs: most seconds the whole run may spend on HTTP (default:
    /// 60 for `probe`, `tags` and `io`, 600 for `packets`); 0 for none.
    #[arg(long, global = true, value_name = "SECS")]
    http_deadline: Option<f64>,
    /// HTTP(S) URLs: least transfer rate in bytes per second, averaged over
    /// `--http-speed-time` (as curl's `--speed-limit`); 0 for none.
    #[arg(long, global = true, value_name = "BYTES", default_value_t = 1024)]
    http_speed_limit: u64,
    /// HTTP(S) URLs: the window of `--http-speed-limit`, in seconds of
    /// waiting on the network (as curl's `--speed-time`).
    #[arg(long, global = true, value_name = "SECS", default_value_t = 20.0)]
    http_speed_time: f64,
    #[command(subcommand)]
    cmd: Cmd,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
enum SourceKind {
    /// Memory-mapped file; packets borrow the map.
    Mmap,
    /// Positioned reads with a small block cache.
    Pread,
    /// `mediaslice::ReaderSource` over the file, with scratch.
    Reader,
    /// HTTP range requests (chosen by an http:// or https:// argument).
    #[value(skip)]
    Http,
}

#[derive(Subcommand, Debug)]
enum Cmd {
    /// Format and streams.
    Probe(FileArgs),
    /// Every packet (ffprobe's `-show_packets -show_streams -show_format` with `--json`).
    Packets {
        #[command(flatten)]
        file: FileArgs,
        /// Print only one JSON object: packet count, bytes and CRC-32 of all payloads.
        #[arg(long)]
        summary: bool,
    },
    /// The tags: key, common name, value and scope.
    Tags(FileArgs),
    /// Probe (open, tracks, duration, tags) and print the bytes and reads it took.
    Io(FileArgs),
    /// Rewrap IN into OUT without touching the payload (`-` as OUT: stdout,
    /// Matroska live mode). See `docs/write-side.md`.
    Remux(RemuxArgs),
    /// Package IN for HLS into OUTDIR: CMAF init + media segments, media
    /// and multivariant playlists (`--hls [--segment 6s]`).
    Package(PackageArgs),
    /// Peak resident memory and heap per phase (open, tracks and tags, every
    /// packet, seek), as JSON; for benches/scripts/memory.sh.
    #[command(hide = true)]
    Phases(FileArgs),
}

#[derive(Args, Debug)]
struct FileArgs {
    /// The media file, or an http:// or https:// URL.
    file: PathBuf,
    /// JSON output with ffprobe's field names.
    #[arg(long)]
    json: bool,
}

#[derive(Args, Debug)]
struct RemuxArgs {
    /// The input file.
    input: PathBuf,
    /// The output file (written under a temporary name, renamed at the end),
    /// or `-` for standard output.
    output: PathBuf,
    /// The output format: mkv (mka, matroska), webm, mp4 (m4a, m4v), mov or
    /// fmp4 (cmaf); by default from OUT's extension. MP4 and MOV need an
    /// output file.
    #[arg(long, value_name = "FORMAT")]
    format: Option<String>,
    /// The input streams to write, by index (`0,2`); all by default.
    #[arg(long, value_name = "LIST", value_delimiter = ',')]
    streams: Option<Vec<usize>>,
    /// Write the stream form (Matroska unknown sizes, nothing patched) even
    /// to a file (Matroska and WebM only).
    #[arg(long)]
    live: bool,
    /// MP4/MOV: place the index (`moov`) before the media, for playback
    /// that starts while the file downloads (two passes over the input; the
    /// payload is written once).
    #[arg(long)]
    faststart: bool,
    /// Fragmented MP4 / CMAF (the same as `--format fmp4`).
    #[arg(long)]
    fragmented: bool,
    /// Least fragment duration of fragmented MP4, in milliseconds (2000).
    #[arg(long, value_name = "MS")]
    fragment_ms: Option<u32>,
}

#[derive(Args, Debug)]
struct PackageArgs {
    /// The input file.
    input: PathBuf,
    /// The output folder (created).
    outdir: PathBuf,
    /// HLS (the only packaging so far).
    #[arg(long)]
    hls: bool,
    /// Least segment duration (`6s`, `2.5s`, `500ms`); segments start at
    /// video keyframes.
    #[arg(long, value_name = "DURATION", default_value = "6s")]
    segment: String,
}

/// A bar on stderr for `remux` when stderr is a terminal (indicatif draws
/// nothing otherwise), bytes of the input read.
fn remux_progress_bar() -> Option<indicatif::ProgressBar> {
    if !io::stderr().is_terminal() {
        return None;
    }
    let bar = indicatif::ProgressBar::new(0);
    let style = indicatif::ProgressStyle::with_template("mediaslice remux {bar:30} {bytes}/{total_bytes} {eta}")
        .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar());
    bar.set_style(style);
    Some(bar)
}

/// `mediaslice remux`: the work is `mediaslice_std::remux`; this prints
/// its report (on stderr: stdout may be the output) and picks the exit code.
fn cmd_remux(a: &RemuxArgs) -> u8 {
    use mediaslice_std::remux::{remux_file, RemuxFormat, RemuxOptions};
    let name = a.input.to_string_lossy();
    let format = match a.format.as_deref().map(|f| (f, RemuxFormat::from_name(f))) {
        Some((f, None)) => {
            eprintln!("mediaslice: --format {f}: not a remux target (mkv, mka, webm, mp4, m4a, mov, fmp4)");
            return EXIT_USAGE;
        }
        Some((_, some)) => some,
        None => a.fragmented.then_some(RemuxFormat::Fmp4),
    };
    let started = Instant::now();
    let bar = remux_progress_bar();
    let opts = RemuxOptions {
        format,
        streams: a.streams.clone(),
        live: a.live,
        faststart: a.faststart,
        progress: bar.clone().map(|b| -> mediaslice_std::remux::Progress {
            std::sync::Arc::new(move |pos, total| {
                b.set_length(total);
                b.set_position(pos);
            })
        }),
        fragment_ms: a.fragment_ms,
        ..Default::default()
    };
    let result = remux_file(&a.input, &a.output, &opts);
    if let Some(b) = bar {
        b.finish_and_clear();
    }
    match result {
        Ok(r) => {
            for (i, why) in &r.skipped {
                eprintln!("mediaslice: {name}: stream {i} left out: {why}");
            }
            let secs = started.elapsed().as_secs_f64();
            eprintln!(
                "mediaslice: {} -> {}: {} streams, {} packets, {} bytes written in {secs:.3} s",
                name,
                a.output.to_string_lossy(),
                r.tracks,
                r.packets,
                r.bytes
            );
            match r.stopped {
                Some(e) => {
                    eprintln!("mediaslice: {name}: the input stopped early ({e}); every packet before it was written");
                    if e.is_truncation() {
                        EXIT_TRUNCATED
                    } else {
                        EXIT_FAILED
                    }
                }
                None => EXIT_OK,
            }
        }
        Err(e) => {
            eprintln!("mediaslice: {name}: {e}");
            EXIT_FAILED
        }
    }
}

/// Why a run stopped.
enum Failure {
    /// Opening or mapping the file.
    Open(io::Error),
    /// The demuxer.
    Demux(mediaslice::Error),
    /// Writing the output.
    Write(io::Error),
}

impl fmt::Display for Failure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Failure::Open(e) | Failure::Write(e) => write!(f, "{e}"),
            Failure::Demux(e) => write!(f, "{e}"),
        }
    }
}

impl From<io::Error> for Failure {
    fn from(e: io::Error) -> Self {
        Failure::Write(e)
    }
}

impl From<serde_json::Error> for Failure {
    fn from(e: serde_json::Error) -> Self {
        Failure::Write(e.into())
    }
}

impl From<mediaslice::Error> for Failure {
    fn from(e: mediaslice::Error) -> Self {
        Failure::Demux(e)
    }
}

/// What a command produced: output was written; maybe reading stopped early.
type Outcome = Result<Option<mediaslice::Error>, Failure>;

/// An open demuxer over the chosen source (boxed: a reader source carries
/// its block cache inline).
enum Opened {
    Mmap(Box<Demuxer<MmapSource>>),
    Pread(Box<Demuxer<FileSource>>),
    Reader(Box<Demuxer<FileReaderSource>>),
    Http(Box<Demuxer<HttpSource>>),
}

/// Runs `$body` with `$d: &mut Demuxer<_>` for whichever source is open.
macro_rules! with_demuxer {
    ($opened:expr, $d:ident => $body:expr) => {
        match $opened {
            Opened::Mmap(mut b) => {
                let $d = &mut *b;
                $body
            }
            Opened::Pread(mut b) => {
                let $d = &mut *b;
                $body
            }
            Opened::Reader(mut b) => {
                let $d = &mut *b;
                $body
            }
            Opened::Http(mut b) => {
                let $d = &mut *b;
                $body
            }
        }
    };
}

fn ext_hint(path: &Path) -> Option<String> {
    path.extension().map(|e| e.to_string_lossy().to_ascii_lowercase())
}

/// The extension of a URL's path (query and fragment dropped).
fn url_ext_hint(url: &str) -> Option<String> {
    let path = url.split(['?', '#']).next().unwrap_or(url);
    let path = path.split_once("://").map_or(path, |(_, rest)| rest);
    let path = path.find('/').and_then(|i| path.get(i..)).unwrap_or("");
    ext_hint(Path::new(path))
}

/// The argument as a URL, when it is an http:// or https:// one.
fn as_url(path: &Path) -> Option<&str> {
    path.to_str().filter(|s| is_http_url(s))
}

/// What a probe (`probe`, `tags`, `io`) may cost over HTTP by default: the
/// corpus and 40 MB files of each family need at most 15 requests and 684
/// KB per probe (`docs/bench/io.md`); these leave room for large headers
/// (the `moov` of a long film is several MB) and no more.
const PROBE_MAX_REQUESTS: u64 = 250;
const PROBE_MAX_BYTES: u64 = 32 << 20;
const PROBE_DEADLINE: f64 = 60.0;
/// A pass over every packet: the caps follow the resource's length (the
/// library's defaults), the deadline is longer.
const PASS_DEADLINE: f64 = 600.0;

/// Seconds as a duration; 0 (or a bad value) for none.
fn secs(v: f64) -> Option<Duration> {
    Duration::try_from_secs_f64(v).ok().filter(|d| !d.is_zero())
}

fn http_config(cli: &Cli) -> HttpConfig {
    let t = secs(cli.http_timeout);
    let probe = matches!(cli.cmd, Cmd::Probe(_) | Cmd::Tags(_) | Cmd::Io(_));
    let (requests, bytes, deadline) = if probe {
        (Some(PROBE_MAX_REQUESTS), Some(PROBE_MAX_BYTES), PROBE_DEADLINE)
    } else {
        (None, None, PASS_DEADLINE)
    };
    HttpConfig {
        connect_timeout: t,
        read_timeout: t,
        max_redirects: cli.http_redirects,
        max_requests: cli.http_max_requests.or(requests),
        max_bytes: cli.http_max_bytes.or(bytes),
        max_skip: cli.http_max_skip,
        deadline: secs(cli.http_deadline.unwrap_or(deadline)),
        min_speed: cli.http_speed_limit,
        min_speed_time: secs(cli.http_speed_time).unwrap_or(Duration::ZERO),
        ..HttpConfig::default()
    }
}

/// Opens `path` (a file, or an http:// or https:// URL) with the source
/// `kind` (files only). For a URL, `log` receives the source's error log,
/// whose text (status line, URL, transport message) completes the static
/// description of a read error.
fn open(path: &Path, kind: SourceKind, http: &HttpConfig, log: &mut Option<ErrorLog>) -> Result<Opened, Failure> {
    if let Some(url) = as_url(path) {
        let ext = url_ext_hint(url);
        let src = HttpSource::open_with(url, http.clone()).map_err(Failure::Open)?;
        *log = Some(src.error_log());
        return Ok(Opened::Http(Box::new(Demuxer::open(src, ext.as_deref())?)));
    }
    let ext = ext_hint(path);
    let ext = ext.as_deref();
    match kind {
        SourceKind::Http => Err(Failure::Open(io::Error::new(
            io::ErrorKind::InvalidInput,
            "not an http:// or https:// URL",
        ))),
        SourceKind::Mmap => {
            let src = MmapSource::open(path).map_err(Failure::Open)?;
            Ok(Opened::Mmap(Box::new(Demuxer::open(src, ext)?)))
        }
        SourceKind::Pread => {
            let src = FileSource::open(path).map_err(Failure::Open)?;
            Ok(Opened::Pread(Box::new(Demuxer::open(src, ext)?)))
        }
        SourceKind::Reader => {
            let file = open_regular_file(path).map_err(Failure::Open)?;
            // The scratch is allocated once, before the first packet: 16 MiB,
            // or the demuxer's own bound when it states a larger one (then
            // the headers are read again with the larger scratch).
            let src = ReaderSource::new(StdIo(file), vec![0u8; READER_SCRATCH])?;
            let d = Demuxer::open(src, ext)?;
            let max = Limits::default().max_packet as usize;
            match d.max_packet_size() {
                Some(n) if n > READER_SCRATCH => {
                    let (reader, mut scratch) = d.into_source().into_inner();
                    scratch.resize(n.min(max), 0);
                    let src = ReaderSource::new(reader, scratch)?;
                    Ok(Opened::Reader(Box::new(Demuxer::open(src, ext)?)))
                }
                _ => Ok(Opened::Reader(Box::new(d))),
            }
        }
    }
}

/// A percentage on stderr while packets are pulled, when stderr is a
/// terminal, stdout is not (the output goes to a file or a pipe) and the work
/// takes a while; nothing otherwise.
struct Progress {
    size: u64,
    enabled: bool,
    shown: bool,
    n: u32,
    last: Instant,
}

impl Progress {
    const EVERY: Duration = Duration::from_millis(250);

    fn new(size: u64) -> Self {
        Progress {
            size,
            enabled: io::stderr().is_terminal() && !io::stdout().is_terminal() && size > 0,
            shown: false,
            n: 0,
            last: Instant::now(),
        }
    }

    /// Notes a packet at byte `pos`; looks at the clock every 256 packets.
    fn tick(&mut self, pos: Option<u64>) {
        if !self.enabled {
            return;
        }
        self.n = self.n.wrapping_add(1);
        if self.n % 256 != 0 || self.last.elapsed() < Self::EVERY {
            return;
        }
        self.last = Instant::now();
        if let Some(pos) = pos {
            let pct = pos.saturating_mul(100) / self.size;
            eprint!("\rmediaslice: {pct:>3}% ");
            self.shown = true;
        }
    }

    fn done(&mut self) {
        if self.shown {
            eprint!("\r\x1b[K");
            self.shown = false;
        }
    }
}

/// Copies every tag out of the demuxer. A tag error ends the walk and is
/// returned beside what was read.
fn collect_tags<S: Source>(d: &mut Demuxer<S>) -> (TagSet, Option<mediaslice::Error>) {
    let mut set = TagSet::default();
    d.rewind_tags();
    for _ in 0..MAX_TAGS {
        match d.next_tag() {
            Ok(Some(t)) => set.add(&t),
            Ok(None) => return (set, None),
            Err(e) => return (set, Some(e)),
        }
    }
    (set, None)
}

fn facts<'a, S: Source>(d: &Demuxer<S>, filename: &'a str) -> FormatFacts<'a> {
    let info = d.info();
    FormatFacts {
        filename,
        kind: d.format(),
        nb_streams: d.tracks().len(),
        size: d.source().len(),
        duration_us: info.duration_us,
        start_us: info.start_us,
        bit_rate: info.bit_rate,
    }
}

fn write_tail<S: Source, W: Write>(
    w: &mut W,
    d: &mut Demuxer<S>,
    tags: &TagSet,
    timing: &Timing,
    video: &[Option<VideoFacts>],
    filename: &str,
) -> io::Result<()> {
    let (streams, format) = ffprobe::probe::document(d, tags, timing, video, filename);
    w.write_all(b"  \"streams\": ")?;
    serde_json::to_writer_pretty(&mut *w, &streams)?;
    w.write_all(b",\n  \"format\": ")?;
    serde_json::to_writer_pretty(&mut *w, &format)?;
    Ok(())
}

fn opt_i64(v: Option<i64>) -> String {
    v.map_or_else(|| "-".to_owned(), |v| v.to_string())
}

fn opt_u64(v: Option<u64>) -> String {
    v.map_or_else(|| "-".to_owned(), |v| v.to_string())
}

/// The table's flags: ffprobe's two (`K` keyframe, `D` discard) and `T`
/// when the input ends inside the packet.
fn table_flags(p: &mediaslice::Packet<'_>) -> String {
    let t = if p.flags.truncated { "T" } else { "_" };
    format!("{}{t}", ffprobe::flags(p))
}

/// `packets`: every packet, as a table or as ffprobe's JSON document. The
/// packets are written one by one as they are pulled; nothing proportional
/// to the file is held.
fn cmd_packets<S: Source, W: Write>(d: &mut Demuxer<S>, w: &mut W, json: bool, filename: &str) -> Outcome {
    // Copied once so a packet (which borrows the demuxer) can be described.
    let tracks = d.tracks().to_vec();
    let tags = if json { collect_tags(d).0 } else { TagSet::default() };
    if json {
        w.write_all(b"{\n  \"packets\": [")?;
    } else {
        writeln!(
            w,
            "{:>6} {:>12} {:>12} {:>10} {:>9} {:>12} {:5} crc32",
            "stream", "pts", "dts", "duration", "size", "pos", "flags"
        )?;
    }
    let mut stopped = None;
    let mut first = true;
    let mut timing = Timing::new(tracks.len());
    let mut progress = Progress::new(d.source().len());
    loop {
        let p = match d.next_packet() {
            Ok(Some(p)) => p,
            Ok(None) => break,
            Err(e) => {
                stopped = Some(e);
                break;
            }
        };
        progress.tick(p.pos);
        timing.observe(&p);
        let crc = crc32(p.data);
        if map_faulted() {
            // The bytes just hashed may be zeros standing for a lost part.
            let pos = p.pos;
            stopped = Some(map_lost(d, pos));
            break;
        }
        if json {
            w.write_all(if first { b"\n    " } else { b",\n    " })?;
            ffprobe::write_packet(w, &p, tracks.get(p.track), crc)?;
        } else {
            writeln!(
                w,
                "{:>6} {:>12} {:>12} {:>10} {:>9} {:>12} {:5} {:08x}",
                p.track,
                opt_i64(p.pts),
                opt_i64(p.dts),
                opt_u64(p.duration),
                p.data.len(),
                opt_u64(p.pos),
                table_flags(&p),
                crc
            )?;
        }
        first = false;
    }
    progress.done();
    if json {
        w.write_all(if first { b"],\n" } else { b"\n  ],\n" })?;
        let video = video_facts(d, &timing);
        write_tail(w, d, &tags, &timing, &video, filename)?;
        w.write_all(b"\n}\n")?;
    }
    Ok(stopped)
}

/// Whether a memory-mapped input has shrunk under its map during this run
/// (its lost pages then read as zeros; see `MmapSource`). Always false for
/// the other sources.
fn map_faulted() -> bool {
    MmapSource::faults_absorbed() > 0
}

/// The error to stop with once `map_faulted()`: the source's own (every
/// call on it fails from then on), else a truncation at `pos`.
fn map_lost<S: Source>(d: &mut Demuxer<S>, pos: Option<u64>) -> mediaslice::Error {
    match d.next_packet() {
        Err(e) => e,
        _ => mediaslice::Error::truncated(pos.unwrap_or(0), &"the file shrank while it was mapped"),
    }
}

/// `packets --summary`: count, bytes and the CRC-32 of all payloads in
/// delivery order.
fn cmd_summary<S: Source, W: Write>(d: &mut Demuxer<S>, w: &mut W) -> Outcome {
    let mut crc = Crc32::new();
    let (mut n, mut bytes) = (0u64, 0u64);
    let mut stopped = None;
    let mut progress = Progress::new(d.source().len());
    loop {
        match d.next_packet() {
            Ok(Some(p)) => {
                progress.tick(p.pos);
                let pos = p.pos;
                let mut c = crc.clone();
                c.update(p.data);
                if map_faulted() {
                    stopped = Some(map_lost(d, pos));
                    break;
                }
                crc = c;
                n += 1;
                bytes += p.data.len() as u64;
            }
            Ok(None) => break,
            Err(e) => {
                stopped = Some(e);
                break;
            }
        }
    }
    progress.done();
    writeln!(
        w,
        "{{\"packets\": {n}, \"bytes\": {bytes}, \"crc32\": \"{:08x}\"}}",
        crc.finalize()
    )?;
    Ok(stopped)
}

/// Packets `probe --json` reads at most for the stream facts that come from
/// the first packets (ffprobe reads them too; see `ffprobe::rates`).
const PROBE_PACKET_LIMIT: usize = 2_000;

/// The first packets' timestamps of each stream, read as ffprobe's
/// `find_stream_info` does; a packet error ends the reading (the facts
/// then come from what was read).
fn first_packets<S: Source>(d: &mut Demuxer<S>) -> Timing {
    let mut timing = Timing::new(d.tracks().len());
    for _ in 0..PROBE_PACKET_LIMIT {
        match d.next_packet() {
            Ok(Some(p)) => timing.observe(&p),
            Ok(None) | Err(_) => break,
        }
        if timing.full() {
            break;
        }
    }
    timing
}

/// The picture facts of each video track, from its codec configuration and
/// first packet (once, after the packets were read).
fn video_facts<S: Source>(d: &mut Demuxer<S>, timing: &Timing) -> Vec<Option<VideoFacts>> {
    let tracks = d.tracks().to_vec();
    tracks
        .iter()
        .enumerate()
        .map(|(i, t)| {
            if t.kind != mediaslice::TrackKind::Video || t.attached_picture {
                return None;
            }
            let config = if t.config.is_some() {
                d.codec_config(i).map(<[u8]>::to_vec).unwrap_or_default()
            } else {
                Vec::new()
            };
            mediaslice::codec::facts::video(t.codec, &config, timing.first_packet(i))
        })
        .collect()
}

/// `probe`: format, streams, tags and diagnostics.
fn cmd_probe<S: Source, W: Write>(d: &mut Demuxer<S>, w: &mut W, json: bool, filename: &str) -> Outcome {
    let (tags, tag_err) = collect_tags(d);
    if json {
        let timing = first_packets(d);
        w.write_all(b"{\n")?;
        let video = video_facts(d, &timing);
        write_tail(w, d, &tags, &timing, &video, filename)?;
        let diags: Vec<serde_json::Value> = d
            .diagnostics()
            .iter()
            .map(|(g, n)| serde_json::json!({"code": g.code, "offset": g.offset, "count": n}))
            .collect();
        if !diags.is_empty() {
            w.write_all(b",\n  \"diagnostics\": ")?;
            serde_json::to_writer_pretty(&mut *w, &diags)?;
        }
        w.write_all(b"\n}\n")?;
        return Ok(tag_err);
    }
    let f = facts(d, filename);
    writeln!(w, "file:       {filename}")?;
    writeln!(w, "format:     {} ({})", f.kind.ffmpeg_name(), f.kind.name())?;
    writeln!(w, "size:       {} bytes", f.size)?;
    if let Some(us) = f.duration_us {
        writeln!(w, "duration:   {:.6} s", us as f64 / 1e6)?;
    }
    if let Some(us) = f.start_us {
        writeln!(w, "start:      {:.6} s", us as f64 / 1e6)?;
    }
    if let Some(b) = f.bit_rate {
        writeln!(w, "bit rate:   {b} b/s")?;
    }
    writeln!(w, "streams:    {}", f.nb_streams)?;
    for (i, t) in d.tracks().iter().enumerate() {
        let tag = ffprobe::ffmpeg_codec_tag(t.codec_tag);
        write!(
            w,
            "  #{i} {}: {} ({} / 0x{tag:04x})",
            t.kind.ffmpeg_name(),
            t.codec.ffmpeg_name(),
            ffprobe::fourcc_string(tag)
        )?;
        match t.kind {
            mediaslice::TrackKind::Video => write!(w, ", {}x{}", t.width, t.height)?,
            mediaslice::TrackKind::Audio => write!(
                w,
                ", {} Hz, {} ch, {} bits",
                t.sample_rate, t.channels, t.bits_per_sample
            )?,
            _ => {}
        }
        write!(w, ", time base {}/{}", t.time_base.num, t.time_base.den)?;
        if let Some(dur) = t.duration {
            let secs = ffprobe::seconds(i64::try_from(dur).unwrap_or(i64::MAX), t.time_base);
            write!(w, ", duration {secs:.6} s ({dur} ticks)")?;
        }
        if let Some(n) = t.frames {
            write!(w, ", {n} frames")?;
        }
        if t.bit_rate > 0 {
            write!(w, ", {} b/s", t.bit_rate)?;
        }
        if !t.language.is_empty() {
            write!(w, ", language {}", t.language)?;
        }
        if t.default {
            write!(w, ", default")?;
        }
        writeln!(w)?;
        if let Some(st) = tags.streams.get(i) {
            for (k, v) in st {
                writeln!(w, "      {k}: {v}")?;
            }
        }
    }
    if !tags.format.is_empty() {
        writeln!(w, "tags:")?;
        for (k, v) in &tags.format {
            writeln!(w, "  {k}: {v}")?;
        }
    }
    let mut first = true;
    for (g, n) in d.diagnostics().iter() {
        if first {
            writeln!(w, "diagnostics:")?;
            first = false;
        }
        writeln!(w, "  {} at byte {} (x{n})", g.code, g.offset)?;
    }
    if d.diagnostics().dropped() > 0 {
        writeln!(w, "  ... and {} more", d.diagnostics().dropped())?;
    }
    Ok(tag_err)
}

fn scope_text(s: TagScope) -> String {
    match s {
        TagScope::Format => "format".to_owned(),
        TagScope::Track(i) => format!("stream {i}"),
    }
}

/// `tags`: every tag the demuxer gives, with its key as stored, its common
/// name and its scope.
fn cmd_tags<S: Source, W: Write>(d: &mut Demuxer<S>, w: &mut W, json: bool) -> Outcome {
    if json {
        let (tags, err) = collect_tags(d);
        let streams: Vec<serde_json::Value> = d
            .tracks()
            .iter()
            .enumerate()
            .map(|(i, t)| serde_json::json!({"index": i, "tags": tags.stream_json(i, t)}))
            .collect();
        let doc = serde_json::json!({
            "format": {"tags": tags.format_json()},
            "streams": streams,
        });
        serde_json::to_writer_pretty(&mut *w, &doc)?;
        w.write_all(b"\n")?;
        return Ok(err);
    }
    writeln!(w, "{:<10} {:<24} {:<20} value", "scope", "key", "name")?;
    for (i, t) in d.tracks().iter().enumerate() {
        if !t.language.is_empty() {
            writeln!(
                w,
                "{:<10} {:<24} {:<20} {}",
                format!("stream {i}"),
                "-",
                "language",
                t.language
            )?;
        }
    }
    d.rewind_tags();
    for _ in 0..MAX_TAGS {
        let t = match d.next_tag() {
            Ok(Some(t)) => t,
            Ok(None) => return Ok(None),
            Err(e) => return Ok(Some(e)),
        };
        let value = match t.value {
            TagValue::Text(s) => s.to_owned(),
            TagValue::Int(i) => i.to_string(),
            TagValue::Bytes(b) => format!("<{} bytes>", b.len()),
        };
        let key = match t.key {
            TagKey::Text(_) => ffprobe::key_text(&t.key),
            TagKey::FourCc(_) => format!("'{}'", ffprobe::key_text(&t.key)),
        };
        writeln!(
            w,
            "{:<10} {:<24} {:<20} {}",
            scope_text(t.scope),
            key,
            t.name.unwrap_or("-"),
            value.escape_debug()
        )?;
    }
    Ok(None)
}

/// `io`: what a probe (open, tracks, duration, every tag) read, counted by
/// the source itself.
fn cmd_io<S: Source, W: Write>(d: &mut Demuxer<S>, w: &mut W, json: bool, kind: SourceKind) -> Outcome {
    let (_, tag_err) = collect_tags(d);
    let _ = (d.tracks().len(), d.info().duration_us);
    let s = d.source().stats();
    let http = kind == SourceKind::Http;
    if json {
        if http {
            // For HTTP a read is a request; both names are given.
            writeln!(
                w,
                "{{\"bytes_read\": {}, \"reads\": {}, \"requests\": {}}}",
                s.bytes_read, s.reads, s.reads
            )?;
        } else {
            writeln!(w, "{{\"bytes_read\": {}, \"reads\": {}}}", s.bytes_read, s.reads)?;
        }
    } else {
        let what = match kind {
            SourceKind::Mmap => "mmap (accesses, not system calls)",
            SourceKind::Pread => "pread (system calls)",
            SourceKind::Reader => "reader (read calls)",
            SourceKind::Http => "http (range requests; bytes are response bodies)",
        };
        writeln!(w, "source:     {what}")?;
        writeln!(w, "file size:  {}", d.source().len())?;
        writeln!(w, "bytes read: {}", s.bytes_read)?;
        if http {
            writeln!(w, "requests:   {}", s.reads)?;
        } else {
            writeln!(w, "reads:      {}", s.reads)?;
            writeln!(w, "seeks:      {}", s.seeks)?;
        }
    }
    Ok(tag_err)
}

/// The counting allocator, `/proc/self` and the `phases` command.
mod measure {
    use std::alloc::{GlobalAlloc, Layout, System};
    use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering::Relaxed};

    /// `System` with counters: bytes live now, their peak, allocations.
    pub struct Counting;

    static NOW: AtomicUsize = AtomicUsize::new(0);
    static PEAK: AtomicUsize = AtomicUsize::new(0);
    static ALLOCS: AtomicU64 = AtomicU64::new(0);

    fn grew(by: usize) {
        let now = NOW.fetch_add(by, Relaxed).saturating_add(by);
        PEAK.fetch_max(now, Relaxed);
    }

    // SAFETY: every call goes to `System` unchanged; the counters are plain
    // atomics (no allocation, no locks).
    unsafe impl GlobalAlloc for Counting {
        unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
            // SAFETY: the caller's contract is passed on.
            let p = unsafe { System.alloc(layout) };
            if !p.is_null() {
                ALLOCS.fetch_add(1, Relaxed);
                grew(layout.size());
            }
            p
        }
        unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
            // SAFETY: as above.
            let p = unsafe { System.alloc_zeroed(layout) };
            if !p.is_null() {
                ALLOCS.fetch_add(1, Relaxed);
                grew(layout.size());
            }
            p
        }
        unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
            // SAFETY: as above.
            unsafe { System.dealloc(ptr, layout) };
            NOW.fetch_sub(layout.size(), Relaxed);
        }
        unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
            // SAFETY: as above.
            let p = unsafe { System.realloc(ptr, layout, new_size) };
            if !p.is_null() {
                ALLOCS.fetch_add(1, Relaxed);
                if new_size >= layout.size() {
                    grew(new_size - layout.size());
                } else {
                    NOW.fetch_sub(layout.size() - new_size, Relaxed);
                }
            }
            p
        }
    }

    /// Heap bytes live now, peak since the last `reset_peak`, allocations.
    pub fn heap() -> (usize, usize, u64) {
        (NOW.load(Relaxed), PEAK.load(Relaxed), ALLOCS.load(Relaxed))
    }

    pub fn reset_peak() {
        PEAK.store(NOW.load(Relaxed), Relaxed);
    }

    /// `VmHWM` and `VmRSS` of this process, in KiB.
    pub fn vm() -> (u64, u64) {
        let s = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
        let field = |k: &str| {
            s.lines()
                .find_map(|l| l.strip_prefix(k))
                .and_then(|v| v.split_whitespace().next())
                .and_then(|v| v.parse().ok())
                .unwrap_or(0)
        };
        (field("VmHWM:"), field("VmRSS:"))
    }

    /// Resets `VmHWM` to the current RSS (`5` to `/proc/self/clear_refs`,
    /// Linux 4.0+); false when the kernel refuses.
    pub fn reset_hwm() -> bool {
        std::fs::write("/proc/self/clear_refs", "5").is_ok()
    }
}

#[global_allocator]
static ALLOC: measure::Counting = measure::Counting;

/// The start of a measured phase.
struct Phase {
    t: Instant,
    allocs: u64,
    io: mediaslice::IoStats,
    hwm_reset: bool,
}

impl Phase {
    fn start(io: mediaslice::IoStats) -> Self {
        let hwm_reset = measure::reset_hwm();
        measure::reset_peak();
        Phase {
            t: Instant::now(),
            allocs: measure::heap().2,
            io,
            hwm_reset,
        }
    }

    fn end(self, name: &str, io: mediaslice::IoStats) -> serde_json::Value {
        // The heap first: reading /proc allocates.
        let (now, peak, allocs) = measure::heap();
        let (hwm, rss) = measure::vm();
        serde_json::json!({
            "phase": name,
            "vm_hwm_kib": hwm,
            "vm_rss_kib": rss,
            "hwm_reset": self.hwm_reset,
            "heap_peak": peak,
            "heap_now": now,
            "allocs": allocs - self.allocs,
            "bytes_read": io.bytes_read - self.io.bytes_read,
            "reads": io.reads - self.io.reads,
            "ms": self.t.elapsed().as_secs_f64() * 1e3,
        })
    }
}

/// `phases`: after `open` (measured by the caller), the tracks and every
/// tag; every packet (CRC over the payloads); a seek to the middle of the
/// first track and up to 1000 packets from there. Prints one JSON object.
fn cmd_phases<S: Source, W: Write>(
    d: &mut Demuxer<S>,
    w: &mut W,
    mut phases: Vec<serde_json::Value>,
    name: &str,
    kind: SourceKind,
) -> Outcome {
    let p = Phase::start(d.source().stats());
    let tracks = d.tracks().to_vec();
    let (tags, tag_err) = collect_tags(d);
    let _ = (tags, d.info().duration_us);
    phases.push(p.end("tracks", d.source().stats()));

    let p = Phase::start(d.source().stats());
    let mut crc = Crc32::new();
    let (mut n, mut bytes) = (0u64, 0u64);
    let mut stopped = tag_err;
    loop {
        match d.next_packet() {
            Ok(Some(p)) => {
                crc.update(p.data);
                n += 1;
                bytes += p.data.len() as u64;
            }
            Ok(None) => break,
            Err(e) => {
                stopped = Some(e);
                break;
            }
        }
    }
    phases.push(p.end("packets", d.source().stats()));

    let p = Phase::start(d.source().stats());
    let mut after_seek = 0u32;
    if let Some(t) = tracks.first() {
        let target = t.duration.map_or(0, |x| i64::try_from(x / 2).unwrap_or(0));
        if d.seek(0, target).is_ok() {
            while after_seek < 1000 {
                match d.next_packet() {
                    Ok(Some(p)) => {
                        std::hint::black_box(crc32(p.data));
                        after_seek += 1;
                    }
                    _ => break,
                }
            }
        }
    }
    phases.push(p.end("seek", d.source().stats()));
    let doc = serde_json::json!({
        "file": name,
        "source": format!("{kind:?}").to_ascii_lowercase(),
        "size": d.source().len(),
        "packets": n,
        "bytes": bytes,
        "crc32": format!("{:08x}", crc.finalize()),
        "packets_after_seek": after_seek,
        "phases": phases,
    });
    serde_json::to_writer(&mut *w, &doc)?;
    w.write_all(b"\n")?;
    Ok(stopped)
}

fn run(cli: &Cli) -> u8 {
    let (args, default_kind) = match &cli.cmd {
        Cmd::Remux(a) => return cmd_remux(a),
        Cmd::Package(a) => return mediaslice_std::package::cmd_package(&a.input, &a.outdir, a.hls, &a.segment),
        Cmd::Io(a) => (a, SourceKind::Pread),
        Cmd::Probe(a) | Cmd::Tags(a) | Cmd::Packets { file: a, .. } | Cmd::Phases(a) => (a, SourceKind::Mmap),
    };
    let mut kind = if cli.reader {
        SourceKind::Reader
    } else {
        cli.source.unwrap_or(default_kind)
    };
    let name = args.file.to_string_lossy().into_owned();
    let mut log: Option<ErrorLog> = None;
    // A read error's static description, completed by the HTTP source's
    // own text when there is one.
    let fail = |e: &dyn fmt::Display, log: &Option<ErrorLog>| match log.as_ref().and_then(ErrorLog::last) {
        Some(more) => eprintln!("mediaslice: {name}: {e} ({more})"),
        None => eprintln!("mediaslice: {name}: {e}"),
    };
    if let Some((scheme, _)) = name.split_once("://").filter(|_| as_url(&args.file).is_none()) {
        if !scheme.is_empty() && scheme.chars().all(|c| c.is_ascii_alphanumeric() || "+-.".contains(c)) {
            eprintln!("mediaslice: {name}: unsupported URL scheme {scheme}: (files, http:// and https:// are read)");
            return EXIT_FAILED;
        }
    }
    if as_url(&args.file).is_some() {
        if cli.source.is_some() || cli.reader {
            eprintln!("mediaslice: {name}: --source and --reader choose how a file is read; a URL is read with HTTP range requests");
            return EXIT_FAILED;
        }
        kind = SourceKind::Http;
    }
    let mut phases = Vec::new();
    let p = Phase::start(mediaslice::IoStats::default());
    let opened = match open(&args.file, kind, &http_config(cli), &mut log) {
        Ok(o) => o,
        Err(e) => {
            fail(&e, &log);
            return EXIT_FAILED;
        }
    };
    if let (Opened::Mmap(d), Cmd::Packets { .. } | Cmd::Phases(_)) = (&opened, &cli.cmd) {
        // Every packet will be read in order: ask for read-ahead.
        d.source().advise_sequential();
    }
    if matches!(cli.cmd, Cmd::Phases(_)) {
        let io = match &opened {
            Opened::Mmap(d) => d.source().stats(),
            Opened::Pread(d) => d.source().stats(),
            Opened::Reader(d) => d.source().stats(),
            Opened::Http(d) => d.source().stats(),
        };
        phases.push(p.end("open", io));
    }
    let stdout = io::stdout();
    let mut w = BufWriter::with_capacity(1 << 16, stdout.lock());
    let outcome = with_demuxer!(opened, d => match &cli.cmd {
        Cmd::Probe(a) => cmd_probe(d, &mut w, a.json, &name),
        Cmd::Packets { file, summary: true } => {
            let _ = file;
            cmd_summary(d, &mut w)
        }
        Cmd::Packets { file, summary: false } => cmd_packets(d, &mut w, file.json, &name),
        Cmd::Tags(a) => cmd_tags(d, &mut w, a.json),
        Cmd::Io(a) => cmd_io(d, &mut w, a.json, kind),
        Cmd::Phases(_) => cmd_phases(d, &mut w, std::mem::take(&mut phases), &name, kind),
        Cmd::Remux(_) | Cmd::Package(_) => Ok(None),
    });
    let outcome = outcome.and_then(|r| w.flush().map(|_| r).map_err(Failure::Write));
    let outcome = match outcome {
        // A mapped file that shrank may have shown zeros to the demuxer
        // before the source noticed: whatever it then said, the cause is
        // the truncation.
        Ok(e) if kind == SourceKind::Mmap && !e.is_some_and(|e| e.is_truncation()) && map_faulted() => {
            let now = std::fs::metadata(&args.file).map_or(0, |m| m.len());
            Ok(Some(mediaslice::Error::truncated(
                now,
                &"the file shrank while it was mapped",
            )))
        }
        o => o,
    };
    match outcome {
        Ok(None) => EXIT_OK,
        Ok(Some(e)) => {
            fail(&e, &log);
            if e.is_truncation() {
                EXIT_TRUNCATED
            } else {
                EXIT_FAILED
            }
        }
        // A reader that closed the pipe (`| head`) wanted no more.
        Err(Failure::Write(e)) if e.kind() == io::ErrorKind::BrokenPipe => EXIT_OK,
        Err(e) => {
            fail(&e, &log);
            EXIT_FAILED
        }
    }
}

fn main() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(c) => c,
        Err(e) => {
            let code = if e.use_stderr() { EXIT_USAGE } else { EXIT_OK };
            let _ = e.print();
            return ExitCode::from(code);
        }
    };
    ExitCode::from(run(&cli))
}
