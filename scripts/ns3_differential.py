#!/usr/bin/env python3
"""Differential check of xco against ns-3.44 on workload (a), the pdn-goodput
NewReno incast sweep (``pdn_scenario`` in ``crates/xco-sim/src/bench.rs``).

The settings are written once, in :data:`SETTINGS`; :func:`xco_scenario`
turns them into an xco scenario (checked key by key against
``bench_pdn_scenario``, the text workload (a) runs), and :func:`ns3_config`
into ns-3 attributes and link/queue figures, which ``scripts/ns3_incast.py``
(run with a Python that has the PyPI ``ns3`` package) applies to its own
incast client/server. Both run over the same incast points; the output is a
CSV and a markdown table of goodput, timeouts and drops, the collapse point
of each simulator (the first N whose goodput is below half its best), and
the mean and max xco/ns-3 goodput ratio over the points where either has
collapsed.

    .venv/bin/python scripts/ns3_differential.py --quick
    .venv/bin/python scripts/ns3_differential.py --out /tmp/ns3diff          # 15 points x 20 rounds
    .venv/bin/python scripts/ns3_differential.py --points 2,32,64 --rounds 5 --framing ppp

``--ns3-python`` (or ``$NS3_PYTHON``; default ``/work/ns3venv/bin/python``)
names the interpreter with ns-3: ``python3 -m venv /work/ns3venv &&
/work/ns3venv/bin/pip install ns3`` (ns3 3.44.post0, cppyy 3.5 bindings).

Settings that make the two agree (each is in SETTINGS or ns3_config):

- ns-3's defaults that differ from xco's are set: NewReno (3.44 defaults to
  CUBIC) with classic (RFC 6582-style) recovery (3.44 defaults to PRR),
  SegmentSize 1460 (default 536), MinRto 200 ms (default 1 s),
  ClockGranularity 1 us (default 1 ms), Timestamp off, Sack off (default
  on), LimitedTransmit off (default on; xco has none), DelAckTimeout 200 ms,
  RcvBufSize 6 MiB, ConnTimeout 1 s (default 3 s; xco's SYN uses the 1 s
  initial RTO), DataRetries 1000 (default 6: ns-3 closes a connection after
  6 RTOs in a row; xco never gives up). WindowScaling stays on so the 6 MiB
  window can be advertised (xco has no 16-bit window field to scale).
- xco's ``restart_after_idle`` is turned off (ns-3.44 has no RFC 5681 §4.1
  restart). Here it changes nothing: it only lowers cwnd to IW (10
  segments) and an SRU is 7 segments.
- ``--framing ethernet`` (the default) gives ns-3 xco's Ethernet timing:
  PointToPointNetDevice's InterframeGap is set to 36 byte times (288 ns at
  1 Gbit/s) so that a frame of ns-3 (IP + 2-byte PPP header + gap) takes
  as long on the wire as xco's (IP + 18 B header/FCS + 20 B preamble and
  gap), and each DropTail byte limit is scaled by 1502/1518 so that it holds
  as many full-size frames as xco's (197 at the 300 KB switch ports, 1000 in
  a host NIC). ``--framing ppp`` runs ns-3's own framing with the same byte
  limits (199 full frames per switch port).

Differences left that no setting removes (``docs/ns3-differential.md`` has
where each comes from in both code bases):

0. Leaving RTO recovery (with 2 and 3 the collapsed-point gap, measured by
   ``--ns3-variant``: see below). On the ACK that ends CA_LOSS ns-3 grows
   cwnd only by whole segments above m_recover (here none), and counts any
   ACK in whole segments; xco counts bytes. With RTO_min = delayed-ACK
   timer = 200 ms this locks ns-3 servers at cwnd = 1 MSS after a spurious
   RTO: the RTO (armed at the send) fires one one-way delay before the
   client's delayed ACK, for every segment, every round.
1. Loss recovery. ns-3 repairs a non-SACK loss with its RFC 6675 machinery
   fed by emulated SACK (every duplicate ACK marks one more segment as
   "sacked", ``TcpTxBuffer::AddRenoSack``), sends by ``cwnd - pipe`` and sets
   cwnd = ssthresh on leaving recovery; xco does RFC 6582 window inflation
   and deflation and leaves with cwnd = min(ssthresh, flight + MSS).
2. Slow start. ns-3's TcpNewReno adds one MSS per ACK whatever it covers
   (about x1.5 per RTT with delayed ACKs); xco counts bytes (RFC 3465, L = 2
   MSS: x2 per RTT). Congestion avoidance: ns-3 adds max(1, MSS^2/cwnd) per
   ACK, xco one MSS per cwnd of acknowledged bytes.
3. RTT samples. xco's ``timestamps = false`` only drops the 12 option bytes:
   every ACK still carries an (invisible) timestamp echo, so every ACK gives
   an RTT sample, retransmissions included. ns-3 without timestamps times
   segments from its RTT history (Karn's rule: none across a retransmission).
4. RTO bookkeeping. ns-3 recomputes the RTO (dropping the backoff) on every
   new ACK and lowers ssthresh on a repeated RTO only if the head segment was
   not yet retransmitted; xco clears the backoff on an RTT sample and sets
   ssthresh = max(flight/2, 2 MSS) at every RTO.
5. Framing left over. Even with ``--framing ethernet`` a frame arrives 288 ns
   earlier in ns-3 (xco's gap is part of the frame's time before it arrives,
   ns-3's InterframeGap follows the arrival), and a smaller-than-full segment
   (the 1240-byte SRU tail, ACKs, requests) takes 16 bytes less buffer in ns-3.
6. Device queue. ns-3 stops a device queue (drops in the traffic-control
   layer, counted here as drops) once less than one MTU is free; xco admits
   any frame that fits.
7. Switches. ns-3 has no Ethernet switch for point-to-point links: ``sa`` and
   ``sb`` are IPv4 routers (global routing); xco's switches forward frames.
   Neither adds processing delay.
8. SYN/handshake sizes: xco's SYN is 60 IP bytes, ns-3's 48 (MSS + window
   scale options). ns-3 has a send buffer (SndBufSize, set to hold one SRU),
   xco none.

``--ns3-variant NAME`` (repeatable or comma-separated; :data:`NS3_VARIANTS`)
makes an ns-3-only change that removes one of these differences on the ns-3
side (``loss-exit-bytes``: 0 and 2's slow start, ``ca-bytes``: 2's avoidance,
``rtt-every-ack``: 3, ``rto-ssthresh``: 4's ssthresh, ``limited-transmit``:
ns-3's default back on). Measured over the 9 collapsed points of the full
sweep: xco/ns-3 mean 2.26 as shipped, 1.08 (max 1.40) with the first four;
the gap is 0, 2 and 3 together (``docs/ns3-differential.md``, "What each
difference costs").

Timeouts: xco's ``timeouts`` metric of the incast app (RTO expiries over all
its flows); ns-3: ``CwndEvent(CA_EVENT_LOSS)`` calls, once per
``ReTxTimeout`` that retransmits, counted by a NewReno subclass. Drops: every
port of the network (switch ports and host NICs) in both.

Exit status: 0 when both ran, 1 when a simulator failed, 2 for bad
command-line input.
"""

