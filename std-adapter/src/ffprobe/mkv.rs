//! Matroska / WebM facts that ffprobe states and the demuxer does not keep:
//! read from the `Info` and `Tracks` elements again, for the JSON only.
//!
//! What ffmpeg 5.1 (`libavformat/matroskadec.c`) takes from where:
//!
//! - the stream `language`: the `Language` element (ISO 639-2, "eng" when
//!   absent), not `LanguageBCP47`, and none when it is "und".
//! - `sample_aspect_ratio`: `DisplayHeight * PixelWidth'` over
//!   `DisplayWidth * PixelHeight'` (the pixel sizes less the crops; the
//!   display size defaults to the pixel size), when `DisplayUnit` is 0
//!   (pixels); so 1:1 when no display size is given. A stereo track whose
//!   two views lie side by side (or one above the other) has its display
//!   width (height) doubled first.
//! - `avg_frame_rate`: 10^9 over `DefaultDuration` (reduced to terms of at
//!   most 30000), and `r_frame_rate` the same when between 5 and 1000.
//! - tags go under their names as written (`NAME-lang` in a
//!   `TagLanguage` other than "und"), where the tag walker's common names
//!   do not already give them.
//! - a `StereoMode` other than mono as the stream tag `stereo_mode`.
//! - the format's `creation_time`: `DateUTC` (nanoseconds since
//!   2001-01-01), printed with microseconds.
//! - an attached picture's stream tags `filename`, `mimetype` and `title`
//!   from its `AttachedFile`'s `FileName`, `FileMediaType` and
//!   `FileDescription` (the pictures are the image attachments, in order).

use mediaslice::format::mkv::ebml;
use mediaslice::{SliceSource, Source};

/// The most bytes of one `Info` or `Tracks` element read.
const MAX_ELEMENT: u64 = 4 << 20;
/// The most top-level elements looked at inside the Segment.
const MAX_TOP: usize = 10_000;

const SEGMENT: u64 = 0x1853_8067;
const INFO: u64 = 0x1549_A966;
const TRACKS: u64 = 0x1654_AE6B;
const DATE_UTC: u64 = 0x4461;
const TRACK_ENTRY: u64 = 0xAE;
const TRACK_NUMBER: u64 = 0xD7;
const LANGUAGE: u64 = 0x0022_B59C;
const VIDEO: u64 = 0xE0;
const DEFAULT_DURATION: u64 = 0x0023_E383;
const PIXEL_WIDTH: u64 = 0xB0;
const PIXEL_HEIGHT: u64 = 0xBA;
const DISPLAY_WIDTH: u64 = 0x54B0;
const DISPLAY_HEIGHT: u64 = 0x54BA;
const DISPLAY_UNIT: u64 = 0x54B2;
const STEREO_MODE: u64 = 0x53B8;
const TRACK_UID: u64 = 0x73C5;
const TAGS: u64 = 0x1254_C367;
const TAG: u64 = 0x7373;
const TARGETS: u64 = 0x63C0;
const TAG_TRACK_UID: u64 = 0x63C5;
const SIMPLE_TAG: u64 = 0x67C8;
const TAG_NAME: u64 = 0x45A3;
const TAG_LANGUAGE: u64 = 0x447A;
const TAG_STRING: u64 = 0x4487;
const CROP_BOTTOM: u64 = 0x54AA;
const CROP_TOP: u64 = 0x54BB;
const CROP_LEFT: u64 = 0x54CC;
const CROP_RIGHT: u64 = 0x54DD;
const ATTACHMENTS: u64 = 0x1941_A469;
const ATTACHED_FILE: u64 = 0x61A7;
const FILE_NAME: u64 = 0x466E;
const FILE_MEDIA_TYPE: u64 = 0x4660;
const FILE_DESCRIPTION: u64 = 0x467E;
/// The most attached files looked at, and the most children of one.
const MAX_ATTACHMENTS: usize = 256;
/// The longest file name, media type or description read.
const MAX_FILE_TEXT: u64 = 4096;

/// One `AttachedFile`'s names (its data is not read).
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Attachment {
    /// `FileName`.
    pub name: String,
    /// `FileMediaType`.
    pub mime: String,
    /// `FileDescription`, when present.
    pub description: Option<String>,
}

