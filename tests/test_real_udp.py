"""real-udp on real hosts: 64-KB UDP datagrams and TCP into one port, with and without XCo
(network namespaces built and removed by the run, iperf3, the real daemons).

Needs root and the tools scripts/setup.sh installs (iproute2, iptables, ethtool, iperf3) and a
built xco-daemon. Every load is bounded in time; all traffic stays inside the namespaces.
"""

from __future__ import annotations

import dataclasses
import json
import os

import pandas as pd
import pytest
from conftest import free_prefix, netns_names

from xco.reproduce import Options, real
from xco.testbed import netns


@pytest.fixture(autouse=True)
def _need_root():
    if os.geteuid() != 0:
        pytest.fail("real-host tests need root (network namespaces, iptables); CI runs them as root")


def test_slices_deliver_every_datagram_whole_and_keep_near_the_simulator(tmp_path):
    seconds = 2.0
    df = real.run_real_udp(Options(out=tmp_path), ks=[2], seconds=seconds).set_index("series")
    none, xco = df.loc["none"], df.loc["timeslice"]
    # uncoordinated, the two UDP senders' fragments collide at the receiver's port
    assert none["receiver_port_drops"] > 1000, df.T
    # a host never loses a datagram of its own
    own = ["sender_udp_sndbuf_errors", "sender_port_drops", "receiver_udp_rcvbuf_errors"]
    assert (xco[own] == 0).all(), df.T
    # with slices no sender's datagram spills into another's slice: the port drops next to
    # nothing (a late wake-up on this loaded 2-core machine may still overlap two slices by a
    # few frames; a daemon that lets a datagram spill dropped 500 frames and 28 datagrams here)
    datagrams = xco["udp_mbps"] * 1e6 * seconds / 8 / real.UDP_LEN
    assert xco["receiver_port_drops"] < 100, df.T
    assert xco["udp_datagrams_lost"] <= max(2, 0.03 * datagrams), df.T
    assert xco["udp_mbps"] > 5 and xco["tcp_per_flow_mbps"] > 5, df.T
    sim = real.run_sim_udp(Options(out=tmp_path), [2], seconds).set_index("series").loc["timeslice"]
    assert sim["total_mbps"] / 2 < xco["total_mbps"] < sim["total_mbps"] * 2, (df.T, sim)


def test_real_overhead_with_two_seeds_repeats_every_point_on_one_testbed(tmp_path, monkeypatch):
    """--seeds 2 on a real-host reproduction (real-overhead at 100 Mbit/s, 1-s runs): two rows per
    point with their seeds, the interval table, the seeds in meta.json, one testbed for all."""
    prefix = free_prefix("xv")
    built = []
    up = netns.up
    monkeypatch.setattr(netns, "up", lambda t: built.append(t.prefix) or up(t))
    study = dataclasses.replace(real.REAL_OVERHEAD, runs=lambda opts: real.overhead_runs((100,), 1.0, prefix))
    out = study.run(Options(out=tmp_path, seed=5, seeds=2))
    assert built == [prefix], "the testbed is built once for every run of every seed"
    assert not any(n.startswith(f"{prefix}-") for n in netns_names()), "the testbed was not removed"
    df = pd.read_csv(tmp_path / "real-overhead.csv")
    assert list(df.columns)[:4] == ["seed", "link_mbps", "mode", "throughput_mbps"]
    assert sorted(zip(df["mode"], df["seed"], strict=True)) == [
        ("agent", 5),
        ("agent", 6),
        ("none", 5),
        ("none", 6),
    ]
    assert (df["throughput_mbps"] > 10).all(), df.to_string()  # every run moved data
    agent = df[df["mode"] == "agent"]
    assert (agent["packets_held"] > 0).all(), df.to_string()  # the agent gated the flow in each run
    ci = pd.read_csv(tmp_path / "real-overhead-ci95.csv")
    assert sorted(ci["mode"]) == ["agent", "none"] and (ci["seeds"] == 2).all(), ci.to_string()
    for _, row in ci.iterrows():
        v = df[df["mode"] == row["mode"]]["throughput_mbps"]
        assert row["throughput_mbps_mean"] == pytest.approx(v.mean())
        assert row["throughput_mbps_ci95_low"] <= v.mean() <= row["throughput_mbps_ci95_high"]
    meta = json.loads((tmp_path / "real-overhead.meta.json").read_text())
    assert meta["seeds"] == [5, 6]
    assert sorted((p["labels"]["mode"], p["seed"]) for p in meta["points"]) == [
        ("agent", 5), ("agent", 6), ("none", 5), ("none", 6)]  # fmt: skip
    assert all(p["real"]["seconds"] == 1.0 for p in meta["points"])
    assert "every real point ran 2 times" in out.summary and "means over seeds 5..6" in out.summary
    for name in ("real-overhead.png", "real-overhead.svg", "real-overhead.txt"):
        assert (tmp_path / name).stat().st_size > 0, name


