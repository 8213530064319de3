"""The routed testbed's forwarding state, compiled from the one routing layer.

With ``[testbed] forwarding = "route"`` every switch is a namespace that
forwards IPv4. Its routes are not computed here: :func:`plan` asks the real
controller's parser (``xco._native.topology_paths``, i.e. ``xco-daemon``'s
``Topology`` and ``xco-core``'s router) for the path of every host pair — the
paths the XCo controller schedules for the file's ``[topology] routing`` — and
compiles them into static routes that make every packet of a pair take exactly
that path.

What a switch must know to forward a packet depends on the routing mode, so
each switch gets the coarsest key that reproduces all paths through it:

- ``dst`` — the next hop depends on the destination only (``address-bits``):
  plain destination routes in the main table;
- ``iif`` — on the input port and the destination (``equal-length-dest``, where
  a packet climbs through a switch and later descends through it again):
  one table per input port, chosen by ``ip rule iif PORT``;
- ``src`` — on the source and the destination (``ecmp``: the controller hashes
  each host pair onto one of the shortest paths, so a switch must see the
  source too): one table per source host, chosen by ``ip rule from SRC``;
- ``iif+src`` — on all three (``equal-length-flow``), ``ip rule iif PORT from SRC``.

ECMP therefore means the controller's per-host-pair choice, installed as
source routes — not Linux multipath routes, whose per-flow hash the
controller could not know, so it would schedule paths packets do not take.

Addresses: every link gets two addresses from ``testbed.link_net`` (undirected
link ``u`` -> ``.2u`` and ``.2u+1``); switch ports on switch links are /31s,
a switch's port toward a host holds a /32 and routes the host's own address
(and guest prefixes) out of that port; a host keeps its address as a /32 with
a default route via its switch port. :func:`hops` names the (input port,
output port) each router on a pair's path must forward the pair's packets
between, so a test can count them there.

Destinations no path crosses a switch for (a core switch carries only some
destinations under ``address-bits``) get a shortest-path main-table route,
only for the router's own packets (ICMP errors). A TTL trace does not show
the paths of the ``iif`` kinds: Linux routes an ICMP error as the reverse of
the offending packet entering from its destination's side, which under
equal-length routing is a climb, not the way back.
"""

from __future__ import annotations

import ipaddress
from collections import deque
from dataclasses import dataclass, field

from .topo import TestbedTopology, TopologyError

KINDS = ("dst", "iif", "src", "iif+src")
TABLE_BASE = 1000  # policy tables and rule preferences start here (main is 254)


def host_port(host: str) -> str:
    """A switch's port toward ``host``."""
    return f"p-{host}"[:15]


def trunk_port(peer: str) -> str:
    """A switch's port toward switch ``peer``."""
    return f"t-{peer}"[:15]


@dataclass
class Plan:
    """The routed testbed of one topology: addresses, routes and rules per namespace."""

    nodes: list[str]
    hosts: int
    links: list[tuple[int, int]]  # directed link id -> (tail node, head node)
    paths: dict[tuple[int, int], list[int]]  # (src host, dst host) -> link ids
    routing: str
    kind: dict[str, str] = field(default_factory=dict)  # switch -> one of KINDS
    # per namespace (host or switch name): `ip -batch` lines
    batch: dict[str, list[str]] = field(default_factory=dict)

    def is_host(self, n: int) -> bool:
        return n < self.hosts

    def dev(self, link: int) -> str:
        """The device at the tail of directed ``link``."""
        t, h = self.links[link]
        if self.is_host(t):
            return "eth0"
        return host_port(self.nodes[h]) if self.is_host(h) else trunk_port(self.nodes[h])

    def addr(self, link: int, node: int) -> str:
        """The address of ``node``'s end of ``link`` (a switch's port address)."""
        u = link // 2
        return str(self.base + 2 * u + (0 if self.links[2 * u][0] == node else 1))

    base: ipaddress.IPv4Address = ipaddress.IPv4Address("10.255.0.0")


def _paths(topo: TestbedTopology) -> dict:
    from .. import _native

    if not topo.text:
        raise TopologyError(f"{topo.path}: a routed testbed needs the file's text (load it with topo.load)")
    try:
        return _native.topology_paths(topo.text)
    except ValueError as e:
        raise TopologyError(f"{topo.path}: {e}") from None


