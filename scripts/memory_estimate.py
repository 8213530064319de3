"""How close `xco sim check`'s memory estimate comes to a run's measured peak.

For each scenario: the estimate as `xco sim check` prints it (the run's parts
plus what the Python process holds before a run), then `xco sim run` under
`/usr/bin/time -v` for its maximum resident set size. Prints a Markdown table
(the one in docs/speed.md, "Memory: estimate vs measured").

    source .venv/bin/activate
    python scripts/memory_estimate.py [--keep DIR]

The scenarios: scenarios/incast.toml (40 servers, 10 rounds), and k = 8 and
k = 16 fat-trees (128 and 1,024 hosts) at 10 Gbit/s with 300 KB switch
buffers, one bulk TCP flow per host to a random other host (a seeded
permutation), 20 ms simulated, a time series every millisecond.
"""

from __future__ import annotations

import argparse
import random
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent


def fattree(k: int, duration_ms: float = 20.0, seed: int = 1) -> str:
    """A k-ary fat-tree with one bulk flow per host to another (a seeded permutation)."""
    hosts = k**3 // 4
    perm = list(range(hosts))
    random.Random(seed).shuffle(perm)
    for i in range(hosts):
        if perm[i] == i:
            j = (i + 1) % hosts
            perm[i], perm[j] = perm[j], perm[i]
    lines = [
        f'name = "fattree-k{k}-permutation"',
        "[run]",
        f"seed = {seed}",
        f"duration_ms = {duration_ms}",
        "[topology]",
        'kind = "fat_tree"',
        f"k = {k}",
        'host_rate = "10Gbps"',
        "link_delay_us = 1",
        'switch_buffer = "300KB"',
        "[tcp]",
        "rto_min_ms = 1",
        "[output]",
        "timeseries_bin_us = 1000",
    ]
    for i, d in enumerate(perm):
        lines += ["[[apps]]", 'kind = "bulk"', f'src = "h{i}"', f'dst = "h{d}"']
    return "\n".join(lines) + "\n"


def xco(*args: str) -> list[str]:
    return [sys.executable, "-m", "xco.cli", *args]


def estimate(path: Path) -> tuple[int, int, str]:
    """(run's estimate, with this process, events line) from `xco sim check`."""
    out = subprocess.run(xco("sim", "check", str(path)), capture_output=True, text=True, check=True).stdout
    run = int(re.search(r"memory: about [^(]+\((\d+) B\)", out).group(1))
    base = re.search(r"this process\s+([0-9.]+) (KiB|MiB|GiB)", out)
    scale = {"KiB": 1 << 10, "MiB": 1 << 20, "GiB": 1 << 30}[base.group(2)]
    events = re.search(r"events: about (\S+)", out).group(1)
    return run, run + int(float(base.group(1)) * scale), events


def measure(path: Path, out: Path) -> tuple[int, float, int]:
    """(peak RSS in bytes, wall seconds, events) of `xco sim run` under /usr/bin/time -v."""
    t0 = time.monotonic()
    r = subprocess.run(
        ["/usr/bin/time", "-v", *xco("sim", "run", str(path), "--out", str(out), "--quiet")],
        capture_output=True,
        text=True,
        check=True,
    )
    wall = time.monotonic() - t0
    kib = int(re.search(r"Maximum resident set size \(kbytes\): (\d+)", r.stderr).group(1))
    events = int(re.search(r"([\d,]+) events in", r.stdout).group(1).replace(",", ""))
    return kib * 1024, wall, events


def mib(b: int) -> str:
    return f"{b / (1 << 20):,.1f}"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--keep", default=None, help="write the scenarios and outputs here (default: a temp dir)")
    args = ap.parse_args()
    work = Path(args.keep) if args.keep else Path(tempfile.mkdtemp(prefix="xco-mem-"))
    work.mkdir(parents=True, exist_ok=True)
    cases = [("scenarios/incast.toml", REPO / "scenarios/incast.toml")]
    for k in (8, 16):
        p = work / f"fattree-k{k}.toml"
        p.write_text(fattree(k))
        cases.append((f"k = {k} fat-tree, {k**3 // 4} hosts", p))
    print(
        "| scenario | estimate: run (MiB) | estimate with the process (MiB) | peak RSS (MiB) "
        "| estimate / peak | events estimated | events run | wall (s) |"
    )
    print("|---|---:|---:|---:|---:|---:|---:|---:|")
    for name, path in cases:
        run, total, ev_est = estimate(path)
        peak, wall, events = measure(path, work / f"out-{path.stem}")
        print(
            f"| {name} | {mib(run)} | {mib(total)} | {mib(peak)} | {total / peak:.2f} "
            f"| {ev_est} | {events:.1e} | {wall:.1f} |"
        )
    if not args.keep:
        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
