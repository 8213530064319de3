"""PDN's incast experiments (../shared/spec/pdn.md): pdn-goodput,
pdn-completion, pdn-theory and pdn-queue.

N servers each send a 10 KB server request unit to one client through a
300 KB drop-tail port; the next round starts when all have arrived. Four
series: TCP NewReno (RTO_min 200 ms) collapses once the synchronized burst
overflows the buffer; a random start delay per server (U[0, 400 us] and
U[0, 800 us]) only postpones the collapse; TCP with PDN (every switch and
host) retransmits a dropped segment as soon as the switch's notification
arrives. Beside them, the known remedies without PDN (issue 17): NewReno
with RTO_min 1 ms, the ``linux`` TCP profile (CUBIC, SACK, RACK-TLP) and the
``dctcp`` profile with K-threshold marking (K = 20 full frames, as the DCTCP
paper uses at 1 Gbps) on every switch port (docs/tcp-profiles.md).

The settings come from the scenario file's profile (``--profile``):
``modern`` (today's Linux-like defaults) or ``paper`` (the TCP defaults of
ns-3.19/3.20, the simulator of the PDN paper's time; docs/profiles/pdn-paper.md
says setting by setting where each value comes from).
"""

from __future__ import annotations

import csv
import io
import json
import math
from collections.abc import Callable
from importlib import resources
from pathlib import Path
from typing import Any

from .. import plot, scenario, sweep
from .._lazy import pd
from ..sim import app_metrics
from . import Options, Reproduction, register
from .experiment import EXPERIMENTS, Run, Study
from .replicates import Headline, seeds_of, seeds_text

QUICK_N = [2, 8, 16, 24, 32, 48, 64, 96, 128, 150]
FULL_N = list(range(2, 151))
QUEUE_QUICK_N = [2, 50, 100, 150, 200, 250, 300]
QUEUE_FULL_N = list(range(2, 301, 2))
PROFILES = ["modern", "paper"]
# series -> (random start delay max in us, PDN on, [tcp] changes, every switch port's queue)
# per series: random start delay (us), the [pdn] table (None: no PDN), [tcp] changes, the switch queue
SERIES: dict[str, tuple[float, dict[str, Any] | None, dict[str, Any], dict[str, Any] | None]] = {
    "newreno": (0.0, None, {}, None),
    "delay400": (400.0, None, {}, None),
    "delay800": (800.0, None, {}, None),
    "pdn": (0.0, {}, {}, None),
    # beyond the paper: a lost resend waits a round trip (docs/pdn.md)
    "pdn-rtt": (0.0, {"resend": "window-rtt"}, {}, None),
    "rto1ms": (0.0, None, {"rto_min_ms": 1.0}, None),
    "linux": (0.0, None, {"profile": "linux", "cc": "cubic"}, None),
    "dctcp": (0.0, None, {"profile": "dctcp", "cc": "dctcp"}, {"kind": "step", "k_packets": 20}),
}
SERIES_LABEL = {
    "newreno": "TCP NewReno",
    "delay400": "NewReno + random delay ≤ 400 µs",
    "delay800": "NewReno + random delay ≤ 800 µs",
    "pdn": "TCP with PDN",
    "pdn-rtt": "PDN, a lost resend waits an RTT",
    "rto1ms": "NewReno, RTO_min 1 ms",
    "linux": "linux TCP (CUBIC, SACK, RACK-TLP)",
    "dctcp": "dctcp (DCTCP, ECN, K = 20 frames)",
    "theory": "best case (serialisation + propagation)",
}


def base_text() -> str:
    """The scenario file's text, comments included."""
    return resources.files("xco").joinpath("scenarios/pdn-incast.toml").read_text()


def base_scenario(profile: str | None = None) -> dict[str, Any]:
    """The scenario file the sweeps vary (xco/scenarios/pdn-incast.toml), with ``profile`` chosen."""
    base = scenario.parse(base_text())
    if profile is not None:
        base = scenario.with_changes(base, run={"profile": profile})
    return base


