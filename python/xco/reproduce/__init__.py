"""The reproduction catalogue: one entry per experiment of the papers.

Each reproduction writes ``DIR/<id>.csv`` (tidy: ``series``, the x variable,
metric columns with units in their names), ``DIR/<id>.png``,
``DIR/<id>.txt`` (the printed summary) and ``DIR/<id>.meta.json``, and
returns the summary text. The meta file is a record of what ran: seed, mode
(quick or full), profile, version, source commit when known, the base
scenario (as data, not the file's text) and every point of the sweep with its
labels, seed, the keys it overrides (``{"topology.hosts_a": 8,
"apps[0].rounds": 20}``) and the exact scenario text the simulator ran
(``scenario``), so a point can be run again from the record alone.

A reproduction writes only files named after its own id, and ``xco
reproduce`` lists them under ``files`` in ``DIR/<id>.meta.json``: a later run
of the same id into the same directory first removes exactly those
(:func:`remove_previous`), so no file of the earlier run is left beside the
new ones; files of other ids, or of nobody, are never touched.

An interrupted sweep (Ctrl-C, SIGTERM) writes what finished with
:func:`write_partial`: the finished points' rows as ``DIR/<id>.csv`` and a
``DIR/<id>.meta.json`` that says ``"interrupted": true`` and how many points
finished; no figure and no summary, which would judge a partial sweep.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .. import __version__
from ..scenario import to_text
from ..sim import source_commit


@dataclass
class Options:
    """How to run a reproduction."""

    out: Path
    full: bool = False
    jobs: int | None = None
    seed: int = 1
    # replicates: every point runs with seeds seed .. seed + seeds - 1 (experiment.Study)
    seeds: int = 1
    progress: bool | None = None
    profile: str | None = None


@dataclass
class Outcome:
    """What a reproduction wrote and what it says."""

    files: list[Path]
    summary: str


@dataclass
class Reproduction:
    """One experiment: id, what it shows, and how to run it."""

    id: str
    title: str
    source: str
    run: Callable[[Options], Outcome]
    shares_run_with: list[str] = field(default_factory=list)
    # the settings profiles its scenario file defines (the first is the default)
    profiles: list[str] = field(default_factory=list)
    # runs with --seeds N (every one but wall-time benchmarks; a real-host one repeats its real runs)
    replicates: bool = True
    replicates_note: str = ""


REGISTRY: dict[str, Reproduction] = {}


def register(r: Reproduction) -> Reproduction:
    """Add ``r`` to the catalogue."""
    REGISTRY[r.id] = r
    return r


def overrides(base: Any, changed: Any, path: str = "") -> dict[str, Any]:
    """The keys ``changed`` sets differently from ``base``, flat and dotted like
    scenario errors (``topology.hosts_a``, ``apps[0].rounds``; ``None``: removed)."""
    if isinstance(base, dict) and isinstance(changed, dict):
        out: dict[str, Any] = {}
        for k in sorted(set(base) | set(changed), key=str):
            sub = f"{path}.{k}" if path else str(k)
            if k not in changed:
                out[sub] = None
            elif k not in base:
                out[sub] = changed[k]
            else:
                out.update(overrides(base[k], changed[k], sub))
        return out
    if isinstance(base, list) and isinstance(changed, list) and len(base) == len(changed):
        out = {}
        for i, (b, c) in enumerate(zip(base, changed, strict=True)):
            out.update(overrides(b, c, f"{path}[{i}]"))
        return out
    return {} if base == changed else {path: changed}


def point_record(base: dict, labels: dict, scenario: dict, seed: int | None) -> dict:
    """One sweep point as run: its labels, seed, the keys it overrides in ``base``
    and the scenario text the simulator was given (``scenario``)."""
    shown = {k: v for k, v in labels.items() if not k.startswith("_")}
    return {
        "labels": shown,
        "seed": seed,
        "overrides": overrides(base, scenario),
        "scenario": to_text(scenario),
    }


def write_meta(
    opts: Options, rid: str, extra: dict, base: dict | None = None, points: list[dict] | None = None
) -> Path:
    """Write ``DIR/<id>.meta.json``: seed, mode, profile, version, source commit,
    the base scenario and the points that ran (see :func:`point_record`);
    ``extra`` adds or overrides keys."""
    path = opts.out / f"{rid}.meta.json"
    meta = {
        "id": rid,
        "xco_version": __version__,
        "source_commit": source_commit(),
        "seed": opts.seed,
        "full": opts.full,
        "mode": "full" if opts.full else "quick",
        "profile": opts.profile,
        **extra,
    }
    if base is not None:
        meta["base_scenario"] = base
    if points is not None:
        meta["points"] = points
    path.write_text(json.dumps(meta, indent=2, sort_keys=True) + "\n")
    return path


def write_partial(
    opts: Options, rid: str, df: Any, base: dict | None, points: list[dict], done: int, total: int
) -> list[Path]:
    """Write what an interrupted sweep finished: ``DIR/<id>.csv`` with the
    finished points' rows (``df``, a DataFrame, when any finished) and
    ``DIR/<id>.meta.json`` marked ``"interrupted": true`` with the records
    of the finished ``points``; returns the files written."""
    opts.out.mkdir(parents=True, exist_ok=True)
    files = []
    if df is not None and len(df):
        csv = opts.out / f"{rid}.csv"
        df.to_csv(csv, index=False)
        files.append(csv)
    extra = {"interrupted": True, "points_finished": done, "points_total": total}
    files.append(write_meta(opts, rid, extra, base=base, points=points))
    return files


def previous_files(out: Path, rid: str) -> list[Path]:
    """The files an earlier ``xco reproduce rid`` wrote into ``out``, as the
    ``files`` of its ``<id>.meta.json`` lists them: plain names that start with
    the id, of regular files that still exist (never a path elsewhere, a link
    or a directory)."""
    meta = out / f"{rid}.meta.json"
    if not meta.is_file():
        return []
    try:
        listed = json.loads(meta.read_text(encoding="utf-8")).get("files", [])
    except (ValueError, UnicodeDecodeError, AttributeError):
        return []
    found = []
    for name in listed if isinstance(listed, list) else []:
        if not isinstance(name, str) or not name.startswith(rid) or "/" in name or "\\" in name:
            continue
        p = out / name
        if p.is_file() and not p.is_symlink():
            found.append(p)
    return found


def remove_previous(out: Path, rid: str) -> list[Path]:
    """Remove the files :func:`previous_files` names; returns them."""
    files = previous_files(out, rid)
    for p in files:
        p.unlink()
    return files


def record_files(out: Path, rid: str, files: list[Path]) -> None:
    """List ``files`` (this run's, inside ``out``) under ``files`` in ``DIR/<id>.meta.json``."""
    meta = out / f"{rid}.meta.json"
    if not meta.is_file():
        return
    record = json.loads(meta.read_text(encoding="utf-8"))
    record["files"] = sorted({Path(f).name for f in files} | {meta.name})
    meta.write_text(json.dumps(record, indent=2, sort_keys=True) + "\n")


def get(rid: str) -> Reproduction:
    """The reproduction called ``rid``; KeyError lists the known ones."""
    if rid not in REGISTRY:
        raise KeyError(f"unknown reproduction {rid!r}; known: {', '.join(sorted(REGISTRY))}")
    return REGISTRY[rid]


# the modules below register their reproductions
from . import (  # noqa: E402,F401
    outcast,
    outcast_distinct,
    pdn,
    pdn_fairness,
    real,
    real_incast,
    real_outcast,
    real_sicc,
    sicc,
    sicc_compress,
    sicc_scale,
    sicc_tree,
    web_fanin_all,
    xco_fattree,
    xco_paper,
)
