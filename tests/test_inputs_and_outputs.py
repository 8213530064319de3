"""Inputs a careful user trusts and outputs that are only this run's (issue 30, item 7):
a re-used output directory keeps nothing of the previous run and loses nothing else,
an output directory is checked before any work, each reproduction writes only its
own files, `--set key=value` overrides any scenario key; and (item 8) the quick
commands do not import plotting or DataFrame libraries."""

import json
import subprocess
import sys

import pytest
from conftest import REPO

from xco import cli as xco_cli
from xco import sweep
from xco.reproduce import REGISTRY

SCENARIO = """
[topology]
kind = "two_switch"
hosts_a = 4
hosts_b = 1
[[apps]]
kind = "incast"
client = "b0"
servers = "a*"
sru = "10KB"
rounds = 2
[output]
capture = ["sa->sb"]
"""

UNWRITABLE = "/proc/xco-no-such-dir/out"


@pytest.fixture(autouse=True)
def _no_signal_handlers(monkeypatch):
    """cli.main called in this process must not install its Ctrl-C/SIGTERM handlers here."""
    from xco import interrupt

    monkeypatch.setattr(
        interrupt, "install", lambda: None
    )  # procfs takes no new directory, not even from root


def test_a_rerun_into_the_same_out_removes_the_earlier_runs_files_and_nothing_else(tmp_path, cli):
    path = tmp_path / "s.toml"
    path.write_text(SCENARIO)
    out = tmp_path / "out"
    r = cli("sim", "run", str(path), "--out", str(out))
    assert r.returncode == 0, r.stderr
    assert (out / "sa-sb.pcap").is_file()
    (out / "notes.txt").write_text("the user's own\n")
    (out / "old.pcap").write_bytes(b"not listed by any run")
    other = tmp_path / "other.toml"
    other.write_text(SCENARIO.replace('capture = ["sa->sb"]', 'capture = ["b0->sb"]'))
    r = cli("sim", "run", str(other), "--out", str(out))
    assert r.returncode == 0, r.stderr
    assert not (out / "sa-sb.pcap").exists(), "the first run's capture is gone"
    assert (out / "b0-sb.pcap").is_file()
    assert (out / "notes.txt").read_text() == "the user's own\n"
    assert (out / "old.pcap").read_bytes() == b"not listed by any run"
    listed = (out / "xco-outputs.txt").read_text().split("\n")
    assert "b0-sb.pcap" in listed and "meta.json" in listed and "sa-sb.pcap" not in listed


def _must_not_run(*args, **kwargs):
    raise AssertionError("work started before the output directory was checked")


def test_an_out_that_cannot_be_made_is_refused_before_any_work(tmp_path, monkeypatch, capsys):
    from xco import sim
    from xco.campaign import command

    scenario = tmp_path / "s.toml"
    scenario.write_text(SCENARIO)
    monkeypatch.setattr(sim, "run_raw", _must_not_run)
    monkeypatch.setattr(command, "sweep", _must_not_run)
    monkeypatch.setattr(REGISTRY["pdn-goodput"], "run", _must_not_run)
    for argv in (
        ["sim", "run", str(scenario), "--out", UNWRITABLE],
        ["reproduce", "pdn-goodput", "--out", UNWRITABLE],
        ["sweep", str(REPO / "examples/incast-sweep.toml"), "--out", UNWRITABLE],
    ):
        assert xco_cli.main(argv) == 2, argv
        err = capsys.readouterr().err
        assert f"--out {UNWRITABLE!r} cannot be made" in err and "Traceback" not in err, err
    # a file where the directory should be
    (tmp_path / "f").write_text("")
    assert xco_cli.main(["sim", "run", str(scenario), "--out", str(tmp_path / "f")]) == 2
    assert "is a file" in capsys.readouterr().err


def _fake_sweep(points, measure, jobs=None, desc="", progress=None, log_runs=False):
    """The sweep's rows without running it (the frame's ``sweep.run``): these tests look at
    files, not figures."""
    rows = []
    for p in points:
        s, n = p.labels["series"], p.labels["n"]
        good = 900.0 if s.startswith("pdn") or n < 32 else 50.0
        rows.append(
            {**p.labels, "goodput_mbps": good, "completion_ms": n * 0.1, "timeouts": 0,
             "notifications": 0, "max_notice_queue": 0, "round_goodput_min_mbps": good / 2,
             "round_goodput_max_mbps": good}
        )  # fmt: skip
    return rows


def _files(d):
    return {p.name: p.read_bytes() for p in sorted(d.iterdir())}


