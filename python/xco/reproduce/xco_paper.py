"""The XCo paper's experiments (../shared/spec/xco.md; reproductions.md, XCo table).

Each experiment has a scenario file (``xco/scenarios/<id>.toml``) stating every
setting; the sweep changes only what the experiment varies (the x axis and the
series, which differ only in their ``[xco]`` section: absent for ``none``).
Every summary ends with the paper's claims beside this run's figures and a
verdict (:mod:`xco.reproduce.xco_claims`); every figure is PNG plus SVG.
"""

from __future__ import annotations

from typing import Any

from .. import plot, scenario
from .._lazy import pd, plt
from . import Options, Reproduction, register
from . import xco_claims as claims
from .experiment import (
    EXPERIMENTS,
    NONE,
    RATELIMIT,
    SERIES_NAMES,
    TIMESLICE,
    Experiment,
    Window,
    app_metrics,
    duration_s,
    note,
    pivot_text,
    scenario_text,  # noqa: F401  (part of this module's interface)
    table,
    with_series,  # noqa: F401
)

# rates are measured after the start-up (every TCP flow's slow start and its
# first losses, each costing a 200 ms RTO, end within the first second)
STEADY = Window(from_s=1.0)


def _experiment(e: Experiment) -> Experiment:
    """Register ``e`` by its id (for :func:`xco.reproduce.experiment.replay`)."""
    EXPERIMENTS[e.id] = e
    return e


def _steady_modes(quick_ms: int, full_ms: int) -> str:
    return (
        f"quick runs {quick_ms / 1e3:g} s, --full {full_ms / 1e3:g} s; in both, rates are measured from"
        f" {STEADY.from_s:g} s on (the start-up — TCP's slow start and first losses with their 200 ms RTO —"
        " is skipped)"
    )


# ---------------------------------------------------------------------------
# UDP vs TCP into one bottleneck (1 Gb/s port, or 13 senders over a 10 Gb/s link)

UDP_TCP_MS = (1500, 3000)


def _udp_tcp_build(senders: list[str], dsts: list[str]):
    def build(base: dict, k: int, full: bool) -> dict:
        scn = scenario.with_changes(base)
        scn["run"]["duration_ms"] = UDP_TCP_MS[1] if full else UDP_TCP_MS[0]
        apps = []
        for i, (s, d) in enumerate(zip(senders, dsts, strict=True)):
            if i < k:
                apps.append({"kind": "udp", "src": s, "dst": d, "rate": "line"})
            else:
                apps.append({"kind": "bulk", "src": s, "dst": d})
        scn["apps"] = apps
        return STEADY.set_output(scn)

    return build


def _udp_tcp_measure(bottleneck: tuple[str, str]):
    def measure(raw: dict, scn: dict, k: int) -> list[dict]:
        flows = table(raw, "flows")
        data = flows[(flows["kind"] == "udp") | (flows["role"] == "bulk")]
        rates = STEADY.rates_mbps(raw, scn)
        tcp = [rates.get(int(f), 0.0) for f in data[data["role"] == "bulk"]["flow"]]
        total = sum(rates.get(int(f), 0.0) for f in data["flow"])
        ports = table(raw, "ports")
        p = ports[(ports["from"] == bottleneck[0]) & (ports["to"] == bottleneck[1])]
        return [
            {
                "total_mbps": total,
                "tcp_per_flow_mbps": sum(tcp) / len(tcp) if tcp else float("nan"),
                "link_util": float(p["utilization"].iloc[0]),
                "bottleneck_drops": int(p["dropped_packets"].iloc[0]),
                "total_mbps_whole_run": data["bytes_delivered"].sum() * 8 / duration_s(scn) / 1e6,
            }
        ]

    return measure


def _udp_tcp_draw(rid: str, cap_mbps: float, senders: int):
    def draw(df: pd.DataFrame, opts: Options):
        return plot.panels(
            df,
            "udp_senders",
            "series",
            opts.out / f"{rid}.png",
            [
                plot.Panel(
                    "total_mbps", "application throughput,\nall flows (Mbit/s)", (cap_mbps, "link capacity")
                ),
                plot.Panel(
                    "tcp_per_flow_mbps",
                    "TCP throughput\nper flow (Mbit/s)",
                    (cap_mbps / senders, f"fair share (capacity / {senders})"),
                ),
                plot.Panel("link_util", "bottleneck link\nutilisation (%)", (100.0, "100%"), percent=True),
            ],
            title=f"{rid}: {senders} senders, k of them UDP (the rest TCP)",
            xlabel=f"UDP senders k (the other {senders} - k send TCP)",
            note=note(rid, opts)
            + f"; throughput from {STEADY.from_s:g} s on, utilisation over the whole run",
            labels=SERIES_NAMES,
        )

    return draw


