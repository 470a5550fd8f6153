//! The fragmented MP4 / CMAF muxer (`format/mp4/fmp4*.rs`): corpus and
//! sample files remuxed to fragmented MP4 and read back by our demuxer
//! (payload CRC after the expected conversion, times as exact fractions of
//! a second, keyframes); a slice, a seeking writer and a stream sink read
//! back the same; fragments cut at keyframes; early closes counted; a
//! stream scratch too small is `CapacityExceeded`; power cuts at every
//! fragment boundary and inside fragments; ffprobe reads the outputs.
#![allow(clippy::indexing_slicing, clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use crate::common;

use common::fragments::*;
use common::mux::*;
use common::*;
use mediaslice::{
    Codec, Demuxer, ErrorKind, Fragmenting, MuxFormat, Muxer, Packet, Rational, SeekWriterSink, SliceSink, SliceSource,
    Track, TrackKind, TrackSpec, WriterSink,
};

const FMP4: MuxFormat = MuxFormat::Fmp4(Fragmenting::DEFAULT);

/// Corpus and sample families whose codecs MP4 carries.
const FAMILIES: &[&str] = &[
    "mp4", "matroska", "mpegts", "adts", "h264", "h265", "flac", "ac3", "ogg",
];

/// Scratch for a remux: the records and one fragment of payload.
const SCRATCH: usize = 8 << 20;

fn check_file(f: &TestFile) -> Option<(usize, u32)> {
    let bytes = f.read();
    let mut out = vec![0u8; bytes.len() * 2 + (1 << 20)];
    let r = remux(&bytes, f.ext().as_deref(), FMP4, SliceSink::new(&mut out), SCRATCH);
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
    if let Some(dir) = std::env::var_os("FMP4MUX_KEEP") {
        std::fs::write(std::path::Path::new(&dir).join(format!("{}.mp4", f.name)), written).unwrap();
    }
    same_packets(&f.label(), written, &want);
    Some((written.len(), count_boxes(written, b"moof")))
}

#[test]
fn corpus_and_samples_round_trip_through_fmp4() {
    let (mut done, mut fragments) = (0, 0);
    for fam in FAMILIES {
        for f in family_files(fam) {
            if let Some((_, n)) = check_file(&f) {
                done += 1;
                fragments += n;
            }
        }
    }
    if samples_dir().is_none() {
        println!("skip ../shared/samples: absent");
    }
    println!("{done} files remuxed to fragmented MP4 ({fragments} fragments) and read back");
    assert!(done >= 8, "only {done} files remuxed");
}

/// `remux` to a fresh `Vec` through a stream sink.
fn remux_stream(bytes: &[u8], ext: Option<&str>, format: MuxFormat, scratch: usize) -> mediaslice::Result<Vec<u8>> {
    let mut buf = vec![0u8; bytes.len() * 2 + (1 << 20)];
    let (sink, _, _) = remux(bytes, ext, format, WriterSink::new(&mut buf[..]), scratch)?;
    let n = mediaslice::Sink::position(&sink) as usize;
    Ok(buf[..n].to_vec())
}

