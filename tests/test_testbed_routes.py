"""The routed testbed's forwarding state (:mod:`xco.testbed.routes`), checked
without root: the `ip` commands it would run are read back by a small
longest-prefix-match and policy-rule interpreter, and a packet of every host
pair is walked through them; it must cross exactly the links of the path the
controller schedules (``xco._native.topology_paths``) for each routing mode."""

from __future__ import annotations

import ipaddress
import subprocess
import sys
from pathlib import Path

import pytest
import tomllib

from xco.testbed import routes, topo

REPO = Path(__file__).resolve().parent.parent
MODES = ["address-bits", "ecmp", "equal-length-dest", "equal-length-flow"]


def _fattree(mode: str, k: int = 4) -> topo.TestbedTopology:
    text = topo.fattree_toml(k, routing=mode)
    return topo.parse(tomllib.loads(text), Path("ft.toml"), text)


class Fib:
    """One namespace's rules and routes as the batch lines set them."""

    def __init__(self, lines: list[str]):
        self.rules: list[tuple[int, str | None, ipaddress.IPv4Network | None, str]] = []
        self.tables: dict[str, list[tuple[ipaddress.IPv4Network, str, str | None]]] = {}
        self.addrs: dict[str, str] = {}
        for line in lines:
            w = line.split()
            opt = {
                w[i]: w[i + 1]
                for i in range(2, len(w) - 1)
                if w[i] in ("iif", "from", "lookup", "pref", "via", "dev", "table")
            }
            if w[:2] == ["addr", "add"]:
                self.addrs[w[2].split("/")[0]] = opt["dev"]
            elif w[:2] == ["rule", "add"]:
                frm = ipaddress.IPv4Network(opt["from"]) if "from" in opt else None
                self.rules.append((int(opt["pref"]), opt.get("iif"), frm, opt["lookup"]))
            elif w[:2] == ["route", "add"]:
                net = ipaddress.IPv4Network("0.0.0.0/0" if w[2] == "default" else w[2])
                self.tables.setdefault(opt.get("table", "main"), []).append((net, opt["dev"], opt.get("via")))
            else:
                raise AssertionError(f"unexpected command {line!r}")
        self.rules.sort()
        self.rules.append((32766, None, None, "main"))

    def lookup(self, iif: str | None, src: str, dst: str) -> tuple[str, str | None]:
        """(out device, next-hop address or None) as Linux's rules and longest match choose."""
        s, d = ipaddress.IPv4Address(src), ipaddress.IPv4Address(dst)
        for _, r_iif, frm, table in self.rules:
            if (r_iif is None or r_iif == iif) and (frm is None or s in frm):
                hits = [r for r in self.tables.get(table, []) if d in r[0]]
                if hits:
                    best = max(hits, key=lambda r: r[0].prefixlen)
                    assert sum(1 for r in hits if r[0].prefixlen == best[0].prefixlen) == 1, (table, dst)
                    return best[1], best[2]
        raise AssertionError(f"no route to {dst} from {src} (iif {iif})")


def _walk(
    p: routes.Plan, t: topo.TestbedTopology, s: int, d: int, fibs: dict[str, Fib], dst: str | None = None
) -> list[int]:
    """The directed links a packet from host s to host d (to ``dst``, one of d's guests' addresses,
    if given) crosses under the plan's state."""
    addr = {h.name: h.addr for h in t.hosts}
    src, dst = addr[p.nodes[s]], dst or addr[p.nodes[d]]
    # which node owns an address (hosts' own, switch ports'), and the link behind each (node, device)
    owner = {a: p.nodes.index(h) for h, a in addr.items()}
    for name, fib in fibs.items():
        owner.update({a: p.nodes.index(name) for a in fib.addrs})
    link_of = {(tail, p.dev(i)): i for i, (tail, _) in enumerate(p.links)}
    here, iif, crossed = s, None, []
    while here != d:
        assert len(crossed) <= len(p.links), "forwarding loop"
        dev, via = fibs[p.nodes[here]].lookup(iif, src, dst)
        link = link_of[(here, dev)]
        nxt = p.links[link][1]
        # the next hop lives behind that port (a guest's address: behind its host d)
        assert owner.get(via or dst, d) == nxt, (p.nodes[here], dev, via)
        crossed.append(link)
        iif = p.dev(link ^ 1)
        here = nxt
    return crossed


@pytest.mark.parametrize("mode", MODES)
def test_every_pair_crosses_exactly_the_controllers_path(mode):
    t = _fattree(mode)
    p = routes.plan(t)
    assert p.routing == mode and len(p.paths) == 16 * 15
    fibs = {name: Fib(lines) for name, lines in p.batch.items()}
    for (s, d), path in p.paths.items():
        assert _walk(p, t, s, d, fibs) == path, (mode, p.nodes[s], p.nodes[d])


