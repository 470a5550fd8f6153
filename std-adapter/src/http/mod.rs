//! [`HttpSource`]: a resource on an HTTP or HTTPS server, read with closed
//! range requests through a bounded block cache.
//!
//! References: RFC 9110 §14 (range requests: `Range`, `Content-Range`, 206,
//! 416), §15.4 (redirection), §8.6 (`Content-Length`), §8.8.3 (`ETag`).

mod conn;
mod headers;

use crate::scratch::Scratch;
pub use conn::ErrorLog;
use conn::{Conn, Fetch, Method};
pub use headers::is_http_url;
use headers::*;
use mediaslice::{Error, ErrorKind, IoStats, Limits, Result, Source};
use std::time::{Duration, Instant};
use ureq::http::{header, StatusCode};
use ureq::Agent;

/// Settings of an [`HttpSource`]. Every field has a documented default
/// ([`HttpConfig::default`]); see also `docs/sources.md`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HttpConfig {
    /// Bytes per cache block; every request covers whole blocks (except
    /// large payloads, which are asked for exactly). Default 4 KiB, so a
    /// probe that looks at a few places asks for a few pages.
    pub block_size: usize,
    /// Blocks in the cache (least recently used out). Default 128, so the
    /// cache holds at most 512 KiB; a block's memory is allocated on first
    /// use.
    pub blocks: usize,
    /// Most blocks one request fetches ahead while reading sequentially.
    /// Read-ahead starts at 0 and doubles (1, 2, 4, ...) with each miss that
    /// continues the previous request, up to this (and at most half the
    /// cache). Default 32 (128 KiB).
    pub max_read_ahead: usize,
    /// Most redirects followed per request (only to `http:` and `https:`).
    /// Default 5.
    pub max_redirects: u32,
    /// Most time to set up a connection (DNS, TCP, TLS). Default 10 s.
    pub connect_timeout: Option<Duration>,
    /// Most time to wait for a response's headers, and for each read of its
    /// body. Default 30 s.
    pub read_timeout: Option<Duration>,
    /// Most requests per open (redirect hops and `HEAD` included). `None`
    /// (the default) means what a full read needs:
    /// [`HttpSource::DEFAULT_REQUESTS`] plus one per
    /// [`HttpSource::BYTES_PER_REQUEST`] bytes of the resource, fixed when
    /// the length is learnt (see `docs/bench/io.md` for what the corpus
    /// needs).
    pub max_requests: Option<u64>,
    /// Most body bytes received per open. `None` (the default) means what
    /// a full read needs: the resource once, plus an eighth, plus
    /// [`HttpSource::DEFAULT_BYTES_SLACK`], fixed when the length is learnt
    /// (a full read of the corpus receives at most 1.02 times the file).
    /// A caller that only probes should set a few MiB.
    pub max_bytes: Option<u64>,
    /// Most body bytes skipped per open in answers that ignore `Range` (a
    /// `200` with the whole body, read from its start up to the byte
    /// wanted). Default [`HttpSource::DEFAULT_MAX_SKIP`] (16 MiB): a server
    /// that ignores `Range` cannot make a read far into a large resource
    /// download everything before it.
    pub max_skip: u64,
    /// Most `206` answers per open that are tiny: fewer than
    /// [`HttpSource::SHORT_ANSWER`] bytes when more were asked (legal, but a
    /// server answering 16 bytes at a time would drive the request count).
    /// Default 16; past it reads fail with `LimitExceeded`.
    pub max_short_answers: u32,
    /// Most time one open may take from its first request to its last
    /// read, whatever each read does. Default 10 minutes; `None` for none.
    /// Past it reads fail with `TimedOut`.
    pub deadline: Option<Duration>,
    /// Least transfer rate, in bytes per second, averaged over
    /// [`HttpConfig::min_speed_time`] of time spent waiting on the network
    /// (as curl's `--speed-limit`). Default 1024; 0 for none. A server
    /// slower than this (one that drip-feeds a byte a second, each read
    /// within the read timeout) fails the read with `TimedOut`.
    pub min_speed: u64,
    /// The window of [`HttpConfig::min_speed`] (curl's `--speed-time`).
    /// Default 20 s.
    pub min_speed_time: Duration,
    /// Whether to use a proxy named by `HTTP_PROXY`/`HTTPS_PROXY`/`ALL_PROXY`
    /// (and honour `NO_PROXY`). Default true.
    pub env_proxy: bool,
}

