"""`xco reproduce ID --seeds N` (issue 30 item 5): every point with seeds SEED..SEED+N-1, a seed
column, the mean's 95 % interval per point, verdicts on the interval, replay from meta.json; bad
values exit 2 with one line. And the frame every reproduction runs on (item 1)."""

from __future__ import annotations

import json
import math
import re
import statistics

import pandas as pd
import pytest

from xco.reproduce import REGISTRY, replicates
from xco.reproduce.experiment import EXPERIMENTS, Study, replay_csv

# Student's t, 0.975 quantile, 2 degrees of freedom (any table of t: 4.303)
T975_DF2 = 4.302653


@pytest.fixture(scope="module")
def three_seeds(tmp_path_factory):
    """outcast-base (two runs a seed, under 2 s) with seeds 5, 6, 7, through the command line."""
    from conftest import run_cli

    out = tmp_path_factory.mktemp("seeds")
    r = run_cli("reproduce", "outcast-base", "--seed", "5", "--seeds", "3", "--out", str(out))
    assert r.returncode == 0, r.stderr
    return out, r.stdout


def test_three_seeds_give_three_rows_per_point_with_distinct_seeds(three_seeds):
    out, _ = three_seeds
    df = pd.read_csv(out / "outcast-base.csv")
    assert list(df.columns)[0] == "seed"
    assert sorted(df["seed"].unique()) == [5, 6, 7]
    per_point = df.groupby("src")["seed"].agg(["count", "nunique"])
    assert (per_point["count"] == 3).all() and (per_point["nunique"] == 3).all()
    # the seeds are real replicates: the flows' goodputs are not all the same in every seed
    assert df.groupby("src")["goodput_mbps"].nunique().max() > 1


def test_the_interval_table_holds_mean_and_student_t_interval_per_point(three_seeds):
    out, _ = three_seeds
    df = pd.read_csv(out / "outcast-base.csv")
    ci = pd.read_csv(out / "outcast-base-ci95.csv").set_index("src")
    for col in ("goodput_mbps_mean", "goodput_mbps_ci95_low", "goodput_mbps_ci95_high", "seeds"):
        assert col in ci.columns
    assert (ci["seeds"] == 3).all()
    for src, g in df.groupby("src"):
        v = list(g["goodput_mbps"])
        mean, half = statistics.mean(v), T975_DF2 * statistics.stdev(v) / math.sqrt(3)
        assert ci.loc[src, "goodput_mbps_mean"] == pytest.approx(mean)
        assert ci.loc[src, "goodput_mbps_ci95_low"] == pytest.approx(mean - half, abs=1e-6)
        assert ci.loc[src, "goodput_mbps_ci95_high"] == pytest.approx(mean + half, abs=1e-6)


def test_the_verdict_is_decided_on_the_ratio_interval(three_seeds):
    """The claim is stated once, with the ratio's interval, and its verdict is the rule's on the
    whole interval (holds <= 0.5 < partly < 0.9 <= does not hold), or partly if it straddles."""
    out, stdout = three_seeds
    df = pd.read_csv(out / "outcast-base.csv")
    ratios = []
    for _, g in df.groupby("seed"):
        two = g[g["hops"] == 2]["goodput_mbps"].mean()
        six = g[g["hops"] == 6]["goodput_mbps"].mean()
        ratios.append(two / six)
    mean, half = statistics.mean(ratios), T975_DF2 * statistics.stdev(ratios) / math.sqrt(3)
    lo, hi = mean - half, mean + half

    def rule(r: float) -> str:
        return "holds" if r <= 0.5 else "partly" if r < 0.9 else "does not hold"

    straddles = any(lo < t < hi for t in (0.5, 0.9))
    want = "partly — the interval straddles the threshold" if straddles else rule(mean)
    text = (out / "outcast-base.txt").read_text()
    assert text == stdout.split("\n\nwrote ")[0] + "\n"
    claims = [ln for ln in text.splitlines() if ln.startswith("claim")]
    assert len(claims) == 1, "each claim once over the seeds (the seeds' own are marked)"
    block = text[text.index(claims[0]) :].split("\n\n")[0]
    assert f"-> {want} (decided on the 95 % interval of the 2-hop / 6-hop throughput ratio" in block
    assert f"[{lo:.4g}, {hi:.4g}]" in block
    assert "over seeds 5..7 (3 seeds)" in text and "Student t" in text
    for s in (5, 6, 7):
        assert f"---- seed {s} ----" in text and f"seed {s} | claim:" in text


