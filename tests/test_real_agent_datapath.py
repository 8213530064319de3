"""The agent's data path at full speed on real hosts: a TCP transfer gated by
the agent on one veth path, with offloads on (the agent sees whole GSO
packets), arrives byte for byte.

Network namespaces are built inside the test and removed after it; traffic
stays inside them; the transfer is bounded in bytes and every wait in time.
No throughput is asserted (the machine is shared): only that every byte
arrived, checked by a SHA-256 of the stream at both ends, and what the
agent's counters say about it. Needs root, iproute2, iptables, ethtool and a
built xco-daemon.
"""

from __future__ import annotations

import json
import os
import time
import urllib.request

import pytest

from xco.testbed import daemons, netns, routes, topo


@pytest.fixture(autouse=True)
def _need_root():
    if os.geteuid() != 0:
        pytest.fail("real-host tests need root (network namespaces, iptables); CI runs them as root")


# a sink: one connection, read to EOF; prints the byte count and the stream's SHA-256
SINK = """
import hashlib, json, socket
ls = socket.socket(); ls.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
ls.bind(("0.0.0.0", 5410)); ls.listen(1); ls.settimeout(30)
c, _ = ls.accept(); c.settimeout(30)
h = hashlib.sha256(); n = 0
while True:
    b = c.recv(1 << 20)
    if not b:
        break
    h.update(b); n += len(b)
print(json.dumps({"bytes": n, "sha256": h.hexdigest()}))
"""

# a source: N bytes of a seeded pseudo-random stream (each 1-MiB block different), as fast as
# TCP takes them; prints what it sent and its SHA-256
SOURCE = """
import hashlib, json, random, socket, sys, time
dst, n = sys.argv[1], int(sys.argv[2])
rnd = random.Random(19)
block = bytearray(rnd.randbytes(1 << 20))
for _ in range(200):  # the sink may not listen yet: retry for up to 10 s
    try:
        s = socket.create_connection((dst, 5410), timeout=30)
        break
    except ConnectionRefusedError:
        time.sleep(0.05)
else:
    sys.exit("the sink never listened")
h = hashlib.sha256(); left = n; k = 0
while left:
    block[:8] = k.to_bytes(8, "little"); k += 1
    chunk = memoryview(block)[: min(left, len(block))]
    s.sendall(chunk); h.update(chunk); left -= len(chunk)
s.close()
print(json.dumps({"bytes": n, "sha256": h.hexdigest()}))
"""

SIZE = 256 << 20  # a fraction of a second at multi-gigabit rates, a few seconds at worst


@pytest.fixture
def fast_pair(tmp_path):
    """Hosts h1, h2 on switch s1: no rate limit on the path, TSO/GSO/GRO on."""
    path = tmp_path / "pair.toml"
    path.write_text(topo.star_toml(2, rate_mbps=100_000, prefix="xdp", slice_ms=2.0,
                                   extra_control="fail_open_ms = 5000"))  # fmt: skip
    t = topo.load(path)
    tb = netns.up(t)
    try:
        for where, dev in (("h1", "eth0"), ("s1", routes.host_port("h1")),
                           ("s1", routes.host_port("h2")), ("h2", "eth0")):  # fmt: skip
            netns.sh("ethtool", "-K", dev, "tso", "on", "gso", "on", "gro", "on", ns=tb.ns(where))
            netns.sh("tc", "qdisc", "del", "dev", dev, "root", ns=tb.ns(where))
        yield tb
    finally:
        tb.stop_all()
        netns.down(t)
        assert netns.leftovers(t) == []


def _metric(text: str, name_and_labels: str) -> float:
    for line in text.splitlines():
        if line.startswith(name_and_labels + " "):
            return float(line.split()[-1])
    raise AssertionError(f"{name_and_labels} not in metrics:\n{text}")


