//! Unit tests for the FLV demuxer, on files built in code.

extern crate std;

use super::tag::TagHeader;
use crate::tags::{TagKey, TagValue};
use crate::types::Codec;
use crate::{Demuxer, SliceSource};
use std::vec::Vec;

fn tag(out: &mut Vec<u8>, kind: u8, ts: u32, body: &[u8]) {
    let start = out.len();
    out.push(kind);
    out.extend_from_slice(&(body.len() as u32).to_be_bytes()[1..]);
    out.extend_from_slice(&ts.to_be_bytes()[1..]);
    out.push((ts >> 24) as u8);
    out.extend_from_slice(&[0, 0, 0]);
    out.extend_from_slice(body);
    out.extend_from_slice(&((out.len() - start) as u32).to_be_bytes());
}

fn amf_str(out: &mut Vec<u8>, s: &str) {
    out.extend_from_slice(&(s.len() as u16).to_be_bytes());
    out.extend_from_slice(s.as_bytes());
}

fn header(flags: u8) -> Vec<u8> {
    let mut f = Vec::from(*b"FLV\x01");
    f.push(flags);
    f.extend_from_slice(&9u32.to_be_bytes());
    f.extend_from_slice(&0u32.to_be_bytes());
    f
}

#[test]
fn enhanced_hevc_with_composition_time() {
    let mut f = header(1);
    // SequenceStart (hvcC), then CodedFrames with a cts of 40, then
    // CodedFramesX.
    tag(&mut f, 9, 0, &[0x90, b'h', b'v', b'c', b'1', 1, 2, 3]);
    tag(&mut f, 9, 0, &[0x91, b'h', b'v', b'c', b'1', 0, 0, 40, 0xAA, 0xBB]);
    tag(&mut f, 9, 40, &[0xA3, b'h', b'v', b'c', b'1', 0xCC]);
    let mut d = Demuxer::open(SliceSource::new(&f), None).unwrap();
    assert_eq!(d.tracks()[0].codec, Codec::Hevc);
    assert_eq!(d.tracks()[0].config.unwrap().len, 3);
    let p = d.next_packet().unwrap().unwrap();
    assert_eq!(
        (p.pts, p.dts, p.flags.keyframe, p.data),
        (Some(40), Some(0), true, &[0xAA, 0xBB][..])
    );
    let p = d.next_packet().unwrap().unwrap();
    assert_eq!((p.pts, p.flags.keyframe, p.data), (Some(40), false, &[0xCC][..]));
    assert!(d.next_packet().unwrap().is_none());
}

fn with_metadata() -> (Vec<u8>, u64) {
    let mut f = header(5);
    let mut m = Vec::new();
    m.push(2);
    amf_str(&mut m, "onMetaData");
    m.push(8);
    m.extend_from_slice(&3u32.to_be_bytes());
    amf_str(&mut m, "duration");
    m.push(0);
    m.extend_from_slice(&2.5f64.to_be_bytes());
    amf_str(&mut m, "encoder");
    m.push(2);
    amf_str(&mut m, "Lavf");
    amf_str(&mut m, "keyframes");
    m.push(3);
    amf_str(&mut m, "times");
    m.push(10);
    m.extend_from_slice(&2u32.to_be_bytes());
    for t in [0.0f64, 1.0] {
        m.push(0);
        m.extend_from_slice(&t.to_be_bytes());
    }
    amf_str(&mut m, "filepositions");
    m.push(10);
    m.extend_from_slice(&2u32.to_be_bytes());
    let pos_at = m.len();
    for _ in 0..2 {
        m.push(0);
        m.extend_from_slice(&0f64.to_be_bytes());
    }
    m.extend_from_slice(&[0, 0, 9]);
    m.extend_from_slice(&[0, 0, 9]);
    let meta_at = f.len() + 11;
    tag(&mut f, 18, 0, &m);
    let mut second_key = 0;
    for i in 0..4u32 {
        let key = i % 2 == 0;
        if i == 2 {
            second_key = f.len();
        }
        tag(&mut f, 9, i * 500, &[if key { 0x12 } else { 0x22 }, i as u8]);
        tag(&mut f, 8, i * 500, &[0x2F, 0xFF, i as u8]);
    }
    // Patch the file positions: the first and third video tags.
    let first = 13 + 11 + m.len() + 4;
    for (k, p) in [first, second_key].iter().enumerate() {
        let at = meta_at + pos_at + k * 9 + 1;
        f[at..at + 8].copy_from_slice(&(*p as f64).to_be_bytes());
    }
    (f, second_key as u64)
}

#[test]
fn metadata_tags_and_keyframe_seek() {
    let (f, second_key) = with_metadata();
    let mut d = Demuxer::open(SliceSource::new(&f), None).unwrap();
    assert_eq!(d.info().duration_us, Some(2_500_000));
    assert_eq!(d.tracks().len(), 2);
    let t = d.next_tag().unwrap().unwrap();
    assert_eq!((t.key, t.value), (TagKey::Text("encoder"), TagValue::Text("Lavf")));
    assert!(d.next_tag().unwrap().is_none());
    let mut n = 0;
    while d.next_packet().unwrap().is_some() {
        n += 1;
    }
    assert_eq!(n, 8);
    d.seek(0, 1200).unwrap();
    let p = d.next_packet().unwrap().unwrap();
    assert_eq!((p.track, p.dts, p.pos), (0, Some(1000), Some(second_key + 12)));
    assert!(p.flags.keyframe);
}

#[test]
fn previous_tag_size_mismatch_is_reported() {
    let mut f = header(1);
    tag(&mut f, 9, 0, &[0x12, 1, 2]);
    let n = f.len();
    f[n - 1] ^= 0x55;
    tag(&mut f, 9, 33, &[0x22, 3]);
    let mut d = Demuxer::open(SliceSource::new(&f), None).unwrap();
    while d.next_packet().unwrap().is_some() {}
    assert!(d.diagnostics().contains("flv.previous-tag-size-mismatch"));
}

#[test]
fn aac_sequence_header_is_config() {
    let mut f = header(4);
    tag(&mut f, 8, 0, &[0xAF, 0, 0x12, 0x10]);
    tag(&mut f, 8, 0, &[0xAF, 1, 0x21, 0x22]);
    tag(&mut f, 8, 23, &[0xAF, 0, 0x12, 0x10]);
    tag(&mut f, 8, 23, &[0xAF, 1, 0x23]);
    let mut d = Demuxer::open(SliceSource::new(&f), None).unwrap();
    let t = &d.tracks()[0];
    assert_eq!((t.codec, t.sample_rate, t.channels), (Codec::Aac, 44100, 2));
    assert_eq!(d.codec_config(0).unwrap(), &[0x12, 0x10]);
    let mut sizes = Vec::new();
    while let Some(p) = d.next_packet().unwrap() {
        sizes.push(p.data.len());
    }
    assert_eq!(sizes, [2, 1]);
}

#[test]
fn tag_header_fields() {
    // Filter bit set on a video tag, 0x000102 bytes, timestamp 0x7F030405
    // with the extended byte on top, stream id 0x060708.
    let raw: [u8; 11] = [0x29, 0, 1, 2, 3, 4, 5, 0x7F, 6, 7, 8];
    let h: TagHeader = zerocopy::transmute!(raw);
    assert_eq!(h.tag_type(), 9);
    assert_eq!(h.data_size(), 0x000102);
    assert_eq!(h.timestamp(), 0x7F03_0405);
    assert_eq!(h.stream_id(), 0x060708);
}
