//! ASF (WMA, WMV): the Header Object (ASF Specification rev 1.20 §3.1)
//! rebuilt with its Content Description (§3.10), Extended Content
//! Description (§3.11) and the Metadata / Metadata Library objects of the
//! Header Extension (§4.7, §4.8) edited (`asf_attrs`); every other object,
//! pictures (`WM/Picture`) included, kept byte for byte.
//!
//! The Data Object and the index objects after it are never touched: the
//! Simple Index (§6.1) gives packet numbers and the Index Object (§6.2)
//! offsets from the first data packet, not file positions. The header is
//! read whole (at most [`MAX_HEADER`]); it is rebuilt in memory, then
//!
//! * **in place** when it has its old size: the first Padding Object
//!   (§3.14, at the top level or in the Header Extension) takes the
//!   difference, or a new top-level Padding Object takes a shrink of 24
//!   bytes or more; only the bytes that differ are written;
//! * else a **copy**: the new header, the first Padding Object (or a new
//!   one) given [`COPY_PADDING`] bytes for later edits, the File
//!   Properties Object's file size (§3.2) moved by the change (not for a
//!   broadcast file, whose size is not valid), then the rest of the input.
//!
//! Refused, the file untouched: a header without the Header Object GUID, a
//! header size past the file or over [`MAX_HEADER`], no Data Object right
//! after it, an object smaller than its 24-byte header or past its parent,
//! objects that do not fill their parent, a Header Extension whose data
//! size disagrees with its size, no File Properties Object, a tag object
//! whose strings or attributes pass its size.

use super::asf_attrs::{field, key_for, utf16z, Attrs, Content};
use super::plan::{Piece, Plan};
use super::{malformed, read_at, Edits};
use std::fs::File;
use std::io;

/// Largest Header Object read into memory.
const MAX_HEADER: u64 = 64 << 20;
/// Bytes of a Padding Object a copy writes after its header.
const COPY_PADDING: usize = 1024;
/// Object header: GUID and QWORD size (§3.1).
const OBJ: usize = 24;

/// The stored bytes of the GUID written `XXXXXXXX-XXXX-XXXX-XXXX-XXXXXXXXXXXX`
/// (§10: the first three fields little-endian, the rest in order).
const fn guid(s: &str) -> [u8; 16] {
    const fn hex(c: u8) -> u8 {
        match c {
            b'0'..=b'9' => c - b'0',
            b'A'..=b'F' => c - b'A' + 10,
            _ => panic!("not an upper-case hex digit"),
        }
    }
    // Where each stored byte's two digits are in the text.
    const AT: [usize; 16] = [6, 4, 2, 0, 11, 9, 16, 14, 19, 21, 24, 26, 28, 30, 32, 34];
    let s = s.as_bytes();
    let mut out = [0u8; 16];
    let mut i = 0;
    while i < 16 {
        out[i] = hex(s[AT[i]]) << 4 | hex(s[AT[i] + 1]);
        i += 1;
    }
    out
}

const HEADER: [u8; 16] = guid("75B22630-668E-11CF-A6D9-00AA0062CE6C");
const DATA: [u8; 16] = guid("75B22636-668E-11CF-A6D9-00AA0062CE6C");
const FILE_PROPERTIES: [u8; 16] = guid("8CABDCA1-A947-11CF-8EE4-00C00C205365");
const HEADER_EXTENSION: [u8; 16] = guid("5FBF03B5-A92E-11CF-8EE3-00C00C205365");
const CONTENT_DESCRIPTION: [u8; 16] = guid("75B22633-668E-11CF-A6D9-00AA0062CE6C");
const EXTENDED_CONTENT: [u8; 16] = guid("D2D0A440-E307-11D2-97F0-00A0C95EA850");
const METADATA: [u8; 16] = guid("C5F8CBEA-5BAF-4877-8467-AA8C44FA4CCA");
const METADATA_LIBRARY: [u8; 16] = guid("44231C94-9498-49D1-A141-1D134E457054");
const PADDING: [u8; 16] = guid("1806D474-CADF-4509-A4BA-9AABCB96AAE8");

