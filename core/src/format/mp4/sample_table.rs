//! Sample tables walked in place (§8.6, §8.7): each track keeps a
//! [`Cursor`] over `stsz`/`stz2`, `stco`/`co64`, `stsc`, `stts`, `ctts` and
//! `stss` and reads entries through the source; nothing is expanded. This is
//! the per-packet path of unfragmented files.

use super::demuxer::Mp4Track;
use super::table_window::Windows;
use crate::error::{Error, Result};
use crate::format::traits::Context;
use crate::source::Source;

/// Entries of `stsc`, `stts` or `ctts` that one step of a cursor may read
/// (entering a chunk, advancing decode times, the next composition offset).
/// Entries whose run is empty are read one after the other, so a table of
/// such entries would otherwise make one step read the whole table; a
/// million entries (8 to 12 MB of table) is far more than any real file
/// puts in one step. It also caps one long advance: a seek's walk stops at
/// the millionth `stts` entry.
const MAX_ENTRIES_PER_STEP: u32 = 1_000_000;

/// Number of samples ffmpeg groups into one packet for uncompressed audio
/// stored one sample per `stsz` entry (`mov.c`, chunk demuxing).
const PCM_GROUP: u32 = 1024;

/// Samples and bytes of the next packet of a chunk read as uncompressed
/// audio, with `left` samples left in the chunk (ffmpeg `mov_build_index`).
pub(super) fn chunk_group(mode: ChunkMode, left: u32) -> (u32, u32) {
    if mode.samples_per_frame >= 160 {
        (mode.samples_per_frame.min(left), mode.bytes_per_frame)
    } else if mode.samples_per_frame > 1 {
        let s = (PCM_GROUP / mode.samples_per_frame * mode.samples_per_frame)
            .min(left)
            .max(1);
        (s, (s / mode.samples_per_frame).saturating_mul(mode.bytes_per_frame))
    } else {
        let s = PCM_GROUP.min(left);
        (s, s.saturating_mul(mode.frame_bytes.max(1)))
    }
}

/// A table inside `stbl`: where its first entry is and how many there are.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(super) struct Table {
    pub(super) off: u64,
    pub(super) count: u32,
}

impl Table {
    /// Where the table ends with entries of `size` bytes.
    #[inline(always)]
    pub(super) fn end(&self, size: u64) -> u64 {
        self.off.saturating_add(u64::from(self.count).saturating_mul(size))
    }
}

/// Uncompressed-audio chunk reading (QuickTime sound description v0/v1/v2).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(super) struct ChunkMode {
    /// Bytes per sample frame (all channels), when frames are read singly.
    pub(super) frame_bytes: u32,
    /// Samples per compressed frame and bytes per frame (v1 sound
    /// descriptions, IMA4), or 0.
    pub(super) samples_per_frame: u32,
    pub(super) bytes_per_frame: u32,
}

/// One sample ready to deliver.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(super) struct Sample {
    pub(super) pos: u64,
    pub(super) size: u32,
    pub(super) dts: i64,
    pub(super) cts: i64,
    pub(super) duration: u32,
    pub(super) key: bool,
}

/// Position in a track's sample tables.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(super) struct Cursor {
    pub(super) sample: u32,
    pub(super) next_chunk: u32,
    pub(super) left_in_chunk: u32,
    pub(super) offset: u64,
    pub(super) stsc_i: u32,
    pub(super) spc: u32,
    pub(super) stsc_next_first: u32,
    pub(super) stts_i: u32,
    pub(super) stts_left: u32,
    pub(super) stts_delta: u32,
    pub(super) ctts_i: u32,
    pub(super) ctts_left: u32,
    pub(super) ctts_off: i32,
    pub(super) stss_i: u32,
    pub(super) next_sync: u32,
    pub(super) dts: i64,
}

/// Puts `t`'s cursor at its first sample.
pub(super) fn reset_cursor<S: Source>(src: &mut S, t: &mut Mp4Track) -> Result<()> {
    t.cur = Cursor {
        stsc_i: u32::MAX,
        next_sync: u32::MAX,
        ..Cursor::default()
    };
    t.edit_done = false;
    t.key_after_edit = false;
    if t.stsc.count > 0 {
        t.cur.stsc_next_first = src.u32_be(t.stsc.off)?;
    }
    if t.has_stss && t.stss.count > 0 {
        t.cur.next_sync = src.u32_be(t.stss.off)?;
    }
    t.next_dts = 0;
    Ok(())
}

