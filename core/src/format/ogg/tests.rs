//! Unit tests for the Ogg demuxer, on streams built in code.

extern crate std;

use std::borrow::ToOwned;
use std::vec;
use std::vec::Vec;

use super::physical::{FLAG_BOS, FLAG_CONTINUED, FLAG_EOS};
use crate::format::xiph::crc::crc32_ogg;
use crate::{Demuxer, ReaderSource, SliceSource, TagScope, TagValue};

/// Appends one page: `segs` lacing values over `body`.
fn page(out: &mut Vec<u8>, flags: u8, granule: u64, serial: u32, seq: u32, segs: &[u8], body: &[u8]) {
    let start = out.len();
    out.extend_from_slice(b"OggS\0");
    out.push(flags);
    out.extend_from_slice(&granule.to_le_bytes());
    out.extend_from_slice(&serial.to_le_bytes());
    out.extend_from_slice(&seq.to_le_bytes());
    out.extend_from_slice(&[0; 4]);
    out.push(segs.len() as u8);
    out.extend_from_slice(segs);
    out.extend_from_slice(body);
    let crc = crc32_ogg(0, &out[start..]);
    out[start + 22..start + 26].copy_from_slice(&crc.to_le_bytes());
}

/// Lacing values for whole packets.
fn lacing(sizes: &[usize]) -> Vec<u8> {
    let mut v = Vec::new();
    for &n in sizes {
        v.extend(std::iter::repeat_n(255u8, n / 255));
        v.push((n % 255) as u8);
    }
    v
}

fn opus_head(pre_skip: u16) -> Vec<u8> {
    let mut h = b"OpusHead\x01\x01".to_vec();
    h.extend_from_slice(&pre_skip.to_le_bytes());
    h.extend_from_slice(&48000u32.to_le_bytes());
    h.extend_from_slice(&(-256i16).to_le_bytes());
    h.push(0);
    h
}

fn opus_tags() -> Vec<u8> {
    let mut t = b"OpusTags".to_vec();
    t.extend_from_slice(&1u32.to_le_bytes());
    t.push(b'v');
    t.extend_from_slice(&2u32.to_le_bytes());
    for c in [&b"TITLE=Ogg test"[..], b"TRACKNUMBER=7"] {
        t.extend_from_slice(&(c.len() as u32).to_le_bytes());
        t.extend_from_slice(c);
    }
    t
}

/// An Opus packet of one 20 ms CELT frame (TOC 0xF8) and `len - 1` bytes.
fn opus_packet(len: usize, fill: u8) -> Vec<u8> {
    let mut p = vec![fill; len];
    p[0] = 0xF8;
    p
}

/// Head, tags, then a page with three packets of which the last continues
/// on the next page, which ends the stream with one more packet.
fn opus_file() -> (Vec<u8>, Vec<Vec<u8>>) {
    let mut f = Vec::new();
    let serial = 0x1234;
    let head = opus_head(312);
    page(&mut f, FLAG_BOS, 0, serial, 0, &lacing(&[head.len()]), &head);
    let tags = opus_tags();
    page(&mut f, 0, 0, serial, 1, &lacing(&[tags.len()]), &tags);
    let p = [
        opus_packet(10, 1),
        opus_packet(300, 2),
        opus_packet(600, 3),
        opus_packet(40, 4),
    ];
    // Page 2: packets 0 and 1 whole, the first 510 bytes of packet 2.
    let mut segs = lacing(&[10, 300]);
    segs.extend_from_slice(&[255, 255]);
    let mut body = [&p[0][..], &p[1][..], &p[2][..510]].concat();
    page(&mut f, 0, 2 * 960, serial, 2, &segs, &body);
    // Page 3: the rest of packet 2, then packet 3; 50 samples trimmed.
    segs = vec![90, 40];
    body = [&p[2][510..], &p[3][..]].concat();
    page(&mut f, FLAG_CONTINUED | FLAG_EOS, 4 * 960 - 50, serial, 3, &segs, &body);
    (f, p.to_vec())
}

