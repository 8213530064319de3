"""The campaign store: one directory per run, named by the hash of its scenario text and seed.

``DIR/store/ab/abcdef.../`` holds ``scenario.toml`` (the exact text run),
``meta.json`` (the simulator's, with the seed) and one ``NAME.csv`` per
table, or ``error.json`` for a run that failed. An entry is written into a
temporary directory and renamed into place, so a killed sweep leaves whole
entries or none. Whatever grid asks for a (text, seed) pair finds it here:
a re-run, a resumed run or another grid sharing points runs only what is
missing.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
from pathlib import Path
from typing import Any

FORMAT = 1


def run_key(text: str, seed: int) -> str:
    """The store key of scenario ``text`` run with ``seed``: 32 hex digits of SHA-256."""
    h = hashlib.sha256()
    h.update(f"xco-run {FORMAT}\nseed {seed}\n".encode())
    h.update(text.encode("utf-8"))
    return h.hexdigest()[:32]


class Store:
    """The run entries under ``root`` (``DIR/store``)."""

    def __init__(self, root: str | Path) -> None:
        self.root = Path(root)

    def path(self, key: str) -> Path:
        """The entry directory of ``key``."""
        return self.root / key[:2] / key

    def status(self, key: str) -> str | None:
        """``"ok"``, ``"error"`` or None (not in the store)."""
        p = self.path(key)
        if (p / "meta.json").is_file():
            return "ok"
        if (p / "error.json").is_file():
            return "error"
        return None

    def clean(self) -> int:
        """Remove entries left half-written by a killed sweep; returns how many."""
        n = 0
        if self.root.is_dir():
            for p in self.root.glob("*/.tmp-*"):
                shutil.rmtree(p, ignore_errors=True)
                n += 1
        return n

    def _commit(self, key: str, files: dict[str, str]) -> None:
        final = self.path(key)
        final.parent.mkdir(parents=True, exist_ok=True)
        tmp = final.parent / f".tmp-{key}-{os.getpid()}"
        shutil.rmtree(tmp, ignore_errors=True)
        tmp.mkdir()
        for name, text in files.items():
            (tmp / name).write_text(text, encoding="utf-8")
        if final.exists():  # an error entry being replaced (--retry-errors)
            shutil.rmtree(final)
        os.rename(tmp, final)

    def put(self, key: str, text: str, seed: int, result: dict[str, Any]) -> None:
        """Store a worker's result (:func:`xco.campaign.worker.run_point`) for ``key``."""
        if "error" in result:
            err = {"seed": seed, "error": result["error"], "retry": bool(result.get("retry"))}
            files = {"scenario.toml": text, "error.json": json.dumps(err, indent=2) + "\n"}
        else:
            files = {"scenario.toml": text, "meta.json": result["meta"]}
            files.update({f"{name}.csv": csv for name, csv in result["tables"].items()})
        self._commit(key, files)

    def tables(self, key: str) -> dict[str, Path]:
        """An ok entry's tables: name -> CSV path."""
        return {p.stem: p for p in sorted(self.path(key).glob("*.csv"))}

    def meta(self, key: str) -> dict[str, Any]:
        """An ok entry's meta.json."""
        return json.loads((self.path(key) / "meta.json").read_text(encoding="utf-8"))

    def retry(self, key: str) -> bool:
        """Whether a failed entry failed outside its run (a lost worker): a later sweep runs it again."""
        return bool(json.loads((self.path(key) / "error.json").read_text(encoding="utf-8")).get("retry"))

    def error(self, key: str) -> str:
        """A failed entry's error line."""
        return json.loads((self.path(key) / "error.json").read_text(encoding="utf-8"))["error"]
