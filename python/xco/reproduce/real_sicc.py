"""``real-sicc``: SICC's web fan-in as real processes with kernel TCP on the
routed k = 4 fat-tree testbed, One-all and SICC, beside the simulator on the
same topology (spec sicc.md; docs/sicc.md, "real-sicc").

The testbed is ``xco.testbed.topo.fattree_toml(4)`` (docs/testbed-routed.md):
16 host and 20 router namespaces, every link 100 Mbit/s (tbf), a 16,384-B
drop-tail buffer on every switch egress port (real-outcast's): eq 1 then
gives M = 16,384 / 1,500 = 10 hubs at once, more than the 8 racks, so SICC
runs one level (every hub streams to the front-end, as in the simulator),
while One-all's fan-in of up to 15 servers answering at once (Q = 1,000
objects are ~520 KB) overflows the front-end's port. ``h1`` is the
front-end, ``h2``..``h16`` the 15 data servers; a rack is an edge switch.
Every host's route carries ``rto_min 10ms`` (the paper's RTO; the kernel's
default is 200 ms). The processes are :mod:`xco.testbed.webfanin` (one
server per data server, possibly a hub; the front-end), a new set per
(method, Q) point; persistent connections, opened before the requests.

Per point the real run measures each request's latency (first query sent to
last object in), every query's latency, the packets the edge switches sent
or dropped on their uplink ports while the requests ran (tbf statistics,
``tc -s -j qdisc``, read before and after: the inter-rack packets, ACKs and
retransmissions included) and the hosts' kernel TCP counters over the same
window (RTO timeouts, retransmitted segments).

The simulator runs the same case: ``kind = "fat_tree"``, k = 4, 100 Mbit/s,
16,384-B ports, 25 us per link (the namespaces' ping RTT is about 0.1 ms over
two links), the ``linux`` TCP profile with RTO_min and the first RTO 10 ms,
``[[apps]] kind = "web_fanin"`` with the same catalogue parameters, Q and
requests, the front-end ``h0`` (the testbed's ``h1``). Its catalogue is its
own draw (the same distribution, not the same objects), over all 16 hosts
with the front-end never asked. Its ``sicc`` has speed control and query
redirection; the real one has neither (not built for real), and the
simulator's ``redirected`` column says how many queries it moved.

On the experiment frame (:mod:`xco.reproduce.real_frame`): the testbed is
built once; ``--seeds N`` runs every (method, Q) point N times on it, each
with its seed's catalogue and requests, and the simulator with seeds
SEED..SEED+N-1.

Needs root (namespaces).
"""

from __future__ import annotations

import json
import selectors
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from .. import plot
from .._lazy import np, pd, plt
from ..sim import run_raw
from ..testbed import netns, topo, webfanin
from . import Options, Reproduction, register
from .claims import FAILS, HOLDS, PARTLY
from .experiment import EXPERIMENTS, Run, Study
from .real_frame import Lab, lab, require_root, seeds_note
from .replicates import seeds_of, seeds_text

RATE_MBPS = 100
BUFFER_BYTES = 16384
LINK_DELAY_US = 25.0
RTO_MIN_MS = 10
FRONT_END = "h1"
PREFIX = "xrs"  # the testbed's namespaces: xrs-h1, xrs-e00, ...
PORT = 5700
OBJECTS = 100_000
REPLICAS = 3
MIN_BYTES, MAX_BYTES = 20, 1000
METHODS = ("one_all", "sicc")
NAMES = {"one_all": "One-all", "sicc": "SICC"}
QUICK_Q, QUICK_REQUESTS = [100, 500, 1000], 20
FULL_Q, FULL_REQUESTS = [100, 250, 500, 750, 1000], 100
STEP = 0.05  # SICC "below" One-all: by more than 5 % (sicc-latency's step)
WEBFANIN = Path(webfanin.__file__)
COUNTERS = {"TcpExt": ("TCPTimeouts", "TCPLossProbes", "TCPFastRetrans"), "Tcp": ("RetransSegs",)}


