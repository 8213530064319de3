"""This machine's memory and this process's: what a run may use, and what it holds already.

``xco sim run`` refuses a scenario whose estimate (``xco sim check`` prints
it) plus what the process holds already exceeds ``--max-memory``, by default
the memory the kernel says is available (``MemAvailable`` in /proc/meminfo).
"""

from __future__ import annotations

import os
from pathlib import Path


def _meminfo_kib(key: str, path: str = "/proc/meminfo") -> int | None:
    try:
        for line in Path(path).read_text().splitlines():
            if line.startswith(f"{key}:"):
                return int(line.split()[1])
    except (OSError, ValueError, IndexError):
        return None
    return None


def available_bytes() -> int:
    """Memory a new run may take: ``MemAvailable`` (else ``MemTotal``, else the
    physical memory from sysconf)."""
    for key in ("MemAvailable", "MemTotal"):
        kib = _meminfo_kib(key)
        if kib is not None:
            return kib * 1024
    return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")


def rss_bytes() -> int:
    """This process's resident memory now (``VmRSS``), 0 where unknown."""
    kib = _meminfo_kib("VmRSS", "/proc/self/status")
    return 0 if kib is None else kib * 1024


def human(n: float) -> str:
    """``n`` bytes for people: ``512 B``, ``1.5 KiB``, ``12.3 MiB`` (the simulator's own wording)."""
    from . import _native

    return _native.human_bytes(max(0, round(n)))
