"""A sweep of simulator runs as one reproduction: scenario, points, table, record.

An :class:`Experiment` starts from a scenario file (``xco/scenarios/<id>.toml``),
changes only what the experiment varies (the x value and the series, which
differ in their ``[xco]`` section: absent for ``none``), runs every point and
turns each run into rows of one tidy table. Its ``meta.json`` holds, for every
point, the exact scenario text the simulator ran and its seed
(:func:`xco.reproduce.point_record`), so :func:`replay` rebuilds the table from
the record alone: the test that the record is true.
"""

from __future__ import annotations

import io
import json
from collections.abc import Callable
from dataclasses import dataclass, field
from importlib import resources
from typing import Any

from .. import scenario, sweep
from .._lazy import pd
from ..interrupt import Interrupted
from ..sim import app_metrics  # noqa: F401  (re-exported for the experiments)
from . import Options, Outcome, point_record, write_meta, write_partial

NONE = None
TIMESLICE = {"mode": "timeslice"}
RATELIMIT = {"mode": "ratelimit"}

# every experiment by id (for replay)
EXPERIMENTS: dict[str, Experiment] = {}

# legend and summary names of the usual series
SERIES_NAMES = {
    "none": "no coordination",
    "ratelimit": "XCo rate limits",
    "timeslice": "XCo timeslices",
    "timeslice-2ms": "XCo timeslices, 2 ms",
    "timeslice-10ms": "XCo timeslices, 10 ms",
    "timeslice-nowc": "XCo timeslices, no work conservation",
    "idle": "idle (no load)",
    "load-none": "under load, no coordination",
    "load-timeslice": "under load, XCo timeslices",
}


def scenario_text(rid: str) -> str:
    """The scenario file of experiment ``rid``, comments included."""
    return resources.files("xco").joinpath(f"scenarios/{rid}.toml").read_text()


def with_series(base: dict, xco: dict | None) -> dict:
    """``base`` with its [xco] section removed (``None``) or updated."""
    out = scenario.with_changes(base)
    if xco is None:
        out.pop("xco", None)
        return out
    for k, v in xco.items():
        if v is None:
            out["xco"].pop(k, None)
        else:
            out["xco"][k] = v
    return out


def table(raw: dict, name: str) -> pd.DataFrame:
    """One CSV table of a native run result as a DataFrame."""
    return pd.read_csv(io.StringIO(raw[name]))


def duration_s(scn: dict) -> float:
    """The run's length in seconds."""
    return scn["run"]["duration_ms"] / 1e3


def mode_name(full: bool) -> str:
    """``full`` or ``quick``."""
    return "full" if full else "quick"


@dataclass
class Window:
    """Where a rate is measured: from ``from_s`` to the run's end, in bins of ``bin_us``."""

    from_s: float
    bin_us: int = 10_000

    def set_output(self, scn: dict) -> dict:
        """``scn`` with per-flow time bins on (port rows off: they are not needed)."""
        scn.setdefault("output", {})
        scn["output"]["timeseries_bin_us"] = self.bin_us
        scn["output"]["timeseries_ports"] = "none"
        return scn

    def rates_mbps(self, raw: dict, scn: dict) -> dict[int, float]:
        """Per flow id: the application's delivered rate from ``from_s`` to the end (Mbit/s)."""
        ts = table(raw, "timeseries")
        end_s = duration_s(scn)
        ts = ts[(ts["entity"] == "flow") & (ts["t_s"] > self.from_s + 1e-9) & (ts["t_s"] <= end_s + 1e-9)]
        secs = end_s - self.from_s
        bin_s = self.bin_us / 1e6
        return {int(k): float(v) * bin_s / secs for k, v in ts.groupby("id")["throughput_mbps"].sum().items()}

    def aggregate(self, raw: dict, ids: list[int]) -> pd.Series:
        """The summed rate of flows ``ids`` per time bin over the whole run (Mbit/s, index t_s)."""
        ts = table(raw, "timeseries")
        ts = ts[(ts["entity"] == "flow") & (ts["id"].isin(ids))]
        return ts.groupby("t_s")["throughput_mbps"].sum()

    def text(self, scn_s: float) -> str:
        """How the figure was measured, in words."""
        return (
            f"rates measured from {self.from_s:g} s to the end of the {scn_s:g} s run (the start-up before"
            f" {self.from_s:g} s — TCP's slow start and its first losses, each costing a 200 ms RTO —"
            " is skipped)"
        )


