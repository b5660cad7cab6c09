//! PyO3 bindings: the private module `lossync._core`. Scenarios cross the boundary as text (JSON
//! or TOML) so that the CLI, the tests and the Python API share one parser and one set of error
//! messages; time series and drop logs cross as numpy arrays. Core errors become
//! `lossync.errors.ScenarioError` / `InputFileError` (with the field and the reason), never panics.

use lossync_core::metrics::{self, DropClusters, Records};
use lossync_core::packet::event::{ps_from_s, PS_PER_S};
use lossync_core::{scenario, Error, RunResult, Simulation as CoreSimulation};
use numpy::{IntoPyArray, PyArray1, PyReadonlyArray1};
use pyo3::create_exception;
use pyo3::exceptions::{PyException, PyOSError, PyRuntimeError};
use pyo3::prelude::*;
use std::path::Path;
use std::sync::{Arc, Mutex};

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

/// A core error as the Python package's exception (`lossync.errors`, which carries the field and
/// the reason and is also a `ValueError` / `OSError`); this module's own classes if the package's
/// cannot be imported.
fn to_py(e: Error) -> PyErr {
    let (class, what, reason, path) = match &e {
        Error::Scenario { field, reason } => ("ScenarioError", field, reason.clone(), None),
        Error::Io {
            field,
            path,
            reason,
        } => (
            "InputFileError",
            field,
            format!("{path}: {reason}"),
            Some(path),
        ),
    };
    Python::attach(|py| {
        py.import("lossync.errors")
            .and_then(|m| m.getattr(class))
            .and_then(|c| {
                // The package's own class takes (field, reason[, filename]); ours takes a message.
                if c.is(py.get_type::<ScenarioError>()) || c.is(py.get_type::<InputFileError>()) {
                    Err(PyRuntimeError::new_err("no package class"))
                } else if let Some(path) = path {
                    c.call1((what.clone(), reason.clone(), path.clone()))
                } else {
                    c.call1((what.clone(), reason.clone()))
                }
            })
            .map(PyErr::from_value)
            .unwrap_or_else(|_| match e {
                Error::Scenario { .. } => ScenarioError::new_err(e.to_string()),
                Error::Io { .. } => InputFileError::new_err(e.to_string()),
            })
    })
}

/// Runs `f`, turning a panic (a bug in the core, never the user's input) into a `LossyncError`
/// that says so, instead of a `PanicException` that a process pool cannot even pickle.
fn guarded<T>(f: impl FnOnce() -> PyResult<T>) -> PyResult<T> {
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(f)).unwrap_or_else(|p| {
        let msg = p
            .downcast_ref::<&str>()
            .map(|s| s.to_string())
            .or_else(|| p.downcast_ref::<String>().cloned())
            .unwrap_or_else(|| "unknown panic".into());
        Err(LossyncError::new_err(format!(
            "internal error in the lossync core (a bug; please report it with the scenario): {msg}"
        )))
    })
}

/// Column name and values of a time series.
type Columns<'py> = Vec<(String, Bound<'py, PyArray1<f64>>)>;

