"""`xco reproduce pdn-goodput`: files, columns, and the incast collapse it must show."""

import json

import pandas as pd

from xco.reproduce import pdn


def test_pdn_goodput_writes_csv_png_and_summary(tmp_path, cli):
    r = cli("reproduce", "pdn-goodput", "--out", str(tmp_path), "--seed", "5")
    assert r.returncode == 0, r.stderr
    df = pd.read_csv(tmp_path / "pdn-goodput.csv")
    assert list(df.columns) == [
        "series", "n", "goodput_mbps", "completion_ms", "timeouts", "notifications",
        "round_goodput_min_mbps", "round_goodput_max_mbps",
    ]  # fmt: skip
    assert (df["round_goodput_min_mbps"] <= df["goodput_mbps"] + 1e-6).all()
    assert (df["goodput_mbps"] <= df["round_goodput_max_mbps"] + 1e-6).all()
    assert set(df["series"]) == set(pdn.SERIES)
    paper = {"newreno", "delay400", "delay800", "pdn"}
    assert set(pdn.SERIES) == paper | {"pdn-rtt", "rto1ms", "linux", "dctcp"}
    assert sorted(set(df["n"])) == pdn.QUICK_N
    png = (tmp_path / "pdn-goodput.png").read_bytes()
    assert png[:8] == b"\x89PNG\r\n\x1a\n" and len(png) > 10_000
    # one sweep serves pdn-goodput, pdn-completion and pdn-theory, but each id writes only its own files
    assert not (tmp_path / "pdn-completion.png").exists() and not (tmp_path / "pdn-theory.csv").exists()
    meta = json.loads((tmp_path / "pdn-goodput.meta.json").read_text())
    assert meta["seed"] == 5 and "scenario_toml" not in meta
    # the record of what ran: every point with the keys it overrides
    assert len(meta["points"]) == len(df)
    p = next(p for p in meta["points"] if p["labels"] == {"series": "delay400", "n": 48})
    assert p["seed"] == 5
    assert p["overrides"]["topology.hosts_a"] == 48
    assert p["overrides"]["apps[0].start_delay_max_us"] == 400.0
    assert meta["base_scenario"]["topology"]["kind"] == "two_switch"
    # the summary states the settings the result depends on
    for word in ("MSS 1448", "IW 10", "RTO_min 200", "delayed ACK on", "persistent", "300KB", "seed 5"):
        assert word in r.stdout, word

    # the behaviour the spec names: NewReno collapses as N grows ...
    nr = df[df["series"] == "newreno"].set_index("n")["goodput_mbps"]
    assert nr.max() > 800
    assert nr[150] < 0.1 * nr.max()
    n_collapse = pdn.collapse_n(df[df["series"] == "newreno"])
    assert n_collapse is not None and 16 < n_collapse <= 64
    # ... and a random start delay postpones the collapse but does not remove it
    for s in ("delay400", "delay800"):
        d = df[df["series"] == s]
        assert pdn.collapse_n(d) is not None and pdn.collapse_n(d) > n_collapse
        assert d.set_index("n")["goodput_mbps"][150] < 0.2 * nr.max()
    # completion time grows by orders of magnitude once RTOs hit
    comp = df[df["series"] == "newreno"].set_index("n")["completion_ms"]
    assert comp[150] > 50 * comp[8]
    # PDN: no timeout, goodput high where NewReno collapsed, and the summary says so
    p = df[df["series"] == "pdn"].set_index("n")
    assert (p["timeouts"] == 0).all()
    assert p["goodput_mbps"][150] > 0.8 * nr.max()
    assert p["notifications"][150] > 0
    assert "claim: with PDN goodput stays high" in r.stdout
    assert "TCP with PDN" in r.stdout and "-> holds" in r.stdout
    # the known remedies beside PDN (issue 17): each series' figures are in the summary
    for s in ("rto1ms", "linux", "dctcp"):
        assert pdn.SERIES_LABEL[s] in r.stdout, s
    # an RTO_min of 1 ms turns the 200 ms stalls into 1 ms ones: goodput stays far above NewReno's
    rto1 = df[df["series"] == "rto1ms"].set_index("n")
    assert rto1["goodput_mbps"][150] > 5 * nr[150]
    # SACK/RACK-TLP and DCTCP repair most losses without a timeout: far fewer timeouts than NewReno
    big = df[df["n"] >= n_collapse]
    timeouts = big.groupby("series")["timeouts"].sum()
    assert timeouts["linux"] < 0.5 * timeouts["newreno"]
    assert timeouts["dctcp"] < 0.5 * timeouts["newreno"]
    dc = df[df["series"] == "dctcp"].set_index("n")
    assert dc["goodput_mbps"][150] > nr[150]
    # beyond the paper: a lost resend waiting a round trip keeps PDN's goodput
    # with far fewer copies of each segment dropped at the port
    rtt = df[df["series"] == "pdn-rtt"].set_index("n")
    assert (rtt["timeouts"] == 0).all()
    assert rtt["goodput_mbps"][150] > 0.8 * nr.max()
    assert rtt["notifications"][150] < p["notifications"][150]
    assert "beyond the paper" in r.stdout


