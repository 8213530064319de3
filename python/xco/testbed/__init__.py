"""``xco testbed``: real hosts (network namespaces, real kernel TCP) on one
machine, built from the same topology file the XCo daemons read.

Layers: :mod:`.topo` reads the file, :mod:`.netns` builds and removes the
namespaces, bridges (or routers), veths and tbf ports, :mod:`.routes` compiles
the controller's paths into a routed testbed's static routes (switch graphs
with loops, e.g. ``testbeds/fattree4.toml``), :mod:`.daemons` starts the real
controller and agents, :mod:`.iperf` runs iperf3 and parses its JSON.
"""

from .netns import Testbed, TestbedError, down, leftovers, up
from .topo import TopologyError, load

__all__ = ["Testbed", "TestbedError", "TopologyError", "down", "leftovers", "load", "up"]