#[test]
fn a_slice_a_seeking_writer_and_a_stream_read_back_the_same() {
    for (fam, name) in [
        ("mp4", "h264_bframes_aac.mp4"),
        ("mp4", "hevc_aac.mp4"),
        ("mpegts", "h264_aac.ts"),
        ("adts", "aac_lc.aac"),
        ("matroska", "vp9_opus.webm"),
    ] {
        let (bytes, ext) = corpus_file(fam, name);
        let mut out = vec![0u8; bytes.len() * 2 + (1 << 20)];
        let (slice, _, want) = remux(&bytes, ext.as_deref(), FMP4, SliceSink::new(&mut out), SCRATCH).unwrap();
        let slice = slice.written().to_vec();
        let sink = SeekWriterSink::new(VecFile::default()).unwrap();
        let (seeking, _, _) = remux(&bytes, ext.as_deref(), FMP4, sink, SCRATCH).unwrap();
        assert_eq!(seeking.into_inner().data, slice, "{name}: seeking writer");
        let stream = remux_stream(&bytes, ext.as_deref(), FMP4, SCRATCH).unwrap();
        same_packets(&format!("{name} (slice)"), &slice, &want);
        same_packets(&format!("{name} (stream)"), &stream, &want);
        // The stream form has no padding: every fragment is moof + mdat.
        let kinds: Vec<_> = top_boxes(&stream).iter().map(|b| b.1).collect();
        assert_eq!(&kinds[..2], &[*b"ftyp", *b"moov"], "{name}");
        for pair in kinds[2..].chunks(2) {
            assert_eq!(pair, &[*b"moof", *b"mdat"], "{name}: stream layout");
        }
        // The patchable form: each moof right before its mdat, `free` only
        // before a moof, and the file ends with `mfra`.
        let boxes = top_boxes(&slice);
        let (last, boxes) = boxes.split_last().unwrap();
        assert_eq!(&last.1, b"mfra", "{name}");
        for (k, b) in boxes.iter().enumerate().skip(2) {
            match &b.1 {
                b"moof" => assert_eq!(&boxes[k + 1].1, b"mdat", "{name}"),
                b"free" => assert_eq!(&boxes[k + 1].1, b"moof", "{name}"),
                b"mdat" => assert_eq!(&boxes[k - 1].1, b"moof", "{name}"),
                other => panic!("{name}: top-level {:?}", std::str::from_utf8(other)),
            }
        }
        check_mfra(name, &slice);
        println!(
            "{name}: {} bytes (slice), {} (stream), {} fragments",
            slice.len(),
            stream.len(),
            count_boxes(&stream, b"moof")
        );
    }
}

/// ftyp brands, one trex per track, fragments starting with a video
/// keyframe and lasting at least the fragment duration.
#[test]
fn fragments_start_at_keyframes_and_last_the_duration() {
    // 2 s, a keyframe every 0.5 s.
    let (bytes, ext) = corpus_file("mp4", "h264_aac_fragmented.mp4");
    for ms in [300u32, 500, 900] {
        let fmt = MuxFormat::Fmp4(Fragmenting::with_duration_ms(ms));
        let out = remux_stream(&bytes, ext.as_deref(), fmt, SCRATCH).unwrap();
        let boxes = top_boxes(&out);
        let ftyp = &out[8..boxes[0].2];
        assert_eq!(&ftyp[..4], b"iso6");
        assert!(ftyp.windows(4).any(|w| w == b"cmfc"), "cmfc brand");
        let moov = &out[boxes[1].0..boxes[1].0 + boxes[1].2];
        assert_eq!(moov.windows(4).filter(|w| w == b"trex").count(), 2);
        // Video key frames, as the demuxer reads them, and where fragments
        // start (the first video packet of each moof).
        let mut d = Demuxer::open(SliceSource::new(&out), Some("mp4")).unwrap();
        let tb = d.tracks()[0].time_base;
        assert_eq!(d.tracks()[0].kind, TrackKind::Video);
        let moofs: Vec<u64> = boxes.iter().filter(|b| &b.1 == b"moof").map(|b| b.0 as u64).collect();
        let mut starts = Vec::new();
        let mut seen = 0;
        while let Some(p) = d.next_packet().unwrap() {
            if p.track != 0 {
                continue;
            }
            let frag = moofs.iter().filter(|&&m| m < p.pos.unwrap()).count();
            if frag > seen {
                seen = frag;
                assert!(p.flags.keyframe, "{ms} ms: fragment {frag} starts with a keyframe");
                starts.push(p.dts.unwrap());
            }
        }
        assert_eq!(starts.len(), moofs.len(), "{ms} ms: every fragment has video");
        for w in starts.windows(2) {
            let secs = (w[1] - w[0]) as f64 * f64::from(tb.num) / f64::from(tb.den);
            assert!(secs * 1000.0 >= f64::from(ms) - 0.5, "{ms} ms: a fragment of {secs} s");
        }
        println!("{ms} ms: {} fragments", moofs.len());
        assert!(moofs.len() >= 2);
    }
}

