"""Ctrl-C and SIGTERM stop `xco sim run`, `xco reproduce` and sweeps within a
second: what finished is written, marked interrupted, and the exit code is 130."""

import json
import os
import re
import signal
import subprocess
import sys
import threading
import time

import pytest

import xco.sim
from xco.interrupt import Interrupted

# a k = 4 fat-tree under TCP for ten simulated minutes: many minutes of wall time
LONG = """
name = "long"
[run]
duration_ms = 600000
[topology]
kind = "fat_tree"
k = 4
host_rate = "10Gbps"
link_delay_us = 1
[[apps]]
kind = "bulk"
src = "h0..h7"
dst = "h15"
[output]
timeseries_bin_us = 100000
"""


def _sigint_default() -> None:
    signal.signal(signal.SIGINT, signal.SIG_DFL)


class Child:
    """`python -m xco.cli ARGS` in a session of its own, its stderr read as it comes."""

    def __init__(self, *args: str, cwd=None):
        self.p = subprocess.Popen(
            [sys.executable, "-m", "xco.cli", *args],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            cwd=cwd,
            start_new_session=True,
            # as from a terminal: a shell starts background jobs with SIGINT
            # ignored, and a child inherits that (then Python installs no
            # Ctrl-C handler), so a suite run in the background would fail here
            preexec_fn=_sigint_default,
        )
        self.err = ""
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()

    def _read(self):
        while ch := self.p.stderr.read(1):
            self.err += ch

    def wait_for(self, pattern: str, timeout: float = 60.0) -> re.Match:
        """Wait until stderr matches ``pattern`` (the child shows it has started)."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            m = re.search(pattern, self.err)
            if m:
                return m
            assert self.p.poll() is None, f"exited early ({self.p.returncode}): {self.err}"
            time.sleep(0.02)
        pytest.fail(f"no {pattern!r} on stderr within {timeout} s: {self.err}")

    def signal_and_wait(self, sig: int) -> float:
        """Send ``sig``; return the seconds until the child exited."""
        t0 = time.monotonic()
        self.p.send_signal(sig)
        try:
            self.p.wait(timeout=10)
        except subprocess.TimeoutExpired:
            os.killpg(self.p.pid, signal.SIGKILL)
            pytest.fail(f"still running 10 s after the signal: {self.err}")
        took = time.monotonic() - t0
        self.reader.join(timeout=5)
        return took

    def no_process_left(self) -> bool:
        """True if nothing of the child's session (it leads its process group) is alive."""
        try:
            os.killpg(self.p.pid, 0)
        except ProcessLookupError:
            return True
        return False


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM], ids=["SIGINT", "SIGTERM"])
def test_a_signal_stops_sim_run_writes_what_was_simulated_and_exits_130(tmp_path, sig):
    (tmp_path / "long.toml").write_text(LONG)
    out = tmp_path / "out"
    c = Child("sim", "run", "long.toml", "--out", str(out), "--progress", cwd=tmp_path)
    # the first progress line comes as soon as the run loop has started
    c.wait_for(r"long\.toml: simulated [0-9.e-]+ of 600 s")
    time.sleep(0.3)
    took = c.signal_and_wait(sig)
    assert c.p.returncode == 130, c.err
    assert took < 2.0, f"exit {took:.2f} s after {sig.name}"
    assert c.no_process_left()
    said = rf"interrupted \({sig.name}\) at [0-9.]+ s simulated .* partial results are in"
    assert re.search(said, c.err), c.err
    meta = json.loads((out / "meta.json").read_text())
    assert meta["interrupted"] is True and meta["stop_reason"] == "interrupted"
    assert 0 < meta["sim_end_s"] < 600
    flows = (out / "flows.csv").read_text().splitlines()
    assert len(flows) > 8 and (out / "timeseries.csv").exists()
    # progress is on stderr only, never in an output
    assert "events/s" not in (out / "timeseries.csv").read_text()
    assert c.p.stdout.read() == ""


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM], ids=["SIGINT", "SIGTERM"])
def test_a_signal_stops_a_reproduce_sweep_and_writes_the_finished_points(tmp_path, sig):
    # pdn-goodput --full: 1192 runs, a minute or more on two cores
    c = Child("reproduce", "pdn-goodput", "--full", "--out", str(tmp_path), "--progress", "--jobs", "2")
    c.wait_for(r"pdn incast: .*\b([1-9]\d*)/1192")  # at least one run finished
    took = c.signal_and_wait(sig)
    assert c.p.returncode == 130, c.err
    assert took < 2.0, f"exit {took:.2f} s after {sig.name}"
    assert c.no_process_left()
    m = re.search(rf"pdn-goodput interrupted \({sig.name}\): (\d+) of 1192 runs finished", c.err)
    assert m, c.err
    done = int(m.group(1))
    assert 1 <= done < 1192
    meta = json.loads((tmp_path / "pdn-goodput.meta.json").read_text())
    assert meta["interrupted"] is True
    assert (meta["points_finished"], meta["points_total"]) == (done, 1192)
    assert len(meta["points"]) == done
    rows = (tmp_path / "pdn-goodput.csv").read_text().splitlines()
    assert rows[0].startswith("series,n,goodput_mbps") and len(rows) == done + 1
    # no figure and no summary judge a partial sweep
    assert not (tmp_path / "pdn-goodput.png").exists() and not (tmp_path / "pdn-goodput.txt").exists()


