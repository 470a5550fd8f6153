//! The AVI demuxer: its state, `open`, and the packet cursor that takes
//! stream chunks from the chosen index or the walk (`peek`, `consume`),
//! delivers them (in pieces for audio with a sample size), and replays
//! them to seek.

use super::chunk::next_of;
use super::fourcc::PictureCheck;
use super::index::{IxCursor, IDX1_ENTRY};
use crate::error::{Error, ErrorKind, Result};
use crate::format::traits::{Context, FormatDemuxer};
use crate::limits::MAX_TRACKS;
use crate::source::Source;
use crate::tags::{Tag, TagCursor};
use crate::types::{ByteRange, Packet, PacketFlags, TrackKind};

/// Samples in one piece of an audio chunk with a small sample size (ffmpeg
/// delivers such chunks in pieces of at most 1024 samples).
const PIECE_SAMPLES: u32 = 1024;

/// A sample size from which each piece is one sample (ffmpeg's rule).
const LARGE_SAMPLE: u32 = 32;

/// Bytes of a video chunk read by a seek to find its picture type (for
/// [`PictureCheck`]).
const PICTURE_HEAD: usize = 64;

/// The largest piece of a chunk of a stream with `sample_size` (ffmpeg's
/// rule; `u32::MAX`, whole chunks, without a sample size).
pub(super) fn max_piece(sample_size: u32) -> u32 {
    if sample_size <= 1 {
        u32::MAX
    } else if sample_size < LARGE_SAMPLE {
        sample_size.saturating_mul(PIECE_SAMPLES)
    } else {
        sample_size
    }
}