def test_each_pdn_reproduction_writes_only_its_own_files(tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(sweep, "run", _fake_sweep)
    assert xco_cli.main(["reproduce", "pdn-goodput", "--out", str(tmp_path)]) == 0
    goodput = _files(tmp_path)
    assert set(goodput) == {f"pdn-goodput.{ext}" for ext in ("csv", "png", "svg", "txt", "meta.json")}
    assert xco_cli.main(["reproduce", "pdn-theory", "--out", str(tmp_path)]) == 0
    after = _files(tmp_path)
    assert {k: v for k, v in after.items() if k.startswith("pdn-goodput")} == goodput
    assert set(after) - set(goodput) == {
        f"pdn-theory.{ext}" for ext in ("csv", "png", "svg", "txt", "meta.json")
    }
    capsys.readouterr()


def test_a_rerun_of_a_reproduction_removes_only_the_files_its_last_run_listed(tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(sweep, "run", _fake_sweep)
    assert xco_cli.main(["reproduce", "pdn-goodput", "--out", str(tmp_path)]) == 0
    meta_path = tmp_path / "pdn-goodput.meta.json"
    meta = json.loads(meta_path.read_text())
    assert "pdn-goodput.png" in meta["files"] and "pdn-goodput.meta.json" in meta["files"]
    # an earlier run that wrote one more file; names outside the id are never removed
    (tmp_path / "pdn-goodput-extra.csv").write_text("earlier run\n")
    (tmp_path / "pdn-theory.csv").write_text("another id's\n")
    (tmp_path / "results.txt").write_text("the user's\n")
    meta["files"] += ["pdn-goodput-extra.csv", "pdn-theory.csv", "../results.txt"]
    meta_path.write_text(json.dumps(meta))
    assert xco_cli.main(["reproduce", "pdn-goodput", "--out", str(tmp_path)]) == 0
    assert not (tmp_path / "pdn-goodput-extra.csv").exists()
    assert (tmp_path / "pdn-theory.csv").read_text() == "another id's\n"
    assert (tmp_path / "results.txt").read_text() == "the user's\n"
    assert (tmp_path / "pdn-goodput.png").is_file()
    capsys.readouterr()


def test_set_overrides_any_scenario_key_and_names_an_unknown_one(tmp_path, cli):
    path = tmp_path / "s.toml"
    path.write_text(SCENARIO)
    out = tmp_path / "out"
    r = cli(
        "sim", "run", str(path), "--out", str(out), "--set", "topology.hosts_a=6",
        "--set", "apps[0].rounds=3", "--set", "topology.host_rate=10Gbps", "--set", "output.capture=[]",
    )  # fmt: skip
    assert r.returncode == 0, r.stderr
    ran = json.loads((out / "meta.json").read_text())["scenario"]
    assert ran["topology"]["hosts_a"] == 6 and ran["apps"][0]["rounds"] == 3
    assert ran["topology"]["host_rate"] == "10Gbps" and ran["output"]["capture"] == []
    assert "rounds_done=3" in r.stdout and "servers=6" in r.stdout
    assert not (out / "sa-sb.pcap").exists()
    r = cli("sim", "check", str(path), "--set", "topology.hosts_a=7")
    assert r.returncode == 0 and "ok" in r.stdout, r.stderr
    for args, needle in (
        (["--set", "topology.hostz_a=3"], "--set topology.hostz_a: not a scenario key"),
        (["--set", "nosuch.key=1"], "--set nosuch.key: not a scenario key"),
        (["--set", "apps[4].rounds=1"], "--set apps[4].rounds: apps has 1 entries, no [4]"),
        (["--set", "rounds"], "write KEY=VALUE"),
        (["--set", "topology.host_rate=1000"], "topology.host_rate: a bare number (1000) has no unit"),
    ):
        for cmd in (["sim", "check", str(path)], ["sim", "run", str(path), "--out", str(tmp_path / "o2")]):
            r = cli(*cmd, *args)
            assert r.returncode == 2 and needle in r.stderr and "Traceback" not in r.stderr, (args, r.stderr)


HEAVY = ("matplotlib", "pandas", "pyarrow", "dask", "distributed", "numpy", "scipy")


@pytest.mark.parametrize(
    "argv", [["--help"], ["list"], ["sim", "check", str(REPO / "scenarios/incast.toml")]]
)
def test_quick_commands_import_no_plotting_or_dataframes(argv):
    code = (
        "import sys\n"
        "from xco.cli import main\n"
        "try:\n"
        f"    main({argv!r})\n"
        "except SystemExit:\n"
        "    pass\n"
        f"heavy = sorted({{m.split('.')[0] for m in sys.modules}} & set({HEAVY!r}))\n"
        "print('HEAVY', heavy, file=sys.stderr)\n"
    )
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert "HEAVY []" in r.stderr, r.stderr[-2000:]
