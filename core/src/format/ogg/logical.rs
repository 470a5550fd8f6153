//! Logical bitstreams (RFC 3533 §4, §5): the table of streams by serial
//! number, chains, and packets taken from the lacing values of each page,
//! across pages when a packet spans them. A packet is located, not copied:
//! its pieces in the input (or, for a packet over more pages than
//! [`MAX_PIECES`], where it starts, found again by a [`Walker`]).

use crate::error::{Error, Result};
use crate::format::traits::Context;
use crate::source::Source;

use super::mapping::{CodecState, OggCodec, Timing, NOPTS};
use super::physical::{self, find_page, read_page, Found, Page, PageRead, FLAG_BOS, FLAG_CONTINUED, MAX_SEGMENTS};

/// Most logical streams tracked at once. Pages of further serials are
/// skipped with `ogg.stream-capacity`.
pub const MAX_STREAMS: usize = 8;
/// Pieces of a spanning packet remembered as its pages go by; a longer
/// packet is found again by walking its pages when it completes.
pub(super) const MAX_PIECES: usize = 4;
/// Most pages a [`Walker`] crosses to reach the next byte of one packet
/// (its own pages and other streams' pages between them) before it gives up
/// with a `Limit` error: it bounds the work of one read over damaged input
/// and is far above any real interleaving.
pub(super) const MAX_WALK_PAGES: u32 = 100_000;

/// One contiguous piece of a packet in the input.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(super) struct Piece {
    /// Offset of its first byte.
    pub(super) off: u64,
    /// Its length.
    pub(super) len: u32,
}

/// Where a packet is: its first byte, the end of the body of the page it
/// starts on, and its length.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(super) struct Loc {
    /// Offset of the packet's first byte.
    pub(super) start: u64,
    /// End of the body of the page it starts on.
    pub(super) body_end: u64,
    /// Packet length.
    pub(super) len: u32,
}

/// Reads a packet's bytes in order, crossing to the next page of its
/// stream when a page's body ends.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(super) struct Walker {
    /// The packet's stream: pages of other serials are stepped over.
    pub(super) serial: u32,
    /// Offset of the next byte.
    pub(super) pos: u64,
    /// End of the body of the page `pos` is on.
    pub(super) body_end: u64,
    /// Bytes of the packet not yet read.
    pub(super) remaining: u32,
}

impl Walker {
    /// A walker at the start of the packet at `loc` of stream `serial`.
    pub(super) fn new(serial: u32, loc: Loc) -> Self {
        Walker {
            serial,
            pos: loc.start,
            body_end: loc.body_end,
            remaining: loc.len,
        }
    }

    /// The next contiguous run of at most `max` bytes of the packet.
    pub(super) fn next_run<S: Source>(&mut self, src: &mut S, resync: u64, max: u32) -> Result<Option<(u64, u32)>> {
        if self.remaining == 0 {
            return Ok(None);
        }
        let mut pages = 0u32;
        while self.pos >= self.body_end {
            pages += 1;
            if pages > MAX_WALK_PAGES {
                return Err(Error::limit(
                    self.pos,
                    &"ogg packet: spans more pages than a walk follows (RFC 3533 §5)",
                ));
            }
            let at = self.body_end;
            let p = match read_page(src, at, false)? {
                PageRead::Page(p) => p,
                PageRead::Cut => return Err(physical::cut_error(at)),
                PageRead::Bad | PageRead::BadCrc => match find_page(src, at, resync)? {
                    Found::Page(p, _, _) => p,
                    Found::Cut(c) => return Err(physical::cut_error(c)),
                    Found::End | Found::Lost => {
                        return Err(Error::malformed(
                            at,
                            &"ogg packet: continues past the last page of the input (RFC 3533 §5)",
                        ))
                    }
                },
            };
            if p.serial == self.serial {
                self.pos = p.body;
            } else {
                self.pos = p.end();
            }
            self.body_end = p.end();
        }
        let n = (self.remaining as u64).min(self.body_end - self.pos).min(max as u64) as u32;
        let run = (self.pos, n);
        self.pos += n as u64;
        self.remaining -= n;
        Ok(Some(run))
    }