/// A stream chunk about to be delivered.
#[derive(Debug, Clone, Copy)]
pub(super) struct Chunk {
    pub(super) stream: u8,
    /// Offset of the chunk header.
    pub(super) pos: u64,
    pub(super) size: u32,
    pub(super) key: bool,
    /// The input ends inside this chunk: `size` counts only what is there.
    pub(super) cut: bool,
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

/// What the demuxer knows of one stream (`strl`).
#[derive(Debug, Clone, Copy, Default)]
pub(super) struct StreamState {
    /// Index into the context's tracks (None past MAX_TRACKS).
    pub(super) track: Option<u8>,
    pub(super) kind: TrackKind,
    pub(super) pictures: PictureCheck,
    /// ffmpeg's `sample_size`: bytes per tick, 0 when a chunk is one tick.
    pub(super) sample_size: u32,
    /// ffmpeg's `dshow_block_align`, for VBR audio durations.
    pub(super) block_align: u32,
    /// Ticks (or bytes, with a sample size) delivered so far.
    pub(super) frame_offset: u64,
    pub(super) start_offset: u64,
    pub(super) max_piece: u32,
    /// Whether an index entry with data was met (the "no keyframe flag
    /// anywhere" rule marks each stream's first one).
    pub(super) seen_entry: bool,
    pub(super) strn: Option<ByteRange>,
    pub(super) indx: Option<ByteRange>,
    pub(super) ix: IxCursor,
}

impl StreamState {
    /// Counts an empty chunk (a dropped frame): the index entries that
    /// give one are checked against the walk like the others (`peek`).
    fn count_empty(&mut self) {
        self.frame_offset = self.frame_offset.saturating_add(self.ticks(0));
    }

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

/// Where packets come from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Mode {
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
    pub(super) streams: heapless::Vec<StreamState, MAX_TRACKS>,
    pub(super) initial_mode: Mode,
    pub(super) mode: Mode,
    pub(super) movi_start: u64,
    pub(super) idx1_start: u64,
    pub(super) idx1_end: u64,
    pub(super) idx1_at: u64,
    /// Added to each `idx1` offset to get the chunk header's file offset.
    pub(super) idx1_delta: i64,
    pub(super) idx1_anykey: bool,
    pub(super) idx1_last_pos: Option<u64>,
    /// Where the walk of `movi` stands: in the index modes too, where it
    /// moves in step with the index to check each entry (`peek`).
    pub(super) walk_at: u64,
    pub(super) resync_from: u64,
    piece: Option<Piece>,
    /// Where the input ended inside the last packet delivered.
    cut_at: Option<u64>,
    /// The data of `LIST INFO` (after its FourCC).
    pub(super) info: Option<ByteRange>,
    /// The data of `IDIT`.
    pub(super) idit: Option<ByteRange>,
}

/// The error of a packet the end of the input cuts, at `at`.
const fn cut_error(at: u64) -> Error {
    Error::truncated(
        at,
        &"avi movi: input ends inside a stream chunk (AVI RIFF reference, movi)",
    )
}

impl FormatDemuxer for AviDemuxer {
    fn open<S: Source>(src: &mut S, ctx: &mut Context) -> Result<Self> {
        let head: [u8; 12] = src.array(0)?;
        if head.get(0..4) != Some(b"RIFF") || !matches!(head.get(8..12), Some(b"AVI " | b"AVIX" | b"AVI\x19")) {
            return Err(Error::malformed(
                0,
                &"avi header: not a RIFF 'AVI ' form (AVI RIFF reference, RIFF)",
            ));
        }
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
            piece: None,
            cut_at: None,
            info: None,
            idit: None,
        };
        let h = d.read_hdrl(src, ctx)?;
        let (movi_start, movi_end) = h.movi.ok_or(Error::malformed(
            12,
            &"avi header: no LIST movi (AVI RIFF reference, movi)",
        ))?;
        if d.streams.is_empty() {
            return Err(Error::malformed(
                12,
                &"avi hdrl: no strh before LIST movi (AVI RIFF reference, strh)",
            ));
        }
        d.movi_start = movi_start;
        if h.dmlh_frames > 0 {
            // OpenDML dmlh.dwTotalFrames counts every RIFF; avih only the first.
            if let Some(t) = ctx.tracks.iter_mut().find(|t| t.kind == TrackKind::Video) {
                if t.frames.unwrap_or(0) == 0 {
                    t.frames = Some(u64::from(h.dmlh_frames));
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
            return Err(cut_error(at));
        }
        loop {
            if let Some(p) = self.piece {
                return self.deliver(src, p);
            }
            let Some(c) = self.peek(src, ctx)? else {
                return Ok(None);
            };
            self.consume(&c);
            if c.cut && c.size == 0 {
                self.cut_at = Some(c.pos + 8);
                return Err(cut_error(c.pos + 8));
            }
            let Some(st) = self.streams.get_mut(c.stream as usize) else {
                continue;
            };
            if c.size == 0 {
                // An empty chunk: a dropped frame. ffmpeg gives no packet but
                // counts it in the stream's timestamps.
                st.count_empty();
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
                return Err(Error::limit(
                    c.pos,
                    &"avi movi: stream chunk larger than Limits::max_packet (AVI RIFF reference, movi)",
                ));
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
            return Err(Error::new(ErrorKind::InvalidArgument, 0, &"avi seek: no such track"));
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
                if st.resume_point(src, &c)? {
                    best = self.clone();
                }
            }
            self.consume(&c);
            if let Some(st) = self.streams.get_mut(c.stream as usize) {
                if c.size == 0 {
                    st.count_empty();
                } else {
                    st.frame_offset = st.frame_offset.saturating_add(st.ticks(c.size));
                }
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
        self.header_tag(src, ctx, cur)
    }
}

impl StreamState {
    /// Whether chunk `c` of this stream is where a seek may resume: any
    /// chunk of audio, subtitles and data; a key frame of video (its
    /// picture type when the codec has a check, else the index flag).
    fn resume_point<S: Source>(&self, src: &mut S, c: &Chunk) -> Result<bool> {
        Ok(match self.kind {
            TrackKind::Video => {
                let pictures = self.pictures;
                let mut head = [0u8; PICTURE_HEAD];
                let n = (c.size as usize).min(head.len());
                let head = head.get_mut(..n).unwrap_or(&mut []);
                src.read_exact_at(c.pos + 8, head)?;
                pictures.is_intra(head).unwrap_or(c.key)
            }
            _ => true,
        })
    }
}

impl AviDemuxer {
    /// Back to the first packet.
    pub(super) fn rewind<S: Source>(&mut self, src: &mut S) -> Result<()> {
        self.mode = self.initial_mode;
        self.idx1_at = self.idx1_start;
        self.idx1_last_pos = None;
        self.walk_at = self.movi_start;
        self.resync_from = self.movi_start;
        self.piece = None;
        self.cut_at = None;
        let odml = self.initial_mode == Mode::Odml;
        for st in self.streams.iter_mut() {
            st.frame_offset = st.start_offset;
            st.seen_entry = false;
            st.ix = match st.indx {
                Some(r) if odml => IxCursor::open(src, r)?.unwrap_or(IxCursor::empty()),
                _ => IxCursor::empty(),
            };
        }
        Ok(())
    }

    /// Delivers the next piece of the current chunk.
    fn deliver<'s, S: Source>(&mut self, src: &'s mut S, p: Piece) -> Result<Option<Packet<'s>>> {
        let st = self.streams.get_mut(p.stream as usize).ok_or(Error::malformed(
            p.at,
            &"avi movi: chunk of a stream with no strh (AVI RIFF reference, movi)",
        ))?;
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
        let flags = PacketFlags {
            truncated: cut,
            ..PacketFlags::keyframe(key)
        };
        Ok(Some(
            Packet::contiguous(track, p.at, data)
                .with_times(Some(dts), Some(dts), Some(duration))
                .with_flags(flags),
        ))
    }

    /// Marks `c`, the chunk `peek` returned, as taken: the cursor moves past
    /// it. Until then the state is a resume point that gives `c` again.
    fn consume(&mut self, c: &Chunk) {
        let end = c.pos.saturating_add(8).saturating_add(u64::from(c.size));
        // The walk moves in step with the index (`peek` checked that it
        // gives `c` too).
        self.walk_at = next_of(c.pos, c.size);
        self.resync_from = end;
        match self.mode {
            Mode::Walk => {}
            Mode::Odml => {
                if let Some(st) = self.streams.get_mut(c.stream as usize) {
                    st.ix.head = None;
                }
            }
            Mode::Idx1 => {
                self.idx1_at += IDX1_ENTRY;
                if c.size > 0 {
                    self.idx1_last_pos = Some(c.pos);
                    if let Some(st) = self.streams.get_mut(c.stream as usize) {
                        st.seen_entry = true;
                    }
                }
            }
        }
    }

    /// The next stream chunk in delivery order, without taking it. Packets
    /// come from the index only while it agrees with the walk of `movi`:
    /// each entry must name the chunk the walk gives next. At the first one
    /// that does not (the index leaves out a chunk, goes back to one, names
    /// one that is not there, or lies past the end of the input), or when
    /// the index ends, reading goes on by walking from the end of the last
    /// chunk taken. So the packets of a whole file are those of its walk,
    /// which is what a prefix cut before the index gives (the `truncation`
    /// fuzz finding of 7 December 2026: an `idx1` that left out a chunk), and
    /// what ffmpeg delivers for an interleaved file, which it reads by
    /// walking `movi` (its index serves keyframe flags and seeking).
    fn peek<S: Source>(&mut self, src: &mut S, ctx: &mut Context) -> Result<Option<Chunk>> {
        let r = match self.mode {
            Mode::Idx1 => self.peek_idx1(src),
            Mode::Odml => self.peek_odml(src, ctx),
            Mode::Walk => return self.peek_walk(src, ctx),
        };
        let r = match r {
            Ok(Some(c)) => self.agrees_with_walk(src, ctx, c),
            other => other,
        };
        match r {
            Ok(Some(c)) => return Ok(Some(c)),
            Ok(None) => {}
            Err(e) if e.is_truncation() || e.kind() == ErrorKind::Malformed => {
                ctx.diags.report("avi.index-mismatch", e.offset());
            }
            Err(e) => return Err(e),
        }
        // Walk on from the end of the last chunk taken: picks up chunks
        // after the index's last (and `AVIX` extensions an `idx1` cannot
        // name).
        self.mode = Mode::Walk;
        self.peek_walk(src, ctx)
    }

    /// `c`, the chunk the index names next, when the walk gives it next
    /// too (same header offset, stream, size and cut); else a `Malformed`
    /// error at the walk's chunk. The walk's position only moves past
    /// chunks that are not packets, so a mismatch leaves it where reading
    /// goes on.
    fn agrees_with_walk<S: Source>(&mut self, src: &mut S, ctx: &mut Context, c: Chunk) -> Result<Option<Chunk>> {
        match self.peek_walk(src, ctx)? {
            Some(w) if w.pos == c.pos && w.stream == c.stream && w.size == c.size && w.cut == c.cut => Ok(Some(c)),
            w => Err(Error::malformed(
                w.map_or(c.pos, |w| w.pos),
                &"avi index: entry is not the next stream chunk of movi (AVI RIFF reference, idx1; OpenDML 1.02, ix##)",
            )),
        }
    }
}
