#!/usr/bin/env python3
"""Where a callgrind run's instructions go, by line of our own sources.

callgrind_annotate charges inlined standard-library code (slice iterators,
bounds checks, Option helpers) to the library's files, which hides which of
our loops it belongs to. This script charges every instruction to the
innermost frame of its inline chain that lies in our crates instead.

    CARGO_PROFILE_RELEASE_DEBUG=true cargo build --release -p xco-bench --example bench_sched
    valgrind --tool=callgrind --dump-instr=yes --callgrind-out-file=/tmp/cg.out \\
        target/release/examples/bench_sched 32
    python3 scripts/callgrind_lines.py /tmp/cg.out target/release/examples/bench_sched \\
        --per 2037000   # e.g. hosts considered in the run: cost per host

Needs addr2line (binutils). Prints the top lines and the total per file.
"""

import argparse
import collections
import re
import shutil
import subprocess
import sys
from pathlib import Path

CRATES = str(Path(__file__).resolve().parent.parent / "crates") + "/"

ADDR = re.compile(r"^(0x[0-9a-f]+|\+\d+|-\d+|\*)\s+(.*)$")


def costs(path: str, event: str) -> collections.Counter:
    """Exclusive cost of `event` per instruction address."""
    per_addr: collections.Counter = collections.Counter()
    index = None
    positions = 1
    addr = 0
    after_call = False
    with open(path) as f:
        for line in f:
            if line.startswith("positions:"):
                names = line.split()[1:]
                if not names or names[0] != "instr":
                    sys.exit("the profile has no instruction addresses: record it with --dump-instr=yes")
                positions = len(names)
                continue
            if line.startswith("events:"):
                names = line.split()[1:]
                if event not in names:
                    sys.exit(f"event {event!r} not in this profile (it has {', '.join(names)})")
                index = names.index(event)
                continue
            if line.startswith("calls="):
                after_call = True  # the next cost line is the call's inclusive cost
                continue
            m = ADDR.match(line)
            if not m or index is None:
                continue
            a = m.group(1)
            if a.startswith("0x"):
                addr = int(a, 16)
            elif a[0] in "+-":
                addr += int(a)
            if after_call:
                after_call = False
                continue
            fields = m.group(2).split()[positions - 1 :]  # the costs, after the other positions
            if len(fields) > index:
                per_addr[addr] += int(fields[index])
    return per_addr


def inline_chains(binary: str, addrs: list[int]) -> dict[int, list[str]]:
    """Inline chain (innermost first) of each address, as file:line strings."""
    chains: dict[int, list[str]] = {}
    for i in range(0, len(addrs), 4000):
        chunk = addrs[i : i + 4000]
        out = subprocess.run(
            ["addr2line", "-a", "-i", "-e", binary, *map(hex, chunk)],
            capture_output=True,
            text=True,
            check=True,
        ).stdout
        parts = re.split(r"^(0x[0-9a-f]+)$", out, flags=re.M)
        for j in range(1, len(parts), 2):
            chains[int(parts[j], 16)] = parts[j + 1].strip().split("\n")
    return chains


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("profile", help="callgrind output recorded with --dump-instr=yes")
    p.add_argument("binary", help="the profiled binary (with debug info)")
    p.add_argument("--event", default="Ir", help="event to attribute (default Ir: instructions)")
    p.add_argument("--ours", default=CRATES, help=f"path prefix of our sources (default {CRATES})")
    p.add_argument("--per", type=float, default=1.0, help="divide costs by this (e.g. units of work)")
    p.add_argument("--top", type=int, default=40, help="lines to print (default 40)")
    a = p.parse_args()
    if a.per <= 0:
        sys.exit("--per must be positive")
    for what, path in (("profile", a.profile), ("binary", a.binary)):
        if not Path(path).is_file():
            sys.exit(f"{what} {path!r}: no such file")
    if shutil.which("addr2line") is None:
        sys.exit("addr2line not found: install binutils")
    per_addr = costs(a.profile, a.event)
    if not per_addr:
        sys.exit("no costs per instruction address found: record a callgrind profile with --dump-instr=yes")
    chains = inline_chains(a.binary, [x for x, c in per_addr.items() if c > 0])
    by_line: collections.Counter = collections.Counter()
    for addr, c in per_addr.items():
        ours = next((f for f in chains.get(addr, []) if a.ours in f), None)
        key = ours.split(a.ours, 1)[1].split(" ")[0] if ours else "(not ours) libc, std sort"
        by_line[key] += c
    total = sum(per_addr.values())
    print(f"{a.event} total {total:,} ({total / a.per:,.1f} per unit)")
    for key, c in by_line.most_common(a.top):
        print(f"{c / a.per:10.1f} {100 * c / total:5.1f}%  {key}")
    by_file: collections.Counter = collections.Counter()
    for key, c in by_line.items():
        by_file[key.rsplit(":", 1)[0] if key[0] != "(" else key] += c
    print("by file:")
    for key, c in by_file.most_common():
        print(f"{c / a.per:10.1f} {100 * c / total:5.1f}%  {key}")


if __name__ == "__main__":
    main()