/// Reads the size of sample `i` (0-based) from `stsz`/`stz2`.
pub(super) fn sample_size<S: Source>(src: &mut S, t: &Mp4Track, w: &mut Windows, i: u32) -> Result<u32> {
    if t.stsz_const != 0 {
        return Ok(t.stsz_const);
    }
    let w = &mut w.stsz;
    match t.stz2_bits {
        0 => w.u32_be(src, t.stsz.off + i as u64 * 4, t.stsz.end(4)),
        16 => {
            let b: [u8; 2] = w.get(src, t.stsz.off + i as u64 * 2, t.stsz.end(2))?;
            Ok(u16::from_be_bytes(b) as u32)
        }
        8 => {
            let b: [u8; 1] = w.get(src, t.stsz.off + i as u64, t.stsz.end(1))?;
            Ok(b[0] as u32)
        }
        _ => {
            let end = t.stsz.off.saturating_add(u64::from(t.stsz.count).div_ceil(2));
            let b: [u8; 1] = w.get(src, t.stsz.off + i as u64 / 2, end)?;
            Ok(if i % 2 == 0 {
                (b[0] >> 4) as u32
            } else {
                (b[0] & 0xF) as u32
            })
        }
    }
}

/// Enters the next non-empty chunk; false when the chunk table ends.
pub(super) fn enter_chunk<S: Source>(
    src: &mut S,
    ctx: &mut Context,
    t: &mut Mp4Track,
    w: &mut Windows,
) -> Result<bool> {
    loop {
        let chunk = t.cur.next_chunk;
        if chunk >= t.stco.count {
            if t.cur.sample < t.sample_count {
                ctx.diags.report("mp4.stco-too-short", t.stco.off);
            }
            return Ok(false);
        }
        let mut guard = 0u32;
        while t.cur.stsc_next_first != 0 && chunk.saturating_add(1) >= t.cur.stsc_next_first {
            guard += 1;
            if guard > MAX_ENTRIES_PER_STEP {
                return Err(Error::malformed(
                    t.stsc.off,
                    &"mp4 stsc: first_chunk does not advance (ISO/IEC 14496-12 8.7.4)",
                ));
            }
            let i = t.cur.stsc_i.wrapping_add(1);
            t.cur.stsc_i = i;
            let e = t.stsc.off + i as u64 * 12;
            let end = t.stsc.end(12);
            t.cur.spc = w.stsc.u32_be(src, e + 4, end)?;
            let next = i.saturating_add(1);
            let nf = if next < t.stsc.count {
                w.stsc.u32_be(src, e + 12, end)?
            } else {
                0
            };
            t.cur.stsc_next_first = if nf > t.cur.stsc_next_first { nf } else { 0 };
        }
        t.cur.offset = if t.co64 {
            w.stco.u64_be(src, t.stco.off + chunk as u64 * 8, t.stco.end(8))?
        } else {
            w.stco.u32_be(src, t.stco.off + chunk as u64 * 4, t.stco.end(4))? as u64
        };
        t.cur.next_chunk = chunk + 1;
        t.cur.left_in_chunk = t.cur.spc;
        if t.cur.spc > 0 {
            return Ok(true);
        }
    }
}

/// Advances the decode-time cursor by `n` samples, returning the
/// duration of those samples.
pub(super) fn advance_stts<S: Source>(src: &mut S, t: &mut Mp4Track, w: &mut Windows, mut n: u32) -> Result<u64> {
    let mut total = 0u64;
    let mut guard = 0u32;
    while n > 0 {
        if t.cur.stts_left == 0 {
            guard += 1;
            if t.cur.stts_i >= t.stts.count || guard > MAX_ENTRIES_PER_STEP {
                return Ok(total);
            }
            let e = t.stts.off + t.cur.stts_i as u64 * 8;
            let b: [u8; 8] = w.stts.get(src, e, t.stts.end(8))?;
            let [a0, a1, a2, a3, d0, d1, d2, d3] = b;
            t.cur.stts_left = u32::from_be_bytes([a0, a1, a2, a3]);
            t.cur.stts_delta = u32::from_be_bytes([d0, d1, d2, d3]);
            t.cur.stts_i += 1;
            continue;
        }
        let k = n.min(t.cur.stts_left);
        t.cur.stts_left -= k;
        n -= k;
        let d = k as u64 * t.cur.stts_delta as u64;
        total = total.saturating_add(d);
        t.cur.dts = t.cur.dts.saturating_add(d.min(i64::MAX as u64) as i64);
    }
    Ok(total)
}

