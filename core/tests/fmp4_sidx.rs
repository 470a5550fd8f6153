//! `styp` and `sidx` before each fragment of the fragmented MP4 muxer
//! (`Fragmenting::styp`, `Fragmenting::sidx`, `format/mp4/fmp4_sidx.rs`):
//! the packets read back are those of the same remux without them, on a
//! slice, a seeking writer and a stream; each `moof` follows its
//! `styp` and `sidx`; each `sidx` references exactly the `moof` and `mdat`
//! after it, names the reference track and its time scale, and its
//! earliest presentation time plus its duration is the next one's
//! earliest presentation time; ffprobe reads the
//! output with the packets of the output without them.
#![allow(clippy::indexing_slicing, clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use crate::common;

use common::fragments::*;
use common::mux::*;
use mediaslice::{Demuxer, Fragmenting, MuxFormat, SeekWriterSink, SliceSink, SliceSource, TrackKind, WriterSink};

const SCRATCH: usize = 8 << 20;

const INDEXED: Fragmenting = Fragmenting {
    styp: true,
    sidx: true,
    duration_ms: 500,
    ..Fragmenting::DEFAULT
};

const FILES: &[(&str, &str)] = &[
    ("mp4", "h264_aac.mp4"),
    ("mp4", "h264_bframes_aac.mp4"),
    ("mp4", "hevc_aac.mp4"),
    ("mpegts", "h264_aac.ts"),
    ("adts", "aac_lc.aac"),
    ("matroska", "vp9_opus.webm"),
];

fn be32(b: &[u8], at: usize) -> u32 {
    u32::from_be_bytes(b[at..at + 4].try_into().unwrap())
}

fn be64(b: &[u8], at: usize) -> u64 {
    u64::from_be_bytes(b[at..at + 8].try_into().unwrap())
}

/// A `sidx` as written: reference_ID, timescale, earliest presentation
/// time, referenced size, duration, starts_with_SAP.
#[derive(Debug, Clone, Copy)]
struct Index {
    id: u32,
    scale: u32,
    earliest: u64,
    size: u32,
    duration: u32,
    sap: bool,
}

fn parse_sidx(b: &[u8]) -> Index {
    assert_eq!(be32(b, 0), 52, "sidx size");
    assert_eq!(b[8], 1, "sidx version");
    assert_eq!(be64(b, 28), 0, "first_offset");
    assert_eq!(be32(b, 36), 1, "reference_count");
    let r = be32(b, 40);
    assert_eq!(r >> 31, 0, "reference_type media");
    Index {
        id: be32(b, 12),
        scale: be32(b, 16),
        earliest: be64(b, 20),
        size: r,
        duration: be32(b, 44),
        sap: be32(b, 48) >> 31 == 1,
    }
}

/// Checks the layout of an indexed output; returns its `sidx`s.
fn check_layout(name: &str, out: &[u8], stream: bool) -> Vec<Index> {
    let boxes = top_boxes(out);
    assert_eq!(&boxes[0].1, b"ftyp", "{name}");
    assert_eq!(&boxes[1].1, b"moov", "{name}");
    let mut found = Vec::new();
    for (k, b) in boxes.iter().enumerate().skip(2) {
        match &b.1 {
            b"styp" => {
                assert_eq!(&out[b.0 + 8..b.0 + 12], b"msdh", "{name}: major brand");
                let next = boxes[k + 1].1;
                assert_eq!(&next, b"sidx", "{name}: the styp of an indexed fragment");
                assert_eq!(&out[b.0 + 20..b.0 + 24], b"msix", "{name}: indexed brand");
            }
            b"sidx" => {
                assert_eq!(&boxes[k - 1].1, b"styp", "{name}");
                assert_eq!(&boxes[k + 1].1, b"moof", "{name}");
                assert_eq!(&boxes[k + 2].1, b"mdat", "{name}");
                let s = parse_sidx(&out[b.0..b.0 + b.2]);
                assert_eq!(
                    s.size as usize,
                    boxes[k + 1].2 + boxes[k + 2].2,
                    "{name}: referenced size"
                );
                found.push(s);
            }
            b"moof" => assert_eq!(&boxes[k - 1].1, b"sidx", "{name}: a moof without its sidx"),
            b"mdat" => assert_eq!(&boxes[k - 1].1, b"moof", "{name}"),
            b"free" => assert!(!stream, "{name}: padding in a stream"),
            b"mfra" => assert_eq!(k, boxes.len() - 1, "{name}: mfra last"),
            other => panic!("{name}: top-level {:?}", std::str::from_utf8(other)),
        }
    }
    assert_eq!(
        found.len(),
        count_boxes(out, b"moof") as usize,
        "{name}: a sidx per fragment"
    );
    found
}

