//! Unit tests of the ASF demuxer over files built here: fragmented and
//! compressed payloads, truncation, audio spread and the Index Object.

extern crate std;
use super::guids::{self, Guid};
use super::AsfDemuxer;
use crate::error::Error;
use crate::format::traits::{Context, FormatDemuxer};
use crate::signature::ASF_HEADER_GUID;
use crate::{Demuxer, SliceSource};
use std::vec::Vec;

const PACKET: usize = 96;

fn obj(g: Guid, body: &[u8]) -> Vec<u8> {
    let mut v = Vec::from(g);
    v.extend_from_slice(&((body.len() + 24) as u64).to_le_bytes());
    v.extend_from_slice(body);
    v
}

/// An audio stream with audio spread error correction data (§9.1.1).
fn spread_props(number: u8, span: u8, packet: u16, chunk: u16) -> Vec<u8> {
    let mut o = stream_props(number, false);
    // Append the 8 bytes of error correction data and fix the sizes.
    o.extend_from_slice(&[span]);
    o.extend_from_slice(&packet.to_le_bytes());
    o.extend_from_slice(&chunk.to_le_bytes());
    o.extend_from_slice(&[0, 0, 0]);
    let size = o.len() as u64;
    o[16..24].copy_from_slice(&size.to_le_bytes());
    o[24 + 44..24 + 48].copy_from_slice(&8u32.to_le_bytes());
    o
}

fn stream_props(number: u8, video: bool) -> Vec<u8> {
    let mut b = Vec::new();
    b.extend_from_slice(&if video { guids::VIDEO_MEDIA } else { guids::AUDIO_MEDIA });
    b.extend_from_slice(&[0; 16]); // error correction type
    b.extend_from_slice(&0u64.to_le_bytes());
    let ts: Vec<u8> = if video {
        let mut t = Vec::new();
        t.extend_from_slice(&32u32.to_le_bytes());
        t.extend_from_slice(&16u32.to_le_bytes());
        t.push(2);
        t.extend_from_slice(&40u16.to_le_bytes());
        t.extend_from_slice(&40u32.to_le_bytes());
        t.extend_from_slice(&32u32.to_le_bytes());
        t.extend_from_slice(&16u32.to_le_bytes());
        t.extend_from_slice(&1u16.to_le_bytes());
        t.extend_from_slice(&24u16.to_le_bytes());
        t.extend_from_slice(b"WMV2");
        t.extend_from_slice(&[0; 20]);
        t
    } else {
        let mut t = Vec::new();
        t.extend_from_slice(&0x161u16.to_le_bytes());
        t.extend_from_slice(&2u16.to_le_bytes());
        t.extend_from_slice(&44100u32.to_le_bytes());
        t.extend_from_slice(&16000u32.to_le_bytes());
        t.extend_from_slice(&743u16.to_le_bytes());
        t.extend_from_slice(&16u16.to_le_bytes());
        t.extend_from_slice(&0u16.to_le_bytes());
        t
    };
    b.extend_from_slice(&(ts.len() as u32).to_le_bytes());
    b.extend_from_slice(&0u32.to_le_bytes());
    b.extend_from_slice(&(number as u16).to_le_bytes());
    b.extend_from_slice(&0u32.to_le_bytes());
    b.extend_from_slice(&ts);
    obj(guids::STREAM_PROPERTIES, &b)
}

/// A payload of a multiple-payload packet (property byte 0x5D: BYTE
/// stream, BYTE object number, DWORD offset, BYTE replicated length;
/// WORD payload lengths).
struct Pl<'a> {
    stream: u8,
    key: bool,
    obj: u8,
    off: u32,
    obj_size: u32,
    time: u32,
    data: &'a [u8],
}

