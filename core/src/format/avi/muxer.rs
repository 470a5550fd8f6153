//! The AVI muxer ([`crate::MuxFormat::Avi`]; Microsoft "AVI RIFF File
//! Reference").
//!
//! Layout written:
//!
//! ```text
//! RIFF 'AVI '                 size patched at the end
//!   LIST 'hdrl'
//!     avih                    AVIMAINHEADER (frame period, frame count,
//!                             buffer size patched)
//!     LIST 'strl'             one per track
//!       strh                  AVISTREAMHEADER (dwScale, dwRate, dwLength,
//!                             dwSuggestedBufferSize patched)
//!       strf                  BITMAPINFOHEADER + configuration, or
//!                             WAVEFORMATEX(TENSIBLE) + configuration
//!   LIST 'INFO'               the file-level tags AVI names, when any
//!   LIST 'movi'               size patched
//!     ##dc / ##wb             one chunk a packet, straight from its borrow
//!   idx1                      one AVIOLDINDEX entry a chunk
//! ```
//!
//! Time in AVI is a count: each chunk of a video or compressed-audio stream
//! is one frame of `dwScale / dwRate` seconds, each PCM stream counts
//! blocks of `dwSampleSize` bytes. A frame-counted stream's frame period
//! is its first packet's duration (one tick of its time base when it has
//! none), in the track's time base; where a packet's decoding time is
//! more than one frame after the previous chunk, empty chunks (dropped
//! frames) fill the gap as ffmpeg's AVI muxer does, at most [`MAX_GAP`]
//! at a time (a larger jump is refused rather than written as millions of
//! chunks).
//!
//! The `idx1` entries (16 bytes a chunk) grow with the file: they are kept
//! in the caller's scratch and, past the caller's bound, spilled to a store
//! (`muxer_index.rs`). The muxer needs a sink that can patch (a file).
//! A RIFF holds at most [`MAX_RIFF`] bytes; past it the movie goes on in
//! OpenDML `RIFF AVIX` extensions with `ix##` standard indexes and an
//! `indx` super index per stream (`muxer_odml.rs`), up to 256 RIFFs
//! (`muxer_odml::MAX_RIFFS`). The `idx1` covers the first RIFF, as in
//! ffmpeg's files. State is fixed: [`MAX_TRACKS`] streams; nothing is allocated.

use super::layout::{Idx1Entry, MainHeader, AVIIF_KEYFRAME};
use super::muxer_header::{
    bitmap_info, describe, frame_samples, frames_block_align, stream_header, wave_format, Described, Framing,
};
use super::muxer_index::{Idx1, ENTRY};
use super::muxer_odml::{
    finish_super, patch_super_entry, reserve_super, std_index_bytes, write_std_index, zeros, DMLH_SIZE, MAX_RIFFS,
};
use crate::bytes::gcd;
use crate::codec::adts::AdtsHeader;
use crate::codec::convert::adts::{adts_to_raw, audio_specific_config};
use crate::codec::convert::to_annexb::{avcc_as_annexb_size, write_avcc_as_annexb, AnnexBState, ToAnnexB};
use crate::codec::convert::NalCodec;
use crate::error::{Error, Result};
use crate::format::mux_traits::{FormatMuxer, MuxContext, TrackSpec};
use crate::limits::MAX_TRACKS;
use crate::sink::{Sink, Spill};
use crate::types::{Packet, Rational, TrackKind};
use zerocopy::little_endian::U32;
use zerocopy::IntoBytes;

/// The most bytes in one RIFF: 1 GiB, where ffmpeg's AVI muxer starts an
/// OpenDML `AVIX` RIFF (`AVI_MAX_RIFF_SIZE`), and the size AVI 1.0 readers
/// handle.
pub const MAX_RIFF: u64 = 1 << 30;

/// Most empty chunks written before one packet to fill a jump of its
/// decoding time.
pub const MAX_GAP: u64 = 4096;

