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
            let end = at.checked_add(tail.len() as u64);
            if at > len
                || end.is_none_or(|e| e < len)
                || writes
                    .iter()
                    .any(|(pos, b)| pos.checked_add(b.len() as u64).is_none_or(|e| e > at))
            {
                return Err(io::Error::other(
                    "tag edit: an appending write would overlap or leave a gap",
                ));
            }
            let out = OpenOptions::new().write(true).open(input)?;
            // The new tag first, past what the file's pointers reach; then
            // the pointers to it.
            out.write_all_at(&tail, at)?;
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
                    Piece::Zeros(len) => {
                        let zeros = [0u8; 64 << 10];
                        let mut left = *len;
                        while left > 0 {
                            let n = left.min(zeros.len() as u64) as usize;
                            sink.write_all(zeros.get(..n).unwrap_or(&[]))
                                .map_err(|e| io::Error::other(e.to_string()))?;
                            left -= n as u64;
                        }
                    }
                }
            }
            sink.commit()?;
            Ok((EditMode::Copy, bytes))
        }
    }
}
