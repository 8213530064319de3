"""The topology file as the testbed reads it (the daemons read the same file;
``xco-daemon check FILE`` validates the parts they use).

Testbed-only settings live in ``[testbed]``::

    [testbed]
    prefix = "xco"          # names of namespaces and links: 1-6 characters, a-z first, then a-z/0-9
    buffer_bytes = 32768    # drop-tail buffer of every switch egress port
    host_queue_bytes = 262144
    data_prefix_len = 16    # hosts' data addresses share one L2 segment (bridged only)
    forwarding = "bridge"   # "bridge": switches are Linux bridges (the switch graph must be
                            #   loop-free); "route": switches are IPv4 routers whose static routes
                            #   are the paths the XCo controller schedules ([topology] routing)
    link_net = "10.255.0.0/16"  # routed only: addresses of the routers' ports (two per link)
"""

from __future__ import annotations

import ipaddress
import re
from dataclasses import dataclass
from pathlib import Path

import tomllib


class TopologyError(Exception):
    """The file is wrong: the message names the field."""


PREFIX_RE = re.compile(r"[a-z][a-z0-9]{0,5}")

# Beginnings of interface names the kernel, udev, container and VPN tools give
# their own devices: a prefix that looks like one is refused, so that no name
# a testbed makes (or removes) can be mistaken for a real interface's.
KERNEL_STEMS = (
    "eth", "en", "em", "wl", "ww", "lo", "br", "veth", "vnet", "docker", "virbr", "bond", "team",
    "tun", "tap", "vx", "vlan", "macv", "ipvl", "dummy", "ifb", "gre", "gtp", "ip6", "sit", "erspan",
    "wg", "ib", "can", "ppp", "usb", "cali", "flannel", "cni", "kube", "ovs", "vmnet", "vbox",
    "lxc", "lxd", "podman", "cilium", "weave", "zt", "tailscale", "nlmon", "bat", "hsr",
)  # fmt: skip


def check_prefix(prefix: object) -> str:
    """``prefix`` if it is a valid ``testbed.prefix``; else a TopologyError saying why."""
    hint = 'use a short name of your own, e.g. "xco" or "xtb1"'
    if not isinstance(prefix, str) or not PREFIX_RE.fullmatch(prefix):
        raise TopologyError(
            f"testbed.prefix: {prefix!r} must be 1-6 characters, a lowercase letter first, then "
            f"lowercase letters or digits (it starts the testbed's interface names); {hint}"
        )
    stem = next((s for s in KERNEL_STEMS if prefix.startswith(s)), None)
    if stem is None and re.fullmatch(r"p[0-9].*", prefix):
        stem = "p<digit>"
    if stem is not None:
        raise TopologyError(
            f"testbed.prefix: {prefix!r} begins like the kernel's or another tool's interface names "
            f"({stem}...); {hint}"
        )
    return prefix


@dataclass(frozen=True)
class HostSpec:
    name: str
    addr: str
    switch: str
    rate_mbps: float
    guests: tuple[str, ...] = ()


@dataclass(frozen=True)
class TestbedTopology:
    path: Path
    prefix: str
    hosts: tuple[HostSpec, ...]
    switches: tuple[str, ...]
    links: tuple[tuple[str, str, float], ...]
    controller_ip: str
    controller_port: int
    buffer_bytes: int
    host_queue_bytes: int
    data_prefix_len: int
    mgmt_net: ipaddress.IPv4Network
    forwarding: str = "bridge"
    link_net: ipaddress.IPv4Network = ipaddress.IPv4Network("10.255.0.0/16")
    text: str = ""  # the file as read (the routed testbed asks the controller's parser for its paths)

    @property
    def routed(self) -> bool:
        return self.forwarding == "route"

    def host(self, name: str) -> HostSpec:
        for h in self.hosts:
            if h.name == name:
                return h
        raise TopologyError(f"no host '{name}' in {self.path}")


def load(path: str | Path) -> TestbedTopology:
    path = Path(path)
    try:
        text = path.read_text()
        d = tomllib.loads(text)
    except FileNotFoundError:
        raise TopologyError(f"{path}: no such file") from None
    except tomllib.TOMLDecodeError as e:
        raise TopologyError(f"{path}: {e}") from None
    return parse(d, path, text)


