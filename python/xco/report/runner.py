"""Running every reproduction of the catalogue, one after the other.

Each reproduction runs into ``OUT/<id>/`` (so no two write the same file);
reproductions that share one run (``shares_run_with``: PDN's goodput,
completion and theory) run once, in the directory of the first, and the
others read their own summary and figure from it. Progress goes to stderr:
which one, how many of how many, the time so far and an estimate of what is
left (the mean time of those finished so far times those to come). An
exception in a reproduction becomes a failed row with its error; Ctrl-C or
SIGTERM stops the run, and what finished is still reported (the report says
it was interrupted).
"""

from __future__ import annotations

import os
import sys
import time
import traceback
from dataclasses import dataclass, field
from pathlib import Path
from typing import TextIO

from ..reproduce import Options, Reproduction
from .claims import Claim, parse

PAPERS = (
    ("xco.md", "XCo", "XCo: Explicit Coordination to Prevent Network Fabric Congestion in Cloud Computing "
     "Cluster Platforms (Rajanna, Shah, Jahagirdar, Lemoine, Gopalan; HPDC 2011)"),
    ("pdn.md", "PDN", "Preventing Passive TCP Timeouts in Data Center Networks with Packet Drop Notification "
     "(Xia, Wang, Su, Hamdi)"),
    ("outcast.md", "TCP Outcast", "The TCP Outcast Problem: Exposing Unfairness in Data Center Networks "
     "(Prakash, Dixit, Hu, Kompella; NSDI 2012)"),
    ("sicc.md", "SICC", "Swarm-based Incast Congestion Control in Datacenters Serving Web Applications "
     "(Wang, Shen, Liu; SPAA 2017)"),
)  # fmt: skip
REAL = ("real", "Real Linux hosts", "the daemons and kernel TCP on network namespaces, beside the simulator")


@dataclass
class Row:
    """One reproduction in the report."""

    rid: str
    title: str
    section: str
    status: str  # "ran", "failed", "skipped", "not run"
    note: str = ""  # why skipped / not run, or which run it shares
    error: str = ""
    wall_s: float | None = None
    dir: Path | None = None
    summary: str = ""
    claims: list[Claim] = field(default_factory=list)
    figures: list[Path] = field(default_factory=list)
    profile: str | None = None


@dataclass
class Report:
    """What ``xco reproduce all`` ran and found."""

    out: Path
    full: bool
    seed: int
    rows: list[Row]
    seeds: int = 1
    wall_s: float = 0.0
    interrupted: bool = False


def section_of(r: Reproduction) -> str:
    """The paper a reproduction belongs to (its spec file), or ``real`` for the real-host ones."""
    if r.id.startswith("real-"):
        return REAL[0]
    spec = r.source.split()[0] if r.source else ""
    return spec if any(spec == p[0] for p in PAPERS) else REAL[0]


def ordered(registry: dict[str, Reproduction]) -> list[Reproduction]:
    """The catalogue in report order: by paper (XCo, PDN, Outcast, SICC, real hosts), then by id."""
    rank = {p[0]: i for i, p in enumerate((*PAPERS, REAL))}
    return sorted(registry.values(), key=lambda r: (rank[section_of(r)], r.id))


def _figures(d: Path, rid: str, ids: set[str]) -> list[Path]:
    """The PNG figures in ``d`` that belong to ``rid`` (``rid.png``, ``rid-more.png``), not to
    another reproduction of the same directory."""
    out = []
    for f in sorted(d.glob("*.png")):
        if f.stem == rid or (f.stem.startswith(rid + "-") and f.stem not in ids):
            out.append(f)
    return out


def _profile(d: Path, rid: str) -> str | None:
    import json

    try:
        return json.loads((d / f"{rid}.meta.json").read_text()).get("profile")
    except (OSError, ValueError):
        return None


def _fmt_s(s: float) -> str:
    return f"{s:.0f} s" if s < 60 else f"{int(s // 60)} min {int(s % 60):02d} s"


