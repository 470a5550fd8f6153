//! The network side of [`super::HttpSource`]: one agent, the resource's
//! location and length, range requests and their checks, the counters and
//! the time limits (RFC 9110 §14 range requests, §15.4 redirection).

use super::headers::{
    content_length, content_range_problem, header_str, parse_content_range, resolve_location, ureq_kind,
};
use super::{HttpSource, HttpStats};
use mediaslice::{Error, ErrorKind, Result};
use std::io::Read;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use ureq::http::{header, Response, StatusCode};
use ureq::{Agent, Body, BodyReader};

/// The network side: the agent, the location, the length, the counters.
pub(super) struct Conn {
    pub(super) agent: Agent,
    pub(super) url: String,
    /// The URL as opened.
    pub(super) original: String,
    pub(super) len: u64,
    /// Whether the server honours `Range`.
    pub(super) ranges: bool,
    /// The first response's `ETag`.
    pub(super) etag: Option<String>,
    /// An open whole-body response (server ignoring `Range`), positioned.
    pub(super) stream: Option<Fetch>,
    pub(super) stats: HttpStats,
    pub(super) max_requests: u64,
    pub(super) max_bytes: u64,
    pub(super) max_redirects: u32,
    pub(super) max_skip: u64,
    pub(super) short_answers: u32,
    pub(super) max_short_answers: u32,
    /// When the open started, and the most time it may take.
    pub(super) started: Instant,
    pub(super) deadline: Option<Duration>,
    pub(super) min_speed: u64,
    pub(super) min_speed_time: Duration,
    /// Time spent waiting on the network, and bytes received, since the
    /// rate was last checked.
    pub(super) window_time: Duration,
    pub(super) window_bytes: u64,
    pub(super) detail: ErrorLog,
}

/// The full text of an [`HttpSource`]'s last failure, shared: a handle
/// taken before the source is moved into a demuxer still reads it after the
/// demuxer (and the source) are gone.
#[derive(Debug, Clone, Default)]
pub struct ErrorLog(Arc<Mutex<Option<String>>>);

impl ErrorLog {
    /// The last failure's text, if any.
    pub fn last(&self) -> Option<String> {
        self.0.lock().ok().and_then(|g| g.clone())
    }

    pub(super) fn set(&self, text: String) {
        if let Ok(mut g) = self.0.lock() {
            *g = Some(text);
        }
    }
}

impl std::fmt::Debug for Conn {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Conn")
            .field("url", &self.url)
            .field("len", &self.len)
            .field("ranges", &self.ranges)
            .field("stats", &self.stats)
            .finish_non_exhaustive()
    }
}

/// A response body being read: the next byte is at `pos`, the body ends at
/// `end` (exclusive); `exact` when its `Content-Length` said so (it can then
/// go back to the connection pool once read to the end).
pub(super) struct Fetch {
    pub(super) reader: BodyReader<'static>,
    pub(super) pos: u64,
    pub(super) end: u64,
    pub(super) exact: bool,
}

/// Builds an `Io` error of `kind` at `offset`.
pub(super) fn io_err(kind: std::io::ErrorKind, offset: u64, what: mediaslice::error::Description) -> Error {
    Error::new(ErrorKind::Io(kind.into()), offset, what)
}

/// `bytes A-B/LEN` or `bytes */LEN` (RFC 9110 §14.4): (range, length).
pub(super) enum Method {
    Get,
    Head,
}

impl Conn {
    /// Where a message is about: nothing for the URL as opened (the caller
    /// names it), the new location after a redirect.
    pub(super) fn at(&self) -> String {
        if self.url == self.original {
            String::new()
        } else {
            format!("{}: ", self.url)
        }
    }

    /// Remembers the full text of a failure and returns the error.
    pub(super) fn fail(&mut self, e: Error, detail: String) -> Error {
        self.detail.set(detail);
        e
    }

