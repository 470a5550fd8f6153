//! `Display` of the names a user prints (ffmpeg's spellings) and `Debug`
//! of a demuxer and its sources.
#![allow(clippy::indexing_slicing, clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use crate::common;

use mediaslice::{Codec, Demuxer, Rational, SliceSource, TrackKind};

#[test]
fn names_print_as_ffmpeg_spells_them() {
    assert_eq!(Codec::H264.to_string(), "h264");
    assert_eq!(Codec::PcmS16Le.to_string(), "pcm_s16le");
    assert_eq!(TrackKind::Audio.to_string(), "audio");
    assert_eq!(Rational { num: 1, den: 90_000 }.to_string(), "1/90000");
}

#[test]
fn a_demuxer_and_its_source_debug_print_what_they_hold() {
    let bytes = std::fs::read(common::corpus_dir().join("files/mp4/h264_aac.mp4")).unwrap();
    let mut scratch = vec![0u8; 1 << 16];
    let src = SliceSource::with_scratch(&bytes, &mut scratch);
    let s = format!("{src:?}");
    assert!(
        s.starts_with("SliceSource { len: ") && s.contains("scratch: 65536"),
        "{s}"
    );
    let d = Demuxer::open(src, Some("mp4")).unwrap();
    let s = format!("{d:?}");
    assert!(s.starts_with("Demuxer { format: Mp4, tracks: ["), "{s}");
    assert!(s.contains(&format!("len: {}", bytes.len())), "{s}");
    assert!(s.contains("codec: H264") && s.contains("codec: Aac"), "{s}");
}