def test_pdn_theory_and_queue_state_the_claim_beside_the_measurement(tmp_path, cli):
    r = cli("reproduce", "pdn-theory", "--out", str(tmp_path))
    assert r.returncode == 0, r.stderr
    th = pd.read_csv(tmp_path / "pdn-theory.csv")
    assert set(th["series"]) == {"pdn", "theory"}
    assert "close to the theoretical best" in r.stdout
    r = cli("reproduce", "pdn-queue", "--out", str(tmp_path))
    assert r.returncode == 0, r.stderr
    q = pd.read_csv(tmp_path / "pdn-queue.csv")
    assert q["n"].max() == 300
    assert q["max_notice_queue"].max() >= 1, "notifications were queued"
    assert "never holds more than a single notification" in r.stdout
    # drops notified per data segment: N servers x rounds x ceil(SRU / PDN's MSS) segments
    segs = -(-10_000 // 1428)
    expect = q["notifications"] / (q["n"] * 20 * segs)
    assert (q["notifications_per_segment"] - expect).abs().max() < 1e-9
    assert "loss stays low" in r.stdout


def test_the_loss_verdict_moves_with_the_drops_per_segment():
    from xco.reproduce.pdn import verdict_loss

    table = pd.DataFrame({"n": [2, 50], "rounds": [20, 20], "notifications": [0, 50 * 20 * 8 // 2]})
    assert "-> holds" in verdict_loss(table, 8)[0]
    table.loc[1, "notifications"] = 50 * 20 * 8 * 3
    line = verdict_loss(table, 8)[0]
    assert "-> does not hold" in line and "3.00 at most (N = 50)" in line


def test_a_profile_is_chosen_by_name_and_an_unknown_one_is_refused(tmp_path, cli):
    r = cli("reproduce", "pdn-goodput", "--profile", "paper", "--out", str(tmp_path))
    assert r.returncode == 0, r.stderr
    assert "profile paper" in r.stdout and "MSS 536 B" in r.stdout and "IW 1 segments" in r.stdout
    meta = json.loads((tmp_path / "pdn-goodput.meta.json").read_text())
    assert meta["profile"] == "paper"
    r = cli("reproduce", "pdn-goodput", "--profile", "ns2", "--out", str(tmp_path))
    assert r.returncode == 2 and "modern, paper" in r.stderr


def test_list_shows_reproductions(cli):
    r = cli("list")
    assert r.returncode == 0 and "pdn-goodput" in r.stdout and "pdn-completion" in r.stdout


def test_pdn_fairness_writes_per_flow_series_and_phases(tmp_path, cli):
    r = cli("reproduce", "pdn-fairness", "--out", str(tmp_path))
    assert r.returncode == 0, r.stderr
    df = pd.read_csv(tmp_path / "pdn-fairness.csv")
    assert set(df["series"]) == {
        "flow 1 (PDN)",
        "flow 2 (PDN)",
        "flow 3 (NewReno)",
        "flow 4 (NewReno)",
        "flow 5 (NewReno)",
    }
    ph = pd.read_csv(tmp_path / "pdn-fairness-phases.csv")
    assert list(ph["flows"]) == [1, 2, 3, 4, 5, 4, 3, 2, 1], "flows added, then removed, one per interval"
    # a flow sends only while it runs: nothing from flow 1 after its removal (phase 6 on)
    late = df[(df["series"] == "flow 1 (PDN)") & (df["t_s"] > ph["to_s"][4] + 0.02)]
    assert late["throughput_mbps"].sum() == 0
    assert "claim: PDN and NewReno flows share fairly" in r.stdout
    if "-> holds" not in r.stdout:
        # the summary says why from measurements: the PDN senders' wire bytes and two controls
        assert "why (measured)" in r.stdout and "flow 1 (PDN):" in r.stdout
        assert "control A" in r.stdout and "control B" in r.stdout


def test_pdn_fairness_runs_under_the_paper_profile(tmp_path, cli):
    # the paper profile's application part (a new connection per request) is for the incast's
    # request/response apps; the fairness runs are bulk flows and once failed on it (exit 2:
    # "apps[0].reuse_connections: unknown field")
    r = cli("reproduce", "pdn-fairness", "--profile", "paper", "--out", str(tmp_path))
    assert r.returncode == 0, r.stderr
    assert "profile paper" in (tmp_path / "pdn-fairness.txt").read_text()
    assert len(set(pd.read_csv(tmp_path / "pdn-fairness.csv")["series"])) == 5


def test_pdn_theory_says_why_only_where_pdn_is_not_close_to_the_best_case():
    from xco.reproduce.pdn import verdict_theory

    def table(pdn_ms: list[float]) -> pd.DataFrame:
        best = [0.3, 1.0, 3.0]
        rows = [
            {"series": "theory", "n": n, "completion_ms": b} for n, b in zip((2, 10, 30), best, strict=True)
        ]
        rows += [
            {"series": "pdn", "n": n, "completion_ms": p} for n, p in zip((2, 10, 30), pdn_ms, strict=True)
        ]
        return pd.DataFrame(rows)

    close = verdict_theory(table([0.33, 1.05, 3.05]))
    assert len(close) == 1 and "-> holds" in close[0]
    far = verdict_theory(table([0.8, 1.2, 3.1]))
    assert "-> partly" in far[0] and far[1].startswith("  why:")
    assert "0.500 ms more than the best case at N = 2" in far[1] and "0.100 ms more at N = 30" in far[1]
