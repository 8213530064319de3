"""Reproductions on real hosts: the namespace testbed, real kernel TCP,
iperf3, and the real XCo daemons (``xco-daemon``), at rates two cores carry.

- ``real-udp`` — the ``xco-udp-1g`` experiment scaled to 100 Mbit/s: 5
  senders into one receiver port, k of them UDP (64 KB datagrams, counted only
  when every fragment arrives), for ``none`` and ``timeslice``.
- ``real-vs-sim`` — the same runs beside the simulator's, same scaled rates,
  buffer and slice.
- ``real-overhead`` — the agent on one veth path: throughput, CPU, directive
  to first packet, report round trip.

Each is a :class:`~xco.reproduce.experiment.Study` with real points
(:mod:`xco.reproduce.real_frame`): ``--seeds N`` runs every real point N
times, the simulated half with seeds SEED..SEED+N-1.

Needs root (namespaces, iptables) and iperf3.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from .. import plot, scenario
from .._lazy import pd, plt
from ..testbed import daemons, iperf, netns, topo
from . import Options, Reproduction, claims_real, register
from .experiment import EXPERIMENTS, Run, Study, table
from .real_frame import Lab, lab, require_root, seeds_note
from .replicates import mean_table, seeds_of, seeds_text
from .xco_paper import pivot_text, scenario_text

RATE_MBPS = 100
BUFFER_BYTES = 32768
SLICE_MS = 10.0
UDP_LEN = 65507
SENDERS = 5
RECEIVER = "h6"
# the controller's address, and with it the management network (its /24) on a bridge in the root
# namespace: not the default 10.200.0.1, which the other real-host testbeds use -- two testbeds up
# at once with the same management network send each other's control traffic astray (the agents
# get no directive and fail open)
CONTROLLER = "10.200.21.1:7400"
COLUMNS = ("series", "udp_senders", "total_mbps", "tcp_per_flow_mbps")


def _ks(full: bool) -> list[int]:
    return [0, 1, 2, 3, 4] if full else [1, 2, 4]


def _seconds(full: bool) -> float:
    return 8.0 if full else 3.0


NO_RANDOM = "nothing of the real workload (iperf3 at fixed rates has no random part)"


def _topology(workdir: Path) -> topo.TestbedTopology:
    """The star of 5 senders and a receiver; its control settings serve the timeslice series."""
    path = workdir / "real-udp.toml"
    extra = "giveback_hysteresis_us = 500\nfail_open_ms = 500\nreport_interval_ms = 20"
    path.write_text(
        topo.star_toml(
            SENDERS + 1, rate_mbps=RATE_MBPS, buffer_bytes=BUFFER_BYTES, mode="timeslice", slice_ms=SLICE_MS,
            prefix="xcr", extra_control=extra, controller=CONTROLLER,
        )
    )  # fmt: skip
    return topo.load(path)


# The receiver's IP reassembly: a datagram that lost a fragment keeps its other fragments for
# ipfrag_time, and once they fill ipfrag_high_thresh (Linux: 30 s, 4 MB -- about 45 to 80 of these
# 64-KB datagrams) the kernel refuses every new fragment, so from then on no datagram arrives
# whole (measured: docs/real-udp.md). The simulator keeps no such memory and the paper's kernels
# evicted the oldest datagrams instead; 1 s and 64 MB (more than a second of the 100 Mbit/s port)
# keep the receiver from refusing any, so a datagram is lost only for a fragment lost on the way.
REASM_SYSCTLS = ("net.ipv4.ipfrag_high_thresh=67108864", "net.ipv4.ipfrag_time=1")


def _snmp(tb: netns.Testbed, host: str) -> dict[str, int]:
    """``/proc/net/snmp`` of ``host``'s namespace as ``{"Ip.ReasmFails": n, ...}``."""
    lines = netns.sh("cat", "/proc/net/snmp", ns=tb.ns(host)).stdout.splitlines()
    out = {}
    for names, values in zip(lines[::2], lines[1::2], strict=True):
        proto, *keys = names.split()
        out.update({f"{proto[:-1]}.{n}": int(v) for n, v in zip(keys, values.split()[1:], strict=True)})
    return out


