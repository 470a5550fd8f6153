//! `HttpSource` and the CLI against hostile HTTP/1.1 servers on 127.0.0.1:
//! one that ignores `Range` and states a huge length, one that drip-feeds,
//! one that answers 16 bytes at a time, a wrong `Content-Range`, an `ETag`
//! that changes, a redirect loop, redirects to other schemes, a body that
//! stops early. Each run is bounded in time by small settings, and each
//! asserts the error and that what was received stays under the cap.

use crate::http_common as common;

use mediaslice::{ErrorKind, Source};
use mediaslice_std::{HttpConfig, HttpSource};
use std::io::{BufRead, BufReader, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::process::Command;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering::SeqCst};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// The resource every server pretends to serve: byte `i` is `i * 7`.
fn byte(i: u64) -> u8 {
    (i.wrapping_mul(7)) as u8
}

/// One request as the server saw it.
struct Request {
    path: String,
    range: Option<(u64, u64)>,
}

/// What the server tells a behaviour: the request, how many came before on
/// any connection, and the counters.
struct Ctx<'a> {
    req: Request,
    n: u64,
    sent: &'a AtomicU64,
    stop: &'a AtomicBool,
}

/// A behaviour writes one response; false closes the connection.
type Behaviour = fn(&mut TcpStream, &Ctx<'_>) -> std::io::Result<bool>;

struct Server {
    addr: SocketAddr,
    requests: Arc<AtomicU64>,
    sent: Arc<AtomicU64>,
    stop: Arc<AtomicBool>,
}

impl Server {
    fn start(b: Behaviour) -> Server {
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = l.local_addr().unwrap();
        let requests = Arc::new(AtomicU64::new(0));
        let sent = Arc::new(AtomicU64::new(0));
        let stop = Arc::new(AtomicBool::new(false));
        let (r, s, st) = (requests.clone(), sent.clone(), stop.clone());
        std::thread::spawn(move || {
            for c in l.incoming() {
                if st.load(SeqCst) {
                    break;
                }
                let Ok(c) = c else { continue };
                let (r, s, st) = (r.clone(), s.clone(), st.clone());
                std::thread::spawn(move || {
                    let _ = connection(c, b, &r, &s, &st);
                });
            }
        });
        Server {
            addr,
            requests,
            sent,
            stop,
        }
    }

    fn url(&self, path: &str) -> String {
        format!("http://{}{path}", self.addr)
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        self.stop.store(true, SeqCst);
        let _ = TcpStream::connect_timeout(&self.addr, Duration::from_millis(200));
    }
}

fn connection(
    c: TcpStream,
    b: Behaviour,
    requests: &AtomicU64,
    sent: &AtomicU64,
    stop: &AtomicBool,
) -> std::io::Result<()> {
    c.set_nodelay(true)?;
    c.set_read_timeout(Some(Duration::from_secs(5)))?;
    c.set_write_timeout(Some(Duration::from_secs(5)))?;
    let mut w = c.try_clone()?;
    let mut r = BufReader::new(c);
    loop {
        let mut line = String::new();
        if r.read_line(&mut line)? == 0 {
            return Ok(());
        }
        let path = line.split_whitespace().nth(1).unwrap_or("/").to_owned();
        let mut range = None;
        loop {
            let mut h = String::new();
            if r.read_line(&mut h)? == 0 {
                return Ok(());
            }
            let h = h.trim_end();
            if h.is_empty() {
                break;
            }
            if let Some(v) = h
                .strip_prefix("Range: bytes=")
                .or_else(|| h.strip_prefix("range: bytes="))
            {
                if let Some((a, z)) = v.split_once('-') {
                    if let (Ok(a), Ok(z)) = (a.parse(), z.parse()) {
                        range = Some((a, z));
                    }
                }
            }
        }
        let n = requests.fetch_add(1, SeqCst);
        let ctx = Ctx {
            req: Request { path, range },
            n,
            sent,
            stop,
        };
        if !b(&mut w, &ctx)? || stop.load(SeqCst) {
            return Ok(());
        }
    }
}

/// Writes the resource's bytes `a..b`, counted; stops early when the test
/// is over or the client went away.
fn body(w: &mut TcpStream, ctx: &Ctx<'_>, a: u64, b: u64) -> std::io::Result<()> {
    let mut buf = vec![0u8; 16 << 10];
    let mut at = a;
    while at < b && !ctx.stop.load(SeqCst) {
        let n = ((b - at) as usize).min(buf.len());
        for (k, x) in buf[..n].iter_mut().enumerate() {
            *x = byte(at + k as u64);
        }
        w.write_all(&buf[..n])?;
        ctx.sent.fetch_add(n as u64, SeqCst);
        at += n as u64;
    }
    Ok(())
}

/// A correct 206 for `a..=z` of a resource of `len` bytes, with `etag`.
fn partial(w: &mut TcpStream, ctx: &Ctx<'_>, a: u64, z: u64, len: u64, etag: &str) -> std::io::Result<bool> {
    let z = z.min(len - 1);
    write!(
        w,
        "HTTP/1.1 206 Partial Content\r\nContent-Range: bytes {a}-{z}/{len}\r\nContent-Length: {}\r\nETag: {etag}\r\n\r\n",
        z - a + 1
    )?;
    body(w, ctx, a, z + 1)?;
    Ok(true)
}

/// Runs the built CLI with `args` and `url`, with no proxy from the
/// environment.
fn cli(args: &[&str], url: &str) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_mediaslice"))
        .args(args)
        .arg(url)
        .env_remove("http_proxy")
        .env_remove("HTTP_PROXY")
        .env_remove("ALL_PROXY")
        .output()
        .unwrap()
}

