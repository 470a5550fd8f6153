//! The MP4 muxer's sample index: one compact record per sample, appended to
//! the caller's scratch ([`crate::mux::Muxer::with_scratch`]) in the order
//! the samples are written to `mdat`. Nothing is allocated per sample; the
//! `moov` tables (ISO/IEC 14496-12 §8.6.1.2 `stts`, §8.6.1.3 `ctts`,
//! §8.6.2 `stss`, §8.7.3 `stsz`, §8.7.4 `stsc`, §8.7.5 `stco`/`co64`) are
//! derived from the records at `finish` by walking them once per table.
//!
//! A record is a flag byte, then only what differs from the track's
//! previous sample:
//!
//! ```text
//! flags   bits 0..3 track index, bit 4 keyframe, bit 5 size as the
//!         previous sample's, bit 6 decode-time delta as the previous
//!         delta, bit 7 a composition offset follows
//! size    unsigned LEB128, when bit 5 is clear
//! delta   unsigned LEB128 (this sample's DTS minus the previous one's), when
//!         bit 6 is clear
//! offset  unsigned LEB128, when bit 7 is set: the composition offset
//!         (PTS minus DTS) c as 2·k + 1 when it is entry k of the track's
//!         offset table, else as 2·zigzag(c), which then replaces the
//!         table's oldest entry
//! ```
//!
//! The offset table holds a track's last [`CTS_TABLE`] distinct
//! composition offsets, the same in the encoder and the reader. B-frame
//! patterns repeat a few offsets (even with the jittered decode times of
//! an MPEG-TS), so after the first of each an offset costs one byte.
//!
//! Cost per sample: 1 byte for a run of equal sizes and durations (PCM,
//! constant-rate audio of fixed size), 3 to 4 bytes for video or AAC
//! (a 2- or 3-byte size), 1 more with B-frames (the composition offset in
//! frames). The chunk offsets are not stored: samples go to `mdat` one after
//! another, so an offset is the sum of the sizes before it.

use crate::error::{Error, Result};
use crate::sink::Spill;

/// Bit 4 of a record's flag byte: a sync sample.
pub(super) const KEY: u8 = 0x10;
/// Bit 5: the size is the previous sample's of the same track.
pub(super) const SAME_SIZE: u8 = 0x20;
/// Bit 6: the decode-time delta is the previous delta of the same track.
pub(super) const SAME_DELTA: u8 = 0x40;
/// Bit 7: a composition offset follows.
pub(super) const HAS_CTS: u8 = 0x80;

/// Most bytes one record takes: a flag byte and three LEB128 numbers of at
/// most 10 bytes.
pub const MAX_RECORD: usize = 31;

/// One sample as the index gives it back.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Sample {
    /// Index of the track.
    pub track: u8,
    /// Sync sample (`stss`).
    pub key: bool,
    /// Bytes in `mdat`.
    pub size: u64,
    /// This sample's decode time minus the previous sample's of the track
    /// (0 for a track's first sample).
    pub delta: u64,
    /// Presentation minus decode time.
    pub cts: i64,
}

/// Distinct composition offsets remembered per track.
pub const CTS_TABLE: usize = 8;

/// What the index remembers of a track's previous samples, to encode runs
/// and repeated composition offsets.
#[derive(Debug, Clone, Copy, Default)]
pub struct RunState {
    pub(super) size: u64,
    pub(super) delta: u64,
    pub(super) started: bool,
    /// Recent distinct composition offsets, and the slot the next new one
    /// takes.
    cts: [i64; CTS_TABLE],
    cts_next: u8,
}

impl RunState {
    /// The code of composition offset `c` (see the module docs), and the
    /// table updated for it.
    fn cts_code(&mut self, c: i64) -> u64 {
        if let Some(k) = self.cts.iter().position(|&x| x == c) {
            return ((k as u64) << 1) | 1;
        }
        self.remember(c);
        // Beyond ±2^61 ticks (a `ctts` entry holds 32 bits, so such an
        // offset is refused at `finish` anyway) the bound is kept.
        zigzag(c.clamp(-(1 << 61), 1 << 61)) << 1
    }

    /// The composition offset code `code` stands for, and the table
    /// updated as the encoder updated it.
    pub(super) fn cts_of(&mut self, code: u64) -> i64 {
        if code & 1 == 1 {
            let k = usize::try_from(code >> 1).unwrap_or(usize::MAX);
            return self.cts.get(k).copied().unwrap_or(0);
        }
        let c = unzigzag(code >> 1);
        self.remember(c);
        c
    }