impl Default for HttpConfig {
    fn default() -> Self {
        HttpConfig {
            block_size: HttpSource::DEFAULT_BLOCK,
            blocks: HttpSource::DEFAULT_BLOCKS,
            max_read_ahead: HttpSource::DEFAULT_READ_AHEAD,
            max_redirects: 5,
            connect_timeout: Some(Duration::from_secs(10)),
            read_timeout: Some(Duration::from_secs(30)),
            max_requests: None,
            max_bytes: None,
            max_skip: HttpSource::DEFAULT_MAX_SKIP,
            max_short_answers: 16,
            deadline: Some(Duration::from_secs(600)),
            min_speed: 1024,
            min_speed_time: Duration::from_secs(20),
            env_proxy: true,
        }
    }
}

/// What an [`HttpSource`] has sent and received so far.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct HttpStats {
    /// Requests sent: ranged `GET`s, redirect hops, `HEAD`s.
    pub requests: u64,
    /// Body bytes received (all of them, those skipped included).
    pub bytes: u64,
    /// Body bytes received only to be skipped, from a server that ignores
    /// `Range` and sends the whole body (included in `bytes`).
    pub skipped: u64,
    /// Redirects followed.
    pub redirects: u64,
    /// Connections closed early: a body not read to its end (a server that
    /// sent more than was asked for, or the whole file).
    pub dropped: u64,
}

/// A resource on an HTTP(S) server, read with closed `Range: bytes=N-M`
/// requests (RFC 9110 §14.2) through a bounded block cache, so what crosses
/// the network is close to what the parser asks for.
///
/// * **Opening** sends one ranged `GET` for the first block; its
///   `Content-Range` (`bytes 0-4095/LENGTH`) gives the length. A server that
///   ignores `Range` and answers `200` gives it in `Content-Length`; if
///   neither says, one `HEAD` is tried, then the open fails. A `416` with
///   `bytes */0` is an empty resource.
/// * **The cache**: [`HttpConfig::blocks`] blocks of
///   [`HttpConfig::block_size`] bytes. A read inside one block borrows the
///   block (no copy); a read over several blocks, up to the read-ahead span,
///   is assembled in the scratch from cached blocks; a larger read (a big
///   packet) is one request straight into the scratch, not cached. A miss
///   fetches the missing blocks in one request, plus read-ahead blocks when
///   the miss continues the previous request (sequential reading).
/// * **Misbehaving servers**: a `206` whose range starts elsewhere, whose
///   total length changes, or whose `ETag` changes is an error. A server
///   that sends more than the range asked for (or an endless body) is read
///   only up to what was asked, then the connection is dropped. A server
///   that ignores `Range` (`200` with the whole body) is read from the start
///   to the end of what is needed; the connection is kept open for a later
///   read further on and dropped otherwise. Redirects are followed for
///   `http:`/`https:` only, at most [`HttpConfig::max_redirects`] per
///   request, and the final location is used from then on.
/// * **Hard caps** per open: [`HttpConfig::max_requests`] requests,
///   [`HttpConfig::max_bytes`] body bytes, [`HttpConfig::max_skip`] bytes
///   skipped in answers that ignore `Range`, and
///   [`HttpConfig::max_short_answers`] tiny answers. Past any of them,
///   reads fail with `LimitExceeded`; whatever a server sends, the source
///   never reads more.
/// * **Time**: besides the per-read timeout, [`HttpConfig::deadline`]
///   bounds the whole open and [`HttpConfig::min_speed`] the transfer rate
///   (`TimedOut` past either), so a server that drip-feeds cannot hold a
///   read for ever.
///
/// [`Source::stats`] counts requests as `reads` and body bytes received as
/// `bytes_read`; [`HttpSource::http_stats`] has the details. Errors carry a
/// static description; [`HttpSource::last_error`] has the full text (status
/// line, URL, the transport's message).
#[derive(Debug)]
pub struct HttpSource {
    conn: Conn,
    block_size: usize,
    max_read_ahead: usize,
    blocks: Vec<Block>,
    clock: u64,
    /// Block after the end of the last fetch (for read-ahead).
    next_block: u64,
    /// Current read-ahead, in blocks.
    ahead: usize,
    scratch: Scratch,
}

