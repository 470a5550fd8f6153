//! The `mediaslice` Python module: [`probe`], [`packets`] and [`tags`] of a
//! file, an http(s) URL or bytes, through `mediaslice-std`'s probe (the
//! same objects as `mediaslice probe --json` and `tags --json`). Rust
//! parses with the GIL released; packets' payloads are memoryviews over
//! the file's map or the caller's bytes. See `docs/python.md`.

#![forbid(unsafe_code)]

mod buffer;
mod convert;
mod input;
mod packets;

use buffer::BufferSource;
use input::Input;
use mediaslice::{Demuxer, Source};
use mediaslice_std::ffprobe::gather::collect_tags;
use mediaslice_std::scan::{self, error_json, open_error_json, ScanConfig};
use mediaslice_std::{ErrorLog, FileSource, HttpConfig, HttpSource};
use pyo3::create_exception;
use pyo3::exceptions::{PyException, PyValueError};
use pyo3::prelude::*;
use serde_json::{json, Map, Value};
use std::time::Duration;

create_exception!(
    mediaslice,
    Error,
    PyException,
    "An input that could not be read: `code` (a stable code such as \
     \"malformed\", \"truncated\", \"unknown_format\" or \"open\"), `offset` \
     (the byte where reading stopped, or None), `path` and `message`."
);

/// What one probe may cost over HTTP: the caps of the CLI's `probe` (250
/// requests, 32 MiB, 60 s; `docs/cli.md`), so a URL list cannot make one
/// probe download a whole film.
pub(crate) fn probe_http_config() -> HttpConfig {
    HttpConfig {
        max_requests: Some(250),
        max_bytes: Some(32 << 20),
        deadline: Some(Duration::from_secs(60)),
        ..HttpConfig::default()
    }
}

/// The `mediaslice.Error` for an `error` object `{code, message, offset}`
/// of input `path`.
pub(crate) fn error_from_json(py: Python<'_>, error: &Value, path: &str) -> PyErr {
    let code = error.get("code").and_then(Value::as_str).unwrap_or("io");
    let message = error.get("message").and_then(Value::as_str).unwrap_or("");
    let offset = error.get("offset").and_then(Value::as_u64);
    let err = Error::new_err(format!("{path}: {message} [{code}]"));
    let value = err.value(py);
    let set = || -> PyResult<()> {
        value.setattr("code", code)?;
        value.setattr("offset", offset)?;
        value.setattr("path", path)?;
        value.setattr("message", message)
    };
    match set() {
        Ok(()) => err,
        Err(e) => e,
    }
}

/// The probe of bytes in memory: `probe --json`'s object under the name
/// `name` (whose extension is the format hint), with `error` on failure.
fn probe_slice(data: &[u8], name: &str) -> Map<String, Value> {
    let ext = scan::extension(name);
    match Demuxer::open(BufferSource::new(data), ext.as_deref()) {
        Ok(mut d) => scan::probe_demuxer(&mut d, name, None),
        Err(e) => {
            let mut line = Map::new();
            line.insert("error".into(), error_json(&e, None));
            line
        }
    }
}

/// `probe(src, name=None, errors="raise")`: the object of `mediaslice probe
/// --json` (ffprobe's `{"streams": [...], "format": {...}}`, then
/// `"diagnostics"` when there are any) as a dict. `name` is the format's
/// `filename` (default: the path or URL; `"pipe:"` for bytes) and, for
/// bytes, the format hint by its extension. On failure `errors="raise"`
/// raises `mediaslice.Error`; `errors="return"` returns the dict with an
/// `"error"` object (`code`, `message`, `offset`) beside what was read.
#[pyfunction]
#[pyo3(signature = (src, name=None, errors="raise"))]
fn probe(py: Python<'_>, src: &Bound<'_, PyAny>, name: Option<String>, errors: &str) -> PyResult<PyObject> {
    let raise = match errors {
        "raise" => true,
        "return" => false,
        _ => return Err(PyValueError::new_err("errors must be \"raise\" or \"return\"")),
    };
    let input = Input::from_py(src)?;
    let bytes_name = name.clone().unwrap_or_else(|| "pipe:".to_owned());
    let mut line = match &input {
        Input::Path(p) | Input::Url(p) => {
            let config = ScanConfig {
                http: probe_http_config(),
            };
            let mut line = py.allow_threads(|| scan::probe_input(p, &config));
            if let (Some(n), Some(Value::Object(f))) = (&name, line.get_mut("format")) {
                f.insert("filename".into(), n.as_str().into());
            }
            line
        }
        Input::Bytes(b) => {
            let data = b.as_bytes();
            py.allow_threads(|| probe_slice(data, &bytes_name))
        }
        Input::Buffer { copy, .. } => py.allow_threads(|| probe_slice(copy, &bytes_name)),
    };
    if raise {
        if let Some(e) = line.get("error") {
            return Err(error_from_json(py, e, &input.label(&bytes_name)));
        }
    }
    // `probe --json`'s object has no `path` (the batch mode's has).
    line.shift_remove("path");
    Ok(convert::dict(py, &line)?.into_any().unbind())
}

