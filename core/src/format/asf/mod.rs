//! ASF: Windows Media (WMV, WMA) and other Advanced Systems Format files.
//!
//! Reference: "Advanced Systems Format (ASF) Specification", revision 1.20.03
//! (Microsoft, December 2004): the header object and its children (§3), the
//! header extension objects (§4), the data object and data packets (§5), the
//! index objects (§6), and the type-specific data of audio and video streams
//! (§9, WAVEFORMATEX and BITMAPINFOHEADER).
//!
//! Packets follow ffmpeg's `asf` demuxer (`asfdec_f.c`) so that they match
//! ffprobe: one packet per media object, timestamps in milliseconds minus the
//! preroll, audio always marked as a keyframe, a WMA packet's duration from
//! the stream bit rate, and a `WM/Picture` attribute turned into a video
//! track with one packet (an attached picture). A media object stored whole in
//! one payload is a slice of the input; one fragmented over several payloads
//! is joined in the source's scratch (`contiguous == false`). See
//! `docs/formats/asf.md` for what differs from ffprobe and why.

mod guids;
mod header;
mod text;

use self::header::{FileProperties, Rd, StreamType};
use crate::error::{Error, ErrorKind, Result};
use crate::format::traits::{Context, FormatDemuxer};
use crate::source::Source;
use crate::tags::{Tag, TagCursor, TagKey, TagScope, TagValue};
use crate::types::{rescale, ByteRange, Codec, Packet, PacketFlags, Rational, Track, TrackKind};

/// Most ASF media streams kept; further streams are reported with
/// `asf.stream-capacity` and their payloads skipped.
pub const MAX_STREAMS: usize = 16;
/// Stream states held by the demuxer: a stream gets one only once it has a
/// track, so never more than [`crate::MAX_TRACKS`] (4 with `few-tracks`,
/// which keeps the state under 4 KiB).
const KEPT_STREAMS: usize = if MAX_STREAMS < crate::MAX_TRACKS {
    MAX_STREAMS
} else {
    crate::MAX_TRACKS
};
/// Fragments of one pending media object remembered in place; an object in
/// more fragments is completed by reading the later packet headers again once
/// (see `docs/formats/asf.md`).
pub const MAX_FRAGMENTS: usize = 8;
/// Most `WM/Picture` attributes exposed as attached-picture tracks.
pub const MAX_PICTURES: usize = 8;
/// Most tag-bearing objects (content description, extended content
/// description, metadata, metadata library) remembered for `next_tag`.
pub const MAX_TAG_OBJECTS: usize = 8;

/// ffmpeg's `FRAME_HEADER_SIZE`: fewer bytes left in a data packet than this
/// end the packet.
const FRAME_HEADER_SIZE: i64 = 6;
/// Largest media object accepted (ffmpeg's limit, 16 MiB).
const MAX_OBJECT_SIZE: u32 = 1 << 24;
/// Largest data packet accepted (ffmpeg's limit, 512 MiB).
const MAX_PACKET_LENGTH: u32 = 1 << 29;
/// ASF timestamps are milliseconds.
const MS: Rational = Rational::new(1, 1000);
/// The header objects the reader acts on (§3.2–§3.4, §3.10, §3.11, §4.1,
/// §4.7, §4.8).
#[derive(Clone, Copy)]
enum Object {
    FileProperties,
    StreamProperties,
    ExtendedStreamProperties,
    HeaderExtension,
    ContentDescription,
    ExtendedContentDescription,
    /// The Metadata and the Metadata Library Object, read alike.
    Metadata,
}

/// Their GUIDs.
const HEADER_OBJECTS: [(guids::Guid, Object); 8] = [
    (guids::FILE_PROPERTIES, Object::FileProperties),
    (guids::STREAM_PROPERTIES, Object::StreamProperties),
    (guids::EXTENDED_STREAM_PROPERTIES, Object::ExtendedStreamProperties),
    (guids::HEADER_EXTENSION, Object::HeaderExtension),
    (guids::CONTENT_DESCRIPTION, Object::ContentDescription),
    (guids::EXTENDED_CONTENT_DESCRIPTION, Object::ExtendedContentDescription),
    (guids::METADATA, Object::Metadata),
    (guids::METADATA_LIBRARY, Object::Metadata),
];

/// Size of the data object header (§5.1): GUID, size, file id, packet
/// count, reserved.
const DATA_HEADER: u64 = 50;

#[derive(Debug, Clone, Copy, Default)]
struct Fragment {
    data: u64,
    len: u32,
    off: u32,
}

#[derive(Debug, Clone, Copy)]
struct Resume {
    packet: u64,
    payload: u16,
}

/// A media object being received in fragments.
#[derive(Debug, Clone, Default)]
struct Pending {
    active: bool,
    size: u32,
    received: u32,
    key: bool,
    dts: Option<i64>,
    pos: u64,
    frags: heapless::Vec<Fragment, MAX_FRAGMENTS>,
    overflow: Option<Resume>,
    /// The input ends inside this object: it is delivered short.
    truncated: bool,
}

#[derive(Debug, Clone)]
struct StreamState {
    number: u8,
    track: usize,
    audio: bool,
    video: bool,
    /// Sample rate and bit rate, for the duration of a WMA packet.
    wma: Option<(u32, u32)>,
    /// Audio spread interleaving to undo, as ffmpeg does.
    spread: Option<Spread>,
    last_obj_size: u32,
    skip_to_key: bool,
    pending: Pending,
}

/// The audio spread error correction parameters (§3.3, §9.1.1): an object
/// of `span` virtual packets of `packet` bytes, interleaved in `chunk`-byte
/// pieces.
#[derive(Debug, Clone, Copy)]
struct Spread {
    span: u32,
    packet: u32,
    chunk: u32,
}

impl Spread {
    /// The source chunk of output chunk `k`, as ffmpeg reorders it.
    fn source(&self, k: u32) -> u32 {
        let row = k / self.span;
        let col = k % self.span;
        row + col * (self.packet / self.chunk)
    }
}

