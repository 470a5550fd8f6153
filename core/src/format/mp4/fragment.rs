//! Movie fragments (§8.8): `moof`/`traf`/`tfhd`/`tfdt`/`trun` read after
//! the movie's own samples, in file order, one sample at a time.

use super::boxes::{read_box_header, tfhd_flags, trun_flags, BoxHeader, SAMPLE_DEPENDS_YES, SAMPLE_NON_SYNC};
use super::demuxer::Mp4Demuxer;
use super::sample_table::Sample;
use crate::error::{Error, Result};
use crate::format::traits::Context;
use crate::source::Source;

/// Steps of the fragment walk (a sample, or a child box of a `traf` or a
/// `moof`, or a top-level box) for one sample: 2^24 is more than the boxes
/// of any real file between two samples, and ends a walk that does not
/// advance instead of spinning.
const MAX_FRAGMENT_STEPS: u64 = 1 << 24;

/// Children of a `traf` read for its `tfhd` and `tfdt`: `tfhd` comes first
/// (§8.8.7) and `tfdt` before the `trun`s in real files; 256 leaves room for
/// `sbgp`/`sgpd`/`saiz`/`saio`/`senc` and bounds a `traf` of tiny boxes.
const MAX_TRAF_CHILDREN: u32 = 256;

/// A `moof` whose boxes do not fit, reported at the `moof` when its walk
/// ends: a child of the `moof` or of a `traf` claimed more bytes than its
/// parent holds, or no `trun` was read in it (a damaged `traf` or `trun`
/// type, or a child of size 0 that swallows the `traf`s after it, reads so;
/// so does a legal `moof` whose `traf`s are all empty, which is rare). What
/// can be read of it is read and the next fragments follow. One report site
/// for both findings: the firmware's flash budget is tight.
const MOOF_DAMAGED: &str = "mp4.moof-damaged";

/// Fragment reading state (§8.8).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(super) struct Frag {
    /// Next top-level box to examine.
    pub(super) top: u64,
    pub(super) moof_start: u64,
    pub(super) moof_end: u64,
    pub(super) moof_child: u64,
    pub(super) in_moof: bool,
    pub(super) traf_end: u64,
    pub(super) traf_child: u64,
    pub(super) in_traf: bool,
    pub(super) track: usize,
    pub(super) base: u64,
    pub(super) implicit: u64,
    pub(super) def_duration: u32,
    pub(super) def_size: u32,
    pub(super) def_flags: u32,
    pub(super) dts: i64,
    pub(super) trun_left: u32,
    pub(super) trun_entry: u64,
    pub(super) trun_flags: u32,
    pub(super) first_flags: Option<u32>,
    pub(super) pos: u64,
    pub(super) fragments: u32,
    /// Whether a child of the current `moof` or of its `traf`s did not fit.
    pub(super) damaged: bool,
}

/// The next child box at `*at` of a `moof` or `traf` ending at `end`,
/// advancing `*at` past it (to `end` when a box does not advance); `None`
/// when no header fits before `end`. Sets `*damaged` when the child claims
/// more than its parent holds.
fn next_child<S: Source>(src: &mut S, at: &mut u64, end: u64, damaged: &mut bool) -> Result<Option<BoxHeader>> {
    if at.saturating_add(8) > end {
        return Ok(None);
    }
    let h = read_box_header(src, *at, end)?;
    *damaged |= h.clamped;
    *at = if h.end > *at { h.end } else { end };
    Ok(Some(h))
}

impl Mp4Demuxer {
    /// Moves to the next top-level `moof` at or after `frag.top`.
    pub(super) fn next_moof<S: Source>(&mut self, src: &mut S, ctx: &mut Context) -> Result<bool> {
        let len = src.len();
        let mut guard = 0u32;
        while self.frag.top.saturating_add(8) <= len {
            guard += 1;
            if guard > ctx.limits.max_top_level {
                ctx.diags.report("mp4.too-many-boxes", self.frag.top);
                return Ok(false);
            }
            let h = match read_box_header(src, self.frag.top, len) {
                Ok(h) => h,
                // A live input that ended between two top-level boxes: it
                // had not said so when asked before the read (a box skipped
                // unread, as a trailing `mfra`, leaves bytes it has not
                // seen read). A finished input never gets here: its length
                // is fixed and the header lies within it.
                Err(e) if e.is_truncation() && self.frag.top >= src.len() => return Ok(false),
                Err(e) => return Err(e),
            };
            let next = h.end;
            if &h.kind == b"moof" {
                if h.clamped {
                    return Err(Error::truncated(
                        h.start,
                        &"mp4 moof: runs past the end of the file (ISO/IEC 14496-12 8.8.4)",
                    ));
                }
                self.frag.fragments += 1;
                if self.frag.fragments > ctx.limits.max_fragments {
                    return Err(Error::limit(
                        h.start,
                        &"mp4 moof: more fragments than Limits::max_fragments (ISO/IEC 14496-12 8.8.4)",
                    ));
                }
                self.frag.moof_start = h.start;
                self.frag.moof_end = h.end;
                self.frag.moof_child = h.body;
                self.frag.implicit = h.start;
                self.frag.in_moof = true;
                // 0 until a `trun` of this `moof` is read.
                self.frag.trun_entry = 0;
                self.frag.damaged = false;
                self.frag.top = next;
                return Ok(true);
            }
            if &h.kind == b"mdat" && src.u32_be(h.start)? == 0 {
                // An `mdat` "to the end of the file" (size 0, §4.2) with no
                // `moof` after it: a fragment a writer was still filling
                // when the file was cut (mediaslice's own on a patchable
                // sink). Its samples are not described anywhere.
                ctx.diags.report("mp4.unfinished-fragment", h.start);
            }
            if next <= self.frag.top {
                return Ok(false);
            }
            self.frag.top = next;
        }
        Ok(false)
    }