/// Length of the ordinary resources: 8 MiB.
const LEN: u64 = 8 << 20;

/// The tests' settings with a 10 s deadline, so no run can hang.
fn cfg() -> HttpConfig {
    HttpConfig {
        deadline: Some(Duration::from_secs(10)),
        ..common::test_config()
    }
}

/// Reads `n` bytes at `at` through the source's public interface.
fn read(src: &mut HttpSource, at: u64, n: usize) -> mediaslice::Result<()> {
    let mut buf = vec![0u8; n];
    src.read_exact_at(at, &mut buf)?;
    assert!(buf.iter().enumerate().all(|(k, &x)| x == byte(at + k as u64)));
    Ok(())
}

fn detail(src: &HttpSource) -> String {
    src.last_error().unwrap_or_default()
}

/// Ignores `Range`: 200, a stated length of 1 TiB, an endless body.
fn huge200(w: &mut TcpStream, ctx: &Ctx<'_>) -> std::io::Result<bool> {
    write!(w, "HTTP/1.1 200 OK\r\nContent-Length: {}\r\n\r\n", 1u64 << 40)?;
    // Bounded on our side too: 1 GiB or the client's close.
    body(w, ctx, 0, 1 << 30)?;
    Ok(false)
}

#[test]
fn a_server_ignoring_range_with_a_huge_length_is_cut_at_the_skip_cap() {
    let server = Server::start(huge200);
    let t = Instant::now();
    let mut src = HttpSource::open_with(&server.url("/huge"), cfg()).unwrap();
    assert_eq!(src.len(), 1 << 40);
    assert!(!src.ranges_supported());
    // The default byte cap follows the stated length, so it is the skip
    // cap that stops a read near the end (as MP3's ID3v1 tail check does).
    let e = read(&mut src, (1 << 40) - 128, 128).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::LimitExceeded, "{e}");
    assert!(detail(&src).contains("ignores Range"), "{}", detail(&src));
    assert!(detail(&src).contains("--http-max-skip"), "{}", detail(&src));
    let got = src.http_stats().bytes;
    assert!(got <= 64 << 10, "{got} bytes received before refusing to skip");
    // A read within the skip cap works, and is counted as skipped.
    let mut src = HttpSource::open_with(&server.url("/huge"), cfg()).unwrap();
    read(&mut src, 1 << 20, 4096).unwrap();
    assert!(src.http_stats().skipped >= (1 << 20) - 4096);
    // A smaller skip cap; then the byte cap of a probe.
    let c = HttpConfig {
        max_skip: 100_000,
        ..cfg()
    };
    let mut src = HttpSource::open_with(&server.url("/huge"), c).unwrap();
    assert_eq!(
        read(&mut src, 200_000, 10).unwrap_err().kind(),
        ErrorKind::LimitExceeded
    );
    let c = HttpConfig {
        max_bytes: Some(1 << 20),
        ..cfg()
    };
    let mut src = HttpSource::open_with(&server.url("/huge"), c).unwrap();
    assert_eq!(read(&mut src, 0, 2 << 20).unwrap_err().kind(), ErrorKind::LimitExceeded);
    assert!(src.http_stats().bytes <= 1 << 20);
    assert!(t.elapsed() < Duration::from_secs(10), "{:?}", t.elapsed());
}

