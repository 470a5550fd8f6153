//! The AVI header (AVI RIFF reference: `hdrl`, `avih`, `strl`, `strh`,
//! `strf`, `strn`; OpenDML 1.02 `odml`/`dmlh`, `indx`), read flat as ffmpeg
//! does, and the tags it holds (`LIST INFO`, `IDIT`, `strn`).
//!
//! The codec lookups of `strf` are the tables another module owns: the
//! BITMAPINFOHEADER FourCC in the shared registry
//! (`crate::codec::riff_tags::bmp_codec`, called from
//! [`AviDemuxer::read_bitmap_info`]) and the WAVE format tag in
//! `crate::codec::riff_tags::wave_codec` (called from
//! [`AviDemuxer::read_wave_format`] only).

use super::chunk::{next_of, read_header};
use super::demuxer::{AviDemuxer, StreamState};
use super::fourcc::PictureCheck;
use super::layout::{BitmapInfoHeader, MainHeader, StreamHeader};
use crate::bytes;
use crate::codec::riff_layout::WaveFormat;
use crate::codec::riff_tags::bmp_codec as video_codec;
use crate::codec::riff_tags::{info_name, wave_codec, WAVE_FORMAT_EXTENSIBLE as FORMAT_EXTENSIBLE};
use crate::diag::Diagnostics;
use crate::error::Result;
use crate::format::traits::Context;
use crate::source::Source;
use crate::tags::{text_or_bytes, Tag, TagCursor, TagKey, TagScope};
use crate::types::{ByteRange, Codec, Rational, Track, TrackKind};

/// A `dwStart` later than this (in seconds of the stream's time base) is
/// ignored, as ffmpeg's "crazy start time" check does.
const MAX_START_SECONDS: u64 = 3600;

/// Size of BITMAPINFOHEADER: the bytes after it in a video `strf` are the
/// codec configuration.
const BITMAPINFOHEADER: u32 = core::mem::size_of::<BitmapInfoHeader>() as u32;

/// Size of WAVEFORMATEX without `cbSize` (WAVEFORMAT and
/// `wBitsPerSample`).
const WAVEFORMAT: usize = core::mem::size_of::<WaveFormat>();

/// What the header walk collects besides the streams.
#[derive(Debug, Default)]
pub(super) struct Hdrl {
    /// The data of `LIST movi` (after its FourCC) and the end of the list.
    pub(super) movi: Option<(u64, u64)>,
    /// `avih` dwMicroSecPerFrame, the fallback of a zero stream rate.
    frame_period: u32,
    /// OpenDML `dmlh` dwTotalFrames.
    pub(super) dmlh_frames: u32,
    /// The stream the last `strh` added (its `strf`, `strn`, `indx`
    /// follow).
    cur: Option<usize>,
}

/// `b` without trailing NULs and ASCII whitespace (IDIT ends in "\n\0").
fn trim_end(b: &[u8]) -> &[u8] {
    let n = b
        .iter()
        .rposition(|c| *c != 0 && !c.is_ascii_whitespace())
        .map_or(0, |i| i + 1);
    b.get(..n).unwrap_or(&[])
}

impl AviDemuxer {
    /// Reads the header flat, as ffmpeg does: lists other than `movi` and
    /// `INFO` are entered, every other chunk is read or skipped, up to
    /// `LIST movi`.
    pub(super) fn read_hdrl<S: Source>(&mut self, src: &mut S, ctx: &mut Context) -> Result<Hdrl> {
        let file_len = src.len();
        let mut h = Hdrl::default();
        let mut at = 12u64;
        let mut walked = 0u32;
        while at.saturating_add(8) <= file_len {
            walked += 1;
            if walked > ctx.limits.max_top_level {
                ctx.diags.report("avi.too-many-chunks", at);
                break;
            }
            let (id, size) = read_header(src, at)?;
            let body = at + 8;
            let avail = file_len.saturating_sub(body);
            let range = ByteRange {
                offset: body,
                len: u64::from(size).min(avail).min(u64::from(u32::MAX)) as u32,
            };
            if &id == b"LIST" {
                let kind: [u8; 4] = src.array(body)?;
                match &kind {
                    b"movi" => {
                        let end = if size == 0 { file_len } else { next_of(at, size) };
                        h.movi = Some((body + 4, end));
                        break;
                    }
                    b"INFO" => {
                        if self.info.is_none() {
                            self.info = Some(ByteRange {
                                offset: body + 4,
                                len: range.len.saturating_sub(4),
                            });
                        }
                        at = next_of(at, size);
                    }
                    _ => at = body + 4,
                }
                continue;
            }
            self.header_chunk(src, ctx, &mut h, &id, size, range)?;
            let next = next_of(at, size);
            if next <= at {
                break;
            }
            at = next;
        }
        Ok(h)
    }

