//! MXF unit tests over the corpus files (`corpus/files/mxf`, written by
//! `corpus/generate.sh`; skipped with a note when absent): clip-wrapped
//! PCM cut by a 25th of a second, B-frame timestamps from the footer's
//! index, every cut of every file (no panic, a prefix of the packets), a
//! BER length past the end, a broken key, a file without its footer.
#![allow(clippy::unwrap_used, clippy::indexing_slicing, clippy::panic)]

extern crate std;

use std::println;
use std::string::String;
use std::vec::Vec;

use super::*;
use crate::error::ErrorKind;
use crate::format::test_drain::{drain_any, DrainedAny};
use crate::format::traits::FormatDemuxer;

/// A corpus file, or `None` (with a note) when the corpus is not there.
fn corpus(name: &str) -> Option<Vec<u8>> {
    let path = String::from(env!("CARGO_MANIFEST_DIR")) + "/../corpus/files/mxf/" + name;
    match std::fs::read(&path) {
        Ok(b) => Some(b),
        Err(e) => {
            println!("note: {path}: {e}; skipped");
            None
        }
    }
}

const FILES: [&str; 8] = [
    "mpeg2_pcm.mxf",
    "h264_pcm24.mxf",
    "jpeg2000.mxf",
    "dv_pcm.mxf",
    "dnxhr_pcm.mxf",
    "d10.mxf",
    "dnxhr_opatom.mxf",
    "pcm_opatom.mxf",
];

fn drain(b: &[u8]) -> (Vec<DrainedAny>, Option<ErrorKind>) {
    drain_any::<MxfDemuxer>(b)
}

#[test]
fn clip_wrapped_pcm_is_cut_in_25ths_of_a_second() {
    let Some(b) = corpus("pcm_opatom.mxf") else { return };
    let (p, e) = drain(&b);
    assert_eq!(e, None);
    // 0.43 s of mono 16-bit at 48 kHz, padded by ffmpeg's OP-Atom muxer
    // to 0.44 s; no index segment: ffmpeg's stand-in index of one sample
    // frame per edit unit, 1920 per packet.
    assert_eq!(p.len(), 11);
    for (i, (_, data, pts, dur, cut)) in p.iter().enumerate() {
        let samples = 1920;
        assert_eq!(data.len(), samples * 2);
        assert_eq!(*pts, Some(i as i64 * 1920));
        assert_eq!(*dur, Some(samples as u64));
        assert!(!cut);
    }
    // One clip: each packet starts where the previous one ended.
    for w in p.windows(2) {
        assert_eq!(w[0].0.unwrap() + w[0].1.len() as u64, w[1].0.unwrap());
    }
}

#[test]
fn b_frames_take_the_index_tables_temporal_offsets() {
    let Some(b) = corpus("mpeg2_pcm.mxf") else { return };
    let mut scratch = std::vec![0u8; 1 << 16];
    let mut src = crate::source::SliceSource::with_scratch(&b, &mut scratch);
    let mut ctx = crate::format::traits::Context::default();
    let mut d = MxfDemuxer::open(&mut src, &mut ctx).unwrap();
    let mut video = Vec::new();
    while let Some(p) = d.next_packet(&mut src, &mut ctx).unwrap() {
        if p.track == 0 {
            video.push((p.pts.unwrap(), p.dts.unwrap(), p.flags.keyframe));
        }
    }
    // I B B P with -g 6 -bf 2 as ffprobe gives them: dts from -1, pts reordered.
    let want = [
        (0, -1, true),
        (3, 0, false),
        (1, 1, false),
        (2, 2, false),
        (6, 3, true),
        (4, 4, false),
    ];
    assert_eq!(&video[..6], &want);
}

#[test]
fn every_cut_gives_a_prefix_or_an_error() {
    for name in FILES {
        let Some(b) = corpus(name) else { return };
        let (full, e) = drain(&b);
        assert_eq!(e, None, "{name}");
        let step = (b.len() / 97).max(1);
        for cut in (0..b.len()).step_by(step) {
            let head = &b[..cut];
            let mut scratch = std::vec![0u8; 1 << 16];
            let mut src = crate::source::SliceSource::with_scratch(head, &mut scratch);
            let mut ctx = crate::format::traits::Context::default();
            let Ok(mut d) = MxfDemuxer::open(&mut src, &mut ctx) else {
                continue;
            };
            let mut n = 0;
            loop {
                match d.next_packet(&mut src, &mut ctx) {
                    Ok(Some(p)) => {
                        let whole = &full[n];
                        assert_eq!(p.pos, whole.0, "{name} cut at {cut}: packet {n}");
                        if !p.flags.truncated {
                            assert_eq!(p.data, &whole.1[..], "{name} cut at {cut}: packet {n}");
                        } else if name != "d10.mxf" {
                            assert!(whole.1.starts_with(p.data), "{name} cut at {cut}: packet {n}");
                        }
                        n += 1;
                        assert!(n <= full.len());
                    }
                    Ok(None) => break,
                    Err(e) => {
                        assert_eq!(e.kind(), ErrorKind::Truncated, "{name} cut at {cut}");
                        break;
                    }
                }
            }
        }
    }
}

/// The offset of the first essence element's key in `b`.
fn first_element(b: &[u8]) -> usize {
    let prefix = [0x06, 0x0e, 0x2b, 0x34, 0x01, 0x02, 0x01, 0x01, 0x0d, 0x01, 0x03, 0x01];
    b.windows(12).position(|w| w == prefix).unwrap()
}

#[test]
fn a_length_past_the_end_is_a_cut_element_not_a_read() {
    let Some(mut b) = corpus("jpeg2000.mxf") else { return };
    let at = first_element(&b);
    // The 4-byte BER length (0x83 + 3 bytes) raised to 16 MiB - 1.
    assert_eq!(b[at + 16], 0x83);
    b[at + 17..at + 20].copy_from_slice(&[0xff, 0xff, 0xff]);
    let (p, e) = drain(&b);
    assert_eq!(p.len(), 1);
    assert!(p[0].4, "the packet is marked truncated");
    assert_eq!(p[0].1.len(), b.len() - (at + 20));
    assert_eq!(e, Some(ErrorKind::Truncated));
}

#[test]
fn a_key_without_the_smpte_prefix_is_malformed() {
    let Some(mut b) = corpus("jpeg2000.mxf") else { return };
    let at = first_element(&b);
    b[at] = 0x07;
    let (p, e) = drain(&b);
    assert!(p.is_empty());
    assert_eq!(e, Some(ErrorKind::Malformed));
}

#[test]
fn without_the_footer_video_is_timed_by_decode_order() {
    let Some(mut b) = corpus("mpeg2_pcm.mxf") else { return };
    // Drop the footer partition and the random index pack: FooterPartition
    // (value bytes 24..32 of the header pack) then points past the end.
    let footer = u64::from_be_bytes(b[20 + 24..20 + 32].try_into().unwrap()) as usize;
    b.truncate(footer);
    let (p, e) = drain(&b);
    assert_eq!(e, None);
    let video: Vec<_> = p.iter().filter(|x| x.1.len() != 7680).map(|x| x.2.unwrap()).collect();
    assert_eq!(video, (0..10).collect::<Vec<i64>>());
}

#[test]
fn a_non_mxf_input_does_not_open() {
    let mut scratch = std::vec![0u8; 64];
    let b = [0u8; 256];
    let mut src = crate::source::SliceSource::with_scratch(&b, &mut scratch);
    let mut ctx = crate::format::traits::Context::default();
    assert!(MxfDemuxer::open(&mut src, &mut ctx).is_err());
}