from __future__ import annotations

import argparse
import csv
import json
import math
import os
import re
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent

#: The incast points of workload (a) (``PDN_POINTS`` of ``bench.rs``).
PDN_POINTS = (2, 8, 16, 24, 28, 30, 31, 32, 48, 64, 72, 80, 96, 128, 150)
QUICK_POINTS = (2, 32, 64)
QUICK_ROUNDS = 5

#: Workload (a), written once. Names carry units.
SETTINGS: dict = {
    # topology: N servers a* on switch sa, the client b0 on switch sb, sa-sb one link
    "link_rate_bps": 1_000_000_000,
    "link_delay_ns": 16_667,
    "switch_buffer_bytes": 300_000,
    "host_txqueuelen_frames": 1000,  # xco's host_buffer default: 1000 MTU-sized frames
    "mtu_bytes": 1500,
    # TCP
    "tcp_header_bytes": 40,  # IP 20 + TCP 20: no timestamps, so MSS = 1460
    "timestamps": False,
    "sack": False,
    "limited_transmit": False,  # RFC 3042; xco has none
    "initial_cwnd_segments": 10,
    "initial_ssthresh_bytes": None,  # unbounded in both (ns-3: UINT32_MAX)
    "rto_min_ms": 200,
    "rto_initial_ms": 1000,
    "rto_max_ms": 60_000,  # ns-3 caps the doubling at 60 s (hard-coded)
    "clock_granularity_us": 1,
    "delayed_ack_segments": 2,
    "delayed_ack_timeout_ms": 200,
    "dupack_threshold": 3,
    "rcv_buf_bytes": 6 * 1024 * 1024,
    "restart_after_idle": False,  # ns-3.44 has no cwnd restart after idle
    "handshake": True,
    # the incast application
    "sru_bytes": 10_000,
    "request_bytes": 100,
    "persistent_connections": True,
    "seed": 1,
}

