//! Speex in Ogg: the Speex manual's "Ogg file format" (an 80-byte header
//! packet, a comment packet, then packets of a fixed number of frames).

use crate::bytes;
use crate::types::Codec;

use super::{head_of, HeaderOutcome, PacketTiming, PacketView, Timing, TrackInfo, NOPTS};

/// The Speex header (Speex manual, "Ogg file format").
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct SpeexHeader {
    /// Sample rate in Hz.
    pub sample_rate: u32,
    /// Channels (1 or 2).
    pub channels: u32,
    /// Samples per frame.
    pub frame_size: u32,
    /// Frames per Ogg packet (0 means 1).
    pub frames_per_packet: u32,
}

impl SpeexHeader {
    /// Parses the header packet (at least 68 bytes; ffmpeg's checks).
    pub fn parse(b: &[u8]) -> Option<SpeexHeader> {
        if b.len() < 68 || !b.starts_with(b"Speex   ") {
            return None;
        }
        let h = SpeexHeader {
            sample_rate: bytes::le32(b, 36)?,
            channels: bytes::le32(b, 48)?,
            frame_size: bytes::le32(b, 56)?,
            frames_per_packet: bytes::le32(b, 64)?,
        };
        let valid = (h.sample_rate as i32) > 0
            && (1..=2).contains(&h.channels)
            && (h.frame_size as i32) >= 0
            && (h.frames_per_packet as i32) >= 0
            && (h.frame_size as i64) * (h.frames_per_packet as i64) <= (i32::MAX / 256) as i64;
        valid.then_some(h)
    }
}

/// Speex framing.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct SpeexState {
    /// Samples per packet.
    pub packet_size: i32,
    final_packet_duration: i32,
    /// Header packets seen.
    pub seq: u8,
}

impl SpeexState {
    /// Handles a header packet: the Speex header, then the comment packet;
    /// anything after them is data.
    pub(super) fn header(&mut self, head: &[u8], size: u32) -> HeaderOutcome {
        if self.seq > 1 {
            return HeaderOutcome::data();
        }
        let mut out = HeaderOutcome {
            slot: Some(self.seq),
            ..HeaderOutcome::default()
        };
        if self.seq == 0 {
            let Some(h) = SpeexHeader::parse(head_of(head, size)) else {
                out.error = true;
                return out;
            };
            self.packet_size = h.frame_size as i32;
            if h.frames_per_packet != 0 {
                self.packet_size = self.packet_size.saturating_mul(h.frames_per_packet as i32);
            }
            out.config = Some((0, size));
            out.track = Some(TrackInfo::audio(Codec::Speex, h.sample_rate, h.channels as u16));
        } else {
            out.comment = Some(0);
        }
        self.seq += 1;
        out
    }

    /// The packet step: the first pts from the page granule, a fixed
    /// duration per packet, and the last packet of the stream trimmed to
    /// the final granule.
    #[inline]
    pub(super) fn packet(&mut self, ts: &mut Timing, p: &PacketView<'_>) -> PacketTiming {
        let eos = p.eos();
        let granule = ts.granule;
        let packets = p.lacing.iter().filter(|&&l| l < 255).count() as i64;
        let size = self.packet_size as i64;
        if eos && ts.lastpts != NOPTS && granule > 0 {
            self.final_packet_duration = granule
                .wrapping_sub(ts.lastpts as u64)
                .wrapping_sub((size * (packets - 1)) as u64) as i32;
        }
        if ts.lastpts == 0 && granule > 0 {
            let pts = granule.wrapping_sub((size * packets) as u64) as i64;
            ts.set_next(pts);
        }
        let duration = if eos && p.last_on_page() && self.final_packet_duration != 0 {
            self.final_packet_duration as u32
        } else {
            self.packet_size as u32
        };
        PacketTiming {
            duration,
            ..PacketTiming::default()
        }
    }
}
