//! Native FLAC: the VORBIS_COMMENT metadata block (RFC 9639 §8.6) and
//! front-cover PICTURE blocks (§8.8) rewritten in place when they fit the
//! old blocks plus the PADDING blocks after them (§8.3), else a copy with
//! new metadata blocks and the frames unchanged.

use super::plan::{Piece, Plan};
use super::{malformed, read_at, Edits, Picture};
use mediaslice::format::xiph::comment::common_name;
use std::fs::File;

/// Block types (RFC 9639 §8.1, table 2).
const STREAMINFO: u8 = 0;
const PADDING: u8 = 1;
const VORBIS_COMMENT: u8 = 4;
const PICTURE: u8 = 6;
/// PICTURE type 3, front cover (RFC 9639 §8.8, table 13).
pub(super) const FRONT_COVER: u32 = 3;
const INVALID: u8 = 127;
/// Most metadata blocks walked before the file is refused.
const MAX_BLOCKS: usize = 4096;
/// Largest metadata block body (a 24-bit length).
const MAX_BODY: usize = (1 << 24) - 1;
/// PADDING left after the VORBIS_COMMENT block by a copy, for later edits
/// in place.
pub(super) const COPY_PADDING: usize = 4096;
/// Vendor string of a VORBIS_COMMENT block made where there was none.
const VENDOR: &str = "mediaslice";

/// One metadata block: where its 4-byte header is, its type, its body
/// length and whether it is marked last.
#[derive(Debug, Clone, Copy)]
struct Block {
    pos: u64,
    kind: u8,
    len: u64,
    last: bool,
}

impl Block {
    fn end(&self) -> u64 {
        self.pos + 4 + self.len
    }
}

/// The Vorbis comment key a field name is written under: the common names
/// in upper case as Vorbis I §5.2.2 lists them (`TRACKNUMBER`,
/// `ALBUMARTIST` for ffmpeg's `track`, `album_artist`); other names as
/// given.
fn vorbis_key(name: &str) -> &str {
    const KEYS: [(&str, &str); 8] = [
        ("title", "TITLE"),
        ("artist", "ARTIST"),
        ("album", "ALBUM"),
        ("date", "DATE"),
        ("genre", "GENRE"),
        ("comment", "COMMENT"),
        ("track", "TRACKNUMBER"),
        ("album_artist", "ALBUMARTIST"),
    ];
    KEYS.iter()
        .find(|(n, _)| n.eq_ignore_ascii_case(name))
        .map_or(name, |(_, k)| k)
}

/// True when the entry `KEY=value` belongs to field `name`: its key is
/// `name`'s Vorbis key, or a key ffprobe shows under the same common name
/// (`DESCRIPTION` and `COMMENT` are both `comment`).
fn entry_matches(entry: &[u8], name: &str) -> bool {
    let Some(eq) = entry.iter().position(|&b| b == b'=') else {
        return false;
    };
    let Ok(key) = std::str::from_utf8(entry.get(..eq).unwrap_or(&[])) else {
        return false;
    };
    key.eq_ignore_ascii_case(vorbis_key(name)) || common_name(key).is_some_and(|c| c.eq_ignore_ascii_case(name))
}

/// Applies `edits` to the comment entries: every entry of a touched field
/// is removed, and a set field's one new entry takes the place of its
/// first old one (or goes at the end).
pub(super) fn apply(entries: &mut Vec<Vec<u8>>, edits: &Edits) -> std::io::Result<()> {
    for name in edits.touched() {
        let key = vorbis_key(name);
        if key.is_empty() || !key.bytes().all(|b| (0x20..=0x7d).contains(&b) && b != b'=') {
            return Err(malformed(format!(
                "vorbis comment: {name:?} is not a field name (ASCII 0x20-0x7D without '=', Vorbis I §5.2.3)"
            )));
        }
        let first = entries.iter().position(|e| entry_matches(e, name));
        // An existing key of the same name keeps its spelling (`title`
        // stays `title`, as ffmpeg wrote it).
        let key = first
            .and_then(|i| entries.get(i))
            .and_then(|e| e.split(|&b| b == b'=').next())
            .and_then(|k| std::str::from_utf8(k).ok())
            .filter(|k| k.eq_ignore_ascii_case(key))
            .unwrap_or(key)
            .to_string();
        entries.retain(|e| !entry_matches(e, name));
        if let Some(value) = edits.value_of(name) {
            let entry = format!("{key}={value}").into_bytes();
            entries.insert(first.unwrap_or(entries.len()).min(entries.len()), entry);
        }
    }
    Ok(())
}

