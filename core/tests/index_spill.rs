//! The MP4 muxers' sample index spilled to a second store
//! (`Muxer::with_index_spill`, `sink/spill.rs`, `format/mp4/muxer_records.rs`):
//! the same input written with a tiny in-memory bound (many spills,
//! records straddling blocks) and with no spill gives the same bytes, for
//! the progressive and the hybrid muxer, on a synthetic camera recording
//! and on every corpus and sample file; the scratch past the bound is never
//! touched; a store that fails stops the muxer with its error.
#![allow(clippy::indexing_slicing, clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use crate::common;

use common::mux::*;
use common::*;
use mediaslice::{ErrorKind, Fragmenting, MuxFormat, Muxer, Packet, PacketFlags, SliceSink, TrackSpec};

const HYBRID: MuxFormat = MuxFormat::HybridMp4(Fragmenting::DEFAULT);
const FORMATS: [MuxFormat; 3] = [MuxFormat::Mp4, MuxFormat::Mov, HYBRID];
const SCRATCH: usize = 4 << 20;
/// What the scratch holds before the muxer writes to it.
const UNTOUCHED: u8 = 0xA5;

/// A camera-like recording, 20 s: 30 fps H.264 with B-frame composition
/// offsets and varying sizes, 48 kHz AAC.
fn camera(m: &mut Muxer<SliceSink<'_>, Vec<u8>, impl mediaslice::SpillStore>) -> mediaslice::Result<u64> {
    let ([video, audio], avcc, asc) = camera_tracks();
    m.add_track(&TrackSpec::new(&video).with_config(&avcc))?;
    m.add_track(&TrackSpec::new(&audio).with_config(&asc))?;
    let payload = vec![0x55u8; 40_000];
    let mut rng = 0x9E37_79B9u32;
    let mut next = || {
        rng ^= rng << 13;
        rng ^= rng >> 17;
        rng ^= rng << 5;
        rng
    };
    let (mut a, mut n) = (0i64, 0u64);
    for f in 0..600i64 {
        let key = f % 60 == 0;
        let size = if key {
            20_000 + next() % 10_000
        } else {
            500 + next() % 8_000
        } as usize;
        // Decode times jittered as an MPEG-TS's (2970/3060), B-frame
        // presentation offsets from a short pattern.
        let dts = f * 3000 + if f % 2 == 1 { -30 } else { 0 };
        let pts = dts + [6000, 15000, 3000, 9000][f as usize % 4];
        let p = Packet::contiguous(0, 0, &payload[..size]).with_times(Some(pts), Some(dts), None);
        m.write_packet(&Packet {
            flags: PacketFlags {
                keyframe: key,
                ..Default::default()
            },
            ..p
        })?;
        n += 1;
        while a * 1024 * 90_000 <= f * 3000 * 48_000 {
            let size = 300 + (next() % 200) as usize;
            let t = a * 1024;
            let p = Packet::contiguous(1, 0, &payload[..size]).with_times(Some(t), Some(t), Some(1024));
            m.write_packet(&Packet {
                flags: PacketFlags {
                    keyframe: true,
                    ..Default::default()
                },
                ..p
            })?;
            a += 1;
            n += 1;
        }
    }
    Ok(n)
}

/// The camera recording in `fmt`: the file, the scratch after `finish`,
/// and the bytes spilled (none without a bound).
fn record_camera(fmt: MuxFormat, bound: Option<usize>) -> (Vec<u8>, Vec<u8>, usize, u64) {
    let mut out = vec![0u8; 32 << 20];
    let mut store_buf = vec![0u8; 1 << 20];
    let mut store = SliceSink::new(&mut store_buf);
    let m = Muxer::with_scratch(SliceSink::new(&mut out), fmt, vec![UNTOUCHED; SCRATCH]).unwrap();
    let (file, scratch) = match bound {
        None => {
            let mut m = m;
            let n = camera(&mut m).unwrap();
            let (sink, scratch) = m.finish_parts().unwrap();
            (sink.written().to_vec(), (scratch, n))
        }
        Some(b) => {
            let mut m = m.with_index_spill(&mut store, b);
            let n = camera(&mut m).unwrap();
            let (sink, scratch) = m.finish_parts().unwrap();
            (sink.written().to_vec(), (scratch, n))
        }
    };
    (file, scratch.0, store.written().len(), scratch.1)
}

