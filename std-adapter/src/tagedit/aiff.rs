//! AIFF and AIFF-C: the ID3v2 tag in the `ID3 ` chunk (written as 2.4 by
//! `id3v2`), and the text chunks (AIFF 1.3 §Text Chunks: `NAME`, `AUTH`,
//! `(c) `, `ANNO`) kept in step for the fields they carry (`title`,
//! `author`, `copyright`, `comment`, the keys ffmpeg reads them as). A
//! set field rewrites the first text chunk of its id (the others of that id
//! go) but creates none: the ID3 tag holds it; a removed field drops them.
//!
//! In place when the new tag fits the old `ID3 ` chunk (its padding) and
//! every rewritten text chunk keeps its padded length; else a copy with
//! the chunks in their order, the `ID3 ` chunk's tag given
//! [`COPY_PADDING`] bytes of padding (a new `ID3 ` chunk goes after the
//! last chunk, where ffmpeg writes it), every chunk padded to an even
//! length (EA IFF 85 pad byte) and the `FORM` size patched. Refused, the
//! file untouched: a `FORM` size past the file, a chunk past the `FORM`,
//! a malformed ID3 tag, an `ID3 ` chunk without one, two `ID3 ` chunks.

use super::iff::{self, Chunk};
use super::plan::{Piece, Plan};
use super::{id3v2, malformed, read_at, Edits};
use std::fs::File;

/// Padding after the frames of a tag written by a copy.
const COPY_PADDING: u64 = 1024;
/// The text chunk id that carries field `name` (ffmpeg's `aiffdec`
/// mapping).
fn text_id(name: &str) -> Option<[u8; 4]> {
    Some(*match name.to_ascii_lowercase().as_str() {
        "title" => b"NAME",
        "author" => b"AUTH",
        "copyright" => b"(c) ",
        "comment" => b"ANNO",
        _ => return None,
    })
}

/// A whole chunk: header, `body`, pad byte when the body is odd.
fn chunk_bytes(id: &[u8; 4], body: &[u8]) -> std::io::Result<Vec<u8>> {
    let size = u32::try_from(body.len()).map_err(|_| malformed("aiff: a chunk over 4 GiB"))?;
    let mut out = Vec::with_capacity(body.len() + 9);
    out.extend_from_slice(id);
    out.extend_from_slice(&size.to_be_bytes());
    out.extend_from_slice(body);
    if body.len() % 2 == 1 {
        out.push(0);
    }
    Ok(out)
}

/// The chunks of the `FORM` and where the `FORM` ends. Errors: no
/// `FORM`/`AIFF`/`AIFC` header, a `FORM` size past the file, a chunk past
/// the `FORM`.
fn walk(file: &File) -> std::io::Result<(u64, Vec<Chunk>)> {
    let head = read_at(file, 0, 12, "aiff: the FORM header")?;
    if head.get(..4) != Some(b"FORM") || !matches!(head.get(8..12), Some(b"AIFF" | b"AIFC")) {
        return Err(malformed("aiff: no FORM AIFF/AIFC header (AIFF 1.3 §Form Chunk)"));
    }
    let form_end = 8 + u64::from(u32::from_be_bytes([head[4], head[5], head[6], head[7]]));
    if form_end > file.metadata()?.len() {
        return Err(malformed(format!(
            "aiff: the FORM size says {form_end} bytes, past the end of the file"
        )));
    }
    let chunks = iff::walk(file, (12, form_end, form_end), true, "aiff", "the FORM")?;
    Ok((form_end, chunks))
}

/// What becomes of one chunk.
enum Fate {
    Keep,
    Drop,
    Replace(Vec<u8>),
}

