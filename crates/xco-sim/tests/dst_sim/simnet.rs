//! The simulator's packet network as the harness's transport: the seed's
//! cables become an `xco_sim` network (drop-tail output queues, links with
//! their capacities and propagation delays; the controllers on hosts of
//! their own, `ctl` on the first switch and `ctl2` on the last), every
//! control datagram is a packet of its size plus UDP/IPv4 headers, and
//! every data packet an agent puts on its NIC (released by its gate, passed
//! ungated or failed open, or passed by the kernel when the agent dies) is a
//! 1,500-byte packet to its destination — so control waits behind data in
//! the same queues, and is delayed, reordered only by a fault, and dropped
//! by a full queue as on a real network.
//!
//! The faults of [`NetFaults`] apply where a datagram leaves its sender
//! (the node that sends it, whatever source address it carries): loss,
//! duplication and partitions as on the model network, and, while faults
//! last, a hold of up to `delay_max - delay_min` before the NIC (so
//! datagrams reorder). The queues add the rest.
//!
//! The longest one-way delay of a controller's datagram to an agent (the
//! checks' allowance) is that hold plus, over the worst controller-to-host
//! path, each hop's propagation, one frame and a full buffer: the bound a
//! drop-tail network guarantees (checked: **delay bound**).
//!
//! Two invariants only this network can check ([`SimNet::finish`]):
//!
//! - **conserved end to end**: every data packet put on a NIC arrives, is
//!   counted as dropped at a named port, or is still in a queue or on a
//!   link at the end.
//! - **no-drop**: once coordination has resumed (faults stopped for the
//!   resume bound), no data packet is dropped at any port — in runs where
//!   every host is honest and every pair is coordinated (a hostile host's
//!   NIC drains what it passed failed open long after, and on-demand
//!   coordination lets light flows meet ungated).

use crate::net::{is_ctl, Addr, Arrival, NetFaults, Transport, CTL, CTL2};
use crate::world::Setup;
use std::cell::RefCell;
use std::collections::HashMap;
use std::rc::Rc;
use xco_core::routing::RoutingMode;
use xco_core::{Dur, Rng, Time};
use xco_sim::engine::{Event, EventQueue};
use xco_sim::net::packet::{Packet, PktKind, IPV4_HEADER_BYTES, UDP_HEADER_BYTES};
use xco_sim::net::topology::{NodeKind, Topology};
use xco_sim::net::{Framing, Net, NetConfig};
use xco_sim::stats::{FlowKind, FlowStats};

/// IP bytes of a data packet: with Ethernet's framing, preamble and gap,
/// the 1,538 wire bytes the agents pace it as.
const DATA_IP_BYTES: u32 = 1500;
/// The largest frame on the wire, bytes (a data packet with Ethernet framing, preamble and gap).
const MAX_WIRE_BYTES: u64 = 1538;
/// A host's NIC queue: a slice of data at line rate fits many times (the
/// agents pace their releases; only a failed-open host overfills it).
const HOST_BUFFER_BYTES: u64 = 16 << 20;
/// A controller's NIC queue (it sends control datagrams only).
const CTL_BUFFER_BYTES: u64 = 16 << 10;
/// The switch port buffers a seed draws from.
const SWITCH_BUFFERS: [u64; 3] = [24 << 10, 48 << 10, 96 << 10];

/// What a run's network measured (read after the run).
#[derive(Clone, Debug, Default)]
pub struct SimStats {
    /// Control datagrams put on the network, and dropped by a full queue.
    pub control_sent: u64,
    pub control_dropped: u64,
    /// Data packets put on NICs, delivered, dropped by full queues.
    pub data_sent: u64,
    pub data_delivered: u64,
    pub data_dropped: u64,
    /// Data packets dropped once coordination has resumed (from `resumed_at` on).
    pub data_dropped_resumed: u64,
    /// The longest one-way delay a datagram a controller sent had to an agent.
    pub ctl_delay_max: Dur,
    /// The bound on it ([`Transport::delay_bound`]).
    pub delay_bound: Dur,
}

