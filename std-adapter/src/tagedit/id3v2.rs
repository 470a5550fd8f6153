//! ID3v2.3 and ID3v2.4 tags (id3.org, "ID3 tag version 2.3.0" and "2.4.0
//! main structure"): read into frames, edited, and written as 2.4 with new
//! text in UTF-8. Frames that are not edited keep their bodies byte for
//! byte; a 2.3 tag is converted (frame sizes made syncsafe, status flags
//! moved to their 2.4 bits, TYER/TDAT/TIME joined into TDRC), and a 2.3
//! frame that is compressed, encrypted or grouped is refused. A file
//! without a tag gets a 2.4 tag.

use super::{malformed, read_at, Edits, Picture};
use mediaslice::format::es::id3::frame_name;
use std::fs::File;

/// The header's flags (§3.1): unsynchronisation, extended header, footer.
const FLAG_UNSYNC: u8 = 0x80;
const FLAG_EXTENDED: u8 = 0x40;
const FLAG_FOOTER: u8 = 0x10;

/// One frame: its ID and its whole bytes (header and body) as stored.
#[derive(Debug, Clone)]
pub(super) struct Frame {
    id: [u8; 4],
    raw: Vec<u8>,
}

impl Frame {
    fn body(&self) -> &[u8] {
        self.raw.get(10..).unwrap_or(&[])
    }
}

/// A tag at the start of the file.
#[derive(Debug, Clone)]
pub(super) struct Tag {
    /// 3 or 4.
    pub major: u8,
    pub frames: Vec<Frame>,
    /// Bytes of the file the tag takes (header, body, footer).
    pub region: u64,
    /// Where the last frame ends in the file: past it, padding (zeros).
    pub frames_end: u64,
    /// Whether a footer follows (its 10 bytes are not zeros).
    pub footer: bool,
}

fn syncsafe(b: &[u8]) -> Option<u64> {
    if b.len() != 4 || b.iter().any(|x| x & 0x80 != 0) {
        return None;
    }
    Some(b.iter().fold(0u64, |a, &x| (a << 7) | u64::from(x)))
}

fn to_syncsafe(n: usize) -> [u8; 4] {
    [
        (n >> 21) as u8 & 0x7f,
        (n >> 14) as u8 & 0x7f,
        (n >> 7) as u8 & 0x7f,
        n as u8 & 0x7f,
    ]
}

/// Reads the tag at the start of `file`, or `None` when there is none.
///
/// Errors (`InvalidData`, the file untouched): version 2.2 or above 2.4, an
/// unsynchronised tag (its frames would need decoding), a size that is not
/// syncsafe or runs past the file, a frame with a bad ID or a size past
/// the tag.
pub(super) fn read(file: &File) -> std::io::Result<Option<Tag>> {
    read_within(file, 0, file.metadata()?.len())
}

