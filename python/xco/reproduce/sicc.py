"""SICC's experiments (spec sicc.md, reproductions.md section SICC) on the
simulator's web fan-in (``[[apps]] kind = "web_fanin"``, docs/sicc.md).

- ``sicc-latency``: request latency against queries per request, One-all,
  SW, ICTCP and SICC, and the CDF of query latencies within a request at
  the largest request size.
- ``sicc-interrack``: inter-rack packets per request (retransmissions
  included) against the edge downlink rate, One-all, SICC-NPS, SW, ICTCP
  and SICC.
- ``sicc-speed`` and ``sicc-redirect``: SICC against SICC-NSSC and
  SICC-NQR with overloaded hubs (and, for speed control, a rack of
  front-ends at once).

Both start from ``xco/scenarios/sicc-latency.toml`` (the paper's 3,000
servers, 60 per rack, 1:4 at the ToR, 1 Gbps edges, 100 KB edge buffer,
3 replicas, objects U[20, 1000] B, RTO 10 ms) and change only the method,
the swept value and the number of requests. Each point's figures are the
means over its requests (``requests.csv`` of the run); the query-latency
CDF pools every query of the largest request size's requests.
"""

from __future__ import annotations

import io
import math

from .. import plot, scenario, sweep
from .._lazy import np, pd, plt
from . import Options, Outcome, Reproduction, register, write_meta
from .claims import FAILS, HOLDS, PARTLY, Check, all_any, at_least
from .claims import text as claims_text
from .experiment import EXPERIMENTS, Run, Study, header, note, scenario_text

NAMES = {
    "one_all": "One-all",
    "sw": "SW (sliding window)",
    "ictcp": "ICTCP",
    "sicc": "SICC",
    "sicc-nps": "SICC-NPS (no proximity)",
    "sicc-nmt": "SICC-NMT (no multi-level tree)",
    "sicc-nssc": "SICC-NSSC (no speed control)",
    "sicc-nqr": "SICC-NQR (no query redirection)",
}
BASE = "sicc-latency"

LAT_QUICK, LAT_FULL = [100, 250, 500, 1000], [250, 500, 750, 1000]
LAT_REQ_QUICK, LAT_REQ_FULL = 20, 10_000
LAT_SERIES = ["one_all", "sw", "ictcp", "sicc"]

IR_QUICK, IR_FULL = [600, 400, 200], [600, 500, 400, 300, 200]
IR_REQ_QUICK, IR_REQ_FULL = 10, 2_000
IR_SERIES = ["one_all", "sicc-nps", "sw", "ictcp", "sicc"]
IR_QUERIES = 1000

# rows of queries.csv kept per run (for the CDF): enough for 100 requests of 1,000
QUERY_ROWS = 100_000
CDF_POINTS = 200


def base() -> dict:
    """The scenario file as data."""
    return scenario.parse(scenario_text(BASE))


def with_method(b: dict, method: str, queries: int, requests: int) -> dict:
    """``b`` with the web fan-in's method, queries per request and requests set."""
    scn = scenario.with_changes(b)
    app = scn["apps"][0]
    app["method"] = method
    app["queries"] = queries
    app["requests"] = requests
    app["max_query_rows"] = QUERY_ROWS
    return scn


def app_table(raw: dict, name: str) -> pd.DataFrame:
    """An app's own table of a native run result (``requests.csv``, ``queries.csv``)."""
    for n, text in raw["app_tables"]:
        if n == name:
            return pd.read_csv(io.StringIO(text))
    raise KeyError(f"the run wrote no {name}")


def compact(raw: dict) -> dict:
    """What a point keeps of its run: per-request rows and the query-latency quantiles."""
    req = app_table(raw, "requests.csv")
    q = app_table(raw, "queries.csv")["latency_us"].to_numpy()
    probs = np.linspace(0, 1, CDF_POINTS + 1)[1:]
    quant = np.quantile(q, probs) if len(q) else np.full(len(probs), math.nan)
    return {"requests": req, "cdf": (probs, quant / 1e3), "seed": raw["seed"]}


def point_row(res: dict) -> dict:
    """The table row of one point: means over its requests."""
    r = res["requests"]
    return {
        "requests": len(r),
        "latency_ms_mean": r["latency_us"].mean() / 1e3,
        "latency_ms_p50": r["latency_us"].quantile(0.5) / 1e3,
        "latency_ms_p99": r["latency_us"].quantile(0.99) / 1e3,
        "inter_rack_packets_mean": r["inter_rack_packets"].mean(),
        "timeouts_mean": r["timeouts"].mean(),
        "targets_mean": r["targets"].mean(),
        "tree_depth_max": r["tree_depth"].max(),
    }


