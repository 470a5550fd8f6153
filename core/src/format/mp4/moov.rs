//! The movie box walk (§8.2 to §8.7): `mvhd`, each `trak` (`tkhd`, `elst`,
//! `mdhd`, `hdlr` and the sample table boxes of `stbl`), `mvex`/`trex`, and
//! where `udta`/`meta` keep the tags. Sample entries (`stsd`) are read in
//! [`super::sample_entry`].

use super::boxes::{
    for_each_child, read_box_header, soft, source_fault, BoxHeader, MdhdV0, MdhdV1, MvhdV0, MvhdV1, Stsz, Stz2, Trex,
};
use super::demuxer::{Mp4Demuxer, Mp4Track};
use super::sample_entry::parse_stsd;
use super::sample_table::{ChunkMode, Table};
use crate::error::{Error, Result};
use crate::format::traits::Context;
use crate::source::Source;
use crate::types::{rescale, Codec, Rational, Track, TrackKind};

/// Boxes of one `trak` visited, at every level (`tkhd`, `edts`, `mdia`,
/// `minf`, `stbl` and their children): a real track has a few dozen; 4096
/// bounds a `trak` of tiny boxes.
const MAX_TRAK_BOXES: u32 = 4096;

/// `elst` entries read (§8.6.6): only the leading empty edits and the first
/// non-empty one are used, and real files have one to three; 64 bounds the
/// reads of a damaged count (the count itself is still reported).
const MAX_ELST_ENTRIES: u32 = 64;

/// Children of `moov`/`udta` looked at for a `meta`: QuickTime writes a
/// few strings there; 256 bounds a `udta` of tiny boxes.
const MAX_UDTA_CHILDREN: u32 = 256;

/// Children of `meta` looked at for `keys` and `ilst` (§8.11.1): `hdlr`,
/// `keys`, `ilst` and a few more in real files; 64 bounds the walk.
const MAX_META_CHILDREN: u32 = 64;

/// Children of `mvex` looked at for `trex` (§8.8.1): one `trex` per track
/// (at most [`crate::limits::MAX_TRACKS`] are kept) and `mehd`; 256 bounds
/// the walk.
const MAX_MVEX_CHILDREN: u32 = 256;

/// Checks a table's entry count against its box: returns the count that fits.
fn table(ctx: &mut Context, h: &BoxHeader, header: u64, entry: u64, count: u32, code: &'static str) -> Table {
    let room = h.body_len().saturating_sub(header) / entry.max(1);
    let fit = (count as u64).min(room) as u32;
    if fit < count {
        ctx.diags.report(code, h.start);
    }
    Table {
        off: h.body + header,
        count: fit,
    }
}

/// Decodes the packed ISO 639-2/T language of `mdhd` (§8.4.2.3).
fn language(packed: u16) -> crate::types::Language {
    let mut s = crate::types::Language::EMPTY;
    if packed == 0 || packed == 0x7FFF || packed < 0x400 {
        return s;
    }
    for shift in [10u16, 5, 0] {
        let c = ((packed >> shift) & 0x1F) as u8 + 0x60;
        if !c.is_ascii_lowercase() {
            return crate::types::Language::EMPTY;
        }
        let _ = s.push_ascii(c);
    }
    s
}

/// The movie timescale and duration of `mvhd` (§8.2.2); a duration of all
/// ones in version 0 means unknown (0).
fn read_mvhd<S: Source>(src: &mut S, h: &BoxHeader) -> Result<(u32, u64)> {
    let v: [u8; 1] = src.array(h.body)?;
    Ok(if v[0] == 1 {
        let m: MvhdV1 = src.read(h.body)?;
        (m.timescale.get(), m.duration.get())
    } else {
        let m: MvhdV0 = src.read(h.body)?;
        let d = m.duration.get();
        (m.timescale.get(), if d == u32::MAX { 0 } else { d as u64 })
    })
}

