//! Media objects (ASF Specification rev 1.20 §5.2.3): fragments of one
//! object gathered across payloads and data packets by ffmpeg's rules, the
//! completed object handed out as a slice or joined in scratch, and audio
//! spread descrambling (§9.1.1).

use super::data_packet::{load_packet, read_payload, truncated, Cursor, FRAME_HEADER_SIZE};
use super::demuxer::{AsfDemuxer, MS};
use crate::error::{Error, ErrorKind, Result};
use crate::format::traits::Context;
use crate::source::Source;
use crate::types::{rescale, Packet, PacketFlags, Rational};

/// Fragments of one pending media object remembered in place; an object in
/// more fragments is completed by reading the later packet headers again once
/// (see `docs/formats/asf.md`).
pub const MAX_FRAGMENTS: usize = 8;

/// One fragment of a media object: where its bytes are and where they go.
#[derive(Debug, Clone, Copy, Default)]
pub(super) struct Fragment {
    pub data: u64,
    pub len: u32,
    pub off: u32,
}

/// Where the fragments that did not fit the table start: a data packet and
/// payload (counted from 0).
#[derive(Debug, Clone, Copy)]
pub(super) struct Resume {
    pub packet: u64,
    pub payload: u16,
}

/// A media object being received in fragments.
#[derive(Debug, Clone, Default)]
pub(super) struct Pending {
    pub active: bool,
    pub size: u32,
    pub received: u32,
    pub key: bool,
    pub dts: Option<i64>,
    pub pos: u64,
    pub frags: heapless::Vec<Fragment, MAX_FRAGMENTS>,
    pub overflow: Option<Resume>,
    /// The input ends inside this object: it is delivered short.
    pub truncated: bool,
}

/// The audio spread error correction parameters (§3.3, §9.1.1): an object
/// of `span` virtual packets of `packet` bytes, interleaved in `chunk`-byte
/// pieces.
#[derive(Debug, Clone, Copy)]
pub(super) struct Spread {
    pub span: u32,
    pub packet: u32,
    pub chunk: u32,
}

impl Spread {
    /// The source chunk of output chunk `k`, as ffmpeg reorders it.
    fn source(&self, k: u32) -> u32 {
        let row = k / self.span;
        let col = k % self.span;
        row + col * (self.packet / self.chunk)
    }
}

/// The largest object of a stream that `max_packet_size` (`max_object`, the
/// largest Maximum Object Size declared, §4.1, doubled when a stream is
/// spread) allows: a spread object needs twice its size of scratch, so it
/// may be half as large. No bound when nothing was declared (`u32::MAX`).
fn object_bound(max_object: u32, spread: bool) -> u32 {
    match (max_object, spread) {
        (u32::MAX, _) => u32::MAX,
        (m, true) => m / 2,
        (m, false) => m,
    }
}

/// A completed media object, ready to be handed out.
#[derive(Debug, Clone)]
pub(super) struct Done {
    pub slot: usize,
    pub size: u32,
    pub pending: Pending,
}

/// What one step of the packet reader gives.
// A completed object is moved out once per packet; no boxing in no_std.
#[allow(clippy::large_enum_variant)]
pub(super) enum Step {
    Continue,
    End,
    Done(Done),
}

