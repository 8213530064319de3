"""The reproduction catalogue: one entry per experiment of the papers.

Each reproduction writes ``DIR/<id>.csv`` (tidy: ``series``, the x variable,
metric columns with units in their names), ``DIR/<id>.png``,
``DIR/<id>.txt`` (the printed summary) and ``DIR/<id>.meta.json`` (seed,
version, the scenario that was swept), and returns the summary text.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from .. import __version__


@dataclass
class Options:
    """How to run a reproduction."""

    out: Path
    full: bool = False
    jobs: int | None = None
    seed: int = 1
    progress: bool | None = None


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


REGISTRY: dict[str, Reproduction] = {}


def register(r: Reproduction) -> Reproduction:
    """Add ``r`` to the catalogue."""
    REGISTRY[r.id] = r
    return r


def write_meta(opts: Options, rid: str, extra: dict) -> Path:
    """Write ``DIR/<id>.meta.json`` with seed, version and what was run."""
    path = opts.out / f"{rid}.meta.json"
    meta = {"id": rid, "xco_version": __version__, "seed": opts.seed, "full": opts.full, **extra}
    path.write_text(json.dumps(meta, indent=2, sort_keys=True) + "\n")
    return path


def get(rid: str) -> Reproduction:
    """The reproduction called ``rid``; KeyError lists the known ones."""
    if rid not in REGISTRY:
        raise KeyError(f"unknown reproduction {rid!r}; known: {', '.join(sorted(REGISTRY))}")
    return REGISTRY[rid]


from . import pdn, real, xco_fattree, xco_paper  # noqa: E402,F401  (they register their reproductions)
