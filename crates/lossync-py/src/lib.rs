//! PyO3 bindings: the private module `lossync._core`. Scenarios cross the boundary as text (JSON
//! or TOML) so that the CLI, the tests and the Python API share one parser and one set of error
//! messages. Core errors become `ScenarioError` / `InputFileError`, never panics.

use lossync_core::{scenario, Error, RunResult, Simulation as CoreSimulation};
use pyo3::create_exception;
use pyo3::exceptions::{PyException, PyRuntimeError};
use pyo3::prelude::*;
use pyo3::types::PyBytes;
use std::path::Path;

create_exception!(
    _core,
    LossyncError,
    PyException,
    "Base class of lossync's errors."
);
create_exception!(
    _core,
    ScenarioError,
    LossyncError,
    "A scenario field is invalid."
);
create_exception!(
    _core,
    InputFileError,
    LossyncError,
    "A file the scenario names cannot be read."
);

fn to_py(e: Error) -> PyErr {
    match e {
        Error::Scenario { .. } => ScenarioError::new_err(e.to_string()),
        Error::Io { .. } => InputFileError::new_err(e.to_string()),
    }
}

fn parse(text: &str, format: &str, base_dir: &str) -> PyResult<scenario::Scenario> {
    let base = Path::new(base_dir);
    match format {
        "json" => scenario::from_json(text, base),
        "toml" => scenario::from_toml(text, base),
        other => return Err(ScenarioError::new_err(format!("format: unknown {other:?}"))),
    }
    .map_err(to_py)
}

/// Validates a scenario and returns the resolved scenario (every default filled in) as JSON.
#[pyfunction]
#[pyo3(signature = (text, format = "json", base_dir = "."))]
fn resolve(text: &str, format: &str, base_dir: &str) -> PyResult<String> {
    let sc = parse(text, format, base_dir)?;
    serde_json::to_string(&sc).map_err(|e| PyRuntimeError::new_err(e.to_string()))
}

/// The congestion-control variants: (name, description).
#[pyfunction]
fn variants() -> Vec<(&'static str, &'static str)> {
    lossync_core::cc::VARIANTS
        .iter()
        .map(|v| (v.name, v.about))
        .collect()
}

/// A run in progress. `advance(t)` releases the GIL; Python drives it in chunks to show progress
/// and to let Ctrl-C through between chunks.
#[pyclass(module = "lossync._core")]
struct Simulation {
    engine: Option<CoreSimulation>,
    resolved_json: String,
}

#[pymethods]
impl Simulation {
    #[new]
    #[pyo3(signature = (text, format = "json", base_dir = "."))]
    fn new(text: &str, format: &str, base_dir: &str) -> PyResult<Self> {
        let sc = parse(text, format, base_dir)?;
        let resolved_json =
            serde_json::to_string(&sc).map_err(|e| PyRuntimeError::new_err(e.to_string()))?;
        let engine = CoreSimulation::new(&sc).map_err(to_py)?;
        Ok(Simulation {
            engine: Some(engine),
            resolved_json,
        })
    }

    /// The resolved scenario as JSON.
    #[getter]
    fn resolved(&self) -> &str {
        &self.resolved_json
    }

    #[getter]
    fn now_s(&self) -> PyResult<f64> {
        Ok(self.engine()?.now_s())
    }

    #[getter]
    fn duration_s(&self) -> PyResult<f64> {
        Ok(self.engine()?.duration_s())
    }

    /// Runs until simulated time `until_s`, without the GIL.
    fn advance(&mut self, py: Python<'_>, until_s: f64) -> PyResult<()> {
        let engine = self
            .engine
            .as_mut()
            .ok_or_else(|| PyRuntimeError::new_err("this simulation has finished"))?;
        py.detach(|| engine.advance(until_s));
        Ok(())
    }

    /// The bottleneck drop log so far (packet engine): (times in s as little-endian f64 bytes,
    /// flow indices as little-endian u32 bytes).
    fn drops<'py>(&self, py: Python<'py>) -> PyResult<(Bound<'py, PyBytes>, Bound<'py, PyBytes>)> {
        let log = self.engine()?.drop_log();
        let times: Vec<u8> = log.iter().flat_map(|(t, _)| t.to_le_bytes()).collect();
        let flows: Vec<u8> = log
            .iter()
            .flat_map(|&(_, f)| (f as u32).to_le_bytes())
            .collect();
        Ok((PyBytes::new(py, &times), PyBytes::new(py, &flows)))
    }

    /// Ends the run: returns (summary JSON, [(column name, little-endian f64 bytes)], events JSON).
    #[allow(clippy::type_complexity)]
    fn finish<'py>(
        &mut self,
        py: Python<'py>,
    ) -> PyResult<(String, Vec<(String, Bound<'py, PyBytes>)>, String)> {
        let engine = self
            .engine
            .take()
            .ok_or_else(|| PyRuntimeError::new_err("this simulation has finished"))?;
        let RunResult {
            summary,
            series,
            events,
        } = py.detach(|| engine.finish());
        let to_json = |e: serde_json::Error| PyRuntimeError::new_err(e.to_string());
        let json = serde_json::to_string(&summary).map_err(to_json)?;
        let events = serde_json::to_string(&events).map_err(to_json)?;
        let mut cols = Vec::with_capacity(series.columns.len());
        let mut buf = Vec::new();
        for (name, values) in series.columns {
            buf.clear();
            for v in values {
                buf.extend_from_slice(&v.to_le_bytes());
            }
            cols.push((name, PyBytes::new(py, &buf)));
        }
        Ok((json, cols, events))
    }
}

impl Simulation {
    fn engine(&self) -> PyResult<&CoreSimulation> {
        self.engine
            .as_ref()
            .ok_or_else(|| PyRuntimeError::new_err("this simulation has finished"))
    }
}

#[pymodule]
fn _core(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("__version__", lossync_core::VERSION)?;
    m.add("LossyncError", m.py().get_type::<LossyncError>())?;
    m.add("ScenarioError", m.py().get_type::<ScenarioError>())?;
    m.add("InputFileError", m.py().get_type::<InputFileError>())?;
    m.add_function(wrap_pyfunction!(resolve, m)?)?;
    m.add_function(wrap_pyfunction!(variants, m)?)?;
    m.add_class::<Simulation>()?;
    Ok(())
}
