"""Plots for reproductions: labelled axes with units, PNG plus SVG.

Every figure is saved twice: ``NAME.png`` (for a quick look) and ``NAME.svg``
(vector, for a paper). The helpers share the habits a reader relies on: an
axis whose values are whole numbers (servers, senders, k) gets whole-number
ticks only; legends name series in words (``labels`` maps a series key such
as ``timeslice`` to ``XCo timeslices``); a reference line (link capacity) is
kept inside the frame; a value that is a bound rather than a measurement (a
run that hit its time cap) is drawn hollow with an arrow, and the figure says
so. Every series of a line plot has its own marker shape (hollow, so that
curves lying on top of each other still show each shape) and line style, and
replicates (several rows per point) are drawn as their mean with a band; the
legend sits below the axes, never over the data; figures are about 1.6 : 1
wide, as a paper column prints them.
"""

from __future__ import annotations

import contextlib
import math
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

# matplotlib and pandas load on first use (xco._lazy), with the SVG settings
# that make the same data give the same bytes
from ._lazy import pd, plt, ticker

# seeds per point while a reproduction with ``--seeds N`` draws (0: not in such a run), and
# whether it draws only the means (a figure of its own that cannot draw replicates)
_SEEDS = 0
_MEANS = False


@contextlib.contextmanager
def replicates(seeds: int, means: bool = False) -> Iterator[None]:
    """While drawing a run of ``seeds`` seeds per point: replicate rows are drawn as their mean
    with a 95 % interval of the mean (Student t), as a band on lines and as error bars on bars;
    ``means``: the figure gets the means alone (:func:`means_only`)."""
    global _SEEDS, _MEANS
    old, _SEEDS, _MEANS = (_SEEDS, _MEANS), seeds, means
    try:
        yield
    finally:
        _SEEDS, _MEANS = old


def means_only() -> bool:
    """True while a figure of several seeds is given their means alone (its note says so)."""
    return _SEEDS > 1 and _MEANS


def interval_words() -> str:
    """How replicates are drawn, for a legend or a note."""
    return f"mean of {_SEEDS} seeds; 95 % interval of the mean, Student t"


def _ci(values) -> tuple[float, float, float]:
    """Mean and 95 % interval ends of ``values`` (Student t; NaN ends below two values)."""
    from .campaign.stats import mean_ci95

    _, mean, _std, half = mean_ci95([float(v) for v in values])
    return mean, mean - half, mean + half


def replicate_mean(d: pd.DataFrame, x: str, y: str):
    """``(xs, ys, low, high)`` of one series for a plot of its own: with several rows per ``x``
    (the seeds of a ``--seeds`` run) their mean and 95 % interval ends, else ``d``'s own columns
    and ``None`` ends."""
    if not d[x].duplicated().any():
        return d[x], d[y], None, None
    ci = [(k, *_ci(g)) for k, g in d.groupby(x, sort=True)[y]]
    return [c[0] for c in ci], [c[1] for c in ci], [c[2] for c in ci], [c[3] for c in ci]


