//! FLAC in Ogg (RFC 9639 §10.1): a mapping header `\x7FFLAC` with the
//! STREAMINFO block, then the other metadata blocks, then one frame per
//! packet, timed by its frame header as ffmpeg's FLAC parser does.

use crate::bytes;
use crate::format::xiph::flac::{FrameHeader, StreamInfo, STREAMINFO_LEN};
use crate::types::Codec;

use super::{HeaderOutcome, PacketTiming, PacketView, TrackInfo};

/// Where the STREAMINFO block starts in the mapping header: `\x7FFLAC`,
/// the version (2 bytes), the header count (2), `fLaC`, and the metadata
/// block header (4) (RFC 9639 §10.1).
const STREAMINFO_AT: usize = 17;

/// FLAC-in-Ogg: the last block size seen (ffmpeg's parser keeps it when a
/// frame header does not parse).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct FlacState {
    /// Samples in the last frame with a valid header.
    pub block_size: u32,
}

/// Handles a header packet: the mapping header with STREAMINFO, or a
/// metadata block (its type in the low 7 bits of the first byte; 4 is
/// VORBIS_COMMENT); a packet starting 0xFF (a frame's sync code) is data.
pub(super) fn header(head: &[u8]) -> HeaderOutcome {
    let b0 = head.first().copied().unwrap_or(0);
    if b0 == 0xFF {
        return HeaderOutcome::data();
    }
    let mut out = HeaderOutcome::default();
    if b0 & 0x7F == 0x7F {
        // RFC 9639 §10.1: "\x7FFLAC", version 1.x, header count, "fLaC",
        // then the STREAMINFO block with its header.
        let block_len = bytes::be32(head, STREAMINFO_AT - 4);
        let info = head
            .get(STREAMINFO_AT..STREAMINFO_AT + STREAMINFO_LEN)
            .and_then(StreamInfo::parse);
        match (head.get(5), block_len, info) {
            (Some(1), Some(34), Some(si)) if si.sample_rate > 0 => {
                out.slot = Some(0);
                out.config = Some((STREAMINFO_AT as u32, STREAMINFO_LEN as u32));
                let mut t = TrackInfo::audio(Codec::Flac, si.sample_rate, si.channels as u16);
                t.bits_per_sample = si.bits_per_sample as u16;
                out.track = Some(t);
            }
            _ => out.error = true,
        }
    } else if b0 & 0x7F == 4 {
        out.comment = Some(4);
    }
    out
}

impl FlacState {
    /// The packet step (ffmpeg's FLAC parser on complete frames): the frame
    /// header's block size, or the last one when the header does not parse.
    #[inline]
    pub(super) fn packet(&mut self, p: &PacketView<'_>) -> PacketTiming {
        if let Some(h) = FrameHeader::parse(&p.head) {
            self.block_size = h.block_size;
        }
        PacketTiming {
            duration: self.block_size,
            ..PacketTiming::default()
        }
    }
}
