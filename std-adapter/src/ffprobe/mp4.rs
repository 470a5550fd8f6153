//! MP4 / QuickTime facts that ffprobe states and the demuxer does not keep:
//! read from the `moov` box again, for the JSON only.
//!
//! What ffmpeg 5.1 (`libavformat/mov.c`) takes from where:
//!
//! - `creation_time` (format: `mvhd`; stream: `mdhd`): seconds since 1904,
//!   printed as UTC `YYYY-MM-DDTHH:MM:SS.000000Z`; 0 means none.
//! - `handler_name`: the first non-empty `hdlr` name inside the `trak`
//!   (a C string; in QuickTime files, not ISO ones, a leading length byte
//!   equal to the name's length is skipped).
//! - `vendor_id` (audio and video sample entries) and `encoder` (the video
//!   sample entry's compressor name, when not empty).
//! - `disposition.default`: the `tkhd` "enabled" flag.
//! - `sample_aspect_ratio`: a video sample entry's `pasp`, which ffprobe
//!   prefers to the codec's.
//! - the stream `duration`: `mdhd`'s, shortened to the time the edits of
//!   `elst` span and to the media's (`mov_fix_index`); in a fragmented
//!   file `mdhd`'s when it is not 0 or when no fragment follows (an
//!   initialization segment); ffmpeg raises it to the end of the fragments
//!   it reads, which the probe does not follow, so a fragmented track with
//!   a zero `mdhd` duration has none.
//! - the stream `bit_rate`: the bytes of the sample table times 8 over the
//!   sum of the `stts` deltas (`data_size * 8 * time_scale /
//!   duration_for_fps`, integer division).
//! - `r_frame_rate` of a video track: the time scale over the first `stts`
//!   delta when every sample but perhaps the last has it.
//! - an `iTunSMPB` freeform tag's priming samples are skipped at the start
//!   of the last track when it is AAC (`start_pad`), so its `start_time`
//!   moves by them.

use super::mp4_moov;
use mediaslice::Source;

/// The most `moof` bytes read in all.
const MAX_MOOFS: u64 = 64 << 20;
/// The most bytes of one `moof` read.
const MAX_MOOF: u64 = 4 << 20;
/// The most top-level boxes looked at after a fragmented file's `moov`
/// (each is a read: a probe over HTTP stays within its request budget).
/// Past it, the fragments are not counted at all rather than in part.
const MAX_AFTER_MOOV: usize = 256;
/// The most top-level boxes looked at.
const MAX_TOP: usize = 100_000;

/// One `trak`'s facts.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Trak {
    /// `tkhd` track_ID.
    pub id: u32,
    /// `tkhd` flags bit 0.
    pub enabled: bool,
    /// `mdhd` creation time (seconds since 1904).
    pub creation_time: u64,
    /// `mdhd` time scale.
    pub timescale: u32,
    /// `mdhd` duration.
    pub duration: u64,
    /// `mdhd` language.
    pub language: Option<String>,
    /// `hdlr` name (the first non-empty one).
    pub handler: Option<String>,
    /// The `hdlr` handler type of `mdia`.
    pub handler_type: [u8; 4],
    /// The sample entries' vendor (the last entry's).
    pub vendor: Option<[u8; 4]>,
    /// A video sample entry's compressor name.
    pub encoder: Option<String>,
    /// A video sample entry's `pasp` (horizontal, vertical spacing).
    pub pasp: Option<(u32, u32)>,
    /// `elst` entries: (segment duration in the movie time scale, media time).
    pub edits: Vec<(u64, i64)>,
    /// Bytes of the samples `stsz` lists.
    pub data_size: u64,
    /// Sum of the `stts` deltas.
    pub stts_duration: u64,
    /// `stts` entry count and its first two entries (count, delta).
    pub stts_head: (u32, [(u32, u32); 2]),
    /// `trex` default sample duration and size.
    pub trex_duration: u32,
    /// See `trex_duration`.
    pub trex_size: u32,
    /// Bytes of the samples of the track fragments.
    pub frag_size: u64,
    /// Where the track fragments' decode times end.
    pub frag_end: Option<u64>,
    /// Where the last `sidx` referring to the track ends: its earliest
    /// presentation time plus the durations of the references present,
    /// in the `sidx` time scale (see `parse_sidx`).
    pub sidx_end: Option<u64>,
}

