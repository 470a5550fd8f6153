//! Tags of WAV, RF64 and Wave64: the `LIST`/`INFO` chunk's subchunks
//! (RIFF MCI, "INFO List Chunk"), then the `bext` chunk's text fields
//! (EBU Tech 3285 §2.3).

use super::demuxer::WavDemuxer;
use crate::bytes::{array, le32};
use crate::codec::riff_tags::info_name;
use crate::error::Result;
use crate::format::traits::Context;
use crate::source::Source;
use crate::tags::{text_or_bytes, Tag, TagCursor, TagKey, TagScope, TagValue};

/// Cursor stage: find the INFO list.
const STAGE_START: u32 = 0;
/// Cursor stage: the INFO subchunk at `cur.offset`, up to `cur.end`.
const STAGE_INFO: u32 = 1;
/// Cursor stage: the `bext` field numbered `cur.offset`.
const STAGE_BEXT: u32 = 2;
/// Cursor stage: done.
const STAGE_DONE: u32 = 9;

/// EBU Tech 3285 §2.3: Description (256), Originator (32),
/// OriginatorReference (32), OriginationDate (10), OriginationTime (8),
/// then TimeReference (u64, [`BEXT_TIME_REFERENCE`]). Offset, length, key
/// (the spec's field name), name (ffprobe's).
const BEXT_FIELDS: [(u64, usize, &str, &str); 5] = [
    (0, 256, "description", "comment"),
    (256, 32, "originator", "encoded_by"),
    (288, 32, "originator_reference", "originator_reference"),
    (320, 10, "origination_date", "date"),
    (330, 8, "origination_time", "creation_time"),
];
/// Offset of `TimeReference` in `bext`.
const BEXT_TIME_REFERENCE: u64 = 338;

/// What the cursor found next: an INFO subchunk or `bext` text field (its
/// bytes, key and name), the `bext` TimeReference, or nothing at this step.
enum Next {
    Text(u64, usize, TagKey<'static>, Option<&'static str>),
    Int(&'static str, i64),
    Nothing,
}

impl WavDemuxer {
    /// The next tag: INFO subchunks, then `bext` fields.
    pub(super) fn tag<'s, S: Source>(
        &mut self,
        src: &'s mut S,
        ctx: &Context,
        cur: &mut TagCursor,
    ) -> Result<Option<Tag<'s>>> {
        let next = self.find(src, ctx, cur)?;
        Ok(match next {
            Next::Text(at, len, key, name) => Some(Tag {
                scope: TagScope::Format,
                key,
                name,
                value: text_or_bytes(src.bytes(at, len)?),
            }),
            Next::Int(key, v) => Some(Tag {
                scope: TagScope::Format,
                key: TagKey::Text(key),
                name: Some(key),
                value: TagValue::Int(v),
            }),
            Next::Nothing => None,
        })
    }

    /// Moves the cursor to the next tag and says where it is.
    fn find<S: Source>(&mut self, src: &mut S, ctx: &Context, cur: &mut TagCursor) -> Result<Next> {
        loop {
            match cur.stage {
                STAGE_START => {
                    if let Some(r) = self.info {
                        cur.offset = r.offset;
                        cur.end = r.offset + r.len as u64;
                        cur.stage = STAGE_INFO;
                    } else {
                        cur.stage = STAGE_BEXT;
                    }
                }
                STAGE_INFO => {
                    if cur.offset.saturating_add(8) > cur.end {
                        // The bext stage counts fields from 0.
                        cur.stage = STAGE_BEXT;
                        cur.offset = 0;
                        continue;
                    }
                    if let Some(next) = info_subchunk(src, ctx, cur)? {
                        return Ok(next);
                    }
                    continue;
                }
                STAGE_BEXT => {
                    if let Some(next) = self.bext_field(src, cur)? {
                        return Ok(next);
                    }
                }
                _ => return Ok(Next::Nothing),
            }
            if cur.stage == STAGE_BEXT {
                cur.offset = 0;
            }
        }
    }

    /// The `bext` field numbered `cur.offset` (empty text fields skipped),
    /// then TimeReference; `None` when the stage moved on.
    fn bext_field<S: Source>(&mut self, src: &mut S, cur: &mut TagCursor) -> Result<Option<Next>> {
        let Some(r) = self.bext else {
            cur.stage = STAGE_DONE;
            return Ok(None);
        };
        loop {
            let i = cur.offset as usize;
            cur.offset += 1;
            if let Some(&(off, len, key, name)) = BEXT_FIELDS.get(i) {
                let empty = matches!(text_or_bytes(src.bytes(r.offset + off, len)?), TagValue::Text(""));
                if empty {
                    continue;
                }
                return Ok(Some(Next::Text(r.offset + off, len, TagKey::Text(key), Some(name))));
            }
            if i == BEXT_FIELDS.len() {
                let t = u64::from_le_bytes(src.array(r.offset + BEXT_TIME_REFERENCE)?);
                return Ok(Some(Next::Int("time_reference", t.min(i64::MAX as u64) as i64)));
            }
            cur.stage = STAGE_DONE;
            return Ok(None);
        }
    }
}

/// The INFO subchunk at `cur.offset` (moving past it), or `None` for an
/// empty, oversized (`Limits::max_tag_bytes`) or overrunning one.
fn info_subchunk<S: Source>(src: &mut S, ctx: &Context, cur: &mut TagCursor) -> Result<Option<Next>> {
    let h: [u8; 8] = src.array(cur.offset)?;
    let id = array::<4>(&h, 0).unwrap_or([0; 4]);
    let size = le32(&h, 4).unwrap_or(0) as u64;
    let body = cur.offset + 8;
    cur.offset = body.saturating_add(size).saturating_add(size & 1);
    if size == 0 || size > ctx.limits.max_tag_bytes as u64 || body + size > cur.end {
        return Ok(None);
    }
    Ok(Some(Next::Text(
        body,
        size as usize,
        TagKey::FourCc(id),
        info_name(&id),
    )))
}
