"""Real hosts on one machine: network namespaces, veth links, Linux bridges
as switches, tbf on every egress port (a rate and a drop-tail byte buffer).

Everything a testbed creates is named from its prefix, so :func:`down` finds
and removes it all from the prefix alone — also after a crash:

- namespaces ``PREFIX-NAME`` for hosts and switches (``PREFIX-HOST-gN`` for
  guests); their interfaces, qdiscs and iptables rules go with them;
- the management bridge ``PREFIX-mgmt`` in the root namespace, over which
  the controller (root namespace) talks to the agents (out-of-band control).

Offloads (TSO/GSO/GRO) are off on every veth so switch buffers see MTU-sized
frames, as a real switch does.
"""

from __future__ import annotations

import ipaddress
import shutil
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path

from .topo import TestbedTopology


class TestbedError(Exception):
    """A testbed could not be built or used (the message says what to do)."""


def sh(*args: str, check: bool = True, ns: str | None = None) -> subprocess.CompletedProcess:
    """Run a command (inside namespace ``ns`` if given)."""
    cmd = (["ip", "netns", "exec", ns] if ns else []) + list(args)
    r = subprocess.run(cmd, capture_output=True, text=True)
    if check and r.returncode != 0:
        raise TestbedError(f"`{' '.join(cmd)}` failed: {r.stderr.strip() or r.stdout.strip()}")
    return r


def require_tools() -> None:
    missing = [t for t in ("ip", "tc", "iptables", "ethtool") if shutil.which(t) is None]
    if missing:
        raise TestbedError(
            f"missing tools: {', '.join(missing)} (apt-get install iproute2 iptables ethtool; "
            "bash scripts/setup.sh installs them)"
        )


def namespaces(prefix: str) -> list[str]:
    out = sh("ip", "netns", "list", check=False).stdout
    names = [line.split()[0] for line in out.splitlines() if line.strip()]
    return [n for n in names if n.startswith(prefix + "-")]


def _tbf(dev: str, ns: str, rate_mbps: float, limit_bytes: int) -> None:
    # burst: two full frames; tbf's watchdog is an hrtimer, so small bursts are exact enough
    sh(
        "tc", "qdisc", "replace", "dev", dev, "root", "tbf",
        "rate", f"{rate_mbps}mbit", "burst", "3100", "limit", str(limit_bytes), ns=ns,
    )  # fmt: skip


def _no_offload(dev: str, ns: str) -> None:
    sh("ethtool", "-K", dev, "tso", "off", "gso", "off", "gro", "off", check=False, ns=ns)


@dataclass
class Testbed:
    """A built testbed: what :func:`up` made."""

    topo: TestbedTopology
    procs: list[subprocess.Popen] = field(default_factory=list)

    @property
    def prefix(self) -> str:
        return self.topo.prefix

    def ns(self, name: str) -> str:
        return f"{self.prefix}-{name}"

    def spawn(
        self, host: str | None, args: list[str], log: Path, *, split_stderr: bool = False
    ) -> subprocess.Popen:
        """Start a process in ``host``'s namespace (root namespace if None), output to ``log``
        (standard error too, or to ``log``.err with ``split_stderr``)."""
        cmd = (["ip", "netns", "exec", self.ns(host)] if host else []) + args
        f = open(log, "w")  # noqa: SIM115 - owned by the process record
        err = open(f"{log}.err", "w") if split_stderr else subprocess.STDOUT  # noqa: SIM115
        p = subprocess.Popen(cmd, stdout=f, stderr=err, start_new_session=True)
        p.log_path = log  # type: ignore[attr-defined]
        self.procs.append(p)
        return p

    def stop(self, p: subprocess.Popen, timeout: float = 5.0) -> int:
        """SIGTERM ``p`` and wait; SIGKILL if it does not exit."""
        if p.poll() is None:
            p.terminate()
            try:
                p.wait(timeout)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()
        return p.returncode

    def stop_all(self) -> None:
        for p in reversed(self.procs):
            self.stop(p)
        self.procs.clear()


def up(topo: TestbedTopology) -> Testbed:
    """Build ``topo`` into namespaces (tearing down any leftovers of the same prefix first)."""
    require_tools()
    down(topo.prefix)
    tb = Testbed(topo)
    try:
        _build(tb)
    except BaseException:
        down(topo.prefix)
        raise
    return tb