# Model constants, not settings (where they live: docs/ns3-differential.md).
XCO_FRAME_OVERHEAD_BYTES = 18  # Ethernet header + FCS, stored in buffers (net/mod.rs Framing)
XCO_GAP_BYTES = 20  # preamble + SFD + inter-frame gap: wire time only
NS3_PPP_HEADER_BYTES = 2  # PointToPointNetDevice::AddHeader
FRAMINGS = ("ethernet", "ppp")

#: ns-3-only changes, each a small C++ change in ``ns3_incast.py`` (or one
#: attribute), to measure how much of the xco/ns-3 gap one difference makes
#: (``docs/ns3-differential.md``, "What each difference costs"). None changes xco.
NS3_VARIANTS: dict[str, str] = {
    "loss-exit-bytes": "slow start grows cwnd by min(bytes acked, 2 MSS) on every ACK, the one that "
    "ends CA_LOSS included (RFC 3465, as xco), not by whole segments (above m_recover on that ACK)",
    "ca-bytes": "congestion avoidance adds one MSS per cwnd of bytes acked (as xco), "
    "not max(1, MSS^2/cwnd) per ACK",
    "rto-ssthresh": "every RTO sets ssthresh = max((HighTxMark - SND.UNA) / 2, 2 MSS) (as xco), "
    "also a repeated one (ns-3 keeps ssthresh once the head was retransmitted)",
    "rtt-every-ack": "an RTT sample from every ACK of new data, retransmissions included, from an "
    "xco-style timestamp echo carried in a packet tag (no option bytes), not Karn-timed segments",
    "limited-transmit": "ns-3's Limited Transmit (RFC 3042) back on, its default (xco has none)",
}


class UsageError(Exception):
    """Bad command-line input (exit status 2)."""


def mss_bytes(s: dict) -> int:
    """The MSS both simulators use."""
    return s["mtu_bytes"] - s["tcp_header_bytes"]


def xco_scenario(s: dict, n: int, rounds: int) -> dict:
    """The xco scenario (a dict for ``xco.sim.run``) of ``s`` with ``n`` servers.

    Raises ValueError for a setting xco has no key for."""
    if s["limited_transmit"]:
        raise ValueError("xco has no Limited Transmit (RFC 3042): limited_transmit must be False")
    for key, fixed in (("delayed_ack_segments", 2), ("dupack_threshold", 3)):
        if s[key] != fixed:
            raise ValueError(f"xco has no scenario key for {key}; it is always {fixed}")
    if s["initial_ssthresh_bytes"] is not None:
        raise ValueError("xco has no initial ssthresh key (it is unbounded): set initial_ssthresh_bytes None")
    if s["tcp_header_bytes"] != (52 if s["timestamps"] else 40):
        raise ValueError("xco's header is 40 bytes without timestamps, 52 with")
    frame = s["mtu_bytes"] + XCO_FRAME_OVERHEAD_BYTES
    return {
        "name": f"ns3-differential-incast-{n}",
        "run": {"seed": s["seed"], "mtu_bytes": s["mtu_bytes"]},
        "topology": {
            "kind": "two_switch",
            "hosts_a": n,
            "hosts_b": 1,
            "host_rate": f"{s['link_rate_bps']}bps",
            "link_delay_us": s["link_delay_ns"] / 1000,
            "switch_buffer": f"{s['switch_buffer_bytes']}B",
            "host_buffer": f"{s['host_txqueuelen_frames'] * frame}B",
        },
        "tcp": {
            "cc": "newreno",
            "rto_min_ms": s["rto_min_ms"],
            "rto_initial_ms": s["rto_initial_ms"],
            "rto_max_ms": s["rto_max_ms"],
            "clock_granularity_us": s["clock_granularity_us"],
            "timestamps": s["timestamps"],
            "sack": s["sack"],
            "delayed_ack": s["delayed_ack_segments"] > 1,
            "delayed_ack_timeout_ms": s["delayed_ack_timeout_ms"],
            "initial_cwnd_segments": s["initial_cwnd_segments"],
            "rcv_buf_bytes": s["rcv_buf_bytes"],
            "restart_after_idle": s["restart_after_idle"],
            "handshake": s["handshake"],
        },
        "apps": [
            {
                "kind": "incast",
                "client": "b0",
                "servers": "a*",
                "sru": f"{s['sru_bytes']}B",
                "request": f"{s['request_bytes']}B",
                "rounds": rounds,
                "reuse_connections": s["persistent_connections"],
            }
        ],
        "output": {"timeseries_bin_us": 0},
    }