#[test]
fn a_full_record_table_closes_the_fragment_early_and_counts_it() {
    let (bytes, ext) = corpus_file("adts", "aac_lc.aac");
    let fmt = MuxFormat::Fmp4(Fragmenting {
        max_samples: 10,
        ..Fragmenting::DEFAULT
    });
    let mut d = Demuxer::open(SliceSource::new(&bytes), ext.as_deref()).unwrap();
    let mut out = vec![0u8; bytes.len() * 2];
    let mut m = Muxer::with_scratch(SliceSink::new(&mut out), fmt, vec![0u8; 1 << 20]).unwrap();
    let map = mediaslice::mux::copy::add_tracks(&mut d, &mut m).unwrap();
    let n = mediaslice::mux::copy::copy_packets(&mut d, &mut m, &map).unwrap();
    let st = m.fragment_stats().unwrap();
    println!("{n} packets: {st:?}");
    assert_eq!(st.most_samples, 10);
    assert!(st.closed_early >= 1 && u64::from(st.fragments) >= n / 10);
    assert!(m.finish().is_ok());
}

/// On a patchable sink a fragment far longer than those before it (a long
/// GOP after short ones) outgrows the `moof` room reserved for it: it is
/// closed early (counted), the next chunk starts at a non-keyframe, and
/// every packet reads back.
#[test]
fn a_moof_that_outgrows_its_room_closes_the_fragment_early() {
    let t = Track {
        kind: TrackKind::Video,
        codec: Codec::Vp9,
        time_base: Rational::new(1, 1000),
        width: 64,
        height: 64,
        ..Track::default()
    };
    // 3 frames of 100 ms with keyframes at 0 and 300 ms, then 900 frames
    // of 10 ms and a keyframe at 9.3 s.
    let mut times: Vec<i64> = vec![0, 100, 200];
    times.extend((0..900).map(|k| 300 + 10 * k));
    times.push(9300);
    let data: Vec<Vec<u8>> = times
        .iter()
        .map(|&t| vec![(t % 251) as u8; 5 + (t % 7) as usize])
        .collect();
    let fmt = MuxFormat::Fmp4(Fragmenting::with_duration_ms(300));
    let mut out = vec![0u8; 1 << 20];
    let mut m = Muxer::with_scratch(SliceSink::new(&mut out), fmt, vec![0u8; 1 << 20]).unwrap();
    m.add_track(&TrackSpec::new(&t)).unwrap();
    for (k, (&at, d)) in times.iter().zip(&data).enumerate() {
        let key = at == 0 || at == 300 || at == 9300;
        let p = Packet::contiguous(0, 0, d)
            .with_times(
                Some(at),
                Some(at),
                Some(if k + 1 < times.len() {
                    (times[k + 1] - at) as u64
                } else {
                    10
                }),
            )
            .with_flags(mediaslice::PacketFlags {
                keyframe: key,
                ..Default::default()
            });
        m.write_packet(&p).unwrap();
    }
    let st = m.fragment_stats().unwrap();
    let written = m.finish().unwrap().into_written();
    println!("{st:?}");
    assert!(st.closed_early >= 1, "{st:?}");
    let mut d = Demuxer::open(SliceSource::new(written), Some("mp4")).unwrap();
    let mut n = 0;
    while let Some(p) = d.next_packet().unwrap() {
        assert_eq!(p.dts, Some(times[n]), "packet {n}");
        assert_eq!(p.data, &data[n][..], "packet {n}");
        assert_eq!(
            p.flags.keyframe,
            times[n] == 0 || times[n] == 300 || times[n] == 9300,
            "packet {n}"
        );
        n += 1;
    }
    assert_eq!(n, times.len());
    assert!(count_boxes(written, b"moof") > 3);
}

#[test]
fn a_stream_scratch_too_small_for_a_fragment_is_capacity_exceeded() {
    let (bytes, ext) = corpus_file("mp4", "h264_aac.mp4");
    let e = remux_stream(&bytes, ext.as_deref(), FMP4, 64 << 10).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::CapacityExceeded, "{e}");
    assert!(e.to_string().contains("payload"), "{e}");
    // Far too small even for the init segment.
    let e = remux_stream(&bytes, ext.as_deref(), FMP4, 100).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::CapacityExceeded, "{e}");
}

