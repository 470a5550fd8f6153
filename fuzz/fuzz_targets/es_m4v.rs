#![no_main]
//! Fuzzes the M4v demuxer through a slice and a reader (identical packets).
use libfuzzer_sys::fuzz_target;

#[path = "es_common.rs"]
mod es_common;

fuzz_target!(|data: &[u8]| es_common::run(data, mediaslice::FormatKind::M4v));
