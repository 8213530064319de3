"""Run a campaign's missing runs on Dask distributed and put each result in the store.

By default a local cluster in this process: one Dask worker with one thread
per job (the simulator releases the GIL, so J threads use J cores, and
there is no worker process to leave behind). With a scheduler address, the
runs go to that cluster; its workers need only ``pip install xco`` (the
task is :func:`xco.campaign.worker.run_point`, sent by name). At most
``window`` runs are submitted at a time; results come back to this process,
which alone writes the store. Ctrl-C (or SIGTERM) cancels what has not
started, stops the running runs through :func:`~xco.campaign.worker.stop_all`
on every worker, and raises :class:`~xco.interrupt.Interrupted`: every run
that finished is already in the store.
"""

from __future__ import annotations

import logging
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ..interrupt import Interrupted
from . import worker
from .store import Store


class EngineError(Exception):
    """The cluster cannot be reached or cannot run xco (a usage error: exit 2)."""


@dataclass
class Run:
    """One point x seed to run."""

    key: str
    text: str
    seed: int
    point: int


def _quiet_dask() -> None:
    for name in ("distributed", "tornado", "asyncio"):
        logging.getLogger(name).setLevel(logging.CRITICAL)


def _probe(scheduler: str) -> None:
    """Fail at once on a tcp:// address where nothing listens (Dask would retry for its timeout)."""
    import socket
    from urllib.parse import urlsplit

    if not scheduler.startswith("tcp://"):
        return  # tls://, ucx://, ...: Dask's own connection says what is wrong
    try:
        u = urlsplit(scheduler)
        host, port = u.hostname, u.port
    except ValueError:
        raise EngineError(f"--scheduler {scheduler}: not an address such as tcp://HOST:8786") from None
    if not host or not port:
        raise EngineError(f"--scheduler {scheduler}: not an address such as tcp://HOST:8786")
    try:
        socket.create_connection((host, port), timeout=5).close()
    except OSError as e:
        raise EngineError(f"--scheduler {scheduler}: cannot reach it ({e.strerror or e})") from None


class Cluster:
    """A Dask client on a local cluster (``scheduler`` None) or on an existing scheduler."""

    def __init__(self, jobs: int, scheduler: str | None, wait_s: float = 30.0) -> None:
        import dask
        from distributed import Client, LocalCluster

        _quiet_dask()
        dask.config.set({"distributed.admin.tick.limit": "1h"})  # a long run holds a thread on purpose
        self.local = None
        if scheduler is None:
            self.local = LocalCluster(
                n_workers=1,
                threads_per_worker=jobs,
                processes=False,
                dashboard_address=None,
                silence_logs=logging.CRITICAL,
            )
            self.client = Client(self.local)
            self.where = f"a local Dask cluster ({jobs} thread{'s' if jobs > 1 else ''})"
            return
        _probe(scheduler)
        try:
            self.client = Client(scheduler, timeout=5)
        except (OSError, TimeoutError) as e:
            raise EngineError(f"--scheduler {scheduler}: cannot reach it ({e})") from None
        try:
            self.client.wait_for_workers(1, timeout=wait_s)
        except TimeoutError:
            self.client.close()
            raise EngineError(f"--scheduler {scheduler}: no worker joined within {wait_s:.0f} s") from None
        try:
            versions = self.client.run(worker.version)
        except Exception as e:
            self.client.close()
            raise EngineError(
                f"--scheduler {scheduler}: a worker cannot run xco ({type(e).__name__}: {e}); "
                "workers need `pip install xco`"
            ) from None
        from .. import __version__

        other = sorted({v for v in versions.values() if v != __version__})
        if other:
            print(
                f"xco: warning: workers run xco {', '.join(other)}, this client {__version__}",
                file=sys.stderr,
            )
        threads = sum(self.client.nthreads().values())
        self.where = f"Dask scheduler {scheduler} ({len(versions)} workers, {threads} threads)"

    def threads(self) -> int:
        """Worker threads in the cluster now."""
        return sum(self.client.nthreads().values())

    def stop(self) -> None:
        """Stop every run in progress on every worker (they return at their next check)."""
        if self.local is not None:
            worker.stop_all()  # the worker is this process
        else:
            try:
                self.client.run(worker.stop_all, on_error="ignore")
            except Exception:
                pass

    def close(self) -> None:
        """Close the client (and the local cluster)."""
        _quiet_dask()
        try:
            self.client.close(timeout=2)
        except Exception:
            pass
        if self.local is not None:
            try:
                self.local.close(timeout=2)
            except Exception:
                pass


def run(
    runs: list[Run],
    store: Store,
    cluster: Cluster,
    window: int,
    on_done: Callable[[Run, dict[str, Any]], None],
) -> None:
    """Run ``runs`` on ``cluster``, ``window`` at a time, put each result in ``store`` and tell
    ``on_done``. A run lost with its worker is an error entry marked ``retry`` (a later sweep runs
    it again). Ctrl-C raises :class:`~xco.interrupt.Interrupted` (``done``: runs stored)."""
    from distributed import as_completed

    client = cluster.client
    pending = iter(runs)
    inflight: dict[Any, Run] = {}
    ac = as_completed()
    done = 0
    current: Run | None = None  # a result being stored when Ctrl-C came

    def submit_next() -> None:
        r = next(pending, None)
        if r is not None:
            fut = client.submit(worker.run_point, r.text, r.seed, pure=False)
            inflight[fut] = r
            ac.add(fut)

    try:
        for _ in range(max(1, window)):
            submit_next()
        for fut in ac:
            r = current = inflight.pop(fut)
            try:
                result = fut.result()
            except Exception as e:  # the task never ran to its end (its worker died, ...)
                result = {"error": f"{type(e).__name__}: {e}", "retry": True}
            fut.release()
            if result.get("interrupted"):
                continue
            store.put(r.key, r.text, r.seed, result)
            done += 1
            current = None
            on_done(r, result)
            submit_next()
    except KeyboardInterrupt:
        t0 = time.monotonic()
        if current is not None and store.status(current.key) is not None:
            done += 1  # stored, not yet counted
        _quiet_dask()
        cluster.stop()  # first: the running runs end at their next check
        futures = list(inflight)
        if futures and cluster.local is None:  # a local cluster's close drops its tasks
            try:
                client.cancel(futures, force=True)
            except Exception:
                pass
        raise Interrupted(
            f"sweep interrupted ({time.monotonic() - t0:.2f} s to stop)", done=done, total=len(runs)
        ) from None
