//! The AVI indexes, walked in place: `idx1` (AVI RIFF reference, "AVI
//! Index Entries") and the OpenDML indexes (OpenDML 1.02: `indx` super
//! indexes, `ix##` standard indexes), one cursor per stream merged by file
//! position. Which one packets are read through is chosen at open.

use super::chunk::{clip, is_data_chunk, next_of, read_header, stream_number};
use super::demuxer::{max_piece, AviDemuxer, Chunk, Mode};
use super::layout::{
    Idx1Entry, IndexHeader, StdIndexEntry, SuperIndexEntry, AVIIF_KEYFRAME, INDEX_OF_CHUNKS, INDEX_OF_INDEXES,
    STDINDEX_DELTAFRAME,
};
use crate::error::{Error, Result};
use crate::format::traits::Context;
use crate::source::Source;
use crate::types::{ByteRange, TrackKind};

/// Size of an `idx1` entry.
pub(super) const IDX1_ENTRY: u64 = core::mem::size_of::<Idx1Entry>() as u64;

/// Size of the head of an `indx` or `ix##` chunk (AVIMETAINDEX).
const INDEX_HEADER: u64 = core::mem::size_of::<IndexHeader>() as u64;

/// Size of a super-index entry.
const SUPER_ENTRY: u64 = core::mem::size_of::<SuperIndexEntry>() as u64;

/// Size of a standard-index entry.
const STD_ENTRY: u64 = core::mem::size_of::<StdIndexEntry>() as u64;

/// ffmpeg's rule for `idx1` offsets (`avi_read_idx1`): they are taken as
/// relative to `movi` unless the first entry names the `movi` FourCC's
/// offset and lies at least this many bytes before the first chunk.
const IDX1_ABSOLUTE_SLACK: u64 = 500;

/// Reads the `idx1` entry at `at` (per packet in `idx1` mode: the slice
/// fast path of a fixed-size array, seen as the layout).
fn read_idx1_entry<S: Source>(src: &mut S, at: u64) -> Result<Idx1Entry> {
    let raw: [u8; IDX1_ENTRY as usize] = src.array(at)?;
    Ok(zerocopy::transmute!(raw))
}

/// Position in a stream's OpenDML index: the super index (`indx`) and the
/// standard index (`ix##`) being read.
#[derive(Debug, Clone, Copy, Default)]
pub(super) struct IxCursor {
    super_at: u64,
    super_left: u32,
    std_at: u64,
    std_left: u32,
    base: u64,
    /// The next entry, read and not yet taken.
    pub(super) head: Option<IndexedChunk>,
    /// No entry is left.
    pub(super) done: bool,
}

/// A chunk named by an index: the offset of its header, the size of its
/// data, and whether the index marks it a keyframe.
#[derive(Debug, Clone, Copy)]
pub(super) struct IndexedChunk {
    pos: u64,
    size: u32,
    key: bool,
}

impl IxCursor {
    /// A cursor with no entries.
    pub(super) fn empty() -> Self {
        IxCursor {
            done: true,
            ..IxCursor::default()
        }
    }

    /// Starts at the `indx` chunk whose data is `r`. Returns `None` when it
    /// is not an index ffmpeg would read (sub-type, entry size).
    pub(super) fn open<S: Source>(src: &mut S, r: ByteRange) -> Result<Option<IxCursor>> {
        if u64::from(r.len) < INDEX_HEADER {
            return Ok(None);
        }
        let h: IndexHeader = src.read(r.offset)?;
        let room = u64::from(r.len) - INDEX_HEADER;
        let longs = u64::from(h.longs_per_entry.get());
        if h.sub_type != 0 {
            return Ok(None);
        }
        let mut c = IxCursor::default();
        match h.index_type {
            INDEX_OF_INDEXES if longs == SUPER_ENTRY / 4 => {
                c.super_at = r.offset + INDEX_HEADER;
                c.super_left = u64::from(h.entries.get()).min(room / SUPER_ENTRY) as u32;
            }
            INDEX_OF_CHUNKS if longs == STD_ENTRY / 4 => {
                c.std_at = r.offset + INDEX_HEADER;
                c.std_left = u64::from(h.entries.get()).min(room / STD_ENTRY) as u32;
                c.base = h.base_offset.get();
            }
            _ => return Ok(None),
        }
        Ok(Some(c))
    }

    /// Whether the index names any chunk.
    pub(super) fn has_entries(&self) -> bool {
        self.super_left > 0 || self.std_left > 0
    }

