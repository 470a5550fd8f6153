//! The integration tests of `mediaslice-std` and the `mediaslice` CLI, as
//! one test binary: each file beside this one is a module of it.
//!
//! One binary instead of one per file: each binary linked all of
//! `mediaslice-std` and re-optimised the generic code of `mediaslice` it
//! uses, which made the release build of the tests the longest step of CI.
//! `zero_alloc.rs` stays a binary of its own: it installs a counting global
//! allocator, which would count the other tests' allocations too.
//!
//! A file added here must be listed below; `every_test_file_is_a_module`
//! fails when one is not (Cargo no longer finds test files by itself:
//! `autotests = false`). Run one file's tests with
//! `cargo test -p mediaslice-std --test suite FILE::`.
#![allow(clippy::indexing_slicing, clippy::unwrap_used, clippy::expect_used, clippy::panic)]

// Helpers shared by several files: the corpus and sample lists of
// `mediaslice`'s own tests, the local HTTP servers, the remux and tag-edit
// checks, and the ffprobe oracle.
#[path = "../../core/tests/common/mod.rs"]
mod common;
#[cfg(feature = "http")]
#[path = "common/mod.rs"]
mod http_common;
#[cfg(feature = "cli")]
mod live_common;
#[cfg(feature = "cli")]
mod probe_oracle;
mod remux_common;
#[cfg(feature = "cli")]
mod tagedit_common;

#[cfg(feature = "cli")]
mod aac_no_config;
#[cfg(feature = "http")]
mod big_offset;
#[cfg(feature = "cli")]
mod chapters;
#[cfg(feature = "cli")]
mod cli;
#[cfg(feature = "cli")]
mod cli_batch;
#[cfg(feature = "cli")]
mod cli_http;
#[cfg(feature = "cli")]
mod cli_phases;
#[cfg(feature = "cli")]
mod edges;
#[cfg(feature = "cli")]
mod ffprobe_fields;
#[cfg(feature = "cli")]
mod fmp4_bframes_cli;
#[cfg(feature = "cli")]
mod fmp4_cli;
#[cfg(feature = "cli")]
mod hostile_http;
#[cfg(feature = "http")]
mod http;
#[cfg(feature = "http")]
mod http_budget;
mod index_spill;
#[cfg(feature = "cli")]
mod input_read;
#[cfg(feature = "cli")]
mod kernel_copy;
#[cfg(feature = "cli")]
mod package_dash;
#[cfg(feature = "cli")]
mod package_live;
mod package_many;
#[cfg(feature = "cli")]
mod package_ts;
#[cfg(feature = "cli")]
mod programs;
mod remux_avi;
mod remux_extras;
mod remux_mov_pcm;
#[cfg(feature = "cli")]
mod remux_mp4;
#[cfg(feature = "cli")]
mod remux_tools;
#[cfg(feature = "cli")]
mod remux_ts;
#[cfg(feature = "cli")]
mod repair;
mod repair_avi;
mod sink;
#[cfg(feature = "cli")]
mod tagedit;
#[cfg(feature = "cli")]
mod tagedit_aiff;
#[cfg(feature = "cli")]
mod tagedit_asf;
#[cfg(feature = "cli")]
mod tagedit_cli;
#[cfg(feature = "cli")]
mod tagedit_fuzz_finds;
#[cfg(feature = "cli")]
mod tagedit_picture;
#[cfg(feature = "cli")]
mod truncate;
#[cfg(feature = "cli")]
mod ts_subtitles;

/// Every `tests/*.rs` file but this one and `zero_alloc.rs` is declared
/// above as a module: a file left out would never run.
#[test]
fn every_test_file_is_a_module() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests");
    let missing = common::undeclared_test_files(&dir, include_str!("suite.rs"), &["suite", "zero_alloc"]);
    assert!(
        missing.is_empty(),
        "tests/suite.rs does not declare {missing:?}: add `mod NAME;` lines"
    );
}
