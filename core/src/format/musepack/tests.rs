//! Musepack unit tests: SV7 streams and SV8 packets built in code (the SV7
//! bit packing and ffmpeg's word-sharing packets, SV8 keys skipped, `SE`,
//! the APEv2 tag as the end, cut inputs, bad headers, seeking).
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
use crate::types::{Codec, Rational};

/// Bits written into 32-bit little-endian words from their top bit.
#[derive(Default)]
struct Bits(Vec<u8>);

impl Bits {
    fn put(&mut self, v: u32, n: u32) {
        for i in (0..n).rev() {
            self.0.push((v >> i & 1) as u8);
        }
    }

    fn words(&self) -> Vec<u8> {
        let mut out = Vec::new();
        for chunk in self.0.chunks(32) {
            let mut w = 0u32;
            for i in 0..32 {
                w = w << 1 | u32::from(chunk.get(i).copied().unwrap_or(0));
            }
            out.extend_from_slice(&w.to_le_bytes());
        }
        out
    }
}

/// An SV7 stream at 48000 Hz of frames of `bits` payload bits (all ones).
fn sv7(bits: &[u32], count: u32) -> Vec<u8> {
    let mut v = b"MP+\x17".to_vec();
    v.extend_from_slice(&count.to_le_bytes());
    v.extend_from_slice(&(1u32 << 16).to_le_bytes());
    v.extend_from_slice(&[0; 12]);
    let mut b = Bits::default();
    b.put(116, 8);
    for &n in bits {
        b.put(n, 20);
        for _ in 0..n {
            b.put(1, 1);
        }
    }
    v.extend(b.words());
    v
}

fn open(b: &[u8]) -> Context {
    let mut ctx = Context::default();
    MusepackDemuxer::open(&mut SliceSource::new(b), &mut ctx).unwrap();
    ctx
}

fn open_err(b: &[u8]) -> ErrorKind {
    MusepackDemuxer::open(&mut SliceSource::new(b), &mut Context::default())
        .unwrap_err()
        .kind()
}

#[test]
fn sv7_frames_are_whole_words_with_ffmpegs_prefix() {
    // Frame 0: bits 8..28 its length, 28..128 its 100 bits: words 24..40.
    // Frame 1 starts at bit 0 of the word at 40 (128 mod 32 = 0): no
    // shared word. Frame 2 starts 20 + 40 = 60 bits after 40, at bit 28 of
    // the word at 44, which both packets hold: its length crosses into the
    // next word.
    let b = sv7(&[100, 40, 10], 3);
    let (p, e) = drain_any::<MusepackDemuxer>(&b);
    assert_eq!(e, None);
    assert_eq!(p.len(), 3);
    let mut want = vec![28, 0, 0, 0];
    want.extend_from_slice(&b[24..40]);
    assert_eq!(p[0], (None, want, Some(0), Some(1), false));
    let mut want = vec![20, 0, 0, 0];
    want.extend_from_slice(&b[40..48]);
    assert_eq!(p[1].1, want);
    // 28 + 20 + 10 = 58 bits from the word at 44: two words.
    let mut want = vec![48, 0, 0, 0];
    want.extend_from_slice(&b[44..52]);
    assert_eq!((p[2].1.clone(), p[2].2), (want, Some(2)));
    let t = &open(&b).tracks[0];
    assert_eq!(
        (t.codec, t.sample_rate, t.channels, t.time_base, t.duration),
        (Codec::Musepack7, 48000, 2, Rational::new(3, 125), Some(3))
    );
}

#[test]
fn sv7_cut_frame_is_not_given() {
    let b = sv7(&[100, 400], 2);
    let (p, e) = drain_any::<MusepackDemuxer>(&b[..b.len() - 8]);
    assert_eq!((p.len(), e), (1, Some(ErrorKind::Truncated)));
}

#[test]
fn sv7_bad_headers_are_refused() {
    let mut b = sv7(&[100], 1);
    b[3] = 0x06;
    assert_eq!(open_err(&b), ErrorKind::Unsupported);
    b[4..8].copy_from_slice(&u32::MAX.to_le_bytes());
    b[3] = 0x07;
    assert_eq!(open_err(&b), ErrorKind::LimitExceeded);
    assert_eq!(open_err(&b[..20]), ErrorKind::Truncated);
}

/// An SV8 packet: key, size as a 1-byte varint (or 2 bytes when `long`),
/// payload.
fn packet(key: &[u8; 2], payload: &[u8]) -> Vec<u8> {
    let mut v = key.to_vec();
    let size = payload.len() + 3;
    if size < 128 {
        v.push(size as u8);
    } else {
        let size = size + 1;
        v.extend_from_slice(&[0x80 | (size >> 7) as u8, (size & 0x7F) as u8]);
    }
    v.extend_from_slice(payload);
    v
}

/// `MPCK`, `SH` (stereo 44100 Hz, 4 frames a packet, 10000 samples), an
/// `RG`, then `rest`.
fn sv8(rest: &[u8]) -> Vec<u8> {
    let mut v = b"MPCK".to_vec();
    let sh = [
        0,
        0,
        0,
        0,
        8,
        0x80 | (10000 >> 7) as u8,
        (10000 & 0x7F) as u8,
        0,
        0x19,
        0x11,
    ];
    v.extend(packet(b"SH", &sh));
    v.extend(packet(b"RG", &[1; 9]));
    v.extend_from_slice(rest);
    v
}

