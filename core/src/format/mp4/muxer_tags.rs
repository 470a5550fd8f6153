//! File-level tags in an MP4 (`Muxer::add_tag`): `moov/udta/meta` with an
//! `mdir` handler and an `ilst` of iTunes items, as ffmpeg's mov muxer
//! writes them for the MP4 brands. Each item is an atom named by its
//! four-character code holding one `data` box (type 1, UTF-8 text; type 0
//! for `trkn`/`disk`, the pair of 16-bit numbers ffmpeg writes). A
//! QuickTime movie (`qt  `) gets QuickTime's `udta` text atoms instead
//! (QuickTime File Format, "User data atoms"): `©nam`, `©ART`, ... each a
//! 16-bit text length, a 16-bit packed language (`und`, as ffmpeg writes
//! it) and the text, in the order and with the names ffmpeg's mov muxer
//! uses (a comment goes in both `©des` and `©cmt`). Chapters
//! (`Muxer::add_chapter`) go in a Nero `chpl` box in the same `udta`, as
//! ffmpeg's mov muxer writes them (and its reader reads them): version 1,
//! 4 reserved bytes, a count, then per chapter its start in 100 ns units
//! and its title (at most 255 bytes, cut at a character boundary).

use super::muxer_box::BoxWriter;
use crate::error::Result;
use crate::format::mux_traits::MuxContext;
use crate::sink::Sink;

/// The iTunes item for a tag name (ffprobe's names), or `None` for one not
/// written (the writer's own `encoder`, names with no item).
fn item(name: &str) -> Option<[u8; 4]> {
    const ITEMS: [(&str, [u8; 4]); 12] = [
        ("title", *b"\xa9nam"),
        ("artist", *b"\xa9ART"),
        ("album_artist", *b"aART"),
        ("album", *b"\xa9alb"),
        ("date", *b"\xa9day"),
        ("genre", *b"\xa9gen"),
        ("comment", *b"\xa9cmt"),
        ("composer", *b"\xa9wrt"),
        ("copyright", *b"cprt"),
        ("description", *b"desc"),
        ("track", *b"trkn"),
        ("disc", *b"disk"),
    ];
    ITEMS
        .iter()
        .find(|(n, _)| n.eq_ignore_ascii_case(name))
        .map(|&(_, code)| code)
}

/// The QuickTime `udta` text atoms, in the order ffmpeg writes them, and
/// the tag each takes (ffprobe's names).
const QT_ATOMS: [([u8; 4], &str); 14] = [
    (*b"\xa9ART", "artist"),
    (*b"\xa9nam", "title"),
    (*b"\xa9aut", "author"),
    (*b"\xa9alb", "album"),
    (*b"\xa9day", "date"),
    (*b"\xa9swr", "encoder"),
    (*b"\xa9des", "comment"),
    (*b"\xa9cmt", "comment"),
    (*b"\xa9gen", "genre"),
    (*b"\xa9cpy", "copyright"),
    (*b"\xa9mak", "make"),
    (*b"\xa9mod", "model"),
    (*b"\xa9xyz", "location"),
    (*b"\xa9key", "keywords"),
];

/// `und` as a packed ISO 639-2/T code (ISO/IEC 14496-12 §8.4.2.3).
const UND: u16 = 0x55C4;

/// The value of the first tag of `ctx` named `name` (ASCII case ignored).
fn tag<'c>(ctx: &'c MuxContext, name: &str) -> Option<&'c str> {
    ctx.tags
        .iter()
        .find(|(n, _)| n.eq_ignore_ascii_case(name))
        .map(|(_, v)| v)
}

/// Whether the QuickTime atom of `(code, name)` is written: not the
/// writer's own `encoder` (as for MP4), and not an empty value.
fn qt_atom<'c>(ctx: &'c MuxContext, (code, name): &([u8; 4], &str)) -> Option<([u8; 4], &'c str)> {
    let v = tag(ctx, name).filter(|v| !v.is_empty() && *name != "encoder")?;
    // The text length is 16 bits.
    (v.len() <= usize::from(u16::MAX)).then_some((*code, v))
}

/// `n/total` (or `n`) as the 8-byte body of `trkn` (`disk` is 6 bytes):
/// two zero bytes, the number, the total, and for `trkn` two zero bytes.
fn pair(value: &str, trkn: bool) -> Option<([u8; 8], usize)> {
    let (n, total) = value.split_once('/').unwrap_or((value, "0"));
    let n: u16 = n.trim().parse().ok()?;
    let total: u16 = total.trim().parse().unwrap_or(0);
    let [a, b] = n.to_be_bytes();
    let [c, d] = total.to_be_bytes();
    Some(([0, 0, a, b, c, d, 0, 0], if trkn { 8 } else { 6 }))
}

