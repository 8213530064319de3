#!/usr/bin/env python3
"""How fast the XCo agent's data path is: gated TCP through the agent on one
veth path, beside the same path bare.

Builds a two-host star testbed (``h1 -> s1 -> h2``, namespaces made here and
removed at the end, also on error or Ctrl-C), with TSO/GSO/GRO on along the
path (as on a real host: the agent then sees GSO segments of up to 64 KB),
and for every link rate runs, ``--repeat`` times, interleaved:

- ``bare``: iperf3 TCP h1 -> h2, no agent;
- one run per ``--daemon LABEL=PATH``: the same through that xco-daemon
  binary's agent on h1 (controller in the root namespace, timeslice mode,
  2-ms slices), so a build of main and a new build compare on the same
  testbed minutes apart;
- with ``--open``, also ``LABEL/open``: that agent with no controller, failed
  open after 20 ms (every packet still goes through the queue and gets its
  verdict at once): the data path's cost without the gate's waits.

Per run it records the receiver's Mbit/s, TCP retransmits, the agent's CPU
(user + system, from /proc/PID/stat, as % of one core over the transfer),
directive-to-first-released-packet p50/p99 (the agent's own measurement, from
its stop line), the kernel queue's drop counters (``queue_dropped``,
``queue_user_dropped`` of /proc/net/netfilter/nfnetlink_queue in h1) and the
1-minute load average at the start of the run (the machine may be shared:
figures are noisy, the load says how noisy). Rate ``unlimited`` removes the
token buckets of the path (the topology still names 100 Gbit/s, which the
agent's NIC model uses).

    sudo python3 scripts/agent_speed.py --daemon main=/tmp/xco-daemon-main \\
        --daemon new=target/release/xco-daemon --rates 100,1000,unlimited --repeat 3 --out /tmp/speed

Writes OUT/agent-speed.csv (one row per run) and OUT/agent-speed.txt (min /
median / max per rate and series), and prints the summary. Needs root,
iperf3, ethtool.
"""

from __future__ import annotations

import argparse
import csv
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "python"))

from xco.testbed import daemons, iperf, netns, routes, topo  # noqa: E402

UNLIMITED_MBPS = 100_000.0
PREFIX = "xsp"