    fn remember(&mut self, c: i64) {
        let k = usize::from(self.cts_next) % CTS_TABLE;
        if let Some(slot) = self.cts.get_mut(k) {
            *slot = c;
        }
        self.cts_next = ((k + 1) % CTS_TABLE) as u8;
    }
}

fn put_leb(out: &mut [u8; MAX_RECORD], at: &mut usize, mut v: u64) {
    loop {
        let b = (v & 0x7F) as u8;
        v >>= 7;
        if let Some(slot) = out.get_mut(*at) {
            *slot = if v == 0 { b } else { b | 0x80 };
        }
        *at += 1;
        if v == 0 {
            break;
        }
    }
}

fn zigzag(v: i64) -> u64 {
    ((v << 1) ^ (v >> 63)) as u64
}

fn unzigzag(z: u64) -> i64 {
    ((z >> 1) as i64) ^ -((z & 1) as i64)
}

/// Encodes `s` after a track's previous sample `run`, into `out`; returns
/// the record's length and updates `run`.
pub fn encode(s: &Sample, run: &mut RunState, out: &mut [u8; MAX_RECORD]) -> usize {
    let mut flags = s.track & 0x0F;
    if s.key {
        flags |= KEY;
    }
    let same_size = run.started && run.size == s.size;
    let same_delta = run.started && run.delta == s.delta;
    if same_size {
        flags |= SAME_SIZE;
    }
    if same_delta {
        flags |= SAME_DELTA;
    }
    if s.cts != 0 {
        flags |= HAS_CTS;
    }
    let mut at = 1;
    if !same_size {
        put_leb(out, &mut at, s.size);
    }
    if !same_delta {
        put_leb(out, &mut at, s.delta);
    }
    if s.cts != 0 {
        put_leb(out, &mut at, run.cts_code(s.cts));
    }
    out[0] = flags;
    run.size = s.size;
    run.delta = s.delta;
    run.started = true;
    at
}

/// Appends one record to `scratch[..*len]`.
///
/// Errors: `CapacityExceeded` when the scratch is full (nothing appended).
pub fn append(scratch: &mut [u8], len: &mut usize, s: &Sample, run: &mut RunState, pos: u64) -> Result<()> {
    let mut rec = [0u8; MAX_RECORD];
    let mut next = *run;
    let n = encode(s, &mut next, &mut rec);
    let end = len.checked_add(n).filter(|&e| e <= scratch.len()).ok_or(Error::capacity(
        pos,
        &"mp4 muxer: the sample index is full; give Muxer::with_scratch more bytes (about 4 per sample) (ISO/IEC 14496-12 8.7.3)",
    ))?;
    let (dst, src) = (scratch.get_mut(*len..end), rec.get(..n));
    if let (Some(dst), Some(src)) = (dst, src) {
        dst.copy_from_slice(src);
    }
    *len = end;
    *run = next;
    Ok(())
}

/// Where the index grows: the in-memory block `mem` with `len` bytes used,
/// and the store its full blocks go to (the `spilled` bytes before it).
#[derive(Debug)]
pub struct Growing<'m, 's> {
    /// The in-memory block: the caller's scratch up to its bound.
    pub mem: &'m mut [u8],
    /// Bytes used in `mem`.
    pub len: &'m mut usize,
    /// Bytes spilled so far.
    pub spilled: &'m mut u64,
    /// The store, if the caller gave one.
    pub spill: &'m mut Spill<'s>,
}

impl<'m, 's> Growing<'m, 's> {
    /// The index in `scratch`: all of it with no store, else the first
    /// `spill.memory` bytes.
    pub fn new(scratch: &'m mut [u8], len: &'m mut usize, spilled: &'m mut u64, spill: &'m mut Spill<'s>) -> Self {
        let bound = if spill.store.is_some() {
            spill.memory
        } else {
            usize::MAX
        };
        let cut = bound.min(scratch.len());
        Growing {
            mem: scratch.get_mut(..cut).unwrap_or(&mut []),
            len,
            spilled,
            spill,
        }
    }
}

