//! Where FLAC frames begin and end (RFC 9639 §9): frames carry no length, so
//! a frame ends where the next frame header begins. The search for that end
//! ([`find_frame_end`]), for the first frame ([`find_first_frame`]) and for a
//! seek landing point ([`find_first_frame_near`]).

use super::sync::find_sync;
use crate::error::{Error, ErrorKind, Result};
use crate::format::traits::Context;
use crate::format::xiph::crc::crc16;
use crate::format::xiph::flac::{FrameHeader, MAX_FRAME_HEADER};
use crate::source::Source;

/// Bytes examined per step of the frame scan.
const SCAN_CHUNK: usize = 4096;
/// How far the search for the first frame may validate one candidate.
const FIRST_FRAME_PROBE: u64 = 256 << 10;
/// How many candidates the search for the first frame validates.
const FIRST_FRAME_CANDIDATES: u32 = 16;
/// Bytes read at a time by the searches for a first frame.
const HEADER_SEARCH_CHUNK: usize = 512;
/// How far past a seek's bisection point a frame header is looked for
/// (128 KiB: several of the longest frames): bounds one bisection step.
const SEEK_HEADER_SPAN: u64 = 1 << 17;

/// Where a frame ends.
#[derive(Debug, Clone, Copy)]
pub(super) struct FrameEnd {
    /// Offset of the first byte after the frame.
    pub end: u64,
    /// The header found there (none at the end of the input).
    pub next: Option<FrameHeader>,
    /// Whether the frame's CRC-16 checked.
    pub crc_ok: bool,
    /// Whether the input ends inside the next frame's header, or before a
    /// candidate end could be proven: the frame is the last one given.
    pub cut: bool,
}

/// Bytes of the input from `start`, grown on demand: borrowed from the input
/// in slice mode, gathered into scratch in reader mode, so that a frame is
/// read once both to find its end and to deliver it.
struct Window {
    start: u64,
    have: usize,
    slice: bool,
}

impl Window {
    fn new<S: Source>(src: &S, start: u64) -> Self {
        Window {
            start,
            have: 0,
            slice: src.is_slice(),
        }
    }

    /// Up to `want` bytes from the start (fewer at the end of the input, or
    /// when a reader's scratch is full).
    #[inline]
    fn get<'s, S: Source>(&mut self, src: &'s mut S, want: usize) -> Result<&'s [u8]> {
        let avail = src.len().saturating_sub(self.start);
        let want = want.min(usize::try_from(avail).unwrap_or(usize::MAX));
        if self.slice {
            return src.bytes(self.start, want);
        }
        let want = want.min(src.scratch_len());
        if want > self.have {
            src.gather(self.start + self.have as u64, want - self.have, self.have)?;
            self.have = want;
        }
        let src: &'s S = src;
        src.joined(self.have)
    }
}

/// The state of one search for a frame's end: the CRC-16 of the bytes
/// scanned so far, and the candidates an end may fall back on.
struct EndSearch<'h> {
    /// The frame's header.
    h: &'h FrameHeader,
    /// Offset of the frame.
    start: u64,
    file_len: u64,
    /// Bytes scanned from `start` (positions within the window).
    scanned: usize,
    /// CRC-16 (§9.3) of the bytes before `scanned`.
    crc: u16,
    /// The first candidate header that continues or repeats the numbering
    /// (§9.1.5), for a damaged frame whose CRC-16 never checks.
    fallback: Option<(usize, FrameHeader)>,
    /// The first header the end of the input cuts (before any fallback), and
    /// whether the frame's CRC-16 checks up to it.
    cut_header: Option<(usize, bool)>,
}