#[derive(Debug, Clone, Copy)]
struct Picture {
    track: usize,
    data: u64,
    len: u32,
    kind: u8,
    desc: ByteRange,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum TagObject {
    Content,
    Extended,
    Metadata,
}

#[derive(Debug, Clone, Copy)]
struct Multi {
    slot: usize,
    left: i64,
    time: i64,
    delta: u8,
    key: bool,
    /// Sub-payloads to pass over before delivering (after a seek).
    skip: u16,
}

/// Where a seek landed: the payload (counted from 1 in its data packet)
/// and, for a compressed payload, the sub-payload of the target object.
/// Earlier payloads of the stream in that packet are skipped.
#[derive(Debug, Clone, Copy)]
struct SeekFilter {
    slot: usize,
    packet: u64,
    payload: u16,
    sub: u16,
}

#[derive(Debug, Clone, Copy, Default)]
struct Layout {
    packet_size: u32,
    min_packet_size: u32,
    data_start: u64,
    data_end: u64,
    preroll: i64,
}

/// Where the packet reader is: the current data packet and payload.
#[derive(Debug, Clone, Copy, Default)]
struct Cursor {
    next_packet: u64,
    in_packet: bool,
    packet: u64,
    at: u64,
    size_left: i64,
    padsize: i64,
    segments: i32,
    multiple: bool,
    property: u8,
    segsizetype: u8,
    send_time: u32,
    payload: u16,
    multi: Option<Multi>,
    last_time: i64,
}

/// One payload header (§5.2.3).
#[derive(Debug, Clone, Copy)]
struct Payload {
    stream: u8,
    key: bool,
    frag_off: u32,
    obj_size: Option<u32>,
    time: Option<u32>,
    compressed: Option<(u32, u8)>,
    data: u64,
    frag_size: u32,
}

/// A completed media object, ready to be handed out.
#[derive(Debug, Clone)]
struct Done {
    slot: usize,
    size: u32,
    pending: Pending,
}

/// Demuxer state for ASF.
#[derive(Debug, Clone)]
pub struct AsfDemuxer {
    lay: Layout,
    cur: Cursor,
    streams: heapless::Vec<StreamState, KEPT_STREAMS>,
    pictures: heapless::Vec<Picture, MAX_PICTURES>,
    next_picture: usize,
    tag_objects: heapless::Vec<(TagObject, ByteRange), MAX_TAG_OBJECTS>,
    simple_index: Option<ByteRange>,
    index: Option<ByteRange>,
    max_object: u32,
    truncated: bool,
    seek_filter: Option<SeekFilter>,
}

fn read_small<S: Source, const N: usize>(src: &mut S, at: u64) -> Result<([u8; N], usize)> {
    let mut b = [0u8; N];
    let n = src.read_at(at, &mut b)?;
    Ok((b, n))
}

fn truncated(at: u64) -> Error {
    Error::truncated(at, "input ends inside an ASF object (ASF §5.2)")
}

impl FormatDemuxer for AsfDemuxer {
    fn open<S: Source>(src: &mut S, ctx: &mut Context) -> Result<Self> {
        let head: [u8; 30] = src.array(0)?;
        if head.get(..16) != Some(&guids::HEADER[..]) {
            return Err(Error::malformed(0, "no ASF Header Object (ASF §3.1)"));
        }
        let mut d = AsfDemuxer {
            lay: Layout::default(),
            cur: Cursor::default(),
            streams: heapless::Vec::new(),
            pictures: heapless::Vec::new(),
            next_picture: 0,
            tag_objects: heapless::Vec::new(),
            simple_index: None,
            index: None,
            max_object: 0,
            truncated: false,
            seek_filter: None,
        };
        let mut props: Option<FileProperties> = None;
        // Leak rates of the extended stream properties, by stream number.
        let mut leak: heapless::Vec<(u8, u32, u32), MAX_STREAMS> = heapless::Vec::new();
        let file_len = src.len();
        // Like ffmpeg, walk the objects flat from the first child of the header
        // (entering the header extension) up to the data object.
        let mut at = 30u64;
        let mut walked = 0u32;
        let data_at = loop {
            walked += 1;
            if walked > ctx.limits.max_top_level {
                return Err(Error::limit(at, "too many ASF header objects"));
            }
            if at.saturating_add(24) > file_len {
                return Err(Error::truncated(
                    at,
                    "no ASF Data Object before the end of input (ASF §5.1)",
                ));
            }
            let h: [u8; 24] = src.array(at)?;
            let mut r = Rd::new(&h);
            let g = r.guid().unwrap_or_default();
            let size = r.u64().unwrap_or(0);
            if g == guids::DATA {
                break at;
            }
            if size < 24 {
                return Err(Error::malformed(at, "ASF object smaller than its header (ASF §3)"));
            }
            let body = at + 24;
            let end = at.saturating_add(size);
            match guids::lookup(&g, &HEADER_OBJECTS) {
                Some(Object::FileProperties) => {
                    let (b, n) = read_small::<S, 80>(src, body)?;
                    let p = FileProperties::parse(b.get(..n).unwrap_or(&[]))
                        .ok_or(Error::truncated(body, "File Properties Object cut short (ASF §3.2)"))?;
                    if p.min_packet_size >= MAX_PACKET_LENGTH {
                        return Err(Error::malformed(body, "ASF minimum packet size too large"));
                    }
                    props = Some(p);
                }
                Some(Object::StreamProperties) => {
                    d.stream_properties(src, ctx, body, size, props.unwrap_or_default())?;
                }
                Some(Object::ExtendedStreamProperties) => {
                    // §4.1: fixed part, stream names, payload extension systems,
                    // then an optional Stream Properties Object, which ffmpeg
                    // reads as the next object.
                    let (b, n) = read_small::<S, 64>(src, body)?;
                    let mut r = Rd::new(b.get(..n).unwrap_or(&[]));
                    let fixed = (|| {
                        r.u64()?;
                        r.u64()?;
                        let rate = r.u32()?;
                        for _ in 0..5 {
                            r.u32()?;
                        }
                        let max_object = r.u32()?;
                        r.u32()?; // flags
                        let number = r.u16()?;
                        r.u16()?; // language index
                        r.u64()?; // average time per frame
                        let names = r.u16()?;
                        let exts = r.u16()?;
                        Some((rate, max_object, number, names, exts))
                    })();
                    let Some((rate, max_object, number, names, exts)) = fixed else {
                        return Err(Error::truncated(
                            body,
                            "Extended Stream Properties Object cut short (ASF §4.1)",
                        ));
                    };
                    if number < 128 && leak.push((number as u8, rate, max_object)).is_err() {
                        ctx.diags.report("asf.stream-capacity", at);
                    }
                    let mut p = body + r.pos as u64;
                    for _ in 0..names {
                        let b: [u8; 4] = src.array(p)?;
                        p = p.saturating_add(4 + u16::from_le_bytes([b[2], b[3]]) as u64);
                    }
                    for _ in 0..exts {
                        let b: [u8; 22] = src.array(p)?;
                        p = p.saturating_add(22 + u32::from_le_bytes([b[18], b[19], b[20], b[21]]) as u64);
                    }
                    if p > at && p < end {
                        at = p;
                        continue;
                    }
                }
                Some(Object::HeaderExtension) => {
                    // §3.4: reserved GUID, reserved WORD, data size, objects.
                    at = body + 22;
                    continue;
                }
                Some(Object::ContentDescription) => {
                    d.remember_tags(ctx, TagObject::Content, body, end, file_len, at);
                }
                Some(Object::ExtendedContentDescription) => {
                    d.remember_tags(ctx, TagObject::Extended, body, end, file_len, at);
                    d.find_pictures(src, ctx, TagObject::Extended, body, end)?;
                }
                Some(Object::Metadata) => {
                    d.remember_tags(ctx, TagObject::Metadata, body, end, file_len, at);
                    d.find_pictures(src, ctx, TagObject::Metadata, body, end)?;
                }
                None => {}
            }
            if end <= at {
                return Err(Error::malformed(at, "ASF object size wraps"));
            }
            at = end;
        };
        let props = props.ok_or(Error::malformed(data_at, "no ASF File Properties Object (ASF §3.2)"))?;
        if d.streams.is_empty() && d.pictures.is_empty() {
            return Err(Error::malformed(data_at, "no ASF Stream Properties Object (ASF §3.3)"));
        }
        let data_size: [u8; 8] = src.array(data_at + 16)?;
        let data_size = u64::from_le_bytes(data_size);
        let data_start = data_at + DATA_HEADER;
        if data_start > file_len {
            return Err(Error::truncated(data_at, "ASF Data Object header cut short (ASF §5.1)"));
        }
        // ffmpeg trusts the data object size unless the file is a broadcast
        // or the size is implausible; then it reads to the end.
        let data_end = if !props.broadcast() && data_size >= 100 {
            data_at.saturating_add(data_size)
        } else {
            u64::MAX
        };
        if data_end != u64::MAX && data_end > file_len {
            ctx.diags.report("asf.data-beyond-eof", data_at);
        }
        d.lay = Layout {
            packet_size: props.max_packet_size,
            min_packet_size: props.min_packet_size,
            data_start,
            data_end,
            preroll: props.preroll as i64,
        };
        d.cur.next_packet = data_start;
        if props.max_packet_size == 0 || props.max_packet_size >= MAX_PACKET_LENGTH {
            ctx.diags.report("asf.bad-packet-size", data_at);
        }
        // Stream durations as ffmpeg gives them: play duration minus preroll,
        // when the file size agrees with the file properties.
        let size_ok = props.file_size == 0 || file_len.abs_diff(props.file_size) < file_len.min(props.file_size) / 20;
        let duration_ms = (props.play_duration / 10_000).saturating_sub(props.preroll);
        for t in ctx.tracks.iter_mut() {
            if !props.broadcast() && size_ok && t.time_base == MS {
                t.duration = Some(duration_ms);
            }
        }
        // The largest packet is known when every stream declares its
        // Maximum Object Size (§4.1).
        let mut declared = d.pictures.iter().map(|p| p.len).max().unwrap_or(0);
        for s in d.streams.iter() {
            match leak.iter().find(|(n, _, _)| *n == s.number) {
                Some(&(_, _, m)) if m > 0 && m < MAX_OBJECT_SIZE => declared = declared.max(m),
                _ => declared = u32::MAX,
            }
        }
        if declared != u32::MAX && d.streams.iter().any(|s| s.spread.is_some()) {
            // A fragmented scrambled object is joined beside its output.
            declared = declared.saturating_mul(2);
        }
        d.max_object = declared;
        for s in d.streams.iter() {
            if let Some(&(_, rate, _)) = leak.iter().find(|(n, _, _)| *n == s.number) {
                if let Some(t) = ctx.tracks.get_mut(s.track) {
                    if t.bit_rate == 0 {
                        t.bit_rate = rate;
                    }
                }
            }
        }
        if !props.broadcast() && size_ok {
            ctx.info.duration_us = Some(duration_ms.saturating_mul(1000));
        }
        if props.max_bitrate > 0 {
            ctx.info.bit_rate = Some(props.max_bitrate as u64);
        }
        d.find_index(src, ctx);
        Ok(d)
    }

    fn next_packet<'s, S: Source>(&mut self, src: &'s mut S, ctx: &mut Context) -> Result<Option<Packet<'s>>> {
        if let Some(p) = self.pictures.get(self.next_picture).copied() {
            self.next_picture += 1;
            let data = src.bytes(p.data, p.len as usize)?;
            return Ok(Some(Packet {
                track: p.track,
                pts: None,
                dts: None,
                duration: None,
                flags: PacketFlags {
                    keyframe: true,
                    discard: false,
                    truncated: false,
                },
                pos: Some(p.data),
                contiguous: true,
                data,
            }));
        }
        let done = loop {
            match self.step(src, ctx)? {
                Step::Continue => {}
                Step::End => return Ok(None),
                Step::Done(d) => break d,
            }
        };
        self.deliver(src, done)
    }

    /// Lands on the media object of `track` that holds `ts` (audio) or on
    /// the last key object at or before `ts` (video): a packet found with the
    /// simple index (§6.1) or a binary search over send times (§5.2.2), then
    /// a walk over payload headers to the exact object. Earlier objects of
    /// the track in that packet are skipped; other tracks resume with their
    /// next whole object (video at a key frame).
    fn seek<S: Source>(&mut self, src: &mut S, ctx: &mut Context, track: usize, ts: i64) -> Result<()> {
        let _ = ctx;
        self.next_picture = self.pictures.len();
        self.truncated = false;
        self.seek_filter = None;
        let last = self.cur.last_time;
        self.cur = Cursor {
            last_time: last,
            next_packet: self.lay.data_start,
            ..Cursor::default()
        };
        let slot = self.streams.iter().position(|s| s.track == track);
        for s in self.streams.iter_mut() {
            s.pending = Pending::default();
            s.skip_to_key = s.video && Some(s.track) != Some(track);
        }
        let Some(slot) = slot.filter(|_| ts > 0) else {
            // Seeking to the start replays every packet.
            for s in self.streams.iter_mut() {
                s.skip_to_key = false;
            }
            return Ok(());
        };
        let (number, key_only) = match self.streams.get(slot) {
            Some(s) => (s.number, s.video),
            None => return Ok(()),
        };
        let mut margin = 10_000i64;
        let mut guard = 0;
        loop {
            guard += 1;
            let start = self.packet_before(src, ts.saturating_sub(margin))?;
            let found = self.find_object(src, start, number, key_only, ts)?;
            if let Some(t) = found {
                self.cur.next_packet = t.packet;
                self.seek_filter = Some(SeekFilter { slot, ..t });
                return Ok(());
            }
            if start <= self.lay.data_start || guard > 8 {
                // Nothing at or before `ts`: start from the beginning.
                self.cur.next_packet = self.lay.data_start;
                if let Some(s) = self.streams.get_mut(slot) {
                    s.skip_to_key = s.video;
                }
                return Ok(());
            }
            margin = margin.saturating_mul(8);
        }
    }

    fn next_tag<'s, S: Source>(
        &mut self,
        src: &'s mut S,
        ctx: &Context,
        cur: &mut TagCursor,
    ) -> Result<Option<Tag<'s>>> {
        self.tag_walk(src, ctx, cur)
    }

    /// The largest Maximum Object Size the extended stream properties
    /// declare (§4.1), or `None` when a stream declares none.
    fn max_packet_size(&self) -> Option<usize> {
        if self.max_object == u32::MAX {
            None
        } else {
            Some(self.max_object as usize)
        }
    }
}

// A completed object is moved out once per packet; no boxing in no_std.
#[allow(clippy::large_enum_variant)]
enum Step {
    Continue,
    End,
    Done(Done),
}

