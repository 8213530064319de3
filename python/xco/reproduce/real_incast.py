"""``real-incast``: TCP incast on real hosts (network namespaces, real kernel
TCP) beside the same scenario in the simulator.

N servers and one client on one Linux bridge; every link 100 Mbit/s (tbf), the
switch port toward the client a 32 KB (32,000 B: the spec's 32 KB in the
project's units, KB = 1000 B) drop-tail buffer; persistent
connections; each round the client asks every server for a 16,000-byte
response and waits for all of them (barrier) before the next; 30 rounds. The
fan-in client and servers are :mod:`xco.testbed.fanin`. Per N the real run
records goodput, round times (rounds that took at least the kernel's 200 ms
minimum RTO are counted), the servers' TCP counters (RTOs, tail-loss probes,
retransmitted segments) and the bottleneck port's drops.

The simulator runs the same star (the same rates, buffer, response size,
rounds; 25 us per link, about the namespaces' measured ping RTT of ~0.1 ms)
with the TCP profile :data:`SIM_TCP_PROFILE` (a parameter of
:func:`run_sim`: the simulator's ``linux`` TCP profile — CUBIC, SACK,
tail-loss probes, quick ACKs, docs/tcp-profiles.md; ``newreno`` gives the
1999 TCP).

The kernel's side varies from run to run (the collapse point moved between
N = 3 and 4 in two runs of the same code): ``--seeds N`` (the experiment
frame's replicates, :mod:`xco.reproduce.real_frame`) runs every real point N
times on the one testbed and the simulator with seeds SEED..SEED+N-1, and the
check compares the median per N of the kernel's CUBIC runs with the median of
the simulator's; the table gives the median and the range (``--seeds 3``: the
median of three sweeps). BBR is shown as the kernel's other behaviour only
(the simulator has no BBR).

The ``timeslice`` series (real hosts only) runs the largest quick N (32) again
with the real XCo daemons: an agent on every server, the controller on the
management bridge, 2-ms slices (:data:`XCO_SLICE_MS`): how much of the link
coordination keeps where uncoordinated incast has collapsed.

Needs root (namespaces).
"""

from __future__ import annotations

import json
import statistics
import subprocess
import sys
from pathlib import Path
from typing import Any

from .. import scenario
from .._lazy import pd, plt
from ..sim import app_metrics
from ..testbed import daemons, fanin, netns, topo
from . import Options, Reproduction, register
from .claims import HOLDS, Check, all_any
from .experiment import EXPERIMENTS, Run, Study
from .real_frame import Lab, lab, require_root, seeds_note
from .replicates import seeds_of, seeds_text

RATE_MBPS = 100
BUFFER_BYTES = 32_000  # reproductions.md: "32 KB drop-tail port"; KB = 1000 B everywhere in xco
RESPONSE_BYTES = 16000
ROUNDS = 30
RTO_MIN_S = 0.200  # Linux's TCP_RTO_MIN: a round this long waited for a retransmission timeout
QUICK_N = [2, 3, 4, 8, 16, 32]
FULL_N = list(range(2, 33))
PORT = 5500
LINK_DELAY_US = 25.0
SIM_TCP_PROFILE = "linux"
CLIENT = "h1"
XCO_SLICE_MS = 2.0  # the timeslice series' slices
XCO_N = 32  # ... run at this N
FANIN = Path(fanin.__file__)

# the simulator's [tcp] per profile name; a name not listed is passed as `tcp.profile`
SIM_TCP = {
    "newreno": {
        "cc": "newreno", "initial_cwnd_segments": 10, "rto_min_ms": 200, "rto_initial_ms": 1000,
        "delayed_ack": True, "delayed_ack_timeout_ms": 40, "handshake": True, "timestamps": True,
        "restart_after_idle": True,
    },
}  # fmt: skip