/// One `TrackEntry`'s facts.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Entry {
    /// `TrackNumber`.
    pub number: u64,
    /// `Language`, when present.
    pub language: Option<String>,
    /// The sample aspect ratio ffmpeg derives, when the track is video.
    pub sar: Option<(u64, u64)>,
    /// `DefaultDuration` in nanoseconds.
    pub default_duration: Option<u64>,
    /// `TrackUID`.
    pub uid: u64,
    /// `StereoMode`.
    pub stereo_mode: u64,
}

/// The facts of one Segment.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Segment {
    /// `DateUTC`: nanoseconds since 2001-01-01T00:00:00 UTC.
    pub date_utc: Option<i64>,
    /// The track entries.
    pub tracks: Vec<Entry>,
    /// The simple tags, named as ffmpeg names them (`NAME`, or `NAME-lang`
    /// in a language other than "und"): (the `TagTrackUID`, or `None` for
    /// the Segment; name; value).
    pub lang_tags: Vec<(Option<u64>, String, String)>,
    /// The attached files, in order.
    pub attachments: Vec<Attachment>,
}

impl Segment {
    /// The entry with `TrackNumber` `n`.
    pub fn track(&self, n: u32) -> Option<&Entry> {
        self.tracks.iter().find(|t| t.number == u64::from(n))
    }
}

/// The elements of `b`: (id, body); an unknown size runs to the end of
/// `b`, a body is cut at it. Headers are read by [`header`].
fn children(b: &[u8]) -> impl Iterator<Item = (u64, &[u8])> {
    let mut src = SliceSource::new(b);
    let mut off = 0usize;
    core::iter::from_fn(move || {
        let (id, size, hl) = header(&mut src, off as u64)?;
        let start = off + hl as usize;
        let end = if size == u64::MAX {
            b.len()
        } else {
            start.checked_add(usize::try_from(size).ok()?)?
        };
        let body = b.get(start..end.min(b.len()))?;
        off = end;
        Some((id, body))
    })
}

fn uint(b: &[u8]) -> u64 {
    b.iter().take(8).fold(0, |v, &c| (v << 8) | u64::from(c))
}

/// Reads an element header at `off` of `src` with the demuxer's reader
/// (`mediaslice::format::mkv::ebml`, RFC 8794 §5-§6): (id, size or
/// `u64::MAX` when unknown, header length).
fn header<S: Source>(src: &mut S, off: u64) -> Option<(u64, u64, u64)> {
    let e = ebml::read_element(src, off, src.len()).ok()?;
    Some((e.id, e.size.unwrap_or(u64::MAX), e.data - e.start))
}

/// Reads the Segment facts of a Matroska / WebM input.
pub fn read<S: Source>(src: &mut S) -> Option<Segment> {
    let len = src.len();
    let mut off = 0u64;
    // The EBML header, then the Segment.
    let (seg_start, seg_end) = loop {
        let (id, size, hl) = header(src, off)?;
        if id == SEGMENT {
            let end = if size == u64::MAX {
                len
            } else {
                (off + hl).saturating_add(size).min(len)
            };
            break (off + hl, end);
        }
        off = off.checked_add(hl)?.checked_add(size)?;
        if off >= len {
            return None;
        }
    };
    let mut seg = Segment::default();
    let mut off = seg_start;
    for _ in 0..MAX_TOP {
        if off >= seg_end {
            break;
        }
        let Some((id, size, hl)) = header(src, off) else {
            break;
        };
        if size == u64::MAX {
            // An unknown-size element (a live Cluster) hides what follows.
            break;
        }
        if id == ATTACHMENTS {
            seg.attachments = attachments(src, off + hl, (off + hl).saturating_add(size).min(seg_end));
        }
        if (id == INFO || id == TRACKS || id == TAGS) && size <= MAX_ELEMENT {
            let mut body = vec![0u8; usize::try_from(size).ok()?];
            if src.read_exact_at(off + hl, &mut body).is_err() {
                break;
            }
            if id == INFO {
                for (c, v) in children(&body) {
                    if c == DATE_UTC && v.len() == 8 {
                        seg.date_utc = Some(uint(v) as i64);
                    }
                }
            } else if id == TAGS {
                for (c, tag) in children(&body) {
                    if c == TAG {
                        lang_tags(tag, &mut seg.lang_tags);
                    }
                }
            } else {
                seg.tracks = children(&body)
                    .filter(|(c, _)| *c == TRACK_ENTRY)
                    .map(|(_, e)| entry(e))
                    .collect();
            }
        }
        off = match off.checked_add(hl).and_then(|o| o.checked_add(size)) {
            Some(o) => o,
            None => break,
        };
    }
    Some(seg)
}