/// The `moov` facts.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Moov {
    /// Whether the file is ISO (an `ftyp` whose major brand is not `qt  `).
    pub isom: bool,
    /// `mvhd` creation time (seconds since 1904).
    pub creation_time: u64,
    /// `mvhd` time scale.
    pub timescale: u32,
    /// `mvhd` duration.
    pub duration: u64,
    /// Whether `mvex` is present (a fragmented file).
    pub fragmented: bool,
    /// The tracks, in file order.
    pub traks: Vec<Trak>,
    /// Priming samples of an `iTunSMPB` tag.
    pub priming: Option<u32>,
    /// Format tags the demuxer does not give: freeform `----` items and
    /// the `key-lang` copies of `udta` strings.
    pub tags: Vec<(String, String)>,
}

impl Moov {
    /// The facts with the fragments' counts dropped (when they could not
    /// all be read).
    fn without_fragments(mut self) -> Self {
        for t in &mut self.traks {
            (t.frag_end, t.frag_size) = (None, 0);
        }
        self
    }

    /// The track with `tkhd` track_ID `id`.
    pub fn trak(&self, id: u32) -> Option<&Trak> {
        self.traks.iter().find(|t| t.id == id)
    }
}

impl Trak {
    /// ffmpeg's stream duration: `mdhd`'s, at most the time the edits
    /// span (empty ones included; rescaled from the movie time scale,
    /// rounded) and then at most the media's own (the `stts` sum).
    pub fn ffmpeg_duration(&self, movie_timescale: u32) -> u64 {
        let mut d = self.duration;
        if !self.edits.is_empty() && movie_timescale > 0 {
            let span: u128 = self
                .edits
                .iter()
                .map(|e| {
                    let (n, den) = (
                        u128::from(e.0) * u128::from(self.timescale),
                        u128::from(movie_timescale),
                    );
                    (n + den / 2) / den
                })
                .sum();
            d = d.min(u64::try_from(span).unwrap_or(u64::MAX));
            if self.stts_duration > 0 {
                d = d.min(self.stts_duration);
            }
        }
        d
    }

    /// ffmpeg's duration of a fragmented track: a `sidx`'s end when one
    /// refers to it, else `mdhd`'s (after the edits); raised to where the
    /// fragments end.
    pub fn fragmented_duration(&self, movie_timescale: u32) -> u64 {
        let base = self.sidx_end.unwrap_or_else(|| self.ffmpeg_duration(movie_timescale));
        base.max(self.frag_end.unwrap_or(0))
    }

    /// ffmpeg's bit rate of a fragmented track: all sample bytes over its
    /// duration (`mov_read_header`, when `trex` boxes were read).
    pub fn fragmented_bit_rate(&self, movie_timescale: u32) -> Option<u64> {
        let d = self.fragmented_duration(movie_timescale);
        let bytes = self.data_size + self.frag_size;
        if d == 0 || bytes == 0 {
            return None;
        }
        u64::try_from(u128::from(bytes) * 8 * u128::from(self.timescale) / u128::from(d)).ok()
    }

    /// ffmpeg's `r_frame_rate` from the sample table: the time scale over
    /// the first delta when every sample but perhaps the last has that
    /// delta (`mov_read_trak`).
    pub fn r_frame_rate(&self) -> Option<(u64, u64)> {
        let (n, [(_, d0), (c1, _)]) = self.stts_head;
        if d0 == 0 || self.timescale == 0 || !(n == 1 || (n == 2 && c1 == 1)) {
            return None;
        }
        Some(super::rates::reduce(
            u64::from(self.timescale),
            u64::from(d0),
            i32::MAX as u64,
        ))
    }

