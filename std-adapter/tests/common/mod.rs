//! A tiny threaded HTTP/1.1 server on 127.0.0.1 for the HTTP tests: it
//! serves files with `Range` support, and misbehaves on request.
//!
//! A request for `/MODE/ABSOLUTE/PATH` serves the file at `/ABSOLUTE/PATH`
//! the way MODE says:
//!
//! | mode | behaviour |
//! |---|---|
//! | `range` | correct: 206 with `Content-Range` and `Content-Length`, keep-alive, an `ETag` |
//! | `full` | ignores `Range`: 200 with the whole body and `Content-Length` |
//! | `nolen` | 206 with `Content-Range` but no `Content-Length`; the body ends when the connection closes |
//! | `nototal` | 206 with `Content-Range: bytes A-B/*`; `HEAD` gives the length |
//! | `nolength` | 200 with no length anywhere (not even on `HEAD`), body to close |
//! | `endless` | 206 with a correct `Content-Range`, no `Content-Length`, then the range followed by endless bytes |
//! | `endless200` | 200 with no `Content-Length` and the file followed by endless bytes; `HEAD` gives the length |
//! | `short` | 206 with at most 1000 bytes of each range asked for (a legal shorter answer) |
//! | `416` | always 416 with `Content-Range: bytes */LEN` |
//! | `changing` | a new `ETag` on every response |
//! | `loop` | 302 to itself, forever |
//! | `redirect` | 302 to `/range/PATH` (a path-absolute `Location`) |
//! | `ftp` | 302 to an `ftp:` URL |
//! | `hang` | reads the request and never answers |
//! | anything else | 404 |
//!
//! Every response is bounded: an endless body stops after 256 MiB or when
//! the client goes away, a hung connection after 10 s, and idle connections
//! time out after 5 s. The server stops when dropped.

#![allow(dead_code)]

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::os::unix::fs::FileExt;
use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Settings for tests: no proxy from the environment, 5 s timeouts.
#[cfg(feature = "http")]
pub fn test_config() -> mediaslice_std::HttpConfig {
    mediaslice_std::HttpConfig {
        env_proxy: false,
        read_timeout: Some(Duration::from_secs(5)),
        connect_timeout: Some(Duration::from_secs(5)),
        ..mediaslice_std::HttpConfig::default()
    }
}

/// Every file of `corpus/files/<family>/`, sorted.
pub fn corpus_files() -> Vec<std::path::PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../corpus/files");
    let mut v = Vec::new();
    for fam in std::fs::read_dir(root).unwrap() {
        let fam = fam.unwrap().path();
        if fam.is_dir() {
            for f in std::fs::read_dir(&fam).unwrap() {
                v.push(f.unwrap().path());
            }
        }
    }
    v.sort();
    v
}

/// Counters shared with the connection threads.
#[derive(Default)]
pub struct Counters {
    /// Requests answered.
    pub requests: AtomicU64,
    /// Body bytes written (including those the client never read).
    pub body_bytes: AtomicU64,
}

/// A running server; stops when dropped.
pub struct RangeServer {
    pub addr: SocketAddr,
    pub counters: Arc<Counters>,
    stop: Arc<AtomicBool>,
}

/// Longest an endless body runs.
const ENDLESS_CAP: u64 = 256 << 20;

impl RangeServer {
    pub fn start() -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind 127.0.0.1");
        let addr = listener.local_addr().unwrap();
        let counters = Arc::new(Counters::default());
        let stop = Arc::new(AtomicBool::new(false));
        let (c, s) = (counters.clone(), stop.clone());
        std::thread::spawn(move || {
            for conn in listener.incoming() {
                if s.load(Ordering::SeqCst) {
                    break;
                }
                let Ok(conn) = conn else { continue };
                let (c, s) = (c.clone(), s.clone());
                std::thread::spawn(move || {
                    let _ = serve(conn, &c, &s);
                });
            }
        });
        RangeServer { addr, counters, stop }
    }

    /// The URL serving `file` in `mode`.
    pub fn url(&self, mode: &str, file: &Path) -> String {
        let abs = std::fs::canonicalize(file).unwrap_or_else(|_| file.to_path_buf());
        format!("http://{}/{mode}{}", self.addr, abs.display())
    }

    pub fn requests(&self) -> u64 {
        self.counters.requests.load(Ordering::SeqCst)
    }

    pub fn body_bytes(&self) -> u64 {
        self.counters.body_bytes.load(Ordering::SeqCst)
    }
}

