//! Monkey's Audio unit tests: files built in code (3.99 descriptor and
//! header, 3.97 old header), ffmpeg's packet shape (prefix, skip, rounding,
//! the last frame to the end), an APEv2 tag, a cut frame, bad headers and
//! seek tables, seeking.
#![allow(clippy::unwrap_used, clippy::indexing_slicing, clippy::panic)]

extern crate std;

use std::vec;
use std::vec::Vec;

use super::*;
use crate::error::ErrorKind;
use crate::format::test_drain::drain_any;
use crate::format::traits::{Context, FormatDemuxer};
use crate::source::SliceSource;
use crate::tags::{TagCursor, TagKey, TagValue};
use crate::types::Codec;

const BLOCKS: u32 = 73728 * 4;

/// A 3.99 file: descriptor, header (stereo, 16 bits, 44100 Hz), seek
/// table (`frames` entries of `sizes` frames, or the `table` given), no
/// WAV header, frames of byte `i + 1`, then `tail`.
fn file(sizes: &[usize], table: Option<&[u32]>, final_blocks: u32, tail: &[u8]) -> Vec<u8> {
    let n = sizes.len() as u32;
    let first = 52 + 24 + 4 * n;
    let mut at = first;
    let mut offsets = Vec::new();
    for &s in sizes {
        offsets.push(at);
        at += s as u32;
    }
    let table = table.map_or(offsets, <[u32]>::to_vec);
    let audio: usize = sizes.iter().sum();
    let mut v = b"MAC ".to_vec();
    for x in [3990u16, 0] {
        v.extend_from_slice(&x.to_le_bytes());
    }
    for x in [52u32, 24, 4 * table.len() as u32, 0, audio as u32, 0, 0] {
        v.extend_from_slice(&x.to_le_bytes());
    }
    v.extend_from_slice(&[0; 16]);
    for x in [2000u16, 0] {
        v.extend_from_slice(&x.to_le_bytes());
    }
    for x in [BLOCKS, final_blocks, n] {
        v.extend_from_slice(&x.to_le_bytes());
    }
    for x in [16u16, 2] {
        v.extend_from_slice(&x.to_le_bytes());
    }
    v.extend_from_slice(&44100u32.to_le_bytes());
    for o in &table {
        v.extend_from_slice(&o.to_le_bytes());
    }
    for (i, &s) in sizes.iter().enumerate() {
        v.extend(core::iter::repeat_n(i as u8 + 1, s));
    }
    v.extend_from_slice(tail);
    v
}

/// An APEv2 tag (footer only) of one text item.
fn apev2(key: &str, value: &str) -> Vec<u8> {
    let mut item = (value.len() as u32).to_le_bytes().to_vec();
    item.extend_from_slice(&[0; 4]);
    item.extend_from_slice(key.as_bytes());
    item.push(0);
    item.extend_from_slice(value.as_bytes());
    let mut v = item.clone();
    v.extend_from_slice(b"APETAGEX");
    for x in [2000u32, item.len() as u32 + 32, 1, 0] {
        v.extend_from_slice(&x.to_le_bytes());
    }
    v.extend_from_slice(&[0; 8]);
    v
}

fn open_err(b: &[u8]) -> ErrorKind {
    ApeDemuxer::open(&mut SliceSource::new(b), &mut Context::default())
        .unwrap_err()
        .kind()
}

/// The prefix ffmpeg puts before a frame: samples, skip.
fn prefix(blocks: u32, skip: u32) -> Vec<u8> {
    let mut v = blocks.to_le_bytes().to_vec();
    v.extend_from_slice(&skip.to_le_bytes());
    v
}

#[test]
fn frames_are_packets_in_ffmpegs_shape() {
    // Frames of 10, 7 and 5 bytes at 88, 98, 105: the second starts 2
    // bytes past a 4-byte boundary (counted from the first), the third 1.
    let b = file(&[10, 7, 5], None, 1000, &[]);
    let (p, e) = drain_any::<ApeDemuxer>(&b);
    assert_eq!(e, None);
    assert_eq!(p.len(), 3);
    // Frame 0: 10 bytes rounded up to 12 (2 of frame 1's bytes).
    let mut want = prefix(BLOCKS, 0);
    want.extend_from_slice(&b[88..100]);
    assert_eq!(p[0], (None, want, Some(0), None, false));
    // Frame 1: from 96 (skip 2), 7 + 2 = 9 rounded up to 12.
    let mut want = prefix(BLOCKS, 2);
    want.extend_from_slice(&b[96..108]);
    assert_eq!(p[1], (None, want, Some(i64::from(BLOCKS)), None, false));
    // The last frame runs to the end of the input: 110 - 105 = 5, rounded
    // down to 4, plus skip 1, rounded up to 8; the input has 6 of them.
    let mut want = prefix(1000, 1);
    want.extend_from_slice(&b[104..110]);
    assert_eq!(p[2].1, want);
    let mut ctx = Context::default();
    ApeDemuxer::open(&mut SliceSource::new(&b[..]), &mut ctx).unwrap();
    let t = &ctx.tracks[0];
    assert_eq!(
        (t.codec, t.sample_rate, t.channels, t.bits_per_sample, t.frames),
        (Codec::Ape, 44100, 2, 16, Some(3))
    );
    assert_eq!(t.duration, Some(2 * u64::from(BLOCKS) + 1000));
}