COLUMNS_UDP = [
    "series",
    "udp_senders",
    "total_mbps",
    "tcp_per_flow_mbps",
    "link_util",
    "bottleneck_drops",
    "total_mbps_whole_run",
]


def _udp_tcp_summary(cap_mbps: float, senders: int):
    def summarize(df: pd.DataFrame, opts: Options) -> str:
        return "\n\n".join(
            [
                pivot_text(df, "udp_senders", "total_mbps", names=True),
                pivot_text(df, "udp_senders", "tcp_per_flow_mbps", names=True),
                pivot_text(df, "udp_senders", "link_util", "{:.3f}", names=True)
                + "\n(link utilisation: wire bytes on the bottleneck over the whole run, start-up included)",
                pivot_text(df, "udp_senders", "bottleneck_drops", "{:.0f}", names=True)
                + "\n(packets dropped at the bottleneck port over the whole run)",
                pivot_text(df, "udp_senders", "total_mbps_whole_run", names=True)
                + "\n(the same total over the whole run, start-up included)",
                claims.udp_tcp(df, cap_mbps, senders),
            ]
        )

    return summarize


for _rid, _title, _senders, _dsts, _bottleneck, _cap, _ks in (
    (
        "xco-udp-1g",
        "5 senders -> 1 receiver on a 1 Gb/s port; k UDP, 5 - k TCP",
        [f"h{i}" for i in range(5)],
        ["h5"] * 5,
        ("s0", "h5"),
        1000.0,
        lambda full: [0, 1, 2, 3, 4, 5],
    ),
    (
        "xco-udp-10g",
        "13 senders (1 Gb/s NICs) on switch A -> 13 receivers on switch B across 10 Gb/s",
        [f"a{i}" for i in range(13)],
        [f"b{i}" for i in range(13)],
        ("sa", "sb"),
        10000.0,
        lambda full: list(range(14)) if full else [0, 4, 8, 12, 13],
    ),
):
    _exp = _experiment(
        Experiment(
            id=_rid,
            title=_title,
            x="udp_senders",
            xs=_ks,
            series={"none": NONE, "ratelimit": RATELIMIT, "timeslice": TIMESLICE},
            build=_udp_tcp_build(_senders, _dsts),
            measure=_udp_tcp_measure(_bottleneck),
            columns=COLUMNS_UDP,
            draw=_udp_tcp_draw(_rid, _cap, len(_senders)),
            summarize=_udp_tcp_summary(_cap, len(_senders)),
            modes=_steady_modes(*UDP_TCP_MS),
        )
    )
    register(
        Reproduction(
            id=_rid,
            title=(
                "5 senders into one 1 Gb/s port, k UDP: none / ratelimit / timeslice (XCo paper)"
                if _rid == "xco-udp-1g"
                else "13 x 1 Gb/s senders over a 10 Gb/s uplink, k UDP (XCo paper)"
            ),
            source="xco.md",
            run=_exp.run,
        )
    )


# ---------------------------------------------------------------------------
# iSCSI incast

INCAST_TOTAL = ("32MB", "1GB")
# the rate limiter as it was before the token bucket: an ideal pacer
# (rate_burst_bytes = 0); "ratelimit" has the default, tc's HTB burst
# (docs/xco-incast-order.md)
INCAST_PACER = {"mode": "ratelimit", "rate_burst_bytes": 0}
SERIES_NAMES.setdefault("ratelimit-pacer", "XCo rate limits, ideal pacer")


def _incast_build(base: dict, n: int, full: bool) -> dict:
    scn = scenario.with_changes(base)
    scn["topology"]["hosts"] = n + 2
    scn["apps"][0]["servers"] = [f"h{i}" for i in range(1, n + 1)]
    scn["apps"][0]["total"] = INCAST_TOTAL[1] if full else INCAST_TOTAL[0]
    scn["xco"]["controller"] = f"h{n + 1}"
    return scn