def ns3_config(s: dict, framing: str = "ethernet", variants: tuple[str, ...] | list[str] = ()) -> dict:
    """ns-3 attributes (name, value as ns-3 parses it) and link/queue figures of ``s``.

    ``framing`` ``ethernet`` gives ns-3 xco's per-frame wire time and full-frame
    buffer counts; ``ppp`` keeps ns-3's own framing. ``variants`` are names of
    :data:`NS3_VARIANTS` (ns-3-only changes). Raises ValueError for a setting
    ns-3 cannot take or an unknown variant."""
    if framing not in FRAMINGS:
        raise ValueError(f"framing must be one of {', '.join(FRAMINGS)}, got {framing!r}")
    unknown = [v for v in variants if v not in NS3_VARIANTS]
    if unknown:
        raise ValueError(f"unknown ns-3 variant {unknown[0]!r} (known: {', '.join(NS3_VARIANTS)})")
    variants = sorted(set(variants), key=list(NS3_VARIANTS).index)
    lt = s["limited_transmit"] or "limited-transmit" in variants
    if s["rto_max_ms"] != 60_000:
        raise ValueError("ns-3 caps the RTO doubling at 60 s (hard-coded): rto_max_ms must be 60000")
    if s["tcp_header_bytes"] != (52 if s["timestamps"] else 40):
        raise ValueError("tcp_header_bytes must be 40 without timestamps, 52 with")
    if not s["persistent_connections"] or not s["handshake"]:
        raise ValueError("ns3_incast.py runs persistent connections opened by a handshake only")
    ms = lambda v: f"{v}ms"  # noqa: E731
    attrs = [
        ("ns3::TcpL4Protocol::SocketType", "xcodiff::CountingNewReno"),  # TcpNewReno + a timeout counter
        ("ns3::TcpL4Protocol::RecoveryType", "ns3::TcpClassicRecovery"),
        ("ns3::TcpSocket::SegmentSize", str(mss_bytes(s))),
        ("ns3::TcpSocket::InitialCwnd", str(s["initial_cwnd_segments"])),
        ("ns3::TcpSocket::InitialSlowStartThreshold", str(s["initial_ssthresh_bytes"] or 2**32 - 1)),
        ("ns3::TcpSocket::DelAckCount", str(s["delayed_ack_segments"])),
        ("ns3::TcpSocket::DelAckTimeout", ms(s["delayed_ack_timeout_ms"])),
        ("ns3::TcpSocket::RcvBufSize", str(s["rcv_buf_bytes"])),
        ("ns3::TcpSocket::SndBufSize", str(max(131_072, 2 * s["sru_bytes"]))),
        ("ns3::TcpSocket::ConnTimeout", ms(s["rto_initial_ms"])),
        ("ns3::TcpSocket::ConnCount", "100"),
        ("ns3::TcpSocket::DataRetries", "1000"),
        ("ns3::TcpSocket::TcpNoDelay", "true"),
        ("ns3::TcpSocketBase::MinRto", ms(s["rto_min_ms"])),
        ("ns3::TcpSocketBase::ClockGranularity", f"{s['clock_granularity_us']}us"),
        ("ns3::TcpSocketBase::Timestamp", str(s["timestamps"]).lower()),
        ("ns3::TcpSocketBase::Sack", str(s["sack"]).lower()),
        ("ns3::TcpSocketBase::WindowScaling", "true"),
        ("ns3::TcpSocketBase::LimitedTransmit", str(lt).lower()),
        ("ns3::TcpSocketBase::ReTxThreshold", str(s["dupack_threshold"])),
        ("ns3::RttEstimator::InitialEstimation", ms(s["rto_initial_ms"])),
        ("ns3::RttMeanDeviation::Alpha", "0.125"),
        ("ns3::RttMeanDeviation::Beta", "0.25"),
    ]
    full_ns3 = s["mtu_bytes"] + NS3_PPP_HEADER_BYTES
    full_xco = s["mtu_bytes"] + XCO_FRAME_OVERHEAD_BYTES
    if framing == "ethernet":
        gap_bytes = XCO_FRAME_OVERHEAD_BYTES + XCO_GAP_BYTES - NS3_PPP_HEADER_BYTES
        gap_ps = gap_bytes * 8 * 10**12 // s["link_rate_bps"]
        # scaled by frame size: holds as many full-size frames as xco's buffer
        switch_q = s["switch_buffer_bytes"] * full_ns3 // full_xco
        assert switch_q // full_ns3 == s["switch_buffer_bytes"] // full_xco
        host_q = s["host_txqueuelen_frames"] * full_ns3
    else:
        gap_ps = 0
        switch_q = s["switch_buffer_bytes"]
        host_q = s["host_txqueuelen_frames"] * full_xco
    return {
        "attributes": attrs,
        "rate_bps": s["link_rate_bps"],
        "delay_ps": s["link_delay_ns"] * 1000,
        "interframe_gap_ps": gap_ps,
        "switch_queue_bytes": switch_q,
        "host_queue_bytes": host_q,
        "sru_bytes": s["sru_bytes"],
        "request_bytes": s["request_bytes"],
        "mtu_bytes": s["mtu_bytes"],
        "framing": framing,
        "variants": variants,
    }


