"""``real-sicc``: SICC's web fan-in as real processes on namespaces (root), the
script's own rules (no root), and the reproduction's files (root)."""

from __future__ import annotations

import dataclasses
import json
import os
import subprocess
import sys

import pandas as pd
import pytest
from conftest import free_prefix, netns_names

from xco import scenario
from xco.report import parse
from xco.reproduce import Options, real_sicc
from xco.testbed import netns, topo, webfanin

SCRIPT = webfanin.__file__
RACKS = ["a", "a", "a", "b", "b"]  # servers h2..h6: a swarm of three, a swarm of two
CAT = ["--seed", "7", "--objects", "3000", "--replicas", "3", "--min-bytes", "20", "--max-bytes", "1000"]


def _need_root():
    if os.geteuid() != 0:
        pytest.fail("real-host tests need root (network namespaces); CI runs them as root")


def test_the_catalogue_and_the_requests_follow_from_the_seed_alone():
    a = webfanin.catalogue(7, 500, 15, 3, 20, 1000)
    assert a == webfanin.catalogue(7, 500, 15, 3, 20, 1000)
    assert a != webfanin.catalogue(8, 500, 15, 3, 20, 1000)
    sizes, holders = a
    assert all(20 <= s <= 1000 for s in sizes)
    assert all(len(set(h)) == 3 for h in holders)  # replicas on distinct servers
    req = webfanin.draw_request(7, 0, 500, 100, holders)
    assert req == webfanin.draw_request(7, 0, 500, 100, holders)
    assert len({o for o, _ in req}) == 100  # distinct objects
    assert all(s in holders[o] for o, s in req)  # each asked of one of its holders


def test_sicc_sends_one_query_per_rack_to_the_server_with_most_objects():
    asked = [(1, 0), (2, 1), (3, 1), (4, 2), (5, 3), (6, 4), (7, 4)]
    q = webfanin.plan(asked, RACKS, "sicc")
    # rack a: server 1 holds two objects (hub), 0 and 2 one each; rack b: server 4 holds two
    assert q == {1: [(1, [2, 3]), (0, [1]), (2, [4])], 4: [(4, [6, 7]), (3, [5])]}
    one = webfanin.plan(asked, RACKS, "one_all")
    assert sorted(one) == [0, 1, 2, 3, 4] and all(g[0][0] == s and len(g) == 1 for s, g in one.items())
    body = webfanin.query_body(q[1])
    assert webfanin.parse_query(body) == q[1]


def test_bad_arguments_exit_2_and_an_unreachable_server_exits_3_with_a_message():
    base = [sys.executable, SCRIPT, "frontend", "--method", "sicc", *CAT]
    r = subprocess.run([*base, "--servers", "127.0.0.1,127.0.0.2", "--racks", "a"], capture_output=True,
                       text=True, timeout=60)  # fmt: skip
    assert r.returncode == 2 and "--racks names 1 racks for 2 servers" in r.stderr, r.stderr
    r = subprocess.run([*base, "--servers", "127.0.0.1,127.0.0.2,127.0.0.3", "--racks", "a,a,a",
                        "--port", "9", "--connect-timeout-s", "0.5"],
                       capture_output=True, text=True, timeout=60)  # fmt: skip
    assert r.returncode == 3 and "cannot connect to 127.0.0.1:9" in r.stderr, r.stderr


def _star_run(tmp_path, method: str, queries: int, requests: int) -> dict:
    """Servers h2..h6 and the front-end h1 on one bridge; every process is ended by its id."""
    prefix = free_prefix("xw")
    path = tmp_path / "star.toml"
    path.write_text(topo.star_toml(6, prefix=prefix))
    t = topo.load(path)
    tb = netns.up(t)
    try:
        servers = t.hosts[1:]
        common = ["--servers", ",".join(h.addr for h in servers), "--racks", ",".join(RACKS), *CAT]
        procs = [tb.spawn(h.name, [sys.executable, SCRIPT, "server", "--index", str(i), *common],
                          tmp_path / f"{method}-{h.name}.log", split_stderr=True)
                 for i, h in enumerate(servers)]  # fmt: skip
        fe = tb.spawn("h1", [sys.executable, SCRIPT, "frontend", *common, "--method", method, "--queries",
                             str(queries), "--requests", str(requests)], tmp_path / f"{method}-fe.json",
                      split_stderr=True)  # fmt: skip
        assert fe.wait(timeout=120) == 0, (tmp_path / f"{method}-fe.json.err").read_text()
        for p in procs:
            assert p.wait(timeout=30) == 0, open(f"{p.log_path}.err").read()
        return json.loads((tmp_path / f"{method}-fe.json").read_text())
    finally:
        tb.stop_all()
        netns.down(t)
        assert not any(n.startswith(f"{prefix}-") for n in netns_names()), "the testbed was not removed"