/// AVIF_HASINDEX | AVIF_ISINTERLEAVED | AVIF_TRUSTCKTYPE.
const AVIH_FLAGS: u32 = 0x10 | 0x100 | 0x800;
/// Bytes of `avih`: AVIMAINHEADER's fields and its four reserved words.
const AVIH_SIZE: u32 = 56;
/// Bytes of `strh`: AVISTREAMHEADER with its frame rectangle.
const STRH_SIZE: u32 = 56;

/// Per-stream state.
#[derive(Debug, Clone, Copy)]
struct StreamOut {
    described: Described,
    /// How packets are converted on the way out.
    framing: Framing,
    /// The H.264 Annex B conversion's state between packets
    /// ([`Framing::AvcC`]).
    annexb: AnnexBState,
    /// Chunk id: `##dc` or `##wb`.
    id: [u8; 4],
    /// Position of the `strh` data.
    strh_at: u64,
    /// Position of the `strf` data.
    strf_at: u64,
    /// Seconds a frame as a fraction (frame-counted streams), set by the
    /// first packet (or the second when the first has no duration).
    period: Option<(u64, u64)>,
    /// The first packet's time, for a period from the second packet.
    first_ts: Option<i64>,
    /// Chunks written, empty ones included.
    chunks: u64,
    /// Payload bytes written.
    bytes: u64,
    /// The largest chunk's size.
    max_chunk: u32,
    /// Position of the `JUNK` reserved for the super index.
    junk_at: u64,
    /// Chunks, and ticks (frames, or PCM blocks), in the current RIFF.
    riff_chunks: u32,
    riff_ticks: u64,
    /// Super index entries written (RIFFs with a chunk of this stream).
    supers: u32,
}

impl StreamOut {
    /// `dwSampleSize`: the PCM block, or 0 for one frame a chunk.
    fn sample_size(&self) -> u32 {
        match self.described {
            Described::Pcm { block, .. } => u32::from(block),
            _ => 0,
        }
    }

    /// Counts a chunk of `len` bytes in the current RIFF.
    fn count(&mut self, len: u64) {
        self.chunks += 1;
        self.riff_chunks = self.riff_chunks.saturating_add(1);
        self.riff_ticks += match self.sample_size() {
            0 => 1,
            b => len / u64::from(b),
        };
    }
}

/// The AVI muxer's state.
#[derive(Debug, Clone, Default)]
pub struct AviMuxer {
    streams: heapless::Vec<StreamOut, MAX_TRACKS>,
    /// Position of `RIFF`.
    riff_at: u64,
    /// Position of the `avih` data.
    avih_at: u64,
    /// Position of `LIST` of `movi` (of the current RIFF).
    movi_at: u64,
    idx1: Idx1,
    /// Position of the `dmlh` data.
    dmlh_at: u64,
    /// RIFFs begun (1 after the header).
    riffs: u32,
    /// The first video stream's frames in the first RIFF, once it closed.
    first_riff_frames: Option<u64>,
    /// Bytes a RIFF may hold; 0 is [`MAX_RIFF`] (tests set less).
    riff_limit: u64,
}

/// Writes a list or RIFF header with a size to patch; returns its position.
fn open_list<K: Sink>(sink: &mut K, id: &[u8; 4], kind: &[u8; 4]) -> Result<u64> {
    let at = sink.position();
    sink.write_vectored(&[id, &[0; 4], kind])?;
    Ok(at)
}

/// Patches the size of the list or chunk at `at` to end here.
fn close_list<K: Sink>(sink: &mut K, at: u64) -> Result<()> {
    let size = sink.position().saturating_sub(at + 8);
    let size = u32::try_from(size).map_err(|_| Error::capacity(at, &"avi muxer: a RIFF list over 4 GiB"))?;
    sink.patch_at(at + 4, &size.to_le_bytes())
}

/// Writes a chunk `id` whose data is `parts`, and its pad byte.
fn put_chunk<K: Sink>(sink: &mut K, id: &[u8; 4], parts: &[&[u8]]) -> Result<()> {
    let len: usize = parts.iter().map(|p| p.len()).sum();
    let size = u32::try_from(len).map_err(|_| Error::capacity(sink.position(), &"avi muxer: a chunk over 4 GiB"))?;
    sink.write_vectored(&[id, &size.to_le_bytes()])?;
    for p in parts {
        sink.write_all(p)?;
    }
    if len % 2 == 1 {
        sink.write_all(&[0])?;
    }
    Ok(())
}

