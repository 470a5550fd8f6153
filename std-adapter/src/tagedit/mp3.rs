//! MP3: the ID3v2 tag at the start rewritten (as ID3v2.4) in place when the new frames
//! fit its size (the rest padding), else a copy with a new tag and
//! [`COPY_PADDING`] bytes of padding; an ID3v1 block at the end kept in
//! step.

use super::plan::{Piece, Plan};
use super::{id3v1, id3v2, Edits};
use std::fs::File;

/// Padding after the frames of a tag written by a copy, for later edits
/// in place.
pub(super) const COPY_PADDING: u64 = 1024;

/// The plan for `edits` on the MP3 file `file`.
pub(super) fn plan(file: &File, edits: &Edits, in_place_ok: bool) -> std::io::Result<Plan> {
    let tag = id3v2::read(file)?;
    let region = tag.as_ref().map_or(0, |t| t.region);
    let v1 = id3v1::read(file, region)?;
    let mut frames = match &tag {
        Some(t) => id3v2::frames_v24(t)?,
        // A new tag starts with what an ID3v1 block holds: readers that
        // find an ID3v2 tag no longer look at the block.
        None => id3v2::from_fields(&v1.as_ref().map(|(_, b)| id3v1::fields(b)).unwrap_or_default())?,
    };
    id3v2::apply(&mut frames, edits)?;
    let new_v1 = v1
        .as_ref()
        .map(|(pos, block)| (*pos, id3v1::apply(block.clone(), edits)));
    let len = id3v2::frames_len(&frames);
    if let (true, Some(t)) = (in_place_ok, &tag) {
        if len <= t.region - 10 {
            let bytes = id3v2::build(&frames, t.region - 10)?;
            let end = 10 + len;
            // Zeros over what the old frames (and a footer) held past the new ones.
            let old_end = if t.footer { t.region } else { t.frames_end };
            let mut writes = vec![(0, bytes)];
            if old_end > end {
                writes.push((end, vec![0u8; (old_end - end) as usize]));
            }
            if let (Some((pos, new)), Some((_, old))) = (&new_v1, &v1) {
                if new != old {
                    writes.push((*pos, new.clone()));
                }
            }
            return Ok(Plan::InPlace(writes));
        }
    }
    let mut head = id3v2::build(&frames, len + COPY_PADDING)?;
    head.resize(head.len() + COPY_PADDING as usize, 0);
    let file_len = file.metadata()?.len();
    let audio_end = new_v1.as_ref().map_or(file_len, |(pos, _)| *pos);
    let mut pieces = vec![
        Piece::Bytes(head),
        Piece::Range {
            start: region,
            len: audio_end - region,
        },
    ];
    if let Some((_, block)) = new_v1 {
        pieces.push(Piece::Bytes(block));
    }
    Ok(Plan::Copy(pieces))
}
