//! Hybrid MP4 (`format/mp4/fmp4_hybrid.rs`): fragmented while written,
//! progressive when finished. Corpus and sample files remuxed and read
//! back (same packets as the input); the finished layout is `ftyp`,
//! `free`, one `mdat`, `moov` with no top-level `moof`; a power cut while
//! writing keeps every closed fragment; a cut after the progressive
//! `moov` is appended but before the header is rewritten still reads;
//! the index costs at most 4 bytes a sample on camera-like input; an index
//! that does not fit leaves a fragmented MP4 with every packet; ffprobe
//! reads the finished and the interrupted file.
#![allow(clippy::indexing_slicing, clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use crate::common;

use common::fragments::*;
use common::mux::*;
use common::*;
use mediaslice::{ErrorKind, Fragmenting, MuxFormat, Muxer, Packet, SeekWriterSink, SliceSink, WriterSink};

const HYBRID: MuxFormat = MuxFormat::HybridMp4(Fragmenting::DEFAULT);

/// Corpus and sample families whose codecs MP4 carries.
const FAMILIES: &[&str] = &[
    "mp4", "matroska", "mpegts", "adts", "h264", "h265", "flac", "ac3", "ogg",
];

/// Scratch: the fragment's part and the index.
const SCRATCH: usize = 16 << 20;

/// The finished layout: `ftyp`, `free`, `mdat`, `moov`, and nothing else
/// at the top level.
fn assert_finished_layout(label: &str, out: &[u8]) {
    let kinds: Vec<[u8; 4]> = top_boxes(out).iter().map(|b| b.1).collect();
    assert_eq!(
        kinds,
        [*b"ftyp", *b"free", *b"mdat", *b"moov"],
        "{label}: top-level boxes"
    );
}

#[test]
fn corpus_and_samples_round_trip_through_hybrid_mp4() {
    let (mut done, mut samples, mut index) = (0usize, 0u64, 0u64);
    for fam in FAMILIES {
        for f in family_files(fam) {
            let bytes = f.read();
            let mut out = vec![0u8; bytes.len() * 2 + (1 << 20)];
            let (sink, _, want) = match remux(&bytes, f.ext().as_deref(), HYBRID, SliceSink::new(&mut out), SCRATCH) {
                Ok(x) => x,
                Err(e) => {
                    println!("skip {}: {e}", f.label());
                    continue;
                }
            };
            if want.is_empty() {
                continue;
            }
            let written = sink.written();
            if let Some(dir) = std::env::var_os("HYBRID_KEEP") {
                std::fs::write(std::path::Path::new(&dir).join(format!("{}.mp4", f.name)), written).unwrap();
            }
            assert_finished_layout(&f.label(), written);
            same_packets(&f.label(), written, &want);
            done += 1;
            let (b, n) = index_bytes(&bytes, f.ext().as_deref());
            index += b;
            samples += n;
        }
    }
    if samples_dir().is_none() {
        println!("skip ../shared/samples: absent");
    }
    println!(
        "{done} files remuxed to hybrid MP4 and read back; index {index} bytes for {samples} samples ({:.2} B/sample)",
        index as f64 / samples.max(1) as f64
    );
    assert!(done >= 8, "only {done} files remuxed");
}

/// The index the hybrid muxer kept for `bytes` by its last packet (the
/// last fragment enters it at `finish`): bytes and samples.
fn index_bytes(bytes: &[u8], ext: Option<&str>) -> (u64, u64) {
    let mut out = vec![0u8; bytes.len() * 2 + (1 << 20)];
    let m = record(bytes, ext, HYBRID, &mut out);
    let s = m.fragment_stats().unwrap();
    assert!(!s.index_full);
    (s.index_bytes, s.index_samples)
}

/// A slice and a seeking writer give the same bytes; a sink that cannot
/// patch is refused before anything is written.
#[test]
fn a_slice_and_a_seeking_writer_give_the_same_file_and_a_stream_is_refused() {
    for (fam, name) in [
        ("mp4", "h264_bframes_aac.mp4"),
        ("mpegts", "h264_aac.ts"),
        ("matroska", "vp9_opus.webm"),
    ] {
        let (bytes, ext) = corpus_file(fam, name);
        let mut out = vec![0u8; bytes.len() * 2 + (1 << 20)];
        let (slice, _, want) = remux(&bytes, ext.as_deref(), HYBRID, SliceSink::new(&mut out), SCRATCH).unwrap();
        let slice = slice.written().to_vec();
        let sink = SeekWriterSink::new(VecFile::default()).unwrap();
        let (seeking, _, _) = remux(&bytes, ext.as_deref(), HYBRID, sink, SCRATCH).unwrap();
        assert_eq!(seeking.into_inner().data, slice, "{name}: seeking writer");
        same_packets(name, &slice, &want);
        let mut buf = vec![0u8; bytes.len() * 2 + (1 << 20)];
        let e = remux(&bytes, ext.as_deref(), HYBRID, WriterSink::new(&mut buf[..]), SCRATCH)
            .err()
            .unwrap();
        assert_eq!(e.kind(), ErrorKind::Unsupported, "{name}: {e}");
    }
}

