//! The network: output-queued ports with drop-tail (or other) buffers,
//! serialisation at line rate, propagation delay, and store-and-forward
//! switches that follow precomputed routes.
//!
//! A port is a FIFO buffer, a serialiser and a pipe. Because the port is
//! FIFO, an admitted packet's serialisation slot is known the moment it
//! arrives (right after everything admitted before it), so it enters the pipe
//! at once, stamped with its arrival time at the far end. The bytes still
//! waiting to start serialising are tracked in a small list of (start time,
//! bytes) that is trimmed lazily whenever the backlog is asked for. Only the
//! pipe's head packet has a pending arrival event, and a port never needs a
//! departure event: one event per packet per hop.

pub mod packet;
pub mod qdisc;
pub mod routing;
pub mod topology;

use crate::engine::{Event, EventQueue};
use crate::output::pcap::CaptureBuffer;
use crate::stats::FlowStats;
use packet::{Packet, PacketPool, PktId};
use qdisc::{DropTail, Qdisc, QueueDiscipline, Verdict};
use routing::{Graph, RouteTable, Router, RoutingMode};
use std::collections::VecDeque;
use topology::{NodeKind, Topology};
use xco_core::{Dur, Time};

/// Ethernet framing added to every IP datagram.
#[derive(Clone, Copy, Debug)]
pub struct Framing {
    /// Header and FCS bytes stored in buffers with the datagram (18 for Ethernet II).
    pub frame_overhead_bytes: u32,
    /// Preamble, start delimiter and inter-frame gap: wire time, not buffer space (20).
    pub gap_bytes: u32,
}

impl Default for Framing {
    fn default() -> Framing {
        Framing {
            frame_overhead_bytes: 18,
            gap_bytes: 20,
        }
    }
}

/// Counters of one output port.
#[derive(Clone, Copy, Debug, Default)]
pub struct PortStats {
    /// Frame bytes offered to the port.
    pub arrived_bytes: u64,
    /// Frames offered.
    pub arrived_packets: u64,
    /// Frame bytes admitted (on the wire, being serialised or waiting).
    pub admitted_bytes: u64,
    /// Frames admitted.
    pub admitted_packets: u64,
    /// Frame bytes dropped by the queue discipline.
    pub dropped_bytes: u64,
    /// Frames dropped.
    pub dropped_packets: u64,
    /// Frame bytes that reached the far end.
    pub delivered_bytes: u64,
    /// Largest backlog seen, bytes.
    pub max_backlog_bytes: u64,
    /// Drops since the last time-series sample.
    pub bin_drops: u64,
}

/// One direction of a link: the sending node's output port.
pub struct Port {
    /// Sending node.
    pub from: u32,
    /// Receiving node.
    pub to: u32,
    /// Line rate, bits per second.
    pub rate_bps: u64,
    /// Serialisation time per byte, picoseconds in 32.32 fixed point.
    ps_per_byte_q32: u64,
    /// One-way propagation delay.
    pub delay: Dur,
    /// The admission discipline.
    pub qdisc: Qdisc,
    /// Buffer size in bytes (as configured).
    pub buffer_bytes: u64,
    /// When the last admitted packet finishes serialising.
    pub busy_until: Time,
    /// Admitted packets not yet serialising: (start time, frame bytes).
    waiting: VecDeque<(Time, u32)>,
    waiting_bytes: u64,
    /// Admitted packets in order: (arrival time at `to`, packet).
    pipe: VecDeque<(Time, PktId)>,
    /// Counters.
    pub stats: PortStats,
    /// Capture buffer index, if this port is captured.
    pub capture: Option<u32>,
}