def _topology(workdir: Path, prefix: str) -> topo.TestbedTopology:
    path = workdir / "real-sicc.toml"
    path.write_text(topo.fattree_toml(4, rate_mbps=RATE_MBPS, buffer_bytes=BUFFER_BYTES, prefix=prefix))
    return topo.load(path)


def tcp_counters(tb: netns.Testbed, host: str) -> dict[str, int]:
    """``host``'s namespace's kernel TCP counters named in :data:`COUNTERS`."""
    out: dict[str, int] = {}
    for f in ("/proc/net/netstat", "/proc/net/snmp"):
        lines = netns.sh("cat", f, ns=tb.ns(host)).stdout.splitlines()
        for head, vals in zip(lines[::2], lines[1::2], strict=True):
            group, names = head.split(":", 1)
            for name, v in zip(names.split(), vals.split(":", 1)[1].split(), strict=True):
                if name in COUNTERS.get(group, ()):
                    out[name] = int(v)
    return out


def uplink_packets(tb: netns.Testbed) -> int:
    """Packets every edge switch sent or dropped on its uplink ports so far (tbf statistics)."""
    total = 0
    for sw in tb.topo.switches:
        if not sw.startswith("e"):
            continue
        out = netns.sh("tc", "-s", "-j", "qdisc", "show", ns=tb.ns(sw)).stdout
        for q in json.loads(out or "[]"):
            if q.get("kind") == "tbf" and str(q.get("dev", "")).startswith("t-"):
                total += int(q.get("packets", 0)) + int(q.get("drops", 0))
    return total


def _snapshot(tb: netns.Testbed) -> dict[str, int]:
    snap = {"inter_rack_packets": uplink_packets(tb)}
    for h in tb.topo.hosts:
        for k, v in tcp_counters(tb, h.name).items():
            snap[k] = snap.get(k, 0) + v
    return snap


def _wait_line(p: subprocess.Popen, word: str, timeout_s: float) -> None:
    """Wait for the line ``word`` on ``p``'s standard error."""
    sel = selectors.DefaultSelector()
    sel.register(p.stderr, selectors.EVENT_READ)
    deadline = time.monotonic() + timeout_s
    seen = []
    while True:
        left = deadline - time.monotonic()
        if left <= 0 or not sel.select(timeout=left):
            raise netns.TestbedError(
                f"real-sicc: the front-end did not say {word!r} in {timeout_s:g} s: {seen}"
            )
        line = p.stderr.readline()
        if not line:
            raise netns.TestbedError(f"real-sicc: the front-end ended before {word!r}: {''.join(seen)}")
        if line.strip() == word:
            return
        seen.append(line)


def common_args(t: topo.TestbedTopology, seed: int) -> list[str]:
    """The arguments every process of the run shares: servers, racks, catalogue, seed."""
    servers = [h for h in t.hosts if h.name != FRONT_END]
    return ["--servers", ",".join(h.addr for h in servers), "--racks", ",".join(h.switch for h in servers),
            "--seed", str(seed), "--port", str(PORT), "--objects", str(OBJECTS), "--replicas", str(REPLICAS),
            "--min-bytes", str(MIN_BYTES), "--max-bytes", str(MAX_BYTES)]  # fmt: skip


