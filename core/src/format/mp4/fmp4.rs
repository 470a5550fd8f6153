//! The fragmented MP4 / CMAF muxer ([`crate::MuxFormat::Fmp4`], ISO/IEC
//! 14496-12 §8.8, ISO/IEC 23000-19): an init segment (`ftyp` + `moov` with
//! empty sample tables and `mvex`/`trex`), then fragments, each a `moof`
//! (`mfhd`, per track `traf`/`tfhd`/`tfdt`/`trun`) and its `mdat`.
//!
//! Tracks, codecs, bitstream conversions (Annex B → length-prefixed,
//! ADTS → raw) and times are the progressive muxer's
//! (`Mp4Muxer::prepare` in `muxer.rs`); the boxes are in
//! `fmp4_boxes.rs`.
//!
//! **Cutting.** A fragment closes at the first keyframe of the first video
//! track (any packet of the first track when there is no video) at least
//! [`Fragmenting::duration_ms`] after the fragment's first sample of that
//! track, so each fragment of a video file starts with a keyframe.
//!
//! **State.** Fixed: per sample of the open fragment a 24-byte record
//! (size, decode time, composition offset, duration, track, keyframe) in
//! the caller's scratch ([`crate::mux::Muxer::with_scratch`]), at most
//! [`Fragmenting::max_samples`]; a fragment that reaches it is closed
//! early and counted ([`FragmentStats::closed_early`]).
//!
//! **Payload.** On a sink that can patch, the payload goes from the
//! packet's borrow to the sink, never copied: when a fragment opens, room
//! for its `moof` is reserved (a `free` box: the largest `moof` so far
//! plus a quarter and 256 bytes, and for the first fragment room for 400
//! samples a second of fragment duration (at least 512) at 40 bytes, the
//! most one sample can add), then the `mdat` header and the
//! payload follow as they come; at the close the `moof` is built in the
//! scratch and patched in at the end of the reserved room, so it sits
//! right before its `mdat`, and what is left before it stays a `free` box
//! (ISO/IEC 14496-12 §8.1.2). Why this and not the payload first: a
//! `moof` must come before its `mdat` (CMAF §7.3.2.3; a reader that streams
//! needs it first), and the alternative, holding the payload, is a copy.
//! A fragment whose `moof` would outgrow the reserved room is closed early.
//!
//! On a sink that cannot patch (stdout, a recorder's stream) the fragment's
//! payload is held in the scratch until it closes: `moof`, `mdat` header
//! and payload are then appended. A payload that does not fit is
//! `CapacityExceeded`. On a patchable sink, when a codec configuration is
//! still to come from the packets (Annex B parameter sets, ADTS headers),
//! the first packets are held the same way, and the init segment written,
//! only until every configuration is known (as a rule after the first
//! packet of each track); then the held payload goes out behind the
//! fragment's reserved `moof` room and the rest follows unheld
//! (`release_held`).
//!
//! **Times.** Each track's times are its media time scale (the time base
//! denominator). Decode times are written from the first packet's shifted
//! to be non-negative (`tfdt` is unsigned); the shift is the media time of
//! an edit list (`elst`, §8.6.6) with duration 0 (the whole media), so a
//! reader gives the input's times back. A track whose first packets
//! come without decode times (Matroska B-frames) has them back-filled when
//! its first decode time comes, and its shift fixed then
//! (`fmp4_backfill.rs`).
//!
//! **Random access.** On a patchable sink `finish` appends an `mfra`
//! (§8.8.9) whose bounded table is in `fmp4_mfra.rs`.
//!
//! **Power cuts.** Every fragment is complete on its own; a file cut
//! anywhere reads as its complete fragments. On a patchable sink the open
//! fragment is a `free` box and an `mdat` of size 0 ("to the end of the
//! file", §4.2) until it closes.

use super::fmp4_backfill::{closed_while_waiting, fill, plan, Next, Waiting, NEGATIVE_TFDT};
use super::fmp4_boxes::{track_span, write_init, write_moof, Count, Fragment, Rec, RECORD};
use super::fmp4_hybrid::{Hybrid, GAP_TRACK};
use super::fmp4_mfra::{Entry, RandomAccess};
use super::fmp4_sidx::{head, head_room, Sidx, HEAD_MAX};
use super::muxer::{write_payload, Input, Mp4Muxer};
use super::muxer_box::BoxWriter;
use super::muxer_entry::needs_config;
use crate::error::{Error, ErrorKind, Result};
use crate::format::mux_traits::{FormatMuxer, FragmentStats, MuxContext, TrackSpec};
use crate::kind::Fragmenting;
use crate::limits::MAX_TRACKS;
use crate::sink::{Sink, SliceSink, Spill};
use crate::types::{Packet, TrackKind};