def grid(b: dict, series: list[str], x: str, xs: list, make, requests: int, seed: int) -> list[sweep.Point]:
    """One point per series and value of ``x`` (series outer), each ``make(b, series, value,
    requests)``, labelled ``{"series": s, x: value}``."""
    return [
        sweep.Point(labels={"series": s, x: v}, scenario=make(b, s, v, requests), seed=seed)
        for s in series
        for v in xs
    ]


def table_of(results: list[dict], x: str) -> pd.DataFrame:
    """One row per point: series, x, and the means over its requests."""
    return pd.DataFrame([{"series": r["series"], x: r[x], **point_row(r)} for r in results])


def pivot(df: pd.DataFrame, x: str, y: str, fmt: str, order: list[str]) -> str:
    """A small text table: rows = x, one column per series."""
    p = df.pivot_table(index=x, columns="series", values=y, aggfunc="mean")
    cols = [c for c in order if c in p.columns]
    w = max(12, *(len(c) + 1 for c in cols))
    lines = [f"{x:>14} " + " ".join(f"{c:>{w}}" for c in cols)]
    for idx in sorted(p.index, reverse=x == "downlink_mbps"):
        lines.append(f"{idx!s:>14} " + " ".join(f"{fmt.format(p.loc[idx, c]):>{w}}" for c in cols))
    return f"{y}:\n" + "\n".join(lines)


def sicc_summary(rid: str, title: str, opts: Options, modes: str, parts: list[str]) -> str:
    """A SICC reproduction's summary: its header (settings: sicc-latency.toml) and its parts."""
    text = header(rid, title, opts, modes).replace(
        f"xco/scenarios/{rid}.toml", "xco/scenarios/sicc-latency.toml"
    )
    return text + "\n\n".join(parts)


def grid_runs(series: list[str], x: str, xs_of, make, reqs_of):
    """The ``runs`` of a study on :func:`grid`: ``xs_of(opts)`` values of ``x``, ``reqs_of(opts)``
    requests per point."""

    def runs(opts: Options) -> list[Run]:
        points = grid(base(), series, x, xs_of(opts), make, reqs_of(opts), opts.seed)
        return [Run(p.labels, p.scenario) for p in points]

    return runs


def study(rid: str, title: str, **kw) -> Study:
    """A SICC reproduction on the experiment frame (each run keeps :func:`compact`; settings:
    ``sicc-latency.toml``), registered for replay."""
    kw.setdefault("keep", compact)
    s = Study(id=rid, title=title, base=lambda opts: base(), log_runs=True, **kw)
    EXPERIMENTS[rid] = s
    return s


def cdf_of(cdf: pd.DataFrame, keys: list[str]) -> tuple[dict, str]:
    """The query-latency CDFs of a ``-cdf`` table by ``keys`` (the first seed's when there are
    several) and words naming that seed ("" with one)."""
    seed = ""
    if "seed" in cdf.columns:
        first = cdf["seed"].min()
        cdf, seed = cdf[cdf["seed"] == first], f" (seed {first})"
    out = {}
    for key, g in cdf.groupby(keys, sort=False):
        out[key] = (g["fraction"].to_numpy(), g["query_latency_ms"].to_numpy())
    return out, seed


def cdf_rows(results: list[dict], keys: list[str], keep) -> list[dict]:
    """The ``-cdf`` table's rows of the ``results`` that ``keep`` takes."""
    return [
        {**{k: r[k] for k in keys}, "fraction": float(p), "query_latency_ms": float(v)}
        for r in results
        if keep(r)
        for p, v in zip(*r["cdf"], strict=True)
    ]


# "a above b": a exceeds b by more than this fraction of b (a tie within it is no order)
MARGIN = 0.05


def ordered(df: pd.DataFrame, x: str, y: str, order: list[str]) -> list[bool]:
    """Per x value: whether ``y`` falls along ``order`` (first the largest), each
    step by more than ``MARGIN`` of the smaller value."""
    out = []
    for _, g in df.groupby(x):
        v = g.set_index("series")[y]
        out.append(all(v[a] > v[b] * (1 + MARGIN) for a, b in zip(order, order[1:], strict=False)))
    return out


# ---------------------------------------------------------------- sicc-latency


