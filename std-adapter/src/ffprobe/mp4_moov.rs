//! The `moov` as the JSON facts need it, read without holding its sample
//! tables: the boxes on the way to them (`moov` ISO/IEC 14496-12 §8.2.1,
//! `trak` §8.3.1, `mdia` §8.4.1, `minf` §8.4.4, `stbl` §8.5.1) are walked
//! box by box; `stsz` (§8.7.3) and `stts` (§8.6.1.2) are read a block at a
//! time and replaced by the few numbers the facts take from them; the
//! other large leaves (chunk offsets, sync samples, composition offsets)
//! are skipped without being read. Every other box is copied whole.
//!
//! The 10 MiB `moov` of a 4.5 GiB camera file (716,810 samples) becomes
//! about 25 KB of copied boxes, and only its `stsz` and `stts` are read.
//! The result parses the way the whole `moov` did, and the walk is as
//! lenient as the parse: a box that runs past its parent (or past the end
//! of the input) ends its parent's children there.

use mediaslice::Source;

/// Boxes walked into.
const CONTAINERS: [&[u8; 4]; 5] = [b"moov", b"trak", b"mdia", b"minf", b"stbl"];
/// A leaf larger than this, other than those in [`HELD`], is skipped.
const SMALL: u64 = 64 << 10;
/// Leaves copied whatever their size (within [`MAX_HELD`]): the facts
/// read them whole.
const HELD: [&[u8; 4]; 5] = [b"udta", b"meta", b"stsd", b"edts", b"mvex"];
/// The most bytes copied; past it the walk ends as at a cut `moov`.
const MAX_HELD: usize = 64 << 20;
/// The most boxes walked (each a read of its header: a probe over HTTP
/// stays within its request budget).
const MAX_BOXES: usize = 100_000;
/// The bytes read at a time from `stsz` and `stts`.
const BLOCK: usize = 64 << 10;
/// Nesting walked (`moov/trak/mdia/minf/stbl` is 5).
const MAX_DEPTH: usize = 6;

/// The stand-in for `stsz`: a big-endian `u64`, the sum of the sample
/// sizes (`sample_size × sample_count` when they are all one size).
pub const SIZES: [u8; 4] = *b"\0mss";
/// The stand-in for `stts`: `entry_count` (`u32`), the first two entries
/// (`sample_count`, `sample_delta`, `u32` each, 0 where absent), and the
/// sum of `sample_count × sample_delta` (`u64`).
pub const TIMES: [u8; 4] = *b"\0mst";

/// The `moov` body of `len` bytes at `pos` of `src` (already limited to
/// the input), as boxes that parse like it (empty when nothing could be
/// read).
pub fn read<S: Source>(src: &mut S, pos: u64, len: u64) -> Vec<u8> {
    let mut w = Walk {
        src,
        out: Vec::new(),
        boxes: 0,
    };
    w.children(pos, pos.saturating_add(len), 0);
    w.out
}

struct Walk<'a, S: Source> {
    src: &'a mut S,
    out: Vec<u8>,
    boxes: usize,
}

