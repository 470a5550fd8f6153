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
use mediaslice::{Demuxer, Source, TagKey, TagScope, TagValue};
use mediaslice_std::ffprobe::gather::{collect_tags, video_facts, MAX_TAGS};
use mediaslice_std::ffprobe::{self, FormatFacts, TagSet, Timing};
use mediaslice_std::{
    input::reader_demuxer, is_http_url, open_regular_file, ErrorLog, FileReaderSource, FileSource, HttpConfig,
    HttpSource, InputRead, MmapSource,
};
use std::fmt;
use std::io::IsTerminal;
use std::io::{self, BufWriter, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::{Duration, Instant};

mod batch;
mod inspect;
mod phases;
mod read;
mod repair;
mod write;

use inspect::*;
use phases::*;
use read::*;
use write::*;

/// Exit code: success.
const EXIT_OK: u8 = 0;
/// Exit code: the file could not be read (missing, unreadable, unsupported,
/// damaged headers), or reading stopped at damage after some output.
const EXIT_FAILED: u8 = 1;
/// Exit code: the input is truncated; everything before the cut was printed.
const EXIT_TRUNCATED: u8 = 2;
/// Exit code: the command line was not understood.
const EXIT_USAGE: u8 = 64;

#[derive(Parser, Debug)]
#[command(
    name = "mediaslice",
    version,
    about = "Zero-copy media demuxer: probe, packets, tags and I/O counts"
)]
struct Cli {
    /// How to read the file: `mmap` (memory map, zero copy; the default of
    /// `probe`, `packets`, `tags`), `pread` (positioned reads, counted; the
    /// default of `io`, `remux`, `package`, `repair`), `reader`
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
    /// Format and streams; with `--json-lines`, of many inputs in parallel,
    /// one JSON object per line.
    Probe(ProbeArgs),
    /// Every packet (ffprobe's `-show_packets -show_streams -show_format` with `--json`).
    Packets {
        #[command(flatten)]
        file: FileArgs,
        /// Print only one JSON object: packet count, bytes and CRC-32 of all payloads.
        #[arg(long)]
        summary: bool,
    },
    /// The tags: key, common name, value and scope; with `--set` or
    /// `--remove`, edits them (FLAC, MP3, MP4, WAV/RF64, AIFF/AIFF-C,
    /// Matroska/WebM, Ogg; `--picture`: FLAC, MP3, MP4, AIFF, Matroska,
    /// Ogg Vorbis/Opus; see
    /// `docs/tags.md`).
    Tags(TagsArgs),
    /// Probe (open, tracks, duration, tags) and print the bytes and reads it took.
    Io(FileArgs),
    /// Rewrap IN into OUT without touching the payload (`-` as OUT: stdout,
    /// Matroska live mode). See `docs/write-side.md`.
    Remux(RemuxArgs),
    /// Recover a cut or damaged recording into a finished file of the same
    /// family (fragmented MP4, Matroska/WebM; MP4/MOV with no moov given
    /// `--reference`). See `docs/repair.md`.
    Repair(RepairArgs),
    /// Package IN for HLS into OUTDIR: CMAF init + media segments, media
    /// and multivariant playlists (`--hls [--segment 6s]`); live from a
    /// growing MPEG-TS, Matroska/WebM or fragmented MP4 (`--live`) or
    /// standard input (IN `-`).
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
#[command(group(clap::ArgGroup::new("edit").args(["set", "remove", "picture"]).multiple(true)))]
struct TagsArgs {
    #[command(flatten)]
    file: FileArgs,
    /// Set a field (`title=New title`); common names (title, artist,
    /// album, date, genre, comment, track, album_artist) map to the
    /// format's keys, other names are written as given. Repeatable.
    #[arg(long, value_name = "NAME=VALUE")]
    set: Vec<String>,
    /// Remove every value of a field. Repeatable. `--remove picture`
    /// removes every embedded picture.
    #[arg(long, value_name = "NAME")]
    remove: Vec<String>,
    /// Embed FILE (JPEG or PNG, at most 16 MiB) as the front cover,
    /// replacing the old one (FLAC, MP3, MP4, AIFF, Matroska, Ogg
    /// Vorbis/Opus).
    #[arg(long, value_name = "FILE")]
    picture: Option<PathBuf>,
    /// Write the edited file here and leave the input as it is (by default
    /// the input is edited: in place when the tag fits, else through a
    /// copy renamed over it).
    #[arg(short = 'o', long, value_name = "OUT", requires = "edit")]
    output: Option<PathBuf>,
}

#[derive(Args, Debug)]
struct ProbeArgs {
    #[command(flatten)]
    file: FileArgs,
    /// More inputs (`--json-lines` only): files, directories (with `-r`),
    /// glob patterns (`'media/**/*.mp4'`), URLs, and `-` for a list on
    /// standard input, one per line.
    more: Vec<PathBuf>,
    /// One compact JSON object per input and line: `path`, then ffprobe's
    /// `streams` and `format` (and `diagnostics`), or `error` with `code`,
    /// `message` and `offset`. Inputs are probed in parallel.
    #[arg(long, conflicts_with = "json")]
    json_lines: bool,
    /// With `--json`: print `chapters` as ffprobe's `-show_chapters` does
    /// (after `streams`).
    #[arg(long, requires = "json")]
    chapters: bool,
    /// With `--json`: print `programs` as ffprobe's `-show_programs` does
    /// (before `streams`; MPEG-TS only, `[]` for other formats).
    #[arg(long, requires = "json")]
    programs: bool,
    /// Walk directories and their subdirectories (`--json-lines`).
    #[arg(short = 'r', long, requires = "json_lines")]
    recursive: bool,
    /// Write each line as soon as its input is probed, not in input order
    /// (`--json-lines`).
    #[arg(long, requires = "json_lines")]
    unordered: bool,
    /// Inputs probed at once (`--json-lines`); the number of cores by
    /// default.
    #[arg(short = 'j', long, value_name = "N", requires = "json_lines")]
    jobs: Option<usize>,
    /// Exit with status 1 when any input has an `error` (`--json-lines`;
    /// by default the status is 0 once every line is written).
    #[arg(long, requires = "json_lines")]
    fail_on_error: bool,
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
    /// Hybrid MP4 (the same as `--format hybrid`): fragmented while it is
    /// written, so a recording cut by a crash or a power loss keeps every
    /// complete fragment; a normal MP4 once finished.
    #[arg(long, conflicts_with = "fragmented")]
    hybrid: bool,
    /// Least fragment duration of fragmented MP4, in milliseconds (2000).
    #[arg(long, value_name = "MS")]
    fragment_ms: Option<u32>,
    /// Fragmented MP4: a `styp` and a `sidx` (segment index: the
    /// fragment's size, start and duration) before each fragment, so that
    /// each is an indexed DASH media segment.
    #[arg(long)]
    sidx: bool,
    /// MP4, MOV, hybrid MP4: most bytes of the sample index (about 4 a
    /// sample) kept in memory; past it the index goes to a temporary file
    /// beside OUT, removed at the end (1048576, at least 4096).
    #[arg(long, value_name = "BYTES", value_parser = clap::value_parser!(u64).range(4096..))]
    index_memory: Option<u64>,
    /// Hand the payloads that go to OUT unchanged (64 KiB and longer;
    /// `MEDIASLICE_KERNEL_COPY_MIN` sets the length) to the kernel with
    /// `copy_file_range` instead of writing them from memory.
    #[arg(long)]
    kernel_copy: bool,
}

#[derive(Args, Debug)]
struct RepairArgs {
    /// The damaged or cut input file (never written).
    input: PathBuf,
    /// The repaired file (written under a temporary name, renamed at the end).
    output: PathBuf,
    /// A good file from the same device and settings, whose tracks stand in
    /// for a lost `moov` (MP4/MOV).
    #[arg(long, value_name = "GOOD")]
    reference: Option<PathBuf>,
    /// Write a fragmented MP4 input as a normal MP4.
    #[arg(long)]
    progressive: bool,
    /// The report as JSON on standard output.
    #[arg(long)]
    json: bool,
}

#[derive(Args, Debug)]
struct PackageArgs {
    /// The input file; `-`: standard input, packaged live.
    input: PathBuf,
    /// The output folder (created).
    outdir: PathBuf,
    /// HLS: `media.m3u8` and `master.m3u8`.
    #[arg(long)]
    hls: bool,
    /// DASH: `manifest.mpd` (SegmentTemplate and SegmentTimeline) over the
    /// same CMAF segments.
    #[arg(long)]
    dash: bool,
    /// HLS with MPEG-TS segments (`seg_NNNNN.ts`, playlist version 3, no
    /// init segment) rather than CMAF ones, also live; not with `--dash`.
    #[arg(long, conflicts_with = "fmp4")]
    ts: bool,
    /// CMAF (fragmented MP4) segments: the default.
    #[arg(long)]
    fmp4: bool,
    /// Least segment duration (`6s`, `2.5s`, `500ms`); segments start at
    /// video keyframes.
    #[arg(long, value_name = "DURATION", default_value = "6s")]
    segment: String,
    /// Live: package IN while it is still being written (MPEG-TS,
    /// Matroska/WebM with a Segment of unknown size, fragmented MP4): each
    /// segment and the playlist as soon as the segment is complete,
    /// `#EXT-X-ENDLIST` when the input ends. Implied by IN `-`.
    #[arg(long, visible_alias = "follow")]
    live: bool,
    /// Live: a growing file has ended when it has not grown for this long.
    #[arg(long, value_name = "DURATION", default_value = "10s")]
    idle: String,
    /// Live: list only the last N segments (a sliding window) and delete
    /// the files of older ones; without it, an EVENT playlist of all.
    #[arg(long, value_name = "N")]
    window: Option<usize>,
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
        let ext = mediaslice_std::scan::extension(url);
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
            Ok(Opened::Reader(Box::new(reader_demuxer(file, ext)?)))
        }
    }
}

