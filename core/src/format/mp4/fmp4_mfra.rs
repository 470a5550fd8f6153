//! The movie fragment random access box of the fragmented MP4 muxer
//! (`mfra`, ISO/IEC 14496-12 §8.8.9: one `tfra` §8.8.10 and the `mfro`
//! §8.8.11 that ends the file), written at `finish` on a sink that can
//! patch (a file), so that a player seeks without reading every `moof`.
//!
//! **State, bounded.** The table holds at most [`MFRA_ENTRIES`] entries:
//! the moof offset, the presentation time of its first sample of the
//! cutting track (the first video track, else the first track) and the
//! number of its `traf`, for fragments that start that track with a sync
//! sample. When it is full, every other entry is dropped and from then on
//! only one fragment in twice as many is kept (`stride`), so a recording of
//! any length ends with entries spread evenly over it, never more than
//! the table. A `tfra` need not list every fragment (§8.8.10: it lists
//! "random access samples"; a player seeks to the entry before its target
//! and reads forward).
//!
//! Only the cutting track gets a `tfra`: its fragments start at its sync
//! samples, and the other tracks' samples in a fragment are at the same
//! times.

use super::muxer_box::BoxWriter;
use crate::error::Result;
use crate::sink::Sink;

/// Entries kept: 256 (4.3 KiB), or 16 with `few-tracks` (a recorder's
/// writer state within 8 KiB).
#[cfg(not(feature = "few-tracks"))]
pub(super) const MFRA_ENTRIES: usize = 256;
/// Entries kept with `few-tracks`: 16.
#[cfg(feature = "few-tracks")]
pub(super) const MFRA_ENTRIES: usize = 16;

/// One random access point: presentation time (media time scale), the
/// `moof`'s offset in the file, and the 1-based number of the track's
/// `traf` in it.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(super) struct Entry {
    pub time: u64,
    pub moof: u64,
    pub traf: u8,
}

/// The random access table: fragments `0, stride, 2 * stride, ...` of
/// those offered. Kept as three arrays, 17 bytes an entry (an array of
/// [`Entry`] would pad it to 24).
#[derive(Debug, Clone, Copy)]
pub(super) struct RandomAccess {
    times: [u64; MFRA_ENTRIES],
    moofs: [u64; MFRA_ENTRIES],
    trafs: [u8; MFRA_ENTRIES],
    len: usize,
    stride: u32,
    offered: u32,
}

impl Default for RandomAccess {
    fn default() -> Self {
        RandomAccess {
            times: [0; MFRA_ENTRIES],
            moofs: [0; MFRA_ENTRIES],
            trafs: [0; MFRA_ENTRIES],
            len: 0,
            stride: 1,
            offered: 0,
        }
    }
}

impl RandomAccess {
    /// Offers the random access point of the next fragment; it is kept
    /// when its number is a multiple of the stride, the table thinned
    /// first when it is full.
    pub(super) fn offer(&mut self, e: Entry) {
        let keep = self.offered % self.stride == 0;
        self.offered = self.offered.saturating_add(1);
        if !keep {
            return;
        }
        if self.len >= MFRA_ENTRIES {
            // Keep entries 0, 2, 4, ...: fragments 0, 2 * stride, ...;
            // this one, number MFRA_ENTRIES * stride, is among them.
            for i in 0..MFRA_ENTRIES / 2 {
                if let Some(kept) = self.get(2 * i) {
                    self.set(i, kept);
                }
            }
            self.len = MFRA_ENTRIES / 2;
            self.stride = self.stride.saturating_mul(2);
        }
        if self.len < MFRA_ENTRIES {
            self.set(self.len, e);
            self.len += 1;
        }
    }

    fn get(&self, i: usize) -> Option<Entry> {
        Some(Entry {
            time: *self.times.get(i)?,
            moof: *self.moofs.get(i)?,
            traf: *self.trafs.get(i)?,
        })
    }

    fn set(&mut self, i: usize, e: Entry) {
        if let (Some(t), Some(m), Some(f)) = (self.times.get_mut(i), self.moofs.get_mut(i), self.trafs.get_mut(i)) {
            (*t, *m, *f) = (e.time, e.moof, e.traf);
        }
    }

