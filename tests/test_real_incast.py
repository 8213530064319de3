"""``real-incast``: the fan-in client/server on real namespaces (root), and the
simulator's side of the comparison (no root)."""

from __future__ import annotations

import dataclasses
import json
import os

import pandas as pd
import pytest
from conftest import free_prefix, netns_names

from xco import scenario
from xco.reproduce import Options, real_incast
from xco.testbed import netns


def test_real_hosts_collapse_between_small_and_larger_n(tmp_path):
    if os.geteuid() != 0:
        pytest.fail("real-host tests need root (network namespaces); CI runs them as root")
    prefix = free_prefix("xi")
    # 10 rounds each: N=2 fits the 32 KB port (2 x 16,000 B), N=16 overflows it every round
    df = real_incast.run_real([2, 16], rounds=10, prefix=prefix)
    assert not any(n.startswith(f"{prefix}-") for n in netns_names()), "the testbed was not removed"
    small, large = df[df["n"] == 2].iloc[0], df[df["n"] == 16].iloc[0]
    assert small["rounds"] == large["rounds"] == 10
    assert small["port_drops"] == 0 and small["rto_timeouts"] == 0, small.to_dict()
    assert large["port_drops"] > 0 and large["rto_timeouts"] > 0, large.to_dict()
    assert large["rounds_over_rto_min"] > 0, large.to_dict()  # a round waited for a timeout
    assert large["goodput_mbps"] < 0.5 * small["goodput_mbps"], df.to_string()
    assert real_incast.collapse_n(df) == 16


def test_the_simulators_star_is_the_real_setting_and_the_profile_is_a_parameter():
    scn = real_incast.sim_scenario(4, 30, 16000, "newreno", seed=1)
    scenario.validate(scn)
    t, app = scn["topology"], scn["apps"][0]
    assert (t["hosts"], t["host_rate"], t["switch_buffer"]) == (5, "100Mbps", "32000B")
    assert (app["sru"], app["rounds"], app["reuse_connections"], len(app["servers"])) == (
        "16000B",
        30,
        True,
        4,
    )
    assert scn["tcp"]["cc"] == "newreno"
    assert real_incast.sim_scenario(4, 30, 16000, "linux", seed=1)["tcp"] == {"profile": "linux"}


def test_collapse_is_the_first_n_below_half_of_the_best_so_far():
    d = pd.DataFrame({"n": [2, 3, 4, 8], "goodput_mbps": [80.0, 60.0, 30.0, 50.0]})
    assert real_incast.collapse_n(d) == 4
    assert real_incast.collapse_n(d.assign(goodput_mbps=[80.0, 70.0, 60.0, 50.0])) is None


def test_timeslices_keep_the_incast_port_from_overflowing(tmp_path):
    if os.geteuid() != 0:
        pytest.fail("real-host tests need root (network namespaces); CI runs them as root")
    # N=8 overflows the 32 KB port every round without coordination (8 x 16,000 B responses;
    # SACK/RACK often recover without a timeout, so goodput is not the test's measure);
    # with the XCo daemons one server sends per slot into the client's port. A few frames
    # can still meet at a slot hand-over (the old holder's NIC queue drains past the
    # boundary), so the test compares with the uncoordinated run instead of demanding zero.
    runs = {}
    for series, lead in (("none", "xk"), ("timeslice", "xj")):
        prefix = free_prefix(lead)
        df = real_incast.run_real([8], rounds=10, prefix=prefix, series=series)
        assert not any(n.startswith(f"{prefix}-") for n in netns_names()), "the testbed was not removed"
        runs[series] = df.iloc[0]
    none, xco = runs["none"], runs["timeslice"]
    assert xco["series"] == "timeslice" and xco["rounds"] == none["rounds"] == 10, xco.to_dict()
    assert none["port_drops"] > 0, none.to_dict()  # the uncoordinated port overflows
    assert xco["port_drops"] * 10 <= none["port_drops"], (xco.to_dict(), none.to_dict())
    assert xco["rounds_over_rto_min"] == 0, xco.to_dict()  # no round waited for a timeout