/// `RIFF` `INFO` ids for the tag names ffprobe gives them (the reverse of
/// `codec::riff_tags::info_name`).
const INFO_IDS: [&[u8; 4]; 15] = [
    b"IART", b"ICMT", b"ICOP", b"ICRD", b"IGNR", b"ILNG", b"INAM", b"IPRD", b"IPRT", b"ISFT", b"ISMP", b"ITCH",
    b"IENG", b"ISBJ", b"IKEY",
];

/// `dwScale / dwRate` for a frame of `n / d` seconds, reduced to fit 32 bits.
fn scale_rate((n, d): (u64, u64)) -> (u32, u32) {
    let (mut n, mut d) = (n, d);
    let g = gcd(n, d).max(1);
    (n, d) = (n / g, d / g);
    while n > u64::from(u32::MAX) || d > u64::from(u32::MAX) {
        (n, d) = ((n >> 1).max(1), (d >> 1).max(1));
    }
    (n.max(1) as u32, d.max(1) as u32)
}

impl AviMuxer {
    /// The `strl` list of stream `i`.
    fn write_strl<K: Sink>(&mut self, sink: &mut K, ctx: &MuxContext, i: usize) -> Result<()> {
        let (Some(t), Some(s)) = (ctx.tracks.get(i), self.streams.get_mut(i)) else {
            return Ok(());
        };
        let config = ctx.config(i);
        let strl = open_list(sink, b"LIST", b"strl")?;
        let h = stream_header(s.described, s.sample_size());
        let w = i16::try_from(t.width).unwrap_or(i16::MAX);
        let hgt = i16::try_from(t.height).unwrap_or(i16::MAX);
        let mut frame = [0u8; 8];
        for (f, b) in frame
            .iter_mut()
            .skip(4)
            .zip(w.to_le_bytes().iter().chain(&hgt.to_le_bytes()))
        {
            *f = *b;
        }
        sink.write_vectored(&[b"strh", &STRH_SIZE.to_le_bytes()])?;
        s.strh_at = sink.position();
        sink.write_vectored(&[h.as_bytes(), &frame])?;
        s.strf_at = sink.position() + 8;
        let described = s.described;
        match (described, s.framing) {
            (Described::Video(fourcc), Framing::AvcC) => {
                // The parameter sets as Annex B, as h264_mp4toannexb
                // leaves the extradata.
                let extra = avcc_as_annexb_size(config)?;
                let b = bitmap_info(t, fourcc, extra);
                let size = 40 + extra;
                let size = u32::try_from(size).map_err(|_| Error::capacity(0, &"avi muxer: strf over 4 GiB"))?;
                sink.write_vectored(&[b"strf", &size.to_le_bytes(), b.as_bytes()])?;
                write_avcc_as_annexb(sink, config)?;
                if size % 2 == 1 {
                    sink.write_all(&[0])?;
                }
            }
            (Described::Video(fourcc), _) => {
                let b = bitmap_info(t, fourcc, config.len() as u64);
                put_chunk(sink, b"strf", &[b.as_bytes(), config])?;
            }
            (d, framing) => match wave_format(t, d) {
                (_, Some(ext)) => put_chunk(sink, b"strf", &[ext.as_bytes()])?,
                (f, None) => {
                    let asc;
                    let extra = match framing {
                        Framing::Adts => {
                            let h = AdtsHeader::parse(config).ok_or(Error::malformed(
                                0,
                                &"avi muxer: the ADTS header given as AAC configuration does not parse (ISO/IEC 14496-3 1.A.2.2)",
                            ))?;
                            asc = audio_specific_config(&h)?;
                            &asc[..]
                        }
                        _ => config,
                    };
                    let cb = u16::try_from(extra.len()).unwrap_or(0);
                    let extra = if cb > 0 { extra } else { &[] };
                    put_chunk(sink, b"strf", &[f.as_bytes(), &cb.to_le_bytes(), extra])?;
                }
            },
        }
        let junk = reserve_super(sink)?;
        if let Some(s) = self.streams.get_mut(i) {
            s.junk_at = junk;
        }
        close_list(sink, strl)
    }

