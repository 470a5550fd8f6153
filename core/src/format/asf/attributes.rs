//! The attributes of the tag-bearing objects, walked in place: Extended
//! Content Description descriptors (ASF Specification rev 1.20 §3.11) and
//! Metadata / Metadata Library description records (§4.7, §4.8). Tags
//! (`tags.rs`) and attached pictures (`pictures.rs`) are read from them.

use super::layout::{DescriptorValue, MetadataRecord};
use crate::error::Result;
use crate::source::Source;

/// The objects that carry tags.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum TagObject {
    /// Content Description (§3.10).
    Content,
    /// Extended Content Description (§3.11).
    Extended,
    /// Metadata or Metadata Library (§4.7, §4.8).
    Metadata,
}

/// One attribute of an extended content description (§3.11) or metadata
/// object (§4.7): where its name and value are.
#[derive(Debug, Clone, Copy)]
pub(super) struct Descriptor {
    pub name: u64,
    pub name_len: u32,
    pub kind: u16,
    pub value: u64,
    pub value_len: u32,
}

/// Walks the attributes of a tag object in place.
pub(super) struct Descriptors {
    metadata: bool,
    /// Where the next attribute starts.
    pub at: u64,
    end: u64,
    /// Attributes left.
    pub left: u32,
}

impl Descriptors {
    /// The walk over the object whose body is `body..end`, from its
    /// attribute count (a WORD, §3.11 and §4.7).
    pub fn new<S: Source>(src: &mut S, kind: TagObject, body: u64, end: u64) -> Result<Self> {
        let n: [u8; 2] = src.array(body)?;
        Ok(Descriptors {
            metadata: kind == TagObject::Metadata,
            at: body + 2,
            end: end.min(src.len()),
            left: u16::from_le_bytes(n) as u32,
        })
    }

    /// The walk resumed at `at` with `left` attributes to go.
    pub fn resume(kind: TagObject, at: u64, end: u64, left: u32) -> Self {
        Descriptors {
            metadata: kind == TagObject::Metadata,
            at,
            end,
            left,
        }
    }

    /// The next attribute, or `None` at the end or at one that runs past
    /// the object (which ends the walk).
    pub fn next<S: Source>(&mut self, src: &mut S) -> Result<Option<Descriptor>> {
        if self.left == 0 || self.at >= self.end {
            return Ok(None);
        }
        self.left -= 1;
        let d = if self.metadata {
            self.metadata_record(src)?
        } else {
            self.content_descriptor(src)?
        };
        if d.is_none() {
            self.left = 0;
        }
        Ok(d)
    }

    /// §4.7: language index, stream number, name length, data type, data
    /// length (DWORD), name, data.
    fn metadata_record<S: Source>(&mut self, src: &mut S) -> Result<Option<Descriptor>> {
        if self.at.saturating_add(12) > self.end {
            return Ok(None);
        }
        let h = src.read::<MetadataRecord>(self.at)?;
        let name_len = h.name_len.get() as u32;
        let kind = h.kind.get();
        let value_len = h.data_len.get();
        if value_len > u16::MAX as u32 {
            return Ok(None);
        }
        let name = self.at + 12;
        let value = name + name_len as u64;
        Ok(self.ends_at(Descriptor {
            name,
            name_len,
            kind,
            value,
            value_len,
        }))
    }

    /// §3.11: name length, name, value type, value length, value.
    fn content_descriptor<S: Source>(&mut self, src: &mut S) -> Result<Option<Descriptor>> {
        if self.at.saturating_add(2) > self.end {
            return Ok(None);
        }
        let b: [u8; 2] = src.array(self.at)?;
        let mut name_len = u16::from_le_bytes(b) as u32;
        if name_len % 2 == 1 {
            // Old libavformat wrote the length one short.
            name_len += 1;
        }
        let name = self.at + 2;
        let t = name + name_len as u64;
        if t.saturating_add(4) > self.end {
            return Ok(None);
        }
        let h = src.read::<DescriptorValue>(t)?;
        let kind = h.kind.get();
        let mut value_len = h.len.get() as u32;
        if kind == 0 && value_len % 2 == 1 {
            value_len += 1;
        }
        Ok(self.ends_at(Descriptor {
            name,
            name_len,
            kind,
            value: t + 4,
            value_len,
        }))
    }

    /// Moves past attribute `d`: `d`, or `None` when it runs past the
    /// object.
    fn ends_at(&mut self, d: Descriptor) -> Option<Descriptor> {
        self.at = d.value + d.value_len as u64;
        if self.at > self.end {
            return None;
        }
        Some(d)
    }
}
