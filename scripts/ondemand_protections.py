#!/usr/bin/env python3
"""On-demand coordination (issue 28 item 4) against XCo's protections in the simulator.

Runs the incast (``xco-incast``), UDP-vs-TCP (``xco-udp-1g``) and Outcast
(``real-outcast``'s simulator case) scenarios with XCo's timeslices as the
reproductions run them, and again with ``on_demand = true`` in ``[xco]``
(default threshold, ratio and hold), and prints the figures side by side:

    PYTHONPATH=python python3 scripts/ondemand_protections.py [--seed 1]

Quick sizes (the reproductions' quick modes). Nothing is written.
"""

from __future__ import annotations

import argparse
import io

from xco import sim
from xco._lazy import pd
from xco.reproduce import real_outcast, xco_paper
from xco.reproduce.experiment import EXPERIMENTS


def _with_on_demand(series: dict | None, on: bool) -> dict | None:
    if series is None:
        return None
    return {**series, "on_demand": True} if on else series


def sweep(rid: str, series: dict[str, dict | None], seed: int) -> pd.DataFrame:
    """Every x of experiment ``rid`` (quick) under each of ``series``."""
    e = EXPERIMENTS[rid]
    base = e.base()
    rows = []
    for name, xco in series.items():
        for x in e.xs(False):
            scn = xco_paper.with_series(e.build(base, x, False), xco)
            raw = sim.run_raw(scn, seed)
            for row in e.measure(raw, scn, x):
                rows.append({"series": name, e.x: x, **row})
    return pd.DataFrame(rows)


def outcast(seed: int, seconds: float = 2.0) -> pd.DataFrame:
    """The Outcast case (one 2-hop flow against 6-hop flows into one port) under each series."""
    rows = []
    for name, (series, on) in {
        "none": ("none", False),
        "timeslice": ("timeslice", False),
        "timeslice+on_demand": ("timeslice", True),
    }.items():
        sc = real_outcast.sim_scenario(series, seconds, seed)
        if on:
            sc["xco"]["on_demand"] = True
        raw = real_outcast.run_raw(sc, seed)
        f = pd.read_csv(io.StringIO(raw["flows"]))
        f = f[(f["role"] == "bulk") & (f["app_kind"] == "bulk")]
        p = pd.read_csv(io.StringIO(raw["ports"]))
        p = p[(p["from"] == "e0_0") & (p["to"] == "h0")]
        hops = f["src"].map(lambda s: real_outcast.hops(f"h{int(str(s)[1:]) + 1}"))
        two = float(f[hops == 2]["goodput_mbps"].mean())
        six = float(f[hops == 6]["goodput_mbps"].mean())
        rows.append(
            {
                "series": name,
                "two_hop_mbps": two,
                "six_hop_mean_mbps": six,
                "ratio_2hop_6hop": two / six if six else float("nan"),
                "total_mbps": float(f["goodput_mbps"].sum()),
                "bottleneck_drops": int(p["dropped_packets"].sum()) if len(p) else 0,
            }
        )
    return pd.DataFrame(rows)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args()
    pd.set_option("display.width", 200)
    ts2 = {"mode": "timeslice", "slice_ms": 2}
    inc = sweep(
        "xco-incast",
        {"none": None, "timeslice-2ms": ts2, "timeslice-2ms+on_demand": _with_on_demand(ts2, True)},
        args.seed,
    )
    print("xco-incast (quick): read throughput, Mbit/s; client port drops; RTOs\n")
    for col in ("throughput_mbps", "client_port_drops", "timeouts"):
        print(inc.pivot(index="series", columns="servers", values=col).to_string(), "\n")
    ts = {"mode": "timeslice"}
    udp = sweep(
        "xco-udp-1g",
        {"none": None, "timeslice": ts, "timeslice+on_demand": _with_on_demand(ts, True)},
        args.seed,
    )
    print("xco-udp-1g (quick): by UDP senders k of 5\n")
    for col in [c for c in udp.columns if c not in ("series", "udp_senders")]:
        print(col)
        print(udp.pivot(index="series", columns="udp_senders", values=col).to_string(), "\n")
    print("Outcast (real-outcast's simulator case, 2 s)\n")
    print(outcast(args.seed).to_string(index=False))


if __name__ == "__main__":
    main()
