"""The experiment frame: a sweep of simulator runs as one reproduction (points, seeds, progress,
tables, figures, summary, meta record, replay).

A :class:`Study` is the frame every simulated reproduction runs on: its points (each a
scenario and labels) run once per seed of ``--seeds`` on the sweep's thread pool, with a
progress bar; it writes the tables, the figures, the summary and ``meta.json``, and
:func:`replay` rebuilds the main table from the record. With several seeds the tables get a
``seed`` column, ``<id>-ci95.csv`` the mean and 95 % interval per point, the figures means
with interval bands or bars, and the summary every claim decided over the seeds
(:mod:`xco.reproduce.replicates`).

A study may also have points on real hosts (a :class:`Run` with ``real``: the real-host
reproductions, :mod:`xco.reproduce.real_frame`): those run one at a time, in point order, in
the main thread, inside one context the study enters once (``Study.lab``: the testbed they
share), before the simulated points go to the pool; ``--seeds N`` repeats each of them N
times. Their meta record is their labels, seed, settings and what the run reported (``ran``);
a kernel's run cannot be replayed.

An :class:`Experiment` (a series x values sweep, built into a Study) starts from a
scenario file (``xco/scenarios/<id>.toml``), changes only what the experiment
varies (the x value and the series, which differ in their ``[xco]`` section:
absent for ``none``), runs every point and turns each run into rows of one tidy
table. Its ``meta.json`` holds, for every
point, the exact scenario text the simulator ran and its seed
(:func:`xco.reproduce.point_record`), so :func:`replay` rebuilds the table from
the record alone: the test that the record is true.
"""

from __future__ import annotations

import dataclasses
import io
import json
from collections.abc import Callable
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any

from .. import plot, scenario, sweep
from .._lazy import pd
from ..interrupt import Interrupted
from ..scenario import to_text
from ..sim import app_metrics  # noqa: F401  (re-exported for the experiments)
from . import Options, Outcome, point_record, write_meta, write_partial
from .replicates import Headline, combine, default_keys, interval_table, mean_table, seeds_of, seeds_text

NONE = None
TIMESLICE = {"mode": "timeslice"}
RATELIMIT = {"mode": "ratelimit"}

# every experiment by id (for replay)
EXPERIMENTS: dict[str, Experiment | Study] = {}

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
class Run:
    """One point of a study before its seed: labels for its table rows and the scenario it runs.

    A point on real hosts has no scenario but ``real``: called with the study's lab (what
    ``Study.lab`` yields) and the point's seed, it runs the point and returns its result (a dict
    beside the labels, as ``keep`` gives for a simulator run); ``settings`` says what it runs, for
    the meta record."""

    labels: dict[str, Any]
    scenario: dict | None
    real: Callable[[Any, int], dict] | None = None
    settings: dict | None = None


def _keep_raw(raw: dict) -> dict:
    return {"raw": raw}


