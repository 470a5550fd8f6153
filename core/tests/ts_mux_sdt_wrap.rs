//! The MPEG-TS muxer's service description table (SDT, ETSI EN 300 468
//! §5.2.3) and its times across the 2^33 wrap of the 90 kHz clock
//! (ISO/IEC 13818-1 §2.4.3.5 PCR, §2.4.3.7 PTS/DTS): a corpus file looped
//! and moved to just before the wrap, written to TS in memory, then read
//! back by the TS packets themselves, by our demuxer (which unwraps the
//! 33-bit times as ffmpeg does), and by ffprobe when it is installed.
#![allow(clippy::indexing_slicing, clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use crate::common;

use common::mux::{ffprobe_json, looped_ts};
use common::*;
use mediaslice::{Demuxer, SliceSource};

const WRAP: i64 = 1 << 33;
/// The PCR's lead on the decode times (0.7 s, the muxer's `PCR_LEAD`).
const PCR_LEAD: i64 = 63_000;

/// How far `a` is after `b` modulo 2^33, in `-2^32..2^32`.
fn ahead(a: i64, b: i64) -> i64 {
    let d = (a - b).rem_euclid(WRAP);
    if d >= WRAP / 2 {
        d - WRAP
    } else {
        d
    }
}

/// Per TS packet: PID, payload_unit_start, the PCR base if any, the PES
/// DTS (else PTS) if the packet starts a PES with one.
struct TsView {
    pid: u16,
    pcr: Option<i64>,
    decode: Option<i64>,
}

fn time33(b: &[u8]) -> i64 {
    (i64::from(b[0] >> 1 & 7) << 30)
        | (i64::from(b[1]) << 22)
        | (i64::from(b[2] >> 1) << 15)
        | (i64::from(b[3]) << 7)
        | i64::from(b[4] >> 1)
}

fn view(ts: &[u8]) -> Vec<TsView> {
    assert_eq!(ts.len() % 188, 0);
    ts.chunks(188)
        .map(|p| {
            assert_eq!(p[0], 0x47);
            let pid = (u16::from(p[1] & 0x1F) << 8) | u16::from(p[2]);
            let afc = p[3] >> 4 & 3;
            let af = if afc & 2 != 0 { 1 + usize::from(p[4]) } else { 0 };
            let pcr = (afc & 2 != 0 && p[4] > 0 && p[5] & 0x10 != 0).then(|| {
                let b = &p[6..12];
                (i64::from(b[0]) << 25)
                    | (i64::from(b[1]) << 17)
                    | (i64::from(b[2]) << 9)
                    | (i64::from(b[3]) << 1)
                    | i64::from(b[4] >> 7)
            });
            let pes = &p[4 + af..];
            let decode = (p[1] & 0x40 != 0 && afc & 1 != 0 && pes.starts_with(&[0, 0, 1]) && pes.len() > 18)
                .then(|| match pes[7] >> 6 {
                    3 => Some(time33(&pes[14..19])),
                    2 => Some(time33(&pes[9..14])),
                    _ => None,
                })
                .flatten();
            TsView { pid, pcr, decode }
        })
        .collect()
}

