"""The XCo paper's experiments (../shared/spec/xco.md; reproductions.md, XCo table).

Each experiment has a scenario file (``xco/scenarios/<id>.toml``) stating every
setting; the sweep changes only what the experiment varies (the x axis and the
series, which differ only in their ``[xco]`` section: absent for ``none``).
"""

from __future__ import annotations

import io
import json
from collections.abc import Callable
from dataclasses import dataclass
from importlib import resources
from typing import Any

import pandas as pd

from .. import plot, scenario, sweep
from ..sim import app_metrics
from . import Options, Outcome, Reproduction, point_record, register, write_meta

NONE = None
TIMESLICE = {"mode": "timeslice"}
RATELIMIT = {"mode": "ratelimit"}


def scenario_text(rid: str) -> str:
    """The scenario file of experiment ``rid``, comments included."""
    return resources.files("xco").joinpath(f"scenarios/{rid}.toml").read_text()


def with_series(base: dict, xco: dict | None) -> dict:
    """``base`` with its [xco] section removed (``None``) or updated."""
    out = scenario.with_changes(base)
    if xco is None:
        out.pop("xco", None)
        return out
    for k, v in xco.items():
        if v is None:
            out["xco"].pop(k, None)
        else:
            out["xco"][k] = v
    return out


def table(raw: dict, name: str) -> pd.DataFrame:
    """One CSV table of a native run result as a DataFrame."""
    return pd.read_csv(io.StringIO(raw[name]))


def duration_s(scn: dict) -> float:
    return scn["run"]["duration_ms"] / 1e3


@dataclass
class Experiment:
    """A sweep: series x values -> scenario -> rows, then a table, a plot and a summary."""

    id: str
    title: str
    x: str
    xs: Callable[[bool], list]
    series: dict[str, dict | None]
    build: Callable[[dict, Any, bool], dict]
    measure: Callable[[dict, dict, Any], list[dict]]
    columns: list[str]
    draw: Callable[[pd.DataFrame, Options], Any]
    summarize: Callable[[pd.DataFrame], str]
    # x values per series, when they differ between series (default: xs)
    xs_of_series: Callable[[str, bool], list] | None = None

    def run(self, opts: Options) -> Outcome:
        opts.out.mkdir(parents=True, exist_ok=True)
        base = scenario.parse(scenario_text(self.id))
        points = []
        for s, xco in self.series.items():
            xs = self.xs_of_series(s, opts.full) if self.xs_of_series else self.xs(opts.full)
            for x in xs:
                scn = with_series(self.build(base, x, opts.full), xco)
                points.append(
                    sweep.Point(labels={"series": s, self.x: x, "_scn": scn}, scenario=scn, seed=opts.seed)
                )

        def measure(raw: dict) -> dict:
            return {"raw": raw}

        results = sweep.run(points, measure, jobs=opts.jobs, desc=self.id, progress=opts.progress)
        rows = []
        for r in results:
            for row in self.measure(r["raw"], r["_scn"], r[self.x]):
                rows.append({"series": r["series"], self.x: r[self.x], **row})
        df = pd.DataFrame(rows)[self.columns]
        csv = opts.out / f"{self.id}.csv"
        df.to_csv(csv, index=False)
        png = self.draw(df, opts)
        text = (
            f"{self.id}: {self.title}\nseed {opts.seed}; settings: xco/scenarios/{self.id}.toml\n\n"
            + self.summarize(df)
        )
        txt = opts.out / f"{self.id}.txt"
        txt.write_text(text + "\n")
        record = [point_record(base, p.labels, p.scenario, p.seed) for p in points]
        meta = write_meta(opts, self.id, {"series": self.series}, base=base, points=record)
        return Outcome(files=[csv, png, txt, meta], summary=text)


def note(rid: str, opts: Options) -> str:
    return f"xco {rid}, seed {opts.seed}; settings in xco/scenarios/{rid}.toml"


def pivot_text(df: pd.DataFrame, x: str, y: str, fmt: str = "{:.1f}") -> str:
    """A small text table: rows = x, columns = series."""
    p = df.pivot_table(index=x, columns="series", values=y, aggfunc="mean")
    cols = list(p.columns)
    lines = [f"{x:>14} " + " ".join(f"{c:>16}" for c in cols)]
    for idx, row in p.iterrows():
        lines.append(f"{idx!s:>14} " + " ".join(f"{fmt.format(v):>16}" for v in row))
    return f"{y}:\n" + "\n".join(lines)


