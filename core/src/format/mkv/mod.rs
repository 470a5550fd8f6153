//! Matroska, WebM and MKA (RFC 9559 Matroska, RFC 8794 EBML).
//!
//! Opening reads the EBML header (RFC 8794 §11.2), finds the Segment
//! (RFC 9559 §5.1), walks its Top-Level Elements up to the first Cluster
//! (SeekHead, Info, Tracks, Cues, Tags, Chapters, Attachments) and then the
//! SeekHead targets that lie beyond it (RFC 9559 §16). Clusters are not read
//! while opening.
//!
//! Packets are read Cluster by Cluster (RFC 9559 §10): SimpleBlock and
//! BlockGroup/Block, with Xiph, EBML and fixed-size lacing (§10.4). Each
//! laced frame is its own packet and a slice of the input. Clusters of
//! unknown size (live recordings, RFC 8794 §6.2) end at the next Top-Level
//! Element ID. A Segment of unknown size, or one past the input's end,
//! ends where the input does, as [`Source::len`] states it at each step
//! (a live source's grows).
//! Header stripping (ContentCompAlgo 3, RFC 9559 §5.1.4.1.31.6)
//! is undone by joining the stripped bytes and the frame in scratch; zlib
//! frames are inflated into scratch (feature `mkv-zlib`); bzlib and LZO
//! compression are reported unsupported and their tracks' packets skipped.
//!
//! Timestamps follow ffmpeg's reading so that they match ffprobe: a frame's
//! pts is the Cluster Timestamp plus the Block's relative timestamp, minus
//! the track's CodecDelay, in TimestampScale units; later frames of a lace
//! are spaced by the Block's duration split evenly over the frames.
//!
//! Seeking walks Cues in place (§5.1.5); without Cues it scans Clusters
//! forward, bounded by `Limits::max_fragments` elements.
//!
//! Entry points: [`MkvDemuxer`] (`open` and `next_packet` here; Tracks in
//! `tracks.rs`, CodecIDs in `codec_id.rs`, Clusters and Blocks in
//! `block.rs`, `seek` in `seek.rs`, `next_tag` in `tags.rs`);
//! [`MkvMuxer`] (`muxer.rs`: the writer, Matroska and WebM).

mod block;
#[cfg(feature = "chapters")]
mod chapters;
mod codec_id;
#[doc(hidden)]
pub mod ebml;
#[cfg(feature = "mkv-fast")]
mod fast;
#[cfg(all(test, feature = "mkv-fast"))]
mod fast_tests;
#[cfg(fuzzing)]
#[doc(hidden)]
pub use ebml::fuzz_walk as fuzz_ebml;
mod ids;
pub mod muxer;
mod reorder;
mod resync;
mod seek;
mod tags;
#[cfg(test)]
mod tests;
mod tracks;
mod vorbis;
#[cfg(feature = "mkv-zlib")]
mod zlib;

use crate::bytes::gcd;
use crate::error::{Error, Result};
use crate::format::traits::{Context, FormatDemuxer};
use crate::ieee754::Float;
use crate::limits::MAX_TRACKS;
use crate::source::Source;
use crate::tags::{Tag, TagCursor};
use crate::types::{ByteRange, Packet, Rational};
use ebml::{read_element, read_float, read_str, read_uint, Children, Element};

pub use block::MAX_LACES;
pub use muxer::MkvMuxer;

/// Most SeekHead entries followed while opening (RFC 9559 §5.1.1). More are
/// ignored with `mkv.seek-capacity`.
pub const MAX_SEEK_ENTRIES: usize = 32;
/// Most Tags elements remembered (RFC 9559 §5.1.8). More are ignored with
/// `mkv.tags-capacity`.
pub const MAX_TAGS_ELEMENTS: usize = 8;
/// Most stripped header bytes kept per track (ContentCompSettings of header
/// stripping, RFC 9559 §5.1.4.1.31.7). A track stripping more is reported
/// unsupported with `mkv.strip-too-long`.
pub const MAX_STRIPPED: usize = 64;

/// Most element steps `next_packet` takes without returning a packet. Each
/// step moves forward by at least one element header, so this bound only
/// guards against a logic error.
const MAX_STEPS_PER_PACKET: u32 = u32::MAX;

