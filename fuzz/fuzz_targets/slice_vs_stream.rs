//! `SliceSource` and `ReaderSource` must log identical runs; the input's last
//! 4 bytes choose the reader's chunk size, seekability, claimed length, cache
//! and format (see `StreamConfig::from_trailer`).
#![no_main]
libfuzzer_sys::fuzz_target!(|data: &[u8]| mediaslice_fuzz::run_slice_vs_stream(data));
