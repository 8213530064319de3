"""Reproductions on real hosts: the namespace testbed, real kernel TCP,
iperf3, and the real XCo daemons (``xco-daemon``), at rates two cores carry.

- ``real-udp`` — the ``xco-udp-1g`` experiment scaled to 100 Mbit/s: 5
  senders into one receiver port, k of them UDP (64 KB datagrams, counted only
  when every fragment arrives), for ``none`` and ``timeslice``.
- ``real-vs-sim`` — the same runs beside the simulator's, same scaled rates,
  buffer and slice.

Needs root (namespaces, iptables) and iperf3.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

from .. import plot, scenario
from .._lazy import pd, plt
from ..testbed import daemons, iperf, netns, topo
from . import Options, Outcome, Reproduction, register, write_meta
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


def _real_point(tb: netns.Testbed, series: str, k: int, seconds: float, workdir: Path) -> dict:
    """One point on fresh hosts: throughput, and the loss counters of the run."""
    netns.sh("sysctl", "-qw", *REASM_SYSCTLS, ns=tb.ns(RECEIVER))
    before = _counters(tb)
    flows = []
    for i in range(1, SENDERS + 1):
        udp = RATE_MBPS if i <= k else None
        flows.append(iperf.Flow(src=f"h{i}", dst=RECEIVER, port=5200 + i, udp_mbps=udp, udp_len=UDP_LEN))
    run_dir = workdir / f"{series}-k{k}"
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


def run_real_udp(opts: Options, ks: list[int] | None = None, seconds: float | None = None) -> pd.DataFrame:
    """The real runs: a DataFrame with :data:`COLUMNS`, then UDP throughput and loss counters."""
    netns.require_root("a real-host experiment", "network namespaces, iptables")
    ks = ks if ks is not None else _ks(opts.full)
    seconds = seconds if seconds is not None else _seconds(opts.full)
    rows = []
    with tempfile.TemporaryDirectory(prefix="xco-real-") as tmp:
        work = Path(tmp)
        t = _topology(work)
        for series in ("none", "timeslice"):
            for k in ks:
                print(f"  real-udp: {series}, k={k} ({seconds:.0f} s)", flush=True)
                # fresh hosts for every point, as every simulator run starts fresh: a datagram
                # that lost a fragment holds its reassembly memory at the receiver for
                # ipfrag_time (30 s), and 4 MB of them (about 80 of these datagrams, which the
                # none series leaves) make the receiver refuse every later fragment
                tb = netns.up(t)
                try:
                    rows.append(_real_point(tb, series, k, seconds, work))
                finally:
                    tb.stop_all()
                    netns.down(t)
    return pd.DataFrame(rows)


def run_sim_udp(opts: Options, ks: list[int], seconds: float) -> pd.DataFrame:
    """The same experiment in the simulator, at the testbed's rates, buffer and slice."""
    from .. import sim

    base = scenario.parse(scenario_text("xco-udp-1g"))
    rows = []
    for series in ("none", "timeslice"):
        for k in ks:
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
            res = sim.run(scn, seed=opts.seed)
            flows = res.flows
            udp = flows[flows["kind"] == "udp"]
            tcp = flows[flows["role"] == "bulk"]
            total = (udp["bytes_delivered"].sum() + tcp["bytes_delivered"].sum()) * 8 / seconds / 1e6
            per = (tcp["bytes_delivered"] * 8 / seconds / 1e6).mean() if len(tcp) else float("nan")
            rows.append({"series": series, "udp_senders": k, "total_mbps": total, "tcp_per_flow_mbps": per})
    return pd.DataFrame(rows)


def _draw(df: pd.DataFrame, path: Path, title: str, note: str) -> Path:
    return plot.lines(
        df, "udp_senders", "total_mbps", "series", path, title=title, xlabel="UDP senders k (the rest TCP)",
        ylabel="application throughput (Mbit/s)", note=note, hline=(RATE_MBPS, "link capacity"),
    )  # fmt: skip


