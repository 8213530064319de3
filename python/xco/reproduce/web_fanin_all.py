"""``web-fanin-all`` (beyond the papers): SICC's web fan-in under every remedy the
lab has, one table and one plot (reproductions.md, "Every mechanism in one
place"; issue 27 item 6).

The workload is ``sicc-latency``'s (xco/scenarios/sicc-latency.toml: 3,000
servers, 60 per rack, 1:4 tree, 1 Gbps edges, 100 KB edge buffer, objects
U[20, 1000] B, TCP RTO_min 10 ms). The transport remedies run under One-all
(every target server queried at once): TCP NewReno as the scenario has it,
RTO_min 1 ms, DCTCP (ECN marking at every switch port at K = 20 frames), PDN,
XCo timeslices and XCo rate limits (the controller on h0, control packets
in-band). The application-level remedies are web fan-in methods: ICTCP, SW
and SICC, on the scenario's TCP. Each point is the mean over its requests.
"""

from __future__ import annotations

from .. import plot, scenario
from .._lazy import pd, plt
from . import Options, Reproduction, register
from .claims import FAILS, HOLDS, PARTLY, Check
from .claims import text as claims_text
from .experiment import note
from .sicc import grid_runs, pivot, sicc_summary, study, table_of, with_method

RID = "web-fanin-all"
XCO = {"controller": "h0", "slice_ms": 2, "control": "inband"}
# series -> (web fan-in method, scenario changes)
SERIES: dict[str, tuple[str, dict]] = {
    "newreno": ("one_all", {}),
    "rto1ms": ("one_all", {"tcp": {"rto_min_ms": 1.0, "rto_initial_ms": 1.0}}),
    "dctcp": (
        "one_all",
        {"tcp": {"profile": "dctcp", "cc": "dctcp"}, "queue": {"kind": "step", "k_packets": 20}},
    ),
    "pdn": ("one_all", {"pdn": {}}),
    "xco-timeslice": ("one_all", {"xco": {**XCO, "mode": "timeslice"}}),
    "xco-ratelimit": ("one_all", {"xco": {**XCO, "mode": "ratelimit"}}),
    "ictcp": ("ictcp", {}),
    "sw": ("sw", {}),
    "sicc": ("sicc", {}),
}
LABELS = {
    "newreno": "One-all, TCP NewReno",
    "rto1ms": "One-all, RTO_min 1 ms",
    "dctcp": "One-all, DCTCP (ECN, K = 20)",
    "pdn": "One-all, PDN",
    "xco-timeslice": "One-all, XCo timeslices (2 ms)",
    "xco-ratelimit": "One-all, XCo rate limits",
    "ictcp": "ICTCP",
    "sw": "SW (sliding window)",
    "sicc": "SICC",
}
ORDER = list(SERIES)
QUICK, FULL = [100, 500, 1000], [250, 500, 750, 1000]
REQ_QUICK, REQ_FULL = 10, 1_000
MARGIN = 0.05


def scn_of(b: dict, series: str, queries: int, requests: int) -> dict:
    method, ch = SERIES[series]
    scn = with_method(b, method, queries, requests)
    if "tcp" in ch:
        scn = scenario.with_changes(scn, tcp=ch["tcp"])
    if "queue" in ch:
        scn = scenario.with_changes(scn, topology={"queue": ch["queue"]})
    if "pdn" in ch:
        scn = scenario.with_changes(scn, pdn=ch["pdn"])
    if "xco" in ch:
        scn = scenario.with_changes(scn, xco=ch["xco"])
    return scn


def checks(df: pd.DataFrame) -> list[Check]:
    q = df["queries"].max()
    at = df[df["queries"] == q].set_index("series")
    lat = at["latency_ms_mean"]
    best = lat.idxmin()
    others = lat.drop("sicc")
    ratio = lat["sicc"] / others.min()
    if ratio < 1 / (1 + MARGIN):
        v = HOLDS
    elif ratio <= 1 + MARGIN:
        v = PARTLY
    else:
        v = FAILS
    ranked = ", ".join(f"{LABELS[s]} {lat[s]:.2f} ms" for s in lat.sort_values().index)
    return [
        Check(
            claim="(sicc.md's ranking, carried to every remedy of the lab) SICC gives the lowest request"
            " latency on web fan-in",
            ours=f"at {q} queries, fastest first: {ranked}",
            verdict=v,
            rule="holds if SICC's mean request latency is more than 5 % below every other remedy's at the"
            " largest request; partly if within 5 % of the best; else does not hold",
            why=f"the fastest is {LABELS[best]}; timeouts per request at {q} queries: "
            + ", ".join(f"{LABELS[s]} {at.loc[s, 'timeouts_mean']:.1f}" for s in ORDER if s in at.index)
            + "; with One-all every answer arrives at once into the front-end's 100 KB edge buffer, so"
            " what differs is how each remedy recovers the loss (a timeout, a shorter timeout, a drop"
            " notice) or avoids it (ECN backs off only after marks; XCo gates every sender by slices,"
            " which holds the small answers and the queries alike beyond the 10-ms RTO, and its in-band"
            " control packets, directives and reports for 3,000 hosts, count among its inter-rack packets)",
        )
    ]


