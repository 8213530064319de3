//! A host's local coordinator: per-destination (V2V) queues gated by the
//! controller's directives.
//!
//! Traffic of a coordinated host passes through here between its transports
//! and its NIC. Each destination host has its own queue; a queue is released
//! only while a directive allows it: during a timeslice for that destination
//! (and only packets that can start before the slice ends), at its rate in the
//! rate form, or freely after the coordinator fails open. Pure ACKs, SYNs,
//! pings and small flows bypass the queues. A queue that turns non-empty
//! triggers a backlog report; a slice whose queue stays empty for the
//! hysteresis is given back (work conservation).

use std::collections::VecDeque;
use xco_core::{Dur, Time};

/// Whether a host may send coordinated traffic now.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Gate {
    /// Waiting for a directive.
    Closed,
    /// A timeslice to `dest` until `until`, optionally paced at `rate_bps`.
    Open {
        /// Destination node.
        dest: u32,
        /// End of the slice.
        until: Time,
        /// Pace inside the slice (hybrid form).
        rate_bps: Option<u64>,
    },
    /// Per-destination rates (rate-limit form); see `Coordinator::rates`.
    Rated,
    /// No directive for too long: everything flows uncoordinated.
    FailOpen,
}

/// One V2V queue.
#[derive(Clone, Debug)]
pub struct V2vQueue {
    /// Destination node.
    pub dst: u32,
    /// Packets held, oldest first.
    pub pkts: VecDeque<u32>,
    /// Frame bytes held.
    pub bytes: u64,
    /// Rate-limit form: rate and the earliest time the next packet may leave.
    pub rate_bps: Option<u64>,
    /// Pacing clock.
    pub next_send: Time,
}

/// The coordinator state of one host.
#[derive(Clone, Debug)]
pub struct Coordinator {
    /// Host node.
    pub node: u32,
    /// V2V queues (a handful per host).
    pub queues: Vec<V2vQueue>,
    /// Gate state.
    pub gate: Gate,
    /// Highest directive epoch applied.
    pub epoch: u64,
    /// When the last directive arrived.
    pub last_directive: Time,
    /// When the host last went from no held traffic to some.
    pub backlogged_since: Time,
    /// Pending give-back: (deadline, destination).
    pub giveback_at: Option<(Time, u32)>,
    /// Pacing clock of the current slice (hybrid form).
    pub slice_next: Time,
    /// Time of the pending coordinator event (`Time::NEVER`: none).
    pub timer_at: Time,
    /// Next periodic report.
    pub next_report: Time,
    /// Backlog set last reported.
    pub reported: Vec<u32>,
    /// TCP endpoints waiting for room in one of the queues.
    pub blocked: Vec<u32>,
    /// When pacing next lets a held packet go (`Time::NEVER`: not paced).
    pub pace_wake: Time,
}

impl Coordinator {
    /// A coordinator for `node`, closed until its first directive.
    pub fn new(node: u32, now: Time) -> Coordinator {
        Coordinator {
            node,
            queues: Vec::new(),
            gate: Gate::Closed,
            epoch: 0,
            last_directive: now,
            backlogged_since: now,
            giveback_at: None,
            slice_next: Time::ZERO,
            timer_at: Time::NEVER,
            next_report: Time::NEVER,
            reported: Vec::new(),
            blocked: Vec::new(),
            pace_wake: Time::NEVER,
        }
    }

    /// The queue for `dst`, created on first use.
    pub fn queue(&mut self, dst: u32) -> usize {
        if let Some(i) = self.queues.iter().position(|q| q.dst == dst) {
            return i;
        }
        self.queues.push(V2vQueue {
            dst,
            pkts: VecDeque::new(),
            bytes: 0,
            rate_bps: None,
            next_send: Time::ZERO,
        });
        self.queues.len() - 1
    }

    /// Frame bytes held for `dst`.
    pub fn held_bytes(&self, dst: u32) -> u64 {
        self.queues.iter().find(|q| q.dst == dst).map_or(0, |q| q.bytes)
    }

    /// Destinations with held packets, sorted.
    pub fn backlog(&self) -> Vec<u32> {
        let mut v: Vec<u32> = self
            .queues
            .iter()
            .filter(|q| !q.pkts.is_empty())
            .map(|q| q.dst)
            .collect();
        v.sort_unstable();
        v
    }

    /// Packets held in all queues.
    pub fn held_packets(&self) -> impl Iterator<Item = u32> + '_ {
        self.queues.iter().flat_map(|q| q.pkts.iter().copied())
    }

    /// True if packets for `dst` may leave now (ignoring NIC room and pacing).
    pub fn allows(&self, now: Time, dst: u32) -> bool {
        match self.gate {
            Gate::Closed => false,
            Gate::FailOpen => true,
            Gate::Open { dest, until, .. } => dest == dst && now < until,
            Gate::Rated => self.queues.iter().any(|q| q.dst == dst && q.rate_bps.is_some()),
        }
    }

    /// Time one packet of `frame_bytes` takes at `rate_bps`.
    pub fn pace(frame_bytes: u32, rate_bps: u64) -> Dur {
        Dur::serialization(frame_bytes as u64, rate_bps.max(1))
    }
}