    /// Reads `tfhd` and `tfdt` of the `traf` at `h` (§8.8.7, §8.8.12).
    pub(super) fn enter_traf<S: Source>(&mut self, src: &mut S, ctx: &mut Context, h: &BoxHeader) -> Result<bool> {
        let mut at = h.body;
        let mut tfhd = false;
        let mut tfdt: Option<i64> = None;
        let mut guard = 0;
        while at.saturating_add(8) <= h.end && guard < MAX_TRAF_CHILDREN {
            guard += 1;
            let c = read_box_header(src, at, h.end)?;
            match &c.kind {
                b"tfhd" => {
                    let vf = src.u32_be(c.body)?;
                    let flags = vf & 0xFF_FFFF;
                    let id = src.u32_be(c.body + 4)?;
                    let Some(ti) = self.tracks.iter().position(|t| t.track_id == id) else {
                        ctx.diags.report("mp4.traf-unknown-track", c.start);
                        return Ok(false);
                    };
                    let t = self.tracks.get(ti).ok_or(Error::malformed(
                        c.start,
                        &"mp4 tfhd: track index out of range (ISO/IEC 14496-12 8.8.7)",
                    ))?;
                    let mut p = c.body + 8;
                    let mut base = if flags & tfhd_flags::DEFAULT_BASE_IS_MOOF != 0 {
                        self.frag.moof_start
                    } else {
                        self.frag.implicit
                    };
                    if flags & tfhd_flags::BASE_DATA_OFFSET != 0 {
                        base = src.u64_be(p)?;
                        p += 8;
                    }
                    if flags & tfhd_flags::DESCRIPTION_INDEX != 0 {
                        p += 4;
                    }
                    self.frag.def_duration = t.trex_duration;
                    self.frag.def_size = t.trex_size;
                    self.frag.def_flags = t.trex_flags;
                    if flags & tfhd_flags::DEFAULT_DURATION != 0 {
                        self.frag.def_duration = src.u32_be(p)?;
                        p += 4;
                    }
                    if flags & tfhd_flags::DEFAULT_SIZE != 0 {
                        self.frag.def_size = src.u32_be(p)?;
                        p += 4;
                    }
                    if flags & tfhd_flags::DEFAULT_FLAGS != 0 {
                        self.frag.def_flags = src.u32_be(p)?;
                    }
                    self.frag.track = ti;
                    self.frag.base = base;
                    self.frag.implicit = base;
                    tfhd = true;
                }
                b"tfdt" => {
                    let v: [u8; 1] = src.array(c.body)?;
                    tfdt = Some(if v[0] == 1 {
                        src.u64_be(c.body + 4)?.min(i64::MAX as u64) as i64
                    } else {
                        src.u32_be(c.body + 4)? as i64
                    });
                }
                _ => {}
            }
            if c.end <= at {
                break;
            }
            at = c.end;
        }
        if !tfhd {
            ctx.diags.report("mp4.traf-without-tfhd", h.start);
            return Ok(false);
        }
        let t = self.tracks.get(self.frag.track).ok_or(Error::malformed(
            h.start,
            &"mp4 traf: track index out of range (ISO/IEC 14496-12 8.8.6)",
        ))?;
        self.frag.dts = tfdt.unwrap_or(t.next_dts);
        self.frag.traf_child = h.body;
        self.frag.traf_end = h.end;
        self.frag.in_traf = true;
        self.frag.trun_left = 0;
        Ok(true)
    }

    /// Reads a `trun` header (§8.8.8).
    fn enter_trun<S: Source>(&mut self, src: &mut S, ctx: &mut Context, h: &BoxHeader) -> Result<()> {
        let vf = src.u32_be(h.body)?;
        let flags = vf & 0xFF_FFFF;
        let count = src.u32_be(h.body + 4)?;
        let mut p = h.body + 8;
        let mut pos = self.frag.implicit;
        if flags & trun_flags::DATA_OFFSET != 0 {
            let off = src.u32_be(p)? as i32 as i64;
            pos = (self.frag.base as i64).saturating_add(off).max(0) as u64;
            p += 4;
        }
        self.frag.first_flags = None;
        if flags & trun_flags::FIRST_FLAGS != 0 {
            self.frag.first_flags = Some(src.u32_be(p)?);
            p += 4;
        }
        let entry = Self::trun_entry_size(flags);
        let room = match h.end.saturating_sub(p).checked_div(entry) {
            Some(room) => room,
            // No per-sample fields: every sample has the default size, so no
            // more of them than the rest of the input can hold (empty ones
            // count a byte each, so a count of 2^32 cannot make unbounded
            // work); one more may be cut by the end of the input.
            None => src.len().saturating_sub(pos) / self.frag.def_size.max(1) as u64 + 1,
        };
        let fit = (count as u64).min(room) as u32;
        if fit < count {
            ctx.diags.report("mp4.trun-count-mismatch", h.start);
        }
        self.frag.trun_left = fit;
        self.frag.trun_entry = p;
        self.frag.trun_flags = flags;
        self.frag.pos = pos;
        Ok(())
    }

