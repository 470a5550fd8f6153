//! The DSDIFF demuxer: the chunk walk to the sound data, the `PROP`
//! properties, uncompressed runs or DST frames as packets.

use crate::error::{Error, Result};
use crate::format::traits::{Context, FormatDemuxer};
use crate::source::Source;
use crate::types::{Codec, Packet, PacketFlags, Rational, Track, TrackKind};
use zerocopy::big_endian::{U16, U32, U64};
use zerocopy::{FromBytes, Immutable, KnownLayout, Unaligned};

/// A chunk header: id and 64-bit big-endian size of the data after it
/// (DSDIFF 1.5 §2.2, "Chunk").
#[derive(FromBytes, KnownLayout, Immutable, Unaligned, Debug, Clone, Copy)]
#[repr(C)]
pub struct ChunkHeader {
    /// The chunk id.
    pub id: [u8; 4],
    /// Bytes of data (not counting the pad byte of an odd size).
    pub size: U64,
}

/// Bytes of [`ChunkHeader`].
const HEADER: u64 = 12;
/// Where the first chunk inside `FRM8` is (after its header and form type).
const FIRST_CHUNK: u64 = 16;
/// Bytes per channel in an uncompressed packet (ffmpeg `iff_read_packet`:
/// 1024 × a block_align of 8 bytes per channel).
const RUN_PER_CHANNEL: u64 = 8192;
/// Most chunks walked before the sound data or inside `PROP`: a bound on
/// the work for a file of empty chunks.
const MAX_CHUNKS: u32 = 4096;
/// DST frames a second (DSDIFF 1.5 §3.4.1, `FRTE` frame rate).
const DST_FRAME_RATE: u32 = 75;

/// The error once the input ends inside the sound data.
const CUT: &str = "dff: the input ends inside the sound data (DSDIFF 1.5 §3.3)";

/// The data size of a chunk plus its pad byte.
fn padded(size: u64) -> u64 {
    size.saturating_add(size & 1)
}

/// Demuxer state for DSDIFF.
#[derive(Debug, Clone)]
pub struct DffDemuxer {
    dst: bool,
    channels: u64,
    /// Where the sound data chunk's data starts and ends.
    body_start: u64,
    body_end: u64,
    /// Ticks of one DST frame.
    frame_ticks: u64,
    largest: u64,
    // Cursor.
    pos: u64,
    pts: u64,
    cut: bool,
}

/// What `PROP` says (DSDIFF 1.5 §3.2).
#[derive(Default)]
struct Props {
    rate: u32,
    channels: u16,
    dst: Option<bool>,
}

/// Reads the properties chunk at `at` with `size` bytes of data.
fn read_prop<S: Source>(src: &mut S, at: u64, size: u64) -> Result<Props> {
    let kind: [u8; 4] = src.array(at)?;
    let mut p = Props::default();
    if &kind != b"SND " {
        return Ok(p);
    }
    let end = at.saturating_add(size);
    let mut pos = at + 4;
    for _ in 0..MAX_CHUNKS {
        if pos.saturating_add(HEADER) > end {
            break;
        }
        let h: ChunkHeader = src.read(pos)?;
        let data = pos + HEADER;
        let size = h.size.get();
        match &h.id {
            b"FS  " if size >= 4 => p.rate = src.read::<U32>(data)?.get(),
            b"CHNL" if size >= 2 => p.channels = src.read::<U16>(data)?.get(),
            b"CMPR" if size >= 4 => {
                p.dst = match &src.array::<4>(data)? {
                    b"DSD " => Some(false),
                    b"DST " => Some(true),
                    _ => {
                        return Err(Error::unsupported(
                            data,
                            &"dff: a compression type other than DSD and DST (DSDIFF 1.5 §3.2.3)",
                        ))
                    }
                }
            }
            b"FS  " | b"CHNL" | b"CMPR" => {
                return Err(Error::malformed(
                    pos,
                    &"dff: a property chunk too short (DSDIFF 1.5 §3.2)",
                ))
            }
            _ => {}
        }
        pos = data.saturating_add(padded(size));
    }
    Ok(p)
}

impl DffDemuxer {
    /// The next DST frame: chunks from the cursor up to the end of the
    /// `DST ` chunk, `DSTF` given, others skipped (ffmpeg `read_dst_frame`).
    fn next_dst<'s, S: Source>(&mut self, src: &'s mut S) -> Result<Option<Packet<'s>>> {
        loop {
            let at = self.pos;
            if at >= self.body_end || at.saturating_add(HEADER) > src.len() {
                return Ok(None);
            }
            let h: ChunkHeader = src.read(at)?;
            let size = h.size.get();
            if size == 0 || size > i64::MAX as u64 {
                return Err(Error::malformed(
                    at,
                    &"dff: an empty chunk in the DST data (DSDIFF 1.5 §3.4)",
                ));
            }
            let data = at + HEADER;
            self.pos = data.saturating_add(padded(size));
            if &h.id != b"DSTF" {
                continue;
            }
            let left = src.len() - data;
            if left == 0 {
                return Err(Error::truncated(data, &CUT));
            }
            let truncated = size > left;
            let len = size.min(left);
            let pts = self.pts.min(i64::MAX as u64) as i64;
            self.pts = self.pts.saturating_add(self.frame_ticks);
            self.cut = truncated;
            let bytes = src.bytes(data, len as usize)?;
            // `pos` is the chunk's, as ffmpeg gives it: the payload starts
            // 12 bytes later, so the packet is not marked contiguous.
            let p = Packet::contiguous(0, data, bytes)
                .with_times(Some(pts), Some(pts), Some(self.frame_ticks))
                .with_flags(PacketFlags {
                    truncated,
                    ..PacketFlags::keyframe(true)
                });
            return Ok(Some(Packet {
                pos: Some(at),
                contiguous: false,
                ..p
            }));
        }
    }
}