def _counters(tb: netns.Testbed) -> dict[str, int]:
    """Where datagrams can be lost: the receiver's switch port, its reassembly, the senders' sockets."""
    rx = _snmp(tb, RECEIVER)
    senders = [_snmp(tb, f"h{i}") for i in range(1, SENDERS + 1)]
    return {
        "receiver_port_drops": netns.port_drops(tb, "s1", f"p-{RECEIVER}"),
        "receiver_reasm_oks": rx["Ip.ReasmOKs"],
        "receiver_reasm_fails": rx["Ip.ReasmFails"],
        "receiver_udp_rcvbuf_errors": rx["Udp.RcvbufErrors"],
        "sender_udp_sndbuf_errors": sum(x["Udp.SndbufErrors"] for x in senders),
        "sender_port_drops": sum(netns.port_drops(tb, f"h{i}", "eth0") for i in range(1, SENDERS + 1)),
    }


def _real_point(tb: netns.Testbed, series: str, k: int, seconds: float, run_dir: Path) -> dict:
    """One point on fresh hosts: throughput, and the loss counters of the run."""
    netns.sh("sysctl", "-qw", *REASM_SYSCTLS, ns=tb.ns(RECEIVER))
    before = _counters(tb)
    flows = []
    for i in range(1, SENDERS + 1):
        udp = RATE_MBPS if i <= k else None
        flows.append(iperf.Flow(src=f"h{i}", dst=RECEIVER, port=5200 + i, udp_mbps=udp, udp_len=UDP_LEN))
    if series == "none":
        rows = iperf.run_flows(tb, flows, seconds, run_dir)
    else:
        senders = [f"h{i}" for i in range(1, SENDERS + 1)]
        with daemons.Xco(tb, run_dir, agents=senders):
            rows = iperf.run_flows(tb, flows, seconds, run_dir)
    after = _counters(tb)
    total = sum(r["mbps"] for r in rows)
    tcp = [r["mbps"] for r in rows if r["proto"] == "tcp"]
    udp = [r for r in rows if r["proto"] == "udp"]
    return {
        "series": series,
        "udp_senders": k,
        "total_mbps": total,
        "tcp_per_flow_mbps": sum(tcp) / len(tcp) if tcp else float("nan"),
        "udp_mbps": sum(r["mbps"] for r in udp),
        "udp_datagrams_lost": sum(r["lost_packets"] for r in udp),
        **{name: after[name] - before[name] for name in after},
    }


def _udp_point(series: str, k: int, seconds: float):
    """The real point (series, k): on fresh hosts, as every simulator run starts fresh -- a
    datagram that lost a fragment holds its reassembly memory at the receiver for ipfrag_time
    (30 s), and 4 MB of them (about 80 of these datagrams, which the none series leaves) make the
    receiver refuse every later fragment."""

    def run(lb: Lab, seed: int) -> dict:
        tb = lb.fresh("real-udp", _topology)
        return {"row": _real_point(tb, series, k, seconds, lb.dir(f"{series}-k{k}", seed))}

    return run


def _udp_runs(full: bool, ks: list[int] | None = None, seconds: float | None = None, source: bool = False):
    """The real points of real-udp (``source``: labelled ``source = real``, for real-vs-sim)."""
    ks = ks if ks is not None else _ks(full)
    secs = seconds if seconds is not None else _seconds(full)
    out = []
    for series in ("none", "timeslice"):
        for k in ks:
            labels = {"source": "real"} if source else {}
            settings = {"seconds": secs, "udp_senders": k, "tcp_senders": SENDERS - k, "xco": series}
            out.append(
                Run({**labels, "series": series, "udp_senders": k}, None, real=_udp_point(series, k, secs),
                    settings=settings)
            )  # fmt: skip
    return out


def run_real_udp(opts: Options, ks: list[int] | None = None, seconds: float | None = None) -> pd.DataFrame:
    """The real runs alone (seed ``opts.seed``): a DataFrame with :data:`COLUMNS`, then UDP
    throughput and loss counters."""
    netns.require_root("a real-host experiment", "network namespaces, iptables")
    with lab("xco-real-") as lb:
        rows = [r.real(lb, opts.seed)["row"] for r in _udp_runs(opts.full, ks, seconds)]
    return pd.DataFrame(rows)


