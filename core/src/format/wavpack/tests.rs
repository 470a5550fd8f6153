//! WavPack unit tests: blocks built in code (one block a span, multichannel
//! spans of several blocks, the custom rate and channel sub-blocks,
//! leading zero-sample blocks, a cut block, bad headers, APEv2 items,
//! seeking).
#![allow(clippy::unwrap_used, clippy::indexing_slicing, clippy::panic)]

extern crate std;

use std::borrow::ToOwned;
use std::vec;
use std::vec::Vec;

use super::header::{FINAL, INITIAL, MONO};
use super::*;
use crate::error::ErrorKind;
use crate::format::test_drain::drain;
use crate::format::traits::{Context, FormatDemuxer};
use crate::source::SliceSource;
use crate::tags::{TagCursor, TagKey, TagValue};
use crate::types::Codec;

/// The flags' rate index of 44100 Hz.
const R44100: u32 = 9 << 23;
/// The "custom" rate index.
const CUSTOM: u32 = 15 << 23;

/// A block: header with these fields, then `body` (sub-blocks).
fn block(index: u32, samples: u32, flags: u32, body: &[u8]) -> Vec<u8> {
    let mut v = b"wvpk".to_vec();
    v.extend_from_slice(&(24 + body.len() as u32).to_le_bytes());
    v.extend_from_slice(&0x410u16.to_le_bytes());
    v.extend_from_slice(&[0, 0]);
    v.extend_from_slice(&1000u32.to_le_bytes());
    v.extend_from_slice(&index.to_le_bytes());
    v.extend_from_slice(&samples.to_le_bytes());
    v.extend_from_slice(&flags.to_le_bytes());
    v.extend_from_slice(&[0; 4]);
    v.extend_from_slice(body);
    v
}

/// A packet: pos, size, pts, duration.
type Pkt = (u64, usize, i64, u64);

fn open(b: &[u8]) -> (WavPackDemuxer, Context) {
    let mut ctx = Context::default();
    let d = WavPackDemuxer::open(&mut SliceSource::new(b), &mut ctx).unwrap();
    (d, ctx)
}

fn packets(b: &[u8]) -> (Vec<Pkt>, Option<ErrorKind>) {
    let (p, e) = drain::<WavPackDemuxer>(b);
    (
        p.into_iter()
            .map(|(pos, d, pts, dur, _)| (pos, d.len(), pts, dur))
            .collect(),
        e,
    )
}

#[test]
fn one_block_a_span_is_one_packet() {
    let whole = INITIAL | FINAL | R44100 | 1;
    let mut b = block(0, 500, whole, &[0; 8]);
    b.extend(block(500, 300, whole, &[0; 4]));
    let (p, e) = packets(&b);
    assert_eq!(e, None);
    assert_eq!(p, vec![(0, 40, 0, 500), (40, 36, 500, 300)]);
    let (_, ctx) = open(&b);
    let t = &ctx.tracks[0];
    assert_eq!(
        (t.codec, t.sample_rate, t.channels, t.bits_per_sample),
        (Codec::Wavpack, 44100, 2, 16)
    );
    assert_eq!(t.duration, Some(1000));
}

#[test]
fn a_multichannel_span_is_one_packet_with_channel_info() {
    // ID_CHANNEL_INFO: 2 words, 6 channels, mask 0x3F, then a pad byte.
    let info = [0x4D, 2, 6, 0x3F, 0, 0];
    let mut b = block(0, 100, INITIAL | R44100 | 1, &info);
    b.extend(block(0, 100, R44100 | 1, &[0; 4]));
    b.extend(block(0, 100, FINAL | R44100 | 1 | MONO, &[0; 4]));
    b.extend(block(100, 100, INITIAL | R44100 | 1, &info));
    b.extend(block(100, 100, FINAL | R44100 | 1, &[0; 4]));
    let (p, e) = packets(&b);
    assert_eq!(e, None);
    assert_eq!(p, vec![(0, 38 + 36 + 36, 0, 100), (110, 38 + 36, 100, 100)]);
    assert_eq!(open(&b).1.tracks[0].channels, 6);
}

#[test]
fn a_custom_rate_comes_from_its_sub_block() {
    // ID_SAMPLE_RATE (0x27), odd size: 2 words - 1 = 3 bytes, 37800.
    let r = 37800u32.to_le_bytes();
    let body = [0x67, 2, r[0], r[1], r[2], 0];
    let b = block(0, 100, INITIAL | FINAL | CUSTOM | MONO | 1, &body);
    let (_, ctx) = open(&b);
    assert_eq!((ctx.tracks[0].sample_rate, ctx.tracks[0].channels), (37800, 1));
    // Without it, no rate.
    let b = block(0, 100, INITIAL | FINAL | CUSTOM, &[0; 4]);
    let e = WavPackDemuxer::open(&mut SliceSource::new(&b[..]), &mut Context::default()).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Malformed);
}

#[test]
fn leading_blocks_without_samples_are_skipped() {
    let whole = INITIAL | FINAL | R44100;
    let mut b = block(0, 0, whole, &[0; 4]);
    b.extend(block(0, 10, whole, &[0; 4]));
    assert_eq!(packets(&b), (vec![(36, 36, 0, 10)], None));
}

