//! Ogg Vorbis and Ogg Opus: the comment header (Vorbis I §5, RFC 7845
//! §5.2) rewritten. Always a copy: the header packets after the first are
//! laid into new pages (RFC 3533 §6), and when their page count changes,
//! every later page of the stream gets its sequence number moved and its
//! CRC recomputed while it is copied (one streaming pass, one page in
//! memory at a time). A picture is a `METADATA_BLOCK_PICTURE` comment: a
//! FLAC PICTURE block (RFC 9639 §8.8) in base64 (RFC 4648 §4), the
//! convention of the Xiph wiki's VorbisComment page, which ffmpeg reads.

use super::flac::{apply, build_comment, parse_comment, picture_body, FRONT_COVER};
use super::plan::{Piece, Plan};
use super::{malformed, read_at, Edits};
use mediaslice::crc::crc32_poly04c11db7;
use std::fs::File;
use std::io;
use std::os::unix::fs::FileExt;

/// Fixed part of a page header (RFC 3533 §6).
const HEADER: usize = 27;
/// Largest page: the header, 255 lacing values, 255 × 255 bytes.
const MAX_PAGE: usize = HEADER + 255 + 255 * 255;
/// Most pages the header packets may take.
const MAX_HEADER_PAGES: usize = 4096;
const CONTINUED: u8 = 0x01;

/// One page header.
#[derive(Debug, Clone)]
struct Page {
    pos: u64,
    flags: u8,
    serial: u32,
    seq: u32,
    lacing: Vec<u8>,
}

impl Page {
    fn len(&self) -> u64 {
        (HEADER + self.lacing.len()) as u64 + self.lacing.iter().map(|&l| u64::from(l)).sum::<u64>()
    }
    fn body(&self) -> u64 {
        self.pos + (HEADER + self.lacing.len()) as u64
    }
}

/// Reads the page header at `pos`. Errors: no capture pattern, a version
/// other than 0, a page past the end of the file.
fn page_at(file: &File, pos: u64, file_len: u64) -> io::Result<Page> {
    let h = read_at(file, pos, HEADER, "ogg: a page header")?;
    if h.get(..4) != Some(b"OggS") || h.get(4) != Some(&0) {
        return Err(malformed(format!("ogg: no page at byte {pos} (RFC 3533 §6)")));
    }
    let u32_at = |i: usize| u32::from_le_bytes([h[i], h[i + 1], h[i + 2], h[i + 3]]);
    let lacing = read_at(file, pos + HEADER as u64, usize::from(h[26]), "ogg: a lacing table")?;
    let p = Page {
        pos,
        flags: h[5],
        serial: u32_at(14),
        seq: u32_at(18),
        lacing,
    };
    if pos + p.len() > file_len {
        return Err(malformed(format!(
            "ogg: the page at byte {pos} runs past the end of the file"
        )));
    }
    Ok(p)
}

/// The data of page `p` (at most 65,025 bytes).
fn page_body(file: &File, p: &Page) -> io::Result<Vec<u8>> {
    read_at(file, p.body(), (p.pos + p.len() - p.body()) as usize, "ogg: a page")
}

/// The codecs edited: how their comment packet starts, and how many
/// header packets they have.
fn codec(first: &[u8]) -> Option<(&'static [u8], usize)> {
    if first.starts_with(b"\x01vorbis") {
        Some((b"\x03vorbis", 3))
    } else if first.starts_with(b"OpusHead") {
        Some((b"OpusTags", 2))
    } else {
        None
    }
}

