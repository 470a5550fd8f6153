//! ISO BMFF boxes as the MP4 tag editor needs them (ISO/IEC 14496-12 §4.2):
//! headers read from a byte slice, the children of a box, a splice that
//! replaces bytes inside a box and corrects its ancestors' sizes.

use super::malformed;

/// Most children walked in one box.
const MAX_CHILDREN: usize = 100_000;

/// One box in a byte slice: where it starts, its header length (8, or 16
/// with a 64-bit size), where it ends, its type.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct BoxAt {
    pub start: usize,
    pub header: usize,
    pub end: usize,
    pub kind: [u8; 4],
}

impl BoxAt {
    /// Where its content starts.
    pub fn body(&self) -> usize {
        self.start + self.header
    }
}

/// The box header at `at`, the box ending at most at `limit` (a size of 0
/// runs to `limit`). Errors: a header or size past `limit`, a size below
/// the header.
pub(super) fn box_at(buf: &[u8], at: usize, limit: usize) -> std::io::Result<BoxAt> {
    let bad = || {
        malformed(format!(
            "mp4: the box at moov byte {at} runs past its parent (ISO/IEC 14496-12 4.2)"
        ))
    };
    let h = buf.get(at..at + 8).filter(|_| at + 8 <= limit).ok_or_else(bad)?;
    let size32 = u32::from_be_bytes([h[0], h[1], h[2], h[3]]);
    let kind = [h[4], h[5], h[6], h[7]];
    let (size, header) = match size32 {
        0 => ((limit - at) as u64, 8),
        1 => {
            let l = buf.get(at + 8..at + 16).filter(|_| at + 16 <= limit).ok_or_else(bad)?;
            (u64::from_be_bytes(l.try_into().map_err(|_| bad())?), 16)
        }
        n => (u64::from(n), 8),
    };
    let end = usize::try_from(size)
        .ok()
        .and_then(|s| at.checked_add(s))
        .ok_or_else(bad)?;
    if size < header as u64 || end > limit {
        return Err(bad());
    }
    Ok(BoxAt {
        start: at,
        header,
        end,
        kind,
    })
}

/// The children of the content `from..to`.
pub(super) fn children(buf: &[u8], from: usize, to: usize) -> std::io::Result<Vec<BoxAt>> {
    let mut out = Vec::new();
    let mut at = from;
    while at + 8 <= to {
        if out.len() == MAX_CHILDREN {
            return Err(malformed("mp4: too many boxes in one parent"));
        }
        let b = box_at(buf, at, to)?;
        out.push(b);
        at = b.end;
    }
    Ok(out)
}

/// The first child of `parent` of type `kind`, its content starting `skip`
/// bytes into the body (4 for a full box's version and flags).
pub(super) fn child(buf: &[u8], parent: &BoxAt, skip: usize, kind: &[u8; 4]) -> std::io::Result<Option<BoxAt>> {
    Ok(children(buf, parent.body() + skip, parent.end)?
        .into_iter()
        .find(|b| &b.kind == kind))
}

/// A box of type `kind` around `content` (a 32-bit size).
pub(super) fn make(kind: &[u8; 4], content: &[u8]) -> std::io::Result<Vec<u8>> {
    let size = u32::try_from(8 + content.len()).map_err(|_| malformed("mp4: a new box is over 4 GiB"))?;
    let mut out = Vec::with_capacity(8 + content.len());
    out.extend_from_slice(&size.to_be_bytes());
    out.extend_from_slice(kind);
    out.extend_from_slice(content);
    Ok(out)
}

/// The header of a box of type `kind` holding `content` bytes: 8 bytes,
/// or 16 (a 64-bit size) when `wide` or when 32 bits cannot hold its size.
pub(super) fn box_header(kind: &[u8; 4], content: u64, wide: bool) -> Vec<u8> {
    match u32::try_from(content + 8) {
        Ok(n) if !wide => [&n.to_be_bytes()[..], kind].concat(),
        _ => [&1u32.to_be_bytes()[..], kind, &(content + 16).to_be_bytes()].concat(),
    }
}

/// Replaces `buf[from..to]` by `new` and adds the change of length to the
/// size of every box of `ancestors` (each of which holds `from..to`).
/// Errors: a 32-bit size that would overflow.
pub(super) fn splice(
    buf: &mut Vec<u8>,
    ancestors: &[BoxAt],
    from: usize,
    to: usize,
    new: &[u8],
) -> std::io::Result<()> {
    let delta = new.len() as i64 - (to - from) as i64;
    for a in ancestors {
        let field = if a.header == 16 {
            a.start + 8..a.start + 16
        } else {
            a.start..a.start + 4
        };
        let old = buf
            .get(field.clone())
            .ok_or_else(|| malformed("mp4: a box header vanished"))?;
        if a.header == 8 && old == [0, 0, 0, 0] {
            continue; // size 0: to the end of the file, still true.
        }
        let size = old.iter().fold(0u64, |acc, &b| (acc << 8) | u64::from(b));
        let new_size = size
            .checked_add_signed(delta)
            .ok_or_else(|| malformed("mp4: a box size underflows"))?;
        let bytes = if a.header == 16 {
            new_size.to_be_bytes().to_vec()
        } else {
            u32::try_from(new_size)
                .map_err(|_| malformed("mp4: a box would pass 4 GiB with a 32-bit size"))?
                .to_be_bytes()
                .to_vec()
        };
        buf.splice(field, bytes);
    }
    buf.splice(from..to, new.iter().copied());
    Ok(())
}
