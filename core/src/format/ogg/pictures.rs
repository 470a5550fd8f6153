//! Cover art in comments: each `METADATA_BLOCK_PICTURE` entry (the Xiph
//! wiki's VorbisComment convention: a FLAC PICTURE block, RFC 9639 §8.8, in
//! base64, RFC 4648 §4) becomes an attached-picture track, as ffmpeg's
//! `ff_vorbis_comment` does. Its one packet, the image, is decoded into the
//! source's scratch each time it is wanted (at the open, for the tags and
//! for the packet), and comes before the audio packets.

use crate::codec::image;
use crate::codec::picture::PICTURE_TYPES;
use crate::error::{Error, ErrorKind, Result};
use crate::format::traits::Context;
use crate::format::xiph::base64::Base64Decoder;
use crate::format::xiph::flac::Picture;
use crate::source::{SliceSource, Source};
use crate::tags::{text_or_bytes, Tag, TagKey, TagScope, TagValue};
use crate::types::{ByteRange, Codec, Packet, PacketFlags, Rational, Track, TrackKind};

use super::logical::{Stream, Walker};
use super::tags::comment_walker;

/// Attached pictures kept from the comments of all streams.
pub const MAX_PICTURES: usize = 4;

/// The entry key, with its `=`.
const KEY: &[u8; 23] = b"METADATA_BLOCK_PICTURE=";

/// Whether a comment key names a picture (compared as ffmpeg does, without
/// case).
pub(super) fn is_picture_key(key: &str) -> bool {
    KEY.get(..22).is_some_and(|k| k.eq_ignore_ascii_case(key.as_bytes()))
}

/// A picture found in a comment.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct OggPicture {
    /// A walker at the first base64 character.
    text: Walker,
    /// Characters of base64.
    len: u32,
    /// The picture type (RFC 9639 §8.8, table 13), `Other` when unknown.
    kind: u8,
    /// The description: offset and length in the decoded block.
    description: (u32, u32),
    /// The image: offset and length in the decoded block.
    data: (u32, u32),
    /// The attached-picture track.
    track: usize,
}

/// The pictures and how many of their packets were delivered.
#[derive(Debug, Clone, Default)]
pub(super) struct Pictures {
    list: heapless::Vec<OggPicture, MAX_PICTURES>,
    next: usize,
}

impl Pictures {
    /// Walks the comments of every stream with a track and adds a track
    /// per picture, in comment order. A picture whose base64 or block is
    /// invalid gets no track (`ogg.bad-picture`); one longer than
    /// `Limits::max_tag_bytes` or whose image does not fit the scratch is
    /// left out (`ogg.picture-too-large`).
    ///
    /// Errors: a read error of the source, or a truncated page on the way.
    pub(super) fn scan<S: Source>(&mut self, streams: &[Stream], src: &mut S, ctx: &mut Context) -> Result<()> {
        let resync = ctx.limits.resync_bytes;
        for st in streams {
            let (Some((loc, skip)), Some(_)) = (st.comment, st.track) else {
                continue;
            };
            let (mut w, count) = comment_walker(src, resync, st.serial, loc, skip)?;
            for _ in 0..count {
                let mut b = [0u8; 4];
                if w.read(src, resync, &mut b)? < 4 {
                    break;
                }
                let len = u32::from_le_bytes(b);
                if len > w.remaining {
                    break;
                }
                let at = w.pos;
                let mut text = w;
                w.skip(src, resync, len)?;
                let mut key = [0u8; 23];
                if len < 23 || text.read(src, resync, &mut key)? < 23 || !key.eq_ignore_ascii_case(KEY) {
                    continue;
                }
                let len = len - 23;
                if len > ctx.limits.max_tag_bytes || len as usize / 4 * 3 > src.scratch_len() {
                    ctx.diags.report("ogg.picture-too-large", at);
                    continue;
                }
                if self.list.is_full() {
                    ctx.diags.report("ogg.too-many-pictures", at);
                    continue;
                }
                self.add(src, ctx, text, len, at)?;
            }
        }
        Ok(())
    }

