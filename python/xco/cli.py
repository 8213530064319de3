"""The ``xco`` command. Run ``xco --help``, or ``xco COMMAND --help``."""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
from pathlib import Path

from . import __version__

EPILOG = """\
examples:
  xco list                                   what can be reproduced
  xco reproduce pdn-goodput --out results/   incast collapse sweep: CSV, PNG, summary
  xco sim run scenarios/incast.toml --out out/ --seed 7
  xco sim check my-scenario.toml             validate, and estimate memory and events
  xco sweep examples/incast-sweep.toml --out c/ --seeds 3   a campaign: points x seeds -> Parquet
  xco bench sim                              simulator speed (events/s, packet-hops/s)
  xco bench sched                            XCo scheduler speed on 128 to 8192 hosts
  sudo xco reproduce real-udp --out results/ the XCo daemons on real hosts (namespaces, iperf3)
  sudo xco testbed up testbeds/star3.toml    build real hosts from a topology file
  sudo xco testbed down testbeds/star3.toml  remove them (always safe to run)
  sudo xco testbed up testbeds/fattree4.toml a routed k=4 fat-tree (routes = the controller's paths)
  sudo xco reproduce real-incast --out r/    incast on real hosts beside the simulator
  sudo xco reproduce real-outcast --out r/   Outcast 1-vs-12 on the real fat-tree, none vs XCo
  xco controller --help / xco agent --help   the real XCo daemons (xco-daemon)

Scenario files are TOML; see scenarios/ in the repository for commented
examples. Every output records the seed; the same scenario and seed give
byte-identical files.
"""


class UsageError(Exception):
    """A mistake on the command line or in an input file: exit code 2, no traceback."""


SEED_MAX = 2**64 - 1
JOBS_MAX = 4096


def _check_seed(seed: int | None) -> None:
    if seed is not None and not 0 <= seed <= SEED_MAX:
        raise UsageError(f"--seed must be a whole number from 0 to 2^64 - 1, got {seed}")


SEEDS_MAX = 1000


def _check_seeds(seeds: str | int | None) -> int:
    """``--seeds`` as a number of seeds per point (1 when not given)."""
    if seeds is None:
        return 1
    try:
        n = int(str(seeds).strip())
    except ValueError:
        n = 0
    if not 1 <= n <= SEEDS_MAX or str(seeds).strip() != str(n):
        raise UsageError(f"--seeds must be a whole number from 1 to {SEEDS_MAX}, got {seeds!r}")
    return n


def _check_jobs(jobs: int | None) -> None:
    if jobs is not None and not 1 <= jobs <= JOBS_MAX:
        raise UsageError(f"--jobs must be a whole number from 1 to {JOBS_MAX}, got {jobs}")


def _check_out(out: str) -> Path:
    """``out`` as an output directory, checked before any work: it may not exist
    yet, but must not be a file, and it (or the nearest directory above it, in
    which it will be made) must take a new file."""
    p = Path(out)
    if p.exists() and not p.is_dir():
        raise UsageError(f"--out {out!r} is a file, not a directory")
    where = p
    if not p.exists():
        for parent in p.absolute().parents:
            if parent.exists():
                if not parent.is_dir():
                    raise UsageError(f"--out {out!r}: {str(parent)!r} is a file, not a directory")
                where = parent
                break
    if not _writable(where):
        what = "is not writable" if where == p else f"cannot be made: {str(where)!r} is not writable"
        raise UsageError(f"--out {out!r} {what}; give a directory you can write to")
    return p


def _writable(directory: Path) -> bool:
    """True if a file can be made in ``directory`` (tried: a probe file made and removed at once)."""
    import tempfile

    if not os.access(directory, os.W_OK | os.X_OK):
        return False
    try:
        fd, probe = tempfile.mkstemp(prefix=".xco-probe-", dir=directory)
    except OSError:
        return False
    os.close(fd)
    os.unlink(probe)
    return True


def _catalogue_epilog() -> str:
    """The experiment ids, one a line, for ``xco reproduce --help``."""
    from .reproduce import REGISTRY

    return "experiments:\n" + "\n".join(f"  {rid}" for rid in sorted(REGISTRY))


def _cmd_list(args: argparse.Namespace) -> int:
    from .reproduce import REGISTRY

    width = max(len(k) for k in REGISTRY)
    print("reproductions (xco reproduce ID):")
    for rid, r in sorted(REGISTRY.items()):
        prof = f"  [--profile {' | '.join(r.profiles)}]" if r.profiles else ""
        print(f"  {rid:<{width}}  {r.title}{prof}")
    return 0