def _real_udp(opts: Options) -> Outcome:
    opts.out.mkdir(parents=True, exist_ok=True)
    full = run_real_udp(opts)
    df = full[list(COLUMNS)]
    csv = opts.out / "real-udp.csv"
    df.to_csv(csv, index=False)
    losses = opts.out / "real-udp-losses.csv"
    full.to_csv(losses, index=False)
    note = (
        f"real hosts (netns, kernel TCP, iperf3, xco-daemon); {RATE_MBPS} Mbit/s links, "
        f"{BUFFER_BYTES} B buffer"
    )
    png = _draw(df, opts.out / "real-udp.png", "real-udp: total throughput vs UDP senders (real hosts)", note)
    text = (
        "real-udp: xco-udp-1g on real hosts (namespaces, iperf3, XCo daemons)\n\n"
        + pivot_text(df, "udp_senders", "total_mbps")
        + "\n\n"
        + pivot_text(df, "udp_senders", "tcp_per_flow_mbps")
        + "\n\nwhere datagrams were lost (counts over each run):\n"
        + full.drop(columns=["total_mbps", "tcp_per_flow_mbps"]).to_string(index=False)
    )
    (opts.out / "real-udp.txt").write_text(text + "\n")
    meta = write_meta(
        opts, "real-udp", {"rate_mbps": RATE_MBPS, "buffer_bytes": BUFFER_BYTES, "slice_ms": SLICE_MS,
                           "receiver_sysctls": list(REASM_SYSCTLS)},
    )  # fmt: skip
    return Outcome(files=[csv, losses, png, opts.out / "real-udp.txt", meta], summary=text)


def _real_vs_sim(opts: Options) -> Outcome:

    opts.out.mkdir(parents=True, exist_ok=True)
    ks, secs = _ks(opts.full), _seconds(opts.full)
    real = run_real_udp(opts, ks, secs).assign(source="real")
    simdf = run_sim_udp(opts, ks, secs).assign(source="sim")
    df = pd.concat([real, simdf], ignore_index=True)[
        ["source", "series", "udp_senders", "total_mbps", "tcp_per_flow_mbps"]
    ]
    csv = opts.out / "real-vs-sim.csv"
    df.to_csv(csv, index=False)
    fig, axes = plt.subplots(1, 2, figsize=(11, 4.2), dpi=120, sharey=True)
    for ax, metric, label in (
        (axes[0], "total_mbps", "total application throughput (Mbit/s)"),
        (axes[1], "tcp_per_flow_mbps", "TCP throughput per flow (Mbit/s)"),
    ):
        for (src, series), d in df.groupby(["source", "series"]):
            d = d.sort_values("udp_senders")
            ax.plot(
                d["udp_senders"], d[metric], marker="o", linestyle="-" if src == "real" else "--",
                label=f"{series} ({src})",
            )  # fmt: skip
        ax.set_xlabel("UDP senders k (the rest TCP)")
        ax.set_ylabel(label)
        ax.grid(True, alpha=0.3)
        ax.legend(fontsize=8)
    fig.suptitle(
        f"real-vs-sim: xco-udp-1g at {RATE_MBPS} Mbit/s, {BUFFER_BYTES} B buffer, {SLICE_MS} ms slices"
    )
    fig.text(0.01, 0.01, f"seed {opts.seed}; real: netns + iperf3 + xco-daemon; sim: xco-sim", fontsize=7)
    fig.tight_layout(rect=(0, 0.03, 1, 0.95))
    png = opts.out / "real-vs-sim.png"
    fig.savefig(png)
    plt.close(fig)
    text = "real-vs-sim: the same experiment on real hosts and in the simulator\n\n"
    for src in ("real", "sim"):
        d = df[df["source"] == src]
        text += f"[{src}] " + pivot_text(d, "udp_senders", "total_mbps") + "\n"
        text += f"[{src}] " + pivot_text(d, "udp_senders", "tcp_per_flow_mbps") + "\n\n"
    (opts.out / "real-vs-sim.txt").write_text(text)
    meta = write_meta(
        opts, "real-vs-sim", {"rate_mbps": RATE_MBPS, "buffer_bytes": BUFFER_BYTES, "slice_ms": SLICE_MS}
    )
    return Outcome(files=[csv, png, opts.out / "real-vs-sim.txt", meta], summary=text.strip())


