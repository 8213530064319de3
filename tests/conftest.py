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
