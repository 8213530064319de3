"""The XCo daemons' trust model and operator surface on real hosts (network
namespaces built inside each test and removed after it): who can sign what,
sessions across controller restarts and clock steps, rejected input counted and
throttled, /metrics and /healthz, stale rules after a crash.

The wire format is written here from its documentation (crates/xco-core/src/wire),
independently of the Rust code: the test plays the controller or a compromised
host with keys derived from the master secret as docs/deployment.md says.
Needs root and the tools scripts/setup.sh installs (iproute2, iptables, faketime,
a built xco-daemon); the Python `cryptography` package signs as the controller.
"""

from __future__ import annotations

import hashlib
import hmac
import itertools
import json
import os
import re
import signal
import socket
import struct
import subprocess
import threading
import time
import urllib.request
from pathlib import Path

import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from xco.testbed import daemons, netns, topo

CONTROLLER_ID = 0xFFFFFFFF


@pytest.fixture(autouse=True)
def _need_root():
    if os.geteuid() != 0:
        pytest.fail("real-host tests need root (network namespaces, iptables); CI runs them as root")


@pytest.fixture
def testbed(tmp_path, request):
    made = []

    def make(n: int, extra: str = "", slice_ms: float = 10.0) -> netns.Testbed:
        h = next(_SUBNETS)
        prefix = "xk" + str(abs(hash(request.node.name)) % 9999)
        path = tmp_path / "topo.toml"
        text = topo.star_toml(n, prefix=prefix, slice_ms=slice_ms, extra_control=extra)
        # a management network of its own: other testbeds on this machine use 10.200.0.0/24, and
        # two bridges with one subnet in the root namespace would take each other's replies
        path.write_text(text.replace('"10.200.0.1:7400"', f'"{_mgmt_ip(h)}:7400"'))
        tb = netns.up(topo.load(path))
        made.append(tb)
        return tb

    yield make
    for tb in made:
        tb.stop_all()
        netns.down(tb.topo)
        assert netns.leftovers(tb.topo) == []


# each testbed of this process gets a /24 of its own (a socket a failed test left bound to an
# address must not meet the next test's controller there)
_SUBNETS = itertools.count(os.getpid() % 250)


def _mgmt_ip(h: int) -> str:
    """The controller's management address of a test's testbed (its own /24)."""
    return f"10.233.{h % 250}.1"


def _agent_ip(tb: netns.Testbed, i: int) -> str:
    """Management address of host ``i`` (0-based), as the testbed assigns it."""
    return str(tb.topo.mgmt_net.network_address + 10 + i)


# --- the wire format, from its documentation -------------------------------------------


def _master(x: daemons.Xco) -> bytes:
    return bytes.fromhex(x.key.read_text().strip())


def _host_key(master: bytes, name: str) -> bytes:
    return hmac.new(master, b"xco host key v2\0" + name.encode(), hashlib.sha256).digest()


def _signing_key(master: bytes) -> Ed25519PrivateKey:
    seed = hmac.new(master, b"xco controller signing key v2", hashlib.sha256).digest()
    return Ed25519PrivateKey.from_private_bytes(seed)


def _head(mtype: int, host: int, run: int, seq: int, payload: bytes, *, ver=2, length=None) -> bytes:
    n = len(payload) if length is None else length
    return b"XC" + bytes([ver, mtype]) + struct.pack(">IQQH", host, run, seq, n) + payload


def _from_agent(key: bytes, mtype: int, host: int, run: int, seq: int, payload: bytes, **kw) -> bytes:
    body = _head(mtype, host, run, seq, payload, **kw)
    return body + hmac.new(key, body, hashlib.sha256).digest()


def _from_controller(sk: Ed25519PrivateKey, mtype: int, run: int, seq: int, payload: bytes, **kw) -> bytes:
    body = _head(mtype, CONTROLLER_ID, run, seq, payload, **kw)
    return body + sk.sign(body)


def _directive(host: int, epoch: int, dest: int, len_ns: int) -> bytes:
    """A version-2 slice directive (no start, no echo)."""
    return struct.pack(">IQB", host, epoch, 1) + struct.pack(">IQQ", dest, len_ns, 0)


# per agent key, the latest of its messages this test's controller received (with the time)
_LATEST: dict[bytes, dict] = {}


def _heard(key: bytes, m: dict) -> None:
    if key not in _LATEST or m["seq"] > _LATEST[key]["seq"]:
        _LATEST[key] = m


def _directive5(host: int, epoch: int, dest: int, len_ns: int, key: bytes) -> bytes:
    """A version-5 slice directive (start 0), fresh: it echoes the latest message heard from the
    agent with ``key``, when it was received and now (this test's monotonic clock, ns), as the
    controller does (the agent bounds its age from that echo and refuses a stale one)."""
    m = _LATEST[key]
    echo = struct.pack(">QQQ", m["seq"], m["at_ns"], max(time.monotonic_ns(), m["at_ns"]))
    return struct.pack(">IQQ", host, epoch, 0) + echo + struct.pack(">BIQQ", 1, dest, len_ns, 0)


def _parse(d: bytes) -> dict:
    mtype = d[3]
    host, run, seq, n = struct.unpack(">IQQH", d[4:26])
    return {
        "type": mtype,
        "host": host,
        "run": run,
        "seq": seq,
        "payload": d[26 : 26 + n],
        "tag": d[26 + n :],
        "at_ns": time.monotonic_ns(),  # when it was read
    }


def _drain_from_agent(sock: socket.socket, key: bytes, seen: list) -> list[tuple[dict, tuple]]:
    """Every datagram waiting on ``sock`` with ``key``'s MAC, also kept in ``seen``."""
    got = []
    sock.setblocking(False)
    try:
        while True:
            d, addr = sock.recvfrom(65536)
            m = _parse(d)
            if m["tag"] == hmac.new(key, d[: len(d) - 32], hashlib.sha256).digest():
                got.append((m, addr))
                _heard(key, m)
    except BlockingIOError:
        pass
    finally:
        sock.settimeout(5)
    seen.extend(got)
    return got


