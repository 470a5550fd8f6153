//! The common step of the sample walk (§8.6, §8.7) taken through the
//! table windows ([`super::table_window`]): a sample inside the current
//! chunk, or the first of the next chunk (one `stsc` entry further at most);
//! its size from `stsz` (or the constant size), its duration and
//! composition offset from the current `stts`/`ctts` runs or the next ones,
//! and its sync flag from the next `stss` entry. A window that does not
//! hold an entry is refilled here (one read of the source, as the general
//! path would make); a refill that fails, `stz2`, an empty run, several
//! `stsc` entries in one step, the end of a table and uncompressed-audio
//! chunks are left to [`super::sample_table::table_sample`]'s general
//! path, which reads the source and reports errors. This step changes the
//! cursor only when it completes (a refill changes a window, which is a
//! cache of the table's bytes), so the general path then starts from the
//! same state.

use super::demuxer::Mp4Track;
use super::sample_table::{Sample, Table};
use super::table_window::{Window, Windows};
use crate::source::Source;

/// The next sample of `t` in the common case, or `None` to leave it to
/// the general path.
#[inline]
pub(super) fn fast_sample<S: Source>(src: &mut S, t: &mut Mp4Track, w: &mut Windows) -> Option<Sample> {
    let c = &t.cur;
    if t.chunk.is_some() || c.sample >= t.sample_count {
        return None;
    }
    let same_stsc = c.left_in_chunk > 0
        || (c.spc != 0
            && c.next_chunk < t.stco.count
            && (c.stsc_next_first == 0 || c.next_chunk.saturating_add(1) < c.stsc_next_first));
    if same_stsc && c.stts_left > 0 && (!t.has_stss || c.sample.saturating_add(1) != c.next_sync) {
        return in_run(src, t, w);
    }
    let (mut stsc_i, mut spc, mut stsc_next_first) = (c.stsc_i, c.spc, c.stsc_next_first);
    let (pos, left, next_chunk) = if c.left_in_chunk > 0 {
        (c.offset, c.left_in_chunk, c.next_chunk)
    } else {
        let chunk = c.next_chunk;
        if chunk >= t.stco.count {
            return None;
        }
        if stsc_next_first != 0 && chunk.saturating_add(1) >= stsc_next_first {
            // One `stsc` entry further (the general path takes several).
            let i = stsc_i.wrapping_add(1);
            let e = t.stsc.off + i as u64 * 12;
            let end = t.stsc.end(12);
            spc = u32::from_be_bytes(entry(&mut w.stsc, src, e + 4, end)?);
            let nf = if i.saturating_add(1) < t.stsc.count {
                u32::from_be_bytes(entry(&mut w.stsc, src, e + 12, end)?)
            } else {
                0
            };
            stsc_i = i;
            stsc_next_first = if nf > stsc_next_first { nf } else { 0 };
            if stsc_next_first != 0 && chunk.saturating_add(1) >= stsc_next_first {
                return None;
            }
        }
        if spc == 0 {
            return None;
        }
        let off = chunk_offset(src, t, w, chunk)?;
        (off, spc, chunk + 1)
    };
    let i = c.sample;
    let size = if t.stsz_const != 0 {
        t.stsz_const
    } else if t.stz2_bits == 0 {
        u32::from_be_bytes(entry(&mut w.stsz, src, t.stsz.off + i as u64 * 4, t.stsz.end(4))?)
    } else {
        return None;
    };
    let (key, stss_i, next_sync) = if !t.has_stss || i.saturating_add(1) != c.next_sync {
        (!t.has_stss, c.stss_i, c.next_sync)
    } else {
        // A sync sample: the next one from `stss`.
        let k = c.stss_i + 1;
        let next = if k < t.stss.count {
            u32::from_be_bytes(entry(&mut w.stss, src, t.stss.off + k as u64 * 4, t.stss.end(4))?)
        } else {
            u32::MAX
        };
        (true, k, next)
    };
    let (stts_i, stts_left, delta) = if c.stts_left > 0 {
        (c.stts_i, c.stts_left - 1, c.stts_delta)
    } else {
        let (n, d) = run(&mut w.stts, src, t.stts, c.stts_i)?;
        (c.stts_i + 1, n - 1, d)
    };
    let (ctts_i, ctts_left, ctts_off) = if t.ctts.count == 0 {
        (c.ctts_i, c.ctts_left, c.ctts_off)
    } else if c.ctts_left > 0 {
        (c.ctts_i, c.ctts_left - 1, c.ctts_off)
    } else {
        let (n, o) = run(&mut w.ctts, src, t.ctts, c.ctts_i)?;
        (c.ctts_i + 1, n - 1, o as i32)
    };
    let cts = if t.ctts.count > 0 { ctts_off as i64 } else { 0 };
    let dts = c.dts;
    let c = &mut t.cur;
    c.offset = pos.saturating_add(size as u64);
    c.left_in_chunk = left - 1;
    c.next_chunk = next_chunk;
    c.stsc_i = stsc_i;
    c.spc = spc;
    c.stsc_next_first = stsc_next_first;
    c.sample = i + 1;
    c.stts_i = stts_i;
    c.stts_left = stts_left;
    c.stts_delta = delta;
    c.dts = dts.saturating_add(delta as i64);
    c.ctts_i = ctts_i;
    c.ctts_left = ctts_left;
    c.ctts_off = ctts_off;
    c.stss_i = stss_i;
    c.next_sync = next_sync;
    Some(Sample {
        pos,
        size,
        dts,
        cts,
        duration: delta,
        key,
    })
}