#[test]
fn each_fragment_is_an_indexed_segment_with_the_same_packets() {
    let mut checked = 0;
    for &(fam, name) in FILES {
        let (bytes, ext) = corpus_file(fam, name);
        let ext = ext.as_deref();
        let plain = MuxFormat::Fmp4(Fragmenting {
            duration_ms: 500,
            ..Fragmenting::DEFAULT
        });
        let mut out = vec![0u8; bytes.len() * 2 + (1 << 20)];
        let (_, _, want) = remux(&bytes, ext, plain, SliceSink::new(&mut out), SCRATCH).unwrap();
        let mut out = vec![0u8; bytes.len() * 2 + (1 << 20)];
        let fmt = MuxFormat::Fmp4(INDEXED);
        let (slice, _, _) = remux(&bytes, ext, fmt, SliceSink::new(&mut out), SCRATCH).unwrap();
        let slice = slice.written().to_vec();
        same_packets(&format!("{name} (indexed, slice)"), &slice, &want);
        let (seeking, _, _) = remux(
            &bytes,
            ext,
            fmt,
            SeekWriterSink::new(VecFile::default()).unwrap(),
            SCRATCH,
        )
        .unwrap();
        assert_eq!(seeking.into_inner().data, slice, "{name}: seeking writer");
        let mut buf = vec![0u8; bytes.len() * 2 + (1 << 20)];
        let (sink, _, _) = remux(&bytes, ext, fmt, WriterSink::new(&mut buf[..]), SCRATCH).unwrap();
        let n = mediaslice::Sink::position(&sink) as usize;
        let stream = buf[..n].to_vec();
        same_packets(&format!("{name} (indexed, stream)"), &stream, &want);

        let a = check_layout(name, &slice, false);
        let b = check_layout(name, &stream, true);
        let key = |s: &Index| (s.id, s.scale, s.earliest, s.duration, s.sap);
        assert_eq!(
            a.iter().map(key).collect::<Vec<_>>(),
            b.iter().map(key).collect::<Vec<_>>(),
            "{name}"
        );

        // The reference track: the first video track, else the first.
        let d = Demuxer::open(SliceSource::new(&slice), Some("mp4")).unwrap();
        let tracks = d.tracks().to_vec();
        let r = tracks.iter().position(|t| t.kind == TrackKind::Video).unwrap_or(0);
        for s in &a {
            assert_eq!(s.id as usize, r + 1, "{name}: reference_ID");
            assert_eq!(s.scale, tracks[r].time_base.den, "{name}: timescale");
        }
        // Fragment k+1 starts where fragment k ends, on the media
        // timeline, and the durations add up to the track's.
        for w in a.windows(2) {
            assert_eq!(
                w[0].earliest + u64::from(w[0].duration),
                w[1].earliest,
                "{name}: sidx continuity"
            );
        }
        if tracks[r].kind == TrackKind::Video {
            assert!(a.iter().all(|s| s.sap), "{name}: video fragments start with a keyframe");
        }
        println!("{name}: {} fragments, each styp + sidx + moof + mdat", a.len());
        checked += 1;
    }
    assert_eq!(checked, FILES.len());
}

#[test]
fn ffprobe_reads_an_indexed_output_as_the_plain_one() {
    let Some(dir) = ffprobe_dir("sidx") else { return };
    for &(fam, name) in FILES {
        let (bytes, ext) = corpus_file(fam, name);
        let mut files = Vec::new();
        for (tag, f) in [("plain", Fragmenting::DEFAULT), ("indexed", INDEXED)] {
            let f = Fragmenting { duration_ms: 500, ..f };
            let mut out = vec![0u8; bytes.len() * 2 + (1 << 20)];
            let (sink, _, _) = remux(
                &bytes,
                ext.as_deref(),
                MuxFormat::Fmp4(f),
                SliceSink::new(&mut out),
                SCRATCH,
            )
            .unwrap();
            let path = dir.join(format!("{name}.{tag}.mp4"));
            std::fs::write(&path, sink.written()).unwrap();
            files.push(path);
        }
        let plain = ffprobe_packets(&files[0]).expect("ffprobe output");
        let indexed = ffprobe_packets(&files[1]).expect("ffprobe output");
        assert!(
            !plain.is_empty() && plain.iter().all(|s| !s.is_empty()),
            "{name}: no packets"
        );
        assert_eq!(plain, indexed, "{name}: ffprobe's packets");
        println!(
            "{name}: ffprobe reads {} packets in both",
            plain.iter().map(Vec::len).sum::<usize>()
        );
    }
    std::fs::remove_dir_all(&dir).ok();
}