def _metrics(addr: str, path: str = "/metrics") -> str:
    return urllib.request.urlopen(f"http://{addr}{path}", timeout=5).read().decode()


def _metric(text: str, name_and_labels: str) -> float:
    for line in text.splitlines():
        if line.startswith(name_and_labels + " "):
            return float(line.split()[-1])
    raise AssertionError(f"{name_and_labels} not in metrics:\n{text}")


def _wait_for(pred, what: str, timeout: float = 10.0):
    deadline = time.monotonic() + timeout
    while True:
        v = pred()
        if v:
            return v
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.02)


def _start_agent(x: daemons.Xco, tb: netns.Testbed, host: str, *extra: str) -> subprocess.Popen:
    p = x.start_agent(host, *extra)
    log = x.dir / f"agent-{host}.log"
    _wait_for(lambda: "event=start" in log.read_text() or p.poll() is not None, f"agent {host}")
    assert p.poll() is None, log.read_text()
    return p


def _fields(log: Path, event: str) -> list[dict[str, str]]:
    return [
        dict(kv.split("=", 1) for kv in line.split() if "=" in kv)
        for line in log.read_text().splitlines()
        if f"event={event}" in line.split()
    ]


# --- the agent: only the controller's signature, only the adopted run ----------------------


def test_agent_obeys_only_signed_directives_of_the_run_it_joined(testbed, tmp_path):
    tb = testbed(3, extra="fail_open_ms = 60000")
    x = daemons.Xco(tb, tmp_path / "run", agents=[])
    master = _master(x)
    sk = _signing_key(master)
    # the test is the controller: it listens on the controller's address
    ctl = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    ctl.bind((tb.topo.controller_ip, tb.topo.controller_port))
    ctl.settimeout(5)
    agent_metrics = f"{_agent_ip(tb, 0)}:9470"  # h1's management address
    _start_agent(x, tb, "h1", "--metrics", agent_metrics)
    log = x.dir / "agent-h1.log"
    # the agent bound its control address only (not a wildcard), found from the route to the controller
    start = _fields(log, "start")[0]
    assert start["bind"].startswith(f"{_agent_ip(tb, 0)}:"), start
    # its join carries a nonce and h1's MAC (the key the master secret derives for h1)
    h1 = _host_key(master, "h1")

    seen: list[tuple[dict, tuple]] = []  # every message with h1's MAC, in order of arrival

    def recv_from_agent(mtype: int, pred=lambda m: True) -> tuple[dict, tuple]:
        """The first message of ``mtype`` (satisfying ``pred``) not taken before, waiting for it."""
        deadline = time.monotonic() + 10
        while True:
            for i, (m, addr) in enumerate(seen):
                if m["type"] == mtype and pred(m):
                    del seen[i]
                    return m, addr
            if time.monotonic() > deadline:
                raise AssertionError(f"no message of type {mtype} with h1's MAC")
            d, addr = ctl.recvfrom(65536)
            m = _parse(d)
            if m["tag"] == hmac.new(h1, d[: len(d) - 32], hashlib.sha256).digest():
                seen.append((m, addr))
                _heard(h1, m)

    run = 0x5EED
    # a join unanswered for 20 ms is sent again with a new nonce, so an answer may arrive just
    # after its join was replaced (the 20-ms poll of the log above, a loaded machine): answer
    # the newest join until the agent takes one; each stale answer is rejected (a session)
    stale = -1
    while "event=controller_run" not in log.read_text():
        joins = [m for m, _ in seen if m["type"] == 1]
        if not joins:
            _drain_from_agent(ctl, h1, seen)
            time.sleep(0.002)
            continue
        while any(m["type"] == 1 for m, _ in seen):
            join, agent_addr = recv_from_agent(1)
        stale += 1
        assert stale < 20, "no answer to a join was taken"
        ctl.sendto(_from_controller(sk, 7, run, 1, struct.pack(">IQ", 0, join["run"])), agent_addr)
        _wait_for(
            lambda: (
                "event=controller_run" in log.read_text()
                or any(m["type"] == 1 for m, _ in _drain_from_agent(ctl, h1, seen))
            ),
            "the hello or another join",
        )
    assert join["host"] == 0, join
    _drain_from_agent(ctl, h1, seen)  # joins sent before the hello was taken
    seen[:] = [(m, a) for m, a in seen if m["type"] != 1]
    # a compromised h2 holds its own key and the controller's public key only
    h2 = _host_key(master, "h2")
    forged = []
    for seq in (2, 2**63):  # including a far-future sequence number
        body = _head(4, CONTROLLER_ID, run, seq, _directive(0, 10**6, 2, 10**9))
        mac = hmac.new(h2, body, hashlib.sha256).digest()
        forged.append(body + mac + mac)  # a MAC where the signature goes
        other = Ed25519PrivateKey.from_private_bytes(h2)  # its own key as a signing key
        forged.append(body + other.sign(body))

    def fresh_report() -> None:
        """Wait for h1's next report (its heartbeat), read as it arrives: the directive that
        echoes it states when it was received, so it must not have waited in the socket."""
        _drain_from_agent(ctl, h1, seen)
        seen[:] = [(m, a) for m, a in seen if m["type"] != 3]
        recv_from_agent(3)

    fresh_report()
    genuine = _from_controller(sk, 4, run, 10, _directive5(0, 5, 2, 10**9, h1), ver=5)
    stale_run = _from_controller(sk, 4, run + 1, 11, _directive(0, 6, 2, 10**9))  # another run
    old_hello = _from_controller(sk, 7, run + 2, 12, struct.pack(">IQ", 0, join["run"]))  # nonce used up
    malformed = [
        b"",
        b"XC\x02",
        _from_controller(sk, 4, run, 20, _directive(0, 7, 2, 10**6), ver=1),  # old version
        _from_controller(sk, 4, run, 21, _directive(0, 7, 2, 10**6), length=5),  # length disagrees
        _from_controller(sk, 4, run, 22, _directive(0, 7, 2, 10**6) + b"\0"),  # trailing byte
        _from_controller(sk, 4, run, 23, _directive(0, 7, 2, 0)),  # 0-ns slice
        _from_controller(sk, 4, run, 24, struct.pack(">IQB", 0, 7, 9)),  # unknown directive kind
        _from_agent(h2, 3, 1, 1, 1, struct.pack(">H", 0)),  # another agent's report sent to an agent
    ]
    sender = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    sender.bind((tb.topo.controller_ip, 0))
    for d in [*forged, genuine, genuine, stale_run, old_hello, *malformed]:
        sender.sendto(d, agent_addr)
    # a signed message of another run (replayed, or a restarted controller's) costs no join
    time.sleep(0.3)
    assert not [m for m, _ in _drain_from_agent(ctl, h1, seen) if m["type"] == 1], "joined again"
    # a rejoin request about an old session (replayed) costs nothing either; one about the
    # current session, of any run (a restarted controller), makes it join again
    sender.sendto(_from_controller(sk, 8, run + 3, 1, struct.pack(">IQ", 0, join["run"] ^ 1)), agent_addr)
    sender.sendto(_from_controller(sk, 8, run + 3, 2, struct.pack(">IQ", 0, join["run"])), agent_addr)
    rejoin, _ = recv_from_agent(1)
    assert rejoin["run"] != join["run"], "a new join has a new nonce"
    # after the far-future forgery, the genuine controller's next directive is obeyed
    ctl.sendto(_from_controller(sk, 7, run, 30, struct.pack(">IQ", 0, rejoin["run"])), agent_addr)
    _wait_for(lambda: len(_fields(log, "controller_run")) == 2, "the second hello")
    fresh_report()
    sender.sendto(_from_controller(sk, 4, run, 31, _directive5(0, 1, 2, 10**9, h1), ver=5), agent_addr)
    # the agent tells the controller what it rejected (cumulative counts, MAC'd, at most once a second)
    want = (len(forged), 1)
    rej, _ = recv_from_agent(9, lambda m: struct.unpack(">QQQQ", m["payload"])[:2] == want)
    m = _wait_for(
        lambda: (
            (t := _metrics(agent_metrics)) and _metric(t, 'xco_agent_directives_total{host="h1"}') == 2 and t
        ),
        "the second directive",
    )
    assert _metric(m, 'xco_agent_rejected_total{host="h1",reason="auth"}') == len(forged)
    assert _metric(m, 'xco_agent_rejected_total{host="h1",reason="replay"}') == 1
    # stale run, old hello, the rejoin request about another session
    assert _metric(m, 'xco_agent_rejected_total{host="h1",reason="session"}') == 3 + stale
    # every malformed datagram is rejected (the empty one may not count as a datagram on some kernels)
    assert _metric(m, 'xco_agent_rejected_total{host="h1",reason="malformed"}') >= len(malformed) - 1
    assert _metrics(agent_metrics, "/healthz") == "ok\n"
    ctl.close()
    sender.close()
    x.stop_agents()
    st = _fields(log, "stop")[-1]
    assert st["directives"] == "2", st  # the genuine one (once) and the one after the forgeries