# ---------------------------------------------------------------------------
# xco side


def _size(v) -> float:
    """A scenario quantity ("300KB", "1Gbps", 16.667) as a number."""
    if isinstance(v, (int, float)) and not isinstance(v, bool):
        return float(v)
    m = re.fullmatch(r"\s*([0-9.]+)\s*([A-Za-z]*)\s*", str(v))
    if not m:
        return math.nan
    units = {"": 1, "B": 1, "KB": 1e3, "MB": 1e6, "Gbps": 1e9, "Mbps": 1e6, "bps": 1}
    return float(m.group(1)) * units.get(m.group(2), math.nan)


def check_against_workload_a(sc: dict, n: int, rounds: int) -> None:
    """Raise AssertionError unless every key ``bench_pdn_scenario`` sets has the same value in ``sc``."""
    import tomllib

    from xco import _native

    ref = tomllib.loads(_native.bench_pdn_scenario(n, rounds))

    def walk(r, got, path):
        if isinstance(r, dict):
            for k, v in r.items():
                if k == "name":
                    continue
                assert isinstance(got, dict) and k in got, f"{path}{k}: workload (a) sets it, we do not"
                walk(v, got[k], f"{path}{k}.")
        elif isinstance(r, list):
            assert isinstance(got, list) and len(got) == len(r), f"{path}: list differs"
            for i, (a, b) in enumerate(zip(r, got, strict=True)):
                walk(a, b, f"{path}[{i}].")
        elif isinstance(r, (bool, str)) and not re.match(r"^[0-9.]", str(r)):
            assert r == got, f"{path[:-1]}: workload (a) {r!r}, ours {got!r}"
        else:
            assert math.isclose(_size(r), _size(got)), f"{path[:-1]}: workload (a) {r!r}, ours {got!r}"

    walk(ref, sc, "")


def run_xco(s: dict, n: int, rounds: int) -> dict:
    """Run one xco point; returns goodput, timeouts, drops and wall time."""
    import xco.sim

    sc = xco_scenario(s, n, rounds)
    check_against_workload_a(sc, n, rounds)
    r = xco.sim.run(sc)
    m = {k: r.metric(k) for k in ("goodput_mbps", "timeouts", "rounds_done", "completion_ms_max")}
    ports = r.ports
    switch = ports["from"].isin(["sa", "sb"])
    return {
        "goodput_mbps": m["goodput_mbps"],
        "timeouts": int(m["timeouts"]),
        "drops": int(ports["dropped_packets"].sum()),
        "switch_drops": int(ports.loc[switch, "dropped_packets"].sum()),
        "fast_retransmits": int(r.flows["fast_retransmits"].sum()),
        "rounds_done": int(m["rounds_done"]),
        "round_ms_max": m["completion_ms_max"],
        "wall_s": r.wall_s,
    }


