"""The suite's check for processes a test run leaves behind (tests/leftovers.py, conftest.py)."""

import os
import secrets
import subprocess
import sys
import textwrap

from conftest import REPO
from leftovers import ENV_KEY, ancestors, carriers


def test_a_process_carrying_the_token_is_found_until_it_ends_and_others_never():
    token = secrets.token_hex(8)
    mine = subprocess.Popen(["sleep", "30"], env={**os.environ, ENV_KEY: token})
    other = subprocess.Popen(["sleep", "30"], env={**os.environ, ENV_KEY: token + "0"})
    try:
        assert [pid for pid, _ in carriers(token)] == [mine.pid]
        assert "sleep 30" in carriers(token)[0][1]
    finally:
        mine.kill()
        mine.wait()
        other.kill()
        other.wait()
    assert carriers(token) == []


def test_ancestors_hold_this_process_and_its_parent():
    up = ancestors()
    assert os.getpid() in up and os.getppid() in up


def test_a_run_that_leaves_a_process_behind_fails_and_names_it(tmp_path):
    # a small suite of its own, with this repository's conftest: one test starts
    # a process in its own session and forgets it
    tests = str(REPO / "tests")
    (tmp_path / "conftest.py").write_text(
        textwrap.dedent(
            f"""
            import importlib.util
            import sys

            sys.path.insert(0, {tests!r})
            spec = importlib.util.spec_from_file_location("xco_suite_conftest", {tests!r} + "/conftest.py")
            suite = importlib.util.module_from_spec(spec)
            spec.loader.exec_module(suite)
            pytest_configure = suite.pytest_configure
            pytest_sessionfinish = suite.pytest_sessionfinish
            """
        )
    )
    (tmp_path / "test_forgets.py").write_text(
        textwrap.dedent(
            """
            import subprocess

            def test_starts_and_forgets():
                subprocess.Popen(["sleep", "57.5"], start_new_session=True)
            """
        )
    )
    env = {k: v for k, v in os.environ.items() if k not in (ENV_KEY, "XCO_TEST_LEFTOVERS")}
    r = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", str(tmp_path)],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env=env,
        timeout=120,
    )
    out = r.stdout + r.stderr
    assert r.returncode == 1, out
    assert "1 passed" in out and "leftover processes" in out and "sleep 57.5" in out, out
    # and the suite ended it
    ps = subprocess.run(["ps", "-eo", "args"], capture_output=True, text=True).stdout
    assert "sleep 57.5" not in ps.splitlines()
