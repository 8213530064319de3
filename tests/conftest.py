"""Shared helpers for the Python tests (they drive the installed `xco` package)."""

import os
import secrets
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from leftovers import ENV_KEY, carriers

REPO = Path(__file__).resolve().parent.parent


def run_cli(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess:
    """Run `python -m xco.cli ARGS` as a user would and capture its output."""
    return subprocess.run(
        [sys.executable, "-m", "xco.cli", *args], capture_output=True, text=True, cwd=cwd, timeout=600
    )


@pytest.fixture
def cli():
    return run_cli


def netns_names() -> set[str]:
    """The network namespaces that exist now (`ip netns list`)."""
    out = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True, check=True).stdout
    return {line.split()[0] for line in out.splitlines() if line.strip()}


def free_prefix(lead: str) -> str:
    """A testbed prefix ``lead`` + 4 digits that no existing namespace uses."""
    import secrets

    present = netns_names()
    for _ in range(50):
        prefix = lead + "".join(secrets.choice("0123456789") for _ in range(4))
        if not any(n.startswith(f"{prefix}-") for n in present):
            return prefix
    pytest.fail(f"no free testbed prefix {lead}NNNN")


# ---- processes the suite started and left running ---------------------------


def pytest_configure(config):
    """Mark the environment every process of this run inherits (see leftovers.py)."""
    if ENV_KEY not in os.environ:  # a nested pytest (a test of the suite) keeps the outer token
        os.environ[ENV_KEY] = secrets.token_hex(8)
    config._xco_run_token = os.environ[ENV_KEY]


def pytest_sessionfinish(session, exitstatus):
    """Fail the run if a process it started is still alive, name it, and end it
    (by its id, after checking again that it carries this run's token)."""
    token = getattr(session.config, "_xco_run_token", None)
    if token is None or os.environ.get("XCO_TEST_LEFTOVERS") == "ignore":
        return
    me = {os.getpid()}
    left = carriers(token, exclude=me)
    deadline = time.monotonic() + 2.0  # processes on their way out get two seconds
    while left and time.monotonic() < deadline:
        time.sleep(0.1)
        left = carriers(token, exclude=me)
    if not left:
        return
    rep = session.config.pluginmanager.get_plugin("terminalreporter")
    lines = [f"  pid {pid}: {cmd[:200]}" for pid, cmd in left]
    msg = "processes this test run started are still running (now ended by the suite):\n" + "\n".join(lines)
    if rep is not None:
        rep.write_sep("=", "leftover processes", red=True)
        rep.write_line(msg)
    else:
        print(msg, file=sys.stderr)
    for sig in (signal.SIGTERM, signal.SIGKILL):
        for pid, _ in carriers(token, exclude=me):
            try:
                os.kill(pid, sig)
            except ProcessLookupError:
                pass
        time.sleep(1.0)
    session.exitstatus = pytest.ExitCode.TESTS_FAILED