/// The commonest step, split off so that it writes only what changes: a
/// sample inside the current chunk, or the first of the next chunk when
/// that chunk is under the same `stsc` entry; inside the current `stts`
/// run; not a sync sample (or every sample is one: no `stss`). What
/// [`fast_sample`]'s full step would give, the caller having checked that
/// the sample exists and those conditions.
#[inline(always)]
fn in_run<S: Source>(src: &mut S, t: &mut Mp4Track, w: &mut Windows) -> Option<Sample> {
    let c = &t.cur;
    let (pos, left, next_chunk) = if c.left_in_chunk > 0 {
        (c.offset, c.left_in_chunk, c.next_chunk)
    } else {
        let chunk = c.next_chunk;
        let off = chunk_offset(src, t, w, chunk)?;
        (off, c.spc, chunk + 1)
    };
    let i = c.sample;
    let size = if t.stsz_const != 0 {
        t.stsz_const
    } else if t.stz2_bits == 0 {
        u32::from_be_bytes(entry(&mut w.stsz, src, t.stsz.off + i as u64 * 4, t.stsz.end(4))?)
    } else {
        return None;
    };
    let (ctts_i, ctts_left, cts) = if t.ctts.count == 0 {
        (c.ctts_i, c.ctts_left, 0)
    } else if c.ctts_left > 0 {
        (c.ctts_i, c.ctts_left - 1, c.ctts_off)
    } else {
        let (n, o) = run(&mut w.ctts, src, t.ctts, c.ctts_i)?;
        (c.ctts_i + 1, n - 1, o as i32)
    };
    let (dts, delta) = (c.dts, c.stts_delta);
    let c = &mut t.cur;
    c.offset = pos.saturating_add(size as u64);
    c.left_in_chunk = left - 1;
    c.next_chunk = next_chunk;
    c.sample = i + 1;
    c.stts_left -= 1;
    c.dts = dts.saturating_add(delta as i64);
    if t.ctts.count != 0 {
        c.ctts_i = ctts_i;
        c.ctts_left = ctts_left;
        c.ctts_off = cts;
    }
    Some(Sample {
        pos,
        size,
        dts,
        cts: cts as i64,
        duration: delta,
        key: !t.has_stss,
    })
}

