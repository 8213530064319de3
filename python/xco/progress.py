"""A long single run's progress on stderr: simulated time of the end, rates, ETA.

The simulator publishes its simulated time, events and packet-hops every
few thousand events (``RunControl.progress()``); :class:`RunProgress` turns
that into one line, redrawn in place on a terminal (five times a second) or
written as a new line every ``every_s`` seconds elsewhere (a log). Wall-clock
figures go to stderr only, never into an output file.
"""

from __future__ import annotations

import sys
import time
from typing import Any, TextIO


def _count(x: float) -> str:
    for div, unit in ((1e9, "G"), (1e6, "M"), (1e3, "k")):
        if x >= div:
            return f"{x / div:.2f} {unit}"
    return f"{x:.0f}"


def _duration(s: float) -> str:
    if s < 60:
        return f"{s:.0f} s"
    if s < 3600:
        return f"{int(s // 60)} min {int(s % 60):02d} s"
    return f"{int(s // 3600)} h {int(s % 3600 // 60):02d} min"


def line(p: dict[str, Any], wall_s: float) -> str:
    """The progress line for state ``p`` after ``wall_s`` seconds of running."""
    sim_s, end_s = p["sim_s"], p["end_s"]
    if wall_s < 0.05:
        rate = "started"  # too early for a rate
    else:
        rate = f"{_count(p['events'] / wall_s)} events/s, {_count(p['packet_hops'] / wall_s)} packet-hops/s"
    if p["end_is_duration"] and end_s > 0:
        share = min(sim_s / end_s, 1.0)
        eta = ""
        if sim_s > 0 and wall_s >= 0.05:
            eta = f", ETA {_duration(wall_s * (end_s - sim_s) / sim_s)}"
        return f"simulated {sim_s:.6g} of {end_s:.6g} s ({share:.1%}), {rate}{eta}"
    return f"simulated {sim_s:.6g} s (ends when the apps finish, by {end_s:.6g} s at the latest), {rate}"


class RunProgress:
    """Shows one run's progress on ``stream``; ``tty`` None: when ``stream`` is a terminal."""

    def __init__(
        self, label: str, stream: TextIO | None = None, tty: bool | None = None, every_s: float = 2.0
    ):
        self.label = label
        self.stream = stream or sys.stderr
        self.tty = self.stream.isatty() if tty is None else tty
        self.every_s = 0.2 if self.tty else every_s
        self.started_at: float | None = None
        self.shown_at = 0.0
        self.width = 0

    def update(self, p: dict[str, Any]) -> None:
        """Show state ``p`` if it is time to (the first time as soon as the run has started)."""
        if not p["started"]:
            return
        now = time.monotonic()
        if self.started_at is None:
            self.started_at = now
        elif now - self.shown_at < self.every_s:
            return
        self.shown_at = now
        text = f"{self.label}: {line(p, now - self.started_at)}"
        if self.tty:
            pad = max(self.width - len(text), 0)
            self.width = len(text)
            self.stream.write("\r" + text + " " * pad)
        else:
            self.stream.write(text + "\n")
        self.stream.flush()

    def close(self) -> None:
        """End the line drawn in place (a terminal), so later messages start on their own."""
        if self.tty and self.width:
            self.stream.write("\n")
            self.stream.flush()
        self.width = 0