impl Drop for RangeServer {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        // Wake the accept loop.
        let _ = TcpStream::connect_timeout(&self.addr, Duration::from_millis(200));
    }
}

struct Request {
    method: String,
    path: String,
    range: Option<(u64, Option<u64>)>,
}

fn read_request(r: &mut BufReader<TcpStream>) -> std::io::Result<Option<Request>> {
    let mut line = String::new();
    if r.read_line(&mut line)? == 0 {
        return Ok(None);
    }
    let mut parts = line.split_whitespace();
    let method = parts.next().unwrap_or("").to_owned();
    let path = parts.next().unwrap_or("/").to_owned();
    let mut range = None;
    let mut total = line.len();
    loop {
        let mut h = String::new();
        if r.read_line(&mut h)? == 0 {
            return Ok(None);
        }
        total += h.len();
        if total > 16 << 10 {
            return Ok(None);
        }
        let h = h.trim_end();
        if h.is_empty() {
            break;
        }
        if let Some((k, v)) = h.split_once(':') {
            if k.trim().eq_ignore_ascii_case("range") {
                let v = v.trim();
                if let Some(spec) = v.strip_prefix("bytes=") {
                    if let Some((a, b)) = spec.split_once('-') {
                        if let Ok(a) = a.trim().parse() {
                            range = Some((a, b.trim().parse().ok()));
                        }
                    }
                }
            }
        }
    }
    Ok(Some(Request { method, path, range }))
}

fn write_file_range(
    w: &mut TcpStream,
    file: &std::fs::File,
    start: u64,
    end: u64,
    c: &Counters,
) -> std::io::Result<()> {
    let mut buf = vec![0u8; 64 << 10];
    let mut at = start;
    while at < end {
        let n = ((end - at) as usize).min(buf.len());
        let got = file.read_at(&mut buf[..n], at)?;
        if got == 0 {
            break;
        }
        w.write_all(&buf[..got])?;
        c.body_bytes.fetch_add(got as u64, Ordering::SeqCst);
        at += got as u64;
    }
    Ok(())
}

fn write_endless(w: &mut TcpStream, c: &Counters) -> std::io::Result<()> {
    let buf = vec![0x47u8; 64 << 10];
    let mut sent = 0u64;
    while sent < ENDLESS_CAP {
        w.write_all(&buf)?;
        c.body_bytes.fetch_add(buf.len() as u64, Ordering::SeqCst);
        sent += buf.len() as u64;
    }
    Ok(())
}

fn simple(w: &mut TcpStream, status: &str, extra: &str) -> std::io::Result<()> {
    write!(w, "HTTP/1.1 {status}\r\nContent-Length: 0\r\n{extra}\r\n")
}