/// The composition offset of the current sample, advancing `ctts`.
pub(super) fn next_ctts<S: Source>(src: &mut S, t: &mut Mp4Track, w: &mut Windows) -> Result<i64> {
    let mut guard = 0u32;
    while t.cur.ctts_left == 0 {
        guard += 1;
        if t.cur.ctts_i >= t.ctts.count || guard > MAX_ENTRIES_PER_STEP {
            return Ok(0);
        }
        let e = t.ctts.off + t.cur.ctts_i as u64 * 8;
        let b: [u8; 8] = w.ctts.get(src, e, t.ctts.end(8))?;
        let [a0, a1, a2, a3, d0, d1, d2, d3] = b;
        t.cur.ctts_left = u32::from_be_bytes([a0, a1, a2, a3]);
        t.cur.ctts_off = u32::from_be_bytes([d0, d1, d2, d3]) as i32;
        t.cur.ctts_i += 1;
    }
    t.cur.ctts_left -= 1;
    Ok(t.cur.ctts_off as i64)
}

/// Computes the next sample of `t`, ending the track after the first
/// keyframe past its edit (ffmpeg `mov_fix_index`; with composition
/// offsets a second keyframe is waited for, since B-frames after the
/// first may still fall inside the edit).
///
/// `#[inline]`: it was inlined into `next_packet` while both were in one
/// module; across modules it is not without the hint (3% more
/// instructions a packet on the 130k-packet MP4).
#[inline]
pub(super) fn next_sample<S: Source>(
    src: &mut S,
    ctx: &mut Context,
    t: &mut Mp4Track,
    w: &mut Windows,
) -> Result<Option<Sample>> {
    if t.edit_done {
        return Ok(None);
    }
    let Some(s) = table_sample(src, ctx, t, w)? else {
        return Ok(None);
    };
    if let Some((_, end)) = t.edit {
        let cts = s.dts.saturating_add(s.cts);
        if cts.saturating_add(s.duration as i64) >= end && (s.key || t.audio) {
            if t.ctts.count > 0 && !t.audio && !t.key_after_edit {
                t.key_after_edit = true;
            } else {
                t.edit_done = true;
            }
        }
    }
    Ok(Some(s))
}

/// The next sample of `t` from its tables, whatever its edit list says.
#[inline]
pub(super) fn table_sample<S: Source>(
    src: &mut S,
    ctx: &mut Context,
    t: &mut Mp4Track,
    w: &mut Windows,
) -> Result<Option<Sample>> {
    #[cfg(feature = "mp4-windows")]
    if let Some(s) = super::sample_fast::fast_sample(src, t, w) {
        return Ok(Some(s));
    }
    table_sample_read(src, ctx, t, w)
}

/// [`table_sample`] through the source: every case, and every error.
pub(super) fn table_sample_read<S: Source>(
    src: &mut S,
    ctx: &mut Context,
    t: &mut Mp4Track,
    w: &mut Windows,
) -> Result<Option<Sample>> {
    if t.cur.sample >= t.sample_count && t.chunk.is_none() {
        return Ok(None);
    }
    if t.cur.left_in_chunk == 0 && !enter_chunk(src, ctx, t, w)? {
        return Ok(None);
    }
    if let Some(mode) = t.chunk {
        // Uncompressed audio: up to 1024 samples of the chunk at a time.
        let (samples, size) = chunk_group(mode, t.cur.left_in_chunk);
        let dts = t.cur.dts;
        let pos = t.cur.offset;
        advance_stts(src, t, w, samples)?;
        t.cur.left_in_chunk -= samples;
        t.cur.sample = t.cur.sample.saturating_add(samples);
        t.cur.offset = t.cur.offset.saturating_add(size as u64);
        return Ok(Some(Sample {
            pos,
            size,
            dts,
            cts: 0,
            duration: samples,
            key: true,
        }));
    }
    let i = t.cur.sample;
    let size = sample_size(src, t, w, i)?;
    let dts = t.cur.dts;
    let duration = advance_stts(src, t, w, 1)?.min(u32::MAX as u64) as u32;
    let cts = if t.ctts.count > 0 { next_ctts(src, t, w)? } else { 0 };
    let key = if !t.has_stss {
        true
    } else if i.saturating_add(1) == t.cur.next_sync {
        t.cur.stss_i += 1;
        t.cur.next_sync = if t.cur.stss_i < t.stss.count {
            w.stss
                .u32_be(src, t.stss.off + t.cur.stss_i as u64 * 4, t.stss.end(4))?
        } else {
            u32::MAX
        };
        true
    } else {
        false
    };
    let pos = t.cur.offset;
    t.cur.offset = t.cur.offset.saturating_add(size as u64);
    t.cur.left_in_chunk -= 1;
    t.cur.sample += 1;
    Ok(Some(Sample {
        pos,
        size,
        dts,
        cts,
        duration,
        key,
    }))
}