fn u32_le(b: &[u8], at: usize) -> Option<u32> {
    Some(u32::from_le_bytes(b.get(at..at + 4)?.try_into().ok()?))
}

/// Splits a VORBIS_COMMENT body into its vendor string and entries
/// (RFC 9639 §8.6). Errors: a length that runs past the block.
pub(super) fn parse_comment(body: &[u8]) -> std::io::Result<(Vec<u8>, Vec<Vec<u8>>)> {
    let bad = |what: &str| {
        malformed(format!(
            "flac VORBIS_COMMENT: {what} runs past the block (RFC 9639 §8.6)"
        ))
    };
    let vendor_len = u32_le(body, 0).ok_or_else(|| bad("the vendor length"))? as usize;
    let vendor = body
        .get(4..4 + vendor_len)
        .ok_or_else(|| bad("the vendor string"))?
        .to_vec();
    let mut at = 4 + vendor_len;
    let count = u32_le(body, at).ok_or_else(|| bad("the comment count"))? as usize;
    at += 4;
    // Each entry takes at least its 4-byte length: the count is checked
    // against the block before anything is sized by it.
    if count > body.len().saturating_sub(at) / 4 {
        return Err(bad("the comment count"));
    }
    let mut entries = Vec::with_capacity(count);
    for _ in 0..count {
        let len = u32_le(body, at).ok_or_else(|| bad("a comment length"))? as usize;
        let entry = body.get(at + 4..at + 4 + len).ok_or_else(|| bad("a comment"))?;
        entries.push(entry.to_vec());
        at += 4 + len;
    }
    Ok((vendor, entries))
}

/// A VORBIS_COMMENT body from its vendor string and entries.
pub(super) fn build_comment(vendor: &[u8], entries: &[Vec<u8>]) -> std::io::Result<Vec<u8>> {
    let too_long = || malformed("flac VORBIS_COMMENT: the new block is over 16 MiB (RFC 9639 §8.1)");
    let mut body = Vec::new();
    body.extend_from_slice(&u32::try_from(vendor.len()).map_err(|_| too_long())?.to_le_bytes());
    body.extend_from_slice(vendor);
    body.extend_from_slice(&u32::try_from(entries.len()).map_err(|_| too_long())?.to_le_bytes());
    for e in entries {
        body.extend_from_slice(&u32::try_from(e.len()).map_err(|_| too_long())?.to_le_bytes());
        body.extend_from_slice(e);
    }
    if body.len() > MAX_BODY {
        return Err(too_long());
    }
    Ok(body)
}

/// A metadata block header (RFC 9639 §8.1); `len` is at most 2^24 - 1.
fn header(kind: u8, last: bool, len: usize) -> [u8; 4] {
    let l = (len as u32).to_be_bytes();
    [kind | if last { 0x80 } else { 0 }, l[1], l[2], l[3]]
}

/// Where `fLaC` is: after an ID3v2 tag when the file starts with one.
fn marker_pos(file: &File) -> std::io::Result<u64> {
    let head = read_at(file, 0, 4, "flac: the stream marker")?;
    if head.starts_with(b"ID3") {
        let h = read_at(file, 0, 10, "flac: the ID3v2 header before the stream")?;
        let size = h
            .get(6..10)
            .unwrap_or(&[])
            .iter()
            .fold(0u64, |a, &b| (a << 7) | u64::from(b & 0x7f));
        let footer = if h.get(5).is_some_and(|f| f & 0x10 != 0) { 10 } else { 0 };
        return Ok(10 + size + footer);
    }
    Ok(0)
}

/// Walks the metadata blocks after the marker. Errors: no `fLaC`, a first
/// block that is not STREAMINFO, type 127, a block past the end of the
/// file, too many blocks.
fn walk(file: &File) -> std::io::Result<(u64, Vec<Block>)> {
    let start = marker_pos(file)?;
    if read_at(file, start, 4, "flac: the stream marker")? != b"fLaC" {
        return Err(malformed(format!("flac: no fLaC marker at byte {start} (RFC 9639 §6)")));
    }
    let file_len = file.metadata()?.len();
    let mut blocks: Vec<Block> = Vec::new();
    let mut pos = start + 4;
    loop {
        if blocks.len() == MAX_BLOCKS {
            return Err(malformed(format!("flac: more than {MAX_BLOCKS} metadata blocks")));
        }
        let h = read_at(file, pos, 4, "flac: a metadata block header")?;
        let kind = h.first().copied().unwrap_or(0);
        let len = u64::from(u32::from_be_bytes([0, h[1], h[2], h[3]]));
        let b = Block {
            pos,
            kind: kind & 0x7f,
            len,
            last: kind & 0x80 != 0,
        };
        if b.kind == INVALID {
            return Err(malformed(format!(
                "flac: metadata block type 127 at byte {pos} (RFC 9639 §8.1)"
            )));
        }
        if blocks.is_empty() && b.kind != STREAMINFO {
            return Err(malformed(
                "flac: the first metadata block is not STREAMINFO (RFC 9639 §8.2)",
            ));
        }
        if b.end() > file_len {
            return Err(malformed(format!(
                "flac: metadata block at byte {pos} ({} bytes) runs past the end of the file",
                b.len
            )));
        }
        blocks.push(b);
        pos = b.end();
        if b.last {
            return Ok((start, blocks));
        }
    }
}

