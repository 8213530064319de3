"""The ns-3 differential check's xco half and its argument checks (ns-3 itself
is a separate, slow install: docs/ns3-differential.md; its runs are not in CI).

The xco side must run workload (a) exactly: the script builds its scenario
from the settings written once and checks it against the simulator's own
workload (a) text before running, so a drift in either fails here."""

import subprocess
import sys
from pathlib import Path

import pandas as pd

SCRIPT = Path(__file__).resolve().parents[1] / "scripts" / "ns3_differential.py"


def run(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(SCRIPT), *args], capture_output=True, text=True, timeout=300)


def test_the_xco_half_runs_workload_a_and_marks_its_collapse(tmp_path):
    r = run("--only", "xco", "--points", "2,32", "--rounds", "3", "--out", str(tmp_path))
    assert r.returncode == 0, r.stderr
    t = pd.read_csv(tmp_path / "ns3-differential.csv")
    assert list(t["n"]) == [2, 32]
    g = dict(zip(t["n"], t["xco_goodput_mbps"], strict=True))
    assert g[32] < 0.5 * g[2], g  # workload (a) collapses by N = 32 (docs/ns3-differential.md)
    assert "xco at N = 32" in r.stdout


def test_bad_arguments_are_named_with_exit_code_2():
    for args, said in (
        (["--rounds", "x"], "--rounds takes a whole number"),
        (["--rounds", "0"], "--rounds must be 1 to 10000"),
        (["--jobs", "99"], "--jobs must be 1 to 64"),
        (["--only", "xco", "--ns3-variant", "loss-exit-bytes"], "--ns3-variant changes ns-3 only"),
    ):
        r = run(*args)
        assert r.returncode == 2 and said in r.stderr, (args, r.returncode, r.stderr)
        assert "Traceback" not in r.stderr
