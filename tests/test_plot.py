"""The shared plot helpers (integer ticks, censored values, labelled bars with
totals, SVG beside PNG) and a sweep's per-run progress lines."""

import re

import matplotlib.pyplot as plt
import pandas as pd
import pytest

from xco import plot, sweep


def test_integer_x_gets_integer_ticks_only():
    fig, ax = plt.subplots()
    df = pd.DataFrame({"series": ["a"] * 3, "n": [1, 2, 3], "v": [1.0, 2.0, 1.5]})
    plot.draw_lines(ax, df, "n", "v", "series")
    ticks = [t for t in ax.get_xticks() if 1 <= t <= 3]
    assert ticks and all(float(t).is_integer() for t in ticks)
    plt.close(fig)


def test_censored_points_are_drawn_as_bounds_and_the_figure_says_so(tmp_path):
    df = pd.DataFrame(
        {
            "series": ["a", "a", "b", "b"],
            "n": [1, 2, 1, 2],
            "t_s": [1.0, 60.0, 1.0, 2.0],
            "cap": [False, True, False, False],
        }
    )
    png = plot.lines(
        df, "n", "t_s", "series", tmp_path / "f.png", title="t", xlabel="n", ylabel="s",
        logy=True, censored="cap", censored_note="not finished at the run cap",
    )  # fmt: skip
    svg = png.with_suffix(".svg").read_text()
    assert "not finished at the run cap" in svg
    fig, ax = plt.subplots()
    assert plot.draw_lines(ax, df, "n", "t_s", "series", censored="cap") is True
    assert plot.draw_lines(ax, df.assign(cap=False), "n", "t_s", "series", censored="cap") is False
    plt.close(fig)


def test_bars_label_values_mark_zeros_and_add_a_total(tmp_path):
    df = pd.DataFrame(
        {
            "series": ["none", "none", "x", "x"],
            "flow": ["f1", "f2", "f1", "f2"],
            "v": [0.0, 0.0, 400.0, 500.0],
        }
    )
    png = plot.bars(
        df, "flow", "v", "series", tmp_path / "b.png", title="t", xlabel="f", ylabel="v",
        labels={"none": "no coordination"}, values=True, total="total",
    )  # fmt: skip
    svg = png.with_suffix(".svg").read_text()
    assert ">total<" in svg and ">900<" in svg and ">0<" in svg and "no coordination" in svg


def test_one_bar_per_group_draws_no_empty_slots_for_other_series(tmp_path):
    df = pd.DataFrame({"flow": ["a", "b", "c"], "v": [5.0, 70.0, 90.0], "side": ["few", "many", "many"]})
    png = plot.bars(
        df, "flow", "v", "side", tmp_path / "b.png", title="t", xlabel="f", ylabel="v",
        values=True, one_bar_per_group=True,
    )  # fmt: skip
    svg = png.with_suffix(".svg").read_text()
    # one labelled bar per flow, each with its value
    assert all(f">{t}<" in svg for t in ("5", "70", "90", "a", "b", "c", "few", "many"))
    with pytest.raises(ValueError):
        plot.bars(
            pd.concat([df, df]), "flow", "v", "side", tmp_path / "c.png", title="t", xlabel="f", ylabel="v",
            one_bar_per_group=True,
        )  # fmt: skip


def test_a_sweep_can_print_a_line_per_finished_run(capsys):
    from xco import scenario
    from xco.reproduce.experiment import scenario_text

    sc = scenario.parse(scenario_text("xco-fairness"))
    sc["run"]["duration_ms"] = 5
    pts = [sweep.Point(labels={"series": s, "_x": 1}, scenario=sc, seed=1) for s in ("a", "b")]
    rows = sweep.run(pts, lambda raw: {"ok": 1}, jobs=1, desc="demo", progress=False, log_runs=True)
    assert [r["series"] for r in rows] == ["a", "b"] and all("_wall_s" not in r for r in rows)
    err = capsys.readouterr().err
    assert re.search(r"demo: run 1/2 finished \(series a\) in \d+\.\d s; \d+ s since the start", err), err
    assert "run 2/2 finished (series b)" in err


def _eight_series_on_top_of_each_other() -> pd.DataFrame:
    # the series of pdn-goodput that lie on one another: the same values for every series
    return pd.DataFrame([{"series": f"s{i}", "n": n, "v": 900.0} for i in range(8) for n in (2, 8, 16, 32)])