#[test]
fn a_spilled_index_gives_the_same_file_and_keeps_to_its_bound() {
    for fmt in FORMATS {
        let (want, _, _, n) = record_camera(fmt, None);
        assert!(want.len() > 1 << 20);
        let (_, got) = read_back(&want);
        assert_eq!(got.iter().map(|t| t.len() as u64).sum::<u64>(), n);
        for bound in [1, 7, 100, 4096, 1 << 20] {
            let (file, scratch, spilled, _) = record_camera(fmt, Some(bound));
            assert!(file == want, "{fmt:?}, bound {bound}: not the same bytes");
            let index_part = scratch.iter().rposition(|&b| b != UNTOUCHED).map_or(0, |i| i + 1);
            match fmt {
                // The index is the whole scratch: nothing past the bound.
                MuxFormat::Mp4 | MuxFormat::Mov => assert!(index_part <= bound, "{fmt:?}: {index_part} > {bound}"),
                // The fragment's part comes first; then at most the bound.
                _ => assert!(index_part <= SCRATCH / 2 + bound, "{fmt:?}: {index_part}"),
            }
            if bound < 4096 {
                assert!(spilled > 4096, "{fmt:?}, bound {bound}: only {spilled} bytes spilled");
                assert_eq!(spilled % bound, 0, "whole blocks");
            }
            println!(
                "{fmt:?} bound {bound}: {spilled} bytes spilled, same {} bytes",
                file.len()
            );
        }
    }
}

#[test]
fn the_hybrid_stats_count_the_spilled_bytes() {
    let mut out = vec![0u8; 32 << 20];
    let mut store_buf = vec![0u8; 1 << 20];
    let mut store = SliceSink::new(&mut store_buf);
    let mut m = Muxer::with_scratch(SliceSink::new(&mut out), HYBRID, vec![0u8; SCRATCH])
        .unwrap()
        .with_index_spill(&mut store, 256);
    camera(&mut m).unwrap();
    let s = m.fragment_stats().unwrap();
    m.finish().unwrap();
    assert!(!s.index_full);
    assert!(s.index_spilled > 0 && s.index_spilled % 256 == 0);
    assert!(s.index_bytes > s.index_spilled && s.index_bytes - s.index_spilled <= 256);
    // All of it but the last fragment's, which enters at `finish`.
    assert!(store.written().len() as u64 >= s.index_spilled);
}

#[test]
fn a_store_that_fails_stops_the_muxer() {
    for fmt in FORMATS {
        let mut out = vec![0u8; 32 << 20];
        let mut store_buf = vec![0u8; 3000];
        let mut store = SliceSink::new(&mut store_buf);
        let mut m = Muxer::with_scratch(SliceSink::new(&mut out), fmt, vec![0u8; SCRATCH])
            .unwrap()
            .with_index_spill(&mut store, 1000);
        let e = camera(&mut m).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::SinkFull, "{fmt:?}: {e}");
        assert_eq!(m.finish().err().map(|e| e.kind()), Some(ErrorKind::InvalidArgument));
    }
}

/// Every corpus and sample file MP4 carries: the same bytes with a 13-byte
/// bound as with no spill.
#[test]
fn corpus_files_give_the_same_bytes_spilled() {
    let families = [
        "mp4", "matroska", "mpegts", "adts", "h264", "h265", "flac", "ac3", "ogg",
    ];
    let mut done = 0;
    for fam in families {
        for f in family_files(fam) {
            let bytes = f.read();
            for fmt in [MuxFormat::Mp4, HYBRID] {
                let run = |bound: Option<usize>| -> Option<(Vec<u8>, usize, usize)> {
                    let mut join = scratch_for(bytes.len());
                    let src = mediaslice::SliceSource::with_scratch(&bytes, &mut join);
                    let mut d = mediaslice::Demuxer::open(src, f.ext().as_deref()).ok()?;
                    let mut out = vec![0u8; bytes.len() * 2 + (1 << 20)];
                    let mut store_buf = vec![0u8; bytes.len() + (1 << 16)];
                    let mut store = SliceSink::new(&mut store_buf);
                    let m = Muxer::with_scratch(SliceSink::new(&mut out), fmt, vec![0u8; SCRATCH]).ok()?;
                    let mut m = m.with_index_spill(&mut store, bound.unwrap_or(usize::MAX));
                    let map = mediaslice::mux::copy::add_tracks(&mut d, &mut m).ok()?;
                    let mut packets = 0;
                    while let Ok(Some(p)) = d.next_packet() {
                        if let Some(j) = map[p.track] {
                            m.write_packet(&Packet { track: j, ..p }).ok()?;
                            packets += 1;
                        }
                    }
                    let file = m.finish().ok()?.written().to_vec();
                    Some((file, store.written().len(), packets))
                };
                let Some((want, none, packets)) = run(None) else {
                    continue;
                };
                assert_eq!(none, 0, "{}: no bound, no spill", f.label());
                let (got, spilled, _) = run(Some(13)).expect("spilled run fails where the other did not");
                assert!(got == want, "{} {fmt:?}: not the same bytes", f.label());
                // Every packet costs the index at least 2 bytes: 8 packets
                // pass the 13-byte bound.
                assert!(
                    spilled > 0 || packets < 8,
                    "{}: {packets} packets, nothing spilled",
                    f.label()
                );
                done += 1;
            }
        }
    }
    println!("{done} remuxes byte-identical with the index spilled");
    assert!(done >= 16, "only {done}");
}
