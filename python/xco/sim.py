"""Run scenarios in the packet-level simulator.

>>> import xco.sim
>>> r = xco.sim.run("scenarios/incast.toml", seed=3)      # doctest: +SKIP
>>> r.flows[["role", "goodput_mbps", "timeouts"]].head()   # doctest: +SKIP

The simulator itself is Rust (``xco._native``); it releases the GIL while it
runs, so several runs proceed in parallel from a thread pool (``xco.sweep``).
"""

from __future__ import annotations

import csv
import functools
import io
import json
import math
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from . import _native
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
        out.mkdir(parents=True, exist_ok=True)
        for name in TABLES:
            (out / f"{name}.csv").write_text(self.raw[name])
        (out / "meta.json").write_text(self.raw["meta"])
        for name, data in self.pcaps:
            (out / name).write_bytes(data)
        return out


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


def run_raw(scenario: ScenarioLike, seed: int | None = None) -> dict[str, Any]:
    """Run and return the native result (CSV text) without building DataFrames."""
    return _native.run_scenario(to_text(scenario), check_seed(seed), source_commit())


def run(scenario: ScenarioLike, seed: int | None = None) -> Result:
    """Run ``scenario`` (a path, TOML text or a dict); ``seed`` overrides the file's."""
    t0 = time.perf_counter()
    raw = run_raw(scenario, seed)
    wall = time.perf_counter() - t0
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
        wall_s=wall,
        raw={k: raw[k] for k in (*TABLES, "meta")},
    )


def app_metrics(raw: dict[str, Any], app: int = 0) -> dict[str, float]:
    """Metrics of application ``app`` from a :func:`run_raw` result."""
    out = {}
    for row in csv.DictReader(io.StringIO(raw["apps"])):
        if int(row["app"]) == app:
            # an empty value is a statistic of nothing (no round finished, no reply): NaN, never 0
            out[row["metric"]] = float(row["value"]) if row["value"] != "" else math.nan
    return out
