//! An output port: a buffer run by a queue discipline, a serialiser at line
//! rate and a pipe (the link's propagation delay).
//!
//! In FIFO mode the buffer is virtual: an admitted packet enters the pipe at
//! once, stamped with its arrival time at the far end, and the bytes still
//! waiting to start serialising are a small list of (start time, bytes)
//! trimmed lazily whenever the backlog is asked for. In scheduled mode the
//! discipline holds the waiting packets and the port has one pending
//! departure event while it serialises (`Port::depart_at`). Either way only
//! the pipe's head packet has a pending arrival event.
//!
//! Every port counts arrivals and drops per input (the neighbour the packet
//! came from; a host NIC's one input is its own host), indexed by the
//! input's position among the node's inputs; the counters of all ports live
//! in two flat arrays of the [`super::Net`] (arrivals, touched per packet,
//! apart from drops), each port owning a slice sized when the net is built.
//!
//! Speed: the fields every arrival and departure touch are laid out first,
//! in three 64-byte lines (`repr(C)`, aligned): discipline, clock and link
//! constants; the pipe and the FIFO's waiting list; the receiving node, the
//! waiting bytes and the per-packet counters (a pipe arrival reads only the
//! last two lines). The rest (drop counters, configuration) follows.

use super::packet::PktId;
use super::qdisc::{DropReason, DropTail, PortMode, Qdisc, Queued};
use std::collections::VecDeque;
use xco_core::rng::Rng;
use xco_core::{Dur, Time};

/// The `capture` and `timeline` index of a port without one.
pub const NO_TAP: u32 = u32::MAX;

/// Counters of one output port (the per-packet ones first: see the module doc).
#[derive(Clone, Copy, Debug, Default)]
#[repr(C)]
pub struct PortStats {
    /// Frame bytes offered to the port.
    pub arrived_bytes: u64,
    /// Frames offered.
    pub arrived_packets: u64,
    /// Frame bytes admitted and not evicted later (on the wire, being serialised or waiting).
    pub admitted_bytes: u64,
    /// Frames admitted and not evicted later.
    pub admitted_packets: u64,
    /// Frame bytes that reached the far end.
    pub delivered_bytes: u64,
    /// Largest backlog seen, bytes.
    pub max_backlog_bytes: u64,
    /// Frame bytes dropped (at arrival or evicted).
    pub dropped_bytes: u64,
    /// Frames dropped.
    pub dropped_packets: u64,
    /// Drops since the last time-series sample.
    pub bin_drops: u64,
    /// Frames dropped because the buffer was full ([`DropReason::TailDrop`]).
    pub tail_drop_packets: u64,
    /// Frames dropped by the discipline's choice ([`DropReason::Discipline`]).
    pub discipline_drop_packets: u64,
    /// Drops that asked for a notification ([`super::qdisc::Verdict::DropNotify`]).
    pub notify_packets: u64,
    /// Frames admitted with the ECN field set to CE.
    pub marked_packets: u64,
}

impl PortStats {
    /// Count a drop of `bytes` with `reason`.
    #[inline]
    pub(crate) fn count_drop(&mut self, bytes: u32, reason: DropReason) {
        self.dropped_bytes += bytes as u64;
        self.dropped_packets += 1;
        self.bin_drops += 1;
        match reason {
            DropReason::TailDrop => self.tail_drop_packets += 1,
            DropReason::Discipline => self.discipline_drop_packets += 1,
        }
    }
}

/// Frames and frame bytes: one per-input counter.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct InputCount {
    /// Frames.
    pub packets: u64,
    /// Frame bytes.
    pub bytes: u64,
}

impl InputCount {
    /// Count one frame of `bytes`.
    #[inline(always)]
    pub(crate) fn add(&mut self, bytes: u32) {
        self.packets += 1;
        self.bytes += bytes as u64;
    }
}

/// Arrivals and drops at a port from one of its inputs.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct InputStats {
    /// Frames that arrived from this input.
    pub arrived_packets: u64,
    /// Frame bytes that arrived from this input.
    pub arrived_bytes: u64,
    /// Frames from this input dropped (at arrival or evicted).
    pub dropped_packets: u64,
    /// Frame bytes from this input dropped.
    pub dropped_bytes: u64,
}

