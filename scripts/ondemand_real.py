#!/usr/bin/env python3
"""On-demand coordination on real hosts: ``real-overhead``'s case, bare / agent / agent with on-demand.

One veth path h1 -> h2 (a 2-host star) at each rate, the agent on h1, as
``real-overhead`` runs it (iperf3 TCP for ``--seconds``), and beside it the
latency of data packets at low load: ``ping -s 1400`` every 10 ms (1,428-B IP
packets: above the 128-B bypass, so the agent gates them), idle and under
the iperf flow. Needs root, iperf3. Its own namespace prefix and management
network, so it can run beside other testbeds:

    sudo PYTHONPATH=python .venv/bin/python scripts/ondemand_real.py --seconds 3

Prints one table; writes nothing outside a temporary directory.
"""

from __future__ import annotations

import argparse
import re
import statistics
import tempfile
import time
from pathlib import Path

from xco._lazy import pd
from xco.testbed import daemons, iperf, netns, topo

CONTROLLER = "10.200.47.1:7400"


def _ping(tb: netns.Testbed, count: int, out: Path) -> list[float]:
    """RTTs (ms) of ``count`` 1400-B pings h1 -> h2, 10 ms apart."""
    dst = tb.topo.host("h2").addr
    p = tb.spawn("h1", ["ping", "-n", "-s", "1400", "-i", "0.01", "-c", str(count), dst], out)
    p.wait(count * 0.01 + 20)
    return [float(m) for m in re.findall(r"time=([0-9.]+) ms", out.read_text())]


def _q(v: list[float], q: float) -> float:
    if not v:
        return float("nan")
    v = sorted(v)
    return v[min(len(v) - 1, round((len(v) - 1) * q))]


def point(tb: netns.Testbed, mode: str, seconds: float, work: Path) -> dict:
    d = work / mode
    d.mkdir(parents=True, exist_ok=True)
    flow = [iperf.Flow("h1", "h2", 5201)]

    def measure() -> dict:
        idle = _ping(tb, 200, d / "ping-idle.txt")
        # a ping beside the flow (started first, as run_flows blocks)
        ping_out = d / "ping-load.txt"
        dst = tb.topo.host("h2").addr
        n = int(seconds * 100) - 50
        p = tb.spawn("h1", ["ping", "-n", "-s", "1400", "-i", "0.01", "-c", str(n), dst], ping_out)
        r = iperf.run_flows(tb, flow, seconds, d)[0]
        p.wait(seconds + 20)
        load = [float(m) for m in re.findall(r"time=([0-9.]+) ms", ping_out.read_text())]
        return {
            "throughput_mbps": r["mbps"],
            "retransmits": r["retransmits"],
            "rtt_idle_p50_ms": statistics.median(idle) if idle else float("nan"),
            "rtt_idle_p99_ms": _q(idle, 0.99),
            "rtt_load_p50_ms": statistics.median(load) if load else float("nan"),
            "rtt_load_p99_ms": _q(load, 0.99),
        }

    if mode == "bare":
        return {"mode": mode, **measure()}
    with daemons.Xco(tb, d, agents=["h1"]):
        time.sleep(0.2)
        row = measure()
    st = daemons.log_fields(d / "agent-h1.log", "stop")
    return {"mode": mode, **row, "packets_held": int(st.get("held", 0))}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seconds", type=float, default=3.0)
    ap.add_argument("--rates", default="100,10000", help="link rates, Mbit/s")
    args = ap.parse_args()
    netns.require_root("a real-host measurement", "network namespaces, iptables")
    rows = []
    with tempfile.TemporaryDirectory(prefix="xco-od-") as tmp:
        work = Path(tmp)
        for rate in [float(r) for r in args.rates.split(",")]:
            for mode in ("bare", "agent", "agent+on_demand"):
                path = work / f"pair-{rate:g}-{mode}.toml"
                extra = "on_demand = true" if mode == "agent+on_demand" else ""
                path.write_text(
                    topo.star_toml(2, rate_mbps=rate, prefix="xod", slice_ms=2.0, extra_control=extra,
                                   controller=CONTROLLER)
                )  # fmt: skip
                t = topo.load(path)
                tb = netns.up(t)
                try:
                    print(f"  {rate:g} Mbit/s, {mode}", flush=True)
                    rows.append({"link_mbps": rate, **point(tb, mode, args.seconds, work / f"{rate:g}")})
                finally:
                    tb.stop_all()
                    netns.down(t)
    pd.set_option("display.width", 200)
    print(pd.DataFrame(rows).to_string(index=False))


if __name__ == "__main__":
    main()