def sim_udp_scenario(series: str, k: int, seconds: float) -> dict:
    """The same point in the simulator, at the testbed's rates, buffer and slice."""
    base = scenario.parse(scenario_text("xco-udp-1g"))
    scn = scenario.with_changes(base)
    scn["run"]["duration_ms"] = int(seconds * 1000)
    scn["topology"]["host_rate"] = f"{RATE_MBPS}Mbps"
    scn["topology"]["switch_buffer"] = f"{BUFFER_BYTES}B"
    apps = []
    for i in range(SENDERS):
        if i < k:
            apps.append({"kind": "udp", "src": f"h{i}", "dst": "h5", "rate": "line"})
        else:
            apps.append({"kind": "bulk", "src": f"h{i}", "dst": "h5"})
    scn["apps"] = apps
    if series == "none":
        scn.pop("xco", None)
    else:
        scn["xco"]["mode"] = "timeslice"
        scn["xco"]["slice_ms"] = SLICE_MS
        scn["xco"]["giveback_hysteresis_us"] = 500
    return scn


def sim_udp_row(raw: dict, series: str, k: int, seconds: float) -> dict:
    """A simulator run of the point as a row: total and TCP-per-flow throughput (Mbit/s)."""
    flows = table(raw, "flows")
    udp = flows[flows["kind"] == "udp"]
    tcp = flows[flows["role"] == "bulk"]
    total = (udp["bytes_delivered"].sum() + tcp["bytes_delivered"].sum()) * 8 / seconds / 1e6
    per = (tcp["bytes_delivered"] * 8 / seconds / 1e6).mean() if len(tcp) else float("nan")
    return {"series": series, "udp_senders": k, "total_mbps": total, "tcp_per_flow_mbps": per}


def run_sim_udp(opts: Options, ks: list[int], seconds: float) -> pd.DataFrame:
    """The same experiment in the simulator, at the testbed's rates, buffer and slice."""
    from .. import sim

    rows = []
    for series in ("none", "timeslice"):
        for k in ks:
            raw = sim.run_raw(sim_udp_scenario(series, k, seconds), seed=opts.seed)
            rows.append(sim_udp_row(raw, series, k, seconds))
    return pd.DataFrame(rows)


def _draw(df: pd.DataFrame, path: Path, title: str, note: str) -> Path:
    return plot.lines(
        df, "udp_senders", "total_mbps", "series", path, title=title, xlabel="UDP senders k (the rest TCP)",
        ylabel="application throughput (Mbit/s)", note=note, hline=(RATE_MBPS, "link capacity"),
    )  # fmt: skip


# ---- real-udp ------------------------------------------------------------------------


def _udp_tables(results: list[dict], opts: Options) -> dict[str, Any]:
    full = pd.DataFrame([r["row"] for r in results])
    return {"": full[list(COLUMNS)], "losses": full}


def _udp_draw(t: dict, opts: Options) -> list[Path]:
    note = (
        f"real hosts (netns, kernel TCP, iperf3, xco-daemon); {RATE_MBPS} Mbit/s links, "
        f"{BUFFER_BYTES} B buffer"
    )
    if opts.seeds > 1:
        note += f"; {seeds_text(seeds_of(opts.seed, opts.seeds))}: every point run {opts.seeds} times"
    title = "real-udp: total throughput vs UDP senders (real hosts)"
    png = _draw(t[""], opts.out / "real-udp.png", title, note)
    return plot.figure_files(png)


def _udp_summary(t: dict, results: list[dict], opts: Options) -> str:
    df, full = t[""], t["losses"]
    return (
        "real-udp: xco-udp-1g on real hosts (namespaces, iperf3, XCo daemons)\n\n"
        + pivot_text(df, "udp_senders", "total_mbps")
        + "\n\n"
        + pivot_text(df, "udp_senders", "tcp_per_flow_mbps")
        + "\n\nwhere datagrams were lost (counts over each run):\n"
        + full.drop(columns=["total_mbps", "tcp_per_flow_mbps"]).to_string(index=False)
        + "\n\n"
        + claims_real.udp(df, full, RATE_MBPS, SENDERS)
    )