/// A TS whose times cross 2^33 two seconds after its start: the PCR and
/// the decode times go on modulo 2^33 (each step forward and small), the
/// PCR keeps its 0.7 s lead on the PCR track's decode times after the wrap
/// too, our reader gives every packet's time unwrapped (the input's times
/// less 2^33: the first is within 60 s of the wrap), and ffprobe reads it without an error with
/// continuous times.
#[test]
fn times_and_pcr_wrap_together_past_2_pow_33() {
    // 2^33 ticks is 95,443.7176 s; the output starts 1.4 s after the
    // input's first time, so an input from 95,440.3 s crosses the wrap at
    // 2.0 s into the 5 s output.
    let (ts, tracks, want) = looped_ts("mp4", "h264_aac.mp4", 5, 95_440_300, &[]);
    let label = "h264_aac.mp4 x5 at 2^33 - 2 s";
    let first = want.iter().filter_map(|w| w.first()).min().unwrap();
    let last = want.iter().filter_map(|w| w.last()).max().unwrap();
    assert!(
        *first < WRAP && *last > WRAP + 180_000,
        "{label}: the times cross the wrap"
    );
    // PCRs: each a small step forward modulo 2^33, at most 40 ms apart
    // or one step of the PCR track (the video: 40 ms frames, 50 ms from
    // one loop to the next), and across the wrap.
    let v = view(&ts);
    let pcrs: Vec<i64> = v.iter().filter_map(|p| p.pcr).collect();
    assert!(pcrs.iter().all(|&p| (0..WRAP).contains(&p)));
    let frame = want[0].windows(2).map(|w| w[1] - w[0]).max().unwrap().max(3_600);
    let mut wrapped = false;
    for w in pcrs.windows(2) {
        let step = ahead(w[1], w[0]);
        assert!((0..=frame).contains(&step), "{label}: PCR {} then {}", w[0], w[1]);
        wrapped |= w[1] < w[0];
    }
    assert!(wrapped, "{label}: the PCR wraps");
    // Per PID, the PES decode times: forward modulo 2^33, and on the PCR
    // PID (the video, 0x100) the PCR of the PES's first packet is its
    // decode time less 0.7 s, before and after the wrap.
    for (i, w) in want.iter().enumerate() {
        let pid = 0x100 + i as u16;
        let got: Vec<&TsView> = v.iter().filter(|p| p.pid == pid && p.decode.is_some()).collect();
        assert_eq!(got.len(), w.len(), "{label} track {i}: PES count");
        for (k, (g, &e)) in got.iter().zip(w).enumerate() {
            assert_eq!(g.decode, Some(e % WRAP), "{label} track {i} PES {k}: decode time");
            if i == 0 {
                assert_eq!(g.pcr, Some((e - PCR_LEAD) % WRAP), "{label} PES {k}: PCR");
            }
        }
        for g in got.windows(2) {
            assert!(
                ahead(g[1].decode.unwrap(), g[0].decode.unwrap()) >= 0,
                "{label} track {i}: decode order"
            );
        }
    }
    // Our reader: every packet, its time unwrapped as ffmpeg does (the
    // first time is within 60 s of the wrap: the times before it are
    // negative, those after it go on from 0; `ts_unwrap` compares them
    // with ffprobe's).
    let mut join = scratch_for(ts.len());
    let mut d = Demuxer::open(SliceSource::with_scratch(&ts, &mut join), Some("ts")).unwrap();
    let mut got = vec![Vec::new(); d.tracks().len()];
    while let Some(p) = d.next_packet().unwrap() {
        got[p.track].push(p.dts.or(p.pts).unwrap());
    }
    assert_eq!(got.len(), tracks.len());
    for (i, (g, w)) in got.iter().zip(&want).enumerate() {
        let w: Vec<i64> = w.iter().map(|e| e - WRAP).collect();
        assert_eq!(g, &w, "{label} track {i}: unwrapped times");
        assert!(g[0] < 0 && *g.last().unwrap() > 0, "{label} track {i}: across the wrap");
    }
    // ffprobe: no error, and per stream decode times that go forward in
    // steps of under 0.1 s (ffmpeg unwraps 33-bit times itself).
    let Some((ok, stderr, doc)) = ffprobe_json("ts-wrap", "wrap.ts", &ts, &["-show_packets"]) else {
        return;
    };
    assert!(ok && stderr.trim().is_empty(), "{label}: ffprobe: {stderr}");
    let mut per: Vec<Vec<f64>> = vec![Vec::new(); tracks.len()];
    for p in doc["packets"].as_array().unwrap() {
        let s = p["stream_index"].as_u64().unwrap() as usize;
        let t = p["dts_time"].as_str().or(p["pts_time"].as_str()).unwrap();
        per[s].push(t.parse().unwrap());
    }
    for (i, (p, w)) in per.iter().zip(&want).enumerate() {
        assert_eq!(p.len(), w.len(), "{label} stream {i}: ffprobe's packets");
        for x in p.windows(2) {
            assert!(
                x[1] >= x[0] && x[1] - x[0] < 0.1,
                "{label} stream {i}: ffprobe times {x:?}"
            );
        }
        let span = p.last().unwrap() - p[0];
        let want_span = (w.last().unwrap() - w[0]) as f64 / 90_000.0;
        assert!(
            (span - want_span).abs() < 1e-4,
            "{label} stream {i}: span {span} against {want_span}"
        );
        println!("{label} stream {i}: ffprobe from {} to {} s", p[0], p.last().unwrap());
    }
}