fn packet(payloads: &[Pl]) -> Vec<u8> {
    let mut p = std::vec![0x82, 0, 0]; // error correction: 2 bytes
    p.push(0x01 | (2 << 3)); // multiple payloads, WORD padding
    p.push(0x5D);
    let pad_at = p.len();
    p.extend_from_slice(&0u16.to_le_bytes());
    p.extend_from_slice(&1000u32.to_le_bytes());
    p.extend_from_slice(&0u16.to_le_bytes());
    p.push(0x80 | payloads.len() as u8);
    for pl in payloads {
        p.push(pl.stream | if pl.key { 0x80 } else { 0 });
        p.push(pl.obj);
        p.extend_from_slice(&pl.off.to_le_bytes());
        p.push(8);
        p.extend_from_slice(&pl.obj_size.to_le_bytes());
        p.extend_from_slice(&pl.time.to_le_bytes());
        p.extend_from_slice(&(pl.data.len() as u16).to_le_bytes());
        p.extend_from_slice(pl.data);
    }
    assert!(p.len() <= PACKET);
    let pad = (PACKET - p.len()) as u16;
    p[pad_at..pad_at + 2].copy_from_slice(&pad.to_le_bytes());
    p.resize(PACKET, 0);
    p
}

/// A packet with one compressed payload (§5.2.3.3) of `subs`.
fn compressed(stream: u8, time: u32, delta: u8, subs: &[&[u8]]) -> Vec<u8> {
    let mut p = std::vec![0x01 | (2 << 3), 0x5D]; // no error correction data
    let pad_at = p.len();
    p.extend_from_slice(&0u16.to_le_bytes());
    p.extend_from_slice(&1000u32.to_le_bytes());
    p.extend_from_slice(&0u16.to_le_bytes());
    p.push(0x81);
    p.push(stream | 0x80);
    p.push(0);
    p.extend_from_slice(&time.to_le_bytes());
    p.push(1);
    p.push(delta);
    let total: usize = subs.iter().map(|s| s.len() + 1).sum();
    p.extend_from_slice(&(total as u16).to_le_bytes());
    for s in subs {
        p.push(s.len() as u8);
        p.extend_from_slice(s);
    }
    let pad = (PACKET - p.len()) as u16;
    p[pad_at..pad_at + 2].copy_from_slice(&pad.to_le_bytes());
    p.resize(PACKET, 0);
    p
}

fn file(streams: &[Vec<u8>], packets: &[Vec<u8>]) -> Vec<u8> {
    let mut fp = Vec::new();
    fp.extend_from_slice(&[0; 16]);
    fp.extend_from_slice(&0u64.to_le_bytes()); // file size: unknown
    fp.extend_from_slice(&0u64.to_le_bytes());
    fp.extend_from_slice(&(packets.len() as u64).to_le_bytes());
    fp.extend_from_slice(&(10_000_000u64 * 4).to_le_bytes());
    fp.extend_from_slice(&0u64.to_le_bytes());
    fp.extend_from_slice(&1000u64.to_le_bytes()); // preroll
    fp.extend_from_slice(&2u32.to_le_bytes());
    fp.extend_from_slice(&(PACKET as u32).to_le_bytes());
    fp.extend_from_slice(&(PACKET as u32).to_le_bytes());
    fp.extend_from_slice(&128_000u32.to_le_bytes());
    let mut children = obj(guids::FILE_PROPERTIES, &fp);
    for s in streams {
        children.extend_from_slice(s);
    }
    let mut f = Vec::from(ASF_HEADER_GUID);
    f.extend_from_slice(&((30 + children.len()) as u64).to_le_bytes());
    f.extend_from_slice(&(1 + streams.len() as u32).to_le_bytes());
    f.extend_from_slice(&[1, 2]);
    f.extend_from_slice(&children);
    let mut data = Vec::from(guids::DATA);
    data.extend_from_slice(&((50 + packets.len() * PACKET) as u64).to_le_bytes());
    data.extend_from_slice(&[0; 16]);
    data.extend_from_slice(&(packets.len() as u64).to_le_bytes());
    data.extend_from_slice(&[1, 1]);
    for p in packets {
        data.extend_from_slice(p);
    }
    f.extend_from_slice(&data);
    f
}

type Got = Vec<(usize, Option<i64>, bool, bool, Vec<u8>)>;