/// The plan for `edits` on the AIFF or AIFF-C file `file`.
pub(super) fn plan(file: &File, edits: &Edits, in_place_ok: bool) -> std::io::Result<Plan> {
    let (form_end, chunks) = walk(file)?;
    let id3 = chunks.iter().copied().find(|c| &c.id == b"ID3 ");
    // ffmpeg reads every ID3 chunk, a later one's text frames winning.
    if chunks.iter().filter(|c| &c.id == b"ID3 ").count() > 1 {
        return Err(malformed("aiff: more than one ID3 chunk (not edited)"));
    }
    let tag = match id3 {
        Some(c) => Some(
            id3v2::read_within(file, c.pos + 8, c.size)
                .and_then(|t| t.ok_or_else(|| malformed("no ID3v2 header")))
                .map_err(|e| malformed(format!("aiff ID3 chunk: {e}")))?,
        ),
        None => None,
    };
    let mut frames = match &tag {
        Some(t) => id3v2::frames_v24(t)?,
        None => Vec::new(),
    };
    id3v2::apply(&mut frames, edits)?;
    let len = id3v2::frames_len(&frames);
    // The text chunks' fates: the first of a set field's id rewritten, the
    // rest of that id dropped.
    let mut fates: Vec<Fate> = chunks.iter().map(|_| Fate::Keep).collect();
    for name in edits.touched() {
        let Some(id) = text_id(name) else { continue };
        let mut value = edits.value_of(name);
        for (_, fate) in chunks.iter().zip(fates.iter_mut()).filter(|(c, _)| c.id == id) {
            *fate = match value.take() {
                Some(v) => Fate::Replace(chunk_bytes(&id, v.as_bytes())?),
                None => Fate::Drop,
            };
        }
    }
    let texts_fit = chunks.iter().zip(&fates).all(|(c, f)| match f {
        Fate::Keep => true,
        Fate::Drop => false,
        Fate::Replace(b) => b.len() as u64 == c.end() - c.pos,
    });
    if let (true, Some(c), Some(t), true) = (in_place_ok, id3, &tag, texts_fit) {
        if len + 10 <= c.size {
            let body = c.pos + 8;
            let mut writes = vec![(body, id3v2::build(&frames, c.size - 10)?)];
            // Zeros over what the old frames (and a footer) held past the new ones.
            let old_end = if t.footer { t.region } else { t.frames_end };
            if old_end > 10 + len {
                writes.push((body + 10 + len, vec![0u8; (old_end - 10 - len) as usize]));
            }
            for (c, f) in chunks.iter().zip(fates) {
                if let Fate::Replace(b) = f {
                    writes.push((c.pos, b));
                }
            }
            return Ok(Plan::InPlace(writes));
        }
    }
    // A copy: the new ID3 chunk, its tag padded to an even chunk.
    let padding = COPY_PADDING + (len & 1);
    let mut tag_bytes = id3v2::build(&frames, len + padding)?;
    tag_bytes.resize(tag_bytes.len() + padding as usize, 0);
    let new_id3 = chunk_bytes(b"ID3 ", &tag_bytes)?;
    let mut body: Vec<Piece> = Vec::new();
    let mut put_id3 = Some(new_id3);
    for (c, f) in chunks.iter().zip(fates) {
        match f {
            Fate::Drop => {}
            Fate::Replace(b) => body.push(Piece::Bytes(b)),
            Fate::Keep if &c.id == b"ID3 " => body.extend(put_id3.take().map(Piece::Bytes)),
            Fate::Keep => {
                // The last chunk's pad byte may be missing at the FORM's end.
                let len = c.end().min(form_end) - c.pos;
                body.push(Piece::Range { start: c.pos, len });
                if len < c.end() - c.pos {
                    body.push(Piece::Bytes(vec![0]));
                }
            }
        }
    }
    body.extend(put_id3.take().map(Piece::Bytes));
    // Bytes too few for a chunk header at the FORM's end, then past it.
    let chunks_end = chunks.last().map_or(12, |c| c.end()).min(form_end);
    if form_end > chunks_end {
        body.push(Piece::Range {
            start: chunks_end,
            len: form_end - chunks_end,
        });
    }
    let form_size = u32::try_from(4 + Plan::Copy(body.clone()).bytes())
        .map_err(|_| malformed("aiff: the new file would pass the FORM 4 GiB size"))?;
    let form_type = read_at(file, 8, 4, "aiff: the FORM header")?;
    let mut pieces = vec![Piece::Bytes(
        [&b"FORM"[..], &form_size.to_be_bytes(), &form_type].concat(),
    )];
    pieces.extend(body);
    let file_len = file.metadata()?.len();
    if file_len > form_end {
        pieces.push(Piece::Range {
            start: form_end,
            len: file_len - form_end,
        });
    }
    Ok(Plan::Copy(pieces))
}
