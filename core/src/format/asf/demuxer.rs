//! The ASF demuxer: its state, [`FormatDemuxer`] for it, and the packet
//! reader's step over data packets, payloads and sub-payloads (ASF
//! Specification rev 1.20 §5.2).

use super::attributes::TagObject;
use super::data_packet::{
    load_packet, read_payload, truncated, Cursor, Layout, Multi, Payload, FRAME_HEADER_SIZE, MAX_OBJECT_SIZE,
    MAX_PACKET_LENGTH,
};
use super::header::{check_header_object, FileProperties, HeaderWalk};
use super::index::SeekFilter;
use super::layout::{DataObjectHeader, DATA_HEADER};
use super::pictures::{Picture, MAX_PICTURES};
use super::reassembly::Step;
use super::streams::{StreamState, KEPT_STREAMS};
use super::tags::MAX_TAG_OBJECTS;
use crate::error::{Error, Result};
use crate::format::traits::{Context, FormatDemuxer};
use crate::source::Source;
use crate::tags::{Tag, TagCursor};
use crate::types::{ByteRange, Packet, PacketFlags, Rational};

/// ASF timestamps are milliseconds.
pub(super) const MS: Rational = Rational::new(1, 1000);

/// Demuxer state for ASF.
#[derive(Debug, Clone)]
pub struct AsfDemuxer {
    pub(super) lay: Layout,
    pub(super) cur: Cursor,
    pub(super) streams: heapless::Vec<StreamState, KEPT_STREAMS>,
    pub(super) pictures: heapless::Vec<Picture, MAX_PICTURES>,
    pub(super) next_picture: usize,
    pub(super) tag_objects: heapless::Vec<(TagObject, ByteRange), MAX_TAG_OBJECTS>,
    pub(super) simple_index: Option<ByteRange>,
    pub(super) index: Option<ByteRange>,
    pub(super) max_object: u32,
    pub(super) truncated: bool,
    pub(super) seek_filter: Option<SeekFilter>,
    /// The walk over the pieces of the object last handed out in pieces.
    #[cfg(feature = "asf-pieces")]
    pub(super) walk: super::frag_walk::FragWalk,
    /// `deliver` gives only the facts of the object (its caller,
    /// `deliver_pieces`, leaves it in pieces).
    #[cfg(feature = "asf-pieces")]
    pub(super) scatter: bool,
}

impl FormatDemuxer for AsfDemuxer {
    fn open<S: Source>(src: &mut S, ctx: &mut Context) -> Result<Self> {
        check_header_object(src)?;
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
            #[cfg(feature = "asf-pieces")]
            walk: super::frag_walk::FragWalk::default(),
            #[cfg(feature = "asf-pieces")]
            scatter: false,
        };
        let walk = d.walk_header(src, ctx)?;
        let data_at = walk.data_at;
        let props = walk.props.ok_or(Error::malformed(
            data_at,
            &"asf header: no File Properties Object (ASF 1.20 §3.2)",
        ))?;
        if d.streams.is_empty() && d.pictures.is_empty() {
            return Err(Error::malformed(
                data_at,
                &"asf header: no Stream Properties Object (ASF 1.20 §3.3)",
            ));
        }
        d.data_layout(src, ctx, &props, &walk)?;
        d.durations(src, ctx, &props);
        d.declared_max_object(&walk);
        d.leak_rates(ctx, &walk);
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
            return Ok(Some(
                Packet::contiguous(p.track, p.data, data).with_flags(PacketFlags::keyframe(true)),
            ));
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

    /// With `asf-pieces`: an object in fragments that arrived in order is
    /// left in them (see `frag_walk.rs`).
    #[cfg(feature = "asf-pieces")]
    fn next_packet_pieces<'s, S: Source>(
        &'s mut self,
        src: &'s mut S,
        ctx: &mut Context,
    ) -> Result<Option<crate::pieces::PacketPieces<'s, S>>> {
        if self.next_picture < self.pictures.len() {
            return Ok(self.next_packet(src, ctx)?.map(crate::pieces::PacketPieces::whole));
        }
        match self.next_done(src, ctx)? {
            Some(done) => self.deliver_pieces(src, done),
            None => Ok(None),
        }
    }

    /// Lands on the media object of `track` that holds `ts` (audio) or on
    /// the last key object at or before `ts` (video): a packet found with the
    /// simple index (§6.1) or a binary search over send times (§5.2.2), then
    /// a walk over payload headers to the exact object. Earlier objects of
    /// the track in that packet are skipped; other tracks resume with their
    /// next whole object (video at a key frame).
    fn seek<S: Source>(&mut self, src: &mut S, ctx: &mut Context, track: usize, ts: i64) -> Result<()> {
        self.seek_to(src, ctx, track, ts)
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
    /// declare (§4.1), or `None` when a stream declares none. It bounds
    /// every packet: a larger object is skipped
    /// (`asf.object-above-declared-maximum`).
    fn max_packet_size(&self) -> Option<usize> {
        if self.max_object == u32::MAX {
            None
        } else {
            Some(self.max_object as usize)
        }
    }
}