def effective(base: dict[str, Any]) -> dict[str, Any]:
    """``base`` with its chosen profile's settings merged over its own (what the simulator runs)."""
    name = base.get("run", {}).get("profile")
    out = scenario.with_changes(base)
    prof = base.get("profiles", {}).get(name, {}) if name else {}
    for section in ("run", "tcp"):
        for k, v in prof.get(section, {}).items():
            out.setdefault(section, {})[k] = v
    for app in out.get("apps", []):
        app.update(prof.get("apps", {}))
    return out


def mss_bytes(sc: dict[str, Any], pdn: bool) -> int:
    """The MSS of the effective scenario ``sc`` (PDN hosts' is 20 bytes smaller)."""
    mtu = sc.get("run", {}).get("mtu_bytes", 1500)
    options = 12 if sc.get("tcp", {}).get("timestamps", True) else 0
    return mtu - 40 - options - (20 if pdn else 0)


def round_goodputs_mbps(raw: dict[str, Any], servers: int) -> list[float]:
    """Each finished round's goodput, Mbit/s: the N SRUs over that round's time
    (the incast app's samples are round times in ms)."""
    sru = scenario.size_bytes(json.loads(raw["meta"])["scenario"]["apps"][0]["sru"], "apps[0].sru")
    times_ms = [
        float(r["value"])
        for r in csv.DictReader(io.StringIO(raw["samples"]))
        if r["app"] == "0" and r["kind"] == "incast" and float(r["value"]) > 0
    ]
    return [servers * sru * 8 / (t / 1e3) / 1e6 for t in times_ms]


def _measure(raw: dict[str, Any]) -> dict[str, Any]:
    m = app_metrics(raw)
    # the PDN rows follow the apps in apps.csv (absent without PDN)
    p = app_metrics(raw, app=1)
    rounds = round_goodputs_mbps(raw, int(m["servers"]))
    return {
        "goodput_mbps": m["goodput_mbps"],
        # the spread the mean hides: the slowest and the fastest round (the mean lies between)
        "round_goodput_min_mbps": min(rounds, default=math.nan),
        "round_goodput_max_mbps": max(rounds, default=math.nan),
        "completion_ms": m["completion_ms_mean"],
        "timeouts": int(m["timeouts"]),
        "notifications": int(p.get("notifications_made", 0)),
        "max_notice_queue": int(p.get("max_queue_len", 0)),
    }


def with_tcp(sc: dict[str, Any], changes: dict[str, Any]) -> dict[str, Any]:
    """``sc`` with ``changes`` in ``[tcp]``, and in its chosen profile's ``tcp``
    table where that sets the same key (a profile's keys override ``[tcp]``)."""
    out = scenario.with_changes(sc, tcp=changes)
    name = out.get("run", {}).get("profile")
    prof_tcp = out.get("profiles", {}).get(name, {}).get("tcp", {}) if name else {}
    for k, v in changes.items():
        if k in prof_tcp:
            prof_tcp[k] = v
    return out


def _point(base: dict[str, Any], series: str, n: int, rounds: int, seed: int) -> sweep.Point:
    delay, pdn, tcp, queue = SERIES[series]
    sc = scenario.with_changes(
        base,
        topology={"hosts_a": n},
        app0={"start_delay_max_us": delay, "rounds": rounds},
    )
    if pdn is not None:
        sc = scenario.with_changes(sc, pdn=pdn)
    if tcp:
        sc = with_tcp(sc, tcp)
    if queue:
        sc = scenario.with_changes(sc, topology={"queue": queue})
    return sweep.Point(labels={"series": series, "n": n}, scenario=sc, seed=seed)


def sweep_points(opts: Options) -> list[sweep.Point]:
    """Every (series, N) point of the goodput/completion/theory sweep."""
    base = base_scenario(opts.profile)
    rounds = 100 if opts.full else base["apps"][0]["rounds"]
    ns = FULL_N if opts.full else QUICK_N
    return [_point(base, s, n, rounds, opts.seed) for s in SERIES for n in ns]


def queue_points(opts: Options) -> list[sweep.Point]:
    """PDN only, N up to 300: the notification queue."""
    base = base_scenario(opts.profile)
    rounds = 100 if opts.full else base["apps"][0]["rounds"]
    ns = QUEUE_FULL_N if opts.full else QUEUE_QUICK_N
    return [_point(base, "pdn", n, rounds, opts.seed) for n in ns]


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