/// Samples the first fragment's `moof` room is reserved for, at least
/// (more for fragments over 1.28 s: 400 a second of fragment duration).
const FIRST_HINT: u32 = 512;

/// Bytes of scratch per sample on a patchable sink: its record and its
/// share of the `moof` build room.
const PATCH_BYTES_PER_SAMPLE: usize = RECORD + MOOF_PER_SAMPLE as usize;

/// Most `moof` bytes one sample adds: a 16-byte `trun` entry, and a
/// 24-byte `trun` header when it starts a run.
const MOOF_PER_SAMPLE: u64 = 40;

/// `moof` bytes per track with samples: `traf` header, `tfhd` with its
/// optional fields, `tfdt`.
const MOOF_PER_TRACK: u64 = 8 + 24 + 20;

/// `moof` header and `mfhd`.
const MOOF_FIXED: u64 = 8 + 16;

/// The open fragment.
#[derive(Debug, Clone, Copy, Default)]
struct Open {
    /// Where it starts in the sink.
    start: u64,
    /// Payload held in the scratch (else written to the sink, with `moof`
    /// room reserved).
    buffered: bool,
    /// Bytes reserved for `free` + `moof` (not buffered).
    reserved: u64,
    /// Where the `mdat` header is (not buffered).
    mdat_at: u64,
    /// Records so far.
    samples: usize,
    /// Runs of adjacent samples of one track, and the last sample's track.
    runs: u64,
    last_track: Option<u8>,
    /// Tracks with samples, one bit each; those with a composition
    /// offset, and those with a non-sync sample.
    tracks: u32,
    cts_tracks: u32,
    nonkey_tracks: u32,
    /// Samples per track.
    per_track: [u32; MAX_TRACKS],
    /// Payload bytes.
    payload: u64,
    /// Decode time of the fragment's first sample of the cutting track.
    cut_start: Option<i64>,
}

impl Open {
    /// The most bytes the `moof` takes with one more sample of `track`
    /// (`cts`: with a composition offset; `key`: a sync sample): per
    /// track's sample an 8-byte `trun` entry, 4 more when any of its
    /// samples has a composition offset, 4 more when any is not a sync
    /// sample (per-sample flags); per run a 24-byte `trun` header (with
    /// `first_sample_flags`); per track `MOOF_PER_TRACK`.
    fn moof_bound_with(&self, track: u8, cts: bool, key: bool) -> u64 {
        let bit = 1u32 << (track & 31);
        let tracks = u64::from((self.tracks | bit).count_ones());
        let runs = self.runs + u64::from(self.last_track != Some(track));
        let cts_tracks = self.cts_tracks | if cts { bit } else { 0 };
        let nonkey_tracks = self.nonkey_tracks | if key { 0 } else { bit };
        let entries: u64 = self
            .per_track
            .iter()
            .enumerate()
            .map(|(t, &n)| {
                let b = 1u32 << (t & 31);
                let n = u64::from(n) + u64::from(t == usize::from(track));
                n * (8 + 4 * u64::from(cts_tracks & b != 0) + 4 * u64::from(nonkey_tracks & b != 0))
            })
            .sum();
        MOOF_FIXED + tracks * MOOF_PER_TRACK + runs * 24 + entries
    }
}

/// The fragmented MP4 muxer's state: fixed size, no payload.
#[derive(Debug)]
pub struct Fmp4Muxer {
    base: Mp4Muxer,
    opts: Fragmenting,
    /// Bytes of `styp`/`sidx` written before each `moof` at most
    /// (`fmp4_sidx.rs`).
    head: u64,
    patchable: bool,
    /// Bytes of scratch kept for the init segment, and its length once
    /// built.
    init_cap: usize,
    init_written: bool,
    /// Sink position of the init segment, and each track's `elst`
    /// media_time in it.
    init_at: u64,
    elst_at: [u64; MAX_TRACKS],
    /// Per track: what its decode times are shifted by (fixed at its first
    /// packet).
    shift: [Option<i64>; MAX_TRACKS],
    /// Per track, its first records still without decode times
    /// (`fmp4_backfill.rs`).
    waiting: Waiting,
    /// The track whose keyframes cut fragments, and whether it is video.
    cut_track: usize,
    cut_video: bool,
    /// Tracks declared.
    tracks: usize,
    /// Records capacity, and where the payload / `moof` build room starts.
    rec_cap: usize,
    pay_at: usize,
    open: Option<Open>,
    seq: u32,
    /// Samples the first `moof` room is reserved for.
    hint: u32,
    /// Bytes of the largest `moof` written.
    most_moof: u64,
    /// The last fragment closed early because its `moof` room was full.
    outgrown: bool,
    stats: FragmentStats,
    /// Hybrid MP4 (`fmp4_hybrid.rs`): the progressive index kept beside.
    hybrid: Option<Hybrid>,
    /// The `mfra` entries (fmp4_mfra.rs), written at `finish` on a sink
    /// that can patch.
    ra: RandomAccess,
}