/// The attached files of the `Attachments` element between `start` and
/// `end`, walked header by header so that no file's data is read.
fn attachments<S: Source>(src: &mut S, start: u64, end: u64) -> Vec<Attachment> {
    let mut out = Vec::new();
    let mut off = start;
    while off < end && out.len() < MAX_ATTACHMENTS {
        let Some((id, size, hl)) = header(src, off) else { break };
        let body = off + hl;
        let Some(next) = body.checked_add(size).filter(|&n| n <= end) else {
            break;
        };
        if id == ATTACHED_FILE {
            let mut a = Attachment::default();
            let mut at = body;
            for _ in 0..MAX_ATTACHMENTS {
                if at >= next {
                    break;
                }
                let Some((cid, csize, chl)) = header(src, at) else {
                    break;
                };
                let Some(cnext) = (at + chl).checked_add(csize).filter(|&n| n <= next) else {
                    break;
                };
                if matches!(cid, FILE_NAME | FILE_MEDIA_TYPE | FILE_DESCRIPTION) && csize <= MAX_FILE_TEXT {
                    let mut text = vec![0u8; usize::try_from(csize).unwrap_or(0)];
                    if src.read_exact_at(at + chl, &mut text).is_ok() {
                        let end = text.iter().position(|&b| b == 0).unwrap_or(text.len());
                        let t = String::from_utf8_lossy(text.get(..end).unwrap_or(&[])).into_owned();
                        match cid {
                            FILE_NAME => a.name = t,
                            FILE_MEDIA_TYPE => a.mime = t,
                            _ => a.description = Some(t),
                        }
                    }
                }
                at = cnext;
            }
            out.push(a);
        }
        off = next;
    }
    out
}

/// The simple tags of a `Tag` under their names as written, and
/// `NAME-lang` when their `TagLanguage` is not "und" (the default), as
/// ffmpeg's `matroska_convert_tag` sets them.
fn lang_tags(tag: &[u8], out: &mut Vec<(Option<u64>, String, String)>) {
    let mut uids = Vec::new();
    for (c, v) in children(tag) {
        if c == TARGETS {
            uids.extend(children(v).filter(|(i, _)| *i == TAG_TRACK_UID).map(|(_, u)| uint(u)));
        }
    }
    for (c, v) in children(tag) {
        if c != SIMPLE_TAG {
            continue;
        }
        let (mut name, mut lang, mut value) = (None, None, None);
        for (i, b) in children(v) {
            let text = || String::from_utf8_lossy(b.split(|&x| x == 0).next().unwrap_or(b)).into_owned();
            match i {
                TAG_NAME => name = Some(text()),
                TAG_LANGUAGE => lang = Some(text()),
                TAG_STRING => value = Some(text()),
                _ => {}
            }
        }
        let (Some(n), Some(v)) = (name, value) else {
            continue;
        };
        let l = lang.unwrap_or_else(|| "und".to_owned());
        let key = if l == "und" { n } else { format!("{n}-{l}") };
        if uids.is_empty() {
            out.push((None, key, v));
        } else {
            for &u in &uids {
                out.push((Some(u), key.clone(), v.clone()));
            }
        }
    }
}

fn entry(b: &[u8]) -> Entry {
    let mut e = Entry::default();
    for (id, v) in children(b) {
        match id {
            TRACK_NUMBER => e.number = uint(v),
            TRACK_UID => e.uid = uint(v),
            LANGUAGE => {
                let s = v.split(|&c| c == 0).next().unwrap_or(v);
                e.language = Some(String::from_utf8_lossy(s).into_owned());
            }
            VIDEO => {
                e.sar = sar(v);
                e.stereo_mode = children(v).find(|(i, _)| *i == STEREO_MODE).map_or(0, |(_, m)| uint(m));
            }
            DEFAULT_DURATION => e.default_duration = Some(uint(v)).filter(|&d| d > 0),
            _ => {}
        }
    }
    e
}

/// ffmpeg's `stereo_mode` tag for a `StereoMode` (none for 0, mono).
pub fn stereo_mode_name(mode: u64) -> Option<&'static str> {
    [
        "left_right",
        "bottom_top",
        "top_bottom",
        "checkerboard_rl",
        "checkerboard_lr",
        "row_interleaved_rl",
        "row_interleaved_lr",
        "col_interleaved_rl",
        "col_interleaved_lr",
        "anaglyph_cyan_red",
        "right_left",
        "anaglyph_green_magenta",
        "block_lr",
        "block_rl",
    ]
    .get(usize::try_from(mode.checked_sub(1)?).ok()?)
    .copied()
}