# ---------------------------------------------------------------------------
# UDP vs TCP into one bottleneck (1 Gb/s port, or 13 senders over a 10 Gb/s link)


def _udp_tcp_build(senders: list[str], dsts: list[str]):
    def build(base: dict, k: int, full: bool) -> dict:
        scn = scenario.with_changes(base)
        if full:
            scn["run"]["duration_ms"] = 2000
        apps = []
        for i, (s, d) in enumerate(zip(senders, dsts, strict=True)):
            if i < k:
                apps.append({"kind": "udp", "src": s, "dst": d, "rate": "line"})
            else:
                apps.append({"kind": "bulk", "src": s, "dst": d})
        scn["apps"] = apps
        return scn

    return build


def _udp_tcp_measure(bottleneck: tuple[str, str]):
    def measure(raw: dict, scn: dict, k: int) -> list[dict]:
        flows = table(raw, "flows")
        secs = duration_s(scn)
        udp = flows[flows["kind"] == "udp"]
        tcp = flows[flows["role"] == "bulk"]
        total = (udp["bytes_delivered"].sum() + tcp["bytes_delivered"].sum()) * 8 / secs / 1e6
        per_tcp = (tcp["bytes_delivered"] * 8 / secs / 1e6).mean() if len(tcp) else float("nan")
        ports = table(raw, "ports")
        p = ports[(ports["from"] == bottleneck[0]) & (ports["to"] == bottleneck[1])]
        return [
            {
                "total_mbps": total,
                "tcp_per_flow_mbps": per_tcp,
                "link_util": float(p["utilization"].iloc[0]),
            }
        ]

    return measure


def _udp_tcp_draw(rid: str, cap: float):
    def draw(df: pd.DataFrame, opts: Options):
        plot.lines(
            df,
            "udp_senders",
            "tcp_per_flow_mbps",
            "series",
            opts.out / f"{rid}-tcp.png",
            title=f"{rid}: per-flow TCP throughput",
            xlabel="UDP senders k",
            ylabel="TCP throughput per flow (Mbit/s)",
            note=note(rid, opts),
        )
        return plot.lines(
            df,
            "udp_senders",
            "total_mbps",
            "series",
            opts.out / f"{rid}.png",
            title=f"{rid}: total application throughput vs UDP senders",
            xlabel="UDP senders k (the rest TCP)",
            ylabel="application throughput (Mbit/s)",
            note=note(rid, opts),
            hline=(cap, "link capacity"),
        )

    return draw


def _udp_tcp_summary(df: pd.DataFrame) -> str:
    return (
        pivot_text(df, "udp_senders", "total_mbps")
        + "\n\n"
        + pivot_text(df, "udp_senders", "tcp_per_flow_mbps")
    )


register(
    Reproduction(
        id="xco-udp-1g",
        title="5 senders into one 1 Gb/s port, k UDP: none / ratelimit / timeslice (XCo paper)",
        source="xco.md",
        run=Experiment(
            id="xco-udp-1g",
            title="5 senders -> 1 receiver on a 1 Gb/s port; k UDP, 5 - k TCP",
            x="udp_senders",
            xs=lambda full: [0, 1, 2, 3, 4, 5],
            series={"none": NONE, "ratelimit": RATELIMIT, "timeslice": TIMESLICE},
            build=_udp_tcp_build([f"h{i}" for i in range(5)], ["h5"] * 5),
            measure=_udp_tcp_measure(("s0", "h5")),
            columns=["series", "udp_senders", "total_mbps", "tcp_per_flow_mbps", "link_util"],
            draw=_udp_tcp_draw("xco-udp-1g", 1000.0),
            summarize=_udp_tcp_summary,
        ).run,
    )
)

