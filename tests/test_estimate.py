"""`xco sim check` estimates memory and events; `xco sim run` refuses a run above
--max-memory with exit 2 and caps large outputs at --max-output with a warning."""

import json
import re
from pathlib import Path

import xco.sim
from xco import memory

REPO = Path(__file__).resolve().parent.parent


def test_check_prints_the_memory_by_part_the_events_and_whether_it_fits(cli):
    r = cli("sim", "check", str(REPO / "scenarios/fattree.toml"))
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    assert lines[0].endswith("fattree.toml: ok")
    m = re.match(r"memory: about [0-9.]+ (KiB|MiB|GiB) \((\d+) B\); events: about (\S+)", lines[1])
    assert m, lines[1]
    assert 1e5 < float(m.group(3)) < 1e8
    for part in (
        "ports",
        "packets in flight",
        "TCP endpoints",
        "routing tables",
        "time series",
        "this process",
    ):
        assert any(line.strip().startswith(part) for line in lines), part
    assert "fits in the" in r.stdout and "available" in r.stdout


def test_the_estimate_counts_what_the_scenario_holds():
    e = xco.sim.estimate(REPO / "scenarios/fattree.toml")
    parts = {p["name"]: p for p in e["parts"]}
    assert parts["ports"]["count"] == 96  # a k = 4 fat-tree: 48 links
    assert parts["TCP endpoints"]["count"] == 2 * (8 + 6)  # 8 bulk senders, 6 incast servers
    assert e["bytes"] == sum(p["bytes"] for p in e["parts"])
    assert e["end_is_duration"] and e["end_s"] == 0.05


def test_run_refuses_a_scenario_over_max_memory_naming_estimate_limit_and_what_to_change(tmp_path, cli):
    out = tmp_path / "out"
    r = cli("sim", "run", str(REPO / "scenarios/short-flows.toml"), "--out", str(out), "--max-memory", "20MB")
    assert r.returncode == 2, r.stderr
    assert re.search(r"would need about [0-9.]+ MiB of memory .* more than --max-memory 19\.1 MiB", r.stderr)
    assert "largest part: " in r.stderr and "to make it smaller: " in r.stderr
    assert "xco sim check" in r.stderr and "Traceback" not in r.stderr
    assert not out.exists(), "nothing written"
    r = cli("sim", "run", str(REPO / "scenarios/short-flows.toml"), "--out", str(out), "--max-memory", "lots")
    assert r.returncode == 2 and "--max-memory 'lots'" in r.stderr


def test_the_default_limit_is_what_the_kernel_says_is_available():
    text = Path("/proc/meminfo").read_text()
    kib = int(re.search(r"MemAvailable:\s+(\d+) kB", text).group(1))
    assert abs(memory.available_bytes() - kib * 1024) < 512 * 1024**2  # moments apart
    assert memory.rss_bytes() > 10 * 1024**2  # this Python, with pandas


def test_max_output_cuts_the_time_series_with_one_warning(tmp_path, cli):
    out = tmp_path / "out"
    r = cli(
        "sim", "run", str(REPO / "scenarios/short-flows.toml"), "--out", str(out), "--max-output", "64KiB"
    )
    assert r.returncode == 0, r.stderr
    warnings = [line for line in r.stderr.splitlines() if line.startswith("xco: warning:")]
    assert len(warnings) == 1, r.stderr
    assert "timeseries.csv stopped at its size limit of 64.0 KiB" in warnings[0]
    size = (out / "timeseries.csv").stat().st_size
    assert 60_000 < size <= 64 * 1024
    meta = json.loads((out / "meta.json").read_text())
    assert meta["output_cut"][0]["file"] == "timeseries.csv" and meta["output_cut"][0]["limit_bytes"] == 65536
    r = cli("sim", "run", str(REPO / "scenarios/short-flows.toml"), "--out", str(out), "--max-output", "100B")
    assert r.returncode == 2 and "at least 1KiB" in r.stderr
