"""SICC's web fan-in over real kernel TCP, run inside the testbed's
namespaces: a front-end fetches Q small objects per request from data
servers, by One-all or by SICC's swarms and hubs (spec sicc.md §Design 1, 5;
docs/sicc.md, "real-sicc").

Run as a script (it imports nothing of xco, so ``ip netns exec NS python3
webfanin.py ...`` needs no installed package)::

    python3 webfanin.py server --index I --servers IP,IP,... --racks R,R,... --seed S [catalogue]
    python3 webfanin.py frontend --servers IP,... --racks R,... --seed S --method sicc --queries Q
                                 --requests N [catalogue]

**Catalogue.** ``--objects`` objects, sizes uniform in [``--min-bytes``,
``--max-bytes``], each on ``--replicas`` distinct servers, all drawn from
``--seed``: every process computes the same catalogue from the same command
line. Server ``i`` is the ``i``-th of ``--servers``; its rack is the ``i``-th
of ``--racks`` (any label: the edge switch's name).

**Connections.** Persistent TCP connections, opened before the first
request (their set-up is not timed): the front-end to every server, and
every pair of servers of one rack (the hub-member connections, used in both
directions). A server tells the front-end ``READY`` once its rack's
connections are up. Messages are length-prefixed frames: ``u32`` body
length, ``u8`` type, ``u32`` request, then the body.

**A request** is Q distinct objects drawn from the seed, each asked of one
of its holders drawn at random. ``one_all``: the front-end sends every
target server one query naming its objects, at once; each writes all its
objects back at once. ``sicc``: targets are grouped by rack into swarms; the
hub is the swarm's server with the most requested objects (ties: lowest
index); the front-end sends each hub one query carrying its members'
queries; the hub sends each member its query over their connection, writes
its own objects to the front-end first, then forwards each member's objects
as they arrive (continuous forwarding). A server writes everything queued
for a connection in one ``send`` (objects that arrived together share TCP
segments: SICC's packing). One level only: every hub talks to the
front-end. Not built: speed control, query redirection, hub failover.

**Front-end output** (one JSON object on stdout): per request its latency
(first query sent to last object received), every object's arrival time
(query latency), the server asked, the server whose connection carried it,
and the hubs. It checks that every requested object arrived exactly once
with its catalogue size, and exits 3 naming the fault otherwise.

Bounded: connecting, ``READY``, each request and ``--sync`` waits have
timeouts; a server exits after ``--idle-s`` without its front-end. Errors
exit non-zero with a message on stderr (2: bad arguments, 3: a run fault).
``--sync`` makes the front-end print ``connected`` after set-up and wait for
a line on stdin before the first request, and print ``done`` and wait for
a line again before closing: the caller reads counters in between.
"""

from __future__ import annotations

import argparse
import json
import random
import selectors
import socket
import struct
import sys
import time

HEAD = struct.Struct("!IBI")  # body length (type and request included), type, request
OBJ = struct.Struct("!I")  # an object frame's body starts with the object id
T_HELLO, T_READY, T_QUERY, T_OBJECT = 1, 2, 3, 4
FRONT_END = 0xFFFF  # the HELLO index of the front-end
MAX_FRAME = 1 << 24


class Fault(Exception):
    """The run went wrong (the message says what): exit 3."""


def catalogue(seed: int, n_objects: int, n_servers: int, replicas: int, lo: int, hi: int):
    """Sizes (bytes) and holders (server indices) of every object, from ``seed``."""
    rng = random.Random(f"webfanin:{seed}:catalogue")
    sizes, holders = [], []
    for _ in range(n_objects):
        sizes.append(rng.randint(lo, hi))
        holders.append(rng.sample(range(n_servers), replicas))
    return sizes, holders


def draw_request(seed: int, r: int, n_objects: int, queries: int, holders: list[list[int]]):
    """Request ``r``: (object, server asked) for Q distinct objects, from ``seed``."""
    rng = random.Random(f"webfanin:{seed}:request:{r}")
    objs = rng.sample(range(n_objects), queries)
    return [(o, rng.choice(holders[o])) for o in objs]


def plan(asked: list[tuple[int, int]], racks: list[str], method: str):
    """The queries to send: {first receiver: [(server, [objects]), ...]} (own group first)."""
    per: dict[int, list[int]] = {}
    for o, s in asked:
        per.setdefault(s, []).append(o)
    if method == "one_all":
        return {s: [(s, objs)] for s, objs in sorted(per.items())}
    swarms: dict[str, list[int]] = {}
    for s in sorted(per):
        swarms.setdefault(racks[s], []).append(s)
    out = {}
    for members in swarms.values():
        hub = min(members, key=lambda s: (-len(per[s]), s))
        out[hub] = [(hub, per[hub])] + [(m, per[m]) for m in members if m != hub]
    return out