/// Reads the tag at byte `base` of `file` that must end within `room`
/// bytes (an AIFF `ID3 ` chunk's body), or `None` when `room` holds no
/// `ID3` header. `region` and `frames_end` count from `base`. Errors: as
/// [`read`], and a tag longer than `room`.
pub(super) fn read_within(file: &File, base: u64, room: u64) -> std::io::Result<Option<Tag>> {
    if room < 10 {
        return Ok(None);
    }
    let h = read_at(file, base, 10, "ID3v2 header")?;
    if !h.starts_with(b"ID3") {
        return Ok(None);
    }
    let (major, flags) = (h[3], h[5]);
    if major != 3 && major != 4 {
        return Err(malformed(format!("ID3v2.{major}: only 2.3 and 2.4 tags are rewritten")));
    }
    if flags & FLAG_UNSYNC != 0 {
        return Err(malformed(
            "ID3v2: an unsynchronised tag is not rewritten (ID3v2.4 main structure §6.1)",
        ));
    }
    let size = syncsafe(&h[6..10]).ok_or_else(|| malformed("ID3v2: the tag size is not syncsafe (§3.1)"))?;
    let footer = major == 4 && flags & FLAG_FOOTER != 0;
    if 10 + size + if footer { 10 } else { 0 } > room {
        return Err(malformed("ID3v2: the tag runs past its room (file or chunk)"));
    }
    let body = read_at(file, base + 10, size as usize, "ID3v2 tag")?;
    let mut at = 0usize;
    if flags & FLAG_EXTENDED != 0 {
        let ext = body
            .get(..4)
            .ok_or_else(|| malformed("ID3v2: the extended header runs past the tag"))?;
        // 2.3: a plain size not counting itself; 2.4: syncsafe, counting itself.
        at = match major {
            3 => 4 + u32::from_be_bytes([ext[0], ext[1], ext[2], ext[3]]) as usize,
            _ => syncsafe(ext).ok_or_else(|| malformed("ID3v2.4: extended header size not syncsafe"))? as usize,
        };
        if at > body.len() {
            return Err(malformed("ID3v2: the extended header runs past the tag (§3.2)"));
        }
    }
    let mut frames = Vec::new();
    while let Some(h) = body.get(at..at + 10) {
        if h[0] == 0 {
            break;
        }
        let id: [u8; 4] = [h[0], h[1], h[2], h[3]];
        if !id.iter().all(|c| c.is_ascii_uppercase() || c.is_ascii_digit()) {
            return Err(malformed(format!(
                "ID3v2: a frame ID that is not A-Z0-9 at tag byte {at} (§4)"
            )));
        }
        let len = match major {
            3 => u64::from(u32::from_be_bytes([h[4], h[5], h[6], h[7]])),
            _ => syncsafe(&h[4..8]).ok_or_else(|| malformed("ID3v2.4: a frame size is not syncsafe (§4)"))?,
        } as usize;
        let raw = body.get(at..at.saturating_add(10).saturating_add(len)).ok_or_else(|| {
            malformed(format!(
                "ID3v2: frame {} runs past the tag",
                String::from_utf8_lossy(&id)
            ))
        })?;
        frames.push(Frame { id, raw: raw.to_vec() });
        at += 10 + len;
    }
    Ok(Some(Tag {
        major,
        frames,
        region: 10 + size + if footer { 10 } else { 0 },
        frames_end: 10 + at as u64,
        footer,
    }))
}

/// The frame ID a common name is written as (ffmpeg's conversion tables);
/// `None` for `comment` (a COMM frame) and names that are not common.
fn frame_id(name: &str) -> Option<[u8; 4]> {
    let n = name.to_ascii_lowercase();
    Some(*match n.as_str() {
        "title" => b"TIT2",
        "artist" => b"TPE1",
        "album" => b"TALB",
        "date" => b"TDRC",
        "genre" => b"TCON",
        "track" => b"TRCK",
        "album_artist" => b"TPE2",
        _ => return None,
    })
}

/// A name given as a frame ID itself (`TCOM`): four of A-Z0-9.
fn as_frame_id(name: &str) -> Option<[u8; 4]> {
    let b: [u8; 4] = name.as_bytes().try_into().ok()?;
    b.iter()
        .all(|c| c.is_ascii_uppercase() || c.is_ascii_digit())
        .then_some(b)
}

/// Decodes an encoded string up to its terminator (§4: encodings 0 to 3);
/// returns the text and the bytes after the terminator.
fn decode(enc: u8, b: &[u8]) -> (String, &[u8]) {
    if enc == 1 || enc == 2 {
        let units: Vec<u16> = b.chunks_exact(2).map(|c| u16::from_le_bytes([c[0], c[1]])).collect();
        let end = units.iter().position(|&u| u == 0).unwrap_or(units.len());
        let rest = b.get((end + 1) * 2..).unwrap_or(&[]);
        let mut u = units.get(..end).unwrap_or(&[]).to_vec();
        let big = enc == 2 || u.first() == Some(&0xfffe);
        if big {
            u.iter_mut().for_each(|x| *x = x.swap_bytes());
        }
        let s = String::from_utf16_lossy(u.strip_prefix(&[0xfeff]).unwrap_or(&u));
        (s, rest)
    } else {
        let end = b.iter().position(|&x| x == 0).unwrap_or(b.len());
        let s = match enc {
            0 => b.get(..end).unwrap_or(&[]).iter().map(|&c| char::from(c)).collect(),
            _ => String::from_utf8_lossy(b.get(..end).unwrap_or(&[])).into_owned(),
        };
        (s, b.get(end + 1..).unwrap_or(&[]))
    }
}

