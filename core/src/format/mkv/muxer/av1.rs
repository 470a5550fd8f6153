//! AV1 as the Matroska codec mapping stores it (the AV1-in-Matroska
//! specification, §2 and §3): CodecPrivate is an `av1C` record (AV1-ISOBMFF
//! §2.3.3) followed by the Sequence Header OBU, and a Block holds a
//! Temporal Unit without its Temporal Delimiter OBUs.

use crate::codec::av1::ObuHeader;
use crate::codec::bits::BitReader;
use crate::error::{Error, Result};

/// `obu_type` of a Sequence Header (AV1 §6.2.2).
const OBU_SEQUENCE_HEADER: u8 = 1;
/// `obu_type` of a Temporal Delimiter.
const OBU_TEMPORAL_DELIMITER: u8 = 2;

/// The Sequence Header OBU (header, size field and payload) among the OBUs
/// of `obus`, and its payload; `None` when there is none or an OBU has no
/// size field before it.
fn find_sequence_header(obus: &[u8]) -> Option<(&[u8], &[u8])> {
    let mut at = 0usize;
    while at < obus.len() {
        let rest = obus.get(at..)?;
        let h = ObuHeader::parse(rest)?;
        let end = h.header_len.checked_add(usize::try_from(h.size?).ok()?)?;
        if h.obu_type == OBU_SEQUENCE_HEADER {
            return Some((rest.get(..end)?, rest.get(h.header_len..end)?));
        }
        at = at.checked_add(end)?;
    }
    None
}

/// `uvlc()` (AV1 §4.10.3).
fn uvlc(r: &mut BitReader<'_>) -> u32 {
    let mut zeros = 0u32;
    while !r.bit() {
        zeros += 1;
        if zeros >= 32 || r.overrun() {
            return u32::MAX;
        }
    }
    r.bits(zeros)
}

/// The fields of `av1C` bytes 1 and 2 from a sequence header payload (AV1
/// §5.5): profile, level and tier of operating point 0, and the colour
/// configuration.
fn config_bytes(payload: &[u8]) -> Option<[u8; 2]> {
    let mut r = BitReader::new(payload);
    let profile = r.bits(3) as u8;
    r.skip(1); // still_picture
    let reduced = r.bit();
    let (level, tier);
    if reduced {
        level = r.bits(5) as u8;
        tier = 0u8;
    } else {
        let mut delay_len = 0u32;
        let mut decoder_model = false;
        if r.bit() {
            // timing_info
            r.skip(64);
            if r.bit() {
                uvlc(&mut r);
            }
            decoder_model = r.bit();
            if decoder_model {
                delay_len = r.bits(5) + 1;
                r.skip(32 + 5 + 5);
            }
        }
        let initial_display_delay = r.bit();
        let points = r.bits(5) + 1;
        let (mut l0, mut t0) = (0u8, 0u8);
        for i in 0..points {
            r.skip(12); // operating_point_idc
            let l = r.bits(5) as u8;
            let t = if l > 7 { r.bits(1) as u8 } else { 0 };
            if i == 0 {
                (l0, t0) = (l, t);
            }
            if decoder_model && r.bit() {
                r.skip(2 * delay_len + 1);
            }
            if initial_display_delay && r.bit() {
                r.skip(4);
            }
            if r.overrun() {
                return None;
            }
        }
        (level, tier) = (l0, t0);
    }
    let wbits = r.bits(4) + 1;
    let hbits = r.bits(4) + 1;
    r.skip(wbits + hbits);
    if !reduced && r.bit() {
        r.skip(4 + 3); // frame id lengths
    }
    r.skip(3); // use_128x128, filter_intra, intra_edge
    if !reduced {
        r.skip(4); // interintra, masked, warped motion, dual filter
        let order_hint = r.bit();
        if order_hint {
            r.skip(2);
        }
        let force_screen = if r.bit() { 2 } else { r.bits(1) };
        if force_screen > 0 && !r.bit() {
            r.skip(1);
        }
        if order_hint {
            r.skip(3);
        }
    }
    r.skip(3); // superres, cdef, restoration
               // color_config (§5.5.2)
    let high = r.bit();
    let twelve = profile == 2 && high && r.bit();
    let mono = profile != 1 && r.bit();
    let (mut cp, mut tc, mut mc) = (2u32, 2u32, 2u32);
    if r.bit() {
        (cp, tc, mc) = (r.bits(8), r.bits(8), r.bits(8));
    }
    let (ssx, ssy, csp);
    if mono {
        (ssx, ssy, csp) = (1u8, 1u8, 0u8);
    } else if cp == 1 && tc == 13 && mc == 0 {
        (ssx, ssy, csp) = (0, 0, 0);
    } else {
        r.skip(1); // color_range
        (ssx, ssy) = match profile {
            0 => (1, 1),
            1 => (0, 0),
            _ if twelve => {
                let x = r.bits(1) as u8;
                (x, if x == 1 { r.bits(1) as u8 } else { 0 })
            }
            _ => (1, 0),
        };
        csp = if ssx == 1 && ssy == 1 { r.bits(2) as u8 } else { 0 };
    }
    if r.overrun() {
        return None;
    }
    Some([
        (profile & 7) << 5 | (level & 0x1F),
        tier << 7 | u8::from(high) << 6 | u8::from(twelve) << 5 | u8::from(mono) << 4 | ssx << 3 | ssy << 2 | csp,
    ])
}