# ---------------------------------------------------------------------------
# ns-3 side


def run_ns3_batch(
    python: str, s: dict, points: list[int], rounds: int, framing: str, variants: list[str]
) -> dict[int, dict]:
    """Run ``points`` in one ns3_incast.py process; returns the result per N."""
    cfg = ns3_config(s, framing, variants)
    cmd = [python, str(HERE / "ns3_incast.py"), "--config-json", json.dumps(cfg)]
    cmd += ["--points", ",".join(map(str, points)), "--rounds", str(rounds)]
    p = subprocess.run(cmd, capture_output=True, text=True)
    out = {}
    for line in p.stdout.splitlines():
        if line.startswith("{"):
            r = json.loads(line)
            out[r["n"]] = r
    if p.returncode != 0 or len(out) != len(points):
        tail = "\n".join(p.stderr.splitlines()[-15:])
        raise RuntimeError(f"ns3_incast.py failed (exit {p.returncode}) for {points}:\n{tail}")
    return out


def run_ns3(
    python: str, s: dict, points: list[int], rounds: int, framing: str, jobs: int, variants: list[str]
) -> dict[int, dict]:
    """All ``points`` over ``jobs`` processes (each pays ~12 s of ns-3/cppyy start-up)."""
    # deal the costly (large-N) points out round-robin so the processes finish together
    order = sorted(points, reverse=True)
    batches = [order[i::jobs] for i in range(jobs) if order[i::jobs]]
    out: dict[int, dict] = {}
    with ThreadPoolExecutor(len(batches)) as ex:
        for res in ex.map(lambda b: run_ns3_batch(python, s, b, rounds, framing, variants), batches):
            out.update(res)
    return out


# ---------------------------------------------------------------------------
# comparison


def collapse_point(rows: list[dict], key: str) -> int | None:
    """The first N whose goodput ``key`` is below half the best (None: no collapse)."""
    best = max((r[key] for r in rows if not math.isnan(r[key])), default=math.nan)
    for r in rows:
        if r[key] < best / 2:
            return r["n"]
    return None


def summarise(rows: list[dict]) -> dict:
    """Collapse points and the ratio statistics over collapsed points."""
    cx, cn = collapse_point(rows, "xco_goodput_mbps"), collapse_point(rows, "ns3_goodput_mbps")
    firsts = [c for c in (cx, cn) if c is not None]
    start = min(firsts) if firsts else None
    ratios = [
        r["ratio"] for r in rows if start is not None and r["n"] >= start and not math.isnan(r["ratio"])
    ]
    return {
        "xco_collapse_n": cx,
        "ns3_collapse_n": cn,
        "collapsed_from_n": start,
        "collapsed_points": len(ratios),
        "mean_ratio": sum(ratios) / len(ratios) if ratios else math.nan,
        "max_ratio": max(ratios) if ratios else math.nan,
        "min_ratio": min(ratios) if ratios else math.nan,
    }


COLUMNS = [
    "n",
    "xco_goodput_mbps",
    "ns3_goodput_mbps",
    "ratio",
    "xco_timeouts",
    "ns3_timeouts",
    "xco_drops",
    "ns3_drops",
    "xco_switch_drops",
    "ns3_switch_drops",
    "xco_fast_retransmits",
    "ns3_fast_recoveries",
    "xco_rounds_done",
    "ns3_rounds_done",
    "xco_wall_s",
    "ns3_wall_s",
]


