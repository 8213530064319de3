"""``pdn-fairness`` (../shared/spec/pdn.md): PDN and NewReno flows sharing one uplink.

Five long TCP flows from rack 1 (hosts a0..a4 on switch ``sa``) to one server
of rack 2 (``b0`` on ``sb``) share the 1 Gbps ``sa -> sb`` uplink and its
300 KB drop-tail port. A flow starts every interval (2 s in the paper, the
``--full`` run; 0.2 s in the quick run) until five run, then one is removed
every interval, in the order they came. Flows 1 and 2 use PDN (their hosts and
every switch run it), flows 3 to 5 are plain NewReno. The per-flow throughput
over time shows whether the two kinds share the uplink fairly.

The TCP settings are the PDN scenario file's profile (``--profile``).
"""

from __future__ import annotations

import io
from typing import Any

from .. import plot, scenario
from .._lazy import pd
from ..sim import run_raw
from . import Options, Reproduction, register
from .experiment import EXPERIMENTS, Run, Study
from .pdn import PROFILES, base_scenario, settings_text
from .replicates import Headline, seeds_of, seeds_text

FLOWS = 5
PDN_FLOWS = 2  # flows 1..PDN_FLOWS use PDN
TSQ_LIMIT_BYTES = 1 << 20  # the hosts' TCP Small Queues cap (Linux's default)


def interval_s(opts: Options) -> float:
    """Time between one flow's arrival (or removal) and the next."""
    return 2.0 if opts.full else 0.2


def flow_label(i: int) -> str:
    """Legend name of flow ``i`` (0-based)."""
    return f"flow {i + 1} ({'PDN' if i < PDN_FLOWS else 'NewReno'})"


def fairness_scenario(opts: Options) -> dict[str, Any]:
    """The run: the PDN scenario's topology and TCP, five bulk flows, PDN on a0, a1."""
    base = base_scenario(opts.profile)
    t = interval_s(opts)
    sc = scenario.with_changes(base, topology={"hosts_a": FLOWS, "hosts_b": 1})
    sc["apps"] = [
        {
            "kind": "bulk",
            "src": f"a{i}",
            "dst": "b0",
            "start_ms": round(i * t * 1e3, 6),
            "stop_ms": round((FLOWS + i) * t * 1e3, 6),
        }
        for i in range(FLOWS)
    ]
    # a profile's [profiles.X.apps] table (the paper's: a new connection per request) describes the
    # incast's request/response apps; these are bulk flows (one connection each, as ns-3's
    # BulkSendApplication), so it does not apply here -- and bulk apps have no such keys
    sc["profiles"] = {
        name: {k: v for k, v in prof.items() if k != "apps"} for name, prof in sc.get("profiles", {}).items()
    }
    sc["pdn"] = {"hosts": [f"a{i}" for i in range(PDN_FLOWS)] + ["b0"]}
    # Linux's TCP Small Queues with its default cap (tcp_limit_output_bytes, 1 MiB)
    sc["host"] = {**sc.get("host", {}), "tsq_limit_bytes": TSQ_LIMIT_BYTES}
    sc["output"] = {"timeseries_bin_us": round(t * 1e6 / 20, 3), "timeseries_ports": "none"}
    sc["run"]["duration_ms"] = round(2 * FLOWS * t * 1e3, 6)
    return sc


def jain(xs: list[float]) -> float:
    """Jain's fairness index of ``xs`` (1: equal shares)."""
    s = sum(xs)
    q = sum(x * x for x in xs)
    return s * s / (len(xs) * q) if q > 0 else float("nan")


def phases(series: pd.DataFrame, opts: Options) -> pd.DataFrame:
    """Per interval: the active flows and their mean throughput over the
    interval's second half (after the newcomer's slow start), and Jain's index."""
    t = interval_s(opts)
    rows = []
    for k in range(2 * FLOWS - 1):
        lo, hi = k * t, (k + 1) * t
        active = [i for i in range(FLOWS) if i <= k and k < FLOWS + i]
        d = series[(series["t_s"] > lo + t / 2) & (series["t_s"] <= hi)]
        means = {i: float(d[d["flow"] == i]["throughput_mbps"].mean()) for i in active}
        rows.append(
            {
                "phase": k + 1,
                "from_s": lo,
                "to_s": hi,
                "flows": len(active),
                "jain": jain(list(means.values())) if len(active) > 1 else float("nan"),
                **{f"flow{i + 1}_mbps": means.get(i, float("nan")) for i in range(FLOWS)},
            }
        )
    return pd.DataFrame(rows)


