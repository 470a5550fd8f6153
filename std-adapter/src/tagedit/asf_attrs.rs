//! The tag-bearing objects of an ASF header, parsed from and rebuilt into
//! bytes: the Content Description (ASF Specification rev 1.20 §3.10: five
//! WORD lengths, then Title, Author, Copyright, Description and Rating as
//! UTF-16LE with a terminating zero), the Extended Content Description
//! (§3.11: a WORD count, then descriptors of name length, name, value
//! type, WORD value length, value) and the Metadata and Metadata Library
//! objects (§4.7, §4.8: a WORD count, then records of language or
//! reserved WORD, stream number, name length, data type, DWORD data
//! length, name, data).
//!
//! A field is known by the name a reader shows for it (ffmpeg's
//! `ff_asf_metadata_conv`, which our reader follows): `Author` and the
//! Content Description's author are `artist`, `WM/AlbumTitle` is `album`,
//! and so on; [`field`] gives that name for a key or a name given on the
//! command line.

use super::malformed;
use std::io;

/// The Content Description's strings in order (§3.10), by the names
/// readers show them under.
pub(super) const CONTENT_FIELDS: [&str; 5] = ["title", "artist", "copyright", "comment", "rating"];

/// Common names and the attribute keys ffmpeg shows under them, the first
/// the key a set field is written as (`date` as `WM/Year`, which ffmpeg
/// and our reader show under its own key).
const KEYS: [(&str, &[&str]); 16] = [
    ("album", &["WM/AlbumTitle"]),
    ("album_artist", &["WM/AlbumArtist"]),
    ("artist", &["Author"]),
    ("comment", &["Description"]),
    ("composer", &["WM/Composer"]),
    ("date", &["WM/Year"]),
    ("disc", &["WM/PartOfSet"]),
    ("encoded_by", &["WM/EncodedBy"]),
    ("encoder", &["WM/EncodingSettings", "WM/Tool"]),
    ("filename", &["WM/OriginalFilename"]),
    ("genre", &["WM/Genre"]),
    ("language", &["WM/Language"]),
    ("publisher", &["WM/Publisher"]),
    ("service_name", &["WM/MediaStationName"]),
    ("service_provider", &["WM/MediaStationCallSign"]),
    ("track", &["WM/TrackNumber"]),
];

/// The field a key or name stands for: its common name, else the name in
/// lower case (`Title` and `title` are one field, as ffmpeg's dictionary
/// holds them).
pub(super) fn field(name: &str) -> String {
    KEYS.iter()
        .find(|(_, keys)| keys.iter().any(|k| k.eq_ignore_ascii_case(name)))
        .map_or_else(|| name.to_ascii_lowercase(), |(common, _)| common.to_string())
}

/// The attribute key a set field is written as: a common name's key, else
/// the name as given.
pub(super) fn key_for(name: &str) -> &str {
    let f = field(name);
    KEYS.iter()
        .find(|(common, _)| *common == f)
        .and_then(|(_, keys)| keys.first().copied())
        .unwrap_or(name)
}

/// `s` as UTF-16LE with a terminating zero. Errors: over `max` bytes
/// (a WORD length field), naming `what`.
pub(super) fn utf16z(s: &str, max: usize, what: &str) -> io::Result<Vec<u8>> {
    let mut out: Vec<u8> = s.encode_utf16().chain([0]).flat_map(u16::to_le_bytes).collect();
    if out.len() > max {
        out.clear();
        return Err(malformed(format!(
            "asf: {what} is {} bytes as UTF-16, over the {max} its length field holds (ASF 1.20 §3.10, §3.11)",
            s.encode_utf16().count() * 2 + 2
        )));
    }
    Ok(out)
}

/// UTF-16LE bytes as text, cut at the first zero.
fn from_utf16(b: &[u8]) -> String {
    let units: Vec<u16> = b
        .chunks_exact(2)
        .map(|c| u16::from_le_bytes([c[0], c.get(1).copied().unwrap_or(0)]))
        .take_while(|&u| u != 0)
        .collect();
    String::from_utf16_lossy(&units)
}

fn word(b: &[u8], at: usize) -> Option<usize> {
    Some(u16::from_le_bytes(b.get(at..at + 2)?.try_into().ok()?) as usize)
}

fn dword(b: &[u8], at: usize) -> Option<usize> {
    Some(u32::from_le_bytes(b.get(at..at + 4)?.try_into().ok()?) as usize)
}

/// A Content Description body: its five strings (raw, with their
/// terminators) and any bytes after them.
pub(super) struct Content {
    pub strings: [Vec<u8>; 5],
    pub rest: Vec<u8>,
}

impl Content {
    /// Parses a body. Errors: shorter than its lengths, strings past it.
    pub fn parse(body: &[u8]) -> io::Result<Content> {
        let bad = || malformed("asf: a Content Description whose string lengths pass its size (ASF 1.20 §3.10)");
        let mut strings: [Vec<u8>; 5] = Default::default();
        let mut at = 10;
        for (i, s) in strings.iter_mut().enumerate() {
            let len = word(body, 2 * i).ok_or_else(bad)?;
            *s = body.get(at..at + len).ok_or_else(bad)?.to_vec();
            at += len;
        }
        let rest = body.get(at..).unwrap_or(&[]).to_vec();
        Ok(Content { strings, rest })
    }

    /// The field index of `field` (a [`field`] name), if the Content
    /// Description holds it.
    pub fn index(field: &str) -> Option<usize> {
        CONTENT_FIELDS.iter().position(|f| *f == field)
    }

