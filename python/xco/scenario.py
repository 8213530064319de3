"""Scenario input: a path to a TOML file, TOML text, or a dict.

Errors in a scenario raise :class:`ScenarioError` whose ``field`` names the
field at fault (``topology.host_rate``) and ``problem`` says what is wrong.
"""

from __future__ import annotations

import copy
import sys
from pathlib import Path
from typing import Any

import tomli_w

from . import _native

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10 only
    import tomli as tomllib

ScenarioError = _native.ScenarioFileError
"""Raised for a scenario that cannot be run; ``.field`` and ``.problem`` say why."""

ScenarioLike = str | Path | dict

SEED_MAX = 2**64 - 1


def scenario_error(field: str, problem: str) -> ScenarioError:
    """A :class:`ScenarioError` about ``field`` (a dotted key path, or ``""`` for the whole input)."""
    e = ScenarioError(f"{field}: {problem}" if field else problem)
    e.field = field
    e.problem = problem
    return e


def check_seed(seed: object) -> int | None:
    """``seed`` if it is None or a whole number from 0 to 2^64 - 1, else a :class:`ScenarioError`."""
    if seed is None:
        return None
    if isinstance(seed, bool) or not isinstance(seed, int) or not 0 <= seed <= SEED_MAX:
        raise scenario_error("seed", f"must be a whole number from 0 to 2^64 - 1, got {seed!r}")
    return seed


def _read(path: Path) -> str:
    data = path.read_bytes()
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as e:
        raise scenario_error("", f"{str(path)!r} is not UTF-8 text (byte {e.start})") from None


def to_text(scenario: ScenarioLike) -> str:
    """Return the TOML text of ``scenario`` (a path, TOML text or a dict)."""
    if isinstance(scenario, dict):
        try:
            return tomli_w.dumps(scenario)
        except TypeError as e:
            raise scenario_error("", f"the scenario dict cannot be written as TOML: {e}") from None
    if isinstance(scenario, Path):
        return _read(scenario)
    if isinstance(scenario, str):
        if "\n" not in scenario and scenario.strip().endswith(".toml"):
            return _read(Path(scenario))
        return scenario
    raise TypeError(f"a scenario is a path, TOML text or a dict, not {type(scenario).__name__}")


def load(path: str | Path) -> dict[str, Any]:
    """Read a scenario file into a dict (to change it before running)."""
    with open(path, "rb") as f:
        return tomllib.load(f)


def parse(text: str) -> dict[str, Any]:
    """Parse scenario text into a dict."""
    return tomllib.loads(text)


def with_changes(base: dict[str, Any], **sections: dict[str, Any]) -> dict[str, Any]:
    """A deep copy of ``base`` with keys of the named sections replaced.

    ``with_changes(s, topology={"hosts_a": 32})`` changes one field; the
    special section ``app0`` (``app1``, ...) changes the first (second, ...)
    ``[[apps]]`` entry.
    """
    out = copy.deepcopy(base)
    for name, changes in sections.items():
        if name.startswith("app") and name[3:].isdigit():
            target = out["apps"][int(name[3:])]
        else:
            target = out.setdefault(name, {})
        for k, v in changes.items():
            if v is None:
                target.pop(k, None)
            else:
                target[k] = v
    return out


def _as_written(value: str | float) -> str:
    """``value`` as a scenario file would hold it: a bare number becomes its text,
    which the reader refuses (a rate or size needs a unit) instead of guessing one."""
    return value if isinstance(value, str) else str(value)


def size_bytes(value: str | float, field: str = "size") -> int:
    """A size as scenarios read it (``"10KB"`` is 10,000 bytes), in bytes; a bare
    number (``10000``) is a :class:`ScenarioError` naming ``field``."""
    return _native.size_bytes(_as_written(value), field)


def rate_bps(value: str | float, field: str = "rate") -> int:
    """A rate as scenarios read it (``"1Gbps"``), in bits per second; a bare
    number is a :class:`ScenarioError` naming ``field``."""
    return _native.rate_bps(_as_written(value), field)


def validate(scenario: ScenarioLike) -> None:
    """Raise :class:`ScenarioError` if ``scenario`` cannot be run."""
    _native.validate(to_text(scenario))