/// The largest end a Top-Level Element may declare and still be taken as
/// cut by the input's end (1 PiB): a size beyond any file is damage.
const MAX_PLAUSIBLE_END: u64 = 1 << 50;

/// ffmpeg's default TimestampScale (RFC 9559 §5.1.2.1: 1 000 000 ns).
const DEFAULT_SCALE: u64 = 1_000_000;

/// How a track's frames are stored (RFC 9559 §5.1.4.1.31).
#[derive(Debug, Clone, PartialEq, Eq)]
enum Encoding {
    /// As they are.
    Plain,
    /// With these leading bytes removed from every frame (header stripping).
    Strip(heapless::Vec<u8, MAX_STRIPPED>),
    /// Compressed with zlib (inflated into scratch, feature `mkv-zlib`).
    #[cfg_attr(not(feature = "mkv-zlib"), allow(dead_code))]
    Zlib,
    /// Compressed with zlib, bzlib or LZO, or encoded in a way not read:
    /// packets are skipped.
    Unsupported,
}

/// Per-track state beside the public [`Track`] (same index).
#[derive(Debug, Clone)]
struct TrackState {
    /// TrackNumber, as Blocks refer to the track.
    number: u64,
    /// TrackUID, as Tags target it.
    uid: u64,
    codec: crate::types::Codec,
    /// DefaultDuration in nanoseconds, 0 when absent.
    default_duration: u64,
    /// CodecDelay in track ticks, subtracted from every timestamp.
    codec_delay: i64,
    encoding: Encoding,
    /// The track's Name, reported as its `title` tag.
    name: Option<ByteRange>,
    subtitle: bool,
    /// Every packet is a keyframe (ffmpeg's intra-only codecs).
    intra_only: bool,
    /// The codec may reorder pictures: dts is not the pts.
    reorders: bool,
    /// For such a codec, the reorder depth from its headers (H.264 SPS),
    /// with which dts is derived as ffmpeg does; `None`: dts unknown.
    depth: Option<u8>,
    /// The last pts seen, sorted (ffmpeg's `pts_buffer`), for that
    /// derivation; `i64::MIN` for none.
    pts_buffer: [i64; reorder::MAX_REORDER + 1],
    /// Vorbis window sizes and modes, to time packets as ffprobe does.
    vorbis: Option<vorbis::Vorbis>,
    /// For such a track, the end of the last packet (ffmpeg's `cur_dts`):
    /// the pts of a packet the container leaves untimed.
    next_ts: Option<i64>,
    /// End of the latest subtitle shown, for ffmpeg's overlap rule.
    end_ts: i64,
    /// For an attached picture (an Attachment of an image type), its data:
    /// the one packet of the track.
    picture: Option<ByteRange>,
    /// A WebM WebVTT track (`D_WEBVTT/*`): each Block holds the cue's
    /// identifier line, settings line and text; the packet is the text.
    webm_vtt: bool,
    /// The fast path may decide this track's Blocks (`fast.rs`).
    #[cfg(feature = "mkv-fast")]
    fast: bool,
}

/// A packet decided but not yet borrowed.
#[derive(Debug, Clone, Copy)]
struct Emit {
    track: usize,
    offset: u64,
    size: u32,
    pts: Option<i64>,
    dts: Option<i64>,
    duration: u64,
    keyframe: bool,
}

/// A seek in progress: packets are dropped until the target track's packet.
#[derive(Debug, Clone, Copy)]
struct Skip {
    track: usize,
    /// Drop packets before this time.
    from: i64,
    /// The target must start at a keyframe (video).
    key: bool,
    /// The target track is sparse (subtitles, an attached picture): drop
    /// packets of every track before `from`, then stop.
    sparse: bool,
}