impl AsfDemuxer {
    /// Takes one fragment of a media object of stream `slot` (ffmpeg's
    /// `asf_parse_packet` rules: a new object starts when the size differs or
    /// the fragment does not fit; the object is complete when as many bytes
    /// as its size were received).
    #[allow(clippy::too_many_arguments)]
    pub(super) fn fragment<S: Source>(
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
        let max_object = self.max_object;
        let Some(st) = self.streams.get_mut(slot) else {
            return Ok(Step::Continue);
        };
        let bound = object_bound(max_object, st.spread.is_some());
        let pend = &mut st.pending;
        if !pend.active || pend.size != obj_size || pend.received as u64 + frag_size as u64 > pend.size as u64 {
            if pend.active && pend.received > 0 {
                ctx.diags.report("asf.incomplete-object", data);
            }
            if obj_size > ctx.limits.max_packet {
                return Err(Error::limit(
                    data,
                    &"asf media object: larger than Limits::max_packet (ASF 1.20 §5.2.3)",
                ));
            }
            if obj_size > bound {
                // `max_packet_size` promised no larger packet (a reader may
                // have sized its scratch by it): the object is skipped, and
                // its later fragments with it (they do not start at 0).
                ctx.diags.report("asf.object-above-declared-maximum", data);
                *pend = Pending::default();
                return Ok(Step::Continue);
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
        // When the input was cut, this object is delivered short and the next
        // call reports the truncation.
        Ok(Step::Done(done))
    }

    /// The next completed media object, or `None` at the end of the data
    /// (`next_packet`'s loop, for the pieces).
    #[cfg(feature = "asf-pieces")]
    pub(super) fn next_done<S: Source>(&mut self, src: &mut S, ctx: &mut Context) -> Result<Option<Done>> {
        loop {
            match self.step(src, ctx)? {
                Step::Continue => {}
                Step::End => return Ok(None),
                Step::Done(d) => return Ok(Some(d)),
            }
        }
    }

    /// Hands out a completed media object: a slice when it is one whole
    /// fragment, else joined in scratch.
    pub(super) fn deliver<'s, S: Source>(&mut self, src: &'s mut S, done: Done) -> Result<Option<Packet<'s>>> {
        let Some(st) = self.streams.get(done.slot) else {
            return Err(Error::malformed(
                0,
                &"asf media object: no stream state for its slot (ASF 1.20 §5.2.3)",
            ));
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
            truncated: p.truncated,
            ..PacketFlags::keyframe(p.key)
        };
        // The first fragment taken (a rejected payload may have opened the
        // object).
        let (dts, pos) = (p.dts, p.frags.first().map(|f| f.data).unwrap_or(p.pos));
        let size = done.size as usize;
        let spread = st
            .spread
            .filter(|d| !p.truncated && d.packet.checked_mul(d.span) == Some(done.size));
        #[cfg(feature = "asf-pieces")]
        if self.scatter {
            // `deliver_pieces` leaves the object in its fragments: only
            // its facts.
            return Ok(Some(
                Packet::joined(track, Some(pos), &[])
                    .with_times(dts, dts, duration)
                    .with_flags(flags),
            ));
        }
        if let Some(d) = spread {
            self.descramble(src, d, &done, single)?;
            let data = S::joined(&*src, size)?;
            return Ok(Some(
                Packet::joined(track, Some(pos), data)
                    .with_times(dts, dts, duration)
                    .with_flags(flags),
            ));
        }
        if let Some(f) = single {
            let data = src.bytes(f.data, size)?;
            return Ok(Some(
                Packet::contiguous(track, pos, data)
                    .with_times(dts, dts, duration)
                    .with_flags(flags),
            ));
        }
        if size > src.scratch_len() {
            return Err(Error::new(
                ErrorKind::ScratchTooSmall,
                pos,
                &"asf media object: scratch too small to join its fragments (ASF 1.20 §5.2.3)",
            ));
        }
        #[cfg(feature = "asf-pieces")]
        if let Some(mut w) = super::frag_walk::FragWalk::in_order(&done) {
            // The walk the pieces follow (every fragment where the one
            // before ended: the same bytes as the replay below).
            w.gather(src)?;
            let data = S::joined(&*src, size)?;
            return Ok(Some(
                Packet::joined(track, Some(pos), data)
                    .with_times(dts, dts, duration)
                    .with_flags(flags),
            ));
        }
        self.join(src, &done, number, 0)?;
        let data = S::joined(&*src, size)?;
        Ok(Some(
            Packet::joined(track, Some(pos), data)
                .with_times(dts, dts, duration)
                .with_flags(flags),
        ))
    }

    /// With `asf-pieces`: an object in several fragments that arrived in
    /// order (not descrambled) is left in them, its pieces read by a
    /// [`super::frag_walk::FragWalk`], the walk its join follows; the
    /// facts are [`AsfDemuxer::deliver`]'s. Every other object as
    /// `deliver` gives it.
    #[cfg(feature = "asf-pieces")]
    pub(super) fn deliver_pieces<'s, S: Source>(
        &'s mut self,
        src: &'s mut S,
        done: Done,
    ) -> Result<Option<crate::pieces::PacketPieces<'s, S>>> {
        use crate::pieces::PacketPieces;
        let size = done.size as usize;
        // `deliver`'s spread test (an object in order is not truncated).
        let spread = self
            .streams
            .get(done.slot)
            .and_then(|st| st.spread)
            .is_some_and(|d| d.packet.checked_mul(d.span) == Some(done.size));
        let walk = super::frag_walk::FragWalk::in_order(&done).filter(|w| w.pieces() > 1 && !spread);
        let Some(w) = walk else {
            return Ok(self.deliver(src, done)?.map(PacketPieces::whole));
        };
        self.scatter = true;
        let facts = self.deliver(&mut *src, done);
        self.scatter = false;
        let Some(p) = facts? else { return Ok(None) };
        let facts = Packet::joined(p.track, p.pos, &[])
            .with_times(p.pts, p.dts, p.duration)
            .with_flags(p.flags);
        self.walk = w;
        Ok(Some(PacketPieces::walk(facts, size, src, &mut self.walk)))
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
                &"asf audio spread: scratch too small to descramble the object (ASF 1.20 §9.1.1)",
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