def _means_text(rid: str, df: pd.DataFrame, x: str, ys: list[str], opts: Options) -> str:
    """Means over the seeds of ``ys`` per series and ``x`` (intervals: ``<rid>-ci95.csv``), per
    ``source`` if ``df`` has one."""
    lines = [f"means over {seeds_text(seeds_of(opts.seed, opts.seeds))} (95 % intervals: {rid}-ci95.csv):"]
    for src, d in df.groupby("source", sort=False) if "source" in df.columns else [(None, df)]:
        lines += [(f"[{src}] " if src else "") + pivot_text(d, x, y) for y in ys]
    return "\n\n".join(lines)


REAL_UDP = Study(
    id="real-udp",
    title="xco-udp-1g on real hosts (namespaces, iperf3, XCo daemons)",
    runs=lambda opts: _udp_runs(opts.full),
    tables=_udp_tables,
    draw=_udp_draw,
    summarize=_udp_summary,
    check=require_root("real-udp"),
    lab=lambda opts: lab("xco-real-"),
    extra=lambda opts: {"rate_mbps": RATE_MBPS, "buffer_bytes": BUFFER_BYTES, "slice_ms": SLICE_MS,
                        "receiver_sysctls": list(REASM_SYSCTLS)},
    seeds_note=seeds_note(NO_RANDOM),
    summarize_seeds=lambda t, rs, opts: _means_text(
        "real-udp", t[""], "udp_senders", ["total_mbps", "tcp_per_flow_mbps"], opts
    ),
)  # fmt: skip


# ---- real-vs-sim ---------------------------------------------------------------------


def vs_runs(ks: list[int], secs: float) -> list[Run]:
    """The points of real-vs-sim: real-udp's real points, then the same in the simulator."""
    sims = [
        Run({"source": "sim", "series": s, "udp_senders": k}, sim_udp_scenario(s, k, secs))
        for s in ("none", "timeslice")
        for k in ks
    ]
    return [*_udp_runs(False, ks, secs, source=True), *sims]


def _vs_tables(results: list[dict], opts: Options) -> dict[str, Any]:
    rows = []
    for r in results:
        if r["source"] == "real":
            row = r["row"]
        else:
            secs = r["_scn"]["run"]["duration_ms"] / 1e3
            row = sim_udp_row(r["raw"], r["series"], r["udp_senders"], secs)
        rows.append({"source": r["source"], **{c: row[c] for c in COLUMNS}})
    return {"": pd.DataFrame(rows)[["source", *COLUMNS]]}


def _vs_draw(t: dict, opts: Options) -> list[Path]:
    df = t[""]
    fig, axes = plt.subplots(1, 2, figsize=(11, 4.2), dpi=120, sharey=True)
    for ax, metric, label in (
        (axes[0], "total_mbps", "total application throughput (Mbit/s)"),
        (axes[1], "tcp_per_flow_mbps", "TCP throughput per flow (Mbit/s)"),
    ):
        for (src, series), d in df.groupby(["source", "series"]):
            xs, ys, lo, hi = plot.replicate_mean(d.sort_values("udp_senders"), "udp_senders", metric)
            line = ax.plot(
                xs, ys, marker="o", linestyle="-" if src == "real" else "--", label=f"{series} ({src})",
            )  # fmt: skip
            if lo is not None:
                ax.fill_between(xs, lo, hi, alpha=0.2, color=line[0].get_color())
        ax.set_xlabel("UDP senders k (the rest TCP)")
        ax.set_ylabel(label)
        ax.grid(True, alpha=0.3)
        ax.legend(fontsize=8)
    fig.suptitle(
        f"real-vs-sim: xco-udp-1g at {RATE_MBPS} Mbit/s, {BUFFER_BYTES} B buffer, {SLICE_MS} ms slices"
    )
    seeds = seeds_text(seeds_of(opts.seed, opts.seeds))
    if opts.seeds > 1:
        seeds += f" ({plot.interval_words()}, shaded)"
    fig.text(0.01, 0.01, f"{seeds}; real: netns + iperf3 + xco-daemon; sim: xco-sim", fontsize=7)
    fig.tight_layout(rect=(0, 0.03, 1, 0.95))
    png = opts.out / "real-vs-sim.png"
    fig.savefig(png)
    plt.close(fig)
    return [png]