def latency_checks(df: pd.DataFrame) -> list[Check]:
    full_order = ordered(df, "queries", "latency_ms_mean", ["one_all", "sw", "ictcp", "sicc"])
    sicc_below = ordered(df, "queries", "latency_ms_mean", ["one_all", "sicc"])
    if all(full_order):
        v1 = HOLDS
    elif all(sicc_below):
        v1 = PARTLY
    else:
        v1 = FAILS
    at_max = df[df["queries"] == df["queries"].max()].set_index("series")["latency_ms_mean"]
    to_max = df[df["queries"] == df["queries"].max()].set_index("series")["timeouts_mean"]
    ours1 = ", ".join(f"{NAMES[s]} {at_max[s]:.2f} ms" for s in LAT_SERIES if s in at_max) + (
        f" at {df['queries'].max()} queries; order One-all > SW > ICTCP > SICC at {sum(full_order)} of"
        f" {len(full_order)} request sizes, SICC below One-all at {sum(sicc_below)}"
    )
    r2 = {}
    for s, g in df.groupby("series"):
        if len(g) >= 3:
            c = np.corrcoef(g["queries"], g["latency_ms_mean"])[0, 1]
            r2[s] = float(c * c)
    lin = all_any([v >= 0.95 for v in r2.values()])
    ours2 = "; ".join(f"{NAMES[s]} R^2 = {v:.3f}" for s, v in sorted(r2.items()))
    return [
        Check(
            claim="request latency SICC < ICTCP < SW < One-all",
            ours=ours1,
            verdict=v1,
            rule="holds if mean request latency falls One-all > SW > ICTCP > SICC at every request size,"
            " each step"
            " by more than 5 %; partly if SICC is more than 5 % below One-all at every size;"
            " else does not hold",
            why=f"timeouts per request at {df['queries'].max()} queries: "
            + ", ".join(f"{NAMES[s]} {to_max[s]:.1f}" for s in LAT_SERIES if s in to_max)
            + "; every simultaneous answer lands in one 100 KB edge buffer, while SICC's hubs stream at"
            " rates that sum to the downlink (speed control); at small requests there is no overflow to"
            " save and SICC's extra hop and per-hub shares cost time",
        ),
        Check(
            claim="request latency grows linearly with the number of queries",
            ours=ours2,
            verdict=lin,
            rule="per method, R^2 of a straight line through (queries, mean latency); holds if every method's"
            " R^2 >= 0.95, partly if some do",
            why="R^2 over the request sizes this run swept (a handful of points: a coarse test of a line)",
        ),
    ]


def latency_draw(df: pd.DataFrame, cdf: dict, qmax: int, opts: Options, cdf_seed: str = ""):

    fig, (a, b) = plt.subplots(1, 2, figsize=(11, 3.9))
    plot.draw_lines(a, df, "queries", "latency_ms_mean", "series", labels=NAMES, order=LAT_SERIES)
    a.set_yscale("log")
    plot.plain_log(a)
    a.set_xlabel("queries per request (objects)")
    a.set_ylabel("mean request latency (ms, log)")
    a.set_title("request latency")
    for s in LAT_SERIES:
        if s in cdf:
            probs, ms = cdf[s]
            b.plot(ms, probs, label=NAMES[s])
    b.set_xscale("log")
    b.set_xlabel(f"query latency within a request of {qmax} queries (ms, log)")
    b.set_ylabel("fraction of queries")
    b.set_title("query-latency CDF" + cdf_seed)
    fig.suptitle("sicc-latency: web fan-in, 3,000 servers, 1:4 tree, 100 KB edge buffer")
    plot.legend_below(fig, [a, b], note=note("sicc-latency", opts))
    return plot.save(fig, opts.out / "sicc-latency.png")


def _lat_xs(opts: Options) -> list[int]:
    return LAT_FULL if opts.full else LAT_QUICK


def _lat_reqs(opts: Options) -> int:
    return LAT_REQ_FULL if opts.full else LAT_REQ_QUICK


def _lat_tables(results: list[dict], opts: Options) -> dict[str, pd.DataFrame]:
    qmax = max(_lat_xs(opts))
    rows = cdf_rows(results, ["series", "queries"], lambda r: r["queries"] == qmax)
    return {"": table_of(results, "queries"), "cdf": pd.DataFrame(rows)}


def _lat_draw(t: dict[str, pd.DataFrame], opts: Options) -> list:
    cdf, seed = cdf_of(t["cdf"], ["series"])
    cdf = {k[0] if isinstance(k, tuple) else k: v for k, v in cdf.items()}
    png = latency_draw(t[""], cdf, max(_lat_xs(opts)), opts, seed)
    return plot.figure_files(png)