/// Reads the data packet header at `cur.next_packet` (§5.2.1, §5.2.2) and
/// positions `cur` on its first payload. Returns `false` when the header is
/// invalid (the packet is then skipped).
///
/// Errors: `Truncated` when the header runs past the input.
fn load_packet<S: Source>(src: &mut S, lay: &Layout, cur: &mut Cursor) -> Result<bool> {
    let p = cur.next_packet;
    let (b, n) = read_small::<S, 40>(src, p)?;
    let short = n < b.len();
    let mut r = Rd::new(b.get(..n).unwrap_or(&[]));
    let fixed = lay.packet_size.max(lay.min_packet_size).max(1) as u64;
    cur.next_packet = p.saturating_add(fixed);
    cur.in_packet = false;
    let parsed = (|| {
        let mut c = r.u8()?;
        if c & 0x80 != 0 {
            // Error correction data (§5.2.1): length in the low nibble.
            if c & 0x60 == 0 {
                r.pos += (c & 0x0F) as usize;
            }
            c = r.u8()?;
        }
        let d = r.u8()?;
        let len = match r.var(c >> 5)? {
            0 if c >> 5 & 3 == 0 => lay.packet_size,
            v => v,
        };
        r.var(c >> 1)?; // sequence
        let pad = r.var(c >> 3)?;
        let send = r.u32()?;
        r.u16()?; // duration
        let (segments, segsize) = if c & 1 != 0 {
            let s = r.u8()?;
            ((s & 0x3F) as i32, s)
        } else {
            (1, 0x80)
        };
        Some((c, d, len, pad, send, segments, segsize))
    })();
    let Some((c, d, len, pad, send, segments, segsize)) = parsed else {
        if short {
            return Err(truncated(p));
        }
        return Ok(false);
    };
    let rsize = r.pos as i64;
    if len == 0 || len >= MAX_PACKET_LENGTH || pad >= len || rsize > (len - pad) as i64 {
        return Ok(false);
    }
    let mut padsize = pad as i64;
    if len < lay.min_packet_size {
        padsize += (lay.min_packet_size - len) as i64;
    }
    cur.next_packet = p.saturating_add((len.max(lay.min_packet_size)) as u64);
    cur.in_packet = true;
    cur.packet = p;
    cur.at = p + rsize as u64;
    cur.size_left = (len - pad) as i64 - rsize;
    cur.padsize = padsize;
    cur.segments = segments;
    cur.multiple = c & 1 != 0;
    cur.property = d;
    cur.segsizetype = segsize;
    cur.send_time = send;
    cur.payload = 0;
    cur.multi = None;
    Ok(true)
}

/// Reads the payload header at `cur.at` (§5.2.3.1–§5.2.3.3), following
/// ffmpeg's checks. Returns `None` when it is invalid (the rest of the data
/// packet is then skipped).
fn read_payload<S: Source>(src: &mut S, cur: &mut Cursor) -> Result<Option<Payload>> {
    cur.segments -= 1;
    cur.payload = cur.payload.saturating_add(1);
    let at = cur.at;
    let (b, n) = read_small::<S, 24>(src, at)?;
    let short = n < b.len();
    let mut r = Rd::new(b.get(..n).unwrap_or(&[]));
    let prop = cur.property;
    let head = (|| {
        let num = r.u8()?;
        r.var(prop >> 4)?; // media object number
        let off = r.var(prop >> 2)?;
        let replic = r.var(prop)?;
        Some((num, off, replic))
    })();
    let Some((num, mut frag_off, replic)) = head else {
        return if short { Err(truncated(at)) } else { Ok(None) };
    };
    let mut rsize = r.pos as i64;
    if rsize + replic as i64 > cur.size_left {
        return Ok(None);
    }
    let mut obj_size = None;
    let mut time = None;
    let mut compressed = None;
    if replic >= 8 {
        let (Some(size), Some(t)) = (r.u32(), r.u32()) else {
            return if short { Err(truncated(at)) } else { Ok(None) };
        };
        if size >= MAX_OBJECT_SIZE {
            return Ok(None);
        }
        obj_size = Some(size);
        time = Some(t);
        rsize += replic as i64;
    } else if replic == 1 {
        // Compressed payload (§5.2.3.3): the offset field is the
        // presentation time, then one byte of time delta.
        let Some(delta) = r.u8() else {
            return if short { Err(truncated(at)) } else { Ok(None) };
        };
        compressed = Some((frag_off, delta));
        frag_off = 0;
        rsize += 1;
    } else if replic != 0 {
        return Ok(None);
    }
    let frag_size: u32 = if cur.multiple {
        let lt = cur.segsizetype >> 6;
        let (fb, fnr) = read_small::<S, 4>(src, at.saturating_add(rsize as u64))?;
        let mut fr = Rd::new(fb.get(..fnr).unwrap_or(&[]));
        let Some(v) = fr.var(lt) else {
            return Err(truncated(at));
        };
        rsize += fr.pos as i64;
        if rsize > cur.size_left {
            return Ok(None);
        }
        let room = cur.size_left - rsize;
        if v as i64 > room {
            if v as i64 > room + cur.padsize {
                return Ok(None);
            }
            // The payload runs into the padding: ffmpeg lets it.
            let diff = v as i64 - room;
            cur.size_left += diff;
            cur.padsize -= diff;
        }
        v
    } else {
        (cur.size_left - rsize).max(0) as u32
    };
    if compressed.is_some() && frag_size as i64 > cur.size_left {
        return Ok(None);
    }
    cur.size_left -= rsize;
    let data = at.saturating_add(rsize as u64);
    cur.at = data;
    Ok(Some(Payload {
        stream: num & 0x7F,
        key: num & 0x80 != 0,
        frag_off,
        obj_size,
        time,
        compressed,
        data,
        frag_size,
    }))
}

impl AsfDemuxer {
    /// The offset of a data packet whose objects start at or before
    /// presentation time `ts` (ms, preroll removed): from the simple index
    /// when there is one, else by a binary search over send times.
    fn packet_before<S: Source>(&self, src: &mut S, ts: i64) -> Result<u64> {
        let start = self.lay.data_start;
        if ts <= 0 || self.lay.packet_size == 0 {
            return Ok(start);
        }
        let psize = self.lay.packet_size as u64;
        let target = ts.saturating_add(self.lay.preroll).max(0) as u64;
        let packets = self.lay.data_end.min(src.len()).saturating_sub(start) / psize;
        if let Some(ix) = self.simple_index {
            // §6.1: entries at fixed time intervals, each the number of the
            // packet holding the key frame to start from.
            let head: [u8; 32] = src.array(ix.offset)?;
            let mut r = Rd::new(&head);
            r.guid();
            let interval = r.u64().unwrap_or(0);
            r.u32();
            let count = (r.u32().unwrap_or(0) as u64).min((ix.len as u64).saturating_sub(32) / 6);
            if interval > 0 && count > 0 {
                let i = (target.saturating_mul(10_000) / interval).min(count - 1);
                let e: [u8; 4] = src.array(ix.offset + 32 + i * 6)?;
                let n = u32::from_le_bytes(e) as u64;
                if n < packets.max(1) {
                    return Ok(start + n * psize);
                }
            }
        }
        if let Some(ix) = self.index {
            if let Some(p) = self.index_object_packet(src, ix, ts)? {
                return Ok(p);
            }
        }
        // Send times (§5.2.2) precede presentation times, so the last packet
        // sent at or before the target holds no object starting after it.
        let (mut lo, mut hi) = (0u64, packets);
        let mut steps = 0;
        while lo + 1 < hi && steps < 64 {
            steps += 1;
            let mid = lo + (hi - lo) / 2;
            let mut probe = Cursor {
                next_packet: start + mid * psize,
                ..Cursor::default()
            };
            let t = match load_packet(src, &self.lay, &mut probe) {
                Ok(true) => probe.send_time as u64,
                _ => break,
            };
            if t <= target {
                lo = mid;
            } else {
                hi = mid;
            }
        }
        Ok(start + lo * psize)
    }

    /// The data packet the Index Object (§6.2) gives for time `ts` (ms):
    /// entry `ts / interval` of the first index block, for the first
    /// specifier, relative to the first data packet.
    fn index_object_packet<S: Source>(&self, src: &mut S, ix: ByteRange, ts: i64) -> Result<Option<u64>> {
        let h: [u8; 10] = src.array(ix.offset)?;
        let interval = u32::from_le_bytes([h[0], h[1], h[2], h[3]]) as u64;
        let specs = u16::from_le_bytes([h[4], h[5]]) as u64;
        let blocks = u32::from_le_bytes([h[6], h[7], h[8], h[9]]);
        if interval == 0 || specs == 0 || blocks == 0 {
            return Ok(None);
        }
        let block = ix.offset + 10 + specs * 4;
        let end = ix.offset + ix.len as u64;
        let count = u32::from_le_bytes(src.array(block)?) as u64;
        let entries = block + 4 + specs * 8;
        if count == 0 || entries > end {
            return Ok(None);
        }
        let i = (ts.max(0) as u64 / interval).min(count - 1);
        let at = entries + i * specs * 4;
        if at + 4 > end {
            return Ok(None);
        }
        let base = u64::from_le_bytes(src.array(block + 4)?);
        let off = u32::from_le_bytes(src.array(at)?) as u64;
        let pos = self.lay.data_start.saturating_add(base).saturating_add(off);
        let psize = self.lay.packet_size.max(1) as u64;
        let pos = self.lay.data_start + (pos - self.lay.data_start) / psize * psize;
        if pos >= self.lay.data_end.min(src.len()) {
            return Ok(None);
        }
        Ok(Some(pos))
    }

    /// Walks payload headers from the packet at `from` for the last object
    /// of stream `number` (a key object when `key_only`) whose presentation
    /// time is at or before `ts`. Stops at the first later object.
    fn find_object<S: Source>(
        &self,
        src: &mut S,
        from: u64,
        number: u8,
        key_only: bool,
        ts: i64,
    ) -> Result<Option<SeekFilter>> {
        let mut cur = Cursor {
            next_packet: from,
            ..Cursor::default()
        };
        let mut best = None;
        let mut packets = 0u64;
        loop {
            if !cur.in_packet {
                packets += 1;
                let p = cur.next_packet;
                if p >= self.lay.data_end || p >= src.len() || packets > 10_000_000 {
                    return Ok(best);
                }
                match load_packet(src, &self.lay, &mut cur) {
                    Err(e) if e.is_truncation() => return Ok(best),
                    r => {
                        r?;
                    }
                }
                if cur.next_packet <= p {
                    return Ok(best);
                }
                continue;
            }
            if cur.size_left < FRAME_HEADER_SIZE || cur.segments < 1 {
                cur.in_packet = false;
                continue;
            }
            let p = match read_payload(src, &mut cur) {
                Err(e) if e.is_truncation() => return Ok(best),
                r => r?,
            };
            let Some(p) = p else {
                cur.in_packet = false;
                continue;
            };
            cur.at = p.data.saturating_add(p.frag_size as u64);
            cur.size_left -= p.frag_size as i64;
            if p.stream != number {
                continue;
            }
            let here = SeekFilter {
                slot: 0,
                packet: cur.packet,
                payload: cur.payload,
                sub: 0,
            };
            if let Some((start, delta)) = p.compressed {
                // Sub-payload k is presented at start + k * delta.
                let (Some(first), true) = ((start as i64).checked_sub(self.lay.preroll), p.key || !key_only) else {
                    continue;
                };
                if first > ts {
                    return Ok(best);
                }
                let k = if delta > 0 {
                    ts.saturating_sub(first) / delta as i64
                } else {
                    0
                };
                let mut count = 0i64;
                let mut at = p.data;
                let end = p.data.saturating_add(p.frag_size as u64);
                while at < end.min(src.len()) && count < 256 {
                    let b: [u8; 1] = src.array(at)?;
                    at = at.saturating_add(1 + b[0] as u64);
                    count += 1;
                }
                let k = k.min(count - 1).max(0);
                best = Some(SeekFilter { sub: k as u16, ..here });
                continue;
            }
            if p.frag_off != 0 {
                continue;
            }
            let Some(time) = p.time else { continue };
            if time as i64 - self.lay.preroll > ts {
                return Ok(best);
            }
            if p.key || !key_only {
                best = Some(here);
            }
        }
    }