    /// ffmpeg's stream bit rate (see the module's notes).
    pub fn bit_rate(&self) -> Option<u64> {
        if self.stts_duration == 0 || self.data_size == 0 {
            return None;
        }
        let b = u128::from(self.data_size) * 8 * u128::from(self.timescale) / u128::from(self.stts_duration);
        u64::try_from(b).ok()
    }
}

fn be16(b: &[u8], at: usize) -> Option<u16> {
    Some(u16::from_be_bytes(b.get(at..at + 2)?.try_into().ok()?))
}

fn be32(b: &[u8], at: usize) -> Option<u32> {
    Some(u32::from_be_bytes(b.get(at..at + 4)?.try_into().ok()?))
}

fn be64(b: &[u8], at: usize) -> Option<u64> {
    Some(u64::from_be_bytes(b.get(at..at + 8)?.try_into().ok()?))
}

fn fourcc(b: &[u8], at: usize) -> Option<[u8; 4]> {
    b.get(at..at + 4)?.try_into().ok()
}

/// The boxes of `b`: (type, body).
fn children(b: &[u8]) -> impl Iterator<Item = ([u8; 4], &[u8])> {
    let mut off = 0usize;
    core::iter::from_fn(move || {
        let size = be32(b, off)?;
        let kind = fourcc(b, off + 4)?;
        let (head, size) = match size {
            1 => (16usize, usize::try_from(be64(b, off + 8)?).ok()?),
            0 => (8, b.len() - off),
            s => (8, s as usize),
        };
        if size < head {
            return None;
        }
        let body = b.get(off + head..off.checked_add(size)?)?;
        off += size;
        Some((kind, body))
    })
}

/// Reads the `moov` facts of an MP4 / QuickTime input (`None` when there is
/// no readable `moov`).
pub fn read<S: Source>(src: &mut S) -> Option<Moov> {
    let len = src.len();
    let mut off = 0u64;
    let mut isom = false;
    let mut moov: Option<Moov> = None;
    let mut moof_bytes = 0u64;
    let mut after_moov = 0usize;
    for _ in 0..MAX_TOP {
        if moov.is_some() {
            after_moov += 1;
            if after_moov > MAX_AFTER_MOOV {
                return moov.map(Moov::without_fragments);
            }
        }
        let mut head = [0u8; 16];
        let n = src.read_at(off, &mut head).ok()?;
        if n < 8 {
            break;
        }
        let size32 = u64::from(be32(&head, 0)?);
        let kind = fourcc(&head, 4)?;
        let (hl, size) = match size32 {
            1 if n >= 16 => (16u64, be64(&head, 8)?),
            0 => (8, len - off),
            s => (8, s),
        };
        if size < hl {
            break;
        }
        if &kind == b"ftyp" {
            isom = head.get(8..12) != Some(b"qt  ");
        } else if &kind == b"moov" && moov.is_none() {
            let body_len = (size - hl).min(len.saturating_sub(off + hl));
            let body = mp4_moov::read(src, off + hl, body_len);
            let mut m = Moov {
                isom,
                ..Moov::default()
            };
            parse_moov(&body, &mut m);
            if !m.fragmented {
                return Some(m);
            }
            moov = Some(m);
        } else if let (b"sidx", Some(m)) = (&kind, moov.as_mut()) {
            let body_len = (size - hl).min(len.saturating_sub(off + hl)).min(MAX_MOOF);
            let mut body = vec![0u8; usize::try_from(body_len).ok()?];
            if src.read_exact_at(off + hl, &mut body).is_err() {
                break;
            }
            parse_sidx(&body, m);
        } else if let (b"moof", Some(m)) = (&kind, moov.as_mut()) {
            let body_len = size - hl;
            if body_len > MAX_MOOF || moof_bytes + body_len > MAX_MOOFS {
                return moov.map(Moov::without_fragments);
            }
            moof_bytes += body_len;
            let mut body = vec![0u8; usize::try_from(body_len).ok()?];
            if src.read_exact_at(off + hl, &mut body).is_err() {
                break;
            }
            parse_moof(&body, m);
        }
        off = match off.checked_add(size) {
            Some(o) if o < len => o,
            _ => break,
        };
    }
    moov
}