/// Demuxer state for Matroska, WebM and MKA.
#[derive(Debug, Clone)]
pub struct MkvDemuxer {
    segment_start: u64,
    /// The Segment's end as `open` found it: the declared end, or the
    /// input's length then (unknown size, or a size past the input). Once
    /// open, [`MkvDemuxer::data_end`] is the bound for reading.
    segment_end: u64,
    /// The Segment's end as declared: `u64::MAX` when its size is unknown.
    /// A Top-Level Element ending past the input but within this end is
    /// cut by the input's end; one ending past it is damage.
    segment_declared_end: u64,
    /// TimestampScale in nanoseconds per tick.
    scale: u64,
    first_cluster: u64,
    tracks: heapless::Vec<TrackState, MAX_TRACKS>,
    cues: Option<(u64, u64)>,
    tags: heapless::Vec<(u64, u64), MAX_TAGS_ELEMENTS>,
    chapters: Option<(u64, u64)>,
    attachments: Option<(u64, u64)>,
    /// The Attachments element runs past the end of the input.
    attachments_cut: bool,
    title: Option<ByteRange>,
    muxing_app: Option<ByteRange>,
    writing_app: Option<ByteRange>,
    /// Info Duration, in TimestampScale units.
    duration: Option<Float>,
    // Reading position.
    pos: u64,
    in_cluster: bool,
    cluster_end: Option<u64>,
    cluster_ts: Option<u64>,
    laces: block::Laces,
    /// Attached pictures already delivered (they come first, as in ffprobe).
    pictures_done: bool,
    skip: Option<Skip>,
    tag_walk: tags::TagWalk,
    /// The input bytes after the last frame the fast path delivered.
    #[cfg(feature = "mkv-fast")]
    head: fast::Head,
}

/// State gathered while walking the Segment's Top-Level Elements.
struct Walk {
    seeks: heapless::Vec<(u64, u64), MAX_SEEK_ENTRIES>,
    visited: heapless::Vec<u64, MAX_SEEK_ENTRIES>,
    have_info: bool,
    have_tracks: bool,
}

impl FormatDemuxer for MkvDemuxer {
    fn open<S: Source>(src: &mut S, ctx: &mut Context) -> Result<Self> {
        let len = src.len();
        let head = read_element(src, 0, len)?;
        if head.id != ids::EBML {
            return Err(Error::malformed(0, &"mkv: no EBML header (RFC 8794 §11.2)"));
        }
        check_ebml_header(src, ctx, &head, len)?;
        let segment = find_segment(src, ctx, head.end_within(len), len)?;
        let segment_end = match segment.end() {
            Some(e) if e <= len => e,
            Some(_) => {
                ctx.diags.report("mkv.segment-beyond-eof", segment.start);
                len
            }
            None => {
                ctx.diags.report("mkv.unknown-size-segment", segment.start);
                len
            }
        };
        let mut d = MkvDemuxer {
            segment_start: segment.data,
            segment_end,
            segment_declared_end: segment.end().unwrap_or(u64::MAX),
            scale: DEFAULT_SCALE,
            first_cluster: segment_end,
            tracks: heapless::Vec::new(),
            cues: None,
            tags: heapless::Vec::new(),
            chapters: None,
            attachments: None,
            attachments_cut: false,
            title: None,
            muxing_app: None,
            writing_app: None,
            duration: None,
            pos: segment_end,
            in_cluster: false,
            cluster_end: None,
            cluster_ts: None,
            laces: block::Laces::default(),
            pictures_done: false,
            skip: None,
            tag_walk: tags::TagWalk::default(),
            #[cfg(feature = "mkv-fast")]
            head: fast::Head::default(),
        };
        let mut walk = Walk {
            seeks: heapless::Vec::new(),
            visited: heapless::Vec::new(),
            have_info: false,
            have_tracks: false,
        };
        d.walk_top_level(src, ctx, &mut walk)?;
        d.follow_seek_head(src, ctx, &mut walk)?;
        if !walk.have_tracks {
            return Err(Error::malformed(
                segment.data,
                &"mkv Segment: no Tracks element (RFC 9559 §5.1.4)",
            ));
        }
        d.add_pictures(src, ctx)?;
        #[cfg(feature = "mkv-fast")]
        d.mark_fast();
        d.pos = d.first_cluster;
        if let Some(dur) = d.duration {
            // Duration × TimestampScale ns in µs, rounded as the f64
            // expression `dur * scale as f64 / 1000.0` that ffmpeg uses.
            let us = dur.mul(Float::from_u64(d.scale)).div(Float::from_u64(1000));
            if let Some(us) = us.filter(|us| !us.is_negative()).and_then(Float::trunc_u64) {
                ctx.info.duration_us = Some(us);
            }
        }
        Ok(d)
    }