    /// The next entry, loading standard indexes from the super index as
    /// needed. Errors: a read error, or a truncation when an index lies
    /// past the end of the input.
    fn advance<S: Source>(&mut self, src: &mut S, ctx: &mut Context) -> Result<Option<IndexedChunk>> {
        loop {
            if self.std_left > 0 {
                let raw: [u8; STD_ENTRY as usize] = src.array(self.std_at)?;
                let e: StdIndexEntry = zerocopy::transmute!(raw);
                self.std_at += STD_ENTRY;
                self.std_left -= 1;
                let size = e.size.get();
                let Some(pos) = self
                    .base
                    .checked_add(u64::from(e.offset.get()))
                    .and_then(|p| p.checked_sub(8))
                else {
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
            let e: SuperIndexEntry = src.read(self.super_at)?;
            self.super_at += SUPER_ENTRY;
            self.super_left -= 1;
            self.load_std_index(src, ctx, e.offset.get())?;
        }
    }

    /// Starts on the `ix##` chunk at `at` that a super-index entry names,
    /// or reports it (`avi.odml-bad-index`) when it is not a standard
    /// index ffmpeg would read.
    fn load_std_index<S: Source>(&mut self, src: &mut S, ctx: &mut Context, at: u64) -> Result<()> {
        let (id, size) = read_header(src, at)?;
        let h: IndexHeader = src.read(at.saturating_add(8))?;
        if &id[..2] != b"ix" && &id[2..] != b"ix"
            || h.index_type != INDEX_OF_CHUNKS
            || h.sub_type != 0
            || u64::from(h.longs_per_entry.get()) != STD_ENTRY / 4
            || u64::from(size) < INDEX_HEADER
        {
            ctx.diags.report("avi.odml-bad-index", at);
            return Ok(());
        }
        self.std_at = at + 8 + INDEX_HEADER;
        self.std_left = h.entries.get().min((size - INDEX_HEADER as u32) / STD_ENTRY as u32);
        self.base = h.base_offset.get();
        Ok(())
    }
}

impl AviDemuxer {
    /// Picks the index to read packets through (see the module docs).
    pub(super) fn choose_index<S: Source>(&mut self, src: &mut S, ctx: &mut Context, movi_end: u64) -> Result<()> {
        let n = self.streams.len();
        for i in 0..n {
            let Some(st) = self.streams.get_mut(i) else { continue };
            st.max_piece = max_piece(st.sample_size);
        }
        // OpenDML: every audio and video stream needs a usable indx.
        if self.odml_usable(src, ctx, movi_end) {
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
                    self.idx1_end = self.idx1_start + (end - self.idx1_start) / IDX1_ENTRY * IDX1_ENTRY;
                    if self.idx1_end < at + 8 + u64::from(size) {
                        ctx.diags.report("avi.idx1-truncated", at);
                    }
                    if at + 8 + u64::from(size) > file_len {
                        // The entries the end of the input cuts off: their
                        // chunks come from the walk, every video frame a
                        // keyframe.
                        self.unconfirmed_keyframes(ctx, file_len);
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
        // The input ends inside a chunk (`movi` itself, cut) or before the
        // end its RIFF claims: a longer input may have an index there, whose
        // flags would mark the video keyframes that the walk takes every
        // frame for (as ffmpeg does without an index).
        let riff_end = 8 + u64::from(u32::from_le_bytes(src.array::<4>(4)?));
        let ended_inside = at != file_len && at.saturating_add(8) > file_len;
        if ended_inside || riff_end > file_len {
            self.unconfirmed_keyframes(ctx, file_len);
        }
        Ok(())
    }

    /// Reports `avi.unconfirmed-keyframe` (at the end of the input) when
    /// there is a video stream: an index past the end of the input would
    /// mark its keyframes.
    fn unconfirmed_keyframes(&self, ctx: &mut Context, file_len: u64) {
        if self.streams.iter().any(|st| st.kind == TrackKind::Video) {
            ctx.diags.report("avi.unconfirmed-keyframe", file_len);
        }
    }

    /// Whether packets are read through the OpenDML indexes: some stream
    /// has one with entries, and every audio and video stream has a usable
    /// `indx` (else `avi.odml-index-incomplete`, at `movi_end`).
    fn odml_usable<S: Source>(&self, src: &mut S, ctx: &mut Context, movi_end: u64) -> bool {
        let mut odml = false;
        let mut usable = true;
        for st in self.streams.iter() {
            let av = matches!(st.kind, TrackKind::Video | TrackKind::Audio);
            match st.indx {
                Some(r) => match IxCursor::open(src, r) {
                    Ok(Some(c)) if c.has_entries() => odml = true,
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
        odml && usable
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
            let e = read_idx1_entry(src, at)?;
            at += IDX1_ENTRY;
            if !is_data_chunk(&e.chunk_id, n) {
                continue;
            }
            if first {
                first = false;
                let pos = u64::from(e.offset.get());
                if let Some(fp) = first_chunk {
                    if self.movi_start != pos || pos + IDX1_ABSOLUTE_SLACK > fp {
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

    /// Checks that a stream chunk of stream `n` with `size` bytes is at
    /// `pos`, and returns its actual size.
    fn check_chunk<S: Source>(&self, src: &mut S, pos: u64, n: u8, size: u32) -> Result<(u32, bool)> {
        let (id, actual) = read_header(src, pos)?;
        if stream_number(&id) != Some(n) {
            return Err(Error::malformed(
                pos,
                &"avi index: entry does not point at a chunk of its stream (AVI RIFF reference, idx1; OpenDML 1.02, ix##)",
            ));
        }
        if actual != size {
            return Err(Error::malformed(
                pos,
                &"avi index: entry size differs from the chunk's (AVI RIFF reference, idx1; OpenDML 1.02, ix##)",
            ));
        }
        Ok(clip(src.len(), pos, actual))
    }

    /// The next stream chunk `idx1` names, without taking it.
    pub(super) fn peek_idx1<S: Source>(&mut self, src: &mut S) -> Result<Option<Chunk>> {
        let n = self.streams.len();
        while self.idx1_at < self.idx1_end {
            let e = read_idx1_entry(src, self.idx1_at)?;
            let size = e.size.get();
            let raw = i64::from(e.offset.get());
            let data = is_data_chunk(&e.chunk_id, n);
            let pos = raw.saturating_add(self.idx1_delta);
            if !data || pos < 0 || (size > 0 && self.idx1_last_pos == Some(pos as u64)) {
                // Lists, palette changes, other streams, repeated entries.
                self.idx1_at += IDX1_ENTRY;
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

    /// The next stream chunk the OpenDML indexes name (the lowest file
    /// position among the streams' next entries), without taking it.
    pub(super) fn peek_odml<S: Source>(&mut self, src: &mut S, ctx: &mut Context) -> Result<Option<Chunk>> {
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
}