/// A datagram in flight: (source address, destination, sent at, bytes).
type InFlight = (Addr, Addr, Time, Vec<u8>);

/// The transport.
pub struct SimNet {
    net: Net,
    ev: EventQueue,
    faults: NetFaults,
    quiet: Time,
    /// Nodes: hosts `0..hosts`, switches, then `ctl` and `ctl2`.
    hosts: u32,
    ctl_node: [u32; 2],
    /// Datagrams in flight, by slot.
    slots: Vec<Option<InFlight>>,
    /// Datagrams held at their sender by a fault (a probe event's tag): (node, slot).
    held: Vec<(u32, u32)>,
    routes: HashMap<(u32, u32), u32>,
    ctl_flow: u32,
    /// The data flow of each host.
    data_flow: Vec<u32>,
    bound: Dur,
    /// Coordination has resumed from here on (drops counted apart).
    resumed_at: Time,
    data_dropped_at_resume: Option<u64>,
    /// Held to no-drop: every host honest, every pair coordinated.
    no_drop: bool,
    /// The first data drop once coordination resumed.
    first_late_drop: Option<Time>,
    pub stats: Rc<RefCell<SimStats>>,
    /// Trace every drop (port and sender) on standard error.
    pub trace: bool,
    /// For the trace: drops per port and per flow seen so far.
    seen_drops: (Vec<u64>, Vec<u64>),
}

impl SimNet {
    /// The network of `s` (its buffers and propagation delays drawn from
    /// the seed's stream 3); `resumed_at`: from then on data drops are counted apart.
    pub fn new(s: &Setup, quiet: Time, resumed_at: Time) -> SimNet {
        let mut r = Rng::stream(s.seed, 3);
        let switch_buffer = SWITCH_BUFFERS[r.below(SWITCH_BUFFERS.len() as u64) as usize];
        let mut topo = Topology::default();
        for h in 0..s.hosts {
            topo.add_node(format!("h{h}"), NodeKind::Host);
        }
        for w in 0..s.switches {
            topo.add_node(format!("s{w}"), NodeKind::Switch);
        }
        let ctl = topo.add_node("ctl", NodeKind::Host);
        let ctl2 = topo.add_node("ctl2", NodeKind::Host);
        let is_host = |n: u32| (n as usize) < s.hosts;
        let buffer = |n: u32| {
            if is_host(n) {
                HOST_BUFFER_BYTES
            } else {
                switch_buffer
            }
        };
        // the cables in their order: link l's ports are 2l (a to b) and 2l + 1,
        // the checks' link numbers
        for &(a, b, bps) in &s.cables {
            let l = topo.add_link(
                a as usize,
                b as usize,
                bps,
                Dur::from_us(r.range_inclusive(1, 10)),
            );
            topo.links[l].buffer_a_bytes = Some(buffer(a));
            topo.links[l].buffer_b_bytes = Some(buffer(b));
        }
        let first = s.hosts;
        let last = s.hosts + s.switches - 1;
        for (c, sw) in [(ctl, first), (ctl2, last)] {
            let l = topo.add_link(c, sw, s.host_bps, Dur::from_us(r.range_inclusive(1, 10)));
            topo.links[l].buffer_a_bytes = Some(CTL_BUFFER_BYTES);
            topo.links[l].buffer_b_bytes = Some(switch_buffer);
        }
        let cfg = NetConfig {
            switch_buffer_bytes: switch_buffer,
            host_buffer_bytes: HOST_BUFFER_BYTES,
            framing: Framing::default(),
        };
        let mut net =
            Net::new(&topo, cfg, RoutingMode::Ecmp, s.seed).expect("the seed's cables form a network");
        let ctl_flow = net.flows.len() as u32;
        net.flows.push(FlowStats::new(
            FlowKind::Control,
            u32::MAX,
            "xco-control",
            ctl as u32,
            ctl as u32,
            Time::ZERO,
        ));
        let data_flow = (0..s.hosts as u32)
            .map(|h| {
                net.flows
                    .push(FlowStats::new(FlowKind::Udp, u32::MAX, "data", h, h, Time::ZERO));
                net.flows.len() as u32 - 1
            })
            .collect();
        let mut me = SimNet {
            net,
            ev: EventQueue::new(),
            faults: s.net.clone(),
            quiet,
            hosts: s.hosts as u32,
            ctl_node: [ctl as u32, ctl2 as u32],
            slots: Vec::new(),
            held: Vec::new(),
            routes: HashMap::new(),
            ctl_flow,
            data_flow,
            bound: Dur::ZERO,
            resumed_at,
            data_dropped_at_resume: None,
            no_drop: s.hostile.is_none() && !s.on_demand,
            first_late_drop: None,
            stats: Rc::new(RefCell::new(SimStats::default())),
            trace: false,
            seen_drops: (Vec::new(), Vec::new()),
        };
        // the hold, then per hop of the worst controller-to-host path: propagation,
        // a frame and a full buffer ahead of it
        let hold = Dur::from_ps(me.faults.delay_max.ps().saturating_sub(me.faults.delay_min.ps()));
        let mut worst = Dur::ZERO;
        for c in me.ctl_node {
            for h in 0..me.hosts {
                let mut d = Dur::ZERO;
                let route = me.route(c, h);
                let mut at = c;
                let mut hop = 0;
                while at != h {
                    let p = &me.net.ports[me.net.routes.port(route, hop) as usize];
                    d = d + p.delay + Dur::serialization(p.buffer_bytes + MAX_WIRE_BYTES, p.rate_bps);
                    at = p.to;
                    hop += 1;
                }
                worst = worst.max(d);
            }
        }
        me.bound = hold + worst;
        me.stats.borrow_mut().delay_bound = me.bound;
        me
    }

