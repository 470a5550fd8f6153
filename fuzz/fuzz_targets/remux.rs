//! Round trip through a muxer: demux, mux (Matroska or MP4), demux.
#![no_main]
libfuzzer_sys::fuzz_target!(|data: &[u8]| mediaslice_fuzz::run_remux(data));
