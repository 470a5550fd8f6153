//! Index table segments (SMPTE ST 377-1 §11): per edit unit a temporal
//! offset, a key frame offset, flags and a stream offset, or for constant
//! bit rate essence one EditUnitByteCount.
//!
//! Timestamps follow ffmpeg's `mxf_compute_ptses_fake_index`: entries are
//! numbered across segments (sorted by start position) in decode order;
//! entry `x` with temporal offset `t` puts `x` at presentation slot
//! `x + t`; the packet of decode index `k` gets the pts stored in slot `k`
//! (the last entry written there) and the dts `k - max(t)`. Nothing is
//! stored per entry: the entries are read again from the input, in a
//! window as wide as the offsets seen.

use super::local::{self, Set};
use crate::error::Result;
use crate::source::Source;

/// Most index table segments kept (across partitions).
pub(crate) const MAX_SEGMENTS: usize = 16;
/// Most entries one index table may number (ffmpeg keeps them in memory;
/// this reader reads them again): a bound on the open-time scan.
const MAX_ENTRIES: u64 = 1 << 24;

const INDEX_EDIT_RATE: u16 = 0x3f0b;
const INDEX_START: u16 = 0x3f0c;
const INDEX_DURATION: u16 = 0x3f0d;
const EDIT_UNIT_BYTE_COUNT: u16 = 0x3f05;
const INDEX_SID: u16 = 0x3f06;
const ENTRY_ARRAY: u16 = 0x3f0a;
/// Bytes of an entry before its slice offsets: temporal offset, key frame
/// offset, flags, stream offset.
const ENTRY_MIN: u32 = 11;

/// One index table segment.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Segment {
    pub index_sid: u32,
    pub start: u64,
    pub duration: u64,
    pub edit_unit_bytes: u32,
    pub edit_rate: (u32, u32),
    entries_at: u64,
    entry_count: u32,
    entry_len: u32,
}

/// The index table of the essence (one IndexSID).
#[derive(Debug, Clone, Default)]
pub(crate) struct IndexTable {
    segments: heapless::Vec<Segment, MAX_SEGMENTS>,
    /// Presentation slots (ffmpeg's `nb_ptses`): 0 when a segment has no
    /// entries.
    slots: u64,
    min_offset: i8,
    max_offset: i8,
    /// The dts of decode index 0.
    pub first_dts: i64,
}

impl IndexTable {
    /// Adds the segment in `set`. Returns `false` when the table is full.
    pub fn add<S: Source>(&mut self, src: &mut S, set: &Set) -> Result<bool> {
        let mut seg = Segment {
            index_sid: local::uint(src, set, INDEX_SID)?.unwrap_or(0) as u32,
            start: local::uint(src, set, INDEX_START)?.unwrap_or(0),
            duration: local::uint(src, set, INDEX_DURATION)?.unwrap_or(0),
            edit_unit_bytes: local::uint(src, set, EDIT_UNIT_BYTE_COUNT)?.unwrap_or(0) as u32,
            edit_rate: local::rational(src, set, INDEX_EDIT_RATE)?.unwrap_or((0, 1)),
            ..Segment::default()
        };
        if let Some((at, count, len)) = local::batch(src, set, ENTRY_ARRAY)? {
            if len >= ENTRY_MIN {
                seg.entries_at = at;
                seg.entry_count = count;
                seg.entry_len = len;
            }
        }
        // A segment seen again (the footer repeats body segments) is kept once.
        if self
            .segments
            .iter()
            .any(|s| s.index_sid == seg.index_sid && s.start == seg.start)
        {
            return Ok(true);
        }
        let at = self
            .segments
            .iter()
            .position(|s| (s.index_sid, s.start) > (seg.index_sid, seg.start))
            .unwrap_or(self.segments.len());
        Ok(self.segments.insert(at, seg).is_ok())
    }

    /// Keeps the segments of the first IndexSID and reads the temporal
    /// offsets' range.
    pub fn finish<S: Source>(&mut self, src: &mut S) -> Result<()> {
        if let Some(sid) = self.segments.first().map(|s| s.index_sid) {
            self.segments.retain(|s| s.index_sid == sid);
        }
        let all_have_entries = !self.segments.is_empty() && self.segments.iter().all(|s| s.entry_count > 0);
        self.slots = if all_have_entries {
            self.segments
                .iter()
                .fold(0u64, |a, s| a.saturating_add(s.duration))
                .min(MAX_ENTRIES)
        } else {
            0
        };
        let mut max = i8::MIN;
        let mut min = i8::MAX;
        let mut x = 0u64;
        let segs = self.segments.clone();
        'outer: for s in &segs {
            for j in 0..s.entry_count {
                if x >= self.slots {
                    break 'outer;
                }
                let b: [u8; 1] = src.array(s.entries_at + u64::from(j) * u64::from(s.entry_len))?;
                let off = b[0] as i8;
                let slot = x as i64 + i64::from(off);
                if (0..self.slots as i64).contains(&slot) {
                    max = max.max(off);
                    min = min.min(off);
                }
                x += 1;
            }
        }
        self.max_offset = max;
        self.min_offset = min.min(max);
        self.first_dts = -i64::from(max);
        Ok(())
    }

    /// Whether the table gives timestamps (every segment has entries).
    pub fn has_entries(&self) -> bool {
        self.slots > 0
    }

    /// Presentation slots (edit units the entries cover).
    pub fn slots(&self) -> u64 {
        self.slots
    }

    /// Entry `x` in decode order across segments: temporal offset, flags.
    fn entry<S: Source>(&self, src: &mut S, x: u64) -> Result<Option<(i8, u8)>> {
        let mut first = 0u64;
        for s in &self.segments {
            let n = u64::from(s.entry_count);
            if x < first + n {
                let at = s.entries_at + (x - first) * u64::from(s.entry_len);
                let b: [u8; 3] = src.array(at)?;
                return Ok(Some((b[0] as i8, b[2])));
            }
            first += n;
        }
        Ok(None)
    }

    /// The pts of decode index `k` (ffmpeg's `ptses[k]`), `None` when no
    /// entry points at slot `k`.
    pub fn pts<S: Source>(&self, src: &mut S, k: u64) -> Result<Option<i64>> {
        if k >= self.slots {
            return Ok(None);
        }
        // x + offset(x) == k; the largest such x wins (written last).
        let hi = k as i64 - i64::from(self.min_offset);
        let lo = (k as i64 - i64::from(self.max_offset)).max(0);
        let mut x = hi.min(self.slots as i64 - 1);
        while x >= lo {
            if let Some((off, _)) = self.entry(src, x as u64)? {
                if x + i64::from(off) == k as i64 {
                    return Ok(Some(x));
                }
            }
            x -= 1;
        }
        Ok(None)
    }

    /// Whether entry `k` is neither forward nor backward predicted (flags
    /// bits 0x30 clear, ST 377-1 §11.2.5), `None` without an entry.
    pub fn keyframe<S: Source>(&self, src: &mut S, k: u64) -> Result<Option<bool>> {
        Ok(self.entry(src, k)?.map(|(_, flags)| flags & 0x30 == 0))
    }

    /// The constant edit unit size, edit rate and segment count (for
    /// clip-wrapped essence), when the first segment gives one.
    pub fn constant(&self) -> Option<(u32, (u32, u32), usize)> {
        let s = self.segments.first()?;
        (s.edit_unit_bytes > 0).then_some((s.edit_unit_bytes, s.edit_rate, self.segments.len()))
    }
}