    /// Copies the next bytes into `buf`; returns how many (fewer at the end
    /// of the packet).
    pub(super) fn read<S: Source>(&mut self, src: &mut S, resync: u64, buf: &mut [u8]) -> Result<usize> {
        let mut done = 0usize;
        while done < buf.len() {
            let want = (buf.len() - done) as u32;
            let Some((off, n)) = self.next_run(src, resync, want)? else {
                break;
            };
            let dst = buf.get_mut(done..done + n as usize).unwrap_or(&mut []);
            src.read_exact_at(off, dst)?;
            done += n as usize;
        }
        Ok(done)
    }

    /// Skips `n` bytes.
    pub(super) fn skip<S: Source>(&mut self, src: &mut S, resync: u64, mut n: u32) -> Result<()> {
        while n > 0 {
            let Some((_, k)) = self.next_run(src, resync, n)? else {
                break;
            };
            n -= k;
        }
        Ok(())
    }

    /// Gathers the next `n` bytes into scratch from offset 0.
    pub(super) fn gather<S: Source>(&mut self, src: &mut S, resync: u64, n: u32) -> Result<usize> {
        let mut at = 0usize;
        while at < n as usize {
            let Some((off, k)) = self.next_run(src, resync, n - at as u32)? else {
                break;
            };
            src.gather(off, k as usize, at)?;
            at += k as usize;
        }
        Ok(at)
    }
}

/// One logical stream.
#[derive(Debug, Clone)]
pub(super) struct Stream {
    /// Serial number of its pages (of the current link of a chain).
    pub(super) serial: u32,
    /// The codec its first page named.
    pub(super) codec: OggCodec,
    /// The codec mapping's state.
    pub(super) state: CodecState,
    /// Index of its track, once its identification header was read.
    pub(super) track: Option<usize>,
    /// The stream's first data packet was seen.
    pub(super) headers_done: bool,
    /// A header failed: the stream's packets are skipped.
    pub(super) broken: bool,
    /// Header packets taken.
    pub(super) nb_header: u8,
    /// Bytes of the packet being assembled.
    pub(super) psize: u32,
    /// Pieces of the packet being assembled, while they fit.
    pub(super) pieces: heapless::Vec<Piece, MAX_PIECES>,
    /// Where the packet being assembled starts.
    pub(super) start: Loc,
    /// The packet being assembled has more pieces than are kept.
    pub(super) overflow: bool,
    /// The last page ended inside a packet.
    pub(super) incomplete: bool,
    /// The last page of this stream was not a BOS page.
    pub(super) got_data: bool,
    /// Flags of the last page of this stream.
    pub(super) flags: u8,
    /// ffmpeg's per-stream timing state.
    pub(super) timing: Timing,
    /// libavformat's running dts (`cur_dts`), once a timestamp is known.
    pub(super) cur_dts: Option<i64>,
    /// Header packets by slot (identification, comment, setup).
    pub(super) headers: [Option<Loc>; 3],
    /// The comment block: where its packet is and where in it the block
    /// starts.
    pub(super) comment: Option<(Loc, u32)>,
    /// Granule of the last page with one, from the scan of the end.
    pub(super) last_granule: Option<u64>,
}

impl Stream {
    /// A stream of `codec` with no packet read yet; an unknown codec's
    /// stream is broken from the start (its pages are skipped).
    pub(super) fn new(serial: u32, codec: OggCodec) -> Self {
        Stream {
            serial,
            codec,
            state: CodecState::new(codec),
            track: None,
            headers_done: false,
            broken: codec == OggCodec::Unknown,
            nb_header: 0,
            psize: 0,
            pieces: heapless::Vec::new(),
            start: Loc::default(),
            overflow: false,
            incomplete: false,
            got_data: false,
            flags: 0,
            timing: Timing::default(),
            cur_dts: None,
            headers: [None; 3],
            comment: None,
            last_granule: None,
        }
    }
}

