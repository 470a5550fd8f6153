//! DV (DIF streams, `.dv`): IEC 61834 (25 Mbit/s consumer DV) and SMPTE
//! 314M (DVCPRO 25/50), SMPTE 370M frame sizes for DVCPRO HD.
//!
//! Each DIF frame is one video packet (`dvvideo`), zero-copy. As ffprobe
//! does, the audio is given as PCM: per frame and per stereo pair, the
//! samples of the audio DIF blocks are de-shuffled (IEC 61834-2 §6.4,
//! SMPTE 314M §4.6) and, for 12-bit nonlinear audio, expanded to 16 bits,
//! into the caller's scratch (`pcm_s16le` packets, joined like any packet a
//! container splits). See `docs/formats/dv.md`.

use crate::error::{Error, Result};
use crate::format::traits::{Context, FormatDemuxer};
use crate::source::Source;
use crate::types::{Codec, Packet, PacketFlags, Rational, Track, TrackKind};

/// Bytes in a DIF block.
pub const BLOCK: u64 = 80;
/// Bytes in a DIF sequence (150 blocks).
pub const SEQUENCE: u64 = 150 * BLOCK;
/// Largest PCM packet: 1944 stereo 16-bit samples (625/50 at 48 kHz).
pub const MAX_PCM: usize = 1944 * 4;
/// Most stereo pairs.
const MAX_PAIRS: usize = 4;

/// A DV system (ffmpeg's `AVDVProfile`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DvProfile {
    /// `dsf`: false 525/60, true 625/50.
    pub dsf: bool,
    /// VAUX source `stype`.
    pub stype: u8,
    /// Bytes per frame.
    pub frame_size: u64,
    /// DIF sequences per DIF channel.
    pub segments: u8,
    /// DIF channels.
    pub channels: u8,
    /// Frame duration as a time base.
    pub time_base: Rational,
    /// Picture size.
    pub width: u32,
    /// Picture height.
    pub height: u32,
    /// Fewest audio samples per frame at 48, 44.1 and 32 kHz.
    pub audio_min: [u16; 3],
}

const NTSC: Rational = Rational::new(1001, 30000);
const PAL: Rational = Rational::new(1, 25);
const MIN_525: [u16; 3] = [1580, 1452, 1053];
const MIN_625: [u16; 3] = [1896, 1742, 1264];

/// The systems read: DV25, DV50 and DVCPRO HD, both frame rates.
pub const PROFILES: [DvProfile; 8] = [
    DvProfile {
        dsf: false,
        stype: 0,
        frame_size: 120_000,
        segments: 10,
        channels: 1,
        time_base: NTSC,
        width: 720,
        height: 480,
        audio_min: MIN_525,
    },
    DvProfile {
        dsf: true,
        stype: 0,
        frame_size: 144_000,
        segments: 12,
        channels: 1,
        time_base: PAL,
        width: 720,
        height: 576,
        audio_min: MIN_625,
    },
    DvProfile {
        dsf: false,
        stype: 4,
        frame_size: 240_000,
        segments: 10,
        channels: 2,
        time_base: NTSC,
        width: 720,
        height: 480,
        audio_min: MIN_525,
    },
    DvProfile {
        dsf: true,
        stype: 4,
        frame_size: 288_000,
        segments: 12,
        channels: 2,
        time_base: PAL,
        width: 720,
        height: 576,
        audio_min: MIN_625,
    },
    DvProfile {
        dsf: false,
        stype: 0x14,
        frame_size: 480_000,
        segments: 10,
        channels: 4,
        time_base: NTSC,
        width: 1280,
        height: 1080,
        audio_min: MIN_525,
    },
    DvProfile {
        dsf: true,
        stype: 0x14,
        frame_size: 576_000,
        segments: 12,
        channels: 4,
        time_base: PAL,
        width: 1440,
        height: 1080,
        audio_min: MIN_625,
    },
    DvProfile {
        dsf: false,
        stype: 0x18,
        frame_size: 240_000,
        segments: 10,
        channels: 2,
        time_base: Rational::new(1001, 60000),
        width: 960,
        height: 720,
        audio_min: MIN_525,
    },
    DvProfile {
        dsf: true,
        stype: 0x18,
        frame_size: 288_000,
        segments: 12,
        channels: 2,
        time_base: Rational::new(1, 50),
        width: 960,
        height: 720,
        audio_min: MIN_625,
    },
];

/// Whether `b` (at least 4 bytes) is a DIF header block id: section type
/// header, sequence 0, block 0 (IEC 61834-2 §11.2).
pub fn is_header_block(b: &[u8]) -> bool {
    matches!(b, [0x1F, 0x07, 0x00, x, ..] if x & 0x7F == 0x3F)
}

