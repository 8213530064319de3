"""Plots for reproductions: PNG files with labelled axes and units."""

from __future__ import annotations

from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import pandas as pd  # noqa: E402


def lines(
    df: pd.DataFrame,
    x: str,
    y: str,
    series: str,
    path: Path,
    *,
    title: str,
    xlabel: str,
    ylabel: str,
    note: str = "",
    logy: bool = False,
    hline: tuple[float, str] | None = None,
    order: list[str] | None = None,
) -> Path:
    """One line per value of ``series``: ``y`` against ``x``, saved as PNG at ``path``."""
    fig, ax = plt.subplots(figsize=(7.5, 4.5), dpi=120)
    names = order or list(dict.fromkeys(df[series]))
    for name in names:
        d = df[df[series] == name].sort_values(x)
        ax.plot(d[x], d[y], marker="o", markersize=3, linewidth=1.5, label=str(name))
    if hline is not None:
        ax.axhline(hline[0], color="grey", linestyle="--", linewidth=1, label=hline[1])
    if logy:
        ax.set_yscale("log")
    ax.set_title(title)
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.grid(True, alpha=0.3)
    ax.legend()
    if note:
        fig.text(0.01, 0.01, note, fontsize=7, color="dimgrey")
    fig.tight_layout(rect=(0, 0.03, 1, 1))
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path)
    plt.close(fig)
    return path