def test_quiet_and_a_pipe_show_no_progress_and_a_finished_run_has_no_marker(tmp_path, cli):
    short = LONG.replace("duration_ms = 600000", "duration_ms = 20")
    (tmp_path / "s.toml").write_text(short)
    for extra in ([], ["--quiet"], ["--progress", "--quiet"]):
        r = cli("sim", "run", str(tmp_path / "s.toml"), "--out", str(tmp_path / "o"), *extra)
        assert r.returncode == 0, r.stderr
        assert "simulated" not in r.stderr and r.stderr == "", r.stderr
        meta = json.loads((tmp_path / "o" / "meta.json").read_text())
        assert "interrupted" not in meta and meta["stop_reason"] == "duration"
    # a run long enough to be watched (a quarter of a second) shows its progress when asked
    (tmp_path / "w.toml").write_text(LONG.replace("duration_ms = 600000", "duration_ms = 500"))
    r = cli("sim", "run", str(tmp_path / "w.toml"), "--out", str(tmp_path / "o"), "--progress")
    assert r.returncode == 0 and re.search(r"w\.toml: simulated [0-9.e-]+ of 0\.5 s", r.stderr), r.stderr


@pytest.fixture
def python_ctrl_c():
    """Python's own Ctrl-C handler for the test, also when the suite was started with
    SIGINT ignored (a shell's background job); the previous disposition after it."""
    before = signal.signal(signal.SIGINT, signal.default_int_handler)
    yield
    signal.signal(signal.SIGINT, before)


def test_ctrl_c_in_python_stops_a_run_and_hands_back_what_it_simulated(python_ctrl_c):
    def interrupt_soon():
        time.sleep(0.5)
        os.kill(os.getpid(), signal.SIGINT)

    threading.Thread(target=interrupt_soon, daemon=True).start()
    t0 = time.monotonic()
    with pytest.raises(Interrupted) as e:
        xco.sim.run(LONG)
    assert time.monotonic() - t0 < 2.0
    raw = e.value.raw
    assert raw["interrupted"] and 0 < raw["sim_end_s"] < 600
    r = xco.sim.result_of(raw)
    assert r.meta["interrupted"] is True and len(r.flows) > 8
    assert isinstance(e.value, KeyboardInterrupt), "code that catches Ctrl-C catches this too"


def test_a_signal_stops_an_experiment_sweep_and_writes_its_finished_rows(tmp_path):
    # xco-fattree (quick): 10 points of a few seconds each on two cores
    c = Child("reproduce", "xco-fattree", "--out", str(tmp_path), "--progress", "--jobs", "2")
    c.wait_for(r"xco-fattree: .*\b([1-9]\d*)/10\b")
    took = c.signal_and_wait(signal.SIGTERM)
    assert c.p.returncode == 130, c.err
    assert took < 2.0, f"exit {took:.2f} s after SIGTERM"
    assert c.no_process_left()
    m = re.search(r"xco-fattree interrupted \(SIGTERM\): (\d+) of 10 runs finished", c.err)
    assert m, c.err
    done = int(m.group(1))
    meta = json.loads((tmp_path / "xco-fattree.meta.json").read_text())
    assert meta["interrupted"] is True and meta["points_finished"] == done and len(meta["points"]) == done
    rows = (tmp_path / "xco-fattree.csv").read_text().splitlines()
    assert rows[0].startswith("series,k,") and len(rows) >= done + 1
    assert not (tmp_path / "xco-fattree.png").exists()
