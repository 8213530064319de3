"""xco-fattree: XCo on fat-trees with many bottlenecks (the paper's open question).

The same seeded mixed workload runs with no coordination, XCo rate limits and
XCo timeslices (and, beyond the paper, both with 5% of every link kept for
traffic XCo does not schedule) on k = 4 and 8 fat-trees for 50 ms (quick), or
k = 4, 8 and 12 for 100 ms (``--full``). The full sweep is chosen to finish
within 10 minutes on a 2-core machine shared with other work (docs/xco-reproductions.md
has the measured time): at 200 ms the k = 12 runs alone took 3 to 6 minutes
each there, and k = 16 (1,024 hosts) is left out. Each finished run prints a
line with its wall time to stderr.
"""

from __future__ import annotations

import random

from .. import plot, scenario
from .._lazy import pd
from . import Options, Reproduction, register
from . import xco_claims as claims
from .experiment import (
    EXPERIMENTS,
    NONE,
    RATELIMIT,
    TIMESLICE,
    Experiment,
    app_metrics,
    note,
    pivot_text,
    table,
)

SERIES = {
    "none": NONE,
    "ratelimit": RATELIMIT,
    "timeslice": TIMESLICE,
    # beyond the paper: keep 5% of every link for traffic XCo does not schedule (ACKs, control)
    "ratelimit-5%": {"mode": "ratelimit", "capacity_headroom": 0.05},
    "hybrid-5%": {"mode": "hybrid", "capacity_headroom": 0.05},
}
SERIES_NAMES = {
    "none": "no coordination",
    "ratelimit": "XCo rate limits",
    "timeslice": "XCo timeslices",
    "ratelimit-5%": "XCo rate limits, 5% headroom",
    "hybrid-5%": "XCo hybrid, 5% headroom",
}
QUICK_K, FULL_K = [4, 8], [4, 8, 12]
QUICK_MS, FULL_MS = 50, 100


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
    """The scenario at ``k``: the workload of ``seed``, the controller on the last host."""
    scn = scenario.with_changes(base)
    scn["topology"]["k"] = k
    scn["apps"] = workload(k, seed)
    scn["xco"]["controller"] = f"h{k**3 // 4 - 1}"
    scn["run"]["duration_ms"] = FULL_MS if full else QUICK_MS
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
    rows = [
        plot.Panel("goodput_gbps", "total goodput\n(Gbit/s)"),
        plot.Panel("short_fct_p99_ms", "p99 completion of\n30 KB flows (ms, log)", logy=True),
        plot.Panel("switch_drops", "packets dropped\nin switches (log)", logy=True),
    ]
    d = df.assign(switch_drops=df["switch_drops"].clip(lower=0.5))  # a zero shows on the log axis' floor
    return plot.panels(
        d,
        "k",
        "series",
        opts.out / "xco-fattree.png",
        rows,
        title="xco-fattree: mixed workload on k-ary fat-trees (k^3/4 hosts)",
        xlabel="fat-tree k",
        note=note("xco-fattree", opts) + "; zero drops drawn at 0.5",
        labels=SERIES_NAMES,
    )


def _summary(df: pd.DataFrame, opts: Options) -> str:
    parts = [
        pivot_text(df, "k", "goodput_gbps", "{:.2f}"),
        pivot_text(df, "k", "short_fct_p99_ms", "{:.2f}"),
        pivot_text(df, "k", "incast_round_ms", "{:.2f}"),
        pivot_text(df, "k", "switch_drops", "{:.0f}"),
        claims.fattree(df, SERIES_NAMES),
    ]
    return "\n\n".join(parts)


EXPERIMENT = Experiment(
    id="xco-fattree",
    title="XCo on k-ary fat-trees, mixed workload (long TCP, UDP, incast, short flows)",
    x="k",
    xs=lambda full: FULL_K if full else QUICK_K,
    series=SERIES,
    build=lambda base, k, full: build(base, k, full, 1),
    # the workload is drawn from the seed of the run
    build_seeded=build,
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
    modes=f"quick: k = {', '.join(map(str, QUICK_K))}, {QUICK_MS} ms runs; --full: k ="
    f" {', '.join(map(str, FULL_K))}, {FULL_MS} ms runs (chosen to finish within 10 minutes on 2 cores;"
    " k = 16 is left out); figures over the whole run, start included",
    log_runs=True,
)


EXPERIMENTS[EXPERIMENT.id] = EXPERIMENT


register(
    Reproduction(
        id="xco-fattree",
        title="Beyond the paper: XCo timeslices and rate limits on k = 4, 8 (12 with --full) fat-trees",
        source="xco.md",
        run=EXPERIMENT.run,
    )
)
