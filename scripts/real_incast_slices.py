#!/usr/bin/env python3
"""What the real XCo timeslice series of ``real-incast`` loses, by measurement (issue 25, item 5).

Runs the incast of ``xco reproduce real-incast`` (N servers -> 1 client, 100 Mbit/s,
16,000-B responses, barrier rounds) under the real daemons with several [control]
settings, one run each, and prints goodput and round times beside what one server's
response needs on the wire, and the machine's 1-minute load average after each run (the
agents' timers are late on a busy machine, and a late gate lets slices overlap: port drops).
Needs root (network namespaces); about 10 s per variant.

    sudo .venv/bin/python scripts/real_incast_slices.py [--n 32] [--rounds 30]
"""

from __future__ import annotations

import argparse
import os
import sys

from xco.reproduce import real_incast as ri

VARIANTS = [
    ("2 ms slices (the reproduction's)", 2.0, ""),
    ("2 ms, no work conservation", 2.0, "work_conservation = false"),
    ("2 ms, give-back after 50 us", 2.0, "giveback_hysteresis_us = 50"),
    ("1.5 ms slices", 1.5, ""),
    ("4 ms slices", 4.0, ""),
]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--n", type=int, default=ri.XCO_N, help="servers (default %(default)s)")
    ap.add_argument("--rounds", type=int, default=ri.ROUNDS, help="barrier rounds (default %(default)s)")
    a = ap.parse_args(argv)
    if not 1 <= a.n <= 64 or not 1 <= a.rounds <= 1000:
        print("real_incast_slices: --n must be 1..64 and --rounds 1..1000", file=sys.stderr)
        return 2
    # one response on the wire: payload plus 52 B of TCP/IP and 38 B of Ethernet per 1448-B segment
    segs = -(-ri.RESPONSE_BYTES // 1448)
    wire_ms = (ri.RESPONSE_BYTES + segs * (52 + 38)) * 8 / (ri.RATE_MBPS * 1e3)
    print(f"N = {a.n}, {a.rounds} rounds; one {ri.RESPONSE_BYTES}-B response takes {wire_ms:.2f} ms at "
          f"{ri.RATE_MBPS} Mbit/s; a round needs at least {a.n * wire_ms:.1f} ms")  # fmt: skip
    print(f"{'variant':<36} {'goodput Mbit/s':>15} {'round ms (median)':>18} {'max':>8} {'drops':>6}"
          f" {'load':>5}")  # fmt: skip
    for label, slice_ms, extra in VARIANTS:
        d = ri.run_real([a.n], rounds=a.rounds, series="timeslice", slice_ms=slice_ms, extra_control=extra,
                        prefix="xrs")  # fmt: skip
        r = d.iloc[0]
        print(f"{label:<36} {r['goodput_mbps']:>15.1f} {r['round_ms_median']:>18.1f} "
              f"{r['round_ms_max']:>8.1f} {int(r['port_drops']):>6} {os.getloadavg()[0]:>5.1f}",
              flush=True)  # fmt: skip
    return 0


if __name__ == "__main__":
    sys.exit(main())