def _vs_summary(t: dict, results: list[dict], opts: Options) -> str:
    df = t[""]
    text = "real-vs-sim: the same experiment on real hosts and in the simulator\n\n"
    for src in ("real", "sim"):
        d = df[df["source"] == src]
        text += f"[{src}] " + pivot_text(d, "udp_senders", "total_mbps") + "\n"
        text += f"[{src}] " + pivot_text(d, "udp_senders", "tcp_per_flow_mbps") + "\n\n"
    return text + claims_real.vs_sim(df, RATE_MBPS)


REAL_VS_SIM = Study(
    id="real-vs-sim",
    title="the same experiment on real hosts and in the simulator",
    runs=lambda opts: vs_runs(_ks(opts.full), _seconds(opts.full)),
    tables=_vs_tables,
    draw=_vs_draw,
    summarize=_vs_summary,
    check=require_root("real-vs-sim"),
    lab=lambda opts: lab("xco-real-"),
    extra=lambda opts: {"rate_mbps": RATE_MBPS, "buffer_bytes": BUFFER_BYTES, "slice_ms": SLICE_MS},
    seeds_note=seeds_note(NO_RANDOM),
    summarize_seeds=lambda t, rs, opts: _means_text(
        "real-vs-sim", t[""], "udp_senders", ["total_mbps", "tcp_per_flow_mbps"], opts
    ),
)  # fmt: skip


# ---- real-overhead -------------------------------------------------------------------


