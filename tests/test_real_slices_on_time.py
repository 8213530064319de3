"""Slices on time on real hosts (network namespaces built inside the test and
removed after it): a directive that carries its start opens the agent's gate
at that start, measured by timestamps at the receiving host, never before it;
a directive with no start applies on receipt.

The test plays the controller (it signs version-3 directives with the key the
master secret derives, as crates/xco-core/src/wire documents), so it chooses
the start offsets itself. Every namespace shares the system's monotonic
clock, so the receiver's timestamps and the test's send instants compare
directly. Needs root and the tools scripts/setup.sh installs; the Python
`cryptography` package signs as the controller. All traffic stays inside the
test's namespaces and every loop is bounded.
"""

from __future__ import annotations

import hashlib
import hmac
import itertools
import json
import os
import socket
import struct
import time

import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from xco.testbed import daemons, netns, topo

CONTROLLER_ID = 0xFFFFFFFF
OFFSET_S = 0.3  # the start offset the directive carries
SLICE_S = 0.4  # the slice it grants


@pytest.fixture(autouse=True)
def _need_root():
    if os.geteuid() != 0:
        pytest.fail("real-host tests need root (network namespaces, iptables); CI runs them as root")


# each testbed of this process gets a management /24 of its own
_SUBNETS = itertools.count(os.getpid() % 250)


@pytest.fixture
def testbed(tmp_path, request):
    made = []

    def make() -> netns.Testbed:
        prefix = "xo" + str(abs(hash(request.node.name)) % 9999)
        path = tmp_path / "topo.toml"
        text = topo.star_toml(2, prefix=prefix, slice_ms=10.0, extra_control="fail_open_ms = 60000")
        path.write_text(text.replace('"10.200.0.1:7400"', f'"10.234.{next(_SUBNETS) % 250}.1:7400"'))
        tb = netns.up(topo.load(path))
        made.append(tb)
        return tb

    yield make
    for tb in made:
        tb.stop_all()
        netns.down(tb.topo)
        assert netns.leftovers(tb.topo) == []


def _signing_key(x: daemons.Xco) -> Ed25519PrivateKey:
    master = bytes.fromhex(x.key.read_text().strip())
    return Ed25519PrivateKey.from_private_bytes(
        hmac.new(master, b"xco controller signing key v2", hashlib.sha256).digest()
    )


def _signed(sk: Ed25519PrivateKey, mtype: int, run: int, seq: int, payload: bytes, ver: int = 3) -> bytes:
    body = b"XC" + bytes([ver, mtype]) + struct.pack(">IQQH", CONTROLLER_ID, run, seq, len(payload)) + payload
    return body + sk.sign(body)


def _slice(host: int, epoch: int, start_in_s: float, dest: int, len_s: float, echo: tuple[int, int]) -> bytes:
    """A version-5 slice directive: host, epoch, start (ns after sending), the echo of the agent's
    message (its seq, when this controller read it, and now: monotonic ns; the agent bounds the
    directive's age from it), kind 1, dest, length, rate 0."""
    seq, read_ns = echo
    return (
        struct.pack(">IQQ", host, epoch, round(start_in_s * 1e9))
        + struct.pack(">QQQ", seq, read_ns, max(time.monotonic_ns(), read_ns))
        + struct.pack(">BIQQ", 1, dest, round(len_s * 1e9), 0)
    )


# a UDP sink: timestamps (system monotonic clock, shared by every namespace) of each datagram, as JSON
SINK = """
import json, socket, sys, time
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); s.bind(("0.0.0.0", 5500))
s.settimeout(float(sys.argv[1]))
ts = []
try:
    while True:
        s.recv(2048); ts.append(time.monotonic())
except socket.timeout:
    pass
print(json.dumps(ts))
"""

