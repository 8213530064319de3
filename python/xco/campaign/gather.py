"""A campaign's results as Parquet files: every table of every run, an index of runs, a summary.

From the store, in point order then seed order (so the bytes depend only on
the grid, the seeds and the simulator): ``NAME.parquet`` for every table a
run wrote (``flows``, ``apps``, ``timeseries``, ...; an app's own tables
too), each row led by ``point``, the point's parameters (one column per
varied key, named by its path) and ``seed``; ``runs.parquet`` with one row per
point x seed (``status`` ok or error, ``error``, events, simulated end);
``summary.parquet`` with the mean and 95 % confidence interval over the seeds
of every headline metric (the ``apps`` table) per point.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from .grid import Grid, Point
from .stats import mean_ci95
from .store import Store, run_key

RUNS = "runs"
SUMMARY = "summary"
LEAD = ("point", "seed")


def _param_columns(grid: Grid, points: list[Point]) -> dict[str, list[Any]]:
    """One column per varied key: its value per point (lists and tables as JSON text; a key
    whose values mix numbers and text as text)."""
    cols = {}
    for k in grid.vary:
        vals = [p.params[k] for p in points]
        vals = [json.dumps(v, sort_keys=True) if isinstance(v, (list, dict)) else v for v in vals]
        kinds = {
            "bool" if isinstance(v, bool) else "num" if isinstance(v, (int, float)) else "str" for v in vals
        }
        if len(kinds) > 1:
            vals = [str(v) for v in vals]
        elif kinds == {"num"} and any(isinstance(v, float) for v in vals):
            vals = [float(v) for v in vals]
        cols[k] = vals
    return cols


def gather(grid: Grid, points: list[Point], store: Store) -> dict[str, Any]:
    """Every output frame of the campaign, by file stem (``runs``, ``summary``, ``flows``, ...)."""
    import pandas as pd

    params = _param_columns(grid, points)
    keys = list(params)
    runs: list[dict[str, Any]] = []
    parts: dict[str, list[Any]] = {}
    for p in points:
        lead = {"point": p.index, **{k: params[k][p.index] for k in keys}}
        for seed in grid.seeds:
            key = run_key(p.text, seed)
            status = store.status(key)
            row = {**lead, "seed": seed, "key": key, "status": status or "missing", "error": ""}
            row.update(events=None, sim_end_s=None, stop_reason="", xco_version="")
            if status == "ok":
                meta = store.meta(key)
                row.update(
                    events=meta.get("events"),
                    sim_end_s=meta.get("sim_end_s"),
                    stop_reason=meta.get("stop_reason", ""),
                    xco_version=meta.get("xco_version", ""),
                )
                for name, path in store.tables(key).items():
                    parts.setdefault(name, []).append(((p.index, seed), pd.read_csv(path)))
            elif status == "error":
                row["error"] = store.error(key)
            runs.append(row)
    frames: dict[str, Any] = {}
    frames[RUNS] = pd.DataFrame(runs).astype({"events": "Int64", "sim_end_s": "float64"})
    for name in sorted(parts):
        out = name if name not in (RUNS, SUMMARY) else f"app-{name}"
        frames[out] = _lead(parts[name], params, keys)
    frames[SUMMARY] = summarize(frames.get("apps"), frames[RUNS], keys)
    return frames


def _lead(parts: list[tuple[tuple[int, int], Any]], params: dict[str, list[Any]], keys: list[str]) -> Any:
    """One table from every run's frame, each row led by point, parameters and seed."""
    import numpy as np
    import pandas as pd

    body = pd.concat([df for _, df in parts], ignore_index=True)
    lens = [len(df) for _, df in parts]
    point = np.repeat([pt for (pt, _), _ in parts], lens)
    lead: dict[str, Any] = {"point": point}
    for k in keys:
        values = params[k]
        lead[k] = pd.Series([values[pt] for pt in point], dtype=None if values else object)
    lead["seed"] = np.repeat([sd for (_, sd), _ in parts], lens)
    body = body.rename(columns={c: f"{c}_" for c in body.columns if c in lead})
    return pd.concat([pd.DataFrame(lead), body], axis=1)


def summarize(apps: Any, runs: Any, keys: list[str]) -> Any:
    """Per point and headline metric (app, kind, metric): how many seeds gave a value, their
    mean, standard deviation and 95 % interval (Student's t), and the seeds it covers."""
    import pandas as pd

    cols = ["point", *keys, "app", "kind", "metric", "n", "mean", "std", "ci95_low", "ci95_high"]
    cols += ["seeds", "errors"]
    if apps is None or apps.empty:
        return pd.DataFrame({c: [] for c in cols})
    errors = runs[runs["status"] == "error"].groupby("point").size().to_dict()
    rows = []
    for (point, app, kind, metric), g in apps.groupby(["point", "app", "kind", "metric"], sort=True):
        values = [float(v) for v in g["value"]]
        n, mean, std, half = mean_ci95(values)
        first = g.iloc[0]
        rows.append(
            {
                "point": point,
                **{k: first[k] for k in keys},
                "app": app,
                "kind": kind,
                "metric": metric,
                "n": n,
                "mean": mean,
                "std": std,
                "ci95_low": mean - half if not math.isnan(half) else math.nan,
                "ci95_high": mean + half if not math.isnan(half) else math.nan,
                "seeds": ",".join(str(s) for s in g["seed"]),
                "errors": int(errors.get(point, 0)),
            }
        )
    return pd.DataFrame(rows, columns=cols)


def write(frames: Mapping[str, Any], out: str | Path) -> list[Path]:
    """Write every frame as ``out/NAME.parquet``; returns the paths (runs, summary, then tables)."""
    out = Path(out)
    order = [RUNS, SUMMARY, *sorted(k for k in frames if k not in (RUNS, SUMMARY))]
    paths = []
    for name in order:
        p = out / f"{name}.parquet"
        tmp = out / f".{name}.parquet.tmp"
        frames[name].to_parquet(tmp, index=False, engine="pyarrow", compression="zstd")
        tmp.replace(p)
        paths.append(p)
    return paths


def remove_outputs(out: str | Path) -> None:
    """Remove the Parquet files of an earlier gather (they are remade from the store at the end)."""
    for p in Path(out).glob("*.parquet"):
        p.unlink()


class Results(dict):
    """A campaign's frames by name (``runs``, ``summary``, ``flows``, ``apps``, ...), also as attributes."""

    def __getattr__(self, name: str) -> Any:
        try:
            return self[name]
        except KeyError:
            raise AttributeError(f"no table {name!r}; this campaign has {', '.join(self)}") from None


def load(out: str | Path) -> Results:
    """The Parquet files of campaign directory ``out`` as pandas DataFrames, by name."""
    import pandas as pd

    out = Path(out)
    files = sorted(out.glob("*.parquet"))
    if not files:
        raise FileNotFoundError(f"{out}: no campaign results (*.parquet); has `xco sweep` finished there?")
    res = Results()
    for name in (RUNS, SUMMARY):
        if (out / f"{name}.parquet").is_file():
            res[name] = pd.read_parquet(out / f"{name}.parquet")
    for p in files:
        if p.stem not in res:
            res[p.stem] = pd.read_parquet(p)
    return res
