//! The `chapters` array of `probe --json --chapters`, as ffprobe 5.1's
//! `-show_chapters` prints it: the demuxer's chapters
//! ([`mediaslice::Demuxer::next_chapter`]) with ffmpeg's rules on top:
//!
//! * Matroska (`matroska_read_header`): a chapter with ChapterUID 0 is
//!   dropped, as is one that does not start after the previous kept one
//!   (unless that one started at 0); the id is the ChapterUID.
//! * Ogg (`ogm_chapter`): a second `CHAPTERxxx` with the same number moves
//!   the chapter (`avpriv_new_chapter` updates the chapter of that id).
//! * Every format (`avpriv_new_chapter`): a chapter that ends before it
//!   starts is dropped; its id is not given to another.
//! * Every format (`compute_chapters_end`): a chapter without an end ends
//!   where the next one (by start) starts, else at the end of the file
//!   (`start_time + duration` of the format), else at its own start.

use super::time_string;
use mediaslice::{Demuxer, FormatKind, Rational, Source};
use serde_json::{json, Map, Value};

/// Chapters read at most from one input.
pub const MAX_CHAPTERS: usize = 10_000;

/// One chapter copied out of the demuxer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChapterEntry {
    /// ffmpeg's `AVChapter.id`.
    pub id: i64,
    /// Unit of `start` and `end`.
    pub time_base: Rational,
    /// Start in `time_base`.
    pub start: i64,
    /// End in `time_base`, `None` until [`fill_ends`] computes it.
    pub end: Option<i64>,
    /// The title tag.
    pub title: Option<String>,
}

/// The chapters of `d` after ffmpeg's per-format rules (see the module
/// documentation), ends not yet filled. A read error ends the walk.
pub fn collect<S: Source>(d: &mut Demuxer<S>) -> Vec<ChapterEntry> {
    let kind = d.format();
    let mut out: Vec<ChapterEntry> = Vec::new();
    let mut max_start = 0u64;
    d.rewind_chapters();
    for _ in 0..MAX_CHAPTERS {
        let Ok(Some(c)) = d.next_chapter() else { break };
        if kind == FormatKind::Matroska {
            if c.id == 0 || !(max_start == 0 || c.start > max_start) {
                continue;
            }
            max_start = c.start;
        }
        let e = ChapterEntry {
            id: c.id as i64,
            time_base: c.time_base,
            start: c.start.min(i64::MAX as u64) as i64,
            end: c.end.map(|e| e.min(i64::MAX as u64) as i64),
            title: c.title.map(str::to_owned),
        };
        if e.end.is_some_and(|end| end < e.start) {
            continue;
        }
        if kind == FormatKind::Ogg {
            if let Some(old) = out.iter_mut().find(|o| o.id == e.id) {
                old.start = e.start;
                old.time_base = e.time_base;
                if e.title.is_some() {
                    old.title = e.title;
                }
                continue;
            }
        }
        out.push(e);
    }
    out
}

/// `a * b / c` rounded to nearest, halves away from zero
/// (`av_rescale_rnd(..., AV_ROUND_NEAR_INF)`), in i128.
fn rescale(a: i64, b: i128, c: i128) -> i64 {
    if c == 0 {
        return 0;
    }
    let n = i128::from(a) * b;
    let r = if n >= 0 { (n + c / 2) / c } else { (n - c / 2) / c };
    r.clamp(i128::from(i64::MIN), i128::from(i64::MAX)) as i64
}

/// `av_rescale_q(ts, from, to)`.
fn rescale_q(ts: i64, from: Rational, to: Rational) -> i64 {
    rescale(
        ts,
        i128::from(from.num) * i128::from(to.den),
        i128::from(from.den) * i128::from(to.num),
    )
}

/// ffmpeg's `compute_chapters_end`: `end_us` is the format's start time
/// plus duration in microseconds (`None` or 0 when unknown).
pub fn fill_ends(chapters: &mut [ChapterEntry], end_us: Option<i64>) {
    let mut order: Vec<usize> = (0..chapters.len()).collect();
    let secs = |c: &ChapterEntry| {
        (
            i128::from(c.start) * i128::from(c.time_base.num),
            i128::from(c.time_base.den),
        )
    };
    order.sort_by(|&a, &b| {
        let (Some(x), Some(y)) = (chapters.get(a), chapters.get(b)) else {
            return std::cmp::Ordering::Equal;
        };
        let ((na, da), (nb, db)) = (secs(x), secs(y));
        (na * db).cmp(&(nb * da)).then(x.id.cmp(&y.id))
    });
    let us = Rational { num: 1, den: 1_000_000 };
    for (k, &i) in order.iter().enumerate() {
        let next = order
            .get(k + 1)
            .and_then(|&j| chapters.get(j))
            .map(|n| (n.start, n.time_base));
        let Some(ch) = chapters.get_mut(i) else { continue };
        if ch.end.is_some() {
            continue;
        }
        let mut end = match end_us {
            Some(t) if t != 0 => rescale_q(t, us, ch.time_base),
            _ => i64::MAX,
        };
        if let Some((start, tb)) = next {
            let next_start = rescale_q(start, tb, ch.time_base);
            if next_start > ch.start && next_start < end {
                end = next_start;
            }
        }
        ch.end = Some(if end == i64::MAX || end < ch.start {
            ch.start
        } else {
            end
        });
    }
}

