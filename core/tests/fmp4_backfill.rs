//! The fragmented MP4 muxer and inputs whose first packets have no decode
//! time (Matroska with B-frames; `format/mp4/fmp4_backfill.rs`): every
//! packet reads back with its payload and presentation time, decode times
//! strictly increasing, the same as the progressive muxer's rebuild, on a
//! patchable sink and a stream; a fragment that fills before the first
//! decode time is known is a clear error; hand-built presentation-only
//! packets that go back get decode times.
#![allow(clippy::indexing_slicing, clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use crate::common;

use common::fragments::*;
use common::mux::*;
use common::*;
use mediaslice::{
    Codec, Demuxer, ErrorKind, Fragmenting, MuxFormat, Muxer, Packet, Rational, SliceSink, SliceSource, Track,
    TrackKind, TrackSpec, WriterSink,
};

const FMP4: MuxFormat = MuxFormat::Fmp4(Fragmenting::DEFAULT);

/// Short fragments: the waiting packets in the first, several after it.
const SHORT: MuxFormat = MuxFormat::Fmp4(Fragmenting {
    duration_ms: 200,
    ..Fragmenting::DEFAULT
});

/// Scratch for a remux: the records and one fragment of payload.
const SCRATCH: usize = 8 << 20;

/// Whether some packet of `bytes` has a presentation time and no decode
/// time.
fn lacks_decode_times(bytes: &[u8], ext: Option<&str>) -> bool {
    let mut join = vec![0u8; bytes.len() + 4096];
    let Ok(mut d) = Demuxer::open(SliceSource::with_scratch(bytes, &mut join), ext) else {
        return false;
    };
    while let Ok(Some(p)) = d.next_packet() {
        if p.pts.is_some() && p.dts.is_none() {
            return true;
        }
    }
    false
}

/// Per track, the decode times read back, each strictly after the one
/// before (`label` names the output in a failure).
fn increasing_dts(label: &str, out: &[u8]) -> Vec<Vec<(i128, i128)>> {
    let (_, got) = read_back(out);
    got.iter()
        .enumerate()
        .map(|(t, g)| {
            let dts: Vec<(i128, i128)> = g.iter().map(|s| s.dts.unwrap()).collect();
            for w in dts.windows(2) {
                let (a, b) = (w[0].0 * w[1].1, w[1].0 * w[0].1);
                assert!(a < b, "{label} track {t}: decode times {:?} then {:?}", w[0], w[1]);
            }
            dts
        })
        .collect()
}

#[test]
fn matroska_b_frames_round_trip_on_a_patchable_sink_and_a_stream() {
    let mut done = 0;
    for f in family_files("matroska").into_iter().chain(family_files("chapters")) {
        let bytes = f.read();
        let ext = f.ext();
        if !lacks_decode_times(&bytes, ext.as_deref()) {
            continue;
        }
        let label = f.label();
        let mut out = vec![0u8; bytes.len() * 2 + (1 << 20)];
        let (sink, _, want) = match remux(&bytes, ext.as_deref(), SHORT, SliceSink::new(&mut out), SCRATCH) {
            Ok(x) => x,
            // What this test guards is the decode times; an input the
            // muxer cannot take otherwise (a codec, a truncated sample) is
            // another matter.
            Err(e) if !e.to_string().contains("decode time") => {
                println!("skip {label}: {e}");
                continue;
            }
            Err(e) => panic!("{label}: {e}"),
        };
        let patched = sink.written().to_vec();
        same_packets(&label, &patched, &want);
        let dts = increasing_dts(&label, &patched);
        // The same from a stream sink (the init segment held until the
        // first fragment closes).
        let mut buf = vec![0u8; bytes.len() * 2 + (1 << 20)];
        let (sink, _, _) = remux(&bytes, ext.as_deref(), SHORT, WriterSink::new(&mut buf[..]), SCRATCH).unwrap();
        let n = mediaslice::Sink::position(&sink) as usize;
        let streamed = buf[..n].to_vec();
        same_packets(&format!("{label} (stream)"), &streamed, &want);
        assert_eq!(increasing_dts(&label, &streamed), dts, "{label}: stream and file");
        // The progressive muxer's rebuild gives the same decode times to a
        // track whose reader gave some (the rest are back-filled from the
        // first one); a track with none at all (a reorder depth its reader
        // did not find) is rebuilt by each muxer its own way.
        let given: Vec<bool> = want.iter().map(|w| w.iter().any(|s| s.dts.is_some())).collect();
        let mut buf = vec![0u8; bytes.len() * 2 + (1 << 20)];
        let (sink, _, _) = remux(
            &bytes,
            ext.as_deref(),
            MuxFormat::Mp4,
            SliceSink::new(&mut buf),
            SCRATCH,
        )
        .unwrap();
        let (_, progressive) = read_back(sink.written());
        for (t, g) in progressive.iter().enumerate() {
            let pdts: Vec<(i128, i128)> = g.iter().map(|s| s.dts.unwrap()).collect();
            if given[t] {
                assert_eq!(
                    pdts, dts[t],
                    "{label} track {t}: fragmented and progressive decode times"
                );
            } else {
                println!("note {label} track {t}: no decode time given, not compared with the progressive muxer");
            }
        }
        println!("{label}: {} fragments read back", count_boxes(&patched, b"moof"));
        done += 1;
    }
    assert!(done >= 2, "only {done} Matroska files with B-frames remuxed");
}

