//! The demuxer: [`Mp4Demuxer`] and its [`FormatDemuxer`] implementation.
//! `open` walks the top-level boxes to the movie box ([`super::moov`]);
//! `next_packet` delivers cover art, then the movie's samples in ffmpeg's
//! order ([`super::sample_table`]), then fragments ([`super::fragment`]);
//! `seek` is in [`super::seek`].

use super::boxes::{read_box_header, soft, source_fault};
use super::fragment::Frag;
#[cfg(feature = "mp4-windows")]
use super::heads::Heads;
use super::sample_table::{next_sample, reset_cursor, ChunkMode, Cursor, Sample, Table};
use super::seek::restart;
use super::table_window::WindowSlots;
use super::tags;
use crate::error::{Error, Result};
use crate::format::traits::{Context, FormatDemuxer};
use crate::limits::MAX_TRACKS;
use crate::source::Source;
use crate::tags::{Tag, TagCursor};
use crate::types::{rescale, ByteRange, Codec, Packet, PacketFlags, Rational, Track, TrackKind};

/// Items of `ilst` looked at for cover art (`covr`): iTunes writes a few
/// dozen; 1024 bounds an `ilst` of tiny boxes.
const MAX_ILST_ITEMS: u32 = 1024;

/// Per-track state.
#[derive(Debug, Clone, Default)]
pub(super) struct Mp4Track {
    pub(super) index: usize,
    pub(super) track_id: u32,
    pub(super) timescale: u32,
    pub(super) audio: bool,
    pub(super) stsz: Table,
    pub(super) stsz_const: u32,
    pub(super) stz2_bits: u8,
    pub(super) stco: Table,
    pub(super) co64: bool,
    pub(super) stsc: Table,
    pub(super) stts: Table,
    pub(super) ctts: Table,
    pub(super) stss: Table,
    pub(super) has_stss: bool,
    pub(super) sample_count: u32,
    /// Subtracted from raw decode times (edit list).
    pub(super) shift: i64,
    /// Presentation time where the edit starts, after the shift.
    pub(super) start: i64,
    /// The edit's media time and its end in raw composition time (ffmpeg
    /// `mov_fix_index`): samples are read from the keyframe before the start
    /// and up to the first keyframe past the end.
    pub(super) edit: Option<(i64, i64)>,
    /// A keyframe past the edit's end was seen (B-frames after it may still
    /// belong to the edit).
    pub(super) key_after_edit: bool,
    /// The edit's end was reached: no more samples from the tables.
    pub(super) edit_done: bool,
    pub(super) chunk: Option<ChunkMode>,
    pub(super) trex_duration: u32,
    pub(super) trex_size: u32,
    pub(super) trex_flags: u32,
    pub(super) cur: Cursor,
    /// The track reads its tables through its own set of windows (the
    /// track with the most samples), not the shared one
    /// ([`WindowSlots`]).
    pub(super) own_windows: bool,
    /// The next sample; with `mp4-windows`, [`Heads`] keeps what the pick
    /// needs of it.
    pub(super) pending: Option<Sample>,
    /// Raw decode time after the last sample delivered (fragments continue
    /// from it when a `traf` has no `tfdt`).
    pub(super) next_dts: i64,
    /// The QuickTime chapter track (not video): its samples are chapter
    /// titles, never packets (see [`Mp4Demuxer::hide_chapter_track`]).
    #[cfg(feature = "chapters")]
    pub(super) hidden: bool,
}

impl Mp4Track {
    /// Makes `s` the track's next sample.
    #[inline]
    pub(super) fn set_pending(&mut self, s: Option<Sample>) {
        #[cfg(feature = "chapters")]
        if self.hidden {
            self.pending = None;
            return;
        }
        self.pending = s;
    }