def test_meta_records_every_seed_and_replay_rebuilds_the_table(three_seeds):
    out, _ = three_seeds
    meta = json.loads((out / "outcast-base.meta.json").read_text())
    assert meta["seeds"] == [5, 6, 7] and meta["seed"] == 5
    assert sorted(p["seed"] for p in meta["points"]) == [5, 5, 6, 6, 7, 7]
    assert all(isinstance(p["scenario"], str) for p in meta["points"])
    assert (
        replay_csv(EXPERIMENTS["outcast-base"], out / "outcast-base.meta.json")
        == (out / "outcast-base.csv").read_text()
    )


def test_the_figure_draws_means_with_interval_error_bars(three_seeds):
    out, _ = three_seeds
    svg = (out / "outcast-base.svg").read_text()
    assert "mean of 3 seeds; 95 % interval of the mean, Student t" in svg.replace("%%", "%")


def test_one_seed_writes_no_seed_column_and_no_interval_table(tmp_path, cli):
    r = cli("reproduce", "outcast-base", "--out", str(tmp_path))
    assert r.returncode == 0, r.stderr
    assert "seed" not in pd.read_csv(tmp_path / "outcast-base.csv").columns
    assert not (tmp_path / "outcast-base-ci95.csv").exists()
    assert "seeds" not in json.loads((tmp_path / "outcast-base.meta.json").read_text())


@pytest.mark.parametrize("bad", ["0", "-2", "abc", "1.5", "", "1001"])
def test_bad_seeds_exit_2_with_one_line(tmp_path, cli, bad):
    r = cli("reproduce", "outcast-base", "--seeds", bad, "--out", str(tmp_path / "o"))
    assert r.returncode == 2
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and "--seeds must be a whole number from 1 to 1000" in lines[0], r.stderr
    assert not (tmp_path / "o").exists(), "refused before any work"


def test_bad_seeds_on_reproduce_all_and_a_real_host_one_exit_2(tmp_path, cli):
    r = cli("reproduce", "all", "--seeds", "0", "--out", str(tmp_path / "a"))
    assert r.returncode == 2 and len(r.stderr.strip().splitlines()) == 1 and "--seeds" in r.stderr
    r = cli("reproduce", "sicc-treetime", "--seeds", "2", "--out", str(tmp_path / "b"))
    assert r.returncode == 2 and "sicc-treetime runs one seed" in r.stderr
    assert not (tmp_path / "b").exists()


def test_reproduce_all_passes_seeds_to_every_reproduction_that_takes_them(tmp_path):
    from xco.report import run_all
    from xco.reproduce import Outcome, Reproduction

    got = {}

    def fake(rid: str, replicates_ok: bool) -> Reproduction:
        def run(opts):
            got[rid] = opts.seeds
            opts.out.mkdir(parents=True, exist_ok=True)
            (opts.out / f"{rid}.txt").write_text("no claims\n")
            return Outcome(files=[], summary="no claims\n")

        return Reproduction(id=rid, title=rid, source="xco.md", run=run, replicates=replicates_ok)

    reg = {"xco-a": fake("xco-a", True), "xco-b": fake("xco-b", False)}
    report = run_all(reg, tmp_path, seeds=4, log=None)
    assert got == {"xco-a": 4, "xco-b": 1} and report.seeds == 4


# ---- the frame and the interval rules ----------------------------------------------


def test_every_reproduction_but_the_wall_time_benchmark_runs_on_the_frame():
    """Each reproduction, the real-host ones too, is a Study that takes --seeds; only the wall-time
    benchmark runs one seed."""
    on_frame = {rid for rid, e in EXPERIMENTS.items() if isinstance(e, Study) or hasattr(e, "study")}
    off = {rid for rid, r in REGISTRY.items() if not r.replicates}
    assert set(REGISTRY) - off <= on_frame, sorted(set(REGISTRY) - off - on_frame)
    assert off == {"sicc-treetime"}
    assert {rid for rid in REGISTRY if rid.startswith("real-")} <= on_frame


