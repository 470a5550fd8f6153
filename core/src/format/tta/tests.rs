//! TTA unit tests: files built in code (frames from the seek table, the
//! short last frame, a cut frame, bad headers, seeking).
#![allow(clippy::unwrap_used, clippy::indexing_slicing, clippy::panic)]

extern crate std;

use std::vec;
use std::vec::Vec;

use super::*;
use crate::error::ErrorKind;
use crate::format::traits::{Context, FormatDemuxer};
use crate::source::SliceSource;

/// A TTA1 file at 245 Hz (frames of 256 samples) with `samples` samples
/// and frames of the given sizes (filled with their index).
fn file(rate: u32, samples: u32, sizes: &[u32]) -> Vec<u8> {
    let mut v = b"TTA1".to_vec();
    for x in [1u16, 2, 16] {
        v.extend_from_slice(&x.to_le_bytes());
    }
    v.extend_from_slice(&rate.to_le_bytes());
    v.extend_from_slice(&samples.to_le_bytes());
    v.extend_from_slice(&[0; 4]);
    for s in sizes {
        v.extend_from_slice(&s.to_le_bytes());
    }
    v.extend_from_slice(&[0; 4]);
    for (i, &s) in sizes.iter().enumerate() {
        v.extend(std::iter::repeat_n(i as u8, s as usize));
    }
    v
}

/// A packet: pos, size, pts, duration, truncated.
type Pkt = (u64, usize, i64, u64, bool);

fn packets(b: &[u8]) -> (Vec<Pkt>, Option<ErrorKind>) {
    let mut src = SliceSource::new(b);
    let mut ctx = Context::default();
    let mut d = TtaDemuxer::open(&mut src, &mut ctx).unwrap();
    let mut out = Vec::new();
    loop {
        match d.next_packet(&mut src, &mut ctx) {
            Ok(Some(p)) => out.push((
                p.pos.unwrap(),
                p.data.len(),
                p.pts.unwrap(),
                p.duration.unwrap(),
                p.flags.truncated,
            )),
            Ok(None) => return (out, None),
            Err(e) => return (out, Some(e.kind())),
        }
    }
}

#[test]
fn frames_are_the_seek_table_entries() {
    // 245 Hz: 256 samples a frame; 600 samples = 256 + 256 + 88.
    let b = file(245, 600, &[10, 20, 5]);
    let first = 22 + 3 * 4 + 4;
    let (p, e) = packets(&b);
    assert_eq!(e, None);
    assert_eq!(
        p,
        vec![
            (first, 10, 0, 256, false),
            (first + 10, 20, 256, 256, false),
            (first + 30, 5, 512, 88, false)
        ]
    );
}

#[test]
fn a_cut_frame_is_given_short_then_an_error() {
    let mut b = file(245, 600, &[10, 20, 5]);
    b.truncate(b.len() - 22);
    let (p, e) = packets(&b);
    assert_eq!(p.len(), 2);
    assert!(p[1].4);
    assert_eq!(p[1].1, 3);
    assert_eq!(e, Some(ErrorKind::Truncated));
}

#[test]
fn bad_headers_are_errors() {
    let open = |b: &[u8]| TtaDemuxer::open(&mut SliceSource::new(b), &mut Context::default()).map(|_| ());
    assert_eq!(open(&file(0, 600, &[1])).unwrap_err().kind(), ErrorKind::Malformed);
    // A seek table longer than the file: 2^32-1 samples at 245 Hz.
    assert_eq!(
        open(&file(245, u32::MAX, &[1])).unwrap_err().kind(),
        ErrorKind::Truncated
    );
    let mut b = file(245, 600, &[10, 20, 5]);
    b[4] = 2;
    assert_eq!(open(&b).unwrap_err().kind(), ErrorKind::Unsupported);
    let b = file(245, 600, &[10, 0, 5]);
    assert_eq!(packets(&b).1, Some(ErrorKind::Malformed));
}

#[test]
fn seek_sums_the_table() {
    let b = file(245, 600, &[10, 20, 5]);
    let mut src = SliceSource::new(&b[..]);
    let mut ctx = Context::default();
    let mut d = TtaDemuxer::open(&mut src, &mut ctx).unwrap();
    d.seek(&mut src, &mut ctx, 0, 520).unwrap();
    let p = d.next_packet(&mut src, &mut ctx).unwrap().unwrap();
    assert_eq!((p.pos, p.pts, p.data), (Some(38 + 30), Some(512), &[2u8; 5][..]));
}