#[test]
fn opus_packets_timing_tags_and_headers() {
    let (f, want) = opus_file();
    let mut scratch = vec![0u8; 4096];
    let mut d = Demuxer::open(SliceSource::with_scratch(&f, &mut scratch), None).unwrap();
    let t = &d.tracks()[0];
    assert_eq!(t.codec.ffmpeg_name(), "opus");
    assert_eq!((t.sample_rate, t.channels, t.time_base.den), (48000, 1, 48000));
    assert_eq!(t.duration, Some(4 * 960 - 50));
    let head = super::OpusHead::parse(d.codec_config(0).unwrap()).unwrap();
    assert_eq!((head.pre_skip, head.output_gain), (312, -256));
    assert_eq!(d.header_packet(0, 1).unwrap().unwrap(), &opus_tags()[..]);
    let mut got = Vec::new();
    while let Some(p) = d.next_packet().unwrap() {
        got.push((p.data.to_vec(), p.pts, p.duration, p.contiguous, p.flags.keyframe));
    }
    assert_eq!(got.len(), 4);
    for (g, w) in got.iter().zip(&want) {
        assert_eq!(&g.0, w);
    }
    // pts from the granule minus pre-skip; the packet spanning pages is
    // joined in scratch; the last one is trimmed to the final granule.
    let timing: Vec<_> = got.iter().map(|g| (g.1, g.2, g.3)).collect();
    assert_eq!(
        timing,
        [
            (Some(-312), Some(960), true),
            (Some(648), Some(960), true),
            (Some(1608), Some(960), false),
            (Some(2568), Some(910), true),
        ]
    );
    assert!(got.iter().all(|g| g.4));
    let mut tags = Vec::new();
    while let Some(t) = d.next_tag().unwrap() {
        let TagValue::Text(v) = t.value else { panic!("text") };
        tags.push((t.scope, t.name, v.to_owned()));
    }
    assert_eq!(
        tags,
        [
            (TagScope::Track(0), Some("title"), "Ogg test".to_owned()),
            (TagScope::Track(0), Some("track"), "7".to_owned())
        ]
    );
}

#[test]
fn reader_mode_gives_the_same_packets() {
    let (f, want) = opus_file();
    let src = ReaderSource::<_, _, 4>::with_blocks(embedded_io_cursor(&f), [0u8; 2048]).unwrap();
    let mut d = Demuxer::open(src, None).unwrap();
    let mut n = 0;
    while let Some(p) = d.next_packet().unwrap() {
        assert_eq!(p.data, &want[n][..]);
        n += 1;
    }
    assert_eq!(n, 4);
}

#[test]
fn a_page_with_a_bad_crc_is_skipped() {
    let (mut f, _) = opus_file();
    // Damage a payload byte of the third page (the first data page).
    let third = find_page(&f, 2);
    f[third + 40] ^= 0x80;
    let mut scratch = vec![0u8; 4096];
    let mut d = Demuxer::open(SliceSource::with_scratch(&f, &mut scratch), None).unwrap();
    let mut sizes = Vec::new();
    while let Some(p) = d.next_packet().unwrap() {
        sizes.push(p.data.len());
    }
    // The lost page takes packets 0, 1 and the start of 2 with it; the
    // continuation is dropped as ffmpeg drops it.
    assert_eq!(sizes, [40]);
    if !cfg!(fuzzing) {
        assert!(d.diagnostics().contains("ogg.crc-mismatch"));
    }
}

#[test]
fn garbage_between_pages_is_skipped() {
    let (f, want) = opus_file();
    let third = find_page(&f, 2);
    let mut g = f[..third].to_vec();
    g.extend_from_slice(b"some garbage OggS that is not a page");
    g.extend_from_slice(&f[third..]);
    let mut scratch = vec![0u8; 4096];
    let mut d = Demuxer::open(SliceSource::with_scratch(&g, &mut scratch), None).unwrap();
    let mut n = 0;
    while let Some(p) = d.next_packet().unwrap() {
        assert_eq!(p.data, &want[n][..]);
        n += 1;
    }
    assert_eq!(n, 4);
    assert!(d.diagnostics().contains("ogg.resync"));
}

#[test]
fn a_cut_page_ends_with_a_truncation_error() {
    let (f, _) = opus_file();
    let mut scratch = vec![0u8; 4096];
    let mut d = Demuxer::open(SliceSource::with_scratch(&f[..f.len() - 10], &mut scratch), None).unwrap();
    assert_eq!(d.next_packet().unwrap().unwrap().data.len(), 10);
    assert_eq!(d.next_packet().unwrap().unwrap().data.len(), 300);
    assert!(d.next_packet().unwrap_err().is_truncation());
}

#[test]
fn no_scratch_for_a_spanning_packet_is_a_clear_error() {
    let (f, _) = opus_file();
    let mut d = Demuxer::open(SliceSource::new(&f), None).unwrap();
    d.next_packet().unwrap();
    d.next_packet().unwrap();
    let e = d.next_packet().unwrap_err();
    assert_eq!(e.kind(), crate::ErrorKind::ScratchTooSmall);
}