/// A finished run for Python: (summary JSON, series columns, events JSON).
fn to_python<'py>(py: Python<'py>, r: RunResult) -> PyResult<(String, Columns<'py>, String)> {
    let RunResult {
        summary,
        series,
        events,
        ..
    } = r;
    let to_json = |e: serde_json::Error| PyRuntimeError::new_err(e.to_string());
    let json = serde_json::to_string(&summary).map_err(to_json)?;
    let events = serde_json::to_string(&events).map_err(to_json)?;
    let cols = series
        .columns
        .into_iter()
        .map(|(name, values)| (name, values.into_pyarray(py)))
        .collect();
    Ok((json, cols, events))
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

/// The front end's engines (every registered one, Python's too; `set_registry`): the core's
/// engines refuse a capability they lack naming all the engines that have it, not only the core's.
static REGISTRY: Mutex<Vec<lossync_core::EngineInfo>> = Mutex::new(Vec::new());

/// Tells the core the front end's registry: a JSON list as `engines()` writes it.
#[pyfunction]
fn set_registry(registry: &str) -> PyResult<()> {
    let engines: Vec<lossync_core::EngineInfo> = serde_json::from_str(registry)
        .map_err(|e| PyRuntimeError::new_err(format!("registry: {e}")))?;
    *REGISTRY.lock().unwrap_or_else(|e| e.into_inner()) = engines;
    Ok(())
}

/// Whether the engine the scenario names can run it: its capabilities against the front end's
/// registry first (so a refusal names every engine that has the capability), then the engine's
/// own checks.
fn check(sc: &scenario::Scenario) -> PyResult<()> {
    let registry = REGISTRY.lock().unwrap_or_else(|e| e.into_inner()).clone();
    lossync_core::capabilities::refuse_beyond(sc.engine.name(), &registry, sc).map_err(to_py)?;
    lossync_core::check(sc).map_err(to_py)
}

/// Validates a scenario and returns the resolved scenario (every default filled in) as JSON.
#[pyfunction]
#[pyo3(signature = (text, format = "json", base_dir = "."))]
fn resolve(text: &str, format: &str, base_dir: &str) -> PyResult<String> {
    let sc = parse(text, format, base_dir)?;
    // Valid, and runnable on the engine it names (what that engine refuses, it refuses here).
    check(&sc)?;
    serde_json::to_string(&sc).map_err(|e| PyRuntimeError::new_err(e.to_string()))
}

/// Validates a scenario and returns it resolved as a scenario file (TOML) with every default
/// written out, which resolves to exactly the same scenario (`lossync run` on it reproduces the
/// run).
#[pyfunction]
#[pyo3(signature = (text, format = "json", base_dir = "."))]
fn resolve_toml(text: &str, format: &str, base_dir: &str) -> PyResult<String> {
    Ok(scenario::to_toml(&parse(text, format, base_dir)?))
}

/// A scenario parsed, resolved and checked once (valid, and runnable on the engine it names),
/// held by the core for the whole run: the engines, the metrics and the capability checker take
/// it instead of text, so that a run parses and resolves its scenario once (`lossync.scenario.prepare`).
#[pyclass(module = "lossync._core", name = "Scenario", frozen)]
struct ResolvedScenario {
    /// Shared with the engines that run it (a copy per run cost a few hundred bytes per flow).
    sc: Arc<scenario::Scenario>,
    json: String,
}

#[pymethods]
impl ResolvedScenario {
    #[new]
    #[pyo3(signature = (text, format = "json", base_dir = "."))]
    fn new(text: &str, format: &str, base_dir: &str) -> PyResult<Self> {
        let sc = parse(text, format, base_dir)?;
        check(&sc)?;
        let json =
            serde_json::to_string(&sc).map_err(|e| PyRuntimeError::new_err(e.to_string()))?;
        Ok(ResolvedScenario {
            sc: Arc::new(sc),
            json,
        })
    }

    /// The resolved scenario as JSON (every default filled in, every flow listed).
    #[getter]
    fn json(&self) -> &str {
        &self.json
    }

    /// The resolved scenario as a scenario file (TOML), as `resolve_toml` writes it.
    fn toml(&self) -> String {
        scenario::to_toml(&self.sc)
    }

    /// The fluid engine's burst headroom on each link, in packets (`tcp` model; 0 under the
    /// others): how far below its buffer the fluid queue of each link is held (docs/fluid.md).
    fn burst_headroom_pkts(&self) -> Vec<f64> {
        lossync_core::fluid::burst_headroom_pkts(&self.sc)
    }

    /// Pickled as its resolved JSON, read back without resolving it again (a sweep's worker
    /// process runs the scenario its parent resolved).
    fn __reduce__<'py>(&self, py: Python<'py>) -> PyResult<(Bound<'py, PyAny>, (String,))> {
        let from_resolved = py
            .import("lossync._core")?
            .getattr("_scenario_from_resolved")?;
        Ok((from_resolved, (self.json.clone(),)))
    }
}

/// A `Scenario` from the JSON its `json` gave: the core's own resolved scenario, deserialized,
/// not resolved again (unpickling only).
/// The threads a run of this process uses when its scenario gives no `run.threads` (0: every
/// core). A sweep's worker sets 1: its sweep already runs one run per core.
#[pyfunction]
fn set_default_threads(threads: usize) {
    lossync_core::threads::set_default_threads(threads);
}