def run_point(
    tb: netns.Testbed, method: str, queries: int, requests: int, seed: int, work: Path
) -> tuple[dict[str, Any], dict[str, int]]:
    """One (method, Q) point on a built testbed: the front-end's JSON and the counters' changes.
    Every process it starts is ended by its id before it returns, also on failure."""
    t = tb.topo
    servers = [h for h in t.hosts if h.name != FRONT_END]
    common = common_args(t, seed)
    tag = f"{method}-q{queries}"
    procs = [
        tb.spawn(h.name, [sys.executable, str(WEBFANIN), "server", "--index", str(i), *common],
                 work / f"{tag}-{h.name}.log", split_stderr=True)
        for i, h in enumerate(servers)
    ]  # fmt: skip
    fe_args = [sys.executable, str(WEBFANIN), "frontend", *common, "--method", method,
               "--queries", str(queries), "--requests", str(requests), "--sync"]  # fmt: skip
    fe = subprocess.Popen(["ip", "netns", "exec", tb.ns(FRONT_END), *fe_args], stdin=subprocess.PIPE,
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                          start_new_session=True)  # fmt: skip
    try:
        _wait_line(fe, "connected", 60)
        before = _snapshot(tb)
        fe.stdin.write("go\n")
        fe.stdin.flush()
        _wait_line(fe, "done", 60 * requests + 30)
        after = _snapshot(tb)
        fe.stdin.write("go\n")
        fe.stdin.flush()
        out, err = fe.communicate(timeout=30)
        if fe.returncode != 0:
            raise netns.TestbedError(f"real-sicc {tag}: the front-end failed: {err.strip()}")
        res = json.loads(out)
        for p in procs:
            p.wait(timeout=30)
            if p.returncode != 0:
                msg = Path(f"{p.log_path}.err").read_text().strip()
                raise netns.TestbedError(f"real-sicc {tag}: a server failed: {msg}")
    finally:
        tb.stop(fe)
        for p in procs:
            tb.stop(p)
        tb.procs.clear()
    return res, {k: after[k] - before.get(k, 0) for k in after}


def request_rows(res: dict[str, Any], servers: list[str], racks: list[str]) -> list[dict[str, Any]]:
    """One row per request of a front-end's JSON (latency, targets, hubs, how objects came)."""
    rows = []
    for q in res["requests"]:
        objs = q["objects"]
        hubs = set(q["hubs"])
        via_hub = sum(1 for o in objs if o["via"] != o["asked"] and o["via"] in hubs)
        lat = sorted(o["ms"] for o in objs)
        rows.append(
            {"method": res["method"], "queries": res["queries"], "request": q["request"],
             "latency_ms": q["latency_ms"], "query_ms": lat,
             "targets": q["targets"], "hubs": len(hubs) if hubs else None,
             "objects_forwarded_by_hubs": via_hub, "objects": len(objs),
             "racks_asked": len({racks[o["asked"]] for o in objs})}
        )  # fmt: skip
    return rows


def _point(method: str, queries: int, requests: int, prefix: str = PREFIX):
    """The real point (method, Q) on the fat-tree (built once, every host's route with RTO_min):
    its request rows and the counters' changes."""

    def setup(tb: netns.Testbed) -> None:
        for h in tb.topo.hosts:
            netns.set_rto_min(tb, h.name, RTO_MIN_MS)

    def run(lb: Lab, seed: int) -> dict:
        tb = lb.testbed(("sicc", prefix), lambda work: _topology(work, prefix), setup)
        t = tb.topo
        servers = [h.name for h in t.hosts if h.name != FRONT_END]
        racks = [h.switch for h in t.hosts if h.name != FRONT_END]
        work = lb.dir(f"{method}-q{queries}", seed)
        work.mkdir(parents=True, exist_ok=True)
        res, delta = run_point(tb, method, queries, requests, seed, work)
        return {"req": request_rows(res, servers, racks), "counters": {"method": method, "queries": queries,
                                                                      **delta}}  # fmt: skip

    return run