    /// `LIST INFO` with the tags AVI has an id for.
    fn write_info<K: Sink>(sink: &mut K, ctx: &MuxContext) -> Result<()> {
        let id_of = |name: &str| {
            INFO_IDS
                .iter()
                .find(|id| crate::codec::riff_tags::info_name(id) == Some(name))
        };
        if !ctx.tags.iter().any(|(n, _)| id_of(n).is_some()) {
            return Ok(());
        }
        let info = open_list(sink, b"LIST", b"INFO")?;
        for (name, value) in ctx.tags.iter() {
            if let Some(id) = id_of(name) {
                put_chunk(sink, id, &[value.as_bytes(), &[0]])?;
            }
        }
        close_list(sink, info)
    }

    /// Writes `gap` empty chunks (dropped frames) of stream `i` before its
    /// next packet, indexed with no flag.
    fn write_empty<K: Sink>(
        &mut self,
        sink: &mut K,
        scratch: &mut [u8],
        spill: &mut Spill<'_>,
        i: usize,
        gap: u64,
    ) -> Result<()> {
        let movi = self.movi_at + 8;
        for _ in 0..gap {
            let Some(s) = self.streams.get_mut(i) else {
                return Ok(());
            };
            let at = sink.position();
            sink.write_vectored(&[&s.id, &[0; 4]])?;
            s.count(0);
            let e = entry(s.id, 0, at - movi, 0);
            self.idx1.push(scratch, spill, &e, at)?;
        }
        Ok(())
    }
}

impl AviMuxer {
    /// A muxer whose RIFFs hold at most `limit` bytes (tests of OpenDML).
    #[cfg(test)]
    pub(super) fn with_riff_limit(limit: u64) -> Self {
        AviMuxer {
            riff_limit: limit,
            ..AviMuxer::default()
        }
    }

    /// Whether `gap` empty chunks and a chunk of `len` bytes from `pos`
    /// fit in the current RIFF with its indexes.
    fn fits(&self, pos: u64, gap: u64, len: u64) -> bool {
        let limit = if self.riff_limit == 0 {
            MAX_RIFF
        } else {
            self.riff_limit
        };
        let n = self.idx1.entries() + gap + 1;
        let idx1 = if self.riffs <= 1 { 8 + n * ENTRY as u64 } else { 0 };
        let end = pos + gap * 8 + 8 + len + (len & 1) + idx1 + std_index_bytes(self.streams.len(), n);
        end - self.riff_at <= limit
    }

    /// Ends the current RIFF: the streams' standard indexes when the movie
    /// has more than one RIFF (`last` false: one follows), the end of
    /// `movi`, the `idx1` of the first RIFF, the RIFF's size.
    fn close_riff<K: Sink>(&mut self, sink: &mut K, scratch: &[u8], spill: &Spill<'_>, last: bool) -> Result<()> {
        if self.riffs > 1 || !last {
            let movi = self.movi_at + 8;
            let idx1 = &self.idx1;
            for s in self.streams.iter_mut().filter(|s| s.riff_chunks > 0) {
                let (ix, size) = write_std_index(sink, idx1, scratch, spill, s.id, s.riff_chunks, movi)?;
                let ticks = u32::try_from(s.riff_ticks).unwrap_or(u32::MAX);
                patch_super_entry(sink, s.junk_at, s.supers, ix, size, ticks)?;
                s.supers += 1;
            }
        }
        close_list(sink, self.movi_at)?;
        if self.riffs <= 1 {
            self.idx1.write(sink, scratch, spill)?;
            let video = self.streams.iter().find(|s| matches!(s.described, Described::Video(_)));
            self.first_riff_frames = video.map(|s| s.chunks);
        }
        close_list(sink, self.riff_at)
    }

