//! HttpSource against a local range server on 127.0.0.1 (tests/common):
//! the same packets as the file, and bounded behaviour with servers that
//! ignore ranges, omit lengths, send endless bodies, redirect in a loop,
//! refuse ranges or hang.

use crate::http_common as common;

use common::{corpus_files, test_config as cfg, RangeServer};
use mediaslice::crc::Crc32;
use mediaslice::{Demuxer, ErrorKind, Source};
use mediaslice_std::{HttpConfig, HttpSource, MmapSource};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

fn corpus(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../corpus/files").join(rel)
}

fn temp(name: &str, bytes: &[u8]) -> PathBuf {
    let p = std::env::temp_dir().join(format!("mediaslice-http-{}-{name}", std::process::id()));
    std::fs::File::create(&p).unwrap().write_all(bytes).unwrap();
    p
}

/// What a full pass gives: format, tracks, duration, packets, bytes, CRC of
/// all payloads, and how it ended.
#[derive(Debug, PartialEq)]
struct Pass {
    format: String,
    tracks: usize,
    duration_us: Option<u64>,
    packets: u64,
    bytes: u64,
    crc: u32,
    end: Option<ErrorKind>,
}

fn pass<S: Source>(src: S) -> Result<Pass, mediaslice::Error> {
    let mut d = Demuxer::open(src, None)?;
    let (format, tracks, duration_us) = (d.format().name().to_owned(), d.tracks().len(), d.info().duration_us);
    let mut crc = Crc32::new();
    let (mut packets, mut bytes, mut end) = (0, 0, None);
    loop {
        match d.next_packet() {
            Ok(Some(p)) => {
                crc.update(p.data);
                packets += 1;
                bytes += p.data.len() as u64;
            }
            Ok(None) => break,
            Err(e) => {
                end = Some(e.kind());
                break;
            }
        }
    }
    Ok(Pass {
        format,
        tracks,
        duration_us,
        packets,
        bytes,
        crc: crc.finish(),
        end,
    })
}

#[test]
fn every_corpus_file_reads_the_same_over_http() {
    let server = RangeServer::start();
    let files = corpus_files();
    assert!(files.len() > 20, "corpus/files is missing");
    let mut total_bytes = 0u64;
    let mut total_len = 0u64;
    for f in &files {
        let want = pass(MmapSource::open(f).unwrap()).map_err(|e| e.kind());
        let src = HttpSource::open_with(&server.url("range", f), cfg()).unwrap();
        let got = pass(src).map_err(|e| e.kind());
        assert_eq!(got, want, "{}", f.display());
        // A probe only: bounded by the file and small for these files.
        let mut src = HttpSource::open_with(&server.url("range", f), cfg()).unwrap();
        let len = src.len();
        if let Ok(mut d) = Demuxer::open(&mut src, None) {
            while let Ok(Some(_)) = d.next_tag() {}
        }
        let s = src.stats();
        assert!(
            s.bytes_read <= len,
            "{}: probe read {} of {len}",
            f.display(),
            s.bytes_read
        );
        assert_eq!(s.reads, src.http_stats().requests);
        total_bytes += s.bytes_read;
        total_len += len;
    }
    assert!(total_bytes < total_len, "probes read {total_bytes} of {total_len}");
}

fn wav_file() -> PathBuf {
    corpus("wav/pcm_s16le.wav")
}

fn mp4_file() -> PathBuf {
    corpus("mp4/h264_aac.mp4")
}

#[test]
fn server_ignoring_ranges_is_read_only_as_far_as_needed() {
    let server = RangeServer::start();
    let f = mp4_file();
    let want = pass(MmapSource::open(&f).unwrap()).unwrap();
    let mut src = HttpSource::open_with(&server.url("full", &f), cfg()).unwrap();
    assert!(!src.ranges_supported());
    assert_eq!(src.len(), std::fs::metadata(&f).unwrap().len());
    // Only the first block was read, not the file.
    assert!(src.stats().bytes_read <= HttpSource::DEFAULT_BLOCK as u64);
    let mut b = [0u8; 8];
    src.read_exact_at(4, &mut b).unwrap();
    assert_eq!(&b[..4], b"ftyp");
    assert_eq!(pass(src).unwrap(), want);
}

