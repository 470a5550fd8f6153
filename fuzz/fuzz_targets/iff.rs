//! EA IFF 85 pictures and sounds through `Demuxer::open_as`.
#![no_main]
libfuzzer_sys::fuzz_target!(|data: &[u8]| mediaslice_fuzz::run_parser(data, mediaslice::FormatKind::Iff));
