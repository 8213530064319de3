"""``sicc-compress``: SICC's packet compression (spec sicc.md §Design 5;
reproductions.md: "hubs straight to front-end, object size U[20, x],
x = 200..1000 B; compression ratio, latency saved").

Same scenario as ``sicc-latency`` (xco/scenarios/sicc-latency.toml) at 1,000
queries per request, with the hubs straight to the front-end (SICC-NMT:
Algorithm 1's tree off; at this data center's 50 racks SICC builds no second
level anyway) and the largest object x swept. Each x runs twice on the same
requests (same seed): hubs packing the objects they may send at once into
writes of at most one MSS (``compression = true``, the default), and every
object its own message (``compression = false``). Speed control and query
redirection stay on in both.

Compression ratio = packets without / with compression (spec §Design 5),
counted where compression acts: packets arriving at the front-end's edge
port (its downlink), retransmissions and the ACKs of its own queries
included; the ratio of inter-rack packets is shown beside it. Latency saved
= mean request latency without minus with.
"""

from __future__ import annotations

from .. import plot
from .._lazy import pd, plt
from . import Options, Reproduction, register
from .claims import FAILS, HOLDS, PARTLY, Check
from .claims import text as claims_text
from .experiment import note
from .sicc import grid_runs, pivot, point_row, sicc_summary, study, with_method

RID = "sicc-compress"
METHOD = "sicc-nmt"
SERIES = ["packed", "unpacked"]
LABELS = {
    "packed": "SICC-NMT, hubs pack objects (compression)",
    "unpacked": "SICC-NMT, one object per packet (no compression)",
}
QUERIES = 1000
X_QUICK, X_FULL = [200, 400, 600, 800, 1000], [200, 300, 400, 500, 600, 700, 800, 900, 1000]
REQ_QUICK, REQ_FULL = 10, 1_000
# "well above 1": at least half again as many packets without compression as with it
WELL_ABOVE = 1.5
# "falling": a step up by more than this fraction is a rise (a tie within it is no order)
MARGIN = 0.05


def scn_of(b: dict, series: str, max_bytes: int, requests: int) -> dict:
    """The point's scenario: ``sicc-latency`` with hubs straight to the front-end, objects
    U[20, ``max_bytes``] B, packing on (``packed``) or off (``unpacked``)."""
    scn = with_method(b, METHOD, QUERIES, requests)
    app = scn["apps"][0]
    app["object_max_bytes"] = max_bytes
    app["compression"] = series == "packed"
    return scn


def ratios(df: pd.DataFrame) -> pd.DataFrame:
    """Per x: compression ratios (packets at the front-end's port, inter-rack packets) and
    latency saved, from the two series' means."""
    v = df.set_index(["object_max_bytes", "series"])
    rows = []
    for x in sorted(set(df["object_max_bytes"])):
        w, n = v.loc[(x, "packed")], v.loc[(x, "unpacked")]
        rows.append(
            {
                "object_max_bytes": x,
                "compression_ratio": n["fe_packets_mean"] / w["fe_packets_mean"],
                "inter_rack_ratio": n["inter_rack_packets_mean"] / w["inter_rack_packets_mean"],
                "latency_saved_ms": n["latency_ms_mean"] - w["latency_ms_mean"],
                "latency_saved_pct": 100
                * (n["latency_ms_mean"] - w["latency_ms_mean"])
                / n["latency_ms_mean"],
            }
        )
    return pd.DataFrame(rows)


def compress_checks(r: pd.DataFrame, df: pd.DataFrame) -> list[Check]:
    cr = list(r["compression_ratio"])
    xs = list(r["object_max_bytes"])
    above = [c >= WELL_ABOVE for c in cr]
    v1 = HOLDS if all(above) else (PARTLY if any(above) else FAILS)
    steps_fall = [b <= a * (1 + MARGIN) for a, b in zip(cr, cr[1:], strict=False)]
    drop = cr[-1] < cr[0] * (1 - MARGIN)
    v2 = HOLDS if drop and all(steps_fall) else (PARTLY if drop else FAILS)
    per_x = ", ".join(f"x = {x} B: {c:.2f}" for x, c in zip(xs, cr, strict=True))
    pk = df.pivot_table(index="object_max_bytes", columns="series", values="fe_packets_mean")
    return [
        Check(
            claim="compression ratio well above 1",
            ours=f"packets at the front-end's port without / with compression: {per_x}",
            verdict=v1,
            rule=f"holds if the ratio is at least {WELL_ABOVE} at every x ('well above': half again as many"
            " packets without), partly if at some, else does not hold",
            why="a hub writes what it may send at once in packets of up to 1,448 B of payload (the MSS),"
            f" objects of mean (20 + x) / 2 B; per request {QUERIES} objects took"
            f" {pk['unpacked'].min():.0f}-{pk['unpacked'].max():.0f} packets without and"
            f" {pk['packed'].min():.0f}-{pk['packed'].max():.0f} with (the count also holds the ACKs of the"
            " front-end's queries and rate messages, and retransmissions)",
        ),
        Check(
            claim="the compression ratio falls as objects grow",
            ours=f"{cr[0]:.2f} at x = {xs[0]} B down to {cr[-1]:.2f} at x = {xs[-1]} B;"
            f" no step up by more than 5 % at {sum(steps_fall)} of {len(steps_fall)} steps",
            verdict=v2,
            rule="holds if the ratio at the largest x is more than 5 % below the smallest x's and no step"
            " to the next x raises it by more than 5 %; partly if only the first holds; else does not hold",
            why="fewer larger objects fit in one MSS: the ideal ratio is about 1,448 / mean object size"
            " while objects are small, and a hub can pack only what is queued when its rate lets it send",
        ),
    ]


