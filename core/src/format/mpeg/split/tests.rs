//! Frame cutting across PES packets, and the frame-grid time steps.

extern crate std;

use super::kind::{add_stable, add_stable_wide, ticks};
use super::*;
use crate::source::SliceSource;
use std::vec;
use std::vec::Vec;

/// An ADTS frame (AAC LC, 48 kHz, stereo) of `len` bytes filled with `fill`.
fn adts(len: usize, fill: u8) -> Vec<u8> {
    let l = len as u16;
    let mut f = vec![
        0xFF,
        0xF1,
        0x4C,
        0x80 | (l >> 11) as u8,
        (l >> 3) as u8,
        ((l & 7) << 5) as u8 | 0x1F,
        0xFC,
    ];
    f.resize(len, fill);
    f
}

#[test]
fn frames_across_pes_are_joined_with_the_pes_time_stamps() {
    // PES 1: a 100-byte frame and the first 50 bytes of a 120-byte one;
    // PES 2: the other 70 bytes and an 80-byte frame.
    let (a, b, c) = (adts(100, 1), adts(120, 2), adts(80, 3));
    let mut input = a.clone();
    input.extend_from_slice(&b);
    input.extend_from_slice(&c);
    let mut scratch = vec![0u8; 2 * SLOT];
    let mut src = SliceSource::with_scratch(&input, &mut scratch);
    let mut sp = Split {
        kind: Kind::Adts,
        ..Split::default()
    };
    let mut got = Vec::new();
    for (off, len, pts) in [(0usize, 150usize, 9000i64), (150, 150, 20000)] {
        sp.begin(Some(pts));
        let mut cut = Cut {
            input: Some(off as u64),
            at: SLOT,
            len,
            pos: off as u64,
            last: off + len >= input.len(),
            ..Cut::default()
        };
        while let Some(f) = sp.next(&mut src, &mut cut).unwrap() {
            let p = f.packet(&mut src, SLOT).unwrap();
            got.push((p.pts, p.data.to_vec(), p.contiguous));
        }
    }
    assert_eq!(sp.flush(&mut src, 0, false).unwrap().map(|f| f.len), None);
    // The second frame starts in PES 1: it continues from the first
    // (+1920); the third is the first to start in PES 2: its PTS.
    assert_eq!(got[0], (Some(9000), a, true));
    assert_eq!(got[1], (Some(10920), b, false));
    assert_eq!(got[2], (Some(20000), c, true));
    assert_eq!(got.len(), 3);
}

#[test]
fn stable_addition_follows_the_frame_grid() {
    // AAC 1024 samples at 44.1 kHz: 2089.8 ticks, added on the grid.
    assert_eq!(add_stable(5_387_160_282, 1024, 44100), 5_387_162_372);
    assert_eq!(add_stable(0, 1024, 48000), 1920);
    assert_eq!(ticks(1536, 44100), 3134);
}

/// The 64-bit path of `add_stable` gives what the 128-bit one gives, over
/// time stamps near 0, near the 33-bit wrap, negative, and near the ends of
/// `i64` (where it must fall back), for the frame sizes and rates of AAC,
/// MP2 and odd ones.
#[test]
fn add_stable_narrow_equals_wide() {
    let stamps = [
        0i64,
        1,
        -1,
        1920,
        5_387_160_282,
        (1 << 33) - 1,
        1 << 33,
        -(1 << 33),
        1 << 40,
        i64::MAX,
        i64::MAX - 1_000_000,
        i64::MIN,
        i64::MIN + 1_000_000,
    ];
    let mut x = 0x9E37_79B9_7F4A_7C15u64;
    let mut checked = 0;
    for &samples in &[1u32, 960, 1024, 1152, 2048, 4096, 65_535, u32::MAX] {
        for &rate in &[
            0u32,
            1,
            7350,
            8000,
            11_025,
            22_050,
            44_100,
            48_000,
            96_000,
            1_000_003,
            u32::MAX,
        ] {
            for i in 0..200 {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                let ts = match stamps.get(i) {
                    Some(&t) => t,
                    None => (x as i64) >> (x % 40),
                };
                assert_eq!(
                    add_stable(ts, samples, rate),
                    add_stable_wide(ts, samples, rate),
                    "ts {ts} samples {samples} rate {rate}"
                );
                checked += 1;
            }
        }
    }
    assert_eq!(checked, 8 * 11 * 200);
}

/// The kept grid gives `add_stable`'s result on every step: chains fed
/// their own results (the steps along the grid), broken by other time
/// stamps, frame sizes and rates, near the ends of `i64` and off the grid.
#[cfg(feature = "ts-fast")]
#[test]
fn grid_steps_equal_add_stable() {
    let mut x = 0x2545_F491_4F6C_DD1Du64;
    let mut next = || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x
    };
    let sizes = [1u32, 960, 1024, 2048, 0, u32::MAX];
    let rates = [44_100u32, 22_050, 11_025, 7350, 48_000, 0, 1_000_003, u32::MAX];
    let starts = [0i64, -1, 5_387_160_282, i64::MAX - 50_000, i64::MIN + 7, 1 << 62];
    let (mut grid, mut stepped, mut along) = (super::grid::Grid::default(), 0, 0);
    for &s0 in &starts {
        for _ in 0..40 {
            let samples = sizes[(next() % 6) as usize];
            let rate = rates[(next() % 8) as usize];
            let mut ts = s0.wrapping_add((next() % 100_000) as i64);
            for _ in 0..(next() % 50) {
                let want = add_stable(ts, samples, rate);
                along += usize::from(grid.next == Some(ts));
                assert_eq!(
                    grid.add(ts, samples, rate),
                    want,
                    "ts {ts} samples {samples} rate {rate}"
                );
                stepped += 1;
                // Now and then a time stamp off the chain (a PES's PTS).
                ts = if next() % 7 == 0 {
                    want.wrapping_add((next() % 5) as i64 - 2)
                } else {
                    want
                };
            }
        }
    }
    assert!(
        stepped > 1000 && along > 1000,
        "{along} of {stepped} steps along the grid"
    );
    // AAC at 44.1 and 22.05 kHz from a PES's PTS: every step after the
    // first goes along the kept grid.
    for (rate, start) in [(44_100, 5_387_160_282i64), (22_050, 126_000)] {
        let (mut grid, mut ts) = (super::grid::Grid::default(), start);
        for i in 0..500 {
            assert_eq!(grid.next == Some(ts), i > 0, "step {i} at {rate} Hz");
            let want = add_stable(ts, 1024, rate);
            ts = grid.add(ts, 1024, rate);
            assert_eq!(ts, want, "step {i} at {rate} Hz");
        }
    }
}