/// A `sidx` after the `moov` (ffmpeg's `mov_read_sidx`): the track it
/// refers to lasts until its earliest presentation time plus the
/// durations of its references, a raw sum in the `sidx`'s own time scale
/// (ffmpeg does not rescale it to the track's; they are the same in the
/// files seen). References cut by the end of the input count as far as
/// they are there (ffmpeg reads zeros past the end). A reference to
/// another `sidx` (reference_type 1) or no reference leaves it unset.
fn parse_sidx(b: &[u8], m: &mut Moov) {
    let v1 = b.first() == Some(&1);
    let Some(id) = be32(b, 4) else { return };
    let (ept, at) = if v1 {
        (be64(b, 12), 28)
    } else {
        (be32(b, 12).map(u64::from), 20)
    };
    let (Some(ept), Some(count)) = (ept, be16(b, at + 2)) else {
        return;
    };
    let mut end = ept;
    for i in 0..usize::from(count) {
        let e = at + 4 + 12 * i;
        let (Some(size), Some(dur)) = (be32(b, e), be32(b, e + 4)) else {
            break;
        };
        if size & 0x8000_0000 != 0 {
            return;
        }
        end = end.saturating_add(u64::from(dur));
    }
    if let (true, Some(t)) = (count > 0, m.traks.iter_mut().find(|t| t.id == id)) {
        t.sidx_end = Some(end);
    }
}

/// The samples of a `moof`'s track fragments: their bytes and where their
/// decode times end (ffmpeg's `mov_read_trun`: `data_size` and
/// `track_end`).
fn parse_moof(b: &[u8], m: &mut Moov) {
    for (k, traf) in children(b) {
        if &k != b"traf" {
            continue;
        }
        let mut track = None;
        let (mut dur, mut size, mut base) = (0u32, 0u32, None);
        for (k, body) in children(traf) {
            match &k {
                b"tfhd" => {
                    let flags = be32(body, 0).unwrap_or(0) & 0xFF_FFFF;
                    let id = be32(body, 4).unwrap_or(0);
                    let t = m.traks.iter().position(|t| t.id == id);
                    if let Some(t) = t.and_then(|i| m.traks.get(i)) {
                        (dur, size) = (t.trex_duration, t.trex_size);
                    }
                    track = t;
                    let mut at = 8;
                    for (bit, n) in [(0x1, 8), (0x2, 4), (0x8, 4), (0x10, 4)] {
                        if flags & bit != 0 {
                            match bit {
                                0x8 => dur = be32(body, at).unwrap_or(dur),
                                0x10 => size = be32(body, at).unwrap_or(size),
                                _ => {}
                            }
                            at += n;
                        }
                    }
                }
                b"tfdt" => {
                    base = if body.first() == Some(&1) {
                        be64(body, 4)
                    } else {
                        be32(body, 4).map(u64::from)
                    };
                }
                b"trun" => {
                    let Some(t) = track.and_then(|i| m.traks.get_mut(i)) else {
                        continue;
                    };
                    let flags = be32(body, 0).unwrap_or(0) & 0xFF_FFFF;
                    let count = be32(body, 4).unwrap_or(0) as usize;
                    let mut at = 8 + 4 * usize::from(flags & 0x1 != 0) + 4 * usize::from(flags & 0x4 != 0);
                    let mut dts = base.take().unwrap_or(t.frag_end.unwrap_or(0));
                    let per = [0x100, 0x200, 0x400, 0x800].iter().filter(|&&f| flags & f != 0).count() * 4;
                    for _ in 0..count.min(body.len() / per.max(1)) {
                        let mut f = at;
                        let d = if flags & 0x100 != 0 {
                            f += 4;
                            be32(body, f - 4).unwrap_or(dur)
                        } else {
                            dur
                        };
                        let s = if flags & 0x200 != 0 {
                            be32(body, f).unwrap_or(size)
                        } else {
                            size
                        };
                        dts += u64::from(d);
                        t.frag_size += u64::from(s);
                        at += per;
                    }
                    t.frag_end = Some(dts);
                }
                _ => {}
            }
        }
    }
}

