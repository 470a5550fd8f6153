//! Matroska read live: a Segment of unknown size (a muxer writing to a
//! pipe, RFC 8794 §6.2) is read up to the input's length as the source
//! states it at each step, not as it was when the demuxer opened.
//!
//! [`Growing`] behaves as mediaslice-std's live source does (see
//! `common/growing.rs`). A Segment's end fixed at open would stop at the
//! snapshot; the packets must be those of the whole input read at once.
#![cfg(feature = "mkv")]
#![allow(clippy::indexing_slicing, clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use crate::common;

use common::growing::{self, drain, first_error, whole, Growing};
use mediaslice::{Demuxer, FormatKind, Source};
use std::path::Path;

fn corpus(name: &str) -> Vec<u8> {
    std::fs::read(
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../corpus/files/matroska")
            .join(name),
    )
    .unwrap()
}

/// Offset of the first Cluster ID (RFC 9559 §5.1.3).
fn first_cluster(data: &[u8]) -> u64 {
    data.windows(4).position(|w| w == [0x1F, 0x43, 0xB6, 0x75]).unwrap() as u64
}

/// `data` opened live with a snapshot that holds the headers and the
/// start of the first Cluster.
fn open_live<'a>(data: &'a [u8], scratch: &'a mut [u8]) -> Demuxer<Growing<'a>> {
    growing::open_live(data, scratch, FormatKind::Matroska, first_cluster(data) + 64)
}

#[test]
fn an_unknown_size_segment_is_read_past_the_length_seen_at_open() {
    // Both files declare an unknown-size Segment (01 FF FF FF FF FF FF FF).
    for name in ["vp8_vorbis_live.webm", "h264_aac_unknown_size_clusters.mkv"] {
        let data = corpus(name);
        assert!(
            data.windows(12)
                .any(|w| w == [0x18, 0x53, 0x80, 0x67, 1, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF]),
            "{name}: an unknown-size Segment"
        );
        let want = whole(&data);
        assert!(want.len() > 10, "{name}: {} packets", want.len());
        assert!(
            data.len() as u64 > (first_cluster(&data) + 64) * 2,
            "{name}: most of the input lies past the snapshot"
        );
        let mut scratch = vec![0u8; data.len() + 4096];
        let mut d = open_live(&data, &mut scratch);
        assert_eq!(drain(&mut d).unwrap(), want, "{name}");
        // The end: the input's real end, reached without an error.
        assert!(d.source().len() == data.len() as u64, "{name}");
    }
}

#[test]
fn a_known_size_segment_past_the_snapshot_is_read_to_its_end() {
    // A finished file read live: its Segment's declared end lies beyond
    // the snapshot; reading goes on to that end, and stops there.
    let data = corpus("h264_aac.mkv");
    let mut scratch = vec![0u8; data.len() + 4096];
    assert_eq!(drain(&mut open_live(&data, &mut scratch)).unwrap(), whole(&data));
}

#[test]
fn a_live_input_cut_inside_a_block_is_still_a_truncation() {
    // The stream stops in the middle of a SimpleBlock: an error, not a
    // clean end (only an end between elements is one).
    let data = corpus("vp8_vorbis_live.webm");
    let cut = &data[..data.len() * 2 / 3];
    let mut scratch = vec![0u8; data.len() + 4096];
    let (n, err) = first_error(&mut open_live(cut, &mut scratch), "a cut inside an element");
    assert!(n > 0 && err.is_truncation(), "{err} after {n} packets");
}