#[test]
fn a_large_file_behind_a_server_ignoring_ranges_stops_early() {
    // The endless 200 body: length from HEAD, the body read only as far as
    // the first block, then the connection is dropped.
    let server = RangeServer::start();
    let f = wav_file();
    let mut src = HttpSource::open_with(&server.url("endless200", &f), cfg()).unwrap();
    assert_eq!(src.len(), std::fs::metadata(&f).unwrap().len());
    assert_eq!(src.http_stats().requests, 2, "GET then HEAD");
    let t = Instant::now();
    let want = pass(MmapSource::open(&f).unwrap()).unwrap();
    let got = pass(&mut src).unwrap();
    assert_eq!(got, want);
    assert_eq!(
        src.stats().bytes_read,
        src.len(),
        "read the file once, nothing after it"
    );
    assert!(t.elapsed() < Duration::from_secs(10));
}

#[test]
fn missing_content_length_and_missing_total() {
    let server = RangeServer::start();
    for f in [wav_file(), mp4_file()] {
        let want = pass(MmapSource::open(&f).unwrap()).unwrap();
        for mode in ["nolen", "nototal", "short"] {
            let src = HttpSource::open_with(&server.url(mode, &f), cfg()).unwrap();
            assert_eq!(pass(src).unwrap(), want, "{mode} {}", f.display());
        }
    }
    // No length anywhere: a clear error, not a guess.
    let e = HttpSource::open_with(&server.url("nolength", &wav_file()), cfg()).unwrap_err();
    assert!(e.to_string().contains("no length"), "{e}");
}

#[test]
fn endless_bodies_are_cut_at_what_was_asked() {
    let server = RangeServer::start();
    let f = mp4_file();
    let want = pass(MmapSource::open(&f).unwrap()).unwrap();
    let t = Instant::now();
    let mut src = HttpSource::open_with(&server.url("endless", &f), cfg()).unwrap();
    let got = pass(&mut src).unwrap();
    assert_eq!(got, want);
    let s = src.http_stats();
    assert!(s.bytes <= 2 * src.len(), "{s:?}");
    assert_eq!(s.dropped, s.requests, "every endless body is dropped: {s:?}");
    assert!(t.elapsed() < Duration::from_secs(10));
}

#[test]
fn status_416_404_and_refused_connections_are_clean_errors() {
    let server = RangeServer::start();
    let e = HttpSource::open_with(&server.url("416", &wav_file()), cfg()).unwrap_err();
    assert!(e.to_string().contains("416"), "{e}");
    let e = HttpSource::open_with(&server.url("nosuchmode", &wav_file()), cfg()).unwrap_err();
    assert!(e.to_string().contains("404"), "{e}");
    assert_eq!(e.kind(), std::io::ErrorKind::NotFound);
    // A port nobody listens on.
    let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = l.local_addr().unwrap().port();
    drop(l);
    let e = HttpSource::open_with(&format!("http://127.0.0.1:{port}/x"), cfg()).unwrap_err();
    assert!(!e.to_string().is_empty());
}

#[test]
fn empty_resource_is_empty() {
    let server = RangeServer::start();
    let p = temp("empty", b"");
    let src = HttpSource::open_with(&server.url("range", &p), cfg()).unwrap();
    assert_eq!(src.len(), 0);
    assert!(Demuxer::open(src, None).is_err());
    std::fs::remove_file(p).unwrap();
}

#[test]
fn redirects_are_followed_within_bounds() {
    let server = RangeServer::start();
    let f = wav_file();
    let src = HttpSource::open_with(&server.url("redirect", &f), cfg()).unwrap();
    assert!(src.url().contains("/range/"), "{}", src.url());
    assert_eq!(src.http_stats().redirects, 1);
    assert_eq!(src.http_stats().requests, 2);
    assert_eq!(pass(src).unwrap(), pass(MmapSource::open(&f).unwrap()).unwrap());
    // No redirects allowed.
    let c = HttpConfig {
        max_redirects: 0,
        ..cfg()
    };
    let e = HttpSource::open_with(&server.url("redirect", &f), c).unwrap_err();
    assert!(e.to_string().contains("redirects"), "{e}");
    // A loop ends after max_redirects + 1 requests.
    let before = server.requests();
    let e = HttpSource::open_with(&server.url("loop", &f), cfg()).unwrap_err();
    assert!(e.to_string().contains("redirects"), "{e}");
    assert_eq!(server.requests() - before, 6);
    // Only http and https.
    let e = HttpSource::open_with(&server.url("ftp", &f), cfg()).unwrap_err();
    assert!(e.to_string().contains("ftp"), "{e}");
}

#[test]
fn a_silent_server_times_out() {
    let server = RangeServer::start();
    let c = HttpConfig {
        read_timeout: Some(Duration::from_millis(300)),
        ..cfg()
    };
    let t = Instant::now();
    let e = HttpSource::open_with(&server.url("hang", &wav_file()), c).unwrap_err();
    assert!(t.elapsed() < Duration::from_secs(5), "{:?}", t.elapsed());
    assert_eq!(e.kind(), std::io::ErrorKind::TimedOut, "{e}");
}

