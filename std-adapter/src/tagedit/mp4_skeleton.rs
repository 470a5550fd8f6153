//! A `moov` as the MP4 tag editor holds it: every box read from the file
//! except the large leaves that no edit looks into (sample sizes, times,
//! sync samples, edit lists of a long recording: `stsz`, `stts`, `ctts`,
//! `stss`, ...), which stay in the file and come back as ranges of it.
//!
//! The item list (`udta`, `meta`) is edited on the skeleton by the same
//! byte-slice code as a whole `moov` (`mp4_ilst`); the chunk offset tables
//! (`stco`, `co64`) always stay in the file, scanned once, and are copied
//! shifted when the media moves (`mp4_offsets`). [`Skeleton::pieces`] gives
//! the new `moov` as the pieces of a plan, every container's size computed
//! again from what it holds (ISO/IEC 14496-12 §4.2). The memory of an edit
//! is the skeleton's, not the `moov`'s: the 10 MiB `moov` of a 4.5 GiB
//! camera file (716,810 samples) is a skeleton of 25 KB.

use super::mp4_box::{box_at, box_header, children, BoxAt};
use super::mp4_offsets::Table;
use super::plan::Piece;
use super::{malformed, read_at};
use std::fs::File;
use std::io;

/// Boxes that hold only boxes and are walked into (`moov` §8.2.1, `trak`
/// §8.3.1, `mdia` §8.4.1, `minf` §8.4.4, `stbl` §8.5.1): the way to the
/// chunk offset tables.
const CONTAINERS: [&[u8; 4]; 5] = [b"moov", b"trak", b"mdia", b"minf", b"stbl"];
/// Leaves an edit reads or changes: always held, whatever their size.
const HELD: [&[u8; 4]; 2] = [b"udta", b"meta"];
/// The chunk offset tables: always left in the file, scanned.
const OFFSETS: [&[u8; 4]; 2] = [b"stco", b"co64"];
/// A leaf larger than this and not in [`HELD`] stays in the file.
const SMALL: u64 = 64 << 10;
/// The type of the 12-byte stand-in for a box left in the file; its body
/// is the index of the range in [`Skeleton::left`] (big-endian `u32`).
const STAND_IN: [u8; 4] = *b"\0msl";
/// Deepest nesting walked (`moov/trak/mdia/minf/stbl` is 5).
const MAX_DEPTH: usize = 8;
/// Most boxes left in the file.
const MAX_LEFT: usize = 1 << 20;

/// A `moov` with its large leaves left in the file.
#[derive(Debug, Clone)]
pub(super) struct Skeleton {
    /// The boxes held, the large leaves replaced by stand-ins; every size
    /// field true of these bytes.
    pub bytes: Vec<u8>,
    /// The boxes left in the file.
    left: Vec<Left>,
    /// Chunk offsets at or past `.0` move by `.1` (the media after the
    /// `moov` moves).
    shift: Option<(u64, u64)>,
}

/// A box left in the file.
#[derive(Debug, Clone, Copy)]
struct Left {
    pos: u64,
    len: u64,
    /// A chunk offset table, scanned.
    table: Option<Table>,
}

impl Skeleton {
    /// Reads the `moov` of `len` bytes at `pos` of `file`. Errors: a box
    /// that runs past its parent, a box of the stand-in's own type, too
    /// deep a nesting.
    pub fn read(file: &File, pos: u64, len: u64) -> io::Result<Skeleton> {
        let mut s = Skeleton {
            bytes: Vec::new(),
            left: Vec::new(),
            shift: None,
        };
        s.add(file, pos, pos + len, 0)?;
        Ok(s)
    }