def _series(raw: dict[str, Any]) -> pd.DataFrame:
    """Per-flow throughput rows of a run (the data flow of app i goes a_i -> b0)."""
    ts = pd.read_csv(io.StringIO(raw["timeseries"]))
    flows = pd.read_csv(io.StringIO(raw["flows"]))
    data = flows[(flows["role"] == "bulk")].reset_index(drop=True)
    flow_of = {int(r.flow): int(r.src[1:]) for r in data.itertuples()}
    series = ts[(ts["entity"] == "flow") & (ts["id"].isin(flow_of))].copy()
    series["flow"] = series["id"].map(flow_of)
    series["series"] = series["flow"].map(flow_label)
    return series


def _phases_of(raw: dict[str, Any], opts: Options) -> pd.DataFrame:
    return phases(_series(raw), opts)


def jain_range(ph: pd.DataFrame) -> tuple[float, float]:
    """Lowest and mean Jain index over the phases with two or more flows."""
    j = ph[ph["flows"] > 1]["jain"]
    return float(j.min()), float(j.mean())


def _jain_range_of(sc: dict[str, Any], opts: Options) -> tuple[float, float]:
    return jain_range(_phases_of(run_raw(sc, opts.seed), opts))


def why_unfair(raw: dict[str, Any], ph: pd.DataFrame, opts: Options) -> list[str]:
    """Lines that say, from measurements, why the flows did not share: what
    the PDN senders put on the wire, and two control runs that each change
    one thing (lost resends left to the timer; hosts' links ten times faster
    than the uplink; a lost resend waiting a round trip before its next copy)."""
    flows = pd.read_csv(io.StringIO(raw["flows"]))
    data = flows[flows["role"] == "bulk"]
    out = ["  why (measured):"]
    storm = False
    for r in data.itertuples():
        i = int(r.src[1:])
        if i >= PDN_FLOWS:
            continue
        sent, got = float(r.wire_bytes_sent) / 1e6, float(r.bytes_delivered) / 1e6
        storm |= sent > 2 * got
        out.append(
            f"    {flow_label(i)}: {sent:.1f} MB on the wire for {got:.1f} MB delivered,"
            f" {int(r.packets_dropped)} packets dropped, {int(r.retransmits)} retransmits"
        )
    timer = fairness_scenario(opts)
    timer["pdn"] = {**timer["pdn"], "resend": "once"}
    fast = fairness_scenario(opts)
    fast["topology"]["host_rate"] = "10Gbps"
    paced = fairness_scenario(opts)
    paced["pdn"] = {**paced["pdn"], "resend": "window-rtt"}
    here, a, b = jain_range(ph), _jain_range_of(timer, opts), _jain_range_of(fast, opts)
    c = _jain_range_of(paced, opts)
    out += [
        f"    Jain over the shared phases, lowest / mean: this run {here[0]:.3f} / {here[1]:.3f};",
        f'    control A, lost resends left to the timer ([pdn] resend = "once"): {a[0]:.3f} / {a[1]:.3f};',
        f"    control B, the hosts' links at 10 Gbps (the uplink stays 1 Gbps): {b[0]:.3f} / {b[1]:.3f};",
        '    control C, a lost resend waits a round trip ([pdn] resend = "window-rtt"):'
        f" {c[0]:.3f} / {c[1]:.3f}.",
    ]
    better_a, better_b, better_c = (x[1] >= here[1] + 0.3 for x in (a, b, c))
    if storm and (better_a or better_c):
        which = " or ".join(
            w for w, ok in (("waits for the timer (A)", better_a), ("waits a round trip (C)", better_c)) if ok
        )
        out.append(
            "    A PDN sender shut out of the full uplink port resends every notified segment at once,"
            " whatever its window, and its resends are dropped and notified again: its window circulates"
            f" at line rate and keeps the port full. Where a lost resend {which} the flows share far better"
            " on the mean; the spec does not say what a lost resend does (docs/pdn.md: waiting for the"
            " timer costs PDN its incast result, waiting a round trip keeps it: pdn-goodput's pdn-rtt"
            " series)."
        )
    if better_b:
        out.append(
            "    The shut-out needs senders whose links equal the uplink's rate: with faster host links (B)"
            " arrivals interleave and the flows share far better (a drop-tail lock-out, as in Outcast)."
        )
    if not (storm and (better_a or better_c)) and not better_b:
        out.append("    Neither control is much fairer: the cause is not established.")
    return out


