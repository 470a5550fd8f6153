//! The recorder's host twin: runs `src/record.rs` (the code the recorder
//! firmware runs) on the host and writes the recording to the path given,
//! printing the same `recorder` and `readback` lines (without the stack
//! figure). `run.sh` compares its file with the firmware's byte for byte.
//!
//! ```text
//! cargo run --release --no-default-features --features recorder \
//!     --example record_host --target x86_64-unknown-linux-gnu -- OUT.mp4
//! ```

#[path = "../src/record.rs"]
mod record;

use mediaslice::SliceSink;
use std::process::ExitCode;

static VIDEO: &[u8] = include_bytes!("../../corpus/files/h264/baseline.h264");
static AUDIO: &[u8] = include_bytes!("../../corpus/files/adts/aac_lc.aac");

fn main() -> ExitCode {
    let Some(path) = std::env::args_os().nth(1) else {
        eprintln!("usage: record_host OUT.mp4");
        return ExitCode::from(2);
    };
    let sizes: Vec<String> = record::state_sizes().iter().map(|(n, s)| format!("{n}={s}")).collect();
    println!("# recorder sizeof {} (host)", sizes.join(" "));
    let mut out = vec![0u8; 1 << 20];
    let mut scratch = vec![0u8; record::MUX_SCRATCH];
    let (written, rec) = match record::record(VIDEO, AUDIO, SliceSink::new(&mut out), &mut scratch) {
        Ok((sink, rec)) => (sink.into_written(), rec),
        Err(e) => {
            eprintln!("recorder error: {e}");
            return ExitCode::FAILURE;
        }
    };
    println!(
        "recorder video={} audio={} bytes={} fragments={} closed_early={} most_samples={}",
        rec.packets[0], rec.packets[1], rec.bytes, rec.fragments, rec.closed_early, rec.most_samples
    );
    let b = match record::read_back(written, &mut scratch) {
        Ok(b) => b,
        Err(e) => {
            eprintln!("readback error: {e}");
            return ExitCode::FAILURE;
        }
    };
    println!(
        "readback packets={} bytes={} crc32={:08x} video={}:{:08x} audio={}:{:08x}",
        b.all_packets, b.all_bytes, b.all_crc, b.packets[0], b.crc[0], b.packets[1], b.crc[1]
    );
    if let Err(e) = std::fs::write(&path, written) {
        eprintln!("{}: {e}", path.to_string_lossy());
        return ExitCode::FAILURE;
    }
    if b.packets == rec.packets && rec.closed_early == 0 {
        ExitCode::SUCCESS
    } else {
        eprintln!("recorder FAILED: read back {:?}, written {:?}", b.packets, rec.packets);
        ExitCode::FAILURE
    }
}