def _cpu_s(pid: int) -> float:
    """User + system CPU seconds of a process so far."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def run_overhead(
    opts: Options, rates_mbps: tuple[float, ...] = (100, 10000), seconds: float = 3.0
) -> pd.DataFrame:
    """TCP throughput and CPU on one veth path with and without the agent gating it."""
    netns.require_root("a real-host experiment", "network namespaces, iptables")
    rows = []
    with tempfile.TemporaryDirectory(prefix="xco-ovh-") as tmp:
        work = Path(tmp)
        for rate in rates_mbps:
            path = work / f"pair-{rate}.toml"
            path.write_text(topo.star_toml(2, rate_mbps=rate, prefix="xco", slice_ms=2.0))
            t = topo.load(path)
            tb = netns.up(t)
            try:
                for mode in ("none", "agent"):
                    print(f"  real-overhead: {rate:g} Mbit/s, {mode} ({seconds:.0f} s)", flush=True)
                    d = work / f"{rate}-{mode}"
                    flow = [iperf.Flow("h1", "h2", 5201)]
                    if mode == "none":
                        r = iperf.run_flows(tb, flow, seconds, d)[0]
                        rows.append({"link_mbps": rate, "mode": mode, "throughput_mbps": r["mbps"],
                                     "agent_cpu_pct": 0.0, "retransmits": r["retransmits"]})  # fmt: skip
                        continue
                    with daemons.Xco(tb, d, agents=["h1"]) as x:
                        pid = x.agents["h1"].pid
                        c0 = _cpu_s(pid)
                        r = iperf.run_flows(tb, flow, seconds, d)[0]
                        cpu = (_cpu_s(pid) - c0) / seconds * 100
                    st = daemons.log_fields(d / "agent-h1.log", "stop")
                    rows.append(
                        {
                            "link_mbps": rate, "mode": mode, "throughput_mbps": r["mbps"],
                            "agent_cpu_pct": cpu,
                            "retransmits": r["retransmits"],
                            "directive_to_first_packet_p50_us": float(st.get("first_release_p50_us", "nan")),
                            "directive_to_first_packet_p99_us": float(st.get("first_release_p99_us", "nan")),
                            "report_rtt_p50_us": float(st.get("report_rtt_p50_us", "nan")),
                            "report_rtt_p99_us": float(st.get("report_rtt_p99_us", "nan")),
                            "packets_held": int(st.get("held", 0)),
                        }
                    )  # fmt: skip
            finally:
                tb.stop_all()
                netns.down(t)
    return pd.DataFrame(rows)


def _real_overhead(opts: Options) -> Outcome:
    opts.out.mkdir(parents=True, exist_ok=True)
    df = run_overhead(opts, seconds=8.0 if opts.full else 3.0)
    csv = opts.out / "real-overhead.csv"
    df.to_csv(csv, index=False)
    png = plot.bars(
        df.assign(link=df["link_mbps"].map(lambda r: f"{r:g} Mbit/s")), "link", "throughput_mbps", "mode",
        opts.out / "real-overhead.png", title="real-overhead: TCP throughput with and without the XCo agent",
        xlabel="link rate", ylabel="TCP throughput (Mbit/s)", note="one veth path, iperf3, 2-ms slices",
    )  # fmt: skip
    text = "real-overhead: the agent on one veth path (iperf3 TCP)\n\n" + df.to_string(index=False)
    (opts.out / "real-overhead.txt").write_text(text + "\n")
    meta = write_meta(opts, "real-overhead", {"slice_ms": 2.0})
    return Outcome(files=[csv, png, opts.out / "real-overhead.txt", meta], summary=text)


register(
    Reproduction(
        replicates=False,
        replicates_note="real hosts: one run per point",
        id="real-overhead",
        title="agent overhead on real hosts: throughput, CPU, directive-to-packet and report round trip",
        source="xco (measurement of the real daemons)",
        run=_real_overhead,
    )
)
register(
    Reproduction(
        replicates=False,
        replicates_note="real hosts: one run per point",
        id="real-udp",
        title="UDP vs TCP into one port on real hosts (netns, iperf3, XCo daemons), none vs timeslice",
        source="XCo paper, Fig. 'UDP 1G' (reproduced on real Linux hosts at 100 Mbit/s)",
        run=_real_udp,
    )
)
register(
    Reproduction(
        replicates=False,
        replicates_note="real hosts: one run per point",
        id="real-vs-sim",
        title="real-udp beside the simulator at the same scaled rates",
        source="xco (validation of the simulator against real kernel TCP)",
        run=_real_vs_sim,
    )
)
