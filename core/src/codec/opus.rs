//! Opus packet durations from the TOC byte (RFC 6716 §3.1), shared by the
//! Ogg reader (packet times) and the Matroska writer (the end trim a
//! short last packet carries, written as DiscardPadding).

/// A packet's duration in 48 kHz samples from its TOC byte `b0` and, for
/// code 3, the frame count byte `b1` (RFC 6716 §3.1); `size` is the
/// packet's length. `None` when a code 3 packet has no count byte.
pub(crate) fn toc_samples(b0: u8, b1: u8, size: u32) -> Option<u32> {
    let config = (b0 >> 3) as u32;
    let count = b0 & 3;
    let frame = if config < 12 {
        (960 * (config & 3)).max(480)
    } else if config < 16 {
        480 << (config & 1)
    } else {
        120 << (config & 3)
    };
    let frames = match count {
        0 => 1,
        3 => {
            if size < 2 {
                return None;
            }
            (b1 & 0x3F) as u32
        }
        _ => 2,
    };
    Some(frame * frames)
}

/// [`toc_samples`] of the whole packet `data`; `None` for an empty one.
#[cfg(feature = "mkv")]
pub(crate) fn packet_samples(data: &[u8]) -> Option<u32> {
    let b0 = *data.first()?;
    toc_samples(b0, data.get(1).copied().unwrap_or(0), u32::try_from(data.len()).ok()?)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn opus_toc_durations() {
        assert_eq!(toc_samples(0xF8, 0, 1), Some(960)); // CELT FB 20 ms
        assert_eq!(toc_samples(0x01, 0, 1), Some(960)); // SILK 10 ms x2
        assert_eq!(toc_samples(0x4B, 0x03, 2), Some(960 * 3)); // SILK WB 20 ms x3
        assert_eq!(toc_samples(0x4B, 0x03, 1), None);
    }

    #[cfg(feature = "mkv")]
    #[test]
    fn whole_packets() {
        assert_eq!(packet_samples(&[0x4B, 0x03]), Some(960 * 3));
        assert_eq!(packet_samples(&[]), None);
    }
}
