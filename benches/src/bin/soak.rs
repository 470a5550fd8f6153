//! The recorder soak (issue 19): one long-lived process writes fragmented
//! MP4 from a looped input for a given time, to a ring of files that it
//! deletes as it goes, and samples its own memory every few seconds into a
//! TSV. A recorder that grows a little per fragment or per file (the field's
//! known failure: an fMP4 muxer that reached 10 GiB over three hours through
//! per-write buffer churn) shows here as a rising line.
//!
//!     soak INPUT OUTDIR SECONDS [--paced] [--file-mib N] [--ring N]
//!          [--every SECS] [--tsv PATH] [--source pread|mmap]
//!
//! - The input is demuxed (by default with `mediaslice-std`'s `pread`
//!   source, as a recorder's input sits in a buffer rather than in a map of
//!   a file; `--source mmap` maps it, and the input's mapped pages then come
//!   and go in the RSS as the kernel reclaims them) and written, lap
//!   after lap, with every track's times moved on by the lap's duration, so
//!   the output is one continuous recording.
//! - A new output file starts at a lap boundary (the input's first packet is
//!   a keyframe) once the current one holds `--file-mib` MiB (default 1024);
//!   each is finished and committed as `remux` does (temporary name, `fsync`,
//!   rename); only the last `--ring` files (default 2) are kept.
//! - `--paced` writes at the input's own rate (media time follows the wall
//!   clock), as a camera would; without it, as fast as the machine allows.
//! - Every `--every` seconds (default 10) a row: seconds, bytes written,
//!   files finished, fragments, packets, VmRSS, VmHWM, RssAnon and RssFile
//!   (KiB, from `/proc/self/status`), the heap in use and the count of allocations so
//!   far (a counting global allocator).
//! - At the end, the last finished file is read back and its packet count
//!   compared with the count written into it; a mismatch is an error.
//!
//! The muxer's scratch (64 MiB, zeroed, so untouched pages cost nothing) is
//! allocated once and lent to each file's muxer; the packet loop allocates
//! nothing, which the allocation count shows (it moves only per file).

use std::collections::VecDeque;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering::Relaxed};
use std::sync::Arc;
use std::time::{Duration, Instant};

use mediaslice::{Demuxer, Fragmenting, MuxFormat, Muxer, Packet, Rational, Sink, Source};
use mediaslice_benches::counting::{Counting, ALLOCS, LIVE, ON};
use mediaslice_std::fragmented::FRAGMENT_SCRATCH;
use mediaslice_std::remux::{declare_tracks, prepare_tracks, RemuxReport};
use mediaslice_std::{FileSink, FileSource, MmapSource};

#[global_allocator]
static GLOBAL: Counting = Counting;

/// What the sampler thread reads while the writer runs.
#[derive(Default)]
struct Progress {
    bytes: AtomicU64,
    files: AtomicU64,
    fragments: AtomicU64,
    packets: AtomicU64,
    done: AtomicBool,
}

struct Args {
    input: PathBuf,
    out: PathBuf,
    seconds: u64,
    paced: bool,
    file_bytes: u64,
    ring: usize,
    every: u64,
    tsv: Option<PathBuf>,
    mmap: bool,
}

fn usage() -> ! {
    eprintln!("usage: soak INPUT OUTDIR SECONDS [--paced] [--file-mib N] [--ring N] [--every SECS] [--tsv PATH] [--source pread|mmap]");
    std::process::exit(2)
}

fn parse_args() -> Args {
    let mut it = std::env::args().skip(1);
    let mut pos = Vec::new();
    let mut a = Args {
        input: PathBuf::new(),
        out: PathBuf::new(),
        seconds: 0,
        paced: false,
        file_bytes: 1 << 30,
        ring: 2,
        every: 10,
        tsv: None,
        mmap: false,
    };
    let num = |v: Option<String>| v.and_then(|s| s.parse::<u64>().ok()).unwrap_or_else(|| usage());
    while let Some(arg) = it.next() {
        match arg.as_str() {
            "--paced" => a.paced = true,
            "--file-mib" => a.file_bytes = num(it.next()).max(1) << 20,
            "--ring" => a.ring = num(it.next()).max(1) as usize,
            "--every" => a.every = num(it.next()).max(1),
            "--tsv" => a.tsv = Some(it.next().unwrap_or_else(|| usage()).into()),
            "--source" => match it.next().as_deref() {
                Some("mmap") => a.mmap = true,
                Some("pread") => a.mmap = false,
                _ => usage(),
            },
            _ if arg.starts_with("--") => usage(),
            _ => pos.push(arg),
        }
    }
    let [input, out, seconds] = <[String; 3]>::try_from(pos).unwrap_or_else(|_| usage());
    a.input = input.into();
    a.out = out.into();
    a.seconds = seconds.parse().unwrap_or_else(|_| usage());
    a
}