#[test]
fn sv8_audio_packets_are_given_in_place() {
    let mut rest = packet(b"AP", &[1; 20]);
    rest.extend(packet(b"XX", &[0; 5]));
    rest.extend(packet(b"AP", &[2; 200]));
    rest.extend(packet(b"SE", &[]));
    rest.extend(packet(b"AP", &[3; 5]));
    rest.extend(packet(b"SE", &[]));
    let b = sv8(&rest);
    let first = (b.len() - rest.len()) as u64;
    let (p, e) = drain_any::<MusepackDemuxer>(&b);
    assert_eq!(e, None);
    // ffmpeg 5.1 reads on after SE (a chained stream's packets).
    assert_eq!(p.len(), 3);
    assert_eq!(p[0], (Some(first + 3), vec![1; 20], Some(0), Some(1), false));
    assert_eq!(p[1], (Some(first + 23 + 8 + 4), vec![2; 200], Some(1), Some(1), false));
    assert_eq!((p[2].1.clone(), p[2].2), (vec![3; 5], Some(2)));
    // The input may end after SE; an APETAGEX header (whose "AP" would
    // read as a packet key) ends the packets even without its footer.
    for end in [&b"SE\x03"[..], &b"SE\x03APETAGEX\xd0\x07\0\0"[..]] {
        let mut rest = packet(b"AP", &[1; 20]);
        rest.extend_from_slice(end);
        assert_eq!(drain_any::<MusepackDemuxer>(&sv8(&rest)).1, None);
    }
    let t = &open(&b).tracks[0];
    // 1152 × 4 / 44100 = 128/1225; 10000 samples are 2 whole packets.
    assert_eq!(
        (t.codec, t.sample_rate, t.channels, t.time_base, t.duration),
        (Codec::Musepack8, 44100, 2, Rational::new(128, 1225), Some(2))
    );
}

#[test]
fn sv8_a_cut_packet_is_given_up_to_the_cut_and_no_se_is_an_error() {
    let mut rest = packet(b"AP", &[1; 20]);
    rest.extend(packet(b"AP", &[2; 20]));
    let b = sv8(&rest);
    let (p, e) = drain_any::<MusepackDemuxer>(&b[..b.len() - 5]);
    assert_eq!(e, Some(ErrorKind::Truncated));
    assert_eq!((p.len(), p[1].1.len(), p[1].4), (2, 15, true));
    let (p, e) = drain_any::<MusepackDemuxer>(&b);
    assert_eq!((p.len(), e), (2, Some(ErrorKind::Truncated)));
}

#[test]
fn sv8_the_apev2_tag_ends_the_packets_and_gives_the_tags() {
    let mut rest = packet(b"AP", &[1; 20]);
    let mut tag = Vec::new();
    tag.extend_from_slice(&3u32.to_le_bytes());
    tag.extend_from_slice(&[0; 4]);
    tag.extend_from_slice(b"Title\0Mpc");
    let items = tag.len() as u32;
    tag.extend_from_slice(b"APETAGEX");
    for x in [2000u32, items + 32, 1, 0] {
        tag.extend_from_slice(&x.to_le_bytes());
    }
    tag.extend_from_slice(&[0; 8]);
    rest.extend_from_slice(&tag);
    let b = sv8(&rest);
    let (p, e) = drain_any::<MusepackDemuxer>(&b);
    assert_eq!((p.len(), e), (1, None));
    let mut src = SliceSource::new(&b[..]);
    let mut ctx = Context::default();
    let mut d = MusepackDemuxer::open(&mut src, &mut ctx).unwrap();
    let t = d.next_tag(&mut src, &ctx, &mut TagCursor::default()).unwrap().unwrap();
    assert_eq!((t.key, t.value), (TagKey::Text("Title"), TagValue::Text("Mpc")));
}

#[test]
fn sv8_bad_headers_are_refused() {
    // No SH before the end.
    let mut b = b"MPCK".to_vec();
    b.extend(packet(b"RG", &[1; 9]));
    assert_eq!(open_err(&b), ErrorKind::Truncated);
    // A version other than 8.
    let mut b = sv8(&[]);
    b[11] = 7;
    assert_eq!(open_err(&b), ErrorKind::Unsupported);
    // A sample rate index of 4 to 7.
    let mut b = sv8(&[]);
    b[15] = 0x99;
    assert_eq!(open_err(&b), ErrorKind::Malformed);
    // A packet smaller than its header.
    let mut b = b"MPCK".to_vec();
    b.extend_from_slice(b"SH\x02");
    assert_eq!(open_err(&b), ErrorKind::Malformed);
    // A size that never ends.
    let mut b = b"MPCK".to_vec();
    b.extend_from_slice(b"SH");
    b.extend_from_slice(&[0xFF; 12]);
    assert_eq!(open_err(&b), ErrorKind::Malformed);
}

#[test]
fn seeking_walks_to_the_packet_or_frame() {
    let mut rest = Vec::new();
    for i in 0..4u8 {
        rest.extend(packet(b"AP", &[i; 10]));
    }
    rest.extend(packet(b"SE", &[]));
    for b in [sv8(&rest), sv7(&[100, 40, 10, 70], 4)] {
        let mut scratch = vec![0u8; 1 << 16];
        let mut src = SliceSource::with_scratch(&b, &mut scratch);
        let mut ctx = Context::default();
        let mut d = MusepackDemuxer::open(&mut src, &mut ctx).unwrap();
        d.next_packet(&mut src, &mut ctx).unwrap();
        d.seek(&mut src, &mut ctx, 0, 2).unwrap();
        let p = d.next_packet(&mut src, &mut ctx).unwrap().unwrap();
        assert_eq!(p.pts, Some(2));
        let n = p.data.len();
        d.seek(&mut src, &mut ctx, 0, 0).unwrap();
        assert_eq!(d.next_packet(&mut src, &mut ctx).unwrap().unwrap().pts, Some(0));
        assert!(n > 0);
    }
}