    /// One chunk of the header other than a list: `id`, of `size` bytes
    /// declared, whose data the input holds in `range`.
    fn header_chunk<S: Source>(
        &mut self,
        src: &mut S,
        ctx: &mut Context,
        h: &mut Hdrl,
        id: &[u8; 4],
        size: u32,
        range: ByteRange,
    ) -> Result<()> {
        let body = range.offset;
        match id {
            b"avih" if size >= 40 => {
                let m: MainHeader = src.read(body)?;
                h.frame_period = m.micro_sec_per_frame.get();
            }
            b"dmlh" if size >= 4 => h.dmlh_frames = u32::from_le_bytes(src.array(body)?),
            b"IDIT" => self.idit = Some(range),
            b"strh" if size >= 48 => {
                let s: StreamHeader = src.read(body)?;
                if &s.fcc_type != b"pads" {
                    h.cur = self.add_stream(ctx, &s, h.frame_period, body);
                }
            }
            b"strf" => {
                if let Some(i) = h.cur {
                    self.read_strf(src, ctx, i, range)?;
                }
            }
            b"strn" => {
                if let Some(s) = h.cur.and_then(|i| self.streams.get_mut(i)) {
                    s.strn = Some(range);
                }
            }
            b"indx" => {
                if let Some(s) = h.cur.and_then(|i| self.streams.get_mut(i)) {
                    s.indx = Some(range);
                }
            }
            _ => {}
        }
        Ok(())
    }

    /// Adds the stream a `strh` at `at` describes (AVI RIFF reference,
    /// AVISTREAMHEADER). Returns its index in `streams`.
    fn add_stream(&mut self, ctx: &mut Context, h: &StreamHeader, frame_period: u32, at: u64) -> Option<usize> {
        let (mut scale, mut rate) = (h.scale.get(), h.rate.get());
        if scale == 0 || rate == 0 {
            ctx.diags.report("avi.bad-rate", at);
            (scale, rate) = if frame_period > 0 {
                (frame_period, 1_000_000)
            } else {
                (1, 25)
            };
        }
        let g = bytes::gcd(u64::from(scale), u64::from(rate)).max(1);
        let time_base = Rational::new((u64::from(scale) / g) as u32, (u64::from(rate) / g) as u32);
        let kind = match &h.fcc_type {
            b"vids" | b"iavs" | b"ivas" => TrackKind::Video,
            b"auds" => TrackKind::Audio,
            b"txts" => TrackKind::Subtitle,
            _ => TrackKind::Data,
        };
        if matches!(&h.fcc_type, b"iavs" | b"ivas") {
            ctx.diags.report("avi.dv-type1", at);
        }
        let mut sample_size = h.sample_size.get();
        if sample_size > i32::MAX as u32 {
            sample_size = 0;
        }
        let mut start = u64::from(h.start.get());
        if start > MAX_START_SECONDS.saturating_mul(u64::from(rate)) / u64::from(scale) {
            // ffmpeg: "crazy start time".
            ctx.diags.report("avi.bad-start", at);
            start = 0;
        }
        let start_offset = start.saturating_mul(u64::from(sample_size.max(1)));
        if kind == TrackKind::Video {
            sample_size = 0;
        }
        let length = u64::from(h.length.get());
        let track = Track {
            id: self.streams.len() as u32,
            kind,
            codec: if kind == TrackKind::Video && matches!(&h.fcc_type, b"iavs" | b"ivas") {
                Codec::DvVideo
            } else {
                Codec::Unknown
            },
            time_base,
            // ffmpeg: a duration for streams counted in chunks; dwLength
            // is the frame count either way.
            duration: if sample_size == 0 { Some(length) } else { None },
            frames: Some(length),
            ..Track::default()
        };
        let t = ctx.add_track(track, at);
        let st = StreamState {
            track: t.and_then(|t| u8::try_from(t).ok()),
            kind,
            sample_size,
            frame_offset: start_offset,
            start_offset,
            ..StreamState::default()
        };
        let i = self.streams.len();
        if self.streams.push(st).is_err() {
            return None;
        }
        Some(i)
    }

