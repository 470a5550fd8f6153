//! Chapters and TS programs through the library on the corpus files made
//! for them (corpus/files/chapters, corpus/files/programs), from a slice
//! and from a reader with small scratch; and damaged copies of them
//! (truncations, flipped bytes, a broken PMT CRC) walked without a panic
//! or a hang.
#![allow(clippy::unwrap_used, clippy::indexing_slicing, clippy::panic)]

use crate::common;

use common::StdReader;
use mediaslice::{Demuxer, ReaderSource, SliceSource, Source};
use std::path::Path;

fn corpus(rel: &str) -> Vec<u8> {
    std::fs::read(Path::new(env!("CARGO_MANIFEST_DIR")).join("../corpus/files").join(rel)).unwrap()
}

type Chapters = Vec<(u64, u32, u64, Option<u64>, Option<String>)>;

fn chapters<S: Source>(d: &mut Demuxer<S>) -> Chapters {
    let mut out = Vec::new();
    while let Ok(Some(c)) = d.next_chapter() {
        out.push((c.id, c.time_base.den, c.start, c.end, c.title.map(String::from)));
        assert!(out.len() < 10_000, "the walk ends");
    }
    out
}

#[test]
fn corpus_chapters_slice_and_reader() {
    let want: [(&str, Chapters); 4] = [
        (
            "chapters/h264_aac.mkv",
            vec![
                (1, 1_000_000_000, 0, Some(400_000_000), Some("Intro".into())),
                (
                    2,
                    1_000_000_000,
                    400_000_000,
                    Some(1_000_000_000),
                    Some("Second part".into()),
                ),
            ],
        ),
        (
            "chapters/h264_aac.mp4",
            vec![
                (0, 10_000_000, 0, None, Some(String::new())),
                (1, 10_000_000, 4_000_000, None, Some(String::new())),
            ],
        ),
        (
            "chapters/mp3.mp3",
            vec![
                (0, 1000, 0, Some(400), Some("Intro".into())),
                (1, 1000, 400, Some(1000), Some("Second part".into())),
            ],
        ),
        (
            "chapters/vorbis.ogg",
            vec![
                (1, 1000, 0, None, Some("Intro".into())),
                (2, 1000, 400, None, Some("Second part".into())),
            ],
        ),
    ];
    for (rel, want) in want {
        let b = corpus(rel);
        let mut d = Demuxer::open(SliceSource::new(&b), None).unwrap();
        assert_eq!(chapters(&mut d), want, "{rel}");
        d.rewind_chapters();
        assert_eq!(chapters(&mut d), want, "{rel} after rewind");
        let mut scratch = vec![0u8; 64 << 10];
        let src: ReaderSource<_, _> =
            ReaderSource::new(StdReader::new(std::io::Cursor::new(&b[..]), None), &mut scratch[..]).unwrap();
        let mut d = Demuxer::open(src, None).unwrap();
        assert_eq!(chapters(&mut d), want, "{rel} (reader)");
    }
}

#[test]
fn corpus_programs() {
    let b = corpus("programs/two_programs.ts");
    let mut d = Demuxer::open(SliceSource::new(&b), None).unwrap();
    assert_eq!(d.program_count().unwrap(), 2);
    let mut got = Vec::new();
    while let Some(p) = d.next_program().unwrap() {
        got.push((
            p.number,
            p.pmt_pid,
            p.pcr_pid,
            p.tracks.to_vec(),
            p.service_name.map(String::from),
            p.service_provider.map(String::from),
        ));
    }
    let s = |x: &str| Some(String::from(x));
    assert_eq!(
        got,
        [
            (1, 0x1000, Some(0x100), vec![0, 1], s("First"), s("FFmpeg")),
            (2, 0x1001, Some(0x102), vec![2], s("Second"), s("FFmpeg")),
        ]
    );
    // Not a transport stream: no programs.
    let w = corpus("wav/pcm_s16le.wav");
    let mut d = Demuxer::open(SliceSource::new(&w), None).unwrap();
    assert_eq!(d.program_count().unwrap(), 0);
    assert!(d.next_program().unwrap().is_none());
}

#[test]
fn broken_pmt_crc_keeps_the_program_without_its_pmt() {
    let mut b = corpus("programs/two_programs.ts");
    // Every PMT section of program 2 (PID 0x1001) gets a wrong CRC.
    let mut hit = 0;
    for p in b.chunks_exact_mut(188) {
        let pid = u16::from_be_bytes([p[1] & 0x1F, p[2]]);
        if pid == 0x1001 && p[1] & 0x40 != 0 {
            p[5 + 10] ^= 0xFF; // a byte of the section (pointer_field 0)
            hit += 1;
        }
    }
    assert!(hit > 0);
    let mut d = Demuxer::open(SliceSource::new(&b), None).unwrap();
    let mut got = Vec::new();
    while let Some(p) = d.next_program().unwrap() {
        got.push((p.number, p.pcr_pid, p.tracks.len()));
    }
    assert_eq!(got[0], (1, Some(0x100), 2));
    assert_eq!(got[1], (2, None, 0));
}

#[test]
fn damaged_copies_do_not_panic() {
    for rel in [
        "chapters/h264_aac.mkv",
        "chapters/h264_aac.mp4",
        "chapters/mp3.mp3",
        "chapters/vorbis.ogg",
        "programs/two_programs.ts",
    ] {
        let b = corpus(rel);
        let mut seed = 0x9E37_79B9u32;
        for round in 0..200 {
            let mut c = b.clone();
            if round % 2 == 0 {
                c.truncate(b.len() * round / 200 + 1);
            }
            for _ in 0..8 {
                seed ^= seed << 13;
                seed ^= seed >> 17;
                seed ^= seed << 5;
                let i = seed as usize % c.len();
                c[i] ^= (seed >> 24) as u8 | 1;
            }
            let Ok(mut d) = Demuxer::open(SliceSource::new(&c), None) else {
                continue;
            };
            let _ = chapters(&mut d);
            let _ = d.program_count();
            for _ in 0..100 {
                if !matches!(d.next_program(), Ok(Some(_))) {
                    break;
                }
            }
        }
    }
}