def _lat_summary(t: dict[str, pd.DataFrame], results: list[dict], opts: Options) -> str:
    rid, df, qmax = "sicc-latency", t[""], max(_lat_xs(opts))
    modes = (
        f"quick: {', '.join(map(str, LAT_QUICK))} queries, {LAT_REQ_QUICK} requests per point; --full:"
        f" {', '.join(map(str, LAT_FULL))} queries, {LAT_REQ_FULL:,} requests per point (the paper's)."
        " The CDF pools the queries of up to"
        f" {QUERY_ROWS // 1000:,} requests at {qmax} queries."
    )
    text = header(rid, "request latency vs queries per request (One-all, SW, ICTCP, SICC)", opts, modes)
    return text + "\n\n".join(
        [
            pivot(df, "queries", "latency_ms_mean", "{:.2f}", LAT_SERIES),
            pivot(df, "queries", "latency_ms_p99", "{:.2f}", LAT_SERIES),
            pivot(df, "queries", "timeouts_mean", "{:.1f}", LAT_SERIES),
            claims_text(latency_checks(df), spec="sicc.md"),
        ]
    )


LATENCY = study(
    "sicc-latency",
    "request latency vs queries per request (One-all, SW, ICTCP, SICC)",
    runs=grid_runs(LAT_SERIES, "queries", _lat_xs, with_method, _lat_reqs),
    tables=_lat_tables,
    draw=_lat_draw,
    summarize=_lat_summary,
    extra=lambda opts: {"series": LAT_SERIES, "requests_per_point": _lat_reqs(opts)},
    keys=["series", "queries"],
)


# ------------------------------------------------------------- sicc-interrack


def with_downlink(b: dict, method: str, mbps: int, requests: int) -> dict:
    """``b`` at edge rate ``mbps`` (servers' links; ToR uplinks at the same rate: 1:4 with 15 links)."""
    scn = with_method(b, method, IR_QUERIES, requests)
    scn["topology"]["host_rate"] = f"{mbps}Mbps"
    scn["topology"]["tor_uplink_rate"] = f"{mbps}Mbps"
    return scn


def interrack_checks(df: pd.DataFrame) -> list[Check]:
    full = ordered(
        df, "downlink_mbps", "inter_rack_packets_mean", ["one_all", "sicc-nps", "sw", "ictcp", "sicc"]
    )
    ends = []
    for _, g in df.groupby("downlink_mbps"):
        v = g.set_index("series")["inter_rack_packets_mean"]
        ends.append(v["one_all"] >= v.max() and v["sicc"] <= v.min())
    verdict = HOLDS if all(full) else (PARTLY if all(ends) else FAILS)
    # ties count as "lowest": SICC-NPS and SICC coincide when no tree forms
    means = df.groupby("series")["inter_rack_packets_mean"].mean()
    ours = ", ".join(f"{NAMES[s]} {means[s]:.0f}" for s in IR_SERIES if s in means)
    ours += (
        f" packets per request (mean over the downlinks); the full order holds at {sum(full)} of"
        f" {len(full)} downlinks, One-all highest and SICC lowest at {sum(ends)}"
    )
    ratio = means.get("one_all", math.nan) / means.get("sicc", math.nan)
    depth_nps = df[df["series"] == "sicc-nps"]["tree_depth_max"].max()
    return [
        Check(
            claim="inter-rack packets One-all > SICC-NPS > SW > ICTCP > SICC",
            ours=ours,
            verdict=verdict,
            rule="holds if One-all > SICC-NPS > SW > ICTCP > SICC at every downlink, each step by more"
            " than 5 %;"
            " partly if One-all is the highest and SICC the lowest (ties included) at every downlink;"
            " else does not hold",
            why="SICC's hubs pack their swarm's objects into full packets and only hubs talk across racks;"
            " SICC-NPS differs from SICC only where Algorithm 1 links hubs: the deepest tree of any SICC-NPS"
            f" request here has depth {depth_nps:g} (1: every hub straight to the front-end, no link to"
            " randomise; docs/sicc.md on eq 1)",
        ),
        Check(
            claim="SICC cuts inter-rack packets substantially against One-all",
            ours=f"One-all / SICC = {ratio:.2f}",
            verdict=at_least(ratio, 2.0, 1.2),
            rule="holds if One-all sends at least 2x SICC's inter-rack packets, partly from 1.2x",
            why="counted at every ToR's uplinks: queries, objects, ACKs and retransmissions leaving a rack",
        ),
    ]