fn pull(f: &[u8]) -> (Got, Option<Error>) {
    let mut scratch = std::vec![0u8; 4096];
    let mut d = Demuxer::open(SliceSource::with_scratch(f, &mut scratch), None).unwrap();
    let mut out = Vec::new();
    let err = loop {
        match d.next_packet() {
            Ok(Some(p)) => out.push((p.track, p.pts, p.flags.keyframe, p.contiguous, p.data.to_vec())),
            Ok(None) => break None,
            Err(e) => break Some(e),
        }
    };
    (out, err)
}

#[test]
fn object_in_many_fragments_is_joined() {
    // A 100-byte video object in 10 fragments, one per packet, with an
    // audio payload in between: more fragments than the table holds.
    let obj: Vec<u8> = (0..100u8).collect();
    let audio = [7u8; 12];
    let mut packets = Vec::new();
    for i in 0..10u32 {
        let frag = Pl {
            stream: 1,
            key: true,
            obj: 3,
            off: i * 10,
            obj_size: 100,
            time: 1040,
            data: &obj[(i * 10) as usize..(i * 10 + 10) as usize],
        };
        if i == 4 {
            let a = Pl {
                stream: 2,
                key: false,
                obj: 0,
                off: 0,
                obj_size: 12,
                time: 1000,
                data: &audio,
            };
            packets.push(packet(&[a, frag]));
        } else {
            packets.push(packet(&[frag]));
        }
    }
    let f = file(&[stream_props(1, true), stream_props(2, false)], &packets);
    let (got, err) = pull(&f);
    assert!(err.is_none());
    assert_eq!(got.len(), 2);
    // The audio object completes first; audio is always a key frame.
    assert_eq!(got[0], (1, Some(0), true, true, audio.to_vec()));
    assert_eq!(got[1], (0, Some(40), true, false, obj));
}

#[test]
fn compressed_payload_gives_one_packet_per_sub_payload() {
    let packets = [compressed(1, 1100, 20, &[&[1, 2, 3, 4, 5, 6, 7], &[8; 9], &[9; 7]])];
    let f = file(&[stream_props(1, false)], &packets);
    let (got, err) = pull(&f);
    assert!(err.is_none());
    let pts: Vec<_> = got.iter().map(|g| g.1).collect();
    assert_eq!(pts, [Some(100), Some(120), Some(140)]);
    assert_eq!(got[1].4, [8; 9]);
    assert!(got.iter().all(|g| g.3));
}

#[test]
fn cut_object_is_delivered_short_then_truncation() {
    let obj = [5u8; 30];
    let p = packet(&[Pl {
        stream: 1,
        key: true,
        obj: 0,
        off: 0,
        obj_size: 30,
        time: 1000,
        data: &obj,
    }]);
    let f = file(&[stream_props(1, false)], &[p]);
    let cut = f.len() - PACKET + 40; // inside the payload
    let mut scratch = std::vec![0u8; 4096];
    let mut d = Demuxer::open(SliceSource::with_scratch(&f[..cut], &mut scratch), None).unwrap();
    let p = d.next_packet().unwrap().unwrap();
    assert!(p.flags.truncated && p.contiguous && p.data.len() < 30);
    assert!(d.next_packet().unwrap_err().is_truncation());
}

#[test]
fn audio_spread_is_undone() {
    // Span 2, virtual packets of 8 bytes, chunks of 4: output chunks are
    // source chunks 0, 2, 1, 3.
    let obj: Vec<u8> = (0..16u8).collect();
    let want: Vec<u8> = [0..4, 8..12, 4..8, 12..16]
        .into_iter()
        .flat_map(|r| obj[r].to_vec())
        .collect();
    let whole = packet(&[Pl {
        stream: 1,
        key: true,
        obj: 0,
        off: 0,
        obj_size: 16,
        time: 1000,
        data: &obj,
    }]);
    let halves: Vec<Vec<u8>> = (0..2u32)
        .map(|i| {
            packet(&[Pl {
                stream: 1,
                key: true,
                obj: 1,
                off: i * 8,
                obj_size: 16,
                time: 1020,
                data: &obj[(i * 8) as usize..(i * 8 + 8) as usize],
            }])
        })
        .collect();
    let f = file(
        &[spread_props(1, 2, 8, 4)],
        &[whole, halves[0].clone(), halves[1].clone()],
    );
    let (got, err) = pull(&f);
    assert!(err.is_none());
    assert_eq!(got.len(), 2);
    assert_eq!(got[0].4, want);
    assert_eq!(got[1].4, want);
}

