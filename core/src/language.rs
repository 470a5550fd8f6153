//! [`Language`]: a track's language code as its container states it, in
//! fixed space (no allocation, no third-party type in the public API).
//!
//! Containers store an ISO 639-2 code (MP4 `mdhd` §8.4.2.3 packs it in 15
//! bits; the MPEG-TS ISO 639 descriptor, ISO/IEC 13818-1 §2.6.18, holds 3
//! bytes; Matroska `Language`), or in Matroska's `LanguageBCP47` an IETF
//! BCP 47 tag (`en-US`, `zh-Hant-TW`). The type holds up to
//! [`Language::CAPACITY`] bytes of UTF-8; a longer code is left out by the
//! demuxers rather than cut.

/// A language code: ISO 639-2 (`eng`, `fre`) or BCP 47 (`en-US`), empty
/// when the container states none or `und`.
///
/// Compares with `&str` and `str`, shows as the code (`Display` pads like a
/// `str`), and `Debug` shows `Language("eng")`.
///
/// ```
/// use mediaslice::Language;
/// let l = Language::new("eng").unwrap_or_default();
/// assert_eq!(l, "eng");
/// assert_eq!(l.as_str(), "eng");
/// assert_eq!(format!("{l}"), "eng");
/// assert!(Language::default().is_empty());
/// assert!(Language::new("a-tag-longer-than-16-bytes").is_none());
/// ```
#[derive(Clone, Copy, Default)]
pub struct Language {
    /// How many bytes of `bytes` are the code (at most `CAPACITY`).
    len: u32,
    /// The code's bytes, valid UTF-8 up to `len`, zero after.
    bytes: [u8; Language::CAPACITY],
}

impl Language {
    /// The longest code held, in bytes.
    pub const CAPACITY: usize = 16;

    /// No language (the container states none, or `und`).
    pub const EMPTY: Language = Language {
        len: 0,
        bytes: [0; Language::CAPACITY],
    };

    /// The code `code`, or `None` when it is longer than
    /// [`Language::CAPACITY`] bytes. No validation beyond the length: the
    /// code is kept as the container wrote it.
    pub fn new(code: &str) -> Option<Language> {
        let mut l = Language::EMPTY;
        l.push_str(code).then_some(l)
    }

    /// The code as text (empty when none).
    pub fn as_str(&self) -> &str {
        core::str::from_utf8(self.as_bytes()).unwrap_or_default()
    }

    /// The code's bytes.
    pub fn as_bytes(&self) -> &[u8] {
        self.bytes.get(..self.len as usize).unwrap_or_default()
    }

    /// Whether no language is stated.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The code's length in bytes.
    pub fn len(&self) -> usize {
        self.len as usize
    }

    /// Forgets the code (for `und`).
    #[allow(dead_code, reason = "unused when no format feature is enabled")]
    pub(crate) fn clear(&mut self) {
        *self = Language::EMPTY;
    }

    /// Appends `s`, or leaves the code as it was and returns `false` when
    /// the result would be longer than [`Language::CAPACITY`].
    pub(crate) fn push_str(&mut self, s: &str) -> bool {
        let at = self.len as usize;
        let end = at.saturating_add(s.len());
        match (self.bytes.get_mut(at..end), u32::try_from(end)) {
            (Some(dst), Ok(len)) => {
                dst.copy_from_slice(s.as_bytes());
                self.len = len;
                true
            }
            _ => false,
        }
    }

    /// Appends the ASCII letter `c`; `false` when it is not ASCII or the
    /// code is full.
    #[allow(dead_code, reason = "unused when no format feature is enabled")]
    pub(crate) fn push_ascii(&mut self, c: u8) -> bool {
        // One byte stored in place (an ASCII byte is its own UTF-8): less
        // code than a `push_str` of the encoded char, in three demuxers.
        match self.bytes.get_mut(self.len as usize) {
            Some(b) if c.is_ascii() => {
                *b = c;
                self.len = self.len.saturating_add(1);
                true
            }
            _ => false,
        }
    }
}

impl PartialEq for Language {
    fn eq(&self, other: &Language) -> bool {
        self.as_bytes() == other.as_bytes()
    }
}

impl Eq for Language {}

impl core::hash::Hash for Language {
    fn hash<H: core::hash::Hasher>(&self, state: &mut H) {
        self.as_str().hash(state);
    }
}

impl PartialEq<str> for Language {
    fn eq(&self, other: &str) -> bool {
        self.as_str() == other
    }
}

impl PartialEq<&str> for Language {
    fn eq(&self, other: &&str) -> bool {
        self.as_str() == *other
    }
}

impl AsRef<str> for Language {
    fn as_ref(&self) -> &str {
        self.as_str()
    }
}

/// The code, padded and aligned like a `str`.
impl core::fmt::Display for Language {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.pad(self.as_str())
    }
}

/// `Language("eng")`.
impl core::fmt::Debug for Language {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_tuple("Language").field(&self.as_str()).finish()
    }
}

#[cfg(feature = "defmt")]
impl defmt::Format for Language {
    fn format(&self, f: defmt::Formatter<'_>) {
        defmt::write!(f, "{=str}", self.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::Language;

    #[test]
    fn codes_up_to_the_capacity_are_kept_and_compared_as_text() {
        let l = Language::new("en-US").unwrap();
        assert_eq!(l, "en-US");
        assert_eq!(l.len(), 5);
        assert_eq!(l, Language::new("en-US").unwrap());
        assert_ne!(l, Language::new("en").unwrap());
        let full = Language::new("abcdefgh-ijklmno").unwrap();
        assert_eq!(full.len(), Language::CAPACITY);
        assert!(Language::new("abcdefgh-ijklmnop").is_none());
        assert_eq!(Language::new("").unwrap(), Language::EMPTY);
    }

    #[test]
    fn a_full_code_refuses_more_and_stays_as_it_was() {
        let mut l = Language::new("abcdefgh-ijklmno").unwrap();
        assert!(!l.push_str("x"));
        assert!(!l.push_ascii(b'x'));
        assert_eq!(l.as_str(), "abcdefgh-ijklmno");
        let mut e = Language::EMPTY;
        assert!(!e.push_ascii(0xE9));
        assert!(e.push_ascii(b'e'));
        assert_eq!(e, "e");
        l.clear();
        assert!(l.is_empty());
        assert_eq!(l, Language::default());
    }

    #[test]
    fn display_pads_like_a_str_and_debug_names_the_type() {
        extern crate std;
        use std::format;
        let l = Language::new("eng").unwrap();
        assert_eq!(format!("[{l:<5}]"), "[eng  ]");
        assert_eq!(format!("{l:?}"), "Language(\"eng\")");
        assert_eq!(format!("{}", Language::EMPTY), "");
    }
}