    /// Reads one Stream Properties Object (§3.3) and adds its track.
    fn stream_properties<S: Source>(
        &mut self,
        src: &mut S,
        ctx: &mut Context,
        body: u64,
        size: u64,
        props: FileProperties,
    ) -> Result<()> {
        let _ = props;
        let (b, n) = read_small::<S, 54>(src, body)?;
        let mut r = Rd::new(b.get(..n).unwrap_or(&[]));
        let (Some(kind), Some(_ecc), Some(_offset), Some(ts_len), Some(ecc_len), Some(flags)) =
            (r.guid(), r.guid(), r.u64(), r.u32(), r.u32(), r.u16())
        else {
            return Err(Error::truncated(body, "Stream Properties Object cut short (ASF §3.3)"));
        };
        let _ = ecc_len;
        let number = (flags & 0x7F) as u8;
        let ts = body + 54;
        let Some(mut stype) = header::stream_type(&kind) else {
            ctx.diags.report("asf.unknown-stream-type", body);
            return Ok(());
        };
        if self.streams.iter().any(|s| s.number == number) {
            ctx.diags.report("asf.duplicate-stream", body);
            return Ok(());
        }
        let mut track = Track {
            id: number as u32,
            time_base: MS,
            ..Track::default()
        };
        let mut wave_at = ts;
        if stype == StreamType::Binary {
            // DVR-MS: a major type GUID, and for audio a media type block
            // (subtype, three DWORDs, format type, DWORD) before WAVEFORMATEX.
            let g: [u8; 16] = src.array(ts)?;
            if g == guids::BINARY_AUDIO {
                stype = StreamType::Audio;
                wave_at = ts + 64;
            }
        }
        let ts_end = ts.saturating_add(ts_len as u64);
        let obj_end = body.saturating_add(size.saturating_sub(24));
        let mut wma = None;
        let mut spread = None;
        match stype {
            StreamType::Audio => {
                let (wb, wn) = read_small::<S, 40>(src, wave_at)?;
                let f = header::parse_wave_format(wb.get(..wn).unwrap_or(&[]), wave_at, ts_len).ok_or(
                    Error::malformed(ts, "audio type-specific data is not a WAVEFORMATEX (ASF §9.1)"),
                )?;
                track.kind = TrackKind::Audio;
                track.codec = header::audio_codec(f.tag, f.bits);
                track.codec_tag = f.tag as u32;
                track.sample_rate = f.sample_rate;
                track.channels = f.channels;
                track.bits_per_sample = f.bits;
                track.block_align = f.block_align as u32;
                track.bit_rate = f.byte_rate.saturating_mul(8);
                track.config = f.extra.filter(|e| e.offset.saturating_add(e.len as u64) <= ts_end);
                if matches!(track.codec, Codec::Wmav1 | Codec::Wmav2)
                    && f.block_align > 1
                    && track.bit_rate > 0
                    && f.sample_rate > 0
                {
                    wma = Some((f.sample_rate, track.bit_rate));
                }
                // Audio spread error correction (§3.3, §9.1.1): ffmpeg
                // descrambles when the span is above 1.
                if ecc_len >= 8 && ts_end.saturating_add(8) <= obj_end {
                    let e: [u8; 5] = src.array(ts_end)?;
                    let span = e[0];
                    let psize = u16::from_le_bytes([e[1], e[2]]);
                    let chunk = u16::from_le_bytes([e[3], e[4]]);
                    if span > 1 && chunk > 0 && psize / chunk > 1 && psize % chunk == 0 {
                        spread = Some(Spread {
                            span: span as u32,
                            packet: psize as u32,
                            chunk: chunk as u32,
                        });
                    }
                }
            }
            StreamType::Video | StreamType::Jfif => {
                track.kind = TrackKind::Video;
                if stype == StreamType::Jfif {
                    track.codec = Codec::Mjpeg;
                }
                // §9.2: width, height, flags, format data size, then
                // BITMAPINFOHEADER (40 bytes) and codec-specific data.
                if obj_end.saturating_sub(ts) >= 51 {
                    let (vb, vn) = read_small::<S, 51>(src, ts)?;
                    let mut r = Rd::new(vb.get(..vn).unwrap_or(&[]));
                    let fields = (|| {
                        r.u32()?;
                        r.u32()?;
                        r.u8()?;
                        r.u16()?;
                        let bi_size = r.u32()?;
                        let w = r.u32()?;
                        let h = r.u32()?;
                        r.u16()?;
                        let depth = r.u16()?;
                        let fcc = r.u32()?;
                        Some((bi_size, w, h, depth, fcc))
                    })();
                    if let Some((bi_size, w, h, depth, fcc)) = fields {
                        track.width = w;
                        track.height = h;
                        track.bits_per_sample = depth;
                        let fourcc = fcc.to_le_bytes();
                        track.codec_tag = u32::from_be_bytes(fourcc);
                        if stype == StreamType::Video {
                            track.codec = header::video_codec(fourcc);
                        }
                        if bi_size > 40 {
                            let len = bi_size - 40;
                            let at = ts + 51;
                            if at.saturating_add(len as u64) <= obj_end {
                                track.config = Some(ByteRange { offset: at, len });
                            } else {
                                ctx.diags.report("asf.bad-codec-data", at);
                            }
                        }
                    }
                }
            }
            StreamType::Command | StreamType::Binary => {
                track.kind = TrackKind::Data;
            }
        }
        let audio = track.kind == TrackKind::Audio;
        let video = track.kind == TrackKind::Video;
        let Some(index) = ctx.add_track(track, body) else {
            return Ok(());
        };
        let st = StreamState {
            number,
            track: index,
            audio,
            video,
            wma,
            spread,
            last_obj_size: 0,
            skip_to_key: false,
            pending: Pending::default(),
        };
        if self.streams.push(st).is_err() {
            ctx.diags.report("asf.stream-capacity", body);
        }
        Ok(())
    }

    fn remember_tags(&mut self, ctx: &mut Context, kind: TagObject, body: u64, end: u64, file_len: u64, at: u64) {
        let end = end.min(file_len);
        if end <= body {
            return;
        }
        let r = ByteRange {
            offset: body,
            len: (end - body).min(u32::MAX as u64) as u32,
        };
        if self.tag_objects.push((kind, r)).is_err() {
            ctx.diags.report("asf.tag-object-capacity", at);
        }
    }

    /// Finds `WM/Picture` attributes in an extended content description
    /// (§3.11) or metadata (library) object (§4.7, §4.8) and adds one
    /// attached-picture track for each, as ffmpeg does.
    fn find_pictures<S: Source>(
        &mut self,
        src: &mut S,
        ctx: &mut Context,
        kind: TagObject,
        body: u64,
        end: u64,
    ) -> Result<()> {
        let mut it = Descriptors::new(src, kind, body, end)?;
        while let Some(dsc) = it.next(src)? {
            if dsc.kind != 1 || dsc.name_len < 20 {
                continue;
            }
            let mut nb = [0u8; 22];
            let take = (dsc.name_len as usize).min(22);
            let nbuf = nb.get_mut(..take).unwrap_or(&mut []);
            src.read_exact_at(dsc.name, nbuf)?;
            if !text::utf16_eq(nbuf, "WM/Picture") {
                continue;
            }
            self.picture(src, ctx, dsc.value, dsc.value_len)?;
        }
        Ok(())
    }

    /// Reads a WM/Picture value (type, size, MIME, description, data) of
    /// `len` bytes at `at`.
    fn picture<S: Source>(&mut self, src: &mut S, ctx: &mut Context, at: u64, len: u32) -> Result<()> {
        if len < 9 {
            ctx.diags.report("asf.bad-picture", at);
            return Ok(());
        }
        let h: [u8; 5] = src.array(at)?;
        let kind = if (h[0] as usize) < header::PICTURE_TYPES.len() {
            h[0]
        } else {
            0
        };
        let picsize = u32::from_le_bytes([h[1], h[2], h[3], h[4]]);
        let mut left = len - 5;
        let mut p = at + 5;
        // MIME type: NUL-terminated UTF-16LE, at most 32 units compared.
        let mut mime = [0u16; 32];
        let mut mlen = 0usize;
        let mut consumed = 0u32;
        while consumed + 2 <= left {
            let u: [u8; 2] = src.array(p + consumed as u64)?;
            consumed += 2;
            let u = u16::from_le_bytes(u);
            if u == 0 {
                break;
            }
            if let Some(m) = mime.get_mut(mlen) {
                *m = u;
                mlen += 1;
            }
        }
        left -= consumed;
        p += consumed as u64;
        let Some(codec) = header::picture_codec(mime.get(..mlen).unwrap_or(&[])) else {
            ctx.diags.report("asf.unknown-picture-type", at);
            return Ok(());
        };
        if picsize >= left {
            ctx.diags.report("asf.bad-picture", at);
            return Ok(());
        }
        let desc_max = left - picsize;
        let desc_at = p;
        let mut dlen = 0u32;
        let mut consumed = 0u32;
        while consumed + 2 <= desc_max {
            let u: [u8; 2] = src.array(p + consumed as u64)?;
            consumed += 2;
            if u == [0, 0] {
                break;
            }
            dlen += 2;
        }
        p += consumed as u64;
        if p.saturating_add(picsize as u64) > src.len() {
            ctx.diags.report("asf.bad-picture", at);
            return Ok(());
        }
        if self.pictures.is_full() {
            ctx.diags.report("asf.picture-capacity", at);
            return Ok(());
        }
        let t = Track {
            id: 0,
            kind: TrackKind::Video,
            codec,
            time_base: Rational::new(1, 90_000),
            attached_picture: true,
            ..Track::default()
        };
        let Some(track) = ctx.add_track(t, at) else {
            return Ok(());
        };
        let _ = self.pictures.push(Picture {
            track,
            data: p,
            len: picsize,
            kind,
            desc: ByteRange {
                offset: desc_at,
                len: dlen,
            },
        });
        Ok(())
    }