    /// Bytes of one `trun` sample entry with these flags (§8.8.8).
    fn trun_entry_size(flags: u32) -> u64 {
        [
            trun_flags::DURATION,
            trun_flags::SIZE,
            trun_flags::FLAGS,
            trun_flags::CTS,
        ]
        .iter()
        .filter(|&&f| flags & f != 0)
        .count() as u64
            * 4
    }

    /// The next sample from fragments.
    pub(super) fn next_fragment_sample<S: Source>(
        &mut self,
        src: &mut S,
        ctx: &mut Context,
    ) -> Result<Option<(usize, Sample)>> {
        let mut guard = 0u64;
        loop {
            guard += 1;
            if guard > MAX_FRAGMENT_STEPS {
                return Err(Error::malformed(
                    self.frag.top,
                    &"mp4 moof: the fragment walk does not advance (ISO/IEC 14496-12 8.8)",
                ));
            }
            if self.frag.trun_left > 0 {
                let f = self.frag.trun_flags;
                let mut p = self.frag.trun_entry;
                let mut duration = self.frag.def_duration;
                let mut size = self.frag.def_size;
                let mut sflags = self.frag.first_flags.take().unwrap_or(self.frag.def_flags);
                let mut cts = 0i64;
                if f & trun_flags::DURATION != 0 {
                    duration = src.u32_be(p)?;
                    p += 4;
                }
                if f & trun_flags::SIZE != 0 {
                    size = src.u32_be(p)?;
                    p += 4;
                }
                if f & trun_flags::FLAGS != 0 {
                    sflags = src.u32_be(p)?;
                    p += 4;
                }
                if f & trun_flags::CTS != 0 {
                    cts = src.u32_be(p)? as i32 as i64;
                    p += 4;
                }
                self.frag.trun_entry = p;
                self.frag.trun_left -= 1;
                let t = self.tracks.get_mut(self.frag.track).ok_or(Error::malformed(
                    p,
                    &"mp4 trun: track index out of range (ISO/IEC 14496-12 8.8.8)",
                ))?;
                let key = t.audio || sflags & (SAMPLE_NON_SYNC | SAMPLE_DEPENDS_YES) == 0;
                let s = Sample {
                    pos: self.frag.pos,
                    size,
                    dts: self.frag.dts,
                    cts,
                    duration,
                    key,
                };
                self.frag.pos = self.frag.pos.saturating_add(size as u64);
                self.frag.implicit = self.frag.pos;
                self.frag.dts = self.frag.dts.saturating_add(duration as i64);
                t.next_dts = self.frag.dts;
                return Ok(Some((self.frag.track, s)));
            }
            if self.frag.in_traf {
                let (mut at, end) = (self.frag.traf_child, self.frag.traf_end);
                let child = next_child(src, &mut at, end, &mut self.frag.damaged)?;
                self.frag.traf_child = at;
                match child {
                    None => self.frag.in_traf = false,
                    Some(h) if &h.kind == b"trun" => self.enter_trun(src, ctx, &h)?,
                    Some(_) => {}
                }
                continue;
            }
            if self.frag.in_moof {
                let (mut at, end) = (self.frag.moof_child, self.frag.moof_end);
                let child = next_child(src, &mut at, end, &mut self.frag.damaged)?;
                self.frag.moof_child = at;
                match child {
                    None => {
                        if self.frag.trun_entry == 0 || self.frag.damaged {
                            ctx.diags.report(MOOF_DAMAGED, self.frag.moof_start);
                        }
                        self.frag.in_moof = false;
                    }
                    Some(h) if &h.kind == b"traf" => {
                        self.enter_traf(src, ctx, &h)?;
                    }
                    Some(_) => {}
                }
                continue;
            }
            if !self.next_moof(src, ctx)? {
                return Ok(None);
            }
        }
    }

    /// The first `moof` after the movie box.
    pub(super) fn first_moof<S: Source>(&mut self, src: &mut S, ctx: &mut Context) -> Result<u64> {
        let len = src.len();
        let mut at = 0u64;
        let mut guard = 0u32;
        while at.saturating_add(8) <= len {
            guard += 1;
            if guard > ctx.limits.max_top_level {
                break;
            }
            let h = read_box_header(src, at, len)?;
            if &h.kind == b"moof" {
                return Ok(h.start);
            }
            if h.end <= at {
                break;
            }
            at = h.end;
        }
        Ok(len)
    }
}
