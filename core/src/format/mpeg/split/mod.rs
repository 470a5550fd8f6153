//! Cutting PES payloads into codec frames the way ffmpeg's parsers do (ADTS
//! AAC, AC-3/E-AC-3, MPEG audio, AAC in LATM), shared by the TS and PS
//! readers.
//!
//! * Frames are found with the header parsers of [`crate::codec`]: a frame
//!   inside one PES payload is a slice of it; a frame that runs on into the
//!   next PES of its stream is joined in a per-track carry slot at the start
//!   of the caller's scratch (`SLOT` bytes per split track), so only the
//!   bytes of that frame are copied.
//! * Time stamps follow `av_parser_parse2`: a frame takes the PTS of the PES
//!   that started since the previous frame began (the last one, when
//!   several did); other frames continue from the previous frame. AC-3
//!   frames whose 7-byte header is cut by a PES boundary take the PTS of the
//!   next PES, as ffmpeg's AC-3 parser only sees them there. The step is
//!   `samples * 90000 / rate` rounded down (AC-3, MPEG audio: the parser's
//!   duration) or `av_add_stable` on the exact frame duration (AAC and
//!   LATM, whose parsers give none).
//! * Bytes that hold no frame header are a packet of their own, up to the
//!   next header. E-AC-3 dependent substreams stay with the frame before
//!   them when they are in the same PES.
//!
//! Entry points: [`Split`] (per-track state: [`Split::begin`] when a PES
//! starts, [`next_frame`] for its frames, [`Split::flush`] at the end),
//! [`assign_slots`], [`input_bytes`]; `kind.rs` measures frame headers.

use crate::error::{Error, Result};
use crate::source::Source;
use crate::types::{Codec, Packet, PacketFlags};

#[cfg(feature = "ts-fast")]
mod grid;
mod kind;
#[cfg(test)]
mod tests;

#[cfg(not(feature = "ts-fast"))]
use kind::add_stable;
use kind::ticks;
pub(crate) use kind::Kind;

/// Bytes of scratch reserved per split track for a frame that spans PES
/// packets: the largest ADTS frame (8191 bytes), AC-3/E-AC-3 frame (4096)
/// or MPEG audio frame fits (a LATM frame can be 8194 bytes: the rare one
/// over 8192 is delivered in pieces).
pub(crate) const SLOT: usize = 8192;

/// Header bytes read to measure a frame (ADTS and AC-3: 7, MPEG audio: 4).
const HDR: usize = 7;

/// Per-track cutting state, kept by the demuxer beside the stream.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Split {
    pub(crate) kind: Kind,
    /// Carry slot index (the slot starts at `slot * SLOT` in scratch).
    pub(crate) slot: u8,
    /// Bytes of an unfinished frame in the slot.
    carry: u16,
    /// Its length once its header is complete, 0 before.
    need: u16,
    /// Its time stamp, fetched when it began (`None` inside: not yet, for
    /// an AC-3 header cut by a PES boundary).
    carry_pts: Option<Option<i64>>,
    carry_pos: u64,
    /// A PES began since the last frame did: its PTS.
    fresh: Option<Option<i64>>,
    /// The time stamp of the next frame when no PES gives one.
    next_pts: Option<i64>,
    /// After a seek: bytes before the first frame header are dropped (the
    /// tail of a frame that began before the landing point).
    seeking: bool,
    /// LATM: the sampling frequency of the last StreamMuxConfig.
    rate: u32,
    /// AAC and LATM: the `av_add_stable` grid of the last step.
    #[cfg(feature = "ts-fast")]
    grid: grid::Grid,
}

/// The PES payload being cut: in the input (`input`) or joined in scratch
/// at `at`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Cut {
    /// Index of the stream in the demuxer's table.
    pub(crate) stream: usize,
    pub(crate) track: usize,
    pub(crate) input: Option<u64>,
    pub(crate) at: usize,
    pub(crate) len: usize,
    /// Input offset of the PES payload (the packets' `pos`).
    pub(crate) pos: u64,
    /// Bytes of the payload already cut.
    pub(crate) done: usize,
    /// The payload reaches the end of the input: a longer input could
    /// continue it (for a joined TS PES, `pos + len` says nothing of that).
    pub(crate) last: bool,
}