def save(fig, path: Path) -> Path:
    """Save ``fig`` as ``path`` (PNG) and beside it as SVG; close it; return ``path``."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path)
    fig.savefig(path.with_suffix(".svg"), metadata={"Date": None})
    plt.close(fig)
    return path


def vector_path(path: Path) -> Path:
    """The SVG written beside the PNG ``path``."""
    return path.with_suffix(".svg")


def figure_files(png: Path) -> list[Path]:
    """The files :func:`save` wrote for ``png``: the PNG and the SVG beside it."""
    return [png, vector_path(png)]


def integer_ticks(ax, *, x: bool = False, y: bool = False) -> None:
    """Whole-number ticks on the x and/or y axis (for counts: servers, senders, k)."""
    if x:
        ax.xaxis.set_major_locator(ticker.MaxNLocator(integer=True))
    if y:
        ax.yaxis.set_major_locator(ticker.MaxNLocator(integer=True))


def is_integer(col: pd.Series) -> bool:
    """True if ``col`` holds whole numbers only (booleans are not numbers here)."""
    if col.dtype == bool or not pd.api.types.is_numeric_dtype(col):
        return False
    v = col.dropna()
    return len(v) > 0 and bool((v == v.round()).all())


# figure width, inches, and the width : height of the axes' part of a figure (the
# legend and the note below it add their own height: about 1.6 : 1 in all)
WIDTH_IN = 7.5
ASPECT = 2.0
MARKERS = ("o", "s", "^", "D", "v", "P", "X", "<", ">", "h", "*", "p")
LINESTYLES = ("-", "--", "-.", ":", (0, (5, 1, 1, 1, 1, 1)), (0, (1, 1)))


def series_style(i: int) -> tuple[str, object]:
    """The marker and line style of the ``i``-th series: no two of the first 12 share either
    (markers cycle over 12 shapes, line styles over 6; 12 is a multiple of 6 so the pairs differ)."""
    return MARKERS[i % len(MARKERS)], LINESTYLES[(i + i // len(MARKERS)) % len(LINESTYLES)]


def figure(width_in: float = WIDTH_IN, aspect: float = ASPECT):
    """A new figure with one axes, ``width_in`` wide and ``aspect`` : 1 before its legend."""
    return plt.subplots(figsize=(width_in, width_in / aspect), dpi=120)


def dress(
    fig, ax, title: str, xlabel: str, ylabel: str, note: str, legend: bool = True, ncol: int = 0
) -> None:
    """Title, axis labels, the legend below the axes (outside the data), the note at the
    bottom; the figure grows in height by what the legend and note need."""
    ax.set_title(title)
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    below(fig, *(ax.get_legend_handles_labels() if legend else ([], [])), note=note, ncol=ncol)


def below(fig, handles: list, labels: list[str], *, note: str = "", ncol: int = 0) -> None:
    """Put ``handles`` in one legend below every axes of ``fig`` and ``note`` under it;
    the figure grows by their height, so the axes keep theirs and nothing overlaps."""
    w, h = fig.get_size_inches()
    # the note wraps at the figure's width: about 0.055 in per character at 7 pt
    note_lines = -(-len(note) * 0.055 // (w - 0.2)) if note else 0
    note_in = 0.08 + 0.13 * note_lines if note else 0.05
    leg, leg_in = None, 0.0
    if handles:
        longest = max(len(t) for t in labels)
        ncol = ncol or (1 if len(handles) == 1 else 4 if longest <= 22 else 3 if longest <= 40 else 2)
        leg = fig.legend(handles, labels, loc="lower center", ncol=ncol, fontsize=7.5, frameon=False)
        fig.canvas.draw()
        leg_in = leg.get_window_extent().height / fig.dpi + 0.05
    total = h + leg_in + note_in
    fig.set_size_inches(w, total)
    if leg is not None:
        leg.set_bbox_to_anchor((0.5, note_in / total), transform=fig.transFigure)
    if note:
        fig.text(0.01, 0.04 / total, note, fontsize=7, color="dimgrey", wrap=True)
    fig.tight_layout(rect=(0, (leg_in + note_in) / total, 1, 1))


def _finish(
    fig, ax, path: Path, title: str, xlabel: str, ylabel: str, note: str, legend: bool = True
) -> Path:
    """Label, annotate and save a figure (PNG and SVG)."""
    dress(fig, ax, title, xlabel, ylabel, note, legend)
    return save(fig, path)


def hline_inside(ax, value: float, label: str, top_of_data: float, logy: bool = False) -> None:
    """A dashed reference line at ``value`` with the y limit raised so the line
    is never drawn on the frame."""
    ax.axhline(value, color="black", linestyle="--", linewidth=1, label=label, zorder=1)
    top = max(value, top_of_data)
    if logy:
        ax.set_ylim(top=top * 1.5)
    else:
        ax.set_ylim(bottom=min(0.0, ax.get_ylim()[0]), top=top * 1.1)


def draw_lines(
    ax,
    df: pd.DataFrame,
    x: str,
    y: str,
    series: str,
    *,
    labels: dict[str, str] | None = None,
    order: list[str] | None = None,
    marker: str | None = "o",
    censored: str | None = None,
    linestyles: dict[str, str] | None = None,
    band: tuple[str, str] | None = None,
) -> bool:
    """One line per value of ``series`` on ``ax``, each with its own marker and
    line style (:func:`series_style`; ``marker=None``: a dense series, marked
    at about 12 of its points). Several rows at one ``x`` (replicates) are drawn
    as their mean with a shaded min-max band; ``band`` names two columns
    (low, high) to shade instead. Returns True if any point was censored
    (``censored`` names a boolean column: True = ``y`` is a lower bound, drawn
    as a hollow marker with an upward arrow)."""
    names = order or list(dict.fromkeys(df[series]))
    any_censored = False
    for i, name in enumerate(names):
        d = df[df[series] == name].sort_values(x)
        if d.empty:
            continue
        label = (labels or {}).get(name, str(name))
        shape, style = series_style(i)
        style = (linestyles or {}).get(name, style)
        if censored is not None and d[censored].astype(bool).any():
            style = ":"  # a line through bounds is not a measured trend
        lo = hi = None
        if d[x].duplicated().any() and _SEEDS > 1:
            g = d.groupby(x, sort=True)[y]
            ci = [_ci(v) for _, v in g]
            xs, ys = g.mean().index, [c[0] for c in ci]
            lo, hi = [c[1] for c in ci], [c[2] for c in ci]
            label += f" ({interval_words()})"
        elif d[x].duplicated().any():
            g = d.groupby(x, sort=True)[y]
            mean = g.mean()
            xs, ys, lo, hi = mean.index, mean.values, g.min().values, g.max().values
            label += f" (mean; band: min-max of {int(g.size().max())})"
        else:
            xs, ys = d[x], d[y]
            if band is not None:
                lo, hi = d[band[0]].values, d[band[1]].values
        every = None if marker is not None else max(1, len(xs) // 12)
        (line,) = ax.plot(
            xs, ys, marker=shape, markersize=5, markevery=every, markerfacecolor="none",
            markeredgewidth=1.2, linewidth=1.5, label=label, linestyle=style,
        )  # fmt: skip
        if lo is not None:
            ax.fill_between(xs, lo, hi, color=line.get_color(), alpha=0.12, linewidth=0)
        if censored is not None:
            c = d[d[censored].astype(bool)]
            if len(c):
                any_censored = True
                color = line.get_color()
                # hollow marker on top of the filled one, and an arrow: "at least this"
                ax.plot(
                    c[x],
                    c[y],
                    linestyle="none",
                    marker="o",
                    markersize=9,
                    markerfacecolor="white",
                    markeredgecolor=color,
                    zorder=3,
                )
                for xv, yv in zip(c[x], c[y], strict=True):
                    ax.annotate(
                        "",
                        xy=(xv, yv * 1.35),
                        xytext=(xv, yv * 1.04),
                        arrowprops={"arrowstyle": "->", "color": color, "lw": 1.2},
                    )
    if is_integer(df[x]):
        values = sorted(set(df[x].dropna()))
        if len(values) <= 17:
            ax.set_xticks(values)  # few values (k, N, senders): a tick at each, none between
        else:
            integer_ticks(ax, x=True)
    return any_censored


def over_capacity(ax, df: pd.DataFrame, y: str, capacity: tuple[float, str, str]) -> int:
    """Draw ``capacity`` (value, label, why) as a reference line; if any ``y`` is above
    it, say on the axes how many values are and why (``why``); returns that count."""
    value, label, why = capacity
    above = int((df[y] > value * (1 + 1e-9)).sum())
    ax.axhline(value, color="black", linestyle="--", linewidth=1, label=label, zorder=1)
    if above:
        ax.text(
            0.01, 0.98, f"{above} value(s) above {label}: {why}", transform=ax.transAxes, fontsize=7,
            va="top", ha="left", wrap=True, bbox={"facecolor": "white", "alpha": 0.85, "edgecolor": "grey"},
        )  # fmt: skip
    return above


def plain_log(ax) -> None:
    """Log-scale y tick labels as plain numbers (``0.5``, ``2``, ``1000``), not powers of ten."""
    fmt = ticker.FuncFormatter(lambda v, _: f"{v:g}")
    ax.yaxis.set_major_formatter(fmt)
    ax.yaxis.set_minor_formatter(ticker.FuncFormatter(lambda v, _: f"{v:g}" if f"{v:g}"[0] in "25" else ""))


def line_figure(
    df: pd.DataFrame,
    x: str,
    y: str,
    series: str,
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
    labels: dict[str, str] | None = None,
    censored: str | None = None,
    censored_note: str = "hollow marker with arrow: a bound, not a measurement",
    band: tuple[str, str, str] | None = None,
    capacity: tuple[float, str, str] | None = None,
):
    """The figure :func:`lines` saves, unsaved (for a caller, or a test, to look at)."""
    fig, ax = figure()
    cens = draw_lines(
        ax, df, x, y, series, labels=labels, order=order, marker=marker, censored=censored,
        band=band[:2] if band else None,
    )  # fmt: skip
    if band is not None:
        # a legend entry saying what the shaded bands are
        ax.fill_between([], [], [], color="grey", alpha=0.12, label=band[2])
    if logy:
        ax.set_yscale("log")
        plain_log(ax)
    top = float(df[y].max())
    if band is not None:
        top = max(top, float(df[band[1]].max()))
    if hline is not None:
        hline_inside(ax, hline[0], hline[1], top, logy)
    if capacity is not None:
        over_capacity(ax, df, y, capacity)
        ax.set_ylim(bottom=0, top=max(capacity[0], top) * 1.1)
    if integer_y or (is_integer(df[y]) and not logy):
        integer_ticks(ax, y=True)
        if integer_y:
            ax.set_ylim(bottom=0)
    if cens:
        # room above the highest bound for its arrow
        top = float(df[df[censored].astype(bool)][y].max())
        ax.set_ylim(top=max(ax.get_ylim()[1], top * (2.0 if logy else 1.25)))
        ax.plot(
            [],
            [],
            linestyle="none",
            marker="o",
            markerfacecolor="white",
            markeredgecolor="grey",
            label=censored_note,
        )
    ax.grid(True, alpha=0.3)
    dress(fig, ax, title, xlabel, ylabel, note)
    return fig


def lines(df: pd.DataFrame, x: str, y: str, series: str, path: Path, **kw) -> Path:
    """One line per value of ``series``: ``y`` against ``x``, saved at ``path``
    (PNG, and SVG beside it). ``integer_y``: the y axis counts things (integer
    ticks only); an integer ``x`` column gets integer ticks by itself.
    ``censored``: see :func:`draw_lines`. ``band`` = (low column, high column,
    what they are): a shaded band per series. ``capacity`` = (value, label,
    why): a reference line that no value should pass, and, if some do, a note
    on the plot saying how many and why (a binned rate above its link's
    capacity). The other keywords are :func:`line_figure`'s."""
    return save(line_figure(df, x, y, series, **kw), path)


