//! AC-3 and E-AC-3 elementary streams (`.ac3`, `.eac3`, `.ec3`).
//!
//! References: ATSC A/52:2018 §5.3 (sync frame), §7.10 (CRC) and Annex E
//! (E-AC-3 substreams); see [`crate::codec::ac3`].
//!
//! Packets follow ffmpeg's raw `ac3`/`eac3` demuxers and their parser: a
//! packet runs from one sync frame that starts a packet (AC-3, or an E-AC-3
//! independent substream) to the next one, so E-AC-3 dependent substreams
//! stay with the independent frame before them and junk between frames stays
//! with the frame before it. Junk before the first frame is a packet of its
//! own. Each frame's CRC-16 is checked (reported as `ac3.crc-mismatch`,
//! never fatal, and not checked when fuzzing).

use super::id3;
use super::{cut_header_at, scan, Frame};
use crate::codec::ac3::{frame_crc_ok, sync_prefix, Ac3Header, HEADER_LEN};
use crate::error::{Error, Result};
use crate::format::traits::{Context, FormatDemuxer};
use crate::limits::Limits;
use crate::source::Source;
use crate::types::{Codec, Packet, Rational, Track, TrackKind};

/// ffmpeg's time base for raw AC-3: 90 kHz.
pub const TIME_BASE_HZ: u32 = 90_000;
/// Most frames joined into one packet after its independent frame (E-AC-3
/// dependent substreams, ATSC A/52 Annex E §2.3.1): bounds the join;
/// past it `ac3.too-many-substreams` is reported and the packet ends.
const MAX_SUBSTREAMS: u32 = 64;

/// Demuxer state for an AC-3 or E-AC-3 stream.
#[derive(Debug, Clone)]
pub struct Ac3Demuxer {
    data_start: u64,
    pos: u64,
    end: u64,
    pts: i64,
    sample_rate: u32,
}

fn header_at<S: Source>(src: &mut S, at: u64) -> Result<Option<Ac3Header>> {
    let mut b = [0u8; 8];
    if src.read_at(at, &mut b)? < HEADER_LEN {
        return Ok(None);
    }
    Ok(Ac3Header::parse(&b))
}

fn run_at<S: Source>(src: &mut S, at: u64, max: u32, end: u64) -> Result<(u32, bool, Option<Ac3Header>)> {
    let Some(first) = header_at(src, at)? else {
        return Ok((0, false, None));
    };
    let mut n = 1;
    let mut next = at + first.frame_len as u64;
    while n < max && next < end {
        match header_at(src, next)? {
            Some(h) if h.is_eac3() == first.is_eac3() => {
                n += 1;
                next += h.frame_len as u64;
            }
            _ => break,
        }
    }
    Ok((n, next == end, Some(first)))
}

/// Whether the input is AC-3 (`Some(false)`) or E-AC-3 (`Some(true)`):
/// after ID3v2 tags and within `limits.resync_bytes`, three consecutive
/// sync frames (or a run from the start that ends the input exactly).
pub fn probe<S: Source>(src: &mut S, limits: &Limits) -> Result<Option<bool>> {
    let (at, _) = id3::skip_id3v2(src, 0, id3::MAX_ID3V2_CHAIN)?;
    let end = src.len();
    let limit = at.saturating_add(limits.resync_bytes.min(limits.probe_bytes));
    let mut from = at;
    loop {
        let Some(p) = scan(src, from, limit, HEADER_LEN, |b| Ac3Header::parse(b).is_some())? else {
            return Ok(None);
        };
        if let Some(e) = chain_at(src, p, at, end)? {
            return Ok(Some(e));
        }
        from = p + 1;
    }
}

/// Whether sync frames chain from `p` as [`probe`] requires, and if so
/// whether they are E-AC-3.
fn chain_at<S: Source>(src: &mut S, p: u64, at: u64, end: u64) -> Result<Option<bool>> {
    let (n, ends, first) = run_at(src, p, 3, end)?;
    if n >= 3 || (ends && (n >= 2 || p == at)) {
        return Ok(first.map(|h| h.is_eac3()));
    }
    Ok(None)
}

