//! XCo's control network in the simulator: the datagrams the control-plane
//! nodes emit, moved from one node to another as they are — in-band as
//! packets of the datagram's size plus the UDP and IPv4 headers, through
//! the simulated switches (so their delay under load is real), or
//! out-of-band with a fixed latency. A datagram from a node to itself (a
//! controller's host that also runs an agent) arrives at once.
//!
//! The channel only carries bytes: what they say is read by the nodes
//! (`xco_core::control`), nowhere here.

use crate::engine::{Event, EventQueue};
use crate::net::packet::{Packet, IPV4_HEADER_BYTES};
use crate::net::Net;
use crate::stats::{FlowKind, FlowStats};
use std::collections::HashMap;
use xco_core::{Dur, Time};

/// A datagram not arrived this long after it was sent is taken as lost
/// (its slot freed at the next sweep).
pub const LOST_AFTER: Dur = Dur::from_secs(10);

/// No sweep for lost datagrams below this many slots.
const SWEEP_MIN_SLOTS: usize = 4096;

/// UDP's header, in bytes (the daemons' control datagrams are UDP).
pub const UDP_HEADER_BYTES: u32 = 8;

/// One control datagram in flight.
#[derive(Clone, Debug)]
pub struct Datagram {
    /// The sending node (an agent's host, or the controller's host).
    pub from: u32,
    /// The receiving node.
    pub to: u32,
    /// For the controller node at `to` (else for the agent there: a
    /// controller's host may run an agent too).
    pub to_controller: bool,
    /// The datagram's bytes, as a node encoded them.
    pub bytes: Vec<u8>,
}

/// The control network of one run.
pub struct ControlNet {
    /// Out-of-band with this latency (`None`: in-band packets).
    out_of_band: Option<Dur>,
    /// Datagrams in flight and when each was sent.
    slots: Vec<Option<(Datagram, Time)>>,
    free: Vec<u32>,
    /// Sweep for lost datagrams when the slots reach this many with none free.
    sweep_at: usize,
    routes: HashMap<(u32, u32), u32>,
    /// The flow the in-band control packets are counted in.
    flow: u32,
    sent: u64,
}

impl ControlNet {
    /// A control network over `net` (in-band unless `out_of_band`); its
    /// packets are counted in one flow, "xco-control", of the controller's host.
    pub fn new(net: &mut Net, controller: u32, out_of_band: Option<Dur>, now: Time) -> ControlNet {
        let flow = net.flows.len() as u32;
        net.flows.push(FlowStats::new(
            FlowKind::Control,
            u32::MAX,
            "xco-control",
            controller,
            controller,
            now,
        ));
        ControlNet {
            out_of_band,
            slots: Vec::new(),
            free: Vec::new(),
            sweep_at: SWEEP_MIN_SLOTS,
            routes: HashMap::new(),
            flow,
            sent: 0,
        }
    }

    fn store(&mut self, d: Datagram, now: Time) -> u32 {
        if self.free.is_empty() && self.slots.len() >= self.sweep_at {
            self.sweep(now);
        }
        match self.free.pop() {
            Some(i) => {
                self.slots[i as usize] = Some((d, now));
                i
            }
            None => {
                self.slots.push(Some((d, now)));
                (self.slots.len() - 1) as u32
            }
        }
    }

    /// Free the slots of datagrams sent more than [`LOST_AFTER`] ago: an
    /// in-band packet dropped on the way never arrives to free its own, and
    /// no queue of the network holds a packet that long. The next sweep
    /// comes when twice as many are live (amortised O(1) per datagram).
    fn sweep(&mut self, now: Time) {
        for (i, s) in self.slots.iter_mut().enumerate() {
            if s.as_ref()
                .is_some_and(|(_, at)| now.saturating_since(*at) > LOST_AFTER)
            {
                *s = None;
                self.free.push(i as u32);
            }
        }
        self.sweep_at = SWEEP_MIN_SLOTS.max(2 * (self.slots.len() - self.free.len()));
    }

    /// The datagram of `slot` arrived (an in-band packet released, or an
    /// out-of-band event): take it out of the channel.
    pub fn take(&mut self, slot: u32) -> Option<Datagram> {
        let d = self.slots.get_mut(slot as usize)?.take();
        if d.is_some() {
            self.free.push(slot);
        }
        d.map(|(d, _)| d)
    }

    /// Datagrams sent so far.
    pub fn sent(&self) -> u64 {
        self.sent
    }

    /// Send `d` at `now`: it arrives as [`Event::ControlMessage`] (out of
    /// band, or to its own node) or as a control packet at its node.
    pub fn send(&mut self, now: Time, ev: &mut EventQueue, net: &mut Net, d: Datagram) {
        let (from, to) = (d.from, d.to);
        let bytes = d.bytes.len() as u32;
        self.sent += 1;
        let slot = self.store(d, now);
        if from == to {
            ev.schedule(now, Event::ControlMessage(slot));
            return;
        }
        if let Some(lat) = self.out_of_band {
            ev.schedule(now + lat, Event::ControlMessage(slot));
            return;
        }
        let route = match self.routes.get(&(from, to)) {
            Some(&r) => r,
            None => {
                let r = net
                    .route(from, to, crate::net::pair_hash(from, to))
                    .expect("hosts are connected");
                self.routes.insert((from, to), r);
                r
            }
        };
        let mut p = Packet {
            route,
            ip_bytes: IPV4_HEADER_BYTES + UDP_HEADER_BYTES + bytes,
            flow: self.flow,
            src: from,
            dst: to,
            ..Packet::EMPTY
        };
        p.set_control(slot);
        let id = net.alloc(p);
        net.flows[self.flow as usize].wire_bytes_sent += p.ip_bytes as u64;
        let nic = net.nodes[from as usize].nic;
        net.enqueue(now, ev, nic, id);
    }
}