def parse(d: dict, path: Path, text: str = "") -> TestbedTopology:
    def err(msg: str) -> TopologyError:
        return TopologyError(f"{path}: {msg}")

    ctl = d.get("control")
    if not isinstance(ctl, dict) or "controller" not in ctl:
        raise err('[control] controller = "IP:PORT" is required')
    try:
        ip_s, port_s = str(ctl["controller"]).rsplit(":", 1)
        cip = ipaddress.IPv4Address(ip_s)
        cport = int(port_s)
    except ValueError:
        raise err(f"control.controller: '{ctl['controller']}' is not IPv4:PORT") from None
    tb = d.get("testbed", {}) or {}
    known = {
        "prefix",
        "buffer_bytes",
        "host_queue_bytes",
        "data_prefix_len",
        "mgmt",
        "forwarding",
        "link_net",
    }
    for k in tb:
        if k not in known:
            raise err(f"testbed.{k}: unknown setting (known: {', '.join(sorted(known))})")
    try:
        prefix = check_prefix(tb.get("prefix", "xco"))
    except TopologyError as e:
        raise err(str(e)) from None
    switches = tuple(str(s["name"]) for s in d.get("switch", []))
    hosts = []
    for i, h in enumerate(d.get("host", [])):
        for k in ("name", "addr", "switch", "rate_mbps"):
            if k not in h:
                raise err(f"host #{i + 1}: '{k}' is required")
        if h["switch"] not in switches:
            raise err(f"host '{h['name']}': switch '{h['switch']}' is not a [[switch]]")
        hosts.append(
            HostSpec(
                str(h["name"]),
                str(h["addr"]),
                str(h["switch"]),
                float(h["rate_mbps"]),
                tuple(h.get("guests", [])),
            )
        )
    if len(hosts) < 2:
        raise err("at least two [[host]] are needed")
    forwarding = tb.get("forwarding", "bridge")
    if forwarding not in ("bridge", "route"):
        raise err(f'testbed.forwarding: {forwarding!r} must be "bridge" or "route"')
    links = tuple((str(x["a"]), str(x["b"]), float(x["rate_mbps"])) for x in d.get("link", []))
    # bridges have no spanning tree here: the switch graph must be a forest (routers take loops)
    parent = {s: s for s in switches}

    def find(s: str) -> str:
        while parent[s] != s:
            s = parent[s]
        return s

    pairs = set()
    for a, b, _ in links:
        if a not in parent or b not in parent:
            raise err(f"link {a}-{b}: both ends must be [[switch]] names")
        if a == b:
            raise err(f"link {a}-{b}: a link joins two different switches")
        if frozenset((a, b)) in pairs:
            raise err(
                f"link {a}-{b}: a second link between the same switches (the testbed names ports by peer)"
            )
        pairs.add(frozenset((a, b)))
        ra, rb = find(a), find(b)
        if ra == rb and forwarding == "bridge":
            raise err(
                f"link {a}-{b}: closes a loop; the testbed's bridges need a loop-free topology "
                '(testbed.forwarding = "route" makes the switches routers, which take loops)'
            )
        parent[ra] = rb
    mgmt = ipaddress.IPv4Network(str(tb.get("mgmt", f"{cip}/24")), strict=False)
    if cip not in mgmt:
        raise err(f"testbed.mgmt: {mgmt} does not contain the controller address {cip}")
    try:
        link_net = ipaddress.IPv4Network(str(tb.get("link_net", "10.255.0.0/16")))
    except ValueError as e:
        raise err(f"testbed.link_net: {e}") from None
    if forwarding == "route":
        need = 2 * (len(hosts) + len(links))
        if link_net.num_addresses < need:
            raise err(
                f"testbed.link_net: {link_net} has fewer than the {need} addresses the routers' ports need"
            )
        if link_net.overlaps(mgmt):
            raise err(f"testbed.link_net: {link_net} overlaps testbed.mgmt {mgmt}")
        for h in hosts:
            nets = [ipaddress.IPv4Network(h.addr)] + [
                ipaddress.IPv4Network(g, strict=False) for g in h.guests
            ]
            bad = next((n for n in nets if n.overlaps(link_net) or n.overlaps(mgmt)), None)
            if bad is not None:
                raise err(
                    f"host '{h.name}': {bad} overlaps testbed.link_net {link_net} or testbed.mgmt {mgmt}"
                )
    return TestbedTopology(
        path=path,
        prefix=prefix,
        hosts=tuple(hosts),
        switches=switches,
        links=links,
        controller_ip=str(cip),
        controller_port=cport,
        buffer_bytes=int(tb.get("buffer_bytes", 32768)),
        host_queue_bytes=int(tb.get("host_queue_bytes", 262144)),
        data_prefix_len=int(tb.get("data_prefix_len", 16)),
        mgmt_net=mgmt,
        forwarding=forwarding,
        link_net=link_net,
        text=text,
    )