/// [`probe`] answered at the first frame only (after any ID3v2 tag): no
/// scan. The sync word `0x0B77` (ATSC A/52 §5.4.1.1) is no MPEG audio
/// header, so this can run before the MP3 probe.
pub fn probe_at_start<S: Source>(src: &mut S) -> Result<Option<bool>> {
    let (at, _) = id3::skip_id3v2(src, 0, id3::MAX_ID3V2_CHAIN)?;
    chain_at(src, at, at, src.len())
}

impl Ac3Demuxer {
    /// The next sync frame header at or after `from` within the resync
    /// limit.
    fn next_header<S: Source>(&self, src: &mut S, from: u64, limits: &Limits) -> Result<Option<(u64, Ac3Header)>> {
        if let Some(h) = header_at(src, from)? {
            return Ok(Some((from, h)));
        }
        let limit = from.saturating_add(limits.resync_bytes).min(self.end);
        match scan(src, from, limit, HEADER_LEN, |b| Ac3Header::parse(b).is_some())? {
            Some(p) => Ok(header_at(src, p)?.map(|h| (p, h))),
            None => Ok(None),
        }
    }
}

impl Ac3Demuxer {
    fn advance<S: Source>(&mut self, src: &mut S, ctx: &mut Context) -> Result<Option<Frame>> {
        if self.pos >= self.end {
            return Ok(None);
        }
        let at = self.pos;
        let mut samples = 0u64;
        let mut cut = false;
        let stop = match self.next_header(src, at, &ctx.limits)? {
            None => {
                if at.saturating_add(ctx.limits.resync_bytes) < self.end {
                    ctx.diags.report("ac3.lost-sync", at);
                    self.pos = self.end;
                    return Ok(None);
                }
                // Bytes without a header up to the end of the input: a
                // longer input could continue them, or start a frame in
                // their last bytes. They end where a cut header could
                // begin, flagged, and nothing after them is given
                // (`truncation` fuzz finds).
                cut = true;
                cut_header_at(src, at + 1, self.end, HEADER_LEN, sync_prefix)?.unwrap_or(self.end)
            }
            Some((p, _)) if p > at => {
                ctx.diags.report("ac3.junk-skipped", at);
                p
            }
            Some((_, h)) => {
                samples = h.samples() as u64;
                self.sample_rate = h.sample_rate.max(1);
                let mut frame_end = at + h.frame_len as u64;
                if !cfg!(fuzzing) && frame_end <= self.end {
                    let f = src.bytes(at, h.frame_len as usize)?;
                    if !frame_crc_ok(f) {
                        ctx.diags.report("ac3.crc-mismatch", at);
                    }
                }
                // Join dependent substreams; stop at the next packet start.
                let mut guard = 0u32;
                loop {
                    guard += 1;
                    if frame_end >= self.end {
                        cut = frame_end > self.end;
                        break self.end;
                    }
                    if guard > MAX_SUBSTREAMS {
                        ctx.diags.report("ac3.too-many-substreams", frame_end);
                        break frame_end;
                    }
                    match self.next_header(src, frame_end, &ctx.limits)? {
                        Some((q, n)) if !n.starts_packet() => frame_end = q + n.frame_len as u64,
                        Some((q, _)) => break q,
                        // Bytes after the frame up to the end of the input,
                        // no header among them: as above (a prefix gave the
                        // frame plus the 0x0B that begins the next one).
                        None => {
                            cut = true;
                            break cut_header_at(src, frame_end, self.end, HEADER_LEN, sync_prefix)?
                                .unwrap_or(self.end);
                        }
                    }
                }
            }
        };
        let stop = stop.min(self.end).max(at + 1);
        let len = stop - at;
        if len > ctx.limits.max_packet as u64 {
            self.pos = self.end;
            return Err(Error::limit(
                at,
                &"ac3 syncframe: packet larger than Limits::max_packet (ATSC A/52 §5.3)",
            ));
        }
        // A packet flagged at the end of the input is the last one: what
        // follows it (a cut header) is not given.
        self.pos = if cut { self.end } else { stop };
        let dur = samples * TIME_BASE_HZ as u64 / self.sample_rate.max(1) as u64;
        let pts = self.pts;
        self.pts = self.pts.saturating_add(dur as i64);
        Ok(Some(Frame { at, len, pts, dur, cut }))
    }
}