def frame(kind: int, req: int, body: bytes = b"") -> bytes:
    return HEAD.pack(len(body) + 5, kind, req) + body


def query_body(groups: list[tuple[int, list[int]]]) -> bytes:
    parts = [struct.pack("!H", len(groups))]
    for s, objs in groups:
        parts.append(struct.pack(f"!HI{len(objs)}I", s, len(objs), *objs))
    return b"".join(parts)


def parse_query(body: bytes) -> list[tuple[int, list[int]]]:
    (n,), off, out = struct.unpack_from("!H", body), 2, []
    for _ in range(n):
        s, k = struct.unpack_from("!HI", body, off)
        off += 6
        out.append((s, list(struct.unpack_from(f"!{k}I", body, off))))
        off += 4 * k
    return out


class Conn:
    """One connection: a receive buffer cut into frames and a send queue flushed in one ``send``."""

    def __init__(self, sock: socket.socket, peer: int | None = None):
        self.sock, self.peer = sock, peer
        self.rbuf, self.wbuf = bytearray(), bytearray()
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        sock.setblocking(False)

    def frames(self) -> tuple[list[tuple[int, int, bytes]], bool]:
        """Read what is there; the complete frames and whether the peer closed."""
        closed = False
        try:
            while True:
                b = self.sock.recv(1 << 18)
                if not b:
                    closed = True
                    break
                self.rbuf += b
        except (BlockingIOError, InterruptedError):
            pass
        except ConnectionError:
            closed = True
        out, off = [], 0
        while len(self.rbuf) - off >= HEAD.size:
            n, kind, req = HEAD.unpack_from(self.rbuf, off)
            if n < 5 or n > MAX_FRAME:
                raise Fault(f"a frame of {n} bytes from peer {self.peer}: the stream is corrupt")
            if len(self.rbuf) - off < 4 + n:
                break
            out.append((kind, req, bytes(self.rbuf[off + HEAD.size : off + 4 + n])))
            off += 4 + n
        del self.rbuf[:off]
        return out, closed

    def flush(self) -> None:
        """Write what is queued, as much as the kernel takes, in one ``send``."""
        if self.wbuf:
            try:
                n = self.sock.send(self.wbuf)
            except (BlockingIOError, InterruptedError):
                n = 0
            del self.wbuf[:n]


def _connect(addr: tuple[str, int], deadline: float) -> socket.socket:
    while True:
        try:
            return socket.create_connection(addr, timeout=2)
        except OSError:
            if time.monotonic() > deadline:
                raise Fault(f"cannot connect to {addr[0]}:{addr[1]}") from None
            time.sleep(0.05)


def _send_blocking(sock: socket.socket, data: bytes) -> None:
    sock.setblocking(True)
    sock.sendall(data)
    sock.setblocking(False)