def latency_note(df: pd.DataFrame, r: pd.DataFrame) -> str:
    """Latency saved, with what sets the request's time: the downlink's mean use without compression."""
    un = df[df["series"] == "unpacked"]
    use = un["fe_bytes_mean"] * 8 / (un["latency_ms_mean"] * 1e3)  # bit/ms / 1e3 = Mbit/s
    return (
        "latency saved (the spec names it as a metric and states no claim about it): "
        + ", ".join(
            f"x = {x} B {ms:.3f} ms ({pct:.1f} %)"
            for x, ms, pct in zip(
                r["object_max_bytes"], r["latency_saved_ms"], r["latency_saved_pct"], strict=True
            )
        )
        + f". Without compression the front-end's downlink carried {use.min():.0f}-{use.max():.0f} Mbit/s on"
        " average over a request (bytes arriving at its edge port, headers included, over the request's"
        " latency), below its 1,000 Mbit/s: the request's time is set by the hubs' rates (speed control's"
        " shares count object bytes, not headers), so the header bytes and packets compression saves do not"
        " shorten it much here."
    )


def draw(df: pd.DataFrame, r: pd.DataFrame, opts: Options):
    fig, (a, b) = plt.subplots(1, 2, figsize=(11, 4.2))
    a.plot(r["object_max_bytes"], r["compression_ratio"], "o-", label="packets at the front-end's edge port")
    a.plot(r["object_max_bytes"], r["inter_rack_ratio"], "s--", label="inter-rack packets")
    a.axhline(1.0, color="grey", linewidth=1, linestyle=":")
    a.set_xlabel("largest object x (B); sizes U[20, x]")
    a.set_ylabel("compression ratio (packets without / with)")
    a.set_title("compression ratio")
    a.set_ylim(bottom=0)
    a.legend(fontsize=8)
    plot.draw_lines(b, df, "object_max_bytes", "latency_ms_mean", "series", labels=LABELS, order=SERIES)
    b.set_xlabel("largest object x (B); sizes U[20, x]")
    b.set_ylabel("mean request latency (ms)")
    b.set_title("request latency; saved = gap between the lines")
    b.set_ylim(bottom=0)
    fig.suptitle(f"{RID}: {QUERIES} queries per request, hubs straight to the front-end, 3,000 servers")
    plot.legend_below(fig, [b], note=note(RID, opts).replace(f"{RID}.toml", "sicc-latency.toml"))
    return plot.save(fig, opts.out / f"{RID}.png")


def measure(raw: dict) -> dict:
    """What a point keeps: its per-request rows (no query-latency CDF here)."""
    from .sicc import app_table

    return {"requests": app_table(raw, "requests.csv"), "seed": raw["seed"]}


def _reqs(opts: Options) -> int:
    return REQ_FULL if opts.full else REQ_QUICK


def _tables(results: list[dict], opts: Options) -> dict[str, pd.DataFrame]:
    df = pd.DataFrame(
        [
            {
                "series": res["series"],
                "object_max_bytes": res["object_max_bytes"],
                **point_row(res),
                "fe_packets_mean": res["requests"]["packets"].mean(),
                "fe_bytes_mean": res["requests"]["bytes"].mean(),
            }
            for res in results
        ]
    )
    return {"": df, "ratio": ratios(df)}


def _draw(t: dict[str, pd.DataFrame], opts: Options) -> list:
    png = draw(t[""], t["ratio"], opts)
    return plot.figure_files(png)


def _summary(t: dict[str, pd.DataFrame], results: list[dict], opts: Options) -> str:
    df, r = t[""], t["ratio"]
    modes = (
        f"{QUERIES} queries per request, objects U[20, x] B; quick: x = {', '.join(map(str, X_QUICK))},"
        f" {REQ_QUICK} requests per point; --full: x = {', '.join(map(str, X_FULL))}, {REQ_FULL:,} requests"
        " per point (the paper ran 10,000). Hubs straight to the front-end (SICC-NMT), speed control and"
        " redirection on. Settings: xco/scenarios/sicc-latency.toml."
    )
    parts = [
        pivot(df, "object_max_bytes", "fe_packets_mean", "{:.0f}", SERIES),
        pivot(df, "object_max_bytes", "latency_ms_mean", "{:.3f}", SERIES),
        "per x (without / with; latency saved = without - with):\n"
        + r.to_string(index=False, float_format=lambda v: f"{v:.3f}"),
        claims_text(compress_checks(r, df), spec="sicc.md") + "\n\n" + latency_note(df, r),
    ]
    title = "compression ratio and latency saved vs object size (hubs straight to the front-end)"
    return sicc_summary(RID, title, opts, modes, parts)


STUDY = study(
    RID,
    "compression ratio and latency saved vs object size (hubs straight to the front-end)",
    runs=grid_runs(SERIES, "object_max_bytes", lambda o: X_FULL if o.full else X_QUICK, scn_of, _reqs),
    tables=_tables,
    draw=_draw,
    summarize=_summary,
    keep=measure,
    extra=lambda opts: {
        "series": SERIES,
        "method": METHOD,
        "queries": QUERIES,
        "requests_per_point": _reqs(opts),
    },
    keys=["series", "object_max_bytes"],
)


register(
    Reproduction(
        id=RID,
        title="SICC: compression ratio and latency saved vs object size, hubs straight to the front-end",
        source="sicc.md",
        run=STUDY.run,
    )
)
