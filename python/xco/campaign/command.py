"""``xco sweep``: read the grid, run what the store lacks, gather the Parquet files.

``DIR/campaign.json`` records the grid and base scenario texts and the
seeds, so ``--resume`` continues exactly that campaign (the grid file is then
optional). The Parquet files are removed when a sweep starts and written
when every run is in the store: a directory with them holds a finished
campaign.
"""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path
from typing import Any, TextIO

from . import gather
from .grid import Grid, GridError
from .grid import load as load_grid
from .grid import parse as parse_grid
from .store import Store, run_key

CAMPAIGN = "campaign.json"
FORMAT = 1


class CampaignError(Exception):
    """A usage mistake (exit 2): the message is one line naming the field or option."""


class Progress:
    """Runs finished of those to run, errors, elapsed and left, on ``stream``: redrawn in place
    on a terminal, a new line every ``every_s`` seconds elsewhere; None stream: nothing."""

    def __init__(self, total: int, stream: TextIO | None, tty: bool, every_s: float = 2.0) -> None:
        self.total, self.stream, self.tty = total, stream, tty
        self.every_s = 0.2 if tty else every_s
        self.done = self.errors = 0
        self.t0 = time.monotonic()
        self.shown = 0.0
        self.width = 0

    def update(self, error: bool) -> None:
        self.done += 1
        self.errors += error
        now = time.monotonic()
        if self.done == self.total or now - self.shown >= self.every_s:
            self.shown = now
            self._show(now)

    def _show(self, now: float) -> None:
        if self.stream is None:
            return
        el = now - self.t0
        left = f", about {el * (self.total - self.done) / self.done:.0f} s left" if self.done else ""
        err = f", {self.errors} error{'s' if self.errors != 1 else ''}" if self.errors else ""
        text = f"sweep: {self.done}/{self.total} runs{err}, {el:.1f} s{left}"
        if self.tty:
            self.stream.write("\r" + text + " " * max(self.width - len(text), 0))
            self.width = len(text)
        else:
            self.stream.write(text + "\n")
        self.stream.flush()

    def close(self) -> None:
        if self.stream is not None and self.tty and self.width:
            self.stream.write("\n")
            self.stream.flush()
            self.width = 0


def _n(n: int, what: str) -> str:
    return f"{n} {what}{'s' if n != 1 else ''}"


def _read_campaign(out: Path) -> dict[str, Any] | None:
    p = out / CAMPAIGN
    if not p.is_file():
        return None
    try:
        rec = json.loads(p.read_text(encoding="utf-8"))
    except (ValueError, UnicodeDecodeError):
        raise CampaignError(f"--out {str(out)!r}: {CAMPAIGN} is not a campaign record") from None
    if rec.get("format") != FORMAT:
        raise CampaignError(f"--out {str(out)!r}: {CAMPAIGN} has format {rec.get('format')!r}, not {FORMAT}")
    return rec


def prepare(grid_file: str | None, out: Path, seeds: int | None, resume: bool) -> Grid:
    """The grid to sweep into ``out``, checked against what ``out`` already holds."""
    if out.exists() and not out.is_dir():
        raise CampaignError(f"--out {str(out)!r} is a file, not a directory")
    rec = _read_campaign(out) if out.is_dir() else None
    if out.is_dir() and rec is None and any(out.iterdir()):
        raise CampaignError(
            f"--out {str(out)!r} holds files but no campaign ({CAMPAIGN}); give a new or empty directory"
        )
    if resume and rec is None:
        raise CampaignError(f"--resume: {str(out)!r} holds no campaign to resume")
    if grid_file is None and not resume:
        raise CampaignError("GRID: name the grid file (or --resume --out DIR to continue a campaign)")
    if grid_file is None:
        assert rec is not None
        grid = parse_grid(rec["grid"], rec["grid_file"], base_text=rec["base"])
        if seeds is None:
            grid.seeds = list(rec["seeds"])
        else:
            grid.seeds = parse_grid(rec["grid"], rec["grid_file"], seeds, rec["base"]).seeds
    else:
        grid = load_grid(grid_file, seeds)
    if resume:
        assert rec is not None
        if grid.text != rec["grid"] or grid.base_text != rec["base"]:
            what = "grid" if grid.text != rec["grid"] else "base scenario"
            raise CampaignError(
                f"--resume: the {what} differs from the one the campaign in {str(out)!r} was started with; "
                "run without --resume to sweep the new one (the store keeps every run)"
            )
        if grid.seeds != list(rec["seeds"]):
            raise CampaignError(
                f"--seeds: the campaign in {str(out)!r} was started with {len(rec['seeds'])} seed(s); "
                "run without --resume to change them"
            )
    return grid