/// Hand-built packets: untimed AAC frames, and times that go back.
#[test]
fn input_errors_are_errors_not_panics() {
    let t = Track {
        kind: TrackKind::Audio,
        codec: Codec::Aac,
        time_base: Rational::new(1, 48_000),
        sample_rate: 48_000,
        channels: 2,
        ..Track::default()
    };
    let mut buf = vec![0u8; 1 << 16];
    let mut m = Muxer::with_scratch(SliceSink::new(&mut buf), FMP4, vec![0u8; 1 << 16]).unwrap();
    m.add_track(&TrackSpec::new(&t).with_config(&[0x11, 0x90])).unwrap();
    // Given decode times that go back (presentation times alone may: see
    // fmp4_backfill.rs).
    m.write_packet(&Packet::contiguous(0, 0, b"frame").with_times(Some(1024), Some(1024), None))
        .unwrap();
    let e = m
        .write_packet(&Packet::contiguous(0, 0, b"frame").with_times(Some(0), Some(0), None))
        .unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Unsupported, "{e}");
    // No scratch: nowhere to build the init segment.
    let mut m = Muxer::new(SliceSink::new(&mut buf), FMP4).unwrap();
    m.add_track(&TrackSpec::new(&t).with_config(&[0x11, 0x90])).unwrap();
    let e = m.write_header().unwrap_err();
    assert_eq!(e.kind(), ErrorKind::CapacityExceeded, "{e}");
    assert!(e.to_string().contains("with_scratch"), "{e}");
    // A codec MP4 cannot carry is refused at add_track.
    let mut m = Muxer::with_scratch(SliceSink::new(&mut buf), FMP4, vec![0u8; 1 << 16]).unwrap();
    let pcm = Track {
        codec: Codec::PcmS16Le,
        ..t.clone()
    };
    assert_eq!(
        m.add_track(&TrackSpec::new(&pcm)).unwrap_err().kind(),
        ErrorKind::Unsupported
    );
}

/// A file cut at every fragment boundary and inside fragments (in the
/// moof, in the mdat header, in the payload) reads as every packet of
/// every complete fragment, the same as the whole file's; a cut inside a
/// fragment is reported (an error that says truncated, or a packet
/// flagged truncated), never a panic.
#[test]
fn a_cut_file_reads_as_its_complete_fragments() {
    for (fam, name, stream) in [
        ("mp4", "h264_aac.mp4", true),
        ("mp4", "h264_aac.mp4", false),
        ("mpegts", "h264_aac.ts", true),
        ("adts", "aac_lc.aac", false),
    ] {
        let (bytes, ext) = corpus_file(fam, name);
        let fmt = MuxFormat::Fmp4(Fragmenting::with_duration_ms(300));
        let out = if stream {
            remux_stream(&bytes, ext.as_deref(), fmt, SCRATCH).unwrap()
        } else {
            let mut buf = vec![0u8; bytes.len() * 2 + (1 << 20)];
            let (s, _, _) = remux(&bytes, ext.as_deref(), fmt, SliceSink::new(&mut buf), SCRATCH).unwrap();
            s.written().to_vec()
        };
        let (whole, err) = read_cut(&out);
        assert!(err.is_none(), "{name}: {err:?}");
        let boxes = top_boxes(&out);
        // Fragment ends: after each mdat. Packets per track in the
        // fragments before each end.
        let mut cuts: Vec<(usize, bool)> = Vec::new();
        for (k, b) in boxes.iter().enumerate() {
            let end = b.0 + b.2;
            if &b.1 == b"mdat" || &b.1 == b"moov" {
                cuts.push((end, true));
            }
            if &b.1 == b"moof" {
                for inside in [
                    b.0 + 1,
                    b.0 + 8,
                    b.0 + b.2 / 2,
                    end,
                    end + 4,
                    end + 8 + boxes[k + 1].2 / 2,
                ] {
                    cuts.push((inside, false));
                }
            }
        }
        let mut checked = 0;
        for (at, boundary) in cuts {
            if at >= out.len() {
                continue;
            }
            let (got, err) = read_cut(&out[..at]);
            // Every complete fragment's packets: those the cut file gives,
            // a prefix of the whole file's for every track.
            let complete: Vec<usize> = {
                let head = &out[..at];
                let fb = top_boxes(head);
                let done_mdats = fb
                    .iter()
                    .filter(|b| &b.1 == b"mdat" && b.0 + b.2 <= at && b.2 > 8)
                    .count();
                // Packets per track in the first `done_mdats` fragments.
                let (per, _) = read_cut(&out[..fragment_end(&boxes, done_mdats)]);
                per.iter().map(Vec::len).collect()
            };
            for (t, g) in got.iter().enumerate() {
                assert!(
                    g.len() >= complete.get(t).copied().unwrap_or(0),
                    "{name} cut at {at}: track {t} has {} packets, the complete fragments {}",
                    g.len(),
                    complete[t]
                );
                assert_eq!(&whole[t][..g.len()], &g[..], "{name} cut at {at}: track {t}");
            }
            if boundary {
                assert!(err.is_none(), "{name} cut at fragment end {at}: {err:?}");
            } else {
                let flagged = got.iter().map(Vec::len).sum::<usize>() < whole.iter().map(Vec::len).sum::<usize>();
                assert!(
                    err.as_ref().is_some_and(|e| e.is_truncation()) || flagged,
                    "{name} cut at {at}: {err:?}"
                );
                if let Some(e) = &err {
                    assert!(e.is_truncation(), "{name} cut at {at}: {e}");
                }
            }
            checked += 1;
        }
        println!("{name} ({}): {checked} cuts", if stream { "stream" } else { "slice" });
        assert!(checked >= 10);
    }
}