@dataclass
class Panel:
    """One panel of :func:`panels`: the column it plots and how."""

    y: str
    ylabel: str
    hline: tuple[float, str] | None = None
    logy: bool = False
    percent: bool = False  # values are fractions, shown as percent


def panels(
    df: pd.DataFrame,
    x: str,
    series: str,
    path: Path,
    rows: list[Panel],
    *,
    title: str,
    xlabel: str,
    note: str = "",
    labels: dict[str, str] | None = None,
    order: list[str] | None = None,
) -> Path:
    """Panels stacked over one shared x axis, one line per series in each; one legend."""
    fig, axes = plt.subplots(len(rows), 1, figsize=(WIDTH_IN, 2.3 * len(rows) + 0.8), dpi=120, sharex=True)
    axes = list(axes) if len(rows) > 1 else [axes]
    for ax, p in zip(axes, rows, strict=True):
        d = df.assign(**{p.y: df[p.y] * 100}) if p.percent else df
        draw_lines(ax, d, x, p.y, series, labels=labels, order=order)
        if p.logy:
            ax.set_yscale("log")
            plain_log(ax)
        if p.hline is not None:
            hline_inside(ax, p.hline[0], p.hline[1], float(d[p.y].max()), p.logy)
        elif not p.logy:
            ax.set_ylim(bottom=0, top=max(1e-9, float(d[p.y].max())) * 1.1)
        ax.set_ylabel(p.ylabel, fontsize=9)
        ax.grid(True, alpha=0.3)
    axes[0].set_title(title)
    axes[-1].set_xlabel(xlabel)
    legend_below(fig, axes, note=note)
    return save(fig, path)