#[test]
fn a_fragment_full_before_the_first_decode_time_is_a_clear_error() {
    let (bytes, ext) = corpus_file("matroska", "h264_aac.mkv");
    let fmt = MuxFormat::Fmp4(Fragmenting {
        max_samples: 1,
        ..Fragmenting::DEFAULT
    });
    let mut out = vec![0u8; bytes.len() * 2 + (1 << 20)];
    let e = remux(&bytes, ext.as_deref(), fmt, SliceSink::new(&mut out), SCRATCH).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::CapacityExceeded, "{e}");
    assert!(e.to_string().contains("first decode times"), "{e}");
    // Three records a fragment: the two waiting video packets and an
    // audio one fit; the next video packet brings the decode time before
    // the fragment closes.
    let fmt = MuxFormat::Fmp4(Fragmenting {
        max_samples: 3,
        ..Fragmenting::DEFAULT
    });
    let (sink, _, want) = remux(&bytes, ext.as_deref(), fmt, SliceSink::new(&mut out), SCRATCH).unwrap();
    same_packets("h264_aac.mkv, 3 samples a fragment", sink.written(), &want);
}

/// I P B B P (presentation 0 30 10 20 60, 10 ticks a frame) as a reader
/// with reorder depth 1 gives it: no decode time for the first packet.
#[test]
fn presentation_times_only_get_decode_times_one_frame_apart() {
    let t = Track {
        kind: TrackKind::Video,
        codec: Codec::Vp9,
        time_base: Rational::new(1, 1000),
        width: 64,
        height: 64,
        ..Track::default()
    };
    let times = [(0, None), (30, Some(0)), (10, Some(10)), (20, Some(20)), (60, Some(30))];
    let write = |times: &[(i64, Option<i64>)]| {
        let mut buf = vec![0u8; 1 << 16];
        let mut m = Muxer::with_scratch(SliceSink::new(&mut buf), FMP4, vec![0u8; 1 << 16]).unwrap();
        m.add_track(&TrackSpec::new(&t)).unwrap();
        for (k, &(pts, dts)) in times.iter().enumerate() {
            let p = Packet::contiguous(0, 0, b"frame").with_times(Some(pts), dts, Some(10));
            let flags = mediaslice::PacketFlags {
                keyframe: k == 0,
                ..p.flags
            };
            m.write_packet(&p.with_flags(flags)).unwrap();
        }
        let n = m.finish().unwrap().written().len();
        buf.truncate(n);
        let (_, got) = read_back(&buf);
        let ms = |v: Option<(i128, i128)>| v.map(|(n, d)| (n * 1000 / d) as i64).unwrap();
        got[0].iter().map(|s| (ms(s.pts), ms(s.dts))).collect::<Vec<_>>()
    };
    let got = write(&times);
    assert_eq!(got, [(0, -10), (30, 0), (10, 10), (20, 20), (60, 30)]);
    // No decode time at all (a track that ends while waiting): from its
    // least presentation time, one frame apart, before every one shown.
    let got = write(&times.map(|(p, _)| (p, None)));
    let want: Vec<i64> = (0..5).map(|k| -50 + 10 * k).collect();
    assert_eq!(got.iter().map(|g| g.1).collect::<Vec<_>>(), want);
    assert_eq!(got.iter().map(|g| g.0).collect::<Vec<_>>(), times.map(|t| t.0));
}