def test_junk_datagrams_are_counted_and_logged_at_most_once_a_second(testbed, tmp_path):
    tb = testbed(2, extra="fail_open_ms = 60000")
    x = daemons.Xco(tb, tmp_path / "run", agents=[])
    x.start_controller()
    _start_agent(x, tb, "h1")
    log = x.dir / "agent-h1.log"
    bind = _fields(log, "start")[0]["bind"]
    ip, port = bind.rsplit(":", 1)
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.bind((tb.topo.controller_ip, 0))
    t0 = time.monotonic()
    for i in range(10_000):
        s.sendto(b"XC\x02\x04" + i.to_bytes(4, "big") * 20, (ip, int(port)))
        s.sendto(b"junk", (tb.topo.controller_ip, tb.topo.controller_port))
        if i % 200 == 199:
            time.sleep(0.002)  # paced a little: the point is the log, not the socket buffer
    elapsed = time.monotonic() - t0
    s.close()
    time.sleep(0.3)
    x.stop_agents()
    tb.stop(x.controller)
    st = _fields(log, "stop")[-1]
    assert int(st["rejected_malformed"]) >= 5_000, st  # UDP may drop some under the burst
    for name in ("agent-h1.log", "controller.log"):
        lines = _fields(x.dir / name, "rejected")
        # one line per second at most, each with the count it stands for
        assert 1 <= len(lines) <= elapsed + 2, (name, len(lines), elapsed)
        assert sum(int(f["count"]) for f in lines) <= 10_000, lines


# --- the controller: each host speaks as itself only -------------------------------------


