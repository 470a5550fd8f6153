//! Musepack SV7 and SV8 through `Demuxer::open_as` (the demuxer reads either magic).
#![no_main]
libfuzzer_sys::fuzz_target!(|data: &[u8]| mediaslice_fuzz::run_parser(data, mediaslice::FormatKind::Musepack8));
