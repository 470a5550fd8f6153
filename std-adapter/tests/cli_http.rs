//! The `mediaslice` command line on http:// URLs served by the local range
//! server (tests/common): the same output as for the file, `io --json` with
//! requests, and one clear line for bad URLs and HTTP errors.

use crate::http_common as common;

use common::RangeServer;
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn bin() -> Command {
    Command::new(env!("CARGO_BIN_EXE_mediaslice"))
}

fn corpus(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../corpus/files").join(rel)
}

fn run(args: &[&str]) -> Output {
    bin()
        .env_remove("HTTP_PROXY")
        .env_remove("http_proxy")
        .args(args)
        .output()
        .unwrap()
}

fn json(o: &Output) -> Value {
    serde_json::from_slice(&o.stdout).unwrap_or_else(|e| {
        panic!(
            "not JSON ({e}): {}\nstderr: {}",
            String::from_utf8_lossy(&o.stdout),
            String::from_utf8_lossy(&o.stderr)
        )
    })
}

fn one_line_failure(o: &Output, what: &str) -> String {
    assert_eq!(
        o.status.code(),
        Some(1),
        "{what}: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    let err = String::from_utf8_lossy(&o.stderr).into_owned();
    assert_eq!(err.lines().count(), 1, "{what}: {err}");
    assert!(
        err.starts_with("mediaslice: ") && !err.contains("panicked"),
        "{what}: {err}"
    );
    err
}

#[test]
fn urls_give_the_same_output_as_files() {
    let server = RangeServer::start();
    for rel in ["mp4/h264_aac.mp4", "wav/pcm_s16le.wav", "mpegts/h264_aac.ts"] {
        let f = corpus(rel);
        let url = server.url("range", &f);
        let fs = f.to_str().unwrap();
        let a = run(&["packets", "--summary", fs]);
        let b = run(&["packets", "--summary", &url]);
        assert!(b.status.success(), "{rel}: {}", String::from_utf8_lossy(&b.stderr));
        assert_eq!(a.stdout, b.stdout, "{rel}");
        let a = json(&run(&["probe", "--json", fs]));
        let b = json(&run(&["probe", "--json", &url]));
        assert_eq!(a["streams"], b["streams"], "{rel}");
        assert_eq!(a["format"]["duration"], b["format"]["duration"], "{rel}");
        assert_eq!(b["format"]["filename"], url.as_str());
        let a = run(&["tags", "--json", fs]);
        let b = run(&["tags", "--json", &url]);
        assert_eq!(a.stdout, b.stdout, "{rel}");
    }
}

#[test]
fn io_over_http_counts_requests() {
    let server = RangeServer::start();
    let f = corpus("mp4/h264_aac_faststart.mp4");
    let url = server.url("range", &f);
    let before = server.requests();
    let v = json(&run(&["io", "--json", &url]));
    let keys: Vec<&str> = v.as_object().unwrap().keys().map(|k| k.as_str()).collect();
    assert_eq!(keys, ["bytes_read", "reads", "requests"]);
    let requests = v["requests"].as_u64().unwrap();
    assert_eq!(v["reads"], v["requests"]);
    assert_eq!(requests, server.requests() - before, "the server saw what we counted");
    let size = std::fs::metadata(&f).unwrap().len();
    assert!(v["bytes_read"].as_u64().unwrap() <= size);
    let o = run(&["io", &url]);
    let text = String::from_utf8(o.stdout).unwrap();
    assert!(text.contains("requests:") && text.contains("http"), "{text}");
}

#[test]
fn bad_urls_and_http_errors_are_one_line() {
    let server = RangeServer::start();
    let f = corpus("wav/pcm_s16le.wav");
    let e = one_line_failure(&run(&["probe", &server.url("nosuch", &f)]), "404");
    assert!(e.contains("404"), "{e}");
    let e = one_line_failure(&run(&["probe", &server.url("416", &f)]), "416");
    assert!(e.contains("416"), "{e}");
    let e = one_line_failure(
        &run(&["--http-redirects", "2", "probe", &server.url("loop", &f)]),
        "loop",
    );
    assert!(e.contains("redirects"), "{e}");
    let e = one_line_failure(&run(&["probe", &server.url("ftp", &f)]), "ftp redirect");
    assert!(e.contains("ftp"), "{e}");
    let e = one_line_failure(
        &run(&["--http-timeout", "0.3", "probe", &server.url("hang", &f)]),
        "hang",
    );
    assert!(
        e.to_lowercase().contains("timeout") || e.to_lowercase().contains("timed out"),
        "{e}"
    );
    one_line_failure(&run(&["probe", "http://"]), "empty host");
    one_line_failure(&run(&["probe", "http://[::1"]), "bad host");
    let e = one_line_failure(&run(&["probe", "ftp://127.0.0.1/x.mp4"]), "ftp");
    assert!(e.contains("scheme"), "{e}");
    let e = one_line_failure(&run(&["--reader", "probe", &server.url("range", &f)]), "source");
    assert!(e.contains("URL"), "{e}");
    // A cap reached while reading packets: the packets before it are
    // printed, then one line.
    let url = server.url("range", &corpus("mp4/h264_aac.mp4"));
    let o = run(&["--http-max-requests", "1", "packets", "--summary", &url]);
    let e = one_line_failure(&o, "cap");
    assert!(e.contains("cap"), "{e}");
}