def record(grid: Grid, grid_file: str, out: Path, complete: bool) -> None:
    """Write ``out/campaign.json`` (atomically)."""
    rec = {
        "format": FORMAT,
        "grid_file": grid_file,
        "grid": grid.text,
        "base_file": grid.base_path,
        "base": grid.base_text,
        "seeds": grid.seeds,
        "points": grid.runs // len(grid.seeds),
        "runs": grid.runs,
        "complete": complete,
    }
    tmp = out / f".{CAMPAIGN}.tmp"
    tmp.write_text(json.dumps(rec, indent=2) + "\n", encoding="utf-8")
    tmp.replace(out / CAMPAIGN)


def sweep(
    grid_file: str | None,
    out: str | Path,
    seeds: int | None = None,
    jobs: int | None = None,
    scheduler: str | None = None,
    resume: bool = False,
    retry_errors: bool = False,
    progress: bool | None = None,
    quiet: bool = False,
) -> dict[str, Any]:
    """Run a campaign (see ``xco sweep --help``); returns what it did: ``runs``, ``cached``,
    ``ran``, ``errors`` (list of (point, seed, error)), ``files``, ``wall_s``, ``where``.
    Raises CampaignError / GridError (usage), EngineError (cluster), Interrupted (Ctrl-C)."""
    from . import engine

    t0 = time.monotonic()
    out = Path(out)
    grid = prepare(grid_file, out, seeds, resume)
    points = grid.points()
    out.mkdir(parents=True, exist_ok=True)
    rec_file = grid_file if grid_file is not None else (_read_campaign(out) or {})["grid_file"]
    record(grid, str(rec_file), out, complete=False)
    gather.remove_outputs(out)
    store = Store(out / "store")
    store.clean()
    todo = []
    for p in points:
        for s in grid.seeds:
            key = run_key(p.text, s)
            st = store.status(key)
            if st is None or (st == "error" and (retry_errors or store.retry(key))):
                todo.append(engine.Run(key, p.text, s, p.index))
    err = None if quiet else sys.stderr
    tty = sys.stderr.isatty()
    show = (tty if progress is None else progress) and not quiet
    what = f"{_n(len(points), 'point')} x {_n(len(grid.seeds), 'seed')}"
    summary: dict[str, Any] = {"runs": grid.runs, "cached": grid.runs - len(todo), "ran": 0, "where": "-"}
    cluster = bar = None
    try:
        if todo:
            asked = jobs
            jobs = jobs or max(1, os.cpu_count() or 1)
            cluster = engine.Cluster(jobs, scheduler)
            summary["where"] = cluster.where
            if err:
                print(
                    f"sweep: {what} = {grid.runs} runs: {grid.runs - len(todo)} in the store, "
                    f"{len(todo)} to run on {cluster.where}",
                    file=err,
                    flush=True,
                )
            # locally twice the threads, so a thread never waits for the next submission; on a
            # cluster --jobs caps the runs in flight (default: twice its threads)
            if scheduler is None:
                window = 2 * jobs
            else:
                window = jobs if asked else 2 * max(cluster.threads(), 1)
            bar = Progress(len(todo), sys.stderr if show else None, tty)
            engine.run(todo, store, cluster, window, lambda r, res: bar.update("error" in res))
            bar.close()
            cluster.close()
            cluster = None
            summary["ran"] = len(todo)
        elif err:
            print(f"sweep: {what} = {grid.runs} runs: all {grid.runs} in the store, none to run", file=err)
        frames = gather.gather(grid, points, store)
        files = gather.write(frames, out)
    except KeyboardInterrupt as e:
        # Ctrl-C while starting the cluster, running, or gathering: keep the store, no Parquet
        if bar is not None:
            bar.close()
        if cluster is not None:
            cluster.close()
        gather.remove_outputs(out)
        e.total = grid.runs  # type: ignore[attr-defined]
        e.stored = sum(  # type: ignore[attr-defined]
            store.status(run_key(p.text, s)) is not None for p in points for s in grid.seeds
        )
        raise
    record(grid, str(rec_file), out, complete=True)
    runs = frames[gather.RUNS]
    bad = runs[runs["status"] == "error"]
    summary["errors"] = [(int(r.point), int(r.seed), r.error) for r in bad.itertuples()]
    summary["files"] = [(p, len(frames[p.stem])) for p in files]
    summary["wall_s"] = time.monotonic() - t0
    return summary


__all__ = ["CampaignError", "GridError", "sweep"]