@pytest.mark.parametrize("method", ["one_all", "sicc"])
def test_every_requested_object_arrives_once_and_hubs_forward_their_members(tmp_path, method):
    _need_root()
    res = _star_run(tmp_path, method, queries=400, requests=3)
    sizes, holders = webfanin.catalogue(7, 3000, 5, 3, 20, 1000)
    assert len(res["requests"]) == 3
    for q in res["requests"]:
        want = dict(webfanin.draw_request(7, q["request"], 3000, 400, holders))
        got = q["objects"]
        assert sorted(o["object"] for o in got) == sorted(want)  # every object, exactly once
        assert all(o["asked"] == want[o["object"]] and o["bytes"] == sizes[o["object"]] for o in got)
        if method == "one_all":
            assert all(o["via"] == o["asked"] for o in got)  # straight from the server asked
            assert q["hubs"] == []
        else:
            hub_of = {s: h for h, groups in webfanin.plan(list(want.items()), RACKS, "sicc").items()
                      for s, _ in groups}  # fmt: skip
            assert sorted(q["hubs"]) == sorted(set(hub_of.values()))
            # every object came over its rack's hub's connection; members' objects only through it
            assert all(o["via"] == hub_of[o["asked"]] for o in got)
            assert any(o["via"] != o["asked"] for o in got), "no hub forwarded a member's object"
            assert not any(o["via"] not in q["hubs"] for o in got)


def test_the_simulators_case_is_the_testbeds():
    for m in real_sicc.METHODS:
        scn = real_sicc.sim_scenario(m, 500, 3, seed=1)
        scenario.validate(scn)
        t, app = scn["topology"], scn["apps"][0]
        assert (t["kind"], t["k"], t["host_rate"], t["switch_buffer"]) == ("fat_tree", 4, "100Mbps", "16384B")
        assert (app["method"], app["front_ends"], app["queries"], app["objects"], app["replicas"]) == (
            m, ["h0"], 500, real_sicc.OBJECTS, real_sicc.REPLICAS)  # fmt: skip


def test_verdicts_follow_the_figures():
    def pts(real_sicc_ms, sim_sicc_ms):
        rows = []
        for q, (rs, ss) in zip([100, 1000], zip(real_sicc_ms, sim_sicc_ms, strict=True), strict=True):
            rows += [{"source": "real", "method": "one_all", "queries": q, "latency_ms": 10.0,
                      "inter_rack_packets": 100.0},
                     {"source": "real", "method": "sicc", "queries": q, "latency_ms": rs,
                      "inter_rack_packets": 50.0},
                     {"source": "sim", "method": "one_all", "queries": q, "latency_ms": 10.0,
                      "inter_rack_packets": 100.0},
                     {"source": "sim", "method": "sicc", "queries": q, "latency_ms": ss,
                      "inter_rack_packets": 150.0}]  # fmt: skip
        return pd.DataFrame(rows)

    assert real_sicc.order_verdict(pts([5.0, 5.0], [5.0, 5.0]))[0] == "holds"
    assert real_sicc.order_verdict(pts([5.0, 9.8], [5.0, 5.0]))[0] == "partly"  # 2 % below is not below
    assert real_sicc.order_verdict(pts([12.0, 9.8], [5.0, 5.0]))[0] == "does not hold"
    assert real_sicc.interrack_verdict(pts([5.0, 5.0], [5.0, 5.0]))[0] == "holds"
    assert real_sicc.interrack_verdict(pts([5.0, 5.0], [5.0, 5.0]), "sim")[0] == "does not hold"
    assert real_sicc.agreement_verdict(pts([5.0, 5.0], [6.0, 9.0]))[0] == "holds"
    v, off = real_sicc.agreement_verdict(pts([5.0, 5.0], [6.0, 11.0]))
    assert v == "partly" and off == ["SICC Q=1000 (2.20x)"]


