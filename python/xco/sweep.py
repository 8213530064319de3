"""Run many scenario points, in parallel, with a progress bar.

Points run in a thread pool: the simulator releases the GIL, so N threads
use N cores without pickling anything. Results come back in point order
whatever order they finish in, so a sweep's output does not depend on timing.
"""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import dataclass
from typing import Any

from tqdm import tqdm

from . import sim


@dataclass
class Point:
    """One run of a sweep: labels for the output table and the scenario to run."""

    labels: dict[str, Any]
    scenario: dict
    seed: int | None = None


def default_jobs() -> int:
    """Worker threads by default: every core."""
    return max(1, os.cpu_count() or 1)


def run(
    points: list[Point],
    measure: Callable[[dict[str, Any]], dict[str, Any]],
    jobs: int | None = None,
    desc: str = "sweep",
    progress: bool | None = None,
    log_runs: bool = False,
) -> list[dict[str, Any]]:
    """Run every point and return ``labels | measure(raw_result)`` per point, in order.

    ``measure`` turns a :func:`xco.sim.run_raw` result into the row's metrics.
    ``progress`` None shows the bar only on a terminal. ``log_runs``: also
    write one line per finished run to stderr (its labels, its own wall time
    and the time since the sweep started), for sweeps long enough that a bar
    is not enough (and for logs, where a bar is not drawn). Wall times go to
    stderr only, never into outputs.
    """
    jobs = jobs or default_jobs()
    t0 = time.monotonic()

    def one(p: Point) -> dict[str, Any]:
        start = time.monotonic()
        raw = sim.run_raw(p.scenario, p.seed)
        row = {**p.labels, **measure(raw)}
        if log_runs:
            shown = ", ".join(f"{k} {v}" for k, v in p.labels.items() if not k.startswith("_"))
            row["_wall_s"] = time.monotonic() - start
            row["_label"] = shown
        return row

    rows: list[dict[str, Any] | None] = [None] * len(points)
    show = sys.stderr.isatty() if progress is None else progress
    with (
        ThreadPoolExecutor(max_workers=jobs) as pool,
        tqdm(total=len(points), desc=desc, unit="run", disable=not show, file=sys.stderr) as bar,
    ):
        futures = {pool.submit(one, p): i for i, p in enumerate(points)}
        for done, fut in enumerate(as_completed(futures), 1):
            row = fut.result()
            if log_runs:
                bar.write(
                    f"{desc}: run {done}/{len(points)} finished ({row.pop('_label')}) in"
                    f" {row.pop('_wall_s'):.1f} s; {time.monotonic() - t0:.0f} s since the start",
                    file=sys.stderr,
                )
            rows[futures[fut]] = row
            bar.update(1)
    return [r for r in rows if r is not None]