#[test]
fn index_object_gives_a_start_packet() {
    let objs: Vec<[u8; 10]> = (0..12u8).map(|i| [i; 10]).collect();
    let packets: Vec<Vec<u8>> = (0..12u32)
        .map(|i| {
            packet(&[Pl {
                stream: 1,
                key: true,
                obj: i as u8,
                off: 0,
                obj_size: 10,
                time: 1000 + i * 100,
                data: &objs[i as usize],
            }])
        })
        .collect();
    let mut f = file(&[stream_props(1, false)], &packets);
    // Index Object (§6.2): 300 ms entries, one specifier, one block.
    let mut ix = Vec::new();
    ix.extend_from_slice(&300u32.to_le_bytes());
    ix.extend_from_slice(&1u16.to_le_bytes());
    ix.extend_from_slice(&1u32.to_le_bytes());
    ix.extend_from_slice(&1u16.to_le_bytes());
    ix.extend_from_slice(&3u16.to_le_bytes());
    ix.extend_from_slice(&4u32.to_le_bytes());
    ix.extend_from_slice(&0u64.to_le_bytes());
    for k in 0..4u32 {
        ix.extend_from_slice(&(k * 3 * PACKET as u32).to_le_bytes());
    }
    f.extend_from_slice(&obj(guids::INDEX, &ix));
    let mut ctx = Context::default();
    let mut src = SliceSource::new(&f);
    let d = AsfDemuxer::open(&mut src, &mut ctx).unwrap();
    let ixr = d.index.unwrap();
    let p = d.index_object_packet(&mut src, ixr, 950).unwrap().unwrap();
    assert_eq!(p, d.lay.data_start + 9 * PACKET as u64);
    let mut scratch = std::vec![0u8; 256];
    let mut dm = Demuxer::open(SliceSource::with_scratch(&f, &mut scratch), None).unwrap();
    dm.seek(0, 950).unwrap();
    assert_eq!(dm.next_packet().unwrap().unwrap().pts, Some(900));
}

#[test]
fn fragment_without_its_start_is_skipped() {
    let obj = [1u8; 20];
    let packets = [
        packet(&[Pl {
            stream: 1,
            key: true,
            obj: 0,
            off: 10,
            obj_size: 20,
            time: 1000,
            data: &obj[10..],
        }]),
        packet(&[Pl {
            stream: 1,
            key: true,
            obj: 1,
            off: 0,
            obj_size: 20,
            time: 1010,
            data: &obj,
        }]),
    ];
    let f = file(&[stream_props(1, false)], &packets);
    let (got, _) = pull(&f);
    assert_eq!(got.len(), 1);
    assert_eq!(got[0].1, Some(10));
}

/// A Header Extension Object (§3.4) holding one Extended Stream Properties
/// Object (§4.1) for `number` that declares `max_object`.
fn max_object_ext(number: u8, max_object: u32) -> Vec<u8> {
    let mut fixed = std::vec![0u8; 64];
    fixed[40..44].copy_from_slice(&max_object.to_le_bytes());
    fixed[48..50].copy_from_slice(&(number as u16).to_le_bytes());
    let esp = obj(guids::EXTENDED_STREAM_PROPERTIES, &fixed);
    let mut b = std::vec![0u8; 16];
    b.extend_from_slice(&6u16.to_le_bytes());
    b.extend_from_slice(&(esp.len() as u32).to_le_bytes());
    b.extend_from_slice(&esp);
    obj(guids::HEADER_EXTENSION, &b)
}