/// One object of the new header.
enum Part {
    /// Kept as it was: `start..end` of the old header.
    Raw(usize, usize),
    /// A tag object to rebuild, by its GUID.
    Content(Content),
    Attrs([u8; 16], Attrs),
    /// The Padding Object that takes the difference (its body's length is
    /// chosen last).
    Slack,
    /// The File Properties Object at `start` of the old header (its file
    /// size patched by a copy).
    FileProperties(usize),
    /// The Header Extension: its fixed fields (`start..start + 46` of the
    /// old header) and its objects.
    Extension(usize, Vec<Part>),
}

/// The objects of `h[from..to]`, with the Header Extension entered once.
/// Errors: an object under 24 bytes or past `to`, bytes left over.
fn parse(h: &[u8], from: usize, to: usize, nested: bool, slack: &mut bool) -> io::Result<Vec<Part>> {
    let mut parts = Vec::new();
    let mut at = from;
    while at < to {
        let head = h.get(at..at + OBJ).filter(|_| at + OBJ <= to).ok_or_else(|| {
            malformed(format!(
                "asf: {} bytes at {at} are not a whole object (ASF 1.20 §3.1)",
                to - at
            ))
        })?;
        let g: [u8; 16] = head[..16].try_into().unwrap_or_default();
        let size = u64::from_le_bytes(head[16..24].try_into().unwrap_or_default());
        if size < OBJ as u64 || size > (to - at) as u64 {
            return Err(malformed(format!(
                "asf: the header object at byte {at} has size {size}, {} (ASF 1.20 §3.1)",
                if size < OBJ as u64 {
                    "under its 24-byte header"
                } else {
                    "past its parent"
                }
            )));
        }
        let end = at + size as usize;
        let body = h.get(at + OBJ..end).unwrap_or(&[]);
        parts.push(match g {
            FILE_PROPERTIES if !nested => {
                if body.len() < 80 {
                    return Err(malformed(
                        "asf: a File Properties Object under 104 bytes (ASF 1.20 §3.2)",
                    ));
                }
                Part::FileProperties(at)
            }
            CONTENT_DESCRIPTION => Part::Content(Content::parse(body)?),
            EXTENDED_CONTENT => Part::Attrs(g, Attrs::parse(body, false)?),
            METADATA | METADATA_LIBRARY => Part::Attrs(g, Attrs::parse(body, true)?),
            PADDING if !*slack => {
                *slack = true;
                Part::Slack
            }
            HEADER_EXTENSION if !nested => {
                let data = u32::from_le_bytes(body.get(18..22).unwrap_or(&[0; 4]).try_into().unwrap_or_default());
                if body.len() < 22 || data as usize != body.len() - 22 {
                    return Err(malformed(format!(
                        "asf: the Header Extension at byte {at} says {data} bytes of objects in {} (ASF 1.20 §3.4)",
                        body.len().saturating_sub(22)
                    )));
                }
                Part::Extension(at, parse(h, at + 46, end, true, slack)?)
            }
            _ => Part::Raw(at, end),
        });
        at = end;
    }
    Ok(parts)
}

/// What [`write`] needs besides the parts.
struct Fill<'a> {
    old: &'a [u8],
    /// The Padding Object's body length.
    slack: usize,
    /// The File Properties file size to write, if it changes.
    file_size: Option<u64>,
}

fn object(out: &mut Vec<u8>, g: &[u8; 16], body: &[u8]) {
    out.extend_from_slice(g);
    out.extend_from_slice(&((body.len() + OBJ) as u64).to_le_bytes());
    out.extend_from_slice(body);
}

/// Appends `parts` to `out`.
fn write(out: &mut Vec<u8>, parts: &[Part], f: &Fill) -> io::Result<()> {
    for p in parts {
        match p {
            Part::Raw(a, b) => out.extend_from_slice(f.old.get(*a..*b).unwrap_or(&[])),
            Part::Content(c) => object(out, &CONTENT_DESCRIPTION, &c.body()?),
            Part::Attrs(g, a) => object(out, g, &a.body()?),
            Part::Slack => object(out, &PADDING, &vec![0; f.slack]),
            Part::FileProperties(at) => {
                let size = u64::from_le_bytes(
                    f.old
                        .get(at + 16..at + 24)
                        .unwrap_or(&[0; 8])
                        .try_into()
                        .unwrap_or_default(),
                );
                let start = out.len();
                out.extend_from_slice(f.old.get(*at..at + size as usize).unwrap_or(&[]));
                if let (Some(n), Some(field)) = (f.file_size, out.get_mut(start + 40..start + 48)) {
                    field.copy_from_slice(&n.to_le_bytes());
                }
            }
            Part::Extension(at, inner) => {
                let start = out.len();
                out.extend_from_slice(f.old.get(*at..at + 46).unwrap_or(&[]));
                write(out, inner, f)?;
                let size = (out.len() - start) as u64;
                let data = u32::try_from(size - 46).map_err(|_| malformed("asf: a Header Extension over 4 GiB"))?;
                if let Some(s) = out.get_mut(start + 16..start + 24) {
                    s.copy_from_slice(&size.to_le_bytes());
                }
                if let Some(s) = out.get_mut(start + 42..start + 46) {
                    s.copy_from_slice(&data.to_le_bytes());
                }
            }
        }
    }
    Ok(())
}