    /// Decodes the picture whose base64 is at `text` and adds its track.
    fn add<S: Source>(&mut self, src: &mut S, ctx: &mut Context, text: Walker, len: u32, at: u64) -> Result<()> {
        let block = match decode(src, ctx.limits.resync_bytes, text, len)? {
            Some(n) => Picture::read(&mut SliceSource::new(src.joined(n)?), 0, n as u64)?,
            None => None,
        };
        let Some(block) = block.filter(|b| b.codec != Codec::Unknown) else {
            ctx.diags.report("ogg.bad-picture", at);
            return Ok(());
        };
        let data = src.joined((block.data.offset + block.data.len as u64) as usize)?;
        let facts = data
            .get(block.data.offset as usize..)
            .and_then(|d| image::parse(block.codec, d));
        let track = Track {
            id: 0,
            kind: TrackKind::Video,
            codec: block.codec,
            time_base: Rational::new(1, 90000),
            width: facts.map_or(block.width, |f| f.width),
            height: facts.map_or(block.height, |f| f.height),
            frames: Some(1),
            attached_picture: true,
            ..Track::default()
        };
        // The ranges lie in the decoded block, which fits the scratch.
        let range = |r: ByteRange| (r.offset as u32, r.len);
        if let Some(track) = ctx.add_track(track, at) {
            let _ = self.list.push(OggPicture {
                text,
                len,
                kind: if (block.kind as usize) < PICTURE_TYPES.len() {
                    block.kind as u8
                } else {
                    0
                },
                description: range(block.description),
                data: range(block.data),
                track,
            });
        }
        Ok(())
    }

    /// Whether a picture's packet is still to be delivered.
    pub(super) fn pending(&self) -> bool {
        self.next < self.list.len()
    }

    /// The next picture's packet (see [`Pictures::pending`]).
    ///
    /// Errors: a read error of the source, or no picture pending.
    pub(super) fn next_packet<'s, S: Source>(&mut self, src: &'s mut S, ctx: &Context) -> Result<Packet<'s>> {
        let p = self.list.get(self.next).copied().ok_or(Error::new(
            ErrorKind::InvalidArgument,
            0,
            &"ogg picture: none pending",
        ))?;
        self.next += 1;
        let data = decoded(src, ctx, &p, p.data)?;
        Ok(Packet::joined(p.track, None, data).with_flags(PacketFlags::keyframe(true)))
    }

    /// No picture packet is delivered again (after a seek, as ffmpeg's
    /// seek does not queue them again for the Ogg demuxer's readers).
    pub(super) fn finish(&mut self) {
        self.next = self.list.len();
    }

    /// The next of the pictures' tags, two per picture (its type as
    /// `comment`, its description as `title` unless empty), counted by
    /// `index`: `None` after the last.
    ///
    /// Errors: a read error of the source.
    pub(super) fn next_tag<'s, S: Source>(
        &self,
        src: &'s mut S,
        ctx: &Context,
        index: &mut u64,
    ) -> Result<Option<Tag<'s>>> {
        loop {
            let i = *index;
            *index += 1;
            let Some(p) = self.list.get((i / 2) as usize).copied() else {
                return Ok(None);
            };
            let scope = TagScope::Track(p.track);
            if i % 2 == 0 {
                let name = PICTURE_TYPES.get(p.kind as usize).copied().unwrap_or("Other");
                return Ok(Some(Tag {
                    scope,
                    key: TagKey::Text("comment"),
                    name: Some("comment"),
                    value: TagValue::Text(name),
                }));
            }
            if p.description.1 > 0 {
                let text = decoded(src, ctx, &p, p.description)?;
                return Ok(Some(Tag {
                    scope,
                    key: TagKey::Text("title"),
                    name: Some("title"),
                    value: text_or_bytes(text),
                }));
            }
        }
    }
}

/// The range (`at`, `len`) of picture `p`'s block, decoded again into
/// scratch.
fn decoded<'s, S: Source>(src: &'s mut S, ctx: &Context, p: &OggPicture, (at, len): (u32, u32)) -> Result<&'s [u8]> {
    let n = decode(src, ctx.limits.resync_bytes, p.text, p.len)?.unwrap_or(0);
    let src: &'s S = src;
    let all = src.joined(n)?;
    Ok(all.get(at as usize..at as usize + len as usize).unwrap_or(&[]))
}

/// Decodes the `len` base64 characters at `w` into the scratch: the bytes
/// decoded, or `None` when the text is not base64 or does not fit.
fn decode<S: Source>(src: &mut S, resync: u64, mut w: Walker, len: u32) -> Result<Option<usize>> {
    const PIECE: usize = 256;
    let mut text = [0u8; PIECE];
    let mut out = [0u8; PIECE / 4 * 3 + 1];
    let mut dec = Base64Decoder::new();
    let mut at = 0usize;
    let mut left = len as usize;
    while left > 0 {
        let got = w.read(src, resync, text.get_mut(..left.min(PIECE)).unwrap_or(&mut []))?;
        if got == 0 {
            return Ok(None);
        }
        left -= got;
        let Some(k) = dec.feed(text.get(..got).unwrap_or(&[]), &mut out) else {
            return Ok(None);
        };
        if at + k > src.scratch_len() {
            return Ok(None);
        }
        src.put(at, out.get(..k).unwrap_or(&[]))?;
        at += k;
    }
    Ok(Some(at))
}