    /// Looks for a Simple Index Object after the data object (§6.1).
    fn find_index<S: Source>(&mut self, src: &mut S, ctx: &mut Context) {
        if self.lay.data_end == u64::MAX {
            return;
        }
        let mut at = self.lay.data_end;
        for _ in 0..16 {
            let Ok(h) = src.array::<24>(at) else { return };
            let mut r = Rd::new(&h);
            let g = r.guid().unwrap_or_default();
            let size = r.u64().unwrap_or(0);
            if size < 24 || at.saturating_add(size) > src.len() {
                if g == guids::SIMPLE_INDEX || g == guids::INDEX {
                    ctx.diags.report("asf.bad-index", at);
                }
                return;
            }
            if g == guids::INDEX && size >= 34 && self.index.is_none() {
                self.index = Some(ByteRange {
                    offset: at + 24,
                    len: (size - 24).min(u32::MAX as u64) as u32,
                });
            }
            if g == guids::SIMPLE_INDEX && size >= 56 && self.simple_index.is_none() {
                self.simple_index = Some(ByteRange {
                    offset: at + 24,
                    len: (size - 24).min(u32::MAX as u64) as u32,
                });
            }
            at += size;
        }
    }

    /// One step of the packet reader: loads a data packet, reads a payload or
    /// a sub-payload, or finishes a media object.
    fn step<S: Source>(&mut self, src: &mut S, ctx: &mut Context) -> Result<Step> {
        if self.truncated {
            return Err(truncated(src.len()));
        }
        if !self.cur.in_packet {
            let p = self.cur.next_packet;
            if p >= self.lay.data_end {
                return Ok(Step::End);
            }
            if p >= src.len() {
                if self.lay.data_end == u64::MAX {
                    return Ok(Step::End);
                }
                return Err(truncated(p));
            }
            if self.lay.packet_size == 0 && self.lay.min_packet_size == 0 && p > self.lay.data_start {
                return Ok(Step::End);
            }
            if !load_packet(src, &self.lay, &mut self.cur)? {
                ctx.diags.report("asf.bad-packet-header", p);
            }
            return Ok(Step::Continue);
        }
        let c = &mut self.cur;
        if c.size_left < FRAME_HEADER_SIZE || (c.segments < 1 && c.multi.is_none()) {
            c.in_packet = false;
            c.multi = None;
            return Ok(Step::Continue);
        }
        if let Some(mut m) = c.multi {
            if m.left < 1 {
                c.multi = None;
                return Ok(Step::Continue);
            }
            let b: [u8; 1] = src.array(c.at)?;
            let sub = b[0] as i64;
            c.at += 1;
            c.size_left -= 1;
            m.left -= 1;
            if m.left < sub {
                c.at = c.at.saturating_add(m.left as u64);
                c.size_left -= m.left;
                c.multi = None;
                return Ok(Step::Continue);
            }
            m.left -= sub;
            let time = m.time;
            m.time += m.delta as i64;
            if m.skip > 0 {
                m.skip -= 1;
                c.multi = Some(m);
                c.at = c.at.saturating_add(sub as u64);
                c.size_left -= sub;
                return Ok(Step::Continue);
            }
            c.multi = Some(m);
            let data = c.at;
            return self.fragment(src, ctx, m.slot, sub as u32, 0, data, sub as u32, m.key, time);
        }
        let Some(p) = read_payload(src, c)? else {
            ctx.diags.report("asf.bad-payload-header", c.at);
            c.segments = 0;
            c.in_packet = false;
            return Ok(Step::Continue);
        };
        if let Some(t) = p.time {
            c.last_time = t as i64;
        }
        let slot = self.streams.iter().position(|s| s.number == p.stream);
        let skip = match slot.and_then(|i| self.streams.get(i)) {
            None => true,
            Some(st) => !p.key && st.skip_to_key,
        };
        if skip {
            self.skip_payload(p.frag_size);
            return Ok(Step::Continue);
        }
        let Some(slot) = slot else {
            return Ok(Step::Continue);
        };
        let mut skip_subs = 0;
        if let Some(f) = self.seek_filter {
            if self.cur.packet != f.packet {
                self.seek_filter = None;
            } else if f.slot == slot {
                if self.cur.payload < f.payload {
                    self.skip_payload(p.frag_size);
                    return Ok(Step::Continue);
                }
                skip_subs = f.sub;
                self.seek_filter = None;
            }
        }
        let Some(st) = self.streams.get_mut(slot) else {
            return Ok(Step::Continue);
        };
        if p.frag_off == 0 {
            st.skip_to_key = false;
        }
        if let Some((start, delta)) = p.compressed {
            self.cur.multi = Some(Multi {
                slot,
                left: p.frag_size as i64,
                time: start as i64,
                delta,
                key: p.key,
                skip: skip_subs,
            });
            return Ok(Step::Continue);
        }
        if st.pending.received == 0 && p.frag_off != 0 {
            // The start of this object was not seen (ffmpeg skips it too).
            self.skip_payload(p.frag_size);
            return Ok(Step::Continue);
        }
        let obj = match p.obj_size {
            Some(s) => {
                st.last_obj_size = s;
                s
            }
            None => st.last_obj_size,
        };
        let time = self.cur.last_time;
        self.fragment(src, ctx, slot, obj, p.frag_off, p.data, p.frag_size, p.key, time)
    }

    fn skip_payload(&mut self, len: u32) {
        self.cur.at = self.cur.at.saturating_add(len as u64);
        self.cur.size_left -= len as i64;
    }

    /// Takes one fragment of a media object of stream `slot` (ffmpeg's
    /// `asf_parse_packet` rules: a new object starts when the size differs or
    /// the fragment does not fit; the object is complete when as many bytes
    /// as its size were received).
    #[allow(clippy::too_many_arguments)]
    fn fragment<S: Source>(
        &mut self,
        src: &mut S,
        ctx: &mut Context,
        slot: usize,
        obj_size: u32,
        frag_off: u32,
        data: u64,
        frag_size: u32,
        key: bool,
        time: i64,
    ) -> Result<Step> {
        let packet = self.cur.packet;
        let payload = self.cur.payload.saturating_sub(1);
        self.skip_payload(frag_size);
        let size_left = self.cur.size_left;
        let preroll = self.lay.preroll;
        let file_len = src.len();
        let Some(st) = self.streams.get_mut(slot) else {
            return Ok(Step::Continue);
        };
        let pend = &mut st.pending;
        if !pend.active || pend.size != obj_size || pend.received as u64 + frag_size as u64 > pend.size as u64 {
            if pend.active && pend.received > 0 {
                ctx.diags.report("asf.incomplete-object", data);
            }
            if obj_size > ctx.limits.max_packet {
                return Err(Error::limit(data, "ASF media object larger than Limits::max_packet"));
            }
            *pend = Pending {
                active: true,
                size: obj_size,
                received: 0,
                key: key || st.audio,
                dts: Some(time - preroll),
                pos: data,
                frags: heapless::Vec::new(),
                overflow: None,
                truncated: false,
            };
        }
        if size_left < 0 {
            return Ok(Step::Continue);
        }
        if frag_off >= pend.size || frag_size > pend.size - frag_off {
            ctx.diags.report("asf.bad-fragment", data);
            return Ok(Step::Continue);
        }
        let mut frag_size = frag_size;
        if data.saturating_add(frag_size as u64) > file_len {
            let avail = file_len.saturating_sub(data).min(frag_size as u64) as u32;
            // ffmpeg returns the object cut short at the end of the input. We
            // do so when the object is whole in this payload, so the short
            // packet is a prefix of the one the whole input gives; an object
            // in several fragments is dropped.
            if avail == 0 || frag_off != 0 || !pend.frags.is_empty() || frag_size != pend.size {
                return Err(truncated(data));
            }
            ctx.diags.report("asf.truncated-object", data);
            pend.size = avail;
            pend.truncated = true;
            frag_size = avail;
            self.truncated = true;
        }
        let f = Fragment {
            data,
            len: frag_size,
            off: frag_off,
        };
        if pend.overflow.is_none() && pend.frags.push(f).is_err() {
            pend.overflow = Some(Resume { packet, payload });
        }
        pend.received += frag_size;
        if pend.received < pend.size {
            return Ok(Step::Continue);
        }
        let done = Done {
            slot,
            size: pend.size,
            pending: core::mem::take(pend),
        };
        if done.size > self.max_object {
            ctx.diags.report("asf.object-above-declared-maximum", data);
            self.max_object = u32::MAX;
        }
        // When the input was cut, this object is delivered short and the next
        // call reports the truncation.
        Ok(Step::Done(done))
    }

