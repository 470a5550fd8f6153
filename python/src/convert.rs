//! JSON values (the probe's objects) as Python objects: `null` as `None`,
//! numbers as `int` or `float`, arrays as `list`, objects as `dict` in
//! their key order.

use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList};
use pyo3::IntoPyObjectExt;
use serde_json::{Map, Value};

/// `v` as a Python object.
pub fn to_py(py: Python<'_>, v: &Value) -> PyResult<PyObject> {
    match v {
        Value::Null => Ok(py.None()),
        Value::Bool(b) => b.into_py_any(py),
        Value::Number(n) => {
            if let Some(i) = n.as_i64() {
                i.into_py_any(py)
            } else if let Some(u) = n.as_u64() {
                u.into_py_any(py)
            } else {
                n.as_f64().unwrap_or(f64::NAN).into_py_any(py)
            }
        }
        Value::String(s) => s.into_py_any(py),
        Value::Array(items) => {
            let list = PyList::empty(py);
            for item in items {
                list.append(to_py(py, item)?)?;
            }
            Ok(list.into_any().unbind())
        }
        Value::Object(m) => Ok(dict(py, m)?.into_any().unbind()),
    }
}

/// `m` as a Python `dict`.
pub fn dict<'py>(py: Python<'py>, m: &Map<String, Value>) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    for (k, v) in m {
        d.set_item(k, to_py(py, v)?)?;
    }
    Ok(d)
}
