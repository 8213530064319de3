"""Run scenarios in the packet-level simulator.

>>> import xco.sim
>>> r = xco.sim.run("scenarios/incast.toml", seed=3)      # doctest: +SKIP
>>> r.flows[["role", "goodput_mbps", "timeouts"]].head()   # doctest: +SKIP

The simulator itself is Rust (``xco._native``); it releases the GIL while it
runs, so several runs proceed in parallel from a thread pool (``xco.sweep``).
Ctrl-C stops a run within a few thousand events and raises
:class:`xco.interrupt.Interrupted` carrying what it simulated
(``xco.interrupt`` explains how).
"""

from __future__ import annotations

import csv
import functools
import io
import json
import math
import subprocess
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from . import _native, memory
from ._lazy import pd
from .interrupt import Interrupted
from .progress import RunProgress
from .scenario import ScenarioLike, check_seed, to_text

TABLES = (
    "flows",
    "timeseries",
    "apps",
    "samples",
    "ports",
    "port_inputs",
    "drop_runs",
    "queue_timeline",
    "hosts",
)


@dataclass
class Result:
    """What one run produced: tables as DataFrames plus run metadata."""

    flows: pd.DataFrame
    """One row per flow (bytes, goodput, retransmits, timeouts, completion)."""
    timeseries: pd.DataFrame
    """Per time bin: flow throughput and port queue bytes and drops."""
    apps: pd.DataFrame
    """One row per (app, metric): the headline figures of each application."""
    samples: pd.DataFrame
    """Per-round (incast), per-probe (ping) or per-flow (short flows) samples."""
    ports: pd.DataFrame
    """One row per output port: bytes sent, drops, max queue, utilisation."""
    port_inputs: pd.DataFrame
    """Per output port and input (the neighbour packets came from): arrivals and drops."""
    drop_runs: pd.DataFrame
    """Per switch port and input: episodes of k consecutive drops (``k``, ``episodes``)."""
    queue_timeline: pd.DataFrame
    """Enqueue/dequeue/drop events of the ports ``[output] queue_timeline`` names."""
    hosts: pd.DataFrame
    """Node addresses (IP, MAC) and endpoint ports as they appear in pcaps, by flow."""
    meta: dict[str, Any]
    """Scenario text, seed, version, events, end time, stop reason."""
    pcaps: list[tuple[str, bytes]] = field(default_factory=list)
    """Captured links as (file name, pcap bytes)."""
    wall_s: float = 0.0
    """Wall-clock seconds the run took (not written to files: outputs stay byte-identical)."""
    raw: dict[str, str] = field(default_factory=dict, repr=False)

    @property
    def seed(self) -> int:
        """The seed the run used."""
        return int(self.meta["seed"])

    def metric(self, name: str, app: int = 0) -> float:
        """Metric ``name`` of application ``app`` (see the ``apps`` table)."""
        rows = self.apps[(self.apps["app"] == app) & (self.apps["metric"] == name)]
        if rows.empty:
            known = sorted(set(self.apps[self.apps["app"] == app]["metric"]))
            raise KeyError(f"app {app} has no metric {name!r}; it has {known}")
        return float(rows["value"].iloc[0])

    def write(self, out: str | Path) -> Path:
        """Write every table as CSV, ``meta.json`` and pcaps into directory ``out``."""
        out = Path(out)
        write_raw({**self.raw, "pcaps": self.pcaps}, out)
        return out


MANIFEST = "xco-outputs.txt"
"""The file in an output directory that lists what the run wrote there (itself included)."""


def previous_outputs(out: Path) -> list[Path]:
    """The files an earlier run wrote into ``out``, as its :data:`MANIFEST` lists
    them: plain names of regular files that still exist (never a path elsewhere,
    never a directory or a link, never a file the manifest does not name)."""
    manifest = out / MANIFEST
    if not manifest.is_file():
        return []
    found = []
    for line in manifest.read_text(encoding="utf-8", errors="replace").splitlines():
        name = line.strip()
        if not name or name.startswith("#") or name in (".", "..") or "/" in name or "\\" in name:
            continue
        p = out / name
        if p.is_file() and not p.is_symlink():
            found.append(p)
    return found


def write_raw(raw: dict[str, Any], out: str | Path) -> list[str]:
    """Write a :func:`run_raw` result's tables, ``meta.json`` and pcaps into
    directory ``out``; returns the file names, in the order written.

    A directory an earlier run wrote into is first cleared of exactly the files
    that run listed in its :data:`MANIFEST` (so no pcap or table of the earlier
    run is left to be mistaken for this one's); nothing else in it is touched.
    The manifest of this run is written last."""
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    for p in previous_outputs(out):
        p.unlink()
    names = []
    for name in TABLES:
        (out / f"{name}.csv").write_text(raw[name])
        names.append(f"{name}.csv")
    for name, text in raw.get("app_tables", []):
        # an app's own tables (a web fan-in's requests.csv, queries.csv)
        (out / name).write_text(text)
        names.append(name)
    (out / "meta.json").write_text(raw["meta"])
    names.append("meta.json")
    for name, data in raw["pcaps"]:
        (out / name).write_bytes(data)
        names.append(name)
    names.append(MANIFEST)
    head = "# the files one `xco sim run` wrote here; the next run into this directory removes these first\n"
    (out / MANIFEST).write_text(head + "".join(f"{n}\n" for n in names))
    return names


def _frame(text: str) -> pd.DataFrame:
    return pd.read_csv(io.StringIO(text))


