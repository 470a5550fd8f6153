//! The MP4 / MOV muxer (`format/mp4/muxer*.rs`): corpus and sample files
//! remuxed to MP4 in memory and read back by our demuxer (every packet's
//! payload CRC after the expected conversion, times in seconds, keyframe
//! flags), by ffprobe when it is installed, the same bytes through a
//! seeking writer, and input errors.
#![allow(clippy::indexing_slicing, clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use crate::common;

use common::fragments::same_packets;
use common::mux::*;
use common::*;
use mediaslice::mux::copy::{add_tracks, copy_packets};
use mediaslice::{
    Codec, Demuxer, ErrorKind, MuxFormat, Muxer, Packet, Rational, SeekWriterSink, SliceSink, SliceSource, Track,
    TrackKind, TrackSpec, WriterSink,
};

/// Corpus and sample families whose codecs MP4 carries.
const FAMILIES: &[&str] = &[
    "mp4", "matroska", "mpegts", "adts", "h264", "h265", "flac", "ac3", "ogg",
];

fn check_file(f: &TestFile) -> Option<usize> {
    let bytes = f.read();
    let mut out = vec![0u8; bytes.len() * 2 + (1 << 20)];
    let r = remux(
        &bytes,
        f.ext().as_deref(),
        MuxFormat::Mp4,
        SliceSink::new(&mut out),
        1 << 22,
    );
    let (sink, _, want) = match r {
        Ok(x) => x,
        Err(e) => {
            println!("skip {}: {e}", f.label());
            return None;
        }
    };
    if want.is_empty() {
        println!("skip {}: no track MP4 carries", f.label());
        return None;
    }
    let written = sink.written();
    if let Some(dir) = std::env::var_os("MP4MUX_KEEP") {
        std::fs::write(std::path::Path::new(&dir).join(format!("{}.mp4", f.name)), written).unwrap();
    }
    same_packets(&f.label(), written, &want);
    Some(written.len())
}

#[test]
fn corpus_and_samples_round_trip_through_mp4() {
    round_trip_families(FAMILIES, "MP4", check_file);
}

#[test]
fn a_slice_and_a_seeking_writer_give_the_same_bytes_and_a_stream_is_refused() {
    for (fam, name) in [
        ("mp4", "h264_bframes_aac.mp4"),
        ("mpegts", "h264_aac.ts"),
        ("adts", "aac_lc.aac"),
    ] {
        let (bytes, ext) = corpus_file(fam, name);
        let mut out = vec![0u8; bytes.len() * 2];
        let (slice, _, _) = remux(
            &bytes,
            ext.as_deref(),
            MuxFormat::Mp4,
            SliceSink::new(&mut out),
            1 << 20,
        )
        .unwrap();
        let slice = slice.written().to_vec();
        let sink = SeekWriterSink::new(VecFile::default()).unwrap();
        let (seeking, _, _) = remux(&bytes, ext.as_deref(), MuxFormat::Mp4, sink, 1 << 20).unwrap();
        assert_eq!(seeking.into_inner().data, slice, "{name}");
        let mut buf = vec![0u8; bytes.len() * 2];
        let Err(e) = remux(
            &bytes,
            ext.as_deref(),
            MuxFormat::Mp4,
            WriterSink::new(&mut buf[..]),
            1 << 20,
        ) else {
            panic!("{name}: a stream sink accepted")
        };
        assert_eq!(e.kind(), ErrorKind::Unsupported, "{name}: {e}");
    }
}

#[test]
fn mov_has_the_qt_brand_and_reads_back() {
    let (bytes, ext) = corpus_file("mp4", "h264_aac.mp4");
    let mut out = vec![0u8; bytes.len() * 2];
    let (sink, _, want) = remux(
        &bytes,
        ext.as_deref(),
        MuxFormat::Mov,
        SliceSink::new(&mut out),
        1 << 20,
    )
    .unwrap();
    let w = sink.written();
    assert_eq!(&w[4..12], b"ftypqt  ");
    let (_, got) = read_back(w);
    assert_eq!(got, want);
}