/// How `remux`, `package` and `repair` read their input: `--source`
/// (`--reader`), by default [`InputRead::default`].
fn input_read(cli: &Cli) -> InputRead {
    match (cli.reader, cli.source) {
        (true, _) | (_, Some(SourceKind::Reader)) => InputRead::Reader,
        (_, Some(SourceKind::Mmap)) => InputRead::Mmap,
        (_, Some(SourceKind::Pread)) => InputRead::Pread,
        (_, Some(SourceKind::Http) | None) => InputRead::default(),
    }
}

fn run(cli: &Cli) -> u8 {
    let (args, default_kind) = match &cli.cmd {
        Cmd::Remux(a) => return cmd_remux(a, cli),
        Cmd::Repair(a) => return repair::cmd_repair(a, input_read(cli)),
        Cmd::Package(a) => {
            let live = mediaslice_std::package::LiveArgs {
                live: a.live,
                idle: &a.idle,
                window: a.window,
            };
            return mediaslice_std::package::cmd_package(
                &a.input,
                &a.outdir,
                a.hls,
                a.dash,
                a.ts,
                &a.segment,
                &live,
                input_read(cli),
            );
        }
        Cmd::Io(a) => (a, SourceKind::Pread),
        Cmd::Tags(t) if !t.set.is_empty() || !t.remove.is_empty() || t.picture.is_some() => return cmd_tag_edit(t),
        Cmd::Probe(p) if p.json_lines => return batch::cmd_batch(p, &http_config(cli)),
        Cmd::Probe(p) if !p.more.is_empty() => {
            eprintln!("mediaslice: probe takes one input; give --json-lines to probe many");
            return EXIT_USAGE;
        }
        Cmd::Probe(ProbeArgs { file: a, .. })
        | Cmd::Tags(TagsArgs { file: a, .. })
        | Cmd::Packets { file: a, .. }
        | Cmd::Phases(a) => (a, SourceKind::Mmap),
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
        Cmd::Probe(p) => cmd_probe(d, &mut w, p.file.json, sections(p), &name),
        Cmd::Packets { file, summary: true } => {
            let _ = file;
            cmd_summary(d, &mut w)
        }
        Cmd::Packets { file, summary: false } => cmd_packets(d, &mut w, file.json, &name),
        Cmd::Tags(a) => cmd_tags(d, &mut w, a.file.json),
        Cmd::Io(a) => cmd_io(d, &mut w, a.json, kind),
        Cmd::Phases(_) => cmd_phases(d, &mut w, std::mem::take(&mut phases), &name, kind),
        Cmd::Remux(_) | Cmd::Repair(_) | Cmd::Package(_) => Ok(None),
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

/// The extra sections `probe --json` was asked for.
fn sections(p: &ProbeArgs) -> ffprobe::gather::Sections {
    ffprobe::gather::Sections {
        chapters: p.chapters,
        programs: p.programs,
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