impl AsfDemuxer {
    /// Sets the packet layout from the file properties and the Data Object
    /// header (§5.1) at `walk.data_at`.
    fn data_layout<S: Source>(
        &mut self,
        src: &mut S,
        ctx: &mut Context,
        props: &FileProperties,
        walk: &HeaderWalk,
    ) -> Result<()> {
        let file_len = src.len();
        let data_at = walk.data_at;
        let data_start = data_at + DATA_HEADER;
        if data_start > file_len {
            return Err(Error::truncated(
                data_at,
                &"asf data object: header cut short (ASF 1.20 §5.1)",
            ));
        }
        let data_size = src.read::<DataObjectHeader>(data_at)?.size.get();
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
        self.lay = Layout {
            packet_size: props.max_packet_size,
            min_packet_size: props.min_packet_size,
            data_start,
            data_end,
            preroll: props.preroll as i64,
        };
        self.cur.next_packet = data_start;
        if props.max_packet_size == 0 || props.max_packet_size >= MAX_PACKET_LENGTH {
            ctx.diags.report("asf.bad-packet-size", data_at);
        }
        Ok(())
    }

    /// Stream and file durations as ffmpeg gives them: play duration minus
    /// preroll, when the file size agrees with the file properties.
    fn durations<S: Source>(&self, src: &S, ctx: &mut Context, props: &FileProperties) {
        let file_len = src.len();
        let size_ok = props.file_size == 0 || file_len.abs_diff(props.file_size) < file_len.min(props.file_size) / 20;
        let duration_ms = (props.play_duration / 10_000).saturating_sub(props.preroll);
        for t in ctx.tracks.iter_mut() {
            if !props.broadcast() && size_ok && t.time_base == MS {
                t.duration = Some(duration_ms);
            }
        }
        if !props.broadcast() && size_ok {
            ctx.info.duration_us = Some(duration_ms.saturating_mul(1000));
        }
    }

    /// The largest packet, known when every stream declares its Maximum
    /// Object Size (§4.1).
    fn declared_max_object(&mut self, walk: &HeaderWalk) {
        let mut declared = self.pictures.iter().map(|p| p.len).max().unwrap_or(0);
        for s in self.streams.iter() {
            match walk.leaks.iter().find(|l| l.number == s.number) {
                Some(l) if l.max_object > 0 && l.max_object < MAX_OBJECT_SIZE => declared = declared.max(l.max_object),
                _ => declared = u32::MAX,
            }
        }
        if declared != u32::MAX && self.streams.iter().any(|s| s.spread.is_some()) {
            // A fragmented scrambled object is joined beside its output.
            declared = declared.saturating_mul(2);
        }
        self.max_object = declared;
    }

    /// The leak rate (§4.1) as the bit rate of a track that has none.
    fn leak_rates(&self, ctx: &mut Context, walk: &HeaderWalk) {
        for s in self.streams.iter() {
            if let Some(l) = walk.leaks.iter().find(|l| l.number == s.number) {
                if let Some(t) = ctx.tracks.get_mut(s.track) {
                    if t.bit_rate == 0 {
                        t.bit_rate = l.rate;
                    }
                }
            }
        }
    }

    /// One step of the packet reader: loads a data packet, reads a payload or
    /// a sub-payload, or finishes a media object.
    pub(super) fn step<S: Source>(&mut self, src: &mut S, ctx: &mut Context) -> Result<Step> {
        if self.truncated {
            return Err(truncated(src.len()));
        }
        if !self.cur.in_packet {
            return self.enter_packet(src, ctx);
        }
        let c = &mut self.cur;
        if c.size_left < FRAME_HEADER_SIZE || (c.segments < 1 && c.multi.is_none()) {
            c.in_packet = false;
            c.multi = None;
            return Ok(Step::Continue);
        }
        if let Some(m) = c.multi {
            return self.sub_payload(src, ctx, m);
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
        self.payload(src, ctx, p)
    }

    /// Loads the data packet at `cur.next_packet`, or ends the data.
    fn enter_packet<S: Source>(&mut self, src: &mut S, ctx: &mut Context) -> Result<Step> {
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
        Ok(Step::Continue)
    }

    /// The next sub-payload of the compressed payload `m` (§5.2.3.3): a
    /// length BYTE, then that many bytes of one media object.
    fn sub_payload<S: Source>(&mut self, src: &mut S, ctx: &mut Context, mut m: Multi) -> Result<Step> {
        let c = &mut self.cur;
        if m.left < 1 {
            c.multi = None;
            return Ok(Step::Continue);
        }
        let [len]: [u8; 1] = src.array(c.at)?;
        let sub = len as i64;
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
        self.fragment(src, ctx, m.slot, sub as u32, 0, data, sub as u32, m.key, time)
    }

    /// Takes payload `p`: skips it (unknown stream, waiting for a key
    /// frame, before the seek target), starts a compressed payload, or
    /// passes its fragment on.
    fn payload<S: Source>(&mut self, src: &mut S, ctx: &mut Context, p: Payload) -> Result<Step> {
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

    /// Passes over `len` payload bytes in the current data packet.
    pub(super) fn skip_payload(&mut self, len: u32) {
        self.cur.at = self.cur.at.saturating_add(len as u64);
        self.cur.size_left -= len as i64;
    }
}