/// A span cut by the end of the input is not given, as ffmpeg's
/// `wv_read_packet` gives none: the blocks before it, then `Truncated`.
#[test]
fn a_cut_block_is_not_given_then_an_error() {
    let whole = INITIAL | FINAL | R44100;
    let mut b = block(0, 10, whole, &[0; 40]);
    b.extend(block(10, 10, whole, &[0; 40]));
    b.truncate(b.len() - 10);
    let (p, e) = packets(&b);
    assert_eq!(p.len(), 1);
    assert_eq!(e, Some(ErrorKind::Truncated));
}

/// Fuzz finding 49: the input ends inside the first block of a span of
/// several (a stereo pair of mono blocks, the first not final). The whole
/// input, whose next block is bad, ends with an error after the span
/// before; so must every prefix, giving no packet the whole does not.
#[test]
fn a_span_cut_after_a_block_that_is_not_final_is_not_given() {
    let whole = INITIAL | FINAL | R44100;
    let mut b = block(0, 10, whole, &[0; 40]);
    b.extend(block(10, 10, INITIAL | R44100 | MONO, &[0; 40]));
    let second = b.len();
    b.extend(block(10, 10, FINAL | R44100 | MONO, &[0; 40]));
    // The whole: the second span complete.
    assert_eq!(packets(&b).0.len(), 2);
    // Cut inside its second block, and inside its first: one packet.
    for cut in [b.len() - 10, second - 10, second + 20] {
        let (p, e) = packets(&b[..cut]);
        assert_eq!(p.len(), 1, "cut at {cut}");
        assert_eq!(e, Some(ErrorKind::Truncated), "cut at {cut}");
    }
}

#[test]
fn bad_headers_are_errors() {
    let open = |b: &[u8]| WavPackDemuxer::open(&mut SliceSource::new(b), &mut Context::default()).map(|_| ());
    let whole = INITIAL | FINAL | R44100;
    let mut b = block(0, 10, whole, &[0; 4]);
    b[8] = 0x01; // version 0x401
    assert_eq!(open(&b).unwrap_err().kind(), ErrorKind::Malformed);
    // Multichannel without ID_CHANNEL_INFO.
    assert_eq!(
        open(&block(0, 10, INITIAL | R44100, &[0; 4])).unwrap_err().kind(),
        ErrorKind::Malformed
    );
    // Garbage after the first block.
    let mut b = block(0, 10, whole, &[0; 4]);
    b.extend_from_slice(&[0x55; 40]);
    assert_eq!(packets(&b).1, Some(ErrorKind::Malformed));
}

#[test]
fn ape_text_items_are_format_tags() {
    let whole = INITIAL | FINAL | R44100;
    let mut b = block(0, 10, whole, &[0; 4]);
    let mut items = Vec::new();
    for (k, v, flags) in [
        ("Title", "Song", 0u32),
        ("Cover Art (Front)", "xx", 2),
        ("Artist", "Me", 0),
    ] {
        items.extend_from_slice(&(v.len() as u32).to_le_bytes());
        items.extend_from_slice(&flags.to_le_bytes());
        items.extend_from_slice(k.as_bytes());
        items.push(0);
        items.extend_from_slice(v.as_bytes());
    }
    b.extend_from_slice(&items);
    b.extend_from_slice(b"APETAGEX");
    for x in [2000u32, items.len() as u32 + 32, 3, 0] {
        b.extend_from_slice(&x.to_le_bytes());
    }
    b.extend_from_slice(&[0; 8]);
    let mut src = SliceSource::new(&b[..]);
    let mut ctx = Context::default();
    let mut d = WavPackDemuxer::open(&mut src, &mut ctx).unwrap();
    let mut cur = TagCursor::default();
    let mut got = Vec::new();
    while let Some(t) = d.next_tag(&mut src, &ctx, &mut cur).unwrap() {
        let (TagKey::Text(k), TagValue::Text(v)) = (t.key, t.value) else {
            panic!("{t:?}")
        };
        got.push((k.to_owned(), v.to_owned()));
    }
    assert_eq!(
        got,
        vec![
            ("Title".to_owned(), "Song".to_owned()),
            ("Artist".to_owned(), "Me".to_owned())
        ]
    );
    // The tag is not audio.
    assert_eq!(packets(&b), (vec![(0, 36, 0, 10)], None));
}

#[test]
fn seek_goes_to_the_span_at_or_before() {
    let whole = INITIAL | FINAL | R44100;
    let mut b = block(0, 10, whole, &[0; 4]);
    b.extend(block(10, 10, whole, &[0; 4]));
    b.extend(block(20, 10, whole, &[0; 4]));
    let mut src = SliceSource::new(&b[..]);
    let mut ctx = Context::default();
    let mut d = WavPackDemuxer::open(&mut src, &mut ctx).unwrap();
    d.seek(&mut src, &mut ctx, 0, 15).unwrap();
    let p = d.next_packet(&mut src, &mut ctx).unwrap().unwrap();
    assert_eq!((p.pos, p.pts), (Some(36), Some(10)));
}