/// The system of the frame whose first bytes are `head` (at least 456
/// bytes): `dsf` from the header block, `stype` from the VAUX source pack.
pub fn profile(head: &[u8]) -> Option<DvProfile> {
    let dsf = head.get(3)? & 0x80 != 0;
    let stype = head.get(5 * 80 + 48 + 3)? & 0x1F;
    PROFILES
        .iter()
        .copied()
        .find(|p| p.dsf == dsf && p.stype == stype)
        .or_else(|| {
            // ffmpeg: no video stype recorded means 25 Mbit/s.
            PROFILES.iter().copied().find(|p| p.dsf == dsf && p.stype == 0)
        })
}

/// The de-shuffling position of block `j` of DIF sequence `row` (ffmpeg's
/// `dv_audio_shuffle525/625` tables, IEC 61834-2 Fig. 14/15): three
/// interleaved runs per channel.
fn shuffle(segments: u8, row: usize, j: usize) -> usize {
    let (period, offs) = if segments == 10 {
        (30, [0usize, 20, 10])
    } else {
        (36, [0usize, 26, 16])
    };
    let half = segments as usize / 2;
    let (ch, rr) = (row / half.max(1), row % half.max(1));
    (6 * rr + ch + offs.get(j / 3).copied().unwrap_or(0)) % period + period * (j % 3)
}

/// 12-bit nonlinear to 16-bit linear (IEC 61834-4 §8.2.1).
fn audio_12to16(sample: u16) -> u16 {
    let sample = if sample < 0x800 { sample } else { sample | 0xF000 };
    let shift = (sample & 0xF00) >> 8;
    if !(2..=0xD).contains(&shift) {
        sample
    } else if shift < 8 {
        let s = shift - 1;
        sample.wrapping_sub(256 * s) << s
    } else {
        let s = 0xE - shift;
        (sample.wrapping_add(256 * s + 1) << s).wrapping_sub(1)
    }
}

/// The AAUX source pack (`0x50`) of a frame: `smpls`, `freq`, `stype`,
/// `quant`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct AudioSource {
    samples: u16,
    freq: u8,
    pairs: u8,
    quant: u8,
}

/// Demuxer state for DV.
#[derive(Debug, Clone)]
pub struct DvDemuxer {
    sys: DvProfile,
    pos: u64,
    frame: u64,
    /// Audio packets still to give for the frame at `pos - frame_size`:
    /// next pair index and count.
    pending: (u8, u8),
    pending_at: u64,
    pairs: u8,
}

fn audio_source<S: Source>(src: &mut S, frame: u64, sys: &DvProfile) -> Result<Option<AudioSource>> {
    // ffmpeg's dv_extract_pack: the pack sits in the 1st (odd sequences)
    // or 4th (even) audio block of a sequence, 3 bytes in.
    for c in 0..10u64 {
        let offs = if c & 1 == 1 {
            6 * BLOCK + 3
        } else {
            6 * BLOCK + 16 * BLOCK * 3 + 3
        } + c * SEQUENCE;
        if offs + 5 > sys.frame_size {
            break;
        }
        let p: [u8; 5] = src.array(frame + offs)?;
        if p[0] == 0x50 {
            let freq = (p[4] >> 3) & 7;
            let stype = p[3] & 0x1F;
            let quant = p[4] & 7;
            if freq > 2 || stype > 3 {
                return Ok(None);
            }
            let mut pairs = match stype {
                0 => 1u8,
                2 => 2,
                3 => 4,
                _ => 0,
            };
            if pairs == 1 && quant == 1 && freq == 2 {
                pairs = 2;
            }
            return Ok(Some(AudioSource {
                samples: (p[1] & 0x3F) as u16,
                freq,
                pairs,
                quant,
            }));
        }
    }
    Ok(None)
}

