//! The TTA demuxer: header, seek table walked in place, frames as packets,
//! seeking by summing the table.

use crate::error::{Error, Result};
use crate::format::es::id3;
use crate::format::traits::{Context, FormatDemuxer};
use crate::source::Source;
use crate::types::{Codec, Packet, PacketFlags, Rational, Track, TrackKind};
use zerocopy::little_endian::{U16, U32};
use zerocopy::{FromBytes, Immutable, KnownLayout, Unaligned};

/// The TTA1 header (TTA format description, "TTA1 header").
#[derive(FromBytes, KnownLayout, Immutable, Unaligned, Debug, Clone, Copy)]
#[repr(C)]
pub struct TtaHeader {
    /// `TTA1`.
    pub magic: [u8; 4],
    /// 1: integer PCM; 2: encrypted (password); 3: float.
    pub format: U16,
    /// Channels.
    pub channels: U16,
    /// Bits per sample (8, 16, 24).
    pub bits: U16,
    /// Sample rate.
    pub sample_rate: U32,
    /// Samples per channel in the file.
    pub data_length: U32,
    /// CRC-32 of the 18 bytes before it.
    pub crc: U32,
}

/// Bytes of [`TtaHeader`].
const HEADER_LEN: u64 = 22;
/// Bytes of one seek table entry, and of the table's CRC.
const ENTRY: u64 = 4;
/// The error once the input ends inside a frame.
const CUT: &str = "tta: the input ends inside a frame (TTA format, frames)";

/// Demuxer state for TTA.
#[derive(Debug, Clone)]
pub struct TtaDemuxer {
    /// Where the seek table starts.
    table: u64,
    frames: u64,
    frame_len: u64,
    total: u64,
    first_frame: u64,
    /// Where the audio ends (before trailing tags).
    audio_end: u64,
    largest: u64,
    // Cursor.
    index: u64,
    pos: u64,
    cut: bool,
}

impl TtaDemuxer {
    /// The size of frame `i`, from the seek table.
    fn frame_size<S: Source>(&self, src: &mut S, i: u64) -> Result<u64> {
        let e: U32 = src.read(self.table + i * ENTRY)?;
        Ok(u64::from(e.get()))
    }

    /// Samples in frame `i` (the last holds the rest).
    fn frame_samples(&self, i: u64) -> u64 {
        if i + 1 == self.frames {
            self.total - i * self.frame_len
        } else {
            self.frame_len
        }
    }
}

impl FormatDemuxer for TtaDemuxer {
    fn open<S: Source>(src: &mut S, ctx: &mut Context) -> Result<Self> {
        let h: TtaHeader = src.read(0)?;
        if &h.magic != b"TTA1" {
            return Err(Error::malformed(0, &"tta: no TTA1 magic (TTA format, header)"));
        }
        if h.format.get() == 2 {
            return Err(Error::unsupported(4, &"tta: encrypted (format 2) files are not read"));
        }
        let channels = h.channels.get();
        let rate = h.sample_rate.get();
        if channels == 0 || rate == 0 {
            return Err(Error::malformed(
                6,
                &"tta: no channels or sample rate 0 (TTA format, header)",
            ));
        }
        let frame_len = (256 * u64::from(rate) / 245).max(1);
        let total = u64::from(h.data_length.get());
        let frames = total.div_ceil(frame_len);
        let first_frame = HEADER_LEN + frames * ENTRY + ENTRY;
        if first_frame > src.len() {
            return Err(Error::truncated(
                HEADER_LEN,
                &"tta: the seek table runs past the end of the input (TTA format, seek table)",
            ));
        }
        let trailer = id3::find_trailer(src, first_frame)?;
        let track = Track {
            id: 0,
            kind: TrackKind::Audio,
            codec: Codec::Tta,
            time_base: Rational::new(1, rate),
            duration: Some(total),
            sample_rate: rate,
            channels,
            bits_per_sample: h.bits.get(),
            ..Track::default()
        };
        ctx.add_track(track, 0);
        ctx.info.duration_us = Some(
            Rational::new(1, rate)
                .to_micros(total.min(i64::MAX as u64) as i64)
                .max(0) as u64,
        );
        ctx.info.start_us = Some(0);
        let mut d = TtaDemuxer {
            table: HEADER_LEN,
            frames,
            frame_len,
            total,
            first_frame,
            audio_end: trailer.audio_end,
            largest: 0,
            index: 0,
            pos: first_frame,
            cut: false,
        };
        // The largest frame, for scratch: one pass over the table, which
        // the input holds (checked above), so the work is bounded by it.
        let mut largest = 0;
        for i in 0..frames {
            largest = largest.max(d.frame_size(src, i)?);
        }
        if largest > u64::from(ctx.limits.max_packet) {
            return Err(Error::limit(
                HEADER_LEN,
                &"tta: a frame larger than Limits::max_packet (TTA format, seek table)",
            ));
        }
        d.largest = largest;
        Ok(d)
    }