    fn node(&self, a: Addr) -> u32 {
        match a {
            CTL => self.ctl_node[0],
            CTL2 => self.ctl_node[1],
            h => h,
        }
    }

    fn route(&mut self, from: u32, to: u32) -> u32 {
        match self.routes.get(&(from, to)) {
            Some(&r) => r,
            None => {
                let r = self
                    .net
                    .route(from, to, xco_sim::net::pair_hash(from, to))
                    .expect("hosts are connected");
                self.routes.insert((from, to), r);
                r
            }
        }
    }

    /// Put the datagram of `slot` on node `from`'s NIC at `now`.
    fn inject(&mut self, now: Time, from: u32, slot: u32) {
        let (_, to, _, bytes) = self.slots[slot as usize].as_ref().expect("in flight");
        let (to, len) = (self.node(*to), bytes.len() as u32);
        let route = self.route(from, to);
        let mut p = Packet {
            route,
            ip_bytes: IPV4_HEADER_BYTES + UDP_HEADER_BYTES + len,
            flow: self.ctl_flow,
            src: from,
            dst: to,
            ..Packet::EMPTY
        };
        p.set_control(slot);
        let id = self.net.alloc(p);
        self.net.count_sent(id);
        let nic = self.net.nodes[from as usize].nic;
        self.net.enqueue(now, &mut self.ev, nic, id);
    }

    fn addr(&self, node: u32) -> Addr {
        if node == self.ctl_node[0] {
            CTL
        } else if node == self.ctl_node[1] {
            CTL2
        } else {
            node
        }
    }
}

