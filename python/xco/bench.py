"""``xco bench sim``: the simulator's speed on two fixed workloads.

The timing happens inside Rust, so Python start-up is never part of it.
"""

from __future__ import annotations

from . import _native

HTSIM_REFERENCE = {
    # htsim (C++) on this machine class, benchmark (b): wall seconds and packet-hops/s
    8: (7.2, 3.4e6),
    12: (43.0, None),
    16: (127.0, 1.35e6),
}
REFERENCE_PDN_S = 4.0  # the widely used reference simulator, benchmark (a)


def run(ks: list[int], sim_ms: float = 10.0, rounds: int = 20) -> list[dict]:
    """Run benchmark (a) and (b) for each k; returns one dict of figures per workload."""
    out = [dict(_native.bench_pdn(rounds), workload="a")]
    for k in ks:
        out.append(dict(_native.bench_fattree(k, sim_ms), workload="b", k=k))
    return out


def report(results: list[dict]) -> str:
    """A human-readable table of the figures and the ratios to the references."""
    lines = []
    for r in results:
        lines.append(r["name"])
        lines.append(
            f"  wall {r['wall_s']:.3f} s   simulated {r['sim_s']:.4f} s   "
            f"{r['events_per_s'] / 1e6:.2f} M events/s   {r['packet_hops_per_s'] / 1e6:.2f} M packet-hops/s"
        )
        if r["workload"] == "a":
            lines.append(
                f"  vs reference simulator ({REFERENCE_PDN_S} s): {REFERENCE_PDN_S / r['wall_s']:.1f}x faster"
            )
        elif r.get("k") in HTSIM_REFERENCE:
            wall, hops = HTSIM_REFERENCE[r["k"]]
            cmp = f"  vs htsim at k={r['k']}: wall {wall} s -> {wall / r['wall_s']:.2f}x faster"
            if hops:
                cmp += f"; packet-hops/s {hops / 1e6:.2f} M -> {r['packet_hops_per_s'] / hops:.2f}x"
            lines.append(cmp)
    return "\n".join(lines)