def interrack_draw(df: pd.DataFrame, opts: Options):

    fig, ax = plot.figure()
    plot.draw_lines(
        ax, df, "downlink_mbps", "inter_rack_packets_mean", "series", labels=NAMES, order=IR_SERIES
    )
    ax.set_yscale("log")
    plot.plain_log(ax)
    ax.invert_xaxis()
    ax.set_xlabel("edge downlink rate (Mbit/s)")
    ax.set_ylabel("inter-rack packets per request (log)")
    ax.set_title(f"sicc-interrack: {IR_QUERIES} queries per request, 3,000 servers")
    plot.legend_below(
        fig, [ax], note=note("sicc-interrack", opts).replace("sicc-interrack.toml", "sicc-latency.toml")
    )
    return plot.save(fig, opts.out / "sicc-interrack.png")


def _ir_xs(opts: Options) -> list[int]:
    return IR_FULL if opts.full else IR_QUICK


def _ir_reqs(opts: Options) -> int:
    return IR_REQ_FULL if opts.full else IR_REQ_QUICK


def _ir_summary(t: dict[str, pd.DataFrame], results: list[dict], opts: Options) -> str:
    rid, df = "sicc-interrack", t[""]
    modes = (
        f"quick: downlinks {', '.join(map(str, IR_QUICK))} Mbit/s, {IR_REQ_QUICK} requests per point; --full:"
        f" {', '.join(map(str, IR_FULL))} Mbit/s, {IR_REQ_FULL:,} requests per point (the paper ran 10,000;"
        " fewer to keep --full within minutes). Every server's edge link and the ToR uplinks change"
        " together. Settings: xco/scenarios/sicc-latency.toml."
    )
    text = header(rid, "inter-rack packets vs downlink rate", opts, modes).replace(
        "xco/scenarios/sicc-interrack.toml", "xco/scenarios/sicc-latency.toml"
    )
    return text + "\n\n".join(
        [
            pivot(df, "downlink_mbps", "inter_rack_packets_mean", "{:.0f}", IR_SERIES),
            pivot(df, "downlink_mbps", "latency_ms_mean", "{:.2f}", IR_SERIES),
            pivot(df, "downlink_mbps", "timeouts_mean", "{:.1f}", IR_SERIES),
            claims_text(interrack_checks(df), spec="sicc.md"),
        ]
    )


def _ir_draw(t: dict[str, pd.DataFrame], opts: Options) -> list:
    png = interrack_draw(t[""], opts)
    return plot.figure_files(png)


INTERRACK = study(
    "sicc-interrack",
    "inter-rack packets vs downlink rate",
    runs=grid_runs(IR_SERIES, "downlink_mbps", _ir_xs, with_downlink, _ir_reqs),
    tables=lambda results, opts: {"": table_of(results, "downlink_mbps")},
    draw=_ir_draw,
    summarize=_ir_summary,
    extra=lambda opts: {"series": IR_SERIES, "requests_per_point": _ir_reqs(opts)},
    keys=["series", "downlink_mbps"],
)


register(
    Reproduction(
        id="sicc-latency",
        title="SICC: request latency vs queries per request, One-all, SW, ICTCP, SICC; query-latency CDF",
        source="sicc.md",
        run=LATENCY.run,
    )
)
register(
    Reproduction(
        id="sicc-interrack",
        title="SICC: inter-rack packets vs downlink rate, One-all, SICC-NPS, SW, ICTCP, SICC",
        source="sicc.md",
        run=INTERRACK.run,
    )
)


# ------------------------------------------------------- sicc-speed, sicc-redirect
# Both run the paper's speed-control setup: every hub overloaded with probability
# 50 %, an overloaded hub sending at 10 % of its assigned rate (of its line rate
# when it has none); sicc-speed adds the multi-front-end case (every server of
# rack 0 a front-end, all at once).

