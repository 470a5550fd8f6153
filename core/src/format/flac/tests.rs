//! Unit tests for the native FLAC demuxer, on files built in code.

extern crate std;

use crate::format::xiph::crc::{crc16, crc8};
use crate::{Demuxer, ErrorKind, SliceSource, TagKey, TagScope, TagValue};
use std::vec::Vec;

/// A mono 16-bit frame of `block` samples (block-size code 6, 8-bit size)
/// at 44.1 kHz with one CONSTANT subframe of `value` (RFC 9639 §9.2.3).
fn frame(number: u8, block: u16, value: u16) -> Vec<u8> {
    let mut f = std::vec![0xFF, 0xF8, 0x69, 0x08, number, (block - 1) as u8];
    f.push(crc8(0, &f));
    f.push(0x00); // subframe header: CONSTANT, no wasted bits
    f.extend_from_slice(&value.to_be_bytes());
    let c = crc16(0, &f);
    f.extend_from_slice(&c.to_be_bytes());
    f
}

fn streaminfo(total: u64) -> [u8; 34] {
    let mut b = [0u8; 34];
    b[0..2].copy_from_slice(&192u16.to_be_bytes());
    b[2..4].copy_from_slice(&192u16.to_be_bytes());
    let packed: u64 = (44100 << 44) | (15 << 36) | total;
    b[10..18].copy_from_slice(&packed.to_be_bytes());
    b
}

/// `fLaC`, STREAMINFO, a VORBIS_COMMENT block, then `frames`.
fn file(frames: &[Vec<u8>], total: u64) -> Vec<u8> {
    let mut f = b"fLaC".to_vec();
    f.extend_from_slice(&[0x00, 0, 0, 34]);
    f.extend_from_slice(&streaminfo(total));
    let mut vc = Vec::new();
    vc.extend_from_slice(&3u32.to_le_bytes());
    vc.extend_from_slice(b"enc");
    vc.extend_from_slice(&2u32.to_le_bytes());
    for c in [&b"TITLE=Frames"[..], b"broken entry"] {
        vc.extend_from_slice(&(c.len() as u32).to_le_bytes());
        vc.extend_from_slice(c);
    }
    f.push(0x84);
    f.extend_from_slice(&(vc.len() as u32).to_be_bytes()[1..]);
    f.extend_from_slice(&vc);
    for fr in frames {
        f.extend_from_slice(fr);
    }
    f
}

fn frames() -> Vec<Vec<u8>> {
    // Frame 1's sample value is a sync code followed by a header-like
    // byte: a false candidate inside the frame.
    std::vec![
        frame(0, 192, 0x1234),
        frame(1, 192, 0xFFF8),
        frame(2, 192, 0x0000),
        frame(3, 100, 0x7777),
    ]
}

/// Size, pts, duration and the truncated flag of a packet.
type Got = (usize, Option<i64>, Option<u64>, bool);

fn pull(bytes: &[u8], ext: Option<&str>) -> (Vec<Got>, Option<crate::Error>) {
    let mut d = Demuxer::open(SliceSource::new(bytes), ext).unwrap();
    let mut v = Vec::new();
    loop {
        match d.next_packet() {
            Ok(Some(p)) => v.push((p.data.len(), p.pts, p.duration, p.flags.truncated)),
            Ok(None) => return (v, None),
            Err(e) => return (v, Some(e)),
        }
    }
}

#[test]
fn frames_end_where_the_next_header_begins() {
    let fr = frames();
    let f = file(&fr, 3 * 192 + 100);
    let mut d = Demuxer::open(SliceSource::new(&f), None).unwrap();
    let t = &d.tracks()[0];
    assert_eq!((t.sample_rate, t.channels, t.bits_per_sample), (44100, 1, 16));
    assert_eq!(t.duration, Some(676));
    assert_eq!(d.codec_config(0).unwrap(), &streaminfo(676)[..]);
    let (got, end) = pull(&f, None);
    assert!(end.is_none());
    let want: Vec<_> = fr.iter().map(|x| x.len()).collect();
    assert_eq!(got.iter().map(|g| g.0).collect::<Vec<_>>(), want);
    let timing: Vec<_> = got.iter().map(|g| (g.1, g.2)).collect();
    assert_eq!(
        timing,
        [
            (Some(0), Some(192)),
            (Some(192), Some(192)),
            (Some(384), Some(192)),
            (Some(576), Some(100))
        ]
    );
    // Tags: the valid comment only.
    let t = d.next_tag().unwrap().unwrap();
    assert_eq!(
        (t.scope, t.key, t.name),
        (TagScope::Format, TagKey::Text("TITLE"), Some("title"))
    );
    assert_eq!(t.value, TagValue::Text("Frames"));
    assert!(d.next_tag().unwrap().is_none());
}

