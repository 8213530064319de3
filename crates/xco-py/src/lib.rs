//! `xco._native`: the Python face of the Rust simulator.
//!
//! Thin on purpose: it parses nothing and decides nothing. Every call takes
//! scenario text, releases the GIL while the simulator runs (so a thread
//! pool runs sweeps on all cores), and hands back plain Python values: CSV
//! text and bytes that the `xco` package turns into DataFrames and files.
//!
//! A run can be watched and stopped from another Python thread through a
//! [`PyRunControl`] (`xco._native.RunControl`): the simulator looks at it
//! every few thousand events, publishes its progress there and stops when
//! asked, returning what it simulated so far (`"interrupted": true` in its
//! `meta.json`). The Python side turns Ctrl-C into that request.
//!
//! One call serves the real-host testbed: [`topology_paths`] reads a
//! daemons' topology file with the controller's own parser and returns the
//! path of every host pair as the controller schedules it, so the routed
//! testbed's static routes follow the one routing layer of `xco-core`.

use pyo3::create_exception;
use pyo3::exceptions::{PyRuntimeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyList};
use std::sync::Arc;
use xco_sim::bench::{self, BenchResult};
use xco_sim::control::RunControl;
use xco_sim::scenario::estimate::Estimate;
use xco_sim::scenario::{self, RunOptions, RunOutput, ScenarioError};

create_exception!(
    _native,
    ScenarioFileError,
    PyValueError,
    "A scenario that cannot be run; `.field` names the field at fault."
);

create_exception!(
    _native,
    MemoryLimitError,
    PyValueError,
    "A scenario whose memory estimate exceeds the limit given: `.estimate` (the \
     estimate's dict), `.limit_bytes`, `.baseline_bytes`."
);

fn scenario_err(py: Python<'_>, e: ScenarioError) -> PyErr {
    let err = ScenarioFileError::new_err(e.to_string());
    let v = err.value(py);
    let _ = v.setattr("field", e.field.clone());
    let _ = v.setattr("problem", e.message.clone());
    err
}

/// A stop request and the progress of a run (or of every run of a sweep
/// that shares it), safe to use from any thread.
#[pyclass(frozen, name = "RunControl", module = "xco._native")]
struct PyRunControl {
    inner: Arc<RunControl>,
}

#[pymethods]
impl PyRunControl {
    #[new]
    fn new() -> PyRunControl {
        PyRunControl {
            inner: Arc::new(RunControl::new()),
        }
    }

    /// Ask every run watching this control to stop within a few thousand events.
    fn stop(&self) {
        self.inner.stop();
    }

    /// True once `stop()` was called.
    #[getter]
    fn stopped(&self) -> bool {
        self.inner.stop_requested()
    }

    /// The last progress a run published: a dict with `started`, `sim_s`,
    /// `end_s`, `end_is_duration`, `events`, `packet_hops`.
    fn progress<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let p = self.inner.progress();
        let d = PyDict::new(py);
        d.set_item("started", p.started)?;
        d.set_item("sim_s", p.now.as_secs_f64())?;
        d.set_item("end_s", p.end.as_secs_f64())?;
        d.set_item("end_is_duration", p.end_is_duration)?;
        d.set_item("events", p.events)?;
        d.set_item("packet_hops", p.packet_hops)?;
        Ok(d)
    }
}