    /// The decode time of `s` in microseconds, after the edit list's shift.
    #[cfg(not(feature = "mp4-windows"))]
    #[inline]
    fn dts_us(&self, s: &Sample) -> i64 {
        rescale(
            s.dts.saturating_sub(self.shift),
            Rational::new(1, self.timescale),
            Rational::new(1, 1_000_000),
        )
    }
}

/// Where the tag-bearing boxes are.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct TagBoxes {
    pub(crate) ftyp: Option<ByteRange>,
    pub(crate) ilst: Option<(u64, u64)>,
    pub(crate) keys: Option<(u64, u64)>,
    pub(crate) udta: Option<(u64, u64)>,
}

/// Demuxer state for ISO BMFF.
#[derive(Debug, Clone)]
pub struct Mp4Demuxer {
    pub(super) tracks: heapless::Vec<Mp4Track, MAX_TRACKS>,
    /// The windows over the tracks' sample tables ([`WindowSlots`]).
    pub(super) windows: WindowSlots,
    /// The tracks' pending samples as the pick reads them.
    #[cfg(feature = "mp4-windows")]
    pub(super) heads: Heads,
    pub(super) frag: Frag,
    pub(super) fragmented: bool,
    pub(super) in_fragments: bool,
    pub(super) tag_boxes: TagBoxes,
    pub(super) key_buf: heapless::String<64>,
    pub(super) max_sample: u32,
    /// Set after a packet cut by the end of the input.
    pub(super) cut: Option<u64>,
    /// Cover art in `ilst`/`covr`, delivered first as attached pictures:
    /// (track index, offset, length).
    pub(super) covers: heapless::Vec<(usize, u64, u32), 4>,
    pub(super) next_cover: usize,
    /// After a seek into fragments: (anchor track, anchor samples still to
    /// skip, landing time in microseconds).
    pub(super) frag_skip: Option<(usize, u32, i64)>,
    /// The track ID named by the last `tref/chap` (QuickTime chapters).
    #[cfg(feature = "chapters")]
    pub(super) chap_track: Option<u32>,
    /// The chapter track's sample walk and the index of the next chapter.
    #[cfg(feature = "chapters")]
    pub(super) chap_walk: Option<(Mp4Track, u64)>,
}

impl Mp4Demuxer {
    /// The packet of sample `s` of `t`: timestamps shifted by the edit
    /// list, `discard` before the edit's start, `truncated` when the input
    /// ends inside it (then `cut` is set to where its bytes end, and the
    /// next call reports the truncation). Built in the caller's return
    /// value (`Ok(Some(..))` here, not moved through `map`). Not inlined:
    /// inlined (measured) it costs more instructions a packet on the host,
    /// the larger `next_packet` spilling registers.
    fn packet<'s, S: Source>(
        src: &'s mut S,
        t: &Mp4Track,
        s: Sample,
        limits_max: u32,
        cut: &mut Option<u64>,
    ) -> Result<Option<Packet<'s>>> {
        if s.size > limits_max {
            return Err(Error::limit(
                s.pos,
                &"mp4 sample: larger than Limits::max_packet (ISO/IEC 14496-12 8.7.3, 8.8.8)",
            ));
        }
        let avail = src.len().saturating_sub(s.pos);
        let truncated = (s.size as u64) > avail && avail > 0;
        let len = if truncated { avail as usize } else { s.size as usize };
        if truncated {
            *cut = Some(s.pos.saturating_add(len as u64));
        }
        let data = src.bytes(s.pos, len)?;
        let dts = s.dts.saturating_sub(t.shift);
        let pts = s.dts.saturating_add(s.cts).saturating_sub(t.shift);
        let discard = if t.audio {
            pts.saturating_add(s.duration as i64) <= t.start
        } else {
            pts < t.start
        };
        Ok(Some(
            Packet::contiguous(t.index, s.pos, data)
                .with_times(Some(pts), Some(dts), Some(s.duration as u64))
                .with_flags(PacketFlags {
                    keyframe: s.key,
                    discard,
                    truncated,
                }),
        ))
    }

    /// Picks the track whose pending sample comes next (ffmpeg
    /// `mov_find_next_sample`): [`Heads::pick`].
    #[cfg(feature = "mp4-windows")]
    #[inline(always)]
    fn pick(&self) -> Option<usize> {
        self.heads.pick()
    }

    /// Picks the track whose pending sample comes next (ffmpeg
    /// `mov_find_next_sample`).
    ///
    /// The first track with a pending sample is the best so far; a later
    /// one replaces it when it is within a second of it and stored before
    /// it, or more than a second earlier.
    #[cfg(not(feature = "mp4-windows"))]
    #[inline]
    fn pick(&self) -> Option<usize> {
        let (mut best, mut bd, mut bp) = (None, 0i64, 0u64);
        for (i, t) in self.tracks.iter().enumerate() {
            let Some(s) = &t.pending else { continue };
            let dts = t.dts_us(s);
            let better = best.is_none() || {
                let close = dts.abs_diff(bd) <= 1_000_000;
                if close {
                    s.pos < bp
                } else {
                    dts < bd
                }
            };
            if better {
                (best, bd, bp) = (Some(i), dts, s.pos);
            }
        }
        best
    }
}