def theory_ms(sc: dict[str, Any], n: int) -> float:
    """The best-case round time with ``n`` servers: every byte of the N SRUs
    serialised back to back at the client's link (headers and Ethernet
    framing included, PDN's MSS), plus one 100 us round-trip propagation; no
    loss, no waiting, perfectly coordinated (the spec's "only serialization +
    100 us propagation")."""
    sru = scenario.size_bytes(sc["apps"][0]["sru"])
    mss = mss_bytes(sc, pdn=True)
    header = 40 + (12 if sc.get("tcp", {}).get("timestamps", True) else 0)
    segments = math.ceil(sru / mss)
    wire_bytes = n * (sru + segments * (header + 18 + 20))  # + Ethernet header/FCS, preamble/gap
    rate_bps = scenario.rate_bps(sc["topology"]["host_rate"])
    return (wire_bytes * 8 / rate_bps + 100e-6) * 1e3


def frame_table(results: list[dict]) -> pd.DataFrame:
    """The tidy table of the runs' results: their labels (series, n) and :func:`_measure`'s figures."""
    return pd.DataFrame([{k: v for k, v in r.items() if not k.startswith("_")} for r in results])


# ---------------------------------------------------------------------------
# what the paper claimed, beside what we measured


def verdict_goodput(df: pd.DataFrame) -> list[str]:
    """The spec's goodput claims with our figures and a verdict each."""
    c = {s: collapse_n(df[df["series"] == s]) for s in SERIES}
    big = df["n"].max()
    plateau = df[df["series"] == "newreno"]["goodput_mbps"].max()
    pdn = df[df["series"] == "pdn"]
    out = []
    ok = c["newreno"] is not None
    out.append(
        "claim: NewReno goodput collapses beyond some N. ours: collapse at "
        f"{_collapse_text(df[df['series'] == 'newreno'])}"
        f" -> {'holds' if ok else 'does not hold (no collapse in this range)'}"
    )

    def later(a: int | None, b: int | None) -> bool:
        """True if a collapse at ``b`` comes after one at ``a`` (None: no collapse in range)."""
        return b is None if a is None else (b is None or b > a)

    both = ok and later(c["newreno"], c["delay400"]) and not later(c["delay800"], c["delay400"])
    some = ok and (later(c["newreno"], c["delay400"]) or later(c["newreno"], c["delay800"]))
    verdict = "holds" if both else ("partly (not every delay postpones it)" if some else "does not hold")
    out.append(
        "claim: a random start delay only postpones the collapse (more delay, later collapse; judged at this"
        " sweep's N resolution). ours: "
        f"400 us -> {_collapse_text(df[df['series'] == 'delay400'])}, 800 us -> "
        f"{_collapse_text(df[df['series'] == 'delay800'])} -> {verdict}"
    )
    # "stays high" where NewReno has collapsed: from NewReno's collapse point on
    n0 = c["newreno"] if c["newreno"] is not None else int(df["n"].min())
    after = pdn[pdn["n"] >= n0]
    pdn_min = after["goodput_mbps"].min()
    high = pdn_min >= 0.8 * plateau
    per_conn = int((pdn["timeouts"] / pdn["n"]).apply(math.ceil).max())
    out.append(
        f"claim: with PDN goodput stays high up to {big} servers. ours: lowest PDN goodput from N = {n0} on"
        f" {pdn_min:.1f} Mbit/s ({pdn_min / plateau:.0%} of NewReno's best, {plateau:.1f}) -> "
        + ("holds" if high else "does not hold (below 80% of NewReno's best)")
    )
    out.append(
        f"  PDN's retransmission timeouts in the whole sweep: {int(pdn['timeouts'].sum())}"
        + (
            f" (at most {per_conn} per connection; where a profile's delayed-ACK timer is as long as its"
            " RTO_min, a connection's first lone segment times out once even without a drop)"
            if 0 < per_conn <= 1
            else ""
        )
    )
    return out


