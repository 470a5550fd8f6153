//! A whole-process demux without the CLI's CRC: maps the file, opens it,
//! pulls every packet, prints the count. `walk headers FILE` reads each
//! packet's header fields only; `walk crc FILE` also runs the CRC-32 over
//! every payload (what `mediaslice packets --summary` does). `compare.py`
//! runs it beside the CLI and ffmpeg to split the process time into demux
//! and CRC.
//!
//! The map is advised `MADV_SEQUENTIAL`; the kernel may keep the pages it
//! read resident, so its peak RSS grows with the file (the CLI's
//! `MmapSource` releases them; see docs/sources.md).

use mediaslice_benches::{mediaslice_run, Mode, SCRATCH};

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let (mode, path) = match args.as_slice() {
        [m, p] if m == "headers" => (Mode::Headers, p),
        [m, p] if m == "crc" => (Mode::Crc, p),
        _ => {
            eprintln!("usage: walk headers|crc FILE");
            std::process::exit(2);
        }
    };
    let file = std::fs::File::open(path).unwrap_or_else(|e| {
        eprintln!("walk: {path}: {e}");
        std::process::exit(1)
    });
    // SAFETY: a read-only private map of a file this process does not
    // change.
    let map = unsafe { memmap2::Mmap::map(&file) }.unwrap_or_else(|e| {
        eprintln!("walk: {path}: {e}");
        std::process::exit(1)
    });
    let _ = map.advise(memmap2::Advice::Sequential);
    let mut scratch = vec![0u8; SCRATCH];
    let c = mediaslice_run(&map, &mut scratch, mode);
    println!(
        "{{\"packets\": {}, \"bytes\": {}, \"crc32\": \"{:08x}\"}}",
        c.packets, c.bytes, c.crc
    );
}