def _runs(opts: Options) -> list[Run]:
    return [Run({}, fairness_scenario(opts))]


def _tables(results: list[dict], opts: Options) -> dict[str, pd.DataFrame]:
    series = _series(results[0]["raw"])
    table = series[["t_s", "flow", "series", "throughput_mbps"]].sort_values(["t_s", "flow"])
    return {"": table, "phases": phases(series, opts)}


def _draw(t: dict[str, pd.DataFrame], opts: Options) -> list:
    png = plot.lines(
        t[""],
        "t_s",
        "throughput_mbps",
        "series",
        opts.out / "pdn-fairness.png",
        title="Per-flow throughput on the rack-1 uplink: PDN and NewReno flows",
        xlabel="time (s)",
        ylabel="throughput (Mbit/s)",
        note=f"pdn-fairness · xco, {seeds_text(seeds_of(opts.seed, opts.seeds))}, profile {opts.profile};"
        f" a flow every {interval_s(opts):g} s, 1 Gbps uplink, 300 KB port",
        order=[flow_label(i) for i in range(FLOWS)],
        marker=None,
    )
    return plot.figure_files(png)


def _worst(ph: pd.DataFrame) -> pd.Series:
    shared = ph[ph["flows"] > 1]
    return shared.loc[shared["jain"].idxmin()]


def _verdict(jain_min: float) -> str:
    return "holds" if jain_min >= 0.9 else ("partly" if jain_min >= 0.75 else "does not hold")


def _summary(t: dict[str, pd.DataFrame], results: list[dict], opts: Options) -> str:
    """pdn-fairness's summary: the phases, the claim, and why (control runs) if it does not hold."""
    ph = t["phases"]
    worst = _worst(ph)
    five = ph[ph["flows"] == FLOWS].iloc[0]
    pdn_mean = sum(five[f"flow{i + 1}_mbps"] for i in range(PDN_FLOWS)) / PDN_FLOWS
    nr_mean = sum(five[f"flow{i + 1}_mbps"] for i in range(PDN_FLOWS, FLOWS)) / (FLOWS - PDN_FLOWS)
    verdict = _verdict(worst["jain"])
    lines = [
        *settings_text(opts)[2:],
        f"pdn-fairness: {FLOWS} bulk flows a0..a4 -> b0, one every {interval_s(opts):g} s, then removed"
        f" every {interval_s(opts):g} s; flows 1-{PDN_FLOWS} PDN, {PDN_FLOWS + 1}-{FLOWS} NewReno",
        "",
        f"{'phase':>5} {'flows':>5} {'Jain':>6}  " + " ".join(f"{'f' + str(i + 1):>7}" for i in range(FLOWS)),
        *(
            f"{int(r.phase):>5} {int(r.flows):>5} {r.jain:>6.3f}  "
            + " ".join(f"{getattr(r, f'flow{i + 1}_mbps'):>7.1f}" for i in range(FLOWS))
            for r in ph.itertuples()
        ),
        "(Mbit/s: each flow's mean over the second half of the phase)",
        "",
        "claim: PDN and NewReno flows share fairly. ours: Jain's index at least "
        f"{worst['jain']:.3f} in every phase with two or more flows (phase {int(worst['phase'])});"
        f" with five flows a PDN flow averages {pdn_mean:.1f} Mbit/s, a NewReno flow {nr_mean:.1f}"
        f" -> {verdict} (fair: Jain >= 0.9)",
    ]
    if verdict != "holds":
        lines += why_unfair(results[0]["raw"], ph, opts)
    return "\n".join(lines)


STUDY = Study(
    id="pdn-fairness",
    title="PDN and NewReno flows sharing an uplink, added and removed over time",
    runs=_runs,
    tables=_tables,
    draw=_draw,
    summarize=_summary,
    base=lambda opts: base_scenario(opts.profile),
    extra=lambda opts: {"profile": opts.profile, "interval_s": interval_s(opts)},
    headlines=lambda t, rs, opts: [
        Headline(
            "PDN and NewReno flows share fairly",
            "the lowest Jain index of a shared phase",
            float(_worst(t["phases"])["jain"]),
            _verdict,
            (0.75, 0.9),
        )
    ],
    keys=["t_s", "flow", "series"],
)
EXPERIMENTS[STUDY.id] = STUDY


register(
    Reproduction(
        id="pdn-fairness",
        title="PDN and NewReno flows sharing an uplink, added and removed over time (PDN paper)",
        source="pdn.md",
        run=STUDY.run,
        profiles=PROFILES,
    )
)