/// The description of a COMM (after the language) or TXXX frame.
fn description(frame: &Frame) -> Option<String> {
    let body = frame.body();
    let enc = *body.first()?;
    let rest = match &frame.id {
        b"COMM" => body.get(4..)?,
        b"TXXX" => body.get(1..)?,
        _ => return None,
    };
    Some(decode(enc, rest).0)
}

/// True when `frame` holds field `name`.
fn matches(frame: &Frame, name: &str) -> bool {
    let lower = name.to_ascii_lowercase();
    if frame_id(name) == Some(frame.id) || as_frame_id(name) == Some(frame.id) {
        return true;
    }
    match &frame.id {
        b"COMM" => lower == "comment" && description(frame).is_some_and(|d| d.is_empty()),
        b"TXXX" => description(frame).is_some_and(|d| d.eq_ignore_ascii_case(name)),
        id => frame_name(id) == Some(lower.as_str()) && lower != "comment",
    }
}

/// UTF-8 text with a terminator when `terminate` (encoding 3, §4).
fn utf8(text: &str, terminate: bool) -> Vec<u8> {
    let mut out = text.as_bytes().to_vec();
    if terminate {
        out.push(0);
    }
    out
}

/// A 2.4 frame `id` with `flags` and `body`.
fn frame(id: [u8; 4], flags: [u8; 2], body: &[u8]) -> std::io::Result<Frame> {
    if body.len() >= 1 << 28 {
        return Err(malformed("ID3v2: a frame is over 256 MiB"));
    }
    let mut raw = Vec::with_capacity(10 + body.len());
    raw.extend_from_slice(&id);
    raw.extend_from_slice(&to_syncsafe(body.len()));
    raw.extend_from_slice(&flags);
    raw.extend_from_slice(body);
    Ok(Frame { id, raw })
}

/// A 2.4 text frame in UTF-8.
fn text_frame(id: [u8; 4], value: &str) -> std::io::Result<Frame> {
    let mut body = vec![3];
    body.extend(utf8(value, false));
    frame(id, [0, 0], &body)
}

/// The frames of `tag` as 2.4 frames (converted from 2.3 by [`upgrade`]).
pub(super) fn frames_v24(tag: &Tag) -> std::io::Result<Vec<Frame>> {
    match tag.major {
        3 => upgrade(tag.frames.clone()),
        _ => Ok(tag.frames.clone()),
    }
}

/// Converts the frames of a 2.3 tag to 2.4 (see the module's text).
/// Errors: a compressed, encrypted or grouped frame.
fn upgrade(frames: Vec<Frame>) -> std::io::Result<Vec<Frame>> {
    let text = |id: &[u8; 4]| -> Option<String> {
        let f = frames.iter().find(|f| &f.id == id)?;
        Some(decode(*f.body().first()?, f.body().get(1..)?).0)
    };
    let digits = |s: &Option<String>| {
        s.as_ref()
            .filter(|s| s.len() == 4 && s.bytes().all(|b| b.is_ascii_digit()))
            .cloned()
    };
    let date = digits(&text(b"TYER")).map(|y| {
        let mut d = y;
        if let Some(dm) = digits(&text(b"TDAT")) {
            d = format!("{d}-{}-{}", &dm[2..], &dm[..2]);
            if let Some(hm) = digits(&text(b"TIME")) {
                d = format!("{d}T{}:{}", &hm[..2], &hm[2..]);
            }
        }
        d
    });
    let mut out = Vec::with_capacity(frames.len());
    for f in &frames {
        let (status, format) = (f.raw[8], f.raw[9]);
        if format & 0xe0 != 0 {
            return Err(malformed(format!(
                "ID3v2.3: frame {} is compressed, encrypted or grouped; not converted to 2.4",
                String::from_utf8_lossy(&f.id)
            )));
        }
        match (&f.id, &date) {
            (b"TYER", Some(d)) => out.push(text_frame(*b"TDRC", d)?),
            (b"TDAT" | b"TIME", Some(_)) => {}
            _ => out.push(frame(f.id, [(status & 0xe0) >> 1, 0], f.body())?),
        }
    }
    Ok(out)
}

