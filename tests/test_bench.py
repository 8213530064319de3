"""`xco bench sim` and `xco bench sched` run and report their figures (tiny workloads)."""

import pytest


def test_bench_sim_reports_rates(cli):
    r = cli("bench", "sim", "--k", "4", "--sim-ms", "1", "--rounds", "2")
    assert r.returncode == 0, r.stderr
    assert "pdn-goodput newreno sweep" in r.stdout and "fat-tree k=4" in r.stdout
    for word in ("wall", "M events/s", "M packet-hops/s"):
        assert word in r.stdout


def test_bench_sim_prints_only_what_it_measured(cli):
    r = cli("bench", "sim", "--workload", "a", "--rounds", "2")
    assert r.returncode == 0, r.stderr
    assert "pdn" in r.stdout and "fat-tree" not in r.stdout, r.stdout
    # no peer's figure and no ratio computed from a stored constant
    for word in ("htsim", "reference", "faster", "ratio"):
        assert word not in r.stdout, r.stdout
    r = cli("bench", "sim", "--workload", "b", "--k", "4", "--sim-ms", "1")
    assert r.returncode == 0, r.stderr
    assert "pdn" not in r.stdout and "k=4" in r.stdout.replace(" ", ""), r.stdout


def test_bench_sim_runs_switch_ports_with_the_chosen_discipline(cli):
    for queue in ("red", "sfq"):
        r = cli("bench", "sim", "--workload", "a", "--rounds", "2", "--queue", queue)
        assert r.returncode == 0, r.stderr
        assert f"{queue} switch ports" in r.stdout, r.stdout
    r = cli("bench", "sim", "--workload", "a", "--rounds", "2")
    assert "switch ports" not in r.stdout, r.stdout
    r = cli("bench", "sim", "--queue", "fq")
    assert r.returncode == 2 and "invalid choice" in r.stderr


def test_bench_workload_a_runs_the_reference_tcp_settings():
    from xco import _native

    text = _native.bench_pdn_scenario(8, 2)
    assert "timestamps = false" in text and "delayed_ack_timeout_ms = 200" in text
    assert 'request = "100B"' in text


def test_bench_sched_reports_the_slot_budget(cli):
    r = cli("bench", "sched", "--k", "4", "--slots", "20")
    assert r.returncode == 0, r.stderr
    assert "fat-tree k=4 (16 hosts)" in r.stdout
    assert "slot boundary" in r.stdout and "busy per 1-ms slot" in r.stdout and "1-ms budget" in r.stdout
    assert "hosts considered per slot" in r.stdout and "ns each" in r.stdout


def test_bench_sched_takes_the_slice_length(cli):
    r = cli("bench", "sched", "--k", "4", "--slots", "10", "--slice-ms", "5")
    assert r.returncode == 0, r.stderr
    assert "5-ms timeslices" in r.stdout and "busy per 5-ms slot" in r.stdout
    assert "of one core" in r.stdout and "5-ms budget" in r.stdout


def test_bench_rejects_bad_arguments(cli):
    for args, word in [
        (("bench", "sched", "--slots", "0"), "slots"),
        (("bench", "sched", "--k", "3"), "even"),
        (("bench", "sched", "--slice-ms", "0"), "--slice-ms"),
        (("bench", "sched", "--slice-ms", "1001"), "--slice-ms"),
        (("bench", "sim", "--k", "7"), "even"),
        (("bench", "sim", "--sim-ms", "-1"), "positive"),
    ]:
        r = cli(*args)
        assert r.returncode == 2 and word in r.stderr and "Traceback" not in r.stderr, (args, r.stderr)


def test_the_python_api_rejects_a_bad_slice():
    from xco import _native

    for bad in (0, 1001):
        with pytest.raises(ValueError, match="slice_ms"):
            _native.bench_sched(4, 1, slice_ms=bad)