/// The first edits of `elst` (§8.6.6), in the movie timescale.
#[derive(Debug, Clone, Copy, Default)]
struct EditList {
    /// Number of entries.
    edits: u32,
    /// Duration of the empty edits before the first non-empty one.
    empty_movie: u64,
    /// The first non-empty edit's media time.
    media_time: Option<i64>,
    /// The first non-empty edit's duration.
    duration: u64,
}

/// What a `trak` walk collects.
#[derive(Debug, Clone, Default)]
struct TrakParts {
    t: Track,
    m: Mp4Track,
    edits: EditList,
    stsd: Option<BoxHeader>,
    /// First track ID of this track's `tref/chap`.
    #[cfg(feature = "chapters")]
    chap: Option<u32>,
}

impl Mp4Demuxer {
    pub(super) fn parse_moov<S: Source>(&mut self, src: &mut S, ctx: &mut Context, moov: &BoxHeader) -> Result<()> {
        let mut movie_timescale = 0u32;
        let mut movie_duration = 0u64;
        let mut mvex = None;
        let mut at = moov.body;
        let mut guard = 0u32;
        while at.saturating_add(8) <= moov.end {
            guard += 1;
            if guard > ctx.limits.max_top_level {
                break;
            }
            let h = match read_box_header(src, at, moov.end) {
                Ok(h) => h,
                Err(e) if e.is_truncation() => break,
                Err(e) => return Err(e),
            };
            match &h.kind {
                b"mvhd" => (movie_timescale, movie_duration) = read_mvhd(src, &h)?,
                b"trak" => {
                    if let Err(e) = self.parse_trak(src, ctx, &h, movie_timescale) {
                        if e.is_truncation() || source_fault(&e) {
                            return Err(e);
                        }
                        ctx.diags.report("mp4.bad-trak", h.start);
                    }
                }
                b"mvex" => {
                    self.fragmented = true;
                    mvex = Some(h);
                }
                b"udta" => self.parse_udta(src, &h)?,
                b"meta" => self.parse_meta(src, &h)?,
                _ => {}
            }
            if h.end <= at {
                break;
            }
            at = h.end;
        }
        // `trex` may come before the tracks it describes.
        if let Some(h) = mvex {
            self.parse_mvex(src, &h)?;
        }
        if movie_timescale > 0 && movie_duration > 0 {
            let us = Rational::new(1, movie_timescale).to_micros(movie_duration.min(i64::MAX as u64) as i64);
            ctx.info.duration_us = Some(us.max(0) as u64);
        }
        Ok(())
    }

    /// `udta` of the movie: its strings are tags, and a `meta` in it may
    /// hold `ilst`.
    fn parse_udta<S: Source>(&mut self, src: &mut S, h: &BoxHeader) -> Result<()> {
        self.tag_boxes.udta = Some((h.body, h.end));
        for_each_child(src, h.body, h.end, MAX_UDTA_CHILDREN, |src, c| {
            if &c.kind == b"meta" {
                self.parse_meta(src, c)?;
            }
            Ok(())
        })
    }

    /// `meta` (§8.11.1): a full box in ISO files, a plain container in
    /// QuickTime; holds `hdlr`, `keys` and `ilst`.
    fn parse_meta<S: Source>(&mut self, src: &mut S, h: &BoxHeader) -> Result<()> {
        let Some(probe) = soft(src.array::<8>(h.body))? else {
            return Ok(());
        };
        let at = if &probe[4..8] == b"hdlr" || &probe[4..8] == b"keys" || &probe[4..8] == b"ilst" {
            h.body
        } else {
            h.body + 4
        };
        let tags = &mut self.tag_boxes;
        for_each_child(src, at, h.end, MAX_META_CHILDREN, |_, c| {
            match &c.kind {
                b"ilst" if tags.ilst.is_none() => tags.ilst = Some((c.body, c.end)),
                b"keys" if tags.keys.is_none() => tags.keys = Some((c.body, c.end)),
                _ => {}
            }
            Ok(())
        })
    }

