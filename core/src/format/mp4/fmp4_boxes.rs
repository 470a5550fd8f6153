//! The fragmented MP4 muxer's boxes: the init segment (`ftyp` + `moov`
//! with empty sample tables and `mvex`, ISO/IEC 14496-12 §8.8.1) and a
//! fragment's `moof` (§8.8.4) written from the sample records the muxer
//! keeps in the caller's scratch.
//!
//! The `moov` boxes are the progressive muxer's (`muxer_moov.rs`, and
//! `muxer_entry.rs` for `stsd`): one implementation of each.
//!
//! A `moof` is written front to back with no patching, its box sizes
//! computed first by a counting pass over the same code (`Count`), so the
//! same writer serves a stream sink (written in place) and a patchable one
//! (built in scratch, then patched into the space reserved for it).

use super::boxes::{tfhd_flags, trun_flags};
use super::muxer::Mp4Muxer;
use super::muxer_box::BoxWriter;
use super::muxer_entry::write_stsd;
use super::muxer_moov::{write_dinf, write_hdlr, write_mdhd, write_media_header, write_mvhd, write_tkhd};
use crate::error::{Error, Result};
use crate::format::mux_traits::MuxContext;
use crate::limits::MAX_TRACKS;
use crate::sink::Sink;

/// Bytes of one sample record in the scratch: decode time (8), size (4),
/// composition offset (4), duration (4), track (1), keyframe (1), 2 spare.
pub(super) const RECORD: usize = 24;

/// Sample flags of a sync sample (§8.8.3.1): depends on no other.
pub(super) const FLAGS_SYNC: u32 = 0x0200_0000;
/// Sample flags of a non-sync sample: depends on others, `is_non_sync`.
pub(super) const FLAGS_NON_SYNC: u32 = 0x0101_0000;

/// One sample of the open fragment.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(super) struct Rec {
    pub track: u8,
    pub key: bool,
    pub size: u32,
    /// Decode time as written (media time scale, shifted to be >= 0).
    pub dts: i64,
    /// Presentation minus decode time.
    pub cts: i32,
    /// The packet's duration (the fallback for a track's last sample in
    /// the fragment).
    pub duration: u32,
}

impl Rec {
    pub(super) fn encode(&self) -> [u8; RECORD] {
        let mut out = [0u8; RECORD];
        let parts = self
            .dts
            .to_be_bytes()
            .into_iter()
            .chain(self.size.to_be_bytes())
            .chain(self.cts.to_be_bytes())
            .chain(self.duration.to_be_bytes())
            .chain([self.track, u8::from(self.key)]);
        for (d, s) in out.iter_mut().zip(parts) {
            *d = s;
        }
        out
    }

    pub(super) fn decode(b: &[u8]) -> Rec {
        let mut a = [0u8; RECORD];
        for (d, s) in a.iter_mut().zip(b) {
            *d = *s;
        }
        let [d0, d1, d2, d3, d4, d5, d6, d7, s0, s1, s2, s3, c0, c1, c2, c3, u0, u1, u2, u3, track, key, _, _] = a;
        Rec {
            dts: i64::from_be_bytes([d0, d1, d2, d3, d4, d5, d6, d7]),
            size: u32::from_be_bytes([s0, s1, s2, s3]),
            cts: i32::from_be_bytes([c0, c1, c2, c3]),
            duration: u32::from_be_bytes([u0, u1, u2, u3]),
            track,
            key: key != 0,
        }
    }
}

