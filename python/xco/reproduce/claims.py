"""A paper's claim beside what a run measured, with a verdict from a stated rule.

Every verdict is computed from the run's figures by a rule written next to it
(never a constant): ``holds``, ``partly`` or ``does not hold``. A summary
prints, per claim, the claim (quoted or closely paraphrased from the spec),
our figures, the verdict with its rule, and one sentence why.
"""

from __future__ import annotations

from dataclasses import dataclass

HOLDS = "holds"
PARTLY = "partly"
FAILS = "does not hold"


def all_any(parts: list[bool]) -> str:
    """``holds`` if every part holds, ``partly`` if some do, else ``does not hold``."""
    if parts and all(parts):
        return HOLDS
    return PARTLY if any(parts) else FAILS


def at_least(value: float, holds: float, partly: float) -> str:
    """``holds`` from ``holds`` up, ``partly`` from ``partly`` up, else ``does not hold``."""
    if value >= holds:
        return HOLDS
    return PARTLY if value >= partly else FAILS


def at_most(value: float, holds: float, partly: float) -> str:
    """``holds`` up to ``holds``, ``partly`` up to ``partly``, else ``does not hold``."""
    if value <= holds:
        return HOLDS
    return PARTLY if value <= partly else FAILS


@dataclass
class Check:
    """One claim and what this run says about it."""

    claim: str
    ours: str
    verdict: str
    rule: str
    why: str

    def lines(self) -> list[str]:
        """The claim as printed in a summary."""
        return [
            f"claim: {self.claim}",
            f"  ours: {self.ours}",
            f"  -> {self.verdict} (rule: {self.rule})",
            f"  why: {self.why}",
        ]


def text(checks: list[Check], spec: str = "xco.md") -> str:
    """The claims block of a summary; ``spec``: the spec file that states the paper's claims."""
    out = [f"what the paper showed (spec {spec}), and what this run shows:"]
    for c in checks:
        out += ["", *c.lines()]
    return "\n".join(out)
