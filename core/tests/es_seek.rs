//! Seeking in elementary streams: after `seek(track, ts)` the next packet of
//! an audio track is the one holding `ts` (exact), and of a video track a
//! keyframe at or before the frame holding `ts`. Checked on every sample of
//! the elementary-stream families, at a quarter, half and three quarters
//! of each file, against the packets of a plain pass. Video targets are
//! frame numbers times the frame duration (decoding order), since raw
//! video streams carry no presentation timestamps.

#![allow(clippy::indexing_slicing, clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use crate::common;

use mediaslice::{Demuxer, SliceSource, TrackKind};
use std::path::Path;

#[derive(Debug, Clone, Copy, PartialEq)]
struct P {
    track: usize,
    pos: Option<u64>,
    len: usize,
    key: bool,
    pts: Option<i64>,
    dur: Option<u64>,
}

#[test]
fn seeking_lands_where_it_should() {
    let m = Path::new(env!("CARGO_MANIFEST_DIR"));
    let root = common::samples_root();
    let mut checked = 0;
    let folders = [
        "mp3",
        "adts",
        "ac3",
        "amr",
        "h264",
        "h265",
        "ivf",
        "dv",
        "av1obu",
        "mpegvideo",
        "m4v",
    ];
    for dir in folders
        .iter()
        .flat_map(|f| [root.join(f), m.join("../corpus/files").join(f)])
    {
        let Ok(rd) = std::fs::read_dir(&dir) else {
            continue;
        };
        for f in rd.filter_map(|e| e.ok()) {
            let data = std::fs::read(f.path()).unwrap();
            let mut scratch = vec![0u8; 1 << 20];
            let Ok(mut d) = Demuxer::open(SliceSource::with_scratch(&data, &mut scratch), None) else {
                continue;
            };
            let kind = d.tracks()[0].kind;
            let mut all = Vec::new();
            while let Ok(Some(p)) = d.next_packet() {
                all.push(P {
                    track: p.track,
                    pos: p.pos,
                    len: p.data.len(),
                    key: p.flags.keyframe,
                    pts: p.pts,
                    dur: p.duration,
                });
            }
            let own: Vec<(usize, P)> = all.iter().copied().enumerate().filter(|(_, p)| p.track == 0).collect();
            if own.len() < 4 {
                continue;
            }
            // Presentation time of each packet of track 0: its pts, or its
            // index times its duration for streams without timestamps.
            let time = |k: usize, p: &P| {
                let by_index = k as i64 * p.dur.unwrap_or(1) as i64;
                if kind == TrackKind::Audio || p.dur == Some(1) {
                    p.pts.unwrap_or(by_index)
                } else {
                    by_index
                }
            };
            for q in [1, 2, 3] {
                let k = own.len() * q / 4;
                let target = time(k, &own[k].1);
                d.seek(0, target).unwrap();
                let got = loop {
                    let p = d.next_packet().unwrap().unwrap();
                    if p.track == 0 {
                        break (p.pos, p.data.len());
                    }
                };
                let want = match kind {
                    TrackKind::Audio => Some(k),
                    _ => (0..=k).rev().find(|&i| own[i].1.key),
                };
                let Some(w) = want else { continue };
                assert_eq!(
                    got,
                    (own[w].1.pos, own[w].1.len),
                    "{}: seek to {target} (packet {k}) should land on packet {w}",
                    f.path().display()
                );
                checked += 1;
            }
        }
    }
    assert!(checked > 0 || !root.exists());
}
