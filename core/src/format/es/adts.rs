//! AAC in ADTS frames (`.aac`, `.adts`).
//!
//! References: ISO/IEC 13818-7 §6.2 and ISO/IEC 14496-3 §1.A.2.2 (ADTS,
//! see [`crate::codec::adts`]); ID3v2.4 for tags before and between frames;
//! ISO/IEC 14496-3 §1.A.2.1 (ADIF, detected and refused).
//!
//! Packets follow ffmpeg's `aac` demuxer: after leading ID3v2 tags, data
//! starts at the first 12-bit sync word; each packet is one ADTS frame as its
//! `aac_frame_length` says (header and CRC included, all raw data blocks). At
//! a frame position without the sync word, an ID3v2 tag is skipped (and
//! exposed as tags if it is the first), anything else is skipped 10 bytes on
//! to the next sync word, as ffmpeg does. A frame cut by the end of the input
//! is given short.

use super::id3;
use super::{scan, Frame};
use crate::codec::adts::{AdtsHeader, HEADER_LEN};
use crate::error::{Error, Result};
use crate::format::traits::{Context, FormatDemuxer};
use crate::limits::Limits;
use crate::source::Source;
use crate::tags::{Tag, TagCursor};
use crate::types::{Codec, Packet, Rational, Track, TrackKind};

/// ffmpeg's time base for ADTS: 28 224 000 Hz, a multiple of every ADTS
/// sampling frequency.
pub const TIME_BASE_HZ: u32 = 28_224_000;
/// Most ID3v2 tags and resynchronisations `advance` steps over before one
/// frame: bounds its loop (each step moves forward at least 10 bytes).
const MAX_SKIPS_PER_FRAME: u32 = 10_000;

/// Demuxer state for an ADTS stream.
#[derive(Debug, Clone)]
pub struct AdtsDemuxer {
    data_start: u64,
    pos: u64,
    end: u64,
    pts: i64,
    tags: id3::StreamTags,
    pictures: id3::Pictures,
}

fn header_at<S: Source>(src: &mut S, at: u64) -> Result<Option<AdtsHeader>> {
    let mut b = [0u8; HEADER_LEN];
    if src.read_at(at, &mut b)? < HEADER_LEN {
        return Ok(None);
    }
    Ok(AdtsHeader::parse(&b))
}

/// Counts consecutive frames of one stream from `at` (layer 0 only), up to
/// `max`, and whether the run ends exactly at `end`.
fn run_at<S: Source>(src: &mut S, at: u64, max: u32, end: u64) -> Result<(u32, bool)> {
    let Some(first) = header_at(src, at)?.filter(|h| h.layer == 0) else {
        return Ok((0, false));
    };
    let mut n = 1;
    let mut next = at + first.frame_len as u64;
    while n < max && next < end {
        match header_at(src, next)? {
            Some(h) if h.same_stream(&first) => {
                n += 1;
                next += h.frame_len as u64;
            }
            _ => break,
        }
    }
    Ok((n, next == end))
}

/// Whether the input is an ADTS stream: after ID3v2 tags, within
/// `limits.resync_bytes`, three consecutive frames of one stream (or at
/// least one whose run ends the audio exactly).
pub fn probe<S: Source>(src: &mut S, limits: &Limits) -> Result<bool> {
    let (at, _) = id3::skip_id3v2(src, 0, id3::MAX_ID3V2_CHAIN)?;
    let end = id3::find_trailer(src, at)?.audio_end;
    let limit = at.saturating_add(limits.resync_bytes.min(limits.probe_bytes));
    let mut from = at;
    loop {
        let Some(p) = scan(src, from, limit, HEADER_LEN, |b| {
            AdtsHeader::parse(b).is_some_and(|h| h.layer == 0)
        })?
        else {
            return Ok(false);
        };
        if chain_at(src, p, at, end)? {
            return Ok(true);
        }
        from = p + 1;
    }
}

/// Whether ADTS frames chain from `p` as [`probe`] requires (three frames,
/// or fewer that end the audio; one is enough at the first frame `at`).
fn chain_at<S: Source>(src: &mut S, p: u64, at: u64, end: u64) -> Result<bool> {
    let (n, ends) = run_at(src, p, 3, end)?;
    Ok(n >= 3 || (ends && (n >= 2 || p == at)))
}