def _h(value: float) -> replicates.Headline:
    return replicates.Headline(
        "c",
        "x",
        value,
        lambda r: "holds" if r <= 0.5 else "partly" if r < 0.9 else "does not hold",
        (0.5, 0.9),
    )


def test_an_interval_inside_one_band_takes_its_verdict_and_one_across_a_threshold_is_partly():
    assert replicates.interval_verdict([0.1, 0.11, 0.12], _h(0))[0] == "holds"
    assert replicates.interval_verdict([0.95, 0.97, 0.99], _h(0))[0] == "does not hold"
    assert replicates.interval_verdict([0.69, 0.7, 0.71], _h(0))[0] == "partly"
    v, why = replicates.interval_verdict([0.2, 0.45, 0.7], _h(0))
    assert v == replicates.STRADDLES and "0.5" in why
    # every seed holds, yet the mean's interval reaches past 0.5: not "holds"
    assert replicates.interval_verdict([0.1, 0.45, 0.5], _h(0))[0] == replicates.STRADDLES


def test_claims_of_the_seeds_are_stated_once_with_their_numbers_as_intervals():
    s = "claim: x is small\n  ours: x = {v} at N = 4\n  -> {verdict} (rule: x <= 0.5)\n"
    text = replicates.combine(
        [1, 2, 3],
        [s.format(v=v, verdict=verdict) for v, verdict in ((0.2, "holds"), (0.3, "holds"), (0.6, "partly"))],
    )
    claim = re.search(r"^claim: x is small\n  ours: (.*)\n  -> (\w+)", text, re.M)
    assert claim is not None
    assert claim.group(1).startswith("x = 0.4 [") and claim.group(1).endswith("] at N = 4")
    assert claim.group(2) == "partly", "no headline: decided on the seeds' verdicts, which disagree"


# ---- real points on the frame (what the real-host reproductions run on) ------------------


class _FakeLab:
    """A lab that counts how often it is entered and left, and checks its points run one at a time."""

    def __init__(self):
        self.entered = self.left = 0
        self.busy = False
        self.calls: list[tuple] = []

    def __enter__(self):
        self.entered += 1
        return self

    def __exit__(self, *exc):
        self.left += 1
        return False


def _real_study(lab: _FakeLab, fail_at: int | None = None, sim: bool = True) -> Study:
    """Two real points (fake: their figure is a function of the point and the seed) and, with
    ``sim``, two simulated ones (real-vs-sim's case at 50 ms)."""
    from xco.reproduce import real
    from xco.reproduce.experiment import Run

    def point(k: int):
        def run(ctx, seed):
            import threading

            assert ctx is lab and threading.current_thread() is threading.main_thread()
            assert not lab.busy, "two real points at once"
            lab.busy = True
            try:
                lab.calls.append((k, seed))
                if fail_at is not None and len(lab.calls) == fail_at:
                    raise KeyboardInterrupt
                return {"mbps": 10.0 * k + seed}
            finally:
                lab.busy = False

        return run

    def runs(opts):
        out = [Run({"source": "real", "k": k}, None, real=point(k), settings={"k": k}) for k in (1, 2)]
        if sim:
            out += [Run({"source": "sim", "k": k}, real.sim_udp_scenario("none", k, 0.05)) for k in (1, 2)]
        return out

    def tables(results, opts):
        rows = []
        for r in results:
            mbps = (
                r["mbps"] if "_real" in r else real.sim_udp_row(r["raw"], "none", r["k"], 0.05)["total_mbps"]
            )
            rows.append({"source": r["source"], "k": r["k"], "mbps": mbps})
        return {"": pd.DataFrame(rows)}

    return Study(
        id="real-fake",
        title="fake real points",
        runs=runs,
        tables=tables,
        draw=lambda t, opts: [],
        summarize=lambda t, rs, opts: "fake: " + " ".join(f"{v:.1f}" for v in t[""]["mbps"]),
        lab=lambda opts: lab,
        seeds_note="the real points ran N times",
    )


