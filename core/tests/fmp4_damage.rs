//! A damaged `moof` in a fragmented MP4 (ISO/IEC 14496-12 §8.8.4): the
//! fragment's samples that can no longer be described are lost, and the
//! reader says so with `mp4.moof-damaged` instead of skipping them
//! silently; every other fragment still reads, packet for packet. Built
//! from the corpus file `h264_aac_fragmented.mp4` (ffmpeg's
//! `frag_keyframe`, one video and one audio `traf` per `moof`).
#![allow(clippy::indexing_slicing, clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use crate::common;

use common::*;
use mediaslice::{Demuxer, SliceSource};

/// One packet: track, position, size, decode time.
type Pkt = (usize, u64, usize, Option<i64>);

/// Every packet and the diagnostic codes; the read must end without error.
fn read(b: &[u8]) -> (Vec<Pkt>, Vec<&'static str>) {
    let mut d = Demuxer::open(SliceSource::new(b), Some("mp4")).unwrap();
    let mut out = Vec::new();
    while let Some(p) = d.next_packet().unwrap() {
        out.push((p.track, p.pos.unwrap(), p.data.len(), p.dts));
    }
    let codes = d.diagnostics().iter().map(|(x, _)| x.code).collect();
    (out, codes)
}

fn be32(b: &[u8], at: usize) -> usize {
    u32::from_be_bytes(b[at..at + 4].try_into().unwrap()) as usize
}

/// The top-level boxes: (start, type, size).
fn top_level(b: &[u8]) -> Vec<(usize, [u8; 4], usize)> {
    let mut out = Vec::new();
    let mut at = 0;
    while at + 8 <= b.len() {
        let size = be32(b, at);
        out.push((at, b[at + 4..at + 8].try_into().unwrap(), size));
        at += size;
    }
    out
}

/// The children of the box at `at`: (start, type).
fn children(b: &[u8], at: usize) -> Vec<(usize, [u8; 4])> {
    let end = at + be32(b, at);
    let mut out = Vec::new();
    let mut c = at + 8;
    while c + 8 <= end {
        out.push((c, b[c + 4..c + 8].try_into().unwrap()));
        c += be32(b, c);
    }
    out
}

struct Fixture {
    file: Vec<u8>,
    whole: Vec<Pkt>,
    /// The second `moof`, and the `mdat` after it (start, end).
    moof: usize,
    mdat: (usize, usize),
}

fn fixture() -> Fixture {
    let file = std::fs::read(corpus_dir().join("files/mp4/h264_aac_fragmented.mp4")).unwrap();
    let (whole, codes) = read(&file);
    assert!(codes.is_empty(), "{codes:?}");
    let boxes = top_level(&file);
    let i = boxes
        .iter()
        .enumerate()
        .filter(|(_, b)| &b.1 == b"moof")
        .nth(1)
        .unwrap()
        .0;
    let (moof, _, _) = boxes[i];
    let (mdat, kind, size) = boxes[i + 1];
    assert_eq!(&kind, b"mdat");
    Fixture {
        file,
        whole,
        moof,
        mdat: (mdat, mdat + size),
    }
}

impl Fixture {
    /// The packets of the whole file but those stored in the damaged
    /// fragment's `mdat`.
    fn without_the_fragment(&self) -> Vec<Pkt> {
        let (a, b) = self.mdat;
        let kept: Vec<Pkt> = self
            .whole
            .iter()
            .copied()
            .filter(|p| !(a as u64..b as u64).contains(&p.1))
            .collect();
        assert!(kept.len() < self.whole.len() && !kept.is_empty());
        kept
    }

    /// Reads `damaged`: one `mp4.moof-damaged`, and the packets `want`.
    fn reads_as(&self, damaged: &[u8], want: &[Pkt]) {
        let (got, codes) = read(damaged);
        assert_eq!(codes, ["mp4.moof-damaged"]);
        assert_eq!(got, want);
    }

    fn trafs(&self) -> Vec<usize> {
        children(&self.file, self.moof)
            .into_iter()
            .filter(|c| &c.1 == b"traf")
            .map(|c| c.0)
            .collect()
    }
}

#[test]
fn a_moof_whose_trafs_lost_their_type_is_reported() {
    let f = fixture();
    let mut b = f.file.clone();
    let trafs = f.trafs();
    assert_eq!(trafs.len(), 2);
    for t in trafs {
        b[t + 4..t + 8].copy_from_slice(b"xxxx");
    }
    f.reads_as(&b, &f.without_the_fragment());
}

#[test]
fn a_moof_child_of_size_zero_is_reported() {
    // `mfhd` with size 0 ("to the end", legal for top-level boxes only)
    // swallows the `traf`s after it.
    let f = fixture();
    let mut b = f.file.clone();
    let (mfhd, kind) = children(&b, f.moof)[0];
    assert_eq!(&kind, b"mfhd");
    b[mfhd..mfhd + 4].copy_from_slice(&0u32.to_be_bytes());
    f.reads_as(&b, &f.without_the_fragment());
}

#[test]
fn a_traf_child_past_its_traf_is_reported() {
    // The first `traf`'s `tfhd` claims 1000 bytes: cut at the `traf`'s
    // end, so that `traf`'s `trun` is never read; the other `traf` still
    // gives its samples.
    let f = fixture();
    let mut b = f.file.clone();
    let traf = f.trafs()[0];
    let (tfhd, kind) = children(&b, traf)[0];
    assert_eq!(&kind, b"tfhd");
    b[tfhd..tfhd + 4].copy_from_slice(&1000u32.to_be_bytes());
    // The video track's samples of this fragment are gone, the audio's are
    // read, and so is every other fragment.
    let (a, e) = f.mdat;
    let in_fragment = |p: &Pkt| (a as u64..e as u64).contains(&p.1);
    let lost_track = f.whole.iter().find(|p| in_fragment(p)).unwrap().0;
    let want: Vec<Pkt> = f
        .whole
        .iter()
        .copied()
        .filter(|p| !(in_fragment(p) && p.0 == lost_track))
        .collect();
    assert!(want.len() < f.whole.len());
    f.reads_as(&b, &want);
}

#[test]
fn the_intact_file_reports_nothing() {
    let f = fixture();
    assert!(f.whole.len() > 100);
    assert_eq!(read(&f.file).1, Vec::<&str>::new());
}
