"""``outcast-distinct``: the Outcast unfairness with distinct end points
(../shared/spec/outcast.md case IV; reproductions.md: "2-hop and 6-hop flows to
different receivers, bottleneck agg -> ToR").

Why this case cannot use the other runs' routing. With address-bit routing
every frame for one host descends one aggregation -> edge port and its
neighbour on the same edge switch is reached through the other aggregation
switch, so two distinct receivers never share an aggregation -> ToR port; and
a 2-hop flow (same ToR) never crosses one at all. So here:

- routing is ``ecmp-pair`` (ECMP hashed per host pair, as XCo routes): every
  flow between two hosts takes the one path the router gives that pair, and
  the run's ``flows.csv`` names it, so the hosts can be chosen from real paths;
- the bottleneck is one aggregation -> edge port ``A -> e0_0``, whose edge
  switch holds the two receivers ``R1`` and ``R2``;
- the "few" side is ONE 4-hop flow from the pod's other edge switch to ``R1``
  (the shortest flow that crosses an aggregation -> ToR port; it enters ``A``
  from an edge switch);
- the "many" side is 12 six-hop flows to ``R2`` from the other-pod hosts whose
  path enters ``A`` through ONE core switch, spread over those hosts.

So exactly two inputs feed the bottleneck, one flow on one, twelve on the
other, as in the paper's base case, but the flows end at different hosts. The
choice is made from a probe of every candidate pair's path (a 0.2 ms run), and
the measured run checks from its own outputs that the flows took the chosen
paths and that the bottleneck saw exactly those two inputs; if not, it stops
with an error instead of reporting an experiment it did not run. The other
settings are the Outcast runs' (``outcast.scenario``).
"""

from __future__ import annotations

import io
from typing import Any

from .. import plot
from .._lazy import pd
from ..sim import run_raw
from . import Options
from .experiment import Run
from .outcast import Setup, _note, _save, duration_ms, ratio_headline, scenario, study, verdict_of

RID = "outcast-distinct"
EDGE = "e0_0"  # the ToR of both receivers
RECEIVERS = ("h0", "h1")
FOUR_HOP = ("h2", "h3")  # under e0_1, the pod's other edge switch
SIX_HOP = tuple(f"h{i}" for i in range(4, 16))
MANY_FLOWS = 12


def _with_routing(sc: dict[str, Any]) -> dict[str, Any]:
    sc["topology"]["routing"] = "ecmp-pair"
    return sc


def pair_paths(opts: Options) -> dict[tuple[str, str], list[str]]:
    """The path (node names) of every candidate (sender, receiver) pair, from a probe run."""
    senders = [*FOUR_HOP, *SIX_HOP]
    sc = _with_routing(scenario(Setup(senders), opts))
    sc["apps"] = [{"kind": "bulk", "src": s, "dst": r} for r in RECEIVERS for s in senders]
    sc["run"]["duration_ms"] = 0.2
    f = pd.read_csv(io.StringIO(run_raw(sc, opts.seed)["flows"]))
    f = f[f["role"] == "bulk"]
    return {(r.src, r.dst): r.path.split(" ") for r in f.itertuples()}


def choose(paths: dict[tuple[str, str], list[str]]) -> dict[str, Any]:
    """The receivers, aggregation switch, core input and senders: among the
    combinations with a 4-hop sender through ``A`` to ``R1``, the one whose
    single core input into ``A`` carries the most other-pod hosts to ``R2``
    (ties: the first in name order)."""
    best = None
    for r1 in RECEIVERS:
        r2 = next(r for r in RECEIVERS if r != r1)
        for few in FOUR_HOP:
            agg = paths[(few, r1)][2]
            by_core: dict[str, list[str]] = {}
            for s in SIX_HOP:
                p = paths[(s, r2)]
                if p[4] == agg:
                    by_core.setdefault(p[3], []).append(s)
            for core, hosts in sorted(by_core.items()):
                if best is None or len(hosts) > len(best["many_hosts"]):
                    best = {"r1": r1, "r2": r2, "few": few, "agg": agg, "core": core, "many_hosts": hosts}
    if best is None:
        raise RuntimeError("outcast-distinct: no 6-hop host shares an aggregation switch with a 4-hop flow")
    return best


def distinct_scenario(c: dict[str, Any], opts: Options) -> dict[str, Any]:
    """The measured run: one 4-hop flow few -> R1, 12 six-hop flows spread over the chosen hosts -> R2."""
    sc = _with_routing(scenario(Setup([c["few"]]), opts))
    hosts = c["many_hosts"]
    sc["apps"] = [{"kind": "bulk", "src": c["few"], "dst": c["r1"], "start_ms": 0}] + [
        {"kind": "bulk", "src": hosts[i % len(hosts)], "dst": c["r2"], "start_ms": 0}
        for i in range(MANY_FLOWS)
    ]
    return sc