/// A packet at `off..off+len` of the input: borrowed where the source
/// borrows its input, else read into scratch at `base`, past the carry
/// slots that a reader's `bytes` would overwrite.
pub(crate) fn input_bytes<S: Source>(src: &mut S, off: u64, len: usize, base: usize) -> Result<&[u8]> {
    if src.is_slice() || base == 0 {
        return src.bytes(off, len);
    }
    src.gather(off, len, base)?;
    let end = base.checked_add(len).ok_or(Error::capacity(
        off,
        &"mpeg audio frames: scratch range past usize::MAX",
    ))?;
    Ok(S::joined(src, end)?.get(base..).unwrap_or(&[]))
}

/// Scratch bytes `at..at+len`.
fn scratch_range<S: Source>(src: &S, at: usize, len: usize) -> Result<&[u8]> {
    let end = at
        .checked_add(len)
        .ok_or(Error::capacity(0, &"mpeg audio frames: scratch range past usize::MAX"))?;
    Ok(S::joined(src, end)?.get(at..).unwrap_or(&[]))
}

impl Cut {
    /// Copies payload bytes from `p` into `buf`; returns how many.
    fn peek<S: Source>(&self, src: &mut S, p: usize, buf: &mut [u8]) -> Result<usize> {
        let n = buf.len().min(self.len.saturating_sub(p));
        let dst = buf.get_mut(..n).unwrap_or(&mut []);
        match self.input {
            Some(off) => src.read_exact_at(off + p as u64, dst)?,
            None => dst.copy_from_slice(scratch_range(src, self.at + p, n)?),
        }
        Ok(n)
    }

    /// Copies `n` payload bytes from `p` to scratch at `to`.
    fn copy_out<S: Source>(&self, src: &mut S, p: usize, n: usize, to: usize) -> Result<()> {
        if n == 0 {
            return Ok(());
        }
        if let Some(off) = self.input {
            return src.gather(off + p as u64, n, to);
        }
        let mut buf = [0u8; 256];
        let mut k = 0;
        while k < n {
            let m = (n - k).min(buf.len());
            let b = buf.get_mut(..m).unwrap_or(&mut []);
            b.copy_from_slice(scratch_range(src, self.at + p + k, m)?);
            src.put(to + k, b)?;
            k += m;
        }
        Ok(())
    }
}

impl Split {
    /// A PES of this stream begins: its payload is cut next.
    pub(crate) fn begin(&mut self, pts: Option<i64>) {
        self.fresh = Some(pts);
    }

    /// The time stamp of a frame beginning now.
    fn fetch(&mut self) -> Option<i64> {
        self.fresh.take().flatten().or(self.next_pts)
    }

    /// A frame's sampling frequency: its own, or the last one given (LATM
    /// frames that reuse the stream's configuration carry none).
    fn rate(&mut self, rate: u32) -> u32 {
        if rate != 0 {
            self.rate = rate;
        }
        self.rate
    }

    /// Sets the time stamp of the next frame; returns this frame's duration.
    fn advance(&mut self, pts: Option<i64>, samples: u32, rate: u32) -> u64 {
        let rate = self.rate(rate);
        let d = ticks(samples, rate);
        self.next_pts = pts.map(|p| match self.kind {
            #[cfg(feature = "ts-fast")]
            Kind::Adts | Kind::Latm => self.grid.add(p, samples, rate),
            #[cfg(not(feature = "ts-fast"))]
            Kind::Adts | Kind::Latm => add_stable(p, samples, rate),
            _ => p.saturating_add(d as i64),
        });
        d
    }

    /// Forgets an unfinished frame and the time stamps (after a seek).
    pub(crate) fn reset(&mut self) {
        *self = Split {
            kind: self.kind,
            slot: self.slot,
            seeking: true,
            rate: self.rate,
            ..Split::default()
        };
    }

