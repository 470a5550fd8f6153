//! The MP4 muxer's `moov` (ISO/IEC 14496-12 §8.2.1): `mvhd`, then per
//! track `trak`/`tkhd`/`edts`/`mdia`/`mdhd`/`hdlr`/`minf`/`stbl`, the
//! sample tables derived from the compact index (`muxer_index.rs`).

use super::boxes::{MdhdV0, MdhdV1, MvhdV0, MvhdV1};
use super::muxer::{Mp4Muxer, TrackState, MDAT_HEADER};
use super::muxer_box::BoxWriter;
use super::muxer_entry::write_stsd;
use super::muxer_records::{Index, Records};
use super::muxer_times::{samples, settle, Times};
use crate::error::{Error, Result};
use crate::format::mux_traits::MuxContext;
use crate::sink::{Sink, SpillStore};
use crate::types::{rescale_q, Rational, Track, TrackKind};
use core::cell::Cell;
use zerocopy::big_endian::{U16, U32, U64};
use zerocopy::IntoBytes;

/// The unity matrix of `mvhd` and `tkhd` (§8.2.2.3).
const MATRIX: [u32; 9] = [0x0001_0000, 0, 0, 0, 0x0001_0000, 0, 0, 0, 0x4000_0000];

/// A track's times, in its media time scale.
#[derive(Debug, Clone, Copy, Default)]
struct Timing {
    /// Media time scale (`mdhd`).
    scale: u32,
    /// Sum of the sample durations (`mdhd` duration).
    media: u64,
    /// Empty edit before the media (a start after 0), media time scale.
    empty: u64,
    /// Media time the presentation starts at (`elst` media_time).
    media_time: i64,
    /// Presented length from `media_time`.
    shown: u64,
    /// Whether an edit list is needed.
    edit: bool,
}

fn timing(t: &Track, st: &TrackState) -> Timing {
    let first = st.first_dts.unwrap_or(0);
    let media = u64::try_from(st.last_dts.saturating_sub(first))
        .unwrap_or(0)
        .saturating_add(st.last_duration);
    let min_pts = if st.samples == 0 { 0 } else { st.min_pts };
    let start = min_pts.max(0);
    let media_time = start.saturating_sub(first).max(0);
    // Up to the latest sample end, and at least to the end of the media.
    let media_end = first.saturating_add(i64::try_from(media).unwrap_or(i64::MAX));
    let shown = u64::try_from(st.max_end.max(media_end).saturating_sub(start)).unwrap_or(0);
    Timing {
        scale: t.time_base.den,
        media,
        empty: u64::try_from(start).unwrap_or(0),
        media_time,
        shown,
        edit: st.samples > 0 && (first != 0 || min_pts != 0),
    }
}

/// `tm` of track `t`, with the media length in frames when it is
/// uncompressed audio in MOV (one `stts` tick a frame: `muxer_pcm.rs`),
/// whatever gaps its packets' times had.
fn pcm_timing(m: &Mp4Muxer, index: Index<'_>, tr: u8, t: &Track, mut tm: Timing) -> Timing {
    let frame = super::muxer_pcm::frame_bytes(t);
    if m.qt && frame > 0 {
        tm.media = super::muxer_pcm::frames(index, tr, frame);
    }
    tm
}

/// `v` in the media time scale `scale`, in the movie's `movie`.
fn to_movie(v: u64, scale: u32, movie: u32) -> u64 {
    let v = i64::try_from(v).unwrap_or(i64::MAX);
    u64::try_from(rescale_q(v, Rational::new(1, scale), Rational::new(1, movie))).unwrap_or(0)
}

/// The movie time scale (`mvhd`, `tkhd` and `elst` durations): the least
/// common multiple of the media time scales when it fits 32 bits, so that
/// an empty edit is exact in every track; 1000 (ffmpeg's) otherwise.
fn movie_scale(mut scales: impl Iterator<Item = u32>) -> u32 {
    let gcd = |mut a: u64, mut b: u64| {
        while b != 0 {
            (a, b) = (b, a % b);
        }
        a.max(1)
    };
    let lcm = scales.try_fold(1u64, |acc, s| {
        let s = u64::from(s.max(1));
        (acc / gcd(acc, s)).checked_mul(s).filter(|&l| l <= u64::from(u32::MAX))
    });
    lcm.and_then(|l| u32::try_from(l).ok()).unwrap_or(1000)
}

