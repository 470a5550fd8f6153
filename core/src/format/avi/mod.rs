//! AVI, with the OpenDML extensions.
//!
//! References: Microsoft "AVI RIFF File Reference" (`hdrl`, `avih`, `strl`,
//! `strh`, `strf`, `strn`, `movi`, `rec `, `idx1`); OpenDML "AVI File Format
//! Extensions" version 1.02 (`indx` super indexes, `ix##` standard indexes,
//! `odml`/`dmlh`, `RIFF AVIX` extensions past 1 GiB); Microsoft
//! BITMAPINFOHEADER and WAVEFORMATEX/WAVEFORMATEXTENSIBLE for `strf`.
//!
//! Packets are the stream chunks of `movi` (and of each `AVIX`'s `movi`), as
//! slices of the input. They are found through the index, walked in place:
//! the OpenDML standard indexes of every stream, merged by file position,
//! when every audio and video stream has a usable `indx`; else `idx1`, whose
//! offsets are detected as absolute or relative to `movi` the way ffmpeg does
//! (the first indexed chunk is the first chunk of `movi`); else, and after the
//! index runs out or stops matching the file, by walking the chunks of
//! `movi`, with a bounded resynchronisation scan over damage.
//!
//! Timestamps follow ffmpeg: each stream counts frames (video, and audio with
//! `dwSampleSize` 0) or bytes (audio with a sample size); empty chunks
//! (dropped frames) give no packet but advance the count. Audio chunks of a
//! constant-size stream are delivered in pieces of at most 1024 samples, as
//! ffmpeg does.

mod codec;
pub mod layout;

use crate::error::{Error, Result};
use crate::format::riff::{codec_for as wave_codec, info_name, WaveFormat, FORMAT_EXTENSIBLE};
use crate::format::traits::{Context, FormatDemuxer};
use crate::limits::MAX_TRACKS;
use crate::source::Source;
use crate::tags::{text_or_bytes, Tag, TagCursor, TagKey, TagScope};
use crate::types::{ByteRange, Codec, Packet, PacketFlags, Rational, Track, TrackKind};
use codec::{video_codec, PictureCheck};
use layout::{
    BitmapInfoHeader, Idx1Entry, IndexHeader, MainHeader, StreamHeader, SuperIndexEntry, AVIIF_KEYFRAME,
    INDEX_OF_CHUNKS, INDEX_OF_INDEXES, STDINDEX_DELTAFRAME,
};
use zerocopy::FromBytes;

/// Position in a stream's OpenDML index: the super index (`indx`) and the
/// standard index (`ix##`) being read.
#[derive(Debug, Clone, Copy, Default)]
struct IxCursor {
    super_at: u64,
    super_left: u32,
    std_at: u64,
    std_left: u32,
    base: u64,
    head: Option<IndexedChunk>,
    done: bool,
}

/// A chunk named by an index or found in `movi`: the offset of its header,
/// the size of its data, and whether the index marks it a keyframe.
#[derive(Debug, Clone, Copy)]
struct IndexedChunk {
    pos: u64,
    size: u32,
    key: bool,
}

/// A stream chunk about to be delivered.
#[derive(Debug, Clone, Copy)]
struct Chunk {
    stream: u8,
    pos: u64,
    size: u32,
    key: bool,
    /// The input ends inside this chunk: `size` counts only what is there.
    cut: bool,
}

/// The rest of a chunk being delivered in pieces.
#[derive(Debug, Clone, Copy)]
struct Piece {
    stream: u8,
    at: u64,
    left: u32,
    key: bool,
    cut: bool,
}

#[derive(Debug, Clone, Copy, Default)]
struct StreamState {
    /// Index into the context's tracks (None past MAX_TRACKS).
    track: Option<u8>,
    kind: TrackKind,
    pictures: PictureCheck,
    /// ffmpeg's `sample_size`: bytes per tick, 0 when a chunk is one tick.
    sample_size: u32,
    /// ffmpeg's `dshow_block_align`, for VBR audio durations.
    block_align: u32,
    /// Ticks (or bytes, with a sample size) delivered so far.
    frame_offset: u64,
    start_offset: u64,
    max_piece: u32,
    /// Whether an index entry with data was met (the "no keyframe flag
    /// anywhere" rule marks each stream's first one).
    seen_entry: bool,
    strn: Option<ByteRange>,
    indx: Option<ByteRange>,
    ix: IxCursor,
}