impl Fmp4Muxer {
    /// A muxer cutting as `opts` says.
    pub(crate) fn with_options(opts: Fragmenting) -> Self {
        Fmp4Muxer {
            base: Mp4Muxer {
                rebuilds_times: false,
                ..Mp4Muxer::with_brand(false)
            },
            opts,
            head: head_room(&opts),
            patchable: false,
            init_cap: 0,
            init_written: false,
            init_at: 0,
            elst_at: [0; MAX_TRACKS],
            shift: [None; MAX_TRACKS],
            waiting: Waiting::default(),
            cut_track: 0,
            cut_video: false,
            tracks: 0,
            rec_cap: 0,
            pay_at: 0,
            open: None,
            seq: 0,
            hint: FIRST_HINT,
            most_moof: 0,
            outgrown: false,
            stats: FragmentStats::default(),
            hybrid: None,
            ra: RandomAccess::default(),
        }
    }

    /// A hybrid MP4 muxer ([`crate::MuxFormat::HybridMp4`]) cutting as
    /// `opts` says.
    /// The finished file is not a CMAF track file: no `cmfc` brand.
    pub(crate) fn hybrid(opts: Fragmenting) -> Self {
        Fmp4Muxer {
            hybrid: Some(Hybrid::new()),
            ..Fmp4Muxer::with_options(Fragmenting {
                cmaf: false,
                styp: false,
                sidx: false,
                ..opts
            })
        }
    }