@dataclass
class Study:
    """The frame every simulated reproduction runs on: points x seeds -> tables, figures, summary,
    meta record.

    ``runs(opts)`` gives the points of one seed (``opts.seed``; a point's scenario may depend on
    it); every point runs once per seed of ``--seeds`` (:mod:`.replicates`), on the sweep's
    thread pool, and keeps ``keep(raw)`` (default: the whole result as ``raw``) beside its labels,
    its scenario (``_scn``) and its seed (``_seed``). ``tables(results, opts)`` turns one seed's
    results into named tables: ``""`` is ``<id>.csv``, any other name ``<id>-<name>.csv``; with
    several seeds each table gets a ``seed`` column first and ``<id>-ci95.csv`` holds the main
    table's mean and 95 % interval per point. ``draw(tables, opts)`` writes the figures and returns
    their paths (with several seeds it gets every seed's rows, and :func:`xco.plot.replicates`
    makes the plot helpers draw means with 95 % intervals); ``summarize(tables, results, opts)``
    writes one seed's summary (several seeds: each seed's, combined by :func:`.replicates.combine`,
    with ``headlines`` giving the claims whose verdict is decided on an interval). The meta record
    holds every point's exact scenario text and seed, so :func:`replay` rebuilds the tables from it.
    """

    id: str
    title: str
    runs: Callable[[Options], list[Run]]
    tables: Callable[[list[dict], Options], dict[str, pd.DataFrame]]
    draw: Callable[[dict[str, pd.DataFrame], Options], list[Path]]
    summarize: Callable[[dict[str, pd.DataFrame], list[dict], Options], str]
    keep: Callable[[dict], dict] = _keep_raw
    # the scenario the points vary (recorded in meta.json; its overrides per point too)
    base: Callable[[Options], dict | None] = lambda opts: None
    # more keys of meta.json
    extra: Callable[[Options], dict] = lambda opts: {}
    headlines: Callable[[dict[str, pd.DataFrame], list[dict], Options], list[Headline]] | None = None
    # key columns of the main table for its interval table (default: replicates.default_keys)
    keys: list[str] | None = None
    log_runs: bool = False
    # parallel runs at most (a point that needs much memory)
    max_jobs: int | None = None
    # several seeds: ``draw`` gets the mean over the seeds per point (a figure of its own making
    # that cannot draw replicates), and its note says where the intervals are
    draw_means: bool = False
    # the progress bar's name (default: the id)
    desc: str | None = None
    # refuses to start (raises) before any work, e.g. real hosts without root
    check: Callable[[Options], None] | None = None
    # the context the real points share, entered once around all of them (a testbed)
    lab: Callable[[Options], AbstractContextManager] | None = None
    # several seeds: a paragraph after the summary's first line (what a seed means here; ``{seeds}``
    # in it: the number of seeds)
    seeds_note: str = ""
    # several seeds: a text over every seed's tables at once, put before the seeds' combined claims
    summarize_seeds: Callable[[dict[str, pd.DataFrame], list[dict], Options], str] | None = None

    def seed_options(self, opts: Options) -> list[Options]:
        """One Options per seed of the run (each with that seed and ``seeds`` 1)."""
        return [dataclasses.replace(opts, seed=s, seeds=1) for s in seeds_of(opts.seed, opts.seeds)]

    def points(self, opts: Options) -> list[sweep.Point]:
        """Every run of the study: each point of each seed, seed outer."""
        out = []
        for o in self.seed_options(opts):
            for r in self.runs(o):
                labels = {**r.labels, "_scn": r.scenario, "_seed": o.seed}
                if r.real is not None:
                    labels.update(_real=r.real, _settings=r.settings or {})
                out.append(sweep.Point(labels=labels, scenario=r.scenario, seed=o.seed))
        return out

    def record(self, base: dict | None, p: sweep.Point) -> dict:
        """The meta record of point ``p`` (its exact scenario text and seed; a real point: its
        settings)."""
        if "_real" in p.labels:
            shown = {k: v for k, v in p.labels.items() if not k.startswith("_")}
            return {"labels": shown, "seed": p.seed, "real": p.labels["_settings"]}
        if base is None:
            shown = {k: v for k, v in p.labels.items() if not k.startswith("_")}
            return {"labels": shown, "seed": p.seed, "scenario": to_text(p.scenario)}
        return point_record(base, p.labels, p.scenario, p.seed)

    def tables_of(self, results: list[dict], opts: Options) -> tuple[dict[str, pd.DataFrame], list]:
        """The tables of ``results`` (every seed's: a ``seed`` column first when there are several),
        and per seed (its Options, its results, its tables)."""
        per = []
        for o in self.seed_options(opts):
            mine = [r for r in results if r["_seed"] == o.seed]
            per.append((o, mine, self.tables(mine, o) if mine else {}))
        if opts.seeds <= 1:
            return (per[0][2] if per else {}), per
        names = list(dict.fromkeys(n for _, _, t in per for n in t))
        out = {}
        for n in names:
            parts = [t[n].assign(seed=o.seed) for o, _, t in per if n in t]
            df = pd.concat(parts, ignore_index=True)
            out[n] = df[["seed", *[c for c in df.columns if c != "seed"]]]
        return out, per

    def write_tables(self, tables: dict[str, pd.DataFrame], opts: Options, labels: list[str]) -> list[Path]:
        """Write every table as CSV (and, with several seeds, the main table's interval table, its
        keys: ``keys``, else the point ``labels`` and the columns that are not numbers)."""
        files = []
        for name, df in tables.items():
            path = opts.out / (f"{self.id}.csv" if name == "" else f"{self.id}-{name}.csv")
            df.to_csv(path, index=False)
            files.append(path)
        if opts.seeds > 1 and "" in tables:
            main = tables[""]
            keys = self.keys if self.keys is not None else default_keys(main, labels)
            path = opts.out / f"{self.id}-ci95.csv"
            interval_table(main, keys).to_csv(path, index=False)
            files.append(path)
        return files

    def run_points(self, points: list[sweep.Point], opts: Options) -> list[dict]:
        """Every point's result in point order: the real ones first, one at a time inside the lab,
        then the simulated ones on the sweep's pool. Ctrl-C raises :class:`Interrupted` with the
        finished points' results and positions."""
        real = [i for i, p in enumerate(points) if "_real" in p.labels]
        sim = [i for i, p in enumerate(points) if "_real" not in p.labels]
        done: dict[int, dict] = {}
        if real:
            try:
                done.update(_run_real(self, [(i, points[i]) for i in real], opts))
            except Interrupted as e:
                e.total = len(points)
                raise
        jobs = opts.jobs if self.max_jobs is None else min(opts.jobs or self.max_jobs, self.max_jobs)
        if sim:
            try:
                rows = sweep.run(
                    [points[i] for i in sim],
                    self.keep,
                    jobs=jobs,
                    desc=self.desc or self.id,
                    progress=opts.progress,
                    log_runs=self.log_runs,
                )
            except Interrupted as e:
                done.update({sim[j]: row for j, row in zip(e.indices, e.rows, strict=True)})
                order = sorted(done)
                raise Interrupted(
                    str(e), rows=[done[i] for i in order], indices=order, done=len(order), total=len(points)
                ) from None
            done.update(zip(sim, rows, strict=True))
        return [done[i] for i in sorted(done)]

    def run(self, opts: Options) -> Outcome:
        """Run every point of every seed; write tables, figures, summary and meta record."""
        if self.check is not None:
            self.check(opts)
        opts.out.mkdir(parents=True, exist_ok=True)
        base = self.base(opts)
        points = self.points(opts)
        try:
            results = self.run_points(points, opts)
        except Interrupted as e:
            record = [self.record(base, points[i]) for i in e.indices]
            try:
                df = self.tables_of(e.rows, opts)[0].get("") if e.rows else None
            except Exception:  # a partial sweep may not make a whole table: keep the record
                df = None
            e.files = write_partial(opts, self.id, df, base, record, e.done, e.total)
            raise
        tables, per = self.tables_of(results, opts)
        labels = [k for k in points[0].labels if not k.startswith("_")] if points else []
        files = self.write_tables(tables, opts, labels)
        if opts.seeds <= 1:
            files += self.draw(tables, opts)
            text = self.summarize(tables, results, opts)
        else:
            shown = tables
            if self.draw_means:
                shown = {
                    n: mean_table(df, self.keys if n == "" and self.keys else default_keys(df, labels))
                    for n, df in tables.items()
                }
            with plot.replicates(opts.seeds, means=self.draw_means):
                files += self.draw(shown, opts)
            texts = [self.summarize(t, rs, o) for o, rs, t in per]
            heads = [self.headlines(t, rs, o) for o, rs, t in per] if self.headlines else None
            seeds = [o.seed for o, _, _ in per]
            over = self.summarize_seeds(tables, results, opts) + "\n\n" if self.summarize_seeds else ""
            note = self.seeds_note.replace("{seeds}", str(opts.seeds)) + "\n\n" if self.seeds_note else ""
            text = f"{self.id}: {self.title}\n{note}{over}" + combine(seeds, texts, heads)
        txt = opts.out / f"{self.id}.txt"
        txt.write_text(text + "\n")
        extra = dict(self.extra(opts))
        if opts.seeds > 1:
            extra["seeds"] = seeds_of(opts.seed, opts.seeds)
        record = [self.record(base, p) for p in points]
        for rec, r in zip(record, results, strict=True):
            if "_record" in r:  # what a real point found as it ran (e.g. the route it set)
                rec["ran"] = r["_record"]
        meta = write_meta(opts, self.id, extra, base=base, points=record)
        return Outcome(files=[*files, txt, meta], summary=text)


