//! Helpers for the MP4, fragmented and hybrid MP4 tests: compare what our
//! demuxer reads back, walk top-level boxes, read a cut file.
#![allow(
    dead_code,
    clippy::indexing_slicing,
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic
)]

use super::mux::*;
use mediaslice::{Demuxer, SliceSource, TrackKind};

/// Compares what our demuxer reads from `out` with `want`, per track.
pub fn same_packets(label: &str, out: &[u8], want: &[Vec<Seen>]) {
    let (tracks, got) = read_back(out);
    assert_eq!(got.len(), want.len(), "{label}: tracks");
    for (t, (g, w)) in got.iter().zip(want).enumerate() {
        // Our demuxer starts an edit at the last sample at the edit's media
        // time (seek.rs `edit_start`), so of two first samples with one
        // decode time it drops the first (ffprobe shows both).
        let w = if g.len() + 1 == w.len() && w.len() > 1 && w[0].dts == w[1].dts {
            println!("note {label} track {t}: first of two samples at one time dropped by our demuxer");
            &w[1..]
        } else {
            &w[..]
        };
        assert_eq!(g.len(), w.len(), "{label} track {t}: packets");
        for (k, (g, w)) in g.iter().zip(w).enumerate() {
            assert_eq!(
                (g.crc, g.size),
                (w.crc, w.size),
                "{label} track {t} packet {k}: payload"
            );
            let audio = tracks[t].kind == TrackKind::Audio;
            assert_eq!(g.key, w.key || audio && g.key, "{label} track {t} packet {k}: key");
            if w.dts.is_some() {
                assert_eq!(g.dts, w.dts, "{label} track {t} packet {k}: dts");
            }
            if w.pts.is_some() {
                assert_eq!(g.pts, w.pts, "{label} track {t} packet {k}: pts");
            }
        }
    }
}

/// Top-level boxes of type `kind`.
pub fn count_boxes(b: &[u8], kind: &[u8; 4]) -> u32 {
    top_boxes(b).iter().filter(|x| &x.1 == kind).count() as u32
}

/// Top-level boxes: (start, type, size).
pub fn top_boxes(b: &[u8]) -> Vec<(usize, [u8; 4], usize)> {
    let mut v = Vec::new();
    let mut at = 0;
    while at + 8 <= b.len() {
        let size = u32::from_be_bytes(b[at..at + 4].try_into().unwrap()) as usize;
        let kind: [u8; 4] = b[at + 4..at + 8].try_into().unwrap();
        let size = match size {
            0 => b.len() - at,
            // A 64-bit size follows the type (ISO/IEC 14496-12 4.2).
            1 if at + 16 <= b.len() => u64::from_be_bytes(b[at + 8..at + 16].try_into().unwrap()) as usize,
            _ => size,
        };
        v.push((at, kind, size));
        if size < 8 {
            break;
        }
        at += size;
    }
    v
}

/// Every packet of `bytes` per track, and how reading ended.
pub fn read_cut(bytes: &[u8]) -> (Vec<Vec<Seen>>, Option<mediaslice::Error>) {
    let mut d = match Demuxer::open(SliceSource::new(bytes), Some("mp4")) {
        Ok(d) => d,
        Err(e) => return (Vec::new(), Some(e)),
    };
    let tracks = d.tracks().to_vec();
    let mut got = vec![Vec::new(); tracks.len()];
    loop {
        match d.next_packet() {
            Ok(Some(p)) => {
                if p.flags.truncated {
                    continue;
                }
                let tb = tracks[p.track].time_base;
                got[p.track].push(Seen {
                    crc: mediaslice::crc::crc32(p.data),
                    size: p.data.len(),
                    pts: secs(p.pts, tb),
                    dts: secs(p.dts, tb),
                    key: p.flags.keyframe,
                });
            }
            Ok(None) => return (got, None),
            Err(e) => return (got, Some(e)),
        }
    }
}

/// Where the `n`th `mdat` ends (the init segment's end for 0).
pub fn fragment_end(boxes: &[(usize, [u8; 4], usize)], n: usize) -> usize {
    let mut seen = 0;
    let mut end = boxes.iter().find(|b| &b.1 == b"moov").map_or(0, |b| b.0 + b.2);
    for b in boxes {
        if seen == n {
            break;
        }
        if &b.1 == b"mdat" {
            seen += 1;
            end = b.0 + b.2;
        }
    }
    end
}