def _topology(
    workdir: Path, n_max: int, prefix: str, slice_ms: float = XCO_SLICE_MS, extra_control: str = ""
) -> topo.TestbedTopology:
    """The star: the client h1 and servers h2..h(n_max+1) on one bridge ([control]: the timeslice
    series, ``extra_control`` more lines of it)."""
    path = workdir / "real-incast.toml"
    path.write_text(
        topo.star_toml(n_max + 1, rate_mbps=RATE_MBPS, buffer_bytes=BUFFER_BYTES, prefix=prefix,
                       mode="timeslice", slice_ms=slice_ms, extra_control=extra_control)
    )  # fmt: skip
    return topo.load(path)


def _real_point(
    tb: netns.Testbed, n: int, rounds: int, response_bytes: int, work: Path, cc: str | None = None
) -> dict[str, Any]:
    t = tb.topo
    cc_args = ["--cc", cc] if cc else []
    servers = [t.hosts[i] for i in range(1, n + 1)]
    client = t.host(CLIENT)
    port = f"p-{CLIENT}"
    drops0 = netns.port_drops(tb, client.switch, port)
    procs = [
        tb.spawn(s.name, [sys.executable, str(FANIN), "server", str(PORT), *cc_args],
                 work / f"n{n}-{s.name}.json", split_stderr=True)
        for s in servers
    ]  # fmt: skip
    try:
        addrs = ",".join(f"{s.addr}:{PORT}" for s in servers)
        args = [sys.executable, str(FANIN), "client", "--servers", addrs,
                "--response-bytes", str(response_bytes), "--rounds", str(rounds)]  # fmt: skip
        r = subprocess.run(["ip", "netns", "exec", tb.ns(CLIENT), *args], capture_output=True, text=True,
                           timeout=rounds * 60 + 30)  # fmt: skip
        if r.returncode != 0:
            raise netns.TestbedError(f"real-incast N={n}: the fan-in client failed: {r.stderr.strip()}")
        res = json.loads(r.stdout)
        counters: dict[str, int] = {}
        for p in procs:
            p.wait(timeout=30)
            for k, v in json.loads(Path(p.log_path).read_text())["counters"].items():
                counters[k] = counters.get(k, 0) + v
    finally:
        for p in procs:
            tb.stop(p)
        tb.procs.clear()
    rs = res["round_s"]
    return {
        "n": n,
        "goodput_mbps": res["goodput_mbps"],
        "rounds": len(rs),
        "round_ms_median": statistics.median(rs) * 1e3,
        "round_ms_max": max(rs) * 1e3,
        "rounds_over_rto_min": sum(1 for x in rs if x >= RTO_MIN_S),
        "rto_timeouts": counters.get("TCPTimeouts", 0),
        "tail_loss_probes": counters.get("TCPLossProbes", 0),
        "fast_retransmits": counters.get("TCPFastRetrans", 0),
        "retrans_segs": counters.get("RetransSegs", 0),
        "port_drops": netns.port_drops(tb, client.switch, port) - drops0,
    }


def _point(n: int, rounds: int, response_bytes: int, series: str, cc: str | None, n_max: int,
           prefix: str = "xri", slice_ms: float = XCO_SLICE_MS, extra_control: str = ""):  # fmt: skip
    """The real point N = ``n`` of ``series`` with congestion control ``cc``, on the testbed built
    for ``n_max`` servers (one for every point of the run: the lab keeps it up)."""

    def run(lb: Lab, seed: int) -> dict:
        tb = lb.testbed(("incast", n_max, prefix, slice_ms, extra_control),
                        lambda work: _topology(work, n_max, prefix, slice_ms, extra_control))  # fmt: skip
        work = lb.dir(f"{series}-{cc or 'default'}-n{n}", seed)
        work.mkdir(parents=True, exist_ok=True)
        if series == "none":
            row = _real_point(tb, n, rounds, response_bytes, work, cc)
        else:
            servers = [h.name for h in tb.topo.hosts[1 : n + 1]]
            with daemons.Xco(tb, work / "xco", agents=servers):
                row = _real_point(tb, n, rounds, response_bytes, work, cc)
        return {"row": {**row, "series": series, "cc": cc or "default"}}

    return run


