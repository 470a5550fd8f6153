//! What the packager reads back from the CMAF init segment and the
//! fragments the muxer wrote: the boxes (ISO/IEC 14496-12 §4.2), each
//! track's handler, time scale and sample entry, a fragment's decode time
//! (`tfdt`) and duration (`trun`), the picture size, and the `CODECS`
//! strings of the playlists (RFC 6381 §3; ISO/IEC 14496-15 Annex E for
//! `avc1`/`hvc1`, RFC 6381 §3.3 for `mp4a`).

use std::fmt::Write as _;

/// The boxes directly inside `b` (a box body): (type, body).
pub(super) fn children(b: &[u8]) -> impl Iterator<Item = ([u8; 4], &[u8])> {
    let mut at = 0usize;
    std::iter::from_fn(move || {
        let h = b.get(at..at + 8)?;
        let size = u32::from_be_bytes([h[0], h[1], h[2], h[3]]) as usize;
        let kind = [h[4], h[5], h[6], h[7]];
        let body = b.get(at + 8..at + size.max(8))?;
        at += size.max(8);
        Some((kind, body))
    })
}

pub(super) fn child<'a>(b: &'a [u8], kind: &[u8; 4]) -> Option<&'a [u8]> {
    children(b).find(|c| &c.0 == kind).map(|c| c.1)
}

/// The `moov` body of an init segment.
fn moov(init: &[u8]) -> &[u8] {
    child(init, b"moov").unwrap_or(&[])
}

pub(super) fn be32(b: &[u8], at: usize) -> u32 {
    b.get(at..at + 4)
        .map_or(0, |x| u32::from_be_bytes([x[0], x[1], x[2], x[3]]))
}

/// Per `trak` of the init segment: its `mdhd` time scale.
pub(super) fn track_scales(init: &[u8]) -> Vec<u32> {
    children(moov(init))
        .filter(|c| &c.0 == b"trak")
        .map(|(_, trak)| {
            let mdhd = child(trak, b"mdia").and_then(|m| child(m, b"mdhd")).unwrap_or(&[]);
            // version 0: 4 + 4 + 4, version 1: 4 + 8 + 8.
            if mdhd.first() == Some(&1) {
                be32(mdhd, 20)
            } else {
                be32(mdhd, 12)
            }
        })
        .collect()
}

/// Per `trak`: its handler type and its `stsd` sample entry (type, body).
pub(super) fn tracks(init: &[u8]) -> Vec<([u8; 4], [u8; 4], Vec<u8>)> {
    children(moov(init))
        .filter(|c| &c.0 == b"trak")
        .map(|(_, trak)| {
            let mdia = child(trak, b"mdia").unwrap_or(&[]);
            let hdlr = child(mdia, b"hdlr").unwrap_or(&[]);
            let handler = hdlr.get(8..12).map_or([0; 4], |h| [h[0], h[1], h[2], h[3]]);
            let stsd = child(mdia, b"minf")
                .and_then(|m| child(m, b"stbl"))
                .and_then(|s| child(s, b"stsd"))
                .unwrap_or(&[]);
            let entry = stsd.get(8..).and_then(|e| children(e).next());
            let (kind, body) = entry.map_or(([0; 4], Vec::new()), |(k, b)| (k, b.to_vec()));
            (handler, kind, body)
        })
        .collect()
}

/// The track ID that times the segments: the first video track, else 1.
pub(super) fn timing_track(init: &[u8]) -> u32 {
    tracks(init)
        .iter()
        .position(|t| &t.0 == b"vide")
        .map_or(1, |i| i as u32 + 1)
}

/// The `tfdt` decode time of track `id` in a `moof` (0 when absent).
pub(super) fn tfdt(moof: &[u8], id: u32) -> u64 {
    let body = moof.get(8..).unwrap_or(&[]);
    for (_, traf) in children(body).filter(|c| &c.0 == b"traf") {
        if child(traf, b"tfhd").map(|t| be32(t, 4)) != Some(id) {
            continue;
        }
        let Some(t) = child(traf, b"tfdt") else { return 0 };
        return if t.first() == Some(&1) {
            u64::from(be32(t, 4)) << 32 | u64::from(be32(t, 8))
        } else {
            u64::from(be32(t, 4))
        };
    }
    0
}

/// Sum of the `trun` sample durations of track `id` in a `moof`.
pub(super) fn trun_ticks(moof: &[u8], id: u32) -> u64 {
    let body = moof.get(8..).unwrap_or(&[]);
    let mut ticks = 0u64;
    for (_, traf) in children(body).filter(|c| &c.0 == b"traf") {
        let Some(tfhd) = child(traf, b"tfhd") else { continue };
        if be32(tfhd, 4) != id {
            continue;
        }
        let tf = be32(tfhd, 0) & 0xFF_FFFF;
        let mut p = 8usize;
        p += if tf & 0x1 != 0 { 8 } else { 0 };
        p += if tf & 0x2 != 0 { 4 } else { 0 };
        let default = if tf & 0x8 != 0 { be32(tfhd, p) } else { 0 };
        for (_, trun) in children(traf).filter(|c| &c.0 == b"trun") {
            let f = be32(trun, 0) & 0xFF_FFFF;
            let n = be32(trun, 4) as usize;
            let mut q = 8 + if f & 0x1 != 0 { 4 } else { 0 } + if f & 0x4 != 0 { 4 } else { 0 };
            let entry = [0x100, 0x200, 0x400, 0x800].iter().filter(|&&b| f & b != 0).count() * 4;
            for _ in 0..n {
                ticks += u64::from(if f & 0x100 != 0 { be32(trun, q) } else { default });
                q += entry;
            }
        }
    }
    ticks
}