    fn next_packet<'s, S: Source>(&mut self, src: &'s mut S, ctx: &mut Context) -> Result<Option<Packet<'s>>> {
        // The common Block first, without the general path's checks.
        #[cfg(feature = "mkv-fast")]
        if self.pictures_done && self.laces.is_done() {
            if let Some(e) = self.fast_block(src, ctx) {
                return fast::packet(src, &mut self.head, e).map(Some);
            }
        }
        let mut steps = 0u32;
        loop {
            if !self.pictures_done {
                if let Some(e) = self.next_picture() {
                    return self.emit(src, e).map(Some);
                }
                self.pictures_done = true;
            }
            if let Some(mut e) = self.laces.take(&mut self.tracks) {
                self.codec_timing(src, &mut e)?;
                if !self.keep(ctx, &mut e)? {
                    continue;
                }
                if self
                    .tracks
                    .get(e.track)
                    .is_some_and(|t| t.webm_vtt && t.encoding == Encoding::Plain)
                {
                    let block = src.bytes(e.offset, e.size as usize)?;
                    let Some(text) = webvtt_cue_text(block) else {
                        // ffmpeg's matroska_parse_webvtt drops such a Block.
                        ctx.diags.report("mkv.bad-webvtt-cue", e.offset);
                        continue;
                    };
                    // The packet is the text: a contiguous part of the Block.
                    e.offset += text.start as u64;
                    e.size = text.len() as u32;
                }
                #[cfg(feature = "mkv-zlib")]
                if self.tracks.get(e.track).is_some_and(|t| t.encoding == Encoding::Zlib) {
                    let max = (ctx.limits.max_packet as usize).min(src.scratch_len());
                    match zlib::inflate(src, e.offset, e.size as usize, max) {
                        Ok(n) => return self.emit_joined(src, e, n).map(Some),
                        Err(err) if err.is_truncation() => return Err(err),
                        Err(_) => {
                            // ffmpeg drops a frame that does not inflate.
                            ctx.diags.report("mkv.bad-zlib-frame", e.offset);
                            continue;
                        }
                    }
                }
                return self.emit(src, e).map(Some);
            }
            #[cfg(feature = "mkv-fast")]
            if let Some(e) = self.fast_block(src, ctx) {
                return fast::packet(src, &mut self.head, e).map(Some);
            }
            if !self.step(src, ctx)? {
                return Ok(None);
            }
            steps = steps.saturating_add(1);
            if steps == MAX_STEPS_PER_PACKET {
                return Err(Error::malformed(
                    self.pos,
                    &"mkv Cluster: no packet after MAX_STEPS_PER_PACKET element steps (RFC 9559 §10, progress guard)",
                ));
            }
        }
    }

    fn seek<S: Source>(&mut self, src: &mut S, ctx: &mut Context, track: usize, ts: i64) -> Result<()> {
        self.seek_to(src, ctx, track, ts)
    }

    fn next_tag<'s, S: Source>(
        &'s mut self,
        src: &'s mut S,
        ctx: &Context,
        cur: &mut TagCursor,
    ) -> Result<Option<Tag<'s>>> {
        self.tag(src, ctx, cur)
    }

    #[cfg(feature = "chapters")]
    fn next_chapter<'s, S: Source>(
        &mut self,
        src: &'s mut S,
        ctx: &Context,
        cur: &mut crate::chapters::ChapterCursor,
    ) -> Result<Option<crate::chapters::Chapter<'s>>> {
        self.chapter(src, ctx, cur)
    }
}

