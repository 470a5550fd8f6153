//! DSF unit tests: files built in code (whole blocks, the padded last
//! block cut to the sample count, a cut file, bad headers, seeking, the
//! ID3v2 tag at the metadata pointer).
#![allow(clippy::unwrap_used, clippy::indexing_slicing, clippy::panic)]

extern crate std;

use std::vec;
use std::vec::Vec;

use super::*;
use crate::error::ErrorKind;
use crate::format::test_drain::{drain, Drained};
use crate::format::traits::{Context, FormatDemuxer};
use crate::source::SliceSource;
use crate::tags::{TagCursor, TagValue};
use crate::types::Codec;

/// A DSF file: `channels` channels of `samples` 1-bit samples in blocks of
/// `block` bytes per channel; byte `k` of channel `c`'s block `b` is
/// `16 * b + c`, padding 0xEE (so the cut shows); `tag` after the data.
fn file(channels: u32, samples: u64, block: u32, bits: u32, tag: &[u8]) -> Vec<u8> {
    let bytes = samples.div_ceil(8);
    let blocks = bytes.div_ceil(u64::from(block));
    let mut data = Vec::new();
    for b in 0..blocks {
        for c in 0..channels {
            for k in 0..u64::from(block) {
                let real = b * u64::from(block) + k < bytes;
                data.push(if real { (16 * b + u64::from(c)) as u8 } else { 0xEE });
            }
        }
    }
    let mut v = b"DSD ".to_vec();
    v.extend_from_slice(&28u64.to_le_bytes());
    let total = 92 + data.len() + tag.len();
    v.extend_from_slice(&(total as u64).to_le_bytes());
    let pointer = if tag.is_empty() { 0 } else { 92 + data.len() as u64 };
    v.extend_from_slice(&pointer.to_le_bytes());
    v.extend_from_slice(b"fmt ");
    v.extend_from_slice(&52u64.to_le_bytes());
    for x in [1u32, 0, channels, channels, 2_822_400, bits] {
        v.extend_from_slice(&x.to_le_bytes());
    }
    v.extend_from_slice(&samples.to_le_bytes());
    v.extend_from_slice(&block.to_le_bytes());
    v.extend_from_slice(&[0; 4]);
    v.extend_from_slice(b"data");
    v.extend_from_slice(&(12 + data.len() as u64).to_le_bytes());
    v.extend_from_slice(&data);
    v.extend_from_slice(tag);
    v
}

fn packets(b: &[u8]) -> (Vec<Drained>, Option<ErrorKind>) {
    drain::<DsfDemuxer>(b)
}

#[test]
fn whole_blocks_are_packets_of_all_channels() {
    // Two channels, blocks of 8 bytes, 16 bytes (128 samples) a channel.
    let b = file(2, 128, 8, 8, &[]);
    let (p, e) = packets(&b);
    assert_eq!(e, None);
    let mut first = vec![0u8; 8];
    first.extend([1u8; 8]);
    let mut second = vec![16u8; 8];
    second.extend([17u8; 8]);
    assert_eq!(p, vec![(92, first, 0, 8, false), (108, second, 8, 8, false)]);
    let mut ctx = Context::default();
    DsfDemuxer::open(&mut SliceSource::new(&b), &mut ctx).unwrap();
    let t = &ctx.tracks[0];
    assert_eq!((t.codec, t.sample_rate, t.channels), (Codec::DsdMsbfPlanar, 352_800, 2));
    assert_eq!((t.block_align, t.duration), (16, Some(16)));
}

#[test]
fn the_padded_last_block_is_cut_to_the_samples() {
    // 12 bytes a channel: one whole block of 8, then 4 real bytes + 4 pad.
    let b = file(2, 96, 8, 1, &[]);
    let (p, e) = packets(&b);
    assert_eq!(e, None);
    assert_eq!(p.len(), 2);
    let mut last = vec![16u8; 4];
    last.extend([17u8; 4]);
    assert_eq!(p[1], (108, last, 8, 4, false));
}

#[test]
fn a_cut_file_gives_a_short_packet_then_an_error() {
    let mut b = file(1, 256, 8, 8, &[]);
    b.truncate(92 + 12);
    let (p, e) = packets(&b);
    assert_eq!(p.len(), 2);
    assert_eq!((p[1].1.len(), p[1].4), (4, true));
    assert_eq!(e, Some(ErrorKind::Truncated));
}

#[test]
fn bad_headers_are_errors() {
    let open = |b: &[u8]| DsfDemuxer::open(&mut SliceSource::new(b), &mut Context::default()).map(|_| ());
    let good = file(2, 128, 8, 8, &[]);
    let mut b = good.clone();
    b[4] = 29;
    assert_eq!(open(&b).unwrap_err().kind(), ErrorKind::Malformed);
    let mut b = good.clone();
    b[28 + 32] = 4; // bits per sample
    assert_eq!(open(&b).unwrap_err().kind(), ErrorKind::Malformed);
    let mut b = good.clone();
    b[28 + 16] = 0; // format id
    b[28 + 17] = 1;
    assert_eq!(open(&b).unwrap_err().kind(), ErrorKind::Unsupported);
    let mut b = good.clone();
    b[28 + 24] = 0; // channels
    b[28 + 25] = 0;
    assert_eq!(open(&b).unwrap_err().kind(), ErrorKind::Malformed);
    let mut b = good;
    b[80] = b'x';
    assert_eq!(open(&b).unwrap_err().kind(), ErrorKind::Malformed);
}

#[test]
fn seek_lands_on_a_block() {
    let b = file(2, 256, 8, 8, &[]);
    let mut src = SliceSource::new(&b[..]);
    let mut ctx = Context::default();
    let mut d = DsfDemuxer::open(&mut src, &mut ctx).unwrap();
    d.seek(&mut src, &mut ctx, 0, 17).unwrap();
    let p = d.next_packet(&mut src, &mut ctx).unwrap().unwrap();
    assert_eq!((p.pos, p.pts), (Some(92 + 32), Some(16)));
}

#[test]
fn the_id3v2_tag_at_the_pointer_gives_format_tags() {
    let body = b"\x00Mediaslice";
    let mut tag = b"ID3\x03\x00\x00\x00\x00\x00".to_vec();
    tag.push((10 + body.len()) as u8);
    tag.extend_from_slice(b"TIT2");
    tag.extend_from_slice(&(body.len() as u32).to_be_bytes());
    tag.extend_from_slice(&[0, 0]);
    tag.extend_from_slice(body);
    let b = file(2, 128, 8, 8, &tag);
    let mut src = SliceSource::new(&b[..]);
    let mut ctx = Context::default();
    let mut d = DsfDemuxer::open(&mut src, &mut ctx).unwrap();
    let mut cur = TagCursor::default();
    let t = d.next_tag(&mut src, &ctx, &mut cur).unwrap().unwrap();
    assert_eq!((t.name, t.value), (Some("title"), TagValue::Text("Mediaslice")));
    // The tag is not audio.
    assert_eq!(packets(&b).0.len(), 2);
}
