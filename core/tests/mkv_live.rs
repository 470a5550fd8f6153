//! Matroska read live: a Segment of unknown size (a muxer writing to a
//! pipe, RFC 8794 §6.2) is read up to the input's length as the source
//! states it at each step, not as it was when the demuxer opened.
//!
//! [`Growing`] behaves as mediaslice-std's live source does: while the
//! demuxer opens, its length is a snapshot (the first bytes); afterwards it
//! is "far away" until a read has reached or passed the end of the data,
//! and then the real length. A Segment's end fixed at open would stop at
//! the snapshot; the packets must be those of the whole input read at once.
#![cfg(feature = "mkv")]
#![allow(clippy::indexing_slicing, clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use mediaslice::crc::crc32;
use mediaslice::{Demuxer, FormatKind, IoStats, Limits, Result, SliceSource, Source};
use std::path::Path;

/// A length no input reaches (as the live source's `LIVE_LEN`).
const FAR: u64 = 1 << 62;

/// A source over `data` whose length is `snapshot` until [`Growing::live`],
/// then [`FAR`] until the data has been read to its end.
struct Growing<'a> {
    inner: SliceSource<'a>,
    snapshot: Option<u64>,
    /// A read reached the end of the data: the input has "ended".
    ended: bool,
}

impl<'a> Growing<'a> {
    fn new(data: &'a [u8], scratch: &'a mut [u8], snapshot: u64) -> Self {
        Growing {
            inner: SliceSource::with_scratch(data, scratch),
            snapshot: Some(snapshot),
            ended: false,
        }
    }

    fn live(&mut self) {
        self.snapshot = None;
    }

    fn reached(&mut self, offset: u64, len: usize) {
        if offset.saturating_add(len as u64) >= self.inner.len() {
            self.ended = true;
        }
    }
}

impl Source for Growing<'_> {
    fn len(&self) -> u64 {
        match self.snapshot {
            Some(n) => n,
            None if self.ended => self.inner.len(),
            None => FAR,
        }
    }

    fn read_at(&mut self, offset: u64, buf: &mut [u8]) -> Result<usize> {
        let want = match self.snapshot {
            Some(n) => n.saturating_sub(offset).min(buf.len() as u64) as usize,
            None => buf.len(),
        };
        self.reached(offset, want);
        self.inner.read_at(offset, &mut buf[..want])
    }

    fn bytes(&mut self, offset: u64, len: usize) -> Result<&[u8]> {
        self.reached(offset, len);
        self.inner.bytes(offset, len)
    }

    fn scratch_len(&self) -> usize {
        self.inner.scratch_len()
    }

    fn gather(&mut self, offset: u64, len: usize, at: usize) -> Result<()> {
        self.reached(offset, len);
        self.inner.gather(offset, len, at)
    }

    fn put(&mut self, at: usize, data: &[u8]) -> Result<()> {
        self.inner.put(at, data)
    }

    fn joined(&self, len: usize) -> Result<&[u8]> {
        self.inner.joined(len)
    }

    fn is_slice(&self) -> bool {
        false
    }

    fn stats(&self) -> IoStats {
        self.inner.stats()
    }
}

type Seen = (usize, usize, u32, Option<i64>, Option<i64>, mediaslice::PacketFlags);

fn drain<S: Source>(d: &mut Demuxer<S>) -> Vec<Seen> {
    let mut out = Vec::new();
    while let Some(p) = d.next_packet().unwrap() {
        out.push((p.track, p.data.len(), crc32(p.data), p.pts, p.dts, p.flags));
    }
    out
}

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

/// The packets of `data` read at once from a slice.
fn whole(data: &[u8]) -> Vec<Seen> {
    let mut scratch = vec![0u8; data.len() + 4096];
    drain(&mut Demuxer::open(SliceSource::with_scratch(data, &mut scratch), None).unwrap())
}

/// `data` opened as a live input whose snapshot holds the headers and the
/// start of the first Cluster, then read live (as package --live does,
/// with the delivery bound lifted).
fn open_live<'a>(data: &'a [u8], scratch: &'a mut [u8]) -> Demuxer<Growing<'a>> {
    let limits = Limits {
        max_delivery_ratio: u32::MAX,
        ..Limits::default()
    };
    let src = Growing::new(data, scratch, first_cluster(data) + 64);
    let mut d = Demuxer::open_as(src, FormatKind::Matroska, limits).unwrap();
    d.source_mut().live();
    d
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
        assert_eq!(drain(&mut d), want, "{name}");
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
    assert_eq!(drain(&mut open_live(&data, &mut scratch)), whole(&data));
}

#[test]
fn a_live_input_cut_inside_a_block_is_still_a_truncation() {
    // The stream stops in the middle of a SimpleBlock: an error, not a
    // clean end (only an end between elements is one).
    let data = corpus("vp8_vorbis_live.webm");
    let cut = &data[..data.len() * 2 / 3];
    let mut scratch = vec![0u8; data.len() + 4096];
    let mut d = open_live(cut, &mut scratch);
    let mut n = 0;
    let err = loop {
        match d.next_packet() {
            Ok(Some(_)) => n += 1,
            Ok(None) => panic!("a clean end after {n} packets at a cut inside an element"),
            Err(e) => break e,
        }
    };
    assert!(n > 0 && err.is_truncation(), "{err} after {n} packets");
}