    fn slot_at(&self) -> usize {
        self.slot as usize * SLOT
    }

    /// The next frame of `cut`, or `None` when the rest of it waits for the
    /// next PES (kept in the carry slot) or it is used up.
    pub(crate) fn next<S: Source>(&mut self, src: &mut S, cut: &mut Cut) -> Result<Option<Frame>> {
        if self.carry > 0 {
            return self.resume_carry(src, cut);
        }
        loop {
            let rest = cut.len - cut.done;
            if rest == 0 {
                return Ok(None);
            }
            let mut h = [0u8; HDR];
            let hn = cut.peek(src, cut.done, &mut h)?;
            let p = cut.done;
            if hn < HDR {
                return self.short_tail(src, cut, p, h.get(..hn).unwrap_or(&[]));
            }
            let Some((mut len, samples, rate, _)) = self.kind.measure(&h) else {
                match self.junk(src, cut, p)? {
                    Some(f) => return Ok(Some(f)),
                    // Dropped after a seek: look again past it.
                    None => continue,
                }
            };
            self.seeking = false;
            // E-AC-3 dependent substreams in this PES join the frame.
            while self.kind == Kind::Ac3 && p + len + HDR <= cut.len {
                cut.peek(src, p + len, &mut h)?;
                match self.kind.measure(&h) {
                    Some((l, _, _, true)) => len += l,
                    _ => break,
                }
            }
            let pts = self.fetch();
            if len > rest {
                if len > SLOT {
                    return Ok(Some(self.emit(cut, p, rest, pts, None)));
                }
                self.carry_pts = Some(pts);
                return self.hold(src, cut, p, rest, len);
            }
            let d = self.advance(pts, samples, rate);
            return Ok(Some(self.emit(cut, p, len, pts, Some(d))));
        }
    }

    /// Completes the frame in the carry slot from the start of `cut`: its
    /// header first (then its length is known), then its bytes; the frame
    /// once whole, `None` while `cut` is too short.
    fn resume_carry<S: Source>(&mut self, src: &mut S, cut: &mut Cut) -> Result<Option<Frame>> {
        if self.need == 0 {
            if !self.fill(src, cut, HDR)? {
                return Ok(None);
            }
            if self.carry_pts.is_none() {
                self.carry_pts = Some(self.fetch());
            }
            let mut h = [0u8; HDR];
            h.copy_from_slice(scratch_range(src, self.slot_at(), HDR)?);
            match self.kind.measure(&h) {
                Some((len, ..)) if (HDR..=SLOT).contains(&len) => self.need = len as u16,
                _ => return self.flush(src, cut.track, false),
            }
        }
        if !self.fill(src, cut, self.need as usize)? {
            return Ok(None);
        }
        self.flush(src, cut.track, false)
    }

    /// The last bytes of `cut` from `p` (`tail`), fewer than a header.
    /// After a seek they are dropped. At the end of the input they are a
    /// cut frame or junk (see below); otherwise they wait in the carry slot
    /// for the next PES.
    fn short_tail<S: Source>(&mut self, src: &mut S, cut: &mut Cut, p: usize, tail: &[u8]) -> Result<Option<Frame>> {
        let hn = tail.len();
        if self.seeking {
            cut.done = cut.len;
            return Ok(None);
        }
        if cut.last {
            // The input ends in these bytes. The whole input could make
            // them a frame, or junk up to the next header: hold them as
            // a frame only when they can begin one and no header can
            // begin later in them; else give the bytes up to the first
            // place a header could begin, flagged, and nothing after (a
            // `truncation` fuzz find on a cut VOB: "c8 0b" was held and
            // given as one piece where the whole input gives the junk
            // byte c8, then the frame at 0b 77).
            if self.kind == Kind::Ac3 {
                // AC-3 bytes cut by the end of a PES take the time stamp
                // of the next PES (see `next`), which a cut input does
                // not have: fewer than a header's bytes are not given.
                cut.done = cut.len;
                return Ok(None);
            }
            let q = (1..hn)
                .find(|&k| self.kind.could_start(tail.get(k..).unwrap_or(&[])))
                .unwrap_or(hn);
            if q < hn || !self.kind.could_start(tail) {
                let pts = self.fetch();
                let mut f = self.emit(cut, p, q, pts, None);
                f.truncated = true;
                cut.done = cut.len;
                return Ok(Some(f));
            }
        }
        // A header cut by the end of the PES: AC-3 takes the next PES's
        // time stamp, the others this one.
        self.carry_pts = if self.kind == Kind::Ac3 {
            None
        } else {
            Some(self.fetch())
        };
        self.hold(src, cut, p, hn, 0)
    }