impl<S: Source> Walk<'_, S> {
    /// Copies the boxes from `pos` to `end`; false when the walk must end
    /// (a budget is spent or a read failed).
    fn children(&mut self, mut pos: u64, end: u64, depth: usize) -> bool {
        while pos + 8 <= end {
            self.boxes += 1;
            if self.boxes > MAX_BOXES {
                return false;
            }
            let mut head = [0u8; 16];
            let n = (end - pos).min(16) as usize;
            let Some(head) = head.get_mut(..n) else { return false };
            if self.src.read_exact_at(pos, head).is_err() {
                return false;
            }
            let (Some(size32), Some(kind)) = (be32(head, 0), head.get(4..8)) else {
                return false;
            };
            let kind: [u8; 4] = kind.try_into().unwrap_or([0; 4]);
            let (hl, size) = match size32 {
                1 => match head.get(8..16) {
                    Some(b) => (16, u64::from_be_bytes(b.try_into().unwrap_or([0; 8]))),
                    None => return true,
                },
                0 => (8, end - pos),
                s => (8, u64::from(s)),
            };
            // As the parse's box iterator: a box too small for its header
            // or running past its parent ends the parent's children.
            if size < hl || size > end - pos {
                return true;
            }
            let (body, body_end) = (pos + hl, pos + size);
            let more = if CONTAINERS.contains(&&kind) && depth < MAX_DEPTH {
                let at = self.out.len();
                self.out.extend_from_slice(&[0; 4]);
                self.out.extend_from_slice(&kind);
                let more = self.children(body, body_end, depth + 1);
                let held = u32::try_from(self.out.len() - at).unwrap_or(u32::MAX);
                if let Some(s) = self.out.get_mut(at..at + 4) {
                    s.copy_from_slice(&held.to_be_bytes());
                }
                more
            } else if &kind == b"stsz" {
                self.sizes(body, body_end)
            } else if &kind == b"stts" {
                self.times(body, body_end)
            } else if size <= SMALL || HELD.contains(&&kind) {
                self.copy(pos, size)
            } else {
                true
            };
            if !more {
                return false;
            }
            pos = body_end;
        }
        true
    }

    /// Copies the `len` bytes at `pos`.
    fn copy(&mut self, pos: u64, len: u64) -> bool {
        let at = self.out.len();
        let Ok(n) = usize::try_from(len) else { return false };
        if at + n > MAX_HELD {
            return false;
        }
        self.out.resize(at + n, 0);
        let ok = match self.out.get_mut(at..) {
            Some(b) => self.src.read_exact_at(pos, b).is_ok(),
            None => false,
        };
        if !ok {
            self.out.truncate(at);
        }
        ok
    }

    /// The stand-in of an `stsz` body from `pos` to `end`.
    fn sizes(&mut self, pos: u64, end: u64) -> bool {
        let head = self.fixed::<12>(pos, end);
        let (size, count) = (be32(&head, 4).unwrap_or(0), be32(&head, 8).unwrap_or(0));
        let total = if size != 0 {
            u64::from(size) * u64::from(count)
        } else {
            let mut total = 0u64;
            self.entries::<4>(pos + 12, end, u64::from(count), |e| {
                total += u64::from(be32(e, 0).unwrap_or(0))
            });
            total
        };
        self.stand_in(SIZES, &total.to_be_bytes());
        true
    }

    /// The stand-in of an `stts` body from `pos` to `end`.
    fn times(&mut self, pos: u64, end: u64) -> bool {
        let head = self.fixed::<24>(pos, end);
        let count = be32(&head, 4).unwrap_or(0);
        let mut total = 0u64;
        self.entries::<8>(pos + 8, end, u64::from(count), |e| {
            total += u64::from(be32(e, 0).unwrap_or(0)) * u64::from(be32(e, 4).unwrap_or(0));
        });
        let mut b = [0u8; 28];
        for (i, v) in [
            be32(&head, 4),
            be32(&head, 8),
            be32(&head, 12),
            be32(&head, 16),
            be32(&head, 20),
        ]
        .into_iter()
        .enumerate()
        {
            if let Some(s) = b.get_mut(4 * i..4 * i + 4) {
                s.copy_from_slice(&v.unwrap_or(0).to_be_bytes());
            }
        }
        if let Some(s) = b.get_mut(20..28) {
            s.copy_from_slice(&total.to_be_bytes());
        }
        self.stand_in(TIMES, &b);
        true
    }

    /// The first `N` bytes from `pos` (zeros past `end` or a failed read).
    fn fixed<const N: usize>(&mut self, pos: u64, end: u64) -> [u8; N] {
        let mut b = [0u8; N];
        let n = usize::try_from(end.saturating_sub(pos)).unwrap_or(N).min(N);
        if let Some(h) = b.get_mut(..n) {
            if self.src.read_exact_at(pos, h).is_err() {
                return [0; N];
            }
        }
        b
    }

    /// Calls `f` on each whole `E`-byte entry from `pos`, at most `count`
    /// of them and none past `end`, read a block at a time.
    fn entries<const E: usize>(&mut self, pos: u64, end: u64, count: u64, mut f: impl FnMut(&[u8])) {
        let room = end.saturating_sub(pos) / E as u64;
        let mut left = count.min(room);
        let mut at = pos;
        let mut block = vec![0u8; BLOCK];
        while left > 0 {
            let n = left.min((BLOCK / E) as u64) as usize;
            let Some(b) = block.get_mut(..n * E) else { return };
            if self.src.read_exact_at(at, b).is_err() {
                return;
            }
            b.chunks_exact(E).for_each(&mut f);
            left -= n as u64;
            at += (n * E) as u64;
        }
    }

    fn stand_in(&mut self, kind: [u8; 4], body: &[u8]) {
        let len = u32::try_from(8 + body.len()).unwrap_or(u32::MAX);
        self.out.extend_from_slice(&len.to_be_bytes());
        self.out.extend_from_slice(&kind);
        self.out.extend_from_slice(body);
    }
}

