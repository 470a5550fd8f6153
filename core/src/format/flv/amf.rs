//! AMF0 values (Adobe "Action Message Format -- AMF 0", §2), read in place
//! with a bounded cursor: the script data of FLV tags (Annex E.4.4).

use crate::error::Result;
use crate::source::Source;

/// Deepest AMF nesting followed when skipping values: deeper values end the
/// walk (`docs/limits.md`, "FLV AMF nesting").
pub(super) const MAX_AMF_DEPTH: u32 = 16;

/// Most properties of one object or ECMA array (§2.5, §2.10) skipped over:
/// a value with more cannot be skipped, which ends the walk. A bound on
/// the work a forged object causes, far above any real metadata.
const MAX_OBJECT_PROPERTIES: u32 = 1_000_000;

/// AMF0 type markers (§2.1) this module reads.
pub(super) mod marker {
    /// number-marker: an IEEE 754 double, big-endian (§2.2).
    pub const NUMBER: u8 = 0;
    /// boolean-marker: one byte (§2.3).
    pub const BOOLEAN: u8 = 1;
    /// string-marker: a 16-bit length, then UTF-8 (§2.4).
    pub const STRING: u8 = 2;
    /// object-marker: properties up to an object end (§2.5).
    pub const OBJECT: u8 = 3;
    /// ecma-array-marker: a 32-bit count, then properties (§2.10).
    pub const ECMA_ARRAY: u8 = 8;
    /// strict-array-marker: a 32-bit count, then values (§2.12).
    pub const STRICT_ARRAY: u8 = 10;
}

/// A cursor over AMF0 values (AMF 0 §2), bounded by `end`.
pub(super) struct Amf {
    /// Offset of the next value or property.
    pub(super) at: u64,
    end: u64,
}

/// The entries of an ECMA array or object.
pub(super) struct Entries {
    left: u32,
}

impl Amf {
    pub(super) fn new(at: u64, end: u64) -> Self {
        Amf { at, end }
    }

    /// Opens the ECMA array (§2.10) or object (§2.5) at the cursor.
    pub(super) fn open_map<S: Source>(&mut self, src: &mut S) -> Result<Option<Entries>> {
        if self.at >= self.end {
            return Ok(None);
        }
        let [t]: [u8; 1] = src.array(self.at)?;
        match t {
            marker::ECMA_ARRAY => {
                self.at += 5;
                Ok(Some(Entries { left: u32::MAX }))
            }
            marker::OBJECT => {
                self.at += 1;
                Ok(Some(Entries { left: u32::MAX }))
            }
            _ => Ok(None),
        }
    }

    /// Reads a property name (UTF-8 with a 16-bit length); `None` at the
    /// object end marker or the end of the range.
    pub(super) fn read_key<S: Source>(&mut self, src: &mut S) -> Result<Option<(u64, u16)>> {
        if self.at.saturating_add(2) > self.end {
            return Ok(None);
        }
        let len = u16::from_be_bytes(src.array(self.at)?);
        if len == 0 {
            return Ok(None);
        }
        let key = self.at + 2;
        self.at = key + len as u64;
        if self.at >= self.end {
            return Ok(None);
        }
        Ok(Some((key, len)))
    }

    /// Skips the value at the cursor. Returns `false` when it cannot be
    /// skipped (unknown type, too deep, past the end).
    pub(super) fn skip_value<S: Source>(&mut self, src: &mut S, depth: u32) -> Result<bool> {
        if depth > MAX_AMF_DEPTH || self.at >= self.end {
            return Ok(false);
        }
        let [t]: [u8; 1] = src.array(self.at)?;
        self.at += 1;
        match t {
            marker::NUMBER => self.at += 8,
            marker::BOOLEAN => self.at += 1,
            marker::STRING | 4 => {
                // String, MovieClip (reserved, laid out like a string).
                let l = u16::from_be_bytes(src.array(self.at)?);
                self.at += 2 + l as u64;
            }
            // Null, undefined, unsupported: no payload.
            5 | 6 | 13 => {}
            // Reference: a 16-bit index.
            7 => self.at += 2,
            12 | 15 => {
                // Long string, XML document: a 32-bit length.
                let l = u32::from_be_bytes(src.array(self.at)?);
                self.at += 4 + l as u64;
            }
            // Date: a double and a 16-bit time zone.
            11 => self.at += 10,
            marker::OBJECT | marker::ECMA_ARRAY => {
                if t == marker::ECMA_ARRAY {
                    self.at += 4;
                }
                if !self.skip_properties(src, depth)? {
                    return Ok(false);
                }
            }
            marker::STRICT_ARRAY => {
                let n = u32::from_be_bytes(src.array(self.at)?);
                self.at += 4;
                for _ in 0..n {
                    if !self.skip_value(src, depth + 1)? {
                        return Ok(false);
                    }
                }
            }
            _ => return Ok(false),
        }
        Ok(self.at <= self.end)
    }

    /// Skips the properties of an object or ECMA array and its object end
    /// marker (an empty name and type 9); `false` when one cannot be
    /// skipped.
    fn skip_properties<S: Source>(&mut self, src: &mut S, depth: u32) -> Result<bool> {
        let mut guard = 0u32;
        while let Some(_k) = self.read_key(src)? {
            guard += 1;
            if guard > MAX_OBJECT_PROPERTIES || !self.skip_value(src, depth + 1)? {
                return Ok(false);
            }
        }
        self.at += 3;
        Ok(true)
    }
}

impl Entries {
    /// The next property: its name range and the position of its value.
    pub(super) fn next_key<S: Source>(&mut self, src: &mut S, w: &mut Amf) -> Result<Option<(u64, u16, u64)>> {
        if self.left == 0 {
            return Ok(None);
        }
        self.left -= 1;
        let Some((key, len)) = w.read_key(src)? else {
            return Ok(None);
        };
        Ok(Some((key, len, w.at)))
    }
}

/// Keys read by one [`fuzz_amf0`] walk, at most.
#[cfg(fuzzing)]
const FUZZ_MAX_KEYS: usize = 10_000;

/// Standalone fuzz entry for the AMF0 reader (`fuzz/fuzz_targets/shared_parsers.rs`):
/// `data` as a script tag body, its map opened and every key and value
/// walked (AMF 0 §2), and as a single value skipped. Built only under
/// `cfg(fuzzing)`.
#[cfg(fuzzing)]
pub fn fuzz_amf0(data: &[u8]) {
    let mut src = crate::source::SliceSource::new(data);
    let end = data.len() as u64;
    for start in [0u64, 1] {
        let mut a = Amf::new(start, end);
        if let Ok(Some(_)) = a.open_map(&mut src) {
            for _ in 0..FUZZ_MAX_KEYS {
                match a.read_key(&mut src) {
                    Ok(Some(_)) => {}
                    _ => break,
                }
                if !a.skip_value(&mut src, 0).unwrap_or(false) {
                    break;
                }
            }
        }
        let mut b = Amf::new(start, end);
        let _ = b.skip_value(&mut src, 0);
    }
}
