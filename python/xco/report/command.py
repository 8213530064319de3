"""``xco reproduce all``: the command around :func:`.runner.run_all` and :mod:`.render`."""

from __future__ import annotations

import contextlib
import io
import sys
from pathlib import Path

from .. import interrupt
from . import render
from .runner import run_all


def run(
    out: Path, *, full: bool, seed: int, jobs: int | None, real: bool, quiet: bool, seeds: int = 1
) -> int:
    """Run every reproduction into ``out``, write the report, print where; 130 if interrupted."""
    from ..reproduce import REGISTRY

    log = None if quiet else sys.stderr
    # quiet: the reproductions' own progress lines too
    with contextlib.redirect_stderr(io.StringIO()) if quiet else contextlib.nullcontext():
        report = run_all(REGISTRY, out, full=full, seed=seed, seeds=seeds, jobs=jobs, real=real, log=log)
    files = render.write(report)
    print(f"xco reproduce all: {len(report.rows)} reproductions in {report.wall_s:.1f} s; verdicts:")
    render.print_counts(report)
    print("wrote:")
    for f in files:
        print(f"  {f}")
    if report.interrupted:
        print(
            f"xco: reproduce all interrupted ({interrupt.signal_name()}): the report holds what finished "
            "(rows marked 'not run')",
            file=sys.stderr,
        )
        return interrupt.EXIT_CODE
    return 0