    /// Hands out a completed media object: a slice when it is one whole
    /// fragment, else joined in scratch.
    fn deliver<'s, S: Source>(&mut self, src: &'s mut S, done: Done) -> Result<Option<Packet<'s>>> {
        let Some(st) = self.streams.get(done.slot) else {
            return Err(Error::malformed(0, "ASF stream slot"));
        };
        let track = st.track;
        let number = st.number;
        let duration = st.wma.map(|(rate, bits)| {
            let samples = done.size as u64 * 8 * rate as u64 / bits as u64;
            rescale(samples as i64, Rational::new(1, rate), MS).max(0) as u64
        });
        let p = &done.pending;
        let single = match p.frags.first() {
            Some(f) if p.frags.len() == 1 && p.overflow.is_none() && f.off == 0 && f.len == done.size => Some(*f),
            _ => None,
        };
        let flags = PacketFlags {
            keyframe: p.key,
            discard: false,
            truncated: p.truncated,
        };
        // The first fragment taken (a rejected payload may have opened the
        // object).
        let (dts, pos) = (p.dts, p.frags.first().map(|f| f.data).unwrap_or(p.pos));
        let size = done.size as usize;
        let spread = st
            .spread
            .filter(|d| !p.truncated && d.packet.checked_mul(d.span) == Some(done.size));
        if let Some(d) = spread {
            self.descramble(src, d, &done, single)?;
            let data = S::joined(&*src, size)?;
            return Ok(Some(Packet {
                track,
                pts: dts,
                dts,
                duration,
                flags,
                pos: Some(pos),
                contiguous: false,
                data,
            }));
        }
        if let Some(f) = single {
            let data = src.bytes(f.data, size)?;
            return Ok(Some(Packet {
                track,
                pts: dts,
                dts,
                duration,
                flags,
                pos: Some(pos),
                contiguous: true,
                data,
            }));
        }
        if size > src.scratch_len() {
            return Err(Error::new(
                ErrorKind::ScratchTooSmall,
                pos,
                "scratch too small to join a fragmented ASF media object",
            ));
        }
        self.join(src, &done, number, 0)?;
        let data = S::joined(&*src, size)?;
        Ok(Some(Packet {
            track,
            pts: dts,
            dts,
            duration,
            flags,
            pos: Some(pos),
            contiguous: false,
            data,
        }))
    }

    /// Joins the fragments of a completed object into scratch at `base`.
    fn join<S: Source>(&self, src: &mut S, done: &Done, number: u8, base: usize) -> Result<()> {
        let mut replay = Replay {
            received: 0,
            clean: false,
            size: done.size,
            base,
        };
        for f in done.pending.frags.iter() {
            replay.apply(src, *f)?;
        }
        if let Some(resume) = done.pending.overflow {
            self.rewalk(src, resume, number, &mut replay)?;
        }
        Ok(())
    }

    /// Undoes audio spread interleaving into scratch (ffmpeg's
    /// descrambling): output chunk `k` is source chunk [`Spread::source`].
    /// A fragmented object is joined after the output first, so scratch
    /// must hold twice the object.
    fn descramble<S: Source>(&self, src: &mut S, d: Spread, done: &Done, single: Option<Fragment>) -> Result<()> {
        let size = done.size as usize;
        let need = if single.is_some() { size } else { size.saturating_mul(2) };
        if need > src.scratch_len() {
            return Err(Error::new(
                ErrorKind::ScratchTooSmall,
                done.pending.pos,
                "scratch too small to descramble an ASF audio object",
            ));
        }
        let chunk = d.chunk as usize;
        let chunks = done.size / d.chunk;
        if let Some(f) = single {
            for k in 0..chunks {
                let from = f.data + d.source(k) as u64 * d.chunk as u64;
                src.gather(from, chunk, k as usize * chunk)?;
            }
            return Ok(());
        }
        let number = self.streams.get(done.slot).map(|s| s.number).unwrap_or(0);
        self.join(src, done, number, size)?;
        let mut buf = [0u8; 256];
        for k in 0..chunks as usize {
            let from = size + d.source(k as u32) as usize * chunk;
            let mut done_bytes = 0;
            while done_bytes < chunk {
                let n = (chunk - done_bytes).min(buf.len());
                let piece = S::joined(&*src, from + done_bytes + n)?
                    .get(from + done_bytes..from + done_bytes + n)
                    .unwrap_or(&[]);
                let dst = buf.get_mut(..n).unwrap_or(&mut []);
                dst.copy_from_slice(piece.get(..dst.len()).unwrap_or(&[]));
                src.put(k * chunk + done_bytes, buf.get(..n).unwrap_or(&[]))?;
                done_bytes += n;
            }
        }
        Ok(())
    }

    /// Finds the fragments of an object that did not fit the fragment table
    /// by reading the data packet and payload headers again from `resume`.
    fn rewalk<S: Source>(&self, src: &mut S, resume: Resume, number: u8, replay: &mut Replay) -> Result<()> {
        let mut cur = Cursor {
            next_packet: resume.packet,
            ..Cursor::default()
        };
        let mut first = true;
        while replay.received < replay.size {
            if !cur.in_packet {
                if cur.next_packet >= self.lay.data_end || cur.next_packet >= src.len() {
                    break;
                }
                let here = cur.next_packet;
                load_packet(src, &self.lay, &mut cur)?;
                if cur.next_packet <= here {
                    break;
                }
                continue;
            }
            if cur.size_left < FRAME_HEADER_SIZE || cur.segments < 1 {
                cur.in_packet = false;
                first = false;
                continue;
            }
            let index = cur.payload;
            let Some(p) = read_payload(src, &mut cur)? else {
                cur.in_packet = false;
                first = false;
                continue;
            };
            cur.at = p.data.saturating_add(p.frag_size as u64);
            cur.size_left -= p.frag_size as i64;
            if (first && index < resume.payload) || p.stream != number || p.compressed.is_some() {
                continue;
            }
            if cur.size_left < 0 || p.frag_off >= replay.size || p.frag_size > replay.size - p.frag_off {
                continue;
            }
            let len = (src.len().saturating_sub(p.data)).min(p.frag_size as u64) as u32;
            replay.apply(
                src,
                Fragment {
                    data: p.data,
                    len,
                    off: p.frag_off,
                },
            )?;
        }
        Ok(())
    }
}

/// Replays fragments into scratch as ffmpeg fills its packet: bytes land at
/// their offsets, and the first fragment out of order zeroes the rest.
struct Replay {
    received: u32,
    clean: bool,
    size: u32,
    /// Where in scratch the object goes.
    base: usize,
}

impl Replay {
    fn apply<S: Source>(&mut self, src: &mut S, f: Fragment) -> Result<()> {
        if f.off != self.received && !self.clean {
            let zeros = [0u8; 256];
            let mut at = self.received as usize;
            while at < self.size as usize {
                let n = (self.size as usize - at).min(zeros.len());
                src.put(self.base + at, zeros.get(..n).unwrap_or(&[]))?;
                at += n;
            }
            self.clean = true;
        }
        let len = f.len.min(self.size.saturating_sub(f.off));
        src.gather(f.data, len as usize, self.base + f.off as usize)?;
        self.received = self.received.saturating_add(len);
        Ok(())
    }
}

/// One attribute of an extended content description (§3.11) or metadata
/// object (§4.7): where its name and value are.
#[derive(Debug, Clone, Copy)]
struct Descriptor {
    name: u64,
    name_len: u32,
    kind: u16,
    value: u64,
    value_len: u32,
}

/// Walks the attributes of a tag object in place.
struct Descriptors {
    metadata: bool,
    at: u64,
    end: u64,
    left: u32,
}

impl Descriptors {
    fn new<S: Source>(src: &mut S, kind: TagObject, body: u64, end: u64) -> Result<Self> {
        let n: [u8; 2] = src.array(body)?;
        Ok(Descriptors {
            metadata: kind == TagObject::Metadata,
            at: body + 2,
            end: end.min(src.len()),
            left: u16::from_le_bytes(n) as u32,
        })
    }

    fn resume(kind: TagObject, at: u64, end: u64, left: u32) -> Self {
        Descriptors {
            metadata: kind == TagObject::Metadata,
            at,
            end,
            left,
        }
    }

    fn next<S: Source>(&mut self, src: &mut S) -> Result<Option<Descriptor>> {
        if self.left == 0 || self.at >= self.end {
            return Ok(None);
        }
        self.left -= 1;
        if self.metadata {
            // §4.7: language index, stream number, name length, data type,
            // data length (DWORD), name, data.
            if self.at.saturating_add(12) > self.end {
                self.left = 0;
                return Ok(None);
            }
            let h: [u8; 12] = src.array(self.at)?;
            let name_len = u16::from_le_bytes([h[4], h[5]]) as u32;
            let kind = u16::from_le_bytes([h[6], h[7]]);
            let value_len = u32::from_le_bytes([h[8], h[9], h[10], h[11]]);
            if value_len > u16::MAX as u32 {
                self.left = 0;
                return Ok(None);
            }
            let name = self.at + 12;
            let value = name + name_len as u64;
            self.at = value + value_len as u64;
            if self.at > self.end {
                self.left = 0;
                return Ok(None);
            }
            Ok(Some(Descriptor {
                name,
                name_len,
                kind,
                value,
                value_len,
            }))
        } else {
            // §3.11: name length, name, value type, value length, value.
            if self.at.saturating_add(2) > self.end {
                self.left = 0;
                return Ok(None);
            }
            let b: [u8; 2] = src.array(self.at)?;
            let mut name_len = u16::from_le_bytes(b) as u32;
            if name_len % 2 == 1 {
                // Old libavformat wrote the length one short.
                name_len += 1;
            }
            let name = self.at + 2;
            let t = name + name_len as u64;
            if t.saturating_add(4) > self.end {
                self.left = 0;
                return Ok(None);
            }
            let h: [u8; 4] = src.array(t)?;
            let kind = u16::from_le_bytes([h[0], h[1]]);
            let mut value_len = u16::from_le_bytes([h[2], h[3]]) as u32;
            if kind == 0 && value_len % 2 == 1 {
                value_len += 1;
            }
            let value = t + 4;
            self.at = value + value_len as u64;
            if self.at > self.end {
                self.left = 0;
                return Ok(None);
            }
            Ok(Some(Descriptor {
                name,
                name_len,
                kind,
                value,
                value_len,
            }))
        }
    }
}

/// Tag cursor stages: pictures, done, then one per tag object.
const STAGE_PICTURES: u32 = 1;
const STAGE_DONE: u32 = 2;
const STAGE_OBJECTS: u32 = 16;

/// Content Description fields (§3.10) with the keys ffmpeg gives them.
const CONTENT_KEYS: [(&str, &str); 4] = [
    ("title", "title"),
    ("author", "artist"),
    ("copyright", "copyright"),
    ("comment", "comment"),
];

