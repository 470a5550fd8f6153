//! Seeking: after `seek(track, ts)` the track resumes at the keyframe at or
//! before `ts` (video) or at the packet holding `ts` (audio), and what follows
//! is exactly the tail of the full packet list.

// Tests report failures by panicking.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing, clippy::panic)]

use mediaslice::{Demuxer, SliceSource, TrackKind};

#[derive(Debug, Clone, PartialEq)]
struct P {
    track: usize,
    pts: Option<i64>,
    dts: Option<i64>,
    dur: Option<u64>,
    key: bool,
    pos: Option<u64>,
    len: usize,
}

fn all(d: &mut Demuxer<SliceSource<'_>>) -> Vec<P> {
    let mut v = Vec::new();
    while let Some(p) = d.next_packet().unwrap() {
        v.push(P {
            track: p.track,
            pts: p.pts,
            dts: p.dts,
            dur: p.duration,
            key: p.flags.keyframe,
            pos: p.pos,
            len: p.data.len(),
        });
    }
    v
}

fn corpus(path: &str) -> Vec<u8> {
    std::fs::read(format!("{}/../corpus/files/{path}", env!("CARGO_MANIFEST_DIR"))).unwrap()
}

/// Seeks every track of `file` to several times and checks the landing
/// packet and the tail.
fn check_file(file: &str) {
    let bytes = corpus(file);
    let mut d = Demuxer::open(SliceSource::new(&bytes), None).unwrap();
    let full = all(&mut d);
    let tracks: Vec<(usize, TrackKind)> = d.tracks().iter().enumerate().map(|(i, t)| (i, t.kind)).collect();
    let mut checked = 0;
    for &(ti, kind) in &tracks {
        let own: Vec<&P> = full.iter().filter(|p| p.track == ti && p.dts.is_some()).collect();
        if own.len() < 4 {
            continue;
        }
        for frac in [1usize, 2, 3] {
            let target_packet = own[own.len() * frac / 4];
            let ts = target_packet.dts.unwrap() + target_packet.dur.unwrap_or(0) as i64 / 2;
            d.seek(ti, ts).unwrap();
            let after = all(&mut d);
            let first = after.iter().find(|p| p.track == ti).expect("packets after seek");
            match kind {
                TrackKind::Video => {
                    assert!(first.key, "{file}: video seek lands on a keyframe");
                    assert!(first.dts.unwrap() <= ts, "{file}: keyframe at or before the target");
                    // No later keyframe at or before the target was skipped.
                    let skipped = own.iter().any(|p| p.key && p.dts > first.dts && p.dts.unwrap() <= ts);
                    assert!(!skipped, "{file}: the nearest keyframe before the target is used");
                }
                _ => {
                    let (s, e) = (first.dts.unwrap(), first.dts.unwrap() + first.dur.unwrap_or(0) as i64);
                    assert!(
                        s <= ts && ts < e.max(s + 1),
                        "{file}: audio lands on the packet holding {ts}: {s}..{e}"
                    );
                }
            }
            // The track's packets after the seek are the tail of its full list.
            let tail: Vec<&P> = after.iter().filter(|p| p.track == ti).collect();
            let start = own
                .iter()
                .position(|p| *p == first)
                .expect("landing packet is one of the track's");
            assert_eq!(tail.len(), own.len() - start, "{file}: tail length");
            for (a, b) in tail.iter().zip(&own[start..]) {
                assert_eq!(*a, *b);
            }
            checked += 1;
        }
    }
    assert!(checked >= 3, "{file}: seeks checked");
}

#[test]
fn mp4_moov_at_end() {
    check_file("mp4/h264_aac.mp4");
}

#[test]
fn mp4_bframes() {
    check_file("mp4/h264_bframes_aac.mp4");
}

#[test]
fn mp4_fragmented() {
    check_file("mp4/h264_aac_fragmented.mp4");
}

#[test]
fn mp4_pcm_mov() {
    check_file("mp4/h264_pcm.mov");
}

#[test]
fn wav_pcm() {
    check_file("wav/pcm_s16le.wav");
}

#[test]
fn seek_to_start_replays_everything() {
    let bytes = corpus("mp4/h264_aac_faststart.mp4");
    let mut d = Demuxer::open(SliceSource::new(&bytes), None).unwrap();
    let full = all(&mut d);
    d.seek(0, 0).unwrap();
    assert_eq!(all(&mut d), full);
}

#[test]
fn seek_rejects_unknown_track() {
    let bytes = corpus("wav/pcm_s16le.wav");
    let mut d = Demuxer::open(SliceSource::new(&bytes), None).unwrap();
    assert!(d.seek(7, 0).is_err());
}

/// MPEG-TS and PS seek by bisection on time stamps: the track resumes at a
/// PES whose time is at or before the target, no earlier than needed by more
/// than the bisection window, and what follows is the tail of the full list.
fn check_bisection(file: &str) {
    let bytes = corpus(file);
    let mut scratch = vec![0u8; 8 << 20];
    let mut d = Demuxer::open(SliceSource::with_scratch(&bytes, &mut scratch), None).unwrap();
    let mut full = Vec::new();
    while let Some(p) = d.next_packet().unwrap() {
        full.push((p.track, p.dts, p.data.len()));
    }
    let mut checked = 0;
    for ti in 0..d.tracks().len() {
        let own: Vec<&(usize, Option<i64>, usize)> = full.iter().filter(|p| p.0 == ti).collect();
        if own.len() < 4 {
            continue;
        }
        let target = own[own.len() / 2].1.unwrap() + 1;
        d.seek(ti, target).unwrap();
        let mut after = Vec::new();
        while let Some(p) = d.next_packet().unwrap() {
            if p.track == ti {
                after.push((p.track, p.dts, p.data.len()));
            }
        }
        let first = after.first().expect("packets after a seek");
        assert!(first.1.unwrap() <= target, "{file}: landed after the target");
        let start = own
            .iter()
            .position(|p| **p == *first)
            .expect("landing packet is one of the track's");
        assert!(
            start + 1 >= own.len() / 2 - 8.min(own.len() / 2),
            "{file}: landed far before the target"
        );
        assert_eq!(after.len(), own.len() - start, "{file}: the tail follows");
        checked += 1;
    }
    assert!(checked >= 1, "{file}: a track was checked");
}

#[test]
fn ts_bisection() {
    check_bisection("mpegts/h264_aac.ts");
    check_bisection("mpegts/mpeg2_interlaced_mp2.ts");
}

#[test]
fn ps_bisection() {
    check_bisection("mpegps/mpeg2_ac3.vob");
}

#[test]
fn avi_mpeg4_mp3() {
    check_file("avi/mpeg4_mp3.avi");
}

#[test]
fn avi_mjpeg_pcm() {
    check_file("avi/mjpeg_pcm.avi");
}

#[test]
fn aiff_pcm_and_ima4() {
    check_file("aiff/pcm_s16be.aiff");
    check_file("aiff/adpcm_ima_qt.aifc");
}

#[test]
fn caf_pcm_and_pakt() {
    check_file("caf/pcm_s16le.caf");
    check_file("caf/alac.caf");
}