/// The page whose packets are being taken.
#[derive(Debug, Clone)]
pub(super) struct Cur {
    /// The page.
    pub(super) page: Page,
    /// Index of its stream.
    pub(super) stream: usize,
    /// Next lacing value.
    pub(super) segp: usize,
    /// Offset of the next segment's bytes.
    pub(super) pos: u64,
}

/// For each lacing value of the current page that ends a packet started on
/// that page, the packet's first two bytes (kept outside [`Run`] so that a
/// seek's saved state stays small).
pub(super) type Starts = [[u8; 2]; MAX_SEGMENTS];

/// Reads the first two bytes of every packet that starts on `page`.
fn fill_starts<S: Source>(src: &mut S, page: &Page, starts: &mut Starts) -> Result<()> {
    let mut run_start = page.body;
    let mut p = page.body;
    for (i, &s) in page.lacing().iter().enumerate() {
        p += s as u64;
        if s < 255 {
            if let Some(slot) = starts.get_mut(i) {
                let mut b = [0u8; 2];
                let avail = page.end().saturating_sub(run_start).min(2) as usize;
                src.read_at(run_start, b.get_mut(..avail).unwrap_or(&mut []))?;
                *slot = b;
            }
            run_start = p;
        }
    }
    Ok(())
}

/// A complete packet, not yet delivered.
#[derive(Debug, Clone)]
pub(super) struct Extracted {
    /// Index of its stream.
    pub(super) stream: usize,
    /// Packet length.
    pub(super) size: u32,
    /// Its pieces, when there are at most [`MAX_PIECES`].
    pub(super) pieces: heapless::Vec<Piece, MAX_PIECES>,
    /// Where it starts.
    pub(super) loc: Loc,
    /// More pieces than were kept: a [`Walker`] finds them.
    pub(super) overflow: bool,
}

/// Packets of the sought stream to drop after a seek, until the landing
/// packet.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct SeekSkip {
    /// Index of the sought stream.
    pub(super) stream: usize,
    /// Audio: drop while `pts + duration <= target`. Video: drop while
    /// `pts < target` (the keyframe).
    pub(super) target: i64,
    /// The stream is video (lands on a keyframe).
    pub(super) video: bool,
}

/// The page a seek resumes on: its packets of the sought stream are only
/// timed (they end before the target), and the page's granule times the
/// packet after them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Land {
    /// Index of the sought stream.
    pub(super) stream: usize,
    /// Offset of the page.
    pub(super) page: u64,
    /// Its granule position.
    pub(super) granule: u64,
}

/// The reading position and every stream's state: what a seek saves and
/// restores.
#[derive(Debug, Clone)]
pub(super) struct Run {
    /// The page a seek resumes on, until it is left.
    pub(super) land: Option<Land>,
    /// The logical streams, in the order their first pages came.
    pub(super) streams: heapless::Vec<Stream, MAX_STREAMS>,
    /// The page whose packets are being taken.
    pub(super) cur: Option<Cur>,
    /// Where the next page is looked for.
    pub(super) next_page: u64,
    /// A packet taken but not yet delivered (the first data packet).
    pub(super) pending: Option<Extracted>,
    /// Packets to drop after a seek.
    pub(super) skip: Option<SeekSkip>,
    /// Reading ended (end of input or a fatal error was reported).
    pub(super) done: bool,
}

impl Run {
    pub(super) fn new() -> Self {
        Run {
            streams: heapless::Vec::new(),
            cur: None,
            next_page: 0,
            pending: None,
            skip: None,
            land: None,
            done: false,
        }
    }

