//! AMR-NB and AMR-WB storage format (RFC 4867 §5: `#!AMR\n`, `#!AMR-WB\n`).
//!
//! Each packet is one frame: its table-of-contents byte and the speech bits
//! of its frame type (RFC 4867 §5.3; sizes from 3GPP TS 26.101 Table 1a and
//! TS 26.201 Table 1a), as ffmpeg's `amr` demuxer and parser give them. A
//! frame cut by the end of the input is given short, as ffmpeg does. The
//! multichannel headers (`#!AMR_MC1.0\n`, `#!AMR-WB_MC1.0\n`) are detected
//! and refused: ffmpeg does not read them either.

use crate::error::{Error, Result};
use crate::format::traits::{Context, FormatDemuxer};
use crate::source::Source;
use crate::types::{Codec, Packet, PacketFlags, Rational, Track, TrackKind};

/// AMR-NB frame sizes with the ToC byte, by frame type.
pub const NB_SIZES: [u8; 16] = [13, 14, 16, 18, 20, 21, 27, 32, 6, 1, 1, 1, 1, 1, 1, 1];
/// AMR-WB frame sizes with the ToC byte, by frame type.
pub const WB_SIZES: [u8; 16] = [18, 24, 33, 37, 41, 47, 51, 59, 61, 6, 1, 1, 1, 1, 1, 1];

/// The single-channel magic numbers.
pub const NB_MAGIC: &[u8] = b"#!AMR\n";
/// AMR-WB magic.
pub const WB_MAGIC: &[u8] = b"#!AMR-WB\n";
/// Most frames a seek walks (each at least one byte; about 23 days of
/// 20-ms frames): bounds the walk.
const MAX_SEEK_FRAMES: u32 = 100_000_000;

/// Demuxer state for AMR.
#[derive(Debug, Clone)]
pub struct AmrDemuxer {
    data_start: u64,
    pos: u64,
    wb: bool,
    pts: i64,
}

impl AmrDemuxer {
    fn frame_len(&self, toc: u8) -> u64 {
        let ft = ((toc >> 3) & 0xF) as usize;
        let t = if self.wb { &WB_SIZES } else { &NB_SIZES };
        t.get(ft).copied().unwrap_or(1) as u64
    }
}

impl FormatDemuxer for AmrDemuxer {
    fn open<S: Source>(src: &mut S, ctx: &mut Context) -> Result<Self> {
        let mut h = [0u8; 16];
        let n = src.read_at(0, &mut h)?;
        let h = h.get(..n).unwrap_or(&[]);
        let (wb, start) = if h.starts_with(NB_MAGIC) {
            (false, NB_MAGIC.len() as u64)
        } else if h.starts_with(WB_MAGIC) {
            (true, WB_MAGIC.len() as u64)
        } else if h.starts_with(b"#!AMR_MC1.0\n") || h.starts_with(b"#!AMR-WB_MC1.0\n") {
            return Err(Error::unsupported(
                0,
                &"amr: multichannel storage format not supported (RFC 4867 §5.2)",
            ));
        } else {
            return Err(Error::malformed(0, &"amr: no magic number (RFC 4867 §5.1)"));
        };
        let rate = if wb { 16000 } else { 8000 };
        let track = Track {
            id: 0,
            kind: TrackKind::Audio,
            codec: if wb { Codec::AmrWb } else { Codec::AmrNb },
            time_base: Rational::new(1, rate),
            sample_rate: rate,
            channels: 1,
            ..Track::default()
        };
        ctx.add_track(track, 0);
        Ok(AmrDemuxer {
            data_start: start,
            pos: start,
            wb,
            pts: 0,
        })
    }

    fn next_packet<'s, S: Source>(&mut self, src: &'s mut S, _ctx: &mut Context) -> Result<Option<Packet<'s>>> {
        let end = src.len();
        if self.pos >= end {
            return Ok(None);
        }
        let at = self.pos;
        let toc: [u8; 1] = src.array(at)?;
        let full = self.frame_len(toc[0]);
        let len = full.min(end - at);
        self.pos = at + len;
        let dur: u64 = if self.wb { 320 } else { 160 };
        let pts = self.pts;
        self.pts += dur as i64;
        let data = src.bytes(at, len as usize)?;
        Ok(Some(
            Packet::contiguous(0, at, data)
                .with_times(Some(pts), Some(pts), Some(dur))
                .with_flags(PacketFlags {
                    truncated: len < full,
                    ..PacketFlags::keyframe(true)
                }),
        ))
    }

    fn seek<S: Source>(&mut self, src: &mut S, _ctx: &mut Context, _track: usize, ts: i64) -> Result<()> {
        let dur: i64 = if self.wb { 320 } else { 160 };
        self.pos = self.data_start;
        self.pts = 0;
        let mut steps = 0u32;
        while self.pts + dur <= ts && self.pos < src.len() && steps < MAX_SEEK_FRAMES {
            steps += 1;
            let toc: [u8; 1] = src.array(self.pos)?;
            self.pos += self.frame_len(toc[0]);
            self.pts += dur;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use crate::{Demuxer, SliceSource};

    #[test]
    fn frames_by_toc_and_a_cut_last_frame() {
        // NB: FT 7 (32 bytes), FT 15 (NO_DATA, 1 byte), then FT 0 cut short.
        let mut f = [0u8; 6 + 32 + 1 + 5];
        f[..6].copy_from_slice(b"#!AMR\n");
        f[6] = 7 << 3 | 4;
        f[38] = 15 << 3 | 4;
        f[39] = 4;
        let mut d = Demuxer::open(SliceSource::new(&f), None).unwrap();
        assert_eq!(d.format(), crate::FormatKind::Amr);
        let mut got = [(0usize, false); 4];
        let mut n = 0;
        while let Some(p) = d.next_packet().unwrap() {
            got[n] = (p.data.len(), p.flags.truncated);
            n += 1;
        }
        assert_eq!(&got[..n], &[(32, false), (1, false), (5, true)]);
    }
}