impl Transport for SimNet {
    fn name(&self) -> &'static str {
        "sim"
    }

    fn delay_bound(&self) -> Dur {
        self.bound
    }

    fn send(
        &mut self,
        rng: &mut Rng,
        t: Time,
        wire_from: Addr,
        from: Addr,
        to: Addr,
        bytes: &[u8],
    ) -> Vec<Time> {
        let f = &self.faults;
        if f.cut(wire_from, t) || f.cut(to, t) {
            return Vec::new();
        }
        if is_ctl(wire_from) && is_ctl(to) && f.peer_cuts.iter().any(|&(a, b)| a <= t && t < b) {
            return Vec::new();
        }
        let faulty = t < self.quiet;
        if faulty && rng.below(1_000_000) < f.loss_ppm {
            return Vec::new();
        }
        let copies = 1 + u32::from(faulty && rng.below(1_000_000) < f.dup_ppm);
        let span = f.delay_max.ps().saturating_sub(f.delay_min.ps());
        let node = self.node(wire_from);
        if node == self.node(to) {
            // a node replaying to itself: no wire
            return vec![t; copies as usize];
        }
        for _ in 0..copies {
            let hold = if faulty { rng.below(span + 1) } else { 0 };
            self.slots.push(Some((from, to, t, bytes.to_vec())));
            let slot = self.slots.len() as u32 - 1;
            self.stats.borrow_mut().control_sent += 1;
            if hold == 0 {
                self.inject(t, node, slot);
            } else {
                self.held.push((node, slot));
                self.ev
                    .schedule(t + Dur::from_ps(hold), Event::Probe(self.held.len() as u32 - 1));
            }
        }
        Vec::new()
    }

    fn data(&mut self, t: Time, from: Addr, to: Addr, pkts: u32) {
        let route = self.route(from, to);
        for _ in 0..pkts {
            let p = Packet {
                route,
                kind: PktKind::Udp,
                ip_bytes: DATA_IP_BYTES,
                payload_bytes: DATA_IP_BYTES - IPV4_HEADER_BYTES - UDP_HEADER_BYTES,
                flow: self.data_flow[from as usize],
                src: from,
                dst: to,
                ..Packet::EMPTY
            };
            let id = self.net.alloc(p);
            self.net.count_sent(id);
            let nic = self.net.nodes[from as usize].nic;
            self.net.enqueue(t, &mut self.ev, nic, id);
        }
        self.stats.borrow_mut().data_sent += pkts as u64;
    }

    fn next_at(&mut self) -> Time {
        self.ev.peek_time().unwrap_or(Time::NEVER)
    }

    fn advance(&mut self, until: Time, out: &mut Vec<Arrival>) {
        while self.ev.peek_time().is_some_and(|t| t <= until) {
            let (now, e) = self.ev.pop().expect("an event");
            if now >= self.resumed_at && self.data_dropped_at_resume.is_none() {
                self.data_dropped_at_resume = Some(self.data_dropped());
            }
            match e {
                Event::PipeArrive(port) => {
                    let Some(pkt) = self.net.on_pipe_arrive(now, &mut self.ev, port) else {
                        continue;
                    };
                    let p = self.net.pool[pkt];
                    self.net.release(pkt);
                    if p.kind == PktKind::Control {
                        let (from, to, sent, bytes) = self.slots[p.control_slot() as usize]
                            .take()
                            .expect("in flight once");
                        debug_assert_eq!(self.addr(p.dst), to);
                        if self.ctl_node.contains(&p.src) && !is_ctl(to) {
                            let mut st = self.stats.borrow_mut();
                            st.ctl_delay_max = st.ctl_delay_max.max(now.saturating_since(sent));
                        }
                        out.push(Arrival {
                            at: now,
                            from,
                            to,
                            bytes,
                        });
                    } else {
                        debug_assert!(p.dst < self.hosts, "data for a controller");
                        self.stats.borrow_mut().data_delivered += 1;
                    }
                }
                Event::PortDepart(port) => self.net.on_port_depart(now, &mut self.ev, port),
                Event::Probe(tag) => {
                    let (node, slot) = self.held[tag as usize];
                    self.inject(now, node, slot);
                }
                e => unreachable!("no {e:?} on the harness's network"),
            }
            if self.trace {
                self.trace_drops(now);
            }
            if self.first_late_drop.is_none()
                && self
                    .data_dropped_at_resume
                    .is_some_and(|d| self.data_dropped() > d)
            {
                self.first_late_drop = Some(now);
            }
        }
    }

    fn finish(&mut self, _t: Time) -> Result<String, String> {
        let in_flight: Vec<Packet> = (0..self.net.ports.len() as u32)
            .flat_map(|p| self.net.take_packets(p))
            .collect();
        let data_queued = in_flight.iter().filter(|p| p.kind != PktKind::Control).count() as u64;
        let dropped = self.data_dropped();
        let control_dropped = self.net.flows[self.ctl_flow as usize].wire_packets_dropped;
        let mut st = self.stats.borrow_mut();
        st.data_dropped = dropped;
        st.control_dropped = control_dropped;
        st.data_dropped_resumed = dropped - self.data_dropped_at_resume.unwrap_or(dropped);
        // where the drops were, by port (both kinds: ports count frames, not flows)
        let drops: Vec<String> = self
            .net
            .ports
            .iter()
            .filter(|p| p.stats.dropped_packets > 0)
            .map(|p| {
                format!(
                    "{}->{} {}",
                    self.net.name(p.from),
                    self.net.name(p.to),
                    p.stats.dropped_packets
                )
            })
            .collect();
        let line = format!(
            "{st:?}; data queued at the end {data_queued}; frames dropped by port: {}",
            if drops.is_empty() {
                "none".into()
            } else {
                drops.join(", ")
            }
        );
        if st.ctl_delay_max > st.delay_bound {
            return Err(format!(
                "delay bound: a controller's datagram took {} to an agent, over the bound {} (the harness's bound is wrong)",
                st.ctl_delay_max, st.delay_bound
            ));
        }
        if let (true, Some(at)) = (self.no_drop, self.first_late_drop) {
            return Err(format!(
                "no-drop: {} data packets dropped once coordination resumed, the first at {at} (frames dropped by port: {})",
                st.data_dropped_resumed,
                drops.join(", ")
            ));
        }
        if st.data_sent != st.data_delivered + dropped + data_queued {
            return Err(format!(
                "conserved end to end: {} data packets put on NICs, {} delivered, {} dropped at ports ({}), {} still queued",
                st.data_sent,
                st.data_delivered,
                dropped,
                drops.join(", "),
                data_queued
            ));
        }
        Ok(line)
    }
}