/// The estimate as a dict: `bytes`, `events`, `data_packets`, `hops`,
/// `end_s`, `end_is_duration`, `text` and `parts` (each: `name`, `count`,
/// `item_bytes`, `bytes`, `what`, `change`), largest first.
fn estimate_dict<'py>(py: Python<'py>, e: &Estimate) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    d.set_item("bytes", e.bytes())?;
    d.set_item("events", e.events)?;
    d.set_item("data_packets", e.data_packets)?;
    d.set_item("hops", e.hops)?;
    d.set_item("end_s", e.end_s)?;
    d.set_item("end_is_duration", e.end_is_duration)?;
    d.set_item("text", e.text())?;
    let parts = PyList::empty(py);
    for p in &e.parts {
        let pd = PyDict::new(py);
        pd.set_item("name", p.name)?;
        pd.set_item("count", p.count)?;
        pd.set_item("item_bytes", p.item_bytes)?;
        pd.set_item("bytes", p.bytes)?;
        pd.set_item("what", &p.what)?;
        pd.set_item("change", p.change)?;
        parts.append(pd)?;
    }
    d.set_item("parts", parts)?;
    Ok(d)
}

/// What running a scenario will cost, without running it (it is built):
/// the dict of `estimate_dict`. Raises `ScenarioFileError` as `validate` does.
#[pyfunction]
#[pyo3(signature = (text, seed=None))]
fn estimate<'py>(py: Python<'py>, text: &str, seed: Option<u64>) -> PyResult<Bound<'py, PyDict>> {
    let owned = text.to_string();
    let e = py
        .detach(move || scenario::estimate(&owned, seed))
        .map_err(|e| scenario_err(py, e))?;
    estimate_dict(py, &e)
}

/// How a run ended before it produced outputs.
enum Refused {
    Scenario(ScenarioError),
    TooLarge(Box<Estimate>),
}

/// Run a scenario (TOML text); `seed` overrides the file's seed; `source_commit`
/// (the source's git commit, when known) is recorded in `meta`; `control` (a
/// `RunControl`) can stop the run from another thread; `max_file_bytes`
/// overrides `output.max_file_bytes`. With `max_memory_bytes`, a scenario
/// whose estimate plus `baseline_bytes` (what the process holds already)
/// exceeds it is refused before it runs: `MemoryLimitError`.
///
/// Returns a dict with the CSV tables (`flows`, `timeseries`, `apps`,
/// `samples`, `ports`, `port_inputs`, `drop_runs`, `queue_timeline`, `hosts`), `meta` (JSON text), `pcaps` (list of (name, bytes)),
/// `seed`, `events`, `sim_end_s`, `stop_reason`, `interrupted` and
/// `warnings` (outputs cut at their size limit, one sentence each).
#[pyfunction]
#[pyo3(signature = (
    text, seed=None, source_commit=None, control=None, max_file_bytes=None,
    max_memory_bytes=None, baseline_bytes=0
))]
#[allow(clippy::too_many_arguments)]
fn run_scenario<'py>(
    py: Python<'py>,
    text: &str,
    seed: Option<u64>,
    source_commit: Option<String>,
    control: Option<&Bound<'py, PyRunControl>>,
    max_file_bytes: Option<u64>,
    max_memory_bytes: Option<u64>,
    baseline_bytes: u64,
) -> PyResult<Bound<'py, PyDict>> {
    let owned = text.to_string();
    let control = control.map(|c| Arc::clone(&c.get().inner));
    let result: Result<RunOutput, Refused> = py.detach(move || {
        let opts = RunOptions {
            seed,
            source_commit: source_commit.as_deref(),
            control,
            max_file_bytes,
        };
        let built = scenario::build(&owned, seed).map_err(Refused::Scenario)?;
        if let Some(limit) = max_memory_bytes {
            let e = built.estimate();
            if e.bytes().saturating_add(baseline_bytes) > limit {
                return Err(Refused::TooLarge(Box::new(e)));
            }
        }
        scenario::run_built(built, &opts).map_err(Refused::Scenario)
    });
    let out = match result {
        Ok(out) => out,
        Err(Refused::Scenario(e)) => return Err(scenario_err(py, e)),
        Err(Refused::TooLarge(e)) => {
            let err = MemoryLimitError::new_err(format!(
                "the estimate ({} B) plus {baseline_bytes} B already held exceeds {} B",
                e.bytes(),
                max_memory_bytes.unwrap_or(0)
            ));
            let v = err.value(py);
            v.setattr("estimate", estimate_dict(py, &e)?)?;
            v.setattr("limit_bytes", max_memory_bytes)?;
            v.setattr("baseline_bytes", baseline_bytes)?;
            return Err(err);
        }
    };
    let d = PyDict::new(py);
    // each table leaves Rust's memory as it becomes Python's
    d.set_item("flows", out.flows_csv)?;
    d.set_item("timeseries", out.timeseries_csv)?;
    d.set_item("apps", out.apps_csv)?;
    d.set_item("samples", out.samples_csv)?;
    d.set_item("ports", out.ports_csv)?;
    d.set_item("port_inputs", out.port_inputs_csv)?;
    d.set_item("drop_runs", out.drop_runs_csv)?;
    d.set_item("queue_timeline", out.queue_timeline_csv)?;
    d.set_item("hosts", out.hosts_csv)?;
    // apps' own tables (a web fan-in's requests.csv, queries.csv): (file name, text)
    d.set_item("app_tables", out.app_tables)?;
    d.set_item("meta", out.meta_json)?;
    let pcaps = PyList::empty(py);
    for (name, bytes) in out.pcaps {
        pcaps.append((name, PyBytes::new(py, &bytes)))?;
    }
    d.set_item("pcaps", pcaps)?;
    d.set_item("seed", out.seed)?;
    d.set_item("events", out.stats.events)?;
    d.set_item("data_packet_hops", out.stats.data_packet_hops)?;
    d.set_item("sim_end_s", out.stats.end.as_secs_f64())?;
    d.set_item("stop_reason", out.stats.stop_reason)?;
    d.set_item("interrupted", out.stats.stop_reason == "interrupted")?;
    d.set_item("warnings", out.warnings)?;
    Ok(d)
}

