"""The XCo paper's reproductions: files and columns, the effects the spec names,
the claims and verdicts each summary prints, and a meta record true to what ran."""

import json
import re

import pandas as pd
import pytest

UDP = [
    "series",
    "udp_senders",
    "total_mbps",
    "tcp_per_flow_mbps",
    "link_util",
    "bottleneck_drops",
    "total_mbps_whole_run",
]
COLUMNS = {
    "xco-udp-1g": UDP,
    "xco-udp-10g": UDP,
    "xco-incast": ["series", "servers", "throughput_mbps", "client_port_drops", "timeouts"],
    "xco-shorttcp": ["series", "parallel", "long_mbps", "short_mbps", "total_mbps"],
    "xco-ping": ["series", "t_s", "rtt_us"],
    "xco-migration": ["series", "competitors", "completion_s", "completed", "useful_util"],
    "xco-fairness": ["series", "flow", "throughput_mbps", "wire_share"],
    "xco-workconserve": ["series", "flow", "throughput_mbps", "wire_share"],
    "xco-responsive": ["series", "t_s", "aggregate_mbps"],
    "xco-fattree": [
        "series",
        "k",
        "goodput_gbps",
        "short_fct_p99_ms",
        "short_flows_done",
        "incast_round_ms",
        "switch_drops",
    ],
}


@pytest.fixture(scope="module")
def results(tmp_path_factory):
    """Run every XCo reproduction once (quick mode) into one directory."""
    from xco import reproduce

    out = tmp_path_factory.mktemp("xco")
    summaries = {}
    for rid in COLUMNS:
        outcome = reproduce.get(rid).run(reproduce.Options(out=out, seed=1, progress=False))
        summaries[rid] = outcome.summary
    return out, summaries


@pytest.mark.parametrize("rid", list(COLUMNS))
def test_each_reproduction_writes_csv_png_svg_summary_and_seed(results, rid):
    out, summaries = results
    df = pd.read_csv(out / f"{rid}.csv")
    assert list(df.columns) == COLUMNS[rid]
    assert len(df) > 0
    assert (out / f"{rid}.png").read_bytes()[:4] == b"\x89PNG"
    assert b"<svg" in (out / f"{rid}.svg").read_bytes()[:2000]
    meta = json.loads((out / f"{rid}.meta.json").read_text())
    assert meta["seed"] == 1 and meta["mode"] == "quick" and meta["full"] is False
    # every point records the scenario text it ran and its seed
    assert len(meta["points"]) > 0
    for p in meta["points"]:
        assert p["seed"] == 1 and "[run]" in p["scenario"]
    assert "seed 1" in summaries[rid] and "quick mode" in summaries[rid]


@pytest.mark.parametrize("rid", list(COLUMNS))
def test_each_summary_states_claims_with_a_verdict_and_why(results, rid):
    _, summaries = results
    text = summaries[rid]
    claims = re.findall(r"^claim: .+$", text, re.M)
    verdicts = re.findall(r"^  -> (holds|partly|does not hold) \(rule: .+\)$", text, re.M)
    assert claims and len(verdicts) == len(claims), text
    assert len(re.findall(r"^  ours: .*\d", text, re.M)) == len(claims), "our figures beside each claim"
    assert len(re.findall(r"^  why: \w.+$", text, re.M)) == len(claims)


def test_meta_json_records_what_ran_not_the_file(results):
    from xco import reproduce
    from xco.reproduce.experiment import EXPERIMENTS

    meta = json.loads((results[0] / "xco-incast.meta.json").read_text())
    assert meta["mode"] == "quick"
    for p in meta["points"]:
        assert 'total = "32MB"' in p["scenario"]
    n16 = next(p for p in meta["points"] if p["labels"] == {"series": "ratelimit", "servers": 16})
    assert "hosts = 18" in n16["scenario"] and 'mode = "ratelimit"' in n16["scenario"]
    assert n16["overrides"]["xco.mode"] == "ratelimit"
    udp = json.loads((results[0] / "xco-udp-1g.meta.json").read_text())
    assert all("duration_ms = 1500" in p["scenario"] for p in udp["points"])
    # --full: the record of a point says what --full changes (built, not run, here)
    exp = EXPERIMENTS["xco-incast"]
    full = exp.points(reproduce.Options(out=results[0], full=True))
    rec = reproduce.point_record(exp.base(), full[-1].labels, full[-1].scenario, full[-1].seed)
    assert 'total = "1GB"' in rec["scenario"] and rec["overrides"]["apps[0].total"] == "1GB"


