"""Real hosts on one machine: network namespaces, veth links, Linux bridges
(or, with ``[testbed] forwarding = "route"``, IPv4 routers whose static
routes :mod:`.routes` compiles from the controller's paths) as switches, tbf
on every egress port (a rate and a drop-tail byte buffer).

Every name a testbed creates follows from its topology file (:func:`names`);
what it creates is recorded as it is made (:mod:`.ownership`: the state file
``/run/xco-testbed/PREFIX.json`` names the topology file's owner hash, every
namespace with its identity and every root-namespace link with its index),
and carries the mark ``xco-testbed:PREFIX:OWNER`` (the alias of a
root-namespace link; the alias of ``lo`` inside a namespace). :func:`down`
removes an object only if the record of this very topology file lists it, the
object bearing that name now is the one recorded, and it carries the mark; it
refuses, naming the file, a prefix whose record another topology file wrote.
So it works from the topology file alone, also after a crash, and never
touches anything it did not make (a real ``eth0``, another testbed, a
namespace someone else added under one of its names or marked with its alias):

- namespaces ``PREFIX-NAME`` for hosts and switches (``PREFIX-HOST-gN`` for
  guests); their interfaces (the data and switch-link veths, which are created
  directly inside them), qdiscs and iptables rules go with them;
- in the root namespace only the management bridge ``PREFIX-mgmt`` and the
  root ends ``PREFIX-mI`` of the hosts' management veths, over which the
  controller (root namespace) talks to the agents (out-of-band control). A
  management veth is created with its other end already inside its host's
  namespace, so a crashed build cannot leave an unmarked one behind that
  removing the namespace would not remove too.

Two testbeds from different topology files never share names: ``up`` refuses
a prefix whose record another file wrote (bring that one down first, or
choose another ``testbed.prefix``).

Offloads (TSO/GSO/GRO) are off on every veth so switch buffers see MTU-sized
frames, as a real switch does.
"""

from __future__ import annotations

import ipaddress
import json
import os
import shutil
import signal
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path

from . import ownership, routes
from .topo import TestbedTopology, TopologyError, check_prefix


class TestbedError(Exception):
    """A testbed could not be built or used (the message says what to do)."""


class NamesTaken(TestbedError):
    """Objects the testbed's record does not list hold names it needs: it cannot be built."""


class OwnedByAnother(TestbedError):
    """The testbed prefix is recorded as built from another topology file."""


def sh(*args: str, check: bool = True, ns: str | None = None) -> subprocess.CompletedProcess:
    """Run a command (inside namespace ``ns`` if given)."""
    cmd = (["ip", "netns", "exec", ns] if ns else []) + list(args)
    r = subprocess.run(cmd, capture_output=True, text=True)
    if check and r.returncode != 0:
        raise TestbedError(f"`{' '.join(cmd)}` failed: {r.stderr.strip() or r.stdout.strip()}")
    return r


def require_root(what: str, needs: str = "network namespaces") -> None:
    """Refuse to start ``what`` without root, saying what it needs root for."""
    if os.geteuid() != 0:
        raise TestbedError(f"{what} needs root ({needs}): run with sudo")


def port_drops(tb: Testbed, node: str, dev: str) -> int:
    """Packets the queueing discipline of ``dev`` in ``node``'s namespace dropped so far."""
    out = sh("tc", "-s", "-j", "qdisc", "show", "dev", dev, ns=tb.ns(node)).stdout
    return sum(int(q.get("drops", 0)) for q in json.loads(out or "[]"))


def require_tools() -> None:
    missing = [t for t in ("ip", "tc", "iptables", "ethtool") if shutil.which(t) is None]
    if missing:
        raise TestbedError(
            f"missing tools: {', '.join(missing)} (apt-get install iproute2 iptables ethtool; "
            "bash scripts/setup.sh installs them)"
        )


IFNAMSIZ = 15  # the longest interface name Linux takes


def owner_of(topo: TestbedTopology) -> str:
    """The owner hash of ``topo``'s testbed (:func:`.ownership.owner_id` of its file's text)."""
    return ownership.owner_id(topo.text, repr(topo))


