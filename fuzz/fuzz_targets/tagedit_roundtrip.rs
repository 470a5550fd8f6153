//! Tags set and removed through a scratch file, the result read back
//! against the input's packets.
#![no_main]
libfuzzer_sys::fuzz_target!(|data: &[u8]| mediaslice_fuzz::run_tagedit(data));