/// The plan for `edits` on the Ogg file `file`.
pub(super) fn plan(file: &File, edits: &Edits) -> io::Result<Plan> {
    let file_len = file.metadata()?.len();
    let first = page_at(file, 0, file_len)?;
    let id = page_body(file, &first)?;
    let (magic, count) = codec(&id).ok_or_else(|| {
        io::Error::new(
            io::ErrorKind::Unsupported,
            "ogg: only Vorbis and Opus comments are edited",
        )
    })?;
    // The header packets after the first, from the pages that follow.
    let mut packets: Vec<Vec<u8>> = vec![Vec::new()];
    let mut pages = Vec::new();
    let mut pos = first.pos + first.len();
    // Whether the page before ends with an unfinished packet.
    let mut pending = false;
    if first.flags & CONTINUED != 0
        || first.lacing.last() == Some(&255)
        || first.lacing.iter().filter(|&&l| l < 255).count() != 1
    {
        return Err(malformed(
            "ogg: the first page does not hold the identification header alone (RFC 7845 §3, Vorbis I §4.2.1)",
        ));
    }
    loop {
        if pages.len() == MAX_HEADER_PAGES {
            return Err(malformed("ogg: the header packets take too many pages"));
        }
        let p = page_at(file, pos, file_len)?;
        if p.serial != first.serial {
            return Err(io::Error::new(
                io::ErrorKind::Unsupported,
                "ogg: another stream's page among the headers (a multiplexed file): not edited",
            ));
        }
        // A page's continued flag must say whether the packet before is
        // unfinished: readers drop the rest of a packet whose start they
        // did not see, and the start of one a page leaves unfinished,
        // while the pages written here are flagged from the packets.
        if (p.flags & CONTINUED != 0) != pending {
            return Err(malformed(format!(
                "ogg: the page at byte {pos} is {} as continuing a packet, but the page before {} (RFC 3533 §6)",
                if pending { "not flagged" } else { "flagged" },
                if pending {
                    "leaves one unfinished"
                } else {
                    "ends its packets"
                },
            )));
        }
        if let Some(&l) = p.lacing.last() {
            pending = l == 255;
        }
        let body = page_body(file, &p)?;
        let mut at = 0usize;
        for &l in &p.lacing {
            if packets.len() == count {
                return Err(malformed("ogg: audio data on the last header page (Vorbis I §4.2.1)"));
            }
            let seg = body.get(at..at + usize::from(l)).unwrap_or(&[]);
            if let Some(k) = packets.last_mut() {
                k.extend_from_slice(seg);
            }
            at += usize::from(l);
            if l < 255 {
                packets.push(Vec::new());
            }
        }
        pos += p.len();
        pages.push(p);
        if packets.len() == count {
            break;
        }
    }
    packets.pop();
    // A stream whose headers come again (a repeated OpusHead after the
    // tags, as some streams carry): a reader may take either comment.
    if pos < file_len {
        let next = page_at(file, pos, file_len)?;
        let head = page_body(file, &next)?;
        if next.serial == first.serial && id.get(..8).is_some_and(|m| head.starts_with(m)) {
            return Err(io::Error::new(
                io::ErrorKind::Unsupported,
                "ogg: the stream's headers are repeated after the comment: not edited",
            ));
        }
    }
    let comment = packets
        .first()
        .filter(|c| c.starts_with(magic))
        .ok_or_else(|| malformed("ogg: the second packet is not a comment header (Vorbis I §5, RFC 7845 §5.2)"))?;
    let body = comment.get(magic.len()..).unwrap_or(&[]);
    let (vendor, mut entries) = parse_comment(body)?;
    let old_len = build_comment(&vendor, &entries)?.len();
    let trailer = body.get(old_len..).unwrap_or(&[]).to_vec();
    apply(&mut entries, edits)?;
    pictures(&mut entries, edits)?;
    let mut new_comment = magic.to_vec();
    new_comment.extend(build_comment(&vendor, &entries)?);
    new_comment.extend(trailer);
    if let Some(c) = packets.first_mut() {
        *c = new_comment;
    }
    let first_seq = pages.first().map_or(1, |p| p.seq);
    let new_pages = paginate(&packets, first.serial, first_seq)?;
    let delta = i64::try_from(new_pages.len()).unwrap_or(0) - i64::try_from(pages.len()).unwrap_or(0);
    let header_start = first.pos + first.len();
    let mut pieces = vec![
        Piece::Range {
            start: 0,
            len: header_start,
        },
        Piece::Bytes(new_pages.concat()),
    ];
    let rest = file_len - pos;
    pieces.push(if delta == 0 {
        Piece::Range { start: pos, len: rest }
    } else {
        Piece::OggRenumber {
            start: pos,
            len: rest,
            serial: first.serial,
            delta,
        }
    });
    Ok(Plan::Copy(pieces))
}

/// The comment key of a picture.
const PICTURE_KEY: &[u8] = b"METADATA_BLOCK_PICTURE=";

/// Applies the picture edits to the comment entries: `--remove picture`
/// removes every `METADATA_BLOCK_PICTURE`, a new picture replaces those of
/// type 3 (front cover; the first 4 bytes of the block, the first 8
/// base64 characters) and goes where the first of them was, or at the end.
fn pictures(entries: &mut Vec<Vec<u8>>, edits: &Edits) -> io::Result<()> {
    if !edits.touches_pictures() {
        return Ok(());
    }
    let is_picture = |e: &[u8]| {
        e.get(..PICTURE_KEY.len())
            .is_some_and(|k| k.eq_ignore_ascii_case(PICTURE_KEY))
    };
    let replaced = |e: &[u8]| {
        is_picture(e)
            && (edits.remove_picture
                || super::base64::picture_type(e.get(PICTURE_KEY.len()..).unwrap_or(&[])) == Some(FRONT_COVER))
    };
    let first = entries.iter().position(|e| replaced(e));
    entries.retain(|e| !replaced(e));
    let Some(p) = &edits.picture else {
        return Ok(());
    };
    let block = picture_body(p)?;
    let mut entry = PICTURE_KEY.to_vec();
    entry.extend(super::base64::encode(&block));
    // The comment packet has no size limit of its own, but the comment
    // is built with FLAC's (a 24-bit block length): a JPEG or PNG of up
    // to about 12 MiB, base64-coded.
    if entry.len() >= 1 << 24 {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            "ogg: the picture, base64-coded, is over 16 MiB (a picture of at most about 12 MiB fits)",
        ));
    }
    entries.insert(first.unwrap_or(entries.len()).min(entries.len()), entry);
    Ok(())
}

