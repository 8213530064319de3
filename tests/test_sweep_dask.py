"""`xco sweep --scheduler`: a real Dask scheduler and two workers, each its own process on loopback."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from test_sweep_campaign import campaign, parquet_bytes, xco


def _start(args: list[str], log: Path) -> subprocess.Popen:
    with open(log, "wb") as f:
        return subprocess.Popen([sys.executable, "-m", *args], stdout=f, stderr=subprocess.STDOUT)


@pytest.fixture
def dask_cluster(tmp_path):
    """A scheduler and two single-thread workers (no nanny: one process each); every process is
    ended when the test ends, also on failure. Yields (address, [processes])."""
    procs: list[subprocess.Popen] = []
    sched_file = tmp_path / "scheduler.json"
    try:
        procs.append(
            _start(
                [
                    "distributed.cli.dask_scheduler",
                    "--host", "127.0.0.1", "--port", "0", "--no-dashboard",
                    "--scheduler-file", str(sched_file),
                ],
                tmp_path / "scheduler.log",
            )
        )  # fmt: skip
        deadline = time.monotonic() + 60
        while not sched_file.is_file() and time.monotonic() < deadline:
            assert procs[0].poll() is None, (tmp_path / "scheduler.log").read_text()
            time.sleep(0.1)
        address = json.loads(sched_file.read_text())["address"]
        assert address.startswith("tcp://127.0.0.1:")
        for i in range(2):
            procs.append(
                _start(
                    [
                        "distributed.cli.dask_worker", address,
                        "--host", "127.0.0.1", "--nthreads", "1", "--no-nanny", "--no-dashboard",
                        "--name", f"w{i}",
                    ],
                    tmp_path / f"worker{i}.log",
                )
            )  # fmt: skip
        from distributed import Client

        with Client(address, timeout=30) as c:
            c.wait_for_workers(2, timeout=60)  # both joined before the sweep starts
        yield address, procs
    finally:
        # the workers first (each says goodbye to the scheduler), then the scheduler
        for group in (procs[1:], procs[:1]):
            for p in group:
                if p.poll() is None:
                    p.terminate()
            for p in group:
                try:
                    p.wait(timeout=10)
                except subprocess.TimeoutExpired:
                    p.kill()
                    p.wait()


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


def test_sweep_runs_on_a_scheduler_and_two_worker_processes(tmp_path, dask_cluster):
    address, procs = dask_cluster
    g = campaign(tmp_path / "g", '"topology.switch_buffer" = ["30KB", "60KB", "-5KB"]')
    remote, local = tmp_path / "remote", tmp_path / "local"
    r = xco("sweep", str(g), "--out", str(remote), "--seeds", "2", "--scheduler", address)
    assert r.returncode == 0, r.stderr
    assert f"on Dask scheduler {address} (2 workers, 2 threads)" in r.stderr, r.stderr
    assert "6 runs (4 ok, 2 failed)" in r.stdout  # the bad point is an error row there too

    from distributed import Client

    with Client(address, timeout=10) as c:
        ran = c.run_on_scheduler(
            lambda dask_scheduler: {k: dict(v.state_counts) for k, v in dask_scheduler.task_prefixes.items()}
        )
        worked = c.run(lambda dask_worker: dask_worker.state.transition_counter)
    assert ran["run_point"]["memory"] == 6  # every run was a task of this scheduler
    assert len(worked) == 2 and all(n > 0 for n in worked.values())  # both workers ran some

    # the engine does not change a byte: the same campaign on the local cluster
    r = xco("sweep", str(g), "--out", str(local), "--seeds", "2", "--jobs", "1")
    assert r.returncode == 0, r.stderr
    assert parquet_bytes(remote) == parquet_bytes(local)


def test_the_fixture_ends_every_process_it_started_also_on_failure(tmp_path):
    gen = dask_cluster.__wrapped__(tmp_path)
    address, procs = next(gen)
    pids = [p.pid for p in procs]
    assert all(_alive(pid) for pid in pids)
    with pytest.raises(RuntimeError):
        gen.throw(RuntimeError("a test failed"))  # as pytest does when the test body raises
    assert not any(p.poll() is None for p in procs)
    assert not any(_alive(pid) for pid in pids)


def test_unreachable_scheduler_is_a_one_line_error(tmp_path):
    g = campaign(tmp_path / "g", '"tcp.rto_min_ms" = [1]')
    r = xco("sweep", str(g), "--out", str(tmp_path / "o"), "--scheduler", "tcp://127.0.0.1:9")
    assert r.returncode == 2, r.stderr
    assert "Traceback" not in r.stderr and "--scheduler tcp://127.0.0.1:9: cannot reach it" in r.stderr
