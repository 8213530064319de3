"""Ctrl-C and SIGTERM: how a run, a sweep and a reproduction stop.

Python delivers signals to the main thread only, and only between Python
instructions. So the simulator never runs on the main thread when it can be
interrupted: :func:`xco.sim.run_raw` runs it in a helper thread and waits in
short, interruptible steps; a sweep's points run in a thread pool. On
SIGINT (Ctrl-C) or SIGTERM (:func:`install` turns it into the same
``KeyboardInterrupt``) the waiting thread asks the simulator to stop through
a shared ``RunControl``; every run stops within a few thousand events and
hands back what it simulated. The layer that knows what finished raises
:class:`Interrupted` with it, and the command line writes it, marks it
``"interrupted": true`` and exits with 130.
"""

from __future__ import annotations

import signal
from pathlib import Path
from typing import Any

EXIT_CODE = 130
"""Exit status of an interrupted command (128 + SIGINT, as shells report Ctrl-C)."""

_received: list[str] = []


class Interrupted(KeyboardInterrupt):
    """A run, sweep or reproduction stopped by Ctrl-C or SIGTERM, with what finished.

    ``raw``: a single run's native result as far as it got (its ``meta`` says
    ``"interrupted": true``), or None. ``rows``: a sweep's finished points'
    rows, in point order, and ``indices`` their positions among the points.
    ``done`` / ``total``: points finished of all.
    ``files``: what a reproduction wrote of its partial results.
    """

    def __init__(
        self,
        what: str = "interrupted",
        *,
        raw: dict[str, Any] | None = None,
        rows: list[dict[str, Any]] | None = None,
        indices: list[int] | None = None,
        done: int = 0,
        total: int = 0,
        files: list[Path] | None = None,
    ) -> None:
        super().__init__(what)
        self.raw = raw
        self.rows = rows if rows is not None else []
        self.indices = indices if indices is not None else []
        self.done = done
        self.total = total
        self.files = files if files is not None else []


def _on_sigterm(signum: int, frame: Any) -> None:
    _received.append("SIGTERM")
    raise KeyboardInterrupt("SIGTERM")


def install() -> None:
    """Make SIGTERM stop the command as Ctrl-C does (Python's default would end
    the process at once, writing nothing); call from the main thread."""
    signal.signal(signal.SIGTERM, _on_sigterm)


def signal_name() -> str:
    """The signal that interrupted the command: SIGTERM if one arrived, else SIGINT (Ctrl-C)."""
    return _received[-1] if _received else "SIGINT"
