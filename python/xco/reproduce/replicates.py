"""Replicates: one reproduction run with several seeds (``--seeds N``).

Every point of a reproduction runs with seeds ``base .. base + N - 1``; each
seed's tables are the ones a single-seed run writes, with a ``seed`` column
first. This module turns them into what a reader needs:

- :func:`interval_table`: per point (the key columns), every metric's mean and
  95 % confidence interval of the mean over the seeds (Student's t with N - 1
  degrees of freedom; :func:`xco.campaign.stats.mean_ci95`);
- :func:`combine`: one summary from the seeds' own summaries. Each claim is
  stated once: our figures as ``mean [low, high]`` over the seeds, and a
  verdict decided on the interval where the reproduction gives the claim's
  rule as a function of one figure (:class:`Headline`): ``holds`` only if the
  whole interval satisfies the rule, ``does not hold`` if the whole interval
  fails it, otherwise ``partly`` (the interval straddles the threshold). A
  claim without such a rule is decided on the seeds' own verdicts: ``holds``
  (or ``does not hold``) only if every seed's verdict is that, else
  ``partly``, and the summary says so. Below follow the seeds' own summaries,
  their claim lines marked ``seed S |`` so that a report reads each claim once.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from dataclasses import dataclass

from .._lazy import pd
from ..campaign.stats import mean_ci95

HOLDS, PARTLY, FAILS = "holds", "partly", "does not hold"
STRADDLES = "partly — the interval straddles the threshold"
INTERVAL_WORDS = "95 % interval of the mean (Student t, N - 1 degrees of freedom)"


def seeds_of(seed: int, n: int) -> list[int]:
    """The seeds of a run with ``--seed seed --seeds n``."""
    return [seed + i for i in range(n)]


def seeds_text(seeds: list[int]) -> str:
    """``seed 1`` or ``seeds 1..3 (3 seeds)``."""
    if len(seeds) == 1:
        return f"seed {seeds[0]}"
    return f"seeds {seeds[0]}..{seeds[-1]} ({len(seeds)} seeds)"


def interval(values: list[float]) -> tuple[int, float, float, float]:
    """``(n, mean, low, high)`` of ``values``: the mean and its 95 % interval (NaN ends for n < 2;
    a missing value, NaN or ``pd.NA`` of a nullable column, is left out)."""
    n, mean, _std, half = mean_ci95([math.nan if pd.isna(v) else float(v) for v in values])
    return n, mean, mean - half, mean + half


def default_keys(df: pd.DataFrame, labels: list[str]) -> list[str]:
    """A table's key columns (what names a point, or a row within it): every column that is not a
    number, the point labels, and ``t_s`` (a time bin); ``seed`` is never one."""
    keys = []
    for c in df.columns:
        if c == "seed":
            continue
        numeric = pd.api.types.is_numeric_dtype(df[c]) and df[c].dtype != bool
        if not numeric or c in labels or c == "t_s":
            keys.append(c)
    return keys


def interval_table(df: pd.DataFrame, keys: list[str]) -> pd.DataFrame:
    """Per value of ``keys`` (in first-seen order): ``seeds`` (how many rows) and, per numeric
    column, ``<col>_mean``, ``<col>_ci95_low`` and ``<col>_ci95_high``."""
    metrics = [
        c
        for c in df.columns
        if c not in keys and c != "seed" and pd.api.types.is_numeric_dtype(df[c]) and df[c].dtype != bool
    ]
    rows = []
    for key, g in df.groupby(keys, sort=False, dropna=False) if keys else [((), df)]:
        key = key if isinstance(key, tuple) else (key,)
        row = dict(zip(keys, key, strict=True))
        row["seeds"] = len(g)
        for c in metrics:
            _, mean, lo, hi = interval(list(g[c]))
            row[f"{c}_mean"], row[f"{c}_ci95_low"], row[f"{c}_ci95_high"] = mean, lo, hi
        rows.append(row)
    return pd.DataFrame(rows)


def mean_table(df: pd.DataFrame, keys: list[str]) -> pd.DataFrame:
    """``df`` with one row per value of ``keys``: each numeric column's mean over the seeds."""
    t = interval_table(df, keys)
    out = t[keys].copy()
    for c in df.columns:
        if f"{c}_mean" in t.columns:
            out[c] = t[f"{c}_mean"]
    return out


@dataclass
class Headline:
    """A claim's rule as a threshold rule on one figure, for a verdict on the figure's interval.

    ``claim`` is how the claim's text starts in the summary (``claim (<case>): <claim>...``);
    ``value`` the figure one seed gives; ``rule`` the verdict of one value, constant between the
    ``thresholds`` (the values where the rule's verdict changes)."""

    claim: str
    name: str
    value: float
    rule: Callable[[float], str]
    thresholds: tuple[float, ...]
    case: str = ""