def test_each_switch_keys_its_routes_as_coarsely_as_its_paths_allow():
    kinds = {mode: set(routes.plan(_fattree(mode)).kind.values()) for mode in MODES}
    assert kinds["address-bits"] == {"dst"}  # deterministic: destination routes only
    assert (
        "iif" in kinds["equal-length-dest"] and "src" not in kinds["equal-length-dest"]
    )  # climbs, then descends
    assert kinds["ecmp"] - {"dst", "iif"}, "the controller's per-pair hash needs the source somewhere"
    assert "iif+src" in kinds["equal-length-flow"]


def test_the_shipped_fattree4_file_is_the_generators_and_routed():
    path = REPO / "testbeds" / "fattree4.toml"
    assert path.read_text() == topo.fattree_toml(4)
    t = topo.load(path)
    assert (len(t.hosts), len(t.switches), len(t.links), t.routed) == (16, 20, 32, True)
    assert len({h.addr for h in t.hosts}) == 16


def test_bridged_testbeds_still_refuse_loops_and_routed_ones_take_them():
    d = tomllib.loads(topo.fattree_toml(4))
    d["testbed"]["forwarding"] = "bridge"
    with pytest.raises(topo.TopologyError, match=r"closes a loop.*forwarding = \"route\""):
        topo.parse(d, Path("ft.toml"))
    d["testbed"]["forwarding"] = "switch"
    with pytest.raises(topo.TopologyError, match="testbed.forwarding"):
        topo.parse(d, Path("ft.toml"))


@pytest.mark.parametrize(
    ("change", "field"),
    [
        (lambda d: d["testbed"].update(link_net="10.200.0.0/16"), "testbed.link_net"),  # the mgmt net
        (lambda d: d["testbed"].update(link_net="10.255.0.0/28"), "testbed.link_net"),  # too small
        (lambda d: d["testbed"].update(link_net="10.0.0.0/16"), "host 'h1'"),  # the hosts' addresses
        (lambda d: d["link"].append(dict(d["link"][0])), "a second link"),
        (lambda d: d["link"].append({"a": "c0", "b": "c0", "rate_mbps": 100}), "two different switches"),
    ],
)
def test_bad_routed_files_are_refused_naming_the_field(change, field):
    d = tomllib.loads(topo.fattree_toml(4))
    change(d)
    with pytest.raises(topo.TopologyError, match=field):
        topo.parse(d, Path("ft.toml"))


def test_cli_up_refuses_a_routing_mode_the_controller_refuses_with_exit_2(tmp_path):
    path = tmp_path / "ft.toml"
    path.write_text(topo.fattree_toml(4, routing="equal-length-packet"))
    # nothing on PATH: it cannot touch an interface
    env = {"PATH": str(tmp_path / "no-tools"), "PYTHONPATH": str(REPO / "python")}
    cmd = [sys.executable, "-m", "xco.cli", "testbed", "up", str(path)]
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=60, env=env)
    assert r.returncode == 2, (r.stdout, r.stderr)
    assert "topology.routing" in r.stderr and "Traceback" not in r.stderr, r.stderr
    assert len(r.stderr.strip().splitlines()) == 1, r.stderr


RING = """
[control]
controller = "10.200.0.1:7400"
[topology]
routing = "ecmp"
[testbed]
prefix = "xring"
forwarding = "route"
[[switch]]
name = "s1"
[[switch]]
name = "s2"
[[switch]]
name = "s3"
[[host]]
name = "h1"
addr = "10.0.0.1"
switch = "s1"
rate_mbps = 100
[[host]]
name = "h2"
addr = "10.0.0.2"
switch = "s2"
rate_mbps = 100
[[host]]
name = "h3"
addr = "10.0.0.3"
guests = ["10.1.3.0/24"]
switch = "s3"
rate_mbps = 100
[[link]]
a = "s1"
b = "s2"
rate_mbps = 100
[[link]]
a = "s2"
b = "s3"
rate_mbps = 100
[[link]]
a = "s3"
b = "s1"
rate_mbps = 100
"""


def test_a_ring_routes_hosts_and_guests_along_the_controllers_paths():
    t = topo.parse(tomllib.loads(RING), Path("ring.toml"), RING)
    p = routes.plan(t)
    fibs = {name: Fib(lines) for name, lines in p.batch.items()}
    for (s, d), path in p.paths.items():
        assert len(path) == 3  # host, the direct switch link, host: the ring's short way
        assert _walk(p, t, s, d, fibs) == path
    h3 = p.nodes.index("h3")
    for s in (p.nodes.index("h1"), p.nodes.index("h2")):
        assert _walk(p, t, s, h3, fibs, dst="10.1.3.2") == p.paths[(s, h3)]  # the guest, via its host