/// Writes `moov` after the media that ended at `end`.
///
/// The index is read from `scratch` and, for its spilled part, from
/// `store`; a read error of the store is returned once the walk is done
/// (the `moov` then written is incomplete: the caller's file is not
/// finished).
pub fn write_moov<K: Sink>(
    m: &Mp4Muxer,
    sink: &mut K,
    scratch: &[u8],
    store: Option<&dyn SpillStore>,
    ctx: &MuxContext,
    end: u64,
) -> Result<()> {
    let failed = Cell::new(None);
    let index = m.index_view(scratch, store, &failed);
    let movie = movie_scale(ctx.tracks.iter().map(|t| t.time_base.den));
    let mut movie_duration = 0u64;
    for (i, t) in ctx.tracks.iter().enumerate() {
        let tr = u8::try_from(i).unwrap_or(u8::MAX);
        let tm = pcm_timing(
            m,
            index,
            tr,
            t,
            timing(t, &settle(index, tr, m.tracks.get(i).copied().unwrap_or_default())),
        );
        let d = to_movie(tm.empty, tm.scale, movie).saturating_add(to_movie(tm.shown, tm.scale, movie));
        movie_duration = movie_duration.max(if tm.edit {
            d
        } else {
            to_movie(tm.media, tm.scale, movie)
        });
    }
    let mut w = BoxWriter::new(sink);
    w.open(b"moov")?;
    write_mvhd(&mut w, movie, movie_duration, ctx.tracks.len())?;
    let data_start = m.mdat_at.saturating_add(MDAT_HEADER);
    let wide = end > u64::from(u32::MAX);
    for i in 0..ctx.tracks.len() {
        let t = &m.sized_track(ctx, i);
        let tr = u8::try_from(i).unwrap_or(u8::MAX);
        let st = settle(index, tr, m.tracks.get(i).copied().unwrap_or_default());
        let tm = pcm_timing(m, index, tr, t, timing(t, &st));
        let id = u32::try_from(i).unwrap_or(0).saturating_add(1);
        w.open(b"trak")?;
        let shown = if tm.edit {
            to_movie(tm.empty, tm.scale, movie).saturating_add(to_movie(tm.shown, tm.scale, movie))
        } else {
            to_movie(tm.media, tm.scale, movie)
        };
        write_tkhd(&mut w, t, id, shown)?;
        if tm.edit {
            write_edts(&mut w, &tm, movie)?;
        }
        w.open(b"mdia")?;
        write_mdhd(&mut w, t, tm.scale, tm.media)?;
        write_hdlr(&mut w, t, m.qt)?;
        w.open(b"minf")?;
        write_media_header(&mut w, t)?;
        write_dinf(&mut w)?;
        w.open(b"stbl")?;
        write_stsd(&mut w, t, id, m.config(ctx, i))?;
        let pcm_frame = Some(super::muxer_pcm::frame_bytes(t)).filter(|&f| m.qt && f > 0);
        write_tables(&mut w, index, tr, &st, data_start, wide, pcm_frame)?;
        w.close()?; // stbl
        w.close()?; // minf
        w.close()?; // mdia
        w.close()?; // trak
    }
    if let Some(e) = failed.take() {
        return Err(e);
    }
    super::muxer_tags::write_udta(&mut w, ctx, m.qt)?;
    w.close()?;
    w.flush()
}

pub(super) fn put_matrix<K: Sink>(w: &mut BoxWriter<'_, K>) -> Result<()> {
    MATRIX.iter().try_for_each(|&v| w.u32(v))
}

/// `mvhd` (§8.2.2): version 1 when the duration passes 32 bits.
pub(super) fn write_mvhd<K: Sink>(w: &mut BoxWriter<'_, K>, scale: u32, duration: u64, tracks: usize) -> Result<()> {
    w.open(b"mvhd")?;
    match u32::try_from(duration) {
        Ok(d) => w.put(
            MvhdV0 {
                version_flags: U32::new(0),
                creation: U32::new(0),
                modification: U32::new(0),
                timescale: U32::new(scale),
                duration: U32::new(d),
            }
            .as_bytes(),
        )?,
        Err(_) => w.put(
            MvhdV1 {
                version_flags: U32::new(1 << 24),
                creation: U64::new(0),
                modification: U64::new(0),
                timescale: U32::new(scale),
                duration: U64::new(duration),
            }
            .as_bytes(),
        )?,
    }
    w.u32(0x0001_0000)?; // rate 1.0
    w.u16(0x0100)?; // volume 1.0
    w.put(&[0; 10])?;
    put_matrix(w)?;
    w.put(&[0; 24])?;
    w.u32(u32::try_from(tracks).unwrap_or(0).saturating_add(1))?; // next_track_ID
    w.close()
}