    /// The fragments' part of the scratch and the hybrid index's part.
    fn parts<'s>(&self, scratch: &'s mut [u8]) -> (&'s mut [u8], &'s mut [u8]) {
        let at = self.hybrid.map_or(scratch.len(), |h| h.idx_at).min(scratch.len());
        scratch.split_at_mut(at)
    }

    /// What has been written so far.
    pub(crate) fn stats(&self) -> FragmentStats {
        let mut s = self.stats;
        if let Some(h) = self.hybrid {
            s.index_bytes = self.base.spilled.saturating_add(self.base.index_len as u64);
            s.index_spilled = self.base.spilled;
            s.index_full = h.full;
            s.index_samples = h.samples;
        }
        s
    }

    /// Whether every track's configuration record is known (none is still
    /// to be built from the packets).
    fn configs_known(&self, ctx: &MuxContext) -> bool {
        ctx.tracks.iter().enumerate().all(|(i, t)| {
            let st = self.base.tracks.get(i).copied().unwrap_or_default();
            !needs_config(t.codec) || st.input == Input::AsIs || st.built.is_some()
        })
    }

    /// Builds the init segment at the start of the scratch; its length.
    fn build_init(&mut self, scratch: &mut [u8], ctx: &MuxContext, pos: u64) -> Result<usize> {
        let room = scratch.get_mut(..self.init_cap).unwrap_or(&mut []);
        let mut s = SliceSink::new(room);
        let mut w = BoxWriter::new(&mut s);
        let r = write_init(&self.base, &mut w, ctx, self.opts.cmaf, &self.shift, &mut self.elst_at);
        match r {
            Ok(()) => Ok(s.position() as usize),
            Err(e) if e.kind() == ErrorKind::SinkFull => Err(Error::capacity(
                pos,
                &"fmp4 muxer: the init segment does not fit the scratch (Muxer::with_scratch: the init segment, the sample records, a fragment)",
            )),
            Err(e) => Err(e),
        }
    }

    /// Writes the init segment (with the configurations known now).
    fn write_init_now<K: Sink>(&mut self, sink: &mut K, scratch: &mut [u8], ctx: &MuxContext) -> Result<()> {
        let pos = sink.position();
        for (i, t) in ctx.tracks.iter().enumerate() {
            if needs_config(t.codec) && self.base.config(ctx, i).is_empty() {
                return Err(Error::unsupported(
                    pos,
                    &"fmp4 muxer: no codec configuration for a track by the end of the first fragment (ISO/IEC 14496-15 5.3.3)",
                ));
            }
        }
        let n = self.build_init(scratch, ctx, pos)?;
        self.init_at = pos;
        let built = scratch.get(..n).unwrap_or(&[]);
        sink.write_all(built)?;
        if let Some(h) = self.hybrid.as_mut() {
            // The `ftyp` is the init segment's first box.
            let ftyp = built.get(..4).and_then(|b| <[u8; 4]>::try_from(b).ok());
            h.ftyp_end = pos.saturating_add(u64::from(u32::from_be_bytes(ftyp.unwrap_or_default())));
        }
        self.init_written = true;
        self.stats.init_end = sink.position();
        Ok(())
    }

    /// Opens a fragment at the sink's position.
    fn open_fragment<K: Sink>(&mut self, sink: &mut K, scratch: &[u8]) -> Result<Open> {
        let start = sink.position();
        let mut o = Open {
            start,
            buffered: !self.patchable || !self.init_written,
            ..Open::default()
        };
        if !o.buffered {
            let build = scratch.len().saturating_sub(self.pay_at) as u64;
            let tracks = self.tracks as u64;
            // The first fragment: room for `hint` samples at their most
            // bytes; after it, the largest `moof` so far and a quarter.
            let want = match self.most_moof {
                0 => MOOF_FIXED + tracks * MOOF_PER_TRACK + u64::from(self.hint) * MOOF_PER_SAMPLE + 4,
                // After a fragment closed early for want of room: double.
                most if self.outgrown => most.saturating_mul(2).saturating_add(256),
                most => most.saturating_add(most / 4).saturating_add(256),
            };
            o.reserved = want.saturating_add(self.head).min(build) & !3;
            if o.reserved < 128 {
                return Err(Error::capacity(
                    start,
                    &"fmp4 muxer: the scratch has no room to build a moof",
                ));
            }
            // A `free` box over the room (§8.1.2), zeros inside.
            let mut head = [0u8; 8];
            let size = u32::try_from(o.reserved).unwrap_or(u32::MAX).to_be_bytes();
            for (d, s) in head.iter_mut().zip(size.into_iter().chain(*b"free")) {
                *d = s;
            }
            sink.write_all(&head)?;
            let zeros = [0u8; 256];
            let mut left = o.reserved.saturating_sub(8);
            while left > 0 {
                let n = left.min(zeros.len() as u64);
                sink.write_all(zeros.get(..n as usize).unwrap_or(&[]))?;
                left -= n;
            }
            // `mdat` of size 0, "to the end of the file", until it closes.
            o.mdat_at = sink.position();
            sink.write_all(&[0, 0, 0, 0, b'm', b'd', b'a', b't'])?;
        }
        Ok(o)
    }

    /// On a sink that can patch, a fragment is held only while a codec
    /// configuration is still to come from the packets: once every track's
    /// is known (after the first packet of each such track, as a rule),
    /// the init segment is written, the fragment's `moof` room reserved,
    /// and the payload held so far written after it; the rest of the
    /// fragment goes to the sink as it comes. So the scratch holds the
    /// payload of a few packets, not of a fragment. A fragment that has
    /// outgrown the first `moof` room stays held until it closes.
    fn release_held<K: Sink>(&mut self, sink: &mut K, scratch: &mut [u8], ctx: &MuxContext) -> Result<()> {
        let Some(held) = self.open else { return Ok(()) };
        let fits = u32::try_from(held.samples).is_ok_and(|n| n < self.hint);
        if !held.buffered || !self.patchable || self.init_written || !fits || !self.configs_known(ctx) {
            return Ok(());
        }
        self.write_init_now(sink, scratch, ctx)?;
        let room = self.open_fragment(sink, scratch)?;
        let payload = scratch
            .get(self.pay_at..)
            .and_then(|p| p.get(..usize::try_from(held.payload).ok()?))
            .unwrap_or(&[]);
        sink.write_all(payload)?;
        self.open = Some(Open {
            start: room.start,
            buffered: false,
            reserved: room.reserved,
            mdat_at: room.mdat_at,
            ..held
        });
        Ok(())
    }

    /// Closes the open fragment; `next` is the packet that closes it
    /// (track, decode time as written), when one does.
    fn close_fragment<K: Sink>(
        &mut self,
        sink: &mut K,
        scratch: &mut [u8],
        index: &mut [u8],
        spill: &mut Spill<'_>,
        ctx: &MuxContext,
        next: Option<(u8, i64)>,
    ) -> Result<()> {
        if self.waiting.any() {
            return Err(closed_while_waiting(sink.position()));
        }
        let Some(o) = self.open.take() else { return Ok(()) };
        if o.buffered && !self.init_written {
            self.write_init_now(sink, scratch, ctx)?;
        }
        let rec_at = self.init_cap;
        let (head, tail) = scratch.split_at_mut(self.pay_at.min(scratch.len()));
        let records = head
            .get(rec_at..rec_at.saturating_add(o.samples.saturating_mul(RECORD)))
            .unwrap_or(&[]);
        self.seq = self.seq.saturating_add(1);
        let mut f = Fragment {
            records,
            seq: self.seq,
            next,
            tracks: ctx.tracks.len(),
            pad: false,
            grouped: o.buffered,
        };
        let mdat = u32::try_from(o.payload.saturating_add(8)).map_err(|_| {
            Error::unsupported(
                sink.position(),
                &"fmp4 muxer: a fragment's mdat over 4 GiB (ISO/IEC 14496-12 8.1.1)",
            )
        })?;
        let mut seg = [0u8; HEAD_MAX];
        let moof = if o.buffered {
            let mut c = Count::default();
            write_moof(&mut c, &f)?;
            let h = self.segment_head(&f, ctx, c.0, mdat, &mut seg)?;
            self.stats.last_fragment.0 = sink.position();
            sink.write_all(seg.get(..h).unwrap_or(&[]))?;
            let start = sink.position();
            let mut w = BoxWriter::new(sink);
            let n = write_moof(&mut w, &f)?;
            self.most_moof = self.most_moof.max(u64::from(n));
            w.u32(mdat)?;
            w.put(b"mdat")?;
            w.flush()?;
            let payload = tail.get(..o.payload as usize).unwrap_or(&[]);
            let at = sink.position();
            write_grouped(sink, &f, payload)?;
            if let Some(mut h) = self.hybrid {
                let grouped = (0..f.tracks).flat_map(|t| f.recs().filter(move |r| usize::from(r.track) == t));
                h.index_fragment(&mut self.base, index, spill, grouped, at)?;
                self.hybrid = Some(h);
            }
            start
        } else {
            let mut c = Count::default();
            write_moof(&mut c, &f)?;
            let h = self.segment_head(&f, ctx, c.0, mdat, &mut seg)?;
            let mut gap = o
                .reserved
                .checked_sub(c.0.saturating_add(h as u64))
                .ok_or(Error::capacity(
                    o.start,
                    &"fmp4 muxer: the moof outgrew its reserved room",
                ))?;
            if gap == 4 {
                // 4 bytes cannot be a box: the moof takes them instead
                // (and a `sidx` references the larger moof).
                f.pad = true;
                gap = 0;
                self.segment_head(&f, ctx, c.0.saturating_add(4), mdat, &mut seg)?;
            }
            let mut s = SliceSink::new(tail);
            let mut w = BoxWriter::new(&mut s);
            let n = write_moof(&mut w, &f)?;
            w.flush()?;
            self.most_moof = self.most_moof.max(u64::from(n));
            let bytes = s.written().get(..n as usize).unwrap_or(&[]);
            let at = o.start.saturating_add(gap);
            self.stats.last_fragment.0 = at;
            sink.patch_at(at, seg.get(..h).unwrap_or(&[]))?;
            sink.patch_at(at.saturating_add(h as u64), bytes)?;
            if gap >= 8 {
                let size = u32::try_from(gap).unwrap_or(u32::MAX).to_be_bytes();
                let mut head = [0u8; 8];
                for (d, s) in head.iter_mut().zip(size.into_iter().chain(*b"free")) {
                    *d = s;
                }
                sink.patch_at(o.start, &head)?;
            }
            sink.patch_at(o.mdat_at, &mdat.to_be_bytes())?;
            if let Some(mut h) = self.hybrid {
                h.index_fragment(&mut self.base, index, spill, f.recs(), o.mdat_at.saturating_add(8))?;
                self.hybrid = Some(h);
            }
            self.stats.padding = self.stats.padding.saturating_add(gap);
            at.saturating_add(h as u64)
        };
        self.offer_random_access(&f, o.tracks, moof);
        let samples = u32::try_from(o.samples).unwrap_or(u32::MAX);
        self.stats.fragments = self.stats.fragments.saturating_add(1);
        self.stats.most_samples = self.stats.most_samples.max(samples);
        self.stats.most_payload = self.stats.most_payload.max(o.payload);
        // From the `styp`/`sidx` before the `moof` (set above).
        self.stats.last_fragment.1 = sink.position();
        // A closed fragment reaches the sink's destination (a sink that
        // combines small writes writes them out): a recorder that is
        // killed loses at most the open fragment.
        sink.flush()
    }

    /// The `styp`/`sidx` to write before fragment `f`'s `moof` of `moof`
    /// bytes and its `mdat` of `mdat` bytes, as the options ask, in `out`;
    /// their length.
    fn segment_head(
        &self,
        f: &Fragment<'_>,
        ctx: &MuxContext,
        moof: u64,
        mdat: u32,
        out: &mut [u8; HEAD_MAX],
    ) -> Result<usize> {
        if self.head == 0 {
            return Ok(0);
        }
        let cut = u8::try_from(self.cut_track).unwrap_or(u8::MAX);
        let sidx = track_span(f, cut).map(|(earliest, duration, key)| Sidx {
            track_id: u32::from(cut).saturating_add(1),
            timescale: ctx.tracks.get(self.cut_track).map_or(1, |t| t.time_base.den),
            earliest: u64::try_from(earliest).unwrap_or(0),
            duration,
            starts_with_sap: key,
            all_sync: !self.cut_video,
            referenced: moof.saturating_add(u64::from(mdat)),
        });
        head(&self.opts, sidx, out)
    }

    /// Offers the fragment `f` whose `moof` is at `moof` to the `mfra`
    /// table when its first sample of the cutting track is a sync sample.
    /// `tracks`: the tracks with samples in it, one bit each (a `traf`
    /// each, in track order).
    fn offer_random_access(&mut self, f: &Fragment<'_>, tracks: u32, moof: u64) {
        let cut = self.cut_track;
        let Some(r) = f.recs().find(|r| usize::from(r.track) == cut) else {
            return;
        };
        if !r.key {
            return;
        }
        let below = tracks & ((1u32 << (cut & 31)) - 1);
        self.ra.offer(Entry {
            time: u64::try_from(r.dts.saturating_add(i64::from(r.cts))).unwrap_or(0),
            moof,
            traf: u8::try_from(below.count_ones() + 1).unwrap_or(u8::MAX),
        });
    }

    /// Track `i`'s decode-time shift, fixed (and patched into the init
    /// segment's `elst` when it is out) at its first decode time `dts`.
    fn shift_for<K: Sink>(&mut self, sink: &mut K, i: usize, dts: i64) -> Result<i64> {
        let pos = sink.position();
        let slot = self
            .shift
            .get_mut(i)
            .ok_or(Error::capacity(pos, &"fmp4 muxer: no such track"))?;
        if let Some(s) = *slot {
            return Ok(s);
        }
        let fixed = self.init_written && !self.patchable;
        let s = if fixed { 0 } else { dts.min(0).saturating_neg() };
        *slot = Some(s);
        if self.init_written && s != 0 {
            let at = self.init_at.saturating_add(self.elst_at.get(i).copied().unwrap_or(0));
            sink.patch_at(at, &s.to_be_bytes())?;
        }
        Ok(s)
    }

    /// Back-fills the decode times of track `i`'s waiting records
    /// (`fmp4_backfill.rs`) from `next`, its first packet with one (`None`:
    /// the track ended), and fixes the track's shift and state from them.
    fn end_wait<K: Sink>(
        &mut self,
        sink: &mut K,
        scratch: &mut [u8],
        ctx: &MuxContext,
        i: usize,
        next: Option<&Packet<'_>>,
    ) -> Result<()> {
        let pos = sink.position();
        let n = self.waiting.take(i);
        let Some(mut o) = self.open else { return Ok(()) };
        let num = ctx.tracks.get(i).map_or(1, |t| t.time_base.num);
        let next = next.map(|p| Next::of(p, num));
        let track = u8::try_from(i).unwrap_or(u8::MAX);
        let (at, end) = (
            self.init_cap,
            self.init_cap.saturating_add(o.samples.saturating_mul(RECORD)),
        );
        let records = self.parts(scratch).0.get_mut(at..end).unwrap_or(&mut []);
        let plan = plan(records, track, n, next);
        let shift = self.shift_for(sink, i, plan.first)?;
        let f = fill(records, track, n, plan, shift, pos)?;
        if f.any_cts {
            o.cts_tracks |= 1u32 << (track & 31);
        }
        if i == self.cut_track {
            o.cut_start = Some(plan.first.saturating_add(shift));
        }
        self.open = Some(o);
        if let Some(t) = self.base.tracks.get_mut(i) {
            t.first_dts = Some(plan.first);
            t.last_dts = plan.last;
            t.any_cts |= f.any_cts;
            t.negative_cts |= f.negative;
        }
        Ok(())
    }

    /// Whether a packet of track `i` at decode time `dts` (as written)
    /// with keyframe `key` closes the open fragment by its duration.
    fn cuts(&self, ctx: &MuxContext, i: usize, dts: i64, key: bool) -> bool {
        let Some(start) = self.open.and_then(|o| o.cut_start) else {
            return false;
        };
        if i != self.cut_track || (self.cut_video && !key) {
            return false;
        }
        let den = ctx.tracks.get(i).map_or(1, |t| t.time_base.den);
        let elapsed = i128::from(dts.saturating_sub(start)) * 1000;
        elapsed >= i128::from(self.opts.duration_ms) * i128::from(den)
    }
}