def interval_verdict(values: list[float], h: Headline) -> tuple[str, str]:
    """The verdict on the 95 % interval of ``values`` under ``h``'s rule, and a phrase saying why:
    the rule's verdict if no threshold lies inside the interval (the rule is the same on all of it),
    else ``partly`` (the interval straddles the threshold)."""
    n, mean, lo, hi = interval(values)
    if n < 2 or not math.isfinite(lo):
        return h.rule(mean), f"{n} finite value(s), no interval: mean {mean:.4g}"
    span = f"[{lo:.4g}, {hi:.4g}] (mean {mean:.4g})"
    inside = [t for t in h.thresholds if lo < t < hi]
    if not inside:
        v = h.rule(mean)
        return v, f"the whole interval {span} gives {v}"
    return STRADDLES, f"the interval {span} contains the threshold {', '.join(f'{t:g}' for t in inside)}"


_NUM = re.compile(r"[-+]?\d[\d,]*(?:\.\d+)?(?:e[-+]?\d+)?")


def merge_numbers(texts: list[str], seeds: list[int]) -> str:
    """One text for the seeds' texts: where they differ only in their numbers, each number as
    ``mean [low, high]`` (the seeds' values, as many decimals as they were printed with); else the
    seeds' texts one after the other."""
    parts = [_NUM.split(t) for t in texts]
    if len({tuple(p) for p in parts}) != 1 or len(texts) < 2:
        return (
            texts[0]
            if len(set(texts)) == 1
            else " | ".join(f"seed {i + 1}: {t}" for i, t in enumerate(texts))
        )
    nums = [_NUM.findall(t) for t in texts]
    out = [parts[0][0]]
    for j in range(len(nums[0])):
        vals = [ns[j] for ns in nums]
        if len(set(vals)) == 1:
            out.append(vals[0])
        else:
            dec = max(len(v.split(".")[1]) if "." in v and "e" not in v else 0 for v in vals)
            _, mean, lo, hi = interval([float(v.replace(",", "")) for v in vals])
            out.append(f"{mean:.{dec}f} [{lo:.{dec}f}, {hi:.{dec}f}]")
        out.append(parts[0][j + 1])
    return "".join(out)


def _agreement(verdicts: list[str | None]) -> str:
    if all(v == HOLDS for v in verdicts):
        return HOLDS
    if all(v == FAILS for v in verdicts):
        return FAILS
    return PARTLY


def combine(seeds: list[int], summaries: list[str], headlines: list[list[Headline]] | None = None) -> str:
    """The claims of every seed's summary once, decided over the seeds (see the module doc), then
    the seeds' own summaries with their claim lines marked."""
    from ..report.claims import parse

    per_seed = [parse(s) for s in summaries]
    lines = [
        f"over {seeds_text(seeds)}: figures are the mean and its {INTERVAL_WORDS}, as mean [low, high]"
        " of the figures the seeds' summaries print (a verdict's interval: of the unrounded figure);",
        "a verdict is decided on that interval where the claim's rule is a threshold on one figure"
        " (holds only if the whole interval satisfies it, does not hold if the whole interval fails it,"
        " partly if it straddles the threshold), else on the seeds' own verdicts (holds only if every"
        " seed holds, does not hold only if every seed does not, else partly).",
    ]
    counts = {len(c) for c in per_seed}
    if len(counts) != 1:
        lines.append("(the seeds' summaries state different claims: read each seed's below)")
    else:
        for j, first in enumerate(per_seed[0]):
            cs = [c[j] for c in per_seed]
            case = f" ({first.case})" if first.case else ""
            ours = merge_numbers([c.ours for c in cs], seeds)
            hl = [
                next((h for h in hs if h.case == first.case and first.claim.startswith(h.claim)), None)
                for hs in (headlines or [])
            ]
            if headlines and all(h is not None for h in hl):
                verdict, why = interval_verdict([h.value for h in hl], hl[0])
                rule = f"decided on the 95 % interval of {hl[0].name}: {why}; seed {seeds[0]}: {first.detail}"
            else:
                verdict = _agreement([c.verdict for c in cs])
                rule = (
                    "decided on the seeds' verdicts: "
                    + ", ".join(f"seed {s} {c.verdict}" for s, c in zip(seeds, cs, strict=True))
                    + f"; seed {seeds[0]}: {first.detail}"
                )
            lines += ["", f"claim{case}: {first.claim}", f"  ours: {ours}", f"  -> {verdict} ({rule})"]
    for s, text in zip(seeds, summaries, strict=True):
        lines += ["", f"---- seed {s} ----"]
        lines += [f"seed {s} | {ln}" if ln.startswith("claim") else ln for ln in text.splitlines()]
    return "\n".join(lines)