/// A power cut while a patchable sink is being written (the bytes as they
/// are after each packet, no `finish`): every packet of every closed
/// fragment reads back, none of the open one, and the open fragment is
/// reported (`mp4.unfinished-fragment`).
#[test]
fn a_power_cut_while_writing_to_a_patchable_sink_keeps_the_closed_fragments() {
    let (bytes, ext) = corpus_file("mp4", "h264_aac_fragmented.mp4");
    let fmt = MuxFormat::Fmp4(Fragmenting::with_duration_ms(300));
    let (whole, _) = {
        let mut buf = vec![0u8; bytes.len() * 2 + (1 << 20)];
        let (s, _, _) = remux(&bytes, ext.as_deref(), fmt, SliceSink::new(&mut buf), SCRATCH).unwrap();
        read_cut(s.written())
    };
    let mut d = Demuxer::open(SliceSource::new(&bytes), ext.as_deref()).unwrap();
    let mut out = vec![0u8; bytes.len() * 2 + (1 << 20)];
    let mut m = Muxer::with_scratch(SliceSink::new(&mut out), fmt, vec![0u8; SCRATCH]).unwrap();
    let map = mediaslice::mux::copy::add_tracks(&mut d, &mut m).unwrap();
    let (mut n, mut checked) = (0, 0);
    while let Some(p) = d.next_packet().unwrap() {
        let Some(j) = map[p.track] else { continue };
        m.write_packet(&Packet { track: j, ..p }).unwrap();
        n += 1;
        if n % 7 != 0 {
            continue;
        }
        let snapshot = m.sink().written().to_vec();
        let closed = m.fragment_stats().unwrap().fragments as usize;
        let (got, err) = read_cut(&snapshot);
        assert!(err.is_none(), "after {n} packets: {err:?}");
        // The closed fragments' packets: the first `closed` fragments of
        // the finished file.
        let boxes = top_boxes(&snapshot);
        let (want, _) = read_cut(&snapshot[..fragment_end(&boxes, closed)]);
        for (t, g) in got.iter().enumerate() {
            assert_eq!(g.len(), want[t].len(), "after {n} packets: track {t}");
            assert_eq!(&whole[t][..g.len()], &g[..], "after {n} packets: track {t}");
        }
        let dm = Demuxer::open(SliceSource::new(&snapshot), Some("mp4")).unwrap();
        let mut dm = dm;
        while dm.next_packet().unwrap().is_some() {}
        assert!(
            dm.diagnostics().contains("mp4.unfinished-fragment"),
            "after {n} packets: the open fragment is reported"
        );
        checked += 1;
    }
    assert!(m.finish().is_ok());
    println!("{checked} power cuts while writing");
    assert!(checked >= 5);
}