/// Reads the EBML header's children (RFC 8794 §11.2): the DocType must be
/// `matroska` or `webm` (anything else is reported and read as Matroska,
/// as ffmpeg does), and IDs and sizes must fit in 8 bytes.
fn check_ebml_header<S: Source>(src: &mut S, ctx: &mut Context, head: &Element, len: u64) -> Result<()> {
    let mut kids = Children::of(head, len);
    let mut doctype_ok = false;
    while let Some(e) = kids.next(src)? {
        let limit = match e.id {
            ids::DOC_TYPE => {
                let mut b = [0u8; 16];
                let t = read_str(src, &e, &mut b)?;
                doctype_ok = t == b"matroska" || t == b"webm";
                continue;
            }
            ids::EBML_MAX_ID_LENGTH | ids::EBML_MAX_SIZE_LENGTH => 8,
            ids::EBML_READ_VERSION => 1,
            _ => continue,
        };
        if read_uint(src, &e)? <= limit {
            continue;
        }
        if e.id == ids::EBML_READ_VERSION {
            ctx.diags.report("mkv.ebml-read-version", e.start);
        } else {
            return Err(Error::unsupported(
                e.start,
                &"mkv EBML header: EBMLMaxIDLength or EBMLMaxSizeLength over 8 (RFC 8794 §11.2.4, §11.2.5)",
            ));
        }
    }
    if !doctype_ok {
        ctx.diags.report("mkv.unknown-doctype", head.start);
    }
    Ok(())
}

/// Finds the Segment after the EBML header, skipping Void and other
/// elements (bounded by `Limits::max_top_level`).
fn find_segment<S: Source>(src: &mut S, ctx: &mut Context, mut at: u64, len: u64) -> Result<Element> {
    for _ in 0..ctx.limits.max_top_level {
        if at >= len {
            break;
        }
        let e = read_element(src, at, len)?;
        if e.id == ids::SEGMENT {
            return Ok(e);
        }
        match e.end() {
            Some(end) if end > at => at = end,
            _ => break,
        }
    }
    Err(Error::malformed(
        at,
        &"mkv: no Segment element after the EBML header (RFC 9559 §5.1)",
    ))
}

/// `scale` nanoseconds as a time base, reduced.
/// A Top-Level Element a Segment holds (not the EBML header or another
/// Segment).
fn is_segment_child(id: u64) -> bool {
    ids::is_top_level(id) && id != ids::EBML && id != ids::SEGMENT
}

fn time_base(scale: u64) -> Rational {
    let g = gcd(scale, 1_000_000_000).max(1);
    let (num, den) = (scale / g, 1_000_000_000 / g);
    Rational::new(u32::try_from(num).unwrap_or(u32::MAX), den as u32)
}

impl MkvDemuxer {
    /// Where reading stops: the Segment's end, or where the input ends
    /// before it as [`Source::len`] states it now. A live source's length
    /// grows, so a Segment of unknown size (a stream, RFC 8794 §6.2) or
    /// one not yet all there is read as it arrives; for any other source
    /// this is the end `open` fixed.
    fn data_end<S: Source>(&self, src: &S) -> u64 {
        if self.segment_end < self.segment_declared_end {
            self.segment_declared_end.min(src.len())
        } else {
            self.segment_end
        }
    }

    /// The Segment's Top-Level Elements from its start to the first Cluster.
    fn walk_top_level<S: Source>(&mut self, src: &mut S, ctx: &mut Context, walk: &mut Walk) -> Result<()> {
        let mut at = self.segment_start;
        let mut count = 0u32;
        while at < self.segment_end {
            count += 1;
            if count > ctx.limits.max_top_level {
                ctx.diags.report("mkv.too-many-elements", at);
                break;
            }
            let e = match read_element(src, at, self.segment_end) {
                Ok(e) => e,
                Err(err) if err.is_truncation() => break,
                Err(_) => {
                    ctx.diags.report("mkv.bad-element", at);
                    break;
                }
            };
            if e.id == ids::CLUSTER {
                self.first_cluster = at;
                return Ok(());
            }
            self.visit(src, ctx, &e, walk)?;
            let _ = walk.visited.push(at);
            // Past the input's end but within the declared Segment and a
            // plausible file size, the size is a truncation, not damage, as
            // a cut read of the element is: the walk ends. A resync there
            // would find, in a prefix of the input, what the whole input
            // skips as this element's data.
            let cut = |end: u64| end > src.len() && end <= self.segment_declared_end && end <= MAX_PLAUSIBLE_END;
            match e.end() {
                Some(end) if end > at && end <= self.segment_end => at = end,
                Some(end) if end > at && !cut(end) => {
                    // A size past the Segment (or beyond any file): damage.
                    // The element was read up to the Segment's end; the walk
                    // goes on at the next Top-Level Element after its data,
                    // as ffmpeg does.
                    ctx.diags.report("mkv.element-exceeds-segment", at);
                    let stop = e.data.saturating_add(ctx.limits.resync_bytes).min(self.segment_end);
                    match resync::next_element(src, e.data, stop, self.segment_end, is_segment_child)? {
                        Some(next) => at = next,
                        None => break,
                    }
                }
                Some(end) if end > at => break,
                _ => {
                    ctx.diags.report("mkv.unknown-size-element", at);
                    break;
                }
            }
        }
        self.first_cluster = at.min(self.segment_end);
        Ok(())
    }

