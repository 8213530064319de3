"""The routed testbed on real namespaces (root): a k = 4 fat-tree of routers
whose static routes are the controller's paths comes up, every host pair
pings along exactly the path the routing layer computes, and down leaves
nothing behind.

Per-hop counters check the paths: in every router's FORWARD chain, for every
host pair, one rule counts the pair's packets between the input and output
port its path names there, and one after it counts the pair's packets
anywhere else. Every host pings every other host PINGS times; then each
expected counter must read 2 x PINGS (the requests of s's pings and the
replies to d's) and every other counter 0.

Up and down run inside a scratch network namespace of the test's own
(``nsenter --net``) standing in for the root namespace, so the exact listing
of "root" links before and after can be compared; the testbed's namespaces
carry a random prefix of the test's own, and only names it generates are
removed afterwards."""

from __future__ import annotations

import json
import os
import secrets
import subprocess
import sys
import time

import pytest

from xco.testbed import netns, routes, topo

PINGS = 3


@pytest.fixture(autouse=True)
def _need_root():
    if os.geteuid() != 0:
        pytest.fail("real-host tests need root (network namespaces); CI runs them as root")


def _netns_names() -> set[str]:
    out = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True, check=True).stdout
    return {line.split()[0] for line in out.splitlines() if line.strip()}


def _links_in(ns: str) -> dict[str, str]:
    out = subprocess.run(["ip", "-n", ns, "-j", "link", "show"], capture_output=True, text=True, check=True)
    return {d["ifname"]: d.get("ifalias", "") for d in json.loads(out.stdout)}


@pytest.fixture
def scratch():
    """(prefix, scratch namespace): the prefix no present namespace uses; afterwards exactly the
    namespaces this test can have made are removed, by exact name."""
    for _ in range(50):
        p = "xr" + "".join(secrets.choice("0123456789") for _ in range(4))
        if not any(n.startswith(f"{p}-") or n == f"scratch-{p}" for n in _netns_names()):
            break
    else:
        pytest.fail("no free scratch prefix")
    s = f"scratch-{p}"
    subprocess.run(["ip", "netns", "add", s], check=True)
    owned = [s]
    try:
        yield p, s, owned
    finally:
        present = _netns_names()
        for ns in owned:
            if ns in present:
                subprocess.run(["ip", "netns", "del", ns], check=False)


def _count_rules(t: topo.TestbedTopology, plan: routes.Plan) -> dict[str, str]:
    """iptables-restore input per router: the expected-path and elsewhere counters of every pair."""
    addr = {h.name: h.addr for h in t.hosts}
    rules: dict[str, list[str]] = {plan.nodes[n]: [] for n in range(plan.hosts, len(plan.nodes))}
    for s, d in sorted(plan.paths):
        sd = f"-s {addr[plan.nodes[s]]}/32 -d {addr[plan.nodes[d]]}/32"
        for sw, i, o in routes.hops(plan, s, d):  # a switch may be crossed twice (up, then down)
            rules[sw].append(f"-A FORWARD {sd} -i {i} -o {o} -j RETURN")
        for lines in rules.values():
            lines.append(f"-A FORWARD {sd} -j RETURN")
    return {
        sw: "*filter\n:FORWARD ACCEPT [0:0]\n" + "\n".join(lines) + "\nCOMMIT\n"
        for sw, lines in rules.items()
    }


def _counters(ns: str) -> list[tuple[int, str]]:
    """(packets, rule) of every rule in ``ns``'s FORWARD chain."""
    out = netns.sh("iptables", "-w", "-S", "FORWARD", "-v", ns=ns).stdout
    rows = []
    for line in out.splitlines():
        if line.startswith("-A FORWARD"):
            w = line.split()
            c = w.index("-c")
            rows.append((int(w[c + 1]), " ".join(w[2:c])))
    return rows