def _cmd_reproduce(args: argparse.Namespace) -> int:
    from . import reproduce

    if args.id == "all":
        return _cmd_reproduce_all(args)
    try:
        r = reproduce.get(args.id)
    except KeyError as e:
        raise UsageError(f"{e.args[0]} (xco list shows them all)") from None
    _check_seed(args.seed)
    _check_jobs(args.jobs)
    seeds = _check_seeds(getattr(args, "seeds", None))
    if seeds > 1 and not r.replicates:
        raise UsageError(f"--seeds: {r.id} runs one seed ({r.replicates_note or 'no replicates'})")
    if seeds > 1 and args.seed + seeds - 1 > SEED_MAX:
        raise UsageError(f"--seeds: the last seed {args.seed} + {seeds} - 1 passes 2^64 - 1")
    profile = getattr(args, "profile", None)
    if profile is not None and profile not in r.profiles:
        known = ", ".join(r.profiles) if r.profiles else "none (it has one set of settings)"
        raise UsageError(f"--profile {profile!r}: {r.id} defines the profiles: {known}")
    opts = reproduce.Options(
        out=_check_out(args.out),
        full=args.full,
        jobs=args.jobs,
        seed=args.seed,
        seeds=seeds,
        progress=args.progress,
        profile=profile or (r.profiles[0] if r.profiles else None),
    )
    t0 = time.perf_counter()
    reproduce.remove_previous(opts.out, r.id)
    try:
        outcome = r.run(opts)
    except KeyboardInterrupt as e:
        return _reproduce_interrupted(r.id, opts, e)
    reproduce.record_files(opts.out, r.id, outcome.files)
    print(outcome.summary)
    print()
    print(f"wrote {len(outcome.files)} files to {opts.out}/ in {time.perf_counter() - t0:.1f} s:")
    for f in outcome.files:
        print(f"  {f}")
    return 0


def _cmd_reproduce_all(args: argparse.Namespace) -> int:
    from .report import command

    _check_seed(args.seed)
    _check_jobs(args.jobs)
    seeds = _check_seeds(getattr(args, "seeds", None))
    if getattr(args, "profile", None) is not None:
        raise UsageError("--profile: `reproduce all` runs each reproduction with its default profile")
    return command.run(
        _check_out(args.out),
        full=args.full,
        seed=args.seed,
        seeds=seeds,
        jobs=args.jobs,
        real=not getattr(args, "no_real", False),
        quiet=getattr(args, "quiet", False),
    )


def _reproduce_interrupted(rid: str, opts, e: KeyboardInterrupt) -> int:
    """Name what an interrupted reproduction wrote (or write a marker), exit 130."""
    from . import interrupt, reproduce

    files = list(getattr(e, "files", None) or [])
    total = getattr(e, "total", 0)
    if files:
        done = f"{e.done} of {total} runs finished"
    else:
        # a reproduction that writes only at its end: the record says it was stopped
        opts.out.mkdir(parents=True, exist_ok=True)
        note = "interrupted before it finished writing: files of this id may be missing or partial"
        files = [reproduce.write_meta(opts, rid, {"interrupted": True, "note": note})]
        done = "no partial table"
    reproduce.record_files(opts.out, rid, files)
    shown = ", ".join(str(f) for f in files)
    print(
        f"xco: {rid} interrupted ({interrupt.signal_name()}): {done}; wrote {shown} "
        '(meta.json says "interrupted": true)',
        file=sys.stderr,
    )
    return interrupt.EXIT_CODE


def _read_scenario(path: str) -> str:
    p = Path(path)
    if not p.is_file():
        raise UsageError(f"scenario file {path!r} not found")
    data = p.read_bytes()
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as e:
        line = data[: e.start].count(b"\n") + 1
        raise UsageError(f"scenario file {path!r} is not UTF-8 text (byte {e.start}, line {line})") from None


def _with_sets(text: str, sets: list[str] | None) -> str:
    """``text`` with every ``--set KEY=VALUE`` applied (KEY a dotted path such as
    ``topology.hosts_a`` or ``apps[0].rounds``; VALUE read as TOML, else as a
    string); unchanged, byte for byte, without any."""
    if not sets:
        return text
    from . import scenario
    from .campaign.grid import GridError, set_path

    try:
        doc = scenario.parse(text)
    except ValueError:
        return text  # not TOML: the simulator's reader names the line
    for item in sets:
        key, sep, raw = item.partition("=")
        key = key.strip()
        if not sep or not key:
            raise UsageError(f"--set {item!r}: write KEY=VALUE, e.g. --set topology.hosts_a=32")
        try:
            value = scenario.parse(f"v = {raw}")["v"]
        except ValueError:
            value = raw.strip()  # 10Gbps, h0..h9: a string without quotes
        try:
            set_path(doc, key, value)
        except GridError as e:
            raise UsageError(f"--set {key}: {e.problem}") from None
    return scenario.to_text(doc)


def _set_key_error(e: Exception, sets: list[str] | None) -> None:
    """Raise a UsageError naming the ``--set`` key that scenario error ``e`` is about,
    when it says the key is unknown (the scenario text it names lines in is generated)."""
    field = getattr(e, "field", "") or ""
    problem = getattr(e, "problem", "") or ""
    if not field or not problem.startswith("unknown field"):
        return
    for item in sets or []:
        key = item.partition("=")[0].strip()
        if key == field or key.startswith((field + ".", field + "[")):
            why = problem.split(" (line ")[0]
            raise UsageError(f"--set {key}: not a scenario key ({field}: {why})") from None