impl FormatDemuxer for Ac3Demuxer {
    fn open<S: Source>(src: &mut S, ctx: &mut Context) -> Result<Self> {
        let end = src.len();
        let (start, _) = id3::skip_id3v2(src, 0, id3::MAX_ID3V2_CHAIN)?;
        let mut probe = Ac3Demuxer {
            data_start: start,
            pos: start,
            end,
            pts: 0,
            sample_rate: 0,
        };
        let (p, first) = probe.next_header(src, start, &ctx.limits)?.ok_or(Error::malformed(
            start,
            &"ac3: no syncframe within Limits::resync_bytes (ATSC A/52 §5.3.1)",
        ))?;
        if p > start {
            ctx.diags.report("ac3.junk-skipped", start);
        }
        // E-AC-3 channels: an independent substream plus its dependent
        // substreams; ffprobe reports the independent one's layout.
        let codec = if first.is_eac3() { Codec::Eac3 } else { Codec::Ac3 };
        let rate = first.sample_rate.max(1);
        let bit_rate = first.bit_rate;
        let duration = (bit_rate > 0).then(|| (end - p) * 8 * TIME_BASE_HZ as u64 / bit_rate as u64);
        let track = Track {
            id: 0,
            kind: TrackKind::Audio,
            codec,
            time_base: Rational::new(1, TIME_BASE_HZ),
            duration,
            sample_rate: rate,
            channels: first.channels,
            bit_rate,
            ..Track::default()
        };
        ctx.add_track(track, p);
        ctx.info.duration_us = duration.map(|d| d * 1_000_000 / TIME_BASE_HZ as u64);
        ctx.info.bit_rate = Some(bit_rate as u64);
        probe.sample_rate = rate;
        Ok(probe)
    }

    fn next_packet<'s, S: Source>(&mut self, src: &'s mut S, ctx: &mut Context) -> Result<Option<Packet<'s>>> {
        let Some(f) = self.advance(src, ctx)? else {
            return Ok(None);
        };
        let data = src.bytes(f.at, f.len as usize)?;
        Ok(Some(f.packet(data)))
    }

    fn seek<S: Source>(&mut self, src: &mut S, ctx: &mut Context, _track: usize, ts: i64) -> Result<()> {
        self.pos = self.data_start;
        self.pts = 0;
        super::seek_audio(self, src, ctx, ts, |d, s, c| d.advance(s, c))
    }
}

#[cfg(test)]
mod tests {
    use crate::codec::ac3::crc16;
    use crate::{Demuxer, SliceSource};

    fn eac3_frame(buf: &mut [u8], strmtyp: u8) {
        // 256 bytes: frmsiz 127, 48 kHz, 6 blocks, acmod 2.
        buf[..7].copy_from_slice(&[0x0B, 0x77, strmtyp << 6, 127, 0b0011_0100, 16 << 3, 0]);
        let c = crc16(&buf[2..254]);
        buf[254..256].copy_from_slice(&c.to_be_bytes());
    }

    #[test]
    fn dependent_substreams_join_the_packet() {
        let mut f = [0u8; 256 * 6];
        for (i, t) in [0u8, 1, 0, 1, 0, 0].iter().enumerate() {
            eac3_frame(&mut f[i * 256..], *t);
        }
        let mut d = Demuxer::open(SliceSource::new(&f), None).unwrap();
        assert_eq!(d.format(), crate::FormatKind::Eac3);
        let mut sizes = [0usize; 8];
        let mut n = 0;
        while let Some(p) = d.next_packet().unwrap() {
            sizes[n] = p.data.len();
            n += 1;
        }
        assert_eq!(&sizes[..n], &[512, 512, 256, 256]);
        assert!(!d.diagnostics().contains("ac3.crc-mismatch"));
    }
}