def run_all(
    registry: dict[str, Reproduction],
    out: Path,
    *,
    full: bool = False,
    seed: int = 1,
    seeds: int = 1,
    jobs: int | None = None,
    real: bool = True,
    is_root: bool | None = None,
    log: TextIO | None = sys.stderr,
) -> Report:
    """Run every reproduction of ``registry`` into ``out/<id>/`` and return what each gave.

    ``real`` False leaves the real-host reproductions out (said so in their
    rows); they are also left out, and said so, when not running as root.
    ``log`` gets the progress lines (None: quiet). A KeyboardInterrupt stops
    the run: the rows not run say so and ``Report.interrupted`` is set.
    """
    root = (os.geteuid() == 0) if is_root is None else is_root
    repros = ordered(registry)
    ids = set(registry)
    rows: list[Row] = []
    report = Report(out=out, full=full, seed=seed, rows=rows, seeds=seeds)
    ran_in: dict[str, Path] = {}  # id -> the directory its shared run wrote
    # runs to make: every runnable reproduction, less those a partner's run serves (found as it goes)
    total = sum(1 for r in repros if not (section_of(r) == REAL[0] and (not real or not root)))
    t_start = time.monotonic()
    done_runs: list[float] = []
    n = 0

    def say(msg: str) -> None:
        if log is not None:
            print(msg, file=log, flush=True)

    interrupted = False
    for r in repros:
        row = Row(rid=r.id, title=r.title, section=section_of(r), status="not run")
        rows.append(row)
        if interrupted:
            row.note = "the run was interrupted before it"
            continue
        if row.section == REAL[0] and not real:
            row.status, row.note = "skipped", "left out with --no-real"
            continue
        if row.section == REAL[0] and not root:
            row.status = "skipped"
            row.note = "needs root (network namespaces): run `sudo xco reproduce all`"
            continue
        # a partner's run counts only if it wrote this one's summary too (else this one runs itself)
        shared = next(
            (p for p in r.shares_run_with if p in ran_in and (ran_in[p] / f"{r.id}.txt").is_file()), None
        )
        if shared is not None:
            total -= 1
            d = ran_in[shared]
            row.status, row.note, row.dir = "ran", f"in the run of {shared}", d
        else:
            n += 1
            d = out / r.id
            elapsed = time.monotonic() - t_start
            left = ""
            if done_runs:
                est = sum(done_runs) / len(done_runs) * (total - n + 1)
                left = f", about {_fmt_s(est)} left"
            say(f"[{n}/{total}] {r.id}: running ({_fmt_s(elapsed)} so far{left})")
            opts = Options(
                out=d, full=full, jobs=jobs, seed=seed, progress=False,
                seeds=seeds if r.replicates else 1,
                profile=r.profiles[0] if r.profiles else None,
            )  # fmt: skip
            t0 = time.monotonic()
            try:
                outcome = r.run(opts)
            except KeyboardInterrupt:
                row.wall_s = time.monotonic() - t0
                row.status, row.note = "not run", "interrupted while running"
                interrupted = True
                say(f"[{n}/{total}] {r.id}: interrupted")
                continue
            except (Exception, SystemExit) as e:  # a failure is a row, not a dead report
                row.wall_s = time.monotonic() - t0
                row.status = "failed"
                head = f"{type(e).__name__}: {e}".strip()
                row.error = head + "\n\n" + "".join(traceback.format_exception(e)[-6:])
                done_runs.append(row.wall_s)
                say(f"[{n}/{total}] {r.id}: FAILED after {_fmt_s(row.wall_s)}: {head.splitlines()[0]}")
                continue
            row.wall_s = time.monotonic() - t0
            done_runs.append(row.wall_s)
            row.status, row.dir = "ran", d
            ran_in[r.id] = d
            row.summary = outcome.summary
        assert row.dir is not None
        txt = row.dir / f"{r.id}.txt"
        if txt.is_file():  # the summary as written (a shared run's partners have their own)
            row.summary = txt.read_text()
        row.claims = parse(row.summary)
        row.figures = _figures(row.dir, r.id, ids)
        row.profile = _profile(row.dir, r.id)
        if shared is None:
            counts = ", ".join(
                f"{v} {sum(c.verdict == v for c in row.claims)}"
                for v in ("holds", "partly", "does not hold")
                if any(c.verdict == v for c in row.claims)
            )
            say(
                f"[{n}/{total}] {r.id}: {len(row.claims)} claims ({counts or 'no verdict'})"
                f" in {_fmt_s(row.wall_s or 0)}"
            )
    report.wall_s = time.monotonic() - t_start
    report.interrupted = interrupted
    return report