def _size_arg(value: str, flag: str) -> int:
    """A size given on the command line ("1GiB", "500MB", 4096) in bytes."""
    from . import scenario

    try:
        return scenario.size_bytes(value, flag)
    except scenario.ScenarioError as e:
        raise UsageError(f"{flag} {value!r}: {getattr(e, 'problem', e)}") from None


def _show_progress(args: argparse.Namespace) -> bool:
    """Progress on stderr: on a terminal by default, --progress forces it, --quiet or --no-progress not."""
    if args.quiet:
        return False
    return sys.stderr.isatty() if args.progress is None else args.progress


def _cmd_sim_run(args: argparse.Namespace) -> int:
    from . import interrupt, memory, sim
    from .progress import RunProgress
    from .scenario import ScenarioError

    _check_seed(args.seed)
    out = _check_out(args.out)
    text = _with_sets(_read_scenario(args.scenario), args.set)
    max_output = _size_arg(args.max_output, "--max-output") if args.max_output is not None else None
    if max_output is not None and max_output < 1024:
        raise UsageError(f"--max-output must be at least 1KiB, got {args.max_output!r}")
    given = args.max_memory is not None
    limit = _size_arg(args.max_memory, "--max-memory") if given else memory.available_bytes()
    progress = RunProgress(args.scenario) if _show_progress(args) else None
    t0 = time.perf_counter()
    try:
        raw = sim.run_raw(
            text, seed=args.seed, progress=progress, max_file_bytes=max_output, max_memory_bytes=limit
        )
    except ScenarioError as e:
        _set_key_error(e, args.set)
        raise
    except interrupt.Interrupted as e:
        return _sim_run_interrupted(args, e, out)
    except sim.MemoryLimitError as e:
        return _memory_refused(args, e, limit, given)
    wall = time.perf_counter() - t0
    files = sim.write_raw(raw, out)
    for w in raw["warnings"]:
        print(f"xco: warning: {w}", file=sys.stderr)
    print(
        f"{args.scenario}: seed {raw['seed']}, simulated {raw['sim_end_s']:.6f} s ({raw['stop_reason']}), "
        f"{raw['events']:,} events in {wall:.2f} s"
    )
    for item in args.set or []:
        print(f"  --set {item}")
    for (app, kind), figures in _app_figures(raw["apps"]):
        print(f"  app {app} ({kind}): {figures}")
    print(f"wrote {', '.join(files)} to {out}/")
    return 0


def _app_figures(apps_csv: str) -> list[tuple[tuple[int, str], str]]:
    """Each app's metrics from the apps table, one line of text per app (in app order)."""
    import csv
    import io

    by_app: dict[tuple[int, str], list[str]] = {}
    for row in csv.DictReader(io.StringIO(apps_csv)):
        value = float(row["value"]) if row["value"] != "" else float("nan")
        by_app.setdefault((int(row["app"]), row["kind"]), []).append(f"{row['metric']}={value:.6g}")
    return [(k, ", ".join(v)) for k, v in sorted(by_app.items())]


def _sim_run_interrupted(args: argparse.Namespace, e, out: Path) -> int:
    """Write what an interrupted run simulated, say so on stderr, exit 130."""
    from . import interrupt, sim

    how = f"interrupted ({interrupt.signal_name()})"
    if e.raw is None:
        print(f"xco: {args.scenario}: {how} before the run began; nothing written", file=sys.stderr)
        return interrupt.EXIT_CODE
    files = sim.write_raw(e.raw, out)
    if e.raw["interrupted"]:
        print(
            f"xco: {args.scenario}: {how} at {e.raw['sim_end_s']:.6g} s simulated after {e.raw['events']:,} "
            f"events; the partial results are in {out}/ ({len(files)} files; meta.json says "
            '"interrupted": true)',
            file=sys.stderr,
        )
    else:
        print(
            f"xco: {args.scenario}: {how} as the run finished; its complete results are in {out}/",
            file=sys.stderr,
        )
    return interrupt.EXIT_CODE


def _cmd_sim_check(args: argparse.Namespace) -> int:
    from . import memory, sim
    from .scenario import ScenarioError

    _check_seed(args.seed)
    text = _with_sets(_read_scenario(args.scenario), args.set)
    try:
        est = sim.estimate(text, seed=args.seed)
    except ScenarioError as e:
        _set_key_error(e, args.set)
        raise
    base = memory.rss_bytes()
    avail = memory.available_bytes()
    total = est["bytes"] + base
    print(f"{args.scenario}: ok" + "".join(f" (--set {item})" for item in args.set or []))
    print(est["text"].rstrip("\n"))
    what = "before a run (Python and its libraries, measured now)"
    print(f"  {'this process':<22} {memory.human(base):>10}  {what}")
    fits = "fits in" if total <= avail else "does NOT fit in"
    print(
        f"with this process: about {memory.human(total)}; {fits} the {memory.human(avail)} this machine has "
        "available (xco sim run refuses a run above --max-memory, by default that)"
    )
    return 0


