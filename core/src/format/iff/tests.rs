//! IFF unit tests: pictures and sounds built in code (chunk order, padding,
//! the pixel layouts ffmpeg's decoder gives), the text chunks as tags, and
//! bad input (sizes past the end, empty or missing chunks, short headers,
//! a file of empty chunks, huge dimensions).
#![allow(clippy::unwrap_used, clippy::indexing_slicing, clippy::panic)]

extern crate std;

use std::string::String;
use std::vec;
use std::vec::Vec;

use super::*;
use crate::error::ErrorKind;
use crate::format::test_drain::drain_any;
use crate::format::test_drain::drain_tags;
use crate::format::traits::{Context, FormatDemuxer};
use crate::source::SliceSource;

use crate::types::{Codec, TrackKind};

/// A chunk: id, 32-bit big-endian size, data, a pad byte when odd.
fn chunk(id: &[u8; 4], data: &[u8]) -> Vec<u8> {
    let mut v = id.to_vec();
    v.extend_from_slice(&(data.len() as u32).to_be_bytes());
    v.extend_from_slice(data);
    if data.len() % 2 == 1 {
        v.push(0);
    }
    v
}

/// `FORM`, its size, the form type, the chunks.
fn form(kind: &[u8; 4], chunks: &[Vec<u8>]) -> Vec<u8> {
    let mut body = kind.to_vec();
    for c in chunks {
        body.extend_from_slice(c);
    }
    chunk(b"FORM", &body)
}

/// A 20-byte BMHD.
fn bmhd(w: u16, h: u16, planes: u8, masking: u8, aspect: (u8, u8)) -> Vec<u8> {
    let mut b = Vec::new();
    b.extend_from_slice(&w.to_be_bytes());
    b.extend_from_slice(&h.to_be_bytes());
    b.extend_from_slice(&[0, 0, 0, 0, planes, masking, 1, 0, 0, 0, aspect.0, aspect.1]);
    b.extend_from_slice(&w.to_be_bytes());
    b.extend_from_slice(&h.to_be_bytes());
    chunk(b"BMHD", &b)
}

/// A 20-byte VHDR at `rate` with `compression`.
fn vhdr(rate: u16, compression: u8) -> Vec<u8> {
    let mut b = vec![0u8; 12];
    b.extend_from_slice(&rate.to_be_bytes());
    b.extend_from_slice(&[1, compression, 0, 1, 0, 0]);
    chunk(b"VHDR", &b)
}

fn open(b: &[u8]) -> Context {
    let mut src = SliceSource::new(b);
    let mut ctx = Context::default();
    IffDemuxer::open(&mut src, &mut ctx).unwrap();
    ctx
}

fn open_err(b: &[u8]) -> ErrorKind {
    let mut src = SliceSource::new(b);
    IffDemuxer::open(&mut src, &mut Context::default()).unwrap_err().kind()
}

/// A packet: pos, size, pts, duration, truncated.
type Pkt = (Option<u64>, usize, Option<i64>, Option<u64>, bool);

fn packets(b: &[u8]) -> (Vec<Pkt>, Option<ErrorKind>) {
    let (p, e) = drain_any::<IffDemuxer>(b);
    let p = p
        .into_iter()
        .map(|(pos, d, pts, dur, cut)| (pos, d.len(), pts, dur, cut));
    (p.collect(), e)
}

fn facts(b: &[u8]) -> Option<PictureFacts> {
    picture_facts(&mut SliceSource::new(b)).unwrap()
}

fn tags(b: &[u8]) -> Vec<(String, String)> {
    drain_tags::<IffDemuxer>(b)
}

#[test]
fn a_picture_is_one_packet_of_the_body_in_any_chunk_order() {
    let cmap = chunk(b"CMAP", &[0; 6]);
    let body = chunk(b"BODY", &[5; 33]);
    let b = form(b"ILBM", &[bmhd(40, 24, 1, 0, (10, 11)), cmap.clone(), body.clone()]);
    let ctx = open(&b);
    let t = &ctx.tracks[0];
    assert_eq!(
        (t.kind, t.codec, t.codec_tag),
        (TrackKind::Video, Codec::IffIlbm, u32::from_be_bytes(*b"ILBM"))
    );
    assert_eq!((t.width, t.height, t.time_base.den, t.duration), (40, 24, 90_000, None));
    // The BODY's data, odd-sized (its pad byte is not in the packet), no time.
    let body_at = (12 + 28 + 14 + 8) as u64;
    assert_eq!(packets(&b), (vec![(Some(body_at), 33, None, None, false)], None));
    // BODY before BMHD: the walk reads every chunk, as ffmpeg's does.
    let b2 = form(b"ILBM", &[body, cmap, bmhd(40, 24, 1, 0, (10, 11))]);
    assert_eq!(open(&b2).tracks[0].width, 40);
    assert_eq!(packets(&b2), (vec![(Some(20), 33, None, None, false)], None));
    assert_eq!(
        facts(&b),
        Some(PictureFacts {
            layout: Some(PixelLayout::Pal8),
            sar: Some((10, 11))
        })
    );
}