def beyond_paper(df: pd.DataFrame, opts: Options) -> list[str]:
    """The spec's PDN beside the window-rtt rule (docs/pdn.md): goodput, drops, timeouts."""
    rounds = 100 if opts.full else base_scenario(opts.profile)["apps"][0]["rounds"]
    segs = segments_per_round(opts)
    big = int(df["n"].max())
    out = ['beyond the paper: a lost resend waits a round trip ([pdn] resend = "window-rtt", docs/pdn.md)']
    for s in ("pdn", "pdn-rtt"):
        d = df[df["series"] == s].set_index("n")
        per_seg = d.loc[big, "notifications"] / (big * rounds * segs)
        out.append(
            f"  {SERIES_LABEL[s]:<34} N = {big}: {d.loc[big, 'goodput_mbps']:.1f} Mbit/s,"
            f" {per_seg:.2f} drops notified per data segment,"
            f" {int(d['timeouts'].sum())} timeouts in the sweep"
        )
    return out


def verdict_theory(df: pd.DataFrame) -> list[str]:
    """PDN's completion time against the best case."""
    pdn = df[df["series"] == "pdn"].set_index("n")
    th = df[df["series"] == "theory"].set_index("n")
    ratio = (pdn["completion_ms"] / th["completion_ms"]).dropna()
    worst_n = int(ratio.idxmax())
    worst = float(ratio.max())
    lines = [
        "claim: with PDN the completion time stays close to the theoretical best up to 150 servers. "
        f"ours: at most {worst:.2f}x the best case (at N = {worst_n}; mean {ratio.mean():.2f}x) -> "
        + ("holds" if worst <= 1.5 else "partly (within 3x)" if worst <= 3 else "does not hold")
        + " (close: within 1.5x)"
    ]
    if worst > 1.5:
        excess = (pdn["completion_ms"] - th["completion_ms"]).dropna()
        last = int(excess.index.max())
        lines.append(
            f"  why: PDN's round takes {excess[worst_n]:.3f} ms more than the best case at N = {worst_n} and"
            f" {excess[last]:.3f} ms more at N = {last}: a cost at the start of each round that the best case"
            " (serialisation and propagation only) leaves out -- each server's connection start (the header"
            " above: its connection mode and initial window) -- which weighs most where a round is shortest"
        )
    return lines


