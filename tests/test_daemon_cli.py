"""`xco-daemon` on bad input, as an operator meets it: topology fields out of
their bounds and key files that are open, short or someone else's — one line
naming the field or file, exit code 2. No root or network needed."""

from __future__ import annotations

import os
import stat
import subprocess

import pytest

from xco.testbed import daemons, topo


def _run(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([daemons.daemon_binary(), *args], capture_output=True, text=True, timeout=30)


STAR = topo.star_toml(2, prefix="xcli", slice_ms=2.0)


@pytest.mark.parametrize(
    "old,new,field",
    [
        ("slice_ms = 2.0", "slice_ms = 1e-9", "control.slice_ms"),
        ("slice_ms = 2.0", "slice_ms = 2.0\nfeedback_timeout_ms = 0", "control.feedback_timeout_ms"),
        ("slice_ms = 2.0", "slice_ms = 2.0\nbypass_bytes = 4294967295", "control.bypass_bytes"),
        ("10.200.0.1:7400", "10.200.0.1:0", "control.controller"),
        ("slice_ms = 2.0", "slice_ms = 2.0\nfail_open_ms = 1", "control.fail_open_ms"),
        ("slice_ms = 2.0", "slice_ms = 2.0\ncontrol_mark = 0", "control.control_mark"),
        ("slice_ms = 2.0", "slice_ms = 2.0\nbypass_pps = 2000000", "control.bypass_pps"),
        ('addr = "10.0.0.2"', 'addr = "10.0.0.2"\naddr6 = ["fe80::1/129"]', "host 'h2': addr6"),
    ],
)
def test_check_refuses_out_of_bounds_fields_in_one_line(tmp_path, old, new, field):
    assert old in STAR
    p = tmp_path / "t.toml"
    p.write_text(STAR.replace(old, new, 1))
    r = _run("check", str(p))
    assert r.returncode == 2, r
    assert r.stderr.count("\n") == 1 and f"{p}: {field}" in r.stderr, r.stderr
    assert "panicked" not in r.stderr


def test_a_self_loop_link_is_refused(tmp_path):
    p = tmp_path / "t.toml"
    p.write_text(STAR + '\n[[link]]\na = "s1"\nb = "s1"\nrate_mbps = 100\n')
    r = _run("check", str(p))
    assert r.returncode == 2 and "link s1-s1" in r.stderr and r.stderr.count("\n") == 1, r


def test_key_files_are_private_strong_and_the_host_s_own(tmp_path):
    t = tmp_path / "t.toml"
    t.write_text(STAR)
    master = tmp_path / "master.key"
    master.write_text("old\n")
    master.chmod(0o644)
    r = _run("keygen", str(master))
    assert r.returncode == 2 and "--force" in r.stderr and master.read_text() == "old\n", (
        r
    )  # never overwrites
    assert stat.S_IMODE(os.stat(master).st_mode) == 0o644, "and never changes a file it refuses"
    assert _run("keygen", "--force", str(master)).returncode == 0
    assert stat.S_IMODE(os.stat(master).st_mode) == 0o600, "the replacement is private"
    assert len(master.read_text().strip()) == 64
    # an agent key file for h1, private too
    h1 = tmp_path / "h1.key"
    r = _run("agent-key", "--key", str(master), "--topology", str(t), "--host", "h1", str(h1))
    assert r.returncode == 0, r.stderr
    assert stat.S_IMODE(os.stat(h1).st_mode) == 0o600
    assert "host = h1" in h1.read_text() and "controller_public" in h1.read_text()
    r = _run("agent-key", "--key", str(master), "--topology", str(t), "--host", "h9", str(h1))
    assert r.returncode == 2 and "--host: 'h9'" in r.stderr, r
    # h2's agent refuses h1's key file (before it touches the network)
    r = _run("agent", "--topology", str(t), "--key", str(h1), "--host", "h2")
    assert r.returncode == 2 and "key of host 'h1', not of 'h2'" in r.stderr, r
    # an agent key file is not a master secret
    r = _run("controller", "--topology", str(t), "--key", str(h1))
    assert r.returncode == 2 and "agent key file" in r.stderr, r
    # group- or world-readable keys are refused with the fix
    master.chmod(0o644)
    r = _run("controller", "--topology", str(t), "--key", str(master))
    assert r.returncode == 2 and f"chmod 600 {master}" in r.stderr and r.stderr.count("\n") == 1, r
    # a short key is refused
    short = tmp_path / "short.key"
    short.write_text("0123456789abcdef0123456789abcdef\n")  # 16 bytes
    short.chmod(0o600)
    r = _run("controller", "--topology", str(t), "--key", str(short))
    assert r.returncode == 2 and "128 bits; at least 256" in r.stderr, r


def test_a_topology_that_is_not_a_regular_file_is_refused_without_reading_it(tmp_path):
    # /dev/zero never ends, a FIFO never answers: both are refused from what they are, at once
    fifo = tmp_path / "topology.fifo"
    os.mkfifo(fifo)
    for path in ("/dev/zero", str(fifo)):
        r = _run("check", path)
        assert r.returncode == 2 and "not a regular file" in r.stderr, r
