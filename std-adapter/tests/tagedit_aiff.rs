//! AIFF tag editing beyond the round trip in `tagedit.rs`: the text chunks
//! (`NAME`, `AUTH`, `ANNO`) kept in step with the `ID3 ` chunk, a new
//! `ID3 ` chunk then edited in place, the `FORM` layout after each edit,
//! and malformed or damaged inputs refused with the file untouched.

use crate::tagedit_common;

use mediaslice_std::tagedit::{edit, EditMode, Edits};
use std::path::Path;
use tagedit_common::*;

/// The chunks of an AIFF file, checked: the `FORM` size is the file's
/// length less 8, and the chunks, each padded to an even length, end
/// exactly there.
fn layout(path: &Path) -> Vec<([u8; 4], Vec<u8>)> {
    let b = std::fs::read(path).unwrap();
    assert_eq!(&b[..4], b"FORM");
    let form = u32::from_be_bytes(b[4..8].try_into().unwrap()) as usize;
    assert_eq!(form + 8, b.len(), "{}: FORM size", path.display());
    let mut out = Vec::new();
    let mut at = 12;
    while at < b.len() {
        let size = u32::from_be_bytes(b[at + 4..at + 8].try_into().unwrap()) as usize;
        let id: [u8; 4] = b[at..at + 4].try_into().unwrap();
        out.push((id, b[at + 8..at + 8 + size].to_vec()));
        at += 8 + size + (size & 1);
    }
    assert_eq!(at, b.len(), "{}: chunks past the FORM", path.display());
    out
}

fn chunk<'a>(chunks: &'a [([u8; 4], Vec<u8>)], id: &[u8; 4]) -> Vec<&'a [u8]> {
    chunks
        .iter()
        .filter(|(i, _)| i == id)
        .map(|(_, b)| b.as_slice())
        .collect()
}

fn set(pairs: &[&str], remove: &[&str]) -> Edits {
    let mut e = Edits::default();
    for p in pairs {
        e.push_set(p).unwrap();
    }
    e.remove = remove.iter().map(|s| s.to_string()).collect();
    e
}

/// `pcm_s16be.aiff` with `AUTH` and `ANNO` chunks (odd lengths, padded)
/// after its `COMM` chunk.
fn with_text_chunks(path: &Path) {
    let b = std::fs::read(corpus("aiff/pcm_s16be.aiff")).unwrap();
    let comm_end = 12 + 8 + 18;
    let mut out = b[..comm_end].to_vec();
    for (id, text) in [(b"AUTH", &b"An author"[..]), (b"ANNO", b"Old note")] {
        out.extend_from_slice(id);
        out.extend_from_slice(&(text.len() as u32).to_be_bytes());
        out.extend_from_slice(text);
        if text.len() % 2 == 1 {
            out.push(0);
        }
    }
    out.extend_from_slice(&b[comm_end..]);
    let form = (out.len() - 8) as u32;
    out[4..8].copy_from_slice(&form.to_be_bytes());
    std::fs::write(path, out).unwrap();
}

