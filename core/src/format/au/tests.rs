//! AU unit tests: files built in code (packet cuts for PCM and G.726, the
//! annotation's pairs, bad headers, seeking).
#![allow(clippy::unwrap_used, clippy::indexing_slicing, clippy::panic)]

extern crate std;

use std::string::{String, ToString};
use std::vec;
use std::vec::Vec;

use super::*;
use crate::error::ErrorKind;
use crate::format::test_drain::drain_tags;
use crate::format::traits::{Context, FormatDemuxer};
use crate::source::SliceSource;

use crate::types::Codec;

fn file(data_offset: u32, size: u32, enc: u32, rate: u32, ch: u32, ann: &[u8], data: &[u8]) -> Vec<u8> {
    let mut v = b".snd".to_vec();
    for x in [data_offset, size, enc, rate, ch] {
        v.extend_from_slice(&x.to_be_bytes());
    }
    v.extend_from_slice(ann);
    v.extend_from_slice(data);
    v
}

fn packets(b: &[u8]) -> Vec<(u64, usize, i64, u64)> {
    let mut src = SliceSource::new(b);
    let mut ctx = Context::default();
    let mut d = AuDemuxer::open(&mut src, &mut ctx).unwrap();
    let mut out = Vec::new();
    while let Some(p) = d.next_packet(&mut src, &mut ctx).unwrap() {
        out.push((p.pos.unwrap(), p.data.len(), p.pts.unwrap(), p.duration.unwrap()));
    }
    out
}

fn tags(b: &[u8]) -> Vec<(String, String)> {
    drain_tags::<AuDemuxer>(b)
}

fn open_err(b: &[u8]) -> ErrorKind {
    let mut src = SliceSource::new(b);
    AuDemuxer::open(&mut src, &mut Context::default()).unwrap_err().kind()
}

#[test]
fn pcm_packets_are_rate_over_25_frames_to_the_end_of_the_file() {
    // 8000 Hz: rate / 25 = 320 frames a packet.
    let b = file(24, 700, 1, 8000, 1, &[], &[0; 700]);
    assert_eq!(
        packets(&b),
        vec![(24, 320, 0, 320), (344, 320, 320, 320), (664, 60, 640, 60)]
    );
    // 16-bit stereo at 44100 Hz, 10001 bytes: two packets of 4096, one of
    // 1809 bytes (452 whole frames), whatever the data size says.
    let b = file(32, 100, 3, 44100, 2, &[0; 8], &[0; 10001]);
    assert_eq!(
        packets(&b),
        vec![(32, 4096, 0, 1024), (4128, 4096, 1024, 1024), (8224, 1809, 2048, 452)]
    );
}

#[test]
fn g726_blocks_are_bits_times_channels_bytes() {
    // G.723 at 3 bits, mono, 8000 Hz: 320 blocks of 3 bytes, 2560 frames.
    let b = file(24, 2000, 25, 8000, 1, &[], &[0; 2000]);
    assert_eq!(
        packets(&b),
        vec![(24, 960, 0, 2560), (984, 960, 2560, 2560), (1944, 80, 5120, 213)]
    );
}

#[test]
fn short_data_offset_reads_as_24_and_unknown_size_runs_to_the_end() {
    let b = file(20, u32::MAX, 1, 8000, 1, &[], &[0; 100]);
    let mut src = SliceSource::new(&b[..]);
    let mut ctx = Context::default();
    AuDemuxer::open(&mut src, &mut ctx).unwrap();
    assert_eq!(ctx.tracks[0].duration, Some(100));
    assert_eq!(ctx.tracks[0].codec, Codec::PcmMulaw);
    assert_eq!(packets(&b), vec![(24, 100, 0, 100)]);
}

#[test]
fn annotation_pairs_as_ffmpeg_reads_them() {
    let ann = b"Title=x=y\n\nnoeq\nArtist=\nalbum=B\r\ncomment=c\nGENRE=g\0track=9\n";
    let b = file(24 + ann.len() as u32, 4, 3, 8000, 1, ann, &[0; 4]);
    let want = [("title", "x=y"), ("album", "B\r"), ("genre", "g")];
    let got = tags(&b);
    assert_eq!(got.len(), want.len());
    for ((k, v), (wk, wv)) in got.iter().zip(want) {
        assert_eq!((k.as_str(), v.as_str()), (wk, wv));
    }
    // An empty value is a tag; a value the field ends inside is not.
    let ann = b"artist=\ntitle=Z";
    let b = file(24 + ann.len() as u32, 4, 3, 8000, 1, ann, &[0; 4]);
    assert_eq!(tags(&b), vec![("artist".to_string(), String::new())]);
}

#[test]
fn bad_headers_are_errors() {
    assert_eq!(open_err(&file(24, 0, 3, 0, 1, &[], &[])), ErrorKind::Malformed);
    assert_eq!(open_err(&file(24, 0, 3, 8000, 0, &[], &[])), ErrorKind::Malformed);
    assert_eq!(open_err(&file(24, 0, 8, 8000, 1, &[], &[])), ErrorKind::Unsupported);
    assert_eq!(open_err(&file(24, 0, 3, 8000, 70000, &[], &[])), ErrorKind::Unsupported);
    assert_eq!(
        open_err(&file(24, 0, 7, 8000, 65535, &[], &[])),
        ErrorKind::LimitExceeded
    );
    assert_eq!(
        open_err(&file(1000, 0, 3, 8000, 1, &[], &[0; 10])),
        ErrorKind::Truncated
    );
    assert_eq!(open_err(b".snd\0\0"), ErrorKind::Truncated);
}

#[test]
fn seek_lands_on_a_packet_start() {
    let b = file(24, 20000, 3, 44100, 2, &[], &[0; 20000]);
    let mut src = SliceSource::new(&b[..]);
    let mut ctx = Context::default();
    let mut d = AuDemuxer::open(&mut src, &mut ctx).unwrap();
    d.seek(&mut src, &mut ctx, 0, 2500).unwrap();
    let p = d.next_packet(&mut src, &mut ctx).unwrap().unwrap();
    assert_eq!((p.pos, p.pts), (Some(24 + 2 * 4096), Some(2048)));
    d.seek(&mut src, &mut ctx, 0, i64::MAX).unwrap();
    let p = d.next_packet(&mut src, &mut ctx).unwrap().unwrap();
    assert_eq!(p.pts, Some(4096));
}