/// ffprobe reads each output with the packets (times, keyframes, sizes) of
/// the input that ffprobe reads, less the bytes a conversion removes.
#[test]
fn ffprobe_reads_the_outputs_with_the_inputs_packets() {
    let Some(dir) = ffprobe_dir("fmp4mux") else { return };
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
        let mut out = vec![0u8; bytes.len() * 2 + (1 << 20)];
        let (sink, map, _) = remux(&bytes, ext.as_deref(), FMP4, SliceSink::new(&mut out), SCRATCH).unwrap();
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
        // The stream form too (held fragments, grouped by track).
        let path2 = dir.join(format!("{name}.stream.mp4"));
        std::fs::write(&path2, remux_stream(&bytes, ext.as_deref(), FMP4, SCRATCH).unwrap()).unwrap();
        let got2 = ffprobe_packets(&path2).unwrap();
        for (a, b) in got.iter().zip(&got2) {
            let mut a = a.clone();
            let mut b = b.clone();
            let key = |p: &ProbePkt| (p.1.map(|t| (t * 1e6).round() as i64), p.2);
            a.sort_by_key(key);
            b.sort_by_key(key);
            assert_eq!(
                a, b,
                "{name}: ffprobe reads the stream form's packets as the file form's"
            );
        }
        println!("ffprobe {name}: same packets (file and stream forms)");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// On a sink that can patch, a track whose configuration comes from its
/// packets (Annex B parameter sets, ADTS headers: MPEG-TS H.264 and AAC)
/// holds only the packets before every configuration is known, not the
/// fragment: a scratch far smaller than the first fragment's payload
/// (32 KiB against 64 KB) writes the whole file, with the same
/// packets as a large scratch. Before `release_held` the whole first
/// fragment was held and this was `CapacityExceeded`.
#[test]
fn a_patchable_sink_holds_only_the_packets_before_the_configurations() {
    const SMALL: usize = 32 * 1024;
    let (bytes, ext) = corpus_file("mpegts", "h264_aac.ts");
    let run = |scratch: usize| {
        let mut join = vec![0u8; 1 << 20];
        let mut d = Demuxer::open(SliceSource::with_scratch(&bytes, &mut join), ext.as_deref()).unwrap();
        let mut out = vec![0u8; bytes.len() * 2];
        let mut m = Muxer::with_scratch(SliceSink::new(&mut out), FMP4, vec![0u8; scratch]).unwrap();
        let map = mediaslice::mux::copy::add_tracks(&mut d, &mut m).unwrap();
        let n = mediaslice::mux::copy::copy_packets(&mut d, &mut m, &map)?;
        let st = m.fragment_stats().unwrap();
        let len = m.finish()?.written().len();
        out.truncate(len);
        Ok::<_, mediaslice::Error>((n, st, out))
    };
    let (n_big, st_big, big) = run(8 << 20).unwrap();
    let (n, st, small) = run(SMALL).unwrap();
    // Fragments closed before `finish`: none; the file (3 s, one keyframe)
    // is one fragment, closed at the end.
    assert_eq!((n, st.fragments, st.closed_early), (n_big, st_big.fragments, 0));
    let read = |b: &[u8]| {
        let mut join = vec![0u8; 1 << 20];
        let mut d = Demuxer::open(SliceSource::with_scratch(b, &mut join), None).unwrap();
        let mut v = Vec::new();
        while let Some(p) = d.next_packet().unwrap() {
            v.push((p.track, p.dts, p.pts, p.flags.keyframe, mediaslice::crc::crc32(p.data)));
        }
        v
    };
    let (a, b) = (read(&big), read(&small));
    assert_eq!(a.len() as u64, n);
    assert_eq!(a, b);
    // What a held fragment would have needed.
    let payload: u64 = read_sizes(&small).iter().sum();
    println!("{n} packets, {payload} payload bytes in {SMALL} bytes of scratch");
    assert!(payload > SMALL as u64 * 3 / 2);
}

/// The payload sizes of an MP4's packets.
fn read_sizes(b: &[u8]) -> Vec<u64> {
    let mut d = Demuxer::open(SliceSource::new(b), None).unwrap();
    let mut v = Vec::new();
    while let Some(p) = d.next_packet().unwrap() {
        v.push(p.data.len() as u64);
    }
    v
}

/// The `mfra` at the end of a file written to a patchable sink (ISO/IEC
/// 14496-12 §8.8.9-8.8.11): `mfro` gives its size; one `tfra` (version 1,
/// one-byte numbers) for the cutting track, whose entries name, in file
/// order, `moof` boxes whose `traf` for that track has the entry's time
/// (`tfdt` plus the first sample's composition offset) and starts with a
/// sync sample; one entry per fragment here (below the table's size).
fn check_mfra(name: &str, file: &[u8]) {
    let be32 = |b: &[u8], at: usize| u32::from_be_bytes(b[at..at + 4].try_into().unwrap());
    let be64 = |b: &[u8], at: usize| u64::from_be_bytes(b[at..at + 8].try_into().unwrap());
    let mfro = be32(file, file.len() - 4) as usize;
    let mfra = &file[file.len() - mfro..];
    assert_eq!(&mfra[4..8], b"mfra", "{name}");
    assert_eq!(&mfra[12..16], b"tfra", "{name}");
    assert_eq!(mfra[16], 1, "{name}: tfra version");
    let track = be32(mfra, 20);
    assert_eq!(be32(mfra, 24), 0, "{name}: one-byte numbers");
    let n = be32(mfra, 28) as usize;
    let moofs: Vec<usize> = top_boxes(file)
        .iter()
        .filter(|b| &b.1 == b"moof")
        .map(|b| b.0)
        .collect();
    assert_eq!(n, moofs.len(), "{name}: one entry per fragment");
    for (i, &at) in moofs.iter().enumerate() {
        let e = &mfra[32 + 19 * i..32 + 19 * (i + 1)];
        assert_eq!(be64(e, 8) as usize, at, "{name}: entry {i} offset");
        assert_eq!(&e[17..19], &[1, 1], "{name}: entry {i} trun/sample");
        // The moof's traf number e[16] (after mfhd): its tfhd names the
        // track; then tfdt and the first trun.
        let mut traf = at + 8 + 16;
        for _ in 1..e[16] {
            traf += be32(file, traf) as usize;
        }
        assert_eq!(&file[traf + 4..traf + 8], b"traf");
        let tfhd = traf + 8;
        assert_eq!(be32(file, tfhd + 12), track, "{name}: entry {i} track");
        let tfhd_size = be32(file, tfhd) as usize;
        let tfdt = tfhd + tfhd_size;
        assert_eq!(&file[tfdt + 4..tfdt + 8], b"tfdt");
        let dts = be64(file, tfdt + 12);
        let trun = tfdt + 20;
        assert_eq!(&file[trun + 4..trun + 8], b"trun");
        let flags = be32(file, trun + 8) & 0xff_ffff;
        // data offset (0x1), first_sample_flags (0x4), then the first
        // sample's duration (0x100), size (0x200), flags (0x400),
        // composition offset (0x800).
        let mut at = trun + 16 + 4 * usize::from(flags & 1 != 0);
        let first_flags = (flags & 4 != 0).then(|| be32(file, at));
        at += 4 * usize::from(flags & 4 != 0);
        at += 4 * usize::from(flags & 0x100 != 0) + 4 * usize::from(flags & 0x200 != 0);
        let sample_flags = (flags & 0x400 != 0).then(|| be32(file, at));
        at += 4 * usize::from(flags & 0x400 != 0);
        let cts = if flags & 0x800 != 0 { be32(file, at) as i32 } else { 0 };
        assert_eq!(be64(e, 0) as i64, dts as i64 + i64::from(cts), "{name}: entry {i} time");
        // Sync: sample_is_non_sync_sample (bit 16) clear in the flags that
        // apply to the first sample (the tfhd default otherwise).
        let default = be32(file, tfhd + 16);
        let f = first_flags.or(sample_flags).unwrap_or(default);
        assert_eq!(f & 0x1_0000, 0, "{name}: entry {i} is a sync sample");
    }
}

/// A sink that records its position at every flush.
struct FlushLog<K> {
    inner: K,
    flushed_at: Vec<u64>,
}

impl<K: mediaslice::Sink> mediaslice::Sink for FlushLog<K> {
    fn position(&self) -> u64 {
        self.inner.position()
    }
    fn write_all(&mut self, data: &[u8]) -> mediaslice::Result<()> {
        self.inner.write_all(data)
    }
    fn write_vectored(&mut self, parts: &[&[u8]]) -> mediaslice::Result<()> {
        self.inner.write_vectored(parts)
    }
    fn can_patch(&self) -> bool {
        self.inner.can_patch()
    }
    fn patch_at(&mut self, pos: u64, data: &[u8]) -> mediaslice::Result<()> {
        self.inner.patch_at(pos, data)
    }
    fn flush(&mut self) -> mediaslice::Result<()> {
        self.flushed_at.push(self.inner.position());
        self.inner.flush()
    }
    fn stats(&self) -> mediaslice::SinkStats {
        self.inner.stats()
    }
}

/// A recorder killed after a fragment (a Matroska Cluster) closed loses at
/// most the open one, also on a sink that combines small writes (the std
/// file sink): the muxer flushes the sink as each one closes, at the
/// position where the next begins. 20 s of a synthetic camera (video at 30
/// fps, a keyframe a second, AAC), fragments of 2 s, Clusters of 5 s.
#[test]
fn each_closed_fragment_and_cluster_is_flushed() {
    let ([video, audio], avcc, asc) = camera_tracks();
    let payload = vec![0x55u8; 40_000];
    for (format, unit) in [
        (FMP4, &b"moof"[..]),
        (MuxFormat::Matroska, &[0x1f, 0x43, 0xb6, 0x75][..]),
    ] {
        let mut out = vec![0u8; 32 << 20];
        let sink = FlushLog {
            inner: SliceSink::new(&mut out),
            flushed_at: Vec::new(),
        };
        let mut m = Muxer::with_scratch(sink, format, vec![0u8; SCRATCH]).unwrap();
        m.add_track(&TrackSpec::new(&video).with_config(&avcc)).unwrap();
        m.add_track(&TrackSpec::new(&audio).with_config(&asc)).unwrap();
        m.write_header().unwrap();
        let mut a = 0i64;
        for f in 0..30 * 20 {
            let t = f as i64 * 3000;
            let size = if f % 30 == 0 {
                30_000
            } else {
                4_000 + (f * 37 % 3000) as usize
            };
            let p = Packet::contiguous(0, 0, &payload[..size]).with_times(Some(t), Some(t), Some(3000));
            let p = Packet {
                flags: mediaslice::PacketFlags {
                    keyframe: f % 30 == 0,
                    ..Default::default()
                },
                ..p
            };
            m.write_packet(&p).unwrap();
            while a * 1024 * 90_000 <= t * 48_000 {
                let p =
                    Packet::contiguous(1, 0, &payload[..400]).with_times(Some(a * 1024), Some(a * 1024), Some(1024));
                m.write_packet(&p).unwrap();
                a += 1;
            }
        }
        let sink = m.finish().unwrap();
        let written = sink.inner.written();
        // Where each fragment (its moof's header) or Cluster starts.
        let back = if format == FMP4 { 4 } else { 0 };
        let starts: Vec<u64> = written
            .windows(unit.len())
            .enumerate()
            .filter(|(_, w)| *w == unit)
            .map(|(i, _)| (i - back) as u64)
            .collect();
        assert!(starts.len() >= 4, "{format:?}: {} units", starts.len());
        for s in &starts[1..] {
            // A fragment may follow a `free` box of reserved room: the
            // flush is at the end of the previous unit, at most a few KiB
            // before the next one's header.
            assert!(
                sink.flushed_at.iter().any(|&f| f <= *s && f + 4096 > *s),
                "{format:?}: no flush before the unit at {s}: {:?}",
                sink.flushed_at
            );
        }
    }
}
