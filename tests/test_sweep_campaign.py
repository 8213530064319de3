"""`xco sweep`: grid input, the campaign store, resume after Ctrl-C, seeds, error rows, Parquet."""

from __future__ import annotations

import signal
import subprocess
import sys
import time
from pathlib import Path

import pandas as pd
import pytest

from xco import sweep
from xco.campaign import grid as gridmod
from xco.campaign.stats import mean_ci95, t975

TINY = """\
name = "tiny-incast"
[topology]
kind = "star"
hosts = 5
host_rate = "1Gbps"
link_delay_us = 10
switch_buffer = "30KB"
[tcp]
rto_min_ms = 10
[[apps]]
kind = "incast"
client = "h0"
servers = ["h1", "h2", "h3", "h4"]
sru = "20KB"
request = "64B"
rounds = ROUNDS
start_delay_max_us = 50   # the seed draws each server's start delay
[output]
timeseries_bin_us = 1000
"""


def xco(*args: str, cwd: Path | None = None, timeout: float = 120) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "xco.cli", *args], capture_output=True, text=True, cwd=cwd, timeout=timeout
    )


def campaign(tmp: Path, vary: str, rounds: int = 3, top: str = "") -> Path:
    """A base scenario and a grid file over it in ``tmp``; returns the grid's path."""
    tmp.mkdir(parents=True, exist_ok=True)
    text = TINY.replace("ROUNDS", str(rounds))
    if rounds > 100:  # long runs: no timeseries (80,000 bins)
        text = text.replace("timeseries_bin_us = 1000", "timeseries_bin_us = 0")
    (tmp / "base.toml").write_text(text)
    g = tmp / "grid.toml"
    g.write_text(f'base = "base.toml"\n{top}\n[vary]\n{vary}\n')
    return g


def parquet_bytes(d: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(d.glob("*.parquet"))}


def stored(d: Path) -> dict[str, tuple[int, int]]:
    """Store entries with a finished run: key -> (inode, mtime_ns) of its meta.json."""
    out = {}
    for m in (d / "store").glob("*/*/meta.json"):
        if m.parent.name.startswith("."):
            continue  # an entry being written
        st = m.stat()
        out[m.parent.name] = (st.st_ino, st.st_mtime_ns)
    return out


GRID_ERRORS = [
    ('"topology.bogus" = [1, 2]', "", "vary.topology.bogus"),
    ('"apps[0].srux" = [1]', "", "vary.apps[0].srux"),
    ('"tcp.rto_min_ms" = []', "", "vary.tcp.rto_min_ms"),
    ('"tcp.rto_min_ms" = { from = 1, to = 10, step = 0 }', "", "vary.tcp.rto_min_ms.step"),
    ('"tcp.rto_min_ms" = { from = 10, to = 1, step = 1 }', "", "vary.tcp.rto_min_ms.to"),
    ('"tcp.rto_min_ms" = { from = 1, to = 10 }', "", "vary.tcp.rto_min_ms"),
    ('"tcp.rto_min_ms" = { from = "a", to = 10, step = 1 }', "", "vary.tcp.rto_min_ms.from"),
    ('"tcp.rto_min_ms" = { from = 1, to = 1e9, step = 1 }', "", "vary.tcp.rto_min_ms"),
    ('"apps[3].rounds" = [1]', "", "vary.apps[3].rounds"),
    ('"tcp.rto_min_ms" = [1]', "seeds = 0", "seeds"),
    ('"tcp.rto_min_ms" = [1]', "bogus = 1", "bogus"),
    ('"run.seed" = [1, 2]', "", "vary.run.seed"),
]


@pytest.mark.parametrize("vary,top,field", GRID_ERRORS)
def test_bad_grid_is_one_line_naming_the_field(tmp_path, vary, top, field):
    g = campaign(tmp_path, vary, top=top)
    r = xco("sweep", str(g), "--out", str(tmp_path / "out"))
    assert r.returncode == 2, r.stderr
    assert "Traceback" not in r.stderr
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("xco: error: grid "), r.stderr
    assert f" {field}: " in lines[0], lines[0]
    assert not (tmp_path / "out").exists()  # refused before any work


def test_missing_base_scenario(tmp_path):
    g = tmp_path / "grid.toml"
    g.write_text('[vary]\n"tcp.rto_min_ms" = [1]\n')
    r = xco("sweep", str(g), "--out", str(tmp_path / "out"))
    assert r.returncode == 2 and "Traceback" not in r.stderr
    assert r.stderr.count("\n") == 1 and " base: missing" in r.stderr
    g.write_text('base = "nope.toml"\n[vary]\n"tcp.rto_min_ms" = [1]\n')
    r = xco("sweep", str(g), "--out", str(tmp_path / "out"))
    assert r.returncode == 2 and r.stderr.count("\n") == 1 and " base: scenario file" in r.stderr
    r = xco("sweep", str(tmp_path / "absent.toml"), "--out", str(tmp_path / "out"))
    assert r.returncode == 2 and r.stderr.count("\n") == 1 and "not found" in r.stderr