def _cpu_s(pid: int) -> float:
    """User + system CPU seconds of a process so far."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _pair(rate: float, prefix: str):
    def build(work: Path) -> topo.TestbedTopology:
        path = work / f"pair-{rate}.toml"
        path.write_text(topo.star_toml(2, rate_mbps=rate, prefix=prefix, slice_ms=2.0))
        return topo.load(path)

    return build


def _overhead_point(rate: float, mode: str, seconds: float, prefix: str):
    """The real point (rate, mode) on the two-host pair of that rate (kept up while the next point
    runs at the same rate)."""

    def run(lb: Lab, seed: int) -> dict:
        tb = lb.testbed(("pair", rate, prefix), _pair(rate, prefix))
        d = lb.dir(f"{rate}-{mode}", seed)
        flow = [iperf.Flow("h1", "h2", 5201)]
        if mode == "none":
            r = iperf.run_flows(tb, flow, seconds, d)[0]
            return {"row": {"link_mbps": rate, "mode": mode, "throughput_mbps": r["mbps"],
                            "agent_cpu_pct": 0.0, "retransmits": r["retransmits"]}}  # fmt: skip
        with daemons.Xco(tb, d, agents=["h1"]) as x:
            pid = x.agents["h1"].pid
            c0 = _cpu_s(pid)
            r = iperf.run_flows(tb, flow, seconds, d)[0]
            cpu = (_cpu_s(pid) - c0) / seconds * 100
        st = daemons.log_fields(d / "agent-h1.log", "stop")
        return {
            "row": {
                "link_mbps": rate, "mode": mode, "throughput_mbps": r["mbps"],
                "agent_cpu_pct": cpu,
                "retransmits": r["retransmits"],
                "directive_to_first_packet_p50_us": float(st.get("first_release_p50_us", "nan")),
                "directive_to_first_packet_p99_us": float(st.get("first_release_p99_us", "nan")),
                "report_rtt_p50_us": float(st.get("report_rtt_p50_us", "nan")),
                "report_rtt_p99_us": float(st.get("report_rtt_p99_us", "nan")),
                "packets_held": int(st.get("held", 0)),
            }
        }  # fmt: skip

    return run


OVERHEAD_RATES_MBPS = (100, 10000)


def overhead_seconds(full: bool) -> float:
    """Length of one real-overhead run: 3 s quick, 8 s full."""
    return 8.0 if full else 3.0


def overhead_runs(rates_mbps: tuple[float, ...], seconds: float, prefix: str = "xco") -> list[Run]:
    """The points of real-overhead: per link rate, TCP alone and TCP under the agent."""
    return [
        Run({"link_mbps": rate, "mode": mode}, None, real=_overhead_point(rate, mode, seconds, prefix),
            settings={"link_mbps": rate, "seconds": seconds, "xco": mode, "slice_ms": 2.0})
        for rate in rates_mbps
        for mode in ("none", "agent")
    ]  # fmt: skip


def run_overhead(
    opts: Options, rates_mbps: tuple[float, ...] = OVERHEAD_RATES_MBPS, seconds: float = 3.0
) -> pd.DataFrame:
    """TCP throughput and CPU on one veth path with and without the agent gating it (seed
    ``opts.seed``, one run per point)."""
    netns.require_root("a real-host experiment", "network namespaces, iptables")
    with lab("xco-ovh-") as lb:
        rows = [r.real(lb, opts.seed)["row"] for r in overhead_runs(rates_mbps, seconds)]
    return pd.DataFrame(rows)


def _overhead_draw(t: dict, opts: Options) -> list[Path]:
    df = t[""]
    png = plot.bars(
        df.assign(link=df["link_mbps"].map(lambda r: f"{r:g} Mbit/s")), "link", "throughput_mbps", "mode",
        opts.out / "real-overhead.png", title="real-overhead: TCP throughput with and without the XCo agent",
        xlabel="link rate", ylabel="TCP throughput (Mbit/s)", note="one veth path, iperf3, 2-ms slices",
    )  # fmt: skip
    return plot.figure_files(png)


def _overhead_means(t: dict, rs: list[dict], opts: Options) -> str:
    means = mean_table(t[""], ["link_mbps", "mode"])
    seeds = seeds_text(seeds_of(opts.seed, opts.seeds))
    return f"means over {seeds} (95 % intervals: real-overhead-ci95.csv):\n" + means.to_string(index=False)


REAL_OVERHEAD = Study(
    id="real-overhead",
    title="the agent on one veth path (iperf3 TCP)",
    runs=lambda opts: overhead_runs(OVERHEAD_RATES_MBPS, overhead_seconds(opts.full)),
    tables=lambda results, opts: {"": pd.DataFrame([r["row"] for r in results])},
    draw=_overhead_draw,
    summarize=lambda t, rs, opts: (
        "real-overhead: the agent on one veth path (iperf3 TCP)\n\n"
        + t[""].to_string(index=False)
        + "\n\n"
        + claims_real.overhead(t[""])
    ),
    check=require_root("real-overhead"),
    lab=lambda opts: lab("xco-ovh-"),
    extra=lambda opts: {"slice_ms": 2.0},
    keys=["link_mbps", "mode"],
    seeds_note=seeds_note(NO_RANDOM),
    summarize_seeds=_overhead_means,
)

for _s in (REAL_OVERHEAD, REAL_UDP, REAL_VS_SIM):
    EXPERIMENTS[_s.id] = _s

register(
    Reproduction(
        id="real-overhead",
        title="agent overhead on real hosts: throughput, CPU, directive-to-packet and report round trip",
        source="xco (measurement of the real daemons)",
        run=REAL_OVERHEAD.run,
    )
)
register(
    Reproduction(
        id="real-udp",
        title="UDP vs TCP into one port on real hosts (netns, iperf3, XCo daemons), none vs timeslice",
        source="XCo paper, Fig. 'UDP 1G' (reproduced on real Linux hosts at 100 Mbit/s)",
        run=REAL_UDP.run,
    )
)
register(
    Reproduction(
        id="real-vs-sim",
        title="real-udp beside the simulator at the same scaled rates",
        source="xco (validation of the simulator against real kernel TCP)",
        run=REAL_VS_SIM.run,
    )
)