@dataclass
class Experiment:
    """A sweep: series x values -> scenario -> rows, then a table, a plot and a summary."""

    id: str
    title: str
    x: str
    xs: Callable[[bool], list]
    series: dict[str, dict | None]
    build: Callable[[dict, Any, bool], dict]
    measure: Callable[[dict, dict, Any], list[dict]]
    columns: list[str]
    draw: Callable[[pd.DataFrame, Options], Any]
    summarize: Callable[[pd.DataFrame, Options], str]
    # x values per series, when they differ between series (default: xs)
    xs_of_series: Callable[[str, bool], list] | None = None
    # a build that depends on the series too (default: ``build``, then the series' [xco])
    build_series: Callable[[str, dict, Any, bool], dict] | None = None
    # what quick and --full change, one line for the summary
    modes: str = ""
    # one stderr line per finished run (long sweeps)
    log_runs: bool = False
    extra_files: list[str] = field(default_factory=list)

    def base(self) -> dict:
        """The scenario file as data."""
        return scenario.parse(scenario_text(self.id))

    def scenario_of(self, base: dict, s: str, x: Any, full: bool) -> dict:
        """The scenario of series ``s`` at ``x``."""
        if self.build_series is not None:
            return self.build_series(s, base, x, full)
        return with_series(self.build(base, x, full), self.series[s])

    def points(self, opts: Options) -> list[sweep.Point]:
        """Every (series, x) run of the sweep, in table order."""
        base = self.base()
        out = []
        for s in self.series:
            xs = self.xs_of_series(s, opts.full) if self.xs_of_series else self.xs(opts.full)
            for x in xs:
                scn = self.scenario_of(base, s, x, opts.full)
                out.append(
                    sweep.Point(labels={"series": s, self.x: x, "_scn": scn}, scenario=scn, seed=opts.seed)
                )
        return out

    def rows(self, results: list[dict]) -> pd.DataFrame:
        """The table from the runs' results (each: labels, ``_scn`` and ``raw``)."""
        rows = []
        for r in results:
            for row in self.measure(r["raw"], r["_scn"], r[self.x]):
                rows.append({"series": r["series"], self.x: r[self.x], **row})
        return pd.DataFrame(rows)[self.columns]

    def run(self, opts: Options) -> Outcome:
        """Run the sweep; write CSV, figure (PNG + SVG), summary and meta record."""
        opts.out.mkdir(parents=True, exist_ok=True)
        base = self.base()
        points = self.points(opts)
        try:
            results = sweep.run(
                points,
                lambda raw: {"raw": raw},
                jobs=opts.jobs,
                desc=self.id,
                progress=opts.progress,
                log_runs=self.log_runs,
            )
        except Interrupted as e:
            done = [points[i] for i in e.indices]
            record = [point_record(base, p.labels, p.scenario, p.seed) for p in done]
            df = self.rows(e.rows) if e.rows else None
            e.files = write_partial(opts, self.id, df, base, record, e.done, e.total)
            raise
        df = self.rows(results)
        csv = opts.out / f"{self.id}.csv"
        df.to_csv(csv, index=False)
        png = self.draw(df, opts)
        text = header(self.id, self.title, opts, self.modes) + self.summarize(df, opts)
        txt = opts.out / f"{self.id}.txt"
        txt.write_text(text + "\n")
        record = [point_record(base, p.labels, p.scenario, p.seed) for p in points]
        meta = write_meta(opts, self.id, {"series": self.series}, base=base, points=record)
        files = [csv, png, png.with_suffix(".svg"), txt, meta]
        files += [opts.out / f for f in self.extra_files]
        return Outcome(files=files, summary=text)


def header(rid: str, title: str, opts: Options, modes: str) -> str:
    """The first lines of a summary: what ran, seed, mode, where the settings are."""
    lines = [
        f"{rid}: {title}",
        f"seed {opts.seed}; {mode_name(opts.full)} mode; settings: xco/scenarios/{rid}.toml as changed by"
        " the sweep"
        f" (every run's scenario text is in {rid}.meta.json)",
    ]
    if modes:
        lines.append(modes)
    return "\n".join(lines) + "\n\n"


def replay(exp: Experiment, meta: dict, jobs: int | None = None) -> pd.DataFrame:
    """The table of ``exp`` rebuilt from its ``meta.json`` alone: every point's
    recorded scenario text run again with its recorded seed."""
    points = []
    for p in meta["points"]:
        scn = scenario.parse(p["scenario"])
        points.append(
            sweep.Point(labels={**p["labels"], "_scn": scn}, scenario=p["scenario"], seed=p["seed"])
        )
    results = sweep.run(points, lambda raw: {"raw": raw}, jobs=jobs, desc="replay", progress=False)
    return exp.rows(results)


def replay_csv(exp: Experiment, meta_path, jobs: int | None = None) -> str:
    """The CSV text :func:`replay` gives for the record at ``meta_path``."""
    return replay(exp, json.loads(meta_path.read_text()), jobs).to_csv(index=False)


def note(rid: str, opts: Options) -> str:
    """The small print under a figure: what made it."""
    return f"xco {rid}, seed {opts.seed}, {mode_name(opts.full)} mode; settings in xco/scenarios/{rid}.toml"


def pivot_text(df: pd.DataFrame, x: str, y: str, fmt: str = "{:.1f}", names: bool = False) -> str:
    """A small text table: rows = x, columns = series (in words if ``names``)."""
    p = df.pivot_table(index=x, columns="series", values=y, aggfunc="mean", sort=False)
    cols = [SERIES_NAMES.get(c, c) if names else c for c in p.columns]
    width = max([16, *(len(c) + 1 for c in cols)])
    lines = [f"{x:>14} " + " ".join(f"{c:>{width}}" for c in cols)]
    for idx, row in p.sort_index().iterrows():
        lines.append(f"{idx!s:>14} " + " ".join(f"{fmt.format(v):>{width}}" for v in row))
    return f"{y}:\n" + "\n".join(lines)
