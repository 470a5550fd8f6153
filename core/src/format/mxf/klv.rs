//! KLV triplets (SMPTE ST 336): a 16-byte universal label key, a BER
//! length (short form below 0x80, long form `0x80 | n` then `n` bytes
//! big-endian, n ≤ 8) and the value. Every length is checked against the
//! end of the enclosing range, so a length past the input is found before
//! anything is read.

use crate::error::{Error, Result};
use crate::source::Source;

/// A universal label (SMPTE ST 298).
pub(crate) type Ul = [u8; 16];

/// One KLV triplet: its key and where its value lies.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Klv {
    /// The key.
    pub key: Ul,
    /// Offset of the key.
    pub at: u64,
    /// Offset of the value.
    pub value_at: u64,
    /// Length of the value as the BER length says (may run past `limit`).
    pub len: u64,
}

impl Klv {
    /// The offset after the value.
    pub fn end(&self) -> u64 {
        self.value_at.saturating_add(self.len)
    }
}

/// The SMPTE label prefix every MXF key starts with.
pub(crate) const UL_PREFIX: [u8; 4] = [0x06, 0x0e, 0x2b, 0x34];

/// Whether `key` starts with `prefix`, byte 7 (the registry version) left
/// out of the comparison as SMPTE ST 377-1 §6.4 allows.
pub(crate) fn matches(key: &Ul, prefix: &[u8]) -> bool {
    key.iter().zip(prefix).enumerate().all(|(i, (a, b))| i == 7 || a == b)
}

/// Reads the KLV header at `at`. `None` when fewer than 17 bytes are left
/// before `limit`. The value may run past `limit`: the caller decides.
pub(crate) fn read<S: Source>(src: &mut S, at: u64, limit: u64) -> Result<Option<Klv>> {
    if limit.saturating_sub(at) < 17 {
        return Ok(None);
    }
    let key: Ul = src.array(at)?;
    if key[..4] != UL_PREFIX {
        return Err(Error::malformed(
            at,
            &"mxf: a KLV key without the SMPTE label prefix (ST 336 §5)",
        ));
    }
    let first: [u8; 1] = src.array(at + 16)?;
    let first = first[0];
    let (len, len_bytes) = if first < 0x80 {
        (u64::from(first), 1u64)
    } else {
        let n = u64::from(first & 0x7f);
        if n == 0 || n > 8 {
            return Err(Error::malformed(
                at + 16,
                &"mxf: a BER length of 0 or more than 8 bytes (ST 336 §5.3)",
            ));
        }
        if limit.saturating_sub(at + 17) < n {
            return Ok(None);
        }
        let bytes: [u8; 8] = read_up_to_8(src, at + 17, n)?;
        (u64::from_be_bytes(bytes), 1 + n)
    };
    Ok(Some(Klv {
        key,
        at,
        value_at: at + 16 + len_bytes,
        len,
    }))
}

/// `n` (1..=8) big-endian bytes at `at`, right-aligned in 8.
fn read_up_to_8<S: Source>(src: &mut S, at: u64, n: u64) -> Result<[u8; 8]> {
    let mut out = [0u8; 8];
    let skip = (8 - n) as usize;
    if let Some(dst) = out.get_mut(skip..) {
        src.read_exact_at(at, dst)?;
    }
    Ok(out)
}

/// A big-endian integer of up to 8 bytes from `b`.
pub(crate) fn be(b: &[u8]) -> u64 {
    b.iter().take(8).fold(0u64, |v, &x| (v << 8) | u64::from(x))
}