    /// Adds the box at `pos` of `file`, which ends at most at `limit`.
    fn add(&mut self, file: &File, pos: u64, limit: u64, depth: usize) -> io::Result<u64> {
        let head_len = (limit - pos).min(16) as usize;
        let head = read_at(file, pos, head_len, "mp4 moov: a box header")?;
        let room = usize::try_from(limit - pos).map_err(|_| malformed("mp4 moov: a box over the address space"))?;
        let b = box_at(&head, 0, room)?;
        let len = b.end as u64;
        if b.kind == STAND_IN {
            return Err(malformed("mp4 moov: a box of type \\0msl (reserved by this editor)"));
        }
        if CONTAINERS.contains(&&b.kind) && depth < MAX_DEPTH {
            let at = self.bytes.len();
            // The header as it was, its size corrected below.
            self.bytes.extend_from_slice(head.get(..b.header).unwrap_or(&[]));
            let mut child = pos + b.header as u64;
            let end = pos + len;
            while child + 8 <= end {
                child += self.add(file, child, end, depth + 1)?;
            }
            // Fewer than 8 bytes left over: kept as they were.
            if child < end {
                let rest = read_at(file, child, (end - child) as usize, "mp4 moov")?;
                self.bytes.extend_from_slice(&rest);
            }
            let held = (self.bytes.len() - at) as u64;
            set_size(&mut self.bytes, at, b.header, held)?;
        } else if depth >= MAX_DEPTH {
            return Err(malformed("mp4 moov: boxes nested too deep"));
        } else if (len <= SMALL || HELD.contains(&&b.kind)) && !(depth > 0 && OFFSETS.contains(&&b.kind)) {
            let whole = usize::try_from(len).map_err(|_| malformed("mp4 moov: a box over the address space"))?;
            self.bytes.extend(read_at(file, pos, whole, "mp4 moov: a box")?);
        } else {
            if self.left.len() == MAX_LEFT {
                return Err(malformed("mp4 moov: too many boxes"));
            }
            let index = self.left.len() as u32;
            let table = if OFFSETS.contains(&&b.kind) {
                Some(Table::read(file, pos, len)?)
            } else {
                None
            };
            self.left.push(Left { pos, len, table });
            self.bytes.extend_from_slice(&12u32.to_be_bytes());
            self.bytes.extend_from_slice(&STAND_IN);
            self.bytes.extend_from_slice(&index.to_be_bytes());
        }
        Ok(len)
    }

    /// Checks that every chunk offset is inside a file of `len` bytes.
    /// Errors: one that is not (a truncated file).
    pub fn check_offsets(&self, len: u64) -> io::Result<()> {
        match self.tables().find(|t| t.count > 0 && t.max >= len) {
            Some(t) => Err(malformed(format!(
                "mp4 stco: chunk offset {} is past the end of the file (ISO/IEC 14496-12 8.7.5)",
                t.max
            ))),
            None => Ok(()),
        }
    }

    /// The chunk offset tables.
    fn tables(&self) -> impl Iterator<Item = &Table> {
        self.left.iter().filter_map(|l| l.table.as_ref())
    }

    /// Moves every chunk offset at or past `from` by `delta` bytes (the
    /// media from `from` on moves by the growth of this very `moov`,
    /// which the widening of `stco` tables to `co64` adds to: the
    /// growth is found again until it holds). `avail` is the room the
    /// `moov` had, `extra` what is written after it in that room.
    /// Errors: a box that does not parse.
    pub fn shift_media(&mut self, from: u64, avail: u64, extra: u64) -> io::Result<()> {
        self.shift = None;
        // Each round after the first widens one more table or ends.
        for _ in 0..self.tables().count() + 2 {
            let delta = (self.len()? + extra).saturating_sub(avail);
            if self.shift == Some((from, delta)) {
                return Ok(());
            }
            self.shift = Some((from, delta));
        }
        Err(malformed("mp4 stco: the growth of the moov does not settle"))
    }

    /// The `moov` as pieces (the held bytes, ranges of the input for the
    /// boxes left in it) and its length. Errors: a box of the skeleton
    /// that does not parse (an edit broke it), a stand-in of no range.
    pub fn pieces(&self) -> io::Result<(Vec<Piece>, u64)> {
        let top = box_at(&self.bytes, 0, self.bytes.len())?;
        let mut out = Vec::new();
        let len = self.emit(&top, 0, &mut out)?;
        Ok((out, len))
    }

    /// The `moov`'s length in the file it would be written to.
    pub fn len(&self) -> io::Result<u64> {
        Ok(self.pieces()?.1)
    }

    /// Pushes the pieces of box `b` onto `out` and returns its length.
    fn emit(&self, b: &BoxAt, depth: usize, out: &mut Vec<Piece>) -> io::Result<u64> {
        let body = self.bytes.get(b.body()..b.end).unwrap_or(&[]);
        if b.kind == STAND_IN {
            let index = <[u8; 4]>::try_from(body).map_err(|_| malformed("mp4 moov: a broken stand-in"))?;
            let left = self
                .left
                .get(u32::from_be_bytes(index) as usize)
                .ok_or_else(|| malformed("mp4 moov: a stand-in of no range"))?;
            let piece = match (left.table, self.shift) {
                (Some(t), Some((from, delta))) if t.moves(from, delta) || t.widens(from, delta) != t.wide => {
                    Piece::ChunkOffsets {
                        start: left.pos,
                        len: left.len,
                        from,
                        delta,
                        co64: t.widens(from, delta),
                        out_len: t.shifted_len(from, delta),
                    }
                }
                _ => Piece::Range {
                    start: left.pos,
                    len: left.len,
                },
            };
            let len = piece.len();
            out.push(piece);
            return Ok(len);
        }
        if !CONTAINERS.contains(&&b.kind) || depth >= MAX_DEPTH {
            out.push(Piece::Bytes(self.bytes.get(b.start..b.end).unwrap_or(&[]).to_vec()));
            return Ok((b.end - b.start) as u64);
        }
        let header_at = out.len();
        out.push(Piece::Bytes(Vec::new()));
        let mut content = 0u64;
        let kids = children(&self.bytes, b.body(), b.end)?;
        let tail = kids.last().map_or(b.body(), |k| k.end);
        for k in &kids {
            content += self.emit(k, depth + 1, out)?;
        }
        if tail < b.end {
            out.push(Piece::Bytes(self.bytes.get(tail..b.end).unwrap_or(&[]).to_vec()));
            content += (b.end - tail) as u64;
        }
        let header = box_header(&b.kind, content, b.header == 16);
        let len = content + header.len() as u64;
        if let Some(p) = out.get_mut(header_at) {
            *p = Piece::Bytes(header);
        }
        Ok(len)
    }
}