struct Block {
    /// Block number (offset / block size), or `EMPTY`.
    no: u64,
    valid: usize,
    used: u64,
    /// Allocated on first use.
    data: Vec<u8>,
}

impl std::fmt::Debug for Block {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Block")
            .field("no", &self.no)
            .field("valid", &self.valid)
            .finish_non_exhaustive()
    }
}

const EMPTY: u64 = u64::MAX;

impl HttpSource {
    /// Default bytes per cache block.
    pub const DEFAULT_BLOCK: usize = 4 * 1024;
    /// Default blocks in the cache.
    pub const DEFAULT_BLOCKS: usize = 128;
    /// Default most blocks read ahead in one request.
    pub const DEFAULT_READ_AHEAD: usize = 32;
    /// Extra body bytes allowed per open on top of the length and an eighth, when
    /// [`HttpConfig::max_bytes`] is `None` (read-ahead past what is used,
    /// blocks read again after they left the cache).
    pub const DEFAULT_BYTES_SLACK: u64 = 16 << 20;
    /// Requests allowed per open on top of one per
    /// [`HttpSource::BYTES_PER_REQUEST`] bytes, when
    /// [`HttpConfig::max_requests`] is `None`.
    pub const DEFAULT_REQUESTS: u64 = 2_000;
    /// Bytes of the resource per request allowed, when
    /// [`HttpConfig::max_requests`] is `None`: one request per 16 KiB.
    pub const BYTES_PER_REQUEST: u64 = 16 << 10;
    /// Default [`HttpConfig::max_skip`]: 16 MiB.
    pub const DEFAULT_MAX_SKIP: u64 = 16 << 20;
    /// A `206` with fewer bytes than this (when more were asked) is a tiny
    /// answer, counted against [`HttpConfig::max_short_answers`].
    pub const SHORT_ANSWER: u64 = 512;

    /// Opens `url` (`http://` or `https://`) with the default settings.
    ///
    /// Errors: a bad URL, a failed connection, an HTTP error status, a
    /// server that states no length, a cap reached.
    pub fn open(url: &str) -> std::io::Result<Self> {
        Self::open_with(url, HttpConfig::default())
    }