#[test]
fn text_chunks_kept_in_step() {
    let dir = scratch("aiff-text");
    let f = dir.join("a.aiff");
    with_text_chunks(&f);
    let (pk, _) = packets(&f).unwrap();
    if let Some(ff) = ffprobe_tags(&f) {
        assert_eq!(ff.get("author").and_then(|v| v.as_str()), Some("An author"));
        assert_eq!(ff.get("comment").and_then(|v| v.as_str()), Some("Old note"));
    }
    // comment set: ANNO rewritten, a COMM frame in the new ID3 chunk; a
    // title set: no NAME chunk made (the ID3 tag holds it); author removed.
    let r = edit(&f, &set(&["comment=New note ✓", "title=T"], &["author"]), None).unwrap();
    assert_eq!(r.mode, EditMode::Copy);
    let c = layout(&f);
    assert_eq!(chunk(&c, b"ANNO"), vec!["New note ✓".as_bytes()]);
    assert!(chunk(&c, b"AUTH").is_empty() && chunk(&c, b"NAME").is_empty());
    assert_eq!(chunk(&c, b"ID3 ").len(), 1);
    assert_eq!(packets(&f).unwrap().0, pk, "packets changed");
    for tags in [Some(our_tags(&f)), ffprobe_tags(&f)].into_iter().flatten() {
        assert_eq!(tags.get("comment").and_then(|v| v.as_str()), Some("New note ✓"));
        assert_eq!(tags.get("title").and_then(|v| v.as_str()), Some("T"));
        assert!(!tags.contains_key("author"), "{tags:?}");
    }
    // The same byte length again: in place, ANNO and the tag both rewritten.
    let before = std::fs::read(&f).unwrap();
    let r = edit(&f, &set(&["comment=Now note ✓"], &[]), None).unwrap();
    assert_eq!(r.mode, EditMode::InPlace);
    assert_eq!(std::fs::read(&f).unwrap().len(), before.len());
    assert_eq!(chunk(&layout(&f), b"ANNO"), vec!["Now note ✓".as_bytes()]);
    if let Some(ff) = ffprobe_tags(&f) {
        assert_eq!(ff.get("comment").and_then(|v| v.as_str()), Some("Now note ✓"));
    }
    // comment removed: ANNO and the COMM frame both gone.
    edit(&f, &set(&[], &["comment"]), None).unwrap();
    assert!(chunk(&layout(&f), b"ANNO").is_empty());
    for tags in [Some(our_tags(&f)), ffprobe_tags(&f)].into_iter().flatten() {
        assert!(!tags.contains_key("comment"), "{tags:?}");
    }
    assert_eq!(packets(&f).unwrap().0, pk, "packets changed");
    // The NAME chunk of the corpus file follows its title.
    let g = dir.join("b.aiff");
    std::fs::copy(corpus("aiff/pcm_s24be_id3.aiff"), &g).unwrap();
    edit(&g, &set(&["title=Odd"], &[]), None).unwrap();
    assert_eq!(chunk(&layout(&g), b"NAME"), vec![&b"Odd"[..]]);
    if let Some(ff) = ffprobe_tags(&g) {
        assert_eq!(ff.get("title").and_then(|v| v.as_str()), Some("Odd"));
        assert_eq!(ff.get("artist").and_then(|v| v.as_str()), Some("Mediaslice Artist"));
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn new_id3_chunk_then_in_place() {
    let dir = scratch("aiff-new-id3");
    for name in ["pcm_s16be.aiff", "pcm_alaw.aifc"] {
        let f = dir.join(name);
        std::fs::copy(corpus(&format!("aiff/{name}")), &f).unwrap();
        let (pk, _) = packets(&f).unwrap();
        assert_eq!(edit(&f, &edits(), None).unwrap().mode, EditMode::Copy);
        let c = layout(&f);
        assert_eq!(
            c.last().map(|(id, _)| id),
            Some(b"ID3 "),
            "{name}: the ID3 chunk is last"
        );
        let len = std::fs::metadata(&f).unwrap().len();
        let r = edit(&f, &set(&["title=Second", "genre=Test"], &["album"]), None).unwrap();
        assert_eq!(r.mode, EditMode::InPlace, "{name}");
        assert_eq!(std::fs::metadata(&f).unwrap().len(), len);
        layout(&f);
        assert_eq!(packets(&f).unwrap().0, pk, "{name}: packets changed");
        for tags in [Some(our_tags(&f)), ffprobe_tags(&f)].into_iter().flatten() {
            assert_eq!(tags.get("title").and_then(|v| v.as_str()), Some("Second"));
            assert_eq!(tags.get("genre").and_then(|v| v.as_str()), Some("Test"));
            assert_eq!(tags.get("artist").and_then(|v| v.as_str()), Some("Ärtist"));
            assert!(!tags.contains_key("album"), "{name}: {tags:?}");
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn malformed_aiff_is_refused() {
    let dir = scratch("aiff-malformed");
    let f = dir.join("a.aiff");
    let good = std::fs::read(corpus("aiff/pcm_s24be_id3.aiff")).unwrap();
    let id3 = good.windows(4).rposition(|w| w == b"ID3 ").unwrap();
    // The FORM size past the end of the file (the file cut short).
    std::fs::write(&f, &good[..good.len() - 20]).unwrap();
    assert_refused(&f, None);
    assert_refused(&f, Some(&dir.join("out.aiff")));
    // A chunk past the FORM: the ID3 chunk's size made larger.
    let mut bad = good.clone();
    bad[id3 + 4..id3 + 8].copy_from_slice(&1000u32.to_be_bytes());
    std::fs::write(&f, &bad).unwrap();
    assert_refused(&f, None);
    // A malformed tag: a frame ID not A-Z0-9; a tag size past its chunk;
    // version 2.2; no ID3 header in the ID3 chunk.
    for (at, byte) in [(id3 + 18, b'a'), (id3 + 16, 0x7f), (id3 + 11, 2), (id3 + 8, b'X')] {
        let mut bad = good.clone();
        bad[at] = byte;
        std::fs::write(&f, &bad).unwrap();
        assert_refused(&f, None);
        assert_refused(&f, Some(&dir.join("out.aiff")));
    }
    // Two ID3 chunks (ffmpeg reads both): not edited.
    let mut bad = good.clone();
    bad.extend_from_slice(&good[id3..]);
    let form = (bad.len() - 8) as u32;
    bad[4..8].copy_from_slice(&form.to_be_bytes());
    std::fs::write(&f, &bad).unwrap();
    assert_refused(&f, None);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn damaged_aiff_never_panics() {
    let dir = scratch("aiff-damaged-src");
    // The corpus files, and one with an ID3 chunk and text chunks made by
    // an edit (the damage reaches the ID3 chunk at the end).
    let f = dir.join("edited.aiff");
    with_text_chunks(&f);
    edit(&f, &edits(), None).unwrap();
    let inputs = files("aiff")
        .into_iter()
        .filter(|p| p.starts_with(corpus("aiff")))
        .chain([f]);
    damage_never_panics("aiff-damaged", inputs);
    let _ = std::fs::remove_dir_all(&dir);
}