def test_every_series_has_its_own_hollow_marker_and_line_style():
    fig = plot.line_figure(
        _eight_series_on_top_of_each_other(), "n", "v", "series", title="t", xlabel="N", ylabel="v",
        hline=(940.0, "line rate"),
    )  # fmt: skip
    series = [ln for ln in fig.axes[0].get_lines() if ln.get_label().startswith("s")]
    assert len(series) == 8
    markers = [ln.get_marker() for ln in series]
    assert len(set(markers)) == 8, markers
    assert len({(ln.get_marker(), str(ln.get_linestyle())) for ln in series}) == 8
    assert len({str(ln.get_linestyle()) for ln in series}) >= 4
    assert all(ln.get_markerfacecolor() == "none" for ln in series), (
        "hollow: shapes on top of each other show"
    )
    plt.close(fig)


def test_the_legend_sits_outside_the_data_and_the_figure_prints_at_about_16_to_10():
    fig = plot.line_figure(
        _eight_series_on_top_of_each_other(), "n", "v", "series", title="t", xlabel="N", ylabel="v",
        note="a note",
    )  # fmt: skip
    fig.canvas.draw()
    ax = fig.axes[0]
    assert ax.get_legend() is None and len(fig.legends) == 1
    legend_box = fig.legends[0].get_window_extent()
    axes_box = ax.get_tightbbox()
    assert legend_box.y1 <= axes_box.y0 + 1, "the legend is below the axes and their labels"
    w, h = fig.get_size_inches()
    assert 1.4 <= w / h <= 1.9, (w, h)
    plt.close(fig)


def test_bars_of_fifteen_senders_print_at_about_16_to_10(tmp_path):
    df = pd.DataFrame({"src": [f"h{i}" for i in range(1, 16)], "v": [2.0, *[70.0] * 14]})
    df["side"] = ["2-hop"] + ["6-hop"] * 14
    png = plot.bars(
        df, "src", "v", "side", tmp_path / "b.png", title="t", xlabel="sender", ylabel="Mbit/s",
        one_bar_per_group=True, values=True,
    )  # fmt: skip
    h, w = plt.imread(png).shape[:2]
    assert 1.4 <= w / h <= 1.9, (w, h)


def test_replicates_are_drawn_as_their_mean_with_a_band():
    df = pd.DataFrame({"series": ["a"] * 6, "n": [1, 1, 1, 2, 2, 2], "v": [1.0, 2.0, 3.0, 4.0, 5.0, 9.0]})
    fig, ax = plt.subplots()
    plot.draw_lines(ax, df, "n", "v", "series")
    (line,) = ax.get_lines()
    assert list(line.get_ydata()) == [2.0, 6.0]
    assert len(ax.collections) == 1 and "band" in line.get_label()
    plt.close(fig)


def test_a_binned_rate_above_capacity_says_why_on_the_plot():
    why = "held data is delivered at once"
    df = pd.DataFrame({"series": ["a"] * 3, "t_s": [0.01, 0.02, 0.03], "mbps": [500.0, 3676.0, 200.0]})
    fig = plot.line_figure(
        df, "t_s", "mbps", "series", title="t", xlabel="s", ylabel="Mbit/s", capacity=(1000.0, "link", why)
    )
    texts = " ".join(t.get_text() for t in fig.axes[0].texts)
    assert "1 value(s) above link" in texts and why in texts
    plt.close(fig)
    fig = plot.line_figure(
        df.assign(mbps=[500.0, 900.0, 200.0]), "t_s", "mbps", "series", title="t", xlabel="s",
        ylabel="Mbit/s", capacity=(1000.0, "link", why),
    )  # fmt: skip
    assert not fig.axes[0].texts, "no note when every bin is within capacity"
    plt.close(fig)


def test_the_outcast_summary_counts_bins_above_the_link_and_says_why():
    from xco.reproduce import outcast

    table = pd.DataFrame({"throughput_mbps": [400.0, 3676.0, 1200.0]})
    line = outcast.bins_above_link(table, 10_000.0)
    assert "highest 10-ms bin: 3,676 Mbit/s" in line and "2 bin(s) above" in line
    assert outcast.ABOVE_LINK_WHY in line
    assert "0 bin(s) above" in outcast.bins_above_link(table.clip(upper=900.0), 10_000.0)
