//! The throughput matrix again, with the implementations alternated: each
//! round runs every implementation once on the file (in a rotated order),
//! so load from other processes on a shared machine falls on all of them
//! alike, which criterion's one-benchmark-after-another blocks cannot
//! promise. Reports median, min and max per implementation to
//! `$MEDIASLICE_BENCH_OUT/alternate.tsv`.
//!
//! `cargo bench -p mediaslice-benches --bench alternate [-- FILTER]` (with a
//! filter, the rows of the other files already in `alternate.tsv` are kept);
//! `ALT_ROUNDS` rounds (default 15; 5 with `MEDIASLICE_BENCH_QUICK`).

#[path = "common/mod.rs"]
mod common;

use common::peers;
use mediaslice_benches::{
    crc_baseline, load, mediaslice_opens, mediaslice_run, throughput_files, Counts, Mode, Peer, SCRATCH,
};
use std::hint::black_box;
use std::time::Instant;

#[derive(Clone, Copy)]
enum Who {
    Ours,
    Peer(Peer),
    Crc,
}

impl Who {
    fn name(self) -> &'static str {
        match self {
            Who::Ours => "mediaslice",
            Who::Peer(p) => p.name(),
            Who::Crc => "crc-baseline",
        }
    }
}

fn main() {
    let filter: Option<String> = std::env::args().skip(1).find(|a| !a.starts_with('-'));
    let rounds: usize = std::env::var("ALT_ROUNDS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(if mediaslice_benches::quick() { 5 } else { 15 });
    let mut scratch = vec![0u8; SCRATCH];
    let mut lines = vec!["file\tmode\timpl\trounds\tmedian_s\tmin_s\tmax_s\tpackets\tbytes".to_string()];
    for bf in throughput_files() {
        if filter.as_deref().is_some_and(|f| !bf.label.contains(f)) {
            continue;
        }
        let data = load(&bf.path);
        if !mediaslice_opens(data) {
            continue;
        }
        for mode in [Mode::Headers, Mode::Crc] {
            let mut who = vec![Who::Ours];
            who.extend(
                bf.family
                    .peers
                    .iter()
                    .filter(|&&p| peers::run(p, bf.family, data, mode).is_some())
                    .map(|&p| Who::Peer(p)),
            );
            if mode == Mode::Crc {
                who.push(Who::Crc);
            }
            // Small files: repeat inside one timing so it lasts about 2 ms.
            let t0 = Instant::now();
            black_box(mediaslice_run(data, &mut scratch, mode));
            let inner = (2e-3 / t0.elapsed().as_secs_f64().max(1e-9)).clamp(1.0, 10_000.0) as usize;
            let mut times: Vec<Vec<f64>> = vec![Vec::new(); who.len()];
            let mut counts = vec![Counts::default(); who.len()];
            for r in 0..rounds + 1 {
                for k in 0..who.len() {
                    let i = (k + r) % who.len();
                    let t = Instant::now();
                    let mut c = Counts::default();
                    for _ in 0..inner {
                        c = match who[i] {
                            Who::Ours => mediaslice_run(black_box(data), &mut scratch, mode),
                            Who::Peer(p) => peers::run(p, bf.family, black_box(data), mode).unwrap_or_default(),
                            Who::Crc => crc_baseline(black_box(data)),
                        };
                        black_box(c);
                    }
                    let dt = t.elapsed().as_secs_f64() / inner as f64;
                    if r > 0 {
                        // Round 0 warms up.
                        times[i].push(dt);
                    }
                    counts[i] = c;
                }
            }
            for (i, w) in who.iter().enumerate() {
                let t = &mut times[i];
                t.sort_by(f64::total_cmp);
                let med = t[t.len() / 2];
                let line = format!(
                    "{}\t{}\t{}\t{rounds}\t{med:.9}\t{:.9}\t{:.9}\t{}\t{}",
                    bf.label,
                    mode.name(),
                    w.name(),
                    t[0],
                    t[t.len() - 1],
                    counts[i].packets,
                    counts[i].bytes
                );
                println!("{line}");
                lines.push(line);
            }
        }
    }
    // With a filter, keep the rows of the files not run this time.
    if filter.is_some() {
        let ran: std::collections::HashSet<String> = lines
            .iter()
            .skip(1)
            .filter_map(|l| l.split('\t').next().map(str::to_string))
            .collect();
        if let Ok(old) = std::fs::read_to_string(common::out_dir().join("alternate.tsv")) {
            let kept: Vec<String> = old
                .lines()
                .skip(1)
                .filter(|l| l.split('\t').next().is_some_and(|f| !ran.contains(f)))
                .map(str::to_string)
                .collect();
            lines.splice(1..1, kept);
        }
    }
    common::write_tsv("alternate.tsv", &lines);
}
