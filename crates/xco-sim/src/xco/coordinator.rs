//! A host's local coordinator in the simulator: `xco_core`'s
//! [`HostCoordinator`] — the code the real agent runs — over packet ids, with
//! the host's NIC port as its egress.
//!
//! Traffic of a coordinated host passes through here between its transports
//! and its NIC. Each destination host has its own queue; a queue is released
//! only while a directive allows it: during a timeslice for that destination
//! (and only packets that can start before the slice ends), at its rate in the
//! rate form, or freely after the coordinator fails open. Pure ACKs, SYNs,
//! pings, control messages and short flows bypass the queues. A queue that
//! turns non-empty triggers a backlog report; a slice whose queue stays empty
//! for the hysteresis is given back (work conservation). TCP endpoints whose
//! queue is full wait here until a release makes room.

use crate::engine::{EventQueue, Timer};
use crate::net::Net;
use xco_core::coord::{CoordConfig, Egress, HostCoordinator};
use xco_core::Time;

/// The coordinator of one simulated host.
pub struct HostCoord {
    /// Queues, gate, accounting and timers (shared logic with the agent).
    pub core: HostCoordinator<u32>,
    /// The coordinator's wake-up (its next deadline).
    pub timer: Timer,
    /// TCP endpoints waiting for room in one of the queues.
    pub blocked: Vec<u32>,
}

impl HostCoord {
    /// A coordinator, closed until its first directive, whose queues hold
    /// at most `limit_bytes` frame bytes each.
    pub fn new(cfg: CoordConfig, limit_bytes: u64, now: Time) -> HostCoord {
        HostCoord {
            core: HostCoordinator::new(cfg, limit_bytes, now),
            timer: Timer::IDLE,
            blocked: Vec::new(),
        }
    }
}

/// A host's NIC port as the coordinator's egress.
pub struct NicEgress<'a> {
    /// The network.
    pub net: &'a mut Net,
    /// The event queue (the port's pipe events).
    pub ev: &'a mut EventQueue,
    /// The host node.
    pub host: u32,
    /// Its NIC port.
    pub nic: u32,
}

impl Egress<u32> for NicEgress<'_> {
    #[inline]
    fn free_at(&self, now: Time) -> Time {
        self.net.ports[self.nic as usize].busy_until.max(now)
    }
    fn rate_bps(&self) -> u64 {
        self.net.ports[self.nic as usize].rate_bps
    }
    #[inline]
    fn has_room(&mut self, now: Time, bytes: u32) -> bool {
        crate::host::Hosts::nic_has_room(self.net, now, self.host, bytes)
    }
    #[inline]
    fn send(&mut self, now: Time, pkt: u32, _bytes: u32, _wire_bytes: u64) {
        self.net.enqueue(now, self.ev, self.nic, pkt);
    }
}