register(
    Reproduction(
        id="xco-udp-10g",
        title="13 x 1 Gb/s senders over a 10 Gb/s uplink, k UDP (XCo paper)",
        source="xco.md",
        run=Experiment(
            id="xco-udp-10g",
            title="13 senders (1 Gb/s NICs) on switch A -> 13 receivers on switch B across 10 Gb/s",
            x="udp_senders",
            xs=lambda full: list(range(14)) if full else [0, 2, 4, 7, 10, 13],
            series={"none": NONE, "ratelimit": RATELIMIT, "timeslice": TIMESLICE},
            build=_udp_tcp_build([f"a{i}" for i in range(13)], [f"b{i}" for i in range(13)]),
            measure=_udp_tcp_measure(("sa", "sb")),
            columns=["series", "udp_senders", "total_mbps", "tcp_per_flow_mbps", "link_util"],
            draw=_udp_tcp_draw("xco-udp-10g", 10000.0),
            summarize=_udp_tcp_summary,
        ).run,
    )
)


# ---------------------------------------------------------------------------
# iSCSI incast


def _incast_build(base: dict, n: int, full: bool) -> dict:
    scn = scenario.with_changes(base)
    scn["topology"]["hosts"] = n + 2
    scn["apps"][0]["servers"] = [f"h{i}" for i in range(1, n + 1)]
    scn["apps"][0]["total"] = "1GB" if full else "32MB"
    scn["xco"]["controller"] = f"h{n + 1}"
    return scn


def _incast_measure(raw: dict, scn: dict, n: int) -> list[dict]:
    return [{"throughput_mbps": app_metrics(raw)["goodput_mbps"]}]


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
    )


