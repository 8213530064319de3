"""One gate for everything a host sends to coordinated destinations (issue 29,
item 1), on real hosts: a flood of small UDP packets gets at most the
bypass token bucket past a closed gate, IPv6 TCP to a coordinated host is
held like IPv4, and a guest that spoofs the controller's source address and
port is held (control traffic passes by its socket mark, not its address, and a
guest cannot give its packets that mark).

In each test h1's agent runs without a controller (``fail_open_ms`` a minute
away), so its gate to h2 stays closed: whatever reaches h2 meanwhile went
around the gate. Each test first sends the same traffic with no agent, to
show it would arrive (the measurement sees traffic that is not held).
Namespaces are built inside each test and removed after it; all traffic
stays in them, every load is bounded in time. Needs root, iproute2,
iptables/ip6tables and a built xco-daemon.
"""

from __future__ import annotations

import dataclasses
import json
import os
import time

import pytest

from xco.testbed import daemons, netns, topo


@pytest.fixture(autouse=True)
def _need_root():
    if os.geteuid() != 0:
        pytest.fail("real-host tests need root (network namespaces, iptables); CI runs them as root")


BYPASS_PPS = 2000
CLOSED = "fail_open_ms = 60000"


@pytest.fixture
def build(tmp_path, request):
    made = []

    def make(text: str) -> netns.Testbed:
        path = tmp_path / f"topo{len(made)}.toml"
        path.write_text(text)
        t = topo.load(path)
        tb = netns.up(t)
        made.append(tb)
        return tb

    yield make
    for tb in made:
        tb.stop_all()
        netns.down(tb.topo)
        assert netns.leftovers(tb.topo) == []


def _prefix(request) -> str:
    return "xg" + str(abs(hash(request.node.name)) % 9999)


# counts UDP datagrams on a port for SECONDS; prints the monotonic time of each
UDP_SINK = """
import json, socket, sys, time
fam = socket.AF_INET6 if ":" in sys.argv[1] else socket.AF_INET
s = socket.socket(fam, socket.SOCK_DGRAM); s.bind((sys.argv[1], int(sys.argv[2]))); s.settimeout(0.1)
end = time.monotonic() + float(sys.argv[3]); got = []
while time.monotonic() < end:
    try:
        s.recv(65536); got.append(time.monotonic())
    except socket.timeout:
        pass
print(json.dumps(got))
"""

# sends SIZE-byte UDP payloads to DST:PORT for SECONDS, up to 30,000 a second (from SRC:SPORT and
# with firewall mark MARK if given);
# prints [datagrams the kernel took, start, end] (monotonic)
UDP_FLOOD = """
import json, socket, sys, time
dst, port, size, secs = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), float(sys.argv[4])
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
if len(sys.argv) > 5:
    s.bind((sys.argv[5], int(sys.argv[6])))
if len(sys.argv) > 7:  # a firewall mark on the socket (root in its namespace may set one)
    s.setsockopt(socket.SOL_SOCKET, 36, int(sys.argv[7], 0))  # SO_MARK
s.setblocking(False)  # held packets fill the send buffer: a blocking send would wait for them
pps = 30000  # at most: a flood of more than the kernel's queue holds (65,536 packets seen
# on 6.18) would pass by the queue's fail-open, which this test does not measure
buf = bytes(size); n = 0; t0 = time.monotonic(); end = t0 + secs
while (now := time.monotonic()) < end:
    if n > (now - t0) * pps:
        time.sleep(0.001)
        continue
    try:
        s.sendto(buf, (dst, port)); n += 1
    except OSError:
        time.sleep(0.0005)
print(json.dumps([n, t0, time.monotonic()]))
"""


def _udp(tb, tmp, name, src_ns, dst_ip, size, secs, bind=()) -> tuple[int, list[float], float, float]:
    """Flood from namespace ``src_ns`` to h2; returns (sent, receive times, start, end)."""
    sink_cmd = ["python3", "-c", UDP_SINK, "0.0.0.0", "5440", str(secs + 1.5)]
    sink = tb.spawn("h2", sink_cmd, tmp / f"{name}-sink.json", split_stderr=True)
    time.sleep(0.3)
    cmd = ["ip", "netns", "exec", src_ns, "python3", "-c", UDP_FLOOD, dst_ip, "5440", str(size), str(secs)]
    cmd += list(bind)
    flood = tb.spawn(None, cmd, tmp / f"{name}-flood.json", split_stderr=True)
    assert flood.wait(30) == 0, (tmp / f"{name}-flood.json.err").read_text()
    assert sink.wait(30) == 0, (tmp / f"{name}-sink.json.err").read_text()
    n, t0, t1 = json.loads((tmp / f"{name}-flood.json").read_text())
    return n, json.loads((tmp / f"{name}-sink.json").read_text()), t0, t1