/// The SDT names the service: the `service_name` tag, else the `title`
/// tag, else "Service01"; the provider is the `service_provider` tag,
/// else "mediaslice" (ffmpeg's muxer takes the same keys); television with video, radio without. Read back by our
/// reader (`Demuxer::next_program`) and by ffprobe's `-show_programs`. It
/// comes first, then before the first PAT/PMT 500 ms or more after it.
#[test]
fn the_sdt_names_the_service_and_repeats_every_half_second() {
    let keys: &[(&str, &str)] = &[
        ("title", "Caméra 7"),
        ("service_name", "Chaîne 2"),
        ("service_provider", "Studio Nord"),
    ];
    let cases = [
        (
            "mp4",
            "h264_aac.mp4",
            &[("title", "Caméra 7")][..],
            "Caméra 7",
            "mediaslice",
        ),
        ("mp4", "h264_aac.mp4", &[][..], "Service01", "mediaslice"),
        ("adts", "aac_lc.aac", &[("title", "Radio")][..], "Radio", "mediaslice"),
        ("adts", "aac_lc.aac", keys, "Chaîne 2", "Studio Nord"),
    ];
    for (fam, name, tags, service, provider) in cases {
        let label = format!("{fam}/{name} tags {tags:?}");
        let (ts, tracks, want) = looped_ts(fam, name, 3, 0, tags);
        let v = view(&ts);
        assert_eq!(v[0].pid, 0x11, "{label}: the SDT first");
        // The SDT's service_type (section byte 18 after the pointer).
        let p = &ts[..188];
        let video = tracks.iter().any(|t| t.kind == mediaslice::TrackKind::Video);
        assert_eq!((p[5], p[6] >> 4), (0x42, 0xF), "{label}: table_id, flags");
        assert_eq!(p[5 + 18], if video { 1 } else { 2 }, "{label}: service_type");
        // Every 500 ms of packet time: each later SDT goes right before
        // the first PAT 500 ms or more after the last SDT's packet (the
        // PAT every 100 ms), so the times of the packets after them are
        // from 500 ms to 600 ms apart, and a little more (one packet's
        // step, 50 ms at most here).
        let mut stamps = Vec::new();
        let mut pending = false;
        for (k, p) in v.iter().enumerate().skip(1) {
            if p.pid == 0x11 {
                assert_eq!(
                    (v[k + 1].pid, v[k + 2].pid),
                    (0, 0x1000),
                    "{label}: PAT, PMT after the SDT"
                );
                pending = true;
            }
            if let (true, Some(t)) = (pending, p.decode) {
                stamps.push(t);
                pending = false;
            }
        }
        let all: Vec<i64> = want.iter().flatten().copied().collect();
        let (lo, hi) = (*all.iter().min().unwrap(), *all.iter().max().unwrap());
        println!("{label}: {} SDTs over {} ticks", stamps.len() + 1, hi - lo);
        assert!(stamps.len() >= 4, "{label}: {} SDTs", stamps.len() + 1);
        for w in stamps.windows(2) {
            assert!((45_000..58_500).contains(&(w[1] - w[0])), "{label}: SDTs at {w:?}");
        }
        assert!(
            stamps[0] - lo >= 45_000 && hi - stamps.last().unwrap() < 58_500,
            "{label}: {stamps:?}"
        );
        // Our reader.
        let mut d = Demuxer::open(SliceSource::new(&ts), Some("ts")).unwrap();
        let prog = d.next_program().unwrap().expect("a program");
        assert_eq!(
            (prog.number, prog.service_name, prog.service_provider),
            (1, Some(service), Some(provider)),
            "{label}: our reader"
        );
        // ffprobe.
        let Some((_, stderr, doc)) = ffprobe_json("ts-sdt", "sdt.ts", &ts, &["-show_programs"]) else {
            continue;
        };
        assert!(stderr.trim().is_empty(), "{label}: ffprobe: {stderr}");
        let tags = &doc["programs"][0]["tags"];
        assert_eq!(tags["service_name"], service, "{label}: ffprobe");
        assert_eq!(tags["service_provider"], provider, "{label}: ffprobe");
    }
}