# a UDP source: a 1000-byte datagram (larger than bypass_bytes) every millisecond, a bounded number of
# times; non-blocking, as held datagrams fill its socket's send buffer (those are simply not sent)
SOURCE = """
import socket, sys, time
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); s.setblocking(False)
for _ in range(int(sys.argv[2])):
    try:
        s.sendto(bytes(1000), (sys.argv[1], 5500))
    except BlockingIOError:
        pass
    time.sleep(0.001)
"""


def _wait_for(pred, what: str, timeout: float = 10.0):
    deadline = time.monotonic() + timeout
    while not (v := pred()):
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.01)
    return v


def test_a_directive_with_a_start_opens_the_gate_at_that_start_never_before(testbed, tmp_path):
    tb = testbed()
    x = daemons.Xco(tb, tmp_path / "run", agents=[])
    sk = _signing_key(x)
    ctl = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    ctl.bind((tb.topo.controller_ip, tb.topo.controller_port))
    ctl.settimeout(5)
    try:
        x.start_agent("h1")
        log = x.dir / "agent-h1.log"
        _wait_for(lambda: "event=start" in log.read_text(), "the agent")
        # the join (type 1): answer with a signed hello to its nonce
        while True:
            d, agent = ctl.recvfrom(65536)
            if d[3] == 1:
                break
        nonce = struct.unpack(">Q", d[8:16])[0]
        run = 0x51CE
        ctl.sendto(_signed(sk, 7, run, 1, struct.pack(">IQ", 0, nonce)), agent)
        _wait_for(lambda: "event=controller_run" in log.read_text(), "the hello")
        sink = tb.spawn("h2", ["python3", "-c", SINK, "3"], tmp_path / "sink.json", split_stderr=True)
        time.sleep(0.3)
        src = tb.spawn("h1", ["python3", "-c", SOURCE, tb.topo.host("h2").addr, "6000"], tmp_path / "src.log")
        # the agent holds the stream (no directive yet) and reports its backlog for h2 (id 1)
        ctl.settimeout(5)
        while True:
            d, _ = ctl.recvfrom(65536)
            if d[3] == 3 and d[26:28] != b"\0\0":
                break
        echo = (struct.unpack(">Q", d[16:24])[0], time.monotonic_ns())  # read as it arrived
        time.sleep(0.2)
        # a slice to h2 that starts OFFSET_S after it is sent
        t_sent = time.monotonic()
        ctl.sendto(_signed(sk, 4, run, 2, _slice(0, 1, OFFSET_S, 1, SLICE_S, echo), ver=5), agent)
        time.sleep(OFFSET_S + SLICE_S + 0.3)
        # a slice with no start (offset 0): on receipt, the old behaviour
        t_now = time.monotonic()
        ctl.sendto(_signed(sk, 4, run, 3, _slice(0, 2, 0.0, 1, SLICE_S, echo), ver=5), agent)
        src.wait(30)
        sink.wait(30)
    finally:
        ctl.close()
        x.stop_agents()
    ts = json.loads((tmp_path / "sink.json").read_text())
    first = [t for t in ts if t >= t_sent]
    assert ts and first, "nothing reached h2"
    assert min(ts) >= t_sent + OFFSET_S, (
        f"a packet arrived {t_sent + OFFSET_S - min(ts):.6f} s before the directive's start"
    )
    late = first[0] - (t_sent + OFFSET_S)
    print(f"gate opened {late * 1e6:.0f} us after the directive's start (receipt + offset)")
    assert first[0] < t_sent + OFFSET_S + SLICE_S, (
        f"the gate did not open inside its slice ({late:.3f} s late)"
    )
    # the first slice ended: traffic stopped until the second directive, which applied on receipt
    second = [t for t in ts if t >= t_now]
    gap = [t for t in ts if t_sent + OFFSET_S + SLICE_S + 0.1 < t < t_now]
    assert not gap, f"{len(gap)} packets passed between the two slices"
    assert second and second[0] < t_now + SLICE_S, "a directive without a start opens the gate on receipt"
    st = daemons.log_fields(log, "stop")
    assert st.get("directives") == "2", st