/// `tkhd` (§8.3.2), flags enabled and in movie.
pub(super) fn write_tkhd<K: Sink>(w: &mut BoxWriter<'_, K>, t: &Track, id: u32, duration: u64) -> Result<()> {
    let v1 = duration > u64::from(u32::MAX);
    w.open_full(b"tkhd", u8::from(v1), 3)?;
    if v1 {
        w.u64(0)?;
        w.u64(0)?;
        w.u32(id)?;
        w.u32(0)?;
        w.u64(duration)?;
    } else {
        w.u32(0)?;
        w.u32(0)?;
        w.u32(id)?;
        w.u32(0)?;
        w.u32(u32::try_from(duration).unwrap_or(u32::MAX))?;
    }
    w.put(&[0; 8])?;
    w.u16(0)?; // layer
    w.u16(0)?; // alternate_group
    w.u16(if t.kind == TrackKind::Audio { 0x0100 } else { 0 })?;
    w.u16(0)?;
    put_matrix(w)?;
    let video = t.kind == TrackKind::Video;
    w.u32(if video { t.width.min(0xFFFF) << 16 } else { 0 })?;
    w.u32(if video { t.height.min(0xFFFF) << 16 } else { 0 })?;
    w.close()
}

/// `edts`/`elst` (§8.6.5, §8.6.6): an empty edit for a late start, then
/// the media from `media_time`, as ffmpeg writes them.
fn write_edts<K: Sink>(w: &mut BoxWriter<'_, K>, tm: &Timing, movie: u32) -> Result<()> {
    let empty = to_movie(tm.empty, tm.scale, movie);
    let shown = to_movie(tm.shown, tm.scale, movie);
    let v1 = shown > u64::from(u32::MAX) || empty > u64::from(u32::MAX) || tm.media_time > i64::from(i32::MAX);
    w.open(b"edts")?;
    w.open_full(b"elst", u8::from(v1), 0)?;
    w.u32(if empty > 0 { 2 } else { 1 })?;
    let entry = |w: &mut BoxWriter<'_, K>, d: u64, t: i64| -> Result<()> {
        if v1 {
            w.u64(d)?;
            w.u64(t as u64)?;
        } else {
            w.u32(d as u32)?;
            w.u32(t as i32 as u32)?;
        }
        w.u32(0x0001_0000) // media_rate 1.0
    };
    if empty > 0 {
        entry(w, empty, -1)?;
    }
    entry(w, shown, tm.media_time)?;
    w.close()?;
    w.close()
}

/// ISO 639-2/T code packed in 15 bits (§8.4.2.3); `und` when unknown.
fn packed_language(t: &Track) -> u16 {
    let b = t.language.as_bytes();
    let code = if b.len() == 3 && b.iter().all(u8::is_ascii_lowercase) {
        b
    } else {
        b"und"
    };
    code.iter().fold(0u16, |v, &c| v << 5 | u16::from(c - 0x60))
}

/// `mdhd` (§8.4.2).
pub(super) fn write_mdhd<K: Sink>(w: &mut BoxWriter<'_, K>, t: &Track, scale: u32, duration: u64) -> Result<()> {
    w.open(b"mdhd")?;
    let language = U16::new(packed_language(t));
    match u32::try_from(duration) {
        Ok(d) => w.put(
            MdhdV0 {
                version_flags: U32::new(0),
                creation: U32::new(0),
                modification: U32::new(0),
                timescale: U32::new(scale),
                duration: U32::new(d),
                language,
            }
            .as_bytes(),
        )?,
        Err(_) => w.put(
            MdhdV1 {
                version_flags: U32::new(1 << 24),
                creation: U64::new(0),
                modification: U64::new(0),
                timescale: U32::new(scale),
                duration: U64::new(duration),
                language,
            }
            .as_bytes(),
        )?,
    }
    w.u16(0)?; // pre_defined
    w.close()
}

