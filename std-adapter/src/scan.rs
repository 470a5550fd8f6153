//! One input, one JSON object: the probe of a file or an HTTP(S) URL as
//! `probe --json` gives it, with the input's `path` first and, when it
//! could not be read to the end, an `error` (`code`, `message`, `offset`).
//! The unit of `mediaslice probe --json-lines` and of the Python
//! bindings' `probe`; it never fails, so a batch over a million inputs
//! keeps one line per input.
//!
//! Files are read with positioned reads ([`FileSource`]), not mapped: a
//! probe reads a few blocks, and a file truncated under a map in one of
//! many threads would fault the whole batch's signal guard.

use crate::ffprobe::gather::probe_json;
use crate::{is_http_url, ErrorLog, FileSource, HttpConfig, HttpSource};
use mediaslice::{Demuxer, ErrorKind, Source};
use serde_json::{json, Map, Value};
use std::path::Path;

/// How [`probe_input`] reads URLs.
#[derive(Clone, Debug, Default)]
pub struct ScanConfig {
    /// The HTTP source's settings (timeouts, caps on requests and bytes).
    pub http: HttpConfig,
}

/// The stable code of an error kind in the `error` object: `unknown_format`,
/// `unsupported`, `malformed`, `truncated`, `limit_exceeded`,
/// `capacity_exceeded`, `scratch_too_small`, `offset_overflow`,
/// `invalid_argument`, `sink_full`, `io`.
pub fn error_code(kind: ErrorKind) -> &'static str {
    match kind {
        ErrorKind::UnknownFormat => "unknown_format",
        ErrorKind::Unsupported => "unsupported",
        ErrorKind::Malformed => "malformed",
        ErrorKind::Truncated => "truncated",
        ErrorKind::LimitExceeded => "limit_exceeded",
        ErrorKind::CapacityExceeded => "capacity_exceeded",
        ErrorKind::ScratchTooSmall => "scratch_too_small",
        ErrorKind::OffsetOverflow => "offset_overflow",
        ErrorKind::InvalidArgument => "invalid_argument",
        ErrorKind::SinkFull => "sink_full",
        _ => "io",
    }
}

/// The `error` object of a demuxer error; `more` completes the message
/// (an HTTP source's status line and URL).
pub fn error_json(e: &mediaslice::Error, more: Option<String>) -> Value {
    let message = match more {
        Some(m) => format!("{e} ({m})"),
        None => e.to_string(),
    };
    json!({"code": error_code(e.kind()), "message": message, "offset": e.offset()})
}

/// The `error` object of an input that could not be opened (`open`: not
/// found, not a regular file, refused by the server, ...).
pub fn open_error_json(e: &std::io::Error) -> Value {
    json!({"code": "open", "message": e.to_string()})
}

/// The probe of one open demuxer as one object: `path`, then `streams`,
/// `format` (and `diagnostics`), then `error` when the tags ended in one.
pub fn probe_demuxer<S: Source>(d: &mut Demuxer<S>, path: &str, log: Option<&ErrorLog>) -> Map<String, Value> {
    let (doc, err) = probe_json(d, path);
    let mut line = Map::new();
    line.insert("path".into(), path.into());
    line.extend(doc);
    if let Some(e) = err {
        line.insert("error".into(), error_json(&e, log.and_then(ErrorLog::last)));
    }
    line
}

/// Probes `input`, a file path or an http:// or https:// URL: one object,
/// `{"path", "streams", "format", ...}` or `{"path", "error"}`.
pub fn probe_input(input: &str, config: &ScanConfig) -> Map<String, Value> {
    let failed = |error: Value| {
        let mut line = Map::new();
        line.insert("path".into(), input.into());
        line.insert("error".into(), error);
        line
    };
    let ext = extension(input);
    if is_http_url(input) {
        let src = match HttpSource::open_with(input, config.http.clone()) {
            Ok(s) => s,
            Err(e) => return failed(open_error_json(&e)),
        };
        let log = src.error_log();
        return match Demuxer::open(src, ext.as_deref()) {
            Ok(mut d) => probe_demuxer(&mut d, input, Some(&log)),
            Err(e) => failed(error_json(&e, log.last())),
        };
    }
    let src = match FileSource::open(input) {
        Ok(s) => s,
        Err(e) => return failed(open_error_json(&e)),
    };
    match Demuxer::open(src, ext.as_deref()) {
        Ok(mut d) => probe_demuxer(&mut d, input, None),
        Err(e) => failed(error_json(&e, None)),
    }
}

/// The lower-case extension of a path or of a URL's path (query and
/// fragment dropped): the demuxer's format hint.
pub fn extension(input: &str) -> Option<String> {
    let path = if is_http_url(input) {
        let no_query = input.split(['?', '#']).next().unwrap_or(input);
        let rest = no_query.split_once("://").map_or(no_query, |(_, r)| r);
        rest.find('/').and_then(|i| rest.get(i..)).unwrap_or("")
    } else {
        input
    };
    Path::new(path)
        .extension()
        .map(|e| e.to_string_lossy().to_ascii_lowercase())
}
