"""Plots for reproductions: PNG files with labelled axes and units."""

from __future__ import annotations

from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import pandas as pd  # noqa: E402


def _finish(fig, ax, path: Path, title: str, xlabel: str, ylabel: str, note: str) -> Path:
    """Label, annotate and save a figure as PNG."""
    ax.set_title(title)
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.legend()
    if note:
        fig.text(0.01, 0.01, note, fontsize=7, color="dimgrey")
    fig.tight_layout(rect=(0, 0.03, 1, 1))
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path)
    plt.close(fig)
    return path


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
    marker: str | None = "o",
    integer_y: bool = False,
) -> Path:
    """One line per value of ``series``: ``y`` against ``x``, saved as PNG at
    ``path`` (``integer_y``: the y axis counts things, integer ticks only)."""
    fig, ax = plt.subplots(figsize=(7.5, 4.5), dpi=120)
    names = order or list(dict.fromkeys(df[series]))
    for name in names:
        d = df[df[series] == name].sort_values(x)
        ax.plot(d[x], d[y], marker=marker, markersize=3, linewidth=1.5, label=str(name))
    if hline is not None:
        ax.axhline(hline[0], color="grey", linestyle="--", linewidth=1, label=hline[1])
    if logy:
        ax.set_yscale("log")
    if integer_y:
        from matplotlib.ticker import MaxNLocator

        ax.yaxis.set_major_locator(MaxNLocator(integer=True))
        ax.set_ylim(bottom=0)
    ax.grid(True, alpha=0.3)
    return _finish(fig, ax, path, title, xlabel, ylabel, note)


def bars(
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
    integer_y: bool = False,
) -> Path:
    """Grouped bars: one group per value of ``x``, one bar per ``series``
    (``integer_y``: the y axis counts things, integer ticks only)."""
    fig, ax = plt.subplots(figsize=(7.5, 4.5), dpi=120)
    groups = list(dict.fromkeys(df[x]))
    names = list(dict.fromkeys(df[series]))
    width = 0.8 / max(1, len(names))
    for i, name in enumerate(names):
        d = df[df[series] == name].set_index(x)
        vals = [float(d[y].get(g, 0.0)) for g in groups]
        ax.bar([j + i * width for j in range(len(groups))], vals, width=width, label=str(name))
    ax.set_xticks([j + width * (len(names) - 1) / 2 for j in range(len(groups))])
    ax.set_xticklabels([str(g) for g in groups])
    if integer_y:
        from matplotlib.ticker import MaxNLocator

        ax.yaxis.set_major_locator(MaxNLocator(integer=True))
    ax.grid(True, axis="y", alpha=0.3)
    return _finish(fig, ax, path, title, xlabel, ylabel, note)