#[test]
fn pixel_layouts_follow_ffmpegs_decoder() {
    let layout = |kind: &[u8; 4], chunks: &[Vec<u8>]| facts(&form(kind, chunks)).unwrap().layout;
    let body = chunk(b"BODY", &[0; 8]);
    let cmap = chunk(b"CMAP", &[0; 48]);
    let camg = |m: u32| chunk(b"CAMG", &m.to_be_bytes());
    assert_eq!(
        layout(b"ILBM", &[bmhd(8, 8, 4, 0, (1, 1)), body.clone()]),
        Some(PixelLayout::Pal8)
    );
    // Eight planes: a palette with a CMAP, grey without.
    assert_eq!(
        layout(b"ILBM", &[bmhd(8, 8, 8, 0, (1, 1)), cmap.clone(), body.clone()]),
        Some(PixelLayout::Pal8)
    );
    assert_eq!(
        layout(b"ILBM", &[bmhd(8, 8, 8, 0, (1, 1)), body.clone()]),
        Some(PixelLayout::Gray8)
    );
    // HAM is decoded to 24-bit colour; extra half-brite stays a palette.
    assert_eq!(
        layout(b"ILBM", &[bmhd(8, 8, 6, 0, (1, 1)), camg(0x800), body.clone()]),
        Some(PixelLayout::Rgb0)
    );
    assert_eq!(
        layout(b"ILBM", &[bmhd(8, 8, 6, 0, (1, 1)), camg(0x80), body.clone()]),
        Some(PixelLayout::Pal8)
    );
    assert_eq!(
        layout(b"ILBM", &[bmhd(8, 8, 24, 0, (1, 1)), body.clone()]),
        Some(PixelLayout::Rgb0)
    );
    assert_eq!(
        layout(b"ILBM", &[bmhd(8, 8, 32, 0, (1, 1)), body.clone()]),
        Some(PixelLayout::Rgba)
    );
    assert_eq!(layout(b"ILBM", &[bmhd(8, 8, 12, 0, (1, 1)), body.clone()]), None);
    // A mask plane on 8 planes: B, G, R, A.
    assert_eq!(
        layout(b"ILBM", &[bmhd(8, 8, 8, 1, (1, 1)), cmap, body.clone()]),
        Some(PixelLayout::Bgra)
    );
    assert_eq!(
        layout(b"RGB8", &[bmhd(8, 8, 25, 0, (1, 1)), body.clone()]),
        Some(PixelLayout::Bgra)
    );
    assert_eq!(
        layout(b"RGBN", &[bmhd(8, 8, 13, 0, (1, 1)), body.clone()]),
        Some(PixelLayout::Rgb444Le)
    );
    let mut dgbl = vec![0, 8, 0, 8, 0, 0, 0, 0];
    let dpel = chunk(b"DPEL", &[0, 0, 0, 3, 0, 1, 0, 8, 0, 2, 0, 8, 0, 3, 0, 8]);
    let deep = form(
        b"DEEP",
        &[chunk(b"DGBL", &dgbl), dpel.clone(), chunk(b"DBOD", &[0; 192])],
    );
    let f = facts(&deep).unwrap();
    assert_eq!(
        f,
        PictureFacts {
            layout: Some(PixelLayout::Rgb24),
            sar: None
        }
    );
    assert_eq!(packets(&deep).0.len(), 1);
    dgbl[6] = 10;
    dgbl[7] = 11;
    let deep = form(b"DEEP", &[chunk(b"DGBL", &dgbl), dpel, chunk(b"DBOD", &[0; 192])]);
    assert_eq!(facts(&deep).unwrap().sar, Some((10, 11)));
    // A BMHD of 16 bytes or more has the aspect; a shorter one none.
    let short = form(b"ILBM", &[chunk(b"BMHD", &[0, 8, 0, 8, 0, 0, 0, 0, 2, 0, 0, 0]), body]);
    assert_eq!(facts(&short).unwrap().sar, None);
}