    /// `mvex` (§8.8.1): each `trex` gives its track's fragment defaults.
    fn parse_mvex<S: Source>(&mut self, src: &mut S, mvex: &BoxHeader) -> Result<()> {
        let tracks = &mut self.tracks;
        for_each_child(src, mvex.body, mvex.end, MAX_MVEX_CHILDREN, |src, h| {
            if &h.kind == b"trex" {
                let x: Trex = src.read(h.body)?;
                let id = x.track_id.get();
                if let Some(t) = tracks.iter_mut().find(|t| t.track_id == id) {
                    t.trex_duration = x.default_sample_duration.get();
                    t.trex_size = x.default_sample_size.get();
                    t.trex_flags = x.default_sample_flags.get();
                }
            }
            Ok(())
        })
    }

    /// Reads a `trak` (§8.3.1) and adds its track.
    fn parse_trak<S: Source>(&mut self, src: &mut S, ctx: &mut Context, trak: &BoxHeader, movie_ts: u32) -> Result<()> {
        let mut p = TrakParts::default();
        walk_trak(src, ctx, trak, &mut p)?;
        #[cfg(feature = "chapters")]
        if p.chap.is_some() {
            self.chap_track = p.chap;
        }
        let TrakParts {
            mut t,
            mut m,
            edits,
            stsd,
            ..
        } = p;
        if m.timescale == 0 {
            return Err(Error::malformed(
                trak.start,
                &"mp4 mdhd: trak without a usable timescale (ISO/IEC 14496-12 8.4.2)",
            ));
        }
        let mut chunk_mode = ChunkMode::default();
        if let Some(h) = stsd {
            chunk_mode = parse_stsd(src, ctx, &h, &mut t)?;
        }
        t.id = m.track_id;
        t.time_base = Rational::new(1, m.timescale);
        t.frames = Some(m.sample_count as u64);
        m.audio = t.kind == TrackKind::Audio;
        // ffmpeg reads uncompressed audio by chunk when stts says every
        // sample lasts one tick.
        if m.audio && m.stts.count == 1 && src.u32_be(m.stts.off + 4)? == 1 {
            if chunk_mode.frame_bytes == 0 && chunk_mode.samples_per_frame == 0 {
                chunk_mode.frame_bytes = m.stsz_const;
            }
            if chunk_mode.frame_bytes > 0 || chunk_mode.samples_per_frame > 0 {
                m.chunk = Some(chunk_mode);
                t.frames = None;
            }
        }
        if edits.edits > 0 {
            apply_edits(ctx, &edits, movie_ts, t.time_base, &mut m, trak.start);
        }
        if t.kind == TrackKind::Video && t.codec == Codec::Unknown && t.width == 0 {
            t.kind = TrackKind::Data;
        }
        let Some(index) = ctx.add_track(t, trak.start) else {
            return Ok(());
        };
        m.index = index;
        if self.tracks.push(m).is_err() {
            ctx.diags.report("track-capacity", trak.start);
        }
        Ok(())
    }
}

/// Walks trak → (tkhd, edts/elst, mdia → (mdhd, hdlr, minf → stbl)),
/// collecting what each box says into `p`.
fn walk_trak<S: Source>(src: &mut S, ctx: &mut Context, trak: &BoxHeader, p: &mut TrakParts) -> Result<()> {
    let mut stack: heapless::Vec<(u64, u64), 8> = heapless::Vec::new();
    let _ = stack.push((trak.body, trak.end));
    let mut steps = 0u32;
    while let Some((at, end)) = stack.pop() {
        steps += 1;
        if steps > MAX_TRAK_BOXES || at.saturating_add(8) > end {
            continue;
        }
        let h = match read_box_header(src, at, end) {
            Ok(h) => h,
            Err(e) if e.is_truncation() || source_fault(&e) => return Err(e),
            Err(_) => continue,
        };
        if h.end > at {
            let _ = stack.push((h.end, end));
        }
        match &h.kind {
            b"edts" | b"mdia" | b"minf" | b"stbl" => {
                if stack.push((h.body, h.end)).is_err() {
                    ctx.diags.report("mp4.depth", h.start);
                }
            }
            _ => trak_leaf(src, ctx, &h, p)?,
        }
    }
    Ok(())
}