/// Writes a held fragment's payload track by track (the order its
/// grouped `trun`s describe), one write per run of adjacent bytes.
fn write_grouped<K: Sink>(sink: &mut K, f: &Fragment<'_>, payload: &[u8]) -> Result<()> {
    for t in 0..f.tracks.min(MAX_TRACKS) {
        let mut span: Option<(usize, usize)> = None;
        let mut at = 0usize;
        for r in f.recs() {
            let size = r.size as usize;
            if usize::from(r.track) == t {
                span = match span {
                    Some((s, e)) if e == at => Some((s, at + size)),
                    Some((s, e)) => {
                        sink.write_all(payload.get(s..e).unwrap_or(&[]))?;
                        Some((at, at + size))
                    }
                    None => Some((at, at + size)),
                };
            }
            at = at.saturating_add(size);
        }
        if let Some((s, e)) = span {
            sink.write_all(payload.get(s..e).unwrap_or(&[]))?;
        }
    }
    Ok(())
}

impl FormatMuxer for Fmp4Muxer {
    fn new() -> Self {
        Fmp4Muxer::with_options(Fragmenting::DEFAULT)
    }

    fn add_track(&mut self, ctx: &mut MuxContext, spec: &TrackSpec<'_>) -> Result<usize> {
        self.base.add_track(ctx, spec)
    }