    pub(super) fn check_requests(&mut self, offset: u64) -> Result<()> {
        if self.stats.requests >= self.max_requests {
            let d = format!(
                "request cap reached ({} requests per run; --http-max-requests)",
                self.max_requests
            );
            return Err(self.fail(Error::limit(offset, &"HTTP request cap per open reached"), d));
        }
        Ok(())
    }

    pub(super) fn check_bytes(&mut self, offset: u64, more: u64) -> Result<()> {
        if self.stats.bytes.saturating_add(more) > self.max_bytes {
            let d = format!(
                "byte cap reached ({} bytes per run; {} received, {more} more needed; --http-max-bytes)",
                self.max_bytes, self.stats.bytes
            );
            return Err(self.fail(Error::limit(offset, &"HTTP byte cap per open reached"), d));
        }
        Ok(())
    }

    /// `Err(TimedOut)` once the open's deadline has passed.
    pub(super) fn check_deadline(&mut self, offset: u64) -> Result<()> {
        match self.deadline {
            Some(d) if self.started.elapsed() >= d => Err(self.deadline_error(offset, d)),
            _ => Ok(()),
        }
    }

    pub(super) fn deadline_error(&mut self, offset: u64, d: Duration) -> Error {
        let text = format!(
            "{}the HTTP deadline of {:.1} s per run passed ({} requests, {} bytes received; --http-deadline)",
            self.at(),
            d.as_secs_f64(),
            self.stats.requests,
            self.stats.bytes
        );
        self.fail(
            io_err(std::io::ErrorKind::TimedOut, offset, &"HTTP deadline reached"),
            text,
        )
    }

    /// Whether the deadline has passed (a timeout error from the transport
    /// is then reported as the deadline).
    pub(super) fn past_deadline(&self) -> Option<Duration> {
        self.deadline.filter(|&d| self.started.elapsed() >= d)
    }

    /// Time left before the deadline, for the transport's own timeout.
    pub(super) fn remaining(&self) -> Option<Duration> {
        self.deadline
            .map(|d| d.saturating_sub(self.started.elapsed()).max(Duration::from_millis(1)))
    }

    /// Counts `bytes` received in `took` of waiting on the network; once the
    /// window is full, `Err(TimedOut)` if the rate was under the minimum.
    pub(super) fn check_speed(&mut self, offset: u64, took: Duration, bytes: u64) -> Result<()> {
        if self.min_speed == 0 || self.min_speed_time.is_zero() {
            return Ok(());
        }
        self.window_time += took;
        self.window_bytes = self.window_bytes.saturating_add(bytes);
        if self.window_time < self.min_speed_time {
            return Ok(());
        }
        let secs = self.window_time.as_secs_f64();
        let (got, time) = (self.window_bytes, self.window_time);
        self.window_time = Duration::ZERO;
        self.window_bytes = 0;
        if (got as f64) < self.min_speed as f64 * secs {
            let text = format!(
                "{}the server sent {got} bytes in {:.1} s, under the minimum of {} bytes/s over {:.1} s (--http-speed-limit, --http-speed-time)",
                self.at(),
                time.as_secs_f64(),
                self.min_speed,
                self.min_speed_time.as_secs_f64()
            );
            return Err(self.fail(
                io_err(std::io::ErrorKind::TimedOut, offset, &"HTTP transfer too slow"),
                text,
            ));
        }
        Ok(())
    }

