//! `warpscope._warpscope`: the command line's commands as Python functions, over the crate's own code
//! (`warpscope::cli::call`): the same flags, settings path and output, byte for byte. The Python package
//! (`python/warpscope/`) builds its keyword arguments, results and figures on these two functions.

use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::PyBytes;
use std::collections::HashMap;

/// What `call` returns: the printed text, the files written as (name, bytes), whether every goal passed.
type Called<'py> = (String, Vec<(String, Bound<'py, PyBytes>)>, bool);

/// Runs one command (`["analyze", "--addr", "4*lane", ...]`); a path in `inputs` (text) or `blobs` (bytes:
/// arrays given as data, as `.npy`) is read from there instead of the disk. Returns (the text the command line
/// prints, [(file name, bytes)] it wrote, whether every goal passed). Raises ValueError with the command line's
/// message on bad input.
#[pyfunction]
#[pyo3(signature = (args, inputs, blobs = HashMap::new()))]
fn call<'py>(
    py: Python<'py>,
    args: Vec<String>,
    inputs: HashMap<String, String>,
    blobs: HashMap<String, Vec<u8>>,
) -> PyResult<Called<'py>> {
    let out = py.detach(|| warpscope::cli::call_with(&args, inputs, blobs)).map_err(PyValueError::new_err)?;
    let files = out.files.into_iter().map(|(name, bytes)| (name, PyBytes::new(py, &bytes))).collect();
    Ok((out.text, files, out.pass))
}

/// The flags of a command: [(long name, takes a value, may repeat, help)].
#[pyfunction]
fn flags(command: &str) -> Vec<(String, bool, bool, String)> {
    warpscope::cli::flags(command).into_iter().map(|f| (f.name, f.takes_value, f.repeats, f.help)).collect()
}

#[pymodule]
fn _warpscope(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(call, m)?)?;
    m.add_function(wrap_pyfunction!(flags, m)?)?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    Ok(())
}
