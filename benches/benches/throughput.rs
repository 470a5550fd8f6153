//! In-process throughput: open plus every packet, per format family, in two
//! modes (headers only; CRC-32 over every payload byte), mediaslice and the
//! Rust peers side by side in one criterion group per file and mode, plus
//! the bare-CRC baseline over the same bytes with the same CRC code.
//!
//! Headers groups report `Throughput::Elements` (mediaslice's packet count:
//! packets per second), CRC groups `Throughput::Bytes` (the file size).
//! Each implementation's own packet and byte counts go to
//! `$MEDIASLICE_BENCH_OUT/counts.tsv` for the report.
//!
//! `cargo bench -p mediaslice-benches --bench throughput [-- FILTER]`;
//! `MEDIASLICE_BENCH_QUICK=1` for a smoke run (corpus files, short times).

#[path = "common/mod.rs"]
mod common;

use common::peers;
use criterion::{criterion_group, criterion_main, Criterion, SamplingMode, Throughput};
use mediaslice_benches::{crc_baseline, load, mediaslice_opens, mediaslice_run, throughput_files, Mode, SCRATCH};
use std::hint::black_box;

fn throughput(c: &mut Criterion) {
    let mut scratch = vec![0u8; SCRATCH];
    let mut counts = vec!["file\tfamily\tbytes\tmode\timpl\tpackets\tpayload_bytes\tcrc32".to_string()];
    for bf in throughput_files() {
        let data = load(&bf.path);
        if !mediaslice_opens(data) {
            eprintln!("skip {}: mediaslice does not open it (yet)", bf.label);
            continue;
        }
        let (samples, warm, measure) = common::timing(bf.label.starts_with("big/"));
        for mode in [Mode::Headers, Mode::Crc] {
            let ms = mediaslice_run(data, &mut scratch, mode);
            let mut row = |who: &str, n: mediaslice_benches::Counts| {
                counts.push(format!(
                    "{}\t{}\t{}\t{}\t{who}\t{}\t{}\t{:08x}",
                    bf.label,
                    bf.family.name,
                    data.len(),
                    mode.name(),
                    n.packets,
                    n.bytes,
                    n.crc
                ))
            };
            row("mediaslice", ms);
            let mut g = c.benchmark_group(format!("tp/{}/{}", bf.label, mode.name()));
            g.sample_size(samples)
                .warm_up_time(warm)
                .measurement_time(measure)
                .sampling_mode(SamplingMode::Flat);
            g.throughput(match mode {
                Mode::Headers => Throughput::Elements(ms.packets),
                Mode::Crc => Throughput::Bytes(data.len() as u64),
            });
            g.bench_function("mediaslice", |b| {
                b.iter(|| mediaslice_run(black_box(data), &mut scratch, mode))
            });
            for &peer in bf.family.peers {
                let Some(n) = peers::run(peer, bf.family, data, mode) else {
                    continue;
                };
                row(peer.name(), n);
                g.bench_function(peer.name(), |b| {
                    b.iter(|| peers::run(peer, bf.family, black_box(data), mode))
                });
            }
            if mode == Mode::Crc {
                row("crc-baseline", crc_baseline(data));
                g.bench_function("crc-baseline", |b| b.iter(|| crc_baseline(black_box(data))));
            }
            g.finish();
        }
    }
    common::write_tsv("counts.tsv", &counts);
}

criterion_group!(benches, throughput);
criterion_main!(benches);
