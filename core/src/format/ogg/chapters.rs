//! Chapters from Vorbis comments (the OGM convention ffmpeg reads):
//! `CHAPTERxxx=HH:MM:SS.mmm` starts chapter `xxx`, `CHAPTERxxxNAME=...`
//! names it. Comments of every stream are walked, in stream order.
//!
//! As ffmpeg's `ogm_chapter`: the key is `CHAPTER` (any case) and up to
//! three digits, 9 or 10 bytes long for a time; a longer key ending in
//! `NAME` is a title. Times are `h:m:s.ms` with up to 2, 2, 2 and 3 digits
//! (so `.5` is 5 ms, as ffmpeg reads it). A title is looked for among the
//! entries after its time entry up to the next time entry (ffmpeg also
//! takes one further on; the last one found wins, as in ffmpeg). Chapters
//! have no end here.

use super::logical::Stream;
use super::tags::TagWalk;
use crate::chapters::Chapter;
use crate::error::Result;
use crate::format::traits::Context;
use crate::source::Source;
use crate::tags::{Tag, TagKey, TagValue};
use crate::types::Rational;

const MILLISECONDS: Rational = Rational { num: 1, den: 1000 };

/// What a comment is to the chapter walk.
#[derive(Debug, PartialEq, Eq)]
enum Entry {
    /// `CHAPTERxxx`: chapter `xxx` starts at this many milliseconds.
    Time(u64, u64),
    /// `CHAPTERxxxNAME`: chapter `xxx`'s title.
    Name(u64),
}

/// The next chapter of the comments walked by `walk`.
///
/// Errors: those of the tag walk (a read error, a truncated page).
pub(super) fn next<'s, S: Source>(
    walk: &mut TagWalk,
    streams: &[Stream],
    src: &'s mut S,
    ctx: &Context,
) -> Result<Option<Chapter<'s>>> {
    loop {
        let Some(t) = walk.next(streams, &mut *src, ctx)? else {
            return Ok(None);
        };
        let Some(Entry::Time(num, start)) = entry(&t) else {
            continue;
        };
        let mut ahead = *walk;
        let mut name_at = None;
        loop {
            let before = ahead;
            let Some(t) = ahead.next(streams, &mut *src, ctx)? else {
                break;
            };
            match entry(&t) {
                Some(Entry::Time(..)) => break,
                Some(Entry::Name(n)) if n == num => name_at = Some(before),
                _ => {}
            }
        }
        let title = match name_at {
            Some(mut w) => match w.next(streams, src, ctx)? {
                Some(Tag {
                    value: TagValue::Text(s),
                    ..
                }) => Some(s),
                _ => None,
            },
            None => None,
        };
        return Ok(Some(Chapter {
            id: num,
            time_base: MILLISECONDS,
            start,
            end: None,
            title,
        }));
    }
}

/// The chapter entry a comment is, if any.
fn entry(t: &Tag<'_>) -> Option<Entry> {
    let TagKey::Text(key) = t.key else { return None };
    let k = key.as_bytes();
    let prefix = k.get(..7)?;
    if k.len() < 9 || !prefix.eq_ignore_ascii_case(b"CHAPTER") {
        return None;
    }
    let rest = k.get(7..)?;
    let (num, _) = digits(rest, 3)?;
    if k.len() <= 10 {
        let TagValue::Text(v) = t.value else { return None };
        return time(v.as_bytes()).map(|ms| Entry::Time(num, ms));
    }
    let tail = k.get(k.len() - 4..)?;
    tail.eq_ignore_ascii_case(b"NAME").then_some(Entry::Name(num))
}

/// `h:m:s.ms` as ffmpeg's `%02d:%02d:%02d.%03d`, in milliseconds.
fn time(v: &[u8]) -> Option<u64> {
    let (h, n) = digits(v, 2)?;
    let v = v.get(n..)?.strip_prefix(b":")?;
    let (m, n) = digits(v, 2)?;
    let v = v.get(n..)?.strip_prefix(b":")?;
    let (s, n) = digits(v, 2)?;
    let v = v.get(n..)?.strip_prefix(b".")?;
    let (ms, _) = digits(v, 3)?;
    Some(ms + 1000 * (s + 60 * (m + 60 * h)))
}

/// The value of the 1 to `max` decimal digits at the start of `b`, and
/// their count.
fn digits(b: &[u8], max: usize) -> Option<(u64, usize)> {
    let n = b.iter().take(max).take_while(|c| c.is_ascii_digit()).count();
    let v = b.get(..n)?.iter().fold(0u64, |v, &c| v * 10 + u64::from(c - b'0'));
    (n > 0).then_some((v, n))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tags::TagScope;

    fn t<'a>(k: &'a str, v: &'a str) -> Tag<'a> {
        Tag {
            scope: TagScope::Track(0),
            key: TagKey::Text(k),
            name: None,
            value: TagValue::Text(v),
        }
    }

    #[test]
    fn entries() {
        assert_eq!(entry(&t("CHAPTER001", "00:00:01.500")), Some(Entry::Time(1, 1500)));
        assert_eq!(entry(&t("chapter02", "01:02:03.4")), Some(Entry::Time(2, 3_723_004)));
        assert_eq!(entry(&t("CHAPTER001NAME", "Intro")), Some(Entry::Name(1)));
        assert_eq!(entry(&t("CHAPTER001", "1:2")), None);
        assert_eq!(entry(&t("CHAPTER001", "")), None);
        assert_eq!(entry(&t("CHAPTERX01", "00:00:00.000")), None);
        assert_eq!(entry(&t("CHAPTER001URL", "x")), None);
        assert_eq!(entry(&t("TITLE", "x")), None);
        assert_eq!(entry(&t("CHAPTER", "00:00:00.000")), None);
    }
}