def mark(prefix: str, owner: str) -> str:
    """The alias every object of testbed ``prefix`` built from the file of ``owner`` carries."""
    return f"xco-testbed:{prefix}:{owner}"


def topo_mark(topo: TestbedTopology) -> str:
    return mark(topo.prefix, owner_of(topo))


def ns_name(prefix: str, name: str) -> str:
    """The namespace of host, switch or guest ``name``."""
    return f"{prefix}-{name}"


def guest_name(host: str, gi: int) -> str:
    return f"{host}-g{gi}"


def mgmt_bridge(prefix: str) -> str:
    return f"{prefix}-mgmt"


def mgmt_veth(prefix: str, i: int) -> str:
    """Root end of host ``i``'s management veth (its other end is ``mgmt0`` in the host)."""
    return f"{prefix}-m{i}"


@dataclass(frozen=True)
class Names:
    """The exact names a topology's testbed creates."""

    namespaces: tuple[str, ...]
    root_links: tuple[str, ...]  # in the root namespace


def names(topo: TestbedTopology) -> Names:
    """Every namespace and root-namespace link ``topo``'s testbed creates, by exact name."""
    p = topo.prefix
    try:
        check_prefix(p)
    except TopologyError as e:
        raise TestbedError(str(e)) from None
    ns = [ns_name(p, s) for s in topo.switches]
    for h in topo.hosts:
        ns.append(ns_name(p, h.name))
        ns += [ns_name(p, guest_name(h.name, gi)) for gi in range(len(h.guests))]
    links = [mgmt_bridge(p)] + [mgmt_veth(p, i) for i in range(len(topo.hosts))]
    long = [n for n in links if len(n) > IFNAMSIZ]
    if long:
        raise TestbedError(f"interface name {long[0]} is longer than {IFNAMSIZ} characters (too many hosts)")
    return Names(tuple(ns), tuple(links))


def _netns_list() -> set[str]:
    out = sh("ip", "netns", "list", check=False).stdout
    return {line.split()[0] for line in out.splitlines() if line.strip()}


def _root_links() -> dict[str, str]:
    """Links of the root namespace: name -> alias ('' if none)."""
    out = sh("ip", "-j", "link", "show", check=False).stdout
    return {d["ifname"]: d.get("ifalias", "") for d in json.loads(out or "[]")}


def _ns_mark(ns: str) -> str:
    """The alias of ``lo`` in namespace ``ns`` ('' if none)."""
    out = sh("ip", "-n", ns, "-j", "link", "show", "dev", "lo", check=False).stdout
    try:
        return json.loads(out)[0].get("ifalias", "")
    except (ValueError, IndexError, KeyError):
        return ""


def namespaces(topo: TestbedTopology) -> list[str]:
    """The namespaces of ``topo``'s testbed that exist (by exact name, marked or not)."""
    present = _netns_list()
    return [n for n in names(topo).namespaces if n in present]


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
    record: ownership.Record | None = None  # what `up` made (None: a testbed not built here)

    @property
    def prefix(self) -> str:
        return self.topo.prefix

    def ns(self, name: str) -> str:
        return ns_name(self.prefix, name)

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
        """SIGTERM ``p`` and wait; SIGKILL if it does not exit. A process from
        :meth:`spawn` leads a process group of its own, and the whole group is
        signalled, so what a wrapper started goes too (``faketime`` runs the
        daemon as its child). The group is signalled only while ``p`` is not
        yet reaped: until then its id cannot name anyone else's group."""
        if p.poll() is None:
            _signal_group(p, signal.SIGTERM)
            try:
                p.wait(timeout)
            except subprocess.TimeoutExpired:
                _signal_group(p, signal.SIGKILL)
                p.wait()
        return p.returncode

    def stop_all(self) -> None:
        for p in reversed(self.procs):
            self.stop(p)
        self.procs.clear()


