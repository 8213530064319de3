"""What a testbed made: the record that lets ``down`` remove exactly that.

``up`` writes a state file, ``STATE_DIR/PREFIX.json`` (``/run/xco-testbed``,
root's and cleared at boot with the namespaces it describes; the
environment variable ``XCO_TESTBED_STATE_DIR`` names another), before it
makes anything and again after each object it makes:

- ``owner``: the testbed's identity, a hash of its topology file's text
  (two files, even of the same prefix, are two owners), and the file's path;
- every namespace it added, with the identity of that namespace (the device
  and inode of ``/run/netns/NAME``: a namespace someone else adds later
  under the same name has another);
- every link it added in the root namespace, with its interface index.

``down`` removes an object only if the record lists it and the object that
now bears the name is still the one recorded (and carries the testbed's
mark); an object of another owner's record is refused, naming the file that
made it. A name alone, or an alias anyone can set, never makes an object
the testbed's.
"""

from __future__ import annotations

import hashlib
import json
import os
from dataclasses import dataclass, field
from pathlib import Path

NETNS_DIR = Path("/run/netns")


def state_dir() -> Path:
    return Path(os.environ.get("XCO_TESTBED_STATE_DIR", "/run/xco-testbed"))


def owner_id(text: str, fallback: str) -> str:
    """The owner of a testbed: the SHA-256 of its topology file's text (``fallback``, a
    canonical description, for a topology built without a file), first 16 hex digits."""
    return hashlib.sha256((text or fallback).encode()).hexdigest()[:16]


def ns_identity(name: str) -> list[int] | None:
    """(device, inode) of namespace ``name``'s file, or None if it does not exist."""
    try:
        st = os.stat(NETNS_DIR / name)
    except OSError:
        return None
    return [st.st_dev, st.st_ino]


@dataclass
class Record:
    """One testbed's state file."""

    prefix: str
    owner: str
    topology: str
    namespaces: dict[str, list[int]] = field(default_factory=dict)
    links: dict[str, int] = field(default_factory=dict)

    @property
    def path(self) -> Path:
        return path_of(self.prefix)

    def save(self) -> None:
        """Write the record (atomically: a reader sees the old or the new one)."""
        d = state_dir()
        d.mkdir(mode=0o700, parents=True, exist_ok=True)
        tmp = d / f".{self.prefix}.json.tmp"
        tmp.write_text(json.dumps(self.__dict__, indent=1, sort_keys=True) + "\n")
        os.replace(tmp, self.path)

    def forget(self) -> None:
        try:
            self.path.unlink()
        except FileNotFoundError:
            pass


def path_of(prefix: str) -> Path:
    return state_dir() / f"{prefix}.json"


class BadRecord(Exception):
    """A state file that cannot be read as one (the message names it)."""


def load(prefix: str) -> Record | None:
    """The record of testbed ``prefix``, or None if there is none."""
    p = path_of(prefix)
    try:
        if p.is_symlink() or not p.is_file():
            return None if not p.exists() else _bad(p, "not a regular file")
        if p.stat().st_size > 1 << 20:
            _bad(p, "larger than 1 MiB")
        d = json.loads(p.read_text())
        rec = Record(
            prefix=str(d["prefix"]),
            owner=str(d["owner"]),
            topology=str(d["topology"]),
            namespaces={str(k): [int(x) for x in v] for k, v in d["namespaces"].items()},
            links={str(k): int(v) for k, v in d["links"].items()},
        )
    except (OSError, ValueError, KeyError, TypeError, AttributeError) as e:
        _bad(p, str(e))
    if rec.prefix != prefix:
        _bad(p, f"it records prefix {rec.prefix!r}")
    return rec


def _bad(p: Path, why: str):
    raise BadRecord(f"testbed state file {p} is unreadable ({why}); move it away if it is stale")
