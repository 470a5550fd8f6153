//! The Matroska cover picture (`tags --picture`, `--remove picture`): an
//! `AttachedFile` (RFC 9559 §5.1.6.1) in the Segment's `Attachments`,
//! named `cover.jpg` or `cover.png` as mkvmerge and the Matroska
//! attachment guidelines name a cover, which ffmpeg's reader shows as an
//! attached-picture stream. A new cover replaces the covers there (files
//! named `cover.*`, `small_cover.*`, `cover_land.*` or `small_cover_land.*`
//! of an `image/` type); `--remove picture` removes every attachment of an
//! `image/` type (every picture ffprobe shows, as for the other formats);
//! every other attachment (fonts) is kept byte for byte.

use super::ebml::{bytes_of, children, data_of, element, master, master_like, uint, uint_element};
use super::{malformed, Edits};
use std::io;

const ATTACHMENTS: u64 = super::mkv_layout::ATTACHMENTS;
const ATTACHED_FILE: u64 = 0x61A7;
const FILE_NAME: u64 = 0x466E;
const FILE_MEDIA_TYPE: u64 = 0x4660;
const FILE_DATA: u64 = 0x465C;
const FILE_UID: u64 = 0x46AE;

/// The cover names of the Matroska attachment guidelines, without the
/// extension.
const COVER_NAMES: [&str; 4] = ["cover", "small_cover", "cover_land", "small_cover_land"];

/// The FileName, FileMediaType and FileUID of the AttachedFile `b`.
fn file_facts(b: &[u8]) -> io::Result<(String, String, Option<u64>)> {
    let top = super::ebml::parse_header(b, 0)?.ok_or_else(|| malformed("matroska AttachedFile: no header"))?;
    let (mut name, mut mime, mut uid) = (String::new(), String::new(), None);
    for c in children(b, top.data as usize, b.len(), "AttachedFile")? {
        let d = data_of(b, &c);
        match c.id {
            FILE_NAME => name = String::from_utf8_lossy(d).into_owned(),
            FILE_MEDIA_TYPE => mime = String::from_utf8_lossy(d).into_owned(),
            FILE_UID => uid = uint(d),
            _ => {}
        }
    }
    Ok((name, mime, uid))
}

/// Whether `mime` is a picture's type.
fn is_image(mime: &str) -> bool {
    mime.to_ascii_lowercase().starts_with("image/")
}

/// Whether an attachment named `name` of type `mime` is a cover.
fn is_cover(name: &str, mime: &str) -> bool {
    let stem = name.rsplit_once('.').map_or(name, |(s, _)| s);
    is_image(mime) && COVER_NAMES.iter().any(|c| stem.eq_ignore_ascii_case(c))
}

/// A FileUID for `data` not among `used`: FNV-1a of the bytes, never 0.
fn new_uid(data: &[u8], used: &[u64]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for &b in data {
        h = (h ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01B3);
    }
    let mut uid = h.max(1);
    while used.contains(&uid) {
        uid = uid.wrapping_add(1).max(1);
    }
    uid
}