class Server:
    """A data server (and, per request, possibly a hub)."""

    def __init__(self, a, sizes, holders):
        self.a, self.sizes, self.holders = a, sizes, holders
        self.me = a.index
        self.sel = selectors.DefaultSelector()
        self.fe: Conn | None = None
        self.peers: dict[int, Conn] = {}
        self.pending: dict[int, int] = {}  # request -> member objects still to forward (as a hub)

    def objects_frames(self, req: int, objs: list[int]) -> bytes:
        out = []
        for o in objs:
            if self.me not in self.holders[o]:
                raise Fault(f"server {self.me} was asked for object {o}, which it does not hold")
            out.append(frame(T_OBJECT, req, OBJ.pack(o) + b"x" * self.sizes[o]))
        return b"".join(out)

    def run(self) -> int:
        a = self.a
        mates = [j for j, r in enumerate(a.racks) if r == a.racks[self.me] and j != self.me]
        ls = socket.socket()
        ls.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        ls.bind(("0.0.0.0", a.port))
        ls.listen(64)
        deadline = time.monotonic() + a.idle_s
        # connect to the rack mates of lower index; accept the others and the front-end
        for j in (j for j in mates if j < self.me):
            s = _connect((a.servers[j], a.port), deadline)
            s.sendall(frame(T_HELLO, 0, struct.pack("!H", self.me)))
            self.peers[j] = Conn(s, j)
        waiting = {j for j in mates if j > self.me}
        while waiting or self.fe is None:
            ls.settimeout(max(0.01, deadline - time.monotonic()))
            try:
                s, _ = ls.accept()
            except TimeoutError:
                raise Fault(
                    f"server {self.me}: no front-end or rack mates {sorted(waiting)} in time"
                ) from None
            s.settimeout(5)
            head = s.recv(HEAD.size + 2, socket.MSG_WAITALL)
            if len(head) != HEAD.size + 2 or head[4] != T_HELLO:
                raise Fault(f"server {self.me}: a connection without HELLO")
            (who,) = struct.unpack_from("!H", head, HEAD.size)
            if who == FRONT_END:
                self.fe = Conn(s, FRONT_END)
            else:
                self.peers[who] = Conn(s, who)
                waiting.discard(who)
        ls.close()
        _send_blocking(self.fe.sock, frame(T_READY, 0))
        for c in [self.fe, *self.peers.values()]:
            self.sel.register(c.sock, selectors.EVENT_READ, c)
        return self.loop()

    def loop(self) -> int:
        conns = [self.fe, *self.peers.values()]
        while True:
            for c in conns:
                want = selectors.EVENT_READ | (selectors.EVENT_WRITE if c.wbuf else 0)
                self.sel.modify(c.sock, want, c)
            events = self.sel.select(timeout=self.a.idle_s)
            if not events:
                raise Fault(f"server {self.me}: idle for {self.a.idle_s} s")
            for key, ev in events:
                c = key.data
                if not ev & selectors.EVENT_READ:
                    continue
                frames, closed = c.frames()
                for kind, req, body in frames:
                    self.on_frame(c, kind, req, body)
                if closed:
                    if c is self.fe:
                        return 0  # the front-end is done
                    if any(self.pending.values()):
                        raise Fault(f"server {self.me}: rack mate {c.peer} closed during a request")
                    self.sel.unregister(c.sock)
                    conns.remove(c)
            for c in conns:  # everything queued goes out in one send per connection
                c.flush()

    def on_frame(self, c: Conn, kind: int, req: int, body: bytes) -> None:
        if kind == T_QUERY:
            groups = parse_query(body)
            own = [objs for s, objs in groups if s == self.me]
            if c is self.fe:  # a query from the front-end: One-all target or a hub
                for s, objs in groups:
                    if s != self.me:
                        if s not in self.peers:
                            raise Fault(f"server {self.me}: member {s} is not a rack mate")
                        self.peers[s].wbuf += frame(T_QUERY, req, query_body([(s, objs)]))
                        self.pending[req] = self.pending.get(req, 0) + len(objs)
                for objs in own:
                    self.fe.wbuf += self.objects_frames(req, objs)
            else:  # a member's query from its hub: answer on the same connection
                for objs in own:
                    c.wbuf += self.objects_frames(req, objs)
        elif kind == T_OBJECT and c is not self.fe:  # a member's object: forward at once
            if self.pending.get(req, 0) <= 0:
                raise Fault(f"server {self.me}: an object of request {req} it did not ask for")
            self.pending[req] -= 1
            self.fe.wbuf += frame(T_OBJECT, req, body)
        else:
            raise Fault(f"server {self.me}: unexpected frame type {kind} from {c.peer}")


def frontend(a, sizes, holders) -> int:
    n = len(a.servers)
    t_set = time.monotonic()
    conns = []
    for i, ip in enumerate(a.servers):
        s = _connect((ip, a.port), t_set + a.connect_timeout_s)
        s.sendall(frame(T_HELLO, 0, struct.pack("!H", FRONT_END)))
        conns.append(Conn(s, i))
    sel = selectors.DefaultSelector()
    for c in conns:
        sel.register(c.sock, selectors.EVENT_READ, c)
    ready: set[int] = set()
    while len(ready) < n:
        events = sel.select(timeout=max(0.0, t_set + a.connect_timeout_s - time.monotonic()))
        if not events:
            raise Fault(f"servers {sorted(set(range(n)) - ready)} not READY in {a.connect_timeout_s} s")
        for key, _ in events:
            frames, closed = key.data.frames()
            if closed:
                raise Fault(f"server {key.data.peer} closed before READY (see its stderr)")
            ready.update(key.data.peer for kind, _, _ in frames if kind == T_READY)
    _sync(a, "connected")
    out = []
    for r in range(a.requests):
        asked = draw_request(a.seed, r, len(sizes), a.queries, holders)
        queries = plan(asked, a.racks, a.method)
        want = {o: s for o, s in asked}
        arrived: dict[int, tuple[float, int]] = {}
        t0 = time.monotonic()
        for first, groups in queries.items():
            _send_blocking(conns[first].sock, frame(T_QUERY, r, query_body(groups)))
        while len(arrived) < len(want):
            wait = t0 + a.request_timeout_s - time.monotonic()
            events = sel.select(timeout=wait) if wait > 0 else []
            if not events:
                raise Fault(f"request {r}: {len(want) - len(arrived)} of {len(want)} objects missing after "
                            f"{a.request_timeout_s} s")  # fmt: skip
            now = time.monotonic()
            for key, _ in events:
                c = key.data
                frames, closed = c.frames()
                for kind, req, body in frames:
                    o = OBJ.unpack_from(body)[0] if kind == T_OBJECT and len(body) >= OBJ.size else -1
                    if kind != T_OBJECT or req != r or o not in want:
                        raise Fault(f"request {r}: unexpected frame (type {kind}, request {req}, object {o})"
                                    f" from server {c.peer}")  # fmt: skip
                    if o in arrived:
                        raise Fault(f"request {r}: object {o} arrived twice")
                    if len(body) - OBJ.size != sizes[o]:
                        raise Fault(
                            f"request {r}: object {o} has {len(body) - OBJ.size} bytes, not {sizes[o]}"
                        )
                    arrived[o] = (now - t0, c.peer)
                if closed:
                    raise Fault(f"request {r}: server {c.peer} closed its connection (see its stderr)")
        latency = max(t for t, _ in arrived.values())
        out.append({
            "request": r, "latency_ms": latency * 1e3, "targets": len({s for s in want.values()}),
            "hubs": sorted(queries) if a.method == "sicc" else [],
            "objects": [{"object": o, "asked": want[o], "via": arrived[o][1], "ms": arrived[o][0] * 1e3,
                         "bytes": sizes[o]} for o in sorted(arrived)],
        })  # fmt: skip
    _sync(a, "done")
    for c in conns:
        c.sock.close()
    print(json.dumps({"method": a.method, "seed": a.seed, "queries": a.queries, "servers": n,
                      "requests": out}))  # fmt: skip
    return 0