    /// Opens `url` with `cfg`: one ranged `GET` for the first block (plus
    /// redirect hops, plus one `HEAD` if the server states no length).
    ///
    /// Errors: as [`HttpSource::open`]; also a zero block size or cache.
    pub fn open_with(url: &str, cfg: HttpConfig) -> std::io::Result<Self> {
        use std::io::{Error as IoError, ErrorKind as K};
        if !is_http_url(url) {
            return Err(IoError::new(K::InvalidInput, "not an http:// or https:// URL"));
        }
        if cfg.block_size == 0 || cfg.blocks == 0 {
            return Err(IoError::new(
                K::InvalidInput,
                "HTTP cache needs at least one block of at least one byte",
            ));
        }
        let mut b = Agent::config_builder()
            .http_status_as_error(false)
            .max_redirects(0)
            .timeout_connect(cfg.connect_timeout)
            .timeout_recv_response(cfg.read_timeout)
            .timeout_per_read(cfg.read_timeout)
            .user_agent(concat!("mediaslice/", env!("CARGO_PKG_VERSION")));
        if !cfg.env_proxy {
            b = b.proxy(None);
        }
        let agent: Agent = b.build().into();
        let mut conn = Conn {
            agent,
            url: url.to_owned(),
            original: url.to_owned(),
            len: 0,
            ranges: true,
            etag: None,
            stream: None,
            stats: HttpStats::default(),
            max_requests: cfg.max_requests.unwrap_or(Self::DEFAULT_REQUESTS),
            max_bytes: cfg.max_bytes.unwrap_or(u64::MAX),
            max_redirects: cfg.max_redirects,
            max_skip: cfg.max_skip,
            short_answers: 0,
            max_short_answers: cfg.max_short_answers,
            started: Instant::now(),
            deadline: cfg.deadline,
            min_speed: cfg.min_speed,
            min_speed_time: cfg.min_speed_time,
            window_time: Duration::ZERO,
            window_bytes: 0,
            detail: ErrorLog::default(),
        };
        let fail = |c: &Conn, e: Error| {
            let kind = match e.kind() {
                ErrorKind::Io(k) => io_kind(k),
                _ => K::Other,
            };
            IoError::new(kind, c.detail.last().unwrap_or_else(|| e.to_string()))
        };
        let first = cfg.block_size as u64;
        let resp = conn
            .send(Method::Get, Some((0, first - 1)))
            .map_err(|e| fail(&conn, e))?;
        conn.etag = header_str(&resp, header::ETAG).map(str::to_owned);
        let (len, body) = match resp.status() {
            StatusCode::PARTIAL_CONTENT => {
                let raw = header_str(&resp, header::CONTENT_RANGE);
                match raw.and_then(parse_content_range) {
                    Some((Some((0, _)), total)) => (total, Some(resp)),
                    Some((Some((a, b)), total)) => {
                        let d = format!(
                            "{}asked for byte 0, the server answered from byte {a} (asked bytes=0-{}, got Content-Range: bytes {a}-{b}/{})",
                            conn.at(),
                            first - 1,
                            total.map_or("*".to_owned(), |t| t.to_string())
                        );
                        return Err(IoError::new(K::InvalidData, d));
                    }
                    _ => {
                        let d = format!("{}{}", conn.at(), content_range_problem(raw, 0, first - 1));
                        return Err(IoError::new(K::InvalidData, d));
                    }
                }
            }
            StatusCode::OK => {
                conn.ranges = false;
                (content_length(&resp), Some(resp))
            }
            StatusCode::RANGE_NOT_SATISFIABLE => {
                match header_str(&resp, header::CONTENT_RANGE).and_then(parse_content_range) {
                    Some((None, Some(0))) => (Some(0), None),
                    _ => {
                        let d = format!("{}HTTP 416 for the first bytes of the resource", conn.at());
                        return Err(IoError::new(K::InvalidData, d));
                    }
                }
            }
            st => {
                let e = conn.status_error(st, 0);
                return Err(fail(&conn, e));
            }
        };
        let len = match len {
            Some(n) => n,
            None => {
                // No length in the answer: ask for the headers alone.
                let head = match conn.send(Method::Head, None) {
                    Ok(r) if r.status().is_success() => content_length(&r),
                    Ok(_) => None,
                    Err(e) => return Err(fail(&conn, e)),
                };
                head.ok_or_else(|| {
                    let d = format!(
                        "{}the server states no length (no Content-Range total, no Content-Length)",
                        conn.at()
                    );
                    IoError::new(K::Unsupported, d)
                })?
            }
        };
        conn.len = len;
        if cfg.max_bytes.is_none() {
            conn.max_bytes = len.saturating_add(len / 8).saturating_add(Self::DEFAULT_BYTES_SLACK);
        }
        if cfg.max_requests.is_none() {
            conn.max_requests = Self::DEFAULT_REQUESTS.saturating_add(len / Self::BYTES_PER_REQUEST);
        }
        let mut src = HttpSource {
            conn,
            block_size: cfg.block_size,
            max_read_ahead: cfg.max_read_ahead.min(cfg.blocks / 2),
            blocks: (0..cfg.blocks)
                .map(|_| Block {
                    no: EMPTY,
                    valid: 0,
                    used: 0,
                    data: Vec::new(),
                })
                .collect(),
            clock: 0,
            next_block: 0,
            ahead: 0,
            scratch: Scratch::new(Limits::default().max_packet as usize),
        };
        if let Some(resp) = body {
            let end = first.min(len);
            let f = if src.conn.ranges {
                src.conn.accept(resp, 0, end)
            } else {
                Ok(Fetch {
                    exact: content_length(&resp).is_some(),
                    reader: resp.into_body().into_reader(),
                    pos: 0,
                    end: len,
                })
            };
            if let Err(e) = f.and_then(|f| src.store(f, 0, 1)) {
                return Err(fail(&src.conn, e));
            }
        }
        Ok(src)
    }

    /// What has been sent and received so far.
    pub fn http_stats(&self) -> HttpStats {
        self.conn.stats
    }

    /// The URL requests go to now (after redirects).
    pub fn url(&self) -> &str {
        &self.conn.url
    }

    /// Whether the server honours range requests (false after a `200` with
    /// the whole body).
    pub fn ranges_supported(&self) -> bool {
        self.conn.ranges
    }