/// A power cut while writing (the bytes after each packet, no `finish`):
/// the file is a fragmented MP4 whose closed fragments all read back.
#[test]
fn a_power_cut_while_recording_keeps_the_closed_fragments() {
    let fmt = MuxFormat::HybridMp4(Fragmenting::with_duration_ms(300));
    for (fam, name) in [("mp4", "h264_aac.mp4"), ("mpegts", "h264_aac.ts")] {
        let (bytes, ext) = corpus_file(fam, name);
        let whole = {
            let mut buf = vec![0u8; bytes.len() * 2 + (1 << 20)];
            let (s, _, _) = remux(&bytes, ext.as_deref(), fmt, SliceSink::new(&mut buf), SCRATCH).unwrap();
            assert_finished_layout(name, s.written());
            read_cut(s.written()).0
        };
        let mut join = scratch_for(bytes.len());
        let mut d = mediaslice::Demuxer::open(mediaslice::SliceSource::with_scratch(&bytes, &mut join), ext.as_deref())
            .unwrap();
        let mut out = vec![0u8; bytes.len() * 2 + (1 << 20)];
        let mut m = Muxer::with_scratch(SliceSink::new(&mut out), fmt, vec![0u8; SCRATCH]).unwrap();
        let map = mediaslice::mux::copy::add_tracks(&mut d, &mut m).unwrap();
        let (mut n, mut checked) = (0, 0);
        while let Some(p) = d.next_packet().unwrap() {
            let Some(j) = map[p.track] else { continue };
            m.write_packet(&Packet { track: j, ..p }).unwrap();
            n += 1;
            if n % 5 != 0 {
                continue;
            }
            let snapshot = m.sink().written().to_vec();
            let closed = m.fragment_stats().unwrap().fragments as usize;
            let (got, err) = read_cut(&snapshot);
            if snapshot.len() < 8 || closed == 0 && err.is_some() {
                // Nothing out yet (a held first fragment).
                continue;
            }
            assert!(err.is_none(), "{name} after {n} packets: {err:?}");
            let boxes = top_boxes(&snapshot);
            let (want, _) = read_cut(&snapshot[..fragment_end(&boxes, closed)]);
            let total: usize = got.iter().map(Vec::len).sum();
            assert!(
                closed == 0 || total > 0,
                "{name} after {n} packets: closed fragments read nothing"
            );
            for (t, g) in got.iter().enumerate() {
                assert_eq!(g.len(), want[t].len(), "{name} after {n} packets: track {t}");
                assert_eq!(&whole[t][..g.len()], &g[..], "{name} after {n} packets: track {t}");
            }
            checked += 1;
        }
        let out = m.finish().unwrap();
        assert_finished_layout(name, out.written());
        println!("{name}: {checked} power cuts while recording");
        assert!(checked >= 5);
    }
}

