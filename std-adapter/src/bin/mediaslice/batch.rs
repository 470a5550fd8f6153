//! `probe --json-lines`: many inputs probed in parallel, one compact JSON
//! object per input and line (`mediaslice_std::scan`).
//!
//! Three kinds of thread: one enumerates the inputs (arguments, directory
//! walks, glob matches, the list on standard input, read as it arrives),
//! `--jobs` workers probe them, and this thread writes the lines, in input
//! order unless `--unordered`. Work in flight is bounded: an input is
//! enumerated only when fewer than [`window`] inputs are enumerated and not
//! yet written, so a slow input (a server that takes its time) holds back
//! at most that many finished lines, and a list of a million paths is
//! never held in memory.

use super::*;
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use mediaslice_std::scan::{open_error_json, probe_input, ScanConfig};
use mediaslice_std::{is_http_url, HttpConfig};
use serde_json::{Map, Value};
use std::collections::BTreeMap;
use std::io::BufRead;
use std::sync::mpsc::{channel, sync_channel, Receiver, Sender};
use std::sync::{Arc, Mutex};
use std::thread;

/// What the enumerating thread hands on.
enum Job {
    /// A file path or URL to probe.
    Probe(String),
    /// A line already known: an argument that names nothing to probe.
    Line(String),
}

/// A finished line and its place in the input order.
struct Done {
    seq: u64,
    line: String,
    error: bool,
}

/// Most workers (`--jobs` above it is taken as this).
const MAX_JOBS: usize = 256;

/// Inputs enumerated and not yet written, at most: 8 per worker, at
/// least 16.
fn window(jobs: usize) -> usize {
    jobs.min(MAX_JOBS).saturating_mul(8).max(16)
}

pub(super) fn cmd_batch(p: &ProbeArgs, http: &HttpConfig) -> u8 {
    let jobs = p
        .jobs
        .unwrap_or_else(|| thread::available_parallelism().map_or(1, |n| n.get()))
        .clamp(1, MAX_JOBS);
    let config = Arc::new(ScanConfig { http: http.clone() });
    let inputs: Vec<PathBuf> = std::iter::once(p.file.file.clone())
        .chain(p.more.iter().cloned())
        .collect();
    let (slot_tx, slot_rx) = sync_channel::<()>(window(jobs));
    let (work_tx, work_rx) = channel::<(u64, String)>();
    let (done_tx, done_rx) = channel::<Done>();
    let work_rx = Arc::new(Mutex::new(work_rx));
    let recursive = p.recursive;
    // The threads are not joined: once the writer has stopped (a closed
    // pipe), the process ends even while the enumeration waits for a line
    // on standard input. Otherwise the writer ends only after every sender
    // of `done` (the enumeration and each worker) has finished.
    let done = done_tx.clone();
    thread::spawn(move || {
        let mut seq = 0u64;
        enumerate(&inputs, recursive, &mut |job| {
            // Blocks while the window is full; fails once the writer has
            // stopped.
            if slot_tx.send(()).is_err() {
                return false;
            }
            let ok = match job {
                Job::Probe(input) => work_tx.send((seq, input)).is_ok(),
                Job::Line(line) => done.send(Done { seq, line, error: true }).is_ok(),
            };
            seq += 1;
            ok
        });
    });
    for _ in 0..jobs {
        let (work, done, config) = (Arc::clone(&work_rx), done_tx.clone(), Arc::clone(&config));
        thread::spawn(move || worker(&work, &done, &config));
    }
    drop(done_tx);
    write_lines(done_rx, slot_rx, p.unordered, p.fail_on_error)
}

/// A worker: probes inputs until the enumeration ends or the writer stops.
fn worker(work: &Mutex<Receiver<(u64, String)>>, done: &Sender<Done>, config: &ScanConfig) {
    loop {
        let next = match work.lock() {
            Ok(rx) => rx.recv(),
            Err(_) => return,
        };
        let Ok((seq, input)) = next else { return };
        let obj = probe_input(&input, config);
        let error = obj.contains_key("error");
        let line = serde_json::to_string(&obj).unwrap_or_else(|e| error_line(&input, &e.to_string()));
        if done.send(Done { seq, line, error }).is_err() {
            return;
        }
    }
}

/// Writes the lines as they come (in input order unless `unordered`),
/// releasing one slot of the window per line; returns the exit status.
fn write_lines(done: Receiver<Done>, slots: Receiver<()>, unordered: bool, fail_on_error: bool) -> u8 {
    let stdout = io::stdout();
    let mut w = BufWriter::with_capacity(1 << 16, stdout.lock());
    let show = io::stderr().is_terminal() && !io::stdout().is_terminal();
    let bar = ProgressBar::with_draw_target(None, ProgressDrawTarget::stderr());
    if show {
        bar.set_style(
            ProgressStyle::with_template("{spinner} {pos} inputs probed ({per_sec}) {msg}")
                .unwrap_or_else(|_| ProgressStyle::default_spinner()),
        );
        bar.enable_steady_tick(Duration::from_millis(200));
    } else {
        bar.set_draw_target(ProgressDrawTarget::hidden());
    }
    let (mut errors, mut written) = (0u64, 0u64);
    let mut held: BTreeMap<u64, Done> = BTreeMap::new();
    let mut next = 0u64;
    let mut result: io::Result<()> = Ok(());
    'lines: for d in done.iter() {
        // Unordered, every line is the next one.
        let key = if unordered { next } else { d.seq };
        held.insert(key, d);
        while let Some(d) = held.remove(&next) {
            errors += u64::from(d.error);
            written += 1;
            next += 1;
            result = w.write_all(d.line.as_bytes()).and_then(|()| w.write_all(b"\n"));
            // A line is out: one more input may be enumerated.
            let _ = slots.recv();
            bar.inc(1);
            if errors > 0 {
                bar.set_message(format!("{errors} with errors"));
            }
            if result.is_err() {
                break 'lines;
            }
        }
    }
    // Stops the enumeration and the workers when writing failed (their
    // sends fail once these ends are gone).
    drop(slots);
    drop(done);
    bar.finish_and_clear();
    let result = result.and_then(|()| w.flush());
    match result {
        // A reader that closed the pipe (`| head`) wanted no more.
        Err(e) if e.kind() == io::ErrorKind::BrokenPipe => EXIT_OK,
        Err(e) => {
            eprintln!("mediaslice: writing the lines: {e}");
            EXIT_FAILED
        }
        Ok(()) if fail_on_error && errors > 0 => {
            eprintln!("mediaslice: {errors} of {written} inputs have an error");
            EXIT_FAILED
        }
        Ok(()) => EXIT_OK,
    }
}

