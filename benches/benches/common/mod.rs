//! Helpers shared by the bench targets (not a bench target itself: cargo
//! discovers only `benches/*.rs`).

#![allow(dead_code)]

pub mod peers;

use std::io::Write;
use std::path::PathBuf;
use std::time::Duration;

/// Where the bench targets write their side tables (packet counts,
/// allocation tables): `$MEDIASLICE_BENCH_OUT`, else
/// `/tmp/mediaslice-bench/results`.
pub fn out_dir() -> PathBuf {
    let d = std::env::var_os("MEDIASLICE_BENCH_OUT")
        .map(PathBuf::from)
        .unwrap_or_else(|| mediaslice_benches::big_dir().join("results"));
    let _ = std::fs::create_dir_all(&d);
    d
}

/// Writes `lines` (tab-separated, first line a header) to `out_dir()/name`.
pub fn write_tsv(name: &str, lines: &[String]) {
    let path = out_dir().join(name);
    let mut f = std::fs::File::create(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    for l in lines {
        writeln!(f, "{l}").unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    }
    eprintln!("wrote {}", path.display());
}

/// Criterion timing per file class: (samples, warm-up, measurement).
pub fn timing(big: bool) -> (usize, Duration, Duration) {
    if mediaslice_benches::quick() {
        (10, Duration::from_millis(100), Duration::from_millis(300))
    } else if big {
        (10, Duration::from_secs(1), Duration::from_secs(3))
    } else {
        (30, Duration::from_millis(500), Duration::from_secs(2))
    }
}