def test_ctrl_c_in_a_real_point_tears_the_testbed_down_and_writes_the_finished_points(tmp_path, monkeypatch):
    """SIGINT while the second real point runs (under the agent): the daemons and the testbed are
    removed, the first point's row and a meta.json marked interrupted are written."""
    import signal

    from xco.interrupt import Interrupted
    from xco.testbed import iperf

    prefix = free_prefix("xv")
    calls = []
    run_flows = iperf.run_flows

    def interrupted_second(*args, **kw):
        calls.append(1)
        if len(calls) == 2:
            os.kill(os.getpid(), signal.SIGINT)  # Ctrl-C, as the terminal sends it
        return run_flows(*args, **kw)

    monkeypatch.setattr(iperf, "run_flows", interrupted_second)
    study = dataclasses.replace(real.REAL_OVERHEAD, runs=lambda opts: real.overhead_runs((100,), 1.0, prefix))
    with pytest.raises(Interrupted) as e:
        study.run(Options(out=tmp_path, seeds=2))
    assert not any(n.startswith(f"{prefix}-") for n in netns_names()), "the testbed was not removed"
    assert (e.value.done, e.value.total) == (1, 4)
    df = pd.read_csv(tmp_path / "real-overhead.csv")
    assert list(df["mode"]) == ["none"] and list(df["seed"]) == [1], df.to_string()
    meta = json.loads((tmp_path / "real-overhead.meta.json").read_text())
    assert meta["interrupted"] is True and meta["points_finished"] == 1
    assert [p["labels"]["mode"] for p in meta["points"]] == ["none"]
    assert not (tmp_path / "real-overhead.txt").exists(), "no summary of a partial run"


def test_real_vs_sim_with_two_seeds_repeats_the_real_points_and_seeds_the_simulator(tmp_path):
    """--seeds 2 on real-vs-sim (k = 2, 1-s runs): each real point twice on fresh hosts, the
    simulator's points with seeds 7 and 8, means over the seeds, intervals per source."""
    study = dataclasses.replace(real.REAL_VS_SIM, runs=lambda opts: real.vs_runs([2], 1.0))
    out = study.run(Options(out=tmp_path, seed=7, seeds=2))
    df = pd.read_csv(tmp_path / "real-vs-sim.csv")
    assert list(df.columns) == ["seed", "source", *real.COLUMNS]
    assert df.groupby(["source", "series"])["seed"].apply(sorted).tolist() == [[7, 8]] * 4
    ci = pd.read_csv(tmp_path / "real-vs-sim-ci95.csv")
    assert len(ci) == 4 and (ci["seeds"] == 2).all()
    meta = json.loads((tmp_path / "real-vs-sim.meta.json").read_text())
    sims = [p for p in meta["points"] if p["labels"]["source"] == "sim"]
    assert sorted(p["seed"] for p in sims) == [7, 7, 8, 8] and all("scenario" in p for p in sims)
    assert "means over seeds 7..8" in out.summary and "[sim] total_mbps" in out.summary
    assert (tmp_path / "real-vs-sim.png").stat().st_size > 10_000
