"""``xco bench sim``: the simulator's speed on two fixed workloads.

The timing happens inside Rust, so Python start-up is never part of it.
"""

from __future__ import annotations

from . import _native

QUEUES = ("droptail", "red", "sfq")


def run(
    ks: list[int], sim_ms: float = 10.0, rounds: int = 20, workloads: str = "ab", queue: str = "droptail"
) -> list[dict]:
    """Run workload (a) and/or (b) (one per k) with switch ports running ``queue``
    (``droptail``, ``red`` or ``sfq``); returns one dict of figures per run."""
    out = []
    if "a" in workloads:
        out.append(dict(_native.bench_pdn(rounds, queue), workload="a", queue=queue))
    if "b" in workloads:
        for k in ks:
            out.append(dict(_native.bench_fattree(k, sim_ms, queue), workload="b", k=k, queue=queue))
    return out


def report(results: list[dict]) -> str:
    """A human-readable table of what this run measured (nothing else)."""
    lines = []
    for r in results:
        lines.append(r["name"])
        lines.append(
            f"  wall {r['wall_s']:.3f} s   simulated {r['sim_s']:.4f} s   "
            f"{r['events_per_s'] / 1e6:.2f} M events/s   {r['packet_hops_per_s'] / 1e6:.2f} M packet-hops/s"
        )
    return "\n".join(lines)


def sched(ks: list[int], slots: int = 200, slice_ms: int = 1) -> list[dict]:
    """The XCo scheduler under backlog churn on k-ary fat-trees (timeslices of `slice_ms`)."""
    return [dict(_native.bench_sched(k, slots, slice_ms=slice_ms)) for k in ks]


def sched_report(results: list[dict]) -> str:
    """The scheduler figures, with the slot budget check per size.

    The budget check uses the scheduler's busy time per slot (its churn
    calls and its boundary): below the slot length at p99 the scheduler
    keeps the schedule on one core. The load is that time as a share of
    the slot: the share of one core the scheduler needs.
    """
    lines = []
    for r in results:
        slot_us = r["slice_us"]
        slot = f"{slot_us / 1e3:g}-ms"
        ok = "within" if r["busy_p99_us"] < slot_us else "OVER"
        lines.append(f"fat-tree k={r['k']} ({r['hosts']} hosts), {slot} timeslices, random backlog churn")
        calls, p50, p99 = r["events_per_s"], r["p50_us"], r["p99_us"]
        lines.append(f"  {calls:,.0f} scheduler calls/s; per call p50 {p50:.1f} us, p99 {p99:.1f} us")
        s50, s99, smax = r["slot_p50_us"], r["slot_p99_us"], r["slot_max_us"]
        lines.append(
            f"  slot boundary (every expiry of a slot): p50 {s50:.0f} us, p99 {s99:.0f} us,"
            f" worst {smax:.0f} us; {r['mean_active']:.0f} senders per slot"
        )
        b50, b99 = r["busy_p50_us"], r["busy_p99_us"]
        lines.append(
            f"  scheduler busy per {slot} slot (churn + boundary): p50 {b50:.0f} us, p99 {b99:.0f} us"
            f" = {b50 / slot_us:.0%} / {b99 / slot_us:.0%} of one core -> {ok} the {slot} budget"
        )
        nb, nc, ns = r["boundary_nodes_per_slot"], r["churn_nodes_per_slot"], r["ns_per_node"]
        lines.append(
            f"  hosts considered per slot: {nb:,.0f} at the boundary + {nc:,.0f} in churn,"
            f" {ns:.0f} ns each (the budget allows {1e3 * slot_us / (nb + nc):,.0f} ns)"
        )
    return "\n".join(lines)