OVERLOAD = {"overload_probability": 0.5, "overload_fraction": 0.1}
ABL_QUICK, ABL_FULL = [250, 500, 1000], [250, 500, 750, 1000]
ABL_REQ_QUICK, ABL_REQ_FULL = 10, 1_000
RACK_QUICK, RACK_FULL = [100, 250], [100, 250, 500]
RACK_REQ_QUICK, RACK_REQ_FULL = 2, 20
# the multi-front-end setup's "B_a = 200 KB" (spec sicc.md, Evaluation setup), read as the buffer
# S_a of the aggregation router's port toward the edge switch (docs/sicc.md): every port of every
# aggregation router (g*) holds 200 KB; speed control's S_a sums the ports into the front-ends' rack
RACK_AGG_PORT_BUFFER = "200KB"
# the spec's tree is over-subscribed at the ToR tier only (1:4): above it, an aggregation router
# carries what its racks' uplinks send (10 racks x 15 x 1 Gbps). sicc-latency.toml's 10 Gbps
# aggregation-core link is no bottleneck for one front-end, but a rack of 60 front-ends pulls up
# to 15 Gbps through it, and the queue then builds at the core's port, where the aggregation
# level of speed control does not look
RACK_AGG_CORE_RATE = "150Gbps"


def ablation_scn(b: dict, method: str, queries: int, requests: int, setup: str) -> dict:
    """The overloaded-hub scenario (``setup`` = ``overloaded``), or the whole rack of front-ends
    (``rack``, hubs not overloaded: the paper's second speed-control test, with the aggregation
    routers' port buffers at B_a = 200 KB)."""
    scn = with_method(b, method, queries, requests)
    if setup == "overloaded":
        scn["apps"][0].update(OVERLOAD)
    else:
        scn["apps"][0]["front_end_rack"] = 0
        scn["topology"]["queues"] = [{"switch": "g*", "kind": "droptail", "buffer": RACK_AGG_PORT_BUFFER}]
        scn["topology"]["agg_core_rate"] = RACK_AGG_CORE_RATE
    return scn


def ablation_checks(df: pd.DataFrame, full: str, ablated: str, part: str) -> list[Check]:
    checks = []
    for setup, g in df.groupby("setup"):
        ratios = []
        for _, h in g.groupby("queries"):
            v = h.set_index("series")["latency_ms_mean"]
            ratios.append(v[full] / v[ablated])
        ok = [r <= 0.8 for r in ratios]
        checks.append(
            Check(
                claim=f"{part} cuts request latency substantially ({setup} hubs)"
                if setup == "overloaded"
                else f"{part} cuts request latency substantially (a rack of front-ends at once)",
                ours=f"{NAMES[full]} / {NAMES[ablated]} mean latency: "
                + ", ".join(
                    f"{q} queries {r:.2f}" for q, r in zip(sorted(set(g["queries"])), ratios, strict=True)
                ),
                verdict=all_any(ok),
                rule="holds if SICC's mean request latency is at most 0.8 of the ablation's at every request"
                " size, partly if at some, else does not hold",
                why="timeouts per request: "
                + ", ".join(
                    f"{NAMES[s]} {h['timeouts_mean'].mean():.1f}" for s, h in g.groupby("series", sort=False)
                )
                + (
                    "; redirected queries per request (SICC): "
                    f"{g[g['series'] == full]['redirected_mean'].mean():.1f}"
                ),
            )
        )
    return checks


def ablation_draw(df: pd.DataFrame, rid: str, order: list[str], opts: Options):

    setups = list(dict.fromkeys(df["setup"]))
    fig, axes = plt.subplots(1, len(setups), figsize=(5.5 * len(setups), 4.2), squeeze=False)
    for ax, setup in zip(axes[0], setups, strict=True):
        d = df[df["setup"] == setup]
        plot.draw_lines(ax, d, "queries", "latency_ms_mean", "series", labels=NAMES, order=order)
        ax.set_xlabel("queries per request (objects)")
        ax.set_ylabel("mean request latency (ms)")
        ax.set_title(
            "hubs overloaded w.p. 50 % at 10 % speed"
            if setup == "overloaded"
            else "every server of a rack a front-end"
        )
        ax.set_ylim(bottom=0)
    fig.suptitle(f"{rid}: 3,000 servers, 1:4 tree, 100 KB edge buffer")
    plot.legend_below(fig, list(axes[0]), note=note(rid, opts).replace(f"{rid}.toml", "sicc-latency.toml"))
    return plot.save(fig, opts.out / f"{rid}.png")


def _abl_xs_reqs(setup: str, opts: Options) -> tuple[list[int], int]:
    if setup == "overloaded":
        return (ABL_FULL, ABL_REQ_FULL) if opts.full else (ABL_QUICK, ABL_REQ_QUICK)
    return (RACK_FULL, RACK_REQ_FULL) if opts.full else (RACK_QUICK, RACK_REQ_QUICK)