#[pyfunction]
fn _scenario_from_resolved(json: &str) -> PyResult<ResolvedScenario> {
    let sc: scenario::Scenario = serde_json::from_str(json)
        .map_err(|e| PyRuntimeError::new_err(format!("a resolved scenario: {e}")))?;
    Ok(ResolvedScenario {
        sc: Arc::new(sc),
        json: json.to_string(),
    })
}

/// The whole packets a packet-level engine holds for a buffer of `buffer_pkts` (at least the
/// one in service): the core's rule, which the ns-3 and kernel drivers use too.
#[pyfunction]
fn whole_buffer_pkts(buffer_pkts: f64) -> usize {
    lossync_core::queue::Buffer::new(buffer_pkts).slots
}

/// A quantity written with its unit as a scenario writes it ("5ms", "1Gbps", "64KB"), in the
/// core's base unit (seconds, bit/s, bytes), read as a time, else a rate, else a size; `None` if
/// it is none of them. For sorting swept values by what they mean, not by their text.
#[pyfunction]
fn quantity(text: &str) -> Option<f64> {
    use lossync_core::units::{parse_bytes, parse_rate_bps, parse_time_s};
    (parse_time_s(text)
        .or_else(|_| parse_rate_bps(text))
        .or_else(|_| parse_bytes(text)))
    .ok()
}

/// A time written as a scenario writes one ("2min", "500ms", "60"), in seconds; `None` if it is
/// not a time. For the command line's time options, read as the scenario reads its times.
#[pyfunction]
fn time_s(text: &str) -> Option<f64> {
    lossync_core::units::parse_time_s(text).ok()
}

/// A congestion-control variant's parameters with their defaults, as a JSON object
/// (`{"a": 1.0, "b": 0.5}` for reno); ScenarioError (field `cc.variant`) for an unknown name.
#[pyfunction]
fn variant_defaults(name: &str) -> PyResult<String> {
    let cc = lossync_core::cc::read(name, &Default::default(), "cc").map_err(to_py)?;
    serde_json::to_string(&cc.values()).map_err(|e| PyRuntimeError::new_err(e.to_string()))
}

/// The congestion-control variants: (name, description).
#[pyfunction]
fn variants() -> Vec<(&'static str, &'static str)> {
    lossync_core::cc::VARIANTS
        .iter()
        .map(|v| (v.name, v.about))
        .collect()
}

/// The queue disciplines: (name, description), in registry order.
#[pyfunction]
fn disciplines() -> Vec<(&'static str, &'static str)> {
    lossync_core::queue::DISCIPLINES
        .iter()
        .map(|d| (d.name, d.about))
        .collect()
}

/// The core's engines, as a JSON list of `{name, about, capabilities}` (the Python registry
/// lists them beside its own).
#[pyfunction]
fn engines() -> PyResult<String> {
    serde_json::to_string(&lossync_core::registry::engines())
        .map_err(|e| PyRuntimeError::new_err(e.to_string()))
}

/// Refuses what the engine `engine` lacks a capability for, in `scenario`:
/// ScenarioError naming the field and the engines of `registry` (a JSON list as `engines()`
/// writes it: every registered engine, Python's too) that have it. The one checker of
/// capabilities, for the Python front end's engines as for the core's.
#[pyfunction]
fn refuse_beyond(
    scenario: PyRef<'_, ResolvedScenario>,
    engine: &str,
    registry: &str,
) -> PyResult<()> {
    let sc = &scenario.sc;
    let registry: Vec<lossync_core::EngineInfo> = serde_json::from_str(registry)
        .map_err(|e| PyRuntimeError::new_err(format!("registry: {e}")))?;
    lossync_core::capabilities::refuse_beyond(engine, &registry, sc).map_err(to_py)
}

/// A run in progress. `advance(t)` releases the GIL; Python drives it in chunks to show progress
/// and to let Ctrl-C through between chunks.
#[pyclass(module = "lossync._core")]
struct Simulation {
    engine: Option<CoreSimulation>,
    resolved_json: String,
    /// The finished run's flow completions (dynamic traffic) as JSON, once `finish` ran.
    fct_json: Option<String>,
}