#[test]
fn a_damaged_frame_ends_at_the_next_frame_number() {
    let mut fr = frames();
    fr[2][8] ^= 0x40; // the frame's CRC-16 no longer checks
    let f = file(&fr, 676);
    let (got, _) = pull(&f, None);
    let want: Vec<_> = fr.iter().map(|x| x.len()).collect();
    assert_eq!(got.iter().map(|g| g.0).collect::<Vec<_>>(), want);
}

#[test]
fn frames_without_flac_marker_and_leading_junk() {
    let fr = frames();
    let mut raw: Vec<u8> = fr.concat();
    let (got, _) = pull(&raw, None);
    assert_eq!(got.len(), 4);
    // Junk in front: only found with the extension hint; delivered first.
    let mut junked = b"junk!".to_vec();
    junked.append(&mut raw);
    let (got, _) = pull(&junked, Some("flac"));
    assert_eq!(got.iter().map(|g| g.0).collect::<Vec<_>>()[..2], [5, fr[0].len()]);
    assert_eq!(got[0].1, Some(-192));
}

#[test]
fn a_cut_frame_is_flagged_and_a_cut_header_is_a_truncation() {
    let fr = frames();
    let f = file(&fr, 676);
    let body = f.len() - fr.iter().map(|x| x.len()).sum::<usize>();
    // Cut inside frame 2's payload.
    let cut = body + fr[0].len() + fr[1].len() + 9;
    let (got, end) = pull(&f[..cut], None);
    assert_eq!(got.len(), 3);
    assert!(got[2].3, "the cut frame says so");
    assert!(end.is_none());
    // Cut inside frame 2's header: frame 1 ends there, then a truncation.
    let cut = body + fr[0].len() + fr[1].len() + 3;
    let (got, end) = pull(&f[..cut], None);
    assert_eq!(got.len(), 2);
    assert!(!got[1].3);
    assert_eq!(end.map(|e| e.kind()), Some(ErrorKind::Truncated));
}

#[test]
fn a_cut_inside_the_header_that_ends_a_damaged_frame_flags_the_frame_there() {
    // Frame 1 is damaged (its CRC-16 fails): the whole file ends it at frame
    // 2's header by the numbering. A cut inside that header used to run the
    // damaged frame to the cut, longer than the whole file's (`truncation`
    // fuzz finding, repeated-frame-number-cut-timing.flac cut at 120-125).
    let mut fr = frames();
    fr[1][8] ^= 0x40;
    let f = file(&fr, 676);
    let (whole, end) = pull(&f, None);
    assert!(end.is_none());
    assert_eq!(whole.len(), 4);
    assert!(!whole[1].3, "the whole file ends the damaged frame by the numbering");
    let body = f.len() - fr.iter().map(|x| x.len()).sum::<usize>();
    let f2_at = body + fr[0].len() + fr[1].len();
    for cut in f2_at + 1..f2_at + 7 {
        let (got, end) = pull(&f[..cut], None);
        assert_eq!(got.len(), 2, "cut at {cut}");
        assert_eq!(got[0], whole[0]);
        assert_eq!(
            (got[1].0, got[1].1, got[1].3),
            (fr[1].len(), Some(192), true),
            "cut at {cut}"
        );
        assert_eq!(end.map(|e| e.kind()), Some(ErrorKind::Truncated), "cut at {cut}");
    }
    // Frame 1 intact: the cut header ends it unflagged (its CRC-16 checks).
    let fr = frames();
    let f = file(&fr, 676);
    let (got, _) = pull(&f[..f2_at + 3], None);
    assert_eq!((got.len(), got[1].0, got[1].3), (2, fr[1].len(), false));
}

