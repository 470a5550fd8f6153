//! D-10 sound elements (SMPTE ST 386 §5.3 with ST 331 AES3 element
//! data): a 4-byte element header, then per sample eight 32-bit AES3
//! subframes, little-endian, of which the descriptor's channel count are
//! used. ffmpeg (`mxf_get_d10_aes3_packet`) gives them as PCM: per
//! channel bits 4..28 (24-bit) or 12..28 (16-bit) of each subframe. Done
//! here the same way into the source's scratch, since ffprobe's packets
//! are the converted samples.

use crate::error::{Error, Result};
use crate::source::Source;

/// Bytes of the element header before the subframes.
const HEADER: u64 = 4;
/// Bytes of one sample's eight subframes.
const GROUP: u64 = 32;
/// The largest element ffmpeg converts (1920 samples of eight subframes).
const MAX_ELEMENT: u64 = 1920 * GROUP + HEADER;
/// Samples converted per read.
const GROUPS_PER_READ: u64 = 32;

/// Whether an essence element key is a D-10 AES3 sound element (item
/// type 0x06, count 0x01, element type 0x10: ST 386 Table 4).
pub(crate) fn is_d10_sound(key: &[u8; 16]) -> bool {
    key[12] == 0x06 && key[13] == 0x01 && key[14] == 0x10
}

/// Converts the element of `len` bytes at `at` into PCM of `channels`
/// channels at `bits` (24, else 16) in scratch; returns the PCM length.
pub(crate) fn convert<S: Source>(src: &mut S, at: u64, len: u64, channels: u16, bits: u16) -> Result<usize> {
    if len > MAX_ELEMENT || !(1..=8).contains(&channels) {
        return Err(Error::malformed(
            at,
            &"mxf: a D-10 sound element over 1920 samples or 8 channels (ST 386 §5.3)",
        ));
    }
    let used = u64::from(channels) * 4;
    let width = if bits == 24 { 3 } else { 2 };
    let body = len.saturating_sub(HEADER);
    let mut buf = [0u8; (GROUP * GROUPS_PER_READ) as usize];
    let mut out = [0u8; 8 * 3];
    let mut written = 0usize;
    let mut g = 0u64;
    // A sample is taken while its used subframes are all there.
    while g * GROUP + used <= body {
        let n = (body - g * GROUP).min(GROUP * GROUPS_PER_READ) as usize;
        let chunk = buf.get_mut(..n).unwrap_or(&mut []);
        src.read_exact_at(at + HEADER + g * GROUP, chunk)?;
        let mut i = 0u64;
        while i * GROUP + used <= n as u64 {
            let mut o = 0usize;
            for c in 0..u64::from(channels) {
                let p = (i * GROUP + c * 4) as usize;
                let s = chunk
                    .get(p..p + 4)
                    .and_then(|b| <[u8; 4]>::try_from(b).ok())
                    .map_or(0, u32::from_le_bytes);
                let v = if width == 3 {
                    (s >> 4) & 0xff_ffff
                } else {
                    (s >> 12) & 0xffff
                };
                if let Some(d) = out.get_mut(o..o + width) {
                    d.copy_from_slice(v.to_le_bytes().get(..width).unwrap_or(&[]));
                }
                o += width;
            }
            src.put(written, out.get(..o).unwrap_or(&[]))?;
            written += o;
            i += 1;
        }
        g += i;
        if i == 0 {
            break;
        }
    }
    Ok(written)
}