/// Whether `ctx` holds a tag that [`write_udta`] writes (`qt`: for a
/// QuickTime movie).
fn any(ctx: &MuxContext, qt: bool) -> bool {
    if qt {
        QT_ATOMS.iter().any(|a| qt_atom(ctx, a).is_some())
    } else {
        ctx.tags.iter().any(|(n, _)| item(n).is_some())
    }
}

/// The first `max` bytes of `s` or fewer, ending at a character boundary.
#[cfg(feature = "chapters")]
fn cut(s: &str, max: usize) -> &str {
    let mut n = s.len().min(max);
    while !s.is_char_boundary(n) {
        n -= 1;
    }
    s.get(..n).unwrap_or("")
}

/// Whether `ctx` has chapters to write (never without the `chapters`
/// feature).
fn has_chapters(ctx: &MuxContext) -> bool {
    #[cfg(feature = "chapters")]
    return !ctx.chapters.is_empty();
    #[cfg(not(feature = "chapters"))]
    return {
        let _ = ctx;
        false
    };
}

/// Writes the Nero `chpl` box of the chapters of `ctx`.
#[cfg(feature = "chapters")]
fn write_chpl<K: Sink>(w: &mut BoxWriter<'_, K>, ctx: &MuxContext) -> Result<()> {
    w.open_full(b"chpl", 1, 0)?;
    w.u32(0)?;
    let count = ctx.chapters.iter().count().min(255);
    w.put(&[count as u8])?;
    for c in ctx.chapters.iter().take(count) {
        w.u64(c.start_ns / 100)?;
        let title = cut(c.title.unwrap_or(""), 255);
        w.put(&[title.len() as u8])?;
        w.put(title.as_bytes())?;
    }
    w.close()
}

/// Writes `udta` with the tags and chapters of `ctx` (nothing when there
/// is no tag with an item and no chapter); `qt`: a QuickTime movie's (text
/// atoms, then `chpl`, in ffmpeg's order).
pub(crate) fn write_udta<K: Sink>(w: &mut BoxWriter<'_, K>, ctx: &MuxContext, qt: bool) -> Result<()> {
    let chapters = has_chapters(ctx);
    if !any(ctx, qt) && !chapters {
        return Ok(());
    }
    w.open(b"udta")?;
    if qt {
        for (code, v) in QT_ATOMS.iter().filter_map(|a| qt_atom(ctx, a)) {
            w.open(&code)?;
            w.put(&u16::try_from(v.len()).unwrap_or(0).to_be_bytes())?;
            w.put(&UND.to_be_bytes())?;
            w.put(v.as_bytes())?;
            w.close()?;
        }
    }
    #[cfg(feature = "chapters")]
    if chapters {
        write_chpl(w, ctx)?;
    }
    if qt || !any(ctx, false) {
        return w.close();
    }
    w.open_full(b"meta", 0, 0)?;
    w.open_full(b"hdlr", 0, 0)?;
    w.u32(0)?;
    w.put(b"mdirappl")?;
    w.put(&[0; 9])?;
    w.close()?;
    w.open(b"ilst")?;
    for (name, value) in ctx.tags.iter() {
        let Some(code) = item(name) else { continue };
        let binary = match &code {
            b"trkn" | b"disk" => match pair(value, &code == b"trkn") {
                Some(p) => Some(p),
                None => continue,
            },
            _ => None,
        };
        w.open(&code)?;
        w.open(b"data")?;
        w.u32(if binary.is_some() { 0 } else { 1 })?;
        w.u32(0)?;
        match binary {
            Some((b, n)) => w.put(b.get(..n).unwrap_or(&[]))?,
            None => w.put(value.as_bytes())?,
        }
        w.close()?;
        w.close()?;
    }
    w.close()?; // ilst
    w.close()?; // meta
    w.close() // udta
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn items_and_number_pairs() {
        assert_eq!(item("Title"), Some(*b"\xa9nam"));
        assert_eq!(item("encoder"), None);
        assert_eq!(pair("3/12", true), Some(([0, 0, 0, 3, 0, 12, 0, 0], 8)));
        assert_eq!(pair("7", true), Some(([0, 0, 0, 7, 0, 0, 0, 0], 8)));
        assert_eq!(pair("1/2", false).map(|p| p.1), Some(6));
        assert_eq!(pair("x", true), None);
    }

    #[cfg(feature = "chapters")]
    #[test]
    fn cut_ends_at_a_character_boundary() {
        assert_eq!(cut("aé", 2), "a");
        assert_eq!(cut("aé", 3), "aé");
    }
}