MARKERS = ["o", "s", "^", "v", "D", "P", "X", "<", ">"]
STYLES = ["-", "--", "-.", ":"]


def draw(df: pd.DataFrame, opts: Options):

    fig, (a, b) = plt.subplots(1, 2, figsize=(13, 4.8), gridspec_kw={"width_ratios": [5, 3]})
    for i, s in enumerate(ORDER):
        d = df[df["series"] == s].sort_values("queries")
        xs, ys, lo, hi = plot.replicate_mean(d, "queries", "latency_ms_mean")
        extra = f" ({plot.interval_words()})" if lo is not None else ""
        # identical series (ICTCP sends as One-all when every answer fits its window) stay visible:
        # each its own marker and line style, the first ones drawn wider
        (line,) = a.plot(
            xs, ys, STYLES[i % len(STYLES)], marker=MARKERS[i],
            linewidth=2.6 - 0.2 * i, markersize=7 - 0.3 * i, label=LABELS[s] + extra,
        )  # fmt: skip
        if lo is not None:
            a.fill_between(xs, lo, hi, color=line.get_color(), alpha=0.15, linewidth=0)
    a.set_yscale("log")
    plot.plain_log(a)
    a.set_xticks(sorted(df["queries"].unique()))
    a.set_xlabel("queries per request (objects)")
    a.set_ylabel("mean request latency (ms, log)")
    a.set_title("request latency")
    a.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1.0), borderaxespad=0)
    q = df["queries"].max()
    at = df[df["queries"] == q]
    if at["series"].duplicated().any():  # several seeds: the mean, with its 95 % interval as error bars
        ci = {
            s: plot.replicate_mean(g.assign(x=0), "x", "inter_rack_packets_mean")
            for s, g in at.groupby("series")
        }
        vals = [ci[s][1][0] for s in ORDER][::-1]
        err = [
            [ci[s][1][0] - ci[s][2][0] for s in ORDER][::-1],
            [ci[s][3][0] - ci[s][1][0] for s in ORDER][::-1],
        ]
        b.barh([LABELS[s] for s in ORDER][::-1], vals, color="#4a7ab0", xerr=err, capsize=3)
    else:
        at = at.set_index("series").reindex(ORDER)
        b.barh(
            [LABELS[s] for s in ORDER][::-1], at["inter_rack_packets_mean"].to_numpy()[::-1], color="#4a7ab0"
        )
    b.set_xscale("log")
    b.set_xlabel("inter-rack packets per request (log)")
    b.tick_params(axis="y", labelsize=7)
    b.set_title(f"inter-rack packets at {q} queries")
    fig.suptitle(f"{RID}: web fan-in under every remedy, 3,000 servers, 1:4 tree, 100 KB edge buffer")
    fig.text(0.01, 0.01, note(RID, opts).replace(f"{RID}.toml", "sicc-latency.toml"), fontsize=7)
    fig.tight_layout(rect=(0, 0.03, 1, 1))
    return plot.save(fig, opts.out / f"{RID}.png")


def _tables(results: list[dict], opts: Options) -> dict[str, pd.DataFrame]:
    df = table_of(results, "queries")
    df["remedy"] = df["series"].map(LABELS)
    return {"": df}


def _draw(t: dict[str, pd.DataFrame], opts: Options) -> list:
    png = draw(t[""], opts)
    return plot.figure_files(png)


def _summary(t: dict[str, pd.DataFrame], results: list[dict], opts: Options) -> str:
    df = t[""]
    modes = (
        f"quick: {', '.join(map(str, QUICK))} queries, {REQ_QUICK} requests per point; --full:"
        f" {', '.join(map(str, FULL))} queries, {REQ_FULL:,} requests per point."
        " Settings: xco/scenarios/sicc-latency.toml; series: "
        + "; ".join(f"{s} = {LABELS[s]}" for s in ORDER)
    )
    parts = [
        pivot(df, "queries", "latency_ms_mean", "{:.2f}", ORDER),
        pivot(df, "queries", "timeouts_mean", "{:.1f}", ORDER),
        pivot(df, "queries", "inter_rack_packets_mean", "{:.0f}", ORDER),
        claims_text(checks(df), spec="sicc.md"),
    ]
    return sicc_summary(RID, "web fan-in under every remedy (beyond the papers)", opts, modes, parts)


STUDY = study(
    RID,
    "web fan-in under every remedy (beyond the papers)",
    runs=grid_runs(
        ORDER,
        "queries",
        lambda o: FULL if o.full else QUICK,
        scn_of,
        lambda o: REQ_FULL if o.full else REQ_QUICK,
    ),
    tables=_tables,
    draw=_draw,
    summarize=_summary,
    extra=lambda opts: {"series": ORDER, "requests_per_point": REQ_FULL if opts.full else REQ_QUICK},
    keys=["series", "queries", "remedy"],
)


register(
    Reproduction(
        id=RID,
        title="Beyond the papers: web fan-in under every remedy (NewReno, RTO 1 ms, DCTCP, PDN, XCo, ICTCP,"
        " SW, SICC)",
        source="sicc.md",
        run=STUDY.run,
    )
)