/// The index on camera-like input (30 fps video of varying frame sizes,
/// AAC of varying sizes): at most 4 bytes a sample, and a scratch too
/// small for it leaves a fragmented MP4 with every packet.
#[test]
fn the_index_costs_at_most_4_bytes_a_sample_and_a_full_one_degrades_to_fmp4() {
    use mediaslice::TrackSpec;
    let ([video, audio], avcc, asc) = camera_tracks();
    let frames = 30 * 60; // one minute
    let run = |scratch: usize| {
        let mut out = Vec::new();
        let sink = SeekWriterSink::new(VecFile::default()).unwrap();
        let mut m = Muxer::with_scratch(sink, HYBRID, vec![0u8; scratch]).unwrap();
        m.add_track(&TrackSpec::new(&video).with_config(&avcc)).unwrap();
        m.add_track(&TrackSpec::new(&audio).with_config(&asc)).unwrap();
        let payload = vec![0x55u8; 200_000];
        let mut rng = 0x1234_5678u32;
        let mut next = || {
            rng ^= rng << 13;
            rng ^= rng >> 17;
            rng ^= rng << 5;
            rng
        };
        let mut a = 0i64;
        for f in 0..frames {
            let key = f % 60 == 0;
            let size = if key {
                60_000 + next() % 20_000
            } else {
                8_000 + next() % 24_000
            } as usize;
            let t = f as i64 * 3000;
            let p = Packet::contiguous(0, 0, &payload[..size]).with_times(Some(t), Some(t), Some(3000));
            let p = Packet {
                flags: mediaslice::PacketFlags {
                    keyframe: key,
                    ..Default::default()
                },
                ..p
            };
            m.write_packet(&p).unwrap();
            while a * 1024 * 90_000 <= t * 48_000 + 1024 * 90_000 {
                let size = 300 + (next() % 200) as usize;
                let p =
                    Packet::contiguous(1, 0, &payload[..size]).with_times(Some(a * 1024), Some(a * 1024), Some(1024));
                let p = Packet {
                    flags: mediaslice::PacketFlags {
                        keyframe: true,
                        ..Default::default()
                    },
                    ..p
                };
                m.write_packet(&p).unwrap();
                a += 1;
            }
        }
        let stats = m.fragment_stats().unwrap();
        let samples = frames as u64 + a as u64;
        out.extend_from_slice(&m.finish().unwrap().into_inner().data);
        (out, stats, samples)
    };
    let (out, stats, samples) = run(SCRATCH);
    assert!(!stats.index_full);
    assert_finished_layout("camera", &out);
    let (_, got) = read_back(&out);
    assert_eq!(got.iter().map(|t| t.len() as u64).sum::<u64>(), samples);
    // The stats before `finish`: the closed fragments' samples.
    assert!(stats.index_samples > samples * 9 / 10);
    let per = stats.index_bytes as f64 / stats.index_samples as f64;
    println!(
        "camera: {} index bytes for {} samples: {per:.2} B/sample",
        stats.index_bytes, stats.index_samples
    );
    assert!(per <= 4.0, "{per} bytes a sample");
    // 12 KiB of index room (half of 24) is too little for a minute of this: the file
    // stays fragmented, with every packet.
    let (out, stats, _) = run(24 << 10);
    assert!(stats.index_full);
    let kinds: Vec<[u8; 4]> = top_boxes(&out).iter().map(|b| b.1).collect();
    assert_eq!(&kinds[..2], &[*b"ftyp", *b"moov"]);
    assert!(kinds.contains(b"moof"));
    let (_, got) = read_back(&out);
    assert_eq!(got.iter().map(|t| t.len() as u64).sum::<u64>(), samples);
}

/// The file as a cut leaves it at each step of `finish`, and ffprobe's
/// view of each: (before `finish`, after the progressive `moov` is
/// appended but before the header is rewritten, finished).
fn finish_steps(bytes: &[u8], ext: Option<&str>) -> (Vec<u8>, Vec<u8>, Vec<u8>) {
    let fmt = MuxFormat::HybridMp4(Fragmenting::with_duration_ms(300));
    let mut out = vec![0u8; bytes.len() * 2 + (1 << 20)];
    let m = record(bytes, ext, fmt, &mut out);
    let before = m.sink().written().to_vec();
    let init_end = m.fragment_stats().unwrap().init_end as usize;
    let finished = m.finish().unwrap().written().to_vec();
    // Step 1 done, step 2 not: the finished bytes with the init `moov`
    // as it was.
    let ftyp_end = u32::from_be_bytes(finished[..4].try_into().unwrap()) as usize;
    let mut step1 = finished.clone();
    step1[ftyp_end..init_end].copy_from_slice(&before[ftyp_end..init_end]);
    (before, step1, finished)
}

/// A cut during `finish` after the progressive `moov` is appended (the
/// header not yet rewritten): the file is still the fragmented one, and
/// both readers give every packet.
#[test]
fn a_cut_between_the_steps_of_finish_reads_every_packet() {
    for (fam, name) in [("mp4", "h264_aac.mp4"), ("mpegts", "h264_aac.ts")] {
        let (bytes, ext) = corpus_file(fam, name);
        let (_, step1, finished) = finish_steps(&bytes, ext.as_deref());
        let (_, want) = read_back(&finished);
        let (got, err) = read_cut(&step1);
        assert!(err.is_none(), "{name}: {err:?}");
        assert_eq!(got, want, "{name}: the step-1 file's packets");
    }
}