def legend_below(fig, axes: list, *, note: str = "") -> None:
    """One legend below all ``axes`` of ``fig`` (each label once, the first axes' first) and
    ``note`` under it, as :func:`below` places them; any legend drawn on an axes is removed."""
    seen: dict[str, object] = {}
    for ax in axes:
        for handle, name in zip(*ax.get_legend_handles_labels(), strict=True):
            seen.setdefault(name, handle)
        if ax.get_legend() is not None:
            ax.get_legend().remove()
    below(fig, list(seen.values()), list(seen), note=note)


def _rotation(groups: list) -> int:
    """Tick labels turned when the groups' names would not fit side by side."""
    return 30 if sum(len(str(g)) + 2 for g in groups) > 70 else 0


def _yerr(err: dict[tuple, tuple[float, float]], keys: list[tuple]):
    """Error bar lengths (below, above) for ``keys``, or None when no bar has one."""
    if not err:
        return None
    pairs = [err.get(k, (0.0, 0.0)) for k in keys]
    return [[p[0] for p in pairs], [p[1] for p in pairs]]


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
    labels: dict[str, str] | None = None,
    values: bool = False,
    total: str | None = None,
    hline: tuple[float, str] | None = None,
    fmt: str = "{:.0f}",
    integer_y: bool = False,
    one_bar_per_group: bool = False,
) -> Path:
    """Grouped bars: one group per value of ``x``, one bar per ``series``.

    ``one_bar_per_group``: each ``x`` has one row; its bar stands alone at
    its place, coloured by its series (no empty slots for the other series).

    ``values``: each bar carries its value, and a bar at zero gets a marker on
    the axis, so a zero is seen as a measured zero, not a missing bar.
    ``total``: a last group with this name holding each series' sum (drawn
    apart, hatched). ``integer_y``: the y axis counts things, integer ticks only.

    Several rows per (``x``, series) while drawing a ``--seeds`` run (:func:`replicates`): each bar
    is their mean,
    with an error bar of its 95 % interval (Student t), and the note says so."""
    err: dict[tuple, tuple[float, float]] = {}
    if _SEEDS > 1 and df.duplicated([x, series]).any():
        rows = []
        for (gx, gs), g in df.groupby([x, series], sort=False):
            mean, lo, hi = _ci(g[y])
            err[(gx, gs)] = (mean - lo, hi - mean) if math.isfinite(lo) else (0.0, 0.0)
            rows.append({x: gx, series: gs, y: mean})
        df = pd.DataFrame(rows)
        note = (
            note + "; " if note else ""
        ) + f"bars: {interval_words() if _SEEDS > 1 else 'mean'} (error bars)"
    groups = list(dict.fromkeys(df[x]))
    names = list(dict.fromkeys(df[series]))
    sums = {name: float(df[df[series] == name][y].sum()) for name in names}
    all_groups = groups + ([total] if total else [])
    fig, ax = figure()
    width = 0.8 / max(1, len(names))
    top = max([0.0, *sums.values()] if total else [0.0, *df[y].tolist()])
    if err and not total:
        top = max(top, *(float(r[y]) + err[(r[x], r[series])][1] for _, r in df.iterrows()))
    if one_bar_per_group:
        if len(df) != len(groups) or total:
            raise ValueError("one_bar_per_group: one row per x value, no total")
        at = {g: j for j, g in enumerate(groups)}
        for name in names:
            d = df[df[series] == name]
            xs, vals = [at[g] for g in d[x]], [float(v) for v in d[y]]
            yerr = _yerr(err, [(g, name) for g in d[x]])
            bar = ax.bar(xs, vals, width=0.7, label=(labels or {}).get(name, str(name)), yerr=yerr, capsize=3)
            if values:
                for xv, v in zip(xs, vals, strict=True):
                    ax.text(xv, v + top * 0.01, fmt.format(v), ha="center", va="bottom", fontsize=7)
                    if v == 0:
                        c = bar.patches[0].get_facecolor()
                        ax.plot([xv], [0], marker="v", markersize=7, color=c, clip_on=False, zorder=4)
        ax.set_xticks(range(len(groups)))
        ax.set_xticklabels([str(g) for g in groups], fontsize=8, rotation=_rotation(groups))
        ax.set_ylim(bottom=0, top=max(1e-9, top) * 1.12)
        if integer_y:
            ax.yaxis.set_major_locator(ticker.MaxNLocator(integer=True))
        ax.grid(True, axis="y", alpha=0.3)
        return _finish(fig, ax, path, title, xlabel, ylabel, note)
    for i, name in enumerate(names):
        d = df[df[series] == name].set_index(x)
        vals = [float(d[y].get(g, 0.0)) for g in groups] + ([sums[name]] if total else [])
        xs = [j + i * width + (0.4 if total and j == len(groups) else 0.0) for j in range(len(all_groups))]
        yerr = _yerr(err, [(g, name) for g in groups] + ([(None, None)] if total else []))
        bar = ax.bar(xs, vals, width=width, label=(labels or {}).get(name, str(name)), yerr=yerr, capsize=3)
        color = bar.patches[0].get_facecolor()
        if total:
            bar.patches[-1].set_hatch("//")
            bar.patches[-1].set_edgecolor("black")
        if values:
            for xv, v in zip(xs, vals, strict=True):
                ax.text(xv, v + top * 0.01, fmt.format(v), ha="center", va="bottom", fontsize=7)
                if v == 0:
                    ax.plot([xv], [0], marker="v", markersize=7, color=color, clip_on=False, zorder=4)
    ax.set_xticks(
        [
            j + width * (len(names) - 1) / 2 + (0.4 if total and j == len(groups) else 0.0)
            for j in range(len(all_groups))
        ]
    )
    ax.set_xticklabels([str(g) for g in all_groups], fontsize=8, rotation=_rotation(all_groups))
    if total:
        ax.axvline(len(groups) - 0.1 + 0.2, color="grey", linewidth=0.8)
    if hline is not None:
        hline_inside(ax, hline[0], hline[1], top)
    else:
        ax.set_ylim(bottom=0, top=max(1e-9, top) * 1.12)
    if integer_y:
        ax.yaxis.set_major_locator(ticker.MaxNLocator(integer=True))
    ax.grid(True, axis="y", alpha=0.3)
    return _finish(fig, ax, path, title, xlabel, ylabel, note)