def plan(topo: TestbedTopology) -> Plan:
    """The routed testbed of ``topo``: the controller's paths compiled into routes."""
    r = _paths(topo)
    p = Plan(
        nodes=list(r["nodes"]),
        hosts=len(topo.hosts),
        links=[tuple(x) for x in r["links"]],
        paths={(s, d): list(ls) for s, d, ls in r["paths"]},
        routing=r["routing"],
        base=topo.link_net.network_address,
    )
    for u in range(len(p.links) // 2):
        a, b = p.links[2 * u]
        if p.links[2 * u + 1] != (b, a):
            raise TopologyError(
                f"{topo.path}: link {2 * u} and {2 * u + 1} are not one link's two directions"
            )
    by_name = {h.name: h for h in topo.hosts}
    spec = [by_name[p.nodes[i]] for i in range(p.hosts)]
    prefixes = [[f"{h.addr}/32", *h.guests] for h in spec]

    # hosts: own address as a /32, default via the switch port
    for i, h in enumerate(spec):
        up = next(link for link, (t, _) in enumerate(p.links) if t == i)
        sw = p.links[up][1]
        p.batch[h.name] = [
            f"addr add {h.addr}/32 dev eth0",
            f"route add default via {p.addr(up, sw)} dev eth0 onlink",
        ]
    # switches: port addresses
    for n in range(p.hosts, len(p.nodes)):
        lines = []
        for link, (t, h) in enumerate(p.links):
            if t != n:
                continue
            plen = 32 if p.is_host(h) else 31
            lines.append(f"addr add {p.addr(link, n)}/{plen} dev {p.dev(link)}")
        p.batch[p.nodes[n]] = lines

    # (in link, src, dst) -> out link, per switch, from every path
    entries: dict[int, dict[tuple[int, int, int], int]] = {n: {} for n in range(p.hosts, len(p.nodes))}
    for (s, d), ls in sorted(p.paths.items()):
        for i in range(1, len(ls)):
            entries[p.links[ls[i]][0]][(ls[i - 1], s, d)] = ls[i]

    def route(out: int, dst_prefix: str, dst_host: int, table: int | None) -> str:
        head = p.links[out][1]
        t = f" table {table}" if table is not None else ""
        if p.is_host(head):
            if dst_prefix.endswith("/32") and dst_prefix[:-3] == spec[head].addr:
                return f"route add {dst_prefix} dev {p.dev(out)}{t}"
            return f"route add {dst_prefix} via {spec[head].addr} dev {p.dev(out)} onlink{t}"
        return f"route add {dst_prefix} via {p.addr(out, head)} dev {p.dev(out)}{t}"

    for n, ent in entries.items():
        kind, table_of = _coarsest(ent)
        name = p.nodes[n]
        p.kind[name] = kind
        lines = p.batch[name]
        # main table: every destination (the path's choice where one crosses, else shortest)
        main: dict[int, int] = {}
        for (_, _, d), out in sorted(ent.items()):
            main.setdefault(d, out)
        for d in range(p.hosts):
            if d not in main:
                main[d] = _shortest_out(p, n, d)
        for d, out in sorted(main.items()):
            lines += [route(out, pfx, d, None) for pfx in prefixes[d]]
        if kind == "dst":
            continue
        tables: dict[tuple, int] = {}
        pref = TABLE_BASE
        for key, out in sorted(table_of.items()):
            sel = key[:-1]  # (in link,), (src,) or (in link, src)
            if sel not in tables:
                tables[sel] = TABLE_BASE + len(tables)
                tab = tables[sel]
                iif = f"iif {p.dev(sel[0] ^ 1)} " if kind in ("iif", "iif+src") else ""
                srcs = prefixes[sel[-1]] if kind in ("src", "iif+src") else [None]
                for sp in srcs:
                    frm = f"from {sp} " if sp else ""
                    lines.append(f"rule add {iif}{frm}lookup {tab} pref {pref}")
                    pref += 1
            d = key[-1]
            lines += [route(out, pfx, d, tables[sel]) for pfx in prefixes[d]]
    return p


def _coarsest(ent: dict[tuple[int, int, int], int]) -> tuple[str, dict[tuple, int]]:
    """The coarsest key (see the module doc) that maps every entry to its out link."""
    keys = {
        "dst": lambda i, s, d: (d,),
        "iif": lambda i, s, d: (i, d),
        "src": lambda i, s, d: (s, d),
        "iif+src": lambda i, s, d: (i, s, d),
    }
    for kind in KINDS:
        f = keys[kind]
        table: dict[tuple, int] = {}
        if all(table.setdefault(f(*k), out) == out for k, out in ent.items()):
            return kind, table
    raise AssertionError("unreachable: (in link, src, dst) determines the next hop of a path")


def _shortest_out(p: Plan, n: int, d: int) -> int:
    """The first link (in id order) of a shortest path from switch ``n`` to host ``d``
    (for the router's own packets to a destination no path sends through it)."""
    dist = {d: 0}
    q = deque([d])
    while q:
        v = q.popleft()
        if v != d and p.is_host(v):
            continue
        for t, h in p.links:
            if h == v and t not in dist:
                dist[t] = dist[v] + 1
                q.append(t)
    for link, (t, h) in enumerate(p.links):
        if t == n and h in dist and dist[h] == dist[n] - 1 and (h == d or not p.is_host(h)):
            return link
    raise TopologyError(f"switch {p.nodes[n]} cannot reach host {p.nodes[d]}")


def hops(p: Plan, s: int, d: int) -> list[tuple[str, str, str]]:
    """(switch, input port, output port) of every switch on host ``s``'s path to host ``d``."""
    ls = p.paths[(s, d)]
    return [(p.nodes[p.links[ls[i]][0]], p.dev(ls[i - 1] ^ 1), p.dev(ls[i])) for i in range(1, len(ls))]