impl SimNet {
    /// Print the drops since the last call: where, and whose.
    fn trace_drops(&mut self, now: Time) {
        let ports: Vec<u64> = self.net.ports.iter().map(|p| p.stats.dropped_packets).collect();
        let flows: Vec<u64> = self.net.flows.iter().map(|f| f.wire_packets_dropped).collect();
        let (sp, sf) = &mut self.seen_drops;
        if sp.is_empty() {
            sp.resize(ports.len(), 0);
            sf.resize(flows.len(), 0);
        }
        if ports == *sp {
            return;
        }
        let at: Vec<String> = (0..ports.len())
            .filter(|&i| ports[i] > sp[i])
            .map(|i| {
                let p = &self.net.ports[i];
                format!("{}->{}", self.net.name(p.from), self.net.name(p.to))
            })
            .collect();
        let whose: Vec<String> = (0..flows.len())
            .filter(|&i| flows[i] > sf[i])
            .map(|i| {
                let n = flows[i] - sf[i];
                if i as u32 == self.ctl_flow {
                    format!("{n} control")
                } else {
                    format!("{n} data of {}", self.net.name(self.net.flows[i].src))
                }
            })
            .collect();
        // whose NICs are still sending what they released before
        let busy: Vec<String> = (0..self.hosts)
            .filter_map(|h| {
                let p = &self.net.ports[self.net.nodes[h as usize].nic as usize];
                (p.busy_until > now).then(|| format!("h{h} {}", p.busy_until.saturating_since(now)))
            })
            .collect();
        eprintln!(
            "{now} sim drop at {}: {}; NICs busy for: {}",
            at.join(", "),
            whose.join(", "),
            if busy.is_empty() {
                "none".into()
            } else {
                busy.join(", ")
            }
        );
        self.seen_drops = (ports, flows);
    }

    fn data_dropped(&self) -> u64 {
        self.data_flow
            .iter()
            .map(|&f| self.net.flows[f as usize].wire_packets_dropped)
            .sum()
    }
}