/// The plan for `edits` on the FLAC file `file`: in place when allowed and
/// the new blocks fit, else a copy.
pub(super) fn plan(file: &File, edits: &Edits, in_place_ok: bool) -> std::io::Result<Plan> {
    let (start, blocks) = walk(file)?;
    let mut comments = blocks.iter().enumerate().filter(|(_, b)| b.kind == VORBIS_COMMENT);
    let found = comments.next();
    if comments.next().is_some() {
        return Err(malformed("flac: more than one VORBIS_COMMENT block (RFC 9639 §8.6)"));
    }
    // The new VORBIS_COMMENT body, when text fields change.
    let comment = if edits.touches_fields() || !edits.touches_pictures() {
        let (vendor, mut entries) = match found {
            Some((_, b)) => parse_comment(&read_at(file, b.pos + 4, b.len as usize, "flac VORBIS_COMMENT")?)?,
            None => (VENDOR.as_bytes().to_vec(), Vec::new()),
        };
        apply(&mut entries, edits)?;
        Some(build_comment(&vendor, &entries)?)
    } else {
        None
    };
    let picture = edits.picture.as_ref().map(picture_body).transpose()?;
    // What happens to each block.
    let mut roles = Vec::with_capacity(blocks.len());
    for b in &blocks {
        roles.push(match b.kind {
            PADDING => Role::Free,
            VORBIS_COMMENT if comment.is_some() => Role::Replaced,
            PICTURE if edits.remove_picture => Role::Replaced,
            PICTURE if picture.is_some() && picture_type(file, b)? == FRONT_COVER => Role::Replaced,
            _ => Role::Kept,
        });
    }
    let edit = Edit {
        comment,
        picture,
        roles,
    };
    if in_place_ok {
        if let Some(p) = in_place(&blocks, &edit) {
            return Ok(p);
        }
    }
    copy(file, start, &blocks, &edit)
}

/// What an edit does to a block.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Role {
    /// Left as it is.
    Kept,
    /// Rewritten or removed (the VORBIS_COMMENT, a picture replaced).
    Replaced,
    /// PADDING: space for the new blocks.
    Free,
}

/// The new blocks' bodies and each old block's role.
struct Edit {
    comment: Option<Vec<u8>>,
    picture: Option<Vec<u8>>,
    roles: Vec<Role>,
}

impl Edit {
    /// The new blocks, in order: the comment, then the picture.
    fn new_blocks(&self) -> Vec<(u8, &[u8])> {
        let mut out = Vec::new();
        if let Some(c) = &self.comment {
            out.push((VORBIS_COMMENT, c.as_slice()));
        }
        if let Some(p) = &self.picture {
            out.push((PICTURE, p.as_slice()));
        }
        out
    }
}

/// Positioned writes for the new blocks when they fit the run of blocks
/// that starts at the first replaced one (or, with none, the first PADDING
/// block) and holds only replaced and PADDING blocks, every replaced one
/// among them: the new blocks, then a PADDING header for what is left
/// (none when nothing is, never a 1 to 3 byte gap), then zeros over the
/// old bytes the padding now covers. `None` when it does not fit.
fn in_place(blocks: &[Block], edit: &Edit) -> Option<Plan> {
    let first = edit
        .roles
        .iter()
        .position(|&r| r == Role::Replaced)
        .or_else(|| edit.roles.iter().position(|&r| r == Role::Free))?;
    let run = edit
        .roles
        .get(first..)?
        .iter()
        .take_while(|&&r| r != Role::Kept)
        .count();
    if edit.roles.get(first + run..)?.contains(&Role::Replaced) {
        return None;
    }
    let region = blocks.get(first..first + run)?;
    let (head, tail) = (region.first()?, region.last()?);
    let available = tail.end() - head.pos;
    let new = edit.new_blocks();
    let need: u64 = new.iter().map(|(_, b)| 4 + b.len() as u64).sum();
    let left = available.checked_sub(need)?;
    if (1..4).contains(&left) {
        return None;
    }
    let mut bytes = Vec::with_capacity(need as usize);
    for (i, (kind, body)) in new.iter().enumerate() {
        let last = i + 1 == new.len() && left == 0 && tail.last;
        bytes.extend_from_slice(&header(*kind, last, body.len()));
        bytes.extend_from_slice(body);
    }
    let mut writes = vec![(head.pos, bytes)];
    if left >= 4 {
        let pad_at = head.pos + need;
        writes.push((pad_at, header(PADDING, tail.last, (left - 4) as usize).to_vec()));
        // The old padding's bytes are zeros already; what was a comment,
        // a picture (or a header) before the last PADDING block's body is
        // not.
        let zero_from = pad_at + 4;
        let zero_to = if tail.kind == PADDING { tail.pos + 4 } else { tail.end() };
        if zero_to > zero_from {
            writes.push((zero_from, vec![0u8; (zero_to - zero_from) as usize]));
        }
    }
    Some(Plan::InPlace(writes))
}