    fn write_header<K: Sink>(&mut self, sink: &mut K, scratch: &mut [u8], ctx: &mut MuxContext) -> Result<()> {
        let pos = sink.position();
        self.patchable = sink.can_patch();
        // Room for the init segment: its size now, and what the
        // configurations still to be built may add.
        self.init_cap = scratch.len();
        let now = self.build_init(scratch, ctx, pos)?;
        self.init_cap = now
            .saturating_add(super::muxer::MAX_BUILT_CONFIG)
            .saturating_add(64 * ctx.tracks.len())
            .min(scratch.len());
        let known = self.configs_known(ctx);
        if let Some(h) = self.hybrid.as_mut() {
            if !self.patchable || ctx.tracks.len() > usize::from(GAP_TRACK) {
                return Err(Error::unsupported(
                    pos,
                    &"hybrid mp4: needs a sink that can patch (the init moov becomes the mdat header) and at most 15 tracks",
                ));
            }
            // The fragment's part: its records and moof room (or, while a
            // configuration is still to come, a held fragment) up to half
            // the scratch; the index takes the rest.
            let max = usize::try_from(self.opts.max_samples).unwrap_or(usize::MAX);
            let want = match known {
                true => self.init_cap.saturating_add(max.saturating_mul(PATCH_BYTES_PER_SAMPLE)),
                false => scratch.len(),
            };
            h.idx_at = want.min(scratch.len() / 2);
        }
        let (scratch, _) = self.parts(scratch);
        let rest = scratch.len().saturating_sub(self.init_cap);
        let max = usize::try_from(self.opts.max_samples).unwrap_or(usize::MAX);
        self.rec_cap = if self.patchable {
            max.min(rest / PATCH_BYTES_PER_SAMPLE)
        } else {
            max.min(rest / 2 / RECORD)
        };
        self.pay_at = self.init_cap.saturating_add(self.rec_cap * RECORD);
        if self.rec_cap == 0 {
            return Err(Error::capacity(
                pos,
                &"fmp4 muxer: the scratch is too small (init segment, sample records and a fragment; Muxer::with_scratch)",
            ));
        }
        // Room for the first fragment: up to 200 samples a second (60 fps
        // video and 48 kHz audio with room to spare) for twice the
        // fragment duration (keyframes come late), at least FIRST_HINT.
        let first = u64::from(self.opts.duration_ms).saturating_mul(2 * 200) / 1000;
        let first = u32::try_from(first).unwrap_or(u32::MAX).max(FIRST_HINT);
        self.hint = first.min(u32::try_from(self.rec_cap).unwrap_or(u32::MAX));
        let video = ctx.tracks.iter().position(|t| t.kind == TrackKind::Video);
        self.cut_track = video.unwrap_or(0);
        self.cut_video = video.is_some();
        self.tracks = ctx.tracks.len();
        if self.patchable && self.configs_known(ctx) {
            self.write_init_now(sink, scratch, ctx)?;
        }
        Ok(())
    }