def test_out_and_resume_misuse(tmp_path):
    g = campaign(tmp_path / "g", '"tcp.rto_min_ms" = [1]')
    other = tmp_path / "other"
    other.mkdir()
    (other / "x.txt").write_text("mine")
    for args in (
        ("sweep", str(g), "--out", str(other)),  # a directory of other files is never written into
        ("sweep", "--resume", "--out", str(tmp_path / "none")),  # nothing to resume
        ("sweep", "--out", str(tmp_path / "none")),  # no grid, no --resume
        ("sweep", str(g), "--out", str(tmp_path / "x"), "--seeds", "0"),
    ):
        r = xco(*args)
        assert r.returncode == 2 and r.stderr.count("\n") == 1 and "Traceback" not in r.stderr, (
            args,
            r.stderr,
        )
    assert [p.name for p in other.iterdir()] == ["x.txt"]


def test_ranges_expand_inclusively_with_units():
    assert gridmod.expand_range("k", {"from": 8, "to": 24, "step": 8}) == [8, 16, 24]
    assert gridmod.expand_range("k", {"from": 0.1, "to": 0.3, "step": 0.1}) == [0.1, 0.2, 0.3]
    assert gridmod.expand_range("k", {"from": 32, "to": 64, "step": 16, "unit": "KB"}) == [
        "32KB",
        "48KB",
        "64KB",
    ]


def test_confidence_interval_uses_students_t():
    assert t975(1) == pytest.approx(12.7062, abs=1e-4)
    assert t975(40) == pytest.approx(2.021075, abs=1e-5)  # beyond the table
    n, mean, std, half = mean_ci95([1.0, 2.0, 3.0, float("nan")])
    assert (n, mean, std) == (3, 2.0, 1.0)
    assert half == pytest.approx(4.302653 / 3**0.5)
    assert mean_ci95([5.0])[1] == 5.0 and mean_ci95([5.0])[3] != mean_ci95([5.0])[3]  # NaN


def test_seeds_differ_same_seed_identical_and_bytes_reproducible(tmp_path):
    g = campaign(tmp_path / "g", '"topology.switch_buffer" = ["30KB", "60KB"]')
    a, b = tmp_path / "a", tmp_path / "b"
    for d in (a, b):
        r = xco("sweep", str(g), "--out", str(d), "--seeds", "2", "--jobs", "2")
        assert r.returncode == 0, r.stderr
    assert parquet_bytes(a) == parquet_bytes(b)  # same grid + seeds: byte-identical Parquet
    res = sweep.load(a)
    for name, df in res.items():  # the seed and the point's parameters in every output
        assert {"point", "topology.switch_buffer"} <= set(df.columns), name
        assert "seed" in df.columns or name == "summary", name
    flows = res.flows.drop(columns="seed")
    one = flows[(res.flows["seed"] == 1) & (res.flows["point"] == 0)].reset_index(drop=True)
    two = flows[(res.flows["seed"] == 2) & (res.flows["point"] == 0)].reset_index(drop=True)
    assert not one.equals(two)  # the seed draws the servers' start delays
    again = sweep.load(b).flows.drop(columns="seed")
    assert one.equals(
        again[(sweep.load(b).flows["seed"] == 1) & (again["point"] == 0)].reset_index(drop=True)
    )
    # the summary is the mean and interval of the apps rows over the seeds
    s = res.summary.set_index(["point", "app", "metric"]).loc[(0, 0, "goodput_mbps")]
    v = res.apps[(res.apps.point == 0) & (res.apps.app == 0) & (res.apps.metric == "goodput_mbps")]["value"]
    assert s["n"] == 2 and s["seeds"] == "1,2"
    assert s["mean"] == pytest.approx(v.mean())
    assert s["ci95_high"] - s["mean"] == pytest.approx(12.706205 * v.std() / 2**0.5)
    # a re-run finds everything in the store and runs nothing
    before = stored(a)
    r = xco("sweep", str(g), "--out", str(a), "--seeds", "2")
    assert r.returncode == 0 and "all 4 in the store, none to run" in r.stderr, r.stderr
    assert stored(a) == before and parquet_bytes(a) == parquet_bytes(b)