/// Writes the init segment: `ftyp` (`iso6`, `cmfc` for CMAF, ISO/IEC
/// 23000-19 §7.2) and `moov` with, per track, an edit list whose media
/// time is patched at the track's first packet (its position relative to
/// the writer's start goes to `elst_at`; its value so far is `shift`), empty sample tables (§8.8.1)
/// and a `trex` in `mvex` (§8.8.3).
pub(super) fn write_init<K: Sink>(
    m: &Mp4Muxer,
    w: &mut BoxWriter<'_, K>,
    ctx: &MuxContext,
    cmaf: bool,
    shift: &[Option<i64>; MAX_TRACKS],
    elst_at: &mut [u64; MAX_TRACKS],
) -> Result<()> {
    w.open(b"ftyp")?;
    w.put(b"iso6")?;
    w.u32(0)?;
    w.put(b"iso6")?;
    if cmaf {
        w.put(b"cmfc")?;
    }
    w.put(b"mp41")?;
    w.close()?;
    w.open(b"moov")?;
    // Durations are 0: the fragments that follow hold the samples.
    write_mvhd(w, 1000, 0, ctx.tracks.len())?;
    for i in 0..ctx.tracks.len() {
        let t = &m.sized_track(ctx, i);
        let id = u32::try_from(i).unwrap_or(0).saturating_add(1);
        w.open(b"trak")?;
        write_tkhd(w, t, id, 0)?;
        // edts/elst version 1 (§8.6.6): one edit over the whole media
        // (segment_duration 0 in a fragmented file), its media_time (the
        // shift that makes decode times non-negative) patched later.
        w.open(b"edts")?;
        w.open_full(b"elst", 1, 0)?;
        w.u32(1)?;
        w.u64(0)?;
        if let Some(at) = elst_at.get_mut(i) {
            *at = w.position();
        }
        w.u64(shift.get(i).copied().flatten().unwrap_or(0) as u64)?;
        w.u32(0x0001_0000)?;
        w.close()?;
        w.close()?;
        w.open(b"mdia")?;
        write_mdhd(w, t, t.time_base.den, 0)?;
        write_hdlr(w, t, false)?;
        w.open(b"minf")?;
        write_media_header(w, t)?;
        write_dinf(w)?;
        w.open(b"stbl")?;
        write_stsd(w, t, id, m.config(ctx, i))?;
        for kind in [b"stts", b"stsc", b"stco"] {
            w.open_full(kind, 0, 0)?;
            w.u32(0)?;
            w.close()?;
        }
        w.open_full(b"stsz", 0, 0)?;
        w.u64(0)?;
        w.close()?;
        w.close()?; // stbl
        w.close()?; // minf
        w.close()?; // mdia
        w.close()?; // trak
    }
    w.open(b"mvex")?;
    for i in 0..ctx.tracks.len() {
        // trex (§8.8.3): description 1, no other defaults (each trun says).
        w.open_full(b"trex", 0, 0)?;
        w.u32(u32::try_from(i).unwrap_or(0).saturating_add(1))?;
        w.u32(1)?;
        w.u32(0)?;
        w.u32(0)?;
        w.u32(0)?;
        w.close()?;
    }
    w.close()?; // mvex
    w.close()?; // moov
    w.flush()
}

/// Where `moof` bytes go: a writer, or a count of them.
pub(super) trait Out {
    fn put(&mut self, b: &[u8]) -> Result<()>;
    fn u32(&mut self, v: u32) -> Result<()> {
        self.put(&v.to_be_bytes())
    }
}

/// Counts bytes: the sizing pass.
#[derive(Debug, Default)]
pub(super) struct Count(pub u64);

impl Out for Count {
    fn put(&mut self, b: &[u8]) -> Result<()> {
        self.0 = self.0.saturating_add(b.len() as u64);
        Ok(())
    }
}

impl<K: Sink> Out for BoxWriter<'_, K> {
    fn put(&mut self, b: &[u8]) -> Result<()> {
        BoxWriter::put(self, b)
    }
}

/// A closed fragment, as `write_moof` needs it.
#[derive(Debug, Clone, Copy)]
pub(super) struct Fragment<'a> {
    /// The sample records, in `mdat` order.
    pub records: &'a [u8],
    /// `mfhd` sequence number (§8.8.5), from 1.
    pub seq: u32,
    /// The packet that closed the fragment (track, decode time as
    /// written): the exact end of that track's last sample.
    pub next: Option<(u8, i64)>,
    /// Tracks, for the traf loop.
    pub tracks: usize,
    /// Adds `default_sample_duration` to the first `tfhd`: 4 bytes that
    /// make the `moof` fill its reserved space exactly.
    pub pad: bool,
    /// The payload is written track by track (each track's samples
    /// together, in track order: one `trun` per `traf`), not in arrival
    /// order. For a fragment held in the scratch, whose payload is written
    /// at the close anyway.
    pub grouped: bool,
}

impl Fragment<'_> {
    /// Records, decoded.
    pub(super) fn recs(&self) -> impl Iterator<Item = Rec> + '_ {
        self.records.chunks_exact(RECORD).map(Rec::decode)
    }

    /// Where track `track`'s payload starts in the `mdat` payload when
    /// grouped (else 0: offsets are the samples' own).
    fn track_base(&self, track: u8) -> u64 {
        if !self.grouped {
            return 0;
        }
        self.recs()
            .filter(|r| r.track < track)
            .fold(0u64, |n, r| n.saturating_add(u64::from(r.size)))
    }
}

/// A sample of one track in the fragment: record index, offset of its
/// payload from the start of the `mdat` payload, the record, and its
/// duration.
type Item = (usize, u64, Rec, i64);