    /// Sends one request to the current URL, following redirects (each hop
    /// counted). `range` is inclusive. The URL is updated to the final
    /// location.
    pub(super) fn send(&mut self, method: Method, range: Option<(u64, u64)>) -> Result<Response<Body>> {
        let at = range.map_or(0, |r| r.0);
        let mut hops = 0u32;
        loop {
            self.check_requests(at)?;
            self.check_deadline(at)?;
            self.stats.requests += 1;
            // The transport's own budget ends at the deadline, so a blocked
            // connect, response or body read cannot outlast it.
            let budget = self.remaining();
            let t = Instant::now();
            let r = match method {
                Method::Get => {
                    let mut b = self.agent.get(&self.url).header("Accept-Encoding", "identity");
                    if let Some((a, z)) = range {
                        b = b.header("Range", format!("bytes={a}-{z}"));
                    }
                    b.config().timeout_global(budget).build().call()
                }
                Method::Head => self
                    .agent
                    .head(&self.url)
                    .header("Accept-Encoding", "identity")
                    .config()
                    .timeout_global(budget)
                    .build()
                    .call(),
            };
            let resp = match r {
                Ok(r) => r,
                Err(e) => {
                    if let Some(d) = self.past_deadline() {
                        return Err(self.deadline_error(at, d));
                    }
                    let d = format!("{}{e}", self.at());
                    return Err(self.fail(io_err(ureq_kind(&e), at, &"HTTP request failed"), d));
                }
            };
            self.check_speed(at, t.elapsed(), 0)?;
            let st = resp.status();
            if st.is_redirection() && st != StatusCode::NOT_MODIFIED {
                let Some(loc) = header_str(&resp, header::LOCATION).map(str::to_owned) else {
                    let d = format!("{}HTTP {st} without a Location", self.at());
                    return Err(self.fail(
                        io_err(std::io::ErrorKind::InvalidData, at, &"redirect without Location"),
                        d,
                    ));
                };
                drop(resp);
                if hops >= self.max_redirects {
                    let d = format!("{}more than {} redirects", self.at(), self.max_redirects);
                    return Err(self.fail(io_err(std::io::ErrorKind::Other, at, &"too many HTTP redirects"), d));
                }
                match resolve_location(&self.url, &loc) {
                    Ok(u) => self.url = u,
                    Err(m) => {
                        let d = format!("{}{m}", self.at());
                        return Err(self.fail(io_err(std::io::ErrorKind::InvalidData, at, &"redirect refused"), d));
                    }
                }
                hops += 1;
                self.stats.redirects += 1;
                continue;
            }
            if let Some(enc) = header_str(&resp, header::CONTENT_ENCODING) {
                if !enc.trim().eq_ignore_ascii_case("identity") {
                    let d = format!("{}server sent Content-Encoding {enc} for a byte range", self.at());
                    return Err(self.fail(io_err(std::io::ErrorKind::InvalidData, at, &"encoded HTTP body"), d));
                }
            }
            return Ok(resp);
        }
    }

    /// Checks the response's `ETag` against the first one seen.
    pub(super) fn check_etag(&mut self, resp: &Response<Body>, at: u64) -> Result<()> {
        let tag = header_str(resp, header::ETAG);
        match (&self.etag, tag) {
            (Some(a), Some(b)) if a != b => {
                let d = format!("{}the resource changed while reading (ETag {a} became {b})", self.at());
                Err(self.fail(io_err(std::io::ErrorKind::InvalidData, at, &"HTTP resource changed"), d))
            }
            _ => Ok(()),
        }
    }

    pub(super) fn status_error(&mut self, st: StatusCode, at: u64) -> Error {
        let d = format!("{}HTTP {st}", self.at());
        let kind = match st.as_u16() {
            404 | 410 => std::io::ErrorKind::NotFound,
            401 | 403 => std::io::ErrorKind::PermissionDenied,
            _ => std::io::ErrorKind::Other,
        };
        self.fail(io_err(kind, at, &"HTTP error status"), d)
    }

    /// A body positioned at `start` that will deliver at least up to `end`
    /// (exclusive, `end <= len`). Uses ranges when the server honours them,
    /// else the open whole-body stream or a new one, skipping forward.
    pub(super) fn open(&mut self, start: u64, end: u64) -> Result<Fetch> {
        if self.ranges {
            self.check_bytes(start, end - start)?;
            let resp = self.send(Method::Get, Some((start, end - 1)))?;
            return self.accept(resp, start, end);
        }
        let reuse = matches!(&self.stream, Some(s) if s.pos <= start);
        let f = match self.stream.take() {
            Some(f) if reuse => {
                self.check_bytes(start, end - f.pos)?;
                f
            }
            other => {
                if other.is_some() {
                    self.stats.dropped += 1;
                }
                self.check_bytes(start, end)?;
                let resp = self.send(Method::Get, None)?;
                self.accept(resp, start, end)?
            }
        };
        self.positioned(f, start)
    }