impl Port {
    /// Serialisation time of `wire_bytes` on this port.
    #[inline(always)]
    pub fn serialization(&self, wire_bytes: u32) -> Dur {
        Dur(((wire_bytes as u128 * self.ps_per_byte_q32 as u128) >> 32) as u64)
    }
    /// Admitted packets not yet at the far end (waiting, serialising or propagating).
    pub fn in_pipe(&self) -> impl Iterator<Item = PktId> + '_ {
        self.pipe.iter().map(|&(_, p)| p)
    }
    /// Bytes waiting to start serialising at `now`.
    #[inline]
    pub fn backlog_bytes(&mut self, now: Time) -> u64 {
        while let Some(&(start, bytes)) = self.waiting.front() {
            if start > now {
                break;
            }
            self.waiting.pop_front();
            self.waiting_bytes -= bytes as u64;
        }
        self.waiting_bytes
    }
    /// Start time of the oldest packet still waiting, if any.
    fn next_start(&self) -> Option<Time> {
        self.waiting.front().map(|&(t, _)| t)
    }
}

/// Per-node wiring.
pub struct NodeInfo {
    /// Name from the topology.
    pub name: String,
    /// Host or switch.
    pub kind: NodeKind,
    /// The NIC port of a host (`u32::MAX` for switches).
    pub nic: u32,
}

/// Defaults a [`Net`] is built with.
#[derive(Clone, Copy, Debug)]
pub struct NetConfig {
    /// Buffer of every switch output port, bytes.
    pub switch_buffer_bytes: u64,
    /// Buffer of every host NIC queue, bytes.
    pub host_buffer_bytes: u64,
    /// Ethernet framing.
    pub framing: Framing,
}

/// The wired network with everything in flight.
pub struct Net {
    /// Nodes.
    pub nodes: Vec<NodeInfo>,
    kinds: Vec<NodeKind>,
    out: Vec<Vec<(u32, u32)>>,
    /// Output ports.
    pub ports: Vec<Port>,
    /// Packet arena.
    pub pool: PacketPool,
    /// Interned routes.
    pub routes: RouteTable,
    router: Router,
    path_scratch: Vec<u32>,
    /// Per-packet routing: every packet a host sends gets a path of its own.
    spray: bool,
    /// Packets sprayed so far (each draws its path from this count).
    sprayed_packets: u64,
    /// Seed of the per-packet draws.
    spray_seed: u64,
    /// Framing.
    pub framing: Framing,
    /// Per-flow statistics.
    pub flows: Vec<FlowStats>,
    /// Route every flow of a host pair the same way (XCo schedules per host pair).
    pub pair_routing: bool,
    /// Captured packets per captured port.
    pub captures: Vec<CaptureBuffer>,
    /// Data packets (payload > 0) that crossed a link.
    pub data_packet_hops: u64,
    /// Per host: TCP endpoints waiting for room in the NIC queue.
    blocked: Vec<Vec<u32>>,
    /// Per host: a room check is scheduled.
    room_event: Vec<bool>,
    /// Endpoints whose NIC queue drained (the driver wakes them after the event).
    pub wakeups: Vec<u32>,
}

pub use routing::pair_hash;

/// Why a network could not be built from a topology.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NetError(pub String);