/// Appends one record to the index. When it does not fit the in-memory
/// block and a store is given, the block is filled, appended to the store
/// whole, and reused from its start for the rest of the record (a record
/// may straddle two blocks: the reader sees one byte stream).
///
/// Errors: `CapacityExceeded` when the block is full and there is no store
/// (nothing appended); the store's error when it fails (the muxer stops).
pub fn append_growing(g: &mut Growing<'_, '_>, s: &Sample, run: &mut RunState, pos: u64) -> Result<()> {
    if g.spill.store.is_none() {
        return append(g.mem, g.len, s, run, pos);
    }
    let mut rec = [0u8; MAX_RECORD];
    let mut next = *run;
    let n = encode(s, &mut next, &mut rec);
    let mut rest = rec.get(..n).unwrap_or(&[]);
    while !rest.is_empty() {
        let room = g.mem.get_mut(*g.len..).unwrap_or(&mut []);
        if room.is_empty() {
            let store = g
                .spill
                .store
                .as_deref_mut()
                .ok_or(Error::capacity(pos, &"mp4 muxer: no spill store"))?;
            if g.mem.is_empty() {
                return Err(Error::capacity(
                    pos,
                    &"mp4 muxer: no memory for the sample index (give the scratch and the spill bound some bytes)",
                ));
            }
            store.append(g.mem)?;
            *g.spilled = g.spilled.saturating_add(g.mem.len() as u64);
            *g.len = 0;
            continue;
        }
        let k = room.len().min(rest.len());
        if let (Some(d), Some(src)) = (room.get_mut(..k), rest.get(..k)) {
            d.copy_from_slice(src);
        }
        *g.len += k;
        rest = rest.get(k..).unwrap_or(&[]);
    }
    *run = next;
    Ok(())
}

#[cfg(test)]
mod tests {
    extern crate std;
    use super::*;
    use crate::error::ErrorKind;
    use crate::format::mp4::muxer_records::Records;

    #[test]
    fn records_round_trip_and_runs_cost_one_byte() {
        let samples = [
            Sample {
                track: 0,
                key: true,
                size: 5000,
                delta: 0,
                cts: 2002,
            },
            Sample {
                track: 1,
                key: true,
                size: 371,
                delta: 0,
                cts: 0,
            },
            Sample {
                track: 0,
                key: false,
                size: 800,
                delta: 1001,
                cts: -1001,
            },
            Sample {
                track: 1,
                key: true,
                size: 371,
                delta: 1024,
                cts: 0,
            },
            Sample {
                track: 1,
                key: true,
                size: 371,
                delta: 1024,
                cts: 0,
            },
            Sample {
                track: 15,
                key: false,
                size: u64::MAX,
                delta: u64::MAX,
                cts: -(1 << 61),
            },
        ];
        let mut buf = [0u8; 256];
        let mut len = 0;
        let mut runs = [RunState::default(); 16];
        let mut lens = [0usize; 6];
        for (i, s) in samples.iter().enumerate() {
            let before = len;
            append(&mut buf, &mut len, s, &mut runs[usize::from(s.track)], 0).unwrap();
            lens[i] = len - before;
        }
        assert_eq!(lens[4], 1);
        // A new composition offset: flag, size, delta, two bytes.
        assert_eq!(lens[2], 1 + 2 + 2 + 2);
        let back: heapless::Vec<Sample, 8> = Records::new(&buf[..len]).collect();
        assert_eq!(&back[..], &samples[..]);
        let mut small = [0u8; 3];
        let mut l = 0;
        let e = append(&mut small, &mut l, &samples[0], &mut RunState::default(), 0).unwrap_err();
        assert_eq!((e.kind(), l), (ErrorKind::CapacityExceeded, 0));
    }

    /// Composition offsets that repeat cost one byte after their first
    /// time; more distinct offsets than the table holds still come back
    /// exact (the reader updates its table as the encoder did).
    #[test]
    fn repeated_composition_offsets_cost_one_byte_and_all_round_trip() {
        let pattern = [6030i64, 5940, 9000, 2970, 6030, 3060, -3000, 12_000, 1, 2, 3, 6030];
        let mut buf = std::vec![0u8; 64 << 10];
        let mut len = 0;
        let mut run = RunState::default();
        let mut want = std::vec::Vec::new();
        for i in 0..2000u64 {
            let s = Sample {
                track: 2,
                key: i % 60 == 0,
                size: 1000 + (i % 7) * 300,
                delta: if i % 3 == 0 { 2970 } else { 3060 },
                cts: pattern[(i as usize * 7) % pattern.len()],
            };
            append(&mut buf, &mut len, &s, &mut run, 0).unwrap();
            want.push(s);
        }
        let back: std::vec::Vec<Sample> = Records::new(&buf[..len]).collect();
        assert_eq!(back, want);
        // Three offsets in turn: after the first three, one byte each.
        let mut buf = [0u8; 1024];
        let (mut len, mut run) = (0, RunState::default());
        for i in 0..30u64 {
            let s = Sample {
                track: 0,
                key: false,
                size: 100,
                delta: 3000,
                cts: [6000, 0, 3000][i as usize % 3],
            };
            let before = len;
            append(&mut buf, &mut len, &s, &mut run, 0).unwrap();
            if i >= 3 && s.cts != 0 {
                assert_eq!(len - before, 2, "sample {i}: flag and one offset byte");
            }
        }
    }
}
