//! SeekHead entries (RFC 9559 §5.1.1): read, pointed at an element's new
//! place, added. A SeekPosition keeps its width when the new value fits it
//! (so a SeekHead whose targets only move closer keeps its size).

use super::ebml::uint_sized;
use super::ebml::{
    bytes_of, children, data_of, element, id_bytes, master, master_like, parse_header, uint, uint_element,
};
use super::malformed;
use std::io;

const SEEK_HEAD: u64 = super::mkv_layout::SEEK_HEAD;
const SEEK: u64 = 0x4DBB;
const SEEK_ID: u64 = 0x53AB;
const SEEK_POSITION: u64 = 0x53AC;

/// The entries of the SeekHead `sh`: (Element ID, SeekPosition). Errors:
/// a malformed SeekHead.
pub(super) fn entries(sh: &[u8]) -> io::Result<Vec<(u64, u64)>> {
    let mut out = Vec::new();
    for s in seeks(sh)?.iter().filter(|s| s.id == SEEK) {
        let seek = bytes_of(sh, s);
        let (mut id, mut pos) = (None, None);
        for c in children(seek, (s.data - s.start) as usize, seek.len(), "Seek")? {
            match c.id {
                SEEK_ID => id = uint(data_of(seek, &c)),
                SEEK_POSITION => pos = uint(data_of(seek, &c)),
                _ => {}
            }
        }
        if let (Some(id), Some(pos)) = (id, pos) {
            out.push((id, pos));
        }
    }
    Ok(out)
}

fn seeks(sh: &[u8]) -> io::Result<Vec<super::ebml::Header>> {
    let h = parse_header(sh, 0)?
        .filter(|h| h.id == SEEK_HEAD && h.end() == sh.len() as u64)
        .ok_or_else(|| malformed("matroska SeekHead: its size does not match its bytes"))?;
    children(sh, h.data as usize, sh.len(), "SeekHead")
}

/// The SeekHead `sh` with every entry `(id, old)` of `moves` pointing at
/// `new` instead, and a Seek appended for each `(id, position)` of `add`.
/// Returns `sh` itself when nothing changed.
pub(super) fn repoint(sh: &[u8], moves: &[(u64, u64, u64)], add: &[(u64, u64)]) -> io::Result<Vec<u8>> {
    let mut kids = Vec::new();
    let mut changed = !add.is_empty();
    for s in seeks(sh)? {
        let seek = bytes_of(sh, &s);
        if s.id != SEEK {
            kids.push(seek.to_vec());
            continue;
        }
        let inner = children(seek, (s.data - s.start) as usize, seek.len(), "Seek")?;
        let id = inner
            .iter()
            .find(|c| c.id == SEEK_ID)
            .and_then(|c| uint(data_of(seek, c)));
        let mut out = Vec::new();
        let mut this_changed = false;
        for c in &inner {
            let value = uint(data_of(seek, c));
            let target = moves
                .iter()
                .find(|(mid, old, _)| Some(*mid) == id && Some(*old) == value && c.id == SEEK_POSITION);
            match target {
                Some(&(_, _, new)) => {
                    out.push(uint_sized(SEEK_POSITION, new, data_of(seek, c).len()));
                    this_changed = true;
                }
                None => out.push(bytes_of(seek, c).to_vec()),
            }
        }
        changed |= this_changed;
        kids.push(if this_changed {
            master_like(Some(seek), SEEK, &out)
        } else {
            seek.to_vec()
        });
    }
    if !changed {
        return Ok(sh.to_vec());
    }
    for &(id, pos) in add {
        kids.push(master(
            SEEK,
            &[element(SEEK_ID, &id_bytes(id)), uint_element(SEEK_POSITION, pos)],
        ));
    }
    Ok(master_like(Some(sh), SEEK_HEAD, &kids))
}

/// The SeekHead `sh` without the entries `(Element ID, SeekPosition)` of
/// `gone` (elements removed from the Segment); `sh` itself when it lists
/// none. An entry is matched by its position too: a Segment may hold
/// several elements of one ID (Tags, RFC 9559 §5.1.8), and the others stay
/// listed.
pub(super) fn unlist(sh: &[u8], gone: &[(u64, u64)]) -> io::Result<Vec<u8>> {
    let mut kids = Vec::new();
    let mut changed = false;
    for s in seeks(sh)? {
        let seek = bytes_of(sh, &s);
        if s.id == SEEK {
            let inner = children(seek, (s.data - s.start) as usize, seek.len(), "Seek")?;
            let value = |want: u64| inner.iter().find(|c| c.id == want).and_then(|c| uint(data_of(seek, c)));
            if let (Some(id), Some(pos)) = (value(SEEK_ID), value(SEEK_POSITION)) {
                if gone.contains(&(id, pos)) {
                    changed = true;
                    continue;
                }
            }
        }
        kids.push(seek.to_vec());
    }
    if !changed {
        return Ok(sh.to_vec());
    }
    Ok(master_like(Some(sh), SEEK_HEAD, &kids))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn moves_keep_the_width_and_adds_append() {
        let seek = |id: u64, pos: &[u8]| master(SEEK, &[element(SEEK_ID, &id_bytes(id)), element(SEEK_POSITION, pos)]);
        let sh = master(
            SEEK_HEAD,
            &[seek(0x1549_A966, &[0, 0x80]), seek(0x1254_C367, &[0x02, 0x00])],
        );
        let moved = repoint(&sh, &[(0x1549_A966, 0x80, 0x40)], &[]).unwrap();
        assert_eq!(moved.len(), sh.len());
        assert_eq!(entries(&moved).unwrap(), [(0x1549_A966, 0x40), (0x1254_C367, 0x200)]);
        let grown = repoint(&sh, &[(0x1254_C367, 0x200, 0x1_0000)], &[(0x1C53_BB6B, 5)]).unwrap();
        assert_eq!(
            entries(&grown).unwrap(),
            [(0x1549_A966, 0x80), (0x1254_C367, 0x1_0000), (0x1C53_BB6B, 5)]
        );
        assert_eq!(repoint(&sh, &[(0x1F43_B675, 1, 2)], &[]).unwrap(), sh);
        assert_eq!(
            entries(&unlist(&sh, &[(0x1254_C367, 0x200)]).unwrap()).unwrap(),
            [(0x1549_A966, 0x80)]
        );
        assert_eq!(unlist(&sh, &[(0x1941_A469, 0x200)]).unwrap(), sh);
        // Two Tags: only the one at the position given leaves.
        let two = master(
            SEEK_HEAD,
            &[seek(0x1254_C367, &[0x02, 0x00]), seek(0x1254_C367, &[0x40, 0x00])],
        );
        assert_eq!(
            entries(&unlist(&two, &[(0x1254_C367, 0x4000)]).unwrap()).unwrap(),
            [(0x1254_C367, 0x200)]
        );
    }
}