def run_real(
    qs: list[int], requests: int, seed: int, prefix: str = PREFIX, work: Path | None = None
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Both methods at every Q alone (one run each) on one testbed (removed after): per-request rows
    and per-point counters (inter-rack packets, TCP timeouts, retransmitted segments)."""
    netns.require_root("real-sicc")
    rows, points = [], []
    with lab("xco-sicc-", work) as lb:
        for q in qs:
            for m in METHODS:
                r = _point(m, q, requests, prefix)(lb, seed)
                rows += r["req"]
                points.append(r["counters"])
    return pd.DataFrame(rows), pd.DataFrame(points)


def sim_scenario(method: str, queries: int, requests: int, seed: int) -> dict[str, Any]:
    """The same case as a simulator scenario (hosts from 0: the front-end ``h0``)."""
    return {
        "name": "real-sicc",
        "run": {"seed": seed},
        "topology": {"kind": "fat_tree", "k": 4, "host_rate": f"{RATE_MBPS}Mbps",
                     "link_delay_us": LINK_DELAY_US, "switch_buffer": f"{BUFFER_BYTES}B",
                     "routing": "address-bits"},
        "tcp": {"profile": "linux", "rto_min_ms": RTO_MIN_MS, "rto_initial_ms": RTO_MIN_MS},
        "host": {"txqueuelen": 1000},
        "apps": [{"kind": "web_fanin", "method": method, "front_ends": ["h0"], "objects": OBJECTS,
                  "replicas": REPLICAS, "object_min_bytes": MIN_BYTES, "object_max_bytes": MAX_BYTES,
                  "queries": queries, "requests": requests, "max_query_rows": queries * requests}],
        "output": {"timeseries_bin_us": 0},
    }  # fmt: skip


def run_sim(qs: list[int], requests: int, seed: int) -> tuple[pd.DataFrame, list[dict[str, Any]]]:
    """Both methods at every Q in the simulator: its requests.csv rows and the scenarios run."""
    frames, points = [], []
    for q in qs:
        for m in METHODS:
            sc = sim_scenario(m, q, requests, seed)
            raw = run_raw(sc, seed)
            points.append(
                {"labels": {"source": "sim", "method": m, "queries": q}, "seed": seed, "scenario": sc}
            )
            frames.append(sim_requests(raw, m, q))
    return pd.concat(frames, ignore_index=True), points


def sim_requests(raw: dict, method: str, queries: int) -> pd.DataFrame:
    """A simulator run's requests.csv rows with the method, Q, latency (ms) and every query's (ms)."""
    from .sicc import app_table

    r = app_table(raw, "requests.csv")
    qms = app_table(raw, "queries.csv").groupby("request")["latency_us"].apply(lambda v: list(v / 1e3))
    return r.assign(method=method, queries=queries, latency_ms=r["latency_us"] / 1e3,
                    query_ms=r["request"].map(qms))  # fmt: skip


def _query_quantiles(g: pd.DataFrame) -> dict[str, float]:
    """Median and 99th percentile of every query's latency (ms) of a point's requests."""
    v = np.concatenate([np.asarray(x, dtype=float) for x in g["query_ms"]])
    return {"query_ms_median": float(np.median(v)), "query_ms_p99": float(np.quantile(v, 0.99))}


def points_table(real_req: pd.DataFrame, real_pts: pd.DataFrame, sim_req: pd.DataFrame) -> pd.DataFrame:
    """One row per (source, method, Q): mean latency, inter-rack packets, timeouts, retransmissions."""
    out = []
    for (m, q), g in real_req.groupby(["method", "queries"], sort=False):
        p = real_pts[(real_pts["method"] == m) & (real_pts["queries"] == q)].iloc[0]
        n = len(g)
        out.append(
            {"source": "real", "method": m, "queries": q, "requests": n, "latency_ms": g["latency_ms"].mean(),
             "latency_ms_max": g["latency_ms"].max(), **_query_quantiles(g),
             "inter_rack_packets": p["inter_rack_packets"] / n,
             "timeouts": p.get("TCPTimeouts", 0) / n, "retrans_segs": p.get("RetransSegs", 0) / n,
             "hubs": g["hubs"].mean() if g["hubs"].notna().any() else None,
             "forwarded_by_hubs": g["objects_forwarded_by_hubs"].mean(), "redirected": None}
        )  # fmt: skip
    for (m, q), g in sim_req.groupby(["method", "queries"], sort=False):
        out.append(
            {"source": "sim", "method": m, "queries": q, "requests": len(g),
             "latency_ms": g["latency_ms"].mean(),
             "latency_ms_max": g["latency_ms"].max(), **_query_quantiles(g),
             "inter_rack_packets": g["inter_rack_packets"].mean(),
             "timeouts": g["timeouts"].mean(), "retrans_segs": None,
             "hubs": g["hubs"].mean() if g["hubs"].notna().any() else None, "forwarded_by_hubs": None,
             "redirected": g["redirected"].mean()}
        )  # fmt: skip
    return pd.DataFrame(out).sort_values(["source", "method", "queries"], ignore_index=True)


def order_verdict(pts: pd.DataFrame, source: str = "real") -> tuple[str, list[str]]:
    """SICC's claim against One-all on ``source``'s points: holds if SICC's mean latency is more than
    5 % below One-all's at every Q, partly if at some, does not hold if at none."""
    d = pts[pts["source"] == source].pivot(index="queries", columns="method", values="latency_ms")
    below = [bool(r["sicc"] < (1 - STEP) * r["one_all"]) for _, r in d.iterrows()]
    notes = [f"Q={q}: SICC {r['sicc']:.2f} vs One-all {r['one_all']:.2f} ms" for q, r in d.iterrows()]
    return (HOLDS if all(below) else PARTLY if any(below) else FAILS), notes


def interrack_verdict(pts: pd.DataFrame, source: str = "real") -> tuple[str, list[str]]:
    """Inter-rack packets One-all > SICC: SICC's per-request count more than 5 % below One-all's at
    every Q: holds; at some: partly; at none: does not hold."""
    d = pts[pts["source"] == source].pivot(index="queries", columns="method", values="inter_rack_packets")
    fewer = [bool(r["sicc"] < (1 - STEP) * r["one_all"]) for _, r in d.iterrows()]
    notes = [f"Q={q}: {r['sicc']:.0f} vs {r['one_all']:.0f}" for q, r in d.iterrows()]
    return (HOLDS if all(fewer) else PARTLY if any(fewer) else FAILS), notes


def agreement_verdict(pts: pd.DataFrame) -> tuple[str, list[str]]:
    """The simulator against the real hosts: sim / real mean latency within 0.5..2 at every (method,
    Q): holds; at some: partly; at none: does not hold."""
    r = pts[pts["source"] == "real"].set_index(["method", "queries"])["latency_ms"]
    s = pts[pts["source"] == "sim"].set_index(["method", "queries"])["latency_ms"]
    ratio = (s / r).dropna()
    ok = [0.5 <= x <= 2.0 for x in ratio]
    off = [f"{NAMES[m]} Q={q} ({x:.2f}x)" for (m, q), x in ratio.items() if not 0.5 <= x <= 2.0]
    return (HOLDS if all(ok) and ok else PARTLY if any(ok) else FAILS), off


def summary(pts: pd.DataFrame, requests: int, seed: int) -> str:
    lines = [
        "real-sicc: web fan-in on the routed k = 4 fat-tree, front-end h1, data servers h2..h16 (8 racks),",
        f"  {RATE_MBPS} Mbit/s links, {BUFFER_BYTES} B drop-tail ports, RTO_min {RTO_MIN_MS} ms; catalogue"
        f" {OBJECTS} objects of U[{MIN_BYTES}, {MAX_BYTES}] B,",
        f"  {REPLICAS} replicas, seed {seed}; {requests} requests per point, back to back.",
        "  real: namespaces, kernel TCP, xco.testbed.webfanin (One-all; SICC with swarms per rack, hub =",
        "  most objects, continuous forwarding, queued objects written in one send); no speed control and",
        "  no query redirection on the real hosts. sim: xco-sim web_fanin (its sicc with speed control",
        "  and query redirection).",
        "",
        f"{'source':<6} {'method':<8} {'Q':>5} {'latency ms':>11} {'max ms':>8} {'query p50':>10} {'p99':>7} "
        f"{'inter-rack pkts':>16} "
        f"{'RTOs':>7} {'retx segs':>10} {'hubs':>5} {'fwd by hubs':>12} {'redirected':>11}",
    ]

    def f(v, fmt):
        return "-" if v is None or pd.isna(v) else format(v, fmt)

    for r in pts.itertuples():
        lines.append(
            f"{r.source:<6} {NAMES[r.method]:<8} {r.queries:>5} {r.latency_ms:>11.2f} "
            f"{r.latency_ms_max:>8.2f} "
            f"{r.query_ms_median:>10.2f} {r.query_ms_p99:>7.2f} "
            f"{f(r.inter_rack_packets, '.0f'):>16} {f(r.timeouts, '.1f'):>7} {f(r.retrans_segs, '.1f'):>10} "
            f"{f(r.hubs, '.1f'):>5} {f(r.forwarded_by_hubs, '.0f'):>12} {f(r.redirected, '.1f'):>11}"
        )
    lines.append(
        "  (latency, inter-rack packets, RTOs, retx segs, hubs, forwarded, redirected: per request, the mean"
    )
    lines.append(
        "  over the point's requests; query p50/p99: every object's arrival after its request began, pooled;"
    )
    lines.append(
        "  RTOs and retx segs: the hosts' kernel counters; fwd by hubs: members' objects a hub forwarded)"
    )
    where = {"real": "real hosts", "sim": "simulator"}
    step = f"more than {STEP:.0%} below One-all's"
    lines.append("")
    for src in ("real", "sim"):
        v, notes = order_verdict(pts, src)
        lines += [
            f"claim ({where[src]}): request latency SICC < One-all (the paper: SICC < ICTCP < SW < One-all;"
            " SW and ICTCP are not built here)",
            f"  ours: {'; '.join(notes)}",
            f"  -> {v} (rule: SICC's mean request latency {step} at every Q; partly: at some)",
        ]
    for src in ("real", "sim"):
        v, notes = interrack_verdict(pts, src)
        lines += [
            f"claim ({where[src]}): inter-rack packets One-all > SICC",
            f"  ours: SICC vs One-all per request, {'; '.join(notes)}",
            f"  -> {v} (rule: SICC's inter-rack packets per request {step} at every Q; partly: at some)",
        ]
    v, off = agreement_verdict(pts)
    lines += [
        "claim (real vs simulator): the simulator's mean request latency within 2x of the real hosts'",
        f"  ours: sim / real outside 0.5..2 at: {', '.join(off) if off else 'no (method, Q)'}",
        f"  -> {v} (rule: sim / real within 0.5..2 at every method and Q; partly: at some)",
    ]
    return "\n".join(lines)


def draw(pts: pd.DataFrame, path: Path, note: str) -> Path:
    """Mean request latency and inter-rack packets against Q per source and method (several seeds:
    the mean over them with its 95 % interval shaded)."""

    fig, axes = plt.subplots(1, 2, figsize=(12, 4.5), dpi=120)
    colors = {"one_all": "tab:red", "sicc": "tab:blue"}
    style = {"real": ("-", "o"), "sim": ("--", "s")}
    for ax, col, ylabel in ((axes[0], "latency_ms", "mean request latency (ms)"),
                            (axes[1], "inter_rack_packets", "inter-rack packets per request")):  # fmt: skip
        for (source, m), d in pts.groupby(["source", "method"], sort=True):
            xs, ys, lo, hi = plot.replicate_mean(d.sort_values("queries"), "queries", col)
            ls, mk = style[source]
            ax.plot(xs, ys, linestyle=ls, marker=mk, color=colors[m], markersize=5,
                    label=f"{NAMES[m]}, {'real hosts' if source == 'real' else 'simulator'}")  # fmt: skip
            if lo is not None:
                ax.fill_between(xs, lo, hi, color=colors[m], alpha=0.15)
        ax.set_xlabel("objects per request Q")
        ax.set_ylabel(ylabel)
        ax.set_xticks(sorted(set(pts["queries"])))
        ax.set_ylim(bottom=0)
        ax.grid(True, alpha=0.3)
    handles, labels = axes[0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="center left", bbox_to_anchor=(0.83, 0.5), fontsize=8)
    fig.suptitle("real-sicc: One-all vs SICC on the k = 4 fat-tree, real kernel TCP and the simulator")
    fig.text(0.01, 0.01, note, fontsize=7, color="dimgrey")
    fig.tight_layout(rect=(0, 0.03, 0.82, 0.95))
    return plot.save(fig, path)


def _qs(full: bool) -> tuple[list[int], int]:
    return (FULL_Q, FULL_REQUESTS) if full else (QUICK_Q, QUICK_REQUESTS)


def runs_of(seed: int, qs: list[int], requests: int, prefix: str = PREFIX) -> list[Run]:
    """One seed's points: every (Q, method) on the real fat-tree (one testbed), then the same in
    the simulator."""
    real = [
        Run({"source": "real", "method": m, "queries": q}, None, real=_point(m, q, requests, prefix),
            settings={"method": m, "queries": q, "requests": requests, "catalogue_seed": seed})
        for q in qs
        for m in METHODS
    ]  # fmt: skip
    sims = [
        Run({"source": "sim", "method": m, "queries": q}, sim_scenario(m, q, requests, seed))
        for q in qs
        for m in METHODS
    ]
    return [*real, *sims]


def _tables(results: list[dict], opts: Options) -> dict[str, pd.DataFrame]:
    real_req = pd.DataFrame([row for r in results if "_real" in r for row in r["req"]])
    real_pts = pd.DataFrame([r["counters"] for r in results if "_real" in r])
    sims = [sim_requests(r["raw"], r["method"], r["queries"]) for r in results if "_real" not in r]
    sim_req = pd.concat(sims, ignore_index=True)
    cols = ["method", "queries", "request", "latency_ms", "targets", "hubs"]
    req = pd.concat([real_req[cols].assign(source="real"), sim_req[cols].assign(source="sim")],
                    ignore_index=True)[["source", *cols]]  # fmt: skip
    return {"": points_table(real_req, real_pts, sim_req), "requests": req}


def _draw(t: dict[str, pd.DataFrame], opts: Options) -> list[Path]:
    seeds = seeds_text(seeds_of(opts.seed, opts.seeds))
    if opts.seeds > 1:
        seeds += f" ({plot.interval_words()}, shaded)"
    note = f"{seeds}, {'full' if opts.full else 'quick'}; real: netns fat-tree, kernel TCP; sim: xco-sim"
    return plot.figure_files(draw(t[""], opts.out / "real-sicc.png", note))


def _summary(t: dict[str, pd.DataFrame], results: list[dict], opts: Options) -> str:
    wall = sum(r.get("_wall_s", 0.0) for r in results)
    return (
        summary(t[""], int(t[""]["requests"].iloc[0]), opts.seed) + f"\n\nreal runs' wall time: {wall:.0f} s"
    )


STUDY = Study(
    id="real-sicc",
    title="SICC and One-all as real processes on the routed k=4 fat-tree, beside the simulator",
    runs=lambda opts: runs_of(opts.seed, *_qs(opts.full)),
    tables=_tables,
    draw=_draw,
    summarize=_summary,
    check=require_root("real-sicc"),
    lab=lambda opts: lab("xco-sicc-"),
    extra=lambda opts: {
        "rate_mbps": RATE_MBPS, "buffer_bytes": BUFFER_BYTES, "rto_min_ms": RTO_MIN_MS, "objects": OBJECTS,
        "replicas": REPLICAS, "object_bytes": [MIN_BYTES, MAX_BYTES], "queries": _qs(opts.full)[0],
        "requests": _qs(opts.full)[1], "front_end": FRONT_END, "methods": list(METHODS),
        "real_not_built": ["speed control", "query redirection"],
    },
    keys=["source", "method", "queries"],
    seeds_note=seeds_note("the web fan-in's catalogue and requests (each seed its own draw, on the real"
                          " hosts and in the simulator)"),
)  # fmt: skip
EXPERIMENTS[STUDY.id] = STUDY


register(
    Reproduction(
        id="real-sicc",
        title="SICC and One-all as real processes (kernel TCP) on the routed k=4 fat-tree,"
        " beside the simulator",
        source="sicc.md §Design 1, 5 and §Evaluation (request latency, inter-rack packets);"
        " xco issue 27 item 6",
        run=STUDY.run,
    )
)