/// Check a scenario without running it; raises `ScenarioFileError`.
#[pyfunction]
fn validate(py: Python<'_>, text: &str) -> PyResult<()> {
    scenario::build(text, None)
        .map(|_| ())
        .map_err(|e| scenario_err(py, e))
}

/// A size as the scenario reads it ("10KB", "64KiB", 1500), in bytes.
#[pyfunction]
fn size_bytes(py: Python<'_>, value: &Bound<'_, PyAny>, field: &str) -> PyResult<u64> {
    let q = quantity(value);
    scenario::units::bytes(&q, field).map_err(|e| scenario_err(py, e))
}

/// `bytes` for people, as every output of the simulator writes them (`1.5 KiB`).
#[pyfunction]
fn human_bytes(bytes: u64) -> String {
    xco_sim::output::human_bytes(bytes)
}

/// A rate as the scenario reads it ("1Gbps", 1e9), in bits per second.
#[pyfunction]
fn rate_bps(py: Python<'_>, value: &Bound<'_, PyAny>, field: &str) -> PyResult<u64> {
    let q = quantity(value);
    scenario::units::rate_bps(&q, field).map_err(|e| scenario_err(py, e))
}

fn quantity(value: &Bound<'_, PyAny>) -> scenario::units::Quantity {
    match value.extract::<f64>() {
        Ok(x) => scenario::units::Quantity::Num(x),
        Err(_) => scenario::units::Quantity::Text(value.str().map(|s| s.to_string()).unwrap_or_default()),
    }
}

fn bench_dict<'py>(py: Python<'py>, r: BenchResult) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    d.set_item("name", &r.name)?;
    d.set_item("wall_s", r.wall_s)?;
    d.set_item("sim_s", r.sim_s)?;
    d.set_item("events", r.events)?;
    d.set_item("packet_hops", r.packet_hops)?;
    d.set_item("events_per_s", r.events_per_s())?;
    d.set_item("packet_hops_per_s", r.hops_per_s())?;
    Ok(d)
}

