"""`xco dst`: the control plane's deterministic simulation harness from the xco command."""


def test_xco_dst_runs_seeds_and_replays_one(cli):
    r = cli("dst", "--seeds", "40", "--start", "100")
    assert r.returncode == 0, r.stdout + r.stderr
    assert "seeds 100..140: 0 of 40 failed" in r.stdout + r.stderr
    r = cli("dst", "--replay", "101")
    assert r.returncode == 0 and "seed 101 passed" in r.stdout + r.stderr, r.stdout + r.stderr


def test_xco_dst_refuses_options_that_do_not_go_together(cli):
    for args in (["--calm"], ["--seeds", "5", "--replay", "3"], ["--scenario", "split"]):
        r = cli("dst", *args)
        assert r.returncode == 2 and "xco: error:" in r.stderr and r.stderr.count("\n") == 1, (args, r.stderr)