/// The chapters as ffprobe's JSON objects.
pub fn to_json(chapters: &[ChapterEntry]) -> Vec<Value> {
    chapters
        .iter()
        .map(|c| {
            let end = c.end.unwrap_or(c.start);
            let mut o = Map::new();
            o.insert("id".into(), json!(c.id));
            o.insert(
                "time_base".into(),
                json!(format!("{}/{}", c.time_base.num, c.time_base.den)),
            );
            o.insert("start".into(), json!(c.start));
            o.insert("start_time".into(), json!(time_string(c.start, c.time_base)));
            o.insert("end".into(), json!(end));
            o.insert("end_time".into(), json!(time_string(end, c.time_base)));
            if let Some(t) = &c.title {
                o.insert("tags".into(), json!({ "title": t }));
            }
            Value::Object(o)
        })
        .collect()
}

/// The number of an Ogg `CHAPTERxxx…` key as ffmpeg's `ogm_chapter` reads
/// it (`CHAPTER`, any case, then up to three digits), with whether the key
/// is a time entry (9 or 10 bytes) or a title (`…NAME`).
fn ogm_key(key: &str) -> Option<(u32, bool)> {
    let k = key.as_bytes();
    if k.len() < 9 || !k.get(..7)?.eq_ignore_ascii_case(b"CHAPTER") {
        return None;
    }
    let digits: Vec<u8> = k
        .get(7..)?
        .iter()
        .take(3)
        .take_while(|c| c.is_ascii_digit())
        .copied()
        .collect();
    let num = std::str::from_utf8(&digits).ok()?.parse().ok()?;
    if k.len() <= 10 {
        return Some((num, true));
    }
    k.get(k.len() - 4..)?
        .eq_ignore_ascii_case(b"NAME")
        .then_some((num, false))
}

/// Whether `v` reads as ffmpeg's `%02d:%02d:%02d.%03d` (1 to 2, 2, 2 and
/// 3 digits with their separators).
fn ogm_time(v: &str) -> bool {
    let mut rest = v.as_bytes();
    for (max, sep) in [(2, Some(b':')), (2, Some(b':')), (2, Some(b'.')), (3, None)] {
        let n = rest.iter().take(max).take_while(|c| c.is_ascii_digit()).count();
        if n == 0 {
            return false;
        }
        rest = rest.get(n..).unwrap_or(&[]);
        if let Some(sep) = sep {
            let Some((&c, tail)) = rest.split_first() else {
                return false;
            };
            if c != sep {
                return false;
            }
            rest = tail;
        }
    }
    true
}

/// Drops the Ogg stream tags that ffmpeg turns into chapters and so leaves
/// out of the stream's tags (`ogm_chapter` returns 1): a `CHAPTERxxx` time
/// that parses, and a `CHAPTERxxxNAME` of a chapter already made.
pub fn drop_ogm_chapter_tags(tags: &mut super::TagSet) {
    let mut made: Vec<u32> = Vec::new();
    for s in &mut tags.streams {
        s.retain(|(k, v)| match ogm_key(k) {
            Some((n, true)) if ogm_time(v) => {
                made.push(n);
                false
            }
            Some((n, false)) => !made.contains(&n),
            _ => true,
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ch(id: i64, den: u32, start: i64, end: Option<i64>) -> ChapterEntry {
        ChapterEntry {
            id,
            time_base: Rational { num: 1, den },
            start,
            end,
            title: None,
        }
    }

    #[test]
    fn ends_as_ffmpeg_computes_them() {
        let mut c = vec![
            ch(2, 1000, 1500, None),
            ch(1, 1000, 0, None),
            ch(3, 1000, 2000, Some(2500)),
        ];
        fill_ends(&mut c, Some(3_000_000));
        assert_eq!(c[0].end, Some(2000));
        assert_eq!(c[1].end, Some(1500));
        assert_eq!(c[2].end, Some(2500));
        // No duration: the last chapter ends at its start.
        let mut c = vec![ch(1, 1000, 0, None), ch(2, 1_000_000_000, 5_000_000_000, None)];
        fill_ends(&mut c, None);
        assert_eq!(c[0].end, Some(5000));
        assert_eq!(c[1].end, Some(5_000_000_000));
    }

    #[test]
    fn ogm_tags_dropped_as_ffmpeg_does() {
        let mut t = crate::ffprobe::TagSet::default();
        let kv = |k: &str, v: &str| (k.to_owned(), v.to_owned());
        t.streams.push(vec![
            kv("encoder", "x"),
            kv("CHAPTER003NAME", "before its time: kept"),
            kv("CHAPTER001", "00:00:01.500"),
            kv("CHAPTER001NAME", "Intro"),
            kv("CHAPTER002", "not a time"),
            kv("CHAPTER002NAME", "kept: no chapter 2"),
            kv("chapter03", "0:0:2.5"),
            kv("CHAPTER001URL", "kept"),
        ]);
        drop_ogm_chapter_tags(&mut t);
        let keys: Vec<&str> = t.streams[0].iter().map(|(k, _)| k.as_str()).collect();
        assert_eq!(
            keys,
            [
                "encoder",
                "CHAPTER003NAME",
                "CHAPTER002",
                "CHAPTER002NAME",
                "CHAPTER001URL"
            ]
        );
    }
}
