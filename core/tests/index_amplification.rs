//! Index amplification: an index (MP4 `stco`, AVI `idx1`) that names the
//! same bytes again and again must not make work or output beyond a bound
//! of the input's size (docs/fuzzing.md).

#![allow(clippy::indexing_slicing, clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use crate::common;

use common::build::*;
use mediaslice::{Demuxer, Error, ErrorKind, FormatKind, Limits, SliceSource};

/// Reads every packet of `bytes` as `kind`; returns the payload bytes
/// delivered, the error that ended the walk, and whether `packets.overlap`
/// was reported.
fn delivered(bytes: &[u8], kind: FormatKind) -> (u64, Option<Error>, bool) {
    let mut d = Demuxer::open_as(SliceSource::new(bytes), kind, Limits::default()).unwrap();
    let mut total = 0u64;
    let end = loop {
        match d.next_packet() {
            Ok(Some(p)) => total += p.data.len() as u64,
            Ok(None) => break None,
            Err(e) => break Some(e),
        }
    };
    let overlap = d.diagnostics().contains("packets.overlap");
    (total, end, overlap)
}

/// The bound the driver enforces for an input of `len` bytes.
fn delivery_bound(len: usize) -> u64 {
    let l = Limits::default();
    len as u64 * u64::from(l.max_delivery_ratio) + u64::from(l.max_packet)
}

/// An MP4 whose `stco` names one 64 KiB sample 200 000 times (about 13 GB
/// of payload from a file of under 1 MB): stopped at the bound.
#[test]
fn mp4_stco_naming_one_sample_again_and_again_is_bounded() {
    const SAMPLE: u32 = 64 << 10;
    const COUNT: u32 = 200_000;
    let tables = |off: u32| {
        let mut stco = be32s(&[COUNT]);
        stco.extend(std::iter::repeat_n(off.to_be_bytes(), COUNT as usize).flatten());
        vec![
            full_box(b"stts", 0, &be32s(&[1, COUNT, 1])),
            full_box(b"stsc", 0, &be32s(&[1, 1, 1, 1])),
            full_box(b"stsz", 0, &be32s(&[SAMPLE, COUNT])),
            full_box(b"stco", 0, &stco),
        ]
    };
    let head = [ftyp(), movie(b"vide", avc1(), &tables(0), None)].concat();
    let off = head.len() as u32 + 8;
    let file = [
        ftyp(),
        movie(b"vide", avc1(), &tables(off), None),
        mdat(SAMPLE as usize),
    ]
    .concat();
    let (total, end, overlap) = delivered(&file, FormatKind::Mp4);
    let e = end.expect("the walk must stop with an error");
    assert_eq!(e.kind(), ErrorKind::LimitExceeded, "{e}");
    assert!(total <= delivery_bound(file.len()), "{total} bytes delivered");
    assert!(total > u64::from(SAMPLE) * 100, "the walk stopped early: {total}");
    assert!(overlap, "packets.overlap reported");
    println!("mp4: {} byte input, {total} bytes delivered, then {e}", file.len());
}

/// A minimal AVI with one video stream, one `00dc` chunk of `chunk` bytes
/// and an `idx1` of `entries` entries that all name that chunk.
fn avi_one_chunk_indexed(chunk: usize, entries: usize) -> Vec<u8> {
    fn ck(id: &[u8; 4], body: &[u8]) -> Vec<u8> {
        let mut v = id.to_vec();
        v.extend_from_slice(&(body.len() as u32).to_le_bytes());
        v.extend_from_slice(body);
        if body.len() % 2 == 1 {
            v.push(0);
        }
        v
    }
    fn list(kind: &[u8; 4], body: &[u8]) -> Vec<u8> {
        ck(b"LIST", &[kind.as_slice(), body].concat())
    }
    let le = |v: &[u32]| v.iter().flat_map(|x| x.to_le_bytes()).collect::<Vec<u8>>();
    // avih: usec/frame, max bytes/s, padding, flags (HASINDEX), frames,
    // initial frames, streams, buffer size, width, height, reserved x4.
    let avih = ck(
        b"avih",
        &le(&[40_000, 0, 0, 0x10, entries as u32, 0, 1, 0, 64, 48, 0, 0, 0, 0]),
    );
    // strh: vids, handler, flags, priority+language, initial frames, scale,
    // rate, start, length, buffer, quality, sample size, frame rect.
    let strh = ck(
        b"strh",
        &[
            b"vidsH264".to_vec(),
            le(&[0, 0, 0, 1, 25, 0, entries as u32, 0, u32::MAX, 0, 0, 0]),
        ]
        .concat(),
    );
    let strf = ck(
        b"strf",
        &[
            le(&[40, 64, 48]),
            vec![1, 0, 24, 0],
            b"H264".to_vec(),
            le(&[0, 0, 0, 0, 0]),
        ]
        .concat(),
    );
    let hdrl = list(b"hdrl", &[avih, list(b"strl", &[strh, strf].concat())].concat());
    let movi = list(b"movi", &ck(b"00dc", &vec![0x5A; chunk]));
    // idx1 offsets are relative to the `movi` fourcc: the chunk is at 4.
    let mut idx = Vec::with_capacity(entries * 16);
    for _ in 0..entries {
        idx.extend_from_slice(b"00dc");
        idx.extend_from_slice(&le(&[0x10, 4, chunk as u32]));
    }
    let body = [b"AVI ".to_vec(), hdrl, movi, ck(b"idx1", &idx)].concat();
    ck(b"RIFF", &body)
}

/// An AVI whose `idx1` names one 64 KiB chunk 100 000 times: whatever the
/// reader makes of such an index, one pass delivers no more than the bound
/// (today the AVI reader delivers the chunk once; the driver's bound is the
/// backstop for every format).
#[test]
fn avi_idx1_naming_one_chunk_again_and_again_is_bounded() {
    let file = avi_one_chunk_indexed(64 << 10, 100_000);
    let (total, end, _) = delivered(&file, FormatKind::Avi);
    assert!(total <= delivery_bound(file.len()), "{total} bytes delivered");
    assert!(end.is_none_or(|e| e.kind() == ErrorKind::LimitExceeded), "{end:?}");
    println!("avi: {} byte input, {total} bytes delivered, end {end:?}", file.len());
}

/// The same AVI indexing its chunk once reads normally: the bound and the
/// overlap check leave an honest file alone.
#[test]
fn avi_indexing_its_chunk_once_reads_normally() {
    let file = avi_one_chunk_indexed(64 << 10, 1);
    let (total, end, overlap) = delivered(&file, FormatKind::Avi);
    assert!(end.is_none(), "{end:?}");
    assert_eq!(total, 64 << 10);
    assert!(!overlap);
}