#[test]
fn a_sound_is_one_packet_timed_by_the_bytes_after_its_start() {
    // 8SVX stereo (CHAN 6), 101 bytes of each channel plus a pad byte.
    let b = form(
        b"8SVX",
        &[
            vhdr(11025, 0),
            chunk(b"CHAN", &6u32.to_be_bytes()),
            chunk(b"BODY", &[1; 203]),
        ],
    );
    let ctx = open(&b);
    let t = &ctx.tracks[0];
    assert_eq!(
        (t.kind, t.codec, t.sample_rate, t.channels),
        (TrackKind::Audio, Codec::PcmS8Planar, 11025, 2)
    );
    assert_eq!((t.bits_per_sample, t.bit_rate, t.time_base.den), (8, 176_400, 11025));
    // ffmpeg's duration: (file size − body start) × 8 / (channels × bits),
    // rounded: 204 bytes with the pad, 102 frames.
    assert_eq!(t.duration, Some(102));
    let body_at = (12 + 28 + 12 + 8) as u64;
    assert_eq!(
        packets(&b),
        (vec![(Some(body_at), 203, Some(0), Some(101), false)], None)
    );
    let b = form(b"16SV", &[vhdr(8000, 0), chunk(b"BODY", &[0; 400])]);
    let t = &open(&b).tracks[0];
    assert_eq!((t.codec, t.channels, t.duration), (Codec::PcmS16BePlanar, 1, Some(200)));
    assert_eq!(packets(&b).0[0].3, Some(200));
    // Fibonacci delta: 4 bits a sample.
    let b = form(b"8SVX", &[vhdr(8000, 1), chunk(b"BODY", &[0; 100])]);
    let t = &open(&b).tracks[0];
    assert_eq!((t.codec, t.bits_per_sample, t.duration), (Codec::Svx8Fib, 4, Some(200)));
    let b = form(b"8SVX", &[vhdr(8000, 2), chunk(b"BODY", &[0; 100])]);
    assert_eq!(open(&b).tracks[0].codec, Codec::Svx8Exp);
}

#[test]
fn text_chunks_are_tags_up_to_their_first_nul() {
    let b = form(
        b"8SVX",
        &[
            vhdr(8000, 0),
            chunk(b"NAME", b"Tone\0junk"),
            chunk(b"AUTH", b"Me"),
            chunk(b"(c) ", b"2026"),
            chunk(b"BODY", &[0; 10]),
            chunk(b"ANNO", b"after"),
        ],
    );
    let want = [
        ("title", "Tone"),
        ("artist", "Me"),
        ("copyright", "2026"),
        ("comment", "after"),
    ];
    let got = tags(&b);
    assert_eq!(got.len(), want.len());
    for ((k, v), (wk, wv)) in got.iter().zip(want) {
        assert_eq!((k.as_str(), v.as_str()), (wk, wv));
    }
}

#[test]
fn a_body_past_the_end_is_cut_then_an_error() {
    let mut b = form(b"8SVX", &[vhdr(8000, 0), chunk(b"BODY", &[0; 100])]);
    b.truncate(b.len() - 40);
    let mut src = SliceSource::new(&b[..]);
    let mut ctx = Context::default();
    IffDemuxer::open(&mut src, &mut ctx).unwrap();
    assert!(ctx.diags.contains("iff.body-beyond-eof"));
    let (p, e) = packets(&b);
    assert_eq!(p, vec![(Some(48), 60, Some(0), Some(60), true)]);
    assert_eq!(e, Some(ErrorKind::Truncated));
    // The input ends inside a header chunk.
    let b = form(b"ILBM", &[bmhd(8, 8, 1, 0, (1, 1))]);
    assert_eq!(open_err(&b[..20]), ErrorKind::Truncated);
}