/// The index bytes a remux used: the scratch filled with two different
/// sentinels, the used length where either run changed it.
fn index_bytes(bytes: &[u8], ext: Option<&str>) -> (usize, u64) {
    let mut used = 0;
    let mut samples = 0;
    for fill in [0x00u8, 0xFF] {
        let mut join = scratch_for(bytes.len());
        let mut d = Demuxer::open(SliceSource::with_scratch(bytes, &mut join), ext).unwrap();
        let mut out = vec![0u8; bytes.len() * 2];
        let mut m = Muxer::with_scratch(SliceSink::new(&mut out), MuxFormat::Mp4, vec![fill; 1 << 22]).unwrap();
        let map = add_tracks(&mut d, &mut m).unwrap();
        samples = copy_packets(&mut d, &mut m, &map).unwrap();
        let (_, scratch) = m.finish_parts().unwrap();
        used = used.max(scratch.iter().rposition(|&b| b != fill).map_or(0, |p| p + 1));
    }
    (used, samples)
}

#[test]
fn the_index_costs_about_four_bytes_a_sample_or_less() {
    for (fam, name) in [
        ("mp4", "h264_bframes_aac.mp4"),
        ("mp4", "hevc_aac.mp4"),
        ("mpegts", "h264_aac.ts"),
        ("adts", "aac_lc.aac"),
        ("mp4", "h264_pcm.mov"),
    ] {
        let (bytes, ext) = corpus_file(fam, name);
        let (used, samples) = index_bytes(&bytes, ext.as_deref());
        let per = used as f64 / samples as f64;
        println!("index {name}: {used} bytes for {samples} samples, {per:.2} bytes a sample");
        assert!(per <= 4.5, "{name}: {per}");
    }
}