/// Writes the CodecPrivate (`av1C` + the Sequence Header OBU) for the OBUs
/// of `obus` into `out`; returns its length.
///
/// Errors: `Unsupported` when `obus` holds no Sequence Header OBU that
/// parses; `CapacityExceeded` when `out` is too small.
pub(crate) fn codec_private(obus: &[u8], out: &mut [u8]) -> Result<usize> {
    let bad = Error::unsupported(
        0,
        &"mkv muxer: AV1 needs an av1C or a Sequence Header OBU as CodecPrivate (AV1-in-Matroska 2.2)",
    );
    let (obu, payload) = find_sequence_header(obus).ok_or(bad)?;
    let [b1, b2] = config_bytes(payload).ok_or(bad)?;
    let n = 4 + obu.len();
    let dst = out
        .get_mut(..n)
        .ok_or(Error::capacity(0, &"mkv muxer: CodecPrivate beyond MAX_CONFIG_BYTES"))?;
    let (head, rest) = dst.split_at_mut(4);
    head.copy_from_slice(&[0x81, b1, b2, 0]);
    rest.copy_from_slice(obu);
    Ok(n)
}

/// The Temporal Unit `tu` without its leading Temporal Delimiter OBUs (a
/// sub-slice: nothing copied).
pub(crate) fn strip_temporal_delimiters(mut tu: &[u8]) -> &[u8] {
    while let Some(h) = ObuHeader::parse(tu).filter(|h| h.obu_type == OBU_TEMPORAL_DELIMITER) {
        let end = h
            .size
            .and_then(|s| usize::try_from(s).ok())
            .and_then(|s| s.checked_add(h.header_len));
        match end.and_then(|e| tu.get(e..)) {
            Some(rest) => tu = rest,
            None => break,
        }
    }
    tu
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn delimiters_go_and_garbage_is_an_error() {
        assert_eq!(strip_temporal_delimiters(&[0x12, 0, 0x12, 0, 0x32, 1, 9]), [0x32, 1, 9]);
        assert_eq!(strip_temporal_delimiters(&[0x12, 5]), [0x12, 5]);
        assert_eq!(strip_temporal_delimiters(&[]), [] as [u8; 0]);
        let mut out = [0u8; 64];
        assert!(codec_private(&[0x12, 0], &mut out).is_err());
        assert!(codec_private(&[0x0A, 1, 0], &mut out).is_err());
    }
}