#[test]
fn bad_input_is_a_clear_error() {
    let body = chunk(b"BODY", &[0; 8]);
    // No FORM, a form type not taken, animations and MAUD.
    assert_eq!(open_err(b"RIFF\0\0\0\x04ILBM"), ErrorKind::Malformed);
    assert_eq!(open_err(&form(b"AIFF", &[])), ErrorKind::Unsupported);
    assert_eq!(open_err(&form(b"ANIM", &[])), ErrorKind::Unsupported);
    let mhdr = chunk(b"VHDR", &[0; 20]);
    assert_eq!(open_err(&form(b"MAUD", &[mhdr, body.clone()])), ErrorKind::Unsupported);
    // No header chunk, no body, an empty body.
    assert_eq!(
        open_err(&form(b"ILBM", core::slice::from_ref(&body))),
        ErrorKind::Malformed
    );
    assert_eq!(
        open_err(&form(b"ILBM", &[bmhd(8, 8, 1, 0, (1, 1))])),
        ErrorKind::Malformed
    );
    assert_eq!(
        open_err(&form(b"ILBM", &[bmhd(8, 8, 1, 0, (1, 1)), chunk(b"BODY", &[])])),
        ErrorKind::Malformed
    );
    // Short or malformed header chunks.
    assert_eq!(
        open_err(&form(b"ILBM", &[chunk(b"BMHD", &[0; 8]), body.clone()])),
        ErrorKind::Malformed
    );
    assert_eq!(
        open_err(&form(b"8SVX", &[chunk(b"VHDR", &[0; 13]), body.clone()])),
        ErrorKind::Malformed
    );
    let cmap = chunk(b"CMAP", &[0; 4]);
    assert_eq!(
        open_err(&form(b"ILBM", &[bmhd(8, 8, 1, 0, (1, 1)), cmap, body.clone()])),
        ErrorKind::Malformed
    );
    let camg = chunk(b"CAMG", &[0; 2]);
    assert_eq!(
        open_err(&form(b"ILBM", &[bmhd(8, 8, 1, 0, (1, 1)), camg, body.clone()])),
        ErrorKind::Malformed
    );
    let dpel = chunk(b"DPEL", &[0, 0, 0, 1, 0, 9, 0, 8]);
    let dgbl = chunk(b"DGBL", &[0, 8, 0, 8, 0, 0, 1, 1]);
    assert_eq!(
        open_err(&form(b"DEEP", &[dgbl, dpel, body.clone()])),
        ErrorKind::Unsupported
    );
    // Sound: a rate of 0, an unknown compression.
    assert_eq!(
        open_err(&form(b"8SVX", &[vhdr(0, 0), body.clone()])),
        ErrorKind::Malformed
    );
    assert_eq!(
        open_err(&form(b"8SVX", &[vhdr(8000, 7), body.clone()])),
        ErrorKind::Unsupported
    );
    // A body over Limits::max_packet.
    let big = form(b"ILBM", &[bmhd(8, 8, 1, 0, (1, 1)), chunk(b"BODY", &[0; 64])]);
    let mut ctx = Context::default();
    ctx.limits.max_packet = 32;
    let e = IffDemuxer::open(&mut SliceSource::new(&big[..]), &mut ctx).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::LimitExceeded);
}

#[test]
fn huge_sizes_and_many_chunks_are_bounded() {
    // A chunk size near 4 GiB: the walk steps past the end and stops.
    let mut b = form(b"ILBM", &[bmhd(65535, 65535, 8, 0, (1, 1)), chunk(b"BODY", &[0; 16])]);
    b.extend_from_slice(b"JUNK\xff\xff\xff\xff");
    let ctx = open(&b);
    assert_eq!((ctx.tracks[0].width, ctx.tracks[0].height), (65535, 65535));
    assert_eq!(packets(&b).0.len(), 1);
    // A BODY that says 4 GiB: one cut packet of what there is.
    let mut b = form(b"ILBM", &[bmhd(8, 8, 1, 0, (1, 1))]);
    b.extend_from_slice(b"BODY\x7f\xff\xff\xff\0\0\0\0");
    let mut ctx = Context::default();
    ctx.limits.max_packet = u32::MAX;
    let mut src = SliceSource::new(&b[..]);
    let mut d = IffDemuxer::open(&mut src, &mut ctx).unwrap();
    let p = d.next_packet(&mut src, &mut ctx).unwrap().unwrap();
    assert!(p.flags.truncated && p.data.len() == 4);
    // Thousands of empty chunks: the walk stops at MAX_CHUNKS, says so,
    // and the headers before it still count.
    let mut chunks = vec![bmhd(8, 8, 1, 0, (1, 1)), chunk(b"BODY", &[1; 4])];
    chunks.extend(std::iter::repeat_n(chunk(b"NOPE", &[]), 5000));
    let b = form(b"ILBM", &chunks);
    let mut ctx = Context::default();
    IffDemuxer::open(&mut SliceSource::new(&b[..]), &mut ctx).unwrap();
    assert!(ctx.diags.contains("iff.too-many-chunks"));
    assert_eq!(tags(&b).len(), 0);
}