def cpu_s(pid: int) -> tuple[float, float]:
    """User and system CPU seconds of process ``pid`` so far (system time includes the kernel's
    work on the packets a verdict reinjects: the rest of their way out, in the agent's context)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    tck = os.sysconf("SC_CLK_TCK")
    return int(fields[11]) / tck, int(fields[12]) / tck


def load1() -> float:
    return float(Path("/proc/loadavg").read_text().split()[0])


def queue_counters(ns: str) -> dict[str, int]:
    """queue_dropped and queue_user_dropped summed over the queues of namespace ``ns``."""
    r = subprocess.run(
        ["ip", "netns", "exec", ns, "cat", "/proc/net/netfilter/nfnetlink_queue"],
        capture_output=True, text=True,
    )  # fmt: skip
    out = {"queue_dropped": 0, "queue_user_dropped": 0}
    for line in r.stdout.splitlines():
        f = line.split()
        if len(f) >= 7:
            out["queue_dropped"] += int(f[5])
            out["queue_user_dropped"] += int(f[6])
    return out


def build(rate: str, work: Path, offloads: bool) -> netns.Testbed:
    mbps = UNLIMITED_MBPS if rate == "unlimited" else float(rate)
    path = work / f"pair-{rate}.toml"
    # fail-open far away: a run measures coordination, not its absence
    extra = "fail_open_ms = 5000"
    path.write_text(topo.star_toml(2, rate_mbps=mbps, prefix=PREFIX, slice_ms=2.0, extra_control=extra))
    tb = netns.up(topo.load(path))
    devs = [("h1", "eth0"), ("s1", routes.host_port("h1")), ("s1", routes.host_port("h2")), ("h2", "eth0")]
    for where, dev in devs:
        if offloads:
            netns.sh("ethtool", "-K", dev, "tso", "on", "gso", "on", "gro", "on", ns=tb.ns(where))
        if rate == "unlimited":
            netns.sh("tc", "qdisc", "del", "dev", dev, "root", ns=tb.ns(where), check=False)
    return tb


class OpenAgent:
    """An agent alone (no controller): it fails open 20 ms into its first backlog."""

    def __init__(self, tb: netns.Testbed, d: Path):
        self.tb, self.dir = tb, d
        path = d / "open.toml"
        path.write_text(tb.topo.path.read_text().replace("fail_open_ms = 5000", "fail_open_ms = 20"))
        key = daemons.agent_key(daemons.keygen(d / "master.key"), path, "h1", d / "h1.key")
        args = [daemons.daemon_binary(), "agent", "--topology", str(path), "--key", str(key), "--host", "h1",
                "--stats-every-s", "1"]  # fmt: skip
        self.agents = {"h1": tb.spawn("h1", args, d / "agent-h1.log")}

    def __enter__(self) -> OpenAgent:
        daemons.Xco.wait_ready(self)  # type: ignore[arg-type]
        return self

    def __exit__(self, *exc: object) -> None:
        self.tb.stop(self.agents["h1"])


def one_run(tb: netns.Testbed, series: str, daemon: str | None, seconds: float, work: Path) -> dict:
    d = work / series.replace("/", "-")
    d.mkdir(parents=True, exist_ok=True)
    flow = [iperf.Flow("h1", "h2", 5201)]
    row: dict = {"series": series, "load1": load1()}
    if daemon is None:
        r = iperf.run_flows(tb, flow, seconds, d)[0]
        row.update(mbps=r["mbps"], retransmits=r["retransmits"])
        return row
    os.environ["XCO_DAEMON"] = daemon
    with OpenAgent(tb, d) if series.endswith("/open") else daemons.Xco(tb, d, agents=["h1"]) as x:
        pid = x.agents["h1"].pid
        (u0, s0), t0 = cpu_s(pid), time.monotonic()
        r = iperf.run_flows(tb, flow, seconds, d)[0]
        (u1, s1), t1 = cpu_s(pid), time.monotonic()
        q = queue_counters(tb.ns("h1"))
    st = daemons.log_fields(d / "agent-h1.log", "stop")
    row.update(
        mbps=r["mbps"], retransmits=r["retransmits"],
        agent_cpu_pct=(u1 + s1 - u0 - s0) / (t1 - t0) * 100,
        agent_user_pct=(u1 - u0) / (t1 - t0) * 100, agent_sys_pct=(s1 - s0) / (t1 - t0) * 100,
        first_release_p50_us=float(st.get("first_release_p50_us", "nan")),
        first_release_p99_us=float(st.get("first_release_p99_us", "nan")),
        held_pkts=int(st.get("held", 0)), released_pkts=int(st.get("released", 0)),
        held_bytes=int(st.get("held_bytes", 0)), released_bytes=int(st.get("released_bytes", 0)),
        release_errors=int(st.get("release_errors", 0)),
        fail_opens=int(st.get("fail_opens", 0)),
        gso_packets=st.get("gso_packets", ""), batch_verdicts=st.get("batch_verdicts", ""),
        single_verdicts=st.get("single_verdicts", ""),
        kernel_bypassed=st.get("kernel_bypassed", ""),
        **q,
    )  # fmt: skip
    return row


def summary(rows: list[dict]) -> str:
    keys = ["mbps", "agent_cpu_pct", "agent_user_pct", "first_release_p50_us", "first_release_p99_us"]
    keys.append("load1")
    out = ["rate       series     n  " + "  ".join(f"{k} (min/med/max)" for k in keys)]
    seen: list[tuple[str, str]] = []
    for r in rows:
        if (r["rate"], r["series"]) not in seen:
            seen.append((r["rate"], r["series"]))
    for rate, series in seen:
        rs = [r for r in rows if r["rate"] == rate and r["series"] == series]
        cells = []
        for k in keys:
            v = [r[k] for r in rs if isinstance(r.get(k), float | int)]
            cells.append("-" if not v else f"{min(v):.1f}/{statistics.median(v):.1f}/{max(v):.1f}")
        drops = sum(r.get("queue_dropped", 0) + r.get("queue_user_dropped", 0) for r in rs)
        tail = "" if series == "bare" else f"  kernel drops {drops}"
        out.append(f"{rate:<10} {series:<10} {len(rs)}  " + "  ".join(cells) + tail)
    return "\n".join(out)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument(
        "--daemon",
        action="append",
        default=[],
        metavar="LABEL=PATH",
        help="an xco-daemon binary to measure (repeatable); default: this checkout's build",
    )
    ap.add_argument("--rates", default="100,1000,unlimited", help="link rates, Mbit/s or 'unlimited'")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--seconds", type=float, default=4.0, help="length of one iperf3 run")
    ap.add_argument("--open", action="store_true", help="also each agent failed open (no controller)")
    ap.add_argument("--no-offloads", action="store_true", help="TSO/GSO/GRO off (MTU-sized packets)")
    ap.add_argument("--out", type=Path, default=Path("agent-speed"))
    a = ap.parse_args()
    if os.geteuid() != 0:
        print("agent_speed: needs root (network namespaces, iptables)", file=sys.stderr)
        return 2
    if not 1 <= a.repeat <= 50 or not 0.5 <= a.seconds <= 120:
        print("agent_speed: --repeat must be 1-50 and --seconds 0.5-120", file=sys.stderr)
        return 2
    rates = [x.strip() for x in a.rates.split(",") if x.strip()]
    for r in rates:
        if r != "unlimited" and not (r.replace(".", "", 1).isdigit() and 0.01 <= float(r) <= 100_000):
            print(f"agent_speed: --rates: {r!r} is not a rate in Mbit/s or 'unlimited'", file=sys.stderr)
            return 2
    bins: list[tuple[str, str]] = []
    for spec in a.daemon or [f"this={daemons.daemon_binary()}"]:
        label, _, path = spec.partition("=")
        if not path or not Path(path).is_file():
            print(f"agent_speed: --daemon: {spec!r} is not LABEL=PATH of a file", file=sys.stderr)
            return 2
        bins.append((label, str(Path(path).resolve())))
    a.out.mkdir(parents=True, exist_ok=True)
    rows: list[dict] = []
    with tempfile.TemporaryDirectory(prefix="xco-speed-") as tmp:
        for rate in rates:
            tb = build(rate, Path(tmp), not a.no_offloads)
            try:
                for i in range(a.repeat):
                    opened = [(f"{label}/open", path) for label, path in bins] if a.open else []
                    for series, daemon in [("bare", None), *bins, *opened]:
                        print(f"  {rate} Mbit/s, {series}, run {i + 1}/{a.repeat}", flush=True)
                        row = one_run(tb, series, daemon, a.seconds, Path(tmp) / f"{rate}-{i}")
                        rows.append({"rate": rate, "run": i + 1, **row})
            finally:
                tb.stop_all()
                netns.down(tb.topo)
    fields: list[str] = []
    for r in rows:
        fields += [k for k in r if k not in fields]
    with open(a.out / "agent-speed.csv", "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=fields)
        w.writeheader()
        w.writerows(rows)
    text = summary(rows)
    (a.out / "agent-speed.txt").write_text(text + "\n")
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