impl AsfDemuxer {
    /// The tag walk: content description fields, then attributes of the
    /// extended content description and metadata objects, then the title
    /// and kind of each attached picture.
    ///
    /// Text is decoded into the source's scratch: a tag whose UTF-8 key and
    /// value do not fit there is skipped. Byte-array and GUID attributes are
    /// skipped (ffmpeg skips them too; `WM/Picture` becomes a track).
    fn tag_walk<'s, S: Source>(
        &mut self,
        src: &'s mut S,
        ctx: &Context,
        cur: &mut TagCursor,
    ) -> Result<Option<Tag<'s>>> {
        // Stages STAGE_OBJECTS + i walk tag object i: `end` is u64::MAX before
        // it starts, then the attributes left; `offset` is the next content
        // field index or attribute position.
        let mut guard = 0u32;
        loop {
            guard += 1;
            if guard > 1_000_000 {
                return Ok(None);
            }
            if cur.stage == 0 {
                cur.stage = STAGE_OBJECTS;
                cur.end = u64::MAX;
                cur.offset = 0;
                continue;
            }
            if cur.stage >= STAGE_OBJECTS {
                let index = (cur.stage - STAGE_OBJECTS) as usize;
                let Some(&(kind, range)) = self.tag_objects.get(index) else {
                    cur.stage = STAGE_PICTURES;
                    cur.offset = 0;
                    continue;
                };
                let obj_end = range.offset + range.len as u64;
                if cur.end == u64::MAX {
                    if kind == TagObject::Content {
                        cur.offset = 0;
                        cur.end = 0;
                    } else {
                        let it = Descriptors::new(src, kind, range.offset, obj_end)?;
                        cur.offset = it.at;
                        cur.end = it.left as u64;
                    }
                    continue;
                }
                if kind == TagObject::Content {
                    // Five WORD lengths, then the strings in order (§3.10).
                    let field = cur.offset as usize;
                    let Some(&(key, name)) = CONTENT_KEYS.get(field) else {
                        cur.stage += 1;
                        cur.end = u64::MAX;
                        continue;
                    };
                    cur.offset += 1;
                    let lens: [u8; 10] = src.array(range.offset)?;
                    let len_of = |i: usize| {
                        u16::from_le_bytes([
                            lens.get(2 * i).copied().unwrap_or(0),
                            lens.get(2 * i + 1).copied().unwrap_or(0),
                        ]) as u64
                    };
                    let mut at = range.offset + 10;
                    for i in 0..field {
                        at += len_of(i);
                    }
                    let len = len_of(field);
                    if len == 0 || at + len > obj_end || len > ctx.limits.max_tag_bytes as u64 {
                        continue;
                    }
                    let Some(n) = text::utf16_to_scratch(src, at, len as u32, 0)? else {
                        continue;
                    };
                    if n == 0 {
                        continue;
                    }
                    let v = core::str::from_utf8(S::joined(&*src, n)?).unwrap_or("");
                    return Ok(Some(Tag {
                        scope: TagScope::Format,
                        key: TagKey::Text(key),
                        name: Some(name),
                        value: TagValue::Text(v),
                    }));
                }
                let mut it = Descriptors::resume(kind, cur.offset, obj_end, cur.end as u32);
                let Some(dsc) = it.next(src)? else {
                    cur.stage += 1;
                    cur.end = u64::MAX;
                    continue;
                };
                cur.offset = it.at;
                cur.end = it.left as u64;
                let Some((klen, value)) = self.attribute(src, ctx, kind, dsc)? else {
                    continue;
                };
                let all = S::joined(&*src, klen + value.len())?;
                let (k, v) = all.split_at(klen.min(all.len()));
                let k = core::str::from_utf8(k).unwrap_or("");
                let value = match value {
                    Value::Int(i) => TagValue::Int(i),
                    Value::Text(_) => TagValue::Text(core::str::from_utf8(v).unwrap_or("")),
                };
                return Ok(Some(Tag {
                    scope: TagScope::Format,
                    key: TagKey::Text(k),
                    name: header::tag_name(k),
                    value,
                }));
            }
            if cur.stage == STAGE_PICTURES {
                let i = (cur.offset / 2) as usize;
                let second = cur.offset % 2 == 1;
                cur.offset += 1;
                let Some(p) = self.pictures.get(i).copied() else {
                    cur.stage = STAGE_DONE;
                    continue;
                };
                if second {
                    let kind = header::PICTURE_TYPES.get(p.kind as usize).copied().unwrap_or("Other");
                    return Ok(Some(Tag {
                        scope: TagScope::Track(p.track),
                        key: TagKey::Text("comment"),
                        name: Some("comment"),
                        value: TagValue::Text(kind),
                    }));
                }
                if p.desc.len == 0 {
                    continue;
                }
                let Some(n) = text::utf16_to_scratch(src, p.desc.offset, p.desc.len, 0)? else {
                    continue;
                };
                let v = core::str::from_utf8(S::joined(&*src, n)?).unwrap_or("");
                return Ok(Some(Tag {
                    scope: TagScope::Track(p.track),
                    key: TagKey::Text("title"),
                    name: Some("title"),
                    value: TagValue::Text(v),
                }));
            }
            return Ok(None);
        }
    }

    /// Decodes one attribute's name and value into scratch. Returns the key
    /// length and the value, or `None` to skip the attribute.
    fn attribute<S: Source>(
        &self,
        src: &mut S,
        ctx: &Context,
        kind: TagObject,
        d: Descriptor,
    ) -> Result<Option<(usize, Value)>> {
        if d.value_len > ctx.limits.max_tag_bytes || d.name_len > ctx.limits.max_tag_bytes {
            return Ok(None);
        }
        let Some(klen) = text::utf16_to_scratch(src, d.name, d.name_len, 0)? else {
            return Ok(None);
        };
        if klen == 0 {
            return Ok(None);
        }
        // ffmpeg takes AspectRatioX/Y as the sample aspect ratio, not as
        // tags, and skips XMP unless asked.
        let k = S::joined(&*src, klen)?;
        if k.starts_with(b"xmp") || k == b"AspectRatioX" || k == b"AspectRatioY" {
            return Ok(None);
        }
        let bool_bytes = if kind == TagObject::Metadata { 2 } else { 4 };
        let int_len = match d.kind {
            0 => {
                let Some(vlen) = text::utf16_to_scratch(src, d.value, d.value_len, klen)? else {
                    return Ok(None);
                };
                if vlen == 0 {
                    return Ok(None);
                }
                return Ok(Some((klen, Value::Text(vlen))));
            }
            2 => bool_bytes,
            3 => 4,
            4 => 8,
            5 => 2,
            _ => return Ok(None),
        };
        if d.value_len < int_len {
            return Ok(None);
        }
        let mut b = [0u8; 8];
        src.read_exact_at(d.value, b.get_mut(..int_len as usize).unwrap_or(&mut []))?;
        let v = u64::from_le_bytes(b);
        Ok(Some((klen, Value::Int(v.min(i64::MAX as u64) as i64))))
    }
}

#[derive(Debug, Clone, Copy)]
enum Value {
    Int(i64),
    /// UTF-8 length of the text after the key in scratch.
    Text(usize),
}

impl Value {
    fn len(&self) -> usize {
        match self {
            Value::Int(_) => 0,
            Value::Text(n) => *n,
        }
    }
}

#[cfg(test)]
mod tests {
    extern crate std;
    use super::guids::Guid;
    use super::*;
    use crate::{Demuxer, SliceSource};
    use std::vec::Vec;

    const PACKET: usize = 96;

    fn obj(g: Guid, body: &[u8]) -> Vec<u8> {
        let mut v = Vec::from(g);
        v.extend_from_slice(&((body.len() + 24) as u64).to_le_bytes());
        v.extend_from_slice(body);
        v
    }

    /// An audio stream with audio spread error correction data (§9.1.1).
    fn spread_props(number: u8, span: u8, packet: u16, chunk: u16) -> Vec<u8> {
        let mut o = stream_props(number, false);
        // Append the 8 bytes of error correction data and fix the sizes.
        o.extend_from_slice(&[span]);
        o.extend_from_slice(&packet.to_le_bytes());
        o.extend_from_slice(&chunk.to_le_bytes());
        o.extend_from_slice(&[0, 0, 0]);
        let size = o.len() as u64;
        o[16..24].copy_from_slice(&size.to_le_bytes());
        o[24 + 44..24 + 48].copy_from_slice(&8u32.to_le_bytes());
        o
    }

    fn stream_props(number: u8, video: bool) -> Vec<u8> {
        let mut b = Vec::new();
        b.extend_from_slice(&if video { guids::VIDEO_MEDIA } else { guids::AUDIO_MEDIA });
        b.extend_from_slice(&[0; 16]); // error correction type
        b.extend_from_slice(&0u64.to_le_bytes());
        let ts: Vec<u8> = if video {
            let mut t = Vec::new();
            t.extend_from_slice(&32u32.to_le_bytes());
            t.extend_from_slice(&16u32.to_le_bytes());
            t.push(2);
            t.extend_from_slice(&40u16.to_le_bytes());
            t.extend_from_slice(&40u32.to_le_bytes());
            t.extend_from_slice(&32u32.to_le_bytes());
            t.extend_from_slice(&16u32.to_le_bytes());
            t.extend_from_slice(&1u16.to_le_bytes());
            t.extend_from_slice(&24u16.to_le_bytes());
            t.extend_from_slice(b"WMV2");
            t.extend_from_slice(&[0; 20]);
            t
        } else {
            let mut t = Vec::new();
            t.extend_from_slice(&0x161u16.to_le_bytes());
            t.extend_from_slice(&2u16.to_le_bytes());
            t.extend_from_slice(&44100u32.to_le_bytes());
            t.extend_from_slice(&16000u32.to_le_bytes());
            t.extend_from_slice(&743u16.to_le_bytes());
            t.extend_from_slice(&16u16.to_le_bytes());
            t.extend_from_slice(&0u16.to_le_bytes());
            t
        };
        b.extend_from_slice(&(ts.len() as u32).to_le_bytes());
        b.extend_from_slice(&0u32.to_le_bytes());
        b.extend_from_slice(&(number as u16).to_le_bytes());
        b.extend_from_slice(&0u32.to_le_bytes());
        b.extend_from_slice(&ts);
        obj(guids::STREAM_PROPERTIES, &b)
    }