    /// The full text of the last failure (status line, URL, transport
    /// message), for the static descriptions of [`Error`].
    pub fn last_error(&self) -> Option<String> {
        self.conn.detail.last()
    }

    /// A shared handle on the last failure's text, which outlives the
    /// source (take it before moving the source into a demuxer).
    pub fn error_log(&self) -> ErrorLog {
        self.conn.detail.clone()
    }

    /// The byte cap in force for this open.
    pub fn max_bytes(&self) -> u64 {
        self.conn.max_bytes
    }

    /// The request cap in force for this open.
    pub fn max_requests(&self) -> u64 {
        self.conn.max_requests
    }

    /// Sets the most bytes the payload scratch may grow to.
    pub fn set_scratch_limit(&mut self, bytes: usize) {
        self.scratch.set_cap(bytes);
    }

    /// Bytes of cache and scratch allocated so far.
    pub fn allocated(&self) -> usize {
        self.scratch.allocated() + self.blocks.iter().map(|b| b.data.len()).sum::<usize>()
    }

    fn slot_of(&self, no: u64) -> Option<usize> {
        self.blocks.iter().position(|b| b.no == no)
    }

    fn victim(&self) -> usize {
        self.blocks
            .iter()
            .enumerate()
            .min_by_key(|(_, b)| b.used)
            .map_or(0, |(i, _)| i)
    }

    /// Reads `count` blocks from `first` out of `f` (positioned at the first
    /// block's start) into the cache.
    fn store(&mut self, mut f: Fetch, first: u64, count: u64) -> Result<()> {
        let bs = self.block_size as u64;
        for no in first..first.saturating_add(count) {
            let start = no.saturating_mul(bs);
            let n = self.conn.len.saturating_sub(start).min(bs) as usize;
            if n == 0 {
                break;
            }
            let slot = self.victim();
            self.clock += 1;
            let clock = self.clock;
            let Some(b) = self.blocks.get_mut(slot) else {
                break;
            };
            b.no = EMPTY;
            if b.data.len() < self.block_size {
                b.data.resize(self.block_size, 0);
            }
            let dst = b.data.get_mut(..n).unwrap_or(&mut []);
            self.conn.fill(&mut f, dst)?;
            b.no = no;
            b.valid = n;
            b.used = clock;
        }
        self.conn.finish(f);
        self.next_block = first.saturating_add(count);
        Ok(())
    }

    /// Makes blocks `first..=last` resident: each run of missing blocks is
    /// one request, extended by the read-ahead when it continues the
    /// previous request.
    fn ensure(&mut self, first: u64, last: u64) -> Result<()> {
        let bs = self.block_size as u64;
        let last_block = self.conn.len.saturating_sub(1) / bs;
        let mut no = first;
        while no <= last {
            if let Some(i) = self.slot_of(no) {
                self.clock += 1;
                if let Some(b) = self.blocks.get_mut(i) {
                    b.used = self.clock;
                }
                no += 1;
                continue;
            }
            if no == self.next_block {
                self.ahead = (self.ahead * 2).clamp(1, self.max_read_ahead.max(1));
            } else {
                self.ahead = 0;
            }
            let mut end = last.max(no.saturating_add(self.ahead as u64)).min(last_block);
            // Stop before a block already cached; never more than half the
            // cache in one go.
            let cap = no.saturating_add((self.blocks.len() as u64 / 2).max(1) - 1);
            end = end.min(cap);
            let mut stop = no;
            while stop < end && self.slot_of(stop + 1).is_none() {
                stop += 1;
            }
            let start = no.saturating_mul(bs);
            let stop_byte = stop.saturating_add(1).saturating_mul(bs).min(self.conn.len);
            let f = self.conn.open(start, stop_byte)?;
            self.store(f, no, stop - no + 1)?;
            no = stop + 1;
        }
        Ok(())
    }

    /// The cached bytes from `at` to the end of its block; empty when the
    /// block is not cached.
    fn cached_at(&self, at: u64) -> &[u8] {
        let bs = self.block_size as u64;
        let within = (at % bs) as usize;
        self.slot_of(at / bs)
            .and_then(|slot| self.blocks.get(slot))
            .and_then(|b| b.data.get(within..b.valid))
            .unwrap_or(&[])
    }