    /// Visits the SeekHead targets not met before the first Cluster (Cues,
    /// Tags, Chapters, Attachments written at the end; further SeekHeads).
    fn follow_seek_head<S: Source>(&mut self, src: &mut S, ctx: &mut Context, walk: &mut Walk) -> Result<()> {
        let mut i = 0;
        while let Some(&(id, at)) = walk.seeks.get(i) {
            i += 1;
            if walk.visited.contains(&at) {
                continue;
            }
            if at >= self.segment_end {
                ctx.diags.report("mkv.seek-beyond-eof", at);
                continue;
            }
            match read_element(src, at, self.segment_end) {
                Ok(e) if e.id == id => {
                    if walk.visited.push(at).is_err() {
                        ctx.diags.report("mkv.seek-capacity", at);
                        break;
                    }
                    self.visit(src, ctx, &e, walk)?;
                }
                _ => ctx.diags.report("mkv.bad-seek-entry", at),
            }
        }
        Ok(())
    }

    /// Reads or remembers one Top-Level Element.
    fn visit<S: Source>(&mut self, src: &mut S, ctx: &mut Context, e: &Element, walk: &mut Walk) -> Result<()> {
        let range = (e.data, e.end_within(self.segment_end));
        match e.id {
            ids::SEEK_HEAD => {
                if let Err(err) = self.read_seek_head(src, ctx, e, walk) {
                    if !err.is_truncation() {
                        ctx.diags.report("mkv.bad-seek-head", e.start);
                    }
                }
            }
            ids::INFO if !walk.have_info => {
                walk.have_info = true;
                self.read_info(src, ctx, e)?;
            }
            ids::TRACKS if !walk.have_tracks => {
                walk.have_tracks = true;
                self.read_tracks(src, ctx, e)?;
            }
            ids::CUES if self.cues.is_none() => self.cues = Some(range),
            ids::TAGS => self.remember_tags(ctx, range, e.start),
            ids::CHAPTERS if self.chapters.is_none() => self.chapters = Some(range),
            ids::ATTACHMENTS if self.attachments.is_none() => {
                self.attachments = Some(range);
                self.attachments_cut = e.end().is_none_or(|end| end > src.len());
            }
            _ => {}
        }
        Ok(())
    }

    /// Remembers a Tags element's data range (once).
    fn remember_tags(&mut self, ctx: &mut Context, range: (u64, u64), at: u64) {
        if !self.tags.contains(&range) && self.tags.push(range).is_err() {
            ctx.diags.report("mkv.tags-capacity", at);
        }
    }

