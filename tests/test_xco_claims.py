"""The verdict rules of the XCo summaries: each is driven with made-up tables
in a named state and must change its answer when the figures change."""

import re

import pandas as pd

from xco.reproduce import xco_claims
from xco.reproduce.claims import FAILS, HOLDS, PARTLY, all_any, at_least, at_most


def verdicts(text: str) -> list[str]:
    return re.findall(r"^  -> (holds|partly|does not hold) ", text, re.M)


def test_rule_helpers_grade_by_threshold():
    assert at_least(0.9, 0.85, 0.7) == HOLDS and at_least(0.8, 0.85, 0.7) == PARTLY
    assert at_least(0.5, 0.85, 0.7) == FAILS
    assert at_most(0.2, 0.25, 0.5) == HOLDS and at_most(0.4, 0.25, 0.5) == PARTLY
    assert all_any([True, True]) == HOLDS and all_any([True, False]) == PARTLY and all_any([False]) == FAILS


def fairness_table(ts_rates: list[float]) -> pd.DataFrame:
    flows = ["h0->h5 (udp)", "h1->h5 (udp)", "h2->h5 (tcp)", "h3->h5 (tcp)", "h4->h5 (tcp)"]
    none = [(f, 0.0, 0.5 if "udp" in f else 0.0) for f in flows]
    rows = [{"series": "none", "flow": f, "throughput_mbps": v, "wire_share": w} for f, v, w in none]
    rows += [
        {"series": "timeslice", "flow": f, "throughput_mbps": v, "wire_share": 0.2}
        for f, v in zip(flows, ts_rates, strict=True)
    ]
    return pd.DataFrame(rows)


def test_fairness_verdict_follows_jains_index():
    equal = xco_claims.fairness(fairness_table([190, 190, 185, 185, 185]), 1000.0)
    assert verdicts(equal) == [HOLDS, HOLDS]
    skewed = xco_claims.fairness(fairness_table([450, 450, 30, 30, 30]), 1000.0)
    assert verdicts(skewed) == [HOLDS, FAILS]
    assert "Jain's index" in skewed


def udp_table(ts_total_k5: float, ts_tcp: float) -> pd.DataFrame:
    rows = []
    for s in ("none", "ratelimit", "timeslice"):
        for k in range(6):
            total = {"none": 940.0 if k < 2 else 1.0, "ratelimit": 945.0, "timeslice": 950.0}[s]
            if s == "timeslice" and k == 5:
                total = ts_total_k5
            tcp = {"none": 180.0 if k == 0 else 0.1, "ratelimit": 188.0, "timeslice": ts_tcp}[s]
            rows.append(
                {
                    "series": s,
                    "udp_senders": k,
                    "total_mbps": total,
                    "tcp_per_flow_mbps": tcp if k < 5 else float("nan"),
                    "link_util": 0.98,
                    "bottleneck_drops": 10 if s == "none" else 0,
                    "total_mbps_whole_run": total,
                }
            )
    return pd.DataFrame(rows)


def test_udp_verdicts_follow_the_totals_and_tcp_shares():
    good = verdicts(xco_claims.udp_tcp(udp_table(950.0, 185.0), 1000.0, 5))
    assert good == [HOLDS, HOLDS, HOLDS, HOLDS]
    worse = verdicts(xco_claims.udp_tcp(udp_table(750.0, 120.0), 1000.0, 5))
    # the k = 5 total falls to 75% (partly), TCP keeps 60% of its share (partly),
    # and rate limits now beat timeslices at k = 5 (partly)
    assert worse == [HOLDS, PARTLY, PARTLY, PARTLY]


def migration_table(udp_none_done: bool) -> pd.DataFrame:
    rows = []
    for s, base, done in (
        ("+tcp", 0.5, True),
        ("+tcp timeslice", 0.33, True),
        ("+udp", 5.0, udp_none_done),
        ("+udp timeslice", 0.34, True),
    ):
        for n in (1, 2, 3, 4):
            t = 60.0 if not done else base * (n + 1) * (3.0 ** (n - 1) if s == "+udp" else 1.0)
            util = 0.05 if s == "+udp" else (0.95 if s != "+tcp" else 0.9)
            rows.append(
                {"series": s, "competitors": n, "completion_s": t, "completed": done, "useful_util": util}
            )
    return pd.DataFrame(rows)


def test_migration_counts_a_run_at_the_cap_as_at_least_the_cap():
    text = xco_claims.migration(migration_table(udp_none_done=False))
    assert "4 of 4 runs hit the cap" in text
    v = verdicts(text)
    # TCP competitors grow only linearly here, so "sharply" is partly; XCo is linear and alike;
    # utilisation doubles with UDP competitors only
    assert v == [PARTLY, HOLDS, PARTLY]


def test_ping_verdict_is_the_ratio_of_the_maxima():
    def table(none_max: float) -> pd.DataFrame:
        rows = []
        for s, m in (("idle", 34.0), ("load-none", none_max), ("load-timeslice", 1000.0)):
            rows += [{"series": s, "t_s": t / 10, "rtt_us": m if t == 15 else m / 2} for t in range(20)]
        return pd.DataFrame(rows)

    assert verdicts(xco_claims.ping(table(10_000.0))) == [HOLDS]
    assert verdicts(xco_claims.ping(table(3_000.0))) == [PARTLY]
    assert verdicts(xco_claims.ping(table(1_500.0))) == [FAILS]


def test_fattree_holds_only_where_the_fabric_stops_losing_packets():
    rows = []
    for s, drops, good in (("none", 10_000, 400.0), ("ratelimit", 600, 700.0), ("ratelimit-5%", 0, 800.0)):
        rows.append({"series": s, "k": 8, "switch_drops": drops, "goodput_gbps": good})
    text = xco_claims.fattree(pd.DataFrame(rows), {"ratelimit": "XCo rate limits"})
    # 6% of the drops left is fewer, not stopped: partly; none left: holds
    assert verdicts(text) == [PARTLY, HOLDS]
    assert "XCo rate limits" in text and "600 drops that remain" in text