def _sync(a, word: str) -> None:
    """With ``--sync``: say ``word`` and wait for a line on stdin."""
    if not a.sync:
        return
    print(word, file=sys.stderr, flush=True)
    sel = selectors.DefaultSelector()
    sel.register(sys.stdin, selectors.EVENT_READ)
    if not sel.select(timeout=a.sync_timeout_s) or not sys.stdin.readline():
        raise Fault(f"no go-ahead on stdin within {a.sync_timeout_s} s after {word!r}")


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(prog="webfanin.py", description="SICC's web fan-in over kernel TCP")
    sub = ap.add_subparsers(dest="role", required=True)
    for role in ("server", "frontend"):
        p = sub.add_parser(role)
        p.add_argument("--servers", required=True, help="the data servers' addresses, IP,IP,...")
        p.add_argument("--racks", required=True, help="each server's rack label, R,R,... (same order)")
        p.add_argument("--seed", type=int, required=True)
        p.add_argument("--port", type=int, default=5700)
        p.add_argument("--objects", type=int, default=100_000)
        p.add_argument("--replicas", type=int, default=3)
        p.add_argument("--min-bytes", type=int, default=20)
        p.add_argument("--max-bytes", type=int, default=1000)
        if role == "server":
            p.add_argument("--index", type=int, required=True, help="this server's place in --servers")
            p.add_argument("--idle-s", type=float, default=120.0)
        else:
            p.add_argument("--method", choices=("one_all", "sicc"), required=True)
            p.add_argument("--queries", type=int, default=1000)
            p.add_argument("--requests", type=int, default=5)
            p.add_argument("--connect-timeout-s", type=float, default=30.0)
            p.add_argument("--request-timeout-s", type=float, default=60.0)
            p.add_argument("--sync", action="store_true", help="wait for stdin lines around the requests")
            p.add_argument("--sync-timeout-s", type=float, default=60.0)
    a = ap.parse_args(argv)
    a.servers = a.servers.split(",")
    a.racks = a.racks.split(",")
    n = len(a.servers)
    if len(a.racks) != n:
        ap.error(f"--racks names {len(a.racks)} racks for {n} servers")
    if not 1 <= a.replicas <= n or a.objects < 1 or not 1 <= a.min_bytes <= a.max_bytes:
        ap.error("need 1 <= --replicas <= servers, --objects >= 1, 1 <= --min-bytes <= --max-bytes")
    if a.role == "server" and not 0 <= a.index < n:
        ap.error(f"--index {a.index} is not a place in --servers (0..{n - 1})")
    if a.role == "frontend" and (not 1 <= a.queries <= a.objects or a.requests < 1):
        ap.error("need 1 <= --queries <= --objects and --requests >= 1")
    sizes, holders = catalogue(a.seed, a.objects, n, a.replicas, a.min_bytes, a.max_bytes)
    try:
        return Server(a, sizes, holders).run() if a.role == "server" else frontend(a, sizes, holders)
    except (Fault, OSError) as e:
        print(f"webfanin.py {a.role}: {e}", file=sys.stderr)
        return 3


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