    /// Closes the current RIFF and begins a `RIFF AVIX` with its `movi`.
    fn next_riff<K: Sink>(&mut self, sink: &mut K, scratch: &[u8], spill: &Spill<'_>) -> Result<()> {
        self.close_riff(sink, scratch, spill, false)?;
        self.riff_at = open_list(sink, b"RIFF", b"AVIX")?;
        self.movi_at = open_list(sink, b"LIST", b"movi")?;
        self.idx1.reset();
        for s in &mut self.streams {
            (s.riff_chunks, s.riff_ticks) = (0, 0);
        }
        self.riffs += 1;
        Ok(())
    }
}

/// An `idx1` entry.
fn entry(id: [u8; 4], flags: u32, offset: u64, size: u32) -> Idx1Entry {
    Idx1Entry {
        chunk_id: id,
        flags: U32::new(flags),
        offset: U32::new(offset as u32),
        size: U32::new(size),
    }
}

impl FormatMuxer for AviMuxer {
    fn new() -> Self {
        AviMuxer::default()
    }

    fn add_track(&mut self, ctx: &mut MuxContext, spec: &TrackSpec<'_>) -> Result<usize> {
        let (described, framing) = describe(spec.track, spec.config)?;
        let n = self.streams.len();
        let kind = if spec.track.kind == TrackKind::Video {
            *b"dc"
        } else {
            *b"wb"
        };
        let [a, b] = kind;
        let s = StreamOut {
            described,
            framing,
            annexb: AnnexBState::default(),
            id: [b'0' + (n / 10) as u8, b'0' + (n % 10) as u8, a, b],
            strh_at: 0,
            strf_at: 0,
            junk_at: 0,
            riff_chunks: 0,
            riff_ticks: 0,
            supers: 0,
            period: None,
            first_ts: None,
            chunks: 0,
            bytes: 0,
            max_chunk: 0,
        };
        let i = ctx.push_track(spec)?;
        self.streams
            .push(s)
            .map_err(|_| Error::capacity(0, &"avi muxer: more streams than MAX_TRACKS"))?;
        Ok(i)
    }

    fn write_header<K: Sink>(&mut self, sink: &mut K, _scratch: &mut [u8], ctx: &mut MuxContext) -> Result<()> {
        if !sink.can_patch() {
            return Err(Error::unsupported(
                sink.position(),
                &"avi muxer: needs an output that seeks (sizes, counts and idx1 are written at the end); write Matroska to a stream",
            ));
        }
        self.riff_at = open_list(sink, b"RIFF", b"AVI ")?;
        let hdrl = open_list(sink, b"LIST", b"hdrl")?;
        let video = ctx.tracks.iter().find(|t| t.kind == TrackKind::Video);
        let main = MainHeader {
            micro_sec_per_frame: U32::new(0),
            max_bytes_per_sec: U32::new(0),
            padding_granularity: U32::new(0),
            flags: U32::new(AVIH_FLAGS),
            total_frames: U32::new(0),
            initial_frames: U32::new(0),
            streams: U32::new(ctx.tracks.len() as u32),
            suggested_buffer_size: U32::new(0),
            width: U32::new(video.map_or(0, |t| t.width)),
            height: U32::new(video.map_or(0, |t| t.height)),
        };
        sink.write_vectored(&[b"avih", &AVIH_SIZE.to_le_bytes()])?;
        self.avih_at = sink.position();
        sink.write_vectored(&[main.as_bytes(), &[0; 16]])?;
        for i in 0..ctx.tracks.len() {
            self.write_strl(sink, ctx, i)?;
        }
        let odml = open_list(sink, b"LIST", b"odml")?;
        sink.write_vectored(&[b"dmlh", &DMLH_SIZE.to_le_bytes()])?;
        self.dmlh_at = sink.position();
        zeros(sink, DMLH_SIZE)?;
        close_list(sink, odml)?;
        close_list(sink, hdrl)?;
        Self::write_info(sink, ctx)?;
        self.movi_at = open_list(sink, b"LIST", b"movi")?;
        self.riffs = 1;
        Ok(())
    }

    fn write_packet<K: Sink>(
        &mut self,
        sink: &mut K,
        scratch: &mut [u8],
        ctx: &mut MuxContext,
        packet: &Packet<'_>,
    ) -> Result<()> {
        self.write_packet_spilling(sink, scratch, &mut Spill::none(), ctx, packet)
    }