def set_rto_min(tb: Testbed, host: str, ms: int) -> str:
    """Set ``rto_min`` on ``host``'s default route (the one its flows to other hosts take);
    returns the route as it now reads. Idempotent."""
    ns = tb.ns(host)
    line = sh("ip", "-o", "route", "show", "default", ns=ns).stdout.strip()
    if not line.startswith("default"):
        raise TestbedError(f"{host} has no default route to set rto_min on: {line!r}")
    words = [w for w in line.split() if w != "\\"]
    # drop a previous rto_min (and a "lock" before it) so the change is idempotent
    out, skip = [], 0
    for w in words:
        if skip:
            skip -= 1
            continue
        if w == "rto_min":
            skip = 1
            continue
        out.append(w)
    sh("ip", "route", "change", *out, "rto_min", f"{ms}ms", ns=ns)
    return sh("ip", "-o", "route", "show", "default", ns=ns).stdout.strip()


def _signal_group(p: subprocess.Popen, sig: int) -> None:
    """Send ``sig`` to the process group ``p`` leads (spawned with its own session),
    or to ``p`` alone if it leads none."""
    try:
        if os.getpgid(p.pid) == p.pid:
            os.killpg(p.pid, sig)
        else:
            p.send_signal(sig)
    except ProcessLookupError:
        pass


def _record_of(topo: TestbedTopology) -> ownership.Record | None:
    """The state file of ``topo``'s prefix; refuses one another topology file wrote."""
    try:
        rec = ownership.load(topo.prefix)
    except ownership.BadRecord as e:
        raise TestbedError(str(e)) from None
    owner = owner_of(topo)
    if rec is not None and rec.owner != owner:
        raise OwnedByAnother(
            f"testbed prefix {topo.prefix} is held by the testbed built from {rec.topology} (owner"
            f" {rec.owner}), not from {topo.path} (owner {owner}): nothing was changed; run `xco testbed"
            f" down {rec.topology}`, or choose another testbed.prefix"
        )
    return rec


def up(topo: TestbedTopology) -> Testbed:
    """Build ``topo`` into namespaces (tearing down any leftovers of the same testbed first)."""
    require_tools()
    names(topo)  # a bad prefix or too long a name: refused before anything is made
    _record_of(topo)
    down(topo)
    taken = leftovers(topo)
    if taken:
        raise NamesTaken(
            f"names this testbed needs are held by objects its record ({ownership.path_of(topo.prefix)})"
            f" does not list: {', '.join(taken)}; remove them yourself if they are stale, or choose another"
            " testbed.prefix"
        )
    rec = ownership.Record(prefix=topo.prefix, owner=owner_of(topo), topology=str(topo.path))
    rec.save()  # before anything is made: a crash leaves a record of what it made
    tb = Testbed(topo, record=rec)
    try:
        _build(tb)
    except BaseException:
        down(topo)
        raise
    return tb


def _root_ifindex(name: str) -> int | None:
    out = sh("ip", "-j", "link", "show", "dev", name, check=False).stdout
    try:
        return int(json.loads(out)[0]["ifindex"])
    except (ValueError, IndexError, KeyError):
        return None


def _note_link(tb: Testbed, name: str) -> None:
    """Record root-namespace link ``name``, just made, in the testbed's state file."""
    idx = _root_ifindex(name)
    if tb.record is not None and idx is not None:
        tb.record.links[name] = idx
        tb.record.save()


def _add_ns(tb: Testbed, ns: str) -> None:
    sh("ip", "netns", "add", ns)
    ident = ownership.ns_identity(ns)
    if tb.record is not None and ident is not None:
        tb.record.namespaces[ns] = ident
        tb.record.save()
    sh("ip", "link", "set", "lo", "alias", topo_mark(tb.topo), "up", ns=ns)


def _batch(ns: str, lines: list[str]) -> None:
    """Run ``ip`` commands (one per line) inside namespace ``ns`` in one process."""
    if not lines:
        return
    r = subprocess.run(["ip", "-n", ns, "-batch", "-"], input="\n".join(lines) + "\n",
                       capture_output=True, text=True)  # fmt: skip
    if r.returncode != 0:
        raise TestbedError(f"configuring {ns} failed: {r.stderr.strip() or r.stdout.strip()}")


