"""What a Dask worker runs: one scenario text with one seed, and a way to stop it.

Only this module's functions travel to the workers (by name: a worker needs
``pip install xco``, nothing of the client). A run's tables come back as the
simulator's CSV text; pcaps are left out (a campaign gathers tables). A
scenario the simulator refuses, or any other failure inside the run, comes
back as an ``error`` value, not an exception: it becomes one error row.
"""

from __future__ import annotations

import threading
from typing import Any

_running: set[Any] = set()
_lock = threading.Lock()


def run_point(text: str, seed: int) -> dict[str, Any]:
    """Run scenario ``text`` with ``seed``: ``{"tables": {name: csv}, "meta": json, "warnings": [...]}``,
    ``{"error": one line}``, or ``{"interrupted": True}`` when :func:`stop_all` stopped it."""
    from .. import _native, sim
    from ..scenario import ScenarioError

    control = _native.RunControl()
    with _lock:
        _running.add(control)
    try:
        raw = sim.run_raw(text, seed, control=control)
    except ScenarioError as e:
        return {"error": "scenario error: " + " ".join(str(e).splitlines())}
    except BaseException as e:  # a panic in the core is a BaseException (pyo3)
        if isinstance(e, (KeyboardInterrupt, SystemExit)):
            raise
        return {"error": f"{type(e).__name__}: " + " ".join(str(e).splitlines())}
    finally:
        with _lock:
            _running.discard(control)
    if raw["interrupted"]:
        return {"interrupted": True}
    tables = {name: raw[name] for name in sim.TABLES}
    for name, text_ in raw.get("app_tables", []):
        tables[name.removesuffix(".csv")] = text_
    return {"tables": tables, "meta": raw["meta"], "warnings": list(raw["warnings"])}


def stop_all() -> int:
    """Stop every run in progress in this process (each returns within a few thousand events);
    returns how many were stopped."""
    with _lock:
        running = list(_running)
    for c in running:
        c.stop()
    return len(running)


def version() -> str:
    """The xco version this worker runs."""
    from .. import __version__

    return __version__
