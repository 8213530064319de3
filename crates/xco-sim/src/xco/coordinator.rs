//! A host's local coordinator in the simulator: `xco_core`'s
//! [`AgentNode`] around its [`HostCoordinator`] — the code the real agent
//! runs, its control plane included — over packet ids, with the host's NIC
//! port as its egress.
//!
//! Traffic of a coordinated host passes through here between its transports
//! and its NIC. Each destination host has its own queue; a queue is released
//! only while a directive allows it: during a timeslice for that destination
//! (and only packets that can start before the slice ends), at its rate in the
//! rate form, or freely after the coordinator fails open. Pure ACKs, SYNs,
//! pings, control messages and short flows bypass the queues. A queue that
//! turns non-empty triggers a backlog report; a slice whose queue stays empty
//! for the hysteresis is given back (work conservation). TCP endpoints whose
//! queue is full wait here until a release makes room. Destinations are
//! the scheduler's host indices (the numbering of the directives).

use crate::engine::{EventQueue, Timer};
use crate::net::Net;
use xco_core::control::{AgentConfig, AgentNode};
use xco_core::coord::{CoordConfig, Egress, HostCoordinator};
use xco_core::rng::Rng;
use xco_core::wire::AgentKeys;
use xco_core::{Dur, Time};

/// The coordinator of one simulated host.
pub struct HostCoord {
    /// The agent node: its session with the controller, what it accepts,
    /// and its coordinator (`node.coord`: queues, gate, accounting and
    /// timers), the real agent's code.
    pub node: AgentNode<u32>,
    /// The coordinator's wake-up (its next deadline).
    pub timer: Timer,
    /// TCP endpoints waiting for room in one of the queues.
    pub blocked: Vec<u32>,
    /// Applications (blocking UDP sources) waiting for room in one of the queues.
    pub blocked_apps: Vec<u32>,
    /// When the agent starts (simulated time), while it has not yet: hosts
    /// do not boot at one instant ([`super::XcoSim::start`]).
    pub start_at: Option<Time>,
}

impl HostCoord {
    /// An agent with `keys` drawing join nonces from `rng`, whose
    /// coordinator is closed until its first directive and whose queues
    /// hold at most `limit_bytes` frame bytes each.
    pub fn new(
        agent: AgentConfig,
        cfg: CoordConfig,
        limit_bytes: u64,
        keys: AgentKeys,
        rng: Rng,
        now: Time,
    ) -> HostCoord {
        HostCoord {
            node: AgentNode::new(agent, HostCoordinator::new(cfg, limit_bytes, now), keys, rng),
            timer: Timer::IDLE,
            blocked: Vec::new(),
            blocked_apps: Vec::new(),
            start_at: None,
        }
    }
}

/// A host's NIC port as the coordinator's egress (the coordinator's clock
/// reads the simulator's time plus `offset`).
pub struct NicEgress<'a> {
    /// The network.
    pub net: &'a mut Net,
    /// The event queue (the port's pipe events).
    pub ev: &'a mut EventQueue,
    /// The host node.
    pub host: u32,
    /// Its NIC port.
    pub nic: u32,
    /// The coordinator's clock minus the simulator's.
    pub offset: Dur,
}

impl Egress<u32> for NicEgress<'_> {
    #[inline]
    fn free_at(&self, now: Time) -> Time {
        (self.net.ports[self.nic as usize].busy_until + self.offset).max(now)
    }
    fn rate_bps(&self) -> u64 {
        self.net.ports[self.nic as usize].rate_bps
    }
    #[inline]
    fn has_room(&mut self, now: Time, bytes: u32) -> bool {
        let now = Time::ZERO + now.saturating_since(Time::ZERO + self.offset);
        crate::host::Hosts::nic_has_room(self.net, now, self.host, bytes)
    }
    #[inline]
    fn send(&mut self, now: Time, pkt: u32, _bytes: u32, _wire_bytes: u64) {
        let now = Time::ZERO + now.saturating_since(Time::ZERO + self.offset);
        self.net.enqueue(now, self.ev, self.nic, pkt);
    }
}
