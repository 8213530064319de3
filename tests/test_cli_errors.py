"""Bad input gets a clear error naming the field, exit code 2, and no traceback."""

import pytest

GOOD = """
[topology]
kind = "star"
hosts = 2
[[apps]]
kind = "transfer"
src = "h0"
dst = "h1"
bytes = "100KB"
"""

CASES = [
    (GOOD.replace("hosts = 2", "hosts = 2\nspeed = 3"), "speed"),
    (GOOD.replace("hosts = 2", 'hosts = 2\nhost_rate = "-1Gbps"'), "topology.host_rate"),
    (GOOD.replace('"star"', '"hypercube"'), "topology.kind"),
    (GOOD.replace('dst = "h1"', 'dst = "h7"'), "apps[0].dst"),
    ("this is = not toml [", "invalid scenario"),
    # a rate or size without a unit: never read as bit/s or bytes (host_rate = 1000 ran at 1 kbit/s)
    (
        GOOD.replace("hosts = 2", "hosts = 2\nhost_rate = 1000"),
        "topology.host_rate: a bare number (1000) has no unit",
    ),
    (GOOD.replace('bytes = "100KB"', "bytes = 100000"), "apps[0].bytes: a bare number (100000) has no unit"),
    # a bin so short it rounds to nothing: an error with the range, never a silent "off"
    (GOOD + "[output]\ntimeseries_bin_us = 1e-9\n", "output.timeseries_bin_us: must be 0 (no time series)"),
]

EXPLICIT = """
[topology]
kind = "explicit"
nodes = [{ name = "h0", kind = "host" }, { name = "NAME", kind = "host" }, { name = "s", kind = "switch" }]
links = [{ a = "h0", b = "s", rate = "1Gbps" }, { a = "NAME", b = "s", rate = "1Gbps" }]
[[apps]]
kind = "transfer"
src = "h0"
dst = "NAME"
bytes = "100KB"
"""

CASES += [
    (EXPLICIT.replace("NAME", bad), "topology.nodes[1].name: node name")
    for bad in ("", "a b", "s1,x", "a..b")
]


@pytest.mark.parametrize("text,needle", CASES)
def test_bad_scenario_names_the_field_and_exits_2(tmp_path, cli, text, needle):
    path = tmp_path / "bad.toml"
    path.write_text(text)
    for args in (["sim", "run", str(path), "--out", str(tmp_path / "out")], ["sim", "check", str(path)]):
        r = cli(*args)
        assert r.returncode == 2, r.stderr
        assert needle in r.stderr
        assert "Traceback" not in r.stderr and "Traceback" not in r.stdout
    assert not (tmp_path / "out").exists(), "nothing is written for a bad scenario"


def test_missing_file_and_unknown_reproduction_exit_2(tmp_path, cli):
    r = cli("sim", "run", str(tmp_path / "nope.toml"), "--out", str(tmp_path))
    assert r.returncode == 2 and "not found" in r.stderr and "Traceback" not in r.stderr
    r = cli("reproduce", "no-such-experiment", "--out", str(tmp_path))
    assert r.returncode == 2 and "pdn-goodput" in r.stderr and "Traceback" not in r.stderr


def test_an_unknown_reproduction_lists_every_id(tmp_path, cli):
    listed = [line.split()[0] for line in cli("list").stdout.splitlines()[1:] if line.strip()]
    assert len(listed) > 30
    r = cli("reproduce", "no-such-experiment", "--out", str(tmp_path))
    assert r.returncode == 2
    missing = [rid for rid in listed if rid not in r.stderr]
    assert not missing, f"the error leaves out {missing}: {r.stderr}"


def test_good_scenario_checks_ok(tmp_path, cli):
    path = tmp_path / "good.toml"
    path.write_text(GOOD)
    r = cli("sim", "check", str(path))
    assert r.returncode == 0 and "ok" in r.stdout


def test_help_teaches(cli):
    r = cli("--help")
    assert r.returncode == 0
    for word in ("reproduce", "sim run", "bench sim", "seed"):
        assert word in r.stdout
    r = cli("reproduce", "--help")
    assert "--full" in r.stdout and "--out" in r.stdout


def test_a_reader_that_stops_early_ends_the_listing_quietly():
    # `xco list | head -1`: the pipe closes under the writer; a Unix tool stops, exit 0
    import subprocess
    import sys

    p = subprocess.Popen(
        [sys.executable, "-m", "xco.cli", "list"], stdout=subprocess.PIPE, stderr=subprocess.PIPE
    )
    p.stdout.readline()
    p.stdout.close()
    err = p.stderr.read().decode()
    assert p.wait(timeout=30) == 0, err
    assert "Broken pipe" not in err and "Traceback" not in err, err