impl EndSearch<'_> {
    /// The frame ends `p` bytes after its start.
    #[inline(always)]
    fn end_at(&self, p: usize, next: Option<FrameHeader>, crc_ok: bool, cut: bool) -> FrameEnd {
        FrameEnd {
            end: self.start + p as u64,
            next,
            crc_ok,
            cut,
        }
    }

    /// The window holds all the rest of the input and all of it was scanned:
    /// where the frame ends, decided by a cut header, the fallback or the
    /// CRC-16 over all the rest.
    fn at_end_of_input(&self) -> FrameEnd {
        // Under `cfg(fuzzing)` the CRC-16 is not checked here either: a
        // frame that runs to the end cannot be told from a cut one (a
        // `truncation` find: a prefix whose last bytes happened to be the
        // frame's CRC-16 took it as the first frame, the whole input,
        // whose frame runs on, did not).
        let whole_ok = !cfg!(fuzzing) && self.crc == 0;
        if let Some((p, ok)) = self.cut_header {
            // A header the end of the input cuts: the whole input may end
            // the frame at it (by its CRC-16, or by the numbering of a
            // damaged frame), so the frame ends there and the next is
            // cut, flagged unless its CRC-16 checks there. A CRC-16 that
            // checks over all the rest says the frame ends with the
            // input instead (the last byte of a file may be 0xFF).
            if ok || !whole_ok {
                return self.end_at(p, None, ok, true);
            }
        }
        if let Some((p, nh)) = self.fallback {
            // The input ends before the CRC had a frame's length past
            // the candidate to prove it false. A candidate that
            // continues the numbering ends the frame (a damaged frame
            // near the end of a file keeps the frames after it). One
            // that only repeats it may be a copy inside the frame, which
            // a longer input would end later (a `truncation` fuzz find):
            // the frame ends there, flagged, and it is the last.
            let repeat = !self.h.is_followed_by(&nh);
            return self.end_at(p, (!repeat).then_some(nh), false, repeat);
        }
        FrameEnd {
            end: self.file_len,
            next: None,
            crc_ok: whole_ok,
            cut: false,
        }
    }

    /// A sync code at `i` of the window `w`: whether the header there ends
    /// the frame (its CRC-16 checks up to it), else noted as the fallback or
    /// as a header the end of the input cuts. Inlined into the scan, so
    /// that the search's state stays in registers there.
    #[inline(always)]
    fn candidate(&mut self, w: &[u8], i: usize, at_eof: bool) -> Option<FrameEnd> {
        let end = (i + MAX_FRAME_HEADER).min(w.len());
        if let Some(nh) = w.get(i..end).and_then(FrameHeader::parse) {
            let crc_ok = if cfg!(fuzzing) {
                self.h.is_followed_by(&nh)
            } else {
                self.crc == 0
            };
            if crc_ok {
                return Some(self.end_at(i, Some(nh), true, false));
            }
            if self.fallback.is_none() && self.h.may_precede(&nh) {
                self.fallback = Some((i, nh));
            }
        } else if at_eof
            && self.fallback.is_none()
            && self.cut_header.is_none()
            && w.get(i..end).is_some_and(FrameHeader::could_begin)
        {
            // The input cuts a header here; decided at the end (see
            // `at_end_of_input`). With a candidate pending, the end-of-input
            // rule for it decides (the whole input would end the frame
            // there first).
            self.cut_header = Some((i, !cfg!(fuzzing) && self.crc == 0));
        }
        None
    }

    /// Scans the window `w` from `scanned` to `limit`, carrying the CRC-16
    /// over the bytes passed: the frame's end when a header proves it (or
    /// the fallback's deadline passes), else `None` with `scanned` at
    /// `limit`. The per-byte hot path: the sync codes are found a word at a
    /// time ([`find_sync`]), and the CRC-16 runs over the whole run of bytes
    /// between them.
    #[inline(always)]
    fn scan(&mut self, w: &[u8], limit: usize, at_eof: bool) -> Option<FrameEnd> {
        // The position, the CRC and the shortest frame in locals (registers)
        // for the loop; the CRC goes back to the state where a candidate
        // reads it and at the end.
        let mut i = self.scanned;
        let mut crc = self.crc;
        let min_next = self.h.len as usize;
        while i < limit {
            // A damaged frame: the CRC-16 gets a frame's length past the
            // numbering candidate to prove it false (a header at or before
            // `2p + MAX_FRAME_HEADER`), then the numbering is trusted. The
            // deadline is a position, not the first 0xFF byte after it: a
            // scan that found no 0xFF there took a later header, which a
            // prefix cut at that header's 0xFF did not (a `truncation` find).
            let deadline = self
                .fallback
                .map(|(p, _)| p.saturating_mul(2).saturating_add(MAX_FRAME_HEADER + 1));
            if let (Some(d), Some((p, nh))) = (deadline, self.fallback) {
                if i >= d {
                    return Some(self.end_at(p, Some(nh), false, false));
                }
            }
            let stop = deadline.map_or(limit, |d| d.min(limit));
            // No header begins before the shortest frame's end.
            let Some(p) = find_sync(w, i.max(min_next), stop) else {
                crc = crc16(crc, w.get(i..stop).unwrap_or(&[]));
                i = stop;
                continue;
            };
            crc = crc16(crc, w.get(i..p).unwrap_or(&[]));
            i = p;
            self.crc = crc;
            if let Some(e) = self.candidate(w, i, at_eof) {
                return Some(e);
            }
            crc = crc16(crc, &[0xFF]);
            i += 1;
        }
        self.crc = crc;
        self.scanned = i;
        None
    }
}