@pytest.mark.parametrize("mode", ["address-bits", "ecmp", "equal-length-flow"])
def test_routed_fattree_pings_every_pair_along_the_routing_layers_path_and_down_leaves_nothing(
    scratch, tmp_path, mode
):
    p, s, owned = scratch
    path = tmp_path / "ft.toml"
    path.write_text(topo.fattree_toml(4, routing=mode, prefix=p))
    t = topo.load(path)
    ours = list(netns.names(t).namespaces)
    owned += ours
    assert len(ours) == 36  # 16 hosts + 20 routers

    def xco(*args: str) -> subprocess.CompletedProcess:
        cmd = ["nsenter", f"--net=/run/netns/{s}", sys.executable, "-m", "xco.cli", *args]
        return subprocess.run(cmd, capture_output=True, text=True, timeout=300)

    ns_before, links_before = _netns_names(), _links_in(s)
    t0 = time.monotonic()
    r = xco("testbed", "up", str(path))
    t_up = time.monotonic() - t0
    assert r.returncode == 0, r.stdout + r.stderr
    try:
        assert set(ours) <= _netns_names()
        links = _links_in(s)
        for name in netns.names(t).root_links:
            assert links[name] == netns.topo_mark(t), name
        plan = routes.plan(t)
        for sw, text in _count_rules(t, plan).items():
            subprocess.run(["ip", "netns", "exec", netns.ns_name(p, sw), "iptables-restore", "-w"],
                           input=text, text=True, check=True)  # fmt: skip
        procs = []
        for h in t.hosts:
            dsts = " ".join(o.addr for o in t.hosts if o.name != h.name)
            ping = f"ping -q -n -c {PINGS} -i 0.01 -W 2 $d >/dev/null || echo unreachable $d"
            cmd = [
                "ip",
                "netns",
                "exec",
                netns.ns_name(p, h.name),
                "sh",
                "-c",
                f"for d in {dsts}; do {ping}; done",
            ]
            procs.append(subprocess.Popen(cmd, stdout=subprocess.PIPE, text=True))
        failed = [line for pr in procs for line in pr.communicate(timeout=300)[0].splitlines()]
        assert failed == [], failed
        on_path = 0
        for sw in plan.kind:
            for packets, rule in _counters(netns.ns_name(p, sw)):
                expected = 2 * PINGS if " -i " in rule else 0
                assert packets == expected, (mode, sw, rule, packets)
                on_path += " -i " in rule
        # every pair's path crosses 1, 3 or 5 switches (equal-length: always 5)
        assert on_path == sum(len(ls) - 1 for ls in plan.paths.values())
        assert {len(ls) for ls in plan.paths.values()} == ({6} if mode.startswith("equal") else {2, 4, 6})
    finally:
        t0 = time.monotonic()
        r = xco("testbed", "down", str(path))
        t_down = time.monotonic() - t0
    assert r.returncode == 0, r.stdout + r.stderr
    assert _links_in(s) == links_before, "down removed or left links"
    after = _netns_names()
    assert not {n for n in after if n.startswith(f"{p}-")}, "a namespace of the testbed survived down"
    assert ns_before - after == set(), "down removed a namespace it did not make"
    print(f"\nrouted fat-tree k=4 ({mode}): up {t_up:.1f} s, down {t_down:.1f} s (wall)")


def test_routed_ring_with_a_guest_carries_traffic_both_ways_and_down_leaves_nothing(scratch, tmp_path):
    from test_testbed_routes import RING

    p, s, owned = scratch
    path = tmp_path / "ring.toml"
    path.write_text(RING.replace('prefix = "xring"', f'prefix = "{p}"'))
    t = topo.load(path)
    owned += list(netns.names(t).namespaces)
    ns_before, links_before = _netns_names(), _links_in(s)
    cmd = ["nsenter", f"--net=/run/netns/{s}", sys.executable, "-m", "xco.cli", "testbed"]
    r = subprocess.run([*cmd, "up", str(path)], capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stdout + r.stderr
    try:
        for src, dst in (("h1", "10.0.0.2"), ("h1", "10.1.3.2"), ("h3-g0", "10.0.0.1"), ("h2", "10.0.0.3")):
            netns.sh("ping", "-c1", "-W2", dst, ns=netns.ns_name(p, src))
    finally:
        r = subprocess.run([*cmd, "down", str(path)], capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stdout + r.stderr
    assert _links_in(s) == links_before
    assert not {n for n in _netns_names() if n.startswith(f"{p}-")}
    assert ns_before - _netns_names() == set()