def run_real(
    ns: list[int],
    rounds: int = ROUNDS,
    response_bytes: int = RESPONSE_BYTES,
    prefix: str = "xri",
    series: str = "none",
    cc: str | None = None,
    slice_ms: float = XCO_SLICE_MS,
    extra_control: str = "",
) -> pd.DataFrame:
    """The real sweep over ``ns`` alone (one run per N) on one testbed built for the largest N (and
    removed after); ``series`` ``timeslice`` runs each point under the XCo daemons (an agent on
    every server); ``cc`` the servers' congestion control (default: the kernel's
    ``net.ipv4.tcp_congestion_control``, which is ``bbr`` on this project's machines, not Linux's
    usual ``cubic``); ``slice_ms`` and ``extra_control`` (lines of the topology file's
    ``[control]``) set the timeslice series' XCo."""
    netns.require_root("real-incast")
    if series not in ("none", "timeslice"):
        raise ValueError(f"series: {series!r} is not none or timeslice")
    with lab("xco-incast-") as lb:
        points = [_point(n, rounds, response_bytes, series, cc, max(ns), prefix, slice_ms, extra_control)
                  for n in ns]  # fmt: skip
        rows = [p(lb, 1)["row"] for p in points]
    return pd.DataFrame(rows)


def sim_scenario(n: int, rounds: int, response_bytes: int, tcp_profile: str, seed: int) -> dict[str, Any]:
    """The real star as a scenario: client h0, servers h1..hN."""
    tcp = dict(SIM_TCP.get(tcp_profile, {"profile": tcp_profile}))
    return {
        "name": "real-incast",
        "run": {"seed": seed, "mtu_bytes": 1500},
        "topology": {
            "kind": "star", "hosts": n + 1, "host_rate": f"{RATE_MBPS}Mbps", "link_delay_us": LINK_DELAY_US,
            "switch_buffer": f"{BUFFER_BYTES}B", "host_buffer": "262144B",
        },
        "tcp": tcp,
        "apps": [{
            "kind": "incast", "client": "h0", "servers": [f"h{i}" for i in range(1, n + 1)],
            "sru": f"{response_bytes}B", "request": "8B", "rounds": rounds, "reuse_connections": True,
        }],
        "output": {"timeseries_bin_us": 0},
    }  # fmt: skip


def run_sim(
    ns: list[int], rounds: int = ROUNDS, response_bytes: int = RESPONSE_BYTES,
    tcp_profile: str = SIM_TCP_PROFILE, seed: int = 1,
) -> pd.DataFrame:  # fmt: skip
    """The same sweep in the simulator with TCP profile ``tcp_profile``."""
    from .. import sim

    rows = []
    for n in ns:
        raw = sim.run_raw(scenario.with_changes(sim_scenario(n, rounds, response_bytes, tcp_profile, seed)),
                          seed=seed)  # fmt: skip
        rows.append(sim_row(raw, n))
    return pd.DataFrame(rows)


def sim_row(raw: dict, n: int) -> dict[str, Any]:
    """A simulator run at N = ``n`` as a row: goodput, RTOs, mean round time."""
    m = app_metrics(raw)
    return {"n": n, "goodput_mbps": m["goodput_mbps"], "rto_timeouts": int(m["timeouts"]),
            "round_ms_mean": m["completion_ms_mean"]}  # fmt: skip


def median_per_n(d: pd.DataFrame) -> pd.DataFrame:
    """One row per N: the median of the runs' numeric columns over the seeds of a ``--seeds`` run
    (a single run is itself)."""
    if d.empty or not d["n"].duplicated().any():
        return d
    return d.groupby("n", as_index=False).median(numeric_only=True).drop(columns=["seed"], errors="ignore")


def _runs_of(d: pd.DataFrame) -> int:
    """How many runs per N ``d`` holds (the seeds of a ``--seeds`` run)."""
    return int(d["seed"].nunique()) if "seed" in d.columns and len(d) else (1 if len(d) else 0)


