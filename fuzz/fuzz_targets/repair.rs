//! Repair of a damaged recording into memory, the output read back.
#![no_main]
libfuzzer_sys::fuzz_target!(|data: &[u8]| mediaslice_fuzz::run_repair(data));