/// ffprobe reads the finished file, the file cut while recording and the
/// file cut inside `finish` with the same packets as our demuxer.
#[test]
fn ffprobe_reads_the_finished_and_the_interrupted_files() {
    if std::process::Command::new("ffprobe").arg("-version").output().is_err() {
        println!("skip: ffprobe is not installed");
        return;
    }
    // HYBRID_KEEP=DIR keeps the files (for the browser check,
    // docs/write-side.md).
    let keep = std::env::var_os("HYBRID_KEEP").map(std::path::PathBuf::from);
    let dir = keep
        .clone()
        .unwrap_or_else(|| std::env::temp_dir().join(format!("mediaslice-hybrid-{}", std::process::id())));
    std::fs::create_dir_all(&dir).unwrap();
    for (fam, name) in [
        ("mp4", "h264_aac.mp4"),
        ("mp4", "h264_bframes_aac.mp4"),
        ("mpegts", "h264_aac.ts"),
        ("matroska", "vp9_opus.webm"),
    ] {
        let (bytes, ext) = corpus_file(fam, name);
        let (before, step1, finished) = finish_steps(&bytes, ext.as_deref());
        // While recording: cut in the middle of the last closed fragments.
        let boxes = top_boxes(&before);
        let mdats = boxes.iter().filter(|b| &b.1 == b"mdat").count();
        let cut = &before[..fragment_end(&boxes, mdats / 2) + 100];
        for (what, file) in [("finished", &finished[..]), ("step 1", &step1[..]), ("recording", cut)] {
            let path = dir.join(format!("{name}.{}.mp4", what.replace(' ', "")));
            std::fs::write(&path, file).unwrap();
            let probe = ffprobe_packets(&path).unwrap();
            let (ours, _) = read_cut(file);
            assert_eq!(probe.len(), ours.len(), "{name} {what}: streams");
            for (t, (p, o)) in probe.iter().zip(&ours).enumerate() {
                assert!(!o.is_empty(), "{name} {what}: track {t} is empty");
                assert_eq!(p.len(), o.len(), "{name} {what} track {t}: packets");
                for (k, (p, o)) in p.iter().zip(o).enumerate() {
                    assert_eq!(p.2, o.size, "{name} {what} track {t} packet {k}: size");
                    assert_eq!(p.3, o.key, "{name} {what} track {t} packet {k}: keyframe");
                }
            }
            println!(
                "ffprobe {name} ({what}): {} packets",
                probe.iter().map(Vec::len).sum::<usize>()
            );
        }
    }
    if keep.is_none() {
        let _ = std::fs::remove_dir_all(&dir);
    }
}

/// A muxer of `fmt` into `out` with every packet of `bytes` written and
/// `finish` not yet called: a recording as it stands.
fn record<'o>(bytes: &[u8], ext: Option<&str>, fmt: MuxFormat, out: &'o mut [u8]) -> Muxer<SliceSink<'o>, Vec<u8>> {
    let mut join = scratch_for(bytes.len());
    let mut d = mediaslice::Demuxer::open(mediaslice::SliceSource::with_scratch(bytes, &mut join), ext).unwrap();
    let mut m = Muxer::with_scratch(SliceSink::new(out), fmt, vec![0u8; SCRATCH]).unwrap();
    let map = mediaslice::mux::copy::add_tracks(&mut d, &mut m).unwrap();
    while let Some(p) = d.next_packet().unwrap() {
        if let Some(j) = map[p.track] {
            m.write_packet(&Packet { track: j, ..p }).unwrap();
        }
    }
    m
}

/// The bytes of a recording before `finish`.
fn recording(bytes: &[u8], ext: Option<&str>, fmt: MuxFormat) -> Vec<u8> {
    let mut out = vec![0u8; bytes.len() * 2 + (1 << 20)];
    record(bytes, ext, fmt, &mut out).sink().written().to_vec()
}

/// Until `finish`, a hybrid recording is byte for byte the fragmented
/// muxer's file (without the CMAF brand), so every cut of the fragmented
/// tests (`fmp4_mux.rs`: at every fragment boundary, inside `moof`, `mdat`
/// header and payload) holds for it.
#[test]
fn until_finish_a_hybrid_recording_is_the_fragmented_file() {
    let ms = 300;
    let fmp4 = MuxFormat::Fmp4(Fragmenting {
        cmaf: false,
        ..Fragmenting::with_duration_ms(ms)
    });
    let hybrid = MuxFormat::HybridMp4(Fragmenting::with_duration_ms(ms));
    for (fam, name) in [
        ("mp4", "h264_aac.mp4"),
        ("mp4", "h264_bframes_aac.mp4"),
        ("mpegts", "h264_aac.ts"),
        ("adts", "aac_lc.aac"),
        ("matroska", "vp9_opus.webm"),
    ] {
        let (bytes, ext) = corpus_file(fam, name);
        let h = recording(&bytes, ext.as_deref(), hybrid);
        let f = recording(&bytes, ext.as_deref(), fmp4);
        assert!(count_boxes(&h, b"moof") >= 2, "{name}: fragments");
        assert_eq!(h, f, "{name}: the hybrid recording and the fragmented file differ");
    }
}
