//! The integration tests of `mediaslice`, as one test binary: each file
//! beside this one is a module of it, and `common/` holds the helpers they
//! share (where the samples and the corpus are, ffprobe's expected JSON,
//! pulling every packet of a file).
//!
//! One binary instead of one per file: each binary re-optimised the
//! generic demuxer and muxer code it used and linked it again, which made
//! the release build of the tests the longest step of CI.
//!
//! A file added here must be listed below; `every_test_file_is_a_module`
//! fails when one is not (Cargo no longer finds test files by itself:
//! `autotests = false`). Run one file's tests with
//! `cargo test -p mediaslice --test suite FILE::`.
#![allow(clippy::indexing_slicing, clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

mod ape_musepack_cuts;
mod asf_flv;
mod avi_aiff_caf_conformance;
mod avi_opendml_big;
mod chapters_programs;
mod conformance;
mod convert_ffmpeg;
mod detection;
mod display;
mod docs_sync;
mod edges;
mod es_conformance;
mod es_malformed;
mod es_mutation;
mod es_seek;
mod fmp4_backfill;
mod fmp4_damage;
mod fmp4_mux;
mod fmp4_sidx;
mod hybrid_mp4;
mod iff;
mod index_amplification;
mod index_spill;
mod malformed;
mod mkv_hevc_dts;
mod mkv_live;
mod mkv_mux;
mod mkv_samples;
mod mov_pcm;
mod mp4_faststart;
mod mp4_live;
mod mp4_mux;
mod mux_driver;
mod pieces;
mod regressions;
mod seek;
mod silent_emptiness;
mod slice_vs_stream;
mod truncation;
mod ts_mux;
mod ts_mux_sdt_wrap;
mod ts_unwrap;

/// Every `tests/*.rs` file but this one is declared above as a module: a
/// file left out would never run.
#[test]
fn every_test_file_is_a_module() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests");
    let missing = common::undeclared_test_files(&dir, include_str!("suite.rs"), &["suite"]);
    assert!(
        missing.is_empty(),
        "tests/suite.rs does not declare {missing:?}: add `mod NAME;` lines"
    );
}