/// A copy: what precedes the metadata, the kept blocks in their order with
/// the new VORBIS_COMMENT in the old one's place (after STREAMINFO when
/// there was none) and the new picture after it, no old PADDING, a new
/// PADDING of [`COPY_PADDING`] bytes last, then the frames unchanged.
fn copy(file: &File, start: u64, blocks: &[Block], edit: &Edit) -> std::io::Result<Plan> {
    let mut pieces = vec![Piece::Range {
        start: 0,
        len: start + 4,
    }];
    let had_comment = blocks.iter().any(|b| b.kind == VORBIS_COMMENT);
    let mut placed = false;
    let mut place = |pieces: &mut Vec<Piece>| {
        if !placed {
            for (kind, body) in edit.new_blocks() {
                pieces.push(block(kind, body));
            }
            placed = true;
        }
    };
    for (b, role) in blocks.iter().zip(&edit.roles) {
        match (b.kind, role) {
            (PADDING, _) => {}
            (VORBIS_COMMENT, Role::Replaced) => place(&mut pieces),
            (_, Role::Replaced) => {}
            (kind, _) => {
                pieces.push(Piece::Bytes(header(kind, false, b.len as usize).to_vec()));
                pieces.push(Piece::Range {
                    start: b.pos + 4,
                    len: b.len,
                });
                if (kind == STREAMINFO && !had_comment) || (kind == VORBIS_COMMENT && edit.comment.is_none()) {
                    place(&mut pieces);
                }
            }
        }
    }
    let mut pad = header(PADDING, true, COPY_PADDING).to_vec();
    pad.resize(4 + COPY_PADDING, 0);
    pieces.push(Piece::Bytes(pad));
    let audio = blocks.last().map_or(start + 4, Block::end);
    let len = file.metadata()?.len();
    pieces.push(Piece::Range {
        start: audio,
        len: len - audio,
    });
    Ok(Plan::Copy(pieces))
}

/// The picture type of PICTURE block `b` (its first 4 bytes, RFC 9639
/// §8.8).
fn picture_type(file: &File, b: &Block) -> std::io::Result<u32> {
    let t = read_at(file, b.pos + 4, 4, "flac PICTURE")?;
    Ok(u32::from_be_bytes([t[0], t[1], t[2], t[3]]))
}

/// A PICTURE block body (RFC 9639 §8.8): type 3 (front cover), the MIME
/// type, an empty description, width, height, depth, colours, the data.
pub(super) fn picture_body(p: &Picture) -> std::io::Result<Vec<u8>> {
    let mime = p.kind.mime().as_bytes();
    let mut out = Vec::with_capacity(32 + mime.len() + p.data.len());
    out.extend_from_slice(&FRONT_COVER.to_be_bytes());
    out.extend_from_slice(&(mime.len() as u32).to_be_bytes());
    out.extend_from_slice(mime);
    out.extend_from_slice(&0u32.to_be_bytes());
    for v in [p.width, p.height, p.depth, p.colors, p.data.len() as u32] {
        out.extend_from_slice(&v.to_be_bytes());
    }
    out.extend_from_slice(&p.data);
    if out.len() > MAX_BODY {
        return Err(malformed(
            "flac: the picture does not fit a metadata block (16 MiB, RFC 9639 §8.1)",
        ));
    }
    Ok(out)
}

fn block(kind: u8, body: &[u8]) -> Piece {
    let mut out = header(kind, false, body.len()).to_vec();
    out.extend_from_slice(body);
    Piece::Bytes(out)
}
