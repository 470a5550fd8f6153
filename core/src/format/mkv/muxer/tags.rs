//! The Matroska muxer's file-level tags ([`crate::Muxer::add_tag`]): a
//! `title` becomes the Segment's Title (RFC 9559 §5.1.2.12), the others one
//! `Tags` element (§5.1.8) with an empty `Targets` (the whole Segment) and a
//! `SimpleTag` each, named in upper case as ffmpeg writes them (`track`
//! becomes `PART_NUMBER`, Matroska's name for it). An input's `encoder` is
//! not carried: MuxingApp and WritingApp say who wrote this file.

use super::ebml_write::{put_bytes, put_master};
use crate::error::Result;
use crate::format::mkv::ids;
use crate::format::mux_traits::MuxContext;
use crate::sink::Sink;

/// Most bytes of a tag name (as `MuxTags` keeps them).
const MAX_NAME: usize = 255;

/// The Matroska TagName for a tag named `name`, in `buf`; `None` for one
/// not written as a SimpleTag.
fn tag_name<'b>(name: &str, buf: &'b mut [u8; MAX_NAME]) -> Option<&'b [u8]> {
    if ["title", "encoder", "duration"]
        .iter()
        .any(|n| name.eq_ignore_ascii_case(n))
    {
        return None;
    }
    if name.eq_ignore_ascii_case("track") {
        return Some(b"PART_NUMBER");
    }
    let out = buf.get_mut(..name.len())?;
    for (d, s) in out.iter_mut().zip(name.bytes()) {
        *d = s.to_ascii_uppercase();
    }
    Some(out)
}

/// The Segment title among the tags, if any.
pub(crate) fn title(ctx: &MuxContext) -> Option<&str> {
    ctx.tags
        .iter()
        .find(|(n, _)| n.eq_ignore_ascii_case("title"))
        .map(|(_, v)| v)
}

/// Whether a `Tags` element is written.
pub(crate) fn any(ctx: &MuxContext) -> bool {
    let mut buf = [0u8; MAX_NAME];
    ctx.tags.iter().any(|(n, _)| tag_name(n, &mut buf).is_some())
}

/// Writes the `Tags` element (nothing when [`any`] is false).
pub(crate) fn write(k: &mut dyn Sink, ctx: &MuxContext) -> Result<()> {
    if !any(ctx) {
        return Ok(());
    }
    put_master(k, ids::TAGS, &|k| {
        put_master(k, ids::TAG, &|k| {
            put_master(k, ids::TARGETS, &|_| Ok(()))?;
            for (name, value) in ctx.tags.iter() {
                let mut buf = [0u8; MAX_NAME];
                let Some(name) = tag_name(name, &mut buf) else { continue };
                put_master(k, ids::SIMPLE_TAG, &|k| {
                    put_bytes(k, ids::TAG_NAME, name)?;
                    put_bytes(k, ids::TAG_STRING, value.as_bytes())
                })?;
            }
            Ok(())
        })
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_as_ffmpeg_writes_them() {
        let mut buf = [0u8; MAX_NAME];
        assert_eq!(tag_name("artist", &mut buf), Some(&b"ARTIST"[..]));
        assert_eq!(tag_name("track", &mut buf), Some(&b"PART_NUMBER"[..]));
        assert_eq!(
            tag_name("REPLAYGAIN_TRACK_GAIN", &mut buf),
            Some(&b"REPLAYGAIN_TRACK_GAIN"[..])
        );
        assert_eq!(tag_name("Title", &mut buf), None);
        assert_eq!(tag_name("encoder", &mut buf), None);
    }
}
