//! ASF (WMV, WMA) through `Demuxer::open_as`, with scratch: ASF joins payload
//! fragments of a media object in it.
#![no_main]
libfuzzer_sys::fuzz_target!(|data: &[u8]| mediaslice_fuzz::run_parser_with_scratch(data, mediaslice::FormatKind::Asf));
