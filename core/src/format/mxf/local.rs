//! Local sets (SMPTE ST 377-1 §9.2, ST 336 local set with 2-byte tags and
//! 2-byte lengths): the header metadata sets and index table segments.
//! Items are found by their static local tag (ST 377-1 Annex A); dynamic
//! tags (0x8000 and up, mapped by the primer pack) name no item this
//! reader needs.
//!
//! Sets refer to each other by strong reference (a 16-byte InstanceUID,
//! tag 0x3C0A): [`find_by_uid`] walks the header metadata again for each
//! reference instead of keeping a table, so state stays fixed while work
//! is bounded by the header metadata's size per reference.

use super::klv::{self, Klv, Ul};
use crate::error::{Error, Result};
use crate::source::Source;

/// Most KLVs a walk of the header metadata visits.
pub(crate) const MAX_SETS: u32 = 8192;

/// The key of a header metadata set, up to its kind byte (byte 14).
const SET_KEY: [u8; 14] = [
    0x06, 0x0e, 0x2b, 0x34, 0x02, 0x53, 0x01, 0x01, 0x0d, 0x01, 0x01, 0x01, 0x01, 0x01,
];
/// InstanceUID (ST 377-1 Annex A, 0x3C0A).
pub(crate) const TAG_INSTANCE_UID: u16 = 0x3c0a;

/// A local set's value range and its kind (byte 14 of the key).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Set {
    pub kind: u8,
    pub at: u64,
    pub end: u64,
}

/// The header metadata sets' byte range.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Region {
    pub start: u64,
    pub end: u64,
}

/// Whether `key` is a header metadata set; its kind byte if so.
pub(crate) fn set_kind(key: &Ul) -> Option<u8> {
    klv::matches(key, &SET_KEY).then_some(key[14])
}

/// The set `k` as a [`Set`] when its value lies inside `limit`.
pub(crate) fn as_set(k: &Klv, limit: u64) -> Result<Set> {
    if k.end() > limit {
        return Err(Error::malformed(
            k.at,
            &"mxf: a local set longer than its partition (ST 377-1 §9.2)",
        ));
    }
    Ok(Set {
        kind: k.key[14],
        at: k.value_at,
        end: k.end(),
    })
}

/// Offset and length of item `tag` in `set`.
pub(crate) fn item<S: Source>(src: &mut S, set: &Set, tag: u16) -> Result<Option<(u64, u64)>> {
    let mut at = set.at;
    while set.end.saturating_sub(at) >= 4 {
        let h: [u8; 4] = src.array(at)?;
        let t = u16::from_be_bytes([h[0], h[1]]);
        let len = u64::from(u16::from_be_bytes([h[2], h[3]]));
        let value = at + 4;
        if value + len > set.end {
            return Err(Error::malformed(
                at,
                &"mxf: a local set item past its set (ST 377-1 §9.2)",
            ));
        }
        if t == tag {
            return Ok(Some((value, len)));
        }
        at = value + len;
    }
    Ok(None)
}

/// Item `tag` when it holds exactly `N` bytes.
pub(crate) fn fixed<S: Source, const N: usize>(src: &mut S, set: &Set, tag: u16) -> Result<Option<[u8; N]>> {
    match item(src, set, tag)? {
        Some((at, len)) if len == N as u64 => Ok(Some(src.array(at)?)),
        _ => Ok(None),
    }
}

/// An unsigned big-endian item of 1, 2, 4 or 8 bytes.
pub(crate) fn uint<S: Source>(src: &mut S, set: &Set, tag: u16) -> Result<Option<u64>> {
    match item(src, set, tag)? {
        Some((at, len @ (1 | 2 | 4 | 8))) => {
            let mut b = [0u8; 8];
            let n = len as usize;
            if let Some(dst) = b.get_mut(..n) {
                src.read_exact_at(at, dst)?;
            }
            Ok(b.get(..n).map(klv::be))
        }
        _ => Ok(None),
    }
}

/// A rational item (two big-endian i32: numerator, denominator).
pub(crate) fn rational<S: Source>(src: &mut S, set: &Set, tag: u16) -> Result<Option<(u32, u32)>> {
    Ok(fixed::<S, 8>(src, set, tag)?.map(|b| {
        let n = u32::from_be_bytes([b[0], b[1], b[2], b[3]]);
        let d = u32::from_be_bytes([b[4], b[5], b[6], b[7]]);
        (n, d)
    }))
}

/// A batch or array item (ST 377-1 §5.4.2): offset of element 0, element
/// count and element size, the count checked against the item's length.
pub(crate) fn batch<S: Source>(src: &mut S, set: &Set, tag: u16) -> Result<Option<(u64, u32, u32)>> {
    let Some((at, len)) = item(src, set, tag)? else {
        return Ok(None);
    };
    if len < 8 {
        return Ok(None);
    }
    let h: [u8; 8] = src.array(at)?;
    let count = u32::from_be_bytes([h[0], h[1], h[2], h[3]]);
    let size = u32::from_be_bytes([h[4], h[5], h[6], h[7]]);
    if u64::from(count).saturating_mul(u64::from(size)) > len - 8 {
        return Err(Error::malformed(
            at,
            &"mxf: a batch longer than its item (ST 377-1 §5.4.2)",
        ));
    }
    Ok(Some((at + 8, count, size)))
}

/// Element `i` of a batch of 16-byte UIDs.
pub(crate) fn batch_uid<S: Source>(src: &mut S, b: (u64, u32, u32), i: u32) -> Result<Option<Ul>> {
    if i >= b.1 || b.2 != 16 {
        return Ok(None);
    }
    Ok(Some(src.array(b.0 + u64::from(i) * 16)?))
}

/// Visits the sets of `region` in order until `f` returns `Some`.
pub(crate) fn scan<S: Source, T>(
    src: &mut S,
    region: Region,
    mut f: impl FnMut(&mut S, &Set) -> Result<Option<T>>,
) -> Result<Option<T>> {
    let mut at = region.start;
    let mut n = 0u32;
    while let Some(k) = klv::read(src, at, region.end)? {
        n += 1;
        if n > MAX_SETS || k.end() > region.end {
            break;
        }
        if set_kind(&k.key).is_some() {
            let set = as_set(&k, region.end)?;
            if let Some(t) = f(src, &set)? {
                return Ok(Some(t));
            }
        }
        at = k.end();
    }
    Ok(None)
}

/// The set whose InstanceUID is `uid`.
pub(crate) fn find_by_uid<S: Source>(src: &mut S, region: Region, uid: &Ul) -> Result<Option<Set>> {
    scan(src, region, |src, set| {
        Ok((fixed::<S, 16>(src, set, TAG_INSTANCE_UID)?.as_ref() == Some(uid)).then_some(*set))
    })
}