# the cheaper ones (xco-migration, xco-udp-10g and xco-fattree take a minute each again)
@pytest.mark.parametrize(
    "rid",
    [
        "xco-workconserve",
        "xco-incast",
        "xco-udp-1g",
        "xco-fairness",
        "xco-ping",
        "xco-shorttcp",
        "xco-responsive",
    ],
)
def test_rerunning_the_scenarios_in_meta_json_gives_the_same_csv(results, rid):
    from xco.reproduce.experiment import EXPERIMENTS, replay_csv

    out, _ = results
    again = replay_csv(EXPERIMENTS[rid], out / f"{rid}.meta.json")
    assert again == (out / f"{rid}.csv").read_text()


def test_udp_1g_timeslices_keep_throughput_and_tcp_while_none_starves_tcp(results):
    df = pd.read_csv(results[0] / "xco-udp-1g.csv").set_index(["series", "udp_senders"])
    ts, none = df.loc[("timeslice", 4)], df.loc[("none", 4)]
    assert ts["total_mbps"] > 850, "total application throughput above 85% of the 1 Gb/s link"
    assert ts["tcp_per_flow_mbps"] > 100
    assert none["tcp_per_flow_mbps"] < 10, "without coordination UDP starves TCP"


def test_ping_max_rtt_under_load_is_several_times_lower_with_xco(results):
    # The paper: about ten times lower with XCo. The pinging host's NIC also
    # carries a bulk TCP flow: without XCo the ping waits behind the NIC queue
    # TCP fills (up to 1000 frames, 12.3 ms at 1 Gb/s); with XCo behind at most
    # one 2 ms slice's release. The pings (every 1 ms) sample the 2-ms slots at
    # two phases only, so the worst RTT seen with XCo depends on where the slot
    # grid falls: quick runs, seed 1: 7,178 us without XCo, with XCo 2,198 us
    # (3.3x; the simulator's own dispatch, slots from the first report), 2,107
    # (3.4x; the control-plane nodes joining at t = 0), 2,547 (2.8x; joined
    # before t = 0, the default: the grid 0.6 ms later). The bound is the summary's own rule for
    # "partly" (xco_claims.ping: at least 2x smaller), not a figure fitted to a run.
    df = pd.read_csv(results[0] / "xco-ping.csv")
    worst = df.groupby("series")["rtt_us"].max()
    assert worst["load-none"] > 2 * worst["load-timeslice"], worst.to_dict()
    assert worst["load-timeslice"] > worst["idle"], "the ping still waits behind the NIC queue"


def test_incast_timeslice_beats_none_at_the_largest_n(results):
    df = pd.read_csv(results[0] / "xco-incast.csv")
    n = df["servers"].max()
    at = df[df["servers"] == n].set_index("series")["throughput_mbps"]
    assert at["timeslice-2ms"] > 5 * at["none"]
    assert at["timeslice-10ms"] > 5 * at["none"]
    # docs/xco-incast-order.md: at N = 16 the rate-limited servers' first
    # frames of a block (16 jumbo frames) overflow the 14-frame port, where
    # slices drop nothing. Whether those drops cost a timeout (and rate limits
    # fall below timeslices) depends on the start phase: measured at seeds 1-4,
    # rate limits 563 / 36 / 46 / 36 Mbit/s with 20 / 322 / 233 / 283 drops and
    # 1 / 138 / 88 / 124 timeouts, timeslices 533 with none; so the drops are
    # asserted, not the order
    drops = df[df["servers"] == n].set_index("series")["client_port_drops"]
    assert drops["timeslice-2ms"] == 0 and drops["timeslice-10ms"] == 0, drops.to_dict()
    assert drops["ratelimit"] > 0, drops.to_dict()
    assert at["ratelimit"] >= at["none"]


def test_work_conservation_hands_spare_capacity_to_unlimited_senders(results):
    df = pd.read_csv(results[0] / "xco-workconserve.csv")
    fast = df[df["flow"].str.startswith(("a3", "a4"))].groupby("series")["throughput_mbps"].sum()
    assert fast["timeslice"] > 1.2 * fast["timeslice-nowc"]


def test_short_flows_no_longer_starve_the_long_flow(results):
    df = pd.read_csv(results[0] / "xco-shorttcp.csv").set_index(["series", "parallel"])
    k = max(p for _, p in df.index)
    assert df.loc[("timeslice", k), "long_mbps"] > 10 * df.loc[("none", k), "long_mbps"]


def test_fattree_headroom_beats_full_capacity_schedules(results):
    df = pd.read_csv(results[0] / "xco-fattree.csv")
    k = df["k"].max()
    at = df[df["k"] == k].set_index("series")
    assert at.loc["hybrid-5%", "switch_drops"] < at.loc["none", "switch_drops"]
    assert at.loc["ratelimit-5%", "goodput_gbps"] > at.loc["none", "goodput_gbps"]
