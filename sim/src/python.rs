use numpy::{IntoPyArray, PyArray1};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict};

/// Tokenize a decompressed SWF log; returns a dict of numpy columns and lists (see `swf.rs`).
#[pyfunction]
fn parse_swf<'py>(py: Python<'py>, data: &Bound<'py, PyBytes>) -> PyResult<Bound<'py, PyDict>> {
    let bytes: &[u8] = data.as_bytes();
    let parsed = py.detach(|| crate::swf::parse(bytes));
    let out = PyDict::new(py);
    out.set_item("line", parsed.line.into_pyarray(py))?;
    let ints: Vec<Bound<'py, PyArray1<i64>>> = parsed
        .ints
        .into_iter()
        .map(|c| c.into_pyarray(py))
        .collect();
    out.set_item("ints", ints)?;
    out.set_item("avg_cpu_time", parsed.avg_cpu_time.into_pyarray(py))?;
    out.set_item("comments", parsed.comments)?;
    out.set_item("rejected", parsed.rejected)?;
    out.set_item("data_lines", parsed.data_lines)?;
    out.set_item("crlf_lines", parsed.crlf_lines)?;
    Ok(out)
}

#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    m.add_function(wrap_pyfunction!(parse_swf, m)?)?;
    Ok(())
}
