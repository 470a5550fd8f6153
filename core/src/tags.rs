//! Tags: metadata as key/value pairs, read in place.
//!
//! Every format yields [`Tag`]s through `Demuxer::next_tag`, a lending
//! iterator: each tag borrows the input (slice mode) or scratch (reader mode)
//! until the next call.

/// What a tag applies to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub enum TagScope {
    /// The whole file.
    Format,
    /// One track, by index into the track list.
    Track(usize),
}

/// A tag's key as the container spells it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub enum TagKey<'a> {
    /// A text key (Vorbis comment field, QuickTime `mdta` key, Matroska
    /// SimpleTag name).
    Text(&'a str),
    /// A four-character code (iTunes `ilst` atom, RIFF INFO chunk id).
    FourCc([u8; 4]),
}

/// A tag's value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub enum TagValue<'a> {
    /// UTF-8 text.
    Text(&'a str),
    /// An integer.
    Int(i64),
    /// Bytes that are not text (cover art, binary data).
    Bytes(&'a [u8]),
}

/// One tag.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct Tag<'a> {
    /// What it applies to.
    pub scope: TagScope,
    /// The key as stored.
    pub key: TagKey<'a>,
    /// The common name ffprobe uses for this key (`title`, `artist`, ...),
    /// when there is one.
    pub name: Option<&'static str>,
    /// The value.
    pub value: TagValue<'a>,
}

/// Turns bytes into text if they are valid UTF-8 (trailing NULs removed),
/// else returns them as bytes.
#[doc(hidden)]
pub fn text_or_bytes(b: &[u8]) -> TagValue<'_> {
    let mut end = b.len();
    while end > 0 && b.get(end - 1) == Some(&0) {
        end -= 1;
    }
    let t = b.get(..end).unwrap_or(&[]);
    match core::str::from_utf8(t) {
        Ok(s) => TagValue::Text(s),
        Err(_) => TagValue::Bytes(b),
    }
}

/// Position of a format's tag walk; opaque to callers.
#[doc(hidden)]
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct TagCursor {
    pub(crate) stage: u32,
    pub(crate) offset: u64,
    pub(crate) end: u64,
}
