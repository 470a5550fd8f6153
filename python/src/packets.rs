//! `packets(src)`: an iterator of [`Packet`]s. A packet stored in one piece
//! in a file comes as a memoryview over Python's own `mmap` of the file;
//! of a `bytes`/`bytearray`/`memoryview` source, over that object. A packet
//! its container split (MPEG-TS, PS, Ogg pages, ASF) and every packet read
//! over HTTP is copied into `bytes` (`copied=True`). Rust walks the
//! container with the GIL released, one packet per `__next__`.

use crate::buffer::BufferSource;
use crate::error_from_json;
use crate::input::Input;
use mediaslice::{Demuxer, Source};
use mediaslice_std::scan::{self, error_json, open_error_json};
use mediaslice_std::{ErrorLog, HttpSource, MmapSource};
use pyo3::prelude::*;
use pyo3::types::IntoPyDict;
use pyo3::types::{PyBytes, PyMemoryView, PySlice};
use serde_json::Value;

/// One packet. `data` is a memoryview into the file's map (or the bytes
/// given) when `copied` is false, else a `bytes` copy.
#[pyclass(module = "mediaslice", frozen, get_all)]
pub struct Packet {
    /// Index of the packet's stream in the probe's `streams`.
    track: usize,
    /// Presentation time stamp in the stream's `time_base`, or None.
    pts: Option<i64>,
    /// Decoding time stamp in the stream's `time_base`, or None.
    dts: Option<i64>,
    /// Duration in the stream's `time_base`, or None.
    duration: Option<u64>,
    /// A keyframe (a random access point).
    keyframe: bool,
    /// To be decoded but not shown (ffprobe's `D` flag).
    discard: bool,
    /// The input ends inside this packet: `data` is its start only.
    truncated: bool,
    /// Byte offset of the payload (of its first piece when joined).
    offset: Option<u64>,
    /// Payload length in bytes.
    size: usize,
    /// The payload.
    data: PyObject,
    /// Whether `data` is a copy (joined pieces, or read over HTTP).
    copied: bool,
}

#[pymethods]
impl Packet {
    fn __repr__(&self) -> String {
        let opt = |v: Option<i64>| v.map_or_else(|| "None".to_owned(), |v| v.to_string());
        format!(
            "Packet(track={}, pts={}, dts={}, size={}, offset={}, keyframe={}, copied={})",
            self.track,
            opt(self.pts),
            opt(self.dts),
            self.size,
            self.offset.map_or_else(|| "None".to_owned(), |v| v.to_string()),
            if self.keyframe { "True" } else { "False" },
            if self.copied { "True" } else { "False" },
        )
    }
}

/// The demuxer an iterator walks.
enum Walk {
    Map(Box<Demuxer<MmapSource>>),
    Buffer(Box<Demuxer<BufferSource<Vec<u8>>>>),
    Http(Box<Demuxer<HttpSource>>, ErrorLog),
}

/// A packet's facts, taken with the GIL released.
struct Step {
    track: usize,
    pts: Option<i64>,
    dts: Option<i64>,
    duration: Option<u64>,
    keyframe: bool,
    discard: bool,
    truncated: bool,
    offset: Option<u64>,
    size: usize,
    /// Where the payload starts in the input, when it lies there in one
    /// piece and the input is in memory.
    at: Option<usize>,
    /// The payload, when it does not.
    copy: Option<Vec<u8>>,
}

