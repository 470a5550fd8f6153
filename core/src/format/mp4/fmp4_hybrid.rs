//! Hybrid MP4 ([`crate::MuxFormat::HybridMp4`]): fragmented while it is
//! written, progressive once finished.
//!
//! While recording, the file is exactly what the fragmented muxer writes
//! (`fmp4.rs`): `ftyp`, an init `moov` with `mvex`, then `moof` + `mdat`
//! fragments, each complete on its own, so a recording cut by a power loss
//! reads as its complete fragments (ISO/IEC 14496-12 §8.8).
//!
//! Beside the fragments the muxer keeps the progressive sample index
//! (`muxer_index.rs`, about 4 bytes a sample) in the part of the caller's
//! scratch after the fragment's records. Each fragment's samples enter it
//! when the fragment closes, in the order their bytes lie in the file, and
//! a *gap record* (a pseudo-sample of track [`GAP_TRACK`] whose size is the
//! bytes between two samples: the `free` room, the next `moof` and `mdat`
//! header) keeps the chunk offsets derivable from sizes alone, as in a
//! progressive file. A gap breaks a chunk, so each fragment is at least one
//! chunk per track.
//!
//! **At `finish`**, after the last fragment:
//! 1. a progressive `moov` (no `mvex`, `stbl` tables over the fragments'
//!    payload, `co64` past 4 GiB, the edit lists of the progressive muxer)
//!    is appended after the last fragment; no payload byte is rewritten;
//! 2. the init `moov` is overwritten, in one positioned write, by a `free`
//!    box and a 16-byte `mdat` header (64-bit size, §4.2) that spans every
//!    fragment up to the new `moov`.
//!
//! The finished file is then `ftyp`, `free`, one `mdat` (holding the old
//! `moof` boxes as opaque bytes) and `moov`: a normal MP4 to every reader,
//! one that ignores fragments too. A cut during step 1 leaves the
//! fragmented file with some bytes after its last fragment (readers stop
//! there); only a cut inside the one write of step 2 (a few hundred bytes
//! in one place) can leave the header torn.
//!
//! The layout is the one FFmpeg's `movflags +hybrid_fragmented` writes, so
//! tools that know that one know this one.
//!
//! When the index does not fit its part of the scratch, the muxer stops
//! indexing, says so ([`crate::format::mux_traits::FragmentStats::index_full`])
//! and leaves a plain fragmented MP4, which loses nothing, unless the
//! caller gave a spill store ([`crate::mux::Muxer::with_index_spill`]):
//! then the index keeps at most the caller's bound in the scratch, full
//! blocks go to the store and `finish` reads them back for the same
//! `moov`. A store that fails stops the recording with its error.

use super::fmp4_boxes::Rec;
use super::muxer::{Mp4Muxer, MDAT_HEADER};
use super::muxer_index::{self, Growing, RunState, Sample};
use crate::error::{Error, Result};
use crate::format::mux_traits::MuxContext;
use crate::limits::MAX_TRACKS;
use crate::sink::{Sink, Spill, SpillStore};

/// Track number of gap records: the 16th track slot, so a hybrid file holds
/// at most 15 tracks.
pub(super) const GAP_TRACK: u8 = 15;

/// The hybrid state beside the fragmented muxer's.
#[derive(Debug, Clone, Copy)]
pub(super) struct Hybrid {
    /// Where the index part of the scratch starts.
    pub idx_at: usize,
    /// File offset of the first sample's payload.
    first: Option<u64>,
    /// File offset right after the last indexed sample.
    next: u64,
    /// Per track, the decode time (as written) of its last indexed sample.
    last_dts: [Option<i64>; MAX_TRACKS],
    /// Run state of the gap records.
    gap_run: RunState,
    /// Samples indexed.
    pub samples: u64,
    /// The index did not fit: no progressive `moov` at the end.
    pub full: bool,
    /// Where the init segment's `ftyp` ends.
    pub ftyp_end: u64,
}

impl Hybrid {
    /// Nothing indexed yet.
    pub(super) fn new() -> Self {
        Hybrid {
            idx_at: 0,
            first: None,
            next: 0,
            last_dts: [None; MAX_TRACKS],
            gap_run: RunState::default(),
            samples: 0,
            full: false,
            ftyp_end: 0,
        }
    }