def _memory_refused(args: argparse.Namespace, e, limit: int, given: bool) -> int:
    """Say why a run was refused for its memory estimate and what to change; exit 2."""
    from . import memory

    est = e.estimate
    total = est["bytes"] + e.baseline_bytes
    where = "--max-memory" if given else "--max-memory (by default the memory this machine has available)"
    top = est["parts"][0]
    print(
        f"xco: error: {args.scenario} would need about {memory.human(total)} of memory "
        f"({memory.human(est['bytes'])} for the run, {memory.human(e.baseline_bytes)} this process holds), "
        f"more than {where} {memory.human(limit)}.\n"
        f"  largest part: {top['name']} {memory.human(top['bytes'])} ({top['what']}); to make it smaller: "
        f"{top['change']}.\n"
        f"  every part: xco sim check {args.scenario}; to run anyway, give a larger --max-memory.",
        file=sys.stderr,
    )
    return 2


def _cmd_sweep(args: argparse.Namespace) -> int:
    # Dask, pandas and pyarrow are imported here and below, never for `xco --help`
    from . import interrupt
    from .campaign import command
    from .campaign.engine import EngineError
    from .campaign.grid import GridError

    _check_jobs(args.jobs)
    _check_out(args.out)
    if args.seeds is not None and args.seeds < 1:
        raise UsageError(f"--seeds must be a whole number of at least 1, got {args.seeds}")
    where = args.grid or f"{args.out}/campaign.json"
    try:
        done = command.sweep(
            args.grid,
            args.out,
            seeds=args.seeds,
            jobs=args.jobs,
            scheduler=args.scheduler,
            resume=args.resume,
            retry_errors=args.retry_errors,
            progress=args.progress,
            quiet=args.quiet,
        )
    except GridError as e:
        raise UsageError(f"grid {where}: {e}") from None
    except (command.CampaignError, EngineError) as e:
        raise UsageError(str(e)) from None
    except KeyboardInterrupt as e:
        stored = getattr(e, "stored", "?")
        print(
            f"xco: sweep interrupted ({interrupt.signal_name()}): {stored} of {getattr(e, 'total', '?')} "
            f"runs are in {args.out}/store; `xco sweep --resume --out {args.out}` runs the rest",
            file=sys.stderr,
        )
        return interrupt.EXIT_CODE
    for point, seed, error in done["errors"][:10]:
        print(f"xco: warning: point {point} seed {seed}: {error}", file=sys.stderr)
    if len(done["errors"]) > 10:
        print(
            f"xco: warning: and {len(done['errors']) - 10} more failed runs (runs.parquet)", file=sys.stderr
        )
    ok = done["runs"] - len(done["errors"])
    print(
        f"{where}: {done['runs']} runs ({ok} ok, {len(done['errors'])} failed); ran {done['ran']}, "
        f"{done['cached']} from the store, in {done['wall_s']:.1f} s"
    )
    rows = ", ".join(f"{p.name} ({n} rows)" for p, n in done["files"])
    print(f"wrote {args.out}/: {rows}")
    return 0


def _check_ks(ks: list[int]) -> None:
    bad = [k for k in ks if k < 2 or k % 2 or k > 64]
    if bad:
        raise UsageError(f"--k must be an even number from 2 to 64 (a k-ary fat-tree), got {bad[0]}")


def _cmd_bench_sim(args: argparse.Namespace) -> int:
    from . import bench

    ks = args.k or [8]
    if args.all:
        ks = [8, 12, 16]
    _check_ks(ks)
    if args.sim_ms <= 0 or args.rounds <= 0:
        raise UsageError("--sim-ms and --rounds must be positive")
    results = bench.run(
        ks, sim_ms=args.sim_ms, rounds=args.rounds, workloads=args.workload or "ab", queue=args.queue
    )
    print(bench.report(results))
    return 0


def _cmd_bench_sched(args: argparse.Namespace) -> int:
    from . import bench

    if args.slots <= 0:
        raise UsageError("--slots must be positive")
    if not 1 <= args.slice_ms <= 1000:
        raise UsageError(f"--slice-ms must be a whole number of ms from 1 to 1000, got {args.slice_ms}")
    ks = args.k or [8, 16, 32]
    _check_ks(ks)
    print(bench.sched_report(bench.sched(ks, slots=args.slots, slice_ms=args.slice_ms)))
    return 0


def _daemon(kind: str, args: argparse.Namespace) -> int:
    import os

    from .testbed import TestbedError
    from .testbed.daemons import daemon_binary

    try:
        exe = daemon_binary()
    except TestbedError as e:
        raise UsageError(str(e)) from None
    os.execv(exe, [exe, kind, *args.args])
    return 0  # not reached


def _topology_arg(path: str):
    from .testbed import TopologyError, load

    try:
        return load(path)
    except TopologyError as e:
        raise UsageError(str(e)) from None


