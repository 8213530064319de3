"""PDN's incast experiments (../shared/spec/pdn.md): pdn-goodput and pdn-completion.

N servers each send a 10 KB server request unit to one client through a
300 KB drop-tail port; the next round starts when all have arrived. TCP
NewReno with RTO_min 200 ms collapses once the synchronized burst overflows
the buffer; a random start delay per server only postpones the collapse.
(The PDN series itself comes with the PDN mechanism.)
"""

from __future__ import annotations

from importlib import resources
from typing import Any

import pandas as pd

from .. import plot, scenario, sweep
from ..sim import app_metrics
from . import Options, Outcome, Reproduction, point_record, register, write_meta

QUICK_N = [2, 8, 16, 24, 28, 30, 31, 32, 48, 64, 72, 80, 96, 128, 150]
FULL_N = list(range(2, 151))
SERIES = {"newreno": 0.0, "delay400": 400.0, "delay800": 800.0}
SERIES_LABEL = {
    "newreno": "TCP NewReno",
    "delay400": "NewReno + delay U[0,400us]",
    "delay800": "NewReno + delay U[0,800us]",
}


def base_scenario() -> dict[str, Any]:
    """The scenario file the sweep varies (shipped as xco/scenarios/pdn-incast.toml)."""
    text = resources.files("xco").joinpath("scenarios/pdn-incast.toml").read_text()
    return scenario.parse(text)


def base_text() -> str:
    """The scenario file's text, comments included."""
    return resources.files("xco").joinpath("scenarios/pdn-incast.toml").read_text()


def _measure(raw: dict[str, Any]) -> dict[str, Any]:
    m = app_metrics(raw)
    return {
        "goodput_mbps": m["goodput_mbps"],
        "completion_ms": m["completion_ms_mean"],
        "timeouts": int(m["timeouts"]),
    }


def sweep_points(opts: Options) -> list[sweep.Point]:
    """Every (series, N) point of the sweep."""
    base = base_scenario()
    rounds = 100 if opts.full else base["apps"][0]["rounds"]
    ns = FULL_N if opts.full else QUICK_N
    return [
        sweep.Point(
            labels={"series": s, "n": n},
            scenario=scenario.with_changes(
                base,
                topology={"hosts_a": n},
                app0={"start_delay_max_us": delay, "rounds": rounds},
            ),
            seed=opts.seed,
        )
        for s, delay in SERIES.items()
        for n in ns
    ]


def run_sweep(opts: Options) -> pd.DataFrame:
    """Run every (series, N) point and return the tidy table."""
    points = sweep_points(opts)
    rows = sweep.run(points, _measure, jobs=opts.jobs, desc="pdn incast", progress=opts.progress)
    return pd.DataFrame(rows)


def collapse_n(d: pd.DataFrame) -> int | None:
    """The first N past the goodput peak where goodput falls below half of the peak."""
    d = d.sort_values("n").reset_index(drop=True)
    peak = int(d["goodput_mbps"].idxmax())
    best = d["goodput_mbps"].iloc[peak]
    low = d.iloc[peak:][d["goodput_mbps"].iloc[peak:] < 0.5 * best]
    return int(low["n"].iloc[0]) if not low.empty else None


def _collapse_text(d: pd.DataFrame) -> str:
    n = collapse_n(d)
    return f"N >= {n}" if n is not None else "none up to the largest N"


def summary(df: pd.DataFrame, opts: Options) -> str:
    """The headline figures and the settings they depend on."""
    base = base_scenario()
    t, tcp, app = base["topology"], base["tcp"], base["apps"][0]
    rounds = 100 if opts.full else app["rounds"]
    lines = [
        "PDN incast: N servers -> 1 client, two switches, all links 1 Gbps, 100 us RTT,",
        f"  switch buffer {t['switch_buffer']} per port (KB = 1000 B), SRU {app['sru']} (1000 B units),"
        f" request {app['request']} B, {rounds} rounds, persistent connections",
        f"  TCP {tcp['cc']}: MSS 1448 B (MTU 1500, timestamps), IW {tcp['initial_cwnd_segments']} segments,"
        f" RTO_min {tcp['rto_min_ms']} ms, delayed ACK {'on' if tcp['delayed_ack'] else 'off'}"
        f" ({tcp['delayed_ack_timeout_ms']} ms), seed {opts.seed}",
        "",
        f"{'series':<10} {'N=' + str(df['n'].min()):>12} {'collapse at':>24} "
        f"{'N=' + str(df['n'].max()):>12} {'completion N=max':>18}",
    ]
    for s in SERIES:
        d = df[df["series"] == s].sort_values("n")
        first, last = d.iloc[0], d.iloc[-1]
        lines.append(
            f"{s:<10} {first['goodput_mbps']:>8.1f} Mb/s {_collapse_text(d):>24} "
            f"{last['goodput_mbps']:>8.1f} Mb/s {last['completion_ms']:>15.2f} ms"
        )
    return "\n".join(lines)


def write_meta_point(base: dict, p: sweep.Point) -> dict:
    """The meta record of point ``p`` of the sweep over ``base``."""
    return point_record(base, p.labels, p.scenario, p.seed)


def _run(opts: Options, rid: str) -> Outcome:
    opts.out.mkdir(parents=True, exist_ok=True)
    df = run_sweep(opts)
    ideal = 1000.0 * 1448 / 1538
    note = f"xco {rid}, seed {opts.seed}; 1 Gbps, 100 us RTT, 300 KB/port, RTO_min 200 ms, SRU 10 KB"
    files = []
    for cur in ("pdn-goodput", "pdn-completion"):
        csv = opts.out / f"{cur}.csv"
        df[["series", "n", "goodput_mbps", "completion_ms"]].to_csv(csv, index=False)
        files.append(csv)
    files.append(
        plot.lines(
            df,
            "n",
            "goodput_mbps",
            "series",
            opts.out / "pdn-goodput.png",
            title="Incast goodput vs number of servers",
            xlabel="servers N",
            ylabel="application goodput (Mbit/s)",
            note=note,
            hline=(ideal, "payload line rate"),
        )
    )
    files.append(
        plot.lines(
            df,
            "n",
            "completion_ms",
            "series",
            opts.out / "pdn-completion.png",
            title="Incast round completion time vs number of servers",
            xlabel="servers N",
            ylabel="mean round completion time (ms, log scale)",
            note=note,
            logy=True,
        )
    )
    text = summary(df, opts)
    base = base_scenario()
    points = [write_meta_point(base, p) for p in sweep_points(opts)]
    for cur in ("pdn-goodput", "pdn-completion"):
        (opts.out / f"{cur}.txt").write_text(text + "\n")
        files.append(opts.out / f"{cur}.txt")
        files.append(write_meta(opts, cur, {"series": SERIES}, base=base, points=points))
    return Outcome(files=files, summary=text)


register(
    Reproduction(
        id="pdn-goodput",
        title="Incast goodput vs N: NewReno, +random start delay (PDN paper)",
        source="pdn.md",
        run=lambda o: _run(o, "pdn-goodput"),
        shares_run_with=["pdn-completion"],
    )
)
register(
    Reproduction(
        id="pdn-completion",
        title="Incast round completion time vs N, same series (PDN paper)",
        source="pdn.md",
        run=lambda o: _run(o, "pdn-completion"),
        shares_run_with=["pdn-goodput"],
    )
)