/// Benchmark (a): the pdn-goodput NewReno sweep, timed inside Rust;
/// `queue` (`droptail`, `red`, `sfq`) runs the switch ports.
#[pyfunction]
#[pyo3(signature = (rounds=20, queue="droptail"))]
fn bench_pdn<'py>(py: Python<'py>, rounds: u32, queue: &str) -> PyResult<Bound<'py, PyDict>> {
    let queue = bench::BenchQueue::parse(queue).map_err(PyValueError::new_err)?;
    let r = py
        .detach(move || bench::pdn_sweep_with(rounds, queue))
        .map_err(PyRuntimeError::new_err)?;
    bench_dict(py, r)
}

/// Benchmark (b): the k-ary fat-tree TCP permutation, timed inside Rust;
/// `queue` (`droptail`, `red`, `sfq`) runs the switch ports.
#[pyfunction]
#[pyo3(signature = (k=8, sim_ms=10.0, queue="droptail"))]
fn bench_fattree<'py>(py: Python<'py>, k: usize, sim_ms: f64, queue: &str) -> PyResult<Bound<'py, PyDict>> {
    let queue = bench::BenchQueue::parse(queue).map_err(PyValueError::new_err)?;
    if k < 2 || k % 2 == 1 || k > 64 {
        return Err(PyValueError::new_err(format!(
            "k must be an even number from 2 to 64, got {k}"
        )));
    }
    let r = py
        .detach(move || bench::fattree_permutation_with(k, sim_ms, queue, ""))
        .map_err(PyRuntimeError::new_err)?;
    bench_dict(py, r)
}

/// SICC's tree building timed (`xco_sim::bench::sicc_tree_times`): a dict
/// with `targets`, `max_children`, `hubs`, `depth` and `build_ns` (every build).
#[pyfunction]
#[pyo3(signature = (targets, racks_per_agg=50, instances=8, reps=8, seed=1))]
fn bench_sicc_tree(
    py: Python<'_>,
    targets: u32,
    racks_per_agg: u32,
    instances: u32,
    reps: u32,
    seed: u64,
) -> PyResult<Bound<'_, PyDict>> {
    if instances == 0 || reps == 0 || instances > 1000 || reps > 1000 {
        return Err(PyValueError::new_err("instances and reps must be from 1 to 1000"));
    }
    let r = py
        .detach(move || bench::sicc_tree_times(targets, racks_per_agg, instances, reps, seed))
        .map_err(PyValueError::new_err)?;
    let d = PyDict::new(py);
    d.set_item("targets", r.targets)?;
    d.set_item("max_children", r.max_children)?;
    d.set_item("hubs", r.hubs)?;
    d.set_item("depth", r.depth)?;
    d.set_item("build_ns", r.build_ns)?;
    Ok(d)
}