/// 1 byte every 20 ms, forever (a 206 stating a full 4 KiB range).
fn drip(w: &mut TcpStream, ctx: &Ctx<'_>) -> std::io::Result<bool> {
    let (a, z) = ctx.req.range.unwrap_or((0, LEN - 1));
    let z = z.min(LEN - 1);
    write!(
        w,
        "HTTP/1.1 206 Partial Content\r\nContent-Range: bytes {a}-{z}/{LEN}\r\nContent-Length: {}\r\n\r\n",
        z - a + 1
    )?;
    for i in a..=z {
        if ctx.stop.load(SeqCst) {
            break;
        }
        w.write_all(&[byte(i)])?;
        ctx.sent.fetch_add(1, SeqCst);
        std::thread::sleep(Duration::from_millis(20));
    }
    Ok(false)
}

#[test]
fn a_drip_feeding_server_fails_the_rate_then_the_deadline() {
    let server = Server::start(drip);
    // The rate: 50 bytes/s against a minimum of 1000 over 0.5 s.
    let c = HttpConfig {
        min_speed: 1000,
        min_speed_time: Duration::from_millis(500),
        ..cfg()
    };
    let t = Instant::now();
    let e = HttpSource::open_with(&server.url("/drip"), c).unwrap_err();
    assert_eq!(e.kind(), std::io::ErrorKind::TimedOut, "{e}");
    assert!(e.to_string().contains("under the minimum"), "{e}");
    assert!(e.to_string().contains("--http-speed-limit"), "{e}");
    assert!(t.elapsed() < Duration::from_secs(3), "{:?}", t.elapsed());
    // The deadline, with no rate limit: 1 s for the whole open.
    let c = HttpConfig {
        min_speed: 0,
        deadline: Some(Duration::from_secs(1)),
        ..cfg()
    };
    let t = Instant::now();
    let e = HttpSource::open_with(&server.url("/drip"), c).unwrap_err();
    assert_eq!(e.kind(), std::io::ErrorKind::TimedOut, "{e}");
    assert!(e.to_string().contains("deadline"), "{e}");
    assert!(t.elapsed() < Duration::from_secs(3), "{:?}", t.elapsed());
    assert!(server.sent.load(SeqCst) < 200);
}

#[test]
fn the_cli_ends_a_drip_fed_run_with_a_clear_error() {
    let server = Server::start(drip);
    let t = Instant::now();
    let o = cli(
        &["--http-speed-limit", "1000", "--http-speed-time", "0.5", "probe"],
        &server.url("/drip.wav"),
    );
    assert!(t.elapsed() < Duration::from_secs(5), "{:?}", t.elapsed());
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(err.contains("under the minimum") && err.contains("bytes/s"), "{err}");
    let o = cli(
        &[
            "--http-speed-limit",
            "0",
            "--http-deadline",
            "0.8",
            "packets",
            "--summary",
        ],
        &server.url("/drip.wav"),
    );
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(err.contains("deadline") && err.contains("--http-deadline"), "{err}");
    assert!(t.elapsed() < Duration::from_secs(8), "{:?}", t.elapsed());
}

