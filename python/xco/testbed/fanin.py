"""A fan-in (incast) client and server over real kernel TCP, run inside the
testbed's namespaces: persistent connections and barrier rounds.

Run as a script (it imports nothing of xco, so ``ip netns exec NS python3
fanin.py ...`` needs no installed package)::

    python3 fanin.py server PORT
    python3 fanin.py client --servers IP:PORT,IP:PORT,... --response-bytes 16000 --rounds 30

The client connects once to every server, then for each round sends every
server an 8-byte request (the response size) and waits until every server's
whole response has arrived (the barrier) before the next round. It prints one
JSON object: the round times and the total time, bytes, and goodput. A server
answers requests on one connection until the client closes it, then prints
the change of its namespace's TCP counters (``/proc/net/netstat``,
``/proc/net/snmp``: timeouts, tail-loss probes, retransmitted segments, ...)
over its life as JSON.

Bounded: a server waits at most ``--idle-s`` for its client, a client round
at most ``--round-timeout-s`` (then it exits with status 3 and says so).
"""

from __future__ import annotations

import argparse
import json
import selectors
import socket
import struct
import sys
import time

REQ = struct.Struct("!Q")  # a request: the response size in bytes
COUNTERS = {
    "TcpExt": ("TCPTimeouts", "TCPLossProbes", "TCPLossProbeRecovery", "TCPSackRecovery", "TCPRenoRecovery",
               "TCPFastRetrans", "TCPSlowStartRetrans", "TCPSpuriousRTOs", "TCPSynRetrans"),
    "Tcp": ("RetransSegs", "OutSegs"),
}  # fmt: skip


def tcp_counters() -> dict[str, int]:
    """This namespace's TCP counters named in ``COUNTERS``."""
    out = {}
    for path in ("/proc/net/netstat", "/proc/net/snmp"):
        with open(path) as f:
            lines = f.read().splitlines()
        for head, vals in zip(lines[::2], lines[1::2], strict=True):
            group, names = head.split(":", 1)
            values = vals.split(":", 1)[1].split()
            for name, v in zip(names.split(), values, strict=True):
                if name in COUNTERS.get(group, ()):
                    out[name] = int(v)
    return out


def _recv_exact(c: socket.socket, n: int) -> bytes | None:
    buf = b""
    while len(buf) < n:
        b = c.recv(n - len(buf))
        if not b:
            return None
        buf += b
    return buf


def serve(port: int, idle_s: float, cc: str | None = None) -> int:
    before = tcp_counters()
    ls = socket.socket()
    ls.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    if cc:
        # the listener's congestion control, which the accepted socket inherits (the
        # kernel's modules: /proc/sys/net/ipv4/tcp_available_congestion_control)
        try:
            ls.setsockopt(socket.IPPROTO_TCP, socket.TCP_CONGESTION, cc.encode())
        except OSError as e:
            print(f"fanin.py: --cc {cc}: the kernel refuses it ({e.strerror}); "
                  "see /proc/sys/net/ipv4/tcp_available_congestion_control", file=sys.stderr)  # fmt: skip
            return 2
    ls.bind(("0.0.0.0", port))
    ls.listen(1)
    ls.settimeout(idle_s)
    c, _ = ls.accept()
    c.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    if cc:
        c.setsockopt(socket.IPPROTO_TCP, socket.TCP_CONGESTION, cc.encode())
    used_cc = c.getsockopt(socket.IPPROTO_TCP, socket.TCP_CONGESTION, 16).split(b"\0")[0].decode()
    c.settimeout(idle_s)
    payload = b""
    served = 0
    while True:
        req = _recv_exact(c, REQ.size)
        if req is None:
            break
        (n,) = REQ.unpack(req)
        if len(payload) != n:
            payload = b"x" * n
        c.sendall(payload)
        served += 1
    c.close()
    after = tcp_counters()
    counters = {k: after[k] - before.get(k, 0) for k in after}
    print(json.dumps({"responses": served, "cc": used_cc, "counters": counters}))
    return 0


def client(servers: list[tuple[str, int]], response_bytes: int, rounds: int, round_timeout_s: float) -> int:
    conns = []
    for host, port in servers:
        deadline = time.monotonic() + 10
        while True:
            try:
                c = socket.create_connection((host, port), timeout=2)
                break
            except OSError:
                if time.monotonic() > deadline:
                    print(f"fanin client: cannot connect to {host}:{port}", file=sys.stderr)
                    return 3
                time.sleep(0.05)
        c.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        c.setblocking(False)
        conns.append(c)
    sel = selectors.DefaultSelector()
    buf = bytearray(1 << 16)
    req = REQ.pack(response_bytes)
    round_s = []
    t_start = time.monotonic()
    for r in range(rounds):
        t0 = time.monotonic()
        left = {}
        for c in conns:
            c.sendall(req)  # 8 bytes into an empty send buffer: never blocks
            left[c] = response_bytes
            sel.register(c, selectors.EVENT_READ)
        while left:
            wait = t0 + round_timeout_s - time.monotonic()
            events = sel.select(timeout=max(wait, 0)) if wait > 0 else []
            if not events:
                print(f"fanin client: round {r + 1} did not finish in {round_timeout_s} s", file=sys.stderr)
                return 3
            for key, _ in events:
                c = key.fileobj
                n = c.recv_into(buf, min(len(buf), left[c]))
                if n == 0:
                    print("fanin client: a server closed its connection", file=sys.stderr)
                    return 3
                left[c] -= n
                if left[c] == 0:
                    del left[c]
                    sel.unregister(c)
        round_s.append(time.monotonic() - t0)
    total_s = time.monotonic() - t_start
    for c in conns:
        c.close()
    total_bytes = response_bytes * len(conns) * rounds
    print(json.dumps({"servers": len(conns), "rounds": rounds, "response_bytes": response_bytes,
                      "round_s": round_s, "total_s": total_s, "bytes": total_bytes,
                      "goodput_mbps": total_bytes * 8 / total_s / 1e6}))  # fmt: skip
    return 0


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(prog="fanin.py", description="fan-in client/server (barrier rounds)")
    sub = ap.add_subparsers(dest="role", required=True)
    s = sub.add_parser("server")
    s.add_argument("port", type=int)
    s.add_argument("--idle-s", type=float, default=120.0)
    s.add_argument("--cc", help="the server socket's congestion control (cubic, bbr); default: the kernel's")
    c = sub.add_parser("client")
    c.add_argument("--servers", required=True, help="IP:PORT,IP:PORT,...")
    c.add_argument("--response-bytes", type=int, default=16000)
    c.add_argument("--rounds", type=int, default=30)
    c.add_argument("--round-timeout-s", type=float, default=60.0)
    a = ap.parse_args(argv)
    if a.role == "server":
        return serve(a.port, a.idle_s, a.cc)
    if a.response_bytes <= 0 or a.rounds <= 0:
        ap.error("--response-bytes and --rounds must be positive")
    servers = []
    for item in a.servers.split(","):
        host, port = item.rsplit(":", 1)
        servers.append((host, int(port)))
    return client(servers, a.response_bytes, a.rounds, a.round_timeout_s)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
