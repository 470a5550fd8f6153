//! One track out of a multiplexed CMAF stream, for the live MPD
//! (`package --live --dash`): the finished file's `--dash` fragments each
//! stream on its own by reading the input once per stream, which a pipe
//! cannot do, so live mode cuts each muxed segment (a `moof` with one
//! `traf` per track, then the `mdat`) into one fragment per track, and the
//! init segment into one per track (ISO/IEC 14496-12 §8.8; CMAF, ISO/IEC
//! 23000-19 §7.3: one track per CMAF track file). The `traf` boxes are
//! copied as they are but for each `trun`'s `data_offset` (relative to the
//! `moof`, `default-base-is-moof`), which is set to where the track's
//! samples now lie in the new `mdat`.

use super::{be32, child, children};

/// A box of `kind` around `parts`.
fn boxed(kind: &[u8; 4], parts: &[&[u8]]) -> Vec<u8> {
    let size = 8 + parts.iter().map(|p| p.len()).sum::<usize>();
    let mut out = Vec::with_capacity(size);
    out.extend_from_slice(&u32::try_from(size).unwrap_or(u32::MAX).to_be_bytes());
    out.extend_from_slice(kind);
    for p in parts {
        out.extend_from_slice(p);
    }
    out
}

/// The track ID of a `trak` body (its `tkhd`).
fn trak_id(trak: &[u8]) -> Option<u32> {
    let tkhd = child(trak, b"tkhd")?;
    // version 0: creation and modification times of 4 bytes; 1: of 8.
    Some(be32(tkhd, if tkhd.first() == Some(&1) { 20 } else { 12 }))
}

/// The init segment of track `id` alone: `ftyp`, and `moov` with `mvhd`,
/// that `trak` and an `mvex` with its `trex`.
pub(super) fn init_of(init: &[u8], id: u32) -> Vec<u8> {
    let mut out = Vec::new();
    for (kind, body) in children(init) {
        if &kind != b"moov" {
            out.extend(boxed(&kind, &[body]));
            continue;
        }
        let mut moov = Vec::new();
        for (k, b) in children(body) {
            match &k {
                b"trak" if trak_id(b) != Some(id) => {}
                b"mvex" => {
                    let mut mvex = Vec::new();
                    for (k2, b2) in children(b) {
                        if &k2 != b"trex" || be32(b2, 4) == id {
                            mvex.extend(boxed(&k2, &[b2]));
                        }
                    }
                    moov.extend(boxed(b"mvex", &[&mvex]));
                }
                _ => moov.extend(boxed(&k, &[b])),
            }
        }
        out.extend(boxed(b"moov", &[&moov]));
    }
    out
}

/// The fragment of track `id` out of the muxed segment `seg` (`moof` then
/// `mdat`): `moof` with the `mfhd` and that track's `traf`, then an `mdat`
/// of its samples. `Ok(None)` when the segment has no `traf` of the track.
///
/// Errors: a `trun` without sample sizes or data offset, a `traf` not
/// based on its `moof`, or samples outside the segment (not what the
/// muxer writes).
pub(super) fn fragment_of(seg: &[u8], id: u32) -> std::io::Result<Option<Vec<u8>>> {
    let bad = |what: &str| std::io::Error::new(std::io::ErrorKind::InvalidData, format!("live DASH: {what}"));
    let Some(moof) = child(seg, b"moof") else {
        return Err(bad("a segment without moof"));
    };
    let Some(mfhd) = child(moof, b"mfhd") else {
        return Err(bad("a moof without mfhd"));
    };
    let Some(traf) = children(moof)
        .filter(|c| &c.0 == b"traf")
        .map(|c| c.1)
        .find(|t| child(t, b"tfhd").map(|h| be32(h, 4)) == Some(id))
    else {
        return Ok(None);
    };
    let tfhd = child(traf, b"tfhd").unwrap_or(&[]);
    if be32(tfhd, 0) & 0x02_0000 == 0 || be32(tfhd, 0) & 0x1 != 0 {
        return Err(bad("a traf not based on its moof"));
    }
    // The moof's size does not change: only values are patched.
    let moof_len = 8 + 8 + mfhd.len() + 8 + traf.len();
    if seg.get(4..8) != Some(b"moof".as_slice()) {
        return Err(bad("a segment that does not start with its moof"));
    }
    let mut new_traf = Vec::new();
    let mut mdat = Vec::new();
    for (kind, body) in children(traf) {
        if &kind != b"trun" {
            new_traf.extend(boxed(&kind, &[body]));
            continue;
        }
        let f = be32(body, 0) & 0xFF_FFFF;
        if f & 0x201 != 0x201 {
            return Err(bad("a trun without data offset or sample sizes"));
        }
        let n = be32(body, 4) as usize;
        let entry = [0x100, 0x200, 0x400, 0x800].iter().filter(|&&b| f & b != 0).count() * 4;
        let size_at = if f & 0x100 != 0 { 4 } else { 0 };
        let mut q = 12 + if f & 0x4 != 0 { 4 } else { 0 };
        let mut bytes = 0usize;
        for _ in 0..n.min(body.len() / entry.max(1)) {
            bytes += be32(body, q + size_at) as usize;
            q += entry;
        }
        let from = be32(body, 8) as usize;
        let Some(data) = seg.get(from..from + bytes) else {
            return Err(bad("samples outside the segment"));
        };
        let mut trun = body.to_vec();
        let offset = u32::try_from(moof_len + 8 + mdat.len()).unwrap_or(u32::MAX);
        if let Some(o) = trun.get_mut(8..12) {
            o.copy_from_slice(&offset.to_be_bytes());
        }
        mdat.extend_from_slice(data);
        new_traf.extend(boxed(b"trun", &[&trun]));
    }
    let mut out = boxed(b"moof", &[&boxed(b"mfhd", &[mfhd]), &boxed(b"traf", &[&new_traf])]);
    out.extend(boxed(b"mdat", &[&mdat]));
    Ok(Some(out))
}