    /// Checks a response to a request for `start..end` and returns its body
    /// positioned at `start`.
    pub(super) fn accept(&mut self, resp: Response<Body>, start: u64, end: u64) -> Result<Fetch> {
        let st = resp.status();
        match st {
            StatusCode::PARTIAL_CONTENT => {
                self.check_etag(&resp, start)?;
                let raw = header_str(&resp, header::CONTENT_RANGE);
                let Some((Some((a, b)), total)) = raw.and_then(parse_content_range) else {
                    let d = format!("{}{}", self.at(), content_range_problem(raw, start, end - 1));
                    return Err(self.fail(io_err(std::io::ErrorKind::InvalidData, start, &"bad Content-Range"), d));
                };
                if a != start || total.is_some_and(|t| t != self.len) || b >= self.len {
                    let what = if a != start {
                        format!("asked for byte {start}, the server answered from byte {a}")
                    } else if total.is_some_and(|t| t != self.len) {
                        format!("the length changed from {} bytes", self.len)
                    } else {
                        format!("the answer ends past the {}-byte resource", self.len)
                    };
                    let d = format!(
                        "{}{what} (asked bytes={start}-{}, got Content-Range: bytes {a}-{b}/{})",
                        self.at(),
                        end - 1,
                        total.map_or("*".to_owned(), |t| t.to_string())
                    );
                    return Err(self.fail(
                        io_err(std::io::ErrorKind::InvalidData, start, &"HTTP range mismatch"),
                        d,
                    ));
                }
                let (asked, got) = (end - start, b - a + 1);
                if got < asked.min(HttpSource::SHORT_ANSWER) {
                    self.short_answers += 1;
                    if self.short_answers > self.max_short_answers {
                        let d = format!(
                            "{}the server answers in tiny pieces: {} answers of fewer than {} bytes (the last: {got} of {asked} bytes asked at byte {start}); at most {} per run",
                            self.at(),
                            self.short_answers,
                            HttpSource::SHORT_ANSWER,
                            self.max_short_answers
                        );
                        return Err(self.fail(Error::limit(start, &"HTTP answers too short"), d));
                    }
                }
                let cl = content_length(&resp);
                if cl.is_some_and(|n| n != b - a + 1) {
                    let d = format!("{}Content-Length disagrees with Content-Range", self.at());
                    return Err(self.fail(io_err(std::io::ErrorKind::InvalidData, start, &"bad Content-Length"), d));
                }
                Ok(Fetch {
                    reader: resp.into_body().into_reader(),
                    pos: a,
                    end: b + 1,
                    exact: cl.is_some(),
                })
            }
            StatusCode::OK => {
                self.check_etag(&resp, start)?;
                let cl = content_length(&resp);
                if cl.is_some_and(|n| n != self.len) {
                    let d = format!("{}length changed from {} to {:?}", self.at(), self.len, cl);
                    return Err(self.fail(
                        io_err(std::io::ErrorKind::InvalidData, start, &"HTTP resource changed"),
                        d,
                    ));
                }
                if self.ranges {
                    self.ranges = false;
                }
                let f = Fetch {
                    reader: resp.into_body().into_reader(),
                    pos: 0,
                    end: self.len,
                    exact: cl.is_some(),
                };
                if start > 0 {
                    self.check_bytes(start, end)?;
                }
                self.positioned(f, start)
            }
            StatusCode::RANGE_NOT_SATISFIABLE => {
                let d = format!(
                    "{}HTTP 416 for bytes {start}-{} of a {}-byte resource",
                    self.at(),
                    end - 1,
                    self.len
                );
                Err(self.fail(
                    io_err(
                        std::io::ErrorKind::InvalidData,
                        start,
                        &"HTTP 416 range not satisfiable",
                    ),
                    d,
                ))
            }
            _ => Err(self.status_error(st, start)),
        }
    }