def test_controller_takes_each_host_only_under_its_own_key_and_session(testbed, tmp_path):
    tb = testbed(3, extra="fail_open_ms = 60000")
    x = daemons.Xco(tb, tmp_path / "run", agents=[])
    x.start_controller()
    master = _master(x)
    pub = _signing_key(master).public_key()
    ctl = (tb.topo.controller_ip, tb.topo.controller_port)
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.bind((tb.topo.controller_ip, 0))
    s.settimeout(5)
    h1, h2 = _host_key(master, "h1"), _host_key(master, "h2")
    _wait_for(lambda: (x.dir / "controller.log").read_text().count("event=start"), "the controller")
    # h1 joins with a nonce: the controller's challenge echoes it, signed with the controller's key
    nonce = 0xABCDEF
    s.sendto(_from_agent(h1, 1, 0, nonce, 1, b""), ctl)
    d, _ = s.recvfrom(65536)
    ch = _parse(d)
    assert ch["type"] == 10, ch
    host, echoed, challenge = struct.unpack(">IQQ", ch["payload"])
    assert (host, echoed) == (0, nonce), ch
    pub.verify(ch["tag"], d[:-64])  # raises if not the controller's signature
    # the session starts at h1's confirm of that challenge (the run and the number)
    # it states its own control address (IPv4-mapped, port): directives go there, not to a source
    ip, port = s.getsockname()
    addr = b"\0" * 10 + b"\xff\xff" + socket.inet_aton(ip) + struct.pack(">H", port)
    s.sendto(_from_agent(h1, 11, 0, nonce, 2, struct.pack(">QQ", ch["run"], challenge) + addr), ctl)
    report = _from_agent(h1, 3, 0, nonce, 3, struct.pack(">H", 0))
    s.sendto(report, ctl)
    s.sendto(report, ctl)  # replayed
    s.sendto(_from_agent(h2, 3, 0, nonce, 4, struct.pack(">H", 0)), ctl)  # h2 speaking as h1
    s.sendto(_from_agent(h1, 3, 77, 1, 1, struct.pack(">H", 0)), ctl)  # id outside the topology
    s.sendto(_from_agent(h1, 3, 0, nonce + 1, 5, struct.pack(">H", 0)), ctl)  # a session never joined
    d, _ = s.recvfrom(65536)
    assert _parse(d)["type"] == 8, _parse(d)  # ... is asked to join again
    for bad in (
        b"",
        b"XC\x02",
        _from_agent(h1, 3, 0, nonce, 5, b"\0", length=2),
        _from_agent(h1, 99, 0, 1, 1, b""),
    ):
        s.sendto(bad, ctl)
    # h1's rejection counts, as an agent reports them
    s.sendto(_from_agent(h1, 9, 0, nonce, 6, struct.pack(">QQQQ", 4, 3, 2, 1)), ctl)
    m = _wait_for(
        lambda: (t := _metrics(x.metrics)) and 'xco_agent_rejected_total{host="h1",reason="auth"}' in t and t,
        "the agent's counts",
    )
    assert _metric(m, 'xco_rejected_total{reason="auth"}') == 1
    assert _metric(m, 'xco_rejected_total{reason="replay"}') == 1  # the report sent twice
    assert _metric(m, 'xco_rejected_total{reason="session"}') == 2
    assert _metric(m, 'xco_rejected_total{reason="malformed"}') >= 3
    assert _metric(m, 'xco_messages_total{type="report"}') == 1
    assert [_metric(m, f'xco_agent_rejected_total{{host="h1",reason="{r}"}}') for r in
            ("auth", "replay", "malformed", "session")] == [4, 3, 2, 1]  # fmt: skip
    assert _metrics(x.metrics, "/healthz") == "ok\n"
    s.close()
    tb.stop(x.controller)


# --- restarts, clock steps, crashes ----------------------------------------------------

TCP_SINK = """
import json, socket, sys, hashlib
ls = socket.socket(); ls.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
ls.bind(("0.0.0.0", int(sys.argv[1]))); ls.listen(1); ls.settimeout(30)
c, _ = ls.accept(); c.settimeout(30)
h = hashlib.sha256(); n = 0
while True:
    b = c.recv(65536)
    if not b:
        break
    n += len(b); h.update(b)
print(json.dumps({"bytes": n, "sha256": h.hexdigest()}))
"""

TCP_SOURCE = """
import hashlib, random, socket, sys
rnd = random.Random(int(sys.argv[3])); n = int(sys.argv[2])
data = rnd.randbytes(n)
s = socket.create_connection((sys.argv[1], int(sys.argv[4])), timeout=30)
s.sendall(data); s.close()
print(hashlib.sha256(data).hexdigest())
"""


def _transfer(tb: netns.Testbed, tmp: Path, name: str, size: int, port: int) -> tuple[dict, str]:
    sink = tb.spawn(
        "h2", ["python3", "-c", TCP_SINK, str(port)], tmp / f"{name}-sink.json", split_stderr=True
    )
    time.sleep(0.3)
    src = tb.spawn(
        "h1",
        ["python3", "-c", TCP_SOURCE, "10.0.0.2", str(size), str(port), str(port)],
        tmp / f"{name}-src.log",
    )
    assert src.wait(40) == 0 and sink.wait(40) == 0, (tmp / f"{name}-src.log").read_text()
    return json.loads((tmp / f"{name}-sink.json").read_text()), (tmp / f"{name}-src.log").read_text().strip()