def check_paths(raw: dict[str, Any], c: dict[str, Any]) -> pd.DataFrame:
    """The data flows with their side; raises if a flow did not take the chosen
    path or the bottleneck saw other inputs than the two chosen ones."""
    f = pd.read_csv(io.StringIO(raw["flows"]))
    f = f[(f["role"] == "bulk") & (f["app_kind"] == "bulk")].copy()
    f["side"] = ["few (4-hop)" if d == c["r1"] else "many (6-hop)" for d in f["dst"]]
    f["input"] = [p.split(" ")[-4] for p in f["path"]]
    want = {"few (4-hop)": "e0_1", "many (6-hop)": c["core"]}
    for r in f.itertuples():
        nodes = r.path.split(" ")
        if nodes[-3:-1] != [c["agg"], EDGE] or r.input != want[r.side]:
            raise RuntimeError(f"outcast-distinct: flow {r.src}->{r.dst} took {r.path}, not the chosen path")
    ins = pd.read_csv(io.StringIO(raw["port_inputs"]))
    ins = ins[(ins["from"] == c["agg"]) & (ins["to"] == EDGE) & (ins["arrived_packets"] > 0)]
    if set(ins["input_from"]) != set(want.values()):
        raise RuntimeError(
            f"outcast-distinct: {c['agg']}->{EDGE} saw inputs {sorted(ins['input_from'])},"
            f" not {sorted(want.values())}"
        )
    return f


def _runs(opts: Options) -> list[Run]:
    """The measured run of this seed (its hosts chosen from a probe of the same seed)."""
    c = choose(pair_paths(opts))
    return [Run({"chosen": c}, distinct_scenario(c, opts))]


def _tables(results: list[dict], opts: Options) -> dict[str, pd.DataFrame]:
    f = check_paths(results[0]["raw"], results[0]["chosen"])
    f["flow"] = [
        f"{r.src}->{r.dst}" + ("" if r.side.startswith("few") else f" #{i}")
        for i, r in enumerate(f.itertuples())
    ]
    cols = ["flow", "src", "dst", "side", "input", "path", "goodput_mbps", "timeouts", "retransmits"]
    return {"": f[cols]}


def _draw(t: dict[str, pd.DataFrame], opts: Options) -> list:
    table = t[""]
    aggs = sorted({p.split(" ")[-3] for p in table["path"]})
    return _save(
        plot.bars,
        opts.out / f"{RID}.png",
        df=table.assign(series=table["side"].map(lambda s: f"{s} flow")),
        x="flow",
        y="goodput_mbps",
        series="series",
        title=f"Distinct receivers sharing {' / '.join(aggs)} -> {EDGE}: per-flow throughput",
        xlabel="flow (sender -> receiver)",
        ylabel="throughput (Mbit/s)",
        note=_note(opts, RID).replace("address-bit routing", "ecmp-pair routing"),
        values=True,
        one_bar_per_group=True,
    )


def _few_many(f: pd.DataFrame) -> tuple[float, float, float]:
    few = float(f[f["side"].str.startswith("few")]["goodput_mbps"].mean())
    many = float(f[f["side"].str.startswith("many")]["goodput_mbps"].mean())
    return few, many, (few / many if many > 0 else float("inf"))


def _summary(t: dict[str, pd.DataFrame], results: list[dict], opts: Options) -> str:
    """One 4-hop flow and 12 six-hop flows to two receivers under one ToR, meeting at agg -> ToR."""
    f, c, raw = t[""], results[0]["chosen"], results[0]["raw"]
    few, many, r = _few_many(f)
    runs = pd.read_csv(io.StringIO(raw["drop_runs"]))
    runs = runs[(runs["from"] == c["agg"]) & (runs["to"] == EDGE)]
    longest = {i: int(g["longest_run"].max()) for i, g in runs.groupby("input_from")}
    drops = {i: int(g["episodes"].mul(g["k"]).sum()) for i, g in runs.groupby("input_from")}
    v = verdict_of(r)
    lines = [
        f"{RID}: one 4-hop flow {c['few']} -> {c['r1']} and {MANY_FLOWS} six-hop flows from"
        f" {', '.join(c['many_hosts'])} -> {c['r2']}; both cross {c['agg']} -> {EDGE}"
        f" (inputs: e0_1 for the 4-hop flow, {c['core']} for the six-hop flows)",
        "  routing ecmp-pair (one path per host pair; address bits never put two receivers of one ToR"
        " behind one aggregation port, and a 2-hop flow never crosses one: the short flow is 4-hop)",
        "",
        f"{'side':<14} {'flows':>5} {'mean Mbit/s':>12} {'timeouts':>9} {'drops at the port':>18}"
        f" {'longest run':>12}",
        *(
            f"{side:<14} {len(g):>5} {g['goodput_mbps'].mean():>12.1f} {int(g['timeouts'].sum()):>9}"
            f" {drops.get(g['input'].iloc[0], 0):>18} {longest.get(g['input'].iloc[0], 0):>12}"
            for side, g in f.groupby("side")
        ),
        "",
        "claim: the unfairness persists with distinct end points (the few-flow side gets several times"
        " less than the mean flow of the many-flow side).",
        f"ours: 4-hop {few:.1f} Mbit/s, six-hop mean {many:.1f}; 4-hop / six-hop = {r:.2f} -> {v}"
        " (holds: ratio <= 0.5)",
    ]
    return "\n".join(lines)


study(
    RID,
    "distinct receivers under one ToR, bottleneck agg -> ToR: per-flow throughput",
    runs=_runs,
    tables=_tables,
    draw=_draw,
    summarize=_summary,
    extra=lambda opts: {"duration_ms": duration_ms(opts)},
    headlines=lambda t, rs, opts: [
        ratio_headline("the unfairness persists with distinct end points", _few_many(t[""])[2])
    ],
    keys=["flow", "src", "dst", "side", "input", "path"],
)