def test_bad_point_is_an_error_row(tmp_path):
    g = campaign(tmp_path / "g", '"topology.switch_buffer" = ["30KB", "-5KB", "60KB"]')
    out = tmp_path / "out"
    r = xco("sweep", str(g), "--out", str(out), "--seeds", "2", "--jobs", "2")
    assert r.returncode == 0, r.stderr
    assert "6 runs (4 ok, 2 failed)" in r.stdout
    assert "point 1 seed 1: scenario error: topology.switch_buffer" in r.stderr
    res = sweep.load(out)
    runs = res.runs.set_index(["point", "seed"])
    assert list(runs["status"]) == ["ok", "ok", "error", "error", "ok", "ok"]
    assert runs.loc[(1, 1), "error"].startswith("scenario error: topology.switch_buffer")
    assert set(res.flows["point"]) == {0, 2} and set(res.summary["point"]) == {0, 2}
    # an error is a result: a re-run does not run it again; --retry-errors does
    r = xco("sweep", str(g), "--out", str(out), "--seeds", "2")
    assert "all 6 in the store" in r.stderr, r.stderr
    r = xco("sweep", str(g), "--out", str(out), "--seeds", "2", "--retry-errors")
    assert "4 in the store, 2 to run" in r.stderr, r.stderr


def test_interrupted_sweep_resumes_only_the_missing_runs(tmp_path):
    # 8 runs of ~0.15 s each on 2 threads: Ctrl-C lands half-way
    g = campaign(tmp_path / "g", '"topology.switch_buffer" = ["20KB", "30KB", "40KB", "50KB"]', rounds=10000)
    whole, cut = tmp_path / "whole", tmp_path / "cut"
    r = xco("sweep", str(g), "--out", str(whole), "--seeds", "2", "--jobs", "2")
    assert r.returncode == 0, r.stderr

    p = subprocess.Popen(
        [sys.executable, "-m", "xco.cli", "sweep", str(g), "--out", str(cut), "--seeds", "2", "--jobs", "2"],
        stderr=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        deadline = time.monotonic() + 60
        while len(stored(cut)) < 2 and time.monotonic() < deadline and p.poll() is None:
            time.sleep(0.01)
        t0 = time.monotonic()
        p.send_signal(signal.SIGINT)
        _, err = p.communicate(timeout=30)
        stop_s = time.monotonic() - t0
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()
    assert p.returncode == 130, err
    assert stop_s < 2.0, f"took {stop_s:.2f} s to stop"  # 0.6-0.8 s measured; slack for a busy machine
    done = stored(cut)
    assert 2 <= len(done) < 8, len(done)
    assert f"{len(done)} of 8 runs are in" in err and "Traceback" not in err, err
    assert not list(cut.glob("*.parquet"))  # no Parquet of a partial campaign

    r = xco("sweep", "--resume", "--out", str(cut))
    assert r.returncode == 0, r.stderr
    assert f"{len(done)} in the store, {8 - len(done)} to run" in r.stderr, r.stderr
    after = stored(cut)
    assert {k: after[k] for k in done} == done  # the finished runs were not run again
    assert len(after) == 8
    assert parquet_bytes(cut) == parquet_bytes(whole)


def test_resume_refuses_a_changed_grid(tmp_path):
    g = campaign(tmp_path / "g", '"tcp.rto_min_ms" = [1, 2]')
    out = tmp_path / "out"
    assert xco("sweep", str(g), "--out", str(out)).returncode == 0
    g.write_text(g.read_text().replace("[1, 2]", "[1, 3]"))
    r = xco("sweep", str(g), "--out", str(out), "--resume")
    assert r.returncode == 2 and "the grid differs" in r.stderr
    r = xco("sweep", str(g), "--out", str(out))  # without --resume: the new grid, the old run reused
    assert r.returncode == 0 and "1 in the store, 1 to run" in r.stderr, r.stderr
    assert list(sweep.load(out).runs["tcp.rto_min_ms"]) == [1, 3]


def test_example_grid_runs(tmp_path):
    root = Path(__file__).resolve().parent.parent
    r = xco("sweep", str(root / "examples/incast-sweep.toml"), "--out", str(tmp_path / "c"), "--seeds", "1")
    assert r.returncode == 0, r.stderr
    s = sweep.load(tmp_path / "c").summary
    g = s[s.metric == "goodput_mbps"].set_index(["tcp.rto_min_ms", "topology.hosts_a"])["mean"]
    assert g.loc[(200, 48)] < 0.1 * g.loc[(200, 16)]  # the incast collapse
    assert g.loc[(1, 48)] > 10 * g.loc[(200, 48)]  # and RTO_min's remedy


def test_help_imports_no_dataframes_or_dask():
    code = (
        "import contextlib, io, sys, xco.cli\n"
        "for argv in (['--help'], ['sweep', '--help']):\n"
        "    with contextlib.redirect_stdout(io.StringIO()), contextlib.suppress(SystemExit):\n"
        "        xco.cli.main(argv)\n"
        "bad = [m for m in ('dask', 'distributed', 'pandas', 'pyarrow') if m in sys.modules]\n"
        "assert not bad, bad\n"
    )
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr


def test_load_of_a_directory_without_results(tmp_path):
    with pytest.raises(FileNotFoundError):
        sweep.load(tmp_path)
    assert isinstance(pd.DataFrame(), pd.DataFrame)
