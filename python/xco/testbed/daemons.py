"""Starting the real XCo daemons (the Rust ``xco-daemon`` binary) on a testbed:
the controller in the root namespace on the management bridge, one agent in
every host namespace; optionally a hot standby controller beside the primary
(the topology's ``control.standby``, a second address on the management bridge)."""

from __future__ import annotations

import os
import shutil
import subprocess
import time
from pathlib import Path

from . import netns
from .netns import Testbed, TestbedError

REPO = Path(__file__).resolve().parents[3]


def daemon_binary() -> str:
    """Path of ``xco-daemon``: $XCO_DAEMON, then this checkout's cargo build (the freshest while
    developing; $CARGO_TARGET_DIR honoured), then PATH (where scripts/setup.sh installs it)."""
    env = os.environ.get("XCO_DAEMON")
    if env:
        if not Path(env).is_file():
            raise TestbedError(f"XCO_DAEMON={env}: no such file")
        return env
    target = Path(os.environ.get("CARGO_TARGET_DIR") or REPO / "target")
    for profile in ("release", "debug"):
        p = target / profile / "xco-daemon"
        if p.is_file():
            return str(p)
    found = shutil.which("xco-daemon")
    if found:
        return found
    raise TestbedError(
        "xco-daemon not found: build it with `cargo build --release -p xco-daemon` "
        "(scripts/setup.sh does, and installs it to /usr/local/bin), or set XCO_DAEMON=/path/to/xco-daemon"
    )


def log_fields(log: Path, *events: str) -> dict[str, str]:
    """Fields of the last line of ``log`` whose event is one of ``events`` (logfmt; {} if none)."""
    tags = tuple(f"event={e}" for e in events)
    lines = [x for x in log.read_text().splitlines() if any(t in x.split() for t in tags)]
    return dict(kv.split("=", 1) for kv in lines[-1].split() if "=" in kv) if lines else {}


def keygen(path: Path) -> Path:
    """A new master secret at ``path`` (mode 0600): the controller's only key."""
    subprocess.run([daemon_binary(), "keygen", str(path)], check=True, capture_output=True)
    return path


def agent_key(master: Path, topology: Path, host: str, path: Path) -> Path:
    """Host ``host``'s agent key file (its own MAC key, the controller's public key) at ``path``."""
    subprocess.run(
        [daemon_binary(), "agent-key", "--key", str(master), "--topology", str(topology), "--host", host,
         str(path)],
        check=True, capture_output=True,
    )  # fmt: skip
    return path


def add_standby_address(tb: Testbed, ip: str) -> None:
    """Give the management bridge the standby controller's address ``ip`` too (it goes with
    the bridge when the testbed is taken down)."""
    netns.sh("ip", "addr", "add", f"{ip}/{tb.topo.mgmt_net.prefixlen}", "dev", netns.mgmt_bridge(tb.prefix))


class Xco:
    """The controller and agents of one testbed run (a context manager)."""

    def __init__(
        self, tb: Testbed, workdir: Path, *, agents: list[str] | None = None, metrics_port: int = 9464
    ):
        self.tb = tb
        self.dir = Path(workdir)
        self.dir.mkdir(parents=True, exist_ok=True)
        # the controller holds the master secret; each agent gets only its own key file
        self.key = keygen(self.dir / "master.key")
        self.agent_keys: dict[str, Path] = {}
        self.agent_hosts = agents if agents is not None else [h.name for h in tb.topo.hosts]
        self.metrics = f"{tb.topo.controller_ip}:{metrics_port}"
        self.controller: subprocess.Popen | None = None
        self.standby: subprocess.Popen | None = None
        self.agents: dict[str, subprocess.Popen] = {}

    def start_controller(self, wrap: list[str] | None = None) -> subprocess.Popen:
        """Start the controller (``wrap``: a command prefix, e.g. to run it under a faked clock)."""
        args = [
            *(wrap or []), daemon_binary(), "controller", "--topology", str(self.tb.topo.path),
            "--key", str(self.key), "--metrics", self.metrics,
        ]  # fmt: skip
        n = sum(1 for p in self.dir.glob("controller*.log"))
        self.controller = self.tb.spawn(None, args, self.dir / f"controller{'' if n == 0 else n}.log")
        return self.controller

    def start_standby(self, metrics: str | None = None) -> subprocess.Popen:
        """Start the hot standby controller (``control.standby`` of the topology; same master
        secret), its log ``standby.log`` (``standby1.log``... on restarts)."""
        args = [
            daemon_binary(), "controller", "--standby", "--topology", str(self.tb.topo.path),
            "--key", str(self.key), *(["--metrics", metrics] if metrics else []),
        ]  # fmt: skip
        n = sum(1 for p in self.dir.glob("standby*.log"))
        self.standby = self.tb.spawn(None, args, self.dir / f"standby{'' if n == 0 else n}.log")
        return self.standby

    def key_of(self, host: str) -> Path:
        """Host ``host``'s agent key file (made on first use)."""
        if host not in self.agent_keys:
            self.agent_keys[host] = agent_key(self.key, self.tb.topo.path, host, self.dir / f"{host}.key")
        return self.agent_keys[host]

    def start_agent(self, host: str, *extra: str) -> subprocess.Popen:
        args = [
            daemon_binary(), "agent", "--topology", str(self.tb.topo.path), "--key", str(self.key_of(host)),
            "--host", host, "--stats-every-s", "1", *extra,
        ]  # fmt: skip
        self.agents[host] = self.tb.spawn(host, args, self.dir / f"agent-{host}.log")
        return self.agents[host]

    def __enter__(self) -> Xco:
        self.start_controller()
        for h in self.agent_hosts:
            self.start_agent(h)
        self.wait_ready()
        return self

    def wait_ready(self, timeout: float = 10.0) -> None:
        """Wait until every agent has installed its rules (its log says start)."""
        deadline = time.monotonic() + timeout
        for h, p in self.agents.items():
            log = self.dir / f"agent-{h}.log"
            while "event=start" not in log.read_text():
                if p.poll() is not None:
                    raise TestbedError(f"agent on {h} exited ({p.returncode}): {log.read_text().strip()}")
                if time.monotonic() > deadline:
                    raise TestbedError(f"agent on {h} did not start within {timeout} s: {log}")
                time.sleep(0.02)

    def stop_agents(self) -> dict[str, int]:
        return {h: self.tb.stop(p) for h, p in self.agents.items()}

    def __exit__(self, *exc: object) -> None:
        self.stop_agents()
        for p in (self.controller, self.standby):
            if p is not None:
                self.tb.stop(p)
