//! The annotation field (bytes 24 to the data offset) as ffmpeg reads it
//! for tags: `key=value` pairs, each value ended by a newline or a NUL; a
//! NUL ends the field. A key runs from the end of the previous pair to its
//! first `=` (so a line without `=` becomes part of the next key, and
//! that key then names nothing); a value runs to the next newline or NUL,
//! and a value the field ends inside is not given. Only the keys `title`,
//! `artist`, `album`, `genre` and `track` (any case) are tags.

use crate::error::Result;
use crate::source::Source;

/// Bytes read per call while scanning.
const SCAN_BLOCK: usize = 64;

/// The keys ffmpeg turns into tags, and their ffprobe names.
const KEYS: [&str; 5] = ["title", "artist", "album", "genre", "track"];

/// One `key=value` pair: its key's ffprobe name, where the value starts and
/// its length, and where the next pair starts (`None` after a NUL).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Pair {
    pub name: Option<&'static str>,
    pub value_at: u64,
    pub value_len: u64,
    pub next: Option<u64>,
}

/// The ffprobe name of `key` when it is one of [`KEYS`].
fn known(key: &[u8]) -> Option<&'static str> {
    KEYS.iter().copied().find(|k| k.as_bytes().eq_ignore_ascii_case(key))
}

/// Scans from `at` to `end` for the next whole pair; `None` when the field
/// ends (NUL or `end`) before one. A key longer than the longest known key
/// is not kept, so the scan needs no buffer beyond [`SCAN_BLOCK`].
pub(crate) fn next_pair<S: Source>(src: &mut S, at: u64, end: u64) -> Result<Option<Pair>> {
    let mut key = [0u8; 8];
    let mut key_len = 0usize;
    let mut value_at: Option<u64> = None;
    let mut p = at;
    let mut buf = [0u8; SCAN_BLOCK];
    while p < end {
        let want = (end - p).min(SCAN_BLOCK as u64) as usize;
        let n = src.read_at(p, buf.get_mut(..want).unwrap_or(&mut []))?;
        if n == 0 {
            return Ok(None);
        }
        for &b in buf.get(..n).unwrap_or(&[]) {
            let here = p;
            p += 1;
            match value_at {
                None if b == 0 => return Ok(None),
                None if b == b'=' => value_at = Some(p),
                None => {
                    if let Some(slot) = key.get_mut(key_len) {
                        *slot = b;
                    }
                    key_len = key_len.saturating_add(1);
                }
                Some(v) if b == b'\n' || b == 0 => {
                    let name = key.get(..key_len).and_then(known);
                    return Ok(Some(Pair {
                        name,
                        value_at: v,
                        value_len: here - v,
                        next: (b == b'\n').then_some(p),
                    }));
                }
                Some(_) => {}
            }
        }
    }
    Ok(None)
}