def test_a_small_udp_flood_gets_at_most_the_bypass_bucket_past_a_closed_gate(build, tmp_path, request):
    text = topo.star_toml(2, prefix=_prefix(request), extra_control=f"{CLOSED}\nbypass_pps = {BYPASS_PPS}")
    # from a guest of h1: a local sender's held packets fill its own send buffer and stop
    # it after a few hundred; a guest's are forwarded (FORWARD) and never stop it
    tb = build(text.replace('addr = "10.0.0.1"\n', 'addr = "10.0.0.1"\nguests = ["10.1.1.0/24"]\n'))
    guest = tb.ns(netns.guest_name("h1", 0))
    secs = 1.5
    # 100-byte payloads: 128-byte IP packets, the largest the bypass takes (bypass_bytes 128)
    sent0, got0, _, _ = _udp(tb, tmp_path, "bare", guest, "10.0.0.2", 100, secs)
    x = daemons.Xco(tb, tmp_path / "run", agents=["h1"])
    x.start_agent("h1")
    x.wait_ready()
    sent, got, t0, t1 = _udp(tb, tmp_path, "gated", guest, "10.0.0.2", 100, secs)
    x.stop_agents()
    # the token bucket: its burst (10 ms of the rate, at least 8) plus the rate over the flood,
    # and one kernel tick (4 ms at HZ 250, the coarsest) of tokens: hashlimit counts in ticks
    bound = max(BYPASS_PPS // 100, 8) + BYPASS_PPS * (t1 - t0 + 0.004)
    passed = sum(1 for t in got if t <= t1 + 0.05)
    print(f"small UDP: no agent {len(got0)} of {sent0} arrived; closed gate {passed} of {sent} "
          f"(bucket bound {bound:.0f})")  # fmt: skip
    # the flood is faster than the bucket, so the test could fail
    assert len(got0) > 2 * bound and sent > 2 * bound, (len(got0), sent, bound)
    assert passed <= bound, f"{passed} small packets passed a closed gate (bound {bound:.0f})"
    st = daemons.log_fields(x.dir / "agent-h1.log", "stop")
    assert int(st["held"]) >= sent - bound - 10, st  # the rest were held (and released at stop)


def _link_local(tb: netns.Testbed, host: str) -> str:
    out = netns.sh("ip", "-6", "-o", "addr", "show", "dev", "eth0", "scope", "link", ns=tb.ns(host)).stdout
    return out.split("inet6 ")[1].split("/")[0]


TCP6_SINK = """
import json, socket, time
ls = socket.socket(socket.AF_INET6); ls.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
ls.bind(("::", 5430)); ls.listen(1); ls.settimeout(30)
c, _ = ls.accept(); c.settimeout(30); t0 = time.monotonic(); n = 0; prog = []
while True:
    b = c.recv(65536)
    if not b:
        break
    n += len(b); prog.append([time.monotonic(), n])
print(json.dumps({"bytes": n, "t0": t0, "progress": prog}))
"""

TCP6_SOURCE = """
import socket, sys
s = socket.create_connection((sys.argv[1], 5430), timeout=30)
n = int(sys.argv[2]); buf = bytes(65536); left = n
while left:
    left -= s.send(buf[: min(left, len(buf))])
s.close()
"""


def test_ipv6_tcp_to_a_coordinated_host_is_held_until_the_controller_permits_it(build, tmp_path, request):
    text = topo.star_toml(2, prefix=_prefix(request), extra_control=CLOSED)
    tb = build(text)
    for h in ("h1", "h2"):
        netns.sh("sysctl", "-qw", "net.ipv6.conf.eth0.disable_ipv6=0", ns=tb.ns(h))
    deadline = time.monotonic() + 5
    # the link-local addresses of both ends leave duplicate address detection (a
    # source whose own address is still tentative cannot connect: EADDRNOTAVAIL)
    for h in ("h1", "h2"):
        while True:
            out = netns.sh("ip", "-6", "-o", "addr", "show", "dev", "eth0", "scope", "link", ns=tb.ns(h))
            out = out.stdout
            if "inet6" in out and "tentative" not in out:
                break
            assert time.monotonic() < deadline, out
            time.sleep(0.1)
    ll1, ll2 = _link_local(tb, "h1"), _link_local(tb, "h2")
    # the daemons read a copy of the file that lists the hosts' IPv6 addresses
    six = tmp_path / "six.toml"
    six.write_text(
        text.replace('addr = "10.0.0.1"\n', f'addr = "10.0.0.1"\naddr6 = ["{ll1}"]\n').replace(
            'addr = "10.0.0.2"\n', f'addr = "10.0.0.2"\naddr6 = ["{ll2}"]\n'
        )
    )
    tb6 = dataclasses.replace(tb, topo=dataclasses.replace(tb.topo, path=six))
    size = 3 * 1024 * 1024
    x = daemons.Xco(tb6, tmp_path / "run", agents=["h1"])
    x.start_agent("h1")
    x.wait_ready()
    sink = tb.spawn("h2", ["python3", "-c", TCP6_SINK], tmp_path / "sink.json", split_stderr=True)
    time.sleep(0.3)
    src = tb.spawn("h1", ["python3", "-c", TCP6_SOURCE, f"{ll2}%eth0", str(size)], tmp_path / "src.log")
    time.sleep(1.0)
    assert sink.poll() is None, "the IPv6 transfer finished although its destination was paused"
    x.start_controller()
    t_permit = time.monotonic()
    assert src.wait(30) == 0, (tmp_path / "src.log").read_text()
    assert sink.wait(30) == 0, (tmp_path / "sink.json.err").read_text()
    x.stop_agents()
    tb.stop(x.controller)
    r = json.loads((tmp_path / "sink.json").read_text())
    assert r["bytes"] == size
    early = max((n for t, n in r["progress"] if t <= t_permit), default=0)
    print(f"IPv6 TCP: {early} bytes crossed while paused ({t_permit - r['t0']:.2f} s), all {size} after")
    assert t_permit - r["t0"] > 0.3, "the source connected too late to tell"
    assert early < 64 * 1024, f"{early} bytes crossed while paused"
    st = daemons.log_fields(x.dir / "agent-h1.log", "stop")
    assert int(st["held"]) > 0 and st["held"] == st["released"], st


def test_a_guest_spoofing_the_controller_s_address_port_and_mark_is_held(build, tmp_path, request):
    text = topo.star_toml(2, prefix=_prefix(request), extra_control=CLOSED).replace(
        'addr = "10.0.0.1"\n', 'addr = "10.0.0.1"\nguests = ["10.1.1.0/24"]\n'
    )
    tb = build(text)
    guest = tb.ns(netns.guest_name("h1", 0))
    ctl_ip, ctl_port = tb.topo.controller_ip, "7400"
    netns.sh("ip", "addr", "add", f"{ctl_ip}/32", "dev", "eth0", ns=guest)
    # the controller's address and port, and the control sockets' mark on the guest's socket:
    # a mark does not survive the crossing into h1's namespace
    spoof = (str(ctl_ip), ctl_port, "0x58430000")
    secs = 1.0
    # 1000-byte datagrams: too large for the small-packet bypass
    sent0, got0, _, _ = _udp(tb, tmp_path, "bare", guest, "10.0.0.2", 1000, secs, spoof)
    x = daemons.Xco(tb, tmp_path / "run", agents=["h1"])
    x.start_agent("h1")
    x.wait_ready()
    sent, got, _, t1 = _udp(tb, tmp_path, "gated", guest, "10.0.0.2", 1000, secs, spoof)
    x.stop_agents()
    passed = sum(1 for t in got if t <= t1 + 0.05)
    print(f"spoofed control source: no agent {len(got0)} of {sent0} arrived; closed gate {passed} of {sent}")
    # without an agent the spoofed datagrams arrive, so the test could fail
    assert len(got0) > 100, (len(got0), sent0)
    assert passed == 0, f"{passed} datagrams from a spoofed controller address passed a closed gate"
    st = daemons.log_fields(x.dir / "agent-h1.log", "stop")
    assert int(st["held"]) > 0, st