@dataclass
class Experiment:
    """A series x values sweep on the frame: series x values -> scenario -> rows, then a table, a
    plot and a summary (:meth:`study` is its :class:`Study`)."""

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
    # a build that depends on the run's seed (default: ``build``)
    build_seeded: Callable[[dict, Any, bool, int], dict] | None = None
    # what quick and --full change, one line for the summary
    modes: str = ""
    # one stderr line per finished run (long sweeps)
    log_runs: bool = False
    extra_files: list[str] = field(default_factory=list)
    # several seeds: draw the mean over the seeds (see Study.draw_means)
    draw_means: bool = False

    def base(self) -> dict:
        """The scenario file as data."""
        return scenario.parse(scenario_text(self.id))

    def scenario_of(self, base: dict, s: str, x: Any, opts: Options) -> dict:
        """The scenario of series ``s`` at ``x``."""
        if self.build_series is not None:
            return self.build_series(s, base, x, opts.full)
        if self.build_seeded is not None:
            return with_series(self.build_seeded(base, x, opts.full, opts.seed), self.series[s])
        return with_series(self.build(base, x, opts.full), self.series[s])

    def runs(self, opts: Options) -> list[Run]:
        """Every (series, x) point of one seed, in table order."""
        base = self.base()
        out = []
        for s in self.series:
            xs = self.xs_of_series(s, opts.full) if self.xs_of_series else self.xs(opts.full)
            for x in xs:
                out.append(Run(labels={"series": s, self.x: x}, scenario=self.scenario_of(base, s, x, opts)))
        return out

    def rows(self, results: list[dict]) -> pd.DataFrame:
        """The table from the runs' results (each: labels, ``_scn`` and ``raw``)."""
        rows = []
        for r in results:
            for row in self.measure(r["raw"], r["_scn"], r[self.x]):
                rows.append({"series": r["series"], self.x: r[self.x], **row})
        return pd.DataFrame(rows)[self.columns]

    def _draw(self, tables: dict, opts: Options) -> list[Path]:
        png = self.draw(tables[""], opts)
        return [*plot.figure_files(png), *(opts.out / f for f in self.extra_files)]

    def study(self) -> Study:
        """This sweep as a :class:`Study`."""
        return Study(
            id=self.id,
            title=self.title,
            runs=self.runs,
            tables=lambda results, opts: {"": self.rows(results)},
            draw=self._draw,
            summarize=lambda t, rs, opts: (
                header(self.id, self.title, opts, self.modes) + self.summarize(t[""], opts)
            ),
            base=lambda opts: self.base(),
            extra=lambda opts: {"series": self.series},
            keys=None,
            log_runs=self.log_runs,
            draw_means=self.draw_means,
        )

    def points(self, opts: Options) -> list[sweep.Point]:
        """Every run of the sweep (each point of each seed), as :meth:`Study.points`."""
        return self.study().points(opts)

    def run(self, opts: Options) -> Outcome:
        """Run the sweep; write CSV, figure (PNG + SVG), summary and meta record."""
        return self.study().run(opts)