def ablation_study(rid: str, full: str, ablated: str, part: str, setups: list[str]) -> Study:
    """SICC against one of its ablations (``sicc-speed``, ``sicc-redirect``) on the frame."""

    def runs(opts: Options) -> list[Run]:
        b = base()
        out = []
        for setup in setups:
            xs, reqs = _abl_xs_reqs(setup, opts)
            for s in (full, ablated):
                for q in xs:
                    out.append(
                        Run({"setup": setup, "series": s, "queries": q}, ablation_scn(b, s, q, reqs, setup))
                    )
        return out

    def tables(results: list[dict], opts: Options) -> dict[str, pd.DataFrame]:
        df = pd.DataFrame(
            [
                {
                    "setup": r["setup"],
                    "series": r["series"],
                    "queries": r["queries"],
                    **point_row(r),
                    "redirected_mean": r["requests"]["redirected"].mean(),
                }
                for r in results
            ]
        )
        return {"": df}

    def draw(t: dict[str, pd.DataFrame], opts: Options) -> list:
        png = ablation_draw(t[""], rid, [full, ablated], opts)
        return plot.figure_files(png)

    def summarize(t: dict[str, pd.DataFrame], results: list[dict], opts: Options) -> str:
        df = t[""]
        modes = (
            f"overloaded hubs: {', '.join(map(str, ABL_QUICK))} queries, {ABL_REQ_QUICK} requests per point"
            f" (--full: {', '.join(map(str, ABL_FULL))}, {ABL_REQ_FULL:,})"
            + (
                f"; a rack of 60 front-ends: {', '.join(map(str, RACK_QUICK))} queries, {RACK_REQ_QUICK}"
                f" requests each (--full: {', '.join(map(str, RACK_FULL))}, {RACK_REQ_FULL}),"
                f" every aggregation router port's buffer {RACK_AGG_PORT_BUFFER} (the paper's B_a,"
                f" read as S_a), aggregation-core links {RACK_AGG_CORE_RATE} (over-subscribed at"
                " the ToR tier only)"
                if "rack" in setups
                else ""
            )
            + ". Settings: xco/scenarios/sicc-latency.toml. With many front-ends, a request's timeouts count"
            " every front-end's connections in its time."
        )
        text = header(rid, f"SICC vs {NAMES[ablated]}", opts, modes).replace(
            f"xco/scenarios/{rid}.toml", "xco/scenarios/sicc-latency.toml"
        )
        parts = []
        for setup, g in df.groupby("setup", sort=False):
            parts.append(f"[{setup}] " + pivot(g, "queries", "latency_ms_mean", "{:.2f}", [full, ablated]))
            parts.append(f"[{setup}] " + pivot(g, "queries", "timeouts_mean", "{:.1f}", [full, ablated]))
        parts.append(claims_text(ablation_checks(df, full, ablated, part), spec="sicc.md"))
        return text + "\n\n".join(parts)

    return study(
        rid,
        f"SICC vs {NAMES[ablated]}",
        runs=runs,
        tables=tables,
        draw=draw,
        summarize=summarize,
        extra=lambda opts: {"series": [full, ablated], "setups": setups},
        keys=["setup", "series", "queries"],
    )


register(
    Reproduction(
        id="sicc-speed",
        title="SICC vs SICC-NSSC: overloaded hubs, then a rack of front-ends at once",
        source="sicc.md",
        run=ablation_study(
            "sicc-speed", "sicc", "sicc-nssc", "two-level speed control", ["overloaded", "rack"]
        ).run,
    )
)
register(
    Reproduction(
        id="sicc-redirect",
        title="SICC vs SICC-NQR: query redirection with overloaded hubs",
        source="sicc.md",
        run=ablation_study("sicc-redirect", "sicc", "sicc-nqr", "query redirection", ["overloaded"]).run,
    )
)


# ------------------------------------------------------------- sicc-treetime
# Tree building alone (swarms and Algorithm 1) for many target servers of the
# paper's scalability data center, timed on this machine: the instances are
# fixed by the seed, the times are wall-clock and differ from run to run.

TT_QUICK, TT_FULL = [1_000, 10_000, 50_000], [1_000, 5_000, 10_000, 20_000, 50_000]
TT_REPS_QUICK, TT_REPS_FULL = (4, 4), (8, 8)