@functools.cache
def source_commit() -> str | None:
    """The git commit of the source tree this package runs from (``+dirty`` with
    uncommitted changes), or None when it is not a git checkout."""
    root = Path(__file__).resolve().parent.parent.parent
    if not (root / ".git").exists():
        return None
    try:
        head = subprocess.run(
            ["git", "-C", str(root), "rev-parse", "HEAD"], capture_output=True, text=True, timeout=10
        )
        if head.returncode != 0:
            return None
        dirty = subprocess.run(
            ["git", "-C", str(root), "diff", "--quiet", "HEAD", "--"], capture_output=True, timeout=10
        )
    except (OSError, subprocess.SubprocessError):
        return None
    return head.stdout.strip() + ("+dirty" if dirty.returncode == 1 else "")


MemoryLimitError = _native.MemoryLimitError
"""A scenario refused because its memory estimate exceeds ``max_memory_bytes``:
``.estimate`` (as :func:`estimate` gives it), ``.limit_bytes``, ``.baseline_bytes``."""


def estimate(scenario: ScenarioLike, seed: int | None = None) -> dict[str, Any]:
    """What running ``scenario`` will cost, without running it: ``bytes``
    (memory), ``events`` (about), ``parts`` (each part's count, bytes per
    item from the Rust structs, bytes, and what to change), ``text``."""
    return _native.estimate(to_text(scenario), check_seed(seed))


def run_raw(
    scenario: ScenarioLike,
    seed: int | None = None,
    control: Any = None,
    progress: RunProgress | None = None,
    max_file_bytes: int | None = None,
    max_memory_bytes: int | None = None,
) -> dict[str, Any]:
    """Run and return the native result (CSV text) without building DataFrames.

    ``control`` (an ``xco._native.RunControl``, shared by a sweep's runs)
    lets another thread stop the run: it then returns early with
    ``interrupted`` True. Without one, a run on the main thread is stoppable
    by Ctrl-C: it runs in a helper thread while this one waits (showing
    ``progress``, if given), and Ctrl-C stops it and raises
    :class:`~xco.interrupt.Interrupted` whose ``raw`` is what was simulated.
    ``max_file_bytes`` overrides the scenario's ``output.max_file_bytes``.
    With ``max_memory_bytes``, a scenario whose estimate plus what this
    process holds already exceeds it is refused before it runs
    (:data:`MemoryLimitError`).
    """
    text, seed = to_text(scenario), check_seed(seed)
    commit = source_commit()
    baseline = memory.rss_bytes() if max_memory_bytes is not None else 0
    args = (text, seed, commit)
    limits = (max_file_bytes, max_memory_bytes, baseline)
    if control is not None or threading.current_thread() is not threading.main_thread():
        return _native.run_scenario(*args, control, *limits)
    control = _native.RunControl()
    box: dict[str, Any] = {}
    finished = threading.Event()

    def work() -> None:
        try:
            box["raw"] = _native.run_scenario(*args, control, *limits)
        except BaseException as e:  # handed to the waiting thread
            box["error"] = e
        finally:
            finished.set()

    # not a daemon: were this thread to end first, the interpreter waits for
    # the run (stopped, it returns within a few thousand events) instead of
    # killing a thread that is inside Rust
    worker = threading.Thread(target=work, name="xco-sim-run")
    worker.start()
    try:
        # Event.wait, not Thread.join: an interrupted join may leave the
        # thread looking finished (Python before 3.13)
        while not finished.wait(0.05):
            if progress is not None:
                progress.update(control.progress())
    except KeyboardInterrupt:
        control.stop()
        while not finished.wait(0.05):  # a second Ctrl-C leaves at once
            pass
        if "error" in box:
            raise box["error"] from None
        raise Interrupted("the run was interrupted", raw=box["raw"]) from None
    finally:
        if progress is not None:
            progress.close()
    if "error" in box:
        raise box["error"]
    return box["raw"]


def result_of(raw: dict[str, Any], wall_s: float = 0.0) -> Result:
    """A :func:`run_raw` result as a :class:`Result` of DataFrames."""
    return Result(
        flows=_frame(raw["flows"]),
        timeseries=_frame(raw["timeseries"]),
        apps=_frame(raw["apps"]),
        samples=_frame(raw["samples"]),
        ports=_frame(raw["ports"]),
        port_inputs=_frame(raw["port_inputs"]),
        drop_runs=_frame(raw["drop_runs"]),
        queue_timeline=_frame(raw["queue_timeline"]),
        hosts=_frame(raw["hosts"]),
        meta=json.loads(raw["meta"]),
        pcaps=list(raw["pcaps"]),
        wall_s=wall_s,
        raw={k: raw[k] for k in (*TABLES, "meta")},
    )


def run(scenario: ScenarioLike, seed: int | None = None) -> Result:
    """Run ``scenario`` (a path, TOML text or a dict); ``seed`` overrides the file's.

    Ctrl-C raises :class:`~xco.interrupt.Interrupted`; its ``raw`` holds the
    tables of what was simulated (``result_of(e.raw)`` makes them a Result).
    """
    t0 = time.perf_counter()
    raw = run_raw(scenario, seed)
    return result_of(raw, time.perf_counter() - t0)


def app_metrics(raw: dict[str, Any], app: int = 0) -> dict[str, float]:
    """Metrics of application ``app`` from a :func:`run_raw` result."""
    out = {}
    for row in csv.DictReader(io.StringIO(raw["apps"])):
        if int(row["app"]) == app:
            # an empty value is a statistic of nothing (no round finished, no reply): NaN, never 0
            out[row["metric"]] = float(row["value"]) if row["value"] != "" else math.nan
    return out