/// The line of an input that names nothing to probe.
fn error_line(path: &str, message: &str) -> String {
    let mut obj = Map::new();
    obj.insert("path".into(), path.into());
    obj.insert("error".into(), open_error_json(&io::Error::other(message.to_owned())));
    Value::Object(obj).to_string()
}

/// Whether an argument is a glob pattern rather than a name.
fn is_pattern(s: &str) -> bool {
    s.contains(['*', '?', '['])
}

/// Hands each input named by `args` to `emit`, in order; stops when `emit`
/// returns `false`. A file or URL is itself; a directory is walked (with
/// `recursive`, its files sorted by name, depth first); a pattern that
/// names no existing path is expanded; `-` is the list on standard input.
fn enumerate(args: &[PathBuf], recursive: bool, emit: &mut dyn FnMut(Job) -> bool) {
    for arg in args {
        let Some(s) = arg.to_str() else {
            let name = arg.to_string_lossy();
            if !emit(Job::Line(error_line(&name, "the path is not valid UTF-8"))) {
                return;
            }
            continue;
        };
        let go_on = if s == "-" {
            from_stdin(emit)
        } else if is_http_url(s) {
            emit(Job::Probe(s.to_owned()))
        } else if arg.is_dir() {
            dir(arg, recursive, emit)
        } else if !arg.exists() && is_pattern(s) {
            pattern(s, recursive, emit)
        } else {
            // A file, or a name that does not exist: the probe says which.
            emit(Job::Probe(s.to_owned()))
        };
        if !go_on {
            return;
        }
    }
}

/// The inputs listed on standard input, one per line, as they arrive.
fn from_stdin(emit: &mut dyn FnMut(Job) -> bool) -> bool {
    for line in io::stdin().lock().lines() {
        let job = match line {
            Ok(l) => {
                let l = l.trim_end_matches('\r');
                if l.is_empty() {
                    continue;
                }
                Job::Probe(l.to_owned())
            }
            Err(e) => Job::Line(error_line("-", &format!("reading the list on standard input: {e}"))),
        };
        let stop = matches!(job, Job::Line(_));
        if !emit(job) || stop {
            return !stop;
        }
    }
    true
}

/// The files of a directory (and, with `recursive`, of its subdirectories).
fn dir(path: &Path, recursive: bool, emit: &mut dyn FnMut(Job) -> bool) -> bool {
    if !recursive {
        let name = path.to_string_lossy();
        return emit(Job::Line(error_line(&name, "a directory: give -r to walk it")));
    }
    for entry in walkdir::WalkDir::new(path).sort_by_file_name() {
        let job = match entry {
            // A symbolic link is followed to a file, not into a directory.
            Ok(e) if e.file_type().is_file() || (e.path_is_symlink() && e.path().is_file()) => {
                match e.path().to_str() {
                    Some(p) => Job::Probe(p.to_owned()),
                    None => Job::Line(error_line(&e.path().to_string_lossy(), "the path is not valid UTF-8")),
                }
            }
            Ok(_) => continue,
            Err(e) => {
                let name = e.path().map_or_else(|| path.to_string_lossy(), Path::to_string_lossy);
                Job::Line(error_line(&name, &e.to_string()))
            }
        };
        if !emit(job) {
            return false;
        }
    }
    true
}

/// The paths a glob pattern matches, sorted; a directory among them is
/// walked as [`dir`] does.
fn pattern(pat: &str, recursive: bool, emit: &mut dyn FnMut(Job) -> bool) -> bool {
    let paths = match glob::glob(pat) {
        Ok(p) => p,
        Err(e) => return emit(Job::Line(error_line(pat, &format!("not a valid pattern: {e}")))),
    };
    let mut any = false;
    for m in paths {
        any = true;
        let go_on = match m {
            Ok(p) if p.is_dir() => dir(&p, recursive, emit),
            Ok(p) => match p.to_str() {
                Some(s) => emit(Job::Probe(s.to_owned())),
                None => emit(Job::Line(error_line(
                    &p.to_string_lossy(),
                    "the path is not valid UTF-8",
                ))),
            },
            Err(e) => emit(Job::Line(error_line(
                &e.path().to_string_lossy(),
                &e.error().to_string(),
            ))),
        };
        if !go_on {
            return false;
        }
    }
    any || emit(Job::Line(error_line(pat, "no file matches the pattern")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn window_is_bounded_by_the_jobs() {
        assert_eq!(window(1), 16);
        assert_eq!(window(4), 32);
        assert_eq!(window(usize::MAX), MAX_JOBS * 8);
    }

    #[test]
    fn patterns_are_told_from_names() {
        assert!(is_pattern("media/**/*.mp4"));
        assert!(is_pattern("a?.mkv"));
        assert!(!is_pattern("plain.mp4"));
    }
}