def collapse_n(d: pd.DataFrame) -> int | None:
    """The first N whose goodput is below half of the best goodput at a smaller or equal N."""
    d = d.sort_values("n")
    best = 0.0
    for n, g in zip(d["n"], d["goodput_mbps"], strict=True):
        best = max(best, g)
        if g < 0.5 * best:
            return int(n)
    return None


def _draw(df: pd.DataFrame, path: Path, profile: str, note: str) -> Path:
    """Goodput against N, real hosts and simulator side by side; with several seeds each line is
    the median per N and the band the range of the seeds' runs."""
    fig, axes = plt.subplots(1, 2, figsize=(11, 4.2), dpi=120, sharey=True)
    for ax, src, label in (
        (axes[0], "real", "real hosts (kernel TCP)"),
        (axes[1], "sim", f"simulator ({profile})"),
    ):
        runs = df[df["source"] == src].sort_values("n")
        d = median_per_n(runs).sort_values("n")
        many = _runs_of(runs) > 1
        name = "CUBIC" if src == "real" else f"TCP profile {profile}"
        line = ax.plot(d["n"], d["goodput_mbps"], marker="o", markersize=3,
                       label=f"{name} (median)" if src == "real" or many else name)  # fmt: skip
        if many:
            lo = runs.groupby("n")["goodput_mbps"].min()
            hi = runs.groupby("n")["goodput_mbps"].max()
            ax.fill_between(lo.index, lo.values, hi.values, alpha=0.2, color=line[0].get_color(),
                            label=f"{name}, range of {_runs_of(runs)} runs")  # fmt: skip
        if src == "real":
            b = median_per_n(df[df["source"] == "real-bbr"]).sort_values("n")
            if len(b):
                ax.plot(b["n"], b["goodput_mbps"], marker="s", markersize=3, linestyle="--",
                        label="BBR (median)" if many else "BBR")  # fmt: skip
        ax.axhline(RATE_MBPS, color="grey", linestyle="--", linewidth=1, label="link capacity")
        c = collapse_n(d)
        if c is not None:
            ax.axvline(c, color="red", linestyle=":", linewidth=1, label=f"collapse at N={c}")
        ax.set_title(label)
        ax.set_xlabel("servers N")
        ax.set_ylabel("goodput at the client (Mbit/s)")
        ax.grid(True, alpha=0.3)
        ax.legend(fontsize=8)
    fig.suptitle(
        f"real-incast: {RESPONSE_BYTES} B responses, {BUFFER_BYTES} B drop-tail port, {RATE_MBPS} Mbit/s"
    )
    fig.text(0.01, 0.01, note, fontsize=7)
    fig.tight_layout(rect=(0, 0.03, 1, 0.95))
    fig.savefig(path)
    plt.close(fig)
    return path