def _cmd_testbed_up(args: argparse.Namespace) -> int:
    from .testbed import TestbedError, up
    from .testbed.netns import NamesTaken, OwnedByAnother

    t = _topology_arg(args.topology)
    if t.routed:
        from .testbed import TopologyError, routes

        try:
            routes.plan(t)  # the controller's parser and paths: a file they refuse changes nothing
        except TopologyError as e:
            raise UsageError(str(e)) from None
    try:
        tb = up(t)
    except (NamesTaken, OwnedByAnother) as e:
        raise UsageError(str(e)) from None
    except TestbedError as e:
        raise UsageError(f"{e}\n  (xco testbed down {args.topology} removes any partial build)") from None
    hosts = ", ".join(f"{h.name}={h.addr}" for h in t.hosts)
    kind = "routers" if t.routed else "bridges"
    print(f"testbed {t.prefix} is up: {len(t.hosts)} hosts ({hosts}), {len(t.switches)} switches ({kind})")
    print(f"  run a command on a host:  ip netns exec {tb.ns(t.hosts[0].name)} iperf3 -s")
    print(f"  the controller's address: {t.controller_ip}:{t.controller_port} (root namespace)")
    print(f"  tear down:                xco testbed down {args.topology}")
    return 0


def _cmd_testbed_down(args: argparse.Namespace) -> int:
    from .testbed import TestbedError, down, leftovers

    t = _topology_arg(args.topology)
    try:
        removed = down(t)
    except TestbedError as e:
        raise UsageError(str(e)) from None
    left = leftovers(t)
    print(f"removed {len(removed)} namespaces and links of testbed {t.prefix}")
    if left:
        print(
            f"LEFT: {', '.join(left)}: named as this testbed names its objects but not recorded as made by "
            f"it (the state file of prefix {t.prefix}), or could not be removed; if they are stale, remove "
            "them yourself (ip netns del NAME, ip link del NAME)"
        )
    return 1 if left else 0


def _cmd_dst(args: argparse.Namespace) -> int:
    """Run the control plane's deterministic simulation harness (``xco-daemon dst``)."""
    from .testbed import TestbedError
    from .testbed.daemons import daemon_binary

    bounds = (("--seeds", args.seeds, 1), ("--start", args.start, 0), ("--replay", args.replay, 0))
    for name, value, low in bounds:
        if value is not None and value < low:
            raise UsageError(f"{name}: {value}; give a whole number of at least {low}")
    if args.network not in ("model", "sim"):
        raise UsageError(f"--network: '{args.network}' is not a network: model or sim")
    argv: list[str] = ["--network", args.network]
    if args.replay is not None:
        if args.seeds is not None:
            raise UsageError("--replay SEED runs one seed: give it without --seeds")
        argv += ["--replay", str(args.replay)]
        if args.calm:
            argv.append("--calm")
        if args.scenario:
            argv += ["--scenario", args.scenario]
    else:
        if args.calm or args.scenario:
            raise UsageError("--calm and --scenario go with --replay SEED")
        argv += ["--seeds", str(args.seeds if args.seeds is not None else 10_000), "--start", str(args.start)]
        if args.threads is not None:
            argv += ["--threads", str(args.threads)]
    try:
        binary = daemon_binary()
    except TestbedError as e:
        raise UsageError(str(e)) from None
    return subprocess.run([binary, "dst", *argv]).returncode


def _cmd_testbed_run(args: argparse.Namespace) -> int:
    known = ("real-udp", "real-vs-sim", "real-overhead", "real-incast", "real-outcast", "real-sicc")
    if args.experiment not in known:
        raise UsageError(f"unknown experiment {args.experiment!r}; known: {', '.join(known)}")
    args.id = args.experiment
    return _cmd_reproduce(args)


def _reproduce_options(sp: argparse.ArgumentParser) -> None:
    """Options of `xco reproduce` (also taken by `xco testbed run`)."""
    sp.add_argument("--out", default="results", help="output directory (default: results)")
    sp.add_argument(
        "--full", action="store_true", help="the paper's full sweep (slower) instead of the quick one"
    )
    sp.add_argument("--jobs", type=int, default=None, help="parallel runs (default: every core)")
    sp.add_argument("--seed", type=int, default=1, help="random seed written into every output (default 1)")
    sp.add_argument(
        "--seeds",
        default=None,
        metavar="N",
        help="replicates: every point runs with seeds SEED..SEED+N-1 (default 1); tables get a seed "
        "column and ID-ci95.csv, figures the mean with its 95 %% interval (Student t), verdicts are "
        "decided on the interval",
    )
    sp.add_argument(
        "--profile",
        default=None,
        help="the settings profile of the reproduction's scenario file: PDN's modern (default, today's "
        "Linux-like TCP) or paper (the ns-3 defaults of the paper's time); `xco list` names them",
    )
    sp.add_argument(
        "--progress",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="progress bar (default: on a terminal)",
    )


def _set_option(sp: argparse.ArgumentParser) -> None:
    sp.add_argument(
        "--set",
        action="append",
        metavar="KEY=VALUE",
        help="override one scenario key, e.g. --set topology.hosts_a=32 --set apps[0].rounds=5 "
        '--set topology.host_rate=10Gbps; VALUE is read as TOML (5, 1.5, true, [1, 2], "text"), '
        "anything else as a string; repeatable",
    )


