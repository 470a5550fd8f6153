//! The physical limit of `mediaslice packets --summary`: the same map
//! (`mediaslice-std`'s `MmapSource`, advised sequential, its pages released
//! the same way as the CLI's) and the same CRC-32 (crc32fast) over every
//! byte of the file, in 1 MiB reads, with no demuxing. `compare.py` runs it
//! beside the CLI as the `bare-mmap-crc` row (issue 22): the CLI's time over
//! this one's is what the container walk costs.
//!
//!     mmapcrc FILE    # prints {"bytes": N, "crc32": "xxxxxxxx"}

use mediaslice::Source;
use mediaslice_std::MmapSource;

/// Bytes hashed per read: large enough that the loop costs nothing.
const STEP: u64 = 1 << 20;

fn main() {
    let Some(path) = std::env::args().nth(1) else {
        eprintln!("usage: mmapcrc FILE");
        std::process::exit(2);
    };
    let fail = |e: &dyn std::fmt::Display| -> ! {
        eprintln!("mmapcrc: {path}: {e}");
        std::process::exit(1)
    };
    let mut src = MmapSource::open(&path).unwrap_or_else(|e| fail(&e));
    src.advise_sequential();
    let len = src.len();
    let mut crc = crc32fast::Hasher::new();
    let mut at = 0u64;
    while at < len {
        let n = STEP.min(len - at) as usize;
        crc.update(src.bytes(at, n).unwrap_or_else(|e| fail(&e)));
        at += n as u64;
    }
    println!("{{\"bytes\": {len}, \"crc32\": \"{:08x}\"}}", crc.finalize());
}
