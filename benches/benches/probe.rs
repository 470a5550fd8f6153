//! Probe latency in process: open, the track list, the duration and every
//! tag, for every corpus file of the suite's families and the large files.
//! (The whole-process comparison with `ffprobe -show_format -show_streams`
//! and `mediainfo` is `benches/compare.py probe`.)
//!
//! `cargo bench -p mediaslice-benches --bench probe [-- FILTER]`.

#[path = "common/mod.rs"]
mod common;

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, SamplingMode};
use mediaslice_benches::{corpus_files, load, mediaslice_probe, throughput_files, SCRATCH};
use std::hint::black_box;
use std::time::Duration;

fn probe(c: &mut Criterion) {
    let mut scratch = vec![0u8; SCRATCH];
    let mut files = corpus_files();
    files.extend(throughput_files().into_iter().filter(|f| f.label.starts_with("big/")));
    let mut facts = vec!["file\tfamily\tbytes\ttracks\tduration_us\ttags".to_string()];
    let (samples, warm, measure) = if mediaslice_benches::quick() {
        (10, Duration::from_millis(50), Duration::from_millis(100))
    } else {
        (20, Duration::from_millis(200), Duration::from_millis(500))
    };
    let mut g = c.benchmark_group("probe");
    g.sample_size(samples)
        .warm_up_time(warm)
        .measurement_time(measure)
        .sampling_mode(SamplingMode::Flat);
    for bf in files {
        let data = load(&bf.path);
        let Some(f) = mediaslice_probe(data, &mut scratch) else {
            eprintln!("skip {}: mediaslice does not open it", bf.label);
            continue;
        };
        facts.push(format!(
            "{}\t{}\t{}\t{}\t{}\t{}",
            bf.label,
            bf.family.name,
            data.len(),
            f.tracks,
            f.duration_us.map_or("-".into(), |d| d.to_string()),
            f.tags
        ));
        g.bench_function(BenchmarkId::from_parameter(&bf.label), |b| {
            b.iter(|| mediaslice_probe(black_box(data), &mut scratch))
        });
    }
    g.finish();
    common::write_tsv("probe_facts.tsv", &facts);
}

criterion_group!(benches, probe);
criterion_main!(benches);