def run_treetime(opts: Options) -> Outcome:

    from .. import _native

    rid = "sicc-treetime"
    opts.out.mkdir(parents=True, exist_ok=True)
    xs = TT_FULL if opts.full else TT_QUICK
    instances, reps = TT_REPS_FULL if opts.full else TT_REPS_QUICK
    rows, builds = [], []
    for n in xs:
        r = _native.bench_sicc_tree(n, instances=instances, reps=reps, seed=opts.seed)
        ms = np.array(r["build_ns"], dtype=float) / 1e6
        for i, v in enumerate(r["build_ns"]):
            builds.append({"targets": n, "build": i, "build_ms": v / 1e6})
        rows.append(
            {
                "targets": n,
                "hubs": r["hubs"],
                "tree_depth": r["depth"],
                "max_children": r["max_children"],
                "builds": len(ms),
                "build_ms_min": ms.min(),
                "build_ms_median": float(np.median(ms)),
                "build_ms_p99": float(np.quantile(ms, 0.99)),
                "build_ms_mean": ms.mean(),
            }
        )
    df = pd.DataFrame(rows)
    csv = opts.out / f"{rid}.csv"
    df.to_csv(csv, index=False)
    bcsv = opts.out / f"{rid}-builds.csv"
    pd.DataFrame(builds).to_csv(bcsv, index=False)
    fig, ax = plt.subplots(figsize=(6.5, 4.2))
    ax.plot(df["targets"], df["build_ms_median"], marker="o", label="median")
    ax.fill_between(df["targets"], df["build_ms_min"], df["build_ms_p99"], alpha=0.2, label="min to p99")
    ax.axhline(1.0, color="grey", linestyle="--", linewidth=1, label="1 ms (the issue's target)")
    ax.set_xscale("log")
    ax.set_yscale("log")
    plot.plain_log(ax)
    ax.set_xlabel("target servers per request")
    ax.set_ylabel("time to build the tree (ms, log)")
    ax.set_title("sicc-treetime: swarms and Algorithm 1, one core")
    ax.legend(fontsize=8)
    fig.text(0.01, 0.01, f"xco {rid}, seed {opts.seed}; wall times of this machine", fontsize=7)
    fig.tight_layout(rect=(0, 0.03, 1, 1))
    png = plot.save(fig, opts.out / f"{rid}.png")
    big = df[df["targets"] == max(xs)].iloc[0]
    checks = [
        Check(
            claim="tree building takes a few milliseconds at the largest size (50,000 target servers)",
            ours=f"median {big['build_ms_median']:.3f} ms, min {big['build_ms_min']:.3f}, p99"
            f" {big['build_ms_p99']:.3f} over {int(big['builds'])} builds ({int(big['hubs'])} hubs)",
            verdict=HOLDS if big["build_ms_median"] <= 5.0 else FAILS,
            rule="holds if the median build at the largest size takes at most 5 ms",
            why="two linear passes over the targets (swarms by rack) and O(H log H) over the hubs",
        ),
        Check(
            claim="(the issue's target) at most 1 ms for 50,000 target servers on one core",
            ours=f"median {big['build_ms_median']:.3f} ms, p99 {big['build_ms_p99']:.3f} ms",
            verdict=HOLDS
            if big["build_ms_p99"] <= 1.0
            else (PARTLY if big["build_ms_median"] <= 1.0 else FAILS),
            rule="holds if the p99 is at most 1 ms, partly if the median is, else does not hold",
            why="the tail (p99) moves with the machine's other load far more than the median"
            " (docs/sicc.md, Speed: building the tree)",
        ),
    ]
    lines = [
        f"{rid}: time to build SICC's tree (swarms and Algorithm 1) vs target servers",
        f"seed {opts.seed} (the instances); {'full' if opts.full else 'quick'} mode: {instances} instances x"
        f" {reps} builds per size; 150,000 servers, 60 per rack, 50 racks per aggregation router,"
        " 1-10 objects per target, N = 66 (eq 1); wall times of this machine: they differ from run to run",
        "",
        df.to_string(index=False, float_format=lambda v: f"{v:.3f}"),
        "",
        claims_text(checks, spec="sicc.md"),
    ]
    text = "\n".join(lines)
    txt = opts.out / f"{rid}.txt"
    txt.write_text(text + "\n")
    meta = write_meta(
        opts,
        rid,
        {"targets": xs, "instances": instances, "reps": reps, "servers": 150_000, "racks_per_agg": 50},
    )
    return Outcome(files=[csv, bcsv, *plot.figure_files(png), txt, meta], summary=text)


register(
    Reproduction(
        id="sicc-treetime",
        replicates=False,
        replicates_note="wall times of this machine: the seed fixes the instances, the builds repeat",
        title="SICC: time to build the tree (swarms, Algorithm 1) for 1,000 to 50,000 target servers",
        source="sicc.md",
        run=run_treetime,
    )
)