/// The XCo scheduler on a k-ary fat-tree under backlog churn for `slots`
/// slots of `slice_ms` each.
#[pyfunction]
#[pyo3(signature = (k=16, slots=200, seed=1, slice_ms=1))]
fn bench_sched(py: Python<'_>, k: u32, slots: u32, seed: u64, slice_ms: u32) -> PyResult<Bound<'_, PyDict>> {
    if k < 2 || k % 2 == 1 || k > 64 {
        return Err(PyValueError::new_err(format!(
            "k must be an even number from 2 to 64, got {k}"
        )));
    }
    if slots == 0 {
        return Err(PyValueError::new_err("slots must be positive"));
    }
    if !(1..=1000).contains(&slice_ms) {
        return Err(PyValueError::new_err(format!(
            "slice_ms must be a whole number of ms from 1 to 1000, got {slice_ms}"
        )));
    }
    let r = py.detach(move || bench::sched_churn(k, slots, seed, slice_ms));
    let d = PyDict::new(py);
    d.set_item("k", r.k)?;
    d.set_item("hosts", r.hosts)?;
    d.set_item("slice_us", r.slice_us)?;
    d.set_item("events", r.events)?;
    d.set_item("events_per_s", r.events_per_s)?;
    d.set_item("p50_us", r.p50_us)?;
    d.set_item("p99_us", r.p99_us)?;
    d.set_item("slot_p50_us", r.slot_p50_us)?;
    d.set_item("slot_p99_us", r.slot_p99_us)?;
    d.set_item("slot_max_us", r.max_slot_us)?;
    d.set_item("mean_active", r.mean_active)?;
    d.set_item("busy_p50_us", r.busy_p50_us)?;
    d.set_item("busy_p99_us", r.busy_p99_us)?;
    d.set_item("boundary_nodes_per_slot", r.boundary_nodes_per_slot)?;
    d.set_item("churn_nodes_per_slot", r.churn_nodes_per_slot)?;
    d.set_item("ns_per_node", r.ns_per_node)?;
    Ok(d)
}

/// The text of benchmark scenario (a) at `n` servers, for inspection.
#[pyfunction]
fn bench_pdn_scenario(n: usize, rounds: u32) -> String {
    bench::pdn_scenario(n, rounds)
}

/// Nodes, directed links and every host pair's path of a daemons' topology
/// file (`text`), computed as the real controller does (its parser, its
/// scheduler's paths); raises `ValueError` naming the field if the file is wrong.
///
/// Returns a dict: `nodes` (names; hosts first in file order, then
/// switches), `links` (list of (tail node, head node), the controller's
/// directed link ids), `routing` (the mode's name) and `paths` (list of
/// (src host, dst host, [link ids]) for every ordered pair of distinct hosts).
#[pyfunction]
fn topology_paths<'py>(py: Python<'py>, text: &str) -> PyResult<Bound<'py, PyDict>> {
    let t = xco_daemon::config::Topology::parse(text).map_err(|e| PyValueError::new_err(e.0))?;
    let d = PyDict::new(py);
    let names: Vec<String> = t
        .file
        .hosts
        .iter()
        .map(|h| h.name.clone())
        .chain(t.file.switches.iter().map(|s| s.name.clone()))
        .collect();
    d.set_item("nodes", names)?;
    let links: Vec<(u32, u32)> = t.directed_links().iter().map(|l| (l.0, l.1)).collect();
    d.set_item("links", links)?;
    d.set_item("routing", t.routing.name())?;
    let mut sched = t.sched_topology();
    let n = t.hosts() as u32;
    let paths = PyList::empty(py);
    for s in 0..n {
        for dst in (0..n).filter(|&x| x != s) {
            paths.append((s, dst, sched.path(s, dst).to_vec()))?;
        }
    }
    d.set_item("paths", paths)?;
    Ok(d)
}

#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    m.add("ScenarioFileError", m.py().get_type::<ScenarioFileError>())?;
    m.add("MemoryLimitError", m.py().get_type::<MemoryLimitError>())?;
    m.add_class::<PyRunControl>()?;
    m.add_function(wrap_pyfunction!(run_scenario, m)?)?;
    m.add_function(wrap_pyfunction!(validate, m)?)?;
    m.add_function(wrap_pyfunction!(estimate, m)?)?;
    m.add_function(wrap_pyfunction!(bench_pdn, m)?)?;
    m.add_function(wrap_pyfunction!(bench_fattree, m)?)?;
    m.add_function(wrap_pyfunction!(bench_pdn_scenario, m)?)?;
    m.add_function(wrap_pyfunction!(bench_sched, m)?)?;
    m.add_function(wrap_pyfunction!(bench_sicc_tree, m)?)?;
    m.add_function(wrap_pyfunction!(topology_paths, m)?)?;
    m.add_function(wrap_pyfunction!(size_bytes, m)?)?;
    m.add_function(wrap_pyfunction!(human_bytes, m)?)?;
    m.add_function(wrap_pyfunction!(rate_bps, m)?)?;
    Ok(())
}