def test_reproduce_real_sicc_writes_both_sources_both_methods_and_verdicts(tmp_path, cli):
    _need_root()
    r = cli("reproduce", "real-sicc", "--out", str(tmp_path))
    assert r.returncode == 0, r.stderr[-2000:]
    assert not any(n.startswith(f"{real_sicc.PREFIX}-") for n in netns_names()), "the testbed was not removed"
    df = pd.read_csv(tmp_path / "real-sicc.csv")
    assert set(df["source"]) == {"real", "sim"} and set(df["method"]) == {"one_all", "sicc"}
    assert len(df) == 2 * 2 * len(real_sicc.QUICK_Q)
    real = df[df["source"] == "real"]
    assert (real["latency_ms"] > 0).all() and (real["inter_rack_packets"] > 0).all(), real.to_string()
    # SICC's hubs forwarded members' objects on the real hosts
    assert (real[real["method"] == "sicc"]["forwarded_by_hubs"] > 0).all(), real.to_string()
    req = pd.read_csv(tmp_path / "real-sicc-requests.csv")
    assert len(req[req["source"] == "real"]) == 2 * len(real_sicc.QUICK_Q) * real_sicc.QUICK_REQUESTS
    for name in ("real-sicc.png", "real-sicc.svg", "real-sicc.txt", "real-sicc.meta.json"):
        assert (tmp_path / name).stat().st_size > 0, name
    text = (tmp_path / "real-sicc.txt").read_text()
    claims = parse(text)  # as `xco reproduce all`'s report reads them
    assert [c.case for c in claims] == ["real hosts", "simulator"] * 2 + ["real vs simulator"], text
    assert all(c.verdict in ("holds", "partly", "does not hold") and "rule:" in c.detail for c in claims)
    meta = json.loads((tmp_path / "real-sicc.meta.json").read_text())
    assert meta["seed"] == 1 and meta["real_not_built"] == ["speed control", "query redirection"]


def test_two_seeds_run_every_real_point_twice_with_the_seeds_catalogues(tmp_path, monkeypatch):
    """--seeds 2 at Q = 100, 2 requests: each real (method, Q) twice on one testbed, each run with
    its seed's catalogue (the seed reaches the real processes), claims decided over the seeds."""
    _need_root()
    prefix = free_prefix("xw")
    seeds_run = []
    run_point = real_sicc.run_point

    def spy(tb, method, queries, requests, seed, work):
        seeds_run.append((method, seed))
        return run_point(tb, method, queries, requests, seed, work)

    monkeypatch.setattr(real_sicc, "run_point", spy)
    built = []
    up = netns.up
    monkeypatch.setattr(netns, "up", lambda t: built.append(t.prefix) or up(t))

    study = dataclasses.replace(
        real_sicc.STUDY, runs=lambda opts: real_sicc.runs_of(opts.seed, [100], 2, prefix)
    )
    out = study.run(Options(out=tmp_path, seed=3, seeds=2))
    assert built == [prefix] and seeds_run == [("one_all", 3), ("sicc", 3), ("one_all", 4), ("sicc", 4)]
    assert not any(n.startswith(f"{prefix}-") for n in netns_names()), "the testbed was not removed"
    df = pd.read_csv(tmp_path / "real-sicc.csv")
    assert df.groupby(["source", "method"])["seed"].apply(sorted).tolist() == [[3, 4]] * 4
    req = pd.read_csv(tmp_path / "real-sicc-requests.csv")
    assert list(req.columns)[0] == "seed" and len(req[req["source"] == "real"]) == 2 * 2 * 2
    ci = pd.read_csv(tmp_path / "real-sicc-ci95.csv")
    assert len(ci) == 4 and (ci["seeds"] == 2).all()
    claims = parse(out.summary)  # each claim once over the seeds (the seeds' own are marked)
    assert [c.case for c in claims] == ["real hosts", "simulator"] * 2 + ["real vs simulator"], out.summary
    assert all(c.verdict in ("holds", "partly", "does not hold") and "seed 3 " in c.detail for c in claims)
    assert out.summary.count("seed 4 | claim") == 5
    assert "web fan-in's catalogue and requests" in out.summary