/// [`probe`] answered at the first frame only (after any ID3v2 tag): no
/// scan. An ADTS sync with layer 0 is no MPEG audio header (layer `00` is
/// reserved, ISO/IEC 11172-3 §2.4.2.3), so this can run before the MP3 probe.
pub fn probe_at_start<S: Source>(src: &mut S) -> Result<bool> {
    let (at, _) = id3::skip_id3v2(src, 0, id3::MAX_ID3V2_CHAIN)?;
    let end = id3::find_trailer(src, at)?.audio_end;
    chain_at(src, at, at, end)
}

/// ffmpeg's `adts_aac_resync`: the next 12-bit sync word at or after `from`.
fn resync<S: Source>(src: &mut S, from: u64, limits: &Limits) -> Result<Option<u64>> {
    let limit = from.saturating_add(limits.resync_bytes);
    scan(src, from, limit, 2, AdtsHeader::has_sync)
}

impl AdtsDemuxer {
    fn advance<S: Source>(&mut self, src: &mut S, ctx: &mut Context) -> Result<Option<Frame>> {
        let mut guard = 0u32;
        loop {
            guard += 1;
            if self.pos.saturating_add(HEADER_LEN as u64) > self.end || guard > MAX_SKIPS_PER_FRAME {
                // ffmpeg needs a whole header to read a packet.
                return Ok(None);
            }
            let mut h = [0u8; 10];
            let n = src.read_at(self.pos, &mut h)?;
            if AdtsHeader::has_sync(&h) {
                break;
            }
            // ID3v2 between frames, else junk: ffmpeg reads 10 bytes and
            // resynchronises after them.
            if n < 10 {
                return Ok(None);
            }
            if let Some(t) = id3::parse_id3v2_header(&h, self.pos) {
                ctx.diags.report("adts.id3v2-between-frames", self.pos);
                self.pos = self.pos.saturating_add(t.total);
                continue;
            }
            ctx.diags.report("adts.resync", self.pos);
            match resync(src, self.pos + 10, &ctx.limits)? {
                Some(p) => self.pos = p,
                None => {
                    self.pos = self.end;
                    return Ok(None);
                }
            }
        }
        let at = self.pos;
        let b: [u8; HEADER_LEN] = src.array(at)?;
        let frame_len = (((b[3] & 3) as u64) << 11) | ((b[4] as u64) << 3) | ((b[5] >> 5) as u64);
        if frame_len < HEADER_LEN as u64 {
            self.pos = self.end;
            return Err(Error::malformed(
                at,
                &"adts header: aac_frame_length below the header size (ISO/IEC 13818-7 §6.2.2)",
            ));
        }
        let hdr = AdtsHeader::parse(&b);
        let dur = match hdr {
            Some(h) => h.samples() as u64 * (TIME_BASE_HZ / h.sample_rate) as u64,
            None => 0,
        };
        let stop = (at + frame_len).min(self.end);
        let cut = stop < at + frame_len;
        if cut {
            ctx.diags.report("adts.truncated-frame", at);
        }
        self.pos = stop;
        let pts = self.pts;
        self.pts = self.pts.saturating_add(dur as i64);
        Ok(Some(Frame {
            at,
            len: stop - at,
            pts,
            dur,
            cut,
        }))
    }
}