/// 16 bytes of whatever range is asked, correctly labelled.
fn tiny(w: &mut TcpStream, ctx: &Ctx<'_>) -> std::io::Result<bool> {
    let (a, _) = ctx.req.range.unwrap_or((0, 0));
    partial(w, ctx, a, a + 15, LEN, "\"t\"")
}

#[test]
fn tiny_answers_use_up_a_small_budget() {
    let server = Server::start(tiny);
    let t = Instant::now();
    // The open's first block (4 KiB) already comes in 16-byte pieces.
    let before = server.requests.load(SeqCst);
    let e = HttpSource::open_with(&server.url("/tiny"), cfg()).unwrap_err();
    assert!(e.to_string().contains("tiny pieces"), "{e}");
    let r = server.requests.load(SeqCst) - before;
    assert!(r <= 18, "{r} requests");
    // 16-byte blocks: the open is fine (16 asked, 16 answered); a large
    // read then gets 16 of each 1 MiB asked.
    let c = HttpConfig {
        block_size: 16,
        ..cfg()
    };
    let mut src = HttpSource::open_with(&server.url("/tiny"), c.clone()).unwrap();
    let e = read(&mut src, 0, 1 << 20).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::LimitExceeded, "{e}");
    assert!(detail(&src).contains("tiny pieces"), "{}", detail(&src));
    let r = src.http_stats().requests;
    assert!(r <= 20, "{r} requests");
    assert!(src.http_stats().bytes <= 20 * 16);
    // A smaller budget.
    let c = HttpConfig {
        max_short_answers: 2,
        ..c
    };
    let mut src = HttpSource::open_with(&server.url("/tiny"), c).unwrap();
    assert_eq!(read(&mut src, 0, 100_000).unwrap_err().kind(), ErrorKind::LimitExceeded);
    assert!(src.http_stats().requests <= 4);
    assert!(t.elapsed() < Duration::from_secs(5));
}

/// The first answer starts at byte 100 whatever was asked.
fn wrong_first(w: &mut TcpStream, ctx: &Ctx<'_>) -> std::io::Result<bool> {
    let (a, z) = ctx.req.range.unwrap_or((0, 0));
    partial(w, ctx, a + 100, z + 100, LEN, "\"w\"")
}

/// Correct for the first request, then answers from 1000 bytes later.
fn wrong_later(w: &mut TcpStream, ctx: &Ctx<'_>) -> std::io::Result<bool> {
    let (a, z) = ctx.req.range.unwrap_or((0, 0));
    let d = if ctx.n == 0 { 0 } else { 1000 };
    partial(w, ctx, a + d, z + d, LEN, "\"w\"")
}

#[test]
fn a_wrong_content_range_says_what_was_asked_and_answered() {
    let server = Server::start(wrong_first);
    let e = HttpSource::open_with(&server.url("/wrong"), cfg()).unwrap_err();
    let m = e.to_string();
    assert!(m.contains("asked for byte 0, the server answered from byte 100"), "{m}");
    let server = Server::start(wrong_later);
    let mut src = HttpSource::open_with(&server.url("/wrong"), cfg()).unwrap();
    let e = read(&mut src, 1 << 20, 10).unwrap_err();
    assert!(matches!(e.kind(), ErrorKind::Io(_)), "{e}");
    let m = detail(&src);
    assert!(
        m.contains(&format!(
            "asked for byte {}, the server answered from byte {}",
            1 << 20,
            (1 << 20) + 1000
        )),
        "{m}"
    );
}

/// A new `ETag` from the third request on.
fn etag(w: &mut TcpStream, ctx: &Ctx<'_>) -> std::io::Result<bool> {
    let (a, z) = ctx.req.range.unwrap_or((0, 0));
    let tag = if ctx.n < 2 { "\"one\"" } else { "\"two\"" };
    partial(w, ctx, a, z, LEN, tag)
}