impl Net {
    /// Wire up `topo`, routed as `routing` says (`seed` draws the paths of
    /// per-packet routing).
    pub fn new(topo: &Topology, cfg: NetConfig, routing: RoutingMode, seed: u64) -> Result<Net, NetError> {
        let n = topo.nodes.len();
        let mut nodes: Vec<NodeInfo> = topo
            .nodes
            .iter()
            .map(|s| NodeInfo {
                name: s.name.clone(),
                kind: s.kind,
                nic: u32::MAX,
            })
            .collect();
        let kinds: Vec<NodeKind> = topo.nodes.iter().map(|s| s.kind).collect();
        let mut out = vec![Vec::new(); n];
        let mut ports = Vec::with_capacity(topo.links.len() * 2);
        for (li, l) in topo.links.iter().enumerate() {
            if l.a >= n || l.b >= n || l.a == l.b {
                return Err(NetError(format!(
                    "link {li}: endpoints must be two different existing nodes"
                )));
            }
            if l.rate_bps == 0 {
                return Err(NetError(format!("link {li}: rate must be positive")));
            }
            for (from, to, buf) in [(l.a, l.b, l.buffer_a_bytes), (l.b, l.a, l.buffer_b_bytes)] {
                let default = match kinds[from] {
                    NodeKind::Host => cfg.host_buffer_bytes,
                    NodeKind::Switch => cfg.switch_buffer_bytes,
                };
                let buffer_bytes = buf.unwrap_or(default);
                let id = ports.len() as u32;
                ports.push(Port {
                    from: from as u32,
                    to: to as u32,
                    rate_bps: l.rate_bps,
                    ps_per_byte_q32: (((8u128 * 1_000_000_000_000u128) << 32) / l.rate_bps as u128) as u64,
                    delay: l.delay,
                    qdisc: Qdisc::DropTail(DropTail::new(buffer_bytes)),
                    buffer_bytes,
                    busy_until: Time::ZERO,
                    waiting: VecDeque::new(),
                    waiting_bytes: 0,
                    pipe: VecDeque::new(),
                    stats: PortStats::default(),
                    capture: None,
                });
                out[from].push((id, to as u32));
                if kinds[from] == NodeKind::Host {
                    if nodes[from].nic != u32::MAX {
                        return Err(NetError(format!(
                            "host {} has more than one link; hosts have exactly one NIC",
                            nodes[from].name
                        )));
                    }
                    nodes[from].nic = id;
                }
            }
        }
        if let Some(h) = nodes
            .iter()
            .find(|x| x.kind == NodeKind::Host && x.nic == u32::MAX)
        {
            return Err(NetError(format!("host {} has no link", h.name)));
        }
        let links: Vec<(u32, u32)> = ports.iter().map(|p: &Port| (p.from, p.to)).collect();
        let graph = Graph::new(kinds.iter().map(|&k| k == NodeKind::Host).collect(), &links);
        let router = Router::new(graph, routing)
            .map_err(|e| NetError(format!("routing '{}': {e}", routing.name())))?;
        Ok(Net {
            pair_routing: false,
            nodes,
            kinds,
            out,
            ports,
            pool: PacketPool::new(),
            routes: RouteTable::default(),
            router,
            path_scratch: Vec::new(),
            spray: routing.per_packet(),
            sprayed_packets: 0,
            spray_seed: xco_core::rng::mix64(seed, 0x5B4A_7ED5),
            framing: cfg.framing,
            flows: Vec::new(),
            captures: Vec::new(),
            data_packet_hops: 0,
            blocked: vec![Vec::new(); n],
            room_event: vec![false; n],
            wakeups: Vec::new(),
        })
    }

    /// Offset of a route from host `src` to host `dst` for a flow with
    /// `flow_hash` (ignored with `pair_routing`: then one path per host pair).
    pub fn route(&mut self, src: u32, dst: u32, flow_hash: u64) -> Result<u32, NetError> {
        let flow_hash = if self.pair_routing {
            pair_hash(src, dst)
        } else {
            flow_hash
        };
        self.path_scratch.clear();
        if !self.router.path(src, dst, flow_hash, &mut self.path_scratch) {
            return Err(NetError(format!(
                "no path from {} to {}",
                self.nodes[src as usize].name, self.nodes[dst as usize].name
            )));
        }
        Ok(self.routes.intern(&self.path_scratch))
    }

    /// Frame bytes of packet `p` as stored in buffers.
    #[inline(always)]
    fn frame_bytes(&self, p: &Packet) -> u32 {
        p.ip_bytes + self.framing.frame_overhead_bytes
    }

    /// Count `pkt` as sent by its flow (it left its transport).
    #[inline]
    pub fn count_sent(&mut self, pkt: PktId) {
        let p = &self.pool[pkt];
        self.flows[p.flow as usize].wire_bytes_sent += p.ip_bytes as u64;
    }

    /// Send a packet a host's transport built straight to the host's NIC.
    #[inline]
    pub fn host_send(&mut self, now: Time, ev: &mut EventQueue, pkt: PktId) {
        self.count_sent(pkt);
        if self.spray {
            self.spray(pkt);
        }
        let nic = self.nodes[self.pool[pkt].src as usize].nic;
        self.enqueue(now, ev, nic, pkt);
    }

