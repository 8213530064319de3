"""The verdict rules of the real-host summaries (real-udp, real-vs-sim,
real-overhead): each is driven with made-up tables in a named state and must
change its answer when the figures change."""

import re

import pandas as pd

from xco.reproduce import claims_real
from xco.reproduce.claims import FAILS, HOLDS, PARTLY


def verdicts(text: str) -> list[str]:
    return re.findall(r"^  -> (holds|partly|does not hold) ", text, re.M)


def udp_tables(
    ts_totals: list[float], ts_tcp: float, udp_per_sender: float
) -> tuple[pd.DataFrame, pd.DataFrame]:
    ks = [0, 1, 2, 4]
    none_total = [95.0, 55.0, 3.0, 0.0]
    none_tcp = [19.0, 0.7, 0.1, None]
    rows, losses = [], []
    for k, nt, ntcp, tt in zip(ks, none_total, none_tcp, ts_totals, strict=True):
        rows.append({"series": "none", "udp_senders": k, "total_mbps": nt, "tcp_per_flow_mbps": ntcp})
        rows.append({"series": "timeslice", "udp_senders": k, "total_mbps": tt,
                     "tcp_per_flow_mbps": ts_tcp})  # fmt: skip
        losses.append({"series": "timeslice", "udp_senders": k, "udp_mbps": udp_per_sender * k})
        losses.append({"series": "none", "udp_senders": k, "udp_mbps": 0.0})
    return pd.DataFrame(rows), pd.DataFrame(losses)


def test_real_udp_verdicts_follow_the_totals():
    full = claims_real.udp(*udp_tables([94, 93, 92, 90], 18.5, 19.0), 100.0, 5)
    assert verdicts(full) == [HOLDS, HOLDS, HOLDS]
    idle = claims_real.udp(*udp_tables([86, 75, 72, 59], 16.5, 10.6), 100.0, 5)
    assert verdicts(idle) == [HOLDS, FAILS, HOLDS]
    # the why names the measured per-sender figure, not a constant
    assert "10.6 Mbit/s per UDP sender at k = 4" in idle and "53% of their share" in idle
    starved = claims_real.udp(*udp_tables([80, 78, 76, 75], 12.0, 19.0), 100.0, 5)
    assert verdicts(starved) == [HOLDS, PARTLY, PARTLY]


def vs_table(real: list[float], sim: list[float]) -> pd.DataFrame:
    rows = []
    for source, vals in (("real", real), ("sim", sim)):
        for i, v in enumerate(vals):
            series, k = ("none", i) if i < 3 else ("timeslice", i - 3)
            rows.append({"source": source, "series": series, "udp_senders": k, "total_mbps": v})
    return pd.DataFrame(rows)


def test_real_vs_sim_counts_points_outside_2x_and_only_collapsed_pairs_as_agreeing():
    agree = claims_real.vs_sim(vs_table([95, 4.6, 0.2, 88, 76, 60], [94, 0.1, 0.1, 94, 94, 95]), 100.0)
    assert verdicts(agree) == [HOLDS]
    assert "both below 5 Mbit/s" in agree and "none k = 1" in agree
    # one collapsed side against a live one is a disagreement, not a pair of noisy zeros
    apart = claims_real.vs_sim(vs_table([95, 40, 0.2, 88, 76, 30], [94, 0.1, 0.1, 94, 94, 95]), 100.0)
    assert verdicts(apart) == [PARTLY]
    assert "none k = 1: sim 0.1 vs real 40.0" in apart and "timeslice k = 2: sim 95.0 vs real 30.0" in apart


def overhead_table(agent_10g: float, rtt_100m_us: float) -> pd.DataFrame:
    return pd.DataFrame(
        [
            {"link_mbps": 100, "mode": "none", "throughput_mbps": 95.0, "agent_cpu_pct": 0.0},
            {"link_mbps": 100, "mode": "agent", "throughput_mbps": 93.0, "agent_cpu_pct": 5.0,
             "report_rtt_p50_us": rtt_100m_us},
            {"link_mbps": 10000, "mode": "none", "throughput_mbps": 1000.0, "agent_cpu_pct": 0.0},
            {"link_mbps": 10000, "mode": "agent", "throughput_mbps": agent_10g, "agent_cpu_pct": 80.0,
             "report_rtt_p50_us": 40.0},
        ]
    )  # fmt: skip


def test_real_overhead_verdicts():
    assert verdicts(claims_real.overhead(overhead_table(950.0, 400.0))) == [HOLDS, HOLDS]
    slow = claims_real.overhead(overhead_table(800.0, 1300.0))
    assert verdicts(slow) == [PARTLY, PARTLY]
    assert "at 10000 Mbit/s" in slow and "80% of a core" in slow
    assert verdicts(claims_real.overhead(overhead_table(500.0, 400.0)))[0] == FAILS