impl Mp4Demuxer {
    /// The track a `tref/chap` names, when it is not video, is a data track
    /// (`bin_data`) that gives no packets: its samples are the chapter
    /// titles, read by [`super::chapter_track`]. ffmpeg's
    /// `mov_read_chapters` does the same (codec type data, codec
    /// `bin_data`, every packet discarded); a video chapter track (chapter
    /// thumbnails) stays a video track.
    #[cfg(feature = "chapters")]
    fn hide_chapter_track(&mut self, ctx: &mut Context) {
        let Some(t) = self
            .chap_track
            .and_then(|id| self.tracks.iter_mut().find(|t| t.track_id == id))
        else {
            return;
        };
        let Some(track) = ctx.tracks.get_mut(t.index) else {
            return;
        };
        if track.kind != TrackKind::Video {
            track.kind = TrackKind::Data;
            track.codec = Codec::BinData;
            t.hidden = true;
        }
    }

    /// Finds `covr` images in `ilst` and adds an attached-picture track for
    /// each, as ffmpeg does (`mov_read_covr`).
    fn find_covers<S: Source>(&mut self, src: &mut S, ctx: &mut Context) -> Result<()> {
        let Some((mut at, end)) = self.tag_boxes.ilst else {
            return Ok(());
        };
        let mut guard = 0;
        while at.saturating_add(8) <= end && guard < MAX_ILST_ITEMS {
            guard += 1;
            let Some(item) = soft(read_box_header(src, at, end))? else {
                break;
            };
            if &item.kind == b"covr" {
                let mut d = item.body;
                while d.saturating_add(16) <= item.end && !self.covers.is_full() {
                    let Some(data) = soft(read_box_header(src, d, item.end))? else {
                        break;
                    };
                    if &data.kind == b"data" && data.body_len() > 8 {
                        let ty = src.u32_be(data.body)? & 0xFF_FFFF;
                        let codec = match ty {
                            14 => Codec::Png,
                            27 => Codec::Bmp,
                            _ => Codec::Mjpeg,
                        };
                        let len = (data.body_len() - 8).min(u32::MAX as u64) as u32;
                        let t = Track {
                            id: 0,
                            kind: TrackKind::Video,
                            codec,
                            time_base: Rational::new(1, 90_000),
                            frames: Some(1),
                            attached_picture: true,
                            ..Track::default()
                        };
                        if let Some(i) = ctx.add_track(t, data.start) {
                            let _ = self.covers.push((i, data.body + 8, len));
                        }
                    }
                    if data.end <= d {
                        break;
                    }
                    d = data.end;
                }
            }
            if item.end <= at {
                break;
            }
            at = item.end;
        }
        Ok(())
    }
}