    /// The body bytes.
    pub fn body(&self) -> io::Result<Vec<u8>> {
        let mut out = Vec::new();
        for s in &self.strings {
            let len = u16::try_from(s.len()).map_err(|_| malformed("asf: a Content Description string over 64 KiB"))?;
            out.extend_from_slice(&len.to_le_bytes());
        }
        for s in &self.strings {
            out.extend_from_slice(s);
        }
        out.extend_from_slice(&self.rest);
        Ok(out)
    }
}

/// One attribute: its key (decoded), the bytes of the whole descriptor or
/// record as they were (or as made).
pub(super) struct Attr {
    pub key: String,
    pub raw: Vec<u8>,
}

/// The attributes of an Extended Content Description (`metadata` false)
/// or Metadata / Metadata Library body, and any bytes after the last.
pub(super) struct Attrs {
    pub list: Vec<Attr>,
    pub rest: Vec<u8>,
}

impl Attrs {
    /// Parses a body. Errors: fewer bytes than its count of attributes
    /// needs (an attribute past the object).
    pub fn parse(body: &[u8], metadata: bool) -> io::Result<Attrs> {
        let what = if metadata {
            "a Metadata record runs past its object (ASF 1.20 §4.7)"
        } else {
            "an Extended Content Description descriptor runs past its object (ASF 1.20 §3.11)"
        };
        let bad = || malformed(format!("asf: {what}"));
        let count = word(body, 0).ok_or_else(bad)?;
        let mut at = 2;
        let mut list = Vec::with_capacity(count.min(body.len() / 6));
        for _ in 0..count {
            let (name, end) = if metadata {
                let name_len = word(body, at + 4).ok_or_else(bad)?;
                let data_len = dword(body, at + 8).ok_or_else(bad)?;
                (at + 12..at + 12 + name_len, at + 12 + name_len + data_len)
            } else {
                // Old libavformat wrote odd lengths one short; the reader
                // takes them one longer, and so does this walk.
                let name_len = word(body, at).ok_or_else(bad)?;
                let name_len = name_len + name_len % 2;
                let t = at + 2 + name_len;
                let kind = word(body, t).ok_or_else(bad)?;
                let value_len = word(body, t + 2).ok_or_else(bad)?;
                let value_len = value_len + (kind == 0) as usize * (value_len % 2);
                (at + 2..t, t + 4 + value_len)
            };
            let raw = body.get(at..end).ok_or_else(bad)?.to_vec();
            let key = from_utf16(body.get(name).ok_or_else(bad)?);
            list.push(Attr { key, raw });
            at = end;
        }
        let rest = body.get(at..).unwrap_or(&[]).to_vec();
        Ok(Attrs { list, rest })
    }

    /// Removes every attribute of field `f`; returns where the first was.
    pub fn remove(&mut self, f: &str) -> Option<usize> {
        let first = self.list.iter().position(|a| field(&a.key) == f);
        self.list.retain(|a| field(&a.key) != f);
        first
    }

    /// Inserts a Unicode-string descriptor `key` = `value` at `at`
    /// (Extended Content Description only).
    pub fn insert_text(&mut self, at: usize, key: &str, value: &str) -> io::Result<()> {
        let name = utf16z(key, u16::MAX as usize, "a key")?;
        let value = utf16z(value, u16::MAX as usize, &format!("the value of {key}"))?;
        let mut raw = Vec::with_capacity(name.len() + value.len() + 6);
        raw.extend_from_slice(&(name.len() as u16).to_le_bytes());
        raw.extend_from_slice(&name);
        raw.extend_from_slice(&0u16.to_le_bytes());
        raw.extend_from_slice(&(value.len() as u16).to_le_bytes());
        raw.extend_from_slice(&value);
        self.list.insert(
            at.min(self.list.len()),
            Attr {
                key: key.to_string(),
                raw,
            },
        );
        Ok(())
    }

    /// The body bytes. Errors: over 65,535 attributes.
    pub fn body(&self) -> io::Result<Vec<u8>> {
        let count = u16::try_from(self.list.len()).map_err(|_| malformed("asf: over 65,535 attributes"))?;
        let mut out = count.to_le_bytes().to_vec();
        for a in &self.list {
            out.extend_from_slice(&a.raw);
        }
        out.extend_from_slice(&self.rest);
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fields_and_keys() {
        assert_eq!(field("Author"), "artist");
        assert_eq!(field("WM/ALBUMTITLE"), "album");
        assert_eq!(field("Title"), "title");
        assert_eq!(field("WM/Year"), "date");
        assert_eq!(field("WM/Tool"), "encoder");
        assert_eq!(key_for("album"), "WM/AlbumTitle");
        assert_eq!(key_for("date"), "WM/Year");
        assert_eq!(key_for("WM/Mood"), "WM/Mood");
        assert_eq!(Content::index("artist"), Some(1));
        assert_eq!(Content::index("album"), None);
    }

    #[test]
    fn descriptors_round_trip() {
        let mut a = Attrs::parse(&[0, 0], false).unwrap();
        a.insert_text(0, "WM/AlbumTitle", "Ä").unwrap();
        a.insert_text(0, "Author", "x").unwrap();
        let b = a.body().unwrap();
        let back = Attrs::parse(&b, false).unwrap();
        let keys: Vec<_> = back.list.iter().map(|a| a.key.as_str()).collect();
        assert_eq!(keys, ["Author", "WM/AlbumTitle"]);
        assert_eq!(back.body().unwrap(), b);
        // A count past the bytes is an error.
        let mut lie = b.clone();
        lie[0] = 3;
        assert!(Attrs::parse(&lie, false).is_err());
        assert!(Content::parse(&[2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 65]).is_err());
        assert!(utf16z(&"x".repeat(40_000), u16::MAX as usize, "t").is_err());
    }
}