    fn write_packet_spilling<K: Sink>(
        &mut self,
        sink: &mut K,
        scratch: &mut [u8],
        spill: &mut Spill<'_>,
        ctx: &mut MuxContext,
        packet: &Packet<'_>,
    ) -> Result<()> {
        let i = packet.track;
        let config = ctx.config(i);
        let pos = sink.position();
        let Some(s) = self.streams.get_mut(i) else {
            return Err(Error::new(
                crate::error::ErrorKind::InvalidArgument,
                pos,
                &"avi muxer: no such stream",
            ));
        };
        let mut gap = 0;
        if s.sample_size() == 0 {
            let (tb, rate) = ctx
                .tracks
                .get(i)
                .map_or((Rational::new(1, 1), 0), |t| (t.time_base, t.sample_rate));
            // Video with no decoding time (Matroska) may be reordered: its
            // presentation times say nothing of gaps, each packet is the
            // next frame (ffmpeg guesses the same decoding times).
            let pts = match s.described {
                Described::Video(_) => None,
                _ => packet.pts,
            };
            let ts = packet.dts.or(pts);
            if s.chunks == 0 {
                s.first_ts = ts;
            }
            // Seconds a frame: the codec's samples a frame when it has a
            // fixed count (AAC, MPEG audio, AC-3: a duration rounded to
            // the container's ticks would drift), else the first packet's
            // duration; with none (MPEG-TS), the second packet's distance
            // from the first.
            let seconds = |ticks: u64| (ticks.saturating_mul(u64::from(tb.num)), u64::from(tb.den.max(1)));
            let known = match frame_samples(ctx.tracks.get(i)) {
                Some(n) if rate > 0 => Some((u64::from(n), u64::from(rate))),
                _ => packet.duration.filter(|&d| d > 0).map(seconds),
            };
            if s.period.is_none() && (known.is_some() || s.chunks > 0) {
                let step = match (ts, s.first_ts) {
                    (Some(t), Some(f)) => u64::try_from(t.saturating_sub(f)).unwrap_or(0),
                    _ => 0,
                };
                s.period = known.or(Some(seconds(step.max(1))));
            }
            // As ffmpeg: no filling before a stream's first chunk.
            if let (Some(ts), Some(period), true) = (ts, s.period, s.chunks > 0) {
                // ts * tb / period, rounded.
                let num = u128::from(u64::try_from(ts).unwrap_or(0)) * u128::from(tb.num) * u128::from(period.1);
                let den = (u128::from(tb.den) * u128::from(period.0)).max(1);
                let frame = u64::try_from((num + den / 2) / den).unwrap_or(u64::MAX);
                gap = frame.saturating_sub(s.chunks);
                if gap > MAX_GAP {
                    return Err(Error::unsupported(
                        pos,
                        &"avi muxer: a packet's time jumps more than MAX_GAP frames past the previous one",
                    ));
                }
            }
        }
        // The payload as written: the packet, its raw AAC frame, or the
        // Annex B form of its NAL units (sized first, written by slices).
        let (data, annexb) = match s.framing {
            Framing::AsIs => (packet.data, None),
            Framing::Adts => (adts_to_raw(packet.data)?.1, None),
            Framing::AvcC => {
                let c = ToAnnexB::with_parameter_sets(NalCodec::H264, config)?.resume(s.annexb);
                (packet.data, Some(c))
            }
        };
        let len = match &annexb {
            Some(c) => c.sample_size(data)?,
            None => data.len() as u64,
        };
        let size = u32::try_from(len).map_err(|_| Error::capacity(pos, &"avi muxer: a chunk over 4 GiB"))?;
        let id = s.id;
        if !self.fits(pos, gap, len) {
            if self.riffs >= MAX_RIFFS || self.idx1.entries() == 0 {
                return Err(Error::capacity(
                    pos,
                    &"avi muxer: past 256 RIFFs of 1 GiB (the super index room), or a packet larger than a RIFF",
                ));
            }
            self.next_riff(sink, scratch, spill)?;
            if !self.fits(sink.position(), gap, len) {
                return Err(Error::capacity(pos, &"avi muxer: a packet larger than a RIFF (1 GiB)"));
            }
        }
        self.write_empty(sink, scratch, spill, i, gap)?;
        let at = sink.position();
        let pad: &[u8] = if len % 2 == 1 { &[0] } else { &[] };
        match annexb {
            Some(mut c) => {
                sink.write_vectored(&[&id, &size.to_le_bytes()])?;
                c.write_sample(sink, data)?;
                sink.write_all(pad)?;
                if let Some(s) = self.streams.get_mut(i) {
                    s.annexb = c.state();
                }
            }
            None => sink.write_vectored(&[&id, &size.to_le_bytes(), data, pad])?,
        }
        let flags = if packet.flags.keyframe { AVIIF_KEYFRAME } else { 0 };
        self.idx1
            .push(scratch, spill, &entry(id, flags, at - (self.movi_at + 8), size), at)?;
        if let Some(s) = self.streams.get_mut(i) {
            s.count(len);
            s.bytes += len;
            s.max_chunk = s.max_chunk.max(size);
        }
        Ok(())
    }

