"""scripts/callgrind_lines.py reads callgrind's compressed format right."""

import importlib.util
from pathlib import Path

import pytest

SCRIPT = Path(__file__).resolve().parent.parent / "scripts" / "callgrind_lines.py"
spec = importlib.util.spec_from_file_location("callgrind_lines", SCRIPT)
callgrind_lines = importlib.util.module_from_spec(spec)
spec.loader.exec_module(callgrind_lines)

PROFILE = """\
version: 1
positions: instr line
events: Ir Bcm
fl=(1) a.rs
fn=(1) f
0x1000 10 5 1
+4 * 7
-2 12 3
calls=1 0x2000
0x1008 10 100 9
0x1010 11 2
"""


def write(tmp_path, text):
    p = tmp_path / "cg.out"
    p.write_text(text)
    return str(p)


def test_costs_follow_relative_addresses_and_skip_call_costs(tmp_path):
    path = write(tmp_path, PROFILE)
    assert callgrind_lines.costs(path, "Ir") == {0x1000: 5, 0x1004: 7, 0x1002: 3, 0x1010: 2}
    # a line without the event's column costs nothing; the call's inclusive cost is not charged
    assert callgrind_lines.costs(path, "Bcm") == {0x1000: 1}


def test_costs_without_line_numbers(tmp_path):
    path = write(tmp_path, "positions: instr\nevents: Ir\n0x10 4\n+1 6\n")
    assert callgrind_lines.costs(path, "Ir") == {0x10: 4, 0x11: 6}


def test_a_profile_without_addresses_or_the_event_is_a_clear_error(tmp_path):
    with pytest.raises(SystemExit, match="--dump-instr=yes"):
        callgrind_lines.costs(write(tmp_path, "positions: line\nevents: Ir\n10 4\n"), "Ir")
    with pytest.raises(SystemExit, match="event 'Dr' not in this profile"):
        callgrind_lines.costs(write(tmp_path, PROFILE), "Dr")
