"""xco-fattree: XCo on fat-trees with many bottlenecks (the paper's open question).

The same seeded mixed workload runs with no coordination, XCo rate limits and
XCo timeslices on k = 4 and 8 (16 with ``--full``) fat-trees.
"""

from __future__ import annotations

import random

import pandas as pd

from .. import plot, scenario
from . import Options, Outcome, Reproduction, register
from .xco_paper import NONE, RATELIMIT, TIMESLICE, Experiment, app_metrics, note, pivot_text, table

SERIES = {
    "none": NONE,
    "ratelimit": RATELIMIT,
    "timeslice": TIMESLICE,
    # beyond the paper: keep 5% of every link for traffic XCo does not schedule (ACKs, control)
    "ratelimit-5%": {"mode": "ratelimit", "capacity_headroom": 0.05},
    "hybrid-5%": {"mode": "hybrid", "capacity_headroom": 0.05},
}


def workload(k: int, seed: int) -> list[dict]:
    """The mixed workload for a k-ary fat-tree (deterministic in `seed`)."""
    hosts = k**3 // 4
    per_pod = hosts // k
    rng = random.Random(seed * 1000 + k)
    free = list(range(hosts - 1))  # the last host runs the controller
    rng.shuffle(free)

    def take(n: int) -> list[int]:
        return [free.pop() for _ in range(min(n, len(free)))]

    def other_pod(x: int) -> int:
        while True:
            y = rng.randrange(hosts - 1)
            if y // per_pod != x // per_pod:
                return y

    apps: list[dict] = []
    for x in take(max(1, hosts // 4)):
        apps.append({"kind": "bulk", "src": f"h{x}", "dst": f"h{other_pod(x)}"})
    for x in take(max(1, hosts // 16)):
        apps.append({"kind": "udp", "src": f"h{x}", "dst": f"h{other_pod(x)}", "rate": "3Gbps"})
    for _ in range(max(1, hosts // 16)):
        group = take(7)
        if len(group) < 7:
            break
        apps.append(
            {
                "kind": "incast",
                "client": f"h{group[0]}",
                "servers": [f"h{s}" for s in group[1:]],
                "sru": "32KB",
                "rounds": 100000,
            }
        )
    for x in take(max(1, hosts // 8)):
        apps.append(
            {"kind": "short_flows", "src": f"h{x}", "dst": f"h{other_pod(x)}", "parallel": 2, "flow": "30KB"}
        )
    return apps


def build(base: dict, k: int, full: bool, seed: int = 1) -> dict:
    scn = scenario.with_changes(base)
    scn["topology"]["k"] = k
    scn["apps"] = workload(k, seed)
    scn["xco"]["controller"] = f"h{k**3 // 4 - 1}"
    if full:
        scn["run"]["duration_ms"] = 200
    return scn


def measure(raw: dict, scn: dict, k: int) -> list[dict]:
    secs = scn["run"]["duration_ms"] / 1e3
    flows = table(raw, "flows")
    data = flows[flows["role"].isin(["bulk", "udp", "response", "short"])]
    goodput = data["bytes_delivered"].sum() * 8 / secs / 1e9
    samples = table(raw, "samples")
    kinds = {i: a["kind"] for i, a in enumerate(scn["apps"])}
    short = samples[samples["app"].map(kinds) == "short_flows"]["value"]
    incast = [
        app_metrics(raw, i).get("completion_ms_mean", float("nan")) for i, a in kinds.items() if a == "incast"
    ]
    ports = table(raw, "ports")
    switch_ports = ports[~ports["from"].str.startswith("h")]
    return [
        {
            "goodput_gbps": goodput,
            "short_fct_p99_ms": float(short.quantile(0.99)) if len(short) else float("nan"),
            "short_flows_done": int(len(short)),
            "incast_round_ms": float(pd.Series(incast).mean()),
            "switch_drops": int(switch_ports["dropped_packets"].sum()),
        }
    ]


def _draw(df: pd.DataFrame, opts: Options):
    plot.lines(
        df,
        "k",
        "short_fct_p99_ms",
        "series",
        opts.out / "xco-fattree-fct.png",
        title="xco-fattree: p99 completion time of 30 KB flows",
        xlabel="fat-tree k",
        ylabel="p99 flow completion time (ms, log scale)",
        note=note("xco-fattree", opts),
        logy=True,
    )
    return plot.lines(
        df,
        "k",
        "goodput_gbps",
        "series",
        opts.out / "xco-fattree.png",
        title="xco-fattree: total goodput under a mixed workload",
        xlabel="fat-tree k (k^3/4 hosts)",
        ylabel="total goodput (Gbit/s)",
        note=note("xco-fattree", opts),
    )


def _summary(df: pd.DataFrame) -> str:
    parts = [
        pivot_text(df, "k", "goodput_gbps", "{:.2f}"),
        pivot_text(df, "k", "short_fct_p99_ms", "{:.2f}"),
        pivot_text(df, "k", "incast_round_ms", "{:.2f}"),
        pivot_text(df, "k", "switch_drops", "{:.0f}"),
    ]
    return "\n\n".join(parts)


def _run(opts: Options) -> Outcome:
    exp = Experiment(
        id="xco-fattree",
        title="XCo on k-ary fat-trees, mixed workload (long TCP, UDP, incast, short flows)",
        x="k",
        xs=lambda full: [4, 8, 16] if full else [4, 8],
        series=SERIES,
        build=lambda base, k, full: build(base, k, full, opts.seed),
        measure=measure,
        columns=[
            "series",
            "k",
            "goodput_gbps",
            "short_fct_p99_ms",
            "short_flows_done",
            "incast_round_ms",
            "switch_drops",
        ],
        draw=_draw,
        summarize=_summary,
    )
    return exp.run(opts)


register(
    Reproduction(
        id="xco-fattree",
        title="Beyond the paper: XCo timeslices and rate limits on k = 4, 8, 16 fat-trees, mixed workload",
        source="xco.md",
        run=_run,
    )
)