    /// Reads a `strf`: BITMAPINFOHEADER for video, WAVEFORMATEX (or
    /// WAVEFORMATEXTENSIBLE) for audio.
    fn read_strf<S: Source>(&mut self, src: &mut S, ctx: &mut Context, i: usize, r: ByteRange) -> Result<()> {
        let Some(st) = self.streams.get_mut(i) else {
            return Ok(());
        };
        let Some(t) = st.track.and_then(|t| ctx.tracks.get_mut(usize::from(t))) else {
            return Ok(());
        };
        if t.codec != Codec::Unknown && t.codec != Codec::DvVideo {
            return Ok(());
        }
        match st.kind {
            TrackKind::Video if r.len >= BITMAPINFOHEADER => {
                Self::read_bitmap_info(src, &mut ctx.diags, st, t, r)?;
            }
            TrackKind::Audio if r.len >= 14 => {
                Self::read_wave_format(src, t, r)?;
                Self::audio_sample_size(&mut ctx.diags, st, t, r);
            }
            _ => {}
        }
        Ok(())
    }

    /// A video `strf` at `r`: BITMAPINFOHEADER (its `biCompression` FourCC
    /// looked up in [`video_codec`]), then the codec configuration.
    fn read_bitmap_info<S: Source>(
        src: &mut S,
        diags: &mut Diagnostics,
        st: &mut StreamState,
        t: &mut Track,
        r: ByteRange,
    ) -> Result<()> {
        let h: BitmapInfoHeader = src.read(r.offset)?;
        if &h.compression == b"DXSB" || &h.compression == b"DXSA" {
            t.kind = TrackKind::Subtitle;
            st.kind = TrackKind::Subtitle;
            t.codec_tag = u32::from_be_bytes(h.compression);
            return Ok(());
        }
        if t.codec != Codec::DvVideo {
            t.codec = video_codec(h.compression);
        }
        t.codec_tag = u32::from_be_bytes(h.compression);
        t.width = h.width.get().unsigned_abs();
        t.height = h.height.get().unsigned_abs();
        t.bits_per_sample = h.bit_count.get();
        if r.len > BITMAPINFOHEADER {
            t.config = Some(ByteRange {
                offset: r.offset + u64::from(BITMAPINFOHEADER),
                len: r.len - BITMAPINFOHEADER,
            });
        }
        st.pictures = PictureCheck::for_codec(t.codec);
        if t.codec == Codec::Unknown {
            diags.report("avi.unknown-fourcc", r.offset + 16);
        }
        Ok(())
    }

    /// An audio `strf` at `r` (at least 14 bytes): WAVEFORMAT, WAVEFORMATEX
    /// (`cbSize` bytes of configuration) or WAVEFORMATEXTENSIBLE (the
    /// sub-format GUID's first two bytes are the format tag). The format tag
    /// is looked up in the shared registry (`codec::riff_tags::wave_codec`): this is
    /// the one place AVI does so.
    fn read_wave_format<S: Source>(src: &mut S, t: &mut Track, r: ByteRange) -> Result<()> {
        let mut b = [0u8; WAVEFORMAT];
        let n = (r.len as usize).min(WAVEFORMAT);
        src.read_exact_at(r.offset, b.get_mut(..n).unwrap_or(&mut []))?;
        if n < WAVEFORMAT {
            // WAVEFORMAT without wBitsPerSample: ffmpeg assumes 8.
            b[14] = 8;
        }
        let f: WaveFormat = zerocopy::transmute!(b);
        let mut tag = f.format_tag.get();
        let bits = f.bits_per_sample.get();
        let mut config = None;
        if r.len >= 18 {
            let cb = u16::from_le_bytes(src.array(r.offset + 16)?);
            let cb = u32::from(cb).min(r.len - 18);
            if tag == FORMAT_EXTENSIBLE && cb >= 22 {
                tag = u16::from_le_bytes(src.array(r.offset + 24)?);
                if cb > 22 {
                    config = Some(ByteRange {
                        offset: r.offset + 40,
                        len: cb - 22,
                    });
                }
            } else if cb > 0 {
                config = Some(ByteRange {
                    offset: r.offset + 18,
                    len: cb,
                });
            }
        }
        t.codec = wave_codec(tag, bits);
        t.codec_tag = u32::from(tag);
        t.channels = f.channels.get();
        t.sample_rate = f.sample_rate.get();
        t.bits_per_sample = bits;
        t.block_align = u32::from(f.block_align.get());
        t.bit_rate = f.byte_rate.get().saturating_mul(8);
        t.config = config;
        Ok(())
    }

