"""Bad SICC input (issue 27): a one-line error naming the field, exit code 2,
from `xco sim run` and `xco sim check`, for the web fan-in and the tree3."""

import pytest

GOOD = """
[topology]
kind = "tree3"
servers_per_rack = 6
racks = 4
racks_per_agg = 2
host_rate = "1Gbps"
tor_oversubscription = "1:3"
edge_buffer = "100KB"
[[apps]]
kind = "web_fanin"
method = "sicc"
objects = 100
queries = 20
requests = 2
"""

CASES = [
    (GOOD.replace("queries = 20", "queries = 200"), "apps[0].queries"),
    (GOOD.replace("requests = 2", "requests = 2\nreplicas = 30"), "apps[0].replicas"),
    (GOOD.replace("requests = 2", 'requests = 2\nfront_ends = "t1"'), "apps[0].front_ends"),
    (GOOD.replace('host_rate = "1Gbps"', 'host_rate = "0Gbps"'), "topology.host_rate"),
    (GOOD.replace("requests = 2", "requests = 2\nobject_max_bytes = 0"), "apps[0].object_max_bytes"),
    (GOOD.replace('edge_buffer = "100KB"', "edge_buffer = 0"), "topology.edge_buffer"),
    (GOOD.replace("racks_per_agg = 2", "racks_per_agg = 3"), "topology.racks_per_agg"),
    (GOOD.replace('"1:3"', '"1:4"'), "topology.tor_oversubscription"),
]


@pytest.mark.parametrize("text,needle", CASES)
def test_bad_sicc_input_names_the_field_on_one_line_and_exits_2(tmp_path, cli, text, needle):
    path = tmp_path / "bad.toml"
    path.write_text(text)
    for args in (["sim", "run", str(path), "--out", str(tmp_path / "out")], ["sim", "check", str(path)]):
        r = cli(*args)
        assert r.returncode == 2, r.stderr
        assert needle in r.stderr
        assert len(r.stderr.strip().splitlines()) == 1, r.stderr
        assert "Traceback" not in r.stderr
    assert not (tmp_path / "out").exists()


def test_the_good_sicc_scenario_runs(tmp_path, cli):
    path = tmp_path / "good.toml"
    path.write_text(GOOD)
    r = cli("sim", "run", str(path), "--out", str(tmp_path / "out"), "--quiet")
    assert r.returncode == 0, r.stderr
    assert (tmp_path / "out" / "requests.csv").read_text().count("\n") == 3
