"""On-demand coordination on real hosts: a lone sender is ungated.

One veth path h1 -> h2 with the agent on h1 and ``on_demand = true``: one
host cannot overrun its own path, so after its first report interval the
controller ungates h1 -> h2 and the agent passes its packets without holding
them. Namespaces are built inside the test (own prefix and management
network) and removed after it. No throughput is asserted (the machine is
shared); the agent's own counters say what it did. Needs root, iperf3 and a
built xco-daemon.
"""

from __future__ import annotations

import os

import pytest

from xco.testbed import daemons, iperf, netns, topo


@pytest.fixture(autouse=True)
def _need_root():
    if os.geteuid() != 0:
        pytest.fail("real-host tests need root (network namespaces, iptables); CI runs them as root")


def test_a_lone_sender_is_ungated_and_its_agent_holds_almost_nothing(tmp_path):
    path = tmp_path / "pair.toml"
    path.write_text(
        topo.star_toml(2, rate_mbps=100, prefix="xodt", slice_ms=2.0, extra_control="on_demand = true",
                       controller="10.200.48.1:7400")
    )  # fmt: skip
    t = topo.load(path)
    tb = netns.up(t)
    try:
        with daemons.Xco(tb, tmp_path / "run", agents=["h1"]):
            rows = iperf.run_flows(tb, [iperf.Flow("h1", "h2", 5201)], 2.0, tmp_path / "iperf")
        st = daemons.log_fields(tmp_path / "run" / "agent-h1.log", "stop")
    finally:
        tb.stop_all()
        netns.down(t)
    assert rows[0]["mbps"] > 0
    intercepted, held = int(st["intercepted"]), int(st["held"])
    assert intercepted > 200, st  # the agent saw the flow (GSO packets of up to 64 KB)
    # coordinated until the controller heard a whole report interval (8 ms) of the flow: then ungated
    assert held < intercepted / 20, f"held {held} of {intercepted} packets: {st}"
    assert int(st["fail_opens"]) == 0, st
