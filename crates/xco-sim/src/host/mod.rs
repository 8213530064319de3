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
//! **The host model** ([`settings`], `[host]` in a scenario): the NIC
//! queue ([`nic_queue`]) is bounded in bytes and, like Linux's
//! `txqueuelen`, in packets; a UDP socket's send buffer ([`sndbuf`]) makes
//! a UDP application's write block ([`udp_socket`]) until its whole message
//! fits, instead of losing fragments at a full host queue. The defaults are
//! the old model (bytes only, UDP never waits), which the golden runs pin.
//!
//! **TCP Small Queues** ([`tsq`], `[host] tsq_limit_bytes`): a TCP socket
//! holds at most its TSQ limit in its host (NIC queue) and resumes when its
//! frames leave the NIC, as Linux's does; off by default.
//!
//! The layer's own state is small: which endpoints wait for room in which
//! host's NIC queue and whether a room check is pending. It is kept out of
//! [`crate::net`], which knows ports, links and switches, not sockets.

pub mod egress;
pub mod nic_queue;
pub mod receive;
pub mod settings;
pub mod sndbuf;
pub mod tsq;
pub mod udp_socket;

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
    /// Applications (UDP sources) whose blocked write may go ahead now: the
    /// driver fires their send timer after the event.
    pub app_wakeups: Vec<u32>,
    /// The host model's settings.
    pub settings: settings::HostSettings,
    /// Per TCP endpoint (grown on first use): its frames charged to it
    /// until its NIC sends them, with TSQ on ([`tsq`]).
    tsq: Vec<sndbuf::SendBuffer>,
}

impl Hosts {
    /// Host-layer state for a network of `nodes` nodes (switches get empty slots).
    pub fn new(nodes: usize) -> Hosts {
        Hosts {
            blocked: vec![Vec::new(); nodes],
            room_event: vec![false; nodes],
            wakeups: Vec::new(),
            app_wakeups: Vec::new(),
            settings: settings::HostSettings::default(),
            tsq: Vec::new(),
        }
    }

    /// TCP endpoint `ep`'s TSQ charge list.
    #[inline]
    pub fn tsq_socket(&mut self, ep: u32) -> &mut sndbuf::SendBuffer {
        let i = ep as usize;
        if i >= self.tsq.len() {
            self.tsq.resize_with(i + 1, sndbuf::SendBuffer::default);
        }
        &mut self.tsq[i]
    }

    /// True if `host`'s NIC queue can take a TCP frame of `frame_bytes`
    /// ([`nic_queue::has_room`]).
    #[inline]
    pub fn nic_has_room(net: &mut Net, now: xco_core::Time, host: u32, frame_bytes: u32) -> bool {
        nic_queue::has_room(net, now, host, frame_bytes)
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