impl StreamState {
    /// Ticks (bytes with a sample size) a chunk of `len` bytes covers.
    fn ticks(&self, len: u32) -> u64 {
        if self.sample_size > 0 {
            u64::from(len)
        } else if self.block_align > 0 {
            u64::from(len).div_ceil(u64::from(self.block_align))
        } else {
            1
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Mode {
    /// Through `idx1`.
    Idx1,
    /// Through the OpenDML indexes.
    Odml,
    /// Walking the chunks.
    Walk,
}

/// Demuxer state for AVI.
#[derive(Debug, Clone)]
pub struct AviDemuxer {
    streams: heapless::Vec<StreamState, MAX_TRACKS>,
    initial_mode: Mode,
    mode: Mode,
    movi_start: u64,
    idx1_start: u64,
    idx1_end: u64,
    idx1_at: u64,
    /// Added to each `idx1` offset to get the chunk header's file offset.
    idx1_delta: i64,
    idx1_anykey: bool,
    idx1_last_pos: Option<u64>,
    walk_at: u64,
    resync_from: u64,
    /// End of the furthest chunk delivered (where a walk resumes).
    max_end: u64,
    piece: Option<Piece>,
    /// Where the input ended inside the last packet delivered.
    cut_at: Option<u64>,
    info: Option<ByteRange>,
    idit: Option<ByteRange>,
}

fn fourcc(b: &[u8]) -> [u8; 4] {
    let mut f = [0u8; 4];
    if let Some(s) = b.get(..4) {
        f.copy_from_slice(s);
    }
    f
}

/// The stream number of a chunk id such as `01wb`, when its first two
/// bytes are decimal digits.
fn stream_number(id: &[u8; 4]) -> Option<u8> {
    let [a, b, _, _] = *id;
    if a.is_ascii_digit() && b.is_ascii_digit() {
        Some((a - b'0') * 10 + (b - b'0'))
    } else {
        None
    }
}

/// Whether `id` is a data chunk of stream `n` (not a palette change or an
/// index).
fn is_data_chunk(id: &[u8; 4], n: usize) -> bool {
    match stream_number(id) {
        Some(s) if (s as usize) < n => !matches!(&id[2..], b"pc" | b"ix"),
        _ => false,
    }
}

/// `b` without trailing NULs and ASCII whitespace (IDIT ends in "\n\0").
fn trim_end(b: &[u8]) -> &[u8] {
    let n = b
        .iter()
        .rposition(|c| *c != 0 && !c.is_ascii_whitespace())
        .map_or(0, |i| i + 1);
    b.get(..n).unwrap_or(&[])
}

fn gcd(mut a: u32, mut b: u32) -> u32 {
    while b != 0 {
        let t = a % b;
        a = b;
        b = t;
    }
    a
}

fn read_header<S: Source>(src: &mut S, at: u64) -> Result<([u8; 4], u32)> {
    let h: [u8; 8] = src.array(at)?;
    Ok((fourcc(&h), u32::from_le_bytes([h[4], h[5], h[6], h[7]])))
}

/// The part of a chunk's `size` bytes of data (header at `at`) that the
/// input holds, and whether it is cut short.
fn clip(file_len: u64, at: u64, size: u32) -> (u32, bool) {
    let avail = file_len.saturating_sub(at.saturating_add(8));
    if u64::from(size) > avail {
        (avail as u32, true)
    } else {
        (size, false)
    }
}

fn next_of(at: u64, size: u32) -> u64 {
    at.saturating_add(8)
        .saturating_add(u64::from(size))
        .saturating_add(u64::from(size & 1))
}

/// Reads the header of an `indx` or `ix##` chunk body.
fn read_index_header<S: Source>(src: &mut S, body: u64) -> Result<IndexHeader> {
    let b: [u8; 24] = src.array(body)?;
    IndexHeader::read_from_bytes(&b).map_err(|_| Error::malformed(body, "OpenDML index header"))
}

/// Whether the bytes at `at` look like a chunk header worth resuming at.
/// `max_packet` is `Limits::max_packet`.
fn plausible_header(h: &[u8], at: u64, file_len: u64, nstreams: usize, max_packet: u32) -> bool {
    let id = fourcc(h);
    let size = h.get(4..8).map(|s| u32::from_le_bytes(fourcc(s))).unwrap_or(u32::MAX);
    // A header whose size runs past the end of the input is still taken
    // when a longer input could hold its chunk whole, so that the walk
    // resumes where the whole file's does: `idx1` (a resync in a cut file
    // went on into the index and read its entries as chunk headers), `LIST`,
    // `RIFF` and `JUNK` (four exact bytes rarely match by chance), and a
    // stream chunk of a size a packet may have (a resync that passed it read
    // chunk headers inside its data). A larger stream chunk size is damage
    // (a random size rarely is that small). Three `truncation` fuzz finds.
    let fits = at.saturating_add(8).saturating_add(u64::from(size)) <= file_len;
    matches!(&id, b"idx1" | b"LIST" | b"RIFF" | b"JUNK")
        || (is_data_chunk(&id, nstreams) && (fits || size <= max_packet))
}

impl IxCursor {
    /// Starts at the `indx` chunk whose data is `r`. Returns `None` when it
    /// is not an index ffmpeg would read (sub-type, entry size).
    fn open<S: Source>(src: &mut S, r: ByteRange) -> Result<Option<IxCursor>> {
        if r.len < 24 {
            return Ok(None);
        }
        let h = read_index_header(src, r.offset)?;
        let room = u64::from(r.len - 24);
        let longs = u64::from(h.longs_per_entry.get());
        if h.sub_type != 0 {
            return Ok(None);
        }
        let mut c = IxCursor::default();
        match h.index_type {
            INDEX_OF_INDEXES if longs == 4 => {
                c.super_at = r.offset + 24;
                c.super_left = u64::from(h.entries.get()).min(room / 16) as u32;
            }
            INDEX_OF_CHUNKS if longs == 2 => {
                c.std_at = r.offset + 24;
                c.std_left = u64::from(h.entries.get()).min(room / 8) as u32;
                c.base = h.base_offset.get();
            }
            _ => return Ok(None),
        }
        Ok(Some(c))
    }

    /// The next entry, loading standard indexes from the super index as
    /// needed. Errors: a read error, or a truncation when an index lies
    /// past the end of the input.
    fn advance<S: Source>(&mut self, src: &mut S, ctx: &mut Context) -> Result<Option<IndexedChunk>> {
        loop {
            if self.std_left > 0 {
                let e: [u8; 8] = src.array(self.std_at)?;
                self.std_at += 8;
                self.std_left -= 1;
                let offset = u64::from(u32::from_le_bytes(fourcc(&e)));
                let size = u32::from_le_bytes(fourcc(e.get(4..).unwrap_or(&[])));
                let Some(pos) = self.base.checked_add(offset).and_then(|p| p.checked_sub(8)) else {
                    ctx.diags.report("avi.odml-bad-entry", self.std_at);
                    continue;
                };
                return Ok(Some(IndexedChunk {
                    pos,
                    size: size & !STDINDEX_DELTAFRAME,
                    key: size & STDINDEX_DELTAFRAME == 0,
                }));
            }
            if self.super_left == 0 {
                return Ok(None);
            }
            let b: [u8; 16] = src.array(self.super_at)?;
            self.super_at += 16;
            self.super_left -= 1;
            let e = SuperIndexEntry::read_from_bytes(&b).map_err(|_| Error::malformed(self.super_at, "indx entry"))?;
            let at = e.offset.get();
            let (id, size) = read_header(src, at)?;
            let h = read_index_header(src, at.saturating_add(8))?;
            if &id[..2] != b"ix" && &id[2..] != b"ix"
                || h.index_type != INDEX_OF_CHUNKS
                || h.sub_type != 0
                || h.longs_per_entry.get() != 2
                || size < 24
            {
                ctx.diags.report("avi.odml-bad-index", at);
                continue;
            }
            self.std_at = at + 32;
            self.std_left = h.entries.get().min((size - 24) / 8);
            self.base = h.base_offset.get();
        }
    }
}

impl FormatDemuxer for AviDemuxer {
    fn open<S: Source>(src: &mut S, ctx: &mut Context) -> Result<Self> {
        let head: [u8; 12] = src.array(0)?;
        if head.get(0..4) != Some(b"RIFF") || !matches!(head.get(8..12), Some(b"AVI " | b"AVIX" | b"AVI\x19")) {
            return Err(Error::malformed(0, "not a RIFF AVI file"));
        }
        let file_len = src.len();
        let mut d = AviDemuxer {
            streams: heapless::Vec::new(),
            initial_mode: Mode::Walk,
            mode: Mode::Walk,
            movi_start: 0,
            idx1_start: 0,
            idx1_end: 0,
            idx1_at: 0,
            idx1_delta: 0,
            idx1_anykey: true,
            idx1_last_pos: None,
            walk_at: 0,
            resync_from: 0,
            max_end: 0,
            piece: None,
            cut_at: None,
            info: None,
            idit: None,
        };
        // The header is read flat, as ffmpeg does: lists other than `movi`
        // and `INFO` are entered, every other chunk is read or skipped.
        let mut at = 12u64;
        let mut frame_period = 0u32;
        let mut dmlh_frames = 0u32;
        let mut movi: Option<(u64, u64)> = None;
        let mut cur: Option<usize> = None;
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
            match &id {
                b"LIST" => {
                    let kind: [u8; 4] = src.array(body)?;
                    match &kind {
                        b"movi" => {
                            let end = if size == 0 { file_len } else { next_of(at, size) };
                            movi = Some((body + 4, end));
                            break;
                        }
                        b"INFO" => {
                            if d.info.is_none() {
                                d.info = Some(ByteRange {
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
                b"avih" if size >= 40 => {
                    let b: [u8; 40] = src.array(body)?;
                    if let Ok(h) = MainHeader::read_from_bytes(&b) {
                        frame_period = h.micro_sec_per_frame.get();
                    }
                }
                b"dmlh" if size >= 4 => dmlh_frames = u32::from_le_bytes(src.array(body)?),
                b"IDIT" => d.idit = Some(range),
                b"strh" if size >= 48 => {
                    let b: [u8; 48] = src.array(body)?;
                    let h = StreamHeader::read_from_bytes(&b).map_err(|_| Error::malformed(body, "strh"))?;
                    if &h.fcc_type != b"pads" {
                        cur = Self::add_stream(&mut d, ctx, &h, frame_period, file_len, body);
                    }
                }
                b"strf" => {
                    if let Some(i) = cur {
                        d.read_strf(src, ctx, i, range)?;
                    }
                }
                b"strn" => {
                    if let Some(s) = cur.and_then(|i| d.streams.get_mut(i)) {
                        s.strn = Some(range);
                    }
                }
                b"indx" => {
                    if let Some(s) = cur.and_then(|i| d.streams.get_mut(i)) {
                        s.indx = Some(range);
                    }
                }
                _ => {}
            }
            let next = next_of(at, size);
            if next <= at {
                break;
            }
            at = next;
        }
        let (movi_start, movi_end) = movi.ok_or(Error::malformed(12, "no movi list"))?;
        if d.streams.is_empty() {
            return Err(Error::malformed(12, "no stream headers (strh) before movi"));
        }
        d.movi_start = movi_start;
        if dmlh_frames > 0 {
            // OpenDML dmlh.dwTotalFrames counts every RIFF; avih only the first.
            if let Some(t) = ctx.tracks.iter_mut().find(|t| t.kind == TrackKind::Video) {
                if t.frames.unwrap_or(0) == 0 {
                    t.frames = Some(u64::from(dmlh_frames));
                }
            }
        }
        d.choose_index(src, ctx, movi_end)?;
        d.rewind(src)?;
        let mut dur_us = 0u64;
        for t in ctx.tracks.iter() {
            if let Some(dur) = t.duration {
                dur_us = dur_us.max(t.time_base.to_micros(dur.min(i64::MAX as u64) as i64).max(0) as u64);
            }
        }
        ctx.info.duration_us = Some(dur_us);
        ctx.info.start_us = Some(0);
        Ok(d)
    }

    fn next_packet<'s, S: Source>(&mut self, src: &'s mut S, ctx: &mut Context) -> Result<Option<Packet<'s>>> {
        if let Some(at) = self.cut_at {
            return Err(Error::truncated(at, "the input ends inside an AVI chunk"));
        }
        loop {
            if let Some(p) = self.piece {
                return self.deliver(src, ctx, p);
            }
            let Some(c) = self.peek(src, ctx)? else {
                return Ok(None);
            };
            self.consume(&c);
            if c.cut && c.size == 0 {
                self.cut_at = Some(c.pos + 8);
                return Err(Error::truncated(c.pos + 8, "the input ends inside an AVI chunk"));
            }
            let Some(st) = self.streams.get_mut(c.stream as usize) else {
                continue;
            };
            if c.size == 0 {
                // An empty chunk: a dropped frame. ffmpeg gives no packet but
                // counts it in the stream's timestamps.
                st.frame_offset = st.frame_offset.saturating_add(st.ticks(0));
                if st.kind == TrackKind::Video {
                    ctx.diags.report("avi.dropped-frame", c.pos);
                }
                continue;
            }
            if st.track.is_none() {
                st.frame_offset = st.frame_offset.saturating_add(st.ticks(c.size));
                continue;
            }
            if c.size > ctx.limits.max_packet {
                return Err(Error::limit(c.pos, "AVI chunk larger than Limits::max_packet"));
            }
            self.piece = Some(Piece {
                stream: c.stream,
                at: c.pos + 8,
                left: c.size,
                key: c.key,
                cut: c.cut,
            });
        }
    }

    fn seek<S: Source>(&mut self, src: &mut S, ctx: &mut Context, track: usize, ts: i64) -> Result<()> {
        let Some(target) = self
            .streams
            .iter()
            .position(|s| s.track.map(usize::from) == Some(track))
        else {
            return Err(Error::new(crate::ErrorKind::InvalidArgument, 0, "no such track"));
        };
        self.rewind(src)?;
        let mut best = self.clone();
        let ts = ts.max(0) as u64;
        // Replay the chunk order without reading payloads; the state after
        // `peek` and before `consume` is a resume point, kept for the last
        // candidate at or before `ts`.
        while let Some(c) = self.peek(src, ctx)? {
            let Some(st) = self.streams.get(c.stream as usize) else {
                self.consume(&c);
                continue;
            };
            let dts = st.frame_offset / u64::from(st.sample_size.max(1));
            if c.stream as usize == target && c.size > 0 {
                if dts > ts {
                    break;
                }
                let key = match st.kind {
                    TrackKind::Video => {
                        let pictures = st.pictures;
                        let mut head = [0u8; 64];
                        let n = (c.size as usize).min(head.len());
                        let head = head.get_mut(..n).unwrap_or(&mut []);
                        src.read_exact_at(c.pos + 8, head)?;
                        pictures.is_intra(head).unwrap_or(c.key)
                    }
                    _ => true,
                };
                if key {
                    best = self.clone();
                }
            }
            self.consume(&c);
            if let Some(st) = self.streams.get_mut(c.stream as usize) {
                st.frame_offset = st.frame_offset.saturating_add(st.ticks(c.size));
            }
        }
        *self = best;
        Ok(())
    }

    fn next_tag<'s, S: Source>(
        &'s mut self,
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
                    let v = src.bytes(body, size as usize)?;
                    return Ok(Some(Tag {
                        scope: TagScope::Format,
                        key: TagKey::FourCc(id),
                        // ffprobe names ISFT "software" in AVI (observed on
                        // its 5.1 output); the rest as RIFF INFO.
                        name: if &id == b"ISFT" {
                            Some("software")
                        } else {
                            info_name(&id)
                        },
                        value: text_or_bytes(v),
                    }));
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

impl AviDemuxer {
    /// Adds the stream a `strh` describes (AVI RIFF reference, AVISTREAMHEADER).
    fn add_stream(
        d: &mut AviDemuxer,
        ctx: &mut Context,
        h: &StreamHeader,
        frame_period: u32,
        file_len: u64,
        at: u64,
    ) -> Option<usize> {
        let (mut scale, mut rate) = (h.scale.get(), h.rate.get());
        if scale == 0 || rate == 0 {
            ctx.diags.report("avi.bad-rate", at);
            (scale, rate) = if frame_period > 0 {
                (frame_period, 1_000_000)
            } else {
                (1, 25)
            };
        }
        let g = gcd(scale, rate).max(1);
        let time_base = Rational::new(scale / g, rate / g);
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
        if start > 3600u64.saturating_mul(u64::from(rate)) / u64::from(scale) {
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
            id: d.streams.len() as u32,
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
        let _ = file_len;
        let t = ctx.add_track(track, at);
        let st = StreamState {
            track: t.and_then(|t| u8::try_from(t).ok()),
            kind,
            sample_size,
            frame_offset: start_offset,
            start_offset,
            ..StreamState::default()
        };
        let i = d.streams.len();
        if d.streams.push(st).is_err() {
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
            TrackKind::Video if r.len >= 40 => {
                let b: [u8; 40] = src.array(r.offset)?;
                let h = BitmapInfoHeader::read_from_bytes(&b).map_err(|_| Error::malformed(r.offset, "strf"))?;
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
                if r.len > 40 {
                    t.config = Some(ByteRange {
                        offset: r.offset + 40,
                        len: r.len - 40,
                    });
                }
                st.pictures = PictureCheck::for_codec(t.codec);
                if t.codec == Codec::Unknown {
                    ctx.diags.report("avi.unknown-fourcc", r.offset + 16);
                }
            }
            TrackKind::Audio if r.len >= 14 => {
                let mut b = [0u8; 16];
                let n = (r.len as usize).min(16);
                src.read_exact_at(r.offset, b.get_mut(..n).unwrap_or(&mut []))?;
                if n < 16 {
                    // WAVEFORMAT without wBitsPerSample: ffmpeg assumes 8.
                    b[14] = 8;
                }
                let f = WaveFormat::read_from_bytes(&b).map_err(|_| Error::malformed(r.offset, "strf"))?;
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
                // ffmpeg's sample-size and block-align corrections (avidec.c).
                let ba = t.block_align;
                st.block_align = ba;
                if st.sample_size > 0 && ba > 0 && st.sample_size != ba {
                    ctx.diags.report("avi.sample-size-mismatch", r.offset);
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
                    ctx.diags.report("avi.unknown-format-tag", r.offset);
                }
            }
            _ => {}
        }
        Ok(())
    }

    /// Picks the index to read packets through (see the module docs).
    fn choose_index<S: Source>(&mut self, src: &mut S, ctx: &mut Context, movi_end: u64) -> Result<()> {
        let n = self.streams.len();
        for i in 0..n {
            let Some(st) = self.streams.get_mut(i) else { continue };
            st.max_piece = if st.sample_size <= 1 {
                u32::MAX
            } else if st.sample_size < 32 {
                st.sample_size.saturating_mul(1024)
            } else {
                st.sample_size
            };
        }
        // OpenDML: every audio and video stream needs a usable indx.
        let mut odml = false;
        let mut usable = true;
        for st in self.streams.iter() {
            let av = matches!(st.kind, TrackKind::Video | TrackKind::Audio);
            match st.indx {
                Some(r) => match IxCursor::open(src, r) {
                    Ok(Some(c)) if c.super_left > 0 || c.std_left > 0 => odml = true,
                    Ok(_) | Err(_) if av => usable = false,
                    _ => {}
                },
                None if av => usable = false,
                None => {}
            }
        }
        if odml && !usable {
            ctx.diags.report("avi.odml-index-incomplete", movi_end);
        }
        if odml && usable {
            self.initial_mode = Mode::Odml;
            return Ok(());
        }
        // idx1 follows movi (ffmpeg's avi_load_index: scan the chunks after it).
        let file_len = src.len();
        let mut at = movi_end;
        let mut walked = 0u32;
        while at.saturating_add(8) <= file_len && walked < ctx.limits.max_top_level {
            walked += 1;
            let Ok((id, size)) = read_header(src, at) else { break };
            match &id {
                b"idx1" => {
                    let end = (at + 8).saturating_add(u64::from(size)).min(file_len);
                    self.idx1_start = at + 8;
                    self.idx1_end = self.idx1_start + (end - self.idx1_start) / 16 * 16;
                    if self.idx1_end < at + 8 + u64::from(size) {
                        ctx.diags.report("avi.idx1-truncated", at);
                    }
                    self.scan_idx1(src, ctx)?;
                    self.initial_mode = Mode::Idx1;
                    return Ok(());
                }
                b"LIST" if self.info.is_none() && size >= 4 && src.array::<4>(at + 8)? == *b"INFO" => {
                    self.info = Some(ByteRange {
                        offset: at + 12,
                        len: (u64::from(size) - 4).min(file_len.saturating_sub(at + 12)) as u32,
                    });
                }
                _ => {}
            }
            let next = next_of(at, size);
            if next <= at {
                break;
            }
            at = next;
        }
        ctx.diags.report("avi.no-index", movi_end);
        self.initial_mode = Mode::Walk;
        Ok(())
    }

    /// One pass over `idx1` at open: finds how its offsets map to the file
    /// (ffmpeg's rule: the first indexed chunk is the first chunk of `movi`)
    /// and whether any entry carries AVIIF_KEYFRAME.
    fn scan_idx1<S: Source>(&mut self, src: &mut S, ctx: &mut Context) -> Result<()> {
        let n = self.streams.len();
        // The first stream chunk in movi.
        let first_chunk = self.first_movi_chunk(src, ctx)?;
        let mut at = self.idx1_start;
        let mut first = true;
        self.idx1_anykey = false;
        while at < self.idx1_end {
            let b: [u8; 16] = src.array(at)?;
            at += 16;
            let Ok(e) = Idx1Entry::read_from_bytes(&b) else { break };
            if !is_data_chunk(&e.chunk_id, n) {
                continue;
            }
            if first {
                first = false;
                let pos = u64::from(e.offset.get());
                if let Some(fp) = first_chunk {
                    if self.movi_start != pos || pos + 500 > fp {
                        self.idx1_delta = fp as i64 - pos as i64;
                    }
                }
            }
            if e.flags.get() & AVIIF_KEYFRAME != 0 {
                self.idx1_anykey = true;
                break;
            }
        }
        Ok(())
    }

    /// The offset of the first stream chunk of `movi`, descending `rec `
    /// lists and skipping JUNK and indexes, within the resync budget.
    fn first_movi_chunk<S: Source>(&mut self, src: &mut S, ctx: &mut Context) -> Result<Option<u64>> {
        let saved = (self.mode, self.walk_at, self.resync_from);
        self.mode = Mode::Walk;
        self.walk_at = self.movi_start;
        self.resync_from = self.movi_start;
        let r = self.peek_walk(src, ctx);
        (self.mode, self.walk_at, self.resync_from) = saved;
        match r {
            Ok(c) => Ok(c.map(|c| c.pos)),
            Err(e) if e.is_truncation() => Ok(None),
            Err(e) => Err(e),
        }
    }

    /// Back to the first packet.
    fn rewind<S: Source>(&mut self, src: &mut S) -> Result<()> {
        self.mode = self.initial_mode;
        self.idx1_at = self.idx1_start;
        self.idx1_last_pos = None;
        self.walk_at = self.movi_start;
        self.resync_from = self.movi_start;
        self.max_end = self.movi_start;
        self.piece = None;
        self.cut_at = None;
        let odml = self.initial_mode == Mode::Odml;
        for st in self.streams.iter_mut() {
            st.frame_offset = st.start_offset;
            st.seen_entry = false;
            st.ix = match st.indx {
                Some(r) if odml => IxCursor::open(src, r)?.unwrap_or(IxCursor {
                    done: true,
                    ..IxCursor::default()
                }),
                _ => IxCursor {
                    done: true,
                    ..IxCursor::default()
                },
            };
        }
        Ok(())
    }

    /// Delivers the next piece of the current chunk.
    fn deliver<'s, S: Source>(&mut self, src: &'s mut S, ctx: &mut Context, p: Piece) -> Result<Option<Packet<'s>>> {
        let _ = ctx;
        let st = self
            .streams
            .get_mut(p.stream as usize)
            .ok_or(Error::malformed(p.at, "stream"))?;
        let size = p.left.min(st.max_piece);
        let ss = u64::from(st.sample_size.max(1));
        let dts = (st.frame_offset / ss).min(i64::MAX as u64) as i64;
        let ticks = st.ticks(size);
        let duration = if st.sample_size > 0 { ticks / ss } else { ticks };
        let video = st.kind == TrackKind::Video;
        let pictures = st.pictures;
        let track = usize::from(st.track.unwrap_or(0));
        let data = src.bytes(p.at, size as usize)?;
        st.frame_offset = st.frame_offset.saturating_add(ticks);
        let key = if video {
            pictures.is_intra(data).unwrap_or(p.key)
        } else {
            true
        };
        let cut = p.cut && size == p.left;
        if cut {
            self.cut_at = Some(p.at + u64::from(size));
        }
        self.piece = if size < p.left {
            Some(Piece {
                at: p.at + u64::from(size),
                left: p.left - size,
                ..p
            })
        } else {
            None
        };
        Ok(Some(Packet {
            track,
            pts: Some(dts),
            dts: Some(dts),
            duration: Some(duration),
            flags: PacketFlags {
                keyframe: key,
                truncated: cut,
                ..PacketFlags::default()
            },
            pos: Some(p.at),
            contiguous: true,
            data,
        }))
    }

    /// Marks `c`, the chunk `peek` returned, as taken: the cursor moves past
    /// it. Until then the state is a resume point that gives `c` again.
    fn consume(&mut self, c: &Chunk) {
        let end = c.pos.saturating_add(8).saturating_add(u64::from(c.size));
        if c.size > 0 || self.mode == Mode::Walk {
            self.max_end = self.max_end.max(end.saturating_add(u64::from(c.size & 1)));
        }
        match self.mode {
            Mode::Walk => {
                self.walk_at = next_of(c.pos, c.size);
                self.resync_from = end;
            }
            Mode::Odml => {
                if let Some(st) = self.streams.get_mut(c.stream as usize) {
                    st.ix.head = None;
                }
            }
            Mode::Idx1 => {
                self.idx1_at += 16;
                if c.size > 0 {
                    self.idx1_last_pos = Some(c.pos);
                    if let Some(st) = self.streams.get_mut(c.stream as usize) {
                        st.seen_entry = true;
                    }
                }
            }
        }
    }

    /// The next stream chunk in delivery order, without taking it. Falls
    /// back to walking `movi` when the index is exhausted or stops
    /// describing the file.
    fn peek<S: Source>(&mut self, src: &mut S, ctx: &mut Context) -> Result<Option<Chunk>> {
        let r = match self.mode {
            Mode::Idx1 => self.peek_idx1(src, ctx),
            Mode::Odml => self.peek_odml(src, ctx),
            Mode::Walk => return self.peek_walk(src, ctx),
        };
        match r {
            Ok(Some(c)) => return Ok(Some(c)),
            Ok(None) => {}
            Err(e) if e.is_truncation() || e.kind() == crate::ErrorKind::Malformed => {
                ctx.diags.report("avi.index-mismatch", e.offset());
            }
            Err(e) => return Err(e),
        }
        // Walk on from the furthest chunk delivered: picks up chunks after
        // the index's last (and `AVIX` extensions an `idx1` cannot name).
        self.mode = Mode::Walk;
        self.walk_at = self.max_end;
        self.resync_from = self.max_end;
        self.peek_walk(src, ctx)
    }

    /// Checks that a stream chunk of stream `n` with `size` bytes is at
    /// `pos`, and returns its actual size.
    fn check_chunk<S: Source>(&self, src: &mut S, pos: u64, n: u8, size: u32) -> Result<(u32, bool)> {
        let (id, actual) = read_header(src, pos)?;
        if stream_number(&id) != Some(n) {
            return Err(Error::malformed(
                pos,
                "index entry does not point at a chunk of its stream",
            ));
        }
        if actual != size {
            return Err(Error::malformed(pos, "index entry size differs from the chunk's"));
        }
        Ok(clip(src.len(), pos, actual))
    }

    fn peek_idx1<S: Source>(&mut self, src: &mut S, ctx: &mut Context) -> Result<Option<Chunk>> {
        let _ = ctx;
        let n = self.streams.len();
        while self.idx1_at < self.idx1_end {
            let b: [u8; 16] = src.array(self.idx1_at)?;
            let e = Idx1Entry::read_from_bytes(&b).map_err(|_| Error::malformed(self.idx1_at, "idx1 entry"))?;
            let size = e.size.get();
            let raw = i64::from(e.offset.get());
            let data = is_data_chunk(&e.chunk_id, n);
            let pos = raw.saturating_add(self.idx1_delta);
            if !data || pos < 0 || (size > 0 && self.idx1_last_pos == Some(pos as u64)) {
                // Lists, palette changes, other streams, repeated entries.
                self.idx1_at += 16;
                continue;
            }
            let pos = pos as u64;
            let stream = stream_number(&e.chunk_id).unwrap_or(0);
            let (size, cut) = if size > 0 {
                self.check_chunk(src, pos, stream, size)?
            } else {
                (0, false)
            };
            // With no AVIIF_KEYFRAME anywhere, each stream's first entry
            // with data is a keyframe (ffmpeg's rule). `consume` moves on.
            let first = self.streams.get(stream as usize).is_some_and(|st| !st.seen_entry);
            let key = e.flags.get() & AVIIF_KEYFRAME != 0 || (!self.idx1_anykey && size > 0 && first);
            return Ok(Some(Chunk {
                stream,
                pos,
                size,
                key,
                cut,
            }));
        }
        Ok(None)
    }

    fn peek_odml<S: Source>(&mut self, src: &mut S, ctx: &mut Context) -> Result<Option<Chunk>> {
        let mut best: Option<(u8, IndexedChunk)> = None;
        for i in 0..self.streams.len() {
            let Some(st) = self.streams.get_mut(i) else { continue };
            if st.ix.head.is_none() && !st.ix.done {
                st.ix.head = st.ix.advance(src, ctx)?;
                st.ix.done = st.ix.head.is_none();
            }
            if let Some(h) = st.ix.head {
                if best.is_none_or(|(_, b)| h.pos < b.pos) {
                    best = Some((i as u8, h));
                }
            }
        }
        let Some((stream, h)) = best else {
            return Ok(None);
        };
        let (size, cut) = if h.size > 0 {
            self.check_chunk(src, h.pos, stream, h.size)?
        } else {
            (0, false)
        };
        Ok(Some(Chunk {
            stream,
            pos: h.pos,
            size,
            key: h.key,
            cut,
        }))
    }

    /// Walks chunks from `walk_at` to the next stream chunk: enters `movi`,
    /// `rec ` and `RIFF AVIX`, skips everything else, and resynchronises
    /// over damage within `Limits::resync_bytes`.
    fn peek_walk<S: Source>(&mut self, src: &mut S, ctx: &mut Context) -> Result<Option<Chunk>> {
        let file_len = src.len();
        let n = self.streams.len();
        loop {
            let at = self.walk_at;
            if at.saturating_add(8) > file_len {
                return Ok(None);
            }
            let (id, size) = read_header(src, at)?;
            let end = at.saturating_add(8).saturating_add(u64::from(size));
            if is_data_chunk(&id, n) {
                let (size, cut) = clip(file_len, at, size);
                return Ok(Some(Chunk {
                    stream: stream_number(&id).unwrap_or(0),
                    pos: at,
                    size,
                    key: true,
                    cut,
                }));
            }
            match &id {
                b"LIST" | b"RIFF" => {
                    if at.saturating_add(12) > file_len {
                        return Ok(None);
                    }
                    let kind: [u8; 4] = src.array(at + 8)?;
                    if &id == b"RIFF" || matches!(&kind, b"movi" | b"rec ") {
                        self.walk_at = at + 12;
                        self.resync_from = at + 12;
                    } else {
                        self.walk_at = next_of(at, size);
                        self.resync_from = end;
                    }
                    continue;
                }
                _ if id.iter().all(|b| (0x20..0x7F).contains(b)) => {
                    if end > file_len {
                        // Cut inside a chunk that is not a packet: the end.
                        return Ok(None);
                    }
                    // JUNK, idx1, ix##, ##pc and other chunks: skip.
                    self.walk_at = next_of(at, size);
                    self.resync_from = end;
                    continue;
                }
                _ => {}
            }
            // Damage: scan forward for a plausible chunk header.
            ctx.diags.report("avi.resync", at);
            let from = if self.resync_from < at {
                self.resync_from
            } else {
                at + 1
            };
            match self.resync(src, ctx, from)? {
                Some(p) => {
                    self.walk_at = p;
                    self.resync_from = p;
                }
                None => return Ok(None),
            }
        }
    }

    fn resync<S: Source>(&mut self, src: &mut S, ctx: &mut Context, from: u64) -> Result<Option<u64>> {
        let file_len = src.len();
        let n = self.streams.len();
        let stop = from.saturating_add(ctx.limits.resync_bytes).min(file_len);
        let mut buf = [0u8; 256];
        let mut at = from;
        while at.saturating_add(8) <= stop.saturating_add(7).min(file_len) && at < stop {
            let got = src.read_at(at, &mut buf)?;
            if got < 8 {
                return Ok(None);
            }
            for i in 0..=(got - 8) {
                let p = at + i as u64;
                if p >= stop {
                    return Ok(None);
                }
                if let Some(h) = buf.get(i..i + 8) {
                    if plausible_header(h, p, file_len, n, ctx.limits.max_packet) {
                        return Ok(Some(p));
                    }
                }
            }
            at += (got - 7) as u64;
        }
        Ok(None)
    }
}

#[cfg(test)]
mod tests;