    /// No frame header at `p`: the bytes up to the next header are a
    /// packet, flagged when the end of the input cuts them; `None` when
    /// they are dropped after a seek (`cut.done` then past them).
    fn junk<S: Source>(&mut self, src: &mut S, cut: &mut Cut, p: usize) -> Result<Option<Frame>> {
        let (j, last) = self.junk_end(src, cut, p)?;
        if self.seeking {
            cut.done = j;
            return Ok(None);
        }
        let pts = self.fetch();
        let mut f = self.emit(cut, p, j - p, pts, None);
        if last {
            f.truncated = true;
            cut.done = cut.len;
        }
        Ok(Some(f))
    }

    /// Where junk from `p` ends: the next header, at most `SLOT` bytes on,
    /// or the end of the payload; and whether the end of the input cuts it.
    fn junk_end<S: Source>(&self, src: &mut S, cut: &Cut, p: usize) -> Result<(usize, bool)> {
        let mut h = [0u8; HDR];
        let mut j = p + 1;
        while j + HDR <= cut.len && j - p < SLOT {
            cut.peek(src, j, &mut h)?;
            if self.kind.measure(&h).is_some() {
                break;
            }
            j += 1;
        }
        // The PES reaches the end of the input: a header may start in
        // its last bytes and be cut (the whole input would end the
        // packet there). Give what lies before the first of them
        // that can begin one (`Kind::could_start`, the test the tail
        // rule above makes), flagged, and nothing after (`truncation`
        // fuzz finds on a cut VOB; testing every one of the last
        // bytes as a header start, this branch gave 1 byte where a
        // prefix one byte shorter, taking the tail rule, gave 6).
        let at_end = cut.last;
        let last = at_end && j + HDR > cut.len && cut.len.saturating_sub(HDR - 1) > p;
        if j + HDR > cut.len {
            j = cut.len;
            if last {
                let from = cut.len - (HDR - 1);
                let mut t = [0u8; HDR];
                let tn = cut.peek(src, from, &mut t)?;
                let tail = t.get(..tn).unwrap_or(&[]);
                if let Some(k) = (0..tn).find(|&k| self.kind.could_start(tail.get(k..).unwrap_or(&[]))) {
                    j = from + k;
                }
                // A longer input cuts junk at a slot's length.
                j = j.min(p + SLOT);
            }
        }
        Ok((j, last))
    }

    /// Appends bytes of `cut` to the carry until it holds `upto`; whether
    /// it does.
    fn fill<S: Source>(&mut self, src: &mut S, cut: &mut Cut, upto: usize) -> Result<bool> {
        let c = self.carry as usize;
        let n = upto.saturating_sub(c).min(cut.len - cut.done);
        cut.copy_out(src, cut.done, n, self.slot_at() + c)?;
        cut.done += n;
        self.carry = (c + n) as u16;
        Ok(c + n >= upto)
    }

    /// Moves the last `n` bytes of `cut` (from `p`) to the carry slot.
    fn hold<S: Source>(
        &mut self,
        src: &mut S,
        cut: &mut Cut,
        p: usize,
        n: usize,
        need: usize,
    ) -> Result<Option<Frame>> {
        cut.copy_out(src, p, n, self.slot_at())?;
        cut.done = cut.len;
        self.carry = n as u16;
        self.need = need as u16;
        self.carry_pos = cut.input.map_or(cut.pos, |o| o + p as u64);
        Ok(None)
    }