impl FormatDemuxer for AdtsDemuxer {
    fn open<S: Source>(src: &mut S, ctx: &mut Context) -> Result<Self> {
        let end = src.len();
        let (off, first_id3v2) = id3::skip_id3v2(src, 0, id3::MAX_ID3V2_CHAIN)?;
        let head: [u8; 4] = src.array(off).unwrap_or([0; 4]);
        if &head == b"ADIF" {
            return Err(Error::unsupported(
                off,
                &"adts: ADIF header, not ADTS frames, is not supported (ISO/IEC 14496-3 §1.A.2.1)",
            ));
        }
        let trailer = id3::find_trailer(src, off)?;
        let start = resync(src, off, &ctx.limits)?.ok_or(Error::malformed(
            off,
            &"adts: no syncword within Limits::resync_bytes (ISO/IEC 13818-7 §6.2.1)",
        ))?;
        if start > off {
            ctx.diags.report("adts.junk-skipped", off);
        }
        let first = match header_at(src, start)? {
            Some(h) => h,
            None => {
                // Describe the stream from the first parseable frame.
                let p = scan(
                    src,
                    start,
                    start.saturating_add(ctx.limits.resync_bytes),
                    HEADER_LEN,
                    |b| AdtsHeader::parse(b).is_some(),
                )?
                .ok_or(Error::malformed(
                    start,
                    &"adts: no valid header within Limits::resync_bytes (ISO/IEC 13818-7 §6.2)",
                ))?;
                header_at(src, p)?.ok_or(Error::malformed(
                    p,
                    &"adts header: not valid where the scan found it (ISO/IEC 13818-7 §6.2)",
                ))?
            }
        };
        let rate = first.sample_rate;
        // ffmpeg estimates the duration from the first frames' bit rate; we
        // use the first frame alone.
        let audio = trailer.audio_end.saturating_sub(start);
        let bit_rate = (first.frame_len as u64 * 8 * rate as u64 / first.samples() as u64) as u32;
        let duration = (bit_rate > 0).then(|| audio * 8 * TIME_BASE_HZ as u64 / bit_rate as u64);
        let track = Track {
            id: 0,
            kind: TrackKind::Audio,
            codec: Codec::Aac,
            time_base: Rational::new(1, TIME_BASE_HZ),
            duration,
            sample_rate: rate,
            channels: first.channels(),
            bit_rate,
            ..Track::default()
        };
        ctx.add_track(track, start);
        let pictures = match first_id3v2 {
            Some(t) => id3::Pictures::find(src, &t, ctx)?,
            None => id3::Pictures::default(),
        };
        let tb = Rational::new(1, TIME_BASE_HZ);
        ctx.info.duration_us = duration.map(|d| tb.to_micros(d as i64).max(0) as u64);
        ctx.info.bit_rate = Some(bit_rate as u64);
        Ok(AdtsDemuxer {
            data_start: start,
            pos: start,
            end,
            pts: 0,
            tags: id3::StreamTags::new(first_id3v2, trailer.id3v1),
            pictures,
        })
    }

    fn next_packet<'s, S: Source>(&mut self, src: &'s mut S, ctx: &mut Context) -> Result<Option<Packet<'s>>> {
        if self.pictures.pending() {
            return self.pictures.next_packet(src);
        }
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

    fn next_tag<'s, S: Source>(
        &mut self,
        src: &'s mut S,
        ctx: &Context,
        cur: &mut TagCursor,
    ) -> Result<Option<Tag<'s>>> {
        self.tags.next(src, ctx.limits.max_tag_bytes, cur)
    }
}

#[cfg(test)]
mod tests {
    use crate::{Demuxer, SliceSource};

    fn frame(buf: &mut [u8], len: u16) {
        buf[..7].copy_from_slice(&[
            0xFF,
            0xF1,
            0x50,
            0x80 | (len >> 11) as u8,
            (len >> 3) as u8,
            ((len & 7) << 5) as u8 | 0x1F,
            0xFC,
        ]);
    }

    #[test]
    fn frames_and_junk() {
        let mut f = [0u8; 1000];
        frame(&mut f[0..], 100);
        frame(&mut f[100..], 120);
        frame(&mut f[220..], 100);
        // 13 bytes of junk, then two frames.
        f[320..333].copy_from_slice(b"junkjunkjunk!");
        frame(&mut f[333..], 100);
        frame(&mut f[433..], 100);
        let mut d = Demuxer::open(SliceSource::new(&f[..533]), None).unwrap();
        assert_eq!(d.format(), crate::FormatKind::Aac);
        let mut sizes = [0usize; 8];
        let mut n = 0;
        while let Some(p) = d.next_packet().unwrap() {
            sizes[n] = p.data.len();
            n += 1;
        }
        assert_eq!(&sizes[..n], &[100, 120, 100, 100, 100]);
        assert!(d.diagnostics().contains("adts.resync"));
    }
}