/// The samples of one track in a fragment, with their durations (the next
/// sample's decode time minus theirs).
#[derive(Clone)]
struct TrackSamples<'a> {
    records: core::iter::Enumerate<core::slice::ChunksExact<'a, u8>>,
    offset: u64,
    track: u8,
    next: Option<(u8, i64)>,
    cur: Option<(usize, u64, Rec)>,
    started: bool,
    /// Grouped payload: offsets and indices count this track's samples
    /// only.
    grouped: bool,
    seen: usize,
}

impl<'a> TrackSamples<'a> {
    fn new(f: &Fragment<'a>, track: u8) -> Self {
        TrackSamples {
            records: f.records.chunks_exact(RECORD).enumerate(),
            offset: 0,
            track,
            next: f.next,
            cur: None,
            started: false,
            grouped: f.grouped,
            seen: 0,
        }
    }

    fn find(&mut self) -> Option<(usize, u64, Rec)> {
        for (i, b) in self.records.by_ref() {
            let r = Rec::decode(b);
            let at = self.offset;
            let mine = r.track == self.track;
            if mine || !self.grouped {
                self.offset = self.offset.saturating_add(u64::from(r.size));
            }
            if mine {
                let i = if self.grouped { self.seen } else { i };
                self.seen += 1;
                return Some((i, at, r));
            }
        }
        None
    }
}

impl Iterator for TrackSamples<'_> {
    type Item = Item;

    fn next(&mut self) -> Option<Item> {
        if !self.started {
            self.started = true;
            self.cur = self.find();
        }
        let (i, at, r) = self.cur.take()?;
        self.cur = self.find();
        let duration = match (self.cur, self.next) {
            (Some((_, _, n)), _) => n.dts.saturating_sub(r.dts),
            (None, Some((t, d))) if t == self.track => d.saturating_sub(r.dts),
            _ => i64::from(r.duration),
        };
        Some((i, at, r, duration))
    }
}

/// What a segment index (`sidx`, `fmp4_sidx.rs`) says of track `track` in
/// fragment `f`: its earliest presentation time (decode time plus
/// composition offset, as written), the sum of its samples' durations, and
/// whether its first sample is a sync sample; `None` when the track has no
/// sample in the fragment.
pub(super) fn track_span(f: &Fragment<'_>, track: u8) -> Option<(i64, u64, bool)> {
    let mut span: Option<(i64, u64, bool)> = None;
    for (_, _, r, d) in TrackSamples::new(f, track) {
        let pts = r.dts.saturating_add(i64::from(r.cts));
        let d = u64::try_from(d).unwrap_or(0);
        span = Some(match span {
            None => (pts, d, r.key),
            Some((e, total, key)) => (e.min(pts), total.saturating_add(d), key),
        });
    }
    span
}

/// What a track's `traf` says for all its `trun`s.
#[derive(Debug, Clone, Copy)]
struct TrafKind {
    /// `default_sample_flags` is the sync value (every sample is one).
    all_key: bool,
    /// Composition offsets present; version 1 (signed) when one is < 0.
    cts: bool,
    negative: bool,
}

fn traf_kind(f: &Fragment<'_>, track: u8) -> Option<TrafKind> {
    let mut k: Option<TrafKind> = None;
    for (_, _, r, _) in TrackSamples::new(f, track) {
        let t = k.get_or_insert(TrafKind {
            all_key: true,
            cts: false,
            negative: false,
        });
        t.all_key &= r.key;
        t.cts |= r.cts != 0;
        t.negative |= r.cts < 0;
    }
    k
}

/// Writes the `moof` of fragment `f` (§8.8.4): `mfhd`, then a `traf` per
/// track with samples, each with `tfhd` (default-base-is-moof, §8.8.7),
/// `tfdt` (version 1, §8.8.12) and one `trun` (§8.8.8) per run of the
/// track's samples that lie together in `mdat`. Returns its size.
pub(super) fn write_moof<O: Out>(o: &mut O, f: &Fragment<'_>) -> Result<u32> {
    let mut c = Count::default();
    moof_body(&mut c, f, 0)?;
    let size = u32::try_from(c.0.saturating_add(8))
        .map_err(|_| Error::unsupported(0, &"fmp4 muxer: a moof over 4 GiB (ISO/IEC 14496-12 8.8.4)"))?;
    o.u32(size)?;
    o.put(b"moof")?;
    // Data offsets count from the moof's start (default-base-is-moof):
    // past it and the 8-byte mdat header.
    moof_body(o, f, u64::from(size).saturating_add(8))?;
    Ok(size)
}

