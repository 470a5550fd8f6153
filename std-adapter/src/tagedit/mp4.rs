//! MP4, M4A, MOV: the item list in `moov` rewritten. The new `moov` goes
//! in place when it fits the old one plus the `free`/`skip` boxes beside
//! it (what is left becomes a `free` box); otherwise a copy puts it where
//! the old one was, followed by a `free` box of [`COPY_PADDING`] bytes for
//! later edits, and when media data follows it, every chunk offset past it
//! (`stco`/`co64`) is shifted by the growth (an `stco` that would pass 4
//! GiB becomes a `co64`).

use super::mp4_ilst::edit_moov;
use super::mp4_offsets::{check_offsets, shift_offsets, widen_one};
use super::plan::{Piece, Plan};
use super::{malformed, read_at, Edits};
use std::fs::File;

/// Most top-level boxes walked.
const MAX_TOP: usize = 100_000;
/// Largest `moov` read into memory.
const MAX_MOOV: u64 = 256 << 20;
/// Content of the `free` box written after a `moov` that a copy moved or
/// grew.
pub(super) const COPY_PADDING: u64 = 1024;

/// A top-level box of the file.
#[derive(Debug, Clone, Copy)]
struct Top {
    pos: u64,
    len: u64,
    kind: [u8; 4],
}

impl Top {
    fn end(&self) -> u64 {
        self.pos + self.len
    }
    fn is_free(&self) -> bool {
        &self.kind == b"free" || &self.kind == b"skip"
    }
}

/// The top-level boxes. Errors: a box past the end of the file (a
/// truncated file is refused: a copy would not be whole), too many boxes.
fn walk(file: &File) -> std::io::Result<Vec<Top>> {
    let file_len = file.metadata()?.len();
    let mut tops = Vec::new();
    let mut pos = 0u64;
    while pos < file_len {
        if tops.len() == MAX_TOP {
            return Err(malformed(format!("mp4: more than {MAX_TOP} top-level boxes")));
        }
        let h = read_at(file, pos, 8.min(file_len - pos) as usize, "mp4: a top-level box header")?;
        let h: [u8; 8] = h
            .try_into()
            .map_err(|_| malformed(format!("mp4: a box header cut at byte {pos}")))?;
        let size = u64::from(u32::from_be_bytes([h[0], h[1], h[2], h[3]]));
        let kind = [h[4], h[5], h[6], h[7]];
        let (len, header) = match size {
            0 => (file_len - pos, 8),
            1 => {
                let l = read_at(file, pos + 8, 8, "mp4: a 64-bit box size")?;
                (u64::from_be_bytes(l.try_into().unwrap_or_default()), 16)
            }
            n => (n, 8),
        };
        if len < header || pos.checked_add(len).is_none_or(|e| e > file_len) {
            return Err(malformed(format!(
                "mp4: top-level box '{}' at byte {pos} runs past the end of the file (ISO/IEC 14496-12 4.2)",
                String::from_utf8_lossy(&kind)
            )));
        }
        tops.push(Top { pos, len, kind });
        pos += len;
    }
    Ok(tops)
}

/// The header of a `free` box of `len` bytes in all (at least 8): 8
/// bytes, or 16 with a 64-bit size past 4 GiB.
fn free_header(len: u64) -> Vec<u8> {
    match u32::try_from(len) {
        Ok(n) => [&n.to_be_bytes()[..], b"free"].concat(),
        Err(_) => [&1u32.to_be_bytes()[..], b"free", &len.to_be_bytes()].concat(),
    }
}

/// The writes that put `new` at `start`: when it replaces `old` at the
/// same place, its 8-byte header and then only from the first byte that
/// differs (the tracks before `udta` are not written again).
fn unchanged_skipped(start: u64, old_pos: u64, old: &[u8], new: Vec<u8>) -> Vec<(u64, Vec<u8>)> {
    if start != old_pos || new.len() < 8 {
        return vec![(start, new)];
    }
    let same = new.iter().zip(old).skip(8).take_while(|(a, b)| a == b).count();
    let from = 8 + same;
    let mut writes = vec![(start, new.get(..8).unwrap_or(&[]).to_vec())];
    if from < new.len() {
        writes.push((start + from as u64, new.get(from..).unwrap_or(&[]).to_vec()));
    }
    writes
}