# a routed switch forwards and takes packets on any port (its routes may be per source or
# per input port, so the reverse-path filter would drop packets of asymmetric paths)
ROUTER_SYSCTLS = (
    "net.ipv4.ip_forward=1",
    "net.ipv4.conf.all.rp_filter=0",
    "net.ipv4.conf.default.rp_filter=0",
)


def _build(tb: Testbed) -> None:
    t = tb.topo
    p = t.prefix
    m = topo_mark(t)
    plan = routes.plan(t) if t.routed else None  # before anything is made: a bad file changes nothing
    for s in t.switches:
        ns = tb.ns(s)
        _add_ns(tb, ns)
        if plan is not None:
            sh("sysctl", "-qw", *ROUTER_SYSCTLS, ns=ns)
            continue
        sh("ip", "link", "add", "br0", "type", "bridge", ns=ns)
        sh("ip", "link", "set", "br0", "up", ns=ns)
    mgmt_net = t.mgmt_net
    bridge = mgmt_bridge(p)
    # one ip process creates and marks the bridge: nothing between the two to interrupt
    r = subprocess.run(
        ["ip", "-batch", "-"],
        input=f"link add {bridge} type bridge\nlink set dev {bridge} alias {m}\n",
        capture_output=True, text=True,
    )  # fmt: skip
    if r.returncode != 0:
        raise TestbedError(f"creating the management bridge {bridge} failed: {r.stderr.strip()}")
    _note_link(tb, bridge)
    sh("ip", "addr", "add", f"{t.controller_ip}/{mgmt_net.prefixlen}", "dev", bridge)
    sh("ip", "link", "set", bridge, "up")
    for i, h in enumerate(t.hosts):
        ns = tb.ns(h.name)
        sw = tb.ns(h.switch)
        _add_ns(tb, ns)
        # data link: host eth0 <-> switch port p-HOST, made directly inside the two namespaces
        port = routes.host_port(h.name)
        sh("ip", "link", "add", "eth0", "netns", ns, "type", "veth", "peer", "name", port, "netns", sw)
        if plan is None:
            sh("ip", "addr", "add", f"{h.addr}/{t.data_prefix_len}", "dev", "eth0", ns=ns)
        for dev, where in (("eth0", ns), (port, sw)):
            _no_offload(dev, where)
            sh("ip", "link", "set", dev, "up", ns=where)
        if plan is None:
            sh("ip", "link", "set", port, "master", "br0", ns=sw)
        # the host's NIC queue is deep (Linux's txqueuelen); the switch port's is the shallow buffer
        _tbf("eth0", ns, h.rate_mbps, t.host_queue_bytes)
        _tbf(port, sw, h.rate_mbps, t.buffer_bytes)
        # management link to the controller's bridge: its other end is born inside the host
        m_root = mgmt_veth(p, i)
        sh("ip", "link", "add", m_root, "type", "veth", "peer", "name", "mgmt0", "netns", ns)
        sh("ip", "link", "set", "dev", m_root, "alias", m)
        _note_link(tb, m_root)
        sh("ip", "link", "set", m_root, "master", bridge)
        sh("ip", "link", "set", m_root, "up")
        mip = mgmt_net.network_address + 10 + i
        sh("ip", "addr", "add", f"{mip}/{mgmt_net.prefixlen}", "dev", "mgmt0", ns=ns)
        sh("ip", "link", "set", "mgmt0", "up", ns=ns)
        for gi, g in enumerate(h.guests):
            _guest(tb, h.name, gi, g)
    for a_sw, b_sw, rate in t.links:
        # switch link, made directly inside the two switches
        pa, pb = routes.trunk_port(b_sw), routes.trunk_port(a_sw)
        sh("ip", "link", "add", pa, "netns", tb.ns(a_sw),
           "type", "veth", "peer", "name", pb, "netns", tb.ns(b_sw))  # fmt: skip
        for dev, sw in ((pa, a_sw), (pb, b_sw)):
            _no_offload(dev, tb.ns(sw))
            if plan is None:
                sh("ip", "link", "set", dev, "master", "br0", ns=tb.ns(sw))
            sh("ip", "link", "set", dev, "up", ns=tb.ns(sw))
            _tbf(dev, tb.ns(sw), rate, t.buffer_bytes)
    if plan is not None:
        # addresses, routes and rules of every host and router
        for name, lines in plan.batch.items():
            _batch(tb.ns(name), lines)
        return
    # bridged: routes to guest prefixes via their host
    for h in t.hosts:
        for g in h.guests:
            for o in t.hosts:
                if o.name != h.name:
                    sh("ip", "route", "add", g, "via", h.addr, ns=tb.ns(o.name))