/// Scans for the end of the frame with header `h` at `start` (see the module
/// notes). `max_len` bounds the frame length.
///
/// Errors: `LimitExceeded` when no end is found within `max_len`;
/// `ScratchTooSmall` when a reader's scratch cannot hold the frame.
pub(super) fn find_frame_end<S: Source>(src: &mut S, start: u64, h: &FrameHeader, max_len: u64) -> Result<FrameEnd> {
    let mut win = Window::new(src, start);
    let mut search = EndSearch {
        h,
        start,
        file_len: src.len(),
        scanned: 0,
        crc: 0,
        fallback: None,
        cut_header: None,
    };
    loop {
        let w = win.get(src, search.scanned.saturating_add(SCAN_CHUNK + MAX_FRAME_HEADER))?;
        let wlen = w.len();
        let at_eof = start.saturating_add(wlen as u64) >= search.file_len;
        let limit = if at_eof {
            wlen
        } else {
            wlen.saturating_sub(MAX_FRAME_HEADER - 1)
        };
        if search.scanned >= limit {
            if !at_eof {
                return Err(Error::new(
                    ErrorKind::ScratchTooSmall,
                    start,
                    &"flac frame: longer than the reader's scratch buffer (RFC 9639 §9)",
                ));
            }
            return Ok(search.at_end_of_input());
        }
        if let Some(e) = search.scan(w, limit, at_eof) {
            return Ok(e);
        }
        if search.scanned as u64 > max_len {
            if let Some((p, nh)) = search.fallback {
                return Ok(search.end_at(p, Some(nh), false, false));
            }
            return Err(Error::limit(
                start,
                &"flac frame: no next frame header within Limits::max_packet (RFC 9639 §9)",
            ));
        }
    }
}

/// The frame header at `at`, if one parses there.
fn header_at<S: Source>(src: &mut S, at: u64) -> Result<Option<FrameHeader>> {
    let mut h = [0u8; MAX_FRAME_HEADER];
    let n = src.read_at(at, &mut h)?;
    Ok(h.get(..n).and_then(FrameHeader::parse))
}

/// Finds the first frame at or after `from`: the header at `from` itself
/// when valid, else the first header within the resync limit whose frame's
/// CRC-16 checks.
pub(super) fn find_first_frame<S: Source>(src: &mut S, ctx: &Context, from: u64) -> Result<Option<(u64, FrameHeader)>> {
    if let Some(fh) = header_at(src, from)? {
        return Ok(Some((from, fh)));
    }
    let stop = from.saturating_add(ctx.limits.resync_bytes).min(src.len());
    let mut buf = [0u8; HEADER_SEARCH_CHUNK];
    let mut at = from;
    let mut tried = 0u32;
    while at < stop && tried < FIRST_FRAME_CANDIDATES {
        let n = src.read_at(at, &mut buf)?;
        if n < 2 {
            break;
        }
        let mut next_at = at + (n as u64) - 1;
        for k in 0..n - 1 {
            if buf.get(k) == Some(&0xFF) && buf.get(k + 1).is_some_and(|&b| b & 0xFE == 0xF8) {
                let pos = at + k as u64;
                let Some(fh) = header_at(src, pos)? else {
                    continue;
                };
                tried += 1;
                if tried > FIRST_FRAME_CANDIDATES {
                    break;
                }
                match find_frame_end(src, pos, &fh, FIRST_FRAME_PROBE) {
                    Ok(e) if e.crc_ok => return Ok(Some((pos, fh))),
                    // Without the CRC-16 (`cfg(fuzzing)`) a candidate whose
                    // frame the end of the input leaves unended is not
                    // disproved: a longer input may end it by the numbering.
                    // A later candidate lies inside that frame, so the search
                    // ends undecided (a `truncation` find: a prefix took a
                    // later candidate than the whole input). With the CRC-16
                    // such a frame failed its check, and the search goes on.
                    Ok(e) if cfg!(fuzzing) && (e.next.is_none() || e.cut) => return Ok(None),
                    // A failing reader is not a damaged candidate: say so
                    // rather than find no frame (a `slice_vs_stream` find: a
                    // forward-only reader gave no packet and no error).
                    Err(e) if matches!(e.kind(), ErrorKind::Io(_)) => return Err(e),
                    _ => {}
                }
                next_at = next_at.max(pos + 1);
            }
        }
        at = next_at;
    }
    Ok(None)
}

/// Finds a frame header at or after `from` (before `until`, and within
/// [`SEEK_HEADER_SPAN`]) that agrees with the first frame's blocking
/// strategy, channels, sample size and rate: a seek landing point.
pub(super) fn find_first_frame_near<S: Source>(
    src: &mut S,
    from: u64,
    until: u64,
    like: &FrameHeader,
) -> Result<Option<(u64, FrameHeader)>> {
    let mut buf = [0u8; HEADER_SEARCH_CHUNK];
    let mut at = from;
    let stop = until.min(from.saturating_add(SEEK_HEADER_SPAN));
    while at < stop {
        let n = src.read_at(at, &mut buf)?;
        if n <= MAX_FRAME_HEADER {
            return Ok(None);
        }
        for k in 0..n - MAX_FRAME_HEADER {
            if buf.get(k) != Some(&0xFF) {
                continue;
            }
            if let Some(fh) = buf.get(k..k + MAX_FRAME_HEADER).and_then(FrameHeader::parse) {
                if fh.variable == like.variable
                    && fh.channels == like.channels
                    && fh.bits_per_sample == like.bits_per_sample
                    && fh.sample_rate == like.sample_rate
                {
                    return Ok(Some((at + k as u64, fh)));
                }
            }
        }
        at += (n - MAX_FRAME_HEADER) as u64;
    }
    Ok(None)
}
