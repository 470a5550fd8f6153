//! WAV, RF64 and Wave64 through `Demuxer::open_as` (the RIFF module reads
//! all three from their own magic; `Wav` selects it).
#![no_main]
libfuzzer_sys::fuzz_target!(|data: &[u8]| mediaslice_fuzz::run_parser(data, mediaslice::FormatKind::Wav));