/// Writes the PCM of stereo pair `want` of the frame at `frame` into `out`
/// (ffmpeg's `dv_extract_audio`); returns the packet size.
fn extract<S: Source>(
    src: &mut S,
    frame: u64,
    sys: &DvProfile,
    a: &AudioSource,
    want: u8,
    out: &mut [u8; MAX_PCM],
) -> Result<usize> {
    let min = *sys.audio_min.get(a.freq as usize).unwrap_or(&0) as usize;
    let size = ((min + a.samples as usize) * 4).min(MAX_PCM);
    out.fill(0);
    if a.quant > 1 {
        return Ok(size);
    }
    let segs = sys.segments as usize;
    let half = segs / 2;
    let stride = if segs == 10 { 90 } else { 108 };
    let b1: [u8; 2] = src.array(frame)?;
    let mut ipcm: u8 = if sys.height == 720 && b1[1] & 0x0C == 0 { 2 } else { 0 };
    if ipcm as usize + sys.channels as usize > if a.quant == 1 { 2 } else { 4 } {
        return Ok(size);
    }
    let mut at = frame;
    'chan: for _ in 0..sys.channels {
        let mut cur = ipcm;
        ipcm += 1;
        if cur >= a.pairs {
            break;
        }
        for i in 0..segs {
            at += 6 * BLOCK;
            if a.quant == 1 && i == half {
                cur = ipcm;
                ipcm += 1;
                if cur >= a.pairs {
                    break 'chan;
                }
            }
            for j in 0..9 {
                if cur == want {
                    let blk: [u8; 80] = src.array(at)?;
                    let mut d = 8usize;
                    while d < 80 {
                        if a.quant == 0 {
                            let of = shuffle(sys.segments, i, j) + (d - 8) / 2 * stride;
                            if of * 2 < size {
                                let (hi, lo) = (blk.get(d).copied().unwrap_or(0), blk.get(d + 1).copied().unwrap_or(0));
                                let hi = if hi == 0x80 && lo == 0 { 0 } else { hi };
                                if let Some(o) = out.get_mut(of * 2..of * 2 + 2) {
                                    o.copy_from_slice(&[lo, hi]);
                                }
                            }
                        } else {
                            let (x, y, z) = (
                                blk.get(d).copied().unwrap_or(0) as u16,
                                blk.get(d + 1).copied().unwrap_or(0) as u16,
                                blk.get(d + 2).copied().unwrap_or(0) as u16,
                            );
                            let lc = (x << 4) | (z >> 4);
                            let rc = (y << 4) | (z & 0xF);
                            let lc = if lc == 0x800 { 0 } else { audio_12to16(lc) };
                            let rc = if rc == 0x800 { 0 } else { audio_12to16(rc) };
                            let of = shuffle(sys.segments, i % half, j) + (d - 8) / 3 * stride;
                            if of * 2 >= size {
                                d += 2;
                                continue;
                            }
                            if let Some(o) = out.get_mut(of * 2..of * 2 + 2) {
                                o.copy_from_slice(&lc.to_le_bytes());
                            }
                            let of = shuffle(sys.segments, i % half + half, j) + (d - 8) / 3 * stride;
                            if let Some(o) = out.get_mut(of * 2..of * 2 + 2) {
                                o.copy_from_slice(&rc.to_le_bytes());
                            }
                            d += 1;
                        }
                        d += 2;
                    }
                }
                at += 16 * BLOCK;
            }
        }
    }
    Ok(size)
}

/// Whether the input starts with a DV frame: a DIF header block, then the
/// subcode, VAUX, audio and video sections where IEC 61834-2 puts them.
pub fn probe<S: Source>(src: &mut S) -> Result<bool> {
    let mut h = [0u8; 6 * 80 + 4];
    if src.read_at(0, &mut h)? < h.len() {
        return Ok(false);
    }
    let sct = |at: usize| h.get(at).map(|b| b >> 5);
    Ok(is_header_block(&h)
        && sct(80) == Some(1)
        && sct(160) == Some(1)
        && sct(240) == Some(2)
        && sct(400) == Some(2)
        && sct(480) == Some(3)
        && profile(&h).is_some())
}

impl FormatDemuxer for DvDemuxer {
    fn open<S: Source>(src: &mut S, ctx: &mut Context) -> Result<Self> {
        let mut h = [0u8; 6 * 80];
        src.read_exact_at(0, &mut h)?;
        if !is_header_block(&h) {
            return Err(Error::malformed(
                0,
                &"dv: no DIF header block at the start (IEC 61834-2 §11.2)",
            ));
        }
        let sys = profile(&h).ok_or(Error::unsupported(
            0,
            &"dv DIF header: its DSF and APT name no known system (IEC 61834-2 §11.2)",
        ))?;
        let frames = src.len() / sys.frame_size;
        let track = Track {
            id: 0,
            kind: TrackKind::Video,
            codec: Codec::DvVideo,
            time_base: sys.time_base,
            duration: Some(frames),
            frames: Some(frames),
            width: sys.width,
            height: sys.height,
            bit_rate: (sys.frame_size * 8 * sys.time_base.den as u64 / sys.time_base.num.max(1) as u64) as u32,
            ..Track::default()
        };
        ctx.add_track(track, 0);
        let a = if src.len() >= sys.frame_size {
            audio_source(src, 0, &sys)?
        } else {
            None
        };
        let pairs = a.map(|a| a.pairs).unwrap_or(0).min(MAX_PAIRS as u8);
        for _ in 0..pairs {
            let rate = match a.map(|a| a.freq).unwrap_or(0) {
                1 => 44100u32,
                2 => 32000,
                _ => 48000,
            };
            let t = Track {
                id: ctx.tracks.len() as u32,
                kind: TrackKind::Audio,
                codec: Codec::PcmS16Le,
                time_base: sys.time_base,
                duration: Some(frames),
                sample_rate: rate,
                channels: 2,
                bits_per_sample: 16,
                bit_rate: 2 * rate * 16,
                ..Track::default()
            };
            ctx.add_track(t, 0);
        }
        ctx.info.duration_us = Some(sys.time_base.to_micros(frames as i64).max(0) as u64);
        Ok(DvDemuxer {
            sys,
            pos: 0,
            frame: 0,
            pending: (0, 0),
            pending_at: 0,
            pairs,
        })
    }