#[test]
fn the_apev2_items_are_format_tags_and_the_last_frame_holds_the_tag() {
    let tag = apev2("Title", "Ape");
    let b = file(&[12, 8], None, 500, &tag);
    let mut src = SliceSource::new(&b[..]);
    let mut ctx = Context::default();
    let mut d = ApeDemuxer::open(&mut src, &mut ctx).unwrap();
    let mut cur = TagCursor::default();
    let t = d.next_tag(&mut src, &ctx, &mut cur).unwrap().unwrap();
    assert_eq!((t.key, t.value), (TagKey::Text("Title"), TagValue::Text("Ape")));
    assert!(d.next_tag(&mut src, &ctx, &mut cur).unwrap().is_none());
    // ffmpeg's last frame runs to the end of the input, tag included.
    let (p, _) = drain_any::<ApeDemuxer>(&b);
    assert_eq!(p[1].1.len(), 8 + ((8 + tag.len()) & !3));
}

#[test]
fn a_cut_frame_is_given_up_to_the_cut_then_an_error() {
    let b = file(&[40, 40, 40], None, 100, &[]);
    let (p, e) = drain_any::<ApeDemuxer>(&b[..88 + 60]);
    assert_eq!(e, Some(ErrorKind::Truncated));
    assert_eq!(p.len(), 2);
    assert_eq!((p[1].1.len(), p[1].4), (8 + 20, true));
    // The descriptor's audio length tells a cut last frame from a whole one.
    let (p, _) = drain_any::<ApeDemuxer>(&b[..b.len() - 8]);
    assert_eq!((p.len(), p[2].4), (3, true));
    let (p, _) = drain_any::<ApeDemuxer>(&b);
    assert!(!p[2].4);
}

#[test]
fn bad_headers_and_tables_are_refused() {
    let good = file(&[10, 10], None, 100, &[]);
    // No frames.
    let mut b = good.clone();
    b[64..68].copy_from_slice(&0u32.to_le_bytes());
    assert_eq!(open_err(&b), ErrorKind::Malformed);
    // Fewer seek table entries than frames.
    let b = file(&[10, 10], Some(&[84]), 100, &[]);
    assert_eq!(open_err(&b), ErrorKind::Malformed);
    // A version ffmpeg does not read.
    let mut b = good.clone();
    b[4..6].copy_from_slice(&3991u16.to_le_bytes());
    assert_eq!(open_err(&b), ErrorKind::Unsupported);
    // No channels.
    let mut b = good.clone();
    b[70..72].copy_from_slice(&0u16.to_le_bytes());
    assert_eq!(open_err(&b), ErrorKind::Malformed);
    // The seek table past the end of the input.
    assert_eq!(open_err(&good[..80]), ErrorKind::Truncated);
    // Not MAC.
    assert_eq!(open_err(&[0; 80]), ErrorKind::Malformed);
}

#[test]
fn a_seek_table_out_of_order_ends_the_packets_with_an_error() {
    // The second entry before the first frame: frame 0 has a negative size.
    let b = file(&[10, 10], Some(&[84, 60]), 100, &[]);
    let (p, e) = drain_any::<ApeDemuxer>(&b);
    assert_eq!((p.len(), e), (0, Some(ErrorKind::Malformed)));
}

#[test]
fn seeking_goes_to_the_frame_holding_the_time() {
    let b = file(&[8, 8, 8], None, 100, &[]);
    let mut scratch = vec![0u8; 1024];
    let mut src = SliceSource::with_scratch(&b, &mut scratch);
    let mut ctx = Context::default();
    let mut d = ApeDemuxer::open(&mut src, &mut ctx).unwrap();
    d.seek(&mut src, &mut ctx, 0, i64::from(BLOCKS) + 5).unwrap();
    let p = d.next_packet(&mut src, &mut ctx).unwrap().unwrap();
    assert_eq!(p.pts, Some(i64::from(BLOCKS)));
}

#[test]
fn the_old_header_puts_the_table_after_the_wav_header() {
    // 3.97: 32-byte header with the seek element count (flag 16), a
    // 4-byte "WAV header", a 2-entry table, frames of 8 and 6 bytes.
    let mut v = b"MAC ".to_vec();
    for x in [3970u16, 2000, 16, 1] {
        v.extend_from_slice(&x.to_le_bytes());
    }
    for x in [8000u32, 4, 0, 2, 77, 2] {
        v.extend_from_slice(&x.to_le_bytes());
    }
    v.extend_from_slice(b"WAVH");
    let first = v.len() as u32 + 8;
    for x in [first, first + 8] {
        v.extend_from_slice(&x.to_le_bytes());
    }
    v.extend_from_slice(&[1; 8]);
    v.extend_from_slice(&[2; 6]);
    v.extend_from_slice(&[0; 20]);
    let (p, e) = drain_any::<ApeDemuxer>(&v);
    assert_eq!(e, None);
    assert_eq!(p[0].1[8..], [1; 8]);
    assert_eq!(p[1].1[..8], prefix(77, 0)[..]);
    assert_eq!(p[1].2, Some(i64::from(BLOCKS)));
}