#[pymethods]
impl Simulation {
    #[new]
    fn new(scenario: PyRef<'_, ResolvedScenario>) -> PyResult<Self> {
        let engine = guarded(|| CoreSimulation::shared(scenario.sc.clone()).map_err(to_py))?;
        Ok(Simulation {
            engine: Some(engine),
            resolved_json: scenario.json.clone(),
            fct_json: None,
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

    /// Whether the whole run has been simulated.
    #[getter]
    fn done(&self) -> PyResult<bool> {
        Ok(self.engine()?.is_done())
    }

    /// Runs until simulated time `until_s`, without the GIL.
    fn advance(&mut self, py: Python<'_>, until_s: f64) -> PyResult<()> {
        let engine = self
            .engine
            .as_mut()
            .ok_or_else(|| PyRuntimeError::new_err("this simulation has finished"))?;
        py.detach(|| {
            guarded(|| {
                engine.advance(until_s);
                Ok(())
            })
        })
    }

    /// The drop log so far (packet engine): (times in s, flow indices).
    #[allow(clippy::type_complexity)]
    fn drops<'py>(
        &self,
        py: Python<'py>,
    ) -> PyResult<(Bound<'py, PyArray1<f64>>, Bound<'py, PyArray1<u32>>)> {
        let log = self.engine()?.drop_log();
        let times: Vec<f64> = log.iter().map(|&(t, _)| t).collect();
        let flows: Vec<u32> = log.iter().map(|&(_, f)| f as u32).collect();
        Ok((times.into_pyarray(py), flows.into_pyarray(py)))
    }

    /// Traces the link named `link` (packet engine; before the first `advance`), keeping the
    /// first `max_packets` packets; ScenarioError (field `pcap`) for an unknown link, another
    /// engine or a run already started.
    fn trace_link(&mut self, link: &str, max_packets: usize) -> PyResult<()> {
        let engine = self
            .engine
            .as_mut()
            .ok_or_else(|| PyRuntimeError::new_err("this simulation has finished"))?;
        engine.trace_link(link, max_packets).map_err(to_py)
    }

    /// Writes the trace so far to `path` as a pcap file; returns (packets written, packets that
    /// crossed the link). OSError if the file cannot be written.
    fn write_pcap(&self, py: Python<'_>, path: &str) -> PyResult<(usize, u64)> {
        let trace = self
            .engine()?
            .trace()
            .ok_or_else(|| PyRuntimeError::new_err("no trace was asked for (trace_link)"))?;
        py.detach(|| {
            let mut file = std::fs::File::create(path)?;
            trace.write_pcap(&mut file)?;
            file.sync_all()
        })
        .map_err(|e| {
            PyOSError::new_err((
                e.raw_os_error().unwrap_or(0),
                e.to_string(),
                path.to_string(),
            ))
        })?;
        Ok((trace.records.len(), trace.seen))
    }

    /// Ends the run: returns (summary JSON, [(column name, values)], events JSON).
    fn finish<'py>(&mut self, py: Python<'py>) -> PyResult<(String, Columns<'py>, String)> {
        let engine = self
            .engine
            .take()
            .ok_or_else(|| PyRuntimeError::new_err("this simulation has finished"))?;
        let mut result = py.detach(|| guarded(|| Ok(engine.finish())))?;
        let completions = std::mem::take(&mut result.completions);
        self.fct_json = Some(
            serde_json::to_string(&completions)
                .map_err(|e| PyRuntimeError::new_err(e.to_string()))?,
        );
        to_python(py, result)
    }

    /// After `finish`: every finished flow of the run's dynamic groups (`arrivals`), as a JSON
    /// list of records (group, slot, start_s, size_bytes, size_pkts, fct_s, packet counts).
    fn fct(&self) -> PyResult<String> {
        self.fct_json
            .clone()
            .ok_or_else(|| PyRuntimeError::new_err("fct() needs a finished simulation"))
    }
}

impl Simulation {
    fn engine(&self) -> PyResult<&CoreSimulation> {
        self.engine
            .as_ref()
            .ok_or_else(|| PyRuntimeError::new_err("this simulation has finished"))
    }
}

/// The metrics of a run made outside the core (an engine of the front end) of `scenario`:
/// `records_json` is a `Records` without
/// events and samples; `samples` its time-series columns (in `Series::standard`'s order); the drops of the scenario's first link, (times in s, flows) in time order, are grouped
/// into congestion events by the same rule as the packet engine's (gaps under the mean base RTT;
/// candidates: the flows started by then; counted from the warm-up on). Returns what
/// `Simulation.finish` returns.
#[pyfunction]
fn summarize<'py>(
    py: Python<'py>,
    scenario: PyRef<'py, ResolvedScenario>,
    records_json: &str,
    samples: Vec<PyReadonlyArray1<'py, f64>>,
    drop_times: PyReadonlyArray1<'py, f64>,
    drop_flows: PyReadonlyArray1<'py, u32>,
) -> PyResult<(String, Columns<'py>, String)> {
    let sc = &scenario.sc;
    let mut records: Records = serde_json::from_str(records_json)
        .map_err(|e| PyRuntimeError::new_err(format!("records: {e}")))?;
    records.samples = samples
        .iter()
        .map(|c| c.as_slice().map(|v| v.to_vec()))
        .collect::<Result<_, _>>()?;
    let (times, flows) = (drop_times.as_slice()?, drop_flows.as_slice()?);
    if times.len() != flows.len() || flows.iter().any(|&f| f as usize >= sc.flows.len()) {
        return Err(PyRuntimeError::new_err(
            "drops: times and flows differ in length or name an unknown flow",
        ));
    }
    let n = sc.flows.len();
    let mut starts: Vec<f64> = sc.flows.iter().map(|f| f.start_s).collect();
    starts.sort_by(f64::total_cmp);
    let tau_s = metrics::events::event_window_s(sc, 0);
    let mut clusters = DropClusters::new(0, ps_from_s(tau_s), PS_PER_S, n);
    for (&t, &f) in times.iter().zip(flows) {
        let candidates = starts.partition_point(|&s| s <= t) as u32;
        clusters.drop(ps_from_s(t), f as usize, candidates, t >= sc.run.warmup_s);
    }
    clusters.close();
    records.events = clusters.take();
    let result = guarded(|| Ok(metrics::summarize(sc, records)))?;
    to_python(py, result)
}