/// `tags --json` of an open demuxer: `{"format": {"tags"}, "streams":
/// [{"index", "tags"}]}`, and the error that ended the walk.
fn tags_doc<S: Source>(d: &mut Demuxer<S>) -> (Value, Option<mediaslice::Error>) {
    let (tags, err) = collect_tags(d);
    let streams: Vec<Value> = d
        .tracks()
        .iter()
        .enumerate()
        .map(|(i, t)| json!({"index": i, "tags": tags.stream_json(i, t)}))
        .collect();
    (json!({"format": {"tags": tags.format_json()}, "streams": streams}), err)
}

/// Where `tags` reads, borrowed for the time the GIL is released.
enum Target<'a> {
    Slice(&'a [u8]),
    Url(&'a str),
    File(&'a str),
}

/// The tags of `target` (opened as `probe` opens it; `name` gives the
/// format hint), or an `error` object.
fn tags_of(target: Target<'_>, name: &str) -> Result<Value, Value> {
    let ext = scan::extension(name);
    let ext = ext.as_deref();
    let fail = |e: mediaslice::Error, log: Option<&ErrorLog>| error_json(&e, log.and_then(ErrorLog::last));
    let (doc, err, log) = match target {
        Target::Slice(bytes) => {
            let mut d = Demuxer::open(BufferSource::new(bytes), ext).map_err(|e| fail(e, None))?;
            let (doc, err) = tags_doc(&mut d);
            (doc, err, None)
        }
        Target::Url(url) => {
            let src = HttpSource::open_with(url, probe_http_config()).map_err(|e| open_error_json(&e))?;
            let log = src.error_log();
            let mut d = Demuxer::open(src, ext).map_err(|e| fail(e, Some(&log)))?;
            let (doc, err) = tags_doc(&mut d);
            (doc, err, Some(log))
        }
        Target::File(path) => {
            let src = FileSource::open(path).map_err(|e| open_error_json(&e))?;
            let mut d = Demuxer::open(src, ext).map_err(|e| fail(e, None))?;
            let (doc, err) = tags_doc(&mut d);
            (doc, err, None)
        }
    };
    match err {
        Some(e) => Err(fail(e, log.as_ref())),
        None => Ok(doc),
    }
}

/// `tags(src, name=None)`: `{"format": {"tags": {...}}, "streams":
/// [{"index": 0, "tags": {...}}, ...]}` as `mediaslice tags --json` gives
/// it. Raises `mediaslice.Error` when the input cannot be read.
#[pyfunction]
#[pyo3(signature = (src, name=None))]
fn tags(py: Python<'_>, src: &Bound<'_, PyAny>, name: Option<String>) -> PyResult<PyObject> {
    let input = Input::from_py(src)?;
    let name = match (&input, name) {
        (Input::Path(p) | Input::Url(p), _) => p.clone(),
        (_, n) => n.unwrap_or_else(|| "pipe:".to_owned()),
    };
    let result = match &input {
        Input::Bytes(b) => {
            let data = b.as_bytes();
            py.allow_threads(|| tags_of(Target::Slice(data), &name))
        }
        Input::Buffer { copy, .. } => py.allow_threads(|| tags_of(Target::Slice(copy), &name)),
        Input::Path(p) => py.allow_threads(|| tags_of(Target::File(p), &name)),
        Input::Url(u) => py.allow_threads(|| tags_of(Target::Url(u), &name)),
    };
    match result {
        Ok(doc) => convert::to_py(py, &doc),
        Err(e) => Err(error_from_json(py, &e, &name)),
    }
}

/// The module: `probe`, `packets`, `tags`, `Error`, `Packet`, `Packets`.
#[pymodule]
#[pyo3(name = "mediaslice")]
fn mediaslice_module(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("Error", m.py().get_type::<Error>())?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    // What maturin's package `__init__.py` takes with `import *`.
    m.add(
        "__all__",
        ["Error", "Packet", "Packets", "packets", "probe", "tags", "__version__"],
    )?;
    m.add_function(wrap_pyfunction!(probe, m)?)?;
    m.add_function(wrap_pyfunction!(tags, m)?)?;
    m.add_function(wrap_pyfunction!(packets::packets, m)?)?;
    m.add_class::<packets::Packet>()?;
    m.add_class::<packets::Packets>()?;
    Ok(())
}
