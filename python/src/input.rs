//! What a `src` argument names: a file path (`str` or `os.PathLike`), an
//! http:// or https:// URL, or the bytes themselves (`bytes`, `bytearray`,
//! `memoryview` or any object with the buffer protocol).

use mediaslice_std::is_http_url;
use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;
use pyo3::types::{PyByteArray, PyBytes, PyMemoryView, PyString};

/// A `src` argument, read.
pub enum Input<'py> {
    /// A file path.
    Path(String),
    /// An http:// or https:// URL.
    Url(String),
    /// A `bytes` object: immutable, so Rust borrows it while it parses.
    Bytes(Bound<'py, PyBytes>),
    /// A mutable buffer (`bytearray`, `memoryview`, ...), copied once: it
    /// could change under a parse that runs without the GIL.
    Buffer {
        /// The object given, over which packets' memoryviews are cut.
        object: Bound<'py, PyAny>,
        /// Its bytes when it was passed.
        copy: Vec<u8>,
    },
}

impl<'py> Input<'py> {
    /// Reads `src`. Errors: `TypeError` for anything else.
    pub fn from_py(src: &Bound<'py, PyAny>) -> PyResult<Self> {
        if let Ok(b) = src.downcast::<PyBytes>() {
            return Ok(Input::Bytes(b.clone()));
        }
        if src.is_instance_of::<PyByteArray>() || src.is_instance_of::<PyMemoryView>() {
            // bytes(memoryview) copies in C order whatever the view's shape.
            let copy = src.py().get_type::<PyBytes>().call1((src,))?;
            let copy = copy.downcast::<PyBytes>()?.as_bytes().to_vec();
            return Ok(Input::Buffer {
                object: src.clone(),
                copy,
            });
        }
        let text = if src.is_instance_of::<PyString>() {
            src.clone()
        } else if src.hasattr("__fspath__")? {
            let os = src.py().import("os")?;
            os.call_method1("fsdecode", (os.call_method1("fspath", (src,))?,))?
        } else {
            return Err(PyTypeError::new_err(format!(
                "src must be a path (str or os.PathLike), an http(s) URL, or bytes/bytearray/memoryview, not {}",
                src.get_type().name()?
            )));
        };
        let text: String = text.extract()?;
        Ok(if is_http_url(&text) {
            Input::Url(text)
        } else {
            Input::Path(text)
        })
    }

    /// The name an error reports: the path or URL, or `name` for bytes.
    pub fn label(&self, name: &str) -> String {
        match self {
            Input::Path(p) | Input::Url(p) => p.clone(),
            _ => name.to_owned(),
        }
    }
}