/// The plan for `edits` on the MP4 file `file`.
pub(super) fn plan(file: &File, edits: &Edits, in_place_ok: bool) -> std::io::Result<Plan> {
    let tops = walk(file)?;
    let mut moovs = tops.iter().enumerate().filter(|(_, t)| &t.kind == b"moov");
    let (i, moov) = moovs
        .next()
        .ok_or_else(|| malformed("mp4: no moov box (ISO/IEC 14496-12 8.2.1)"))?;
    if moovs.next().is_some() {
        return Err(malformed("mp4: more than one moov box (ISO/IEC 14496-12 8.2.1)"));
    }
    if moov.len > MAX_MOOV {
        return Err(malformed(format!(
            "mp4: a moov of {} bytes is over the editor's 256 MiB",
            moov.len
        )));
    }
    let old = read_at(file, moov.pos, moov.len as usize, "mp4 moov")?;
    let file_len = file.metadata()?.len();
    // Every chunk inside the file: a truncated file is refused.
    check_offsets(&old, file_len)?;
    let mut new = edit_moov(&old, edits)?;
    // The region the new moov may take: moov and the free boxes beside it.
    let lo = tops
        .get(..i)
        .map_or(i, |b| i - b.iter().rev().take_while(|t| t.is_free()).count());
    let hi = i + tops
        .get(i + 1..)
        .map_or(0, |a| a.iter().take_while(|t| t.is_free()).count());
    let (start, end) = (tops[lo].pos, tops[hi].end());
    let avail = end - start;
    let new_len = new.len() as u64;
    let fits = new_len == avail || new_len + 8 <= avail;
    if fits && in_place_ok {
        let mut writes = unchanged_skipped(start, moov.pos, &old, new);
        if avail > new_len {
            let free_at = start + new_len;
            let header = free_header(avail - new_len);
            // Zeros where the old moov was, so old values do not linger.
            let zero_from = (free_at + header.len() as u64).max(moov.pos);
            writes.push((free_at, header));
            if moov.end() > zero_from {
                writes.push((zero_from, vec![0u8; (moov.end() - zero_from) as usize]));
            }
        }
        return Ok(Plan::InPlace(writes));
    }
    // What takes the region's place: the new moov and a free box (its
    // content zeros written from a fixed buffer).
    let (head, free_len) = if fits {
        (new, avail - new_len)
    } else {
        let media_after = tops.get(hi + 1..).unwrap_or(&[]).iter().any(|t| &t.kind == b"mdat");
        if media_after {
            if let Some(t) = tops
                .iter()
                .skip(hi + 1)
                .find(|t| matches!(&t.kind, b"moof" | b"mfra" | b"meta"))
            {
                return Err(std::io::Error::new(
                    std::io::ErrorKind::Unsupported,
                    format!(
                        "mp4: the moov grows and '{}' follows it (absolute offsets outside moov): not rewritten",
                        String::from_utf8_lossy(&t.kind)
                    ),
                ));
            }
            // The growth, again after each stco that must become co64.
            let grown = |m: &[u8]| m.len() as u64 + 8 + COPY_PADDING - avail;
            loop {
                let delta = grown(&new);
                if !widen_one(&mut new, end, delta)? {
                    break;
                }
            }
            let delta = grown(&new);
            shift_offsets(&mut new, end, delta)?;
        }
        (new, 8 + COPY_PADDING)
    };
    let header = free_header(free_len);
    let zeros = free_len.saturating_sub(header.len() as u64);
    let mut pieces = vec![Piece::Range { start: 0, len: start }, Piece::Bytes(head)];
    if free_len > 0 {
        pieces.push(Piece::Bytes(header));
        pieces.push(Piece::Zeros(zeros));
    }
    pieces.push(Piece::Range {
        start: end,
        len: file_len - end,
    });
    Ok(Plan::Copy(pieces))
}