fn serve(conn: TcpStream, c: &Counters, stop: &AtomicBool) -> std::io::Result<()> {
    // Headers and body go out in separate writes: without this, Nagle's
    // algorithm and the client's delayed ACK stall every response ~40 ms.
    conn.set_nodelay(true)?;
    conn.set_read_timeout(Some(Duration::from_secs(5)))?;
    conn.set_write_timeout(Some(Duration::from_secs(5)))?;
    let mut w = conn.try_clone()?;
    let mut r = BufReader::new(conn);
    let mut served = 0u32;
    while let Some(req) = read_request(&mut r)? {
        served += 1;
        if served > 10_000 {
            break;
        }
        c.requests.fetch_add(1, Ordering::SeqCst);
        let (mode, rest) = match req.path.get(1..).and_then(|p| p.split_once('/')) {
            Some((m, rest)) => (m.to_owned(), format!("/{rest}")),
            None => (String::new(), String::new()),
        };
        let head = req.method == "HEAD";
        match mode.as_str() {
            "loop" => {
                simple(&mut w, "302 Found", &format!("Location: {}\r\n", req.path))?;
                continue;
            }
            "redirect" => {
                simple(&mut w, "302 Found", &format!("Location: /range{rest}\r\n"))?;
                continue;
            }
            "ftp" => {
                simple(&mut w, "302 Found", "Location: ftp://127.0.0.1/x\r\n")?;
                continue;
            }
            "hang" => {
                let t = Instant::now();
                while t.elapsed() < Duration::from_secs(10) && !stop.load(Ordering::SeqCst) {
                    std::thread::sleep(Duration::from_millis(20));
                }
                return Ok(());
            }
            _ => {}
        }
        let known = [
            "range",
            "full",
            "nolen",
            "nototal",
            "nolength",
            "endless",
            "endless200",
            "short",
            "416",
            "changing",
        ];
        let file = match std::fs::File::open(&rest) {
            Ok(f) if known.contains(&mode.as_str()) && f.metadata()?.is_file() => f,
            _ => {
                simple(&mut w, "404 Not Found", "")?;
                continue;
            }
        };
        let len = file.metadata()?.len();
        let etag = if mode == "changing" {
            format!("\"v{served}\"")
        } else {
            "\"v1\"".to_owned()
        };
        if head {
            let cl = if mode == "nolength" {
                String::new()
            } else {
                format!("Content-Length: {len}\r\n")
            };
            write!(w, "HTTP/1.1 200 OK\r\n{cl}ETag: {etag}\r\nAccept-Ranges: bytes\r\n\r\n")?;
            continue;
        }
        if mode == "416" {
            simple(
                &mut w,
                "416 Range Not Satisfiable",
                &format!("Content-Range: bytes */{len}\r\n"),
            )?;
            continue;
        }
        let whole = matches!(mode.as_str(), "full" | "nolength" | "endless200");
        let range = match req.range {
            Some((a, b)) if !whole => {
                if a >= len {
                    simple(
                        &mut w,
                        "416 Range Not Satisfiable",
                        &format!("Content-Range: bytes */{len}\r\n"),
                    )?;
                    continue;
                }
                let mut b = b.unwrap_or(len - 1).min(len - 1);
                if mode == "short" {
                    b = b.min(a + 999);
                }
                Some((a, b))
            }
            _ => None,
        };
        match (mode.as_str(), range) {
            ("full", _) | (_, None) if mode != "nolength" && mode != "endless200" => {
                write!(w, "HTTP/1.1 200 OK\r\nContent-Length: {len}\r\nETag: {etag}\r\n\r\n")?;
                write_file_range(&mut w, &file, 0, len, c)?;
            }
            ("nolength", _) => {
                write!(w, "HTTP/1.1 200 OK\r\nConnection: close\r\n\r\n")?;
                write_file_range(&mut w, &file, 0, len, c)?;
                return Ok(());
            }
            ("endless200", _) => {
                write!(w, "HTTP/1.1 200 OK\r\nConnection: close\r\nETag: {etag}\r\n\r\n")?;
                write_file_range(&mut w, &file, 0, len, c)?;
                let _ = write_endless(&mut w, c);
                return Ok(());
            }
            ("nolen", Some((a, b))) => {
                write!(
                    w,
                    "HTTP/1.1 206 Partial Content\r\nContent-Range: bytes {a}-{b}/{len}\r\nConnection: close\r\n\r\n"
                )?;
                write_file_range(&mut w, &file, a, b + 1, c)?;
                return Ok(());
            }
            ("endless", Some((a, b))) => {
                write!(
                    w,
                    "HTTP/1.1 206 Partial Content\r\nContent-Range: bytes {a}-{b}/{len}\r\nConnection: close\r\n\r\n"
                )?;
                write_file_range(&mut w, &file, a, b + 1, c)?;
                let _ = write_endless(&mut w, c);
                return Ok(());
            }
            ("nototal", Some((a, b))) => {
                write!(
                    w,
                    "HTTP/1.1 206 Partial Content\r\nContent-Range: bytes {a}-{b}/*\r\nContent-Length: {}\r\nETag: {etag}\r\n\r\n",
                    b - a + 1
                )?;
                write_file_range(&mut w, &file, a, b + 1, c)?;
            }
            (_, Some((a, b))) => {
                write!(
                    w,
                    "HTTP/1.1 206 Partial Content\r\nContent-Range: bytes {a}-{b}/{len}\r\nContent-Length: {}\r\nETag: {etag}\r\n\r\n",
                    b - a + 1
                )?;
                write_file_range(&mut w, &file, a, b + 1, c)?;
            }
            _ => {
                simple(&mut w, "500 Internal Server Error", "")?;
            }
        }
        w.flush()?;
    }
    // Drain nothing more: closing the socket ends the connection.
    let _ = r.read(&mut [0u8; 0]);
    Ok(())
}