/// `VmRSS`, `VmHWM`, `RssAnon` and `RssFile` of this process, in KiB.
fn vm() -> [u64; 4] {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    let field = |name: &str| {
        status
            .lines()
            .find_map(|l| l.strip_prefix(name))
            .and_then(|v| v.split_whitespace().next())
            .and_then(|v| v.parse().ok())
            .unwrap_or(0)
    };
    [field("VmRSS:"), field("VmHWM:"), field("RssAnon:"), field("RssFile:")]
}

fn sampler(p: Arc<Progress>, every: Duration, mut out: Box<dyn Write + Send>) {
    let start = Instant::now();
    let _ = writeln!(
        out,
        "seconds\tbytes\tfiles\tfragments\tpackets\trss_kib\thwm_kib\tanon_kib\tfile_kib\theap_bytes\tallocs"
    );
    loop {
        let [rss, hwm, anon, file] = vm();
        let _ = writeln!(
            out,
            "{:.1}\t{}\t{}\t{}\t{}\t{rss}\t{hwm}\t{anon}\t{file}\t{}\t{}",
            start.elapsed().as_secs_f64(),
            p.bytes.load(Relaxed),
            p.files.load(Relaxed),
            p.fragments.load(Relaxed),
            p.packets.load(Relaxed),
            LIVE.load(Relaxed),
            ALLOCS.load(Relaxed),
        );
        let _ = out.flush();
        // Sleep in small steps so the last row follows the end closely.
        let next = Instant::now() + every;
        while Instant::now() < next {
            if p.done.load(Relaxed) {
                return;
            }
            std::thread::sleep(Duration::from_millis(100).min(every));
        }
    }
}

fn fail(what: &str, e: &dyn std::fmt::Display) -> ! {
    eprintln!("soak: {what}: {e}");
    std::process::exit(1)
}

fn cannot_open(_: std::io::Error) -> mediaslice::Error {
    mediaslice::Error::new(mediaslice::ErrorKind::InvalidArgument, 0, &"cannot open the input")
}

fn open_with<S: Source>(input: &Path, src: S) -> mediaslice::Result<Demuxer<S>> {
    let ext = input.extension().map(|e| e.to_string_lossy().to_ascii_lowercase());
    Demuxer::open(src, ext.as_deref())
}

fn open_mmap(input: &Path) -> mediaslice::Result<Demuxer<MmapSource>> {
    let src = MmapSource::open(input).map_err(cannot_open)?;
    src.advise_sequential();
    open_with(input, src)
}

fn open_pread(input: &Path) -> mediaslice::Result<Demuxer<FileSource>> {
    open_with(input, FileSource::open(input).map_err(cannot_open)?)
}

/// One lap's length in microseconds: the latest end (time plus duration)
/// of any packet, less the earliest start, over the whole input.
fn lap_us<S: Source>(opener: &dyn Fn() -> mediaslice::Result<Demuxer<S>>) -> mediaslice::Result<i64> {
    let mut d = opener()?;
    let bases: Vec<Rational> = d.tracks().iter().map(|t| t.time_base).collect();
    let us = Rational::new(1, 1_000_000);
    let (mut first, mut end) = (i64::MAX, i64::MIN);
    while let Some(p) = d.next_packet()? {
        let (Some(t), Some(&tb)) = (p.dts.or(p.pts), bases.get(p.track)) else {
            continue;
        };
        let dur = i64::try_from(p.duration.unwrap_or(0)).unwrap_or(0);
        first = first.min(mediaslice::types::rescale_q(t, tb, us));
        end = end.max(mediaslice::types::rescale_q(t.saturating_add(dur), tb, us));
    }
    Ok(end.saturating_sub(first).max(1))
}

fn main() {
    // Every allocation from here on is counted.
    ON.store(true, Relaxed);
    let a = parse_args();
    std::fs::create_dir_all(&a.out).unwrap_or_else(|e| fail("cannot make OUTDIR", &e));
    if a.mmap {
        run(&a, &|| open_mmap(&a.input));
    } else {
        run(&a, &|| open_pread(&a.input));
    }
}