def markdown(rows: list[dict], summ: dict, rounds: int, framing: str, variants: list[str] = ()) -> str:
    """The comparison table as markdown."""
    cx, cn = summ["xco_collapse_n"], summ["ns3_collapse_n"]
    var = ", ".join(f"`{v}`" for v in variants) if variants else "none (ns-3.44 as shipped)"
    lines = [
        f"Workload (a), {rounds} rounds, ns-3 framing `{framing}`, ns-3 variants: {var}. "
        "C marks the collapse point (first N below half the best goodput).",
        "",
        "| N | xco Mbit/s | ns-3 Mbit/s | xco/ns-3 | timeouts xco | timeouts ns-3 | drops xco | drops ns-3 |",
        "|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for r in rows:
        mx = " C" if r["n"] == cx else ""
        mn = " C" if r["n"] == cn else ""
        lines.append(
            f"| {r['n']} | {r['xco_goodput_mbps']:.1f}{mx} | {r['ns3_goodput_mbps']:.1f}{mn} | "
            f"{r['ratio']:.2f} | {r['xco_timeouts']} | {r['ns3_timeouts']} | "
            f"{r['xco_drops']} | {r['ns3_drops']} |"
        )
    lines.append("")
    lines.append(f"Collapse: xco at N = {cx}, ns-3 at N = {cn}.")
    if summ["collapsed_points"]:
        lines.append(
            f"Over the {summ['collapsed_points']} points from N = {summ['collapsed_from_n']} on: "
            f"mean xco/ns-3 ratio {summ['mean_ratio']:.2f}, max {summ['max_ratio']:.2f}, "
            f"min {summ['min_ratio']:.2f}."
        )
    elif cx is None and cn is None:
        lines.append("Neither collapsed at these points: no collapsed-point ratio.")
    else:
        lines.append("No ratio at the collapsed points (only one simulator ran).")
    return "\n".join(lines) + "\n"


def bounded_int(text: str, flag: str, lo: int, hi: int) -> int:
    """``text`` as a whole number from ``lo`` to ``hi``, or a usage error naming ``flag``."""
    try:
        n = int(text)
    except ValueError:
        raise UsageError(f"{flag} takes a whole number, got {text!r}") from None
    if not lo <= n <= hi:
        raise UsageError(f"{flag} must be {lo} to {hi}, got {n}")
    return n


def parse_points(text: str) -> list[int]:
    """``2,8,16`` as a sorted list of distinct server counts (1 to 1000)."""
    try:
        pts = sorted({int(p) for p in text.split(",") if p.strip()})
    except ValueError:
        raise UsageError(f"--points takes whole numbers separated by commas, got {text!r}") from None
    if not pts:
        raise UsageError("--points is empty")
    bad = [p for p in pts if not 1 <= p <= 1000]
    if bad:
        raise UsageError(f"--points: server counts must be 1 to 1000, got {bad}")
    return pts


def parse_variants(texts: list[str], option: str = "--ns3-variant") -> list[str]:
    """``option``'s values (each comma-separated) as known names in :data:`NS3_VARIANTS` order."""
    names = {v.strip() for t in texts for v in t.split(",") if v.strip()}
    unknown = sorted(names - set(NS3_VARIANTS))
    if unknown:
        raise UsageError(f"{option}: unknown variant {unknown[0]!r} (known: {', '.join(NS3_VARIANTS)})")
    if texts and not names:
        raise UsageError(f"{option} is empty")
    return [v for v in NS3_VARIANTS if v in names]


class Parser(argparse.ArgumentParser):
    """argparse that raises UsageError instead of exiting."""

    def error(self, message):
        raise UsageError(message)


def parse_args(argv: list[str]) -> argparse.Namespace:
    p = Parser(description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--points", help="comma-separated server counts (default: the 15 of workload (a))")
    p.add_argument("--rounds", help="incast rounds per point (default 20)")
    p.add_argument(
        "--quick", action="store_true", help=f"points {QUICK_POINTS}, {QUICK_ROUNDS} rounds (unless given)"
    )
    p.add_argument("--framing", default="ethernet", help="ns-3 framing: ethernet (default, xco's) or ppp")
    p.add_argument("--only", default="both", help="run xco, ns3 or both (default)")
    p.add_argument(
        "--ns3-variant",
        action="append",
        default=[],
        metavar="NAME",
        help="an ns-3-only change (repeatable or comma-separated): " + ", ".join(NS3_VARIANTS),
    )
    p.add_argument(
        "--ns3-python",
        default=os.environ.get("NS3_PYTHON", "/work/ns3venv/bin/python"),
        help="a Python with the ns3 package",
    )
    p.add_argument("--jobs", default=str(min(2, os.cpu_count() or 1)), help="ns-3 processes (default 2)")
    p.add_argument("--out", help="directory for ns3-differential.csv / .md (default: print only)")
    a = p.parse_args(argv)
    a.points = parse_points(a.points) if a.points else list(QUICK_POINTS if a.quick else PDN_POINTS)
    if a.rounds is None:
        a.rounds = QUICK_ROUNDS if a.quick else 20
    else:
        a.rounds = bounded_int(a.rounds, "--rounds", 1, 10_000)
    if a.framing not in FRAMINGS:
        raise UsageError(f"--framing must be one of {', '.join(FRAMINGS)}, got {a.framing!r}")
    if a.only not in ("xco", "ns3", "both"):
        raise UsageError(f"--only must be xco, ns3 or both, got {a.only!r}")
    a.ns3_variant = parse_variants(a.ns3_variant)
    if a.ns3_variant and a.only == "xco":
        raise UsageError("--ns3-variant changes ns-3 only; it makes no sense with --only xco")
    a.jobs = bounded_int(a.jobs, "--jobs", 1, 64)
    if a.only != "xco" and not Path(a.ns3_python).is_file():
        raise UsageError(
            f"--ns3-python {a.ns3_python!r} does not exist; create it with "
            "'python3 -m venv /work/ns3venv && /work/ns3venv/bin/pip install ns3'"
        )
    if a.out is not None and Path(a.out).exists() and not Path(a.out).is_dir():
        raise UsageError(f"--out {a.out!r} exists and is not a directory")
    return a


def main(argv: list[str] | None = None) -> int:
    try:
        a = parse_args(sys.argv[1:] if argv is None else argv)
    except UsageError as e:
        print(f"ns3_differential.py: error: {e}", file=sys.stderr)
        return 2
    t0 = time.perf_counter()
    nan_side = {
        "goodput_mbps": math.nan,
        "timeouts": "",
        "drops": "",
        "switch_drops": "",
        "rounds_done": "",
        "wall_s": math.nan,
    }
    try:
        ns3 = {}
        if a.only != "xco":
            with ThreadPoolExecutor(1) as ex:  # ns-3 in the background while xco runs here
                fut = ex.submit(
                    run_ns3, a.ns3_python, SETTINGS, a.points, a.rounds, a.framing, a.jobs, a.ns3_variant
                )
                xco = {n: run_xco(SETTINGS, n, a.rounds) for n in a.points} if a.only == "both" else {}
                ns3 = fut.result()
        else:
            xco = {n: run_xco(SETTINGS, n, a.rounds) for n in a.points}
    except (RuntimeError, AssertionError, ValueError) as e:
        print(f"ns3_differential.py: {e}", file=sys.stderr)
        return 1
    rows = []
    for n in a.points:
        x, s3 = xco.get(n, nan_side), ns3.get(n, nan_side)
        gx, gn = x["goodput_mbps"], s3["goodput_mbps"]
        rows.append(
            {
                "n": n,
                "xco_goodput_mbps": gx,
                "ns3_goodput_mbps": gn,
                "ratio": gx / gn if gn and not math.isnan(gn) else math.nan,
                "xco_timeouts": x["timeouts"],
                "ns3_timeouts": s3["timeouts"],
                "xco_drops": x["drops"],
                "ns3_drops": s3["drops"],
                "xco_switch_drops": x["switch_drops"],
                "ns3_switch_drops": s3["switch_drops"],
                "xco_fast_retransmits": x.get("fast_retransmits", ""),
                "ns3_fast_recoveries": s3.get("fast_recoveries", ""),
                "xco_rounds_done": x["rounds_done"],
                "ns3_rounds_done": s3["rounds_done"],
                "xco_wall_s": round(x["wall_s"], 3),
                "ns3_wall_s": round(s3["wall_s"], 3),
            }
        )
    summ = summarise(rows)
    md = markdown(rows, summ, a.rounds, a.framing, a.ns3_variant)
    print(md)
    print(f"wall time {time.perf_counter() - t0:.1f} s (ns-3 per point: see ns3_wall_s in the CSV)")
    if a.out:
        out = Path(a.out)
        out.mkdir(parents=True, exist_ok=True)
        with open(out / "ns3-differential.csv", "w", newline="") as f:
            w = csv.DictWriter(f, fieldnames=COLUMNS)
            w.writeheader()
            w.writerows(rows)
        (out / "ns3-differential.md").write_text(md)
        (out / "ns3-differential.json").write_text(
            json.dumps(
                {
                    "settings": SETTINGS,
                    "ns3": ns3_config(SETTINGS, a.framing, a.ns3_variant),
                    "summary": summ,
                    "rounds": a.rounds,
                    "points": a.points,
                },
                indent=1,
            )
        )
        print(f"wrote {out}/ns3-differential.csv, .md and .json")
    return 0


if __name__ == "__main__":
    sys.exit(main())
