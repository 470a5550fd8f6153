//! Seeking (RFC 3533 §6 granule positions): bisection over the pages of the
//! sought stream, then a short linear scan; video lands on the keyframe at
//! or before the target, audio on the packet that holds it. The page before
//! the landing packet is read again so that timestamps after a seek are
//! those of a linear read.

use crate::error::{Error, ErrorKind, Result};
use crate::format::traits::Context;
use crate::source::Source;
use crate::types::TrackKind;

use super::demuxer::OggDemuxer;
use super::logical::{Land, Run, SeekSkip, Stream};
use super::mapping::{theora, CodecState, NOPTS};
use super::physical::{find_page, Found, Page, MAX_PAGE, NO_GRANULE};

/// Most bisection steps of a seek: each step at least halves the span
/// searched, so 64 bring any `u64` length down to two page sizes, where the
/// bisection stops anyway and a linear scan takes over.
const MAX_BISECT_ROUNDS: u32 = 64;

impl OggDemuxer {
    /// The end time of a page of stream `st` on its pts scale (Opus pts
    /// are granule minus pre-skip).
    fn page_end_ts(st: &Stream, granule: u64) -> i64 {
        let (t, _) = st.state.granule_to_ts(granule);
        match st.state {
            CodecState::Opus(o) => t.wrapping_sub(o.pre_skip as i64),
            _ => t,
        }
    }

    /// The first page of `serial` with a granule, at or after `from` and
    /// before `until`.
    fn granule_page_after<S: Source>(src: &mut S, from: u64, until: u64, serial: u32) -> Result<Option<Page>> {
        let mut at = from;
        while at < until {
            let p = match find_page(src, at, until - at)? {
                Found::Page(p, _, _) => p,
                _ => return Ok(None),
            };
            if p.offset >= until {
                return Ok(None);
            }
            if p.serial == serial && p.granule != NO_GRANULE {
                return Ok(Some(p));
            }
            at = p.end();
        }
        Ok(None)
    }

    /// The last page of stream `si` whose packets end at or before `target`
    /// (bisection on granule positions, then a short linear scan).
    fn last_page_before<S: Source>(&self, src: &mut S, si: usize, target: i64) -> Result<Option<Page>> {
        let Some(st) = self.run.streams.get(si) else {
            return Ok(None);
        };
        let serial = st.serial;
        let mut lo = self.data_start;
        let mut best: Option<Page> = None;
        let mut hi = src.len();
        let mut rounds = 0;
        while hi.saturating_sub(lo) > 2 * MAX_PAGE && rounds < MAX_BISECT_ROUNDS {
            rounds += 1;
            let mid = lo + (hi - lo) / 2;
            match Self::granule_page_after(src, mid, hi, serial)? {
                Some(p) if Self::page_end_ts(st, p.granule) <= target => {
                    lo = p.offset;
                    best = Some(p);
                }
                _ => hi = mid,
            }
        }
        let mut at = lo;
        let len = src.len();
        while let Some(p) = Self::granule_page_after(src, at, len, serial)? {
            if Self::page_end_ts(st, p.granule) > target {
                break;
            }
            best = Some(p);
            at = p.end();
        }
        Ok(best)
    }

    /// Positions reading at page `page` (or at the start after the headers
    /// when `None`), dropping the packets of stream `si` before the landing
    /// packet.
    fn resume_at<S: Source>(
        &mut self,
        src: &mut S,
        ctx: &mut Context,
        page: Option<Page>,
        si: usize,
        target: i64,
        video: bool,
    ) -> Result<()> {
        let skip = Some(SeekSkip {
            stream: si,
            target,
            video,
        });
        let Some(page) = page else {
            self.run = Run::new();
            self.read_headers(src, ctx)?;
            self.run.skip = skip;
            return Ok(());
        };
        for st in self.run.streams.iter_mut() {
            st.psize = 0;
            st.pieces.clear();
            st.overflow = false;
            st.incomplete = false;
            st.timing.granule = NO_GRANULE;
            st.timing.lastpts = NOPTS;
            st.timing.lastdts = NOPTS;
            st.cur_dts = None;
        }
        self.run.land = Some(Land {
            stream: si,
            page: page.offset,
            granule: page.granule,
        });
        self.run.cur = None;
        self.run.pending = None;
        self.run.next_page = page.offset;
        self.run.skip = skip;
        self.run.done = false;
        Ok(())
    }

    /// Seeks stream `track` to `ts` (in its time base): audio lands on the
    /// packet holding `ts`, video on the keyframe at or before it.
    pub(super) fn seek_to<S: Source>(&mut self, src: &mut S, ctx: &mut Context, track: usize, ts: i64) -> Result<()> {
        let Some(si) = self.run.streams.iter().position(|s| s.track == Some(track)) else {
            return Err(Error::new(
                ErrorKind::InvalidArgument,
                0,
                &"ogg seek: no logical stream carries this track",
            ));
        };
        let video = ctx.tracks.get(track).is_some_and(|t| t.kind == TrackKind::Video);
        let page = self.last_page_before(src, si, ts)?;
        if !video {
            self.resume_at(src, ctx, page, si, ts, false)?;
            return Ok(());
        }
        // Video: the keyframe the page's granule names (RFC: the high bits
        // count keyframes), or a later one at or before `ts` found by
        // reading on.
        let mut key = 0i64;
        if let (Some(p), Some(st)) = (page, self.run.streams.get(si)) {
            if let CodecState::Theora(t) = st.state {
                let shift = t.shift.min(63) as u32;
                let (k, _) = theora::theora_frame(&t, (p.granule >> shift) << shift);
                key = k.saturating_sub(1).max(0);
            }
        }
        self.resume_at(src, ctx, page, si, i64::MIN, false)?;
        self.run.skip = None;
        let mut walked = 0u32;
        while walked < ctx.limits.max_fragments {
            walked += 1;
            let Some(ex) = self.run.extract(src, ctx, &mut self.starts)? else {
                break;
            };
            if ex.stream != si {
                continue;
            }
            let done = self.run.streams.get(ex.stream).is_none_or(|s| s.headers_done);
            if !done && self.take_header(src, ctx, &ex)? {
                continue;
            }
            let Some(m) = self.timing(src, ctx, &ex)? else { continue };
            match m.pts {
                Some(p) if p > ts => break,
                Some(p) if m.key => key = p,
                _ => {}
            }
        }
        let page = self.last_page_before(src, si, key)?;
        self.resume_at(src, ctx, page, si, key, true)?;
        Ok(())
    }
}