def summary(df: pd.DataFrame, profile: str, rounds: int) -> str:
    """The summary of the runs in ``df`` (with a ``seed`` column: every seed's, each source taken
    as its median per N)."""
    xco = median_per_n(df[df["source"] == "real-timeslice"])
    runs, simd = df[df["source"] == "real"], median_per_n(df[df["source"] == "sim"])
    reps = _runs_of(runs)
    real = median_per_n(runs)
    lines = [
        f"real-incast: N servers -> 1 client on one bridge, {RATE_MBPS} Mbit/s links,",
        f"  a {BUFFER_BYTES} B drop-tail port toward the client, {RESPONSE_BYTES} B responses,",
        f"  {rounds} barrier rounds, persistent connections",
        f"  real: network namespaces, kernel TCP (CUBIC, and BBR as 'bbr'); sim: TCP profile {profile!r}",
        (
            f"  'real' is the median of {reps} kernel CUBIC sweeps per N (range in the table); bbr, XCo and"
            " sim: their medians"
            if reps > 1
            else "  'real' is one kernel CUBIC sweep (the kernel varies from run to run: --seeds 3 gives the"
            " median of three)"
        ),
        "",
    ]
    bbr = median_per_n(df[df["source"] == "real-bbr"])
    for name, d in (("real", real), ("bbr", bbr), ("sim", simd)):
        if not len(d):
            continue
        d = d.sort_values("n")
        c = collapse_n(d)
        after = d[d["n"] >= c]["goodput_mbps"].mean() if c is not None else float("nan")
        lines.append(
            f"{name:<5} N={int(d['n'].iloc[0])}: {d['goodput_mbps'].iloc[0]:6.1f} Mbit/s; collapse at "
            + (f"N={c}; mean goodput from there {after:.1f} Mbit/s" if c is not None else "no N swept")
        )
    for _, x in xco.iterrows():
        n = int(x["n"])
        none = real[real["n"] == n]["goodput_mbps"]
        lines.append(
            f"XCo timeslice ({XCO_SLICE_MS:g}-ms slices, real daemons) at N={n}: "
            f"{x['goodput_mbps']:.1f} Mbit/s, {x['goodput_mbps'] / RATE_MBPS:.0%} of the link"
            + (f" (none: {none.iloc[0]:.1f} Mbit/s)" if len(none) else "")
            + f"; {x['rounds_over_rto_min']:g} rounds >= 200 ms, {x['port_drops']:g} port drops"
        )
    case = f"median of {reps} runs per N" if reps > 1 else ""
    lines += _with_case(verdict_lines(real, simd), case)
    lines += _with_case(xco_lines(real, xco), case)
    lines += [
        "",
        "per N: goodput (Mbit/s); real: median of the CUBIC sweeps and their range, the servers' kernels'",
        "RTOs, fast retransmits and tail-loss probes, rounds that took >= 200 ms, drops at the client's",
        "port (medians); sim: RTOs",
    ]
    lines.append(
        f"{'N':>4} {'real':>8} {'real range':>13} {'bbr':>8} {'sim':>8} {'RTOs':>6} {'fast rtx':>9} "
        f"{'TLPs':>6} {'rounds>=200ms':>14} {'drops':>7} {'sim RTOs':>9}"
    )
    for n in sorted(set(df["n"])):
        r = real[real["n"] == n]
        s = simd[simd["n"] == n]
        b = bbr[bbr["n"] == n]
        bg = b["goodput_mbps"].iloc[0] if len(b) else float("nan")
        rv = lambda col, d=r: d[col].iloc[0] if len(d) else float("nan")  # noqa: E731
        sv = lambda col, d=s: d[col].iloc[0] if len(d) else float("nan")  # noqa: E731
        g = runs[runs["n"] == n]["goodput_mbps"]
        span = f"{g.min():.1f}-{g.max():.1f}" if len(g) else "-"
        lines.append(
            f"{n:>4} {rv('goodput_mbps'):>8.1f} {span:>13} {bg:>8.1f} {sv('goodput_mbps'):>8.1f} "
            f"{rv('rto_timeouts'):>6.0f} "
            f"{rv('fast_retransmits'):>9.0f} {rv('tail_loss_probes'):>6.0f} "
            f"{rv('rounds_over_rto_min'):>14.0f} "
            f"{rv('port_drops'):>7.0f} {sv('rto_timeouts'):>9.0f}"
        )
    return "\n".join(lines)


