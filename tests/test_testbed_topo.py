"""The topology file's ``[testbed] prefix``: every name the testbed makes starts
with it, so a prefix that looks like a real interface's name is refused (by
``topo.parse`` and by ``xco testbed up/down``, exit code 2, before anything is
touched). No root needed: the CLI runs without ``ip`` on its PATH, so even a
broken check could not change the machine."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
import tomllib

from xco.testbed import topo

BAD = ["eth", "Eth", "x-y", "1ab", "abcdefg", "", "ens3", "enp0s3", "eno1", "wlan0", "lo", "br0",
       "veth", "docker", "virbr", "bond", "tun", "tap", "vxlan", "p1", "x y", "xé"]  # fmt: skip
GOOD = ["x", "xco", "xcr", "xtdown", "xt1234", "h2o", "abc123"]


def _parse(prefix: object) -> topo.TestbedTopology:
    text = topo.star_toml(2)
    d = tomllib.loads(text)
    d["testbed"]["prefix"] = prefix
    return topo.parse(d, Path("t.toml"))


@pytest.mark.parametrize("prefix", BAD + [7, None])
def test_bad_prefix_is_rejected_naming_the_field(prefix):
    with pytest.raises(topo.TopologyError) as e:
        _parse(prefix)
    msg = str(e.value)
    assert "testbed.prefix" in msg and repr(prefix) in msg, msg
    assert "\n" not in msg and 'e.g. "xco"' in msg, msg  # one line, and says what to use instead


@pytest.mark.parametrize("prefix", GOOD)
def test_good_prefix_is_kept(prefix):
    assert _parse(prefix).prefix == prefix


def test_default_prefix_is_xco():
    d = tomllib.loads(topo.star_toml(2).replace('prefix = "xco"', ""))
    assert topo.parse(d, Path("t.toml")).prefix == "xco"


def test_kernel_stem_message_explains():
    with pytest.raises(topo.TopologyError, match=r"begins like .*\(eth\.\.\.\)"):
        _parse("eth")


@pytest.mark.parametrize("prefix", ["eth", "Eth", "x-y", "1ab", "abcdefg", ""])
@pytest.mark.parametrize("action", ["up", "down"])
def test_cli_refuses_a_bad_prefix_with_exit_2_before_touching_anything(tmp_path, prefix, action):
    path = tmp_path / "bad.toml"
    path.write_text(topo.star_toml(2).replace('prefix = "xco"', f'prefix = "{prefix}"'))
    # no ip, tc, iptables on PATH: whatever the CLI does, it cannot touch an interface
    env = {**os.environ, "PATH": str(tmp_path / "no-tools")}
    r = subprocess.run(
        [sys.executable, "-m", "xco.cli", "testbed", action, str(path)],
        capture_output=True, text=True, env=env, timeout=60,
    )  # fmt: skip
    assert r.returncode == 2, (r.returncode, r.stdout, r.stderr)
    assert "testbed.prefix" in r.stderr and "Traceback" not in r.stderr, r.stderr
    assert len(r.stderr.strip().splitlines()) == 1, r.stderr