/// Every tag object of `parts` (the Header Extension's too), in order.
fn tag_objects(parts: &mut [Part]) -> Vec<&mut Part> {
    let mut out = Vec::new();
    for p in parts {
        match p {
            Part::Extension(_, inner) => out.extend(tag_objects(inner)),
            Part::Content(_) | Part::Attrs(..) => out.push(p),
            _ => {}
        }
    }
    out
}

/// Applies `edits` to the tag objects of `parts`, making a Content
/// Description or an Extended Content Description at the end of the top
/// level when a set field needs one.
fn apply(parts: &mut Vec<Part>, edits: &Edits) -> io::Result<()> {
    for name in edits.touched() {
        let f = field(name);
        if f == "wm/picture" {
            return Err(malformed("asf: WM/Picture is a picture, not text (use --picture)"));
        }
        let value = edits.value_of(name);
        let cd_index = Content::index(&f);
        // Every old value goes; the new one where the first was.
        let mut cd_at = None;
        let mut ecd_at = None;
        for (i, p) in tag_objects(parts).into_iter().enumerate() {
            match p {
                Part::Content(c) => {
                    if let Some(k) = cd_index {
                        if let Some(s) = c.strings.get_mut(k) {
                            s.clear();
                        }
                        cd_at.get_or_insert(i);
                    }
                }
                Part::Attrs(g, a) => {
                    let first = a.remove(&f);
                    if *g == EXTENDED_CONTENT {
                        let slot = ecd_at.get_or_insert((i, a.list.len()));
                        if let (Some(at), true) = (first, slot.0 == i) {
                            slot.1 = slot.1.min(at);
                        }
                    }
                }
                _ => {}
            }
        }
        let Some(value) = value else { continue };
        let mut objects = tag_objects(parts);
        match (cd_index, cd_at, ecd_at) {
            (Some(k), Some(i), _) => {
                if let Some(Part::Content(c)) = objects.get_mut(i).map(|p| &mut **p) {
                    if let Some(s) = c.strings.get_mut(k) {
                        *s = utf16z(value, u16::MAX as usize, name)?;
                    }
                }
            }
            (Some(k), None, _) => {
                let mut c = Content::parse(&[0; 10])?;
                if let Some(s) = c.strings.get_mut(k) {
                    *s = utf16z(value, u16::MAX as usize, name)?;
                }
                parts.push(Part::Content(c));
            }
            (None, _, Some((i, at))) => {
                if let Some(Part::Attrs(_, a)) = objects.get_mut(i).map(|p| &mut **p) {
                    a.insert_text(at, key_for(name), value)?;
                }
            }
            (None, _, None) => {
                let mut a = Attrs::parse(&[0, 0], false)?;
                a.insert_text(0, key_for(name), value)?;
                parts.push(Part::Attrs(EXTENDED_CONTENT, a));
            }
        }
    }
    Ok(())
}

/// The header bytes of `parts` after the 30-byte Header Object header
/// `old[..30]`.
fn build(parts: &[Part], fill: &Fill) -> io::Result<Vec<u8>> {
    let mut out = fill.old.get(..30).unwrap_or(&[]).to_vec();
    write(&mut out, parts, fill)?;
    let size = out.len() as u64;
    let count = u32::try_from(parts.len()).unwrap_or(u32::MAX);
    if let Some(s) = out.get_mut(16..24) {
        s.copy_from_slice(&size.to_le_bytes());
    }
    if let Some(s) = out.get_mut(24..28) {
        s.copy_from_slice(&count.to_le_bytes());
    }
    Ok(out)
}

