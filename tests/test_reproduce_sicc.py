"""`xco reproduce sicc-latency` and `sicc-interrack`: files, columns, the
record of what ran, and the behaviour the spec names (One-all collapses on a
1,000-query request where SICC does not; SICC sends fewer inter-rack packets)."""

import io
import json

import pandas as pd

from xco.reproduce import sicc


def test_sicc_latency_writes_csv_cdf_figure_summary_and_record(tmp_path, cli):
    r = cli("reproduce", "sicc-latency", "--out", str(tmp_path), "--seed", "3")
    assert r.returncode == 0, r.stderr
    df = pd.read_csv(tmp_path / "sicc-latency.csv")
    assert set(df["series"]) == set(sicc.LAT_SERIES)
    assert sorted(set(df["queries"])) == sicc.LAT_QUICK
    assert (df["requests"] == sicc.LAT_REQ_QUICK).all(), "every request of every point finished"
    cdf = pd.read_csv(tmp_path / "sicc-latency-cdf.csv")
    assert list(cdf.columns) == ["series", "queries", "fraction", "query_latency_ms"]
    for s, g in cdf.groupby("series"):
        assert g["query_latency_ms"].is_monotonic_increasing, s
    for ext in ("png", "svg"):
        assert (tmp_path / f"sicc-latency.{ext}").stat().st_size > 10_000
    meta = json.loads((tmp_path / "sicc-latency.meta.json").read_text())
    assert meta["seed"] == 3 and len(meta["points"]) == len(df)
    p = next(p for p in meta["points"] if p["labels"] == {"series": "sw", "queries": 250})
    assert p["overrides"]["apps[0].method"] == "sw" and p["overrides"]["apps[0].queries"] == 250
    assert "seed 3" in r.stdout and "claim:" in r.stdout and "rule:" in r.stdout
    # One-all collapses at 1,000 queries (timeouts by the hundred), SICC does not
    big = df[df["queries"] == 1000].set_index("series")
    assert big.loc["one_all", "timeouts_mean"] > 100
    assert big.loc["sicc", "timeouts_mean"] < big.loc["one_all", "timeouts_mean"] / 10
    assert big.loc["sicc", "latency_ms_mean"] < big.loc["one_all", "latency_ms_mean"] / 2


def test_sicc_latency_is_deterministic_for_a_seed(tmp_path, cli):
    a, b = tmp_path / "a", tmp_path / "b"
    for d in (a, b):
        assert cli("reproduce", "sicc-latency", "--out", str(d), "--seed", "2").returncode == 0
    assert (a / "sicc-latency.csv").read_bytes() == (b / "sicc-latency.csv").read_bytes()
    assert (a / "sicc-latency-cdf.csv").read_bytes() == (b / "sicc-latency-cdf.csv").read_bytes()


def test_sicc_interrack_counts_fewer_inter_rack_packets_for_sicc(tmp_path, cli):
    r = cli("reproduce", "sicc-interrack", "--out", str(tmp_path))
    assert r.returncode == 0, r.stderr
    df = pd.read_csv(tmp_path / "sicc-interrack.csv")
    assert set(df["series"]) == set(sicc.IR_SERIES)
    assert sorted(set(df["downlink_mbps"])) == sorted(sicc.IR_QUICK)
    for _, g in df.groupby("downlink_mbps"):
        v = g.set_index("series")["inter_rack_packets_mean"]
        assert v["sicc"] < v["one_all"] and v["sicc"] < v["sw"]
    assert (tmp_path / "sicc-interrack.svg").exists()
    assert "claim:" in r.stdout and "rule:" in r.stdout


def test_sicc_redirect_moves_queries_only_with_redirection(tmp_path, cli):
    r = cli("reproduce", "sicc-redirect", "--out", str(tmp_path))
    assert r.returncode == 0, r.stderr
    df = pd.read_csv(tmp_path / "sicc-redirect.csv")
    assert set(df["series"]) == {"sicc", "sicc-nqr"} and set(df["setup"]) == {"overloaded"}
    assert (df[df["series"] == "sicc"]["redirected_mean"] > 0).all()
    assert (df[df["series"] == "sicc-nqr"]["redirected_mean"] == 0).all()
    assert "claim:" in r.stdout and "rule:" in r.stdout
    assert (tmp_path / "sicc-redirect.svg").exists() and (tmp_path / "sicc-redirect.meta.json").exists()


def test_sicc_speed_runs_overloaded_hubs_and_a_rack_of_front_ends(tmp_path, cli):
    r = cli("reproduce", "sicc-speed", "--out", str(tmp_path))
    assert r.returncode == 0, r.stderr
    df = pd.read_csv(tmp_path / "sicc-speed.csv")
    assert set(df["setup"]) == {"overloaded", "rack"}
    assert set(df["series"]) == {"sicc", "sicc-nssc"}
    rack = df[df["setup"] == "rack"]
    # 60 front-ends, each its requests: every one finished
    assert (rack["requests"] == 60 * sicc.RACK_REQ_QUICK).all()
    assert r.stdout.count("claim:") == 2
    meta = json.loads((tmp_path / "sicc-speed.meta.json").read_text())
    p = next(p for p in meta["points"] if p["labels"]["setup"] == "rack")
    assert p["overrides"]["topology.queues"] == [{"switch": "g*", "kind": "droptail", "buffer": "200KB"}]
    assert "topology.agg_core_rate" in p["overrides"]
    assert all(
        "topology.queues" not in q["overrides"] for q in meta["points"] if q["labels"]["setup"] != "rack"
    )


