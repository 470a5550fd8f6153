//! The iTunes item list, `moov/udta/meta/ilst` (Apple's QuickTime File
//! Format, "Metadata": item atoms holding a `data` atom): items of touched
//! fields replaced, the rest kept byte for byte, and the boxes that hold
//! the list made when missing (`udta`, `meta` with an `mdir` handler).

use super::mp4_box::{box_at, child, children, make, splice, BoxAt};
use super::{malformed, Edits};

/// `data` atom type indicators: UTF-8 text, and implicit (binary).
const UTF8: u32 = 1;
const IMPLICIT: u32 = 0;

/// The item type a field is written as (the `©` is byte 0xA9).
fn item_kind(name: &str) -> Option<[u8; 4]> {
    let k = match name.to_ascii_lowercase().as_str() {
        "title" => *b"\xa9nam",
        "artist" => *b"\xa9ART",
        "album" => *b"\xa9alb",
        "date" => *b"\xa9day",
        "genre" => *b"\xa9gen",
        "comment" => *b"\xa9cmt",
        "album_artist" => *b"aART",
        "track" => *b"trkn",
        // Any other name of four ISO-8859-1 characters is an item type.
        _ => {
            let v: Vec<u8> = name
                .chars()
                .map(|c| u8::try_from(u32::from(c)).ok())
                .collect::<Option<_>>()?;
            return v.try_into().ok();
        }
    };
    Some(k)
}

/// The `name` of a freeform (`----`) item.
fn freeform_name(item: &[u8]) -> Option<String> {
    let b = box_at(item, 0, item.len()).ok()?;
    let name = children(item, b.body(), b.end)
        .ok()?
        .into_iter()
        .find(|c| &c.kind == b"name")?;
    Some(String::from_utf8_lossy(item.get(name.body() + 4..name.end)?).into_owned())
}

/// True when `item` (its raw bytes) holds field `name`.
fn matches(item: &[u8], name: &str) -> bool {
    let Some(kind) = item.get(4..8) else {
        return false;
    };
    let Ok(kind) = <[u8; 4]>::try_from(kind) else {
        return false;
    };
    match item_kind(name) {
        Some(k) if k == kind => true,
        // A genre may also be stored as an ID3v1 number (`gnre`).
        _ if same_field(&kind, name) => true,
        _ if &kind == b"----" => freeform_name(item).is_some_and(|n| n.eq_ignore_ascii_case(name)),
        _ => false,
    }
}

/// A `data` atom of type `kind` holding `value`.
fn data(kind: u32, value: &[u8]) -> std::io::Result<Vec<u8>> {
    let mut c = Vec::with_capacity(8 + value.len());
    c.extend_from_slice(&kind.to_be_bytes());
    c.extend_from_slice(&0u32.to_be_bytes());
    c.extend_from_slice(value);
    make(b"data", &c)
}

/// The item for `name` set to `value`. Errors: a track that is not `N` or
/// `N/TOTAL`.
fn new_item(name: &str, value: &str) -> std::io::Result<Vec<u8>> {
    match item_kind(name) {
        Some(k) if &k == b"trkn" => {
            let (n, total) = value.split_once('/').unwrap_or((value, "0"));
            let parse = |s: &str| s.trim().parse::<u16>().ok();
            let (Some(n), Some(total)) = (parse(n), parse(total)) else {
                return Err(malformed(format!("mp4 trkn: track {value:?} is not N or N/TOTAL")));
            };
            let mut v = vec![0, 0];
            v.extend_from_slice(&n.to_be_bytes());
            v.extend_from_slice(&total.to_be_bytes());
            v.extend_from_slice(&[0, 0]);
            make(&k, &data(IMPLICIT, &v)?)
        }
        Some(k) => make(&k, &data(UTF8, value.as_bytes())?),
        None => {
            let full = |s: &str| [&[0u8; 4][..], s.as_bytes()].concat();
            let mut c = make(b"mean", &full("com.apple.iTunes"))?;
            c.extend(make(b"name", &full(name))?);
            c.extend(data(UTF8, value.as_bytes())?);
            make(b"----", &c)
        }
    }
}

/// A `meta` full box with an `mdir` handler around `ilst`.
fn new_meta(ilst: &[u8]) -> std::io::Result<Vec<u8>> {
    let mut hdlr = vec![0u8; 8];
    hdlr.extend_from_slice(b"mdirappl");
    hdlr.extend_from_slice(&[0u8; 9]);
    let mut c = vec![0u8; 4];
    c.extend(make(b"hdlr", &hdlr)?);
    c.extend_from_slice(ilst);
    make(b"meta", &c)
}

/// Bytes before a `meta` box's children: 4 for the ISO full box (version
/// and flags, zero), 0 for QuickTime's plain box (a child's size first).
fn meta_skip(buf: &[u8], meta: &BoxAt) -> usize {
    match buf.get(meta.body()..meta.body() + 4) {
        Some([0, 0, 0, 0]) => 4,
        _ => 0,
    }
}

