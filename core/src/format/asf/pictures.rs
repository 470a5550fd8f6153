//! `WM/Picture` attributes (ASF Specification rev 1.20 §3.11, §4.7, §4.8)
//! turned into attached-picture tracks with one packet each, as ffmpeg
//! does.

use super::attributes::{Descriptors, TagObject};
use super::codec_ids;
use super::demuxer::AsfDemuxer;
use super::layout::PictureFixed;
use super::text;
use crate::error::Result;
use crate::format::traits::Context;
use crate::source::Source;
use crate::types::{ByteRange, Rational, Track, TrackKind};

/// Most `WM/Picture` attributes exposed as attached-picture tracks.
pub const MAX_PICTURES: usize = 8;

/// Units of a `WM/Picture` MIME type compared with the known types; a
/// longer type matches none of them.
const MIME_UNITS: usize = 32;

/// One attached picture: its track, data, ID3v2 picture type and
/// description (UTF-16LE).
#[derive(Debug, Clone, Copy)]
pub(super) struct Picture {
    pub track: usize,
    pub data: u64,
    pub len: u32,
    pub kind: u8,
    pub desc: ByteRange,
}

impl AsfDemuxer {
    /// Finds `WM/Picture` attributes in an extended content description
    /// (§3.11) or metadata (library) object (§4.7, §4.8) and adds one
    /// attached-picture track for each, as ffmpeg does.
    pub(super) fn find_pictures<S: Source>(
        &mut self,
        src: &mut S,
        ctx: &mut Context,
        kind: TagObject,
        body: u64,
        end: u64,
    ) -> Result<()> {
        let mut it = Descriptors::new(src, kind, body, end)?;
        while let Some(dsc) = it.next(src)? {
            if dsc.kind != 1 || dsc.name_len < 20 {
                continue;
            }
            let mut nb = [0u8; 22];
            let take = (dsc.name_len as usize).min(22);
            let nbuf = nb.get_mut(..take).unwrap_or(&mut []);
            src.read_exact_at(dsc.name, nbuf)?;
            if !text::utf16_eq(nbuf, "WM/Picture") {
                continue;
            }
            self.picture(src, ctx, dsc.value, dsc.value_len)?;
        }
        Ok(())
    }

    /// Reads a WM/Picture value (type, size, MIME, description, data) of
    /// `len` bytes at `at`.
    fn picture<S: Source>(&mut self, src: &mut S, ctx: &mut Context, at: u64, len: u32) -> Result<()> {
        if len < 9 {
            ctx.diags.report("asf.bad-picture", at);
            return Ok(());
        }
        let h = src.read::<PictureFixed>(at)?;
        let kind = if (h.kind as usize) < codec_ids::PICTURE_TYPES.len() {
            h.kind
        } else {
            0
        };
        let picsize = h.data_len.get();
        let mut left = len - 5;
        let mut p = at + 5;
        // MIME type: NUL-terminated UTF-16LE, at most MIME_UNITS compared.
        let mut mime = [0u16; MIME_UNITS];
        let (mlen, consumed) = mime_type(src, p, left, &mut mime)?;
        left -= consumed;
        p += consumed as u64;
        let Some(codec) = codec_ids::picture_codec(mime.get(..mlen).unwrap_or(&[])) else {
            ctx.diags.report("asf.unknown-picture-type", at);
            return Ok(());
        };
        if picsize >= left {
            ctx.diags.report("asf.bad-picture", at);
            return Ok(());
        }
        let desc_at = p;
        let (dlen, consumed) = description(src, p, left - picsize)?;
        p += consumed as u64;
        if p.saturating_add(picsize as u64) > src.len() {
            ctx.diags.report("asf.bad-picture", at);
            return Ok(());
        }
        if self.pictures.is_full() {
            ctx.diags.report("asf.picture-capacity", at);
            return Ok(());
        }
        let t = Track {
            id: 0,
            kind: TrackKind::Video,
            codec,
            time_base: Rational::new(1, 90_000),
            attached_picture: true,
            ..Track::default()
        };
        let Some(track) = ctx.add_track(t, at) else {
            return Ok(());
        };
        let _ = self.pictures.push(Picture {
            track,
            data: p,
            len: picsize,
            kind,
            desc: ByteRange {
                offset: desc_at,
                len: dlen,
            },
        });
        Ok(())
    }
}

/// Reads the NUL-terminated UTF-16LE MIME type at `p` (at most `left`
/// bytes) into `mime`, keeping its first units. Returns the units kept and
/// the bytes consumed (the NUL included).
fn mime_type<S: Source>(src: &mut S, p: u64, left: u32, mime: &mut [u16; MIME_UNITS]) -> Result<(usize, u32)> {
    let mut mlen = 0usize;
    let mut consumed = 0u32;
    while consumed + 2 <= left {
        let u: [u8; 2] = src.array(p + consumed as u64)?;
        consumed += 2;
        let u = u16::from_le_bytes(u);
        if u == 0 {
            break;
        }
        if let Some(m) = mime.get_mut(mlen) {
            *m = u;
            mlen += 1;
        }
    }
    Ok((mlen, consumed))
}

/// Measures the NUL-terminated UTF-16LE description at `p` (at most
/// `desc_max` bytes). Returns its length without the NUL and the bytes
/// consumed.
fn description<S: Source>(src: &mut S, p: u64, desc_max: u32) -> Result<(u32, u32)> {
    let mut dlen = 0u32;
    let mut consumed = 0u32;
    while consumed + 2 <= desc_max {
        let u: [u8; 2] = src.array(p + consumed as u64)?;
        consumed += 2;
        if u == [0, 0] {
            break;
        }
        dlen += 2;
    }
    Ok((dlen, consumed))
}