fn moof_body<O: Out>(o: &mut O, f: &Fragment<'_>, base: u64) -> Result<()> {
    o.u32(16)?;
    o.put(b"mfhd")?;
    o.u32(0)?;
    o.u32(f.seq)?;
    let mut pad = f.pad;
    for t in 0..f.tracks.min(MAX_TRACKS) {
        let track = u8::try_from(t).unwrap_or(u8::MAX);
        let Some(kind) = traf_kind(f, track) else { continue };
        let mut c = Count::default();
        traf_body(&mut c, f, track, kind, base, pad)?;
        o.u32(u32::try_from(c.0.saturating_add(8)).unwrap_or(u32::MAX))?;
        o.put(b"traf")?;
        traf_body(o, f, track, kind, base, pad)?;
        pad = false;
    }
    Ok(())
}

fn traf_body<O: Out>(o: &mut O, f: &Fragment<'_>, track: u8, kind: TrafKind, base: u64, pad: bool) -> Result<()> {
    // tfhd (§8.8.7)
    let mut flags = tfhd_flags::DEFAULT_BASE_IS_MOOF | tfhd_flags::DEFAULT_FLAGS;
    if pad {
        flags |= tfhd_flags::DEFAULT_DURATION;
    }
    o.u32(if pad { 24 } else { 20 })?;
    o.put(b"tfhd")?;
    o.u32(flags)?;
    o.u32(u32::from(track).saturating_add(1))?;
    if pad {
        o.u32(0)?;
    }
    let default_flags = if kind.all_key { FLAGS_SYNC } else { FLAGS_NON_SYNC };
    o.u32(default_flags)?;
    // tfdt (§8.8.12), version 1: the first sample's decode time.
    let first = TrackSamples::new(f, track).next().map_or(0, |s| s.2.dts);
    o.u32(20)?;
    o.put(b"tfdt")?;
    o.u32(1 << 24)?;
    o.put(&u64::try_from(first).unwrap_or(0).to_be_bytes())?;
    // One trun per run of adjacent samples.
    let mut samples = TrackSamples::new(f, track).peekable();
    while let Some(&(i0, at0, r0, _)) = samples.peek() {
        let run_start = samples.clone();
        let (mut count, mut last, mut rest_differs) = (0u32, i0, false);
        while let Some(&(i, _, r, _)) = samples.peek() {
            if count > 0 && i != last.saturating_add(1) {
                break;
            }
            rest_differs |= count > 0 && r.key != kind.all_key;
            last = i;
            count = count.saturating_add(1);
            samples.next();
        }
        // Every sample but the first as the default: first_sample_flags
        // (or nothing); otherwise flags per sample.
        let first_differs = r0.key != kind.all_key;
        let per_sample = rest_differs;
        let mut tf = trun_flags::DATA_OFFSET | trun_flags::DURATION | trun_flags::SIZE;
        if per_sample {
            tf |= trun_flags::FLAGS;
        } else if first_differs {
            tf |= trun_flags::FIRST_FLAGS;
        }
        if kind.cts {
            tf |= trun_flags::CTS;
        }
        let entry = 8 + 4 * u32::from(per_sample) + 4 * u32::from(kind.cts);
        let size = 20u32
            .saturating_add(4 * u32::from(!per_sample && first_differs))
            .saturating_add(entry.saturating_mul(count));
        o.u32(size)?;
        o.put(b"trun")?;
        o.u32(u32::from(kind.negative) << 24 | tf)?;
        o.u32(count)?;
        let off = i32::try_from(base.saturating_add(f.track_base(track)).saturating_add(at0)).map_err(|_| {
            Error::unsupported(
                0,
                &"fmp4 muxer: a fragment's data offset past 2 GiB (ISO/IEC 14496-12 8.8.8)",
            )
        })?;
        o.put(&off.to_be_bytes())?;
        if !per_sample && first_differs {
            o.u32(if r0.key { FLAGS_SYNC } else { FLAGS_NON_SYNC })?;
        }
        for (_, _, r, d) in run_start.take(count as usize) {
            let d = u32::try_from(d).map_err(|_| {
                Error::unsupported(
                    0,
                    &"fmp4 muxer: a sample duration outside 0..2^32 ticks (ISO/IEC 14496-12 8.8.8)",
                )
            })?;
            o.u32(d)?;
            o.u32(r.size)?;
            if per_sample {
                o.u32(if r.key { FLAGS_SYNC } else { FLAGS_NON_SYNC })?;
            }
            if kind.cts {
                o.put(&r.cts.to_be_bytes())?;
            }
        }
    }
    Ok(())
}
