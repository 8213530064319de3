"""`xco reproduce sicc-compress`: files, the record of what ran, and the
behaviour the spec names (compression ratio well above 1, falling as objects
grow), the ratio computed from the packets counted per request."""

import json

import pandas as pd

from xco.reproduce import sicc_compress as sc


def test_sicc_compress_writes_ratio_figure_summary_and_record(tmp_path, cli):
    r = cli("reproduce", "sicc-compress", "--out", str(tmp_path))
    assert r.returncode == 0, r.stderr
    df = pd.read_csv(tmp_path / "sicc-compress.csv")
    assert set(df["series"]) == set(sc.SERIES)
    assert sorted(set(df["object_max_bytes"])) == sc.X_QUICK
    assert (df["requests"] == sc.REQ_QUICK).all(), "every request of every point finished"
    v = df.set_index(["object_max_bytes", "series"])
    for x in sc.X_QUICK:
        # without compression each of the request's objects is at least one packet
        assert v.loc[(x, "unpacked"), "fe_packets_mean"] >= sc.QUERIES
        # the same objects: the same payload, fewer headers with packing
        assert v.loc[(x, "packed"), "fe_bytes_mean"] < v.loc[(x, "unpacked"), "fe_bytes_mean"]
    ratio = pd.read_csv(tmp_path / "sicc-compress-ratio.csv").set_index("object_max_bytes")
    for x in sc.X_QUICK:
        want = v.loc[(x, "unpacked"), "fe_packets_mean"] / v.loc[(x, "packed"), "fe_packets_mean"]
        assert abs(ratio.loc[x, "compression_ratio"] - want) < 1e-9
    # the spec's shape: well above 1 at small objects, lower at the largest
    assert ratio.loc[200, "compression_ratio"] > 3
    assert ratio.loc[1000, "compression_ratio"] < ratio.loc[200, "compression_ratio"]
    for ext in ("png", "svg"):
        assert (tmp_path / f"sicc-compress.{ext}").stat().st_size > 10_000
    meta = json.loads((tmp_path / "sicc-compress.meta.json").read_text())
    assert len(meta["points"]) == len(df)
    p = next(p for p in meta["points"] if p["labels"] == {"series": "unpacked", "object_max_bytes": 400})
    assert p["overrides"]["apps[0].compression"] is False
    assert p["overrides"]["apps[0].object_max_bytes"] == 400
    assert p["overrides"]["apps[0].method"] == "sicc-nmt"
    assert r.stdout.count("claim:") == 2 and "rule:" in r.stdout and "latency saved" in r.stdout


def test_compression_checks_follow_their_rules():
    def table(ratios):
        rows = []
        for x, c in zip(sc.X_QUICK, ratios, strict=True):
            rows += [
                {"series": "packed", "object_max_bytes": x, "fe_packets_mean": 100.0},
                {"series": "unpacked", "object_max_bytes": x, "fe_packets_mean": 100.0 * c},
            ]
        df = pd.DataFrame(rows)
        df["inter_rack_packets_mean"] = df["fe_packets_mean"]
        df["latency_ms_mean"] = 1.0
        return sc.ratios(df), df

    verdicts = lambda ratios: [c.verdict for c in sc.compress_checks(*table(ratios))]  # noqa: E731
    assert verdicts([6, 4, 3, 2.5, 2]) == ["holds", "holds"]
    assert verdicts([6, 4, 3, 2.5, 1.2]) == ["partly", "holds"]
    assert verdicts([1.1, 1.1, 1.1, 1.1, 1.1]) == ["does not hold", "does not hold"]
    assert verdicts([6, 3, 4, 2.5, 2]) == ["holds", "partly"], "a rise on the way is only partly"
