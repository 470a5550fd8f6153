//! DSDIFF unit tests: files built in code (uncompressed runs, DST frames
//! with odd sizes and CRC chunks between them, a cut file, bad headers,
//! an unsupported compression type, seeking).
#![allow(clippy::unwrap_used, clippy::indexing_slicing, clippy::panic)]

extern crate std;

use std::vec;
use std::vec::Vec;

use super::*;
use crate::error::ErrorKind;
use crate::format::test_drain::drain;
use crate::format::traits::{Context, FormatDemuxer};
use crate::source::SliceSource;
use crate::types::Codec;

/// A chunk: id, 64-bit big-endian size, body, a pad byte when odd.
fn chunk(id: &[u8; 4], body: &[u8]) -> Vec<u8> {
    let mut v = id.to_vec();
    v.extend_from_slice(&(body.len() as u64).to_be_bytes());
    v.extend_from_slice(body);
    if body.len() % 2 == 1 {
        v.push(0);
    }
    v
}

/// A DSDIFF file of `channels` channels, compression `cmpr`, with
/// `sound` as the chunk after PROP.
fn file(channels: u16, cmpr: &[u8; 4], sound: &[u8]) -> Vec<u8> {
    let mut prop = b"SND ".to_vec();
    prop.extend(chunk(b"FS  ", &2_822_400u32.to_be_bytes()));
    let mut chnl = channels.to_be_bytes().to_vec();
    chnl.extend(std::iter::repeat_n(b'x', 4 * usize::from(channels)));
    prop.extend(chunk(b"CHNL", &chnl));
    let mut c = cmpr.to_vec();
    c.extend_from_slice(b"\x03abc");
    prop.extend(chunk(b"CMPR", &c));
    let mut body = b"DSD ".to_vec();
    body.extend(chunk(b"FVER", &0x0105_0000u32.to_be_bytes()));
    body.extend(chunk(b"PROP", &prop));
    body.extend_from_slice(sound);
    chunk(b"FRM8", &body)
}

/// A packet: pos, size, first byte, pts, duration, truncated.
type Pkt = (u64, usize, u8, i64, u64, bool);

fn packets(b: &[u8]) -> (Vec<Pkt>, Option<ErrorKind>) {
    let (p, e) = drain::<DffDemuxer>(b);
    let p = p
        .into_iter()
        .map(|(pos, d, pts, dur, cut)| (pos, d.len(), d[0], pts, dur, cut));
    (p.collect(), e)
}

#[test]
fn uncompressed_sound_is_runs_of_8192_bytes_a_channel() {
    let data = vec![7u8; 2 * 8192 + 100];
    let b = file(2, b"DSD ", &chunk(b"DSD ", &data));
    let start = b.len() as u64 - data.len() as u64;
    let (p, e) = packets(&b);
    assert_eq!(e, None);
    assert_eq!(
        p,
        vec![
            (start, 16384, 7, 0, 8192, false),
            (start + 16384, 100, 7, 8192, 50, false)
        ]
    );
    let mut ctx = Context::default();
    DffDemuxer::open(&mut SliceSource::new(&b), &mut ctx).unwrap();
    let t = &ctx.tracks[0];
    assert_eq!((t.codec, t.sample_rate, t.channels), (Codec::DsdMsbf, 352_800, 2));
    assert_eq!(t.duration, Some((2 * 8192 + 100) / 2));
}

#[test]
fn dst_frames_are_the_dstf_chunks() {
    let mut sound = chunk(b"FRTE", &[0, 0, 0, 2, 0, 75]);
    let frame0 = chunk(b"DSTF", &[1u8; 5]);
    let crc = chunk(b"DSTC", &[0; 4]);
    let frame1 = chunk(b"DSTF", &[2u8; 8]);
    let at0 = sound.len() as u64;
    sound.extend(&frame0);
    sound.extend(&crc);
    let at1 = sound.len() as u64;
    sound.extend(&frame1);
    let b = file(2, b"DST ", &chunk(b"DST ", &sound));
    let base = b.len() as u64 - sound.len() as u64;
    let (p, e) = packets(&b);
    assert_eq!(e, None);
    // pos is the DSTF chunk's, as ffprobe gives it; 352800 / 75 ticks.
    assert_eq!(
        p,
        vec![
            (base + at0, 5, 1, 0, 4704, false),
            (base + at1, 8, 2, 4704, 4704, false)
        ]
    );
    let mut ctx = Context::default();
    DffDemuxer::open(&mut SliceSource::new(&b), &mut ctx).unwrap();
    assert_eq!(
        (ctx.tracks[0].codec, ctx.tracks[0].duration),
        (Codec::Dst, Some(2 * 4704))
    );
}

#[test]
fn a_cut_file_gives_a_short_packet_then_an_error() {
    let data = vec![7u8; 2 * 8192 + 100];
    let mut b = file(2, b"DSD ", &chunk(b"DSD ", &data));
    b.truncate(b.len() - 8192 - 100);
    let (p, e) = packets(&b);
    assert_eq!((p.len(), p[0].1, p[0].5), (1, 8192, true));
    assert_eq!(e, Some(ErrorKind::Truncated));
}

#[test]
fn bad_headers_are_errors() {
    let open = |b: &[u8]| DffDemuxer::open(&mut SliceSource::new(b), &mut Context::default()).map(|_| ());
    let sound = chunk(b"DSD ", &[0; 64]);
    assert_eq!(
        open(&file(2, b"FOO ", &sound)).unwrap_err().kind(),
        ErrorKind::Unsupported
    );
    assert_eq!(
        open(&file(0, b"DSD ", &sound)).unwrap_err().kind(),
        ErrorKind::Malformed
    );
    // No sound data chunk.
    assert_eq!(
        open(&file(2, b"DSD ", &chunk(b"COMT", &[0; 4]))).unwrap_err().kind(),
        ErrorKind::Malformed
    );
    let mut b = file(2, b"DSD ", &sound);
    b[12] = b'X';
    assert_eq!(open(&b).unwrap_err().kind(), ErrorKind::Malformed);
}

#[test]
fn seek_lands_on_a_run() {
    let data = vec![7u8; 3 * 8192];
    let b = file(1, b"DSD ", &chunk(b"DSD ", &data));
    let start = b.len() as u64 - data.len() as u64;
    let mut src = SliceSource::new(&b[..]);
    let mut ctx = Context::default();
    let mut d = DffDemuxer::open(&mut src, &mut ctx).unwrap();
    d.seek(&mut src, &mut ctx, 0, 8192 * 2 + 5).unwrap();
    let p = d.next_packet(&mut src, &mut ctx).unwrap().unwrap();
    assert_eq!((p.pos, p.pts), (Some(start + 2 * 8192), Some(2 * 8192)));
}