#[test]
fn multiplexed_streams_and_a_chain() {
    let mut f = Vec::new();
    let head = opus_head(0);
    let tags = opus_tags();
    // Two Opus streams, interleaved.
    for s in [1u32, 2] {
        page(&mut f, FLAG_BOS, 0, s, 0, &lacing(&[head.len()]), &head);
    }
    for s in [1u32, 2] {
        page(&mut f, 0, 0, s, 1, &lacing(&[tags.len()]), &tags);
    }
    let a = opus_packet(20, 9);
    for s in [1u32, 2] {
        page(&mut f, FLAG_EOS, 960, s, 2, &lacing(&[20]), &a);
    }
    let mut scratch = vec![0u8; 4096];
    let mut d = Demuxer::open(SliceSource::with_scratch(&f, &mut scratch), None).unwrap();
    assert_eq!(d.tracks().len(), 2);
    assert_eq!((d.tracks()[0].id, d.tracks()[1].id), (1, 2));
    let mut tracks = Vec::new();
    while let Some(p) = d.next_packet().unwrap() {
        tracks.push((p.track, p.pts));
    }
    assert_eq!(tracks, [(0, Some(0)), (1, Some(0))]);

    // A single stream followed by another link of the same codec: one
    // track, as ffmpeg chains them; the second link's headers are headers.
    let mut c = Vec::new();
    for (s, g) in [(5u32, 960u64), (6, 1920)] {
        c.extend_from_slice(&{
            let mut l = Vec::new();
            page(&mut l, FLAG_BOS, 0, s, 0, &lacing(&[head.len()]), &head);
            page(&mut l, 0, 0, s, 1, &lacing(&[tags.len()]), &tags);
            page(&mut l, FLAG_EOS, g, s, 2, &lacing(&[20]), &a);
            l
        });
    }
    let mut d = Demuxer::open(SliceSource::with_scratch(&c, &mut scratch), None).unwrap();
    assert_eq!(d.tracks().len(), 1);
    let mut n = 0;
    while let Some(p) = d.next_packet().unwrap() {
        assert_eq!(p.data.len(), 20);
        n += 1;
    }
    assert_eq!(n, 2);
    assert!(d.diagnostics().contains("ogg.chained"));
}

/// An Opus stream whose one data packet spans 13 pages, another stream's
/// page in between (more pieces than are remembered: a walk finds them),
/// then a packet over two pages (pieces remembered); and those packets.
fn spanning_file() -> (Vec<u8>, Vec<u8>, Vec<u8>) {
    let mut f = Vec::new();
    let head = opus_head(0);
    let tags = opus_tags();
    page(&mut f, FLAG_BOS, 0, 3, 0, &lacing(&[head.len()]), &head);
    page(&mut f, 0, 0, 3, 1, &lacing(&[tags.len()]), &tags);
    let big = opus_packet(12 * 255 + 7, 0x5A);
    // Another stream's page in between must be stepped over.
    let mut other = Vec::new();
    page(&mut other, FLAG_BOS, 0, 99, 0, &[4], b"abcd");
    for k in 0..12 {
        let flags = if k == 0 { 0 } else { FLAG_CONTINUED };
        page(
            &mut f,
            flags,
            u64::MAX,
            3,
            2 + k,
            &[255],
            &big[k as usize * 255..(k as usize + 1) * 255],
        );
        if k == 5 {
            f.extend_from_slice(&other);
        }
    }
    let two = opus_packet(300, 0x33);
    page(
        &mut f,
        FLAG_CONTINUED,
        960,
        3,
        14,
        &[7, 255],
        &[&big[12 * 255..], &two[..255]].concat(),
    );
    page(&mut f, FLAG_CONTINUED | FLAG_EOS, 1920, 3, 15, &[45], &two[255..]);
    (f, big, two)
}

#[test]
fn a_packet_over_many_pages_is_walked() {
    let (f, big, two) = spanning_file();
    let mut scratch = vec![0u8; 8192];
    let mut d = Demuxer::open(SliceSource::with_scratch(&f, &mut scratch), None).unwrap();
    let p = d.next_packet().unwrap().unwrap();
    assert_eq!(p.data, &big[..]);
    assert!(!p.contiguous);
    let p = d.next_packet().unwrap().unwrap();
    assert_eq!(p.data, &two[..]);
    assert!(d.next_packet().unwrap().is_none());
}