#[test]
fn an_etag_that_changes_mid_run_is_an_error() {
    let server = Server::start(etag);
    let mut src = HttpSource::open_with(&server.url("/etag"), cfg()).unwrap();
    read(&mut src, 1 << 20, 10).unwrap();
    let e = read(&mut src, 4 << 20, 10).unwrap_err();
    assert!(matches!(e.kind(), ErrorKind::Io(_)), "{e}");
    assert!(detail(&src).contains("ETag \"one\" became \"two\""), "{}", detail(&src));
    assert_eq!(src.http_stats().requests, 3);
}

/// Redirects by path: `/loop` to itself, `/ftp` and `/file` to other
/// schemes, `/https` to https on the same port (a TLS handshake with a
/// plain server fails), anything else served.
fn redirects(w: &mut TcpStream, ctx: &Ctx<'_>) -> std::io::Result<bool> {
    let loc = match ctx.req.path.as_str() {
        "/loop" => "/loop".to_owned(),
        "/ftp" => "ftp://127.0.0.1/x".to_owned(),
        "/file" => "file:///etc/passwd".to_owned(),
        "/data" => "data:text/plain,hello".to_owned(),
        _ => {
            let (a, z) = ctx.req.range.unwrap_or((0, 0));
            return partial(w, ctx, a, z, LEN, "\"r\"");
        }
    };
    write!(w, "HTTP/1.1 302 Found\r\nLocation: {loc}\r\nContent-Length: 0\r\n\r\n")?;
    Ok(true)
}

#[test]
fn redirect_loops_and_other_schemes_are_refused() {
    let server = Server::start(redirects);
    let before = server.requests.load(SeqCst);
    let e = HttpSource::open_with(&server.url("/loop"), cfg()).unwrap_err();
    assert!(e.to_string().contains("more than 5 redirects"), "{e}");
    assert_eq!(server.requests.load(SeqCst) - before, 6);
    for (path, scheme) in [("/ftp", "ftp"), ("/file", "file"), ("/data", "data")] {
        let before = server.requests.load(SeqCst);
        let e = HttpSource::open_with(&server.url(path), cfg()).unwrap_err();
        assert!(e.to_string().contains(&format!("{scheme}: URL refused")), "{e}");
        assert_eq!(server.requests.load(SeqCst) - before, 1, "{path}: nothing followed");
    }
    // A served path works with the same server.
    let mut src = HttpSource::open_with(&server.url("/ok"), cfg()).unwrap();
    read(&mut src, 12345, 100).unwrap();
}

/// States 4 KiB per range, sends 100 bytes, closes.
fn closes(w: &mut TcpStream, ctx: &Ctx<'_>) -> std::io::Result<bool> {
    let (a, z) = ctx.req.range.unwrap_or((0, 0));
    let z = z.min(LEN - 1);
    write!(
        w,
        "HTTP/1.1 206 Partial Content\r\nContent-Range: bytes {a}-{z}/{LEN}\r\nContent-Length: {}\r\n\r\n",
        z - a + 1
    )?;
    body(w, ctx, a, (a + 100).min(z + 1))?;
    Ok(false)
}

#[test]
fn a_body_that_stops_early_is_an_error() {
    let server = Server::start(closes);
    let t = Instant::now();
    let e = HttpSource::open_with(&server.url("/closes"), cfg()).unwrap_err();
    let m = e.to_string();
    assert!(m.contains("body") || m.contains("ended"), "{m}");
    assert!(server.requests.load(SeqCst) <= 2);
    assert!(t.elapsed() < Duration::from_secs(5));
}

#[test]
fn the_cli_caps_a_probe_of_a_huge_range_ignoring_resource() {
    let server = Server::start(huge200);
    let t = Instant::now();
    let o = cli(&["io", "--json"], &server.url("/huge.mp3"));
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(t.elapsed() < Duration::from_secs(10), "{:?}", t.elapsed());
    // Whatever the format code tried, the server pushed at most the probe's
    // byte cap plus what sat in socket buffers when the client closed.
    assert!(
        server.sent.load(SeqCst) <= (64 << 20) + (8 << 20),
        "{}",
        server.sent.load(SeqCst)
    );
}
