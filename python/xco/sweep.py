"""Run many scenario points, in parallel, with a progress bar; load a campaign's results.

:func:`load` reads what ``xco sweep`` (:mod:`xco.campaign`) wrote as DataFrames.
:func:`run` is the reproductions' in-process point loop. Its points run in a
thread pool: the simulator releases the GIL, so N threads use N cores
without pickling anything (and there are no worker processes to
leave behind). Results come back in point order whatever order they finish
in, so a sweep's output does not depend on timing.

Ctrl-C (or SIGTERM, see :mod:`xco.interrupt`) stops every running point
through one shared ``RunControl``, starts no further one, and raises
:class:`~xco.interrupt.Interrupted` with the rows of the points that had
finished, within a second.
"""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor, as_completed
from dataclasses import dataclass
from typing import Any

from . import _native, sim
from .interrupt import Interrupted


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

    Ctrl-C raises :class:`~xco.interrupt.Interrupted` whose ``rows`` are the
    finished points' rows in point order, ``indices`` their positions in
    ``points``, ``done`` and ``total`` their number and the points'.
    """
    jobs = jobs or default_jobs()
    t0 = time.monotonic()
    control = _native.RunControl()

    def one(p: Point) -> dict[str, Any] | None:
        if control.stopped:
            return None  # the sweep was interrupted before this point started
        start = time.monotonic()
        raw = sim.run_raw(p.scenario, p.seed, control=control)
        if raw["interrupted"]:
            return None
        row = {**p.labels, **measure(raw)}
        if log_runs:
            shown = ", ".join(f"{k} {v}" for k, v in p.labels.items() if not k.startswith("_"))
            row["_wall_s"] = time.monotonic() - start
            row["_label"] = shown
        return row

    from tqdm import tqdm  # here, not at import: `xco list` and `xco sim check` need no progress bar

    rows: list[dict[str, Any] | None] = [None] * len(points)
    show = sys.stderr.isatty() if progress is None else progress
    with (
        ThreadPoolExecutor(max_workers=jobs) as pool,
        tqdm(total=len(points), desc=desc, unit="run", disable=not show, file=sys.stderr) as bar,
    ):
        futures: dict[Future, int] = {}
        try:
            for i, p in enumerate(points):
                futures[pool.submit(one, p)] = i
            for done, fut in enumerate(as_completed(futures), 1):
                row = fut.result()
                if row is None:
                    continue  # stopped: an interrupt is on its way to this thread
                if log_runs:
                    bar.write(
                        f"{desc}: run {done}/{len(points)} finished ({row.pop('_label')}) in"
                        f" {row.pop('_wall_s'):.1f} s; {time.monotonic() - t0:.0f} s since the start",
                        file=sys.stderr,
                    )
                rows[futures[fut]] = row
                bar.update(1)
        except KeyboardInterrupt:
            # stop the running points, start no other; the pool's exit waits
            # for the running ones, which return within a few thousand events
            control.stop()
            pool.shutdown(wait=True, cancel_futures=True)
            for fut, i in futures.items():
                if fut.done() and not fut.cancelled() and fut.exception() is None and rows[i] is None:
                    row = fut.result()
                    if row is not None:
                        row.pop("_label", None)
                        row.pop("_wall_s", None)
                        rows[i] = row
            indices = [i for i, r in enumerate(rows) if r is not None]
            raise Interrupted(
                f"{desc}: interrupted",
                rows=[rows[i] for i in indices],
                indices=indices,
                done=len(indices),
                total=len(points),
            ) from None
    return [r for r in rows if r is not None]


def load(out: str | os.PathLike[str]) -> Any:
    """The results of campaign directory ``out`` (``xco sweep ... --out DIR``) as pandas DataFrames:
    a dict-like :class:`xco.campaign.Results` by name (``runs``, ``summary``, ``flows``, ``apps``,
    ...), also as attributes (``load(d).summary``); docs/sweeps.md says what each holds."""
    from .campaign.gather import load as load_campaign

    return load_campaign(out)