impl FormatDemuxer for Mp4Demuxer {
    fn open<S: Source>(src: &mut S, ctx: &mut Context) -> Result<Self> {
        let mut d = Mp4Demuxer {
            tracks: heapless::Vec::new(),
            windows: WindowSlots::default(),
            #[cfg(feature = "mp4-windows")]
            heads: Heads::default(),
            frag: Frag::default(),
            fragmented: false,
            in_fragments: false,
            tag_boxes: TagBoxes::default(),
            key_buf: heapless::String::new(),
            max_sample: 0,
            cut: None,
            covers: heapless::Vec::new(),
            next_cover: 0,
            frag_skip: None,
            #[cfg(feature = "chapters")]
            chap_track: None,
            #[cfg(feature = "chapters")]
            chap_walk: None,
        };
        let len = src.len();
        let mut at = 0u64;
        let mut moov_seen = false;
        let mut first_moof: Option<u64> = None;
        let mut count = 0u32;
        while at.saturating_add(8) <= len {
            count += 1;
            if count > ctx.limits.max_top_level {
                ctx.diags.report("mp4.too-many-boxes", at);
                break;
            }
            let h = match read_box_header(src, at, len) {
                Ok(h) => h,
                Err(e) if moov_seen && !source_fault(&e) => {
                    ctx.diags.report("mp4.bad-top-level-box", e.offset());
                    break;
                }
                Err(e) => return Err(e),
            };
            match &h.kind {
                b"ftyp" => {
                    d.tag_boxes.ftyp = Some(ByteRange {
                        offset: h.body,
                        len: h.body_len().min(1024) as u32,
                    });
                }
                b"moov" if !moov_seen => {
                    if h.clamped {
                        // A cut movie box has cut sample tables: what they
                        // would give is not the file's samples.
                        ctx.diags.report("mp4.moov-truncated", h.start);
                        return Err(Error::truncated(
                            src.len(),
                            &"mp4 moov: runs past the end of the file (ISO/IEC 14496-12 8.2.1)",
                        ));
                    }
                    d.parse_moov(src, ctx, &h)?;
                    moov_seen = true;
                    if !d.fragmented {
                        break;
                    }
                }
                b"moof" => {
                    if first_moof.is_none() {
                        first_moof = Some(h.start);
                    }
                    if moov_seen {
                        break;
                    }
                }
                b"mdat" if h.clamped => ctx.diags.report("mp4.mdat-truncated", h.start),
                _ => {}
            }
            if h.end <= at {
                break;
            }
            at = h.end;
        }
        if !moov_seen {
            return Err(Error::malformed(at, &"mp4: no moov box (ISO/IEC 14496-12 8.2.1)"));
        }
        d.find_covers(src, ctx)?;
        d.frag.top = first_moof.unwrap_or(0);
        if first_moof.is_some() {
            d.fragmented = true;
        }
        #[cfg(feature = "chapters")]
        d.hide_chapter_track(ctx);
        for t in d.tracks.iter_mut() {
            reset_cursor(src, t)?;
            if t.stsz_const != 0 {
                d.max_sample = d.max_sample.max(t.stsz_const);
            }
        }
        let most = d.tracks.iter().map(|t| t.sample_count).max().unwrap_or(0);
        if let Some(t) = d.tracks.iter_mut().find(|t| t.sample_count == most) {
            t.own_windows = true;
        }
        for i in 0..d.tracks.len() {
            if let Some(t) = d.tracks.get_mut(i) {
                restart(src, ctx, t, d.windows.of(t.own_windows))?;
            }
        }
        #[cfg(feature = "mp4-windows")]
        d.heads.sync(&d.tracks);
        Ok(d)
    }