fn run<S: Source>(a: &Args, opener: &dyn Fn() -> mediaslice::Result<Demuxer<S>>) {
    let tracks = prepare_tracks(opener).unwrap_or_else(|e| fail("cannot read the input", &e));
    let lap = lap_us(opener).unwrap_or_else(|e| fail("cannot read the input", &e));
    let bases: Vec<Rational> = tracks.iter().map(|t| t.track.time_base).collect();

    let progress = Arc::new(Progress::default());
    let tsv: Box<dyn Write + Send> = match &a.tsv {
        Some(p) => Box::new(std::fs::File::create(p).unwrap_or_else(|e| fail("cannot create the TSV", &e))),
        None => Box::new(std::io::stdout()),
    };
    let sampler = {
        let p = Arc::clone(&progress);
        let every = Duration::from_secs(a.every);
        std::thread::spawn(move || sampler(p, every, tsv))
    };

    let start = Instant::now();
    let deadline = start + Duration::from_secs(a.seconds);
    let us = Rational::new(1, 1_000_000);
    // Allocated once, lent to every file's muxer.
    let mut scratch = vec![0u8; FRAGMENT_SCRATCH];
    let mut ring: VecDeque<PathBuf> = VecDeque::new();
    let mut laps: i64 = 0;
    let mut file_no: u64 = 0;
    let mut last_check: Option<(PathBuf, u64)> = None;
    while Instant::now() < deadline {
        let path = a.out.join(format!("soak-{file_no:06}.mp4"));
        let sink = FileSink::create(&path).unwrap_or_else(|e| fail("cannot create an output", &e));
        let format = MuxFormat::Fmp4(Fragmenting::DEFAULT);
        let mut muxer = Muxer::with_scratch(sink, format, scratch.as_mut_slice())
            .unwrap_or_else(|e| fail("cannot start the muxer", &e));
        let mut report = RemuxReport::default();
        let map =
            declare_tracks(&mut muxer, &tracks, &mut report).unwrap_or_else(|e| fail("cannot declare tracks", &e));
        let mut fragments_before = 0u64;
        let mut last_pos = muxer.sink().position();
        loop {
            // One lap: the whole input, its times moved on by `laps` laps.
            let shift_us = lap.saturating_mul(laps);
            let shifts: Vec<i64> = bases
                .iter()
                .map(|&tb| mediaslice::types::rescale_q(shift_us, us, tb))
                .collect();
            let mut d = opener().unwrap_or_else(|e| fail("cannot reopen the input", &e));
            loop {
                let p = match d.next_packet() {
                    Ok(Some(p)) => p,
                    Ok(None) => break,
                    Err(e) => fail("input", &e),
                };
                let Some(&Some(track)) = map.get(p.track) else { continue };
                if p.flags.truncated {
                    continue;
                }
                let shift = shifts.get(p.track).copied().unwrap_or(0);
                let pts = p.pts.map(|t| t.saturating_add(shift));
                let dts = p.dts.map(|t| t.saturating_add(shift));
                if a.paced {
                    if let (Some(t), Some(&tb)) = (dts.or(pts), bases.get(p.track)) {
                        let due = Duration::from_micros(mediaslice::types::rescale_q(t, tb, us).max(0) as u64);
                        let now = start.elapsed();
                        if due > now {
                            std::thread::sleep(due - now);
                        }
                    }
                }
                muxer
                    .write_packet(&Packet { track, pts, dts, ..p })
                    .unwrap_or_else(|e| fail("write", &e));
                progress.packets.fetch_add(1, Relaxed);
                let written = muxer.sink().position();
                progress.bytes.fetch_add(written.saturating_sub(last_pos), Relaxed);
                last_pos = written;
                let f = muxer.fragment_stats().map_or(0, |s| u64::from(s.fragments));
                progress
                    .fragments
                    .fetch_add(f.saturating_sub(fragments_before), Relaxed);
                fragments_before = f;
            }
            laps += 1;
            if muxer.sink().position() >= a.file_bytes || Instant::now() >= deadline {
                break;
            }
        }
        let packets = muxer.packets();
        let sink = muxer.finish().unwrap_or_else(|e| fail("finish", &e));
        progress
            .bytes
            .fetch_add(sink.position().saturating_sub(last_pos), Relaxed);
        sink.commit().unwrap_or_else(|e| fail("commit", &e));
        progress.files.fetch_add(1, Relaxed);
        last_check = Some((path.clone(), packets));
        ring.push_back(path);
        while ring.len() > a.ring {
            if let Some(old) = ring.pop_front() {
                std::fs::remove_file(&old).unwrap_or_else(|e| fail("cannot delete an old output", &e));
            }
        }
        file_no += 1;
    }
    progress.done.store(true, Relaxed);
    let _ = sampler.join();

    // The last file read back: every packet written is there.
    if let Some((path, written)) = last_check {
        let mut d = open_mmap(&path).unwrap_or_else(|e| fail("cannot read back the last output", &e));
        let mut read = 0u64;
        while d
            .next_packet()
            .unwrap_or_else(|e| fail("reading back the last output", &e))
            .is_some()
        {
            read += 1;
        }
        eprintln!(
            "soak: {} files, {} bytes, {} packets in {:.0} s; {} read back {read} of {written} packets",
            progress.files.load(Relaxed),
            progress.bytes.load(Relaxed),
            progress.packets.load(Relaxed),
            start.elapsed().as_secs_f64(),
            path.display(),
        );
        if read != written {
            std::process::exit(1);
        }
    }
}