/// One box of a `trak` that is not a container.
fn trak_leaf<S: Source>(src: &mut S, ctx: &mut Context, h: &BoxHeader, p: &mut TrakParts) -> Result<()> {
    let m = &mut p.m;
    match &h.kind {
        b"tkhd" => {
            let v: [u8; 1] = src.array(h.body)?;
            let id_at = if v[0] == 1 { h.body + 20 } else { h.body + 12 };
            m.track_id = src.u32_be(id_at)?;
        }
        b"elst" => read_elst(src, ctx, h, &mut p.edits)?,
        b"mdhd" => {
            let (ts, dur, lang) = read_mdhd(src, h)?;
            m.timescale = ts;
            p.t.duration = if dur > 0 { Some(dur) } else { None };
            p.t.language = language(lang);
        }
        b"hdlr" => {
            let k: [u8; 4] = src.array(h.body + 8)?;
            // QuickTime puts a second (data) handler in minf: keep
            // the media handler's kind.
            let kind = match &k {
                b"vide" => TrackKind::Video,
                b"soun" => TrackKind::Audio,
                b"sbtl" | b"subt" | b"text" | b"clcp" | b"subp" => TrackKind::Subtitle,
                b"tmcd" | b"meta" | b"hint" => TrackKind::Data,
                _ => TrackKind::Unknown,
            };
            if p.t.kind == TrackKind::Unknown {
                p.t.kind = kind;
            }
        }
        b"stsd" => p.stsd = Some(*h),
        #[cfg(feature = "chapters")]
        b"tref" => p.chap = super::chapter_track::read_tref(src, h),
        _ => stbl_table(src, ctx, h, m)?,
    }
    Ok(())
}

/// A sample table box of `stbl` (§8.6, §8.7): where its entries are.
fn stbl_table<S: Source>(src: &mut S, ctx: &mut Context, h: &BoxHeader, m: &mut Mp4Track) -> Result<()> {
    match &h.kind {
        b"stts" => {
            let n = src.u32_be(h.body + 4)?;
            m.stts = table(ctx, h, 8, 8, n, "mp4.stts-count-mismatch");
        }
        b"ctts" => {
            let n = src.u32_be(h.body + 4)?;
            m.ctts = table(ctx, h, 8, 8, n, "mp4.ctts-count-mismatch");
        }
        b"stss" => {
            let n = src.u32_be(h.body + 4)?;
            m.stss = table(ctx, h, 8, 4, n, "mp4.stss-count-mismatch");
            m.has_stss = true;
        }
        b"stsc" => {
            let n = src.u32_be(h.body + 4)?;
            m.stsc = table(ctx, h, 8, 12, n, "mp4.stsc-count-mismatch");
        }
        b"stco" | b"co64" => {
            let n = src.u32_be(h.body + 4)?;
            m.co64 = &h.kind == b"co64";
            let entry = if m.co64 { 8 } else { 4 };
            m.stco = table(ctx, h, 8, entry, n, "mp4.stco-count-mismatch");
        }
        b"stsz" => read_stsz(src, ctx, h, m)?,
        b"stz2" => read_stz2(src, ctx, h, m)?,
        _ => {}
    }
    Ok(())
}

/// `stsz` (§8.7.3.2): a constant size, or a table of sizes.
fn read_stsz<S: Source>(src: &mut S, ctx: &mut Context, h: &BoxHeader, m: &mut Mp4Track) -> Result<()> {
    let b: Stsz = src.read(h.body)?;
    m.stsz_const = b.sample_size.get();
    m.sample_count = b.sample_count.get();
    if m.stsz_const == 0 {
        m.stsz = table(ctx, h, 12, 4, m.sample_count, "mp4.stsz-count-mismatch");
        m.sample_count = m.stsz.count;
    } else {
        m.stsz = Table {
            off: h.body + 12,
            count: m.sample_count,
        };
    }
    Ok(())
}

