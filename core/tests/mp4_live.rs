//! Fragmented MP4 read live: after the `moov`, the fragment walk follows
//! the input's length as the source states it at each step ([`Growing`],
//! as mediaslice-std's live source: a snapshot while the demuxer opens,
//! then "far away" until the data is read to its end). The input ending
//! between two top-level boxes is the clean end, also after a box the walk
//! skips unread (the trailing `mfra` of ffmpeg's and our own fragmented
//! output: the source cannot tell its end before the next header is read
//! there); an input cut inside a `moof` or a sample stays a truncation.
#![cfg(feature = "mp4")]
#![allow(clippy::indexing_slicing, clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use crate::common;

use common::growing::{drain, first_error, whole, Growing};
use mediaslice::{Demuxer, FormatKind, Source};
use std::path::Path;

fn corpus(name: &str) -> Vec<u8> {
    std::fs::read(
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../corpus/files/mp4")
            .join(name),
    )
    .unwrap()
}

/// The top-level boxes of `data`: (type, offset, size).
fn top_level(data: &[u8]) -> Vec<([u8; 4], usize, usize)> {
    let mut out = Vec::new();
    let mut at = 0;
    while at + 8 <= data.len() {
        let size = u32::from_be_bytes(data[at..at + 4].try_into().unwrap()) as usize;
        out.push((data[at + 4..at + 8].try_into().unwrap(), at, size));
        at += size.max(8);
    }
    out
}

/// `data` opened live with its first `snapshot` bytes seen at open.
fn open_live<'a>(data: &'a [u8], scratch: &'a mut [u8], snapshot: u64) -> Demuxer<Growing<'a>> {
    common::growing::open_live(data, scratch, FormatKind::Mp4, snapshot)
}

#[test]
fn fragments_past_the_snapshot_are_read_to_a_clean_end() {
    let data = corpus("h264_aac_fragmented.mp4");
    let boxes = top_level(&data);
    let kinds: Vec<&[u8; 4]> = boxes.iter().map(|b| &b.0).collect();
    assert_eq!(kinds[..3], [b"ftyp", b"moov", b"moof"]);
    assert_eq!(*kinds.last().unwrap(), b"mfra", "the file ends with an mfra");
    let want = whole(&data);
    assert!(want.len() > 10, "{} packets", want.len());
    let moov_end = (boxes[1].1 + boxes[1].2) as u64;
    // Snapshots: up to the moov's end (no moof seen at open), into the
    // first moof, into the first mdat.
    for snapshot in [moov_end, moov_end + 20, boxes[3].1 as u64 + 100] {
        assert!(
            data.len() as u64 > snapshot * 4,
            "most of the input lies past the snapshot"
        );
        let mut scratch = vec![0u8; data.len() + 4096];
        let mut d = open_live(&data, &mut scratch, snapshot);
        let got = drain(&mut d).unwrap_or_else(|e| panic!("snapshot {snapshot}: {e}"));
        assert_eq!(got, want, "snapshot {snapshot}");
        assert_eq!(d.source().len(), data.len() as u64);
        assert!(
            d.diagnostics().iter().all(|(x, _)| !x.code.starts_with("mp4.")),
            "snapshot {snapshot}: {:?}",
            d.diagnostics().iter().map(|(x, _)| x.code).collect::<Vec<_>>()
        );
    }
}

#[test]
fn a_live_input_cut_inside_a_fragment_is_still_a_truncation() {
    let data = corpus("h264_aac_fragmented.mp4");
    let boxes = top_level(&data);
    let moofs: Vec<_> = boxes.iter().filter(|b| &b.0 == b"moof").collect();
    assert!(moofs.len() >= 3);
    // Inside the third moof, and inside the mdat after the second.
    let (moof, mdat) = (moofs[2].1 + 30, moofs[1].1 + moofs[1].2 + 200);
    for cut in [moof, mdat] {
        let part = &data[..cut];
        let mut scratch = vec![0u8; data.len() + 4096];
        let mut d = open_live(part, &mut scratch, boxes[1].1 as u64 + boxes[1].2 as u64);
        let (n, err) = first_error(&mut d, &format!("cut at {cut}"));
        assert!(n > 0 && err.is_truncation(), "cut at {cut}: {err} after {n} packets");
    }
}

#[test]
fn a_live_input_that_ends_after_a_whole_fragment_ends_cleanly() {
    // The input stops right after an mdat (a recorder's output mid-run):
    // every packet before it, no error.
    let data = corpus("h264_aac_fragmented.mp4");
    let boxes = top_level(&data);
    let end = boxes
        .iter()
        .filter(|b| &b.0 == b"mdat")
        .nth(1)
        .map(|b| b.1 + b.2)
        .unwrap();
    let part = &data[..end];
    let want = whole(part);
    let mut scratch = vec![0u8; data.len() + 4096];
    let got = drain(&mut open_live(
        part,
        &mut scratch,
        boxes[1].1 as u64 + boxes[1].2 as u64,
    ))
    .unwrap();
    assert!(!got.is_empty() && got.len() < whole(&data).len());
    assert_eq!(got, want);
}