def segments_per_round(opts: Options) -> int:
    """Data segments one server sends per round with PDN's MSS (the SRU split)."""
    eff = effective(base_scenario(opts.profile))
    sru = scenario.size_bytes(eff["apps"][0]["sru"], "apps[0].sru")
    return -(-sru // mss_bytes(eff, True))


def verdict_loss(df: pd.DataFrame, segs: int) -> list[str]:
    """The spec's mechanism: the sender slows down at the first loss, so loss stays low."""
    d = df.sort_values("n")
    per_seg = d["notifications"] / (d["n"] * d["rounds"] * segs)
    worst = float(per_seg.max())
    worst_n = int(d["n"].iloc[int(per_seg.values.argmax())])
    return [
        "claim: because the sender slows down at the first loss, loss stays low. ours: drops notified per"
        f" data segment of the rounds: {worst:.2f} at most (N = {worst_n});"
        f" {float(per_seg.iloc[0]):.2f} at N = {int(d['n'].iloc[0])} -> "
        + ("holds" if worst <= 1 else "does not hold")
        + " (low: each segment dropped at most once on average). Why: a notified segment is resent at once,"
        " whatever the window, and a resend that meets the still-full port is dropped and notified again"
        " (tcp/endpoint/pdn.rs; `[pdn] resend` chooses another rule, docs/pdn.md)"
        if worst > 1
        else "claim: because the sender slows down at the first loss, loss stays low. ours: drops notified"
        f" per data segment at most {worst:.2f} -> holds (low: each segment dropped at most once on average)"
    ]


def verdict_queue(df: pd.DataFrame) -> list[str]:
    """The notification queue's largest length."""
    q = int(df["max_notice_queue"].max())
    return [
        "claim: the notification queue never holds more than a single notification. "
        f"ours: largest length {q} over N = {df['n'].min()}..{df['n'].max()} "
        f"({int(df['notifications'].sum())} notifications made) -> "
        + ("holds" if q <= 1 else "does not hold")
    ]


# ---------------------------------------------------------------------------


def connections(app: dict[str, Any]) -> str:
    """How the incast app uses TCP connections, in words."""
    return "persistent connections" if app.get("reuse_connections", True) else "a new connection per request"


def settings_text(opts: Options) -> list[str]:
    """The settings the run used, with the profile's origin."""
    base = base_scenario(opts.profile)
    eff = effective(base)
    t, tcp, app = eff["topology"], eff["tcp"], eff["apps"][0]
    name = base.get("run", {}).get("profile")
    about = base.get("profiles", {}).get(name, {}).get("about", "")
    rounds = 100 if opts.full else app["rounds"]
    return [
        "PDN incast: N servers -> 1 client, two switches, all links 1 Gbps, 100 us RTT,",
        f"  switch buffer {t['switch_buffer']} per port (KB = 1000 B), SRU {app['sru']} (1000 B units),"
        f" request {app['request']} B, {rounds} rounds, {connections(app)}",
        f"  profile {name}: {about}",
        f"  TCP {tcp.get('cc', 'newreno')}: MSS {mss_bytes(eff, False)} B"
        f" ({mss_bytes(eff, True)} B with PDN), timestamps {'on' if tcp.get('timestamps', True) else 'off'},"
        f" IW {tcp['initial_cwnd_segments']} segments,"
        f" RTO_min {tcp['rto_min_ms']} ms, delayed ACK {'on' if tcp['delayed_ack'] else 'off'}"
        f" ({tcp['delayed_ack_timeout_ms']} ms), seed {opts.seed}",
    ]


def summary(df: pd.DataFrame, opts: Options) -> str:
    """The headline figures, the settings they depend on and the verdicts."""
    lines = [
        *settings_text(opts),
        "",
        f"{'series':<34} {'N=' + str(df['n'].min()):>12} {'collapse at':>24} "
        f"{'N=' + str(df['n'].max()):>12} {'completion N=max':>18} {'timeouts (sweep)':>17}",
    ]
    for s in SERIES:
        d = df[df["series"] == s].sort_values("n")
        first, last = d.iloc[0], d.iloc[-1]
        timeouts = int(d["timeouts"].sum())
        lines.append(
            f"{SERIES_LABEL[s]:<34} {first['goodput_mbps']:>8.1f} Mb/s {_collapse_text(d):>24} "
            f"{last['goodput_mbps']:>8.1f} Mb/s {last['completion_ms']:>15.2f} ms {timeouts:>17}"
        )
    lines += ["", *verdict_goodput(df), "", *beyond_paper(df, opts)]
    return "\n".join(lines)


def _note(rid: str, opts: Options) -> str:
    return (
        f"{rid} · xco, {seeds_text(seeds_of(opts.seed, opts.seeds))}, profile {opts.profile or 'modern'};"
        " 1 Gbps, 100 us RTT, 300 KB/port, SRU 10 KB"
    )


def _runs(points) -> Callable[[Options], list[Run]]:
    return lambda opts: [Run(p.labels, p.scenario) for p in points(opts)]


def ideal_mbps(opts: Options) -> float:
    """The payload line rate: payload per frame on the wire (+18 B framing, +20 B preamble and gap)."""
    eff = effective(base_scenario(opts.profile))
    mtu = eff.get("run", {}).get("mtu_bytes", 1500)
    return 1000.0 * mss_bytes(eff, False) / (mtu + 38)


def theory_table(df: pd.DataFrame, opts: Options) -> pd.DataFrame:
    """PDN's completion time beside the best case per N (series ``pdn`` and ``theory``)."""
    eff = effective(base_scenario(opts.profile))
    theory = pd.DataFrame(
        [{"series": "theory", "n": n, "completion_ms": theory_ms(eff, n)} for n in sorted(df["n"].unique())]
    )
    return pd.concat([df[df["series"] == "pdn"][["series", "n", "completion_ms"]], theory])


def _tables(rid: str):
    def tables(results: list[dict], opts: Options) -> dict[str, pd.DataFrame]:
        df = frame_table(results)
        if rid == "pdn-theory":
            return {"": theory_table(df, opts)}
        cols = ["series", "n", "goodput_mbps", "completion_ms", "timeouts", "notifications"]
        cols += ["round_goodput_min_mbps", "round_goodput_max_mbps"] if rid == "pdn-goodput" else []
        # the whole table for the summary; the CSV holds ``cols`` (written by _write)
        return {"": df[cols], "_all": df}

    return tables


def _draw(rid: str):
    def draw(t: dict[str, pd.DataFrame], opts: Options) -> list[Path]:
        order = [SERIES_LABEL[s] for s in SERIES]
        df = t[""]
        if rid == "pdn-goodput":
            band = ("round_goodput_min_mbps", "round_goodput_max_mbps", "band: slowest to fastest round")
            png = plot.lines(
                df.assign(series=df["series"].map(SERIES_LABEL)),
                "n",
                "goodput_mbps",
                "series",
                opts.out / "pdn-goodput.png",
                title="Incast goodput vs number of servers",
                xlabel="servers N",
                ylabel="application goodput (Mbit/s)",
                note=_note("pdn-goodput", opts),
                hline=(ideal_mbps(opts), "payload line rate"),
                order=order,
                # several seeds: the band is the mean's interval, not the rounds' spread
                band=band if "seed" not in df.columns else None,
            )
        elif rid == "pdn-completion":
            png = plot.lines(
                df.assign(series=df["series"].map(SERIES_LABEL)),
                "n",
                "completion_ms",
                "series",
                opts.out / "pdn-completion.png",
                title="Incast round completion time vs number of servers",
                xlabel="servers N",
                ylabel="mean round completion time (ms, log scale)",
                note=_note("pdn-completion", opts),
                logy=True,
                order=order,
            )
        else:
            png = plot.lines(
                df.assign(series=df["series"].map(SERIES_LABEL)),
                "n",
                "completion_ms",
                "series",
                opts.out / "pdn-theory.png",
                title="Round completion time with PDN vs the best case",
                xlabel="servers N",
                ylabel="mean round completion time (ms)",
                note=_note("pdn-theory", opts),
                order=[SERIES_LABEL["pdn"], SERIES_LABEL["theory"]],
            )
        return plot.figure_files(png)

    return draw


def _summary(rid: str):
    def summarize(t: dict[str, pd.DataFrame], results: list[dict], opts: Options) -> str:
        if rid != "pdn-theory":
            return summary(t["_all"], opts)
        eff = effective(base_scenario(opts.profile))
        both = t[""]
        pdn = both[both["series"] == "pdn"]
        return "\n".join(
            [
                *settings_text(opts),
                "",
                f"{'N':>5} {'PDN (ms)':>10} {'best case (ms)':>15}",
                *(
                    f"{int(r.n):>5} {r.completion_ms:>10.3f} {theory_ms(eff, int(r.n)):>15.3f}"
                    for r in pdn.sort_values("n").itertuples()
                ),
                "",
                *verdict_theory(both),
            ]
        )

    return summarize


def theory_worst(both: pd.DataFrame) -> float:
    """PDN's largest completion time over the best case's, over N."""
    pdn = both[both["series"] == "pdn"].set_index("n")
    th = both[both["series"] == "theory"].set_index("n")
    return float((pdn["completion_ms"] / th["completion_ms"]).dropna().max())


def _theory_rule(worst: float) -> str:
    return "holds" if worst <= 1.5 else "partly" if worst <= 3 else "does not hold"


class _PdnStudy(Study):
    """PDN's sweep: its tables hold hidden helpers (``_all``) that are not written."""

    def write_tables(self, tables, opts, labels):
        return super().write_tables({k: v for k, v in tables.items() if not k.startswith("_")}, opts, labels)


def pdn_study(rid: str) -> Study:
    """pdn-goodput, pdn-completion or pdn-theory on the experiment frame (one sweep, three views)."""
    s = _PdnStudy(
        id=rid,
        title=f"PDN incast sweep: {rid}",
        runs=_runs(sweep_points),
        keep=_measure,
        tables=_tables(rid),
        draw=_draw(rid),
        summarize=_summary(rid),
        base=lambda opts: base_scenario(opts.profile),
        extra=lambda opts: {"series": SERIES_LABEL, "profile": opts.profile},
        headlines=(
            (
                lambda t, rs, opts: [
                    Headline(
                        "with PDN the completion time stays close",
                        "PDN's largest completion time over the best case's",
                        theory_worst(t[""]),
                        _theory_rule,
                        (1.5, 3.0),
                    )
                ]
            )
            if rid == "pdn-theory"
            else None
        ),
        keys=["series", "n"],
        desc="pdn incast",
    )
    EXPERIMENTS[rid] = s
    return s


def _queue_tables(results: list[dict], opts: Options) -> dict[str, pd.DataFrame]:
    df = frame_table(results)
    segs = segments_per_round(opts)
    df["rounds"] = [r["_scn"]["apps"][0]["rounds"] for r in results]
    df["notifications_per_segment"] = df["notifications"] / (df["n"] * df["rounds"] * segs)
    cols = ["n", "max_notice_queue", "notifications", "notifications_per_segment", "goodput_mbps", "timeouts"]
    return {"": df[cols], "_all": df}


def _queue_draw(t: dict[str, pd.DataFrame], opts: Options) -> list[Path]:
    png = plot.lines(
        t[""].assign(series="largest notification queue (any port)"),
        "n",
        "max_notice_queue",
        "series",
        opts.out / "pdn-queue.png",
        title="Largest PDN notification queue vs number of servers",
        xlabel="servers N",
        ylabel="notifications waiting (count)",
        note=_note("pdn-queue", opts),
        integer_y=True,
    )
    return plot.figure_files(png)


def _queue_summary(t: dict[str, pd.DataFrame], results: list[dict], opts: Options) -> str:
    df = t["_all"]
    segs = segments_per_round(opts)
    return "\n".join(
        [
            *settings_text(opts),
            "",
            f"{'N':>5} {'largest queue':>14} {'notifications':>14} {'per segment':>12}"
            f" {'goodput (Mb/s)':>15}",
            *(
                f"{int(r.n):>5} {int(r.max_notice_queue):>14} {int(r.notifications):>14}"
                f" {r.notifications_per_segment:>12.2f} {r.goodput_mbps:>15.1f}"
                for r in df.sort_values("n").itertuples()
            ),
            "",
            "the largest queue is taken over every port of the run (the bottleneck's is at most that);"
            f" per segment: notifications / (N x rounds x {segs} data segments per SRU)",
            *verdict_queue(df),
            *verdict_loss(df, segs),
        ]
    )


def _queue_headlines(t: dict[str, pd.DataFrame], results: list[dict], opts: Options) -> list[Headline]:
    df = t["_all"]
    per_seg = float(df["notifications_per_segment"].max())
    return [
        Headline(
            "the notification queue never holds more than a single notification",
            "the largest notification queue",
            float(df["max_notice_queue"].max()),
            lambda q: "holds" if q <= 1 else "does not hold",
            (1.0,),
        ),
        Headline(
            "because the sender slows down at the first loss, loss stays low",
            "the most drops notified per data segment",
            per_seg,
            lambda w: "holds" if w <= 1 else "does not hold",
            (1.0,),
        ),
    ]


QUEUE_STUDY = _PdnStudy(
    id="pdn-queue",
    title="Largest notification queue with PDN, N up to 300",
    runs=_runs(queue_points),
    keep=_measure,
    tables=_queue_tables,
    draw=_queue_draw,
    summarize=_queue_summary,
    base=lambda opts: base_scenario(opts.profile),
    extra=lambda opts: {"profile": opts.profile},
    headlines=_queue_headlines,
    keys=["n"],
    desc="pdn queue",
)
EXPERIMENTS["pdn-queue"] = QUEUE_STUDY


for _rid, _title in (
    ("pdn-goodput", "Incast goodput vs N: NewReno, +random start delay, PDN (PDN paper)"),
    ("pdn-completion", "Incast round completion time vs N, same series (PDN paper)"),
    ("pdn-theory", "PDN's round completion time vs the best case (PDN paper)"),
):
    register(
        Reproduction(
            id=_rid,
            title=_title,
            source="pdn.md",
            run=pdn_study(_rid).run,
            shares_run_with=[r for r in ("pdn-goodput", "pdn-completion", "pdn-theory") if r != _rid],
            profiles=PROFILES,
        )
    )
register(
    Reproduction(
        id="pdn-queue",
        title="Largest notification queue with PDN, N up to 300 (PDN paper)",
        source="pdn.md",
        run=QUEUE_STUDY.run,
        profiles=PROFILES,
    )
)
