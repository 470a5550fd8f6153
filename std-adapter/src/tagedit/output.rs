//! Carries out a [`Plan`]: positioned writes into the input, or a new file
//! under a temporary name beside the target, renamed over it at the end
//! ([`crate::FileSink`]).

use super::plan::{Piece, Plan};
use super::EditMode;
use crate::FileSink;
use mediaslice::Sink;
use std::fs::{File, OpenOptions};
use std::io;
use std::os::unix::fs::FileExt;
use std::path::Path;

/// Writes `plan`: in place into the file at `input` (read through `file`),
/// or as a copy renamed over `target`. Returns the mode and the bytes
/// written.
///
/// Errors: the I/O error. A failed copy removes its temporary file, and
/// `target` is as it was; a failed in-place write can only be a write
/// error of the file system after every check passed.
pub(super) fn carry_out(file: &File, input: &Path, target: &Path, plan: Plan) -> io::Result<(EditMode, u64)> {
    let bytes = plan.bytes();
    match plan {
        Plan::InPlace(writes) => {
            let len = file.metadata()?.len();
            if writes
                .iter()
                .any(|(pos, b)| pos.checked_add(b.len() as u64).is_none_or(|end| end > len))
            {
                return Err(io::Error::other(
                    "tag edit: an in-place write would pass the end of the file",
                ));
            }
            let out = OpenOptions::new().write(true).open(input)?;
            for (pos, data) in &writes {
                out.write_all_at(data, *pos)?;
            }
            out.sync_data()?;
            Ok((EditMode::InPlace, bytes))
        }
        Plan::Append { writes, at, tail } => {
            let len = file.metadata()?.len();
            let end = at.checked_add(tail.iter().map(Piece::len).sum());
            if at > len
                || end.is_none_or(|e| e < len)
                || writes
                    .iter()
                    .any(|(pos, b)| pos.checked_add(b.len() as u64).is_none_or(|e| e > at))
                || tail
                    .iter()
                    .any(|p| matches!(p, Piece::Range { start, len } if start.checked_add(*len).is_none_or(|e| e > at)))
            {
                return Err(io::Error::other(
                    "tag edit: an appending write would overlap or leave a gap",
                ));
            }
            let out = OpenOptions::new().write(true).open(input)?;
            // The new tag first, past what the file's pointers reach; then
            // the pointers to it.
            let mut pos = at;
            for piece in &tail {
                match piece {
                    Piece::Bytes(b) => out.write_all_at(b, pos)?,
                    Piece::Range { start, len } => copy_within(file, &out, *start, *len, pos)?,
                    Piece::Zeros(n) => write_zeros(*n, &mut |b, off| out.write_all_at(b, pos + off))?,
                    Piece::ChunkOffsets { .. } => {
                        let mut at = pos;
                        super::mp4_skeleton::write_piece(file, piece, &mut |b| {
                            out.write_all_at(b, at)?;
                            at += b.len() as u64;
                            Ok(())
                        })?
                    }
                    Piece::OggRenumber { .. } => {
                        return Err(io::Error::other("tag edit: Ogg pages cannot be appended"));
                    }
                }
                pos += piece.len();
            }
            out.sync_data()?;
            for (pos, data) in &writes {
                out.write_all_at(data, *pos)?;
            }
            out.sync_data()?;
            Ok((EditMode::Extended, bytes))
        }
        Plan::Copy(pieces) => {
            let mut sink = FileSink::create(target).map_err(|e| {
                io::Error::new(
                    e.kind(),
                    format!("cannot create a file beside {}: {e}", target.display()),
                )
            })?;
            std::fs::set_permissions(sink.temp_path(), file.metadata()?.permissions())?;
            for piece in &pieces {
                match piece {
                    Piece::Bytes(b) => sink.write_all(b).map_err(|e| io::Error::other(e.to_string()))?,
                    Piece::Range { start, len } => sink.copy_from(file, *start, *len)?,
                    Piece::OggRenumber {
                        start,
                        len,
                        serial,
                        delta,
                    } => super::ogg::copy_renumbered(file, *start, *len, *serial, *delta, &mut |b| {
                        sink.write_all(b).map_err(|e| io::Error::other(e.to_string()))
                    })?,
                    Piece::Zeros(len) => write_zeros(*len, &mut |b, _| {
                        sink.write_all(b).map_err(|e| io::Error::other(e.to_string()))
                    })?,
                    Piece::ChunkOffsets { .. } => super::mp4_skeleton::write_piece(file, piece, &mut |b| {
                        sink.write_all(b).map_err(|e| io::Error::other(e.to_string()))
                    })?,
                }
            }
            sink.commit()?;
            Ok((EditMode::Copy, bytes))
        }
    }
}

/// Hands `len` zero bytes to `write` (the bytes and their offset from the
/// first) from one fixed buffer.
fn write_zeros(len: u64, write: &mut dyn FnMut(&[u8], u64) -> io::Result<()>) -> io::Result<()> {
    let zeros = [0u8; 64 << 10];
    let mut done = 0u64;
    while done < len {
        let n = (len - done).min(zeros.len() as u64) as usize;
        write(zeros.get(..n).unwrap_or(&[]), done)?;
        done += n as u64;
    }
    Ok(())
}

/// Copies `len` bytes at `start` of `from` to `to` at `at` (the same file
/// opened twice; the ranges do not overlap) through one buffer of 256 KiB.
fn copy_within(from: &File, to: &File, start: u64, len: u64, at: u64) -> io::Result<()> {
    let mut buf = vec![0u8; (256 << 10).min(len as usize)];
    let mut done = 0u64;
    while done < len {
        let n = (len - done).min(buf.len() as u64) as usize;
        let chunk = buf.get_mut(..n).unwrap_or(&mut []);
        from.read_exact_at(chunk, start + done)?;
        to.write_all_at(chunk, at + done)?;
        done += n as u64;
    }
    Ok(())
}