fn be32(b: &[u8], at: usize) -> Option<u32> {
    Some(u32::from_be_bytes(b.get(at..at + 4)?.try_into().ok()?))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ffprobe::mp4;
    use mediaslice::SliceSource;

    fn boxed(kind: &[u8; 4], body: &[u8]) -> Vec<u8> {
        let mut b = u32::try_from(8 + body.len()).unwrap().to_be_bytes().to_vec();
        b.extend_from_slice(kind);
        b.extend_from_slice(body);
        b
    }

    fn full(words: &[u32]) -> Vec<u8> {
        let mut b = vec![0u8; 4];
        words.iter().for_each(|w| b.extend_from_slice(&w.to_be_bytes()));
        b
    }

    /// A file of one track with `n` samples of sizes 100 + i % 7, stts
    /// runs (n - 1) × 512 and 1 × 300, and a chunk offset per sample.
    fn file(n: u32) -> (Vec<u8>, u64) {
        let sizes: Vec<u32> = (0..n).map(|i| 100 + i % 7).collect();
        let mut stsz = vec![0, n];
        stsz.extend(&sizes);
        let mut stco = vec![n];
        stco.extend((0..n).map(|i| 4096 + i));
        let stbl = [
            boxed(b"stts", &full(&[2, n - 1, 512, 1, 300])),
            boxed(b"stsz", &full(&stsz)),
            boxed(b"stco", &full(&stco)),
        ]
        .concat();
        let mdhd = full(&[0, 0, 90_000, 512 * (n - 1) + 300, 0x55C4_0000]);
        let mdia = [boxed(b"mdhd", &mdhd), boxed(b"minf", &boxed(b"stbl", &stbl))].concat();
        let tkhd = full(&[0, 0, 7, 0, 0]);
        let trak = [boxed(b"tkhd", &tkhd), boxed(b"mdia", &mdia)].concat();
        let mvhd = full(&[0, 0, 1000, 0]);
        let moov = boxed(b"moov", &[boxed(b"mvhd", &mvhd), boxed(b"trak", &trak)].concat());
        let total = sizes.iter().map(|&s| u64::from(s)).sum();
        ([boxed(b"ftyp", b"isom\0\0\0\0"), moov].concat(), total)
    }

    #[test]
    fn sample_tables_are_summed_and_chunk_offsets_are_not_read() {
        let n = 200_000;
        let (bytes, total) = file(n);
        let mut src = SliceSource::new(&bytes);
        let m = mp4::read(&mut src).unwrap();
        let t = m.trak(7).unwrap();
        assert_eq!(t.data_size, total);
        assert_eq!(t.stts_duration, 512 * u64::from(n - 1) + 300);
        assert_eq!(t.stts_head, (2, [(n - 1, 512), (1, 300)]));
        assert_eq!(t.timescale, 90_000);
        // stsz (800 KB) is read; stco (800 KB) is not.
        let read = src.stats().bytes_read;
        assert!(read > 800_000 && read < 900_000, "{read} of {} bytes read", bytes.len());
    }

    #[test]
    fn a_table_counts_its_whole_entries_and_a_box_past_its_parent_ends_it() {
        let (bytes, total) = file(1000);
        // stsz states 1,500 samples where it holds 1,000: the 1,000 count.
        let stsz = bytes.windows(4).position(|w| w == b"stsz").unwrap() + 4;
        let mut more = bytes.clone();
        more[stsz + 8..stsz + 12].copy_from_slice(&1500u32.to_be_bytes());
        let m = mp4::read(&mut SliceSource::new(&more)).unwrap();
        assert_eq!(m.trak(7).unwrap().data_size, total);
        // Cut inside stsz: the trak runs past the moov's body, which ends
        // the moov's children there, as a whole-moov parse of the cut input
        // did: no track.
        let cut = &bytes[..stsz + 12 + 4 * 10 + 2];
        let m = mp4::read(&mut SliceSource::new(cut)).unwrap();
        assert!(m.trak(7).is_none());
        assert_eq!(m.timescale, 1000);
        // The moov's stated size past the input: its body is what is there.
        let moov = bytes.windows(4).position(|w| w == b"moov").unwrap() - 4;
        let mut long = bytes.clone();
        long[moov..moov + 4].copy_from_slice(&u32::MAX.to_be_bytes());
        let m = mp4::read(&mut SliceSource::new(&long)).unwrap();
        assert_eq!(m.trak(7).unwrap().data_size, total);
    }
}
