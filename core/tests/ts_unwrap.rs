//! MPEG-TS times across the 2^33 wrap of the 90 kHz clock, unwrapped once
//! as ffmpeg does (`mediaslice::format::mpeg` `wrap`, feature `ts-unwrap`):
//! a corpus file looped and moved so that its times cross the wrap, written
//! to TS by our muxer (times modulo 2^33), read back by our demuxer and
//! compared, packet by packet, with ffprobe's pts and dts when ffprobe is
//! installed.
#![cfg(feature = "ts-unwrap")]
#![allow(clippy::indexing_slicing, clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use crate::common;

use common::mux::{ffprobe_json, looped_ts};
use common::*;
use mediaslice::{Demuxer, SliceSource};

const WRAP: i64 = 1 << 33;

/// Per track, our packets' (pts, dts), and the start time in µs.
type Read = (Vec<Vec<(Option<i64>, Option<i64>)>>, Option<i64>);

fn read(ts: &[u8]) -> Read {
    let mut join = scratch_for(ts.len());
    let mut d = Demuxer::open(SliceSource::with_scratch(ts, &mut join), Some("ts")).unwrap();
    let start = d.info().start_us;
    let mut got = vec![Vec::new(); d.tracks().len()];
    while let Some(p) = d.next_packet().unwrap() {
        got[p.track].push((p.pts, p.dts));
    }
    (got, start)
}

/// The looped file starting `before_ms` before the wrap, `loops` times:
/// our times are the input's less `shift`, and (when ffprobe is
/// installed) ffprobe's pts and dts, and its start time.
fn check(before_ms: i64, loops: i64, shift: i64) {
    // 2^33 ticks is 95,443,717.7 ms; the output starts 1.4 s after the
    // input's first time.
    let label = format!("h264_aac.mp4 x{loops} at 2^33 - {before_ms} ms");
    let (ts, _, want) = looped_ts("mp4", "h264_aac.mp4", loops, 95_443_717 - 1_400 - before_ms, &[]);
    let (got, start) = read(&ts);
    for (i, (g, w)) in got.iter().zip(&want).enumerate() {
        let decode: Vec<i64> = g.iter().map(|p| p.1.or(p.0).unwrap()).collect();
        let w: Vec<i64> = w.iter().map(|e| e - shift).collect();
        assert_eq!(decode, w, "{label} track {i}: decode times");
        assert!(
            w[0] < WRAP - shift && *w.last().unwrap() >= WRAP - shift,
            "{label}: across the wrap"
        );
    }
    let Some((ok, _, doc)) = ffprobe_json("ts-unwrap", "unwrap.ts", &ts, &["-show_packets", "-show_format"]) else {
        return;
    };
    assert!(ok, "{label}: ffprobe failed");
    let mut theirs = vec![Vec::new(); got.len()];
    for p in doc["packets"].as_array().unwrap() {
        let s = p["stream_index"].as_u64().unwrap() as usize;
        theirs[s].push((p["pts"].as_i64(), p["dts"].as_i64()));
    }
    for (i, (ours, theirs)) in got.iter().zip(&theirs).enumerate() {
        assert_eq!(ours.len(), theirs.len(), "{label} stream {i}: packets");
        for (k, (o, t)) in ours.iter().zip(theirs).enumerate() {
            assert_eq!(o, t, "{label} stream {i} packet {k}: (pts, dts) against ffprobe");
        }
        println!(
            "{label} stream {i}: {} packets as ffprobe, dts {:?} to {:?}",
            ours.len(),
            ours[0].1,
            ours.last().unwrap().1
        );
    }
    let s: f64 = doc["format"]["start_time"].as_str().unwrap().parse().unwrap();
    let s = (s * 1e6).round() as i64;
    assert!(
        start.is_some_and(|x| (x - s).abs() <= 1),
        "{label}: start {start:?} µs, ffprobe {s} µs"
    );
}

/// First time 2 s before the wrap, within ffmpeg's 60 s: the times before
/// the wrap are taken 2^33 off (negative), those after it stay.
#[test]
fn within_60_s_of_the_wrap_times_start_negative_as_ffprobe() {
    check(2_000, 5, WRAP);
}

/// First time 90 s before the wrap: the times after it get 2^33 added and
/// go on past 2^33.
#[test]
fn minutes_before_the_wrap_times_go_on_past_2_pow_33_as_ffprobe() {
    check(90_000, 95, 0);
}
