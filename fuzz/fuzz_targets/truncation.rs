//! Every prefix of an input yields a prefix of its packets.
#![no_main]
libfuzzer_sys::fuzz_target!(|data: &[u8]| mediaslice_fuzz::run_truncation(data));
