"""Finding the processes a test run started and left running.

Every process the suite starts inherits its environment, so the suite marks its
environment with a token of its own (``XCO_TEST_RUN``) before any test runs;
children, grandchildren and what a wrapper (``ip netns exec``, ``faketime``)
starts carry it too. At the end, a process that still carries the token was
started by this run and outlived it: the suite fails and names it. The search
reads /proc/PID/environ and matches the exact token, so no process of another
run or of anyone else is ever named (or ended).
"""

from __future__ import annotations

import os
from pathlib import Path

ENV_KEY = "XCO_TEST_RUN"


def carriers(
    token: str, proc: Path = Path("/proc"), exclude: set[int] | None = None
) -> list[tuple[int, str]]:
    """(pid, command line) of every live process whose environment holds
    ``XCO_TEST_RUN=token``, except those in ``exclude`` and zombies."""
    needle = f"{ENV_KEY}={token}".encode()
    skip = exclude or set()
    found = []
    for d in proc.iterdir():
        if not d.name.isdigit() or int(d.name) in skip:
            continue
        try:
            env = (d / "environ").read_bytes()
            if needle not in env.split(b"\0"):
                continue
            if _state(d) == "Z":
                continue
            cmd = (d / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace").strip()
        except OSError:  # gone meanwhile, or not ours to read
            continue
        found.append((int(d.name), cmd))
    return sorted(found)


def _state(d: Path) -> str:
    # /proc/PID/stat: "pid (comm) S ...": the state follows the last ')'
    stat = (d / "stat").read_text()
    return stat[stat.rindex(")") + 2 :].split(" ", 1)[0]


def ancestors(pid: int | None = None, proc: Path = Path("/proc")) -> set[int]:
    """``pid`` (default: this process) and every process above it."""
    out = set()
    p = pid or os.getpid()
    while p > 0 and p not in out:
        out.add(p)
        try:
            stat = (proc / str(p) / "stat").read_text()
        except OSError:
            break
        p = int(stat[stat.rindex(")") + 2 :].split(" ")[1])
    return out