#[test]
fn caps_on_requests_and_bytes_hold() {
    let server = RangeServer::start();
    let f = mp4_file();
    // Requests: the open takes one; a pass needs more.
    let c = HttpConfig {
        max_requests: Some(2),
        block_size: 1024,
        ..cfg()
    };
    let src = HttpSource::open_with(&server.url("range", &f), c).unwrap();
    let r = pass(src);
    let failed = match r {
        Err(e) => e.kind() == ErrorKind::LimitExceeded,
        Ok(p) => p.end == Some(ErrorKind::LimitExceeded),
    };
    assert!(failed);
    // Bytes: a server ignoring ranges with a cap below the file.
    let len = std::fs::metadata(&f).unwrap().len();
    let c = HttpConfig {
        max_bytes: Some(len / 2),
        ..cfg()
    };
    let mut src = HttpSource::open_with(&server.url("full", &f), c).unwrap();
    let mut buf = [0u8; 16];
    let e = src.read_exact_at(len - 16, &mut buf).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::LimitExceeded);
    assert!(src.last_error().unwrap().contains("byte cap"));
    assert!(src.stats().bytes_read <= len / 2);
    // Default caps: the length and an eighth plus the slack; requests by
    // length.
    let src = HttpSource::open_with(&server.url("range", &f), cfg()).unwrap();
    assert_eq!(src.max_bytes(), len + len / 8 + HttpSource::DEFAULT_BYTES_SLACK);
    assert_eq!(
        src.max_requests(),
        HttpSource::DEFAULT_REQUESTS + len / HttpSource::BYTES_PER_REQUEST
    );
}

#[test]
fn a_resource_that_changes_is_an_error() {
    let server = RangeServer::start();
    let f = mp4_file();
    let mut src = HttpSource::open_with(&server.url("changing", &f), cfg()).unwrap();
    let mut buf = [0u8; 16];
    let len = src.len();
    let e = src.read_exact_at(len - 16, &mut buf).unwrap_err();
    assert!(matches!(e.kind(), ErrorKind::Io(_)));
    assert!(src.last_error().unwrap().contains("changed"));
}

#[test]
fn cache_serves_repeats_and_reads_ahead_sequentially() {
    let server = RangeServer::start();
    let data: Vec<u8> = (0..1_000_000u32).map(|i| (i * 31 + 7) as u8).collect();
    let p = temp("seq", &data);
    let c = HttpConfig {
        block_size: 4096,
        blocks: 32,
        max_read_ahead: 8,
        ..cfg()
    };
    let mut src = HttpSource::open_with(&server.url("range", &p), c).unwrap();
    assert_eq!(src.http_stats().requests, 1);
    // Inside the first block: no request.
    assert_eq!(src.bytes(100, 50).unwrap(), &data[100..150]);
    assert_eq!(src.http_stats().requests, 1);
    // Sequential small reads: read-ahead grows, so far fewer requests than
    // blocks.
    let mut crc = Crc32::new();
    for off in (0..500_000u64).step_by(1000) {
        crc.update(src.bytes(off, 1000).unwrap());
    }
    assert_eq!(crc.finish(), mediaslice::crc::crc32(&data[..500_000]));
    let r = src.http_stats().requests;
    assert!(r < 30, "{r} requests for 123 blocks");
    // Never read a byte twice when going forward.
    assert!(
        src.stats().bytes_read <= 500_000 + 8 * 4096 * 2,
        "{}",
        src.stats().bytes_read
    );
    // A large read goes straight, exactly.
    let before = src.stats();
    assert_eq!(src.bytes(600_000, 300_000).unwrap(), &data[600_000..900_000]);
    assert_eq!(src.stats().reads, before.reads + 1);
    assert_eq!(src.stats().bytes_read, before.bytes_read + 300_000);
    // Joins and reads past the end.
    src.gather(10, 5, 0).unwrap();
    src.gather(999_990, 10, 5).unwrap();
    let j = src.joined(15).unwrap();
    assert_eq!(&j[..5], &data[10..15]);
    assert_eq!(&j[5..], &data[999_990..]);
    let mut b = [0u8; 20];
    assert_eq!(src.read_at(999_990, &mut b).unwrap(), 10);
    assert_eq!(src.read_at(1_000_000, &mut b).unwrap(), 0);
    assert!(src.bytes(999_990, 20).unwrap_err().is_truncation());
    assert!(src.allocated() <= 32 * 4096 + (512 << 10));
    std::fs::remove_file(p).unwrap();
}