register(
    Reproduction(
        id="xco-incast",
        title="iSCSI-style striped reads from N servers: none / ratelimit / timeslice 2 ms, 10 ms",
        source="xco.md",
        run=Experiment(
            id="xco-incast",
            title="N storage servers -> 1 client, 9 KB jumbo frames, 1 MB blocks striped over N",
            x="servers",
            xs=lambda full: list(range(1, 17)) if full else [1, 2, 4, 8, 12, 16],
            series={
                "none": NONE,
                "ratelimit": RATELIMIT,
                "timeslice-2ms": {"mode": "timeslice", "slice_ms": 2},
                "timeslice-10ms": {"mode": "timeslice", "slice_ms": 10},
            },
            build=_incast_build,
            measure=_incast_measure,
            columns=["series", "servers", "throughput_mbps"],
            draw=_incast_draw,
            summarize=lambda df: pivot_text(df, "servers", "throughput_mbps"),
        ).run,
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
    )


register(
    Reproduction(
        id="xco-shorttcp",
        title="Long TCP flow vs K parallel sequences of 30 KB flows over 1 Gb/s (XCo paper)",
        source="xco.md",
        run=Experiment(
            id="xco-shorttcp",
            title="S1->R1 long flow; S2->R2 K sequences of 30 KB flows; shared 1 Gb/s link",
            x="parallel",
            xs=lambda full: list(range(0, 401, 25)) if full else [0, 25, 50, 100, 200, 400],
            series={"none": NONE, "timeslice": TIMESLICE},
            build=_short_build,
            measure=_short_measure,
            columns=["series", "parallel", "long_mbps", "short_mbps", "total_mbps"],
            draw=_short_draw,
            summarize=lambda df: (
                pivot_text(df, "parallel", "long_mbps") + "\n\n" + pivot_text(df, "parallel", "total_mbps")
            ),
        ).run,
    )
)


# ---------------------------------------------------------------------------
# ping RTT under load


def _ping_build(base: dict, loaded: bool, full: bool) -> dict:
    scn = scenario.with_changes(base)
    if full:
        scn["run"]["duration_ms"] = 5000
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


def _ping_summary(df: pd.DataFrame) -> str:
    lines = [f"{'series':<24} {'mean us':>10} {'p99 us':>10} {'max us':>10}"]
    for name, d in df.groupby("series", sort=False):
        r = d["rtt_us"]
        lines.append(f"{name:<24} {r.mean():>10.1f} {r.quantile(0.99):>10.1f} {r.max():>10.1f}")
    return "ping RTT across the 10 Gb/s path:\n" + "\n".join(lines)


def _ping_run(opts: Options) -> Outcome:
    exp = Experiment(
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
        draw=lambda df, o: plot.lines(
            df,
            "t_s",
            "rtt_us",
            "series",
            o.out / "xco-ping.png",
            title="xco-ping: RTT of pings across the 10 Gb/s path",
            xlabel="time (s)",
            ylabel="RTT (us, log scale)",
            note=note("xco-ping", o),
            logy=True,
            marker=None,
        ),
        summarize=_ping_summary,
    )
    return exp.run(opts)


register(
    Reproduction(
        id="xco-ping",
        title="Ping RTT across the 10 Gb/s path with and without load; XCo lets pings bypass (XCo paper)",
        source="xco.md",
        run=_ping_run,
    )
)


# ---------------------------------------------------------------------------
# live migration: a large transfer against TCP or UDP competitors


def _migration_build(kind: str):
    def build(base: dict, n: int, full: bool) -> dict:
        scn = scenario.with_changes(base)
        scn["apps"][0]["bytes"] = "256MB" if full else "32MB"
        for i in range(1, n + 1):
            app = {"kind": "bulk" if kind == "tcp" else "udp", "src": f"h{i}", "dst": "h5"}
            if kind == "udp":
                app["rate"] = "line"
            scn["apps"].append(app)
        return scn

    return build


def _migration_measure(raw: dict, scn: dict, n: int) -> list[dict]:
    m = app_metrics(raw, 0)
    done = "completion_ms" in m
    secs = m["completion_ms"] / 1e3 if done else float(raw["sim_end_s"])
    return [{"completion_s": secs, "completed": done}]


def _migration_run(opts: Options) -> Outcome:
    points: list[dict] = []
    base: dict = {}
    frames = []
    files = []
    summaries = []
    for kind in ("tcp", "udp"):
        exp = Experiment(
            id="xco-migration",
            title="256 MB transfer into R1 with 1..4 competing senders",
            x="competitors",
            xs=lambda full: [1, 2, 3, 4],
            series={f"+{kind}": NONE, f"+{kind} timeslice": TIMESLICE},
            build=_migration_build(kind),
            measure=_migration_measure,
            columns=["series", "competitors", "completion_s", "completed"],
            draw=lambda df, o: None,
            summarize=lambda df: "",
        )
        sub = Options(
            out=opts.out / ".parts", full=opts.full, jobs=opts.jobs, seed=opts.seed, progress=opts.progress
        )
        exp.run(sub)
        frames.append(pd.read_csv(sub.out / "xco-migration.csv"))
        part_meta = json.loads((sub.out / "xco-migration.meta.json").read_text())
        points += part_meta["points"]
        base = part_meta["base_scenario"]
        summaries.append(kind)
    df = pd.concat(frames, ignore_index=True)
    opts.out.mkdir(parents=True, exist_ok=True)
    csv = opts.out / "xco-migration.csv"
    df.to_csv(csv, index=False)
    png = plot.lines(
        df,
        "competitors",
        "completion_s",
        "series",
        opts.out / "xco-migration.png",
        title="xco-migration: transfer completion time vs competing senders",
        xlabel="competing senders into the same receiver",
        ylabel="completion time (s, log scale)",
        note=note("xco-migration", opts),
        logy=True,
    )
    text = (
        "xco-migration: a large transfer S1->R1 competing with 1..4 TCP or UDP senders into R1\n"
        f"seed {opts.seed}; settings: xco/scenarios/xco-migration.toml "
        f"({'256' if opts.full else '32'} MB transfer)\n\n"
        + pivot_text(df, "competitors", "completion_s", "{:.3f}")
    )
    if not df["completed"].all():
        text += "\n(runs that hit the duration bound report the bound; column `completed` is false)"
    txt = opts.out / "xco-migration.txt"
    txt.write_text(text + "\n")
    meta = write_meta(opts, "xco-migration", {}, base=base, points=points)
    for f in (opts.out / ".parts").glob("*"):
        f.unlink()
    (opts.out / ".parts").rmdir()
    files += [csv, png, txt, meta]
    return Outcome(files=files, summary=text)


register(
    Reproduction(
        id="xco-migration",
        title="A 256 MB transfer vs 1..4 TCP or UDP competitors, with and without timeslices (XCo paper)",
        source="xco.md",
        run=_migration_run,
    )
)


# ---------------------------------------------------------------------------
# per-flow fairness and work conservation


def _per_flow_measure(raw: dict, scn: dict, x: Any) -> list[dict]:
    flows = table(raw, "flows")
    flows = flows[(flows["role"].isin(["bulk", "udp"]))]
    secs = duration_s(scn)
    return [
        {"flow": f"{r.src}->{r.dst} ({r.kind})", "throughput_mbps": r.bytes_delivered * 8 / secs / 1e6}
        for r in flows.itertuples()
    ]


def _per_flow_summary(df: pd.DataFrame) -> str:
    p = df.pivot_table(index="flow", columns="series", values="throughput_mbps", sort=False)
    lines = [f"{'flow':<22} " + " ".join(f"{c:>16}" for c in p.columns)]
    for idx, row in p.iterrows():
        lines.append(f"{idx:<22} " + " ".join(f"{v:>16.1f}" for v in row))
    tot = p.sum()
    lines.append(f"{'total':<22} " + " ".join(f"{v:>16.1f}" for v in tot))
    return "throughput per flow (Mbit/s):\n" + "\n".join(lines)


def _per_flow_draw(rid: str, title: str):
    def draw(df: pd.DataFrame, opts: Options):
        return plot.bars(
            df,
            "flow",
            "throughput_mbps",
            "series",
            opts.out / f"{rid}.png",
            title=title,
            xlabel="flow",
            ylabel="throughput (Mbit/s)",
            note=note(rid, opts),
        )

    return draw


register(
    Reproduction(
        id="xco-fairness",
        title="2 UDP + 3 TCP senders over 1 Gb/s: per-flow shares, none vs timeslice (XCo paper)",
        source="xco.md",
        run=Experiment(
            id="xco-fairness",
            title="2 UDP + 3 TCP senders over a 1 Gb/s bottleneck",
            x="run",
            xs=lambda full: [1],
            series={"none": NONE, "timeslice": TIMESLICE},
            build=lambda base, x, full: scenario.with_changes(base),
            measure=_per_flow_measure,
            columns=["series", "flow", "throughput_mbps"],
            draw=_per_flow_draw("xco-fairness", "xco-fairness: per-flow throughput, 2 UDP + 3 TCP"),
            summarize=_per_flow_summary,
        ).run,
    )
)


def _wc_build(base: dict, x: Any, full: bool) -> dict:
    scn = scenario.with_changes(base)
    scn["apps"] = [
        {"kind": "udp", "src": f"a{i}", "dst": f"b{i}", "rate": "50Mbps" if i < 3 else "line"}
        for i in range(5)
    ]
    return scn


register(
    Reproduction(
        id="xco-workconserve",
        title="5 UDP senders (3 at 50 Mb/s) over 1 Gb/s: none / timeslice without and with work conservation",
        source="xco.md",
        run=Experiment(
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
            columns=["series", "flow", "throughput_mbps"],
            draw=_per_flow_draw("xco-workconserve", "xco-workconserve: per-flow throughput"),
            summarize=_per_flow_summary,
        ).run,
    )
)


# ---------------------------------------------------------------------------
# responsiveness: sets of flows alternating every 2 s

SWITCH_S = [2.0, 4.0, 6.0]


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


def _resp_summary(df: pd.DataFrame) -> str:
    lines = []
    for name, d in df.groupby("series", sort=False):
        dips = dips_ms(d)
        steady = d[(d["t_s"] % 2.0 > 0.1) & (d["t_s"] % 2.0 < 1.9)]["aggregate_mbps"].mean()
        lines.append(
            f"{name:<12} steady {steady:7.1f} Mbit/s; dip at each switch-over: "
            + ", ".join(f"{t:.0f} s: {v:.0f} ms" for t, v in dips.items())
        )
    return "aggregate receive rate (1 ms bins):\n" + "\n".join(lines)


register(
    Reproduction(
        id="xco-responsive",
        title="Two sets of 3 V2V flows alternating every 2 s: dip at each switch-over (XCo paper)",
        source="xco.md",
        run=Experiment(
            id="xco-responsive",
            title="6 sources on one host; sets of 3 alternate every 2 s",
            x="run",
            xs=lambda full: [1],
            series={"none": NONE, "timeslice": TIMESLICE},
            build=_resp_build,
            measure=_resp_measure,
            columns=["series", "t_s", "aggregate_mbps"],
            draw=lambda df, o: plot.lines(
                df,
                "t_s",
                "aggregate_mbps",
                "series",
                o.out / "xco-responsive.png",
                title="xco-responsive: aggregate receive rate",
                xlabel="time (s)",
                ylabel="aggregate receive rate (Mbit/s, 1 ms bins)",
                note=note("xco-responsive", o),
                marker=None,
            ),
            summarize=_resp_summary,
        ).run,
    )
)