    /// Reads the next page into `cur`. Returns `false` at the end of the
    /// input.
    fn read_next_page<S: Source>(&mut self, src: &mut S, ctx: &mut Context, starts: &mut Starts) -> Result<bool> {
        if let Some(l) = self.land {
            if self.cur.as_ref().is_some_and(|c| c.page.offset == l.page) {
                // Leaving the landing page: if none of its packets set the
                // next timestamp, its granule does.
                if let Some(st) = self.streams.get_mut(l.stream) {
                    if st.timing.lastpts == NOPTS {
                        let (g, _) = st.state.granule_to_ts(l.granule);
                        st.timing.lastpts = g;
                        st.timing.lastdts = g;
                    }
                }
                self.land = None;
            }
        }
        let at = self.next_page;
        let page = match find_page(src, at, ctx.limits.resync_bytes)? {
            Found::Page(p, skipped, bad_crc) => {
                if bad_crc {
                    ctx.diags.report("ogg.crc-mismatch", at);
                } else if skipped > 0 {
                    ctx.diags.report("ogg.resync", at);
                }
                p
            }
            Found::End => {
                if at < src.len() {
                    ctx.diags.report("ogg.trailing-garbage", at);
                }
                return Ok(false);
            }
            Found::Lost => {
                ctx.diags.report("ogg.sync-lost", at);
                return Ok(false);
            }
            Found::Cut(c) => return Err(physical::cut_error(c)),
        };
        self.next_page = page.end();
        let idx = match self.streams.iter().position(|s| s.serial == page.serial) {
            Some(i) => i,
            None => match self.new_stream(src, ctx, &page)? {
                Some(i) => i,
                None => {
                    self.cur = None;
                    return Ok(true);
                }
            },
        };
        let Some(st) = self.streams.get_mut(idx) else {
            return Ok(true);
        };
        st.got_data = page.flags & FLAG_BOS == 0;
        st.timing.granule = page.granule;
        st.flags = page.flags;
        let mut segp = 0usize;
        let mut pos = page.body;
        if page.flags & FLAG_CONTINUED != 0 || st.incomplete {
            if st.psize == 0 {
                // The page continues a packet whose start was not seen:
                // drop its rest (RFC 3533 §6; ffmpeg does the same).
                while let Some(&s) = page.lacing().get(segp) {
                    segp += 1;
                    pos += s as u64;
                    if s < 255 {
                        break;
                    }
                }
            }
        } else {
            st.psize = 0;
            st.pieces.clear();
            st.overflow = false;
        }
        if !st.broken {
            fill_starts(src, &page, starts)?;
        }
        self.cur = Some(Cur {
            page,
            stream: idx,
            segp,
            pos,
        });
        Ok(true)
    }

    /// A page of an unknown serial: a new stream before any data, else the
    /// next link of a chain (RFC 3533 §4) or, where ffmpeg gives up, a new
    /// stream.
    fn new_stream<S: Source>(&mut self, src: &mut S, ctx: &mut Context, page: &Page) -> Result<Option<usize>> {
        let mut magic = [0u8; 8];
        let n = src.read_at(
            page.body,
            magic.get_mut(..(page.body_len as usize).min(8)).unwrap_or(&mut []),
        )?;
        // ffmpeg identifies a stream by the start of its first page's body,
        // beginning of stream or not.
        let codec = if page.flags & FLAG_CONTINUED == 0 {
            OggCodec::identify(magic.get(..n).unwrap_or(&[]))
        } else {
            OggCodec::Unknown
        };
        let data_seen = self.streams.iter().any(|s| s.got_data);
        if data_seen && self.streams.len() == 1 {
            if let Some(st) = self.streams.first_mut() {
                if st.codec == codec && codec != OggCodec::Unknown {
                    // A chain: the new link continues the stream (ffmpeg's
                    // ogg_replace_stream).
                    ctx.diags.report("ogg.chained", page.offset);
                    st.serial = page.serial;
                    st.timing.lastpts = 0;
                    st.timing.lastdts = 0;
                    if codec == OggCodec::Opus {
                        st.headers_done = false;
                    }
                    return Ok(Some(0));
                }
            }
        }
        if codec == OggCodec::Unknown {
            ctx.diags.report(
                if page.flags & FLAG_BOS != 0 {
                    "ogg.unknown-codec"
                } else {
                    "ogg.unknown-serial"
                },
                page.offset,
            );
        }
        if self.streams.push(Stream::new(page.serial, codec)).is_err() {
            ctx.diags.report("ogg.stream-capacity", page.offset);
            return Ok(None);
        }
        Ok(Some(self.streams.len() - 1))
    }

