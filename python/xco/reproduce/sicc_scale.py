"""``sicc-scale``: the web fan-in at 50 times the servers (spec sicc.md,
"Scalability: 50x more servers, 10,000-50,000 queries per request";
reproductions.md: request latency, all methods; claim: "SICC scales best at
50x").

``sicc-latency``'s data center (xco/scenarios/sicc-latency.toml) with 2,500
racks instead of 50: 150,000 servers, 60 per rack, 250 aggregation groups of
10 racks, the same 1:4 ToR tier, 1 Gbps edges and 100 KB edge buffers. The
catalogue grows to twice the largest request (a request names distinct
objects). Each point is one method at one request size; its figures are the
means over its requests. The table also keeps each run's simulated events
and data packet-hops (deterministic); wall time and memory are measured
outside the run (docs/sicc.md, docs/speed.md), never written here.
"""

from __future__ import annotations

import json

from .. import plot
from .._lazy import np, pd, plt
from . import Options, Reproduction, register
from .claims import FAILS, HOLDS, PARTLY, Check
from .claims import text as claims_text
from .experiment import note
from .sicc import LAT_SERIES, NAMES, compact, grid_runs, pivot, point_row, sicc_summary, study, with_method

RID = "sicc-scale"
RACKS = 2_500  # x 60 servers = 150,000: the paper's 50x of 3,000
QUICK, FULL = [10_000, 20_000], [10_000, 20_000, 30_000, 40_000, 50_000]
REQ_QUICK, REQ_FULL = 1, 2
MARGIN = 0.05


def scn_of(b: dict, method: str, queries: int, requests: int) -> dict:
    scn = with_method(b, method, queries, requests)
    scn["topology"]["racks"] = RACKS
    app = scn["apps"][0]
    app["objects"] = max(int(app.get("objects", 0)), 2 * queries)
    return scn


def measure(raw: dict) -> dict:
    meta = json.loads(raw["meta"])
    return {**compact(raw), "events": meta["events"], "data_packet_hops": meta["data_packet_hops"]}


def checks(df: pd.DataFrame) -> list[Check]:
    lowest = []
    for _, g in df.groupby("queries"):
        v = g.set_index("series")["latency_ms_mean"]
        lowest.append(all(v["sicc"] * (1 + MARGIN) < v[s] for s in v.index if s != "sicc"))
    growth = {}
    for s, g in df.groupby("series"):
        g = g.sort_values("queries")
        growth[s] = g["latency_ms_mean"].iloc[-1] / g["latency_ms_mean"].iloc[0]
    grows_least = all(growth["sicc"] <= growth[s] for s in growth)
    if all(lowest) and grows_least:
        v = HOLDS
    elif lowest[-1] or grows_least:
        v = PARTLY
    else:
        v = FAILS
    qmax = df["queries"].max()
    at = df[df["queries"] == qmax].set_index("series")
    qs = sorted(df["queries"].unique())
    return [
        Check(
            claim="SICC scales best at 50x (150,000 servers, 10,000-50,000 queries per request)",
            ours=f"at {qmax:,} queries: "
            + ", ".join(
                f"{NAMES[s]} {at.loc[s, 'latency_ms_mean']:.1f} ms" for s in LAT_SERIES if s in at.index
            )
            + f"; latency growth from {qs[0]:,} to {qs[-1]:,} queries: "
            + ", ".join(f"{NAMES[s]} {growth[s]:.2f}x" for s in LAT_SERIES if s in growth)
            + f"; SICC lowest (by more than 5 %) at {sum(lowest)} of {len(lowest)} request sizes",
            verdict=v,
            rule="holds if SICC's mean request latency is the lowest by more than 5 % at every request size"
            " and grows the least from the smallest to the largest request; partly if one of the two (lowest"
            " at the largest request, or grows the least); else does not hold",
            why=f"timeouts per request at {qmax:,} queries: "
            + ", ".join(f"{NAMES[s]} {at.loc[s, 'timeouts_mean']:.0f}" for s in LAT_SERIES if s in at.index)
            + f"; SICC's deepest tree {at.loc['sicc', 'tree_depth_max']:g} (more hubs than eq 1's N link into"
            " a multi-level tree at 2,500 racks); One-all and ICTCP answers land in the front-end's one"
            " 100 KB edge buffer at once, SW limits how many answer at once, SICC's hubs (one a rack)"
            " stream within the downlink",
        )
    ]