def verdict_lines(real: pd.DataFrame, simd: pd.DataFrame) -> list[str]:
    """The check the simulator answers for, as a claim of the summary: the same collapse N as the
    kernel's CUBIC, and within 2x of it at every N from the collapse on (``real``: one row per N,
    the median of the seeds' runs). The why names the timeouts of both at the N outside 2x."""
    cr, cs = collapse_n(real), collapse_n(simd)
    m = real.merge(simd, on="n", suffixes=("_real", "_sim"))
    if cr is not None:
        m = m[m["n"] >= cr]
    ratio = m["goodput_mbps_sim"] / m["goodput_mbps_real"].where(m["goodput_mbps_real"] > 0)
    outside = [(int(n), r) for n, r in zip(m["n"], ratio, strict=True) if not 0.5 <= r <= 2.0]
    off = [f"N={n} ({r:.1f}x)" for n, r in outside]
    same = cr == cs
    v = all_any([same, not off])
    if not off:
        why = "the simulator's timeouts and drops follow the kernel's closely enough at every N"
    elif "rto_timeouts_real" in m.columns and "rto_timeouts_sim" in m.columns:
        rtos = m.set_index("n")
        why = (
            "at "
            + ", ".join(
                f"N={n} the simulator's servers timed out {rtos.loc[n, 'rto_timeouts_sim']:.0f} times, the"
                f" kernel's {rtos.loc[n, 'rto_timeouts_real']:.0f}"
                for n, _ in outside
            )
            + " (30 rounds): a lone retransmission dropped at the still-full port with nothing sent after it,"
            " which neither RACK nor a probe can find (docs/testbed-routed.md)"
        )
    else:
        why = "the goodput differs by more than 2x at those N (timeouts not recorded in this table)"
    if not same:
        why = f"the simulator collapses at N={cs}, the kernel at N={cr}; " + why
    check = Check(
        "the simulator (TCP profile linux) collapses at the kernel's N (CUBIC, median per N) and stays"
        " within 2x of it from there (issue 25, item 6)",
        f"collapse real N={cr}, sim N={cs}; sim/real outside 0.5..2: " + (", ".join(off) if off else "none"),
        v,
        "the same collapse N and sim / real goodput within 0.5..2 at every N from it; partly: one of the two",
        why,
    )
    return ["", *check.lines()]


def _with_case(lines: list[str], case: str) -> list[str]:
    """``lines`` with the claim's case named (``claim (case): ...``), so that a summary over several
    seeds' medians and the seeds' own claims are told apart in the report."""
    return [
        f"claim ({case}):" + ln[len("claim:") :] if case and ln.startswith("claim:") else ln for ln in lines
    ]


def xco_lines(real: pd.DataFrame, xco: pd.DataFrame) -> list[str]:
    """The XCo paper's incast claim on the real daemons: timeslices keep goodput above no
    coordination at every N the XCo series ran (``real``, ``xco``: medians per N)."""
    m = xco.merge(real, on="n", suffixes=("_xco", "_none"))
    if not len(m):
        return []
    above = [bool(a > b) for a, b in zip(m["goodput_mbps_xco"], m["goodput_mbps_none"], strict=True)]
    v = all_any(above)
    drops = float(m["port_drops_xco"].max()) if "port_drops_xco" in m.columns else float("nan")
    check = Check(
        "with XCo timeslice scheduling incast throughput stays highest as N grows (XCo paper)",
        "; ".join(
            f"N={int(n)}: XCo {a:.1f} vs none {b:.1f} Mbit/s ({a / RATE_MBPS:.0%} of the link)"
            for n, a, b in zip(m["n"], m["goodput_mbps_xco"], m["goodput_mbps_none"], strict=True)
        ),
        v,
        "XCo's goodput above no coordination's at every N it ran; partly: at some",
        f"a slice admits one server at a time, so the client's port drops at most {drops:.0f} packets where"
        f" no coordination times out; the rest is lost because a {RESPONSE_BYTES:,} B response (at least"
        f" {RESPONSE_BYTES * 8 / RATE_MBPS / 1000:.2f} ms at {RATE_MBPS} Mbit/s) holds a whole"
        f" {XCO_SLICE_MS:g}-ms slice, the give-back too slow to return its"
        " end (docs/testbed-routed.md)"
        if v == HOLDS
        else "XCo falls below no coordination at some N",
    )
    return ["", *check.lines()]


def _ns(full: bool) -> list[int]:
    return FULL_N if full else QUICK_N


def _xco_n(full: bool) -> int:
    ns = _ns(full)
    return XCO_N if XCO_N in ns else max(ns)


