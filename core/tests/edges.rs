//! Damage and edges that a wider set of files shows (issue 21): inputs made
//! here from the corpus or from bytes, each checked against what ffprobe 5.1
//! gives for the same bytes (stated per test, with where we differ and why).

#![allow(clippy::indexing_slicing, clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use crate::common;

use mediaslice::{Demuxer, SliceSource};

/// Every packet of `data` as (track, pos, len, pts, truncated), and the
/// error that ended the read, if any.
type Pkt = (usize, Option<u64>, usize, Option<i64>, bool);

fn packets(data: &[u8]) -> (Vec<Pkt>, Option<mediaslice::Error>) {
    let mut scratch = vec![0u8; 1 << 20];
    let mut d = Demuxer::open(SliceSource::with_scratch(data, &mut scratch), None).unwrap();
    let mut out = Vec::new();
    loop {
        match d.next_packet() {
            Ok(Some(p)) => out.push((p.track, p.pos, p.data.len(), p.pts, p.flags.truncated)),
            Ok(None) => return (out, None),
            Err(e) => return (out, Some(e)),
        }
    }
}

/// A DV file that ends inside a frame. ffprobe gives that frame as a whole
/// frame-size video packet at its position (ffmpeg's DV reader hands its
/// decoder the frame buffer, stale or zero past the cut) and an audio packet
/// from it; we give the video packet as far as the input goes, flagged
/// truncated, then report the cut, and no audio for that frame (its audio
/// blocks past the cut do not exist). Before: an error and no packet.
#[test]
fn dv_cut_inside_a_frame_gives_the_frame_flagged() {
    let whole = std::fs::read(common::corpus_dir().join("files/dv/pal.dv")).unwrap();
    let (all, err) = packets(&whole);
    assert!(err.is_none());
    const FRAME: usize = 144_000;
    for frames in [0usize, 3] {
        let cut = frames * FRAME + 100_000;
        let (got, err) = packets(&whole[..cut]);
        let kept: Vec<Pkt> = all
            .iter()
            .filter(|p| p.1.unwrap() < (frames * FRAME) as u64)
            .cloned()
            .collect();
        assert_eq!(
            got[..kept.len()],
            kept[..],
            "cut at {cut}: whole frames as in the whole file"
        );
        assert_eq!(
            got[kept.len()..],
            [(0, Some((frames * FRAME) as u64), 100_000, Some(frames as i64), true)],
            "cut at {cut}: the cut frame's video packet, flagged"
        );
        assert!(err.unwrap().is_truncation(), "cut at {cut}: the cut is reported");
    }
}

/// An IVF file that ends inside a frame, its only one or a later one:
/// ffprobe gives the frame's bytes up to the cut (a short packet); so do
/// we, flagged truncated, then report the cut. Before: an error and no
/// packet for it.
#[test]
fn ivf_cut_inside_a_frame_gives_the_frame_flagged() {
    let whole = std::fs::read(common::corpus_dir().join("files/ivf/vp9.ivf")).unwrap();
    let (all, err) = packets(&whole);
    assert!(err.is_none() && all.len() > 3);
    for k in [0usize, 3] {
        let (_, pos, len, pts, _) = all[k];
        let pos = pos.unwrap() as usize;
        let cut = pos + len / 2;
        let (got, err) = packets(&whole[..cut]);
        assert_eq!(got[..k], all[..k], "cut at {cut}: whole frames as in the whole file");
        assert_eq!(got[k..], [(0, Some(pos as u64), len / 2, pts, true)], "cut at {cut}");
        assert!(err.unwrap().is_truncation(), "cut at {cut}: the cut is reported");
    }
}
