//! File-level tags a muxer writes (title, artist, ...): name and text
//! value pairs in a fixed buffer of [`MAX_TAG_BYTES`], added with
//! [`crate::Muxer::add_tag`] before the header. Names are the common ones
//! ffprobe prints (`title`, `artist`, `album`, `date`, `track`, ...) or the
//! container's own text keys; each format writes them its way (Matroska
//! `Tags`, RFC 9559 §5.1.8).

use crate::error::{Error, Result};

/// Most bytes of tag names and values kept (with 3 bytes of lengths per
/// tag): 2 KiB, for the usual text tags of a music file, or 512 bytes
/// with the `few-tracks` feature (a recorder's few tags); a tag beyond it
/// is refused with `CapacityExceeded` and the others are kept.
#[cfg(not(feature = "few-tracks"))]
pub const MAX_TAG_BYTES: usize = 2 * 1024;
/// Most bytes of tag names and values kept with the `few-tracks` feature:
/// 512 (2 KiB without it).
#[cfg(feature = "few-tracks")]
pub const MAX_TAG_BYTES: usize = 512;

/// The tags to write, in the order they were added.
#[derive(Debug, Clone, Default)]
pub struct MuxTags {
    /// Per tag: name length (1 byte), name, value length (2 bytes, little
    /// endian), value.
    bytes: heapless::Vec<u8, MAX_TAG_BYTES>,
}

impl MuxTags {
    /// Adds a tag.
    ///
    /// Errors: `InvalidArgument` for an empty name, a name over 255 bytes
    /// or a value over 65 535 bytes; `CapacityExceeded` when it does not fit
    /// (nothing is added).
    pub fn push(&mut self, name: &str, value: &str) -> Result<()> {
        let (Ok(nl), Ok(vl)) = (u8::try_from(name.len()), u16::try_from(value.len())) else {
            return Err(Error::new(
                crate::error::ErrorKind::InvalidArgument,
                0,
                &"mux tags: a name over 255 bytes or a value over 65,535",
            ));
        };
        if nl == 0 {
            return Err(Error::new(
                crate::error::ErrorKind::InvalidArgument,
                0,
                &"mux tags: an empty name",
            ));
        }
        let start = self.bytes.len();
        let [v0, v1] = vl.to_le_bytes();
        let ok = self.bytes.push(nl).is_ok()
            && self.bytes.extend_from_slice(name.as_bytes()).is_ok()
            && self.bytes.extend_from_slice(&[v0, v1]).is_ok()
            && self.bytes.extend_from_slice(value.as_bytes()).is_ok();
        if !ok {
            self.bytes.truncate(start);
            return Err(Error::capacity(0, &"mux tags: beyond MAX_TAG_BYTES"));
        }
        Ok(())
    }

    /// Whether there is none.
    pub fn is_empty(&self) -> bool {
        self.bytes.is_empty()
    }

    /// The tags, as (name, value).
    pub fn iter(&self) -> impl Iterator<Item = (&str, &str)> + '_ {
        let mut at = 0usize;
        core::iter::from_fn(move || {
            let b = &self.bytes;
            let nl = usize::from(*b.get(at)?);
            let name = b.get(at + 1..at + 1 + nl)?;
            let v = at + 1 + nl;
            let vl = usize::from(u16::from_le_bytes([*b.get(v)?, *b.get(v + 1)?]));
            let value = b.get(v + 2..v + 2 + vl)?;
            at = v + 2 + vl;
            // Both were pushed as `str`: valid UTF-8.
            Some((core::str::from_utf8(name).ok()?, core::str::from_utf8(value).ok()?))
        })
    }
}

#[cfg(test)]
mod tests {
    extern crate std;
    use super::*;
    use crate::error::ErrorKind;

    #[test]
    fn tags_come_back_in_order_and_refusals_keep_the_rest() {
        let mut t = MuxTags::default();
        assert!(t.is_empty());
        t.push("title", "Ünïcode").unwrap();
        t.push("artist", "").unwrap();
        assert_eq!(t.push("", "x").unwrap_err().kind(), ErrorKind::InvalidArgument);
        let long = "x".repeat(MAX_TAG_BYTES);
        assert_eq!(
            t.push("comment", &long).unwrap_err().kind(),
            ErrorKind::CapacityExceeded
        );
        t.push("date", "2026").unwrap();
        let v: std::vec::Vec<(&str, &str)> = t.iter().collect();
        assert_eq!(v, [("title", "Ünïcode"), ("artist", ""), ("date", "2026")]);
    }
}