    fn next_packet<'s, S: Source>(&mut self, src: &'s mut S, ctx: &mut Context) -> Result<Option<Packet<'s>>> {
        let _ = ctx;
        if self.pending.0 < self.pending.1 {
            let pair = self.pending.0;
            self.pending.0 += 1;
            let at = self.pending_at;
            let a = audio_source(src, at, &self.sys)?;
            let Some(a) = a else { return Ok(None) };
            let mut pcm = [0u8; MAX_PCM];
            let size = extract(src, at, &self.sys, &a, pair, &mut pcm)?;
            src.put(0, pcm.get(..size).unwrap_or(&[]))?;
            let shared: &'s S = src;
            let data = shared.joined(size)?;
            let pts = self.frame as i64 - 1;
            return Ok(Some(
                Packet::joined(1 + pair as usize, Some(at), data)
                    .with_times(Some(pts), Some(pts), Some(1))
                    .with_flags(PacketFlags::keyframe(true)),
            ));
        }
        let at = self.pos;
        let len = src.len();
        if at >= len {
            if at > len {
                // After a cut frame's packet: report the cut.
                self.pos = len;
                return Err(Error::truncated(
                    len,
                    &"dv frame: input ends inside its DIF sequences (IEC 61834-2 §11)",
                ));
            }
            return Ok(None);
        }
        // A frame the end cuts is delivered as far as it goes, flagged, as
        // ffprobe gives it; its audio is not (ffmpeg's comes in part from
        // the bytes of its buffer past the cut).
        let size = self.sys.frame_size.min(len - at);
        let cut = size < self.sys.frame_size;
        if !cut && !is_header_block(&src.array::<4>(at)?) {
            ctx.diags.report("dv.bad-frame-header", at);
        }
        let n = if self.pairs > 0 && !cut {
            audio_source(src, at, &self.sys)?
                .map(|a| a.pairs.min(self.pairs))
                .unwrap_or(0)
        } else {
            0
        };
        self.pending = (0, n);
        self.pending_at = at;
        self.pos = if cut { len + 1 } else { at + size };
        let pts = self.frame as i64;
        self.frame += 1;
        let data = src.bytes(at, size as usize)?;
        Ok(Some(
            Packet::contiguous(0, at, data)
                .with_times(Some(pts), Some(pts), Some(1))
                .with_flags(PacketFlags {
                    truncated: cut,
                    ..PacketFlags::keyframe(true)
                }),
        ))
    }

    fn seek<S: Source>(&mut self, src: &mut S, _ctx: &mut Context, _track: usize, ts: i64) -> Result<()> {
        let frames = src.len() / self.sys.frame_size;
        let f = (ts.max(0) as u64).min(frames);
        self.frame = f;
        self.pos = f * self.sys.frame_size;
        self.pending = (0, 0);
        Ok(())
    }

    fn max_packet_size(&self) -> Option<usize> {
        Some((self.sys.frame_size as usize).max(MAX_PCM))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shuffle_tables() {
        // ffmpeg's dv_audio_shuffle525 rows 2 and 5, dv_audio_shuffle625 row 5.
        let r: [usize; 9] = core::array::from_fn(|j| shuffle(10, 2, j));
        assert_eq!(r, [12, 42, 72, 2, 32, 62, 22, 52, 82]);
        let r: [usize; 9] = core::array::from_fn(|j| shuffle(10, 5, j));
        assert_eq!(r, [1, 31, 61, 21, 51, 81, 11, 41, 71]);
        let r: [usize; 9] = core::array::from_fn(|j| shuffle(12, 5, j));
        assert_eq!(r, [30, 66, 102, 20, 56, 92, 10, 46, 82]);
        assert_eq!(audio_12to16(0x100), 0x100);
        assert_eq!(audio_12to16(0x200), 0x200);
        assert_eq!(audio_12to16(0x300), 0x400);
    }
}