    /// Drop `pkt` at its own host (a full XCo V2V queue), counted against its flow.
    pub fn drop_at_host(&mut self, pkt: PktId) {
        let p = &self.pool[pkt];
        let f = &mut self.flows[p.flow as usize];
        f.wire_bytes_dropped += p.ip_bytes as u64;
        f.wire_packets_dropped += 1;
        self.pool.release(pkt);
    }

    /// Ask for a `NicRoom` event when `host`'s oldest waiting packet starts.
    pub fn wait_for_room(&mut self, ev: &mut EventQueue, host: u32) {
        if !self.room_event[host as usize] {
            let nic = self.nodes[host as usize].nic as usize;
            if let Some(t) = self.ports[nic].next_start() {
                self.room_event[host as usize] = true;
                ev.schedule(t, Event::NicRoom(host));
            }
        }
    }

    /// The router packets follow (models that must see the packets' paths clone it).
    pub fn router(&self) -> &Router {
        &self.router
    }

    /// Per-packet routing: give `pkt` a path of its own, drawn from the run's seed.
    #[cold]
    fn spray(&mut self, pkt: PktId) {
        let p = self.pool[pkt];
        let draw = xco_core::rng::mix64(self.spray_seed, self.sprayed_packets);
        self.sprayed_packets += 1;
        self.path_scratch.clear();
        if self.router.path(p.src, p.dst, draw, &mut self.path_scratch) {
            self.pool[pkt].route = self.routes.intern(&self.path_scratch);
        }
    }

    /// Offer `pkt` to output `port`: admit it into its serialisation slot or drop it.
    #[inline]
    pub fn enqueue(&mut self, now: Time, ev: &mut EventQueue, port: u32, pkt: PktId) {
        let bytes = self.frame_bytes(&self.pool[pkt]);
        let gap = self.framing.gap_bytes;
        let pt = &mut self.ports[port as usize];
        pt.stats.arrived_bytes += bytes as u64;
        pt.stats.arrived_packets += 1;
        let start = if pt.busy_until <= now {
            now // idle: nothing is waiting either
        } else {
            let backlog = pt.backlog_bytes(now);
            if pt.qdisc.admit(now, bytes, backlog) == Verdict::Drop {
                self.drop_packet(port, pkt);
                return;
            }
            pt.waiting.push_back((pt.busy_until, bytes));
            pt.waiting_bytes += bytes as u64;
            pt.stats.max_backlog_bytes = pt.stats.max_backlog_bytes.max(pt.waiting_bytes);
            pt.busy_until
        };
        let done = start + pt.serialization(bytes + gap);
        pt.busy_until = done;
        let arrive = done + pt.delay;
        if pt.pipe.is_empty() {
            ev.schedule(arrive, Event::PipeArrive(port));
        }
        pt.pipe.push_back((arrive, pkt));
        pt.stats.admitted_bytes += bytes as u64;
        pt.stats.admitted_packets += 1;
        if let Some(c) = pt.capture {
            self.captures[c as usize].record(start, &self.pool[pkt]);
        }
    }

    fn drop_packet(&mut self, port: u32, pkt: PktId) {
        let p = &self.pool[pkt];
        let bytes = self.frame_bytes(p);
        let st = &mut self.ports[port as usize].stats;
        st.dropped_bytes += bytes as u64;
        st.dropped_packets += 1;
        st.bin_drops += 1;
        let f = &mut self.flows[p.flow as usize];
        f.wire_bytes_dropped += p.ip_bytes as u64;
        f.wire_packets_dropped += 1;
        self.pool.release(pkt);
    }

