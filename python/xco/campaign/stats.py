"""Mean and 95 % confidence interval over a point's seeds (Student's t, no SciPy)."""

from __future__ import annotations

import math

# two-sided 95 %: the 0.975 quantile of Student's t with 1..30 degrees of freedom
_T975 = (
    12.706205, 4.302653, 3.182446, 2.776445, 2.570582, 2.446912, 2.364624, 2.306004, 2.262157, 2.228139,
    2.200985, 2.178813, 2.160369, 2.144787, 2.131450, 2.119905, 2.109816, 2.100922, 2.093024, 2.085963,
    2.079614, 2.073873, 2.068658, 2.063899, 2.059539, 2.055529, 2.051831, 2.048407, 2.045230, 2.042272,
)  # fmt: skip
_Z975 = 1.959963984540054


def t975(df: int) -> float:
    """The 0.975 quantile of Student's t with ``df`` >= 1 degrees of freedom (table to 30, then
    the Cornish-Fisher expansion, within 1e-6)."""
    if df < 1:
        raise ValueError(f"degrees of freedom must be at least 1, got {df}")
    if df <= len(_T975):
        return _T975[df - 1]
    z, n = _Z975, float(df)
    return (
        z
        + (z**3 + z) / (4 * n)
        + (5 * z**5 + 16 * z**3 + 3 * z) / (96 * n**2)
        + (3 * z**7 + 19 * z**5 + 17 * z**3 - 15 * z) / (384 * n**3)
        + (79 * z**9 + 776 * z**7 + 1482 * z**5 - 1920 * z**3 - 945 * z) / (92160 * n**4)
    )


def mean_ci95(values: list[float]) -> tuple[int, float, float, float]:
    """``(n, mean, std, half_width)`` of the finite ``values``; the interval is mean +- half_width.
    n = 0: all NaN; n = 1: std and half_width NaN (one seed says nothing about spread)."""
    xs = [v for v in values if math.isfinite(v)]
    n = len(xs)
    if n == 0:
        return 0, math.nan, math.nan, math.nan
    mean = math.fsum(xs) / n
    if n == 1:
        return 1, mean, math.nan, math.nan
    std = math.sqrt(math.fsum((x - mean) ** 2 for x in xs) / (n - 1))
    return n, mean, std, t975(n - 1) * std / math.sqrt(n)