    fn emit(&mut self, cut: &mut Cut, p: usize, n: usize, pts: Option<i64>, duration: Option<u64>) -> Frame {
        cut.done = p + n;
        Frame {
            track: cut.track,
            input: cut.input.map(|o| o + p as u64),
            at: cut.at + p,
            len: n,
            pos: cut.input.map_or(cut.pos, |o| o + p as u64),
            pts,
            duration,
            // A frame measured by its header is whole even in a PES cut
            // by the end of the input; only the carry can be cut short.
            truncated: false,
        }
    }

    /// The frame in the carry slot as a packet (at the end of the input,
    /// or once complete); `None` when there is none. `cut_short`: the
    /// input ended inside it.
    pub(crate) fn flush<S: Source>(&mut self, src: &mut S, track: usize, cut_short: bool) -> Result<Option<Frame>> {
        let c = self.carry as usize;
        if c == 0 {
            return Ok(None);
        }
        if self.carry_pts.is_none() {
            // AC-3 bytes fewer than a header, cut by a PES boundary, at the
            // end of the input: their time stamp is the next PES's, which
            // the input does not have (a prefix gave another one than the
            // whole input, a `truncation` find). Not given.
            self.carry = 0;
            self.need = 0;
            return Ok(None);
        }
        let complete = self.need as usize == c;
        let pts = self.carry_pts.take().unwrap_or_else(|| self.fetch());
        let mut duration = None;
        if complete {
            let mut h = [0u8; HDR];
            h.copy_from_slice(scratch_range(src, self.slot_at(), HDR)?);
            if let Some((_, samples, rate, _)) = self.kind.measure(&h) {
                duration = Some(self.advance(pts, samples, rate));
            }
        }
        self.carry = 0;
        self.need = 0;
        Ok(Some(Frame {
            track,
            input: None,
            at: self.slot_at(),
            len: c,
            pos: self.carry_pos,
            pts,
            duration,
            truncated: cut_short || !complete,
        }))
    }
}

/// The next frame of the PES being cut (`cut`), whose stream is
/// `cut.stream` of `splits`; `cut` is cleared when it is used up.
pub(crate) fn next_frame<'a, S: Source>(
    src: &mut S,
    cut: &mut Option<Cut>,
    mut splits: impl Iterator<Item = &'a mut Split>,
) -> Result<Option<Frame>> {
    let Some(mut c) = *cut else { return Ok(None) };
    let Some(sp) = splits.nth(c.stream) else {
        return Ok(None);
    };
    let f = sp.next(src, &mut c)?;
    *cut = f.is_some().then_some(c);
    Ok(f)
}

/// A frame to hand out: `len` bytes of the input at `input`, or of scratch
/// at `at`.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Frame {
    track: usize,
    input: Option<u64>,
    at: usize,
    len: usize,
    pos: u64,
    pts: Option<i64>,
    duration: Option<u64>,
    truncated: bool,
}

impl Frame {
    /// The frame as a packet (`base`: scratch offset past the carry slots).
    pub(crate) fn packet<S: Source>(self, src: &mut S, base: usize) -> Result<Packet<'_>> {
        let data = match self.input {
            Some(off) => input_bytes(src, off, self.len, base)?,
            None => scratch_range(src, self.at, self.len)?,
        };
        let packet = match self.input {
            Some(_) => Packet::contiguous(self.track, self.pos, data),
            None => Packet::joined(self.track, Some(self.pos), data),
        };
        let flags = PacketFlags {
            truncated: self.truncated,
            ..PacketFlags::keyframe(true)
        };
        Ok(packet.with_times(self.pts, self.pts, self.duration).with_flags(flags))
    }
}

/// Gives each track whose codec ffmpeg's parser cuts a carry slot; returns
/// the scratch offset past the slots.
pub(crate) fn assign_slots<'a>(splits: impl Iterator<Item = (&'a mut Split, Codec)>) -> usize {
    let mut n = 0usize;
    for (s, codec) in splits {
        s.kind = Kind::of(codec);
        if s.kind != Kind::None {
            s.slot = n as u8;
            n += 1;
        }
    }
    n * SLOT
}