/// `hdlr` (§8.4.3); QuickTime's has the component type `mhlr` and a
/// Pascal string name.
pub(super) fn write_hdlr<K: Sink>(w: &mut BoxWriter<'_, K>, t: &Track, qt: bool) -> Result<()> {
    let (handler, name): (&[u8; 4], &[u8]) = match t.kind {
        TrackKind::Video => (b"vide", b"VideoHandler"),
        _ => (b"soun", b"SoundHandler"),
    };
    w.open_full(b"hdlr", 0, 0)?;
    w.put(if qt { b"mhlr" } else { &[0; 4] })?;
    w.put(handler)?;
    w.put(&[0; 12])?;
    if qt {
        w.put(&[name.len() as u8])?;
        w.put(name)?;
    } else {
        w.put(name)?;
        w.put(&[0])?;
    }
    w.close()
}

/// `vmhd` (§12.1.2) or `smhd` (§12.2.2).
pub(super) fn write_media_header<K: Sink>(w: &mut BoxWriter<'_, K>, t: &Track) -> Result<()> {
    if t.kind == TrackKind::Video {
        w.open_full(b"vmhd", 0, 1)?;
        w.put(&[0; 8])?;
    } else {
        w.open_full(b"smhd", 0, 0)?;
        w.put(&[0; 4])?;
    }
    w.close()
}

/// `dinf`/`dref`/`url ` (§8.7.1, §8.7.2): the media is in this file.
pub(super) fn write_dinf<K: Sink>(w: &mut BoxWriter<'_, K>) -> Result<()> {
    w.open(b"dinf")?;
    w.open_full(b"dref", 0, 0)?;
    w.u32(1)?;
    w.open_full(b"url ", 0, 1)?;
    w.close()?;
    w.close()?;
    w.close()
}

/// A run-length table of `(count, value)` entries (`stts`, `ctts`): its
/// entry count is patched when it is done.
struct Runs {
    count_at: u64,
    value: u32,
    count: u32,
    entries: u32,
}

impl Runs {
    fn open<K: Sink>(w: &mut BoxWriter<'_, K>, kind: &[u8; 4], version: u8) -> Result<Self> {
        w.open_full(kind, version, 0)?;
        let count_at = w.position();
        w.u32(0)?;
        Ok(Runs {
            count_at,
            value: 0,
            count: 0,
            entries: 0,
        })
    }

    fn push<K: Sink>(&mut self, w: &mut BoxWriter<'_, K>, v: u32) -> Result<()> {
        if self.count > 0 && v == self.value && self.count < u32::MAX {
            self.count += 1;
            return Ok(());
        }
        self.end_run(w)?;
        (self.value, self.count) = (v, 1);
        Ok(())
    }

    fn end_run<K: Sink>(&mut self, w: &mut BoxWriter<'_, K>) -> Result<()> {
        if self.count > 0 {
            w.u32(self.count)?;
            w.u32(self.value)?;
            self.entries += 1;
        }
        Ok(())
    }

    fn close<K: Sink>(mut self, w: &mut BoxWriter<'_, K>) -> Result<()> {
        self.end_run(w)?;
        w.patch(self.count_at, &self.entries.to_be_bytes())?;
        w.close()
    }
}

/// Opens a full box with an entry count (patched later); gives its place.
fn open_counted<K: Sink>(w: &mut BoxWriter<'_, K>, kind: &[u8; 4]) -> Result<u64> {
    w.open_full(kind, 0, 0)?;
    let at = w.position();
    w.u32(0)?;
    Ok(at)
}

fn close_counted<K: Sink>(w: &mut BoxWriter<'_, K>, at: u64, n: u32) -> Result<()> {
    w.patch(at, &n.to_be_bytes())?;
    w.close()
}

