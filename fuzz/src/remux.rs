//! The round-trip target: demux any input, mux it (Matroska, MP4 or hybrid
//! MP4, chosen by the last input byte; and AVI and MPEG-TS), demux the
//! output.
//!
//! Invariants: no panic; the write loop (`add_tracks` done, every packet
//! through `write_packet`, then `finish`) allocates nothing; when `finish`
//! succeeds, our demuxer opens the output and reads it to its end without
//! an error, with as many non-empty packets per track as were written
//! (readers skip an empty Block or sample, as ffprobe does) (Matroska), or
//! for MP4 and hybrid MP4 no more than were written and at least one when any was written
//! with a presentation time of 0 or more (a weak bound: an exact one would
//! replay ffmpeg's edit rules in the harness, which is not done). MP4 output is read through its
//! edit list, as ffprobe reads it: samples before presentation time 0
//! (AAC priming, a negative start) are in the file but not presented; of
//! two first samples at one decode time the reader starts at the second;
//! and ffmpeg's `mov_fix_index` ends an edit at the first keyframe whose end
//! reaches the edit's end, dropping samples after it in decode order that
//! are shown before it (an open GOP at the very end; both readers drop
//! them, `fuzz/regressions/remux/`). AVI: every track's payload bytes
//! read back equal those written (its reader gives PCM chunks in pieces,
//! so counts are not compared). MPEG-TS: the output is whole 188-byte
//! packets with continuous continuity counters per PID, and every
//! non-empty H.264, H.265 or MPEG-1/2 video packet written comes back as
//! one packet (one PES each; the reader cuts video at PES starts). Audio
//! is not counted: the reader splits an audio PES into the frames it
//! finds, as ffprobe does, and a fuzzed payload holds any number of them.
//! A refused track or packet (a codec or time the format cannot hold)
//! ends the case without an invariant.

use super::*;
use mediaslice::mux::copy::add_tracks;
use mediaslice::{Fragmenting, MuxFormat, Muxer, Packet, SliceSink, MAX_TRACKS};

/// The formats the round trip writes, picked by the last input byte.
const FORMATS: [MuxFormat; 3] = [
    MuxFormat::Matroska,
    MuxFormat::Mp4,
    MuxFormat::HybridMp4(Fragmenting::with_duration_ms(300)),
];

/// Most packets written per case (bounds the work of a long input).
const MAX_PACKETS: u64 = 20_000;

pub fn run_remux(data: &[u8]) {
    let format = FORMATS[usize::from(data.last().copied().unwrap_or(0)) % FORMATS.len()];
    round_trip(data, format);
    // AVI and TS beside the format picked, so the inputs saved for the
    // others keep their format.
    round_trip(data, MuxFormat::Avi);
    round_trip(data, MuxFormat::Ts);
}

/// A video codec whose every packet is one PES that the TS reader gives
/// back whole.
fn one_pes_video(c: mediaslice::Codec) -> bool {
    use mediaslice::Codec;
    matches!(c, Codec::H264 | Codec::Hevc | Codec::Mpeg2Video | Codec::Mpeg1Video)
}