def _live_processes_naming(text: str) -> list[int]:
    """Processes (not zombies) whose command line contains ``text``."""
    pids = []
    for d in Path("/proc").iterdir():
        if not d.name.isdigit():
            continue
        try:
            cmd = (d / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
            state = (d / "stat").read_text().rsplit(")", 1)[1].split()[0]
        except OSError:
            continue
        if text in cmd and state != "Z":
            pids.append(int(d.name))
    return pids


def test_a_controller_restarted_with_its_clock_an_hour_back_is_obeyed_at_once(testbed, tmp_path):
    # fail-open is a minute away: only the controller's directives can move h1's traffic
    tb = testbed(2, extra="fail_open_ms = 60000")
    x = daemons.Xco(tb, tmp_path / "run", agents=[])
    x.start_controller()
    _start_agent(x, tb, "h1")
    got, sent = _transfer(tb, tmp_path, "before", 2_000_000, 5401)
    assert got["bytes"] == 2_000_000 and got["sha256"] == sent
    x.controller.kill()  # a crash: the agent still holds the old run
    x.controller.wait()
    # the new controller's wall clock is an hour behind (an NTP step, a VM restore)
    env = {"FAKETIME_DONT_FAKE_MONOTONIC": "1"}
    x.start_controller(wrap=["env", *[f"{k}={v}" for k, v in env.items()], "faketime", "-f", "-1h"])
    got, sent = _transfer(tb, tmp_path, "after", 2_000_000, 5402)
    assert got["bytes"] == 2_000_000 and got["sha256"] == sent
    x.stop_agents()
    tb.stop(x.controller)
    # faketime ran the controller as its child: stopping the wrapper ends it too
    assert not _live_processes_naming(str(tmp_path)), "a daemon of this test outlived it"
    log = x.dir / "agent-h1.log"
    runs = [f["run"] for f in _fields(log, "controller_run")]
    new_run = _fields(x.dir / "controller1.log", "start")[0]["run"]
    assert len(runs) >= 2 and runs[-1] == new_run, (runs, new_run)
    assert _fields(log, "fail_open") == [], "the transfer moved by failing open, not by the new controller"
    # the faked clock was in effect: the new controller's log stamps are an hour behind the agent's
    ts_ctl = float(_fields(x.dir / "controller1.log", "start")[0]["ts"])
    ts_agent = float(_fields(log, "stop")[0]["ts"])
    assert ts_agent - ts_ctl > 3000, (ts_agent, ts_ctl)


def test_a_crashed_agent_s_chain_is_cleaned_at_restart_and_the_controller_names_it(testbed, tmp_path):
    tb = testbed(2, extra="report_interval_ms = 20\nfeedback_timeout_ms = 300")
    x = daemons.Xco(tb, tmp_path / "run", agents=[])
    x.start_controller()
    p = _start_agent(x, tb, "h1")
    ctl_log = x.dir / "controller.log"
    _wait_for(lambda: "host=h1" in ctl_log.read_text(), "h1 registered")
    # SIGKILL of the agent and its watchdog (its process group): no cleanup (the agent
    # alone killed, its watchdog removes the chain: tests/test_real_agent_watchdog.py)
    os.killpg(p.pid, signal.SIGKILL)
    p.wait()
    rules = netns.sh("iptables", "-S", ns=tb.ns("h1")).stdout
    assert "-N XCO-Q7" in rules, rules
    # the controller names the host it drops for silence
    t = _wait_for(lambda: _fields(ctl_log, "host_timed_out"), "the timeout")
    assert t[0]["host"] == "h1" and t[0]["id"] == "0", t
    # a new agent removes the crashed one's chain before installing its own: one jump per hook
    _start_agent(x, tb, "h1")
    log = (x.dir / "agent-h1.log").read_text()
    assert "event=stale_chain_removed" in log and "chain=XCO-Q7" in log, log
    rules = netns.sh("iptables", "-S", ns=tb.ns("h1")).stdout
    assert rules.count("-A OUTPUT -j XCO-Q7") == 1 and rules.count("-A FORWARD -j XCO-Q7") == 1, rules
    assert rules.count("-N XCO-Q7") == 1, rules
    x.stop_agents()
    rules = netns.sh("iptables", "-S", ns=tb.ns("h1")).stdout
    assert "XCO-Q7" not in rules, rules
    tb.stop(x.controller)


def test_a_replayed_join_from_another_address_moves_no_directive_and_no_session(testbed, tmp_path):
    """Issue 28's hijack: h1's join, replayed every 5 ms from another address during a
    transfer, made the old controller send h1's directives there. Now a join only earns a
    challenge (to its source, which cannot answer it without h1's key) and h1's directives go
    to the address h1 stated in its confirm."""
    tb = testbed(3, extra="fail_open_ms = 60000")  # only directives can move h1's traffic
    x = daemons.Xco(tb, tmp_path / "run", agents=[])
    x.start_controller()
    _start_agent(x, tb, "h1")
    ctl_log = x.dir / "controller.log"
    _wait_for(lambda: "host=h1" in ctl_log.read_text(), "h1 joined")
    master = _master(x)
    h1 = _host_key(master, "h1")
    # a join of h1 exactly as a capture gives it (h1's MAC, a nonce of its own)
    join = _from_agent(h1, 1, 0, 0x1234_5678_9ABC, 1, b"")
    attacker = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    attacker.bind((tb.topo.controller_ip, 0))
    attacker.settimeout(0.0005)
    got: list[dict] = []
    sent_joins = [0]
    stop = threading.Event()

    def replay():
        while not stop.is_set():
            attacker.sendto(join, (tb.topo.controller_ip, tb.topo.controller_port))
            sent_joins[0] += 1
            try:
                while True:
                    got.append(_parse(attacker.recvfrom(65536)[0]))
            except TimeoutError:
                pass
            time.sleep(0.0005)  # about one join a millisecond: faster than the limit

    t = threading.Thread(target=replay)
    t0 = time.monotonic()
    t.start()
    try:
        result, sent = _transfer(tb, tmp_path, "hijack", 2_000_000, 5404)
    finally:
        stop.set()
        t.join()
        attacker.close()
    attack_s = time.monotonic() - t0
    assert result["bytes"] == 2_000_000 and result["sha256"] == sent
    types = sorted({m["type"] for m in got})
    assert 4 not in types, f"the attacker got directives: {types}"
    # challenges (type 10) only, at most one per 5 ms for the same join, none it can answer
    assert types == [10], types
    # the limit is a rate (however long the transfer took on this machine), and it acted
    assert len(got) <= attack_s / 0.005 + 1, (len(got), attack_s)
    assert sent_joins[0] > 2 * len(got), (len(got), sent_joins[0])
    x.stop_agents()
    tb.stop(x.controller)
    log = x.dir / "agent-h1.log"
    assert len(_fields(log, "controller_run")) == 1, "h1 joined again"
    assert _fields(log, "fail_open") == []
    assert int(_fields(log, "stop")[-1]["directives"]) > 0


# The flood sender: every datagram of a file (hex, one a line) in turn, from a bound address to
# one destination, for a bounded time, with sendmmsg (one system call per batch of them: a
# Python loop of sendto reaches 110-175 k datagrams/s here, this about 300 k+). Prints how many
# it handed to the kernel and the rate.
FLOOD = r"""
import ctypes, ctypes.util, socket, sys, time
class iovec(ctypes.Structure):
    _fields_ = [("base", ctypes.c_void_p), ("len", ctypes.c_size_t)]
class msghdr(ctypes.Structure):
    _fields_ = [("name", ctypes.c_void_p), ("namelen", ctypes.c_uint32), ("iov", ctypes.c_void_p),
                ("iovlen", ctypes.c_size_t), ("control", ctypes.c_void_p),
                ("controllen", ctypes.c_size_t), ("flags", ctypes.c_int)]
class mmsghdr(ctypes.Structure):
    _fields_ = [("hdr", msghdr), ("len", ctypes.c_uint)]
libc = ctypes.CDLL(ctypes.util.find_library("c"), use_errno=True)
data = [bytes.fromhex(x) for x in open(sys.argv[1]).read().split()]
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.bind((sys.argv[2], 0))
s.connect((sys.argv[3], int(sys.argv[4])))
bufs = [ctypes.create_string_buffer(d, len(d)) for d in data]
iovs = (iovec * len(data))(*[iovec(ctypes.addressof(b), len(d)) for b, d in zip(bufs, data)])
msgs = (mmsghdr * len(data))()
for i in range(len(data)):
    msgs[i].hdr.iov = ctypes.addressof(iovs) + i * ctypes.sizeof(iovec)
    msgs[i].hdr.iovlen = 1
t0 = time.monotonic()
end, n = t0 + float(sys.argv[5]), 0
while time.monotonic() < end:
    r = libc.sendmmsg(s.fileno(), msgs, len(data), 0)
    if r > 0:
        n += r
print(n, n / (time.monotonic() - t0))
"""


# flood senders run at once: one reaches 100-190 k datagrams/s on this shared 2-core machine (about
# 360 k on a quiet one); XCO_FLOOD_SENDERS sets another count (to measure at a given rate)
FLOOD_SENDERS = int(os.environ.get("XCO_FLOOD_SENDERS", "2"))


class _Flood:
    """``FLOOD_SENDERS`` flood senders (root namespace: every address they send from and to is
    the test's own), each for a bounded time."""

    def __init__(self, tmp: Path, junk: list[bytes], src_ip: str, dst: tuple[str, int], secs: float):
        path = tmp / "junk.hex"
        path.write_text("\n".join(d.hex() for d in junk))
        cmd = ["python3", "-c", FLOOD, str(path), src_ip, dst[0], str(dst[1]), str(secs)]
        self.procs = [subprocess.Popen(cmd, stdout=subprocess.PIPE, text=True) for _ in range(FLOOD_SENDERS)]

    def wait(self) -> tuple[int, float]:
        """(datagrams sent, datagrams/s) of all senders together."""
        outs = [p.communicate(timeout=30)[0].split() for p in self.procs]
        return sum(int(o[0]) for o in outs), sum(float(o[1]) for o in outs)


def _waited_longer(text: str, histogram: str, secs: float) -> float:
    """Samples of ``histogram`` above ``secs`` (a bucket bound)."""
    pat = re.compile(rf'{histogram}_bucket\{{le="([^"]+)"\}} (\S+)')
    within = [float(v) for le, v in pat.findall(text) if le != "+Inf" and float(le) == secs]
    assert within, f"no bucket of {secs} s in {histogram}"
    return _metric(text, f"{histogram}_count") - within[0]


def _cpu_s(p: subprocess.Popen) -> float:
    """CPU time (user + system, seconds) process ``p`` has used so far."""
    fields = Path(f"/proc/{p.pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _metric_or(text: str, name_and_labels: str, default: float = float("nan")) -> float:
    try:
        return _metric(text, name_and_labels)
    except AssertionError:
        return default


def test_a_flood_of_signed_junk_at_the_agent_starves_neither_its_packets_nor_its_timers(testbed, tmp_path):
    """Issue 28: well-formed directives signed by any Ed25519 key cost a full check each,
    and at 55 k datagrams/s stalled a host's transfer 4.6 s with /healthz 503. Now they are
    checked within a budget, after the packets and the timers, and read at most 64 a
    millisecond (the kernel drops the rest)."""
    tb = testbed(3, extra="fail_open_ms = 100")
    x = daemons.Xco(tb, tmp_path / "run", agents=[])
    x.start_controller()
    agent_metrics = f"{_agent_ip(tb, 0)}:9472"
    _start_agent(x, tb, "h1", "--metrics", agent_metrics)
    log = x.dir / "agent-h1.log"
    ip, port = _fields(log, "start")[0]["bind"].rsplit(":", 1)
    _wait_for(lambda: "event=controller_run" in log.read_text(), "h1's run")
    quiet = time.monotonic()
    got, sent = _transfer(tb, tmp_path, "quiet", 5_000_000, 5405)
    quiet = time.monotonic() - quiet
    assert got["bytes"] == 5_000_000 and got["sha256"] == sent
    # 256 directives for h1, each signed by a key that is not the controller's, from the
    # controller's own address (as a spoofer on the control network would send them)
    forger = Ed25519PrivateKey.from_private_bytes(b"f" * 32)
    junk = [_from_controller(forger, 4, 7, 10**6 + i, _directive(0, 10**6 + i, 2, 10**9)) for i in range(256)]
    m0 = _metrics(agent_metrics)
    t0, cpu0 = time.monotonic(), _cpu_s(x.agents["h1"])
    flood = _Flood(tmp_path, junk, tb.topo.controller_ip, (ip, int(port)), 8)
    try:
        time.sleep(1)
        assert _metrics(agent_metrics, "/healthz") == "ok\n"
        flooded = time.monotonic()
        got, sent = _transfer(tb, tmp_path, "flooded", 5_000_000, 5406)
        flooded = time.monotonic() - flooded
        assert got["bytes"] == 5_000_000 and got["sha256"] == sent
        assert _metrics(agent_metrics, "/healthz") == "ok\n"
        m = _metrics(agent_metrics)
        window_s, cpu = time.monotonic() - t0, _cpu_s(x.agents["h1"]) - cpu0
    finally:
        n, rate = flood.wait()
    fails = _metric(m, 'xco_agent_fail_open_total{host="h1"}')
    c = 'xco_agent_control_datagrams_total{host="h1",dir="%s"}'
    read = _metric_or(m, c % "received") - _metric_or(m0, c % "received")
    dropped = _metric_or(m, c % "kernel_dropped") - _metric_or(m0, c % "kernel_dropped")
    spent = _metric_or(m, 'xco_agent_control_budget_spent_total{host="h1"}')
    print(f"flood: {n} datagrams, {rate:.0f}/s; transfer {quiet:.2f} s quiet,", end=" ")
    print(f"{flooded:.2f} s flooded; fail-opens {fails:.0f}; read {read:.0f}, kernel-dropped", end=" ")
    print(f"{dropped:.0f}, budget spent in {spent:.0f} ticks of {window_s * 1e3:.0f} ms;", end=" ")
    held = _metric(m, "xco_agent_verdict_latency_seconds_count")
    slow = _waited_longer(m, "xco_agent_verdict_latency_seconds", 0.25)
    print(f"agent CPU {cpu / window_s:.0%}; held packets that waited > 250 ms: {slow:.0f} of {held:.0f}")
    over = _metric(m, 'xco_agent_control_dropped_total{host="h1",why="over_budget"}')
    auth = _metric(m, 'xco_agent_rejected_total{host="h1",reason="auth"}')
    assert over > 0 and auth > 0, (over, auth)
    # each check it made was within the budget: 5,000 a second (and a burst of 64) of the flood
    assert auth <= 64 + 5_000 * 12, auth
    # it read at most 64 control datagrams a millisecond (the metrics lag by up to 100 ms),
    # and the kernel dropped what the socket could not hold
    assert read <= 64 * (window_s * 1e3 + 100 + 1), (read, window_s)
    assert spent > 0 and dropped > 0, (spent, dropped)
    # a bounded stall: no held packet waited 10 times the fail-open bound (the packets and
    # the fail-open timer come before the control socket; the transfer times are printed)
    assert _waited_longer(m, "xco_agent_verdict_latency_seconds", 1.0) == 0
    x.stop_agents()
    tb.stop(x.controller)


def _lateness(metrics: str) -> tuple[float, float, float]:
    """(timer fires, of them more than 1 ms late, more than 10 ms late) from the controller's histogram."""
    n = _metric(metrics, "xco_timer_lateness_seconds_count")
    ms1 = _metric(metrics, 'xco_timer_lateness_seconds_bucket{le="0.001"}')
    return n, n - ms1, n - _metric(metrics, 'xco_timer_lateness_seconds_bucket{le="0.01"}')


def _lateness_p(before: str, after: str, q: float) -> float:
    """Upper bound (ms) of the histogram bucket holding quantile ``q`` of the fires between two scrapes."""
    pat = re.compile(r'xco_timer_lateness_seconds_bucket\{le="([^"]+)"\} (\S+)')
    b = {le: float(v) for le, v in pat.findall(before)}
    a = {le: float(v) for le, v in pat.findall(after)}
    total = a["+Inf"] - b["+Inf"]
    for le in sorted((k for k in a if k != "+Inf"), key=float):
        if a[le] - b[le] >= q * total:
            return float(le) * 1e3
    return float("inf")


def test_junk_at_the_controller_keeps_its_slot_timers_on_time(testbed, tmp_path):
    """Issue 28: 286 k junk datagrams/s made 16 % of the controller's slot timers more than
    1 ms late. Now its timer comes first, it reads 64 datagrams between two checks of it and
    at most its budget a millisecond, and sleeps while the kernel drops the rest.

    Asserted: what the design guarantees (the budget held, the timer served between batches
    and through the flood, the excess dropped by the kernel, the transfer whole). The
    lateness is printed, not asserted: this machine is shared, and a loaded host delays a
    timer whatever the loop does."""
    tb = testbed(3, extra="fail_open_ms = 60000", slice_ms=2.0)
    x = daemons.Xco(tb, tmp_path / "run", agents=[])
    x.start_controller()
    _start_agent(x, tb, "h1")
    _wait_for(lambda: "event=controller_run" in (x.dir / "agent-h1.log").read_text(), "h1's run")
    master = _master(x)
    h1 = _host_key(master, "h1")
    # reports of h1 under a wrong key (a MAC check each), and malformed datagrams
    junk = [_from_agent(h1[::-1], 3, 0, 5, i, struct.pack(">HI", 1, 1)) for i in range(128)]
    junk += [b"XC\x03\x03" + bytes(40 + i % 50) for i in range(128)]
    m0 = _metrics(x.metrics)
    got, sent = _transfer(tb, tmp_path, "quiet", 8_000_000, 5407)
    m1 = _metrics(x.metrics)
    t0 = time.monotonic()
    flood = _Flood(tmp_path, junk, tb.topo.controller_ip, (tb.topo.controller_ip, tb.topo.controller_port), 6)
    try:
        time.sleep(0.5)
        m_on = _metrics(x.metrics)
        t_on, cpu_on = time.monotonic(), _cpu_s(x.controller)
        got2, sent2 = _transfer(tb, tmp_path, "flooded", 8_000_000, 5408)
        m2 = _metrics(x.metrics)
        window_s, cpu = time.monotonic() - t_on, _cpu_s(x.controller) - cpu_on
    finally:
        n, rate = flood.wait()
    assert got["sha256"] == sent and got2["sha256"] == sent2
    q = [a - b for a, b in zip(_lateness(m1), _lateness(m0), strict=True)]
    f = [a - b for a, b in zip(_lateness(m2), _lateness(m_on), strict=True)]

    def delta(name: str, a: str = m_on, b: str = m2) -> float:
        return _metric_or(b, name) - _metric_or(a, name)

    read = delta('xco_datagrams_total{dir="received"}')
    dropped = delta("xco_socket_drops_total")
    spent = delta("xco_datagram_budget_spent_total")
    per_tick = _metric_or(m2, "xco_datagram_budget_per_tick")
    print(f"junk: {n} datagrams in {time.monotonic() - t0:.1f} s, {rate:.0f}/s;", end=" ")
    print(f"timer fires > 1 ms / > 10 ms late: quiet {q[1]:.0f} / {q[2]:.0f} of {q[0]:.0f}", end=" ")
    print(f"(p50 <= {_lateness_p(m0, m1, 0.5)} ms, p99 <= {_lateness_p(m0, m1, 0.99)} ms),", end=" ")
    print(f"flooded {f[1]:.0f} / {f[2]:.0f} of {f[0]:.0f} (p50 <= {_lateness_p(m_on, m2, 0.5)} ms,", end=" ")
    late_max_ms = _metric_or(m2, "xco_timer_lateness_max_seconds") * 1e3
    print(f"p99 <= {_lateness_p(m_on, m2, 0.99)} ms), max of the run {late_max_ms:.2f} ms;")
    print(f"flooded: read {read:.0f} in {window_s:.2f} s, kernel-dropped {dropped:.0f},", end=" ")
    print(f"budget spent in {spent:.0f} ticks; controller CPU {cpu / window_s:.0%}")
    # the timer was served through the flood (a slot boundary every 2 ms of the transfer)
    assert f[0] > 100, f
    assert delta("xco_directives_total") > 0
    # the budget held: at most per_tick datagrams a 1-ms tick (the metrics lag by up to 100 ms)
    assert per_tick == 64, per_tick
    assert read <= per_tick * (window_s * 1e3 + 100 + 1), (read, window_s)
    # the timer was checked between any two batches of at most 64
    assert _metric(m2, "xco_datagram_batch_max") <= 64
    # the flood exceeded the budget, and the kernel dropped (and counted) the rest
    assert spent > 0 and dropped > 0, (spent, dropped)
    x.stop_agents()
    tb.stop(x.controller)


# --- operators: metrics and health ----------------------------------------------------


def test_agent_metrics_follow_a_transfer_and_both_daemons_answer_health(testbed, tmp_path):
    tb = testbed(2, extra="fail_open_ms = 60000")
    x = daemons.Xco(tb, tmp_path / "run", agents=[])
    x.start_controller()
    agent_metrics = f"{_agent_ip(tb, 0)}:9471"
    _start_agent(x, tb, "h1", "--metrics", agent_metrics)
    got, sent = _transfer(tb, tmp_path, "m", 3_000_000, 5403)
    assert got["bytes"] == 3_000_000 and got["sha256"] == sent
    # 30 idle clients hold connections to each endpoint; scrapes are still answered
    addrs = [(a.split(":")[0], int(a.split(":")[1])) for a in (x.metrics, agent_metrics)]
    idle = [socket.create_connection(a, timeout=5) for a in addrs for _ in range(30)]
    m = _wait_for(
        lambda: (
            (t := _metrics(agent_metrics))
            and _metric(t, 'xco_agent_queued_bytes{host="h1",dest="h2"}') == 0
            and t
        ),
        "the agent's queue to drain",
    )
    held = _metric(m, 'xco_agent_held_bytes_total{host="h1",dest="h2"}')
    assert held > 1_000_000, m  # the data segments were held (ACK-sized packets bypass)
    assert _metric(m, 'xco_agent_released_bytes_total{host="h1",dest="h2"}') == held
    assert _metric(m, 'xco_agent_released_packets_total{host="h1",dest="h2"}') == _metric(
        m, 'xco_agent_held_packets_total{host="h1",dest="h2"}'
    )
    assert _metric(m, "xco_agent_verdict_latency_seconds_count") == _metric(
        m, 'xco_agent_released_packets_total{host="h1",dest="h2"}'
    )
    assert _metric(m, 'xco_agent_fail_open_total{host="h1"}') == 0
    assert _metric(m, 'xco_agent_controller_run{host="h1"}') == 1
    states = [
        _metric(m, f'xco_agent_gate{{host="h1",state="{s}"}}')
        for s in ("closed", "open", "rated", "fail_open")
    ]
    assert sum(states) == 1 and states[3] == 0, states
    assert _metrics(agent_metrics, "/healthz") == "ok\n"
    assert _metrics(x.metrics, "/healthz") == "ok\n"
    assert re.search(r'xco_run_info\{run="[0-9a-f]{16}"\} 1', _metrics(x.metrics))
    for c in idle:
        c.close()
    x.stop_agents()
    tb.stop(x.controller)
