"""``real-outcast``: the Outcast 1-vs-12 case on the routed k = 4 fat-tree of
real namespaces (root), and the simulator's side (no root)."""

from __future__ import annotations

import dataclasses
import json
import os

import pandas as pd
import pytest
from conftest import free_prefix, netns_names

from xco import scenario
from xco.reproduce import Options, real_outcast
from xco.testbed import netns


def test_real_fat_tree_runs_both_series_with_the_papers_min_rto_and_is_removed(tmp_path):
    if os.geteuid() != 0:
        pytest.fail("real-host tests need root (network namespaces); CI runs them as root")
    prefix = free_prefix("xo")
    df, route = real_outcast.run_real(2.0, prefix=prefix, work=tmp_path)
    assert not any(n.startswith(f"{prefix}-") for n in netns_names()), "the testbed was not removed"
    # every sender's route to Dest carries the paper's minimum RTO
    assert "rto_min" in route and "2ms" in route, route
    for series in real_outcast.SERIES:
        d = df[df["series"] == series]
        assert sorted(d["src"]) == sorted(real_outcast.SENDERS), d.to_string()
        # every flow ran: it delivered data or kept retransmitting into the port (without
        # coordination a six-hop flow can be shut out for the whole run: the blackout itself)
        assert ((d["goodput_mbps"] > 0) | (d["retransmits"] > 0)).all(), d.to_string()
        if series != "none":
            assert (d["goodput_mbps"] > 0).all(), d.to_string()  # with XCo every flow moves data
    # 13 bulk flows into one 100 Mbit/s port with a 16 KB drop-tail buffer: the port drops
    assert int(df[df["series"] == "none"]["bottleneck_drops"].iloc[0]) > 0, df.to_string()
    # the XCo series really ran its daemons (their logs are in the work directory)
    assert (tmp_path / "timeslice-seed1" / "controller.log").exists()
    assert all((tmp_path / "timeslice-seed1" / f"agent-{h}.log").exists() for h in real_outcast.SENDERS)


def test_the_simulators_case_is_the_testbeds_with_hosts_numbered_from_zero():
    for series in real_outcast.SERIES:
        scn = real_outcast.sim_scenario(series, 1.0, seed=1)
        scenario.validate(scn)
        t = scn["topology"]
        assert (t["kind"], t["k"], t["host_rate"], t["switch_buffer"], t["routing"]) == (
            "fat_tree",
            4,
            "100Mbps",
            "16384B",
            "address-bits",
        )
        # testbed h2 (Dest's edge neighbour) is the simulator's h1; h5..h16 are h4..h15
        assert sorted({a["src"] for a in scn["apps"]}) == sorted(["h1", *[f"h{i}" for i in range(4, 16)]])
        assert {a["dst"] for a in scn["apps"]} == {"h0"}
        assert scn["tcp"]["rto_min_ms"] == real_outcast.RTO_MIN_MS
        assert ("xco" in scn) == (series == "timeslice")


def test_headline_and_verdicts_follow_the_measured_figures():
    rows = [
        {"source": "sim", "series": "none", "src": "h2", "hops": 2, "goodput_mbps": 2.0,
         "bottleneck_drops": 9, "drops_from_two_hop": 5},
        {"source": "sim", "series": "none", "src": "h5", "hops": 6, "goodput_mbps": 8.0,
         "bottleneck_drops": 9, "drops_from_two_hop": 5},
    ]  # fmt: skip
    h = real_outcast.headline(pd.DataFrame(rows))
    assert h.iloc[0]["ratio"] == pytest.approx(0.25)
    assert h.iloc[0]["total_mbps"] == pytest.approx(10.0)
    assert real_outcast.xco_verdict(1.0, 90.0) == "holds"
    assert real_outcast.xco_verdict(0.27, 90.0) == "partly"
    assert real_outcast.xco_verdict(1.0, 50.0) == "partly"
    assert real_outcast.xco_verdict(0.1, 50.0) == "does not hold"


def test_two_seeds_run_both_series_twice_on_one_fat_tree_and_decide_outcast_on_the_ratio_interval(
    tmp_path, monkeypatch
):
    if os.geteuid() != 0:
        pytest.fail("real-host tests need root (network namespaces); CI runs them as root")
    prefix = free_prefix("xo")
    built = []
    up = netns.up
    monkeypatch.setattr(netns, "up", lambda t: built.append(t.prefix) or up(t))
    study = dataclasses.replace(
        real_outcast.STUDY, runs=lambda opts: real_outcast.runs_of(opts.seed, 1.0, prefix)
    )
    out = study.run(Options(out=tmp_path, seed=1, seeds=2))
    assert built == [prefix], "one fat-tree for both series of both seeds"
    assert not any(n.startswith(f"{prefix}-") for n in netns_names()), "the testbed was not removed"
    df = pd.read_csv(tmp_path / "real-outcast.csv")
    assert list(df.columns)[0] == "seed"
    assert (df.groupby(["source", "series"])["seed"].value_counts() == len(real_outcast.SENDERS)).all()
    head = pd.read_csv(tmp_path / "real-outcast-headline.csv")
    assert sorted(head["seed"]) == [1] * 4 + [2] * 4
    ci = pd.read_csv(tmp_path / "real-outcast-ci95.csv")
    assert len(ci) == 4 * len(real_outcast.SENDERS) and (ci["seeds"] == 2).all()
    for where in ("real hosts", "simulator"):
        block = out.summary.split(f"claim (Outcast paper, {where}):")[1].split("\n\n")[0]
        assert f"decided on the 95 % interval of the 2-hop / 6-hop throughput ratio ({where})" in block, block
    meta = json.loads((tmp_path / "real-outcast.meta.json").read_text())
    real = [p for p in meta["points"] if "real" in p]
    assert sorted(p["seed"] for p in real) == [1, 1, 2, 2]
    assert all("rto_min" in p["ran"]["route"] for p in real)