def test_the_rack_of_front_ends_runs_with_200_kb_at_the_aggregation_routers_ports():
    """The multi-front-end setup's B_a = 200 KB: every port of the aggregation router above the
    front-ends' rack holds 200 KB (what speed control's S_a sums), the ToR uplinks keep theirs."""
    from xco import sim

    raw = sim.run_raw(sicc.ablation_scn(sicc.base(), "sicc", 100, 1, "rack"), 1)
    ports = pd.read_csv(io.StringIO(raw["ports"]))
    down = ports[(ports["from"] == "g0") & (ports["to"] == "t0")]
    assert len(down) == 15, "1:4 at the ToR: 15 parallel links"
    assert (down["buffer_bytes"] == 200_000).all()
    up = ports[(ports["from"] == "t0") & (ports["to"] == "g0")]
    assert (up["buffer_bytes"] == 1_000_000).all()


def test_sicc_treetime_times_every_size_and_reports_the_trees_shape(tmp_path, cli):
    r = cli("reproduce", "sicc-treetime", "--out", str(tmp_path))
    assert r.returncode == 0, r.stderr
    df = pd.read_csv(tmp_path / "sicc-treetime.csv")
    assert list(df["targets"]) == sicc.TT_QUICK
    assert (df["builds"] == sicc.TT_REPS_QUICK[0] * sicc.TT_REPS_QUICK[1]).all()
    assert (df["build_ms_min"] > 0).all() and (df["build_ms_min"] <= df["build_ms_p99"]).all()
    # 50,000 targets of 150,000 servers in 2,500 racks: every rack has a hub
    assert df.set_index("targets").loc[50_000, "hubs"] == 2500
    builds = pd.read_csv(tmp_path / "sicc-treetime-builds.csv")
    assert len(builds) == df["builds"].sum()
    assert "claim:" in r.stdout and "wall times" in r.stdout


def test_sicc_tree_a_forced_small_n_builds_a_deeper_tree_than_eq_1_at_50_racks():
    from xco import sim
    from xco.reproduce import sicc_tree

    b = sicc.base()
    depth = {}
    for s in sicc_tree.SERIES:
        raw = sim.run_raw(sicc_tree.scn_of(b, s, 100, 1), 1)
        depth[s] = int(sicc.app_table(raw, "requests.csv")["tree_depth"].max())
    # eq 1 lets all <= 50 hubs (one a rack) send to the front-end: no tree, as with no tree at all
    assert depth["sicc"] == depth["sicc-nmt"] == 1
    # N = 10 < the hubs of a 1,000-query request: Algorithm 1 links hubs under others
    assert depth["sicc-n10"] >= 2


def test_web_fanin_all_sets_each_remedy_in_the_scenario_it_runs():
    from xco import scenario
    from xco.reproduce import web_fanin_all as w

    b = sicc.base()
    got = {s: w.scn_of(b, s, 100, 1) for s in w.ORDER}
    for s, scn in got.items():
        scenario.to_text(scn)  # every point is a valid scenario text
        assert scn["apps"][0]["method"] == w.SERIES[s][0]
    assert got["dctcp"]["tcp"]["cc"] == "dctcp" and got["dctcp"]["topology"]["queue"]["kind"] == "step"
    assert "pdn" in got["pdn"] and "pdn" not in got["newreno"]
    assert got["rto1ms"]["tcp"]["rto_min_ms"] == 1.0
    assert (
        got["xco-timeslice"]["xco"]["mode"] == "timeslice"
        and got["xco-ratelimit"]["xco"]["mode"] == "ratelimit"
    )
    assert all("xco" not in got[s] for s in w.ORDER if not s.startswith("xco-"))
    assert {s for s in w.ORDER if w.SERIES[s][0] != "one_all"} == {"ictcp", "sw", "sicc"}


def test_sicc_scale_points_are_150000_servers_and_a_sicc_request_completes_there():
    from xco import sim
    from xco.reproduce import sicc_scale

    scn = sicc_scale.scn_of(sicc.base(), "sicc", 2_000, 1)
    t = scn["topology"]
    assert t["servers_per_rack"] * t["racks"] == 150_000
    assert scn["apps"][0]["objects"] >= 2 * 2_000
    raw = sim.run_raw(scn, 1)
    req = sicc.app_table(raw, "requests.csv")
    assert len(req) == 1 and int(req["queries"].iloc[0]) == 2_000
    assert sicc.app_table(raw, "queries.csv")["latency_us"].notna().sum() == 2_000  # every object arrived
    m = sicc_scale.measure(raw)
    assert m["data_packet_hops"] > 0 and m["events"] > 0