/// The `CODECS` string of one sample entry (RFC 8216 §4.3.4.2, RFC 6381):
/// `avc1.PPCCLL` from `avcC`, `hvc1.…` from `hvcC`, `mp4a.40.N` from the
/// AudioSpecificConfig in `esds` (`mp4a.6B` for MP3), `opus`, `fLaC`,
/// `ac-3`, `ec-3`.
pub(super) fn codec_string(kind: &[u8; 4], entry: &[u8]) -> Option<String> {
    match kind {
        // VisualSampleEntry: 78 bytes before its boxes.
        b"avc1" => avc_codecs(child(entry.get(78..)?, b"avcC")?),
        b"hvc1" | b"hev1" => hevc_codecs(kind, child(entry.get(78..)?, b"hvcC")?),
        b"Opus" => Some("opus".into()),
        b"fLaC" => Some("fLaC".into()),
        b"ac-3" => Some("ac-3".into()),
        b"ec-3" => Some("ec-3".into()),
        b"mp4a" => {
            // AudioSampleEntry: 28 bytes before its boxes; esds: version
            // and flags, then descriptors (this muxer writes their sizes in
            // four bytes): the DecoderConfigDescriptor (tag 4) gives the
            // object type, its DecoderSpecificInfo (tag 5) the
            // AudioSpecificConfig.
            let esds = child(entry.get(28..)?, b"esds")?;
            let oti = *esds.get(esds.windows(4).position(|w| w == [0x04, 0x80, 0x80, 0x80])? + 5)?;
            if oti != 0x40 {
                return Some(format!("mp4a.{oti:02X}"));
            }
            let at = esds.windows(4).position(|w| w == [0x05, 0x80, 0x80, 0x80])? + 5;
            aac_codecs(esds.get(at..)?)
        }
        _ => None,
    }
}

/// `avc1.PPCCLL` (RFC 6381 §3.3): profile, constraint flags and level
/// from an `avcC` record (ISO/IEC 14496-15 §5.3.3.1).
pub(super) fn avc_codecs(avcc: &[u8]) -> Option<String> {
    Some(format!(
        "avc1.{:02x}{:02x}{:02x}",
        avcc.get(1)?,
        avcc.get(2)?,
        avcc.get(3)?
    ))
}

/// `hvc1.…`/`hev1.…` from an `hvcC` record (RFC 6381 / ISO/IEC 14496-15
/// Annex E.3): profile space and profile, compatibility flags
/// bit-reversed, tier and level, constraint bytes without trailing zeros.
pub(super) fn hevc_codecs(kind: &[u8; 4], h: &[u8]) -> Option<String> {
    let b1 = *h.get(1)?;
    let space = ["", "A", "B", "C"][usize::from(b1 >> 6)];
    let compat = u32::from_be_bytes([*h.get(2)?, *h.get(3)?, *h.get(4)?, *h.get(5)?]).reverse_bits();
    let tier = if b1 & 0x20 != 0 { 'H' } else { 'L' };
    let mut out = format!(
        "{}.{space}{}.{compat:X}.{tier}{}",
        String::from_utf8_lossy(kind),
        b1 & 0x1F,
        h.get(12)?
    );
    let cons = h.get(6..12)?;
    let keep = cons.iter().rposition(|&b| b != 0).map_or(0, |i| i + 1);
    for b in &cons[..keep] {
        let _ = write!(out, ".{b:X}");
    }
    Some(out)
}

/// `mp4a.40.N` (RFC 6381 §3.3): N the audioObjectType of an
/// AudioSpecificConfig (ISO/IEC 14496-3 §1.6.2.1, with its escape).
pub(super) fn aac_codecs(asc: &[u8]) -> Option<String> {
    let b0 = *asc.first()?;
    let aot = match b0 >> 3 {
        31 => 32 + (u32::from(b0 & 7) << 3 | u32::from(*asc.get(1)? >> 5)),
        n => u32::from(n),
    };
    Some(format!("mp4a.40.{aot}"))
}

/// The picture size of the first video sample entry.
pub(super) fn resolution(init: &[u8]) -> Option<(u16, u16)> {
    let (_, _, e) = tracks(init).into_iter().find(|t| &t.0 == b"vide")?;
    let w = u16::from_be_bytes([*e.get(24)?, *e.get(25)?]);
    let h = u16::from_be_bytes([*e.get(26)?, *e.get(27)?]);
    Some((w, h))
}