    fn next_packet<'s, S: Source>(&mut self, src: &'s mut S, _ctx: &mut Context) -> Result<Option<Packet<'s>>> {
        if self.cut {
            return Err(Error::truncated(self.audio_end, &CUT));
        }
        if self.index >= self.frames {
            return Ok(None);
        }
        let size = self.frame_size(src, self.index)?;
        if size == 0 {
            return Err(Error::malformed(
                self.table + self.index * ENTRY,
                &"tta: a frame of 0 bytes in the seek table (TTA format, seek table)",
            ));
        }
        let left = self.audio_end.saturating_sub(self.pos);
        if left == 0 {
            return Err(Error::truncated(self.pos, &CUT));
        }
        let truncated = size > left;
        let mut size = size.min(left);
        let at = self.pos;
        if truncated {
            // A cut frame ends where a cut APEv2 tag begins: the whole input
            // leaves its tag out of the audio (`find_trailer`), so a prefix
            // must not give the tag's first bytes as audio.
            let data = src.bytes(at, size as usize)?;
            size = cut_ape_tag_start(data) as u64;
            if size == 0 {
                self.cut = true;
                return Err(Error::truncated(at, &CUT));
            }
        }
        let pts = (self.index * self.frame_len).min(i64::MAX as u64) as i64;
        let dur = self.frame_samples(self.index);
        let data = src.bytes(at, size as usize)?;
        self.pos += size;
        self.index += 1;
        self.cut = truncated;
        Ok(Some(
            Packet::contiguous(0, at, data)
                .with_times(Some(pts), Some(pts), Some(dur))
                .with_flags(PacketFlags {
                    truncated,
                    ..PacketFlags::keyframe(true)
                }),
        ))
    }

    fn seek<S: Source>(&mut self, src: &mut S, _ctx: &mut Context, _track: usize, ts: i64) -> Result<()> {
        let target = (ts.max(0) as u64 / self.frame_len).min(self.frames);
        let mut pos = self.first_frame;
        for i in 0..target {
            pos = pos.saturating_add(self.frame_size(src, i)?);
        }
        self.index = target;
        self.pos = pos;
        self.cut = false;
        Ok(())
    }

    fn max_packet_size(&self) -> Option<usize> {
        usize::try_from(self.largest).ok()
    }
}

/// Where an APEv2 tag that the end of the input cuts begins in `data` (the
/// bytes of a cut last frame, running to the end of the input), or
/// `data.len()`: a header (`APETAGEX` with the header flag, APEv2
/// specification) whose tag runs past the end, or the first bytes of
/// `APETAGEX` at the very end.
fn cut_ape_tag_start(data: &[u8]) -> usize {
    const KEY: &[u8; 8] = b"APETAGEX";
    let mut at = 0usize;
    while let Some(i) = data.get(at..).and_then(|d| d.iter().position(|&b| b == b'A')) {
        let j = at + i;
        let rest = data.get(j..).unwrap_or(&[]);
        let n = rest.len().min(KEY.len());
        if rest.get(..n) == KEY.get(..n) {
            if rest.len() < 32 {
                return j;
            }
            let word = |o: usize| {
                rest.get(o..o + 4)
                    .and_then(|b| <[u8; 4]>::try_from(b).ok())
                    .map_or(0, u32::from_le_bytes)
            };
            let (tag_size, flags) = (word(12) as usize, word(20));
            if flags & 0x2000_0000 != 0 && 32usize.saturating_add(tag_size) > rest.len() {
                return j;
            }
        }
        at = j + 1;
    }
    data.len()
}

#[cfg(test)]
mod cut_tag_tests {
    extern crate std;
    use super::cut_ape_tag_start;
    use std::vec;

    #[test]
    fn a_cut_ape_tag_is_left_out_of_a_cut_frame() {
        let mut tag = b"APETAGEX".to_vec();
        tag.extend_from_slice(&2000u32.to_le_bytes());
        tag.extend_from_slice(&92u32.to_le_bytes()); // items + footer
        tag.extend_from_slice(&2u32.to_le_bytes());
        tag.extend_from_slice(&0xA000_0000u32.to_le_bytes()); // header flag
        tag.extend_from_slice(&[0; 8]);
        tag.extend_from_slice(&[7; 40]);
        let mut frame = vec![0x11u8; 100];
        frame.extend_from_slice(&tag);
        // The tag runs past the end: the frame ends where it begins.
        assert_eq!(cut_ape_tag_start(&frame), 100);
        // Its first bytes only, even fewer than the header's 32.
        assert_eq!(cut_ape_tag_start(&frame[..110]), 100);
        assert_eq!(cut_ape_tag_start(&frame[..103]), 100);
        // No tag: the whole frame.
        assert_eq!(cut_ape_tag_start(&frame[..100]), 100);
        let mut plain = vec![b'A'; 10];
        plain.extend_from_slice(&[1, 2, 3]);
        assert_eq!(cut_ape_tag_start(&plain), 13);
    }
}