/// Calls `f` with each `N`-byte entry of the table at `off`, from entry
/// `from` up to `count`, reading up to 512 bytes a call instead of one read
/// per entry (a seek's walk over `stts`, `ctts` or `stss` in a long file
/// touches hundreds of thousands of entries). Stops when `f` returns
/// `false`, and returns the index of that entry, or `count`. A table that
/// the input cuts fails at the first entry that is not all there, as reading
/// entry by entry would.
pub(super) fn scan_entries<S: Source, const N: usize>(
    src: &mut S,
    off: u64,
    from: u32,
    count: u32,
    mut f: impl FnMut(u32, [u8; N]) -> bool,
) -> Result<u32> {
    let mut buf = [0u8; 512];
    let per = (buf.len() / N).max(1);
    let mut i = from;
    while i < count {
        let n = ((count - i) as usize).min(per);
        let at = off.saturating_add(u64::from(i).saturating_mul(N as u64));
        let want = buf.get_mut(..n * N).unwrap_or(&mut []);
        let got = src.read_at(at, want)?;
        let whole = got / N;
        for e in want.get(..whole * N).unwrap_or(&[]).chunks_exact(N) {
            let mut a = [0u8; N];
            a.copy_from_slice(e);
            if !f(i, a) {
                return Ok(i);
            }
            i += 1;
        }
        if whole < n {
            return Err(Error::truncated(
                at.saturating_add(got as u64),
                &"mp4 stbl: the input ends inside a sample table (ISO/IEC 14496-12 8.6, 8.7)",
            ));
        }
    }
    Ok(i)
}
#[cfg(test)]
mod tests {
    extern crate std;
    use super::scan_entries;
    use crate::{SliceSource, Source};
    use std::vec;
    use std::vec::Vec;

    #[test]
    fn table_scan_reads_in_blocks_and_stops_where_told() {
        // 200 eight-byte entries (1600 bytes: the 512-byte reads cross
        // entries' boundaries in no case, and the table spans four reads).
        let mut t = vec![0xEEu8; 3];
        for i in 0..200u32 {
            t.extend_from_slice(&i.to_be_bytes());
            t.extend_from_slice(&(i * 2).to_be_bytes());
        }
        let mut src = SliceSource::new(&t);
        let mut seen = Vec::new();
        let stop = scan_entries::<_, 8>(&mut src, 3, 5, 200, |i, e| {
            assert_eq!(u32::from_be_bytes([e[0], e[1], e[2], e[3]]), i);
            seen.push(i);
            i < 150
        })
        .unwrap();
        assert_eq!(stop, 150);
        assert_eq!(seen, (5..=150).collect::<Vec<_>>());
        let all = scan_entries::<_, 8>(&mut src, 3, 0, 200, |_, _| true).unwrap();
        assert_eq!(all, 200);
        assert!(src.stats().reads <= 2 + 4 + 4, "{:?}", src.stats());
        // A table the input cuts: the entries before the cut are visited,
        // then the walk fails as an entry-by-entry read would.
        let cut = &t[..3 + 8 * 70 + 5];
        let mut src = SliceSource::new(cut);
        let mut n = 0;
        let err = scan_entries::<_, 8>(&mut src, 3, 0, 200, |_, _| {
            n += 1;
            true
        })
        .unwrap_err();
        assert!(err.is_truncation());
        assert_eq!(n, 70);
        // ... unless the walk stops before the cut entry.
        let mut src = SliceSource::new(cut);
        assert_eq!(scan_entries::<_, 8>(&mut src, 3, 0, 200, |i, _| i < 69).unwrap(), 69);
    }
}