#[test]
fn input_errors_are_errors_not_panics() {
    let video = Track {
        kind: TrackKind::Video,
        codec: Codec::H264,
        time_base: Rational::new(1, 90_000),
        width: 64,
        height: 64,
        ..Track::default()
    };
    let avcc = [1u8, 0x42, 0xC0, 0x0B, 0xFF, 0xE1, 0, 2, 0x67, 0x42, 1, 0, 2, 0x68, 0xCE];
    let mut out = vec![0u8; 1 << 16];
    // A codec MP4 has no entry for, and a track without a time base.
    let mut m = Muxer::with_scratch(SliceSink::new(&mut out), MuxFormat::Mp4, vec![0u8; 64]).unwrap();
    let theora = Track {
        codec: Codec::Theora,
        ..video.clone()
    };
    assert_eq!(
        m.add_track(&TrackSpec::new(&theora)).unwrap_err().kind(),
        ErrorKind::Unsupported
    );
    let untimed = Track {
        time_base: Rational::new(0, 0),
        ..video.clone()
    };
    let e = m.add_track(&TrackSpec::new(&untimed).with_config(&avcc)).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Unsupported);
    // A configuration larger than the context holds.
    let huge = vec![1u8; mediaslice::format::mux_traits::MAX_CONFIG_BYTES + 1];
    let e = m.add_track(&TrackSpec::new(&video).with_config(&huge)).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::CapacityExceeded);
    assert_eq!(m.add_track(&TrackSpec::new(&video).with_config(&avcc)).unwrap(), 0);
    // An undeclared track.
    let p = Packet::contiguous(3, 0, &[0, 0, 0, 1, 0x65]).with_times(Some(0), Some(0), None);
    assert_eq!(m.write_packet(&p).unwrap_err().kind(), ErrorKind::InvalidArgument);
    // Decode times going back.
    let sample = [0u8, 0, 0, 1, 0x65];
    m.write_packet(&Packet::contiguous(0, 0, &sample).with_times(Some(3000), Some(3000), None))
        .unwrap();
    let e = m
        .write_packet(&Packet::contiguous(0, 0, &sample).with_times(Some(0), Some(0), None))
        .unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Unsupported);
    assert!(e.description().contains("ISO/IEC 14496-12"), "{e}");

    // A scratch too small for the index.
    let mut m = Muxer::with_scratch(SliceSink::new(&mut out), MuxFormat::Mp4, vec![0u8; 8]).unwrap();
    m.add_track(&TrackSpec::new(&video).with_config(&avcc)).unwrap();
    let mut err = None;
    for i in 0..100 {
        let p = Packet::contiguous(0, 0, &sample).with_times(Some(i * 3000), Some(i * 3000), None);
        if let Err(e) = m.write_packet(&p) {
            err = Some(e);
            break;
        }
    }
    let e = err.expect("the index fills");
    assert_eq!(e.kind(), ErrorKind::CapacityExceeded);
    assert!(m.finish().is_err());

    // Garbage payloads, timestamps and flags: errors or output, never a panic.
    let mut seed = 0x9E37_79B9_7F4A_7C15u64;
    for round in 0..200 {
        let mut m = Muxer::with_scratch(SliceSink::new(&mut out), MuxFormat::Mp4, vec![0u8; 256]).unwrap();
        let aac = Track {
            kind: TrackKind::Audio,
            codec: Codec::Aac,
            time_base: Rational::new(1, 44_100),
            ..Track::default()
        };
        let _ = m.add_track(&TrackSpec::new(&video));
        let _ = m.add_track(&TrackSpec::new(&aac));
        let mut payload = [0u8; 64];
        for _ in 0..20 {
            for b in payload.iter_mut() {
                seed ^= seed << 13;
                seed ^= seed >> 7;
                seed ^= seed << 17;
                *b = if seed % 3 == 0 { 0 } else { seed as u8 };
            }
            let t = (seed % 3) as usize;
            let ts = (seed >> 8) as i64 % 100_000 - 1000;
            let p = Packet::contiguous(t, 0, &payload[..(seed % 64) as usize]).with_times(Some(ts), Some(ts), None);
            if m.write_packet(&p).is_err() && round % 2 == 0 {
                break;
            }
        }
        let _ = m.finish();
    }
}