/// Packets across pages come in pieces of the input, one per page body
/// run, in order: the walked one (13 pieces) and the remembered one (2),
/// through a slice and through a reader of small blocks.
#[cfg(feature = "ogg-pieces")]
#[test]
fn packets_across_pages_come_in_pieces() {
    let (f, big, two) = spanning_file();
    let check = |got: Vec<(Vec<u8>, bool, usize)>| {
        assert_eq!(got.len(), 2);
        for ((bytes, scattered, n), (want, pieces)) in got.iter().zip([(&big, 13), (&two, 2)]) {
            assert!(*scattered);
            assert_eq!(*n, pieces);
            assert_eq!(bytes, want);
        }
    };
    fn pull<S: crate::Source>(mut d: Demuxer<S>, input: &[u8]) -> Vec<(Vec<u8>, bool, usize)> {
        let mut out = Vec::new();
        while let Some(mut p) = d.next_packet_pieces().unwrap() {
            let (scattered, len) = (p.is_scattered(), p.len());
            let (mut bytes, mut n) = (Vec::new(), 0);
            while let Some(piece) = p.next_piece().unwrap() {
                // Each piece is a run of the input.
                assert!(input.windows(piece.len()).any(|w| w == piece));
                bytes.extend_from_slice(piece);
                n += 1;
            }
            assert_eq!(bytes.len(), len);
            out.push((bytes, scattered, n));
        }
        out
    }
    let mut scratch = vec![0u8; 8192];
    check(pull(
        Demuxer::open(SliceSource::with_scratch(&f, &mut scratch), None).unwrap(),
        &f,
    ));
    let src = ReaderSource::<_, _, 4>::with_blocks(embedded_io_cursor(&f), [0u8; 2048]).unwrap();
    check(pull(Demuxer::open(src, None).unwrap(), &f));
}

/// Offset of the `n`th page.
fn find_page(f: &[u8], n: usize) -> usize {
    let mut at = 0;
    for _ in 0..n {
        let segs = f[at + 26] as usize;
        let body: usize = f[at + 27..at + 27 + segs].iter().map(|&s| s as usize).sum();
        at += 27 + segs + body;
    }
    at
}

/// A minimal seekable reader over a byte slice.
struct Cursor<'a> {
    data: &'a [u8],
    pos: usize,
}

fn embedded_io_cursor(data: &[u8]) -> Cursor<'_> {
    Cursor { data, pos: 0 }
}

impl embedded_io::ErrorType for Cursor<'_> {
    type Error = embedded_io::ErrorKind;
}

impl embedded_io::Read for Cursor<'_> {
    fn read(&mut self, buf: &mut [u8]) -> Result<usize, Self::Error> {
        let rest = &self.data[self.pos.min(self.data.len())..];
        let n = rest.len().min(buf.len());
        buf[..n].copy_from_slice(&rest[..n]);
        self.pos += n;
        Ok(n)
    }
}

impl embedded_io::Seek for Cursor<'_> {
    fn seek(&mut self, pos: embedded_io::SeekFrom) -> Result<u64, Self::Error> {
        self.pos = match pos {
            embedded_io::SeekFrom::Start(n) => n as usize,
            embedded_io::SeekFrom::End(n) => (self.data.len() as i64 + n) as usize,
            embedded_io::SeekFrom::Current(n) => (self.pos as i64 + n) as usize,
        };
        Ok(self.pos as u64)
    }
}

/// `data` in base64 (RFC 4648 §4), padded.
#[cfg(feature = "ogg-pictures")]
fn to_base64(data: &[u8]) -> Vec<u8> {
    const A: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = Vec::new();
    let (mut acc, mut bits) = (0u32, 0u32);
    for &b in data {
        acc = acc << 8 | u32::from(b);
        bits += 8;
        while bits >= 6 {
            bits -= 6;
            out.push(A[(acc >> bits & 63) as usize]);
        }
    }
    if bits > 0 {
        out.push(A[(acc << (6 - bits) & 63) as usize]);
    }
    while out.len() % 4 != 0 {
        out.push(b'=');
    }
    out
}

/// A comment entry `METADATA_BLOCK_PICTURE=` with a PICTURE block (RFC 9639
/// §8.8) of type `kind` around `image`.
#[cfg(feature = "ogg-pictures")]
fn picture_entry(kind: u32, mime: &str, desc: &str, image: &[u8]) -> Vec<u8> {
    let mut b = kind.to_be_bytes().to_vec();
    for s in [mime, desc] {
        b.extend_from_slice(&(s.len() as u32).to_be_bytes());
        b.extend_from_slice(s.as_bytes());
    }
    b.extend_from_slice(&[0; 16]); // width, height, depth, colours: unknown
    b.extend_from_slice(&(image.len() as u32).to_be_bytes());
    b.extend_from_slice(image);
    [&b"METADATA_BLOCK_PICTURE="[..], &to_base64(&b)].concat()
}