#[test]
fn objects_above_the_declared_maximum_are_skipped() {
    // Stream 1 declares at most 8 bytes an object: a 12-byte object, whole
    // or in two fragments, is skipped (reported); the others are given, and
    // max_packet_size bounds every packet.
    let (small, big) = ([1u8; 8], [2u8; 12]);
    let pl = |obj: u8, off: u32, obj_size: u32, time: u32, data| Pl {
        stream: 1,
        key: true,
        obj,
        off,
        obj_size,
        time,
        data,
    };
    let packets = [
        packet(&[pl(0, 0, 8, 1000, &small)]),
        packet(&[pl(1, 0, 12, 1010, &big)]),
        packet(&[pl(2, 0, 12, 1020, &big[..6])]),
        packet(&[pl(2, 6, 12, 1020, &big[6..])]),
        packet(&[pl(3, 0, 8, 1030, &small)]),
    ];
    let f = file(&[stream_props(1, false), max_object_ext(1, 8)], &packets);
    let mut scratch = std::vec![0u8; 4096];
    let mut d = Demuxer::open(SliceSource::with_scratch(&f, &mut scratch), None).unwrap();
    assert_eq!(d.max_packet_size(), Some(8));
    let mut pts = Vec::new();
    while let Some(p) = d.next_packet().unwrap() {
        assert_eq!(p.data, small);
        pts.push(p.pts);
    }
    assert_eq!(pts, [Some(0), Some(30)]);
    assert_eq!(d.max_packet_size(), Some(8));
    assert!(d
        .diagnostics()
        .iter()
        .any(|(g, _)| g.code == "asf.object-above-declared-maximum"));
}

/// With `asf-pieces`: an object whose fragments arrived in order comes in
/// pieces of the input, one per fragment; an object out of order, and one
/// in more fragments than are kept, come whole, joined as `next_packet`
/// joins them. The bytes are `next_packet`'s in every case.
#[cfg(feature = "asf-pieces")]
#[test]
fn objects_in_order_come_in_pieces() {
    let a: Vec<u8> = (0..60u8).collect();
    let b: Vec<u8> = (100..140u8).collect();
    let c: Vec<u8> = (0..100u8).map(|x| x ^ 0x55).collect();
    let pl = |obj: u8, off: u32, size: u32, data| Pl {
        stream: 1,
        key: true,
        obj,
        off,
        obj_size: size,
        time: 1040,
        data,
    };
    let mut packets = Vec::new();
    for i in 0..3usize {
        packets.push(packet(&[pl(1, i as u32 * 20, 60, &a[i * 20..i * 20 + 20])]));
    }
    // Out of order: the last half before the second quarter.
    packets.push(packet(&[pl(2, 0, 40, &b[..10])]));
    packets.push(packet(&[pl(2, 20, 40, &b[20..])]));
    packets.push(packet(&[pl(2, 10, 40, &b[10..20])]));
    for i in 0..10usize {
        packets.push(packet(&[pl(3, i as u32 * 10, 100, &c[i * 10..i * 10 + 10])]));
    }
    let f = file(&[stream_props(1, true)], &packets);
    let (joined, err) = pull(&f);
    assert!(err.is_none());
    assert_eq!(joined.len(), 3);
    let mut scratch = std::vec![0u8; 4096];
    let mut d = Demuxer::open(SliceSource::with_scratch(&f, &mut scratch), None).unwrap();
    let mut got = Vec::new();
    while let Some(mut p) = d.next_packet_pieces().unwrap() {
        let (scattered, facts) = (p.is_scattered(), p.packet);
        let (mut bytes, mut n) = (Vec::new(), 0);
        while let Some(piece) = p.next_piece().unwrap() {
            bytes.extend_from_slice(piece);
            n += 1;
        }
        got.push((scattered, n, facts.track, facts.pts, facts.flags.keyframe, bytes));
    }
    let want: Vec<_> = joined
        .iter()
        .zip([(true, 3), (false, 1), (false, 1)])
        .map(|((track, pts, key, _, data), (s, n))| (s, n, *track, *pts, *key, data.clone()))
        .collect();
    assert_eq!(got, want);
    assert_eq!(got[0].5, a);
}