/// The plan for `edits` on the ASF file `file`.
pub(super) fn plan(file: &File, edits: &Edits, in_place_ok: bool) -> io::Result<Plan> {
    if edits.touches_pictures() {
        return Err(io::Error::new(
            io::ErrorKind::Unsupported,
            "tag editing: ASF pictures (WM/Picture) are kept but not edited yet",
        ));
    }
    let file_len = file.metadata()?.len();
    let head = read_at(file, 0, 30, "asf: the Header Object")?;
    if head.get(..16) != Some(&HEADER[..]) {
        return Err(malformed("asf: no Header Object GUID at the start (ASF 1.20 §3.1)"));
    }
    let size = u64::from_le_bytes(head[16..24].try_into().unwrap_or_default());
    if !(30..=MAX_HEADER).contains(&size) || size.saturating_add(OBJ as u64) > file_len {
        return Err(malformed(format!(
            "asf: the Header Object says {size} bytes: {} (ASF 1.20 §3.1)",
            if size < 30 {
                "under its 30-byte header".to_string()
            } else if size > MAX_HEADER {
                format!("over the {MAX_HEADER} read into memory")
            } else {
                format!("no Data Object before the end of the {file_len}-byte file")
            }
        )));
    }
    if read_at(file, size, 16, "asf: the Data Object")? != DATA {
        return Err(malformed(format!(
            "asf: no Data Object right after the {size}-byte header (ASF 1.20 §5.1)"
        )));
    }
    let old = read_at(file, 0, size as usize, "asf: the Header Object")?;
    let mut has_slack = false;
    let mut parts = parse(&old, 30, old.len(), false, &mut has_slack)?;
    let props = parts.iter().find_map(|p| match p {
        Part::FileProperties(at) => Some(*at),
        _ => None,
    });
    let Some(props) = props else {
        return Err(malformed("asf: no File Properties Object (ASF 1.20 §3.2)"));
    };
    apply(&mut parts, edits)?;
    let mut fill = Fill {
        old: &old,
        slack: 0,
        file_size: None,
    };
    let old_len = old.len();
    let mut base = build(&parts, &fill)?.len();
    if !has_slack && base != old_len {
        parts.push(Part::Slack);
        base += OBJ;
    }
    let fits = base == old_len || (base < old_len && parts_have_slack(&parts));
    fill.slack = if fits { old_len - base } else { COPY_PADDING };
    let grow = if fits { 0 } else { base + COPY_PADDING - old_len };
    if grow > 0 {
        let at = props + 40;
        let old_size = u64::from_le_bytes(old[at..at + 8].try_into().unwrap_or_default());
        let flags = u32::from_le_bytes(old[props + 88..props + 92].try_into().unwrap_or_default());
        // §3.2: the File Size is invalid when the Broadcast flag is set.
        if flags & 1 == 0 {
            fill.file_size = Some(old_size.saturating_add(grow as u64));
        }
    }
    let new = build(&parts, &fill)?;
    if fits && in_place_ok {
        let first = new.iter().zip(&old).position(|(a, b)| a != b);
        let last = new.iter().zip(&old).rposition(|(a, b)| a != b);
        let writes = match (first, last) {
            (Some(a), Some(b)) => vec![(a as u64, new[a..=b].to_vec())],
            _ => Vec::new(),
        };
        return Ok(Plan::InPlace(writes));
    }
    Ok(Plan::Copy(vec![
        Piece::Bytes(new),
        Piece::Range {
            start: size,
            len: file_len - size,
        },
    ]))
}

/// True when a Padding Object of `parts` (or of the Header Extension)
/// takes the difference.
fn parts_have_slack(parts: &[Part]) -> bool {
    parts.iter().any(|p| match p {
        Part::Slack => true,
        Part::Extension(_, inner) => parts_have_slack(inner),
        _ => false,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn guid_bytes() {
        // The Header Object GUID as stored at the start of every ASF file.
        let stored = [
            0x30, 0x26, 0xB2, 0x75, 0x8E, 0x66, 0xCF, 0x11, 0xA6, 0xD9, 0x00, 0xAA, 0x00, 0x62, 0xCE, 0x6C,
        ];
        assert_eq!(HEADER, stored);
        assert_eq!(&PADDING[..4], &[0x74, 0xD4, 0x06, 0x18]);
    }
}