    /// Skips `f` forward to `start` (reading and counting the bytes).
    pub(super) fn positioned(&mut self, mut f: Fetch, start: u64) -> Result<Fetch> {
        let skip = start.saturating_sub(f.pos);
        if self.stats.skipped.saturating_add(skip) > self.max_skip {
            let d = format!(
                "{}the server ignores Range (it sends the whole body): reading byte {start} means skipping {skip} bytes, and at most {} are skipped per run ({} so far; --http-max-skip)",
                self.at(),
                self.max_skip,
                self.stats.skipped
            );
            return Err(self.fail(Error::limit(start, &"HTTP skip cap reached (server ignores Range)"), d));
        }
        let mut sink = [0u8; 8192];
        while f.pos < start {
            let n = (start - f.pos).min(sink.len() as u64) as usize;
            let got = self.read(&mut f, sink.get_mut(..n).unwrap_or(&mut []))?;
            self.stats.skipped += got as u64;
        }
        Ok(f)
    }

    /// One read from the body (retrying interruptions), counted. End of
    /// body before `f.end` is a truncation.
    pub(super) fn read(&mut self, f: &mut Fetch, buf: &mut [u8]) -> Result<usize> {
        let room = f.end.saturating_sub(f.pos).min(buf.len() as u64) as usize;
        if room == 0 {
            return Ok(0);
        }
        let buf = buf.get_mut(..room).unwrap_or(&mut []);
        loop {
            self.check_deadline(f.pos)?;
            let t = Instant::now();
            let r = f.reader.read(buf);
            let took = t.elapsed();
            if r.is_err() {
                if let Some(d) = self.past_deadline() {
                    return Err(self.deadline_error(f.pos, d));
                }
            }
            self.check_speed(f.pos, took, r.as_ref().map_or(0, |&n| n as u64))?;
            match r {
                Ok(0) => {
                    let d = format!(
                        "{}the body ended at byte {} (expected up to {})",
                        self.at(),
                        f.pos,
                        f.end
                    );
                    return Err(self.fail(Error::truncated(f.pos, &"HTTP body ended early"), d));
                }
                Ok(n) => {
                    f.pos += n as u64;
                    self.stats.bytes += n as u64;
                    return Ok(n);
                }
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                Err(e) => {
                    let d = format!("{}reading the body at byte {}: {e}", self.at(), f.pos);
                    return Err(self.fail(io_err(e.kind(), f.pos, &"HTTP body read failed"), d));
                }
            }
        }
    }

    /// Fills `buf` from `f` (continuing with a new request if the server
    /// sent a shorter range than asked).
    pub(super) fn fill(&mut self, f: &mut Fetch, buf: &mut [u8]) -> Result<()> {
        let mut done = 0usize;
        while done < buf.len() {
            if f.pos >= f.end {
                // A server may answer with less than asked: ask for the rest.
                let want_end = f.pos.saturating_add((buf.len() - done) as u64).min(self.len);
                let next = self.open(f.pos, want_end)?;
                let old = std::mem::replace(f, next);
                self.finish(old);
            }
            let rest = buf.get_mut(done..).unwrap_or(&mut []);
            done += self.read(f, rest)?;
        }
        Ok(())
    }

    /// Done with `f`: keep a whole-body stream for later reads further on,
    /// give an exactly read body back to the pool, drop anything else.
    pub(super) fn finish(&mut self, mut f: Fetch) {
        if !self.ranges {
            if f.pos < f.end {
                if self.stream.take().is_some() {
                    self.stats.dropped += 1;
                }
                self.stream = Some(f);
            }
            return;
        }
        if f.exact && f.pos == f.end {
            // Reading the end lets the connection go back to the pool; with
            // a Content-Length met this does not touch the network.
            let mut b = [0u8; 1];
            if matches!(f.reader.read(&mut b), Ok(0)) {
                return;
            }
        }
        self.stats.dropped += 1;
    }
}
