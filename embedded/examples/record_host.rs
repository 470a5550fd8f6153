//! The recorder's host twin: runs `src/record.rs` (the code the recorder
//! firmware runs) on the host, both recordings, and writes them into the
//! directory given (`recorder.mp4`, `recorder-hybrid.mp4`), printing the
//! same lines as the firmware (without the stack figure). `run.sh`
//! compares its files with the firmware's byte for byte.
//!
//! ```text
//! cargo run --release --no-default-features --features recorder \
//!     --example record_host --target x86_64-unknown-linux-gnu -- OUTDIR
//! ```

#[path = "../src/record.rs"]
mod record;

use mediaslice::SliceSink;
use std::path::Path;
use std::process::ExitCode;

static VIDEO: &[u8] = include_bytes!("../../corpus/files/h264/baseline.h264");
static AUDIO: &[u8] = include_bytes!("../../corpus/files/adts/aac_lc.aac");

fn main() -> ExitCode {
    let Some(dir) = std::env::args_os().nth(1) else {
        eprintln!("usage: record_host OUTDIR");
        return ExitCode::from(2);
    };
    let sizes: Vec<String> = record::state_sizes().iter().map(|(n, s)| format!("{n}={s}")).collect();
    println!("# recorder sizeof {} (host)", sizes.join(" "));
    let mut ok = true;
    for mode in record::Mode::ALL {
        ok &= run_one(mode, Path::new(&dir));
    }
    if ok {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}

fn run_one(mode: record::Mode, dir: &Path) -> bool {
    let name = mode.file();
    let mut out = vec![0u8; 1 << 20];
    let mut scratch = vec![0u8; mode.scratch()];
    let (written, rec) = match record::record(VIDEO, AUDIO, mode, SliceSink::new(&mut out), &mut scratch) {
        Ok((sink, rec)) => (sink.into_written(), rec),
        Err(e) => {
            eprintln!("{name} recorder error: {e}");
            return false;
        }
    };
    println!(
        "{name} recorder video={} audio={} bytes={} fragments={} closed_early={} most_samples={} index_samples={}",
        rec.packets[0], rec.packets[1], rec.bytes, rec.fragments, rec.closed_early, rec.most_samples, rec.index_samples
    );
    let b = match record::read_back(written, &mut scratch) {
        Ok(b) => b,
        Err(e) => {
            eprintln!("{name} readback error: {e}");
            return false;
        }
    };
    println!(
        "{name} readback packets={} bytes={} crc32={:08x} video={}:{:08x} audio={}:{:08x}",
        b.all_packets, b.all_bytes, b.all_crc, b.packets[0], b.crc[0], b.packets[1], b.crc[1]
    );
    if let Err(e) = std::fs::write(dir.join(name), written) {
        eprintln!("{}: {e}", dir.join(name).display());
        return false;
    }
    let ok = b.packets == rec.packets && rec.closed_early == 0 && !rec.index_full;
    if !ok {
        eprintln!(
            "{name} FAILED: read back {:?}, written {:?}, index full {}",
            b.packets, rec.packets, rec.index_full
        );
    }
    ok
}