    /// ffmpeg's sample-size and block-align corrections of an audio
    /// stream (`avidec.c`), once its `strf` at `r` is read into `t`.
    fn audio_sample_size(diags: &mut Diagnostics, st: &mut StreamState, t: &Track, r: ByteRange) {
        let ba = t.block_align;
        st.block_align = ba;
        if st.sample_size > 0 && ba > 0 && st.sample_size != ba {
            diags.report("avi.sample-size-mismatch", r.offset);
            st.sample_size = ba;
        }
        if matches!(t.codec, Codec::Aac | Codec::Flac | Codec::Mp2) && ba <= 4 {
            st.block_align = 0;
        }
        let vbr_frame = matches!(
            (t.codec, st.block_align, st.sample_size),
            (Codec::Aac, 1024, 1024) | (Codec::Aac, 4096, 4096) | (Codec::Mp3, 1152, 1152)
        );
        if vbr_frame {
            st.sample_size = 0;
        }
        if t.codec == Codec::Unknown {
            diags.report("avi.unknown-format-tag", r.offset);
        }
    }

    /// The next tag, in stages: `LIST INFO` entries (1), `IDIT` (2), each
    /// stream's `strn` (3); 0 before the first, 4 after the last.
    pub(super) fn header_tag<'s, S: Source>(
        &self,
        src: &'s mut S,
        ctx: &Context,
        cur: &mut TagCursor,
    ) -> Result<Option<Tag<'s>>> {
        loop {
            match cur.stage {
                0 => {
                    match self.info {
                        Some(r) => {
                            cur.offset = r.offset;
                            cur.end = r.offset + u64::from(r.len);
                            cur.stage = 1;
                        }
                        None => cur.stage = 2,
                    }
                    continue;
                }
                1 => {
                    if cur.offset.saturating_add(8) > cur.end {
                        cur.stage = 2;
                        continue;
                    }
                    let (id, size) = read_header(src, cur.offset)?;
                    let body = cur.offset + 8;
                    cur.offset = next_of(cur.offset, size);
                    if size == 0 || size > ctx.limits.max_tag_bytes || body + u64::from(size) > cur.end {
                        continue;
                    }
                    return info_tag(src, id, body, size).map(Some);
                }
                2 => {
                    cur.stage = 3;
                    cur.offset = 0;
                    if let Some(r) = self.idit {
                        if r.len > 0 && r.len <= ctx.limits.max_tag_bytes {
                            let v = src.bytes(r.offset, r.len as usize)?;
                            return Ok(Some(Tag {
                                scope: TagScope::Format,
                                key: TagKey::FourCc(*b"IDIT"),
                                name: Some("creation_time"),
                                value: text_or_bytes(trim_end(v)),
                            }));
                        }
                    }
                }
                3 => {
                    let i = cur.offset as usize;
                    cur.offset += 1;
                    let Some(s) = self.streams.get(i) else {
                        cur.stage = 4;
                        continue;
                    };
                    let (Some(r), Some(t)) = (s.strn, s.track) else {
                        continue;
                    };
                    if r.len == 0 || r.len > ctx.limits.max_tag_bytes {
                        continue;
                    }
                    let v = src.bytes(r.offset, r.len as usize)?;
                    return Ok(Some(Tag {
                        scope: TagScope::Track(usize::from(t)),
                        key: TagKey::FourCc(*b"strn"),
                        name: Some("title"),
                        value: text_or_bytes(v),
                    }));
                }
                _ => return Ok(None),
            }
        }
    }
}

/// A `LIST INFO` entry `id` whose `size` bytes are at `body`, as a tag
/// named as ffprobe names it.
fn info_tag<S: Source>(src: &mut S, id: [u8; 4], body: u64, size: u32) -> Result<Tag<'_>> {
    let v = src.bytes(body, size as usize)?;
    Ok(Tag {
        scope: TagScope::Format,
        key: TagKey::FourCc(id),
        // ffprobe names ISFT "software" in AVI (observed on its 5.1
        // output); the rest as RIFF INFO.
        name: if &id == b"ISFT" {
            Some("software")
        } else {
            info_name(&id)
        },
        value: text_or_bytes(v),
    })
}