fn parse_moov(b: &[u8], m: &mut Moov) {
    let mut trex_defaults = Vec::new();
    for (kind, body) in children(b) {
        match &kind {
            b"mvhd" => {
                if let Some((c, ts, d)) = header_times(body) {
                    (m.creation_time, m.timescale, m.duration) = (c, ts, d);
                }
            }
            b"mvex" => {
                m.fragmented = true;
                for (k, trex) in children(body) {
                    if &k != b"trex" {
                        continue;
                    }
                    let id = be32(trex, 4).unwrap_or(0);
                    let (d, s) = (be32(trex, 12).unwrap_or(0), be32(trex, 16).unwrap_or(0));
                    trex_defaults.push((id, d, s));
                }
            }
            b"trak" => {
                let mut t = Trak::default();
                parse_trak(body, m.isom, &mut t);
                m.traks.push(t);
            }
            b"udta" => {
                m.tags.extend(localized(body));
                for (k, meta) in children(body) {
                    if &k == b"meta" {
                        for (name, value) in freeform(meta_body(meta)) {
                            if name == "iTunSMPB" {
                                m.priming = priming(&value);
                            }
                            m.tags.push((name, value));
                        }
                    }
                }
            }
            _ => {}
        }
    }
    for (id, d, s) in trex_defaults {
        if let Some(t) = m.traks.iter_mut().find(|t| t.id == id) {
            (t.trex_duration, t.trex_size) = (d, s);
        }
    }
}

/// creation time, time scale and duration of `mvhd` / `mdhd`.
fn header_times(b: &[u8]) -> Option<(u64, u32, u64)> {
    if b.first() == Some(&1) {
        Some((be64(b, 4)?, be32(b, 20)?, be64(b, 24)?))
    } else {
        Some((u64::from(be32(b, 4)?), be32(b, 12)?, u64::from(be32(b, 16)?)))
    }
}

/// A `meta` box's children: ISO's has a version and flags first,
/// QuickTime's does not.
fn meta_body(b: &[u8]) -> &[u8] {
    if b.get(4..8) == Some(b"hdlr") {
        b
    } else {
        b.get(4..).unwrap_or(&[])
    }
}

/// The freeform (`----`) items of an `ilst`: their `name` and their
/// `data` as text up to a NUL, as ffmpeg's `mov_read_custom` sets them.
fn freeform(meta: &[u8]) -> Vec<(String, String)> {
    let Some((_, ilst)) = children(meta).find(|(k, _)| k == b"ilst") else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for (k, item) in children(ilst) {
        if &k != b"----" {
            continue;
        }
        let (mut name, mut data) = (None, None);
        for (k, b) in children(item) {
            match &k {
                b"name" => name = b.get(4..),
                b"data" => data = b.get(8..),
                _ => {}
            }
        }
        if let (Some(n), Some(d)) = (name, data) {
            let d = d.split(|&c| c == 0).next().unwrap_or(d);
            out.push((
                String::from_utf8_lossy(n).into_owned(),
                String::from_utf8_lossy(d).into_owned(),
            ));
        }
    }
    out
}

/// The priming samples of an `iTunSMPB` value, when it states between 1 and
/// 16383, as ffmpeg takes them.
fn priming(value: &str) -> Option<u32> {
    let p = u32::from_str_radix(value.split_whitespace().nth(1)?, 16).ok()?;
    (p > 0 && p < 16384).then_some(p)
}

