//! MPEG transport streams (TS packets, PSI sections, PES) through `Demuxer::open_as`.
#![no_main]
libfuzzer_sys::fuzz_target!(|data: &[u8]| mediaslice_fuzz::run_parser_with_scratch(
    data,
    mediaslice::FormatKind::MpegTs
));
