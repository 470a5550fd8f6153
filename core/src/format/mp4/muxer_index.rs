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
//! offset  zigzag LEB128 (PTS minus DTS), when bit 7 is set
//! ```
//!
//! Cost per sample: 1 byte for a run of equal sizes and durations (PCM,
//! constant-rate audio of fixed size), 3 to 4 bytes for video or AAC
//! (a 2- or 3-byte size), 1 to 3 more with B-frames (the composition
//! offset). The chunk offsets are not stored: samples go to `mdat` one after
//! another, so an offset is the sum of the sizes before it.

use crate::error::{Error, Result};

/// Bit 4 of a record's flag byte: a sync sample.
const KEY: u8 = 0x10;
/// Bit 5: the size is the previous sample's of the same track.
const SAME_SIZE: u8 = 0x20;
/// Bit 6: the decode-time delta is the previous delta of the same track.
const SAME_DELTA: u8 = 0x40;
/// Bit 7: a composition offset follows.
const HAS_CTS: u8 = 0x80;

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

/// What the index remembers of a track's previous sample, to encode runs.
#[derive(Debug, Clone, Copy, Default)]
pub struct RunState {
    size: u64,
    delta: u64,
    started: bool,
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

fn get_leb(b: &[u8], at: &mut usize) -> Option<u64> {
    let mut v = 0u64;
    for shift in (0..70).step_by(7) {
        let x = *b.get(*at)?;
        *at += 1;
        v |= u64::from(x & 0x7F).checked_shl(shift)?;
        if x & 0x80 == 0 {
            return Some(v);
        }
    }
    None
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
        put_leb(out, &mut at, ((s.cts << 1) ^ (s.cts >> 63)) as u64);
    }
    out[0] = flags;
    *run = RunState {
        size: s.size,
        delta: s.delta,
        started: true,
    };
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

/// Reads the records of an index back, in write order, for every track.
#[derive(Debug, Clone)]
pub struct Records<'a> {
    bytes: &'a [u8],
    at: usize,
    runs: [RunState; 16],
}

impl<'a> Records<'a> {
    /// The records in `bytes` (the used part of the scratch).
    pub fn new(bytes: &'a [u8]) -> Self {
        Records {
            bytes,
            at: 0,
            runs: [RunState::default(); 16],
        }
    }
}

impl Iterator for Records<'_> {
    type Item = Sample;

    fn next(&mut self) -> Option<Sample> {
        let flags = *self.bytes.get(self.at)?;
        let mut at = self.at + 1;
        let track = flags & 0x0F;
        let run = self.runs.get_mut(usize::from(track))?;
        let size = if flags & SAME_SIZE != 0 {
            run.size
        } else {
            get_leb(self.bytes, &mut at)?
        };
        let delta = if flags & SAME_DELTA != 0 {
            run.delta
        } else {
            get_leb(self.bytes, &mut at)?
        };
        let cts = if flags & HAS_CTS != 0 {
            let z = get_leb(self.bytes, &mut at)?;
            ((z >> 1) as i64) ^ -((z & 1) as i64)
        } else {
            0
        };
        *run = RunState {
            size,
            delta,
            started: true,
        };
        self.at = at;
        Some(Sample {
            track,
            key: flags & KEY != 0,
            size,
            delta,
            cts,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::ErrorKind;

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
                cts: i64::MIN,
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
        let back: heapless::Vec<Sample, 8> = Records::new(&buf[..len]).collect();
        assert_eq!(&back[..], &samples[..]);
        let mut small = [0u8; 3];
        let mut l = 0;
        let e = append(&mut small, &mut l, &samples[0], &mut RunState::default(), 0).unwrap_err();
        assert_eq!((e.kind(), l), (ErrorKind::CapacityExceeded, 0));
    }
}
