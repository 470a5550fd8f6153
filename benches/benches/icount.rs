//! One run of one implementation on one file, for instruction counts under
//! callgrind (stable on a shared, noisy machine, unlike wall time):
//!
//! ```sh
//! valgrind --tool=callgrind --toggle-collect='*icount::measured*' \
//!     $BENCH_BIN/icount-* FAMILY IMPL MODE FILE
//! ```
//!
//! IMPL is `mediaslice`, `mediaslice-pieces` (packets through
//! `next_packet_pieces`), `crc-baseline` or a peer name; MODE `headers` or
//! `crc`. Only `measured` (open plus every packet) is counted; loading the
//! file is not. `benches/icount.sh` runs the matrix.

#[path = "common/mod.rs"]
mod common;

use common::peers;
use mediaslice_benches::{crc_baseline, load, mediaslice_run, mediaslice_run_pieces, Counts, Mode, FAMILIES, SCRATCH};

#[inline(never)]
fn measured(family: &str, who: &str, mode: Mode, data: &'static [u8], scratch: &mut [u8]) -> Option<Counts> {
    match who {
        "mediaslice" => Some(mediaslice_run(data, scratch, mode)),
        "mediaslice-pieces" => Some(mediaslice_run_pieces(data, scratch, mode)),
        "crc-baseline" => Some(crc_baseline(data)),
        _ => {
            let fam = FAMILIES.iter().find(|f| f.name == family)?;
            let peer = *fam.peers.iter().find(|p| p.name() == who)?;
            peers::run(peer, fam, data, mode)
        }
    }
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).filter(|a| a != "--bench").collect();
    if args.first().map(String::as_str) == Some("--list") {
        // The matrix for icount.sh: FAMILY IMPL MODE FILE LABEL per line.
        for bf in mediaslice_benches::throughput_files() {
            let path = bf.path.display();
            for mode in ["headers", "crc"] {
                let mut who: Vec<&str> = vec!["mediaslice"];
                // Only MPEG-TS hands packets out in pieces; elsewhere the
                // pieces run is the joined run.
                if bf.family.name == "ts" {
                    who.push("mediaslice-pieces");
                }
                who.extend(bf.family.peers.iter().map(|p| p.name()));
                if mode == "crc" {
                    who.push("crc-baseline");
                }
                for w in who {
                    println!("{}\t{w}\t{mode}\t{path}\t{}", bf.family.name, bf.label);
                }
            }
        }
        return;
    }
    let [family, who, mode, path] = args.as_slice() else {
        eprintln!("usage: icount FAMILY IMPL MODE FILE");
        // `cargo bench` with no arguments runs every target: do nothing.
        return;
    };
    let mode = match mode.as_str() {
        "headers" => Mode::Headers,
        "crc" => Mode::Crc,
        m => panic!("mode {m}: headers or crc"),
    };
    let data = load(std::path::Path::new(path));
    let mut scratch = vec![0u8; SCRATCH];
    match measured(family, who, mode, data, &mut scratch) {
        Some(c) => println!("{}\t{}\t{:08x}", c.packets, c.bytes, c.crc),
        None => {
            eprintln!("{who} cannot run {family} in this mode");
            std::process::exit(2);
        }
    }
}