/// The new `Attachments` for `edits`, given the old one (its bytes, if the
/// file has one): `None` when nothing changes, `Some(empty)` when the
/// element goes (no file left), else its new bytes.
pub(super) fn edit_attachments(old: Option<&[u8]>, edits: &Edits) -> io::Result<Option<Vec<u8>>> {
    if !edits.touches_pictures() {
        return Ok(None);
    }
    let mut kept = Vec::new();
    let mut used = Vec::new();
    let mut dropped = false;
    if let Some(b) = old {
        let top = super::ebml::parse_header(b, 0)?
            .filter(|h| h.end() == b.len() as u64)
            .ok_or_else(|| malformed("matroska Attachments: its size does not match its bytes"))?;
        for k in children(b, top.data as usize, b.len(), "Attachments")? {
            let bytes = bytes_of(b, &k);
            if k.id == ATTACHED_FILE {
                let (name, mime, uid) = file_facts(bytes)?;
                if is_cover(&name, &mime) || (edits.remove_picture && is_image(&mime)) {
                    dropped = true;
                    continue;
                }
                used.extend(uid);
            }
            kept.push(bytes.to_vec());
        }
    }
    if let Some(p) = &edits.picture {
        let ext = match p.kind {
            super::PictureKind::Jpeg => "jpg",
            super::PictureKind::Png => "png",
        };
        kept.push(master(
            ATTACHED_FILE,
            &[
                element(FILE_NAME, format!("cover.{ext}").as_bytes()),
                element(FILE_MEDIA_TYPE, p.kind.mime().as_bytes()),
                element(FILE_DATA, &p.data),
                uint_element(FILE_UID, new_uid(&p.data, &used)),
            ],
        ));
    } else if !dropped {
        return Ok(None);
    }
    if !kept
        .iter()
        .any(|k| k.starts_with(&super::ebml::id_bytes(ATTACHED_FILE)))
    {
        return Ok(Some(Vec::new()));
    }
    Ok(Some(master_like(old, ATTACHMENTS, &kept)))
}

/// Whether the file's EBML header names DocType `webm` (RFC 8794 §11.2.6;
/// the header is a few dozen bytes at the start).
pub(super) fn is_webm(file: &std::fs::File) -> io::Result<bool> {
    use std::os::unix::fs::FileExt;
    let mut head = [0u8; 64];
    let n = file.read_at(&mut head, 0)?;
    let doc_type = [0x42, 0x82, 0x84, b'w', b'e', b'b', b'm'];
    Ok(head
        .get(..n)
        .unwrap_or(&[])
        .windows(doc_type.len())
        .any(|w| w == doc_type))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn covers_are_replaced_and_other_files_kept() {
        let file = |name: &str, mime: &str, uid: u64| {
            master(
                ATTACHED_FILE,
                &[
                    element(FILE_NAME, name.as_bytes()),
                    element(FILE_MEDIA_TYPE, mime.as_bytes()),
                    element(FILE_DATA, b"x"),
                    uint_element(FILE_UID, uid),
                ],
            )
        };
        let font = file("font.ttf", "font/ttf", 7);
        let poster = file("poster.jpg", "image/jpeg", 2);
        let old = master(ATTACHMENTS, &[file("Cover.JPG", "image/jpeg", 1), font.clone(), poster]);
        let jpeg = super::super::Picture::from_bytes(vec![0xFF, 0xD8, 0xFF, 0xE0, 0, 0]).unwrap();
        let edits = Edits {
            picture: Some(jpeg),
            ..Edits::default()
        };
        let new = edit_attachments(Some(&old), &edits).unwrap().unwrap();
        let top = super::super::ebml::parse_header(&new, 0).unwrap().unwrap();
        let kids = children(&new, top.data as usize, new.len(), "t").unwrap();
        assert_eq!(kids.len(), 3);
        assert_eq!(bytes_of(&new, &kids[0]), &font[..]);
        let (name, mime, uid) = file_facts(bytes_of(&new, &kids[2])).unwrap();
        assert_eq!((name.as_str(), mime.as_str()), ("cover.jpg", "image/jpeg"));
        assert!(uid.is_some_and(|u| u != 0 && u != 7 && u != 2));
        // Removing drops every picture, the poster too.
        let remove = Edits {
            remove_picture: true,
            ..Edits::default()
        };
        let only_font = edit_attachments(Some(&new), &remove).unwrap().unwrap();
        assert_eq!(only_font, master_like(Some(&new), ATTACHMENTS, &[font]));
        let none = master(ATTACHMENTS, &[file("cover.png", "image/png", 3)]);
        assert_eq!(edit_attachments(Some(&none), &remove).unwrap(), Some(Vec::new()));
        assert_eq!(edit_attachments(None, &remove).unwrap(), None);
        assert_eq!(edit_attachments(Some(&only_font), &remove).unwrap(), None);
    }
}