    /// SeekHead (RFC 9559 §5.1.1): remembers where the other Top-Level
    /// Elements are.
    fn read_seek_head<S: Source>(
        &mut self,
        src: &mut S,
        ctx: &mut Context,
        e: &Element,
        walk: &mut Walk,
    ) -> Result<()> {
        let mut kids = Children::of(e, self.segment_end);
        while let Some(seek) = kids.next(src)? {
            if seek.id != ids::SEEK {
                continue;
            }
            let (mut id, mut pos) = (None, None);
            let mut inner = Children::of(&seek, kids.end);
            while let Some(c) = inner.next(src)? {
                match c.id {
                    ids::SEEK_ID if c.size.unwrap_or(0) <= 8 => {
                        let mut b = [0u8; 8];
                        let n = c.size.unwrap_or(0) as usize;
                        let buf = b.get_mut(..n).unwrap_or(&mut []);
                        src.read_exact_at(c.data, buf)?;
                        id = Some(buf.iter().fold(0u64, |v, &x| (v << 8) | x as u64));
                    }
                    ids::SEEK_POSITION => pos = Some(read_uint(src, &c)?),
                    _ => {}
                }
            }
            let (Some(id), Some(pos)) = (id, pos) else { continue };
            if !matches!(
                id,
                ids::SEEK_HEAD | ids::INFO | ids::TRACKS | ids::CUES | ids::TAGS | ids::CHAPTERS | ids::ATTACHMENTS
            ) {
                continue;
            }
            let at = self.segment_start.saturating_add(pos);
            if !walk.seeks.contains(&(id, at)) && walk.seeks.push((id, at)).is_err() {
                ctx.diags.report("mkv.seek-capacity", seek.start);
                break;
            }
        }
        Ok(())
    }

    /// Info (RFC 9559 §5.1.2): TimestampScale and the strings reported as
    /// tags. Duration is read again at the end of `open`.
    fn read_info<S: Source>(&mut self, src: &mut S, ctx: &mut Context, e: &Element) -> Result<()> {
        let mut kids = Children::of(e, self.segment_end);
        while let Some(c) = kids.next(src)? {
            match c.id {
                ids::TIMESTAMP_SCALE => match read_uint(src, &c)? {
                    0 => ctx.diags.report("mkv.zero-timestamp-scale", c.start),
                    s => self.scale = s,
                },
                ids::DURATION => self.duration = read_float(src, &c)?,
                ids::TITLE => self.title = range_of(&c),
                ids::MUXING_APP => self.muxing_app = range_of(&c),
                ids::WRITING_APP => self.writing_app = range_of(&c),
                _ => {}
            }
        }
        Ok(())
    }
}

/// The data of a string or binary element as a range.
fn range_of(e: &Element) -> Option<ByteRange> {
    Some(ByteRange {
        offset: e.data,
        len: u32::try_from(e.size?).ok()?,
    })
}

/// Where the cue text lies in a WebM WebVTT Block (the WebM project's
/// "WebVTT in WebM" mapping: the cue identifier line, the settings line,
/// then the cue payload): the range of the text with its trailing line
/// breaks left out, as ffmpeg's Matroska reader gives it (the identifier
/// and settings become its side data). `None` when the two lines or the
/// text are missing, where ffmpeg gives no packet.
fn webvtt_cue_text(block: &[u8]) -> Option<core::ops::Range<usize>> {
    let mut at = 0usize;
    for _ in 0..2 {
        let rest = block.get(at..)?;
        let eol = rest.iter().position(|&b| b == b'\r' || b == b'\n')?;
        at += eol;
        if block.get(at) == Some(&b'\r') {
            at += 1;
        }
        if block.get(at) != Some(&b'\n') {
            return None;
        }
        at += 1;
    }
    let text = block.get(at..)?;
    let len = text.iter().rposition(|&b| b != b'\r' && b != b'\n')? + 1;
    Some(at..at + len)
}

#[cfg(test)]
mod webvtt_tests {
    use super::webvtt_cue_text;

    #[test]
    fn the_cue_text_follows_the_identifier_and_settings_lines() {
        // ffmpeg's WebM muxer: empty identifier and settings.
        assert_eq!(webvtt_cue_text(b"\n\nHello"), Some(2..7));
        assert_eq!(webvtt_cue_text(b"intro\r\nalign:start\nTwo\nlines\r\n\n"), Some(19..28));
        // Missing lines or text: no packet, as in ffmpeg.
        assert_eq!(webvtt_cue_text(b"Hello"), None);
        assert_eq!(webvtt_cue_text(b"id\nHello"), None);
        assert_eq!(webvtt_cue_text(b"id\rx\nHello"), None);
        assert_eq!(webvtt_cue_text(b"\n\n\r\n"), None);
    }
}