fn round_trip(data: &[u8], format: MuxFormat) {
    let mut join = scratch(data.len());
    let Ok(mut d) = open(SliceSource::with_scratch(data, &mut join), None) else {
        return;
    };
    // TS gives a small packet a 188-byte packet of its own, and more:
    // room for it, or such inputs would always end at a full sink.
    let room = if format == MuxFormat::Ts { 64 } else { 4 };
    let mut out = vec![0u8; data.len().saturating_mul(room).saturating_add(1 << 18)];
    let Ok(mut m) = Muxer::with_scratch(SliceSink::new(&mut out), format, vec![0u8; 1 << 18]) else {
        return;
    };
    let Ok(map) = add_tracks(&mut d, &mut m) else { return };
    if m.tracks().is_empty() {
        return;
    }
    let video: [bool; MAX_TRACKS] = core::array::from_fn(|t| m.tracks().get(t).is_some_and(|k| one_pes_video(k.codec)));
    let mut written = [0u64; MAX_TRACKS];
    let mut shown = [0u64; MAX_TRACKS];
    let mut bytes_in = [0u64; MAX_TRACKS];
    let finished = no_alloc("write loop", || {
        let mut n = 0u64;
        while let Ok(Some(p)) = d.next_packet() {
            let Some(&Some(track)) = map.get(p.track) else { continue };
            if p.flags.truncated {
                continue;
            }
            if m.write_packet(&Packet { track, ..p }).is_err() {
                return None;
            }
            // Empty packets are written but not counted: readers skip an
            // empty Block or sample (ffprobe too).
            if !p.data.is_empty() {
                if let Some(w) = written.get_mut(track) {
                    *w += 1;
                }
                if let Some(b) = bytes_in.get_mut(track) {
                    *b += p.data.len() as u64;
                }
                if let (Some(s), true) = (shown.get_mut(track), p.pts.or(p.dts).unwrap_or(0) >= 0) {
                    *s += 1;
                }
            }
            n += 1;
            if n >= MAX_PACKETS {
                break;
            }
        }
        m.finish().ok().map(|s| s.written().len())
    });
    let Some(len) = finished else { return };
    let output = &out[..len];
    if format == MuxFormat::Ts {
        check_ts_packets(output);
    }
    // A TS output's PES packets span TS packets: joined in scratch.
    let mut join_back = scratch(output.len());
    let mut back = match Demuxer::open(SliceSource::with_scratch(output, &mut join_back), None) {
        Ok(b) => b,
        Err(e) => panic!("invariant: {format:?} output does not open: {e}"),
    };
    let mut got = [0u64; MAX_TRACKS];
    let mut bytes_out = [0u64; MAX_TRACKS];
    loop {
        match back.next_packet() {
            Ok(Some(p)) if p.data.is_empty() => {}
            Ok(Some(p)) => {
                if let Some(g) = got.get_mut(p.track) {
                    *g += 1;
                }
                if let Some(b) = bytes_out.get_mut(p.track) {
                    *b += p.data.len() as u64;
                }
            }
            Ok(None) => break,
            Err(e) => panic!("invariant: {format:?} output does not read to its end: {e}"),
        }
    }
    if format == MuxFormat::Avi {
        // AVI: the reader gives a PCM chunk in pieces of at most 1024
        // samples, so the bytes of each track are compared, not counts;
        // except where the muxer converts the payload (H.264 with an avcC
        // becomes Annex B with parameter sets before IDR pictures, ADTS
        // AAC loses its headers), where every packet is one chunk: counts.
        for (t, track) in back.tracks().iter().enumerate().take(MAX_TRACKS) {
            let (w, g) = (written.get(t).copied().unwrap_or(0), got.get(t).copied().unwrap_or(0));
            let (bi, bo) = (
                bytes_in.get(t).copied().unwrap_or(0),
                bytes_out.get(t).copied().unwrap_or(0),
            );
            if matches!(track.codec, mediaslice::Codec::H264 | mediaslice::Codec::Aac) {
                assert_eq!(w, g, "invariant: AVI track {t}: packets written and read back");
            } else {
                assert_eq!(bi, bo, "invariant: AVI track {t}: payload bytes written and read back");
            }
        }
        return;
    }
    if format == MuxFormat::Ts {
        let mut read_video = 0u64;
        for (t, track) in back.tracks().iter().enumerate().take(MAX_TRACKS) {
            if one_pes_video(track.codec) {
                read_video += got.get(t).copied().unwrap_or(0);
            }
        }
        let written_video: u64 = written.iter().zip(&video).filter(|(_, &v)| v).map(|(w, _)| w).sum();
        assert_eq!(
            written_video, read_video,
            "invariant: TS video packets written and read back"
        );
        return;
    }
    for (t, ((&w, &s), &g)) in written.iter().zip(&shown).zip(&got).enumerate() {
        let least = if format == MuxFormat::Matroska { w } else { s.min(1) };
        assert!(
            g <= w && g >= least,
            "invariant: {format:?} track {t}: {w} packets written ({s} at or after 0), {g} read back"
        );
    }
}

/// The TS writer's packet structure: whole 188-byte packets, each with the
/// sync byte, and per PID a continuity counter that steps by one on every
/// packet carrying payload (ISO/IEC 13818-1 §2.4.3.3).
fn check_ts_packets(ts: &[u8]) {
    assert_eq!(ts.len() % 188, 0, "invariant: TS output of whole 188-byte packets");
    let mut last = [None::<u8>; 8192];
    for (n, p) in ts.chunks_exact(188).enumerate() {
        let h = [p[0], p[1], p[2], p[3]];
        assert_eq!(h[0], 0x47, "invariant: TS packet {n}: sync byte");
        let pid = usize::from(u16::from_be_bytes([h[1], h[2]]) & 0x1FFF);
        if h[3] & 0x10 == 0 {
            continue;
        }
        let cc = h[3] & 0x0F;
        if let Some(prev) = last[pid] {
            assert_eq!(
                cc,
                (prev + 1) & 0x0F,
                "invariant: TS packet {n}: continuity on PID {pid:#x}"
            );
        }
        last[pid] = Some(cc);
    }
}