#[test]
fn a_last_frame_whose_crc_ends_in_0xff_is_whole() {
    // The file's last byte is 0xFF, which could begin a header the end
    // cuts; the CRC-16 checks over the whole frame, so it ends with the
    // input (music-metadata__test-unknown-duration.flac, the last frame).
    let last = (0..=u16::MAX)
        .map(|v| frame(3, 100, v))
        .find(|f| f.last() == Some(&0xFF))
        .unwrap();
    let fr = std::vec![frame(0, 192, 0x1234), frame(1, 192, 0), frame(2, 192, 7), last];
    let f = file(&fr, 676);
    let (got, end) = pull(&f, None);
    assert!(end.is_none());
    assert_eq!(got.len(), 4);
    assert_eq!(got[3], (fr[3].len(), Some(576), Some(100), false));
    // Damaged, the same bytes may be a prefix of a file where the 0xFF
    // begins a real header: that file times the frame by its number (300),
    // this one as the last (576). The frame is not given (documented in
    // docs/formats/flac.md: a damaged, short last frame ending in bytes
    // that could begin a header is lost).
    let mut fr = fr;
    fr[3][8] ^= 0x40;
    let f = file(&fr, 676);
    let (got, end) = pull(&f, None);
    assert_eq!(got.len(), 3);
    assert_eq!(end.map(|e| e.kind()), Some(ErrorKind::Truncated));
    // A damaged last frame ending in other bytes is given whole, flagged,
    // timed as the last.
    let last = (0..=u16::MAX)
        .map(|v| {
            let mut f = frame(3, 100, v);
            f[8] ^= 0x40;
            f
        })
        .find(|f| f.last() == Some(&0x00))
        .unwrap();
    fr[3] = last;
    let f = file(&fr, 676);
    let (got, end) = pull(&f, None);
    assert!(end.is_none());
    assert_eq!(got[3], (fr[3].len(), Some(576), Some(100), true));
}

#[test]
fn a_damaged_last_frame_before_a_cut_header_is_not_given_when_its_time_is_undecided() {
    // STREAMINFO's sample count ends with frame 1, which repeats frame 0's
    // number and is damaged. If the header the input cuts is real, the whole
    // file times frame 1 by its number (0); if not, as the last frame, at
    // the previous frame's end (192). The prefix cannot tell: frame 1 is
    // not given (a `truncation` fuzz find on
    // repeated-frame-number-cut-timing.flac).
    let mut f1 = frame(0, 192, 0x4321);
    f1[8] ^= 0x40;
    let fr = std::vec![frame(0, 192, 0x1234), f1, frame(1, 192, 0)];
    // Frame 1 starts at sample 0 by its number: a count of 192 ends with it.
    let f = file(&fr, 192);
    let body = f.len() - fr.iter().map(|x| x.len()).sum::<usize>();
    let f2_at = body + fr[0].len() + fr[1].len();
    for cut in f2_at + 1..f2_at + 7 {
        let (got, end) = pull(&f[..cut], None);
        assert_eq!(got.len(), 1, "cut at {cut}");
        assert_eq!(got[0], (fr[0].len(), Some(0), Some(192), false));
        assert_eq!(end.map(|e| e.kind()), Some(ErrorKind::Truncated), "cut at {cut}");
    }
    // When the numbering agrees with the previous frames, the two times are
    // the same and the flagged frame is given.
    let mut f1 = frame(1, 192, 0x4321);
    f1[8] ^= 0x40;
    let fr = std::vec![frame(0, 192, 0x1234), f1, frame(2, 192, 0)];
    let f = file(&fr, 2 * 192);
    let (got, end) = pull(&f[..f2_at + 3], None);
    assert_eq!(got.len(), 2);
    assert_eq!((got[1].0, got[1].1, got[1].3), (fr[1].len(), Some(192), true));
    assert_eq!(end.map(|e| e.kind()), Some(ErrorKind::Truncated));
}

#[test]
fn a_cut_before_a_repeated_header_is_proven_false_flags_the_frame_and_ends() {
    // Frame 1 holds a copy of its own header late in its body: a candidate
    // that repeats the numbering but where the CRC-16 does not check (it
    // checks at frame 2). A cut between the copy and frame 2 cannot prove
    // the copy false: the frame ends there flagged, and it is the last
    // (a `truncation` fuzz find gave it unflagged, then more packets).
    let h1 = frame(1, 192, 0)[..7].to_vec();
    let mut f1 = h1.clone();
    f1.extend_from_slice(&[0x5A; 16]);
    let copy = f1.len();
    assert_ne!(crc16(0, &f1), 0, "the copy must not look like a frame end");
    f1.extend_from_slice(&h1);
    f1.extend_from_slice(&[0x11, 0x22, 0x33]);
    let c = crc16(0, &f1);
    f1.extend_from_slice(&c.to_be_bytes());
    let fr = std::vec![frame(0, 192, 0x1234), f1, frame(2, 192, 0), frame(3, 100, 0x7777)];
    let f = file(&fr, 676);
    let (got, end) = pull(&f, None);
    assert!(end.is_none());
    let want: Vec<_> = fr.iter().map(|x| x.len()).collect();
    assert_eq!(got.iter().map(|g| g.0).collect::<Vec<_>>(), want);
    assert!(got.iter().all(|g| !g.3));
    let body = f.len() - want.iter().sum::<usize>();
    let f1_at = body + fr[0].len();
    for cut in f1_at + copy + h1.len()..f1_at + fr[1].len() {
        let (got, end) = pull(&f[..cut], None);
        assert_eq!(got.len(), 2, "cut at {cut}");
        assert_eq!(got[0], (fr[0].len(), Some(0), Some(192), false));
        assert_eq!((got[1].0, got[1].1, got[1].3), (copy, Some(192), true), "cut at {cut}");
        assert_eq!(end.map(|e| e.kind()), Some(ErrorKind::Truncated));
    }
}

