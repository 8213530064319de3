"""iperf3 on a testbed: servers and clients in host namespaces, JSON results."""

from __future__ import annotations

import json
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

from .netns import Testbed, TestbedError


@dataclass
class Flow:
    """One iperf3 flow: ``src`` -> ``dst`` (host names), TCP or UDP at ``udp_mbps``."""

    src: str
    dst: str
    port: int
    udp_mbps: float | None = None
    udp_len: int = 1470


def run_flows(tb: Testbed, flows: list[Flow], seconds: float, workdir: Path) -> list[dict]:
    """Run ``flows`` together for ``seconds``; one result per flow (receiver-side bytes and Mbit/s)."""
    workdir.mkdir(parents=True, exist_ok=True)
    servers = []
    for f in flows:
        out = workdir / f"server-{f.dst}-{f.port}.json"
        servers.append(
            (tb.spawn(f.dst, ["iperf3", "-s", "-1", "-J", "-p", str(f.port)], out, split_stderr=True), out)
        )
    time.sleep(0.3)
    clients = []
    for f in flows:
        dst_addr = tb.topo.host(f.dst).addr
        args = ["iperf3", "-c", dst_addr, "-p", str(f.port), "-t", str(seconds), "-J"]
        if f.udp_mbps is not None:
            args += ["-u", "-b", f"{f.udp_mbps}M", "-l", str(f.udp_len)]
        out = workdir / f"client-{f.src}-{f.port}.json"
        clients.append((tb.spawn(f.src, args, out, split_stderr=True), out))
    rows = []
    for (c, cout), (s, sout), f in zip(clients, servers, flows, strict=True):
        try:
            c.wait(seconds + 20)
            s.wait(10)
        except subprocess.TimeoutExpired:
            raise TestbedError(f"iperf3 {f.src}->{f.dst} did not finish; see {cout}") from None
        rows.append(_parse(f, cout, sout, seconds))
    return rows


def _load(path: Path) -> dict:
    try:
        return json.loads(path.read_text())
    except json.JSONDecodeError:
        raise TestbedError(f"iperf3 wrote no JSON to {path}: {path.read_text()[-300:]}") from None


def _parse(f: Flow, cout: Path, sout: Path, seconds: float) -> dict:
    c, s = _load(cout), _load(sout)
    if "error" in c:
        raise TestbedError(f"iperf3 {f.src}->{f.dst}: {c['error']}")
    end = s.get("end", {})
    got = end.get("sum_received", {})
    cend = c.get("end", {})
    sent = cend.get("sum_sent") or cend.get("sum", {})
    retrans = sent.get("retransmits", 0) if f.udp_mbps is None else 0
    secs = got.get("seconds") or seconds
    return {
        "src": f.src,
        "dst": f.dst,
        "proto": "udp" if f.udp_mbps is not None else "tcp",
        "bytes_sent": int(sent.get("bytes", 0)),
        "bytes_received": int(got.get("bytes", 0)),
        "mbps": got.get("bytes", 0) * 8 / secs / 1e6,
        "retransmits": retrans,
        "lost_packets": end.get("sum", {}).get("lost_packets", 0),
    }
