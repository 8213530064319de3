"""The real-host reproductions on the experiment frame: the lab their real points share.

A real-host reproduction is a :class:`~xco.reproduce.experiment.Study` whose real points
(:class:`~xco.reproduce.experiment.Run` with ``real``) run one at a time inside one
:class:`Lab`: a work directory and at most one testbed up, built when a point first asks for
it and kept for the next point that asks for the same one (so a reproduction whose points
share a testbed builds it once), torn down when the study leaves the lab, also on Ctrl-C or
a failure. Its simulated half is ordinary points on the sweep's pool, after the real ones.

``--seeds N`` runs every real point N times (in N rounds, as the frame orders points: seed
outer) and the simulated half with seeds SEED..SEED+N-1. The kernel's runs differ from run to
run whatever the seed; the seed is what the simulated half and any random part of the real
workload use (:data:`SEEDS_NOTE`).
"""

from __future__ import annotations

import contextlib
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path

from ..testbed import netns, topo
from . import Options

SEEDS_NOTE = (
    "real hosts with --seeds {{seeds}}: every real point ran {{seeds}} times, one run after another"
    " (the kernel's runs differ from run to run: the repetitions are its replicates); each round's"
    " seed sets its simulated runs and {random}."
)


def seeds_note(random: str) -> str:
    """:data:`SEEDS_NOTE` with what the seed sets in the real workload (``random``); the study puts
    in the number of seeds (``Study.seeds_note``)."""
    return SEEDS_NOTE.format(random=random)


def require_root(rid: str) -> Callable[[Options], None]:
    """A study ``check`` that refuses real-host work without root (exit 2 at the command line)."""

    def check(opts: Options) -> None:
        netns.require_root(rid, "network namespaces, iptables")

    return check


class Lab:
    """A work directory and the testbed that is up (at most one), for the real points of a study."""

    def __init__(self, work: Path) -> None:
        self.work = work
        # what a testbed's setup found out, for the points (e.g. the route it set)
        self.notes: dict[str, object] = {}
        self._key: object = None
        self._tb: netns.Testbed | None = None

    def testbed(
        self,
        key: object,
        build: Callable[[Path], topo.TestbedTopology],
        setup: Callable[[netns.Testbed], None] | None = None,
    ) -> netns.Testbed:
        """The testbed ``key``: the one up if it has that key, else the one up torn down and
        ``build(work)`` built (then ``setup(testbed)``, e.g. routes)."""
        if self._tb is not None and self._key == key:
            return self._tb
        self.down()
        tb = netns.up(build(self.work))
        self._tb, self._key = tb, key
        if setup is not None:
            try:
                setup(tb)
            except BaseException:
                self.down()
                raise
        return tb

    def fresh(self, key: object, build: Callable[[Path], topo.TestbedTopology]) -> netns.Testbed:
        """The testbed ``key`` built anew (fresh hosts: no state left by the previous point)."""
        self.down()
        return self.testbed(key, build)

    def down(self) -> None:
        """Tear down the testbed that is up (its processes first), if any."""
        tb, self._tb, self._key = self._tb, None, None
        if tb is not None:
            try:
                tb.stop_all()
            finally:
                netns.down(tb.topo)

    def dir(self, name: str, seed: int) -> Path:
        """A run directory of its own for one run of a point (its logs)."""
        return self.work / f"{name}-seed{seed}"


@contextlib.contextmanager
def lab(prefix: str, work: Path | None = None) -> Iterator[Lab]:
    """A :class:`Lab` in a new temporary directory (or ``work``), torn down on the way out."""
    with tempfile.TemporaryDirectory(prefix=prefix) as tmp:
        the = Lab(work or Path(tmp))
        try:
            yield the
        finally:
            the.down()
