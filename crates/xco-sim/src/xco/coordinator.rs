//! A host's local coordinator in the simulator: per-destination (V2V) queues
//! of packet ids, gated by `xco_core::coord::Coordinator` — the same gate
//! logic the real agent runs.
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
use xco_core::coord::{CoordConfig, Coordinator};
use xco_core::Time;

/// The coordinator of one simulated host.
#[derive(Clone, Debug)]
pub struct HostCoord {
    /// Gate, accounting and timers (shared logic with the agent).
    pub core: Coordinator,
    /// Held packet ids per destination, oldest first (indexed like `core.dests`).
    pub queues: Vec<VecDeque<u32>>,
    /// Time of the pending coordinator event (`Time::NEVER`: none).
    pub timer_at: Time,
    /// TCP endpoints waiting for room in one of the queues.
    pub blocked: Vec<u32>,
}

impl HostCoord {
    /// A coordinator, closed until its first directive.
    pub fn new(cfg: CoordConfig, now: Time) -> HostCoord {
        HostCoord {
            core: Coordinator::new(cfg, now),
            queues: Vec::new(),
            timer_at: Time::NEVER,
            blocked: Vec::new(),
        }
    }

    /// The queue index for `dst`, created on first use.
    pub fn queue(&mut self, dst: u32) -> usize {
        let qi = self.core.dest_index(dst);
        if qi == self.queues.len() {
            self.queues.push(VecDeque::new());
        }
        qi
    }

    /// Packets held in all queues.
    pub fn held_packets(&self) -> impl Iterator<Item = u32> + '_ {
        self.queues.iter().flat_map(|q| q.iter().copied())
    }
}
