//! What precedes the FLAC frames: ID3v2 tags in front of `fLaC` (read with
//! the shared ID3 module, [`crate::format::es::id3`]) and the metadata
//! blocks (RFC 9639 §8).

use super::demuxer::FlacDemuxer;
use crate::error::Result;
use crate::format::es::id3;
use crate::format::traits::Context;
use crate::format::xiph::flac::{Picture, StreamInfo, STREAMINFO_LEN};
use crate::source::Source;
use crate::types::ByteRange;

/// Metadata block types (RFC 9639 §8.1, table 2).
mod block {
    pub const STREAMINFO: u8 = 0;
    pub const PADDING: u8 = 1;
    pub const APPLICATION: u8 = 2;
    pub const SEEKTABLE: u8 = 3;
    pub const VORBIS_COMMENT: u8 = 4;
    pub const CUESHEET: u8 = 5;
    pub const PICTURE: u8 = 6;
    /// Forbidden (§8.1): it would read as a frame sync code.
    pub const INVALID: u8 = 127;
}

/// Size of a metadata block header (§8.1): last-block flag, type, length.
const BLOCK_HEADER: u64 = 4;

impl FlacDemuxer {
    /// Keeps the ID3v2 tags from `at` on (as many as `MAX_ID3_TAGS`, more
    /// are reported with `flac.id3-capacity` and skipped): the offset after
    /// the last. Each tag is at least its 10-byte header, so the walk ends
    /// with the input.
    pub(super) fn skip_id3<S: Source>(&mut self, src: &mut S, ctx: &mut Context, mut at: u64) -> Result<u64> {
        while let Some(t) = id3::id3v2_at(src, at)? {
            if self.id3.push(t).is_err() {
                ctx.diags.report("flac.id3-capacity", at);
            }
            at = at.saturating_add(t.total);
        }
        Ok(at)
    }

    /// Reads the metadata blocks from `at` (after `fLaC`) up to the last
    /// one, at most `Limits::max_top_level` of them: the offset after them.
    pub(super) fn reads_metadata<S: Source>(&mut self, src: &mut S, ctx: &mut Context, mut at: u64) -> Result<u64> {
        let file_len = src.len();
        let mut blocks = 0u32;
        loop {
            blocks += 1;
            if blocks > ctx.limits.max_top_level {
                ctx.diags.report("flac.too-many-blocks", at);
                return Ok(at);
            }
            let h: [u8; 4] = match src.array(at) {
                Ok(h) => h,
                Err(e) if e.is_truncation() => {
                    ctx.diags.report("flac.truncated-metadata", at);
                    return Ok(file_len);
                }
                Err(e) => return Err(e),
            };
            let last = h[0] & 0x80 != 0;
            let kind = h[0] & 0x7F;
            let len = u64::from(crate::bytes::be24(&h, 1).unwrap_or(0));
            let body = at + BLOCK_HEADER;
            let next = body + len;
            if next > file_len {
                ctx.diags.report("flac.block-beyond-eof", at);
            }
            if kind != block::STREAMINFO
                && self.info.is_none()
                && !matches!(kind, block::PICTURE | block::SEEKTABLE | block::CUESHEET)
            {
                // §8.2: STREAMINFO must come first; ffmpeg refuses the file.
                ctx.diags.report("flac.streaminfo-not-first", at);
            }
            let range = ByteRange {
                offset: body,
                len: len.min(file_len.saturating_sub(body)) as u32,
            };
            self.keep_block(src, ctx, at, kind, range, len)?;
            if last || next >= file_len {
                return Ok(next.min(file_len));
            }
            at = next;
        }
    }

    /// Keeps what block `kind` at `at` (its body `range`, `len` as its
    /// header says) tells.
    fn keep_block<S: Source>(
        &mut self,
        src: &mut S,
        ctx: &mut Context,
        at: u64,
        kind: u8,
        range: ByteRange,
        len: u64,
    ) -> Result<()> {
        let body = range.offset;
        match kind {
            block::STREAMINFO => {
                if self.info.is_some() {
                    ctx.diags.report("flac.duplicate-streaminfo", at);
                } else if len != STREAMINFO_LEN as u64 {
                    ctx.diags.report("flac.bad-streaminfo", at);
                } else {
                    let b: [u8; STREAMINFO_LEN] = src.array(body)?;
                    self.info = StreamInfo::parse(&b);
                    self.streaminfo_at = Some(body);
                }
            }
            block::VORBIS_COMMENT => {
                if self.vorbis.is_none() {
                    self.vorbis = Some(range);
                }
            }
            block::SEEKTABLE => {
                if self.seektable.is_none() {
                    self.seektable = Some(range);
                }
            }
            block::CUESHEET => self.cuesheet = Some(range),
            block::APPLICATION => {
                if len >= 4 && self.applications.push(range).is_err() {
                    ctx.diags.report("flac.application-capacity", at);
                }
            }
            block::PICTURE => match Picture::read(src, body, range.len as u64)? {
                Some(p) => {
                    if self.pictures.is_full() {
                        ctx.diags.report("flac.picture-capacity", at);
                    } else {
                        let _ = self.pictures.push((p, usize::MAX));
                    }
                }
                None => ctx.diags.report("flac.bad-picture", at),
            },
            block::PADDING => {}
            block::INVALID => ctx.diags.report("flac.invalid-block-type", at),
            _ => ctx.diags.report("flac.unknown-block", at),
        }
        Ok(())
    }
}
