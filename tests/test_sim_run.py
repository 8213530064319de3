"""`xco sim run` and `xco.sim.run`: tables, determinism, pcap readable by tshark."""

import shutil
import subprocess

import pandas as pd

import xco.sim

SCENARIO = """
name = "small-incast"
[run]
seed = 3
[topology]
kind = "two_switch"
hosts_a = 8
hosts_b = 1
link_delay_us = 16.667
[[apps]]
kind = "incast"
client = "b0"
servers = "a*"
sru = "10KB"
rounds = 4
start_delay_max_us = 100
[[apps]]
kind = "ping"
src = "b0"
dst = "a0"
count = 10
interval_us = 300
[output]
timeseries_bin_us = 200
capture = ["sa->sb"]
"""


def test_python_api_returns_dataframes():
    r = xco.sim.run(SCENARIO)
    assert isinstance(r.flows, pd.DataFrame) and isinstance(r.timeseries, pd.DataFrame)
    responses = r.flows[r.flows["role"] == "response"]
    assert len(responses) == 8
    assert (responses["bytes_delivered"] == 4 * 10_000).all()
    assert r.metric("rounds_done") == 4
    assert r.metric("replies", app=1) == 10
    assert r.seed == 3
    assert set(r.timeseries["entity"]) == {"flow", "port"}
    assert {"throughput_mbps", "queue_bytes", "drops"} <= set(r.timeseries.columns)


def test_seed_override_is_recorded():
    meta = xco.sim.run(SCENARIO, seed=11).meta
    assert meta["seed"] == 11 and meta["seed_from"] == "override"
    assert meta["scenario"]["run"]["seed"] == 11, "the scenario as run, not the file's seed 3"
    assert xco.sim.run(SCENARIO).meta["seed_from"] == "run.seed"


def test_meta_records_a_sweep_override_and_the_random_draws():
    from xco.scenario import parse, with_changes

    changed = with_changes(parse(SCENARIO), topology={"hosts_a": 4}, app0={"rounds": 2})
    meta = xco.sim.run(changed).meta
    assert meta["scenario"]["topology"]["hosts_a"] == 4 and meta["scenario"]["apps"][0]["rounds"] == 2
    assert meta["randomness"]["deterministic"] is False
    assert any("start delay" in d for d in meta["randomness"]["draws"])
    assert meta["source_commit"] is None or len(meta["source_commit"]) >= 40
    calm = with_changes(parse(SCENARIO), app0={"start_delay_max_us": None})
    meta = xco.sim.run(calm).meta
    assert meta["randomness"] == {
        "deterministic": True,
        "draws": [],
        "summary": "deterministic: the seed changes nothing",
    }


def test_overrides_name_the_keys_a_sweep_changed():
    from xco.reproduce import overrides

    base = {"topology": {"hosts_a": 2, "k": 1}, "apps": [{"rounds": 5}], "xco": {"mode": "x"}}
    changed = {"topology": {"hosts_a": 8, "k": 1}, "apps": [{"rounds": 20, "sru": "1KB"}]}
    assert overrides(base, changed) == {
        "topology.hosts_a": 8,
        "apps[0].rounds": 20,
        "apps[0].sru": "1KB",
        "xco": None,
    }


def test_cli_writes_tables_and_is_byte_identical(tmp_path, cli):
    path = tmp_path / "s.toml"
    path.write_text(SCENARIO)
    outs = []
    for name in ("a", "b"):
        r = cli("sim", "run", str(path), "--out", str(tmp_path / name))
        assert r.returncode == 0, r.stderr
        outs.append(tmp_path / name)
    files = sorted(p.name for p in outs[0].iterdir())
    assert files == sorted(
        [
            "flows.csv",
            "timeseries.csv",
            "apps.csv",
            "samples.csv",
            "ports.csv",
            "port_inputs.csv",
            "drop_runs.csv",
            "queue_timeline.csv",
            "hosts.csv",
            "meta.json",
            "sa-sb.pcap",
            "xco-outputs.txt",
        ]
    )
    for f in files:
        assert (outs[0] / f).read_bytes() == (outs[1] / f).read_bytes(), f
    flows = pd.read_csv(outs[0] / "flows.csv")
    for col in ("bytes_delivered", "goodput_mbps", "retransmits", "timeouts", "end_s"):
        assert col in flows.columns


def test_tshark_reads_well_formed_tcp(tmp_path):
    tshark = shutil.which("tshark")
    assert tshark, "tshark is installed by the test setup (apt-get install tshark)"
    r = xco.sim.run(SCENARIO)
    r.write(tmp_path)
    pcap = tmp_path / "sa-sb.pcap"
    out = subprocess.run(
        [
            tshark,
            "-r",
            str(pcap),
            "-o",
            "tcp.check_checksum:TRUE",
            "-o",
            "ip.check_checksum:TRUE",
            "-T",
            "fields",
            "-e",
            "frame.len",
            "-e",
            "ip.len",
            "-e",
            "tcp.len",
            "-e",
            "tcp.flags.syn",
            "-e",
            "_ws.expert.severity",
            "-e",
            "tcp.checksum.status",
            "-e",
            "ip.checksum.status",
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert out.returncode == 0, out.stderr
    rows = [line.split("\t") for line in out.stdout.strip().splitlines()]
    assert len(rows) > 50
    tcp_rows = [x for x in rows if x[2] != ""]
    assert tcp_rows, "tshark found TCP segments"
    syns = [x for x in tcp_rows if x[3] == "1"]
    assert len(syns) == 8, "one SYN per server connection"
    data = [x for x in tcp_rows if int(x[2]) > 0]
    assert any(int(x[2]) == 1448 for x in data), "full-size segments carry MSS 1448"
    for frame_len, ip_len, *_ in data:
        assert int(frame_len) == int(ip_len) + 14
    # IP headers are complete in every record: tshark verifies them (1 = good)
    assert all(x[6] == "1" for x in rows if x[6]), "IP checksums are valid"


def test_tshark_verifies_tcp_checksums_with_full_snaplen(tmp_path):
    tshark = shutil.which("tshark")
    assert tshark, "tshark is installed by the test setup (apt-get install tshark)"
    r = xco.sim.run(SCENARIO.replace('capture = ["sa->sb"]', 'capture = ["sa->sb"]\ncapture_snaplen = 65535'))
    r.write(tmp_path)
    out = subprocess.run(
        [
            tshark,
            "-r",
            str(tmp_path / "sa-sb.pcap"),
            "-o",
            "tcp.check_checksum:TRUE",
            "-Y",
            "tcp",
            "-T",
            "fields",
            "-e",
            "tcp.checksum.status",
            "-e",
            "tcp.analysis.flags",
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert out.returncode == 0, out.stderr
    status = [line.split("\t")[0] for line in out.stdout.strip().splitlines()]
    assert len(status) > 50 and all(s == "1" for s in status), "every TCP checksum is good"


def test_every_example_scenario_is_valid(cli):
    from conftest import REPO

    files = sorted((REPO / "scenarios").glob("*.toml"))
    assert len(files) >= 5
    for f in files:
        r = cli("sim", "check", str(f))
        assert r.returncode == 0, f"{f.name}: {r.stderr}"
