"""Shared helpers for the Python tests (they drive the installed `xco` package)."""

import subprocess
import sys
from pathlib import Path

import pytest

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
