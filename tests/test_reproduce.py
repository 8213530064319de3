"""`xco reproduce pdn-goodput`: files, columns, and the incast collapse it must show."""

import json

import pandas as pd

from xco.reproduce import pdn


def test_pdn_goodput_writes_csv_png_and_summary(tmp_path, cli):
    r = cli("reproduce", "pdn-goodput", "--out", str(tmp_path), "--seed", "5")
    assert r.returncode == 0, r.stderr
    df = pd.read_csv(tmp_path / "pdn-goodput.csv")
    assert list(df.columns) == ["series", "n", "goodput_mbps", "completion_ms"]
    assert set(df["series"]) == {"newreno", "delay400", "delay800"}
    assert sorted(set(df["n"])) == pdn.QUICK_N
    png = (tmp_path / "pdn-goodput.png").read_bytes()
    assert png[:8] == b"\x89PNG\r\n\x1a\n" and len(png) > 10_000
    assert (tmp_path / "pdn-completion.png").exists()
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


def test_list_shows_reproductions(cli):
    r = cli("list")
    assert r.returncode == 0 and "pdn-goodput" in r.stdout and "pdn-completion" in r.stdout