/// The `moov` box `moov` (whole, header included) with `edits` applied to
/// its item list. Errors: a malformed box on the way, a bad track value.
pub(super) fn edit_moov(moov: &[u8], edits: &Edits) -> std::io::Result<Vec<u8>> {
    let mut m = moov.to_vec();
    let top = box_at(&m, 0, m.len())?;
    if let Some(qt) = child(&m, &top, 0, b"meta")? {
        if child(&m, &qt, meta_skip(&m, &qt), b"keys")?.is_some() {
            return Err(std::io::Error::new(
                std::io::ErrorKind::Unsupported,
                "mp4: QuickTime metadata (moov/meta with keys) is not edited yet",
            ));
        }
    }
    let udta = child(&m, &top, 0, b"udta")?;
    let meta = match &udta {
        Some(u) => child(&m, u, 0, b"meta")?,
        None => None,
    };
    let ilst = match &meta {
        Some(mt) => child(&m, mt, meta_skip(&m, mt), b"ilst")?,
        None => None,
    };
    let mut items: Vec<Vec<u8>> = match &ilst {
        Some(l) => children(&m, l.body(), l.end)?
            .iter()
            .map(|b| m.get(b.start..b.end).unwrap_or(&[]).to_vec())
            .collect(),
        None => Vec::new(),
    };
    for name in edits.touched() {
        let first = items.iter().position(|i| matches(i, name));
        items.retain(|i| !matches(i, name));
        if let Some(value) = edits.value_of(name) {
            items.insert(first.unwrap_or(items.len()).min(items.len()), new_item(name, value)?);
        }
    }
    // Cover art: the whole `covr` item (it has no picture types), one
    // `data` atom of type 13 (JPEG) or 14 (PNG).
    if edits.touches_pictures() {
        let covr = |i: &Vec<u8>| i.get(4..8) == Some(b"covr");
        let first = items.iter().position(covr);
        items.retain(|i| !covr(i));
        if let Some(p) = &edits.picture {
            let item = make(b"covr", &data(p.kind.mp4_data_type(), &p.data)?)?;
            items.insert(first.unwrap_or(items.len()).min(items.len()), item);
        }
    }
    let list = make(b"ilst", &items.concat())?;
    let meta_bytes = match (&meta, &ilst) {
        (Some(mt), found) => {
            let mut b = m.get(mt.start..mt.end).unwrap_or(&[]).to_vec();
            let own = BoxAt {
                start: 0,
                end: b.len(),
                ..*mt
            };
            let (from, to) = found.map_or((own.end, own.end), |l| (l.start - mt.start, l.end - mt.start));
            splice(&mut b, &[own], from, to, &list)?;
            b
        }
        (None, _) => new_meta(&list)?,
    };
    let Some(u) = udta else {
        splice(&mut m, &[top], top.end, top.end, &make(b"udta", &meta_bytes)?)?;
        return Ok(m);
    };
    // The new udta: its meta replaced, the QuickTime and 3GPP user-data
    // boxes of a touched field dropped (the field now lives in ilst only).
    let mut content = Vec::new();
    for c in children(&m, u.body(), u.end)? {
        if Some(c) == meta {
            content.extend_from_slice(&meta_bytes);
        } else if !edits.touched().iter().any(|n| same_field(&c.kind, n)) {
            content.extend_from_slice(m.get(c.start..c.end).unwrap_or(&[]));
        }
    }
    if meta.is_none() {
        content.extend_from_slice(&meta_bytes);
    }
    splice(&mut m, &[top], u.start, u.end, &make(b"udta", &content)?)?;
    Ok(m)
}

/// True when atom `kind` holds field `name`, in `ilst` or in `udta`
/// itself (QuickTime's user-data text, `©nam`...; 3GPP assets, `titl`,
/// `perf`, `auth`, `albm`, `yrrc`, `gnre`, 3GPP TS 26.244 §8), by the
/// names ffmpeg gives them (`mov_read_udta_string`; core's private
/// `mp4::tags::atom_name` holds the same table for reading).
fn same_field(kind: &[u8; 4], name: &str) -> bool {
    let atoms: &[&[u8; 4]] = match name.to_ascii_lowercase().as_str() {
        "title" => &[b"\xa9nam", b"titl"],
        "artist" => &[b"\xa9ART", b"perf", b"auth", b"\xa9aut"],
        "album" => &[b"\xa9alb", b"albm"],
        "date" => &[b"\xa9day", b"yrrc"],
        "genre" => &[b"\xa9gen", b"gnre"],
        "comment" => &[b"\xa9cmt", b"\xa9inf"],
        "album_artist" => &[b"aART"],
        "track" => &[b"trkn"],
        _ => &[],
    };
    atoms.contains(&kind)
}