def star_toml(
    n_hosts: int,
    *,
    rate_mbps: float = 100,
    buffer_bytes: int = 32768,
    mode: str = "timeslice",
    slice_ms: float = 2.0,
    prefix: str = "xco",
    extra_control: str = "",
    controller: str = "10.200.0.1:7400",
) -> str:
    """A star topology file: hosts h1..hN on switch s1; ``controller`` is the
    controller's address, and with it the management network (its /24)."""
    lines = [
        "# generated by xco: a star of hosts on one switch",
        "[control]",
        f'controller = "{controller}"',
        f'mode = "{mode}"',
        f"slice_ms = {slice_ms}",
        extra_control.strip(),
        "",
        "[testbed]",
        f'prefix = "{prefix}"',
        f"buffer_bytes = {buffer_bytes}",
        "",
        "[[switch]]",
        'name = "s1"',
    ]
    for i in range(1, n_hosts + 1):
        lines += [
            "",
            "[[host]]",
            f'name = "h{i}"',
            f'addr = "10.0.0.{i}"',
            'switch = "s1"',
            f"rate_mbps = {rate_mbps}",
        ]
    return "\n".join(x for x in lines if x is not None) + "\n"


def fattree_toml(
    k: int = 4,
    *,
    rate_mbps: float = 100,
    buffer_bytes: int = 16384,
    routing: str = "address-bits",
    prefix: str = "xft",
    mode: str = "timeslice",
    slice_ms: float = 2.0,
) -> str:
    """A routed k-ary fat-tree topology file: (k/2)^2 core switches ``cJ``, per pod ``p``
    k/2 aggregation switches ``apI`` and k/2 edge switches ``epI``, k/2 hosts per edge
    switch (``hN`` at ``10.p.e.(i+2)``), every link ``rate_mbps``; k up to 10."""
    if k < 2 or k % 2 or k > 10:
        raise TopologyError(f"fat-tree k: {k} must be an even number from 2 to 10")
    half = k // 2
    lines = [
        f"# generated by xco (topo.fattree_toml): a routed k = {k} fat-tree, {k**3 // 4} hosts,",
        f"# {5 * k * k // 4} switches, every link {rate_mbps:g} Mbit/s, a {buffer_bytes}-byte drop-tail",
        "# buffer on every switch egress port; the routers' routes are the paths of [topology] routing.",
        "",
        "[control]",
        'controller = "10.200.0.1:7400"',
        f'mode = "{mode}"',
        f"slice_ms = {slice_ms}",
        "",
        "[topology]",
        f'routing = "{routing}"',
        "",
        "[testbed]",
        f'prefix = "{prefix}"',
        'forwarding = "route"',
        f"buffer_bytes = {buffer_bytes}",
        'link_net = "10.255.0.0/16"',
    ]
    cores = [f"c{j}" for j in range(half * half)]
    aggs = [[f"a{p}{i}" for i in range(half)] for p in range(k)]
    edges = [[f"e{p}{i}" for i in range(half)] for p in range(k)]
    for name in cores + [s for pod in aggs for s in pod] + [s for pod in edges for s in pod]:
        lines += ["", "[[switch]]", f'name = "{name}"']
    n = 0
    for p in range(k):
        for e in range(half):
            for i in range(half):
                n += 1
                lines += ["", "[[host]]", f'name = "h{n}"', f'addr = "10.{p}.{e}.{i + 2}"',
                          f'switch = "{edges[p][e]}"', f"rate_mbps = {rate_mbps:g}"]  # fmt: skip

    def link(a: str, b: str) -> None:
        lines.extend(["", "[[link]]", f'a = "{a}"', f'b = "{b}"', f"rate_mbps = {rate_mbps:g}"])

    for p in range(k):
        for e in range(half):
            for a in range(half):
                link(edges[p][e], aggs[p][a])
    for p in range(k):
        for a in range(half):
            for j in range(half):
                link(aggs[p][a], cores[a * half + j])
    return "\n".join(lines) + "\n"
