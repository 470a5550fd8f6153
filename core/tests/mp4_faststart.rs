//! MP4 with `moov` ahead of `mdat` (`Muxer::reserve_index`, sized by a
//! first pass into a `NullSink` with `Muxer::index_size_ahead`): for every
//! corpus file the MP4 muxer carries, the output has the boxes in the order
//! `ftyp moov free mdat`, the same length as the output with `moov` at the
//! end, and our demuxer reads the same packets from both; a reserve one
//! byte short (or one that leaves no room for a `free` box) fails `finish`
//! before anything is written into it, a larger one leaves a `free` box.
#![allow(clippy::indexing_slicing, clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use crate::common;

use common::*;
use mediaslice::crc::crc32;
use mediaslice::mux::copy::{add_tracks, copy_packets};
use mediaslice::{Demuxer, ErrorKind, MuxFormat, Muxer, NullSink, SliceSink, SliceSource};

/// Remuxes `input` to MP4 into `out`, with `reserve` bytes for `moov`
/// ahead of the media (0: `moov` at the end); the bytes written.
fn remux_into(input: &[u8], ext: Option<&str>, out: &mut [u8], reserve: u64) -> mediaslice::Result<usize> {
    let mut scratch = scratch_for(input.len());
    let mut d = Demuxer::open(SliceSource::with_scratch(input, &mut scratch), ext)?;
    let mut m = Muxer::with_scratch(SliceSink::new(out), MuxFormat::Mp4, vec![0u8; 1 << 20])?;
    if reserve > 0 {
        m.reserve_index(reserve)?;
    }
    let map = add_tracks(&mut d, &mut m)?;
    copy_packets(&mut d, &mut m, &map)?;
    Ok(m.finish()?.written().len())
}

/// The first pass: the size of `moov` ahead of the media, or `None` when
/// MP4 carries no track of `input`.
fn size_ahead(input: &[u8], ext: Option<&str>) -> Option<u64> {
    let mut scratch = scratch_for(input.len());
    let mut d = Demuxer::open(SliceSource::with_scratch(input, &mut scratch), ext).ok()?;
    let mut m = Muxer::with_scratch(NullSink::new(), MuxFormat::Mp4, vec![0u8; 1 << 20]).unwrap();
    let map = add_tracks(&mut d, &mut m).ok()?;
    if m.tracks().is_empty() {
        return None;
    }
    copy_packets(&mut d, &mut m, &map).ok()?;
    m.index_size_ahead().unwrap()
}

/// Top-level box types in order.
fn top_boxes(b: &[u8]) -> Vec<[u8; 4]> {
    let mut at = 0usize;
    let mut out = Vec::new();
    while at + 8 <= b.len() {
        let size = u32::from_be_bytes(b[at..at + 4].try_into().unwrap()) as usize;
        out.push(b[at + 4..at + 8].try_into().unwrap());
        if size < 8 {
            break;
        }
        at += size;
    }
    out
}

/// (track, size, crc, pts, dts, key) of a packet.
type Seen = (usize, usize, u32, Option<i64>, Option<i64>, bool);

/// Every packet of the MP4 `b`.
fn packets(b: &[u8]) -> Vec<Seen> {
    let mut d = Demuxer::open(SliceSource::new(b), Some("mp4")).unwrap();
    let mut v = Vec::new();
    while let Some(p) = d.next_packet().unwrap() {
        v.push((p.track, p.data.len(), crc32(p.data), p.pts, p.dts, p.flags.keyframe));
    }
    v
}

#[test]
fn moov_ahead_gives_the_same_packets_in_a_file_of_the_same_length() {
    let mut checked = 0;
    for &fam in FAMILIES {
        for f in family_files(fam).into_iter().filter(|f| f.origin == Origin::Corpus) {
            let bytes = f.read();
            let ext = f.ext();
            let Some(size) = size_ahead(&bytes, ext.as_deref()) else {
                continue;
            };
            let mut plain = vec![0u8; bytes.len() * 2 + (1 << 20)];
            let Ok(n) = remux_into(&bytes, ext.as_deref(), &mut plain, 0) else {
                continue;
            };
            let plain = &plain[..n];
            let mut fast = vec![0u8; bytes.len() * 2 + (1 << 20)];
            let n2 = remux_into(&bytes, ext.as_deref(), &mut fast, size).unwrap();
            let fast = &fast[..n2];
            assert_eq!(n2, n, "{}: moov moved, nothing added", f.label());
            assert_eq!(
                top_boxes(plain),
                [*b"ftyp", *b"free", *b"mdat", *b"moov"],
                "{}",
                f.label()
            );
            assert_eq!(
                top_boxes(fast),
                [*b"ftyp", *b"moov", *b"free", *b"mdat"],
                "{}",
                f.label()
            );
            assert_eq!(packets(fast), packets(plain), "{}", f.label());
            checked += 1;
        }
    }
    println!("{checked} corpus files written with moov ahead");
    assert!(checked >= 30, "{checked}");
}

#[test]
fn a_reserve_too_small_fails_and_a_larger_one_leaves_free_space() {
    let input = std::fs::read(corpus_dir().join("files/mp4/h264_aac.mp4")).unwrap();
    let size = size_ahead(&input, Some("mp4")).unwrap();
    let mut out = vec![0u8; input.len() * 2 + (1 << 20)];
    for short in [size - 1, size + 4] {
        let e = remux_into(&input, Some("mp4"), &mut out, short).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::CapacityExceeded, "reserve {short} of {size}: {e}");
    }
    let n = remux_into(&input, Some("mp4"), &mut out, size + 100).unwrap();
    let b = &out[..n];
    assert_eq!(top_boxes(b), [*b"ftyp", *b"moov", *b"free", *b"free", *b"mdat"]);
    let mut plain = vec![0u8; input.len() * 2 + (1 << 20)];
    let n0 = remux_into(&input, Some("mp4"), &mut plain, 0).unwrap();
    assert_eq!(packets(b), packets(&plain[..n0]));
    // Reserving after the header, or for a format with no index ahead.
    let mut sink_buf = [0u8; 64];
    let mut m = Muxer::new(SliceSink::new(&mut sink_buf), MuxFormat::Matroska).unwrap();
    assert_eq!(m.reserve_index(100).unwrap_err().kind(), ErrorKind::Unsupported);
}