/// The new frame for field `name` set to `value`: a text frame, a COMM
/// frame with no description for `comment`, or a TXXX frame described by
/// the name for a name that is no frame.
fn new_frame(name: &str, value: &str) -> std::io::Result<Frame> {
    if name.eq_ignore_ascii_case("comment") {
        let mut body = vec![3];
        body.extend_from_slice(b"XXX");
        body.extend(utf8("", true));
        body.extend(utf8(value, false));
        return frame(*b"COMM", [0, 0], &body);
    }
    if let Some(id) = frame_id(name).or_else(|| as_frame_id(name)) {
        return text_frame(id, value);
    }
    let mut body = vec![3];
    body.extend(utf8(name, true));
    body.extend(utf8(value, false));
    frame(*b"TXXX", [0, 0], &body)
}

/// The frames of a new tag holding `fields` (`(name, value)`, as
/// [`Edits::set`]).
pub(super) fn from_fields(fields: &[(&str, String)]) -> std::io::Result<Vec<Frame>> {
    fields.iter().map(|(n, v)| new_frame(n, v)).collect()
}

/// Applies `edits` to the frames of a 2.4 tag: every frame of a touched
/// field is removed, and a set field's new frame takes the place of its
/// first old one (or goes at the end).
pub(super) fn apply(frames: &mut Vec<Frame>, edits: &Edits) -> std::io::Result<()> {
    for name in edits.touched() {
        if as_frame_id(name).is_some_and(|id| id[0] != b'T' || &id == b"TXXX") && edits.value_of(name).is_some() {
            return Err(malformed(format!(
                "ID3v2: only text frames are set by ID ({name} is not one)"
            )));
        }
        let first = frames.iter().position(|f| matches(f, name));
        frames.retain(|f| !matches(f, name));
        if let Some(value) = edits.value_of(name) {
            let at = first.unwrap_or(frames.len()).min(frames.len());
            frames.insert(at, new_frame(name, value)?);
        }
    }
    if edits.touches_pictures() {
        let gone = |f: &Frame| &f.id == b"APIC" && (edits.remove_picture || apic_type(f) == Some(FRONT_COVER));
        let first = frames.iter().position(gone);
        frames.retain(|f| !gone(f));
        if let Some(p) = &edits.picture {
            let at = first.unwrap_or(frames.len()).min(frames.len());
            frames.insert(at, apic(p)?);
        }
    }
    Ok(())
}

/// APIC picture type 3, front cover (ID3v2.4 frames §4.14).
const FRONT_COVER: u8 = 3;

/// The picture type of an APIC frame: after the encoding byte and the
/// MIME type (ISO-8859-1, zero-terminated) (§4.14).
fn apic_type(f: &Frame) -> Option<u8> {
    let body = f.body().get(1..)?;
    let end = body.iter().position(|&b| b == 0)?;
    body.get(end + 1).copied()
}

/// An APIC frame (§4.14): encoding 0 (ISO-8859-1), the MIME type, type 3
/// (front cover), an empty description, the picture's bytes.
fn apic(p: &Picture) -> std::io::Result<Frame> {
    let mut body = Vec::with_capacity(p.data.len() + 16);
    body.push(0);
    body.extend_from_slice(p.kind.mime().as_bytes());
    body.extend_from_slice(&[0, FRONT_COVER, 0]);
    body.extend_from_slice(&p.data);
    frame(*b"APIC", [0, 0], &body)
}

/// The header and frames of a 2.4 tag whose size field
/// says `body_size` (at least the frames' length; the rest is padding the
/// caller writes or finds as zeros). No extended header, no footer.
pub(super) fn build(frames: &[Frame], body_size: u64) -> std::io::Result<Vec<u8>> {
    let len = frames_len(frames);
    if body_size < len || body_size >= 1 << 28 {
        return Err(malformed("ID3v2: the new tag is over 256 MiB"));
    }
    let mut out = Vec::with_capacity(10 + len as usize);
    out.extend_from_slice(b"ID3");
    out.extend_from_slice(&[4, 0, 0]);
    out.extend_from_slice(&to_syncsafe(body_size as usize));
    for f in frames {
        out.extend_from_slice(&f.raw);
    }
    Ok(out)
}

/// Bytes the frames take.
pub(super) fn frames_len(frames: &[Frame]) -> u64 {
    frames.iter().map(|f| f.raw.len() as u64).sum()
}
