//! Partition packs (SMPTE ST 377-1 §7) and the random index pack (§12):
//! the header partition gives the footer's offset; from the footer the
//! PreviousPartition links lead back through every partition, after whose
//! pack (and its header metadata) index table segments may sit.

use super::index::IndexTable;
use super::klv::{self, Klv};
use super::local;
use crate::diag::Diagnostics;
use crate::error::Result;
use crate::source::Source;

/// Partition pack key up to the partition kind (byte 13).
const PARTITION_KEY: [u8; 13] = [
    0x06, 0x0e, 0x2b, 0x34, 0x02, 0x05, 0x01, 0x01, 0x0d, 0x01, 0x02, 0x01, 0x01,
];
/// Header partition (kind byte 0x02).
pub(crate) const HEADER: u8 = 0x02;
/// Primer pack (ST 377-1 §9.2.2).
const PRIMER_KEY: [u8; 15] = [
    0x06, 0x0e, 0x2b, 0x34, 0x02, 0x05, 0x01, 0x01, 0x0d, 0x01, 0x02, 0x01, 0x01, 0x05, 0x01,
];
/// Random index pack (ST 377-1 §12).
const RIP_KEY: [u8; 15] = [
    0x06, 0x0e, 0x2b, 0x34, 0x02, 0x05, 0x01, 0x01, 0x0d, 0x01, 0x02, 0x01, 0x01, 0x11, 0x01,
];
/// Index table segment (ST 377-1 §11.2).
const INDEX_KEY: [u8; 15] = [
    0x06, 0x0e, 0x2b, 0x34, 0x02, 0x53, 0x01, 0x01, 0x0d, 0x01, 0x02, 0x01, 0x01, 0x10, 0x01,
];
/// KLV fill (SMPTE RP 210 `KLVFill`), up to byte 12 (byte 7 varies).
const FILL_KEY: [u8; 12] = [0x06, 0x0e, 0x2b, 0x34, 0x01, 0x01, 0x01, 0x01, 0x03, 0x01, 0x02, 0x10];
/// The partition pack's fixed fields before the operational pattern.
const PACK_MIN: u64 = 88;
/// Most partitions followed back from the footer.
const MAX_PARTITIONS: u32 = 4096;
/// Most KLVs visited after one partition pack looking for index segments.
const MAX_KLVS_AFTER_PACK: u32 = 4096;

/// The fields of a partition pack this reader uses.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Partition {
    pub at: u64,
    pub kind: u8,
    pub previous: u64,
    pub footer: u64,
    /// The offset after the pack's KLV.
    pub end: u64,
    /// The operational pattern is OP-Atom (ST 390: label byte 12 0x10).
    pub op_atom: bool,
}

/// Whether `key` is a partition pack; its kind byte (2 header, 3 body,
/// 4 footer) if so.
pub(crate) fn partition_kind(key: &klv::Ul) -> Option<u8> {
    (klv::matches(key, &PARTITION_KEY) && matches!(key[13], 2..=4)).then_some(key[13])
}

/// Whether `key` is KLV fill.
pub(crate) fn is_fill(key: &klv::Ul) -> bool {
    klv::matches(key, &FILL_KEY)
}

/// Whether `key` is an index table segment.
pub(crate) fn is_index(key: &klv::Ul) -> bool {
    klv::matches(key, &INDEX_KEY)
}

/// Whether `key` is the primer pack.
pub(crate) fn is_primer(key: &klv::Ul) -> bool {
    klv::matches(key, &PRIMER_KEY)
}

/// The partition pack at `at`, `None` when there is none.
pub(crate) fn read<S: Source>(src: &mut S, at: u64) -> Result<Option<Partition>> {
    let len = src.len();
    let Some(k) = klv::read(src, at, len)? else {
        return Ok(None);
    };
    pack(src, &k, len)
}

/// `k` as a partition pack when it is one and whole.
fn pack<S: Source>(src: &mut S, k: &Klv, len: u64) -> Result<Option<Partition>> {
    let Some(kind) = partition_kind(&k.key) else {
        return Ok(None);
    };
    if k.len < PACK_MIN || k.end() > len {
        return Ok(None);
    }
    let f: [u8; 32] = src.array(k.value_at)?;
    let op: [u8; 16] = src.array(k.value_at + 64)?;
    let u64_at = |i: usize| f.get(i..i + 8).map_or(0, klv::be);
    Ok(Some(Partition {
        at: k.at,
        kind,
        previous: u64_at(16),
        footer: u64_at(24),
        end: k.end(),
        op_atom: op[12] == 0x10,
    }))
}

/// The footer partition's offset from the random index pack at the end
/// of the input, when there is one.
fn footer_from_rip<S: Source>(src: &mut S) -> Result<Option<u64>> {
    let len = src.len();
    if len < 4 + 17 {
        return Ok(None);
    }
    let total = u64::from(src.u32_be(len - 4)?);
    if total < 17 + 4 || total > len {
        return Ok(None);
    }
    let Some(k) = klv::read(src, len - total, len).ok().flatten() else {
        return Ok(None);
    };
    if !klv::matches(&k.key, &RIP_KEY) || k.end() != len || k.len < 16 {
        return Ok(None);
    }
    // The last entry (BodySID u32, ByteOffset u64) before the length.
    let last = k.end() - 4 - 12;
    Ok(Some(src.u64_be(last + 4)?))
}

/// Reads every index table segment reachable from the footer back to the
/// header partition into `index`.
pub(crate) fn collect_index<S: Source>(
    src: &mut S,
    header: &Partition,
    index: &mut IndexTable,
    diags: &mut Diagnostics,
) -> Result<()> {
    let footer = match header.footer {
        0 => footer_from_rip(src)?.unwrap_or(0),
        f => f,
    };
    let mut next = if footer > header.at { Some(footer) } else { None };
    let mut visited = 0u32;
    let mut header_seen = false;
    while let Some(at) = next {
        visited += 1;
        if visited > MAX_PARTITIONS {
            diags.report("mxf.partition-chain", at);
            break;
        }
        let Some(p) = read(src, at)? else {
            diags.report("mxf.partition-missing", at);
            break;
        };
        header_seen |= p.at == header.at;
        segments_after(src, &p, index, diags)?;
        next = (p.previous < p.at && p.at != header.at).then_some(p.previous);
    }
    if !header_seen {
        segments_after(src, header, index, diags)?;
    }
    index.finish(src)
}

/// Index table segments among the KLVs that follow a partition pack
/// (fill, primer, header metadata, index segments), up to the first other
/// KLV.
fn segments_after<S: Source>(
    src: &mut S,
    p: &Partition,
    index: &mut IndexTable,
    diags: &mut Diagnostics,
) -> Result<()> {
    let len = src.len();
    let mut at = p.end;
    for _ in 0..MAX_KLVS_AFTER_PACK {
        let Some(k) = klv::read(src, at, len).ok().flatten() else {
            return Ok(());
        };
        if k.end() > len {
            diags.report("mxf.index-cut", k.at);
            return Ok(());
        }
        if is_index(&k.key) {
            let set = local::as_set(&k, len)?;
            if !index.add(src, &set)? {
                diags.report("mxf.index-segment-capacity", k.at);
            }
        } else if !(is_fill(&k.key) || is_primer(&k.key) || local::set_kind(&k.key).is_some()) {
            return Ok(());
        }
        at = k.end();
    }
    Ok(())
}