def header(rid: str, title: str, opts: Options, modes: str) -> str:
    """The first lines of a summary: what ran, seed, mode, where the settings are."""
    lines = [
        f"{rid}: {title}",
        f"{seeds_text(seeds_of(opts.seed, opts.seeds))}; {mode_name(opts.full)} mode;"
        f" settings: xco/scenarios/{rid}.toml as changed by"
        " the sweep"
        f" (every run's scenario text is in {rid}.meta.json)",
    ]
    if modes:
        lines.append(modes)
    return "\n".join(lines) + "\n\n"


def _run_real(study: Study, todo: list[tuple[int, sweep.Point]], opts: Options) -> dict[int, dict]:
    """The real points ``todo`` (position, point), one at a time in order, inside the study's lab;
    a line on stderr per point (unless ``opts.progress`` is False); each result gets ``_wall_s``,
    its wall time. Ctrl-C (after the lab is torn down) raises :class:`Interrupted` with the
    finished ones."""
    import contextlib
    import sys
    import time

    done: dict[int, dict] = {}
    lab = study.lab(opts) if study.lab is not None else contextlib.nullcontext()
    try:
        with lab as ctx:
            for n, (i, p) in enumerate(todo, 1):
                if opts.progress is not False:
                    shown = ", ".join(f"{k} {v}" for k, v in p.labels.items() if not k.startswith("_"))
                    print(f"{study.desc or study.id}: real run {n}/{len(todo)} ({shown}; seed {p.seed})",
                          file=sys.stderr, flush=True)  # fmt: skip
                t0 = time.monotonic()
                done[i] = {**p.labels, **p.labels["_real"](ctx, p.seed), "_wall_s": time.monotonic() - t0}
    except KeyboardInterrupt:
        order = sorted(done)
        raise Interrupted(
            f"{study.id}: interrupted", rows=[done[i] for i in order], indices=order, done=len(order),
            total=len(todo),
        ) from None  # fmt: skip
    return done