    fn finish<K: Sink>(&mut self, sink: &mut K, scratch: &mut [u8], ctx: &mut MuxContext) -> Result<()> {
        self.finish_spilling(sink, scratch, &mut Spill::none(), ctx)
    }

    fn finish_spilling<K: Sink>(
        &mut self,
        sink: &mut K,
        scratch: &mut [u8],
        spill: &mut Spill<'_>,
        ctx: &mut MuxContext,
    ) -> Result<()> {
        self.close_riff(sink, scratch, spill, true)?;
        if self.riffs > 1 {
            for s in &self.streams {
                finish_super(sink, s.junk_at, s.id, s.supers)?;
            }
        }
        let mut first_video = None;
        let mut max_chunk = 0u32;
        for (s, t) in self.streams.iter().zip(ctx.tracks.iter()) {
            let (scale, rate, length) = match s.described {
                Described::Pcm { block, .. } => (1, t.sample_rate.max(1), s.bytes / u64::from(block.max(1))),
                _ => {
                    let tick = (u64::from(t.time_base.num), u64::from(t.time_base.den));
                    let (scale, rate) = scale_rate(s.period.unwrap_or(tick));
                    (scale, rate, s.chunks)
                }
            };
            let length = u32::try_from(length).unwrap_or(u32::MAX);
            // dwScale, dwRate at 20; dwLength, dwSuggestedBufferSize at 32.
            let words = [scale, rate].map(u32::to_le_bytes);
            sink.patch_at(s.strh_at + 20, words.as_flattened())?;
            let words = [length, s.max_chunk].map(u32::to_le_bytes);
            sink.patch_at(s.strh_at + 32, words.as_flattened())?;
            max_chunk = max_chunk.max(s.max_chunk);
            if let Described::Frames { .. } = s.described {
                // nBlockAlign at least the largest chunk: ffmpeg's reader
                // counts ceil(size / nBlockAlign) frames a chunk.
                let written = frames_block_align(t);
                if s.max_chunk > u32::from(written) {
                    let b = u16::try_from(s.max_chunk).unwrap_or(u16::MAX);
                    sink.patch_at(s.strf_at + 12, &b.to_le_bytes())?;
                }
            }
            if first_video.is_none() && matches!(s.described, Described::Video(_)) {
                let us = u64::from(scale) * 1_000_000 / u64::from(rate);
                first_video = Some((u32::try_from(us).unwrap_or(u32::MAX), length));
            }
        }
        let (us, frames) = first_video.unwrap_or((0, 0));
        sink.patch_at(self.avih_at, &us.to_le_bytes())?;
        // avih counts the first RIFF's frames, dmlh all of them (OpenDML).
        sink.patch_at(self.dmlh_at, &frames.to_le_bytes())?;
        let first = self
            .first_riff_frames
            .map_or(frames, |f| u32::try_from(f).unwrap_or(u32::MAX));
        sink.patch_at(self.avih_at + 16, &first.to_le_bytes())?;
        sink.patch_at(self.avih_at + 28, &max_chunk.to_le_bytes())
    }
}