def _incast_measure(raw: dict, scn: dict, n: int) -> list[dict]:
    ports = table(raw, "ports")
    client = ports[(ports["from"] == "s0") & (ports["to"] == "h0")]
    flows = table(raw, "flows")
    return [
        {
            "throughput_mbps": app_metrics(raw)["goodput_mbps"],
            # the losses that cost the read its RTOs: the client's switch port, the servers' responses
            "client_port_drops": int(client["dropped_packets"].iloc[0]),
            "timeouts": int(flows[flows["role"] == "response"]["timeouts"].sum()),
        }
    ]


def _incast_draw(df: pd.DataFrame, opts: Options):
    return plot.lines(
        df,
        "servers",
        "throughput_mbps",
        "series",
        opts.out / "xco-incast.png",
        title="xco-incast: striped 1 MB block reads vs number of servers",
        xlabel="storage servers N",
        ylabel="read throughput (Mbit/s)",
        note=note("xco-incast", opts),
        hline=(1000.0, "client link capacity"),
        labels=SERIES_NAMES,
    )


_experiment(
    Experiment(
        id="xco-incast",
        title="N storage servers -> 1 client, 9 KB jumbo frames, 1 MB blocks striped over N",
        x="servers",
        xs=lambda full: list(range(1, 17)) if full else [1, 2, 4, 8, 12, 16],
        series={
            "none": NONE,
            "ratelimit": RATELIMIT,
            "ratelimit-pacer": INCAST_PACER,
            "timeslice-2ms": {"mode": "timeslice", "slice_ms": 2},
            "timeslice-10ms": {"mode": "timeslice", "slice_ms": 10},
        },
        build=_incast_build,
        measure=_incast_measure,
        columns=["series", "servers", "throughput_mbps", "client_port_drops", "timeouts"],
        draw=_incast_draw,
        summarize=lambda df, opts: "\n\n".join(
            [
                pivot_text(df, "servers", "throughput_mbps", names=True),
                pivot_text(df, "servers", "client_port_drops", fmt="{:.0f}", names=True),
                pivot_text(df, "servers", "timeouts", fmt="{:.0f}", names=True),
                claims.incast(df),
            ]
        ),
        modes=f"quick reads {INCAST_TOTAL[0]} at N = 1, 2, 4, 8, 12, 16; --full reads {INCAST_TOTAL[1]} at"
        " N = 1..16; throughput is over the whole read, its start included",
    )
)
register(
    Reproduction(
        id="xco-incast",
        title="iSCSI-style striped reads from N servers: none / ratelimit (HTB burst, ideal pacer) /"
        " timeslice 2 ms, 10 ms",
        source="xco.md",
        run=EXPERIMENTS["xco-incast"].run,
    )
)


# ---------------------------------------------------------------------------
# long flow vs K sequences of short flows


def _short_build(base: dict, k: int, full: bool) -> dict:
    scn = scenario.with_changes(base)
    if k == 0:
        scn["apps"] = scn["apps"][:1]
    else:
        scn["apps"][1]["parallel"] = k
    return scn


def _short_measure(raw: dict, scn: dict, k: int) -> list[dict]:
    long = app_metrics(raw, 0)["goodput_mbps"]
    short = app_metrics(raw, 1)["goodput_mbps"] if k > 0 else 0.0
    return [{"long_mbps": long, "short_mbps": short, "total_mbps": long + short}]


def _short_draw(df: pd.DataFrame, opts: Options):
    d = pd.concat(
        [
            df.assign(series=df["series"] + " long", v=df["long_mbps"]),
            df.assign(series=df["series"] + " total", v=df["total_mbps"]),
        ]
    )
    words = {
        f"{s} {w}": f"{SERIES_NAMES[s]}: {'long flow' if w == 'long' else 'total'}"
        for s in ("none", "timeslice")
        for w in ("long", "total")
    }
    return plot.lines(
        d,
        "parallel",
        "v",
        "series",
        opts.out / "xco-shorttcp.png",
        title="xco-shorttcp: a long flow vs K sequences of 30 KB flows",
        xlabel="parallel short-flow sequences K",
        ylabel="throughput (Mbit/s)",
        note=note("xco-shorttcp", opts),
        hline=(1000.0, "link capacity"),
        labels=words,
        order=["none long", "none total", "timeslice long", "timeslice total"],
    )