    /// Adds a closed fragment's samples to the index: `recs` in the order
    /// their payload lies in the file from `at` on. Out of index room with
    /// no spill store, it stops indexing (`full`) and the fragments stay;
    /// with one, past `spill.memory` bytes the index goes to the store.
    ///
    /// Errors: the spill store's (a full disk): the recording stops.
    pub(super) fn index_fragment(
        &mut self,
        base: &mut Mp4Muxer,
        index: &mut [u8],
        spill: &mut Spill<'_>,
        recs: impl Iterator<Item = Rec>,
        at: u64,
    ) -> Result<()> {
        if self.full {
            return Ok(());
        }
        match self.append_all(base, index, spill, recs, at) {
            Ok(n) => self.samples = self.samples.saturating_add(n),
            Err(e) if spill.store.is_some() => return Err(e),
            Err(_) => self.full = true,
        }
        Ok(())
    }

    fn append_all(
        &mut self,
        base: &mut Mp4Muxer,
        index: &mut [u8],
        spill: &mut Spill<'_>,
        recs: impl Iterator<Item = Rec>,
        mut at: u64,
    ) -> Result<u64> {
        let mut g = Growing::new(index, &mut base.index_len, &mut base.spilled, spill);
        let mut n = 0;
        for r in recs {
            let first = *self.first.get_or_insert(at);
            if self.next == 0 {
                self.next = first;
            }
            if at != self.next {
                let gap = Sample {
                    track: GAP_TRACK,
                    size: at.saturating_sub(self.next),
                    ..Sample::default()
                };
                muxer_index::append_growing(&mut g, &gap, &mut self.gap_run, at)?;
            }
            let t = usize::from(r.track);
            let last = self
                .last_dts
                .get_mut(t)
                .ok_or(Error::capacity(at, &"hybrid mp4: no such track"))?;
            let delta = match *last {
                Some(l) => u64::try_from(r.dts.saturating_sub(l)).unwrap_or(0),
                None => 0,
            };
            *last = Some(r.dts);
            let s = Sample {
                track: r.track,
                key: r.key,
                size: u64::from(r.size),
                delta,
                cts: i64::from(r.cts),
            };
            let run = &mut base
                .tracks
                .get_mut(t)
                .ok_or(Error::capacity(at, &"hybrid mp4: no such track"))?
                .run;
            muxer_index::append_growing(&mut g, &s, run, at)?;
            at = at.saturating_add(u64::from(r.size));
            self.next = at;
            n += 1;
        }
        Ok(n)
    }

    /// Finishes a hybrid file whose fragments end at the sink's position
    /// and whose init segment spans `init` (`ftyp` start to `moov` end):
    /// appends the progressive `moov`, then turns the init `moov` into
    /// `free` + the `mdat` header. The index is in memory and, spilled,
    /// in the store; `room` is scratch for that header.
    pub(super) fn finish<K: Sink>(
        &self,
        base: &mut Mp4Muxer,
        sink: &mut K,
        (index, store): (&[u8], Option<&dyn SpillStore>),
        room: &mut [u8],
        ctx: &MuxContext,
        init: (u64, u64),
    ) -> Result<()> {
        let end = sink.position();
        base.mdat_at = self.first.unwrap_or(end).saturating_sub(MDAT_HEADER);
        super::muxer_moov::write_moov(base, sink, index, store, ctx, end)?;
        // The init `moov` (ftyp_end..init end) becomes `free` + `mdat`.
        let old = init.1.saturating_sub(self.ftyp_end);
        let mdat_at = init.1.saturating_sub(16);
        let header = room
            .get_mut(..old as usize)
            .filter(|_| old >= 24)
            .ok_or(Error::capacity(
                end,
                &"hybrid mp4: no scratch room to rewrite the init moov",
            ))?;
        header.fill(0);
        let free = u32::try_from(old - 16).unwrap_or(u32::MAX).to_be_bytes();
        put(header, 0, &free);
        put(header, 4, b"free");
        let at = header.len().saturating_sub(16);
        put(header, at, &1u32.to_be_bytes());
        put(header, at + 4, b"mdat");
        put(header, at + 8, &end.saturating_sub(mdat_at).to_be_bytes());
        sink.patch_at(self.ftyp_end, header)
    }
}

/// Copies `src` into `dst` at `at` (within bounds checked by the caller).
fn put(dst: &mut [u8], at: usize, src: &[u8]) {
    if let Some(d) = dst.get_mut(at..at.saturating_add(src.len())) {
        d.copy_from_slice(src);
    }
}