/// The next packet of `d`, whose input in memory is `base` (empty over
/// HTTP).
fn step<S: Source>(d: &mut Demuxer<S>, base: (usize, usize)) -> mediaslice::Result<Option<Step>> {
    let Some(p) = d.next_packet()? else {
        return Ok(None);
    };
    let ptr = p.data.as_ptr() as usize;
    // Where the payload lies in the input: the demuxer says it is
    // contiguous at `pos`; its address inside the input confirms it.
    let at = match p.pos.and_then(|pos| usize::try_from(pos).ok()) {
        Some(pos) if p.contiguous && base.1 > 0 && ptr.checked_sub(base.0) == Some(pos) => {
            pos.checked_add(p.data.len()).filter(|&end| end <= base.1).map(|_| pos)
        }
        _ => None,
    };
    Ok(Some(Step {
        track: p.track,
        pts: p.pts,
        dts: p.dts,
        duration: p.duration,
        keyframe: p.flags.keyframe,
        discard: p.flags.discard,
        truncated: p.flags.truncated,
        offset: p.pos,
        size: p.data.len(),
        at,
        copy: if at.is_some() { None } else { Some(p.data.to_vec()) },
    }))
}

impl Walk {
    /// The next packet, or the `error` object that ended the walk.
    /// `viewable`: whether Python holds a view of the input to cut the
    /// payload from (else every payload is copied).
    fn next(&mut self, viewable: bool) -> Result<Option<Step>, Value> {
        let base = |data: &[u8]| (data.as_ptr() as usize, if viewable { data.len() } else { 0 });
        match self {
            Walk::Map(d) => {
                let faults = MmapSource::faults_absorbed();
                let base = base(d.source().data());
                let s = step(d, base).map_err(|e| error_json(&e, None))?;
                if MmapSource::faults_absorbed() != faults {
                    // Its pages may have read as zeros: the file shrank.
                    let e = mediaslice::Error::truncated(
                        s.as_ref().and_then(|s| s.offset).unwrap_or(0),
                        &"the file shrank while it was mapped",
                    );
                    return Err(error_json(&e, None));
                }
                Ok(s)
            }
            Walk::Buffer(d) => {
                let base = base(d.source().data());
                step(d, base).map_err(|e| error_json(&e, None))
            }
            Walk::Http(d, log) => step(d, (0, 0)).map_err(|e| error_json(&e, log.last())),
        }
    }
}

/// The iterator `packets()` returns.
#[pyclass(module = "mediaslice")]
pub struct Packets {
    walk: Option<Walk>,
    /// A byte memoryview over the input (the mmap, or the bytes given).
    view: Option<PyObject>,
    label: String,
}

#[pymethods]
impl Packets {
    fn __iter__(slf: PyRef<'_, Self>) -> PyRef<'_, Self> {
        slf
    }

    fn __next__(&mut self, py: Python<'_>) -> PyResult<Option<Packet>> {
        let Some(walk) = self.walk.as_mut() else {
            return Ok(None);
        };
        let viewable = self.view.is_some();
        let s = match py.allow_threads(|| walk.next(viewable)) {
            Ok(Some(s)) => s,
            Ok(None) => {
                self.close();
                return Ok(None);
            }
            Err(e) => {
                self.close();
                return Err(error_from_json(py, &e, &self.label));
            }
        };
        let (data, copied) = match (s.at, &self.view, s.copy) {
            (Some(at), Some(view), _) => {
                let end = at.saturating_add(s.size);
                let slice = PySlice::new(py, isize::try_from(at)?, isize::try_from(end)?, 1);
                (view.bind(py).get_item(slice)?.unbind(), false)
            }
            (_, _, copy) => (
                PyBytes::new(py, copy.as_deref().unwrap_or_default())
                    .into_any()
                    .unbind(),
                true,
            ),
        };
        Ok(Some(Packet {
            track: s.track,
            pts: s.pts,
            dts: s.dts,
            duration: s.duration,
            keyframe: s.keyframe,
            discard: s.discard,
            truncated: s.truncated,
            offset: s.offset,
            size: s.size,
            data,
            copied,
        }))
    }

    /// Ends the walk and lets go of the demuxer and the map (the map
    /// closes when no packet's memoryview is left).
    fn close(&mut self) {
        self.walk = None;
        self.view = None;
    }
}

/// A byte memoryview over Python's read-only `mmap` of `path` (None for an
/// empty file, which cannot be mapped).
fn map_view<'py>(py: Python<'py>, path: &str) -> PyResult<Option<Bound<'py, PyAny>>> {
    let mmap = py.import("mmap")?;
    let io = py.import("io")?;
    let file = io.call_method1("open", (path, "rb"))?;
    let mapped = (|| {
        let fd = file.call_method0("fileno")?;
        let size: u64 = py
            .import("os")?
            .call_method1("fstat", (&fd,))?
            .getattr("st_size")?
            .extract()?;
        if size == 0 {
            return Ok(None);
        }
        let access = mmap.getattr("ACCESS_READ")?;
        let kwargs = [("access", access)].into_py_dict(py)?;
        let map = mmap.getattr("mmap")?.call((fd, 0), Some(&kwargs))?;
        Ok(Some(PyMemoryView::from(&map)?.into_any()))
    })();
    // The map keeps its own handle on the file.
    file.call_method0("close")?;
    mapped
}