/// An ISO 639-2/T code packed in 15 bits, or (below 0x400) a Macintosh
/// language code, as ffmpeg's `ff_mov_lang_to_iso639` reads it; only the
/// Macintosh code 0 (English, what QuickTime writes) is known here.
pub fn language(code: u16) -> Option<String> {
    if code < 0x400 {
        return (code == 0).then(|| "eng".to_owned());
    }
    let c: String = [10u16, 5, 0]
        .iter()
        .map(|&sh| char::from(((code >> sh) & 0x1F) as u8 + 0x60))
        .collect();
    c.chars().all(|c| c.is_ascii_lowercase()).then_some(c)
}

/// A 3GPP `loci` box as ffmpeg's `mov_metadata_loci` states it:
/// `location` (and `location-lang`) in the form of a `©xyz` value,
/// latitude and longitude in degrees, the altitude when not 0, then `/`
/// and the place name.
fn loci(b: &[u8]) -> Vec<(String, String)> {
    let Some(lang) = be16(b, 4) else {
        return Vec::new();
    };
    let rest = b.get(6..).unwrap_or(&[]);
    let name_len = rest.iter().position(|&c| c == 0).unwrap_or(rest.len());
    let place = String::from_utf8_lossy(rest.get(..name_len).unwrap_or(&[])).into_owned();
    // The name's NUL, the role byte, then three 16.16 fixed-point numbers.
    let at = 6 + name_len + 2;
    let fixed = |i: usize| be32(b, at + 4 * i).map(|v| v as i32 as f32 / 65536.0);
    let (Some(lon), Some(lat), Some(alt)) = (fixed(0), fixed(1), fixed(2)) else {
        return Vec::new();
    };
    let mut v = format!("{lat:+08.4}{lon:+09.4}");
    if alt != 0.0 {
        v.push_str(&format!("{alt:+.6}"));
    }
    v.push('/');
    v.push_str(&place);
    let mut out = Vec::new();
    if let Some(l) = language(lang).filter(|l| l != "und") {
        out.push((format!("location-{l}"), v.clone()));
    }
    out.push(("location".to_owned(), v));
    out
}

/// The name ffmpeg gives a `udta` string box (`mov_read_udta_string`), for
/// the keys written with a language.
fn udta_key(k: &[u8; 4]) -> Option<&'static str> {
    Some(match k {
        b"\xA9xyz" => "location",
        b"\xA9nam" => "title",
        b"\xA9ART" => "artist",
        b"\xA9alb" => "album",
        b"\xA9day" => "date",
        b"\xA9cmt" => "comment",
        b"\xA9gen" => "genre",
        b"\xA9wrt" => "composer",
        b"\xA9too" => "encoder",
        _ => return None,
    })
}

/// The `udta` strings stored with a language: ffmpeg sets them a second
/// time under `key-lang` (not for "und").
fn localized(udta: &[u8]) -> Vec<(String, String)> {
    let mut out = Vec::new();
    for (k, b) in children(udta) {
        if &k == b"loci" {
            out.extend(loci(b));
            continue;
        }
        let Some(key) = udta_key(&k) else { continue };
        let (Some(len), Some(lang)) = (be16(b, 0), be16(b, 2)) else {
            continue;
        };
        let (Some(lang), Some(text)) = (language(lang), b.get(4..4 + usize::from(len))) else {
            continue;
        };
        if lang != "und" {
            out.push((format!("{key}-{lang}"), String::from_utf8_lossy(text).into_owned()));
        }
    }
    out
}

