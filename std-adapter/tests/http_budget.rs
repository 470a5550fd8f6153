//! What a probe and a full read cost over HTTP, per family of
//! `corpus/files/` served on 127.0.0.1, checked against the default caps
//! (`docs/bench/io.md` has the table this prints:
//! `cargo test --release -p mediaslice-std --test suite http_budget:: -- --nocapture`;
//! with `HTTP_BUDGET_EXTRA=DIR`, the files in DIR are measured too, as the
//! set `extra`, one family per extension).

use crate::http_common as common;

use common::{corpus_files, test_config as cfg, RangeServer};
use mediaslice::{Demuxer, Source};
use mediaslice_std::{HttpConfig, HttpSource};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// The CLI's caps for `probe`, `tags` and `io` (`PROBE_MAX_REQUESTS`,
/// `PROBE_MAX_BYTES` in `src/bin/mediaslice/main.rs`).
const PROBE_MAX_REQUESTS: u64 = 250;
const PROBE_MAX_BYTES: u64 = 32 << 20;

/// Pulls items (`next` says whether there was one) until the end or an
/// error; a cap reached is a failure of the defaults.
fn drain(mut next: impl FnMut() -> mediaslice::Result<bool>, f: &Path) {
    loop {
        match next() {
            Ok(true) => {}
            Ok(false) => return,
            Err(e) => {
                assert_ne!(e.kind(), mediaslice::ErrorKind::LimitExceeded, "{}: {e}", f.display());
                return;
            }
        }
    }
}

#[derive(Default)]
struct Family {
    files: u32,
    len: u64,
    probe_requests_max: u64,
    probe_bytes_max: u64,
    pass_requests_max: u64,
    pass_bytes: u64,
    /// Most requests per 16 KiB of the file over a full read.
    pass_requests_per_16k: f64,
}

#[test]
fn probes_and_full_reads_of_the_corpus_fit_the_default_caps() {
    let server = RangeServer::start();
    let mut fams: BTreeMap<String, Family> = BTreeMap::new();
    let mut files: Vec<(String, PathBuf)> = corpus_files()
        .into_iter()
        .map(|f| {
            let fam = f.parent().unwrap().file_name().unwrap().to_string_lossy().into_owned();
            (format!("corpus | {fam}"), f)
        })
        .collect();
    if let Some(dir) = std::env::var_os("HTTP_BUDGET_EXTRA") {
        for f in std::fs::read_dir(dir).unwrap() {
            let f = f.unwrap().path();
            let ext = f
                .extension()
                .map_or(String::new(), |e| e.to_string_lossy().into_owned());
            files.push((format!("extra | {ext}"), f));
        }
    }
    for (fam, f) in files {
        let url = server.url("range", &f);
        // Probe: open (detection, headers, tracks, duration) and every tag,
        // with the CLI's probe caps.
        let c = HttpConfig {
            max_requests: Some(PROBE_MAX_REQUESTS),
            max_bytes: Some(PROBE_MAX_BYTES),
            ..cfg()
        };
        let mut src = HttpSource::open_with(&url, c).unwrap();
        let len = src.len();
        if let Ok(mut d) = Demuxer::open(&mut src, None) {
            let _ = (d.tracks().len(), d.info().duration_us);
            drain(|| d.next_tag().map(|t| t.is_some()), &f);
        }
        let probe = src.http_stats();
        // Full read with the library's defaults (those of `packets`).
        let mut src = HttpSource::open_with(&url, cfg()).unwrap();
        if let Ok(mut d) = Demuxer::open(&mut src, None) {
            drain(|| d.next_packet().map(|p| p.is_some()), &f);
        }
        let pass = src.http_stats();
        assert!(pass.requests <= src.max_requests(), "{}", f.display());
        assert!(pass.bytes <= src.max_bytes(), "{}", f.display());
        let e = fams.entry(fam).or_default();
        e.files += 1;
        e.len += len;
        e.probe_requests_max = e.probe_requests_max.max(probe.requests);
        e.probe_bytes_max = e.probe_bytes_max.max(probe.bytes);
        e.pass_requests_max = e.pass_requests_max.max(pass.requests);
        e.pass_bytes += pass.bytes;
        let per = pass.requests as f64 / (len.max(1) as f64 / 16384.0).max(1.0);
        e.pass_requests_per_16k = e.pass_requests_per_16k.max(per);
    }
    println!("| set | family | files | bytes | probe: most requests | probe: most bytes | full read: most requests | full read: bytes received / file bytes | full read: most requests per 16 KiB |");
    println!("|---|---|---:|---:|---:|---:|---:|---:|---:|");
    for (name, f) in &fams {
        println!(
            "| {name} | {} | {} | {} | {} | {} | {:.2} | {:.2} |",
            f.files,
            f.len,
            f.probe_requests_max,
            f.probe_bytes_max,
            f.pass_requests_max,
            f.pass_bytes as f64 / f.len.max(1) as f64,
            f.pass_requests_per_16k
        );
    }
}