/// ffprobe reads each output with the packets (times, keyframes, sizes) of
/// the input that ffprobe reads, less the bytes a conversion removes.
#[test]
fn ffprobe_reads_the_outputs_with_the_inputs_packets() {
    let Some(dir) = ffprobe_dir("mp4mux") else { return };
    let files = [
        ("mp4", "h264_aac.mp4"),
        ("mp4", "h264_bframes_aac.mp4"),
        ("mp4", "hevc_aac.mp4"),
        ("mpegts", "h264_aac.ts"),
        ("adts", "aac_lc.aac"),
        ("matroska", "vp9_opus.webm"),
        ("matroska", "flac.mka"),
    ];
    for (fam, name) in files {
        let (bytes, ext) = corpus_file(fam, name);
        let mut out = vec![0u8; bytes.len() * 2];
        let (sink, map, _) = remux(
            &bytes,
            ext.as_deref(),
            MuxFormat::Mp4,
            SliceSink::new(&mut out),
            1 << 20,
        )
        .unwrap();
        let path = dir.join(format!("{name}.mp4"));
        std::fs::write(&path, sink.written()).unwrap();
        let input = corpus_dir().join("files").join(fam).join(name);
        let (want, got) = (ffprobe_packets(&input).unwrap(), ffprobe_packets(&path).unwrap());
        for (i, j) in map.iter().enumerate().filter_map(|(i, j)| j.map(|j| (i, j))) {
            let (w, g) = (&want[i], &got[j]);
            assert_eq!(w.len(), g.len(), "{name} stream {i}: packets");
            let adts = fam == "adts" || fam == "mpegts" && i == 1;
            let annexb = fam == "mpegts" && i == 0;
            for (k, (w, g)) in w.iter().zip(g).enumerate() {
                let close = |a: Option<f64>, b: Option<f64>| match (a, b) {
                    (Some(a), Some(b)) => (a - b).abs() < 2e-6,
                    _ => true,
                };
                assert!(close(w.0, g.0), "{name} stream {i} packet {k}: pts {:?} {:?}", w.0, g.0);
                assert!(close(w.1, g.1), "{name} stream {i} packet {k}: dts {:?} {:?}", w.1, g.1);
                assert_eq!(w.3, g.3, "{name} stream {i} packet {k}: keyframe");
                if adts {
                    assert!(w.2 == g.2 + 7 || w.2 == g.2 + 9, "{name} stream {i} packet {k}: size");
                } else if !annexb {
                    assert_eq!(w.2, g.2, "{name} stream {i} packet {k}: size");
                }
            }
        }
        println!("ffprobe {name}: same packets");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// Not a timed test: `MP4MUX_BENCH=file cargo test --release -p mediaslice
/// --test suite mp4_mux::bench -- --ignored --nocapture` prints the remux time of
/// a file held in memory to a memory sink, and the index bytes a sample.
#[test]
#[ignore]
fn bench_remux_to_mp4() {
    let Some(path) = std::env::var_os("MP4MUX_BENCH") else {
        println!("skip: set MP4MUX_BENCH to a file");
        return;
    };
    let path = std::path::PathBuf::from(path);
    let bytes = std::fs::read(&path).unwrap();
    let ext = ext_of(&path);
    let mut out = vec![0u8; bytes.len() + (64 << 20)];
    let mut join = vec![0u8; 16 << 20];
    for round in 0..3 {
        let t = std::time::Instant::now();
        let mut d = Demuxer::open(SliceSource::with_scratch(&bytes, &mut join), ext.as_deref()).unwrap();
        let mut m = Muxer::with_scratch(SliceSink::new(&mut out), MuxFormat::Mp4, vec![0xFFu8; 16 << 20]).unwrap();
        let map = add_tracks(&mut d, &mut m).unwrap();
        let n = copy_packets(&mut d, &mut m, &map).unwrap();
        let (sink, scratch) = m.finish_parts().unwrap();
        let el = t.elapsed();
        let used = scratch.iter().rposition(|&b| b != 0xFF).map_or(0, |p| p + 1);
        println!(
            "round {round}: {} MB in, {} MB out, {n} samples, {:.1} ms, {:.0} MB/s, index {used} B ({:.2} B/sample)",
            bytes.len() / 1_000_000,
            sink.written().len() / 1_000_000,
            el.as_secs_f64() * 1000.0,
            bytes.len() as f64 / el.as_secs_f64() / 1e6,
            used as f64 / n as f64
        );
    }
}

/// AAC with no configuration: the packets must be ADTS. A raw frame (the
/// first of ffmpeg's `-movflags empty_moov` fMP4 made from ADTS, whose
/// `esds` has no DecoderSpecificInfo) is refused, never read as an ADTS
/// header (docs/write-side.md, `mediaslice remux`).
#[test]
fn aac_without_config_refuses_raw_frames() {
    let mut out = vec![0u8; 1 << 16];
    let mut m = Muxer::with_scratch(SliceSink::new(&mut out), MuxFormat::Mp4, vec![0u8; 4096]).unwrap();
    let aac = Track {
        kind: TrackKind::Audio,
        codec: Codec::Aac,
        time_base: Rational::new(1, 48_000),
        sample_rate: 48_000,
        channels: 2,
        ..Track::default()
    };
    m.add_track(&TrackSpec::new(&aac)).unwrap();
    let raw = [
        0x21, 0x29, 0xcf, 0x04, 0xfe, 0xf8, 0x00, 0x09, 0xdb, 0x4d, 0x15, 0x95, 0xaf, 0x56, 0x4e, 0xed,
    ];
    let e = m
        .write_packet(&Packet::contiguous(0, 0, &raw).with_times(Some(0), Some(0), None))
        .unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Malformed);
}