def _guest(tb: Testbed, host: str, gi: int, prefix: str) -> None:
    """A guest namespace behind a bridge in ``host`` (standing in for a VM)."""
    net = ipaddress.ip_network(prefix, strict=False)
    hns, gns = tb.ns(host), tb.ns(guest_name(host, gi))
    gw, addr = net.network_address + 1, net.network_address + 2
    _add_ns(tb, gns)
    br = f"gbr{gi}"
    sh("ip", "link", "add", br, "type", "bridge", ns=hns)
    sh("ip", "addr", "add", f"{gw}/{net.prefixlen}", "dev", br, ns=hns)
    sh("ip", "link", "set", br, "up", ns=hns)
    a = f"g{gi}"  # made directly inside the host and the guest
    sh("ip", "link", "add", a, "netns", hns, "type", "veth", "peer", "name", "eth0", "netns", gns)
    sh("ip", "link", "set", a, "master", br, "up", ns=hns)
    sh("ip", "addr", "add", f"{addr}/{net.prefixlen}", "dev", "eth0", ns=gns)
    sh("ip", "link", "set", "eth0", "up", ns=gns)
    sh("ip", "route", "add", "default", "via", str(gw), ns=gns)
    _no_offload("eth0", gns)
    sh("sysctl", "-qw", "net.ipv4.ip_forward=1", ns=hns)


def down(topo: TestbedTopology) -> list[str]:
    """Remove ``topo``'s testbed; returns what was removed. Never fails on leftovers.

    Removes exactly the namespaces and root-namespace links that the state
    file of ``topo``'s prefix records as made by this topology file, each only
    if the object bearing the name now is the one recorded and carries the
    mark; anything else — also an unmarked or foreign object under one of
    those names — is left alone (and :func:`leftovers` reports it). Raises
    :class:`OwnedByAnother` (nothing removed) if another topology file wrote
    the record. Processes inside a removed namespace are stopped (SIGTERM,
    SIGKILL after 3 s)."""
    n = names(topo)
    rec = _record_of(topo)
    if rec is None:
        return []  # nothing recorded: nothing here is provably this testbed's
    m = topo_mark(topo)
    removed = []
    for ns, ident in list(rec.namespaces.items()):
        if ns not in n.namespaces:
            continue
        now = ownership.ns_identity(ns)
        if now is None:
            del rec.namespaces[ns]  # gone already
            continue
        if now != ident or _ns_mark(ns) != m:
            continue  # someone else's namespace under that name now: left alone
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
        if ownership.ns_identity(ns) is None:
            del rec.namespaces[ns]
            removed.append(ns)
    # a veth whose other end was in a removed namespace may outlive it for a moment: remove it here
    links = _root_links()
    for name, idx in list(rec.links.items()):
        if name not in n.root_links:
            continue
        if name not in links:
            del rec.links[name]
            continue
        if links[name] == m and _root_ifindex(name) == idx:
            sh("ip", "link", "del", "dev", name, check=False)
            del rec.links[name]
            removed.append(name)
    # a veth whose peer namespace went may vanish between the listing and its removal
    links = _root_links()
    for name in [x for x in rec.links if x not in links]:
        del rec.links[name]
    if rec.namespaces or rec.links:
        rec.save()
    else:
        rec.forget()
    return removed


def leftovers(topo: TestbedTopology) -> list[str]:
    """Names ``topo``'s testbed uses that still exist (namespaces, root-namespace links)."""
    links = _root_links()
    return namespaces(topo) + [name for name in names(topo).root_links if name in links]