#[pymodule]
fn _core(m: &Bound<'_, PyModule>) -> PyResult<()> {
    // A panic's message travels in the exception (see `guarded`); no backtrace on stderr.
    std::panic::set_hook(Box::new(|_| {}));
    m.add("__version__", lossync_core::VERSION)?;
    m.add("LossyncError", m.py().get_type::<LossyncError>())?;
    m.add("ScenarioError", m.py().get_type::<ScenarioError>())?;
    m.add("InputFileError", m.py().get_type::<InputFileError>())?;
    m.add_function(wrap_pyfunction!(resolve, m)?)?;
    m.add_function(wrap_pyfunction!(variants, m)?)?;
    m.add_function(wrap_pyfunction!(disciplines, m)?)?;
    m.add_function(wrap_pyfunction!(resolve_toml, m)?)?;
    m.add_function(wrap_pyfunction!(variant_defaults, m)?)?;
    m.add_function(wrap_pyfunction!(whole_buffer_pkts, m)?)?;
    m.add_function(wrap_pyfunction!(quantity, m)?)?;
    m.add_function(wrap_pyfunction!(time_s, m)?)?;
    m.add_function(wrap_pyfunction!(summarize, m)?)?;
    m.add_function(wrap_pyfunction!(engines, m)?)?;
    m.add_function(wrap_pyfunction!(refuse_beyond, m)?)?;
    m.add_function(wrap_pyfunction!(set_registry, m)?)?;
    m.add_function(wrap_pyfunction!(set_default_threads, m)?)?;
    m.add_class::<ResolvedScenario>()?;
    m.add_function(wrap_pyfunction!(_scenario_from_resolved, m)?)?;
    m.add_class::<Simulation>()?;
    Ok(())
}