    fn write_packet<K: Sink>(
        &mut self,
        sink: &mut K,
        scratch: &mut [u8],
        ctx: &mut MuxContext,
        packet: &Packet<'_>,
    ) -> Result<()> {
        self.write_packet_spilling(sink, scratch, &mut Spill::none(), ctx, packet)
    }

    fn write_packet_spilling<K: Sink>(
        &mut self,
        sink: &mut K,
        scratch: &mut [u8],
        spill: &mut Spill<'_>,
        ctx: &mut MuxContext,
        packet: &Packet<'_>,
    ) -> Result<()> {
        let pos = sink.position();
        let i = packet.track;
        // A packet with a presentation time but no decode time at a track's
        // start waits for its decode time (fmp4_backfill.rs): until then
        // it is recorded at its presentation time, and the track's state
        // is kept as before its first packet.
        let st = self.base.tracks.get(i).copied().unwrap_or_default();
        let waits = packet.dts.is_none() && packet.pts.is_some() && (st.samples == 0 || self.waiting.count(i) > 0);
        if !waits && self.waiting.count(i) > 0 {
            self.end_wait(sink, scratch, ctx, i, Some(packet))?;
        }
        let p = self.base.prepare(ctx, packet, pos)?;
        let track = u8::try_from(i).unwrap_or(u8::MAX);
        let shift = match waits {
            true => 0,
            false => self.shift_for(sink, i, p.dts)?,
        };
        let dts = p.dts.saturating_add(shift);
        if dts < 0 && !waits {
            return Err(Error::unsupported(pos, &NEGATIVE_TFDT));
        }
        let cts = i32::try_from(p.cts).map_err(|_| {
            Error::unsupported(
                pos,
                &"fmp4 muxer: a composition offset outside i32 (ISO/IEC 14496-12 8.8.8)",
            )
        })?;
        let next = Some((track, dts));
        let (scratch, index) = self.parts(scratch);
        if !self.waiting.any() && !waits && self.cuts(ctx, i, dts, p.key) {
            self.close_fragment(sink, scratch, index, spill, ctx, next)?;
        }
        if let Some(o) = self.open {
            let no_room = !o.buffered && o.moof_bound_with(track, cts != 0, p.key) + 4 + self.head > o.reserved;
            if o.samples >= self.rec_cap || no_room {
                self.outgrown = no_room;
                self.stats.closed_early = self.stats.closed_early.saturating_add(1);
                self.close_fragment(sink, scratch, index, spill, ctx, next)?;
            }
        }
        let mut o = match self.open {
            Some(o) => o,
            None => {
                let o = self.open_fragment(sink, scratch)?;
                self.outgrown = false;
                o
            }
        };
        if o.buffered {
            let room = scratch
                .get_mut(self.pay_at..)
                .and_then(|r| r.get_mut(o.payload as usize..))
                .filter(|r| r.len() as u64 >= p.size)
                .ok_or(Error::capacity(
                    pos,
                    &"fmp4 muxer: the fragment's payload does not fit the scratch (held until the fragment closes on a stream sink, or while a codec configuration is still to come)",
                ))?;
            write_payload(&mut SliceSink::new(room), p.input, p.data)?;
        } else {
            write_payload(sink, p.input, p.data)?;
        }
        let rec = Rec {
            track,
            key: p.key,
            size: u32::try_from(p.size).unwrap_or(u32::MAX),
            dts,
            cts,
            duration: u32::try_from(p.duration).unwrap_or(u32::MAX),
        };
        let at = self.init_cap.saturating_add(o.samples.saturating_mul(RECORD));
        if let Some(dst) = scratch.get_mut(at..at.saturating_add(RECORD)) {
            dst.copy_from_slice(&rec.encode());
        }
        o.runs += u64::from(o.last_track != Some(track));
        o.last_track = Some(track);
        let bit = 1u32 << (track & 31);
        o.tracks |= bit;
        if cts != 0 {
            o.cts_tracks |= bit;
        }
        if !p.key {
            o.nonkey_tracks |= bit;
        }
        if let Some(n) = o.per_track.get_mut(i) {
            *n = n.saturating_add(1);
        }
        o.samples += 1;
        o.payload = o.payload.saturating_add(p.size);
        if i == self.cut_track && o.cut_start.is_none() {
            o.cut_start = Some(dts);
        }
        self.open = Some(o);
        self.base.commit(i, &p, pos)?;
        if waits {
            self.waiting.add(i, pos)?;
            if let Some(t) = self.base.tracks.get_mut(i) {
                t.first_dts = None;
            }
        }
        self.release_held(sink, scratch, ctx)
    }