    /// The entries kept, in file order.
    pub(super) fn entries(&self) -> impl Iterator<Item = Entry> + '_ {
        (0..self.len).filter_map(|i| self.get(i))
    }

    /// Writes `mfra` (a `tfra` for `track_id`, then `mfro`) at the sink's
    /// position; nothing when no entry was kept.
    pub(super) fn write<K: Sink>(&self, sink: &mut K, track_id: u32) -> Result<()> {
        if self.len == 0 {
            return Ok(());
        }
        // tfra v1: 12 header + 12 fields, 19 bytes an entry (64-bit time
        // and offset, one byte each for traf, trun and sample numbers).
        let tfra = 24 + 19 * self.len as u64;
        let mfra = u32::try_from(8 + tfra + 16).unwrap_or(u32::MAX);
        let mut w = BoxWriter::new(sink);
        w.open(b"mfra")?;
        w.open_full(b"tfra", 1, 0)?;
        w.u32(track_id)?;
        // reserved (26 bits), length_size_of_traf_num, _trun_num and
        // _sample_num all 0: one byte each.
        w.u32(0)?;
        w.u32(u32::try_from(self.len).unwrap_or(u32::MAX))?;
        for e in self.entries() {
            w.u64(e.time)?;
            w.u64(e.moof)?;
            // traf_number, trun_number 1, sample_number 1 (1-based).
            w.put(&[e.traf, 1, 1])?;
        }
        w.close()?;
        w.open_full(b"mfro", 0, 0)?;
        w.u32(mfra)?;
        w.close()?;
        w.close()?;
        w.flush()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sink::SliceSink;

    fn entry(n: u64) -> Entry {
        Entry {
            time: n * 100,
            moof: n * 1000,
            traf: 1,
        }
    }

    #[test]
    fn the_table_thins_to_every_other_entry_and_stays_bounded() {
        let mut t = RandomAccess::default();
        let n = (MFRA_ENTRIES as u64) * 5 + 3;
        for k in 0..n {
            t.offer(entry(k));
            assert!(t.entries().count() <= MFRA_ENTRIES);
        }
        // Evenly spread from fragment 0, one in `stride`.
        let stride = u64::from(t.stride);
        let kept = t.entries().count() as u64;
        assert_eq!(stride, 8, "{n} offered, {kept} kept");
        for (i, x) in t.entries().enumerate() {
            assert_eq!(x, entry(i as u64 * stride));
        }
        assert_eq!(kept, (n - 1) / stride + 1);
    }

    #[test]
    fn the_box_is_as_section_8_8_10_lays_it_out() {
        let mut t = RandomAccess::default();
        t.offer(entry(0));
        t.offer(Entry {
            time: 0x1_0000_0002,
            moof: 0x3_0000_0004,
            traf: 2,
        });
        let mut buf = [0u8; 128];
        let mut s = SliceSink::new(&mut buf);
        t.write(&mut s, 7).unwrap_or_else(|_| unreachable!());
        let b = s.written();
        let size = 8 + 24 + 2 * 19 + 16;
        assert_eq!(b.len(), size);
        assert_eq!(b.get(..8), Some(&[0, 0, 0, size as u8, b'm', b'f', b'r', b'a'][..]));
        assert_eq!(b.get(8..16), Some(&[0, 0, 0, 62, b't', b'f', b'r', b'a'][..]));
        assert_eq!(b.get(16..20), Some(&[1, 0, 0, 0][..]));
        assert_eq!(b.get(20..32), Some(&[0, 0, 0, 7, 0, 0, 0, 0, 0, 0, 0, 2][..]));
        assert_eq!(
            b.get(51..70),
            Some(&[0, 0, 0, 1, 0, 0, 0, 2, 0, 0, 0, 3, 0, 0, 0, 4, 2, 1, 1][..])
        );
        assert_eq!(
            b.get(70..),
            Some(&[0, 0, 0, 16, b'm', b'f', b'r', b'o', 0, 0, 0, 0, 0, 0, 0, size as u8][..])
        );
    }
}