fn parse_trak(b: &[u8], isom: bool, t: &mut Trak) {
    for (kind, body) in children(b) {
        match &kind {
            b"tkhd" => {
                t.enabled = body.get(3).is_some_and(|f| f & 1 != 0);
                let at = if body.first() == Some(&1) { 20 } else { 12 };
                t.id = be32(body, at).unwrap_or(0);
            }
            b"edts" => {
                if let Some((_, elst)) = children(body).find(|(k, _)| k == b"elst") {
                    t.edits = edits(elst);
                }
            }
            b"mdia" | b"minf" | b"stbl" | b"udta" => parse_trak(body, isom, t),
            b"meta" => parse_trak(meta_body(body), isom, t),
            b"mdhd" => {
                if let Some((c, ts, d)) = header_times(body) {
                    (t.creation_time, t.timescale, t.duration) = (c, ts, d);
                }
                let at = if body.first() == Some(&1) { 32 } else { 20 };
                t.language = be16(body, at).and_then(language);
            }
            b"hdlr" => {
                if t.handler_type == [0; 4] {
                    t.handler_type = fourcc(body, 8).unwrap_or([0; 4]);
                }
                if t.handler.is_none() {
                    t.handler = handler_name(body, isom);
                }
            }
            b"stsd" => sample_entries(body, t),
            &mp4_moov::SIZES => t.data_size = be64(body, 0).unwrap_or(0),
            &mp4_moov::TIMES => {
                let v = |at: usize| be32(body, at).unwrap_or(0);
                t.stts_head = (v(0), [(v(4), v(8)), (v(12), v(16))]);
                t.stts_duration = be64(body, 20).unwrap_or(0);
            }
            _ => {}
        }
    }
}

fn edits(b: &[u8]) -> Vec<(u64, i64)> {
    let v1 = b.first() == Some(&1);
    let count = be32(b, 4).unwrap_or(0) as usize;
    let step = if v1 { 20 } else { 12 };
    (0..count.min(b.len() / step))
        .map_while(|i| {
            let at = 8 + step * i;
            if v1 {
                Some((be64(b, at)?, be64(b, at + 8)? as i64))
            } else {
                Some((u64::from(be32(b, at)?), i64::from(be32(b, at + 4)? as i32)))
            }
        })
        .collect()
}

/// ffmpeg's `handler_name` from a `hdlr` body.
fn handler_name(b: &[u8], isom: bool) -> Option<String> {
    let raw = b.get(24..)?;
    let first = *raw.first()?;
    if first == 0 {
        return None;
    }
    let skip = usize::from(!isom && usize::from(first) == raw.len() - 1);
    let s = raw.get(skip..)?;
    let s = s.split(|&c| c == 0).next().unwrap_or(s);
    Some(String::from_utf8_lossy(s).into_owned())
}

fn sample_entries(b: &[u8], t: &mut Trak) {
    let Some(entries) = b.get(8..) else {
        return;
    };
    for (_, e) in children(entries) {
        // After 6 reserved bytes and the data reference index: version,
        // revision, vendor (the same place for audio and video entries).
        if let Some(v) = fourcc(e, 12) {
            t.vendor = Some(v);
        }
        if &t.handler_type == b"vide" {
            // The boxes after the 78 bytes of a visual sample entry.
            for (k, b) in children(e.get(78..).unwrap_or(&[])) {
                if let (b"pasp", Some(h), Some(v)) = (&k, be32(b, 0), be32(b, 4)) {
                    t.pasp = Some((h, v));
                }
            }
            // Compressor name: a length byte and up to 31 bytes.
            if let Some(&n) = e.get(42) {
                let n = usize::from(n).min(31);
                if let Some(name) = e.get(43..43 + n) {
                    let name = name.split(|&c| c == 0).next().unwrap_or(name);
                    if !name.is_empty() {
                        t.encoder = Some(mac_roman(name));
                    }
                }
            }
        }
    }
}

/// Mac Roman text as ffmpeg's `mov_read_mac_string` reads it: ASCII as is;
/// the upper half is mapped (only the letters and signs that occur in
/// compressor names are in the table; others become U+FFFD).
fn mac_roman(b: &[u8]) -> String {
    b.iter()
        .map(|&c| match c {
            0..=0x7F => char::from(c),
            0xA9 => '\u{2122}',
            0xA8 => '\u{00AE}',
            0xA5 => '\u{2022}',
            _ => '\u{FFFD}',
        })
        .collect()
}