    fn finish<K: Sink>(&mut self, sink: &mut K, scratch: &mut [u8], ctx: &mut MuxContext) -> Result<()> {
        self.finish_spilling(sink, scratch, &mut Spill::none(), ctx)
    }

    fn finish_spilling<K: Sink>(
        &mut self,
        sink: &mut K,
        scratch: &mut [u8],
        spill: &mut Spill<'_>,
        ctx: &mut MuxContext,
    ) -> Result<()> {
        for i in 0..self.tracks {
            if self.waiting.count(i) > 0 {
                self.end_wait(sink, scratch, ctx, i, None)?;
            }
        }
        let (scratch, index) = self.parts(scratch);
        self.close_fragment(sink, scratch, index, spill, ctx, None)?;
        if !self.init_written {
            self.write_init_now(sink, scratch, ctx)?;
        }
        if self.patchable && self.hybrid.is_none() {
            let id = u32::try_from(self.cut_track).unwrap_or(u32::MAX).saturating_add(1);
            self.ra.write(sink, id)?;
        }
        match self.hybrid {
            Some(h) if !h.full => {
                let init = (self.init_at, self.stats.init_end);
                h.finish(
                    &mut self.base,
                    sink,
                    (index, spill.store.as_deref()),
                    scratch,
                    ctx,
                    init,
                )
            }
            _ => Ok(()),
        }
    }
}
