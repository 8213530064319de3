#!/usr/bin/env python3
"""What releases a hung agent's host, and what it costs: the choices of the
agent's watchdog (issue 29, item 2) measured side by side.

Builds a two-host star testbed (100 Mbit/s hosts, 2-ms slices,
``fail_open_ms`` 200; namespaces made here and removed at the end, also on
error), streams TCP from h1 to h2 for 5 s with a controller in the root
namespace, and 1.5 s in stops h1's agent with SIGSTOP for 2 s. Per run, interleaved
and repeated:

- ``none``: ``--no-watchdog`` (the agent as it was): nothing releases the host;
- ``kill``: ``--no-watchdog``, and ``fail_open_ms`` + 50 ms after the stop the
  stopped agent is killed (SIGKILL), as a watchdog that kills would: the
  kernel unbinds the queue (dropping what it held) and ``--queue-bypass`` passes
  new packets;
- ``watchdog``: the agent's own watchdog (queue length 0 + one batch verdict).

It prints the stall (the receiver's longest time without a read from the
stop to 2 s later), h1's TCP retransmitted segments over the run, and whether
every byte arrived.

    sudo python3 scripts/agent_watchdog_choice.py --repeat 3
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "python"))

from xco.testbed import daemons, netns, topo  # noqa: E402

FAIL_OPEN_MS = 200
STOP_S = 2.0

SINK = """
import json, socket, time
ls = socket.socket(); ls.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
ls.bind(("0.0.0.0", 5420)); ls.listen(1); ls.settimeout(30)
c, _ = ls.accept(); c.settimeout(30)
n = 0; prog = []
while True:
    b = c.recv(1 << 16)
    if not b:
        break
    n += len(b); prog.append(time.monotonic())
print(json.dumps({"bytes": n, "progress": prog}))
"""

SOURCE = """
import socket, sys, time
for _ in range(200):
    try:
        s = socket.create_connection((sys.argv[1], 5420), timeout=30); break
    except ConnectionRefusedError:
        time.sleep(0.05)
buf = bytes(1 << 16); n = 0; end = time.monotonic() + 5
while time.monotonic() < end:
    n += s.send(buf)
s.close()
print(n)
"""


def retrans(tb: netns.Testbed) -> int:
    lines = netns.sh("cat", "/proc/net/snmp", ns=tb.ns("h1")).stdout.splitlines()
    tcp = [x.split() for x in lines if x.startswith("Tcp:")]
    return int(tcp[1][tcp[0].index("RetransSegs")])


def run(tb: netns.Testbed, out: Path, kind: str) -> dict:
    x = daemons.Xco(tb, out, agents=[])
    x.start_controller()
    agent = x.start_agent("h1", *([] if kind == "watchdog" else ["--no-watchdog"]))
    try:
        x.wait_ready()
        r0 = retrans(tb)
        sink = tb.spawn("h2", ["python3", "-c", SINK], out / "sink.json", split_stderr=True)
        src = tb.spawn("h1", ["python3", "-c", SOURCE, tb.topo.host("h2").addr], out / "src.log")
        time.sleep(1.5)
        t0 = time.monotonic()
        os.kill(agent.pid, signal.SIGSTOP)
        if kind == "kill":
            time.sleep((FAIL_OPEN_MS + 50) / 1e3)
            agent.kill()
            agent.wait()
            time.sleep(STOP_S - (FAIL_OPEN_MS + 50) / 1e3)
        else:
            time.sleep(STOP_S)
            os.kill(agent.pid, signal.SIGCONT)
        src.wait(30)
        sink.wait(30)
        r1 = retrans(tb)
    finally:
        x.__exit__(None, None, None)
    got = json.loads((out / "sink.json").read_text())
    ts = [t0] + [t for t in got["progress"] if t0 < t < t0 + STOP_S] + [t0 + STOP_S]
    return {
        "kind": kind,
        "stall_ms": round(max(b - a for a, b in zip(ts, ts[1:], strict=False)) * 1e3),
        "retrans": r1 - r0,
        "complete": got["bytes"] == int((out / "src.log").read_text().split()[-1]),
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    netns.require_root("agent_watchdog_choice")
    work = Path(tempfile.mkdtemp(prefix="xco-watchdog-"))
    path = work / "pair.toml"
    extra = f"fail_open_ms = {FAIL_OPEN_MS}"
    path.write_text(topo.star_toml(2, prefix="xwdc", slice_ms=2.0, extra_control=extra))
    t = topo.load(path)
    tb = netns.up(t)
    try:
        for i in range(args.repeat):
            for kind in ("none", "kill", "watchdog"):
                print(json.dumps(run(tb, work / f"{kind}-{i}", kind)), flush=True)
    finally:
        tb.stop_all()
        netns.down(t)


if __name__ == "__main__":
    main()