/// One direction of a link: the sending node's output port.
#[repr(C, align(64))]
pub struct Port {
    // ---- line 0: read by every arrival
    /// The discipline (set with [`super::Net::set_qdisc`]).
    pub(crate) qdisc: Qdisc,
    /// FIFO mode: when the last admitted packet finishes serialising.
    /// Scheduled mode: when the frame being serialised finishes.
    pub busy_until: Time,
    /// Serialisation time per byte, picoseconds in 32.32 fixed point.
    ps_per_byte_q32: u64,
    /// One-way propagation delay.
    pub delay: Dur,
    /// True if an admission takes the cold path: the port is captured, has
    /// a queue timeline or timing noise (one test on the admission path; set
    /// with [`Port::set_taps`] and [`Port::set_jitter`]).
    cold: bool,
    /// First of this port's per-input counters in the net's arrays.
    pub(crate) inputs_at: u32,
    /// Counted inputs of the sending node (0 at a host NIC: its one input,
    /// the host itself, is counted by the port's own counters).
    pub(crate) n_inputs: u32,
    // ---- line 1: the queues
    /// Admitted packets in order: (arrival time at `to`, packet).
    pub(crate) pipe: VecDeque<(Time, PktId)>,
    /// FIFO mode: admitted packets not yet serialising, as (start time, frame bytes).
    pub(crate) waiting: VecDeque<(Time, u32)>,
    // ---- line 2: what a departure at the far end reads, and the per-packet counters
    /// Receiving node.
    pub to: u32,
    /// Position of this link among the receiving node's inputs.
    pub in_index: u32,
    pub(crate) waiting_bytes: u64,
    /// Counters.
    pub stats: PortStats,
    // ---- cold
    /// Capture buffer index ([`NO_TAP`]: not captured).
    pub(crate) capture: u32,
    /// Queue timeline index ([`NO_TAP`]: none).
    pub(crate) timeline: u32,
    /// Scheduled mode: the time of the one pending departure event (`NEVER` if none).
    pub(crate) depart_at: Time,
    /// Sending node.
    pub from: u32,
    /// Line rate, bits per second.
    pub rate_bps: u64,
    /// Buffer size in bytes (as configured, or the discipline's limit).
    pub buffer_bytes: u64,
    /// A host NIC's queue length in packets (Linux's `txqueuelen`; `u32::MAX`:
    /// no packet limit). Checked at drop-tail host NICs only.
    pub limit_packets: u32,
    /// Timing noise: the largest extra delay of a frame, picoseconds (0: none).
    jitter_ps: u64,
    /// The noise's own seeded stream.
    jitter_rng: Rng,
}

impl Port {
    /// A drop-tail FIFO port from `from` to `to` whose `n_inputs` per-input
    /// counters start at `inputs_at` in the net's arrays.
    pub(crate) fn new(
        from: u32,
        to: u32,
        rate_bps: u64,
        delay: Dur,
        buffer_bytes: u64,
        inputs_at: u32,
        n_inputs: u32,
    ) -> Port {
        Port {
            from,
            to,
            rate_bps,
            ps_per_byte_q32: (((8u128 * 1_000_000_000_000u128) << 32) / rate_bps as u128) as u64,
            delay,
            qdisc: Qdisc::DropTail(DropTail::new(buffer_bytes)),
            buffer_bytes,
            limit_packets: u32::MAX,
            busy_until: Time::ZERO,
            waiting: VecDeque::new(),
            waiting_bytes: 0,
            pipe: VecDeque::new(),
            depart_at: Time::NEVER,
            stats: PortStats::default(),
            inputs_at,
            n_inputs,
            in_index: 0,
            cold: false,
            jitter_ps: 0,
            jitter_rng: Rng::new(0),
            capture: NO_TAP,
            timeline: NO_TAP,
        }
    }

    /// Serialisation time of `wire_bytes` on this port.
    #[inline(always)]
    pub fn serialization(&self, wire_bytes: u32) -> Dur {
        Dur(((wire_bytes as u128 * self.ps_per_byte_q32 as u128) >> 32) as u64)
    }

    /// The discipline.
    pub fn qdisc(&self) -> &Qdisc {
        &self.qdisc
    }

    /// FIFO or scheduled.
    pub fn mode(&self) -> PortMode {
        self.qdisc.mode()
    }