def replay(exp: Study | Experiment, meta: dict, jobs: int | None = None) -> pd.DataFrame:
    """The main table of ``exp`` rebuilt from its ``meta.json`` alone: every point's recorded
    scenario text run again with its recorded seed (every seed of a ``--seeds`` run). A record
    with real-host points cannot be replayed (ValueError): the kernel's runs differ run to run."""
    study = exp.study() if isinstance(exp, Experiment) else exp
    if any("real" in p for p in meta["points"]):
        raise ValueError(f"{meta['id']}: its real-host points cannot be replayed from the record")
    points = []
    for p in meta["points"]:
        scn = scenario.parse(p["scenario"])
        points.append(
            sweep.Point(labels={**p["labels"], "_scn": scn, "_seed": p["seed"]}, scenario=scn, seed=p["seed"])
        )
    results = sweep.run(points, study.keep, jobs=jobs, desc="replay", progress=False)
    seeds = meta.get("seeds", [meta["seed"]])
    opts = Options(
        out=Path("."), full=meta["full"], seed=seeds[0], seeds=len(seeds), profile=meta.get("profile")
    )
    return study.tables_of(results, opts)[0][""]


def replay_csv(exp: Study | Experiment, meta_path, jobs: int | None = None) -> str:
    """The CSV text :func:`replay` gives for the record at ``meta_path``."""
    return replay(exp, json.loads(meta_path.read_text()), jobs).to_csv(index=False)


def note(rid: str, opts: Options) -> str:
    """The small print under a figure: what made it."""
    seeds = seeds_text(seeds_of(opts.seed, opts.seeds))
    if plot.means_only():
        seeds += f"; drawn: the seeds' mean (intervals: {rid}-ci95.csv)"
    return f"xco {rid}, {seeds}, {mode_name(opts.full)} mode; settings in xco/scenarios/{rid}.toml"


def pivot_text(df: pd.DataFrame, x: str, y: str, fmt: str = "{:.1f}", names: bool = False) -> str:
    """A small text table: rows = x, columns = series (in words if ``names``)."""
    p = df.pivot_table(index=x, columns="series", values=y, aggfunc="mean", sort=False)
    cols = [SERIES_NAMES.get(c, c) if names else c for c in p.columns]
    width = max([16, *(len(c) + 1 for c in cols)])
    lines = [f"{x:>14} " + " ".join(f"{c:>{width}}" for c in cols)]
    for idx, row in p.sort_index().iterrows():
        lines.append(f"{idx!s:>14} " + " ".join(f"{fmt.format(v):>{width}}" for v in row))
    return f"{y}:\n" + "\n".join(lines)