def _build(tb: Testbed) -> None:
    t = tb.topo
    p = t.prefix
    for s in t.switches:
        ns = tb.ns(s)
        sh("ip", "netns", "add", ns)
        sh("ip", "link", "set", "lo", "up", ns=ns)
        sh("ip", "link", "add", "br0", "type", "bridge", ns=ns)
        sh("ip", "link", "set", "br0", "up", ns=ns)
    mgmt_net = t.mgmt_net
    sh("ip", "link", "add", f"{p}-mgmt", "type", "bridge")
    sh("ip", "addr", "add", f"{t.controller_ip}/{mgmt_net.prefixlen}", "dev", f"{p}-mgmt")
    sh("ip", "link", "set", f"{p}-mgmt", "up")
    for i, h in enumerate(t.hosts):
        ns = tb.ns(h.name)
        sw = tb.ns(h.switch)
        sh("ip", "netns", "add", ns)
        sh("ip", "link", "set", "lo", "up", ns=ns)
        # data link: host eth0 <-> switch port p-HOST
        a, b = f"{p}{i}a", f"{p}{i}b"
        port = f"p-{h.name}"[:15]
        sh("ip", "link", "add", a, "type", "veth", "peer", "name", b)
        sh("ip", "link", "set", a, "netns", ns, "name", "eth0")
        sh("ip", "link", "set", b, "netns", sw, "name", port)
        sh("ip", "addr", "add", f"{h.addr}/{t.data_prefix_len}", "dev", "eth0", ns=ns)
        for dev, where in (("eth0", ns), (port, sw)):
            _no_offload(dev, where)
            sh("ip", "link", "set", dev, "up", ns=where)
        sh("ip", "link", "set", port, "master", "br0", ns=sw)
        # the host's NIC queue is deep (Linux's txqueuelen); the switch port's is the shallow buffer
        _tbf("eth0", ns, h.rate_mbps, t.host_queue_bytes)
        _tbf(port, sw, h.rate_mbps, t.buffer_bytes)
        # management link to the controller's bridge
        m_root, m_ns = f"{p}m{i}", f"{p}m{i}n"
        sh("ip", "link", "add", m_root, "type", "veth", "peer", "name", m_ns)
        sh("ip", "link", "set", m_ns, "netns", ns, "name", "mgmt0")
        sh("ip", "link", "set", m_root, "master", f"{p}-mgmt")
        sh("ip", "link", "set", m_root, "up")
        mip = mgmt_net.network_address + 10 + i
        sh("ip", "addr", "add", f"{mip}/{mgmt_net.prefixlen}", "dev", "mgmt0", ns=ns)
        sh("ip", "link", "set", "mgmt0", "up", ns=ns)
        for gi, g in enumerate(h.guests):
            _guest(tb, h.name, gi, g)
    for i, (a_sw, b_sw, rate) in enumerate(t.links):
        a, b = f"{p}l{i}a", f"{p}l{i}b"
        sh("ip", "link", "add", a, "type", "veth", "peer", "name", b)
        pa, pb = f"t-{b_sw}"[:15], f"t-{a_sw}"[:15]
        sh("ip", "link", "set", a, "netns", tb.ns(a_sw), "name", pa)
        sh("ip", "link", "set", b, "netns", tb.ns(b_sw), "name", pb)
        for dev, sw in ((pa, a_sw), (pb, b_sw)):
            _no_offload(dev, tb.ns(sw))
            sh("ip", "link", "set", dev, "master", "br0", ns=tb.ns(sw))
            sh("ip", "link", "set", dev, "up", ns=tb.ns(sw))
            _tbf(dev, tb.ns(sw), rate, t.buffer_bytes)
    # routes to guest prefixes via their host
    for h in t.hosts:
        for g in h.guests:
            for o in t.hosts:
                if o.name != h.name:
                    sh("ip", "route", "add", g, "via", h.addr, ns=tb.ns(o.name))


def _guest(tb: Testbed, host: str, gi: int, prefix: str) -> None:
    """A guest namespace behind a bridge in ``host`` (standing in for a VM)."""
    net = ipaddress.ip_network(prefix, strict=False)
    hns, gns = tb.ns(host), tb.ns(f"{host}-g{gi}")
    gw, addr = net.network_address + 1, net.network_address + 2
    sh("ip", "netns", "add", gns)
    sh("ip", "link", "set", "lo", "up", ns=gns)
    br = f"gbr{gi}"
    sh("ip", "link", "add", br, "type", "bridge", ns=hns)
    sh("ip", "addr", "add", f"{gw}/{net.prefixlen}", "dev", br, ns=hns)
    sh("ip", "link", "set", br, "up", ns=hns)
    a, b = f"{tb.prefix}g{gi}a", f"{tb.prefix}g{gi}b"
    sh("ip", "link", "add", a, "netns", hns, "type", "veth", "peer", "name", b, "netns", gns)
    sh("ip", "link", "set", a, "master", br, "up", ns=hns)
    sh("ip", "link", "set", b, "name", "eth0", ns=gns)
    sh("ip", "addr", "add", f"{addr}/{net.prefixlen}", "dev", "eth0", ns=gns)
    sh("ip", "link", "set", "eth0", "up", ns=gns)
    sh("ip", "route", "add", "default", "via", str(gw), ns=gns)
    _no_offload("eth0", gns)
    sh("sysctl", "-qw", "net.ipv4.ip_forward=1", ns=hns)


def down(prefix: str) -> list[str]:
    """Remove everything named from ``prefix``; returns what was removed. Never fails on leftovers."""
    removed = []
    for ns in namespaces(prefix):
        pids = sh("ip", "netns", "pids", ns, check=False).stdout.split()
        for pid in pids:
            subprocess.run(["kill", "-TERM", pid], capture_output=True)
        deadline = time.monotonic() + 3
        while pids and time.monotonic() < deadline:
            pids = sh("ip", "netns", "pids", ns, check=False).stdout.split()
            if pids:
                time.sleep(0.05)
        for pid in pids:
            subprocess.run(["kill", "-KILL", pid], capture_output=True)
        sh("ip", "netns", "del", ns, check=False)
        removed.append(ns)
    links = sh("ip", "-o", "link", "show", check=False).stdout
    for line in links.splitlines():
        name = line.split(":")[1].strip().split("@")[0]
        if name == f"{prefix}-mgmt" or (
            name.startswith(prefix) and name[len(prefix) :][:1] in "mlg0123456789"
        ):
            sh("ip", "link", "del", name, check=False)
            removed.append(name)
    return removed


def leftovers(prefix: str) -> list[str]:
    """Anything of ``prefix`` still present (namespaces, links)."""
    out = namespaces(prefix)
    links = sh("ip", "-o", "link", "show", check=False).stdout
    for line in links.splitlines():
        name = line.split(":")[1].strip().split("@")[0]
        if name.startswith(prefix):
            out.append(name)
    return out