def test_real_points_run_one_at_a_time_in_one_lab_repeated_per_seed(tmp_path):
    from xco.reproduce import Options

    lab = _FakeLab()
    out = _real_study(lab).run(Options(out=tmp_path, seed=3, seeds=2))
    assert lab.entered == lab.left == 1, "the lab (the testbed) is entered once for every real point"
    assert lab.calls == [(1, 3), (2, 3), (1, 4), (2, 4)], "each real point once per seed, seed outer"
    df = pd.read_csv(tmp_path / "real-fake.csv")
    assert list(df.columns) == ["seed", "source", "k", "mbps"]
    assert df.groupby(["source", "k"])["seed"].apply(sorted).tolist() == [[3, 4]] * 4
    real = df[df["source"] == "real"].set_index(["seed", "k"])["mbps"]
    assert real[(3, 1)] == 13.0 and real[(4, 2)] == 24.0
    ci = pd.read_csv(tmp_path / "real-fake-ci95.csv")
    assert (ci["seeds"] == 2).all() and len(ci) == 4
    r1 = ci[(ci["source"] == "real") & (ci["k"] == 1)].iloc[0]
    assert r1["mbps_mean"] == pytest.approx(13.5)
    assert r1["mbps_ci95_low"] < 13.5 < r1["mbps_ci95_high"]
    meta = json.loads((tmp_path / "real-fake.meta.json").read_text())
    assert meta["seeds"] == [3, 4]
    recs = meta["points"]
    assert [(p["labels"]["source"], p["seed"]) for p in recs] == [("real", 3), ("real", 3), ("sim", 3),
                                                                 ("sim", 3), ("real", 4), ("real", 4),
                                                                 ("sim", 4), ("sim", 4)]  # fmt: skip
    assert all(p["real"] == {"k": p["labels"]["k"]} and "scenario" not in p for p in recs if "real" in p)
    assert all(isinstance(p["scenario"], str) for p in recs if p["labels"]["source"] == "sim")
    text = out.summary
    assert text.startswith("real-fake: fake real points\nthe real points ran N times\n")
    assert "---- seed 3 ----" in text and "---- seed 4 ----" in text
    with pytest.raises(ValueError, match="real-host points cannot be replayed"):
        replay_csv(_real_study(lab), tmp_path / "real-fake.meta.json")


def test_one_seed_of_real_points_writes_no_seed_column_and_no_interval_table(tmp_path):
    from xco.reproduce import Options

    lab = _FakeLab()
    _real_study(lab, sim=False).run(Options(out=tmp_path))
    assert lab.calls == [(1, 1), (2, 1)]
    assert list(pd.read_csv(tmp_path / "real-fake.csv").columns) == ["source", "k", "mbps"]
    assert not (tmp_path / "real-fake-ci95.csv").exists()
    assert (tmp_path / "real-fake.txt").read_text() == "fake: 11.0 21.0\n"


def test_ctrl_c_during_a_real_point_leaves_the_lab_and_writes_the_finished_points(tmp_path):
    from xco.interrupt import Interrupted
    from xco.reproduce import Options

    lab = _FakeLab()
    with pytest.raises(Interrupted) as e:
        _real_study(lab, fail_at=3).run(Options(out=tmp_path, seeds=2))
    assert lab.left == 1, "the lab (the testbed) was torn down"
    assert (e.value.done, e.value.total) == (2, 8)
    assert {p.name for p in e.value.files} == {"real-fake.csv", "real-fake.meta.json"}
    df = pd.read_csv(tmp_path / "real-fake.csv")
    assert list(df["mbps"]) == [11.0, 21.0], "the two real points of the first seed"
    meta = json.loads((tmp_path / "real-fake.meta.json").read_text())
    assert meta["interrupted"] is True and meta["points_finished"] == 2 and len(meta["points"]) == 2


def test_the_real_host_reproductions_refuse_without_root_before_any_work(tmp_path, monkeypatch):
    import os

    from xco.reproduce import Options
    from xco.testbed import TestbedError

    monkeypatch.setattr(os, "geteuid", lambda: 1000)
    for rid in ("real-udp", "real-vs-sim", "real-overhead", "real-incast", "real-outcast", "real-sicc"):
        out = tmp_path / rid
        with pytest.raises(TestbedError, match=f"{rid} needs root"):
            REGISTRY[rid].run(Options(out=out, seeds=2))
        assert not out.exists(), f"{rid}: refused before any work"