def build_parser(catalogue: bool = True) -> argparse.ArgumentParser:
    """The CLI's parser; ``catalogue`` False leaves the experiment list out of
    ``xco reproduce --help`` (it imports every reproduction and matplotlib)."""
    p = argparse.ArgumentParser(
        prog="xco",
        description="Simulate and reproduce data-center congestion control: XCo, PDN, TCP Outcast, SICC.",
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("--version", action="version", version=f"xco {__version__}")
    sub = p.add_subparsers(dest="command", metavar="COMMAND")
    sub.required = True

    sp = sub.add_parser("list", help="list the reproducible experiments")
    sp.set_defaults(func=_cmd_list)

    sp = sub.add_parser(
        "reproduce",
        help="run a paper experiment: CSV + PNG + summary",
        description="Run one experiment of the catalogue (xco list) and write DIR/ID.csv, "
        "DIR/ID.png, DIR/ID.txt and DIR/ID.meta.json. Ctrl-C or SIGTERM stops the sweep: the "
        'finished runs\' rows are written to DIR/ID.csv, DIR/ID.meta.json says "interrupted": true, '
        "exit code 130.",
        epilog=_catalogue_epilog() if catalogue else None,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    sp.add_argument(
        "id",
        help="experiment id, e.g. pdn-goodput (see xco list), or `all`: every reproduction into "
        "DIR/ID/ and one report, DIR/report.html, DIR/report.md and DIR/claims.csv",
    )
    _reproduce_options(sp)
    sp.add_argument(
        "--no-real",
        action="store_true",
        help="with `all`: leave out the real-host reproductions (they also need root)",
    )
    sp.add_argument("-q", "--quiet", action="store_true", help="with `all`: no progress lines on stderr")
    sp.set_defaults(func=_cmd_reproduce)

    sim_p = sub.add_parser("sim", help="run or check a scenario file")
    sim_sub = sim_p.add_subparsers(dest="sim_command", metavar="ACTION")
    sim_sub.required = True
    sp = sim_sub.add_parser(
        "run",
        help="run a scenario and write its tables",
        description="Run SCENARIO.toml and write flows.csv, timeseries.csv, apps.csv, samples.csv, "
        "ports.csv, port_inputs.csv, drop_runs.csv, queue_timeline.csv, hosts.csv, meta.json "
        "(and pcaps of captured links) into --out. Ctrl-C or SIGTERM stops the run at its next "
        'event: what was simulated is written, meta.json says "interrupted": true, exit code 130.',
    )
    sp.add_argument("scenario", help="scenario file (TOML)")
    sp.add_argument("--out", required=True, help="output directory")
    sp.add_argument("--seed", type=int, default=None, help="override the scenario's seed")
    _set_option(sp)
    sp.add_argument(
        "--progress",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="show simulated time / end, events/s and ETA on stderr (default: on a terminal)",
    )
    sp.add_argument("--quiet", action="store_true", help="no progress line (as --no-progress)")
    sp.add_argument(
        "--max-output",
        metavar="SIZE",
        default=None,
        help="largest timeseries.csv and pcap file, e.g. 200MB (default: the scenario's "
        "output.max_file_bytes, else 1GiB); an output stops there with one warning",
    )
    sp.add_argument(
        "--max-memory",
        metavar="SIZE",
        default=None,
        help="refuse (exit 2) a scenario whose memory estimate (xco sim check) exceeds this, e.g. 8GiB "
        "(default: the memory this machine has available, MemAvailable)",
    )
    sp.set_defaults(func=_cmd_sim_run)
    sp = sim_sub.add_parser(
        "check",
        help="validate a scenario and estimate its cost without running it",
        description="Validate SCENARIO.toml and print what running it will cost: memory (each part: "
        "count x bytes per item, the sizes of the simulator's own structs) and events (about), and "
        "whether it fits in the memory this machine has available.",
    )
    sp.add_argument("scenario", help="scenario file (TOML)")
    sp.add_argument("--seed", type=int, default=None, help="override the scenario's seed")
    _set_option(sp)
    sp.set_defaults(func=_cmd_sim_check)

    sp = sub.add_parser(
        "sweep",
        help="a campaign: every point of a grid x seeds, once each, gathered as Parquet",
        description="Run every point of GRID (a base scenario and the keys to vary: lists or ranges) with "
        "every seed, on Dask (a local cluster of this machine's cores, or --scheduler). Each run is kept in "
        "DIR/store under the hash of its scenario text and seed: a re-run runs only what is missing. Writes "
        "DIR/runs.parquet (one row per run; a failed run is an error row), DIR/summary.parquet (mean and "
        "95% interval per point of each headline metric) and DIR/NAME.parquet for every table (flows, apps, "
        "...), with the parameters and seed as columns. Ctrl-C stops within a second and keeps every "
        "finished run (exit 130); --resume continues. Grid format: docs/sweeps.md.",
    )
    sp.add_argument("grid", nargs="?", default=None, help="grid file (TOML); optional with --resume")
    sp.add_argument(
        "--out", required=True, metavar="DIR", help="campaign directory (store and Parquet files)"
    )
    sp.add_argument(
        "--seeds", type=int, default=None, help="seeds 1..N per point (default: the grid's, else 1)"
    )
    sp.add_argument("--jobs", type=int, default=None, help="parallel runs (default: every core)")
    sp.add_argument(
        "--scheduler",
        metavar="ADDRESS",
        default=None,
        help="an existing Dask scheduler, e.g. tcp://HOST:8786 (workers need `pip install xco`); "
        "default: a local cluster in this process",
    )
    sp.add_argument(
        "--resume",
        action="store_true",
        help="continue the campaign in --out as it was started (GRID optional)",
    )
    sp.add_argument("--retry-errors", action="store_true", help="run the runs that failed again")
    sp.add_argument(
        "--progress",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="runs done, errors and time left on stderr (default: on a terminal)",
    )
    sp.add_argument("-q", "--quiet", action="store_true", help="nothing on stderr but errors")
    sp.set_defaults(func=_cmd_sweep)

    sp = sub.add_parser(
        "dst",
        help="test the XCo control plane by deterministic simulation (seeds of faults and attacks)",
        description="Run the control plane's deterministic simulation harness (docs/control-plane.md): "
        "a controller, a hot standby and agents on a simulated network, each seed with its own faults "
        "(loss, delay, partitions, crashes, clock steps, a hostile host), every invariant checked as "
        "it runs. A seed that breaks one prints the command that replays it; exit 1.\n\n"
        "--network model (the default) draws each datagram's one-way delay: no queue, no link, and the "
        "agents' data never travels. --network sim puts the datagrams on the simulator's packet network "
        "instead: drop-tail queues and links of the seed's capacities, with the agents' data (gated, "
        "passed failed open, passed by the kernel at a crash) in the same queues, so control waits behind "
        "data and a full queue drops it; it adds two invariants only a real network can check (data "
        "conserved end to end, and no data drop once coordination resumed), for about 1.3 times the "
        "time per seed.",
        epilog="examples:\n  xco dst --seeds 100000 --start 10000\n  xco dst --replay 170\n"
        "  xco dst --replay 3 --scenario takeover\n  xco dst --network sim --seeds 5000\n"
        "  xco dst --network sim --replay 3029",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    sp.add_argument(
        "--network",
        default="model",
        metavar="{model,sim}",
        help="the network the datagrams travel: model (default) or sim (the simulator's queues and links)",
    )
    sp.add_argument("--seeds", type=int, default=None, help="run this many seeds (default 10000)")
    sp.add_argument("--start", type=int, default=0, help="the first seed of --seeds (default 0)")
    sp.add_argument("--threads", type=int, default=None, help="threads for --seeds (default 2)")
    sp.add_argument("--replay", type=int, default=None, metavar="SEED", help="run one seed with a trace")
    sp.add_argument("--calm", action="store_true", help="with --replay: the seed's network without faults")
    sp.add_argument(
        "--scenario",
        choices=["takeover", "pause", "split"],
        help="with --replay: a calm network with a standby and one fault",
    )
    sp.set_defaults(func=_cmd_dst)

    bench_p = sub.add_parser("bench", help="benchmarks")
    bench_sub = bench_p.add_subparsers(dest="bench_command", metavar="TARGET")
    bench_sub.required = True
    sp = bench_sub.add_parser(
        "sim",
        help="simulator speed: (a) pdn-goodput sweep, (b) fat-tree TCP permutation",
        description="(a) the pdn-goodput NewReno sweep (15 points x 20 rounds) with the reference "
        "setup's TCP settings (MSS 1460 without timestamps, a delayed ACK every 2 segments or 200 ms, "
        "100-byte requests); (b) a k-ary fat-tree TCP permutation: 100 Gb/s links, 1 us per link, "
        "8-packet drop-tail queues, 10 ms simulated. Prints what this run measured: wall time, "
        "simulated time, events/s and packet-hops/s.",
    )
    sp.add_argument("--workload", choices=["a", "b"], help="run only workload a or b (default both)")
    sp.add_argument("--k", type=int, action="append", help="fat-tree k for (b); repeatable (default 8)")
    sp.add_argument("--all", action="store_true", help="k = 8, 12 and 16")
    sp.add_argument("--sim-ms", type=float, default=10.0, help="simulated ms for (b) (default 10)")
    sp.add_argument("--rounds", type=int, default=20, help="incast rounds for (a) (default 20)")
    sp.add_argument(
        "--queue",
        choices=["droptail", "red", "sfq"],
        default="droptail",
        help="discipline of every switch port (default droptail); RED thresholds at 1/6 and 1/2 "
        "of the buffer, SFQ with 1024 buckets",
    )
    sp.set_defaults(func=_cmd_bench_sim)
    sp = bench_sub.add_parser(
        "sched",
        help="XCo scheduler speed on fat-trees (events/s, p50/p99 per event, per-slot time)",
        description="Drive the XCo scheduler (1-ms timeslices unless --slice-ms) on k-ary fat-trees with "
        "random backlog churn (each ms one host in 32 changes its backlog); report scheduler calls per "
        "second, p50/p99 time per call, the time to process each slot boundary, and the scheduler's "
        "busy time per slot against the slot length (the share of one core it needs). "
        "Default: k = 8, 16, 32 (128, 1024, 8192 hosts). To find the shortest slice one core keeps "
        "for a fabric, try e.g. `xco bench sched --k 32 --slice-ms 5`.",
    )
    sp.add_argument("--k", type=int, action="append", help="fat-tree k; repeatable (default 8, 16, 32)")
    sp.add_argument("--slots", type=int, default=200, help="slots to simulate (default 200)")
    sp.add_argument(
        "--slice-ms", type=int, default=1, help="timeslice length, whole ms from 1 to 1000 (default 1)"
    )
    sp.set_defaults(func=_cmd_bench_sched)

    for kind, what in (
        ("controller", "run the XCo controller daemon (xco-daemon controller; see its --help)"),
        ("agent", "run the XCo host agent (xco-daemon agent; root; see its --help)"),
    ):
        sp = sub.add_parser(kind, help=what, add_help=False, description=what)
        sp.add_argument("args", nargs=argparse.REMAINDER, help="passed to xco-daemon " + kind)
        sp.set_defaults(func=lambda a, k=kind: _daemon(k, a))

    tb_p = sub.add_parser("testbed", help="real hosts from network namespaces (root)")
    tb_sub = tb_p.add_subparsers(dest="tb_command", metavar="COMMAND")
    tb_sub.required = True
    sp = tb_sub.add_parser(
        "up",
        help="build a topology file into namespaces, bridges, veths and tbf ports",
        description="Build TOPOLOGY (the file the XCo daemons read) into real hosts: a namespace per host "
        "and switch, Linux bridges as switches, veth links, tbf (rate + drop-tail buffer) on every "
        "egress port, and a management bridge to the controller's address in the root namespace.",
    )
    sp.add_argument("topology", help="topology TOML (see testbeds/ for examples)")
    sp.set_defaults(func=_cmd_testbed_up)
    sp = tb_sub.add_parser(
        "down",
        help="remove a testbed (also after a crash)",
        description="Remove what `xco testbed up TOPOLOGY` built: exactly the namespaces and links whose "
        "names the topology generates and that carry the testbed's mark; nothing else is touched.",
    )
    sp.add_argument("topology", help="topology TOML the testbed was built from")
    sp.set_defaults(func=_cmd_testbed_down)
    sp = tb_sub.add_parser(
        "run",
        help="run an experiment on real hosts (real-udp, real-vs-sim, real-overhead, real-incast, "
        "real-outcast, real-sicc)",
        description="Build the experiment's testbed, run its real traffic (iperf3, the fan-in or web fan-in "
        "apps; with and without the XCo daemons where the experiment compares them), tear it down, and "
        "write CSV, PNG and a summary.",
    )
    sp.add_argument(
        "experiment", help="real-udp, real-vs-sim, real-overhead, real-incast, real-outcast or real-sicc"
    )
    _reproduce_options(sp)
    sp.set_defaults(func=_cmd_testbed_run)
    return p


def main(argv: list[str] | None = None) -> int:
    from .scenario import ScenarioError
    from .testbed import TestbedError

    argv = sys.argv[1:] if argv is None else argv
    parser = build_parser(
        catalogue=bool(argv) and argv[0] == "reproduce" and ("-h" in argv or "--help" in argv)
    )
    if argv and argv[0] in ("controller", "agent"):
        # everything after the word belongs to xco-daemon (argparse would take --help itself)
        try:
            return _daemon(argv[0], argparse.Namespace(args=argv[1:]))
        except UsageError as e:
            print(f"xco: error: {e}", file=sys.stderr)
            return 2
    args = parser.parse_args(argv)
    from . import interrupt

    interrupt.install()
    try:
        return args.func(args)
    except ScenarioError as e:
        where = f" in {args.scenario}" if getattr(args, "scenario", None) else ""
        one_line = " ".join(str(e).splitlines())
        print(f"xco: scenario error{where}: {one_line}", file=sys.stderr)
        return 2
    except UsageError as e:
        print(f"xco: error: {e}", file=sys.stderr)
        return 2
    except TestbedError as e:
        print(f"xco: testbed error: {e}", file=sys.stderr)
        return 2
    except BrokenPipeError:
        # the reader went away (`xco list | head`): as a Unix tool, stop quietly; point stdout
        # at /dev/null so the interpreter's final flush does not fail again
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
    except OSError as e:
        # an output directory that cannot be written, a file that vanished: one line, no traceback
        print(f"xco: error: {e.strerror or e}: {e.filename or ''}".rstrip(": "), file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        from . import interrupt

        print(f"xco: interrupted ({interrupt.signal_name()})", file=sys.stderr)
        return interrupt.EXIT_CODE


if __name__ == "__main__":
    sys.exit(main())