/// The pages of `packets` (header packets: granule position 0 where a
/// packet ends, -1 on a page where none does), numbered from `seq`.
fn paginate(packets: &[Vec<u8>], serial: u32, seq: u32) -> io::Result<Vec<Vec<u8>>> {
    // Every segment: (length, whether it ends its packet), and where.
    let mut segs = Vec::new();
    for p in packets {
        let mut at = 0usize;
        loop {
            let n = (p.len() - at).min(255);
            segs.push((p.get(at..at + n).unwrap_or(&[]), n < 255));
            at += n;
            if n < 255 {
                break;
            }
        }
    }
    let mut pages = Vec::new();
    let mut continued = false;
    for (k, chunk) in segs.chunks(255).enumerate() {
        let ends = chunk.iter().any(|(_, e)| *e);
        let granule: u64 = if ends { 0 } else { u64::MAX };
        let mut page = b"OggS\0".to_vec();
        page.push(if continued { CONTINUED } else { 0 });
        page.extend(granule.to_le_bytes());
        page.extend(serial.to_le_bytes());
        let n = u32::try_from(k).map_err(|_| malformed("ogg: too many header pages"))?;
        page.extend(seq.wrapping_add(n).to_le_bytes());
        page.extend([0u8; 4]);
        page.push(chunk.len() as u8);
        page.extend(chunk.iter().map(|(s, _)| s.len() as u8));
        for (s, _) in chunk {
            page.extend_from_slice(s);
        }
        set_crc(&mut page);
        continued = chunk.last().is_some_and(|(_, e)| !e);
        pages.push(page);
    }
    Ok(pages)
}

/// Computes a page's CRC (RFC 3533 §6: over the page with the field zero).
fn set_crc(page: &mut [u8]) {
    if let Some(f) = page.get_mut(22..26) {
        f.fill(0);
    }
    let crc = crc32_poly04c11db7(0, page);
    if let Some(f) = page.get_mut(22..26) {
        f.copy_from_slice(&crc.to_le_bytes());
    }
}

/// Copies `len` bytes of pages from `start`, the pages of `serial` with
/// their sequence number moved by `delta` and their CRC recomputed, to
/// `out`. Errors: a page that does not parse or runs past the range.
pub(super) fn copy_renumbered(
    file: &File,
    start: u64,
    len: u64,
    serial: u32,
    delta: i64,
    out: &mut dyn FnMut(&[u8]) -> io::Result<()>,
) -> io::Result<()> {
    let end = start + len;
    let mut buf = vec![0u8; MAX_PAGE];
    let mut pos = start;
    while pos < end {
        let p = page_at(file, pos, end)?;
        let n = p.len() as usize;
        let page = buf
            .get_mut(..n)
            .ok_or_else(|| malformed("ogg: a page over the largest size"))?;
        file.read_exact_at(page, pos)?;
        if p.serial == serial {
            let seq = (i64::from(p.seq) + delta) as u32;
            if let Some(f) = page.get_mut(18..22) {
                f.copy_from_slice(&seq.to_le_bytes());
            }
            set_crc(page);
        }
        out(page)?;
        pos += n as u64;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tagedit::Picture;

    /// A `METADATA_BLOCK_PICTURE` entry of picture type `kind` (the rest of
    /// the block left out: only the type is read).
    fn entry(kind: u32) -> Vec<u8> {
        let mut e = PICTURE_KEY.to_vec();
        e.extend(crate::tagedit::base64::encode(
            &[&kind.to_be_bytes()[..], b"rest"].concat(),
        ));
        e
    }

    #[test]
    fn a_cover_replaces_front_covers_only_and_removal_takes_all() {
        let jpeg = Picture::from_bytes(vec![0xFF, 0xD8, 0xFF, 0xD9]).unwrap();
        let start = vec![b"TITLE=x".to_vec(), entry(0), entry(3), b"ARTIST=y".to_vec(), entry(3)];
        let mut e = start.clone();
        pictures(&mut e, &Edits::default()).unwrap();
        assert_eq!(e, start);
        let add = Edits {
            picture: Some(jpeg.clone()),
            ..Edits::default()
        };
        pictures(&mut e, &add).unwrap();
        let mut new = PICTURE_KEY.to_vec();
        new.extend(crate::tagedit::base64::encode(&picture_body(&jpeg).unwrap()));
        assert_eq!(e, [b"TITLE=x".to_vec(), entry(0), new, b"ARTIST=y".to_vec()]);
        let remove = Edits {
            remove_picture: true,
            ..Edits::default()
        };
        pictures(&mut e, &remove).unwrap();
        assert_eq!(e, [b"TITLE=x".to_vec(), b"ARTIST=y".to_vec()]);
    }
}