impl FormatDemuxer for DffDemuxer {
    fn open<S: Source>(src: &mut S, ctx: &mut Context) -> Result<Self> {
        let form: ChunkHeader = src.read(0)?;
        let kind: [u8; 4] = src.array(HEADER)?;
        if &form.id != b"FRM8" || &kind != b"DSD " {
            return Err(Error::malformed(
                0,
                &"dff: no FRM8 chunk of form type DSD (DSDIFF 1.5 §3)",
            ));
        }
        let mut props = Props::default();
        let mut pos = FIRST_CHUNK;
        let mut body = None;
        for _ in 0..MAX_CHUNKS {
            if pos.saturating_add(HEADER) > src.len() {
                break;
            }
            let h: ChunkHeader = src.read(pos)?;
            let data = pos + HEADER;
            let size = h.size.get();
            if size > i64::MAX as u64 {
                return Err(Error::malformed(pos, &"dff: a chunk size over 2^63 (DSDIFF 1.5 §2.2)"));
            }
            match &h.id {
                b"PROP" => props = read_prop(src, data, size)?,
                b"DSD " | b"DST " => {
                    body = Some((h.id == *b"DST ", data, data.saturating_add(size)));
                    break;
                }
                _ => {}
            }
            pos = data.saturating_add(padded(size));
        }
        let (dst, body_start, body_end) = body.ok_or(Error::malformed(
            pos,
            &"dff: no DSD or DST sound data chunk (DSDIFF 1.5 §3.3)",
        ))?;
        let rate = props.rate / 8;
        if rate == 0 || props.channels == 0 {
            return Err(Error::malformed(
                FIRST_CHUNK,
                &"dff: no sampling frequency or no channels in PROP (DSDIFF 1.5 §3.2)",
            ));
        }
        let dst = props.dst.unwrap_or(dst);
        let ch = u64::from(props.channels);
        let frame_ticks = u64::from(rate / DST_FRAME_RATE);
        let mut d = DffDemuxer {
            dst,
            channels: ch,
            body_start,
            body_end,
            frame_ticks,
            largest: RUN_PER_CHANNEL * ch,
            pos: body_start,
            pts: 0,
            cut: false,
        };
        let duration = if dst {
            // The frame count of FRTE, when it comes first.
            let h: ChunkHeader = src.read(body_start)?;
            let frames = if &h.id == b"FRTE" && h.size.get() >= 4 {
                Some(u64::from(src.read::<U32>(body_start + HEADER)?.get()))
            } else {
                None
            };
            d.largest = u64::from(ctx.limits.max_packet);
            frames.map(|f| f.saturating_mul(u64::from(rate)) / u64::from(DST_FRAME_RATE))
        } else {
            if d.largest > u64::from(ctx.limits.max_packet) {
                return Err(Error::limit(
                    body_start,
                    &"dff: a run of 8192 bytes per channel larger than Limits::max_packet",
                ));
            }
            Some((body_end - body_start) / ch)
        };
        let track = Track {
            id: 0,
            kind: TrackKind::Audio,
            codec: if dst { Codec::Dst } else { Codec::DsdMsbf },
            codec_tag: u32::from_be_bytes(if dst { *b"DST " } else { *b"DSD " }),
            time_base: Rational::new(1, rate),
            duration,
            sample_rate: rate,
            channels: props.channels,
            bit_rate: if dst {
                0
            } else {
                u32::try_from(ch * 8 * u64::from(rate)).unwrap_or(0)
            },
            ..Track::default()
        };
        ctx.add_track(track, FIRST_CHUNK);
        if let Some(t) = duration {
            ctx.info.duration_us = Some(Rational::new(1, rate).to_micros(t.min(i64::MAX as u64) as i64).max(0) as u64);
        }
        Ok(d)
    }

    fn next_packet<'s, S: Source>(&mut self, src: &'s mut S, _ctx: &mut Context) -> Result<Option<Packet<'s>>> {
        if self.cut {
            return Err(Error::truncated(src.len(), &CUT));
        }
        if self.dst {
            return self.next_dst(src);
        }
        let at = self.pos;
        if at >= self.body_end {
            return Ok(None);
        }
        let left = src.len().saturating_sub(at);
        if left == 0 {
            return Err(Error::truncated(at, &CUT));
        }
        let size = (self.body_end - at).min(RUN_PER_CHANNEL * self.channels);
        let truncated = size > left;
        let size = size.min(left);
        let pts = self.pts.min(i64::MAX as u64) as i64;
        let dur = size / self.channels;
        let data = src.bytes(at, size as usize)?;
        self.pos = at + size;
        self.pts += dur;
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
        let ts = ts.max(0) as u64;
        self.cut = false;
        if self.dst {
            // Frames are of one duration but not one size: walk the chunks.
            self.pos = self.body_start;
            self.pts = 0;
            let target = ts / self.frame_ticks.max(1);
            for _ in 0..target {
                if self.next_dst(src)?.is_none() {
                    break;
                }
            }
            self.cut = false;
            return Ok(());
        }
        let run = RUN_PER_CHANNEL * self.channels;
        let runs = (ts / RUN_PER_CHANNEL).min((self.body_end - self.body_start) / run);
        self.pos = self.body_start + runs * run;
        self.pts = runs * RUN_PER_CHANNEL;
        Ok(())
    }

    fn max_packet_size(&self) -> Option<usize> {
        usize::try_from(self.largest).ok()
    }
}