_experiment(
    Experiment(
        id="xco-shorttcp",
        title="S1->R1 long flow; S2->R2 K sequences of 30 KB flows; shared 1 Gb/s link",
        x="parallel",
        xs=lambda full: list(range(0, 401, 25)) if full else [0, 25, 50, 100, 200, 400],
        series={"none": NONE, "timeslice": TIMESLICE},
        build=_short_build,
        measure=_short_measure,
        columns=["series", "parallel", "long_mbps", "short_mbps", "total_mbps"],
        draw=_short_draw,
        summarize=lambda df, opts: "\n\n".join(
            [
                pivot_text(df, "parallel", "long_mbps", names=True),
                pivot_text(df, "parallel", "total_mbps", names=True),
                claims.shorttcp(df, 1000.0),
            ]
        ),
        modes="quick K = 0, 25, 50, 100, 200, 400; --full K = 0..400 in steps of 25; both run 1 s and"
        " measure over the whole run (start included: the short flows start in the first millisecond)",
    )
)
register(
    Reproduction(
        id="xco-shorttcp",
        title="Long TCP flow vs K parallel sequences of 30 KB flows over 1 Gb/s (XCo paper)",
        source="xco.md",
        run=EXPERIMENTS["xco-shorttcp"].run,
    )
)


# ---------------------------------------------------------------------------
# ping RTT under load

PING_MS = (1500, 5000)


def _ping_build(base: dict, loaded: bool, full: bool) -> dict:
    scn = scenario.with_changes(base)
    scn["run"]["duration_ms"] = PING_MS[1] if full else PING_MS[0]
    if loaded:
        for i in range(1, 7):
            scn["apps"].append({"kind": "bulk", "src": f"a{i}", "dst": f"b{i}"})
        for i in range(7, 13):
            scn["apps"].append({"kind": "udp", "src": f"a{i}", "dst": f"b{i}", "rate": "line"})
    return scn


def _ping_measure(raw: dict, scn: dict, loaded: bool) -> list[dict]:
    s = table(raw, "samples")
    s = s[s["app"] == 0]
    return [{"t_s": t, "rtt_us": v} for t, v in zip(s["x"], s["value"], strict=True)]


PING_BIN_MS = 10


