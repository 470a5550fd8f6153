//! Every format through detection (`Demuxer::open_with`).
#![no_main]
libfuzzer_sys::fuzz_target!(|data: &[u8]| mediaslice_fuzz::run_any(data));
