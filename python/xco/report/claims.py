"""Reading the claims out of a reproduction's summary.

Every reproduction's summary states each claim of its paper beside our figure
and a verdict, in one of the shapes :mod:`xco.reproduce.claims` and the
older reproductions print::

    claim: <the paper's words>            claim (<case>): <words>. ours: <figures> -> <verdict> (<rule>)
      ours: <our figures>
      -> <verdict> (rule: <rule>)
      why: <one sentence>

A claim block starts at a line that begins with ``claim`` and ends at the
next such line or a blank line; the verdict is the first ``-> holds``,
``-> partly`` or ``-> does not hold`` in it. A summary with no such block
has no verdict, and the report says so (it never invents one).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

VERDICTS = ("holds", "partly", "does not hold")

# the case in parentheses may hold one level of its own: "claim (SFQ (ns-2.35)):"
_START = re.compile(r"^claim(?:\s*\(((?:[^()]|\([^()]*\))*)\))?\s*:\s*")
_VERDICT = re.compile(r"->\s*(holds|partly|does not hold)\b")
_OURS = re.compile(r"(?:^|\s|\.)ours:\s*")


@dataclass(frozen=True)
class Claim:
    """One claim of a summary: the paper's words, our figures, the verdict and the rest
    (the rule and why, as the summary words them)."""

    case: str
    claim: str
    ours: str
    verdict: str | None
    detail: str


def _blocks(summary: str) -> list[list[str]]:
    blocks: list[list[str]] = []
    cur: list[str] | None = None
    for line in summary.splitlines():
        if _START.match(line):
            cur = [line]
            blocks.append(cur)
        elif cur is not None:
            if not line.strip():
                cur = None
            else:
                cur.append(line)
    return blocks


def _squash(text: str) -> str:
    return " ".join(text.split())


def parse(summary: str) -> list[Claim]:
    """The claims ``summary`` states, in order."""
    out = []
    for block in _blocks(summary):
        head = _START.match(block[0])
        assert head is not None
        case = head.group(1) or ""
        text = "\n".join([block[0][head.end() :], *block[1:]])
        v = _VERDICT.search(text)
        before, after = (text[: v.start()], text[v.end() :]) if v else (text, "")
        o = _OURS.search(before)
        claim, ours = (before[: o.start()], before[o.end() :]) if o else (before, "")
        out.append(
            Claim(
                case=case,
                claim=_squash(claim).rstrip(". "),
                ours=_squash(ours),
                verdict=v.group(1) if v else None,
                detail=_squash(after),
            )
        )
    return out
