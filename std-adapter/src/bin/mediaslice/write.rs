//! `remux` and its progress bar: the write side's commands.

use super::*;

/// A bar on stderr for `remux` when stderr is a terminal (indicatif draws
/// nothing otherwise), bytes of the input read.
pub(super) fn remux_progress_bar() -> Option<indicatif::ProgressBar> {
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
pub(super) fn cmd_remux(a: &RemuxArgs, cli: &Cli) -> u8 {
    use mediaslice_std::remux::{remux_file, RemuxFormat, RemuxOptions};
    let name = a.input.to_string_lossy();
    let format = match a.format.as_deref().map(|f| (f, RemuxFormat::from_name(f))) {
        Some((f, None)) => {
            eprintln!("mediaslice: --format {f}: not a remux target (mkv, mka, webm, mp4, m4a, mov, fmp4, hybrid)");
            return EXIT_USAGE;
        }
        Some((_, some)) => some,
        None if a.hybrid => Some(RemuxFormat::HybridMp4),
        None => a.fragmented.then_some(RemuxFormat::Fmp4),
    };
    if a.sidx && format != Some(RemuxFormat::Fmp4) {
        eprintln!("mediaslice: --sidx: for fragmented MP4 only (--fragmented or --format fmp4)");
        return EXIT_USAGE;
    }
    let read = input_read(cli);
    if a.kernel_copy && read != InputRead::Mmap && (cli.source.is_some() || cli.reader) {
        eprintln!(
            "mediaslice: --kernel-copy reads the input through its map: give --source mmap or leave --source out"
        );
        return EXIT_USAGE;
    }
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
        sidx: a.sidx,
        index_memory: a.index_memory.map_or(0, |n| usize::try_from(n).unwrap_or(usize::MAX)),
        kernel_copy: a.kernel_copy,
        kernel_copy_min: match kernel_copy_min() {
            Ok(n) => n,
            Err(e) => {
                eprintln!("mediaslice: {e}");
                return EXIT_USAGE;
            }
        },
        read,
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
            report_kernel_copy(&r.kernel_copy);
            if r.index_spilled > 0 {
                eprintln!(
                    "mediaslice: index: {} bytes spilled to a temporary file (past --index-memory), read back and removed",
                    r.index_spilled
                );
            }
            if let (Some(RemuxFormat::HybridMp4), Some(f)) = (format, r.fragments) {
                if f.index_full {
                    eprintln!("mediaslice: {name}: the progressive index outgrew its memory; the output stays a complete fragmented MP4");
                } else {
                    eprintln!(
                        "mediaslice: hybrid MP4: {} fragments, index {} bytes for {} samples of the closed fragments",
                        f.fragments, f.index_bytes, f.index_samples
                    );
                }
            }
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

/// `MEDIASLICE_KERNEL_COPY_MIN`: the least payload, in bytes, that a file
/// output hands to the kernel (0 or unset: the default).
fn kernel_copy_min() -> Result<usize, String> {
    match std::env::var("MEDIASLICE_KERNEL_COPY_MIN") {
        Err(_) => Ok(0),
        Ok(v) => v
            .trim()
            .parse()
            .map_err(|_| format!("MEDIASLICE_KERNEL_COPY_MIN={v}: not a number of bytes")),
    }
}

/// One stderr line on the payload handed to the kernel, when any
/// qualified: the bytes, and the parts written the ordinary way because
/// the kernel refused (with its reason).
fn report_kernel_copy(k: &mediaslice_std::KernelCopyStats) {
    if k.parts == 0 && k.fallbacks == 0 {
        return;
    }
    let why = k
        .failed_errno
        .map(|e| format!(" ({})", io::Error::from_raw_os_error(e)))
        .unwrap_or_default();
    eprintln!(
        "mediaslice: kernel copy: {} payloads, {} bytes in {} copy_file_range calls; {} fallbacks to write{why}",
        k.parts, k.bytes, k.calls, k.fallbacks
    );
}

/// `mediaslice tags IN --set NAME=VALUE --remove NAME --picture FILE [-o
/// OUT]`: the work
/// is `mediaslice_std::tagedit::edit`; this prints its report on stderr.
pub(super) fn cmd_tag_edit(a: &TagsArgs) -> u8 {
    use mediaslice_std::tagedit::{edit, EditMode, Edits, Picture};
    let name = a.file.file.to_string_lossy();
    let mut edits = Edits {
        remove: a
            .remove
            .iter()
            .filter(|r| !r.eq_ignore_ascii_case("picture"))
            .cloned()
            .collect(),
        remove_picture: a.remove.iter().any(|r| r.eq_ignore_ascii_case("picture")),
        ..Edits::default()
    };
    if let Some(p) = &a.picture {
        match Picture::read(p) {
            Ok(p) => edits.picture = Some(p),
            Err(e) => {
                eprintln!("mediaslice: {e}");
                return EXIT_USAGE;
            }
        }
    }
    for s in &a.set {
        if let Err(e) = edits.push_set(s) {
            eprintln!("mediaslice: {e}");
            return EXIT_USAGE;
        }
    }
    match edit(&a.file.file, &edits, a.output.as_deref()) {
        Ok(r) => {
            let how = match r.mode {
                EditMode::InPlace => "in place",
                EditMode::Copy => "by a copy",
                EditMode::Extended => "in place and at the end",
            };
            eprintln!(
                "mediaslice: {name}: {} tags written {how} to {}, {} bytes",
                r.format,
                r.output.to_string_lossy(),
                r.bytes_written
            );
            EXIT_OK
        }
        Err(e) => {
            eprintln!("mediaslice: {name}: {e}");
            EXIT_FAILED
        }
    }
}