/// Seconds since 1904 as ffmpeg prints a `creation_time`
/// (`avpriv_dict_set_timestamp`); `None` for 0.
pub fn creation_time(secs_1904: u64) -> Option<String> {
    if secs_1904 == 0 {
        return None;
    }
    let secs = if secs_1904 >= 2_082_844_800 {
        secs_1904 - 2_082_844_800
    } else {
        secs_1904
    };
    let secs = i64::try_from(secs)
        .ok()
        .filter(|s| s.checked_mul(1_000_000).is_some())?;
    Some(format!("{}.000000Z", crate::civil_time::date_time(secs)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn creation_times_print_as_ffmpeg_does() {
        assert_eq!(creation_time(0), None);
        // 2014-12-18T08:19:24Z is 1418890764 s after 1970.
        assert_eq!(
            creation_time(1_418_890_764 + 2_082_844_800).as_deref(),
            Some("2014-12-18T08:19:24.000000Z")
        );
        assert_eq!(creation_time(86_400).as_deref(), Some("1970-01-02T00:00:00.000000Z"));
    }

    #[test]
    fn edits_shorten_the_duration() {
        let t = Trak {
            timescale: 44_100,
            duration: 94_624,
            edits: vec![(1548, 26_342)],
            data_size: 37_555,
            stts_duration: 94_624,
            ..Trak::default()
        };
        assert_eq!(t.ffmpeg_duration(1000), 68_267);
        assert_eq!(t.bit_rate(), Some(140_021));
        let e = Trak {
            edits: vec![(1000, -1), (9000, 0)],
            timescale: 15_360,
            duration: 200_000,
            ..Trak::default()
        };
        assert_eq!(e.ffmpeg_duration(1000), 153_600);
        let e = Trak {
            stts_duration: 97_200,
            ..e
        };
        assert_eq!(e.ffmpeg_duration(1000), 97_200);
    }

    #[test]
    fn languages() {
        assert_eq!(language(0x55C4).as_deref(), Some("und"));
        assert_eq!(language(0x15C7).as_deref(), Some("eng"));
        assert_eq!(language(0).as_deref(), Some("eng"));
        assert_eq!(language(5), None);
        assert_eq!(priming(" 00000000 00000840 000001AF"), Some(0x840));
    }

    #[test]
    fn handler_names() {
        let mut b = vec![0u8; 24];
        b.extend_from_slice(b"\x0cVideoHandler");
        assert_eq!(handler_name(&b, false).as_deref(), Some("VideoHandler"));
        assert_eq!(handler_name(&b, true).as_deref(), Some("\u{c}VideoHandler"));
        let mut b = vec![0u8; 24];
        b.extend_from_slice(b"SoundHandler\0");
        assert_eq!(handler_name(&b, true).as_deref(), Some("SoundHandler"));
    }

    #[test]
    fn sidx_sets_the_fragmented_duration() {
        let mut m = Moov {
            traks: vec![Trak {
                id: 1,
                timescale: 44_100,
                duration: 5_435_398_144,
                ..Trak::default()
            }],
            ..Moov::default()
        };
        // Version 0, reference_ID 1, time scale 44100, earliest time 0,
        // first offset 0, 3 references stated, 2 present (a cut file).
        let mut b = vec![0u8; 4];
        for w in [1u32, 44_100, 0, 0, 3] {
            b.extend_from_slice(&w.to_be_bytes());
        }
        for (size, dur) in [(100u32, 441_000u32), (120, 441_000)] {
            for w in [size, dur, 0x9000_0000] {
                b.extend_from_slice(&w.to_be_bytes());
            }
        }
        parse_sidx(&b, &mut m);
        let t = &m.traks[0];
        assert_eq!(t.sidx_end, Some(882_000));
        // The sidx replaces mdhd's; fragments reaching further raise it.
        assert_eq!(t.fragmented_duration(1000), 882_000);
        let t = Trak {
            frag_end: Some(900_000),
            ..t.clone()
        };
        assert_eq!(t.fragmented_duration(1000), 900_000);
        // A reference to another sidx: ffmpeg gives up on the box.
        b[36] |= 0x80;
        m.traks[0].sidx_end = None;
        parse_sidx(&b, &mut m);
        assert_eq!(m.traks[0].sidx_end, None);
    }
}