/// `stz2` (§8.7.3.3): a table of 4-, 8- or 16-bit sizes.
fn read_stz2<S: Source>(src: &mut S, ctx: &mut Context, h: &BoxHeader, m: &mut Mp4Track) -> Result<()> {
    let b: Stz2 = src.read(h.body)?;
    m.stz2_bits = b.field_size;
    let n = b.sample_count.get();
    if !matches!(m.stz2_bits, 4 | 8 | 16) {
        return Err(Error::malformed(
            h.body,
            &"mp4 stz2: field_size not 4, 8 or 16 (ISO/IEC 14496-12 8.7.3.3)",
        ));
    }
    let room = h.body_len().saturating_sub(12).saturating_mul(8) / m.stz2_bits as u64;
    let fit = (n as u64).min(room) as u32;
    if fit < n {
        ctx.diags.report("mp4.stsz-count-mismatch", h.start);
    }
    m.stsz = Table {
        off: h.body + 12,
        count: fit,
    };
    m.sample_count = fit;
    Ok(())
}

/// The media timescale, duration and packed language of `mdhd` (§8.4.2.2);
/// a duration of all ones in version 0 means unknown (0).
fn read_mdhd<S: Source>(src: &mut S, h: &BoxHeader) -> Result<(u32, u64, u16)> {
    let v: [u8; 1] = src.array(h.body)?;
    Ok(if v[0] == 1 {
        let d: MdhdV1 = src.read(h.body)?;
        (d.timescale.get(), d.duration.get(), d.language.get())
    } else {
        let d: MdhdV0 = src.read(h.body)?;
        let dur = d.duration.get();
        (
            d.timescale.get(),
            if dur == u32::MAX { 0 } else { dur as u64 },
            d.language.get(),
        )
    })
}

/// `elst` (§8.6.6): the leading empty edits and the first non-empty one.
fn read_elst<S: Source>(src: &mut S, ctx: &mut Context, h: &BoxHeader, el: &mut EditList) -> Result<()> {
    let v: [u8; 1] = src.array(h.body)?;
    let entry = if v[0] == 1 { 20u64 } else { 12 };
    let count = src.u32_be(h.body + 4)?;
    let tab = table(ctx, h, 8, entry, count, "mp4.elst-count-mismatch");
    el.edits = tab.count;
    for i in 0..tab.count.min(MAX_ELST_ENTRIES) {
        let e = tab.off + i as u64 * entry;
        let (dur, mt) = if v[0] == 1 {
            (src.u64_be(e)?, src.u64_be(e + 8)? as i64)
        } else {
            (src.u32_be(e)? as u64, src.u32_be(e + 4)? as i32 as i64)
        };
        if mt == -1 {
            if el.media_time.is_none() {
                el.empty_movie = el.empty_movie.saturating_add(dur);
            }
        } else if el.media_time.is_none() {
            el.media_time = Some(mt);
            el.duration = dur;
        }
    }
    Ok(())
}

/// Applies the edit list to the track as ffmpeg does: the first non-empty
/// edit's media time is subtracted, leading empty edits added; its end
/// bounds the samples read.
fn apply_edits(ctx: &mut Context, el: &EditList, movie_ts: u32, time_base: Rational, m: &mut Mp4Track, at: u64) {
    let empty = if movie_ts > 0 {
        rescale(
            el.empty_movie.min(i64::MAX as u64) as i64,
            Rational::new(1, movie_ts),
            time_base,
        )
    } else {
        0
    };
    let mt = el.media_time.unwrap_or(0);
    m.shift = mt.saturating_sub(empty);
    m.start = empty;
    if el.media_time.is_some() {
        let dur = el.duration;
        let end = if dur == 0 || movie_ts == 0 {
            i64::MAX
        } else {
            mt.saturating_add(rescale(
                dur.min(i64::MAX as u64) as i64,
                Rational::new(1, movie_ts),
                time_base,
            ))
        };
        m.edit = Some((mt, end));
    }
    if el.edits > 2 || (el.edits == 2 && el.empty_movie == 0) {
        ctx.diags.report("mp4.complex-edit-list", at);
    }
}