def draw(df: pd.DataFrame, opts: Options):

    fig, ax = plt.subplots(figsize=(6.8, 4.2))
    markers, styles = ["o", "s", "^", "D"], ["-", "--", "-.", ":"]
    for i, s in enumerate(LAT_SERIES):
        d = df[df["series"] == s].sort_values("queries")
        xs, ys, lo, hi = plot.replicate_mean(d, "queries", "latency_ms_mean")
        extra = f" ({plot.interval_words()})" if lo is not None else ""
        (line,) = ax.plot(
            xs, ys, styles[i], marker=markers[i], linewidth=2.4 - 0.3 * i, label=NAMES[s] + extra,
        )  # fmt: skip
        if lo is not None:
            ax.fill_between(xs, lo, hi, color=line.get_color(), alpha=0.15, linewidth=0)
    ax.set_yscale("log")
    plot.plain_log(ax)
    ax.set_xticks(sorted(df["queries"].unique()))
    ax.xaxis.set_major_formatter(plt.FuncFormatter(lambda v, _: f"{v:,.0f}"))
    ax.set_xlabel("queries per request (objects)")
    ax.set_ylabel("mean request latency (ms, log)")
    ax.set_title(f"{RID}: 150,000 servers (50x), 1:4 tree, 100 KB edge buffer")
    ax.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.01, 1.0), borderaxespad=0)
    fig.text(0.01, 0.01, note(RID, opts).replace(f"{RID}.toml", "sicc-latency.toml"), fontsize=7)
    fig.tight_layout(rect=(0, 0.03, 1, 1))
    return plot.save(fig, opts.out / f"{RID}.png")


def _tables(results: list[dict], opts: Options) -> dict[str, pd.DataFrame]:
    df = pd.DataFrame(
        [
            {
                "series": r["series"],
                "queries": r["queries"],
                **point_row(r),
                "events": r["events"],
                "data_packet_hops": r["data_packet_hops"],
            }
            for r in results
        ]
    )
    df["hops_per_query"] = np.round(df["data_packet_hops"] / (df["queries"] * df["requests"]), 3)
    return {"": df}


def _draw(t: dict[str, pd.DataFrame], opts: Options) -> list:
    png = draw(t[""], opts)
    return plot.figure_files(png)


def _summary(t: dict[str, pd.DataFrame], results: list[dict], opts: Options) -> str:
    df = t[""]
    modes = (
        f"150,000 servers ({RACKS:,} racks of 60); quick: {', '.join(f'{q:,}' for q in QUICK)} queries,"
        f" {REQ_QUICK} request per point; --full: {', '.join(f'{q:,}' for q in FULL)} queries, {REQ_FULL}"
        " requests per point (One-all and ICTCP take minutes a request at 50,000 queries)."
        " Settings: xco/scenarios/sicc-latency.toml with racks = 2,500."
    )
    parts = [
        pivot(df, "queries", "latency_ms_mean", "{:.1f}", LAT_SERIES),
        pivot(df, "queries", "timeouts_mean", "{:.0f}", LAT_SERIES),
        pivot(df, "queries", "data_packet_hops", "{:.0f}", LAT_SERIES),
        claims_text(checks(df), spec="sicc.md"),
    ]
    title = "request latency at 50x servers (One-all, SW, ICTCP, SICC)"
    return sicc_summary(RID, title, opts, modes, parts)


STUDY = study(
    RID,
    "request latency at 50x servers (One-all, SW, ICTCP, SICC)",
    runs=grid_runs(
        LAT_SERIES,
        "queries",
        lambda o: FULL if o.full else QUICK,
        scn_of,
        lambda o: REQ_FULL if o.full else REQ_QUICK,
    ),
    keep=measure,
    tables=_tables,
    draw=_draw,
    summarize=_summary,
    extra=lambda opts: {"series": LAT_SERIES, "requests_per_point": REQ_FULL if opts.full else REQ_QUICK},
    # each point is a data center of 150,000 servers (about 0.5 GB): two at a time at most
    max_jobs=2,
    keys=["series", "queries"],
)


register(
    Reproduction(
        id=RID,
        title="SICC at 50x servers (150,000): request latency vs 10,000-50,000 queries, all methods",
        source="sicc.md",
        run=STUDY.run,
    )
)