/// ffmpeg's sample aspect ratio of a `Video` element.
fn sar(b: &[u8]) -> Option<(u64, u64)> {
    let (mut pw, mut ph, mut dw, mut dh, mut unit) = (0u64, 0u64, None, None, 0u64);
    let mut crop = [0u64; 4];
    let mut stereo = 0u64;
    for (id, v) in children(b) {
        match id {
            PIXEL_WIDTH => pw = uint(v),
            PIXEL_HEIGHT => ph = uint(v),
            DISPLAY_WIDTH => dw = Some(uint(v)),
            DISPLAY_HEIGHT => dh = Some(uint(v)),
            DISPLAY_UNIT => unit = uint(v),
            STEREO_MODE => stereo = uint(v),
            CROP_TOP => crop[0] = uint(v),
            CROP_BOTTOM => crop[1] = uint(v),
            CROP_LEFT => crop[2] = uint(v),
            CROP_RIGHT => crop[3] = uint(v),
            _ => {}
        }
    }
    let w = pw.checked_sub(crop[2] + crop[3])?;
    let h = ph.checked_sub(crop[0] + crop[1])?;
    let (dw, dh) = (dw.unwrap_or(w), dh.unwrap_or(h));
    if unit != 0 || w == 0 || h == 0 || dw == 0 || dh == 0 {
        return None;
    }
    // Side by side (1, 11) holds two pictures across, top-bottom (2, 3)
    // two down: ffmpeg doubles that display dimension.
    let (wm, hm) = match stereo {
        1 | 11 => (2, 1),
        2 | 3 => (1, 2),
        _ => (1, 1),
    };
    let (n, d) = (h.checked_mul(dw)?.checked_mul(wm)?, w.checked_mul(dh)?.checked_mul(hm)?);
    Some(super::rates::reduce(n, d, i32::MAX as u64))
}

/// `DateUTC` as ffmpeg prints a `creation_time`.
pub fn creation_time(ns_2001: i64) -> Option<String> {
    // 2001-01-01 is 978307200 s after 1970-01-01.
    let us = ns_2001.div_euclid(1000).checked_add(978_307_200_000_000)?;
    let (secs, micros) = (us.div_euclid(1_000_000), us.rem_euclid(1_000_000));
    let base = super::mp4::creation_time(u64::try_from(secs).ok()?.checked_add(2_082_844_800)?)?;
    Some(base.replace(".000000Z", &format!(".{micros:06}Z")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn vints_and_elements() {
        let h = [0x1A, 0x45, 0xDF, 0xA3, 0x81, 0, 0xEC, 0xFF];
        let mut src = SliceSource::new(&h);
        assert_eq!(header(&mut src, 0), Some((0x1A45_DFA3, 1, 5)));
        assert_eq!(header(&mut src, 6), Some((0xEC, u64::MAX, 2)));
        let b = [0xD7, 0x81, 0x02, 0xB0, 0x82, 0x05, 0x00];
        let v: Vec<(u64, Vec<u8>)> = children(&b).map(|(i, v)| (i, v.to_vec())).collect();
        assert_eq!(v, vec![(0xD7, vec![2]), (0xB0, vec![5, 0])]);
    }

    #[test]
    fn aspect_ratio_from_display_size() {
        // 720x576 shown as 1024x576: 64:45.
        let b = [
            0xB0, 0x82, 0x02, 0xD0, 0xBA, 0x82, 0x02, 0x40, 0x54, 0xB0, 0x82, 0x04, 0x00,
        ];
        assert_eq!(sar(&b), Some((64, 45)));
        let b = [0xB0, 0x82, 0x02, 0xD0, 0xBA, 0x82, 0x02, 0x40];
        assert_eq!(sar(&b), Some((1, 1)));
    }

    #[test]
    fn date_utc_prints_as_ffmpeg_does() {
        assert_eq!(creation_time(0).as_deref(), Some("2001-01-01T00:00:00.000000Z"));
        assert_eq!(creation_time(1_500_000).as_deref(), Some("2001-01-01T00:00:00.001500Z"));
    }
}