#[test]
fn seek_lands_on_the_frame_holding_the_target() {
    let fr = frames();
    let f = file(&fr, 676);
    let mut d = Demuxer::open(SliceSource::new(&f), None).unwrap();
    for (ts, pts) in [(0, 0), (200, 192), (575, 384), (600, 576), (10_000, 576)] {
        d.seek(0, ts).unwrap();
        assert_eq!(d.next_packet().unwrap().unwrap().pts, Some(pts), "seek to {ts}");
    }
}

#[test]
fn picture_block_is_a_track_with_one_packet() {
    let fr = frames();
    let mut f = file(&fr, 676);
    // Insert a PICTURE block after STREAMINFO.
    let png = b"\x89PNG\r\n\x1a\nrest of a png";
    let mut pic = Vec::new();
    pic.extend_from_slice(&3u32.to_be_bytes());
    pic.extend_from_slice(&9u32.to_be_bytes());
    pic.extend_from_slice(b"image/png");
    pic.extend_from_slice(&0u32.to_be_bytes());
    for v in [16u32, 8, 24, 0] {
        pic.extend_from_slice(&v.to_be_bytes());
    }
    pic.extend_from_slice(&(png.len() as u32).to_be_bytes());
    pic.extend_from_slice(png);
    let mut block = std::vec![0x06];
    block.extend_from_slice(&(pic.len() as u32).to_be_bytes()[1..]);
    block.extend_from_slice(&pic);
    let at = 4 + 4 + 34;
    f.splice(at..at, block);
    let mut d = Demuxer::open(SliceSource::new(&f), None).unwrap();
    assert_eq!(d.tracks().len(), 2);
    assert_eq!(d.tracks()[1].codec.ffmpeg_name(), "png");
    assert_eq!((d.tracks()[1].width, d.tracks()[1].height), (16, 8));
    let p = d.next_packet().unwrap().unwrap();
    assert_eq!((p.track, p.data), (1, &png[..]));
    assert_eq!(d.next_packet().unwrap().unwrap().track, 0);
}

/// The ID3v2 tag in front of `fLaC` is read with the shared ID3 module and
/// its one frame-name table: `TSOP` and `USLT` now have their common names
/// (before, FLAC's own table lacked them), `TIT2` keeps its, and a frame
/// that is no text frame is still given as its whole body.
#[test]
fn id3_in_front_uses_the_shared_frame_names() {
    let mut tag = Vec::new();
    for (id, body) in [
        (b"TIT2", &b"\x00Song"[..]),
        (b"TSOP", &b"\x03Artist, The"[..]),
        (b"USLT", &b"\x00eng\x00la la"[..]),
    ] {
        tag.extend_from_slice(id);
        tag.extend_from_slice(&(body.len() as u32).to_be_bytes());
        tag.extend_from_slice(&[0, 0]);
        tag.extend_from_slice(body);
    }
    let mut f = b"ID3\x03\x00\x00\x00\x00\x00".to_vec();
    f.push(tag.len() as u8);
    f.extend_from_slice(&tag);
    f.extend_from_slice(&file(&frames(), 676));
    let mut d = Demuxer::open(SliceSource::new(&f), Some("flac")).unwrap();
    let want = [
        (*b"TIT2", Some("title"), TagValue::Text("Song")),
        (*b"TSOP", Some("artist-sort"), TagValue::Text("Artist, The")),
        (*b"USLT", Some("lyrics"), TagValue::Bytes(b"\x00eng\x00la la")),
    ];
    for (id, name, value) in want {
        let t = d.next_tag().unwrap().unwrap();
        assert_eq!((t.key, t.name, t.value), (TagKey::FourCc(id), name, value));
    }
    // Then the Vorbis comment.
    assert_eq!(d.next_tag().unwrap().unwrap().name, Some("title"));
    assert_eq!(d.tracks()[0].codec.ffmpeg_name(), "flac");
}