def _ping_draw(df: pd.DataFrame, opts: Options):
    """The largest RTT in each 10 ms (a point per ms paints the 2 ms slice pattern as a solid block)."""
    binned = (
        df.assign(t_s=((df["t_s"] * 1e3 - 1e-6) // PING_BIN_MS + 1) * PING_BIN_MS / 1e3)
        .groupby(["series", "t_s"], sort=False)["rtt_us"]
        .max()
        .reset_index()
    )
    return plot.lines(
        binned,
        "t_s",
        "rtt_us",
        "series",
        opts.out / "xco-ping.png",
        title="xco-ping: RTT of pings across the 10 Gb/s path",
        xlabel="time (s)",
        ylabel=f"largest RTT in each {PING_BIN_MS} ms (µs, log scale)",
        note=note("xco-ping", opts),
        logy=True,
        marker=None,
        labels=SERIES_NAMES,
    )


_experiment(
    Experiment(
        id="xco-ping",
        title="ping RTT across the 10 Gb/s path, idle and under TCP + UDP load",
        x="loaded",
        xs=lambda full: [True],
        # the idle baseline runs without background load
        xs_of_series=lambda series, full: [series != "idle"],
        series={"idle": NONE, "load-none": NONE, "load-timeslice": TIMESLICE},
        build=_ping_build,
        measure=_ping_measure,
        columns=["series", "t_s", "rtt_us"],
        draw=_ping_draw,
        summarize=lambda df, opts: claims.ping(df),
        draw_means=True,
        modes=f"quick runs {PING_MS[0] / 1e3:g} s, --full {PING_MS[1] / 1e3:g} s; the maximum RTT is taken"
        " over the whole run, start-up included (the paper's figure is a maximum too)",
    )
)
register(
    Reproduction(
        id="xco-ping",
        title="Ping RTT across the 10 Gb/s path with and without load; XCo lets pings bypass (XCo paper)",
        source="xco.md",
        run=EXPERIMENTS["xco-ping"].run,
    )
)


# ---------------------------------------------------------------------------
# live migration: a large transfer against TCP or UDP competitors

MIGRATION_BYTES = ("32MB", "256MB")
MIGRATION_SERIES = {
    "+tcp": ("tcp", NONE),
    "+tcp timeslice": ("tcp", TIMESLICE),
    "+udp": ("udp", NONE),
    "+udp timeslice": ("udp", TIMESLICE),
}
MIGRATION_NAMES = {
    "+tcp": "TCP competitors, no coordination",
    "+tcp timeslice": "TCP competitors, XCo timeslices",
    "+udp": "UDP competitors, no coordination",
    "+udp timeslice": "UDP competitors, XCo timeslices",
}


def _migration_build(s: str, base: dict, n: int, full: bool) -> dict:
    kind, xco = MIGRATION_SERIES[s]
    scn = scenario.with_changes(base)
    scn["apps"][0]["bytes"] = MIGRATION_BYTES[1] if full else MIGRATION_BYTES[0]
    for i in range(1, n + 1):
        app: dict[str, Any] = {"kind": "bulk" if kind == "tcp" else "udp", "src": f"h{i}", "dst": "h5"}
        if kind == "udp":
            app["rate"] = "line"
        scn["apps"].append(app)
    return with_series(scn, xco)


def _migration_measure(raw: dict, scn: dict, n: int) -> list[dict]:
    m = app_metrics(raw, 0)
    done = "completion_ms" in m
    end_s = float(raw["sim_end_s"])
    secs = m["completion_ms"] / 1e3 if done else end_s
    flows = table(raw, "flows")
    data = flows[flows["role"].isin(["transfer", "bulk", "udp"]) | (flows["kind"] == "udp")]
    rate_bps = scenario.rate_bps(scn["topology"]["host_rate"])
    useful = data["bytes_delivered"].sum() * 8 / end_s / rate_bps if end_s > 0 else float("nan")
    return [{"completion_s": secs, "completed": done, "useful_util": useful}]


def _migration_draw(df: pd.DataFrame, opts: Options):
    """Completion times; a run that hit the cap is drawn as a bound (hollow marker, arrow up)."""
    d = df.assign(censored=~df["completed"].astype(bool))
    cap_s = float(d.loc[d["censored"], "completion_s"].max()) if d["censored"].any() else None
    return plot.lines(
        d,
        "competitors",
        "completion_s",
        "series",
        opts.out / "xco-migration.png",
        title="xco-migration: transfer completion time vs competing senders",
        xlabel="competing senders into the same receiver",
        ylabel="completion time (s, log scale)",
        note=note("xco-migration", opts),
        logy=True,
        labels=MIGRATION_NAMES,
        order=list(MIGRATION_SERIES),
        censored="censored",
        censored_note=(
            f"not finished at the run cap ({cap_s:g} s): at least this"
            if cap_s is not None
            else "hollow marker: a bound"
        ),
    )


def _migration_summary(df: pd.DataFrame, opts: Options) -> str:
    text = pivot_text(df, "competitors", "completion_s", "{:.3f}")
    cens = df[~df["completed"].astype(bool)]
    if len(cens):
        text += (
            f"\n({len(cens)} runs did not finish by the run cap of {cens['completion_s'].max():g} s; their"
            " time is the cap, a lower bound, and column `completed` is false)"
        )
    text += (
        "\n\n"
        + pivot_text(df, "competitors", "useful_util", "{:.3f}")
        + (
            "\n(useful link utilisation: application bytes delivered by every flow into R1 over the run,"
            " as a fraction of R1's 1 Gb/s link)"
        )
    )
    return text + "\n\n" + claims.migration(df)


_experiment(
    Experiment(
        id="xco-migration",
        title="a large transfer S1->R1 competing with 1..4 TCP or UDP senders into R1",
        x="competitors",
        xs=lambda full: [1, 2, 3, 4],
        series=dict.fromkeys(MIGRATION_SERIES),  # type: ignore[arg-type]
        build=lambda base, x, full: base,
        build_series=_migration_build,
        measure=_migration_measure,
        columns=["series", "competitors", "completion_s", "completed", "useful_util"],
        draw=_migration_draw,
        summarize=_migration_summary,
        modes=f"quick moves {MIGRATION_BYTES[0]}, --full {MIGRATION_BYTES[1]} (the paper's VM); the run stops"
        " when the transfer completes, or at the scenario's 60 s cap",
    )
)
register(
    Reproduction(
        id="xco-migration",
        title="A 256 MB transfer vs 1..4 TCP or UDP competitors, with and without timeslices (XCo paper)",
        source="xco.md",
        run=EXPERIMENTS["xco-migration"].run,
    )
)


# ---------------------------------------------------------------------------
# per-flow fairness and work conservation

PER_FLOW_MS = (1500, 3000)


def _steady_build(base: dict, x: Any, full: bool) -> dict:
    scn = scenario.with_changes(base)
    scn["run"]["duration_ms"] = PER_FLOW_MS[1] if full else PER_FLOW_MS[0]
    return STEADY.set_output(scn)


def _per_flow_measure(raw: dict, scn: dict, x: Any) -> list[dict]:
    flows = table(raw, "flows")
    flows = flows[(flows["role"].isin(["bulk", "udp"]))]
    rates = STEADY.rates_mbps(raw, scn)
    wire = (flows["wire_bytes_sent"] - flows["wire_bytes_dropped"]).clip(lower=0)
    share = wire / wire.sum() if wire.sum() > 0 else wire * 0.0
    return [
        {
            "flow": f"{r.src}->{r.dst} ({r.kind})",
            "throughput_mbps": rates.get(int(r.flow), 0.0),
            "wire_share": float(s),
        }
        for r, s in zip(flows.itertuples(), share, strict=True)
    ]


def _per_flow_table(df: pd.DataFrame) -> str:
    p = df.pivot_table(index="flow", columns="series", values="throughput_mbps", sort=False)
    cols = [SERIES_NAMES.get(c, c) for c in p.columns]
    width = max([16, *(len(c) + 1 for c in cols)])
    lines = [f"{'flow':<22} " + " ".join(f"{c:>{width}}" for c in cols)]
    for idx, row in p.iterrows():
        lines.append(f"{idx:<22} " + " ".join(f"{v:>{width}.1f}" for v in row))
    lines.append(f"{'total':<22} " + " ".join(f"{v:>{width}.1f}" for v in p.sum()))
    return (
        f"application throughput per flow (Mbit/s, from {STEADY.from_s:g} s on; a UDP message counts"
        " only when"
        " all its fragments arrive):\n" + "\n".join(lines)
    )


def _per_flow_draw(rid: str, title: str):
    def draw(df: pd.DataFrame, opts: Options):
        return plot.bars(
            df,
            "flow",
            "throughput_mbps",
            "series",
            opts.out / f"{rid}.png",
            title=title,
            xlabel="flow (source -> destination, transport)",
            ylabel=f"application throughput (Mbit/s, from {STEADY.from_s:g} s)",
            note=note(rid, opts) + "; ▼ on the axis: measured zero",
            labels=SERIES_NAMES,
            values=True,
            total="total",
            hline=(1000.0, "bottleneck capacity"),
        )

    return draw


_experiment(
    Experiment(
        id="xco-fairness",
        title="2 UDP + 3 TCP senders over a 1 Gb/s bottleneck",
        x="run",
        xs=lambda full: [1],
        series={"none": NONE, "timeslice": TIMESLICE},
        build=_steady_build,
        measure=_per_flow_measure,
        columns=["series", "flow", "throughput_mbps", "wire_share"],
        draw=_per_flow_draw("xco-fairness", "xco-fairness: per-flow throughput, 2 UDP + 3 TCP"),
        summarize=lambda df, opts: _per_flow_table(df) + "\n\n" + claims.fairness(df, 1000.0),
        modes=_steady_modes(*PER_FLOW_MS),
    )
)
register(
    Reproduction(
        id="xco-fairness",
        title="2 UDP + 3 TCP senders over 1 Gb/s: per-flow shares, none vs timeslice (XCo paper)",
        source="xco.md",
        run=EXPERIMENTS["xco-fairness"].run,
    )
)


def _wc_build(base: dict, x: Any, full: bool) -> dict:
    scn = _steady_build(base, x, full)
    scn["apps"] = [
        {"kind": "udp", "src": f"a{i}", "dst": f"b{i}", "rate": "50Mbps" if i < 3 else "line"}
        for i in range(5)
    ]
    return scn


_experiment(
    Experiment(
        id="xco-workconserve",
        title="5 UDP senders -> 5 receivers over 1 Gb/s; a0..a2 at 50 Mb/s, a3 and a4 unlimited",
        x="run",
        xs=lambda full: [1],
        series={
            "none": NONE,
            "timeslice-nowc": {
                "mode": "timeslice",
                "work_conservation": False,
                "giveback_hysteresis_us": None,
            },
            "timeslice": TIMESLICE,
        },
        build=_wc_build,
        measure=_per_flow_measure,
        columns=["series", "flow", "throughput_mbps", "wire_share"],
        draw=_per_flow_draw("xco-workconserve", "xco-workconserve: per-flow throughput and the total"),
        summarize=lambda df, opts: _per_flow_table(df) + "\n\n" + claims.workconserve(df, 1000.0),
        modes=_steady_modes(*PER_FLOW_MS),
    )
)
register(
    Reproduction(
        id="xco-workconserve",
        title="5 UDP senders (3 at 50 Mb/s) over 1 Gb/s: none / timeslice without and with work conservation",
        source="xco.md",
        run=EXPERIMENTS["xco-workconserve"].run,
    )
)


# ---------------------------------------------------------------------------
# responsiveness: sets of flows alternating every 2 s

SWITCH_S = [2.0, 4.0, 6.0]
DRAW_BIN_MS = 10


def _resp_build(base: dict, x: Any, full: bool) -> dict:
    scn = scenario.with_changes(base)
    msgs = int(330e6 * 2 / 8 / 65507)
    apps = []
    for start_ms, dsts in ((0, "012"), (2000, "345"), (4000, "012"), (6000, "345")):
        for d in dsts:
            apps.append(
                {
                    "kind": "udp",
                    "src": "a0",
                    "dst": f"b{d}",
                    "rate": "330Mbps",
                    "count": msgs,
                    "start_ms": start_ms,
                }
            )
    scn["apps"] = apps
    return scn


def _resp_measure(raw: dict, scn: dict, x: Any) -> list[dict]:
    ts = table(raw, "timeseries")
    ts = ts[ts["entity"] == "flow"]
    agg = ts.groupby("t_s", sort=True)["throughput_mbps"].sum()
    return [{"t_s": t, "aggregate_mbps": v} for t, v in agg.items()]


def dips_ms(df: pd.DataFrame) -> dict[float, float]:
    """Per switch-over: ms within 50 ms after it that the aggregate stays below half its median."""
    med = df["aggregate_mbps"].median()
    out = {}
    for t in SWITCH_S:
        w = df[(df["t_s"] > t - 0.0005) & (df["t_s"] <= t + 0.05)]
        out[t] = float((w["aggregate_mbps"] < 0.5 * med).sum())  # 1 ms bins
    return out


def _resp_summary(df: pd.DataFrame, opts: Options) -> str:
    lines = []
    for name, d in df.groupby("series", sort=False):
        dips = dips_ms(d)
        steady = d[(d["t_s"] % 2.0 > 0.1) & (d["t_s"] % 2.0 < 1.9)]["aggregate_mbps"].mean()
        lines.append(
            f"{SERIES_NAMES.get(name, name):<24} steady {steady:7.1f} Mbit/s; dip at each switch-over: "
            + ", ".join(f"{t:.0f} s: {v:.0f} ms" for t, v in dips.items())
        )
    return (
        "aggregate receive rate (1 ms bins; a dip = 1 ms bins below half the run's median within 50 ms"
        " after a switch-over):\n" + "\n".join(lines) + "\n\n" + claims.responsive(df, dips_ms)
    )


def _resp_draw(df: pd.DataFrame, opts: Options):
    """The whole run in 10 ms bins, and each switch-over at 1 ms with its dip shaded."""
    fig = plt.figure(figsize=(9, 6.5), dpi=120)
    grid = fig.add_gridspec(2, len(SWITCH_S), height_ratios=[1.2, 1])
    top = fig.add_subplot(grid[0, :])
    zooms = [fig.add_subplot(grid[1, i]) for i in range(len(SWITCH_S))]
    names = list(dict.fromkeys(df["series"]))
    for name in names:
        d = df[df["series"] == name].sort_values("t_s")
        binned = d.groupby((d["t_s"] * 1e3 - 1e-6) // DRAW_BIN_MS)["aggregate_mbps"].mean()
        top.plot(
            (binned.index + 1) * DRAW_BIN_MS / 1e3,
            binned.values,
            label=SERIES_NAMES.get(name, name),
            linewidth=1.2,
        )
        med = d["aggregate_mbps"].median()
        for ax, t in zip(zooms, SWITCH_S, strict=True):
            w = d[(d["t_s"] > t - 0.02) & (d["t_s"] <= t + 0.05)]
            ax.step(
                (w["t_s"] - t) * 1e3,
                w["aggregate_mbps"],
                where="post",
                linewidth=1,
                label=SERIES_NAMES.get(name, name),
            )
            low = w[(w["t_s"] > t - 0.0005) & (w["aggregate_mbps"] < 0.5 * med)]
            for tl in low["t_s"]:
                ax.axvspan((tl - t) * 1e3 - 1, (tl - t) * 1e3, color="red", alpha=0.15, linewidth=0)
    for t in SWITCH_S:
        top.axvline(t, color="grey", linestyle=":", linewidth=1)
    top.set_ylim(bottom=0)
    top.set_xlabel("time (s)")
    top.set_ylabel(f"aggregate receive rate\n(Mbit/s, {DRAW_BIN_MS} ms bins)")
    top.set_title("xco-responsive: two sets of 3 flows alternate every 2 s (dotted: switch-overs)")
    top.legend(fontsize=8, loc="lower right")
    top.grid(True, alpha=0.3)
    dips = {name: dips_ms(df[df["series"] == name]) for name in names}
    for ax, t in zip(zooms, SWITCH_S, strict=True):
        ax.axvline(0, color="grey", linestyle=":", linewidth=1)
        ax.set_ylim(bottom=0)
        ax.set_xlabel(f"ms after the switch-over at {t:g} s")
        ax.set_title(
            "dip: "
            + ", ".join(f"{SERIES_NAMES.get(n, n).replace('XCo ', '')} {dips[n][t]:.0f} ms" for n in names),
            fontsize=7,
        )
        ax.grid(True, alpha=0.3)
    zooms[0].set_ylabel("Mbit/s, 1 ms bins\n(red: below half the median)", fontsize=8)
    # the flows are UDP messages of one datagram each (65,507 B by default), counted when the last
    # fragment arrives: a 1-ms bin holds whole messages, so bins step by one message's rate
    msg_mbps = 65_507 * 8 / 1e-3 / 1e6
    fig.text(
        0.01, 0.03,
        f"1-ms bins count whole UDP messages (65,507 B: {msg_mbps:.0f} Mbit/s a message in a bin)"
        " when their last fragment arrives, so they step by that;\na bin above the 1 Gbit/s link"
        " holds messages that completed together, not more than the link carried.",
        fontsize=7, color="dimgrey",
    )  # fmt: skip
    fig.text(0.01, 0.01, note("xco-responsive", opts), fontsize=7, color="dimgrey")
    fig.tight_layout(rect=(0, 0.07, 1, 1))
    return plot.save(fig, opts.out / "xco-responsive.png")


_experiment(
    Experiment(
        id="xco-responsive",
        title="6 sources on one host; sets of 3 alternate every 2 s",
        x="run",
        xs=lambda full: [1],
        series={"none": NONE, "timeslice": TIMESLICE},
        build=_resp_build,
        measure=_resp_measure,
        columns=["series", "t_s", "aggregate_mbps"],
        draw=_resp_draw,
        summarize=_resp_summary,
        modes="quick and --full are the same run (8 s, three switch-overs)",
        draw_means=True,
    )
)
register(
    Reproduction(
        id="xco-responsive",
        title="Two sets of 3 V2V flows alternating every 2 s: dip at each switch-over (XCo paper)",
        source="xco.md",
        run=EXPERIMENTS["xco-responsive"].run,
    )
)