/// Writes `len` into the size field of the box header at `at` (`header`
/// bytes long: 8, or 16 with a 64-bit size).
fn set_size(bytes: &mut [u8], at: usize, header: usize, len: u64) -> io::Result<()> {
    let bad = || malformed("mp4 moov: a box header vanished");
    if header == 16 {
        bytes
            .get_mut(at..at + 4)
            .ok_or_else(bad)?
            .copy_from_slice(&1u32.to_be_bytes());
        bytes
            .get_mut(at + 8..at + 16)
            .ok_or_else(bad)?
            .copy_from_slice(&len.to_be_bytes());
    } else {
        let n = u32::try_from(len).map_err(|_| malformed("mp4 moov: a box over 4 GiB with a 32-bit size"))?;
        bytes
            .get_mut(at..at + 4)
            .ok_or_else(bad)?
            .copy_from_slice(&n.to_be_bytes());
    }
    Ok(())
}

/// The bytes `pieces` stand for, the ranges read from `file`.
pub(super) fn materialise(file: &File, pieces: &[Piece]) -> io::Result<Vec<u8>> {
    let mut out = Vec::new();
    for p in pieces {
        match p {
            Piece::Bytes(b) => out.extend_from_slice(b),
            Piece::Range { start, len } => {
                let n = usize::try_from(*len).map_err(|_| malformed("mp4 moov: a box over the address space"))?;
                out.extend(read_at(file, *start, n, "mp4 moov")?);
            }
            Piece::Zeros(n) => out.resize(out.len() + *n as usize, 0),
            Piece::ChunkOffsets { .. } => write_piece(file, p, &mut |b| {
                out.extend_from_slice(b);
                Ok(())
            })?,
            Piece::OggRenumber { .. } => return Err(malformed("mp4 moov: an Ogg piece")),
        }
    }
    Ok(out)
}

/// Writes the [`Piece::ChunkOffsets`] `piece` through `write`, a block at
/// a time. Errors: another piece, a table that is not the one planned (the
/// file changed since).
pub(super) fn write_piece(
    file: &File,
    piece: &Piece,
    write: &mut dyn FnMut(&[u8]) -> io::Result<()>,
) -> io::Result<()> {
    let &Piece::ChunkOffsets {
        start,
        len,
        from,
        delta,
        co64,
        out_len,
    } = piece
    else {
        return Err(malformed("mp4: not a chunk offset piece"));
    };
    let t = Table::read(file, start, len)?;
    if t.widens(from, delta) != co64 || t.shifted_len(from, delta) != out_len {
        return Err(io::Error::other(
            "mp4 stco: the table changed since the edit was planned",
        ));
    }
    t.copy_shifted(file, from, delta, write)
}

/// The positioned writes that turn the `old` pieces, laid out from
/// `old_at`, into the `new` ones laid out from `new_at` in the same file:
/// a new piece equal to the old piece at the same position is skipped (the
/// tracks before `udta` are not written again), any other is written, its
/// ranges read from `file` first.
pub(super) fn changed_writes(
    file: &File,
    old: &[Piece],
    old_at: u64,
    new: &[Piece],
    new_at: u64,
) -> io::Result<Vec<(u64, Vec<u8>)>> {
    let mut at_old = Vec::with_capacity(old.len());
    let mut pos = old_at;
    for p in old {
        at_old.push((pos, p));
        pos += p.len();
    }
    let mut writes: Vec<(u64, Vec<u8>)> = Vec::new();
    let mut pos = new_at;
    for p in new {
        let same = at_old
            .binary_search_by_key(&pos, |(at, _)| *at)
            .ok()
            .and_then(|i| at_old.get(i))
            .is_some_and(|(_, q)| *q == p);
        if !same {
            let bytes = materialise(file, std::slice::from_ref(p))?;
            // Adjacent writes joined.
            match writes.last_mut() {
                Some((at, b)) if *at + b.len() as u64 == pos => b.extend_from_slice(&bytes),
                _ => writes.push((pos, bytes)),
            }
        }
        pos += p.len();
    }
    Ok(writes)
}