/// The `N` bytes at `off` of a table ending at `end`, through its window;
/// `None` when they cannot be read (the general path reads them again and
/// reports why).
/// Chunk `chunk`'s file offset from the `stco` (32-bit) or `co64` (64-bit)
/// table (ISO/IEC 14496-12 §8.7.5), through the window.
#[inline(always)]
fn chunk_offset<S: Source>(src: &mut S, t: &Mp4Track, w: &mut Windows, chunk: u32) -> Option<u64> {
    if t.co64 {
        entry(&mut w.stco, src, t.stco.off + u64::from(chunk) * 8, t.stco.end(8)).map(u64::from_be_bytes)
    } else {
        entry(&mut w.stco, src, t.stco.off + u64::from(chunk) * 4, t.stco.end(4))
            .map(|b| u64::from(u32::from_be_bytes(b)))
    }
}

#[inline(always)]
fn entry<S: Source, const N: usize>(w: &mut Window, src: &mut S, off: u64, end: u64) -> Option<[u8; N]> {
    w.get(src, off, end).ok()
}

/// Entry `i` of an `stts` or `ctts` table (sample count, value) when it
/// can be read and its run is not empty.
#[inline]
fn run<S: Source>(w: &mut Window, src: &mut S, table: Table, i: u32) -> Option<(u32, u32)> {
    if i >= table.count {
        return None;
    }
    let [a0, a1, a2, a3, b0, b1, b2, b3] = entry::<_, 8>(w, src, table.off + i as u64 * 8, table.end(8))?;
    let n = u32::from_be_bytes([a0, a1, a2, a3]);
    if n == 0 {
        return None;
    }
    Some((n, u32::from_be_bytes([b0, b1, b2, b3])))
}

#[cfg(test)]
mod tests {
    extern crate std;
    use super::super::demuxer::Mp4Demuxer;
    use super::super::sample_table::{reset_cursor, table_sample_read};
    use super::super::table_window::Windows;
    use super::fast_sample;
    use crate::format::traits::{Context, FormatDemuxer};
    use crate::SliceSource;
    use std::path::PathBuf;
    use std::vec::Vec;

    /// Every track of the corpus MP4 files (and the samples' MP4/MOV/M4A
    /// files when present): walked with the fast step where it applies
    /// and the general path where it declines, it gives the samples and
    /// the cursor of the general path alone, sample by sample.
    #[test]
    fn fast_step_matches_the_general_path() {
        let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..");
        let samples = std::env::var_os("MEDIASLICE_SAMPLES")
            .map(PathBuf::from)
            .unwrap_or_else(|| root.join("../shared/samples"));
        let mut files: Vec<PathBuf> = Vec::new();
        for dir in [root.join("corpus/files/mp4"), samples.join("mp4")] {
            match std::fs::read_dir(&dir) {
                Ok(rd) => files.extend(rd.flatten().map(|e| e.path())),
                Err(_) => std::println!("note: {} not found: its files are not checked", dir.display()),
            }
        }
        files.sort();
        let (mut fast, mut general) = (0u64, 0u64);
        for f in &files {
            let Ok(data) = std::fs::read(f) else { continue };
            let mut src = SliceSource::new(&data);
            let mut ctx = Context::default();
            let Ok(d) = Mp4Demuxer::open(&mut src, &mut ctx) else {
                continue;
            };
            for t in d.tracks.iter() {
                let mut a = t.clone();
                if reset_cursor(&mut src, &mut a).is_err() {
                    continue;
                }
                let mut b = a.clone();
                let (mut wa, mut wb) = (Windows::default(), Windows::default());
                for _ in 0..1_000_000 {
                    let want = table_sample_read(&mut src, &mut ctx, &mut b, &mut wb);
                    let got = match fast_sample(&mut src, &mut a, &mut wa) {
                        Some(s) => {
                            fast += 1;
                            Ok(Some(s))
                        }
                        None => {
                            general += 1;
                            table_sample_read(&mut src, &mut ctx, &mut a, &mut wa)
                        }
                    };
                    assert_eq!(got, want, "{}: track {}", f.display(), t.index);
                    assert_eq!(a.cur, b.cur, "{}: track {}", f.display(), t.index);
                    if !matches!(want, Ok(Some(_))) {
                        break;
                    }
                }
            }
        }
        assert!(
            fast > general,
            "the fast step took {fast} samples, the general path {general}"
        );
    }
}