/// `packets(src, name=None)`: an iterator of `Packet`s in the file's
/// order. `data` is a memoryview into the file's map (`data.obj` is the
/// `mmap`) or into the bytes given, valid until the next packet by
/// contract: it keeps the map alive, but shows the file as it is now
/// (copy it with `bytes(data)` to keep it). Raises `mediaslice.Error` when
/// the input cannot be opened, and from `__next__` when reading stops on
/// an error (after the packets read before it).
#[pyfunction]
#[pyo3(signature = (src, name=None))]
pub fn packets(py: Python<'_>, src: &Bound<'_, PyAny>, name: Option<String>) -> PyResult<Packets> {
    let input = Input::from_py(src)?;
    let bytes_name = name.unwrap_or_else(|| "pipe:".to_owned());
    let label = input.label(&bytes_name);
    let ext = scan::extension(&label);
    let ext = ext.as_deref();
    let fail = |e: Value| error_from_json(py, &e, &label);
    let (walk, view) = match input {
        Input::Path(p) => {
            let d = py
                .allow_threads(|| {
                    let src = MmapSource::open(&p).map_err(|e| open_error_json(&e))?;
                    src.advise_sequential();
                    Demuxer::open(src, ext).map_err(|e| error_json(&e, None))
                })
                .map_err(fail)?;
            (Walk::Map(Box::new(d)), map_view(py, &p)?)
        }
        Input::Url(u) => {
            let d = py
                .allow_threads(|| {
                    let src = HttpSource::open_with(&u, probe_pass_config()).map_err(|e| open_error_json(&e))?;
                    let log = src.error_log();
                    match Demuxer::open(src, ext) {
                        Ok(d) => Ok((d, log)),
                        Err(e) => Err(error_json(&e, log.last())),
                    }
                })
                .map_err(fail)?;
            (Walk::Http(Box::new(d.0), d.1), None)
        }
        Input::Bytes(b) => {
            let copy = b.as_bytes().to_vec();
            let d = py
                .allow_threads(|| Demuxer::open(BufferSource::new(copy), ext).map_err(|e| error_json(&e, None)))
                .map_err(fail)?;
            (Walk::Buffer(Box::new(d)), Some(PyMemoryView::from(&b)?.into_any()))
        }
        Input::Buffer { object, copy } => {
            let d = py
                .allow_threads(|| Demuxer::open(BufferSource::new(copy), ext).map_err(|e| error_json(&e, None)))
                .map_err(fail)?;
            // A view cut by byte offsets needs one contiguous byte array.
            let view = PyMemoryView::from(&object)?.call_method1("cast", ("B",)).ok();
            (Walk::Buffer(Box::new(d)), view)
        }
    };
    Ok(Packets {
        walk: Some(walk),
        view: view.map(Bound::unbind),
        label,
    })
}

/// A pass over every packet of a URL: no cap on requests or bytes beyond
/// the library's (which follow the resource's length), 600 s at most, as
/// the CLI's `packets`.
fn probe_pass_config() -> mediaslice_std::HttpConfig {
    mediaslice_std::HttpConfig {
        deadline: Some(std::time::Duration::from_secs(600)),
        ..mediaslice_std::HttpConfig::default()
    }
}