    /// A payload of a multiple-payload packet (property byte 0x5D: BYTE
    /// stream, BYTE object number, DWORD offset, BYTE replicated length;
    /// WORD payload lengths).
    struct Pl<'a> {
        stream: u8,
        key: bool,
        obj: u8,
        off: u32,
        obj_size: u32,
        time: u32,
        data: &'a [u8],
    }

    fn packet(payloads: &[Pl]) -> Vec<u8> {
        let mut p = std::vec![0x82, 0, 0]; // error correction: 2 bytes
        p.push(0x01 | (2 << 3)); // multiple payloads, WORD padding
        p.push(0x5D);
        let pad_at = p.len();
        p.extend_from_slice(&0u16.to_le_bytes());
        p.extend_from_slice(&1000u32.to_le_bytes());
        p.extend_from_slice(&0u16.to_le_bytes());
        p.push(0x80 | payloads.len() as u8);
        for pl in payloads {
            p.push(pl.stream | if pl.key { 0x80 } else { 0 });
            p.push(pl.obj);
            p.extend_from_slice(&pl.off.to_le_bytes());
            p.push(8);
            p.extend_from_slice(&pl.obj_size.to_le_bytes());
            p.extend_from_slice(&pl.time.to_le_bytes());
            p.extend_from_slice(&(pl.data.len() as u16).to_le_bytes());
            p.extend_from_slice(pl.data);
        }
        assert!(p.len() <= PACKET);
        let pad = (PACKET - p.len()) as u16;
        p[pad_at..pad_at + 2].copy_from_slice(&pad.to_le_bytes());
        p.resize(PACKET, 0);
        p
    }

    /// A packet with one compressed payload (§5.2.3.3) of `subs`.
    fn compressed(stream: u8, time: u32, delta: u8, subs: &[&[u8]]) -> Vec<u8> {
        let mut p = std::vec![0x01 | (2 << 3), 0x5D]; // no error correction data
        let pad_at = p.len();
        p.extend_from_slice(&0u16.to_le_bytes());
        p.extend_from_slice(&1000u32.to_le_bytes());
        p.extend_from_slice(&0u16.to_le_bytes());
        p.push(0x81);
        p.push(stream | 0x80);
        p.push(0);
        p.extend_from_slice(&time.to_le_bytes());
        p.push(1);
        p.push(delta);
        let total: usize = subs.iter().map(|s| s.len() + 1).sum();
        p.extend_from_slice(&(total as u16).to_le_bytes());
        for s in subs {
            p.push(s.len() as u8);
            p.extend_from_slice(s);
        }
        let pad = (PACKET - p.len()) as u16;
        p[pad_at..pad_at + 2].copy_from_slice(&pad.to_le_bytes());
        p.resize(PACKET, 0);
        p
    }

    fn file(streams: &[Vec<u8>], packets: &[Vec<u8>]) -> Vec<u8> {
        let mut fp = Vec::new();
        fp.extend_from_slice(&[0; 16]);
        fp.extend_from_slice(&0u64.to_le_bytes()); // file size: unknown
        fp.extend_from_slice(&0u64.to_le_bytes());
        fp.extend_from_slice(&(packets.len() as u64).to_le_bytes());
        fp.extend_from_slice(&(10_000_000u64 * 4).to_le_bytes());
        fp.extend_from_slice(&0u64.to_le_bytes());
        fp.extend_from_slice(&1000u64.to_le_bytes()); // preroll
        fp.extend_from_slice(&2u32.to_le_bytes());
        fp.extend_from_slice(&(PACKET as u32).to_le_bytes());
        fp.extend_from_slice(&(PACKET as u32).to_le_bytes());
        fp.extend_from_slice(&128_000u32.to_le_bytes());
        let mut children = obj(guids::FILE_PROPERTIES, &fp);
        for s in streams {
            children.extend_from_slice(s);
        }
        let mut f = Vec::from(guids::HEADER);
        f.extend_from_slice(&((30 + children.len()) as u64).to_le_bytes());
        f.extend_from_slice(&(1 + streams.len() as u32).to_le_bytes());
        f.extend_from_slice(&[1, 2]);
        f.extend_from_slice(&children);
        let mut data = Vec::from(guids::DATA);
        data.extend_from_slice(&((50 + packets.len() * PACKET) as u64).to_le_bytes());
        data.extend_from_slice(&[0; 16]);
        data.extend_from_slice(&(packets.len() as u64).to_le_bytes());
        data.extend_from_slice(&[1, 1]);
        for p in packets {
            data.extend_from_slice(p);
        }
        f.extend_from_slice(&data);
        f
    }

    type Got = Vec<(usize, Option<i64>, bool, bool, Vec<u8>)>;

    fn pull(f: &[u8]) -> (Got, Option<Error>) {
        let mut scratch = std::vec![0u8; 4096];
        let mut d = Demuxer::open(SliceSource::with_scratch(f, &mut scratch), None).unwrap();
        let mut out = Vec::new();
        let err = loop {
            match d.next_packet() {
                Ok(Some(p)) => out.push((p.track, p.pts, p.flags.keyframe, p.contiguous, p.data.to_vec())),
                Ok(None) => break None,
                Err(e) => break Some(e),
            }
        };
        (out, err)
    }

    #[test]
    fn object_in_many_fragments_is_joined() {
        // A 100-byte video object in 10 fragments, one per packet, with an
        // audio payload in between: more fragments than the table holds.
        let obj: Vec<u8> = (0..100u8).collect();
        let audio = [7u8; 12];
        let mut packets = Vec::new();
        for i in 0..10u32 {
            let frag = Pl {
                stream: 1,
                key: true,
                obj: 3,
                off: i * 10,
                obj_size: 100,
                time: 1040,
                data: &obj[(i * 10) as usize..(i * 10 + 10) as usize],
            };
            if i == 4 {
                let a = Pl {
                    stream: 2,
                    key: false,
                    obj: 0,
                    off: 0,
                    obj_size: 12,
                    time: 1000,
                    data: &audio,
                };
                packets.push(packet(&[a, frag]));
            } else {
                packets.push(packet(&[frag]));
            }
        }
        let f = file(&[stream_props(1, true), stream_props(2, false)], &packets);
        let (got, err) = pull(&f);
        assert!(err.is_none());
        assert_eq!(got.len(), 2);
        // The audio object completes first; audio is always a key frame.
        assert_eq!(got[0], (1, Some(0), true, true, audio.to_vec()));
        assert_eq!(got[1], (0, Some(40), true, false, obj));
    }

    #[test]
    fn compressed_payload_gives_one_packet_per_sub_payload() {
        let packets = [compressed(1, 1100, 20, &[&[1, 2, 3, 4, 5, 6, 7], &[8; 9], &[9; 7]])];
        let f = file(&[stream_props(1, false)], &packets);
        let (got, err) = pull(&f);
        assert!(err.is_none());
        let pts: Vec<_> = got.iter().map(|g| g.1).collect();
        assert_eq!(pts, [Some(100), Some(120), Some(140)]);
        assert_eq!(got[1].4, [8; 9]);
        assert!(got.iter().all(|g| g.3));
    }

    #[test]
    fn cut_object_is_delivered_short_then_truncation() {
        let obj = [5u8; 30];
        let p = packet(&[Pl {
            stream: 1,
            key: true,
            obj: 0,
            off: 0,
            obj_size: 30,
            time: 1000,
            data: &obj,
        }]);
        let f = file(&[stream_props(1, false)], &[p]);
        let cut = f.len() - PACKET + 40; // inside the payload
        let mut scratch = std::vec![0u8; 4096];
        let mut d = Demuxer::open(SliceSource::with_scratch(&f[..cut], &mut scratch), None).unwrap();
        let p = d.next_packet().unwrap().unwrap();
        assert!(p.flags.truncated && p.contiguous && p.data.len() < 30);
        assert!(d.next_packet().unwrap_err().is_truncation());
    }

    #[test]
    fn audio_spread_is_undone() {
        // Span 2, virtual packets of 8 bytes, chunks of 4: output chunks are
        // source chunks 0, 2, 1, 3.
        let obj: Vec<u8> = (0..16u8).collect();
        let want: Vec<u8> = [0..4, 8..12, 4..8, 12..16]
            .into_iter()
            .flat_map(|r| obj[r].to_vec())
            .collect();
        let whole = packet(&[Pl {
            stream: 1,
            key: true,
            obj: 0,
            off: 0,
            obj_size: 16,
            time: 1000,
            data: &obj,
        }]);
        let halves: Vec<Vec<u8>> = (0..2u32)
            .map(|i| {
                packet(&[Pl {
                    stream: 1,
                    key: true,
                    obj: 1,
                    off: i * 8,
                    obj_size: 16,
                    time: 1020,
                    data: &obj[(i * 8) as usize..(i * 8 + 8) as usize],
                }])
            })
            .collect();
        let f = file(
            &[spread_props(1, 2, 8, 4)],
            &[whole, halves[0].clone(), halves[1].clone()],
        );
        let (got, err) = pull(&f);
        assert!(err.is_none());
        assert_eq!(got.len(), 2);
        assert_eq!(got[0].4, want);
        assert_eq!(got[1].4, want);
    }

    #[test]
    fn index_object_gives_a_start_packet() {
        let objs: Vec<[u8; 10]> = (0..12u8).map(|i| [i; 10]).collect();
        let packets: Vec<Vec<u8>> = (0..12u32)
            .map(|i| {
                packet(&[Pl {
                    stream: 1,
                    key: true,
                    obj: i as u8,
                    off: 0,
                    obj_size: 10,
                    time: 1000 + i * 100,
                    data: &objs[i as usize],
                }])
            })
            .collect();
        let mut f = file(&[stream_props(1, false)], &packets);
        // Index Object (§6.2): 300 ms entries, one specifier, one block.
        let mut ix = Vec::new();
        ix.extend_from_slice(&300u32.to_le_bytes());
        ix.extend_from_slice(&1u16.to_le_bytes());
        ix.extend_from_slice(&1u32.to_le_bytes());
        ix.extend_from_slice(&1u16.to_le_bytes());
        ix.extend_from_slice(&3u16.to_le_bytes());
        ix.extend_from_slice(&4u32.to_le_bytes());
        ix.extend_from_slice(&0u64.to_le_bytes());
        for k in 0..4u32 {
            ix.extend_from_slice(&(k * 3 * PACKET as u32).to_le_bytes());
        }
        f.extend_from_slice(&obj(guids::INDEX, &ix));
        let mut ctx = Context::default();
        let mut src = SliceSource::new(&f);
        let d = AsfDemuxer::open(&mut src, &mut ctx).unwrap();
        let ixr = d.index.unwrap();
        let p = d.index_object_packet(&mut src, ixr, 950).unwrap().unwrap();
        assert_eq!(p, d.lay.data_start + 9 * PACKET as u64);
        let mut scratch = std::vec![0u8; 256];
        let mut dm = Demuxer::open(SliceSource::with_scratch(&f, &mut scratch), None).unwrap();
        dm.seek(0, 950).unwrap();
        assert_eq!(dm.next_packet().unwrap().unwrap().pts, Some(900));
    }

    #[test]
    fn fragment_without_its_start_is_skipped() {
        let obj = [1u8; 20];
        let packets = [
            packet(&[Pl {
                stream: 1,
                key: true,
                obj: 0,
                off: 10,
                obj_size: 20,
                time: 1000,
                data: &obj[10..],
            }]),
            packet(&[Pl {
                stream: 1,
                key: true,
                obj: 1,
                off: 0,
                obj_size: 20,
                time: 1010,
                data: &obj,
            }]),
        ];
        let f = file(&[stream_props(1, false)], &packets);
        let (got, _) = pull(&f);
        assert_eq!(got.len(), 1);
        assert_eq!(got[0].1, Some(10));
    }
}