def _serve_once(cc: str, port: int):
    """One fan-in server on loopback with ``--cc cc``, one client round: (server rc, its output, stderr)."""
    import json
    import subprocess
    import sys
    import time

    srv = subprocess.Popen(
        [sys.executable, str(real_incast.FANIN), "server", str(port), "--cc", cc, "--idle-s", "5"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        if cc == "bbr":
            args = ["client", "--servers", f"127.0.0.1:{port}", "--response-bytes", "1000", "--rounds", "1"]
            cmd = [sys.executable, str(real_incast.FANIN), *args]
            for _ in range(50):  # the listener may not be up yet
                if subprocess.run(cmd, capture_output=True, timeout=10).returncode == 0:
                    break
                time.sleep(0.05)
        out, err = srv.communicate(timeout=10)
    finally:
        if srv.poll() is None:
            srv.kill()
            srv.wait()
    return srv.returncode, (json.loads(out) if out.strip() else None), err


def test_the_fan_in_server_runs_the_congestion_control_asked_for_and_refuses_an_unknown_one():
    with open("/proc/sys/net/ipv4/tcp_available_congestion_control") as f:
        if "bbr" not in f.read().split():
            pytest.fail("this kernel has no bbr module: the real-incast BBR series needs it")
    rc, out, _ = _serve_once("bbr", 59301)
    assert rc == 0 and out["cc"] == "bbr" and out["responses"] == 1, out
    rc, out, err = _serve_once("no-such-cc", 59302)
    assert rc == 2 and out is None and "--cc no-such-cc" in err, err


def test_the_check_holds_only_with_the_kernel_s_collapse_n_and_within_2x_from_there():
    real = pd.DataFrame({"n": [2, 3, 4, 8], "goodput_mbps": [90.0, 60.0, 30.0, 20.0]})
    close = real.assign(goodput_mbps=[85.0, 70.0, 40.0, 12.0])  # collapse at 4, within 2x from there
    assert verdict(real_incast.verdict_lines(real, close)) == "holds"
    early = real.assign(goodput_mbps=[85.0, 30.0, 40.0, 12.0])  # collapses at 3
    lines = real_incast.verdict_lines(real, early)
    assert verdict(lines) == "partly"  # the ratios still within 2x
    assert "the simulator collapses at N=3, the kernel at N=4" in lines[-1]
    far = real.assign(goodput_mbps=[85.0, 20.0, 10.0, 5.0])  # collapses at 3, 3x off at 4
    lines = real_incast.verdict_lines(real, far)
    assert verdict(lines) == "does not hold" and "N=4 (0.3x)" in "\n".join(lines), lines


def verdict(lines: list[str]) -> str:
    """The verdict of the one claim block in ``lines``."""
    (v,) = [ln.split("-> ", 1)[1].split(" (rule", 1)[0] for ln in lines if ln.startswith("  -> ")]
    return v


def test_the_why_names_both_sides_timeouts_at_the_n_outside_2x_and_the_xco_claim_compares_with_none():
    real = pd.DataFrame({"n": [2, 3, 12], "goodput_mbps": [90.0, 30.0, 50.0], "rto_timeouts": [0, 0, 3]})
    sim = real.assign(goodput_mbps=[88.0, 28.0, 20.0], rto_timeouts=[0, 0, 15])
    why = real_incast.verdict_lines(real, sim)[-1]
    assert "N=12 the simulator's servers timed out 15 times, the kernel's 3" in why, why
    xco = pd.DataFrame({"n": [12], "goodput_mbps": [62.0], "port_drops": [0]})
    lines = real_incast.xco_lines(real, xco)
    assert verdict(lines) == "holds" and "XCo 62.0 vs none 50.0" in lines[2], lines
    assert verdict(real_incast.xco_lines(real, xco.assign(goodput_mbps=[40.0]))) == "does not hold"


def test_the_check_judges_the_median_of_the_seeds_kernel_runs_and_the_table_shows_their_range():
    # three kernel sweeps (--seeds 3); one of them collapses at N = 3 by chance, the median does not
    runs = pd.DataFrame(
        {
            "n": [2, 3, 4, 8] * 3,
            "goodput_mbps": [90.0, 20.0, 50.0, 20.0] + [92.0, 70.0, 60.0, 30.0] + [88.0, 65.0, 55.0, 25.0],
            "seed": [1] * 4 + [2] * 4 + [3] * 4,
            "source": "real",
        }
    ).assign(rto_timeouts=0, fast_retransmits=0, tail_loss_probes=0, rounds_over_rto_min=0, port_drops=0)
    med = real_incast.median_per_n(runs)
    assert list(med["goodput_mbps"]) == [90.0, 65.0, 55.0, 25.0]
    assert real_incast.collapse_n(med) == 8 and real_incast.collapse_n(runs[runs["seed"] == 1]) == 3
    # the simulator's seeds: its median per N is judged (one seed alone would collapse at N = 3)
    sim = pd.DataFrame(
        {
            "n": [2, 3, 4, 8] * 3,
            "goodput_mbps": [85.0, 60.0, 50.0, 30.0] + [86.0, 20.0, 52.0, 31.0] + [84.0, 61.0, 49.0, 29.0],
            "source": "sim",
            "rto_timeouts": 0,
            "seed": [1] * 4 + [2] * 4 + [3] * 4,
        }
    )
    text = real_incast.summary(pd.concat([runs, sim], ignore_index=True), "linux", 30)
    assert "median of 3 kernel CUBIC sweeps" in text
    assert "collapse real N=8, sim N=8" in text and text.count("-> holds") == 1, text
    row3 = next(line for line in text.splitlines() if line.split()[:1] == ["3"])
    assert "65.0" in row3 and "20.0-70.0" in row3, row3


def test_two_seeds_run_every_real_point_twice_on_one_testbed_and_judge_the_medians(tmp_path, monkeypatch):
    """--seeds 2 is real-incast's replicates: CUBIC, BBR and XCo points twice each (3 rounds, N = 2
    and 4), one testbed, the check on the medians, the seeds in the table and in meta.json."""
    if os.geteuid() != 0:
        pytest.fail("real-host tests need root (network namespaces); CI runs them as root")
    prefix = free_prefix("xi")
    built = []
    up = netns.up
    monkeypatch.setattr(netns, "up", lambda t: built.append(t.prefix) or up(t))
    study = dataclasses.replace(
        real_incast.STUDY,
        runs=lambda opts: real_incast.runs_of(opts.seed, [2, 4], 4, rounds=3, prefix=prefix),
    )
    out = study.run(Options(out=tmp_path, seed=1, seeds=2))
    assert built == [prefix], "one testbed for every real run of both seeds"
    assert not any(n.startswith(f"{prefix}-") for n in netns_names()), "the testbed was not removed"
    df = pd.read_csv(tmp_path / "real-incast.csv")
    assert list(df.columns)[:3] == ["seed", "source", "n"] and "replicate" not in df.columns
    per = df.groupby(["source", "n"])["seed"].apply(sorted)
    assert per.to_dict() == {(s, n): [1, 2] for s in ("real", "real-bbr", "sim") for n in (2, 4)} | {
        ("real-timeslice", 4): [1, 2]
    }
    assert (df[df["source"] != "sim"]["rounds"] == 3).all(), df.to_string()
    ci = pd.read_csv(tmp_path / "real-incast-ci95.csv")
    assert len(ci) == 7 and (ci["seeds"] == 2).all()
    assert "median of 2 kernel CUBIC sweeps" in out.summary
    assert out.summary.count("the simulator (TCP profile linux) collapses at the kernel's N") == 4, (
        "over the seeds' medians, once decided over the seeds, then per seed"
    )
    assert "claim (median of 2 runs per N): the simulator (TCP profile linux)" in out.summary
    meta = json.loads((tmp_path / "real-incast.meta.json").read_text())
    assert meta["seeds"] == [1, 2] and meta["real_runs_per_point"] == 2
    assert sum(1 for p in meta["points"] if "real" in p) == 10 and len(meta["points"]) == 14
