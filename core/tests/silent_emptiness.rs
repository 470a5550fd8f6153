//! Silent emptiness (issue 23): a declared size beyond what the input can
//! hold must not turn a readable file into "0 packets, success". Files are
//! built here from corpus files: a Matroska Tags or Tracks element whose
//! size runs past the Segment (ffprobe still reads every packet, and so
//! must we), a CAF whose packets are declared larger than `Limits::max_packet`
//! or than its data (an error, not an empty success).
#![allow(clippy::indexing_slicing, clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use crate::common;

use common::*;
use mediaslice::{Demuxer, ErrorKind, SliceSource};

/// Packets read and the error that ended the walk.
fn walk(b: &[u8], ext: &str) -> (u64, Option<ErrorKind>, Vec<&'static str>) {
    let mut d = match Demuxer::open(SliceSource::new(b), Some(ext)) {
        Ok(d) => d,
        Err(e) => return (0, Some(e.kind()), Vec::new()),
    };
    let mut n = 0;
    let end = loop {
        match d.next_packet() {
            Ok(Some(_)) => n += 1,
            Ok(None) => break None,
            Err(e) => break Some(e.kind()),
        }
    };
    let codes = d.diagnostics().iter().map(|(x, _)| x.code).collect();
    (n, end, codes)
}

/// `h264_aac.mkv` with the Segment made unknown-size and the element `id`
/// (the last occurrence, past the SeekHead) given an 8-byte size of 2^56 - 256.
fn mkv_with_huge(id: [u8; 4]) -> Vec<u8> {
    let b = std::fs::read(corpus_dir().join("files/matroska/h264_aac.mkv")).unwrap();
    let seg = b.windows(4).position(|w| w == [0x18, 0x53, 0x80, 0x67]).unwrap();
    assert_eq!(b[seg + 4], 0x01, "the corpus Segment has an 8-byte size");
    let at = b.windows(4).rposition(|w| w == id).unwrap();
    let len = b[at + 4].leading_zeros() as usize + 1;
    let mut out = b[..seg + 4].to_vec();
    out.extend_from_slice(&[0x01, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF]);
    out.extend_from_slice(&b[seg + 12..at + 4]);
    out.extend_from_slice(&[0x01, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x00]);
    out.extend_from_slice(&b[at + 4 + len..]);
    out
}

#[test]
fn a_matroska_element_sized_past_its_segment_does_not_hide_the_clusters() {
    let whole = std::fs::read(corpus_dir().join("files/matroska/h264_aac.mkv")).unwrap();
    let (n, end, _) = walk(&whole, "mkv");
    assert_eq!((n, end), (145, None));
    for (name, id) in [("Tags", [0x12, 0x54, 0xC3, 0x67]), ("Tracks", [0x16, 0x54, 0xAE, 0x6B])] {
        let b = mkv_with_huge(id);
        let (got, end, codes) = walk(&b, "mkv");
        assert_eq!((got, end), (n, None), "{name}");
        assert!(codes.contains(&"mkv.element-exceeds-segment"), "{name}: {codes:?}");
    }
}

#[test]
fn caf_packets_larger_than_the_limit_or_the_data_are_errors() {
    let b = std::fs::read(corpus_dir().join("files/caf/pcm_s16le.caf")).unwrap();
    let desc = b.windows(4).position(|w| w == b"desc").unwrap() + 12;
    let (n, end, _) = walk(&b, "caf");
    assert!(n > 0 && end.is_none());
    for (bpp, want) in [
        (0x8000_0000u32, ErrorKind::LimitExceeded),
        (0x10_0000, ErrorKind::Malformed),
    ] {
        let mut m = b.clone();
        m[desc + 16..desc + 20].copy_from_slice(&bpp.to_be_bytes());
        let (got, end, _) = walk(&m, "caf");
        assert_eq!((got, end), (0, Some(want)), "mBytesPerPacket {bpp}");
    }
}
