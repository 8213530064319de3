//! The host layer: what sits between a host's transports and its NIC.
//!
//! A host in the simulator is its transports (TCP endpoints, UDP sources and
//! sinks, the ping responder), this layer, and one NIC — the host's output
//! port into the fabric, a [`crate::net::port::Port`] like any switch port.
//!
//! **Egress** ([`egress`]): a packet a transport built goes through
//! [`Core::send`]. On a host XCo coordinates, the host's local coordinator
//! (`crate::xco`, the core's `HostCoordinator`) holds it in its
//! per-destination queue until a directive releases it; otherwise it enters
//! the NIC queue at once. Transports never lose a packet at their own host:
//! TCP asks [`Core::egress_has_room`] before it builds a data segment and,
//! when there is none, waits ([`Core::egress_block`]) until the NIC queue (or
//! its coordinator queue) drains; the layer wakes it through
//! [`Hosts::wakeups`], which the driver hands to the endpoints after each
//! event. Pacing lives in the transport (`crate::tcp::pacing`) and hands its
//! packets to this same path.
//!
//! **Receive** ([`receive`]): a packet that reached its destination host is
//! handed to the transport it names — a TCP segment to its endpoint (whose
//! receive-window policy is `crate::tcp::rcv_window`), a UDP fragment to its
//! sink, an XCo control message to the coordinator or controller — and an
//! echo request is answered at once. Notifications addressed to a host's
//! stack rather than to one socket (PDN's drop notifications) arrive here too,
//! as their own packet kind, when a scenario turns them on.
//!
//! The layer's own state is small: which endpoints wait for room in which
//! host's NIC queue and whether a room check is pending. It is kept out of
//! [`crate::net`], which knows ports, links and switches, not sockets.

pub mod egress;
pub mod receive;

use crate::engine::{Event, EventQueue};
use crate::net::Net;

#[cfg(doc)]
use crate::sim::Core;

/// Per-host state of the host layer.
#[derive(Debug, Default)]
pub struct Hosts {
    /// Per node: TCP endpoints waiting for room in its NIC queue.
    blocked: Vec<Vec<u32>>,
    /// Per node: a room check ([`Event::NicRoom`]) is scheduled.
    room_event: Vec<bool>,
    /// Endpoints whose egress drained: the driver wakes them after the event.
    pub wakeups: Vec<u32>,
}

impl Hosts {
    /// Host-layer state for a network of `nodes` nodes (switches get empty slots).
    pub fn new(nodes: usize) -> Hosts {
        Hosts {
            blocked: vec![Vec::new(); nodes],
            room_event: vec![false; nodes],
            wakeups: Vec::new(),
        }
    }

    /// True if `host`'s NIC queue can take `frame_bytes` more of TCP data
    /// and still keep room for ACKs and retransmissions (four MTU-sized
    /// frames). TCP never loses packets in its own host's queue (Linux's TCP
    /// Small Queues block the socket instead); this is the check that blocks it.
    #[inline]
    pub fn nic_has_room(net: &mut Net, now: xco_core::Time, host: u32, frame_bytes: u32) -> bool {
        let pt = &mut net.ports[net.nodes[host as usize].nic as usize];
        let headroom = 4 * 9_100u64.min(pt.buffer_bytes / 8);
        pt.backlog_bytes(now) + frame_bytes as u64 + headroom <= pt.buffer_bytes
    }

    /// TCP endpoint `ep` on `host` waits for room in the NIC queue: it is
    /// woken (through [`Hosts::wakeups`]) when the oldest waiting packet starts.
    pub fn block_until_room(&mut self, net: &Net, ev: &mut EventQueue, host: u32, ep: u32) {
        let b = &mut self.blocked[host as usize];
        if !b.contains(&ep) {
            b.push(ep);
        }
        self.wait_for_room(net, ev, host);
    }

    /// Ask for a [`Event::NicRoom`] when `host`'s oldest waiting packet starts.
    pub fn wait_for_room(&mut self, net: &Net, ev: &mut EventQueue, host: u32) {
        if !self.room_event[host as usize] {
            let nic = net.nodes[host as usize].nic as usize;
            if let Some(t) = net.ports[nic].next_start() {
                self.room_event[host as usize] = true;
                ev.schedule(t, Event::NicRoom(host));
            }
        }
    }

    /// The room check of `host` fired: queue its blocked endpoints for waking.
    pub fn on_nic_room(&mut self, host: u32) {
        self.room_event[host as usize] = false;
        self.wakeups.append(&mut self.blocked[host as usize]);
    }

    /// Queue `eps` (endpoints a coordinator queue held back) for waking; empties `eps`.
    #[inline]
    pub fn wake(&mut self, eps: &mut Vec<u32>) {
        self.wakeups.append(eps);
    }
}