def test_a_tcp_transfer_through_the_agent_at_full_speed_delivers_every_byte(fast_pair, tmp_path):
    tb = fast_pair
    x = daemons.Xco(tb, tmp_path / "run", agents=[])
    metrics = f"{tb.topo.mgmt_net.network_address + 10}:9471"  # h1's management address
    x.start_controller()
    x.start_agent("h1", "--metrics", metrics)
    try:
        x.wait_ready()
        sink = tb.spawn("h2", ["python3", "-c", SINK], tmp_path / "sink.json", split_stderr=True)
        src = tb.spawn("h1", ["python3", "-c", SOURCE, tb.topo.host("h2").addr, str(SIZE)],
                       tmp_path / "src.json", split_stderr=True)  # fmt: skip
        assert src.wait(60) == 0, (tmp_path / "src.json.err").read_text()
        assert sink.wait(60) == 0, (tmp_path / "sink.json.err").read_text()
        # the agent's /metrics (a snapshot every 100 ms): everything held was released
        deadline = time.monotonic() + 10
        while True:
            m = urllib.request.urlopen(f"http://{metrics}/metrics", timeout=5).read().decode()
            h1 = '{host="h1",dest="h2"}'
            held = _metric(m, "xco_agent_held_packets_total" + h1)
            if held > 0 and held == _metric(m, "xco_agent_released_packets_total" + h1):
                break
            assert time.monotonic() < deadline, m
            time.sleep(0.1)
    finally:
        x.__exit__(None, None, None)
    one = '{host="h1"}'
    assert _metric(m, "xco_agent_gso_packets_total" + one) > 0, m
    assert _metric(m, 'xco_agent_verdict_messages_total{host="h1",kind="batch"}') > 0, m
    assert _metric(m, "xco_agent_kernel_dropped_packets_total" + one) == 0, m
    assert _metric(m, "xco_agent_kernel_bypassed_packets_total" + one) == 0, m
    assert _metric(m, "xco_agent_kernel_queue_max_packets" + one) == 262_144, m
    assert _metric(m, "xco_agent_watchdog_releases_total" + one) == 0, m
    assert _metric(m, "xco_agent_bypass_limit_packets_per_second" + one) == 10_000, m  # the default
    got = json.loads((tmp_path / "sink.json").read_text())
    sent = json.loads((tmp_path / "src.json").read_text())
    assert got["bytes"] == SIZE, f"received {got['bytes']} of {SIZE} bytes"
    assert got["sha256"] == sent["sha256"], "the received stream differs from the sent one"
    st = daemons.log_fields(x.dir / "agent-h1.log", "stop")
    assert st, (x.dir / "agent-h1.log").read_text()
    # the transfer went through the gate: held, then all of it released, nothing refused
    assert int(st["held"]) > 0 and st["held"] == st["released"], st
    assert st["held_bytes"] == st["released_bytes"] and st["release_errors"] == "0", st
    # whole GSO packets reached the agent, and runs of them were accepted by batch verdicts
    assert int(st["gso_packets"]) > 0 and int(st["batch_verdicts"]) > 0, st
    # nothing dropped by the kernel at the queue, nothing passed around the agent
    assert st["kernel_dropped"] == "0" and st["kernel_bypassed"] == "0", st


def test_the_stream_checksum_would_see_a_changed_byte(tmp_path):
    """The check above is not vacuous: the source's stream is not constant, so a lost,
    repeated or reordered block changes the sink's digest."""
    import hashlib
    import random

    rnd = random.Random(19)
    block = bytearray(rnd.randbytes(1 << 20))
    blocks = []
    for k in range(3):
        block[:8] = k.to_bytes(8, "little")
        blocks.append(bytes(block))
    whole = hashlib.sha256(b"".join(blocks)).hexdigest()
    assert hashlib.sha256(b"".join([blocks[0], blocks[2], blocks[1]])).hexdigest() != whole
    assert hashlib.sha256(b"".join([blocks[0], blocks[0], blocks[2]])).hexdigest() != whole