def runs_of(seed: int, ns: list[int], xco_n: int, rounds: int = ROUNDS, prefix: str = "xri") -> list[Run]:
    """One seed's points: the kernel's CUBIC and BBR sweeps over ``ns`` and the XCo point at
    ``xco_n`` (real, in that order, on one testbed), then the simulator's sweep."""
    n_max = max([*ns, xco_n])
    out = []
    sweeps = [("real", "none", "cubic", ns), ("real-bbr", "none", "bbr", ns),
              ("real-timeslice", "timeslice", None, [xco_n])]  # fmt: skip
    for source, series, cc, sweep in sweeps:
        for n in sweep:
            settings = {"n": n, "rounds": rounds, "response_bytes": RESPONSE_BYTES, "cc": cc or "default",
                        "xco": series}  # fmt: skip
            if series == "timeslice":
                settings["slice_ms"] = XCO_SLICE_MS
            point = _point(n, rounds, RESPONSE_BYTES, series, cc, n_max, prefix)
            out.append(Run({"source": source, "n": n}, None, real=point, settings=settings))
    for n in ns:
        scn = scenario.with_changes(sim_scenario(n, rounds, RESPONSE_BYTES, SIM_TCP_PROFILE, seed))
        out.append(Run({"source": "sim", "n": n}, scn))
    return out


COUNTS = ["rounds", "rounds_over_rto_min", "rto_timeouts", "tail_loss_probes", "fast_retransmits",
          "retrans_segs", "port_drops"]  # fmt: skip


def _tables(results: list[dict], opts: Options) -> dict[str, pd.DataFrame]:
    rows = []
    for r in results:
        row = r["row"] if "_real" in r else sim_row(r["raw"], r["n"])
        rows.append({"source": r["source"], **row})
    df = pd.DataFrame(rows)
    cols = ["source", "n"] + [c for c in df.columns if c not in ("source", "n")]
    # counts stay integers beside the simulator's empty cells
    return {"": df[cols].astype({c: "Int64" for c in COUNTS if c in df.columns})}


def _note(opts: Options) -> str:
    seeds = seeds_text(seeds_of(opts.seed, opts.seeds))
    return f"{seeds}; real: netns, kernel TCP, xco fan-in; sim: xco-sim, {LINK_DELAY_US:g} us/link"


def _wall(results: list[dict]) -> str:
    return f"real sweep wall time: {sum(r.get('_wall_s', 0.0) for r in results):.0f} s"


STUDY = Study(
    id="real-incast",
    title="TCP incast on real hosts beside the simulator",
    runs=lambda opts: runs_of(opts.seed, _ns(opts.full), _xco_n(opts.full)),
    tables=_tables,
    draw=lambda t, opts: [_draw(t[""], opts.out / "real-incast.png", SIM_TCP_PROFILE, _note(opts))],
    summarize=lambda t, rs, opts: summary(t[""], SIM_TCP_PROFILE, ROUNDS) + f"\n\n{_wall(rs)}",
    check=require_root("real-incast"),
    lab=lambda opts: lab("xco-incast-"),
    base=lambda opts: sim_scenario(_ns(opts.full)[0], ROUNDS, RESPONSE_BYTES, SIM_TCP_PROFILE, opts.seed),
    extra=lambda opts: {
        "rate_mbps": RATE_MBPS, "buffer_bytes": BUFFER_BYTES, "response_bytes": RESPONSE_BYTES,
        "rounds": ROUNDS, "ns": _ns(opts.full), "sim_tcp_profile": SIM_TCP_PROFILE,
        "link_delay_us": LINK_DELAY_US, "timeslice_n": [_xco_n(opts.full)],
        "timeslice_slice_ms": XCO_SLICE_MS, "real_runs_per_point": opts.seeds,
    },
    keys=["source", "n"],
    seeds_note=seeds_note("nothing of the real workload (the fan-in's requests and sizes are fixed)"),
    summarize_seeds=lambda t, rs, opts: (
        "over every seed (each source's median per N; the check on the medians):\n"
        + summary(t[""], SIM_TCP_PROFILE, ROUNDS) + f"\n\n{_wall(rs)}"
    ),
)  # fmt: skip
EXPERIMENTS[STUDY.id] = STUDY

register(
    Reproduction(
        id="real-incast",
        title="TCP incast on real hosts (netns, kernel TCP, N = 2..32) beside the simulator",
        source="xco issue 17 (real kernel vs simulator); incast as in the PDN/Vasudevan setups at 100 Mbit/s",
        run=STUDY.run,
    )
)