    /// Copies `offset..offset+buf.len()` (inside the resource) into `buf`
    /// through the cache.
    fn copy_cached(&mut self, offset: u64, buf: &mut [u8]) -> Result<()> {
        let bs = self.block_size as u64;
        let mut done = 0usize;
        while done < buf.len() {
            let at = offset + done as u64;
            let no = at / bs;
            let last = (offset + buf.len() as u64 - 1) / bs;
            self.ensure(no, last)?;
            self.slot_of(no)
                .ok_or(Error::capacity(at, &"HTTP cache lost a block"))?;
            let src = self.cached_at(at);
            if src.is_empty() {
                return Err(Error::truncated(at, &"HTTP resource ended inside a block"));
            }
            let n = src.len().min(buf.len() - done);
            if let (Some(d), Some(s)) = (buf.get_mut(done..done + n), src.get(..n)) {
                d.copy_from_slice(s);
            }
            done += n;
        }
        Ok(())
    }

    /// Reads `offset..offset+buf.len()` with one request, not cached. A
    /// head already in the cache (read ahead by the previous request) is
    /// copied from it, not asked for again: a pass over large packets that
    /// follow small reads (DV frames after their headers) would otherwise
    /// receive half the file twice.
    fn direct(&mut self, offset: u64, buf: &mut [u8]) -> Result<()> {
        let end = offset + buf.len() as u64;
        let mut done = 0usize;
        while done < buf.len() {
            let src = self.cached_at(offset + done as u64);
            let n = src.len().min(buf.len() - done);
            if n == 0 {
                break;
            }
            if let (Some(d), Some(s)) = (buf.get_mut(done..done + n), src.get(..n)) {
                d.copy_from_slice(s);
            }
            done += n;
        }
        let Some(rest) = buf.get_mut(done..).filter(|r| !r.is_empty()) else {
            return Ok(());
        };
        let start = offset + done as u64;
        let mut f = self.conn.open(start, end)?;
        self.conn.fill(&mut f, rest)?;
        self.conn.finish(f);
        self.next_block = end.div_ceil(self.block_size as u64);
        Ok(())
    }

    /// Largest read assembled from cached blocks (half the cache: what one
    /// request may fill); larger reads go straight. A packet read through
    /// the cache stays there for the next reads of the same bytes (DV's
    /// audio is gathered from the frame its video packet just covered).
    fn span(&self) -> usize {
        self.block_size
            .saturating_mul(self.max_read_ahead.max(self.blocks.len() / 2).max(1))
    }

    /// `Err(Truncated)` unless `offset..offset+len` is inside the resource.
    fn check_range(&self, offset: u64, len: usize) -> Result<()> {
        let end =
            offset
                .checked_add(len as u64)
                .ok_or(Error::new(ErrorKind::OffsetOverflow, offset, &"range beyond u64"))?;
        if end > self.conn.len {
            return Err(Error::truncated(
                self.conn.len,
                &"input ends before the requested range",
            ));
        }
        Ok(())
    }
}

fn io_kind(k: embedded_io::ErrorKind) -> std::io::ErrorKind {
    use embedded_io::ErrorKind as E;
    use std::io::ErrorKind as S;
    match k {
        E::NotFound => S::NotFound,
        E::PermissionDenied => S::PermissionDenied,
        E::ConnectionRefused => S::ConnectionRefused,
        E::ConnectionReset => S::ConnectionReset,
        E::ConnectionAborted => S::ConnectionAborted,
        E::InvalidInput => S::InvalidInput,
        E::InvalidData => S::InvalidData,
        E::TimedOut => S::TimedOut,
        E::Unsupported => S::Unsupported,
        _ => S::Other,
    }
}

impl Source for HttpSource {
    fn len(&self) -> u64 {
        self.conn.len
    }

    fn read_at(&mut self, offset: u64, buf: &mut [u8]) -> Result<usize> {
        if offset >= self.conn.len {
            return Ok(0);
        }
        let want = (self.conn.len - offset).min(buf.len() as u64) as usize;
        let buf = buf.get_mut(..want).unwrap_or(&mut []);
        if want > self.span() {
            self.direct(offset, buf)?;
        } else {
            self.copy_cached(offset, buf)?;
        }
        Ok(want)
    }