    /// The next complete packet of any stream, in page order.
    pub(super) fn extract<S: Source>(
        &mut self,
        src: &mut S,
        ctx: &mut Context,
        starts: &mut Starts,
    ) -> Result<Option<Extracted>> {
        loop {
            let exhausted = match &self.cur {
                Some(c) => c.segp >= c.page.nsegs as usize,
                None => true,
            };
            if exhausted {
                if !self.read_next_page(src, ctx, starts)? {
                    if self.streams.iter().any(|s| s.psize > 0 && !s.broken) {
                        ctx.diags.report("ogg.incomplete-packet", self.next_page);
                    }
                    return Ok(None);
                }
                continue;
            }
            let Some(cur) = self.cur.as_mut() else { continue };
            let Some(st) = self.streams.get_mut(cur.stream) else {
                cur.segp = cur.page.nsegs as usize;
                continue;
            };
            if st.broken {
                cur.segp = cur.page.nsegs as usize;
                continue;
            }
            let run_start = cur.pos;
            let mut complete = false;
            while let Some(&s) = cur.page.lacing().get(cur.segp) {
                cur.segp += 1;
                cur.pos += s as u64;
                st.psize = st.psize.saturating_add(s as u32);
                if s < 255 {
                    complete = true;
                    break;
                }
            }
            let run_len = (cur.pos - run_start) as u32;
            if st.psize == run_len {
                // The packet starts here.
                st.start = Loc {
                    start: run_start,
                    body_end: cur.page.end(),
                    len: 0,
                };
                st.pieces.clear();
                st.overflow = false;
            }
            if run_len > 0
                && !st.overflow
                && st
                    .pieces
                    .push(Piece {
                        off: run_start,
                        len: run_len,
                    })
                    .is_err()
            {
                st.overflow = true;
            }
            if st.psize > ctx.limits.max_packet {
                st.broken = true;
                ctx.diags.report("ogg.packet-too-large", run_start);
                continue;
            }
            if !complete {
                st.incomplete = st.psize > 0;
                continue;
            }
            st.incomplete = false;
            let size = st.psize;
            st.psize = 0;
            let mut loc = st.start;
            loc.len = size;
            let out = Extracted {
                stream: cur.stream,
                size,
                pieces: core::mem::take(&mut st.pieces),
                loc,
                overflow: st.overflow,
            };
            st.overflow = false;
            return Ok(Some(out));
        }
    }
}

/// Reads the first bytes of a packet into `buf`; returns how many.
pub(super) fn packet_head<S: Source>(
    src: &mut S,
    ctx: &Context,
    serial: u32,
    ex: &Extracted,
    buf: &mut [u8],
) -> Result<usize> {
    if ex.size == 0 {
        // ffmpeg looks at the bytes where an empty packet sits: the next
        // packet's, or nothing at the end of the page.
        let n = (ex.loc.body_end.saturating_sub(ex.loc.start) as usize)
            .min(buf.len())
            .min(2);
        return src.read_at(ex.loc.start, buf.get_mut(..n).unwrap_or(&mut []));
    }
    let want = buf.len().min(ex.size as usize);
    let mut done = 0usize;
    if !ex.overflow {
        for p in &ex.pieces {
            if done >= want {
                break;
            }
            let n = (p.len as usize).min(want - done);
            src.read_exact_at(p.off, buf.get_mut(done..done + n).unwrap_or(&mut []))?;
            done += n;
        }
        return Ok(done);
    }
    let mut w = Walker::new(serial, ex.loc);
    w.read(src, ctx.limits.resync_bytes, buf.get_mut(..want).unwrap_or(&mut []))
}