    /// True if host `host`'s NIC queue can take `frame_bytes` more of TCP data
    /// and still keep room for ACKs and retransmissions (four MTU-sized frames).
    ///
    /// TCP never loses packets in its own host's queue (Linux's TCP Small
    /// Queues block the socket instead); this is the check that blocks it.
    #[inline]
    pub fn nic_has_room(&mut self, now: Time, host: u32, frame_bytes: u32) -> bool {
        let pt = &mut self.ports[self.nodes[host as usize].nic as usize];
        let headroom = 4 * 9_100u64.min(pt.buffer_bytes / 8);
        pt.backlog_bytes(now) + frame_bytes as u64 + headroom <= pt.buffer_bytes
    }

    /// TCP endpoint `ep` on `host` waits for room in the NIC queue: it is
    /// woken (through [`Net::wakeups`]) when the oldest waiting packet starts.
    pub fn block_until_room(&mut self, ev: &mut EventQueue, host: u32, ep: u32) {
        let b = &mut self.blocked[host as usize];
        if !b.contains(&ep) {
            b.push(ep);
        }
        self.wait_for_room(ev, host);
    }

    /// The room check of `host` fired: queue its blocked endpoints for waking.
    pub fn on_nic_room(&mut self, host: u32) {
        self.room_event[host as usize] = false;
        self.wakeups.append(&mut self.blocked[host as usize]);
    }

    /// The head packet of `port`'s pipe arrives; returns it if it reached a host.
    #[inline]
    pub fn on_pipe_arrive(&mut self, now: Time, ev: &mut EventQueue, port: u32) -> Option<PktId> {
        let pt = &mut self.ports[port as usize];
        match pt.pipe.front() {
            Some(&(at, _)) if at == now => {}
            _ => return None, // stale: the pipe was emptied by a test harness
        }
        let (_, pkt) = pt.pipe.pop_front()?;
        if let Some(&(next, _)) = pt.pipe.front() {
            ev.schedule(next, Event::PipeArrive(port));
        }
        let to = pt.to;
        let p = &mut self.pool[pkt];
        pt.stats.delivered_bytes += (p.ip_bytes + self.framing.frame_overhead_bytes) as u64;
        if p.payload_bytes > 0 {
            self.data_packet_hops += 1;
        }
        if self.kinds[to as usize] == NodeKind::Host {
            debug_assert_eq!(to, p.dst, "packet delivered to the wrong host");
            self.flows[p.flow as usize].wire_bytes_received += p.ip_bytes as u64;
            return Some(pkt);
        }
        p.hop += 1;
        let next = self.routes.port(p.route, p.hop);
        self.enqueue(now, ev, next, pkt);
        None
    }

    /// Allocate a packet.
    #[inline(always)]
    pub fn alloc(&mut self, p: Packet) -> PktId {
        self.pool.alloc(p)
    }

    /// Release a packet that reached its end.
    #[inline(always)]
    pub fn release(&mut self, pkt: PktId) {
        self.pool.release(pkt)
    }

    /// Remove every packet waiting at or travelling from `port` (test and
    /// tool support); returns them in order, released from the pool.
    pub fn take_packets(&mut self, port: u32) -> Vec<Packet> {
        let pt = &mut self.ports[port as usize];
        pt.waiting.clear();
        pt.waiting_bytes = 0;
        pt.busy_until = Time::ZERO;
        let ids: Vec<PktId> = pt.pipe.drain(..).map(|(_, p)| p).collect();
        ids.into_iter()
            .map(|id| {
                let p = self.pool[id];
                self.pool.release(id);
                p
            })
            .collect()
    }

    /// Name of node `n`.
    pub fn name(&self, n: u32) -> &str {
        &self.nodes[n as usize].name
    }

    /// Node index by name.
    pub fn node(&self, name: &str) -> Option<u32> {
        self.nodes.iter().position(|x| x.name == name).map(|i| i as u32)
    }

    /// The output port from `from` to `to`, if they are neighbours.
    pub fn port_between(&self, from: u32, to: u32) -> Option<u32> {
        self.out[from as usize]
            .iter()
            .find(|&&(_, v)| v == to)
            .map(|&(p, _)| p)
    }
}
