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