    fn bytes(&mut self, offset: u64, len: usize) -> Result<&[u8]> {
        self.check_range(offset, len)?;
        if len == 0 {
            return Ok(&[]);
        }
        let bs = self.block_size as u64;
        let within = (offset % bs) as usize;
        if within + len <= self.block_size {
            // Inside one block: borrow it.
            self.ensure(offset / bs, offset / bs)?;
            let slot = self
                .slot_of(offset / bs)
                .ok_or(Error::capacity(offset, &"HTTP cache lost a block"))?;
            return self
                .blocks
                .get(slot)
                .and_then(|b| b.data.get(..b.valid))
                .and_then(|d| d.get(within..within + len))
                .ok_or(Error::truncated(offset, &"HTTP resource ended inside a block"));
        }
        self.gather(offset, len, 0)?;
        self.scratch.joined(len)
    }

    fn scratch_len(&self) -> usize {
        self.scratch.cap()
    }

    fn gather(&mut self, offset: u64, len: usize, at: usize) -> Result<()> {
        self.check_range(offset, len)?;
        if len == 0 {
            return Ok(());
        }
        let span = self.span();
        // Split borrows: the scratch is filled while the cache and the
        // connection are used.
        let mut scratch = std::mem::replace(&mut self.scratch, Scratch::new(0));
        let r = match scratch.range_mut(offset, at, len) {
            Ok(dst) if len > span => self.direct(offset, dst),
            Ok(dst) => self.copy_cached(offset, dst),
            Err(e) => Err(e),
        };
        self.scratch = scratch;
        r
    }

    fn put(&mut self, at: usize, data: &[u8]) -> Result<()> {
        self.scratch.put(at, data)
    }

    fn joined(&self, len: usize) -> Result<&[u8]> {
        self.scratch.joined(len)
    }

    fn is_slice(&self) -> bool {
        false
    }

    fn stats(&self) -> IoStats {
        IoStats {
            bytes_read: self.conn.stats.bytes,
            reads: self.conn.stats.requests,
            seeks: 0,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn content_range_forms() {
        assert_eq!(
            parse_content_range("bytes 0-99/1000"),
            Some((Some((0, 99)), Some(1000)))
        );
        assert_eq!(parse_content_range("bytes 5-5/*"), Some((Some((5, 5)), None)));
        assert_eq!(parse_content_range("bytes */0"), Some((None, Some(0))));
        assert_eq!(parse_content_range("bytes 9-3/10"), None);
        assert_eq!(parse_content_range("items 0-1/2"), None);
        assert_eq!(parse_content_range("bytes 0-x/2"), None);
        assert_eq!(
            parse_content_range("bytes 4294967296-4294967300/5000000000"),
            Some((Some((1 << 32, (1 << 32) + 4)), Some(5_000_000_000)))
        );
    }

    #[test]
    fn locations_resolve_and_only_http_is_followed() {
        let base = "http://h:8/a/b/c.mp4?x=1";
        assert_eq!(resolve_location(base, "https://o/p").unwrap(), "https://o/p");
        assert_eq!(resolve_location(base, "//o/p").unwrap(), "http://o/p");
        assert_eq!(resolve_location(base, "/p/q").unwrap(), "http://h:8/p/q");
        assert_eq!(resolve_location(base, "d.mp4").unwrap(), "http://h:8/a/b/d.mp4");
        assert_eq!(resolve_location("http://h", "d").unwrap(), "http://h/d");
        assert!(resolve_location(base, "ftp://o/p").is_err());
        assert!(resolve_location(base, "file:///etc/passwd").is_err());
        assert!(resolve_location(base, "javascript:alert(1)").is_err());
        assert!(resolve_location(base, "").is_err());
    }

    #[test]
    fn url_schemes() {
        assert!(is_http_url("http://x/y"));
        assert!(is_http_url("HTTPS://x"));
        assert!(!is_http_url("ftp://x"));
        assert!(!is_http_url("http:x"));
        assert!(!is_http_url("/tmp/http://x"));
        assert!(!is_http_url("a.mp4"));
    }

    #[test]
    fn refuses_other_schemes_and_empty_caches() {
        assert!(HttpSource::open("ftp://127.0.0.1/x").is_err());
        let cfg = HttpConfig {
            blocks: 0,
            ..HttpConfig::default()
        };
        assert!(HttpSource::open_with("http://127.0.0.1:1/x", cfg).is_err());
    }
}