    fn next_packet<'s, S: Source>(&mut self, src: &'s mut S, ctx: &mut Context) -> Result<Option<Packet<'s>>> {
        let max = ctx.limits.max_packet;
        if let Some(at) = self.cut {
            return Err(Error::truncated(
                at,
                &"mp4 mdat: the input ends inside a sample (ISO/IEC 14496-12 8.1.1)",
            ));
        }
        self.next_packet_inner(src, ctx, max)
    }

    fn seek<S: Source>(&mut self, src: &mut S, ctx: &mut Context, track: usize, ts: i64) -> Result<()> {
        self.cut = None;
        let r = self.seek_inner(src, ctx, track, ts);
        #[cfg(feature = "mp4-windows")]
        self.heads.sync(&self.tracks);
        r
    }

    fn next_tag<'s, S: Source>(
        &'s mut self,
        src: &'s mut S,
        ctx: &Context,
        cur: &mut TagCursor,
    ) -> Result<Option<Tag<'s>>> {
        tags::next_tag(&self.tag_boxes, &mut self.key_buf, src, ctx, cur)
    }

    #[cfg(feature = "chapters")]
    fn next_chapter<'s, S: Source>(
        &mut self,
        src: &'s mut S,
        ctx: &Context,
        cur: &mut crate::chapters::ChapterCursor,
    ) -> Result<Option<crate::chapters::Chapter<'s>>> {
        super::chapter_track::next(self, src, ctx, cur)
    }

    fn max_packet_size(&self) -> Option<usize> {
        None
    }
}

impl Mp4Demuxer {
    fn next_packet_inner<'s, S: Source>(
        &mut self,
        src: &'s mut S,
        ctx: &mut Context,
        max: u32,
    ) -> Result<Option<Packet<'s>>> {
        if let Some(&(track, offset, len)) = self.covers.get(self.next_cover) {
            self.next_cover += 1;
            let data = src.bytes(offset, len as usize)?;
            return Ok(Some(
                Packet::contiguous(track, offset, data).with_flags(PacketFlags::keyframe(true)),
            ));
        }
        if !self.in_fragments {
            if let Some(i) = self.pick() {
                let t = self
                    .tracks
                    .get_mut(i)
                    .ok_or_else(|| Error::malformed(0, &"mp4 demuxer: track index out of range (internal)"))?;
                let s = t.pending.take().ok_or_else(|| {
                    Error::malformed(0, &"mp4 demuxer: the picked track has no pending sample (internal)")
                })?;
                t.next_dts = s.dts.saturating_add(s.duration as i64);
                // Read the following sample before borrowing the source for
                // this one's payload.
                let next = next_sample(src, ctx, t, self.windows.of(t.own_windows))?;
                t.set_pending(next);
                #[cfg(feature = "mp4-windows")]
                self.heads.set(i, t);
                return Self::packet(src, t, s, max, &mut self.cut);
            }
            if !self.fragmented {
                return Ok(None);
            }
            self.in_fragments = true;
        }
        loop {
            let fragments = self.frag.fragments;
            let Some((i, s)) = self.next_fragment_sample(src, ctx)? else {
                return Ok(None);
            };
            if let Some((anchor, left, landing_us)) = self.frag_skip {
                // After a seek: skip the anchor's samples before its landing
                // sample, and other tracks' samples that end before it.
                if self.frag.fragments != fragments && fragments != 0 {
                    self.frag_skip = None;
                } else if i == anchor && left > 0 {
                    self.frag_skip = Some((anchor, left - 1, landing_us));
                    continue;
                } else if i != anchor {
                    let t = self
                        .tracks
                        .get(i)
                        .ok_or_else(|| Error::malformed(0, &"mp4 demuxer: track index out of range (internal)"))?;
                    let end = s.dts.saturating_add(s.duration as i64).saturating_sub(t.shift);
                    let end_us = rescale(end, Rational::new(1, t.timescale), Rational::new(1, 1_000_000));
                    if end_us <= landing_us {
                        continue;
                    }
                }
            }
            let t = self
                .tracks
                .get(i)
                .ok_or_else(|| Error::malformed(0, &"mp4 demuxer: track index out of range (internal)"))?;
            return Self::packet(src, t, s, max, &mut self.cut);
        }
    }
}
