//! ID3v1 and ID3v1.1: the 128-byte `TAG` block at the end of an MP3, kept
//! in step with the fields it has (title, artist, album, year, comment;
//! 30-byte ISO-8859-1 fields, the year 4 bytes).

use super::{read_at, Edits};
use std::fs::File;

/// The block's size.
pub(super) const SIZE: u64 = 128;

/// Reads the block at the end of `file` when there is one after `after`
/// (the end of an ID3v2 tag): its position and bytes.
pub(super) fn read(file: &File, after: u64) -> std::io::Result<Option<(u64, Vec<u8>)>> {
    let len = file.metadata()?.len();
    if len < after + SIZE {
        return Ok(None);
    }
    let pos = len - SIZE;
    let block = read_at(file, pos, SIZE as usize, "mp3 ID3v1")?;
    Ok(block.starts_with(b"TAG").then_some((pos, block)))
}

/// The field of `name` in the block: its byte range.
fn field(name: &str, block: &[u8]) -> Option<std::ops::Range<usize>> {
    Some(match name.to_ascii_lowercase().as_str() {
        "title" => 3..33,
        "artist" => 33..63,
        "album" => 63..93,
        "date" | "year" => 93..97,
        // ID3v1.1: a zero at 125 and a track number at 126 shorten the
        // comment to 28 bytes.
        "comment" if block.get(125) == Some(&0) && block.get(126) != Some(&0) => 97..125,
        "comment" => 97..127,
        _ => return None,
    })
}

/// The block with `edits` applied: set fields written in ISO-8859-1 (a
/// character beyond it as `?`), cut to the field and padded with zeros;
/// removed fields zeroed. Other fields (genre, track) are kept.
pub(super) fn apply(mut block: Vec<u8>, edits: &Edits) -> Vec<u8> {
    for name in edits.touched() {
        let Some(range) = field(name, &block) else {
            continue;
        };
        let value = edits.value_of(name).unwrap_or("");
        let bytes = value.chars().map(|c| u8::try_from(u32::from(c)).unwrap_or(b'?'));
        if let Some(dst) = block.get_mut(range) {
            dst.fill(0);
            dst.iter_mut().zip(bytes).for_each(|(d, b)| *d = b);
        }
    }
    block
}

/// The fields the block holds, as `(common name, text)`: title, artist,
/// album, date, comment (ISO-8859-1, cut at the first zero, trailing
/// spaces dropped), track (ID3v1.1) and genre (its number as `(n)`, the
/// form ID3v2 readers turn into the name). For a new ID3v2 tag, which
/// readers such as ffmpeg prefer to the block.
pub(super) fn fields(block: &[u8]) -> Vec<(&'static str, String)> {
    let mut out = Vec::new();
    for name in ["title", "artist", "album", "date", "comment"] {
        let Some(bytes) = field(name, block).and_then(|r| block.get(r)) else {
            continue;
        };
        let end = bytes.iter().position(|&b| b == 0).unwrap_or(bytes.len());
        let text: String = bytes.get(..end).unwrap_or(&[]).iter().map(|&b| char::from(b)).collect();
        let text = text.trim_end();
        if !text.is_empty() {
            out.push((name, text.to_string()));
        }
    }
    if let (Some(0), Some(&track)) = (block.get(125), block.get(126)) {
        if track != 0 {
            out.push(("track", track.to_string()));
        }
    }
    if let Some(&genre) = block.get(127).filter(|&&g| g != 0xff) {
        out.push(("genre", format!("({genre})")));
    }
    out
}