/// `stts`, `ctts`, `stss`, `stsz`, `stsc` and `stco`/`co64` of track `tr`.
fn write_tables<K: Sink>(
    w: &mut BoxWriter<'_, K>,
    index: Index<'_>,
    tr: u8,
    st: &TrackState,
    data_start: u64,
    wide: bool,
    pcm_frame: Option<u64>,
) -> Result<()> {
    let too_long = |w: &BoxWriter<'_, K>| {
        Error::unsupported(
            w.position(),
            &"mp4 muxer: a sample duration over 2^32 ticks (ISO/IEC 14496-12 8.6.1.2)",
        )
    };
    // Uncompressed audio in MOV: one sample a frame (muxer_pcm.rs).
    if let Some(frame) = pcm_frame {
        let frames = super::muxer_pcm::frames(index, tr, frame);
        super::muxer_pcm::write_frame_tables(w, frame, frames)?;
        return write_chunks(w, index, tr, data_start, wide, Some(frame));
    }
    // stts (§8.6.1.2): sample k lasts until sample k+1 starts.
    let mut stts = Runs::open(w, b"stts", 0)?;
    let next_dts = Times::new(index, tr, st)
        .skip(1)
        .map(Some)
        .chain(core::iter::once(None));
    for ((dts, _), next) in Times::new(index, tr, st).zip(next_dts).take(st.samples as usize) {
        let d = match next {
            Some((n, _)) => u64::try_from(n.saturating_sub(dts)).unwrap_or(0),
            None => st.last_duration,
        };
        let d = u32::try_from(d).map_err(|_| too_long(w))?;
        stts.push(w, d)?;
    }
    stts.close(w)?;
    // ctts (§8.6.1.3): version 1 for negative offsets.
    if st.any_cts {
        let mut ctts = Runs::open(w, b"ctts", u8::from(st.negative_cts))?;
        for (dts, pts) in Times::new(index, tr, st) {
            let c = i32::try_from(pts.saturating_sub(dts)).map_err(|_| too_long(w))?;
            ctts.push(w, c as u32)?;
        }
        ctts.close(w)?;
    }
    // stss (§8.6.2): absent when every sample is a sync sample.
    if st.keys != st.samples {
        let at = open_counted(w, b"stss")?;
        for (n, s) in samples(index, tr).enumerate() {
            if s.key {
                w.u32(u32::try_from(n).unwrap_or(u32::MAX).saturating_add(1))?;
            }
        }
        close_counted(w, at, st.keys)?;
    }
    // stsz (§8.7.3): one size for all when they are equal.
    w.open_full(b"stsz", 0, 0)?;
    if st.same_size {
        w.u32(u32::try_from(st.first_size).unwrap_or(0))?;
        w.u32(st.samples)?;
    } else {
        w.u32(0)?;
        w.u32(st.samples)?;
        for s in samples(index, tr) {
            w.u32(u32::try_from(s.size).unwrap_or(u32::MAX))?;
        }
    }
    w.close()?;
    write_chunks(w, index, tr, data_start, wide, None)
}

/// The chunks of a track: runs of its samples with no other track's
/// sample between them in `mdat`.
struct Chunks<'a> {
    records: Records<'a>,
    track: u8,
    offset: u64,
}

impl Iterator for Chunks<'_> {
    /// Offset of the chunk in the file, samples in it, bytes in it.
    type Item = (u64, u32, u64);

    fn next(&mut self) -> Option<(u64, u32, u64)> {
        let mut chunk: Option<(u64, u32, u64)> = None;
        for s in self.records.by_ref() {
            let at = self.offset;
            self.offset = self.offset.saturating_add(s.size);
            match (&mut chunk, s.track == self.track) {
                (None, true) => chunk = Some((at, 1, s.size)),
                (Some((_, n, b)), true) => {
                    *n = n.saturating_add(1);
                    *b = b.saturating_add(s.size);
                }
                (Some(_), false) => return chunk,
                (None, false) => {}
            }
        }
        chunk
    }
}

/// `stsc` (§8.7.4) and `stco`/`co64` (§8.7.5); with `frame`, the samples
/// of a chunk are its bytes over `frame` (uncompressed audio in MOV, one
/// sample a frame: `muxer_pcm.rs`).
fn write_chunks<K: Sink>(
    w: &mut BoxWriter<'_, K>,
    index: Index<'_>,
    tr: u8,
    data_start: u64,
    wide: bool,
    frame: Option<u64>,
) -> Result<()> {
    let chunks = || Chunks {
        records: Records::of(index),
        track: tr,
        offset: data_start,
    };
    let at = open_counted(w, b"stsc")?;
    let (mut entries, mut last) = (0u32, 0u32);
    for (n, (_, samples, bytes)) in chunks().enumerate() {
        let per = match frame {
            Some(f) => u32::try_from(bytes / f.max(1)).unwrap_or(u32::MAX),
            None => samples,
        };
        if per != last {
            w.u32(u32::try_from(n).unwrap_or(u32::MAX).saturating_add(1))?;
            w.u32(per)?;
            w.u32(1)?;
            entries = entries.saturating_add(1);
            last = per;
        }
    }
    close_counted(w, at, entries)?;
    let at = open_counted(w, if wide { b"co64" } else { b"stco" })?;
    let mut n = 0u32;
    for (offset, _, _) in chunks() {
        if wide {
            w.u64(offset)?;
        } else {
            w.u32(u32::try_from(offset).unwrap_or(u32::MAX))?;
        }
        n = n.saturating_add(1);
    }
    close_counted(w, at, n)
}