    /// Admitted packets not yet at the far end (waiting, serialising or propagating).
    pub fn in_pipe(&self) -> impl Iterator<Item = PktId> + '_ {
        let queued = match &self.qdisc {
            Qdisc::Scheduled(s) => s.queued(),
            _ => Vec::new(),
        };
        self.pipe
            .iter()
            .map(|&(_, p)| p)
            .chain(queued.into_iter().map(|q| q.pkt))
    }

    /// Bytes waiting to start serialising at `now`.
    #[inline]
    pub fn backlog_bytes(&mut self, now: Time) -> u64 {
        if let Qdisc::Scheduled(s) = &self.qdisc {
            return s.backlog_bytes();
        }
        self.fifo_backlog_bytes(now)
    }

    /// FIFO mode: bytes waiting to start serialising at `now`.
    #[inline]
    pub(crate) fn fifo_backlog_bytes(&mut self, now: Time) -> u64 {
        while let Some(&(start, bytes)) = self.waiting.front() {
            if start > now {
                break;
            }
            self.waiting.pop_front();
            self.waiting_bytes -= bytes as u64;
        }
        self.waiting_bytes
    }

    /// FIFO mode: packets waiting to start serialising at `now` (the one
    /// serialising is not counted, as Linux's qdisc does not count the
    /// packet the driver holds). Scheduled mode: 0 (no packet limit there).
    #[inline]
    pub fn backlog_packets(&mut self, now: Time) -> u32 {
        if let Qdisc::Scheduled(_) = &self.qdisc {
            return 0;
        }
        self.fifo_backlog_bytes(now);
        self.waiting.len() as u32
    }

    /// FIFO mode: when the `k`-th waiting packet (0: the oldest) starts, if
    /// that many wait.
    pub fn waiting_start(&self, k: usize) -> Option<Time> {
        self.waiting.get(k).map(|&(t, _)| t)
    }

    /// Start time of the oldest packet still waiting, if any.
    pub(crate) fn next_start(&self) -> Option<Time> {
        match &self.qdisc {
            Qdisc::Scheduled(s) => (s.backlog_bytes() > 0).then_some(self.busy_until),
            _ => self.waiting.front().map(|&(t, _)| t),
        }
    }

    /// True if an admission takes the cold path (taps or timing noise).
    #[inline(always)]
    pub(crate) fn cold(&self) -> bool {
        self.cold
    }

    /// True if the port is captured or has a queue timeline.
    pub(crate) fn tapped(&self) -> bool {
        self.capture != NO_TAP || self.timeline != NO_TAP
    }

    /// Capture the port into capture buffer `capture` and/or record its
    /// queue timeline `timeline` ([`NO_TAP`]: none).
    pub(crate) fn set_taps(&mut self, capture: u32, timeline: u32) {
        self.capture = capture;
        self.timeline = timeline;
        self.cold = self.tapped() || self.jitter_ps > 0;
    }

    /// Give every frame this port sends an extra delay drawn uniformly from
    /// [0, `max`] (from `rng`, the port's own stream) before it reaches the far
    /// end, never overtaking the frame before it: timing noise (`Dur::ZERO`:
    /// none). See [`Port::jittered`].
    pub(crate) fn set_jitter(&mut self, max: Dur, rng: Rng) {
        self.jitter_ps = max.0;
        self.jitter_rng = rng;
        self.cold = self.tapped() || self.jitter_ps > 0;
    }

    /// When a frame due at the far end at `at` (serialised, then propagated)
    /// arrives: `at` on a port without timing noise; otherwise `at` plus a
    /// uniform draw from [0, bound], but never before the frame ahead of it
    /// in the pipe, so the link stays first in, first out.
    pub(crate) fn jittered(&mut self, at: Time) -> Time {
        if self.jitter_ps == 0 {
            return at;
        }
        let at = at + Dur(self.jitter_rng.range_inclusive(0, self.jitter_ps));
        match self.pipe.back() {
            Some(&(ahead, _)) if ahead > at => ahead,
            _ => at,
        }
    }

    /// Inputs of the sending node (1 at a host NIC: the host itself).
    pub fn n_inputs(&self) -> u32 {
        self.n_inputs.max(1)
    }

    /// Take every packet out of the port (test and tool support): queued, then in the pipe.
    pub(crate) fn clear(&mut self) -> Vec<PktId> {
        self.waiting.clear();
        self.waiting_bytes = 0;
        self.busy_until = Time::ZERO;
        self.depart_at = Time::NEVER;
        let mut ids: Vec<PktId> = self.pipe.drain(..).map(|(_, p)| p).collect();
        if let Qdisc::Scheduled(s) = &mut self.qdisc {
            ids.extend(s.queued().into_iter().map(|q: Queued| q.pkt));
            s.clear();
        }
        ids
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::mem::{align_of, offset_of, size_of};

    #[test]
    fn the_per_packet_fields_fill_three_cache_lines() {
        assert_eq!(align_of::<Port>(), 64);
        assert!(offset_of!(Port, n_inputs) + size_of::<u32>() <= 64);
        assert_eq!(offset_of!(Port, pipe), 64);
        assert_eq!(offset_of!(Port, to), 128);
        assert_eq!(
            offset_of!(Port, stats) + offset_of!(PortStats, max_backlog_bytes) + 8,
            192
        );
    }
}