/// An Opus stream whose `OpusTags` hold a title, a picture entry of broken
/// base64 and a PNG cover long enough that the comment packet spans two
/// pages (the page boundary falls inside its base64), then two audio
/// packets.
#[cfg(feature = "ogg-pictures")]
#[test]
fn a_picture_comment_is_an_attached_picture_track() {
    let mut png = b"\x89PNG\r\n\x1a\n\0\0\0\x0dIHDR".to_vec();
    png.extend_from_slice(&[0, 0, 0, 40, 0, 0, 0, 30, 8, 2, 0, 0, 0, 0, 0, 0, 0]);
    png.extend((0..60_000u32).map(|i| (i * 7 % 251) as u8));
    let mut tags = b"OpusTags\x01\0\0\0v".to_vec();
    let entries = [
        b"TITLE=Song".to_vec(),
        b"METADATA_BLOCK_PICTURE=AAAA!AAA".to_vec(),
        picture_entry(3, "image/png", "Front", &png),
    ];
    tags.extend_from_slice(&(entries.len() as u32).to_le_bytes());
    for e in &entries {
        tags.extend_from_slice(&(e.len() as u32).to_le_bytes());
        tags.extend_from_slice(e);
    }
    let mut f = Vec::new();
    let serial = 7;
    let head = opus_head(0);
    page(&mut f, FLAG_BOS, 0, serial, 0, &lacing(&[head.len()]), &head);
    let segs = lacing(&[tags.len()]);
    let cut = 255 * 250;
    assert!(tags.len() > cut);
    page(&mut f, 0, 0, serial, 1, &segs[..250], &tags[..cut]);
    page(&mut f, FLAG_CONTINUED, 0, serial, 2, &segs[250..], &tags[cut..]);
    let audio = [opus_packet(20, 1), opus_packet(30, 2)];
    let body = [&audio[0][..], &audio[1][..]].concat();
    page(&mut f, FLAG_EOS, 2 * 960, serial, 3, &lacing(&[20, 30]), &body);

    let mut scratch = vec![0u8; 128 << 10];
    let mut d = Demuxer::open(SliceSource::with_scratch(&f, &mut scratch), None).unwrap();
    assert_eq!(d.tracks().len(), 2);
    let t = &d.tracks()[1];
    assert_eq!(t.codec.ffmpeg_name(), "png");
    assert!(t.attached_picture);
    assert_eq!((t.width, t.height, t.time_base.den), (40, 30, 90000));
    assert!(d.diagnostics().contains("ogg.bad-picture"));
    let mut got = Vec::new();
    while let Some(p) = d.next_packet().unwrap() {
        got.push((p.track, p.data.to_vec(), p.pts, p.pos, p.flags.keyframe));
    }
    assert_eq!(got.len(), 3);
    assert_eq!(got[0], (1, png.clone(), None, None, true));
    assert_eq!((got[1].0, &got[1].1), (0, &audio[0]));
    let mut seen = Vec::new();
    while let Some(t) = d.next_tag().unwrap() {
        let TagValue::Text(v) = t.value else { panic!("text") };
        seen.push((t.scope, t.name, v.to_owned()));
    }
    assert_eq!(
        seen,
        [
            (TagScope::Track(0), Some("title"), "Song".to_owned()),
            (TagScope::Track(1), Some("comment"), "Cover (front)".to_owned()),
            (TagScope::Track(1), Some("title"), "Front".to_owned()),
        ]
    );
    // Through a reader, whose scratch also holds the decoded image.
    let src = ReaderSource::<_, _, 4>::with_blocks(embedded_io_cursor(&f), vec![0u8; 96 << 10]).unwrap();
    let mut d = Demuxer::open(src, None).unwrap();
    let p = d.next_packet().unwrap().unwrap();
    assert_eq!((p.track, p.data), (1, &png[..]));
    // A scratch too small for the image: no picture track.
    let mut small = vec![0u8; 4096];
    let d = Demuxer::open(SliceSource::with_scratch(&f, &mut small), None).unwrap();
    assert_eq!(d.tracks().len(), 1);
    assert!(d.diagnostics().contains("ogg.picture-too-large"));
}
