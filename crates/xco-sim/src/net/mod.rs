//! The network: output-queued ports run by queue disciplines, serialisation
//! at line rate, propagation delay, and store-and-forward switches that
//! follow precomputed routes.
//!
//! A port ([`port::Port`]) is a buffer, a serialiser and a pipe, in one of
//! two modes ([`qdisc`] describes the seam):
//!
//! - **FIFO** (the default, drop-tail; RED, [`red`], is another arrival
//!   hook on a FIFO port): an admitted packet's serialisation
//!   slot is known the moment it arrives (right after everything admitted
//!   before it), so it enters the pipe at once, stamped with its arrival time
//!   at the far end. Only the pipe's head packet has a pending arrival event
//!   and the port needs no departure event: one event per packet per hop.
//! - **Scheduled** (SFQ, [`sfq`]; a reference FIFO, [`scheduled`]): the
//!   discipline holds the waiting packets and picks the next one at each
//!   departure, one pending [`Event::PortDepart`] while the port is busy.
//!
//! Every arrival, at an idle port too, goes through the discipline's arrival
//! hook, which sees the clock, the input, the packet and the backlog and
//! answers admit, admit-and-mark (ECN CE), drop or drop-and-notify (a
//! [`DropNotice`] for a later PDN layer). Ports count arrivals and drops per
//! input and drops per reason.

pub mod drop_runs;
pub mod onoff;
pub mod packet;
pub mod pcap;
pub mod pdn;
pub mod port;
pub mod prefetch;
pub mod qdisc;
pub mod red;
pub mod routing;
pub mod scheduled;
pub mod sfq;
pub mod step_mark;
pub mod timeline;
pub mod topology;

use crate::engine::{Event, EventQueue};
use crate::stats::FlowStats;
use packet::{Ecn, Packet, PacketPool, PktId, PktKind};
use pcap::CaptureBuffer;
use port::{InputCount, InputStats, Port};
use qdisc::{Arrival, DropReason, DropTail, Input, Qdisc, Queued, Verdict};
use routing::{Graph, RouteTable, Router, RoutingMode};
use topology::{NodeKind, Topology};
use xco_core::rng::Rng;
use xco_core::{Dur, Time};

pub use port::PortStats;

/// Switches of at most this many ports count arrivals and drops per input
/// port; a larger one (a star's hub) counts its ports' totals only.
pub const MAX_COUNTED_INPUTS: usize = 128;

/// The most (switch port, input) pairs a network counts one by one. The
/// pairs grow with the sum of the switches' squared port counts: a k = 84
/// fat-tree has 62 million (3.5 GB of counters and a port_inputs.csv of
/// as many rows), a k = 24 one 414,720, whose counters, read at random on
/// every hop, cost 16 % of that fabric's run time (measured: docs/speed.md).
/// A network with more counts every port's totals only, as a switch of
/// more than [`MAX_COUNTED_INPUTS`] ports does; 100,000 pairs keep every
/// fat-tree up to k = 16 (81,920 pairs) and every reproduction counted per
/// input.
pub const MAX_COUNTED_PAIRS: usize = 100_000;

/// The first of the ports' timing-noise streams of the run's seed (port `p` draws from `JITTER_STREAM + p`).
const JITTER_STREAM: u64 = 0x7117_0000_0000;

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
    /// Queue timelines of the ports that have one.
    pub timelines: Vec<timeline::QueueTimeline>,
    /// Data packets (payload > 0) that crossed a link.
    pub data_packet_hops: u64,
    /// Per node: the ports (links) coming into it, in input-index order.
    ins: Vec<Vec<u32>>,
    /// Drops whose discipline asked for a notification, oldest first; the
    /// layer that builds notifications (PDN) drains it. Nothing does yet.
    pub drop_notices: Vec<DropNotice>,
    /// Scratch for packets a scheduled discipline evicts.
    evicted: Vec<Queued>,
    /// PDN's notification queues and counters, when PDN runs.
    pdn: Option<Box<pdn::PdnState>>,
    /// Per (port, input) arrivals: port `p`'s slice starts at `ports[p].inputs_at`.
    input_arrivals: Vec<InputCount>,
    /// Per (port, input) drops, laid out as `input_arrivals`.
    input_drops: Vec<InputCount>,
    /// Per (port, input) runs of consecutive drops, laid out as `input_arrivals`.
    drop_runs: drop_runs::DropRuns,
}

/// A drop for which the discipline answered [`Verdict::DropNotify`]: what a
/// notification to the sender is built from.
#[derive(Clone, Copy, Debug)]
pub struct DropNotice {
    /// When the packet was dropped.
    pub at: Time,
    /// The port that dropped it.
    pub port: u32,
    /// The input it arrived by (the reverse path starts there).
    pub input: Input,
    /// Why it was dropped.
    pub reason: DropReason,
    /// A copy of the dropped packet's headers.
    pub packet: Packet,
}

/// One row of per-input counters: arrivals and drops at `port` from one input.
#[derive(Clone, Debug)]
pub struct InputRow {
    /// The output port.
    pub port: u32,
    /// The neighbour the packets came from (`None`: the port's own host, or
    /// all inputs of a port of a switch larger than [`MAX_COUNTED_INPUTS`]).
    pub from_node: Option<u32>,
    /// The input's index at the port.
    pub input: u32,
    /// The counters.
    pub stats: InputStats,
}

/// Drop runs at one (switch port, input): see [`drop_runs`].
#[derive(Clone, Debug)]
pub struct DropRunRow {
    /// The output port.
    pub port: u32,
    /// The input's index at the port.
    pub input: u32,
    /// The neighbour the input's frames came from.
    pub from_node: Option<u32>,
    /// Episodes by run length.
    pub histogram: drop_runs::RunHistogram,
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
        let mut ins: Vec<Vec<u32>> = vec![Vec::new(); n];
        let mut ports: Vec<Port> = Vec::with_capacity(topo.links.len() * 2);
        let mut in_degree = vec![0usize; n];
        let mut n_inputs = 0u32;
        for (li, l) in topo.links.iter().enumerate() {
            if l.a >= n || l.b >= n || l.a == l.b {
                return Err(NetError(format!(
                    "link {li}: endpoints must be two different existing nodes"
                )));
            }
            in_degree[l.a] += 1;
            in_degree[l.b] += 1;
        }
        // every switch port of a counted switch counts one pair per input
        let pairs: usize = (0..n)
            .filter(|&v| kinds[v] == NodeKind::Switch && in_degree[v] <= MAX_COUNTED_INPUTS)
            .map(|v| in_degree[v] * in_degree[v])
            .sum();
        let count_inputs = pairs <= MAX_COUNTED_PAIRS;
        for (li, l) in topo.links.iter().enumerate() {
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
                // a switch port counts per input link; a host NIC's one input is
                // its host, counted in the port's own totals (and so is every
                // input of a switch of more than MAX_COUNTED_INPUTS ports, e.g.
                // the hub of a 100,000-host star, and of every switch of a
                // network of more than MAX_COUNTED_PAIRS pairs: their counters
                // would grow with the square of the ports)
                let inputs = match kinds[from] {
                    NodeKind::Switch if count_inputs && in_degree[from] <= MAX_COUNTED_INPUTS => {
                        in_degree[from] as u32
                    }
                    _ => 0,
                };
                let mut port = Port::new(
                    from as u32,
                    to as u32,
                    l.rate_bps,
                    l.delay,
                    buffer_bytes,
                    n_inputs,
                    inputs,
                );
                n_inputs += inputs;
                port.in_index = ins[to].len() as u32;
                ins[to].push(id);
                ports.push(port);
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
            timelines: Vec::new(),
            data_packet_hops: 0,
            ins,
            drop_notices: Vec::new(),
            pdn: None,
            evicted: Vec::new(),
            input_arrivals: vec![InputCount::default(); n_inputs as usize],
            input_drops: vec![InputCount::default(); n_inputs as usize],
            drop_runs: drop_runs::DropRuns::new(n_inputs as usize),
        })
    }

    /// The nodes a flow on the route at `offset` crosses from host `src` to
    /// host `dst`, space-separated (`h2 e1_0 a1_0 e0_0 h0`); `per-packet`
    /// when each packet draws its own path.
    pub fn route_text(&self, offset: u32, src: u32, dst: u32) -> String {
        if self.spray {
            return "per-packet".to_string();
        }
        let mut out = self.name(src).to_string();
        let mut at = src;
        for hop in 0..u16::MAX {
            if at == dst {
                break;
            }
            let port = &self.ports[self.routes.port(offset, hop) as usize];
            at = port.to;
            out.push(' ');
            out.push_str(self.name(at));
        }
        out
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

    /// Timing noise: every frame a host sends reaches its switch up to
    /// `host` later, every frame a switch forwards up to `switch` later
    /// (uniform; each port its own stream of the run's `seed`; FIFO kept).
    pub fn set_jitter(&mut self, host: Dur, switch: Dur, seed: u64) {
        for (id, p) in self.ports.iter_mut().enumerate() {
            let max = match self.kinds[p.from as usize] {
                NodeKind::Host => host,
                NodeKind::Switch => switch,
            };
            p.set_jitter(max, Rng::stream(seed, JITTER_STREAM + id as u64));
        }
    }

    /// Bound every host NIC's queue to `packets` packets (Linux's `txqueuelen`).
    pub fn set_host_txqueuelen(&mut self, packets: u32) {
        for n in &self.nodes {
            if n.kind == NodeKind::Host {
                self.ports[n.nic as usize].limit_packets = packets;
            }
        }
    }

    /// Drop `pkt` at its own host (a full XCo V2V queue), counted against its flow.
    pub fn drop_at_host(&mut self, pkt: PktId) {
        let p = &self.pool[pkt];
        let f = &mut self.flows[p.flow as usize];
        f.wire_bytes_dropped += p.ip_bytes as u64;
        f.wire_packets_dropped += 1;
        self.pool.release(pkt);
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

    /// Offer `pkt`, sent by the port's own host, to output `port` (its NIC).
    #[inline]
    pub fn enqueue(&mut self, now: Time, ev: &mut EventQueue, port: u32, pkt: PktId) {
        // a NIC's one input is its host: its counters are the port's own
        self.offer::<false>(now, ev, port, 0, pkt);
    }

    /// Offer `pkt`, arriving by input `input` (its index: [`Net::input_of`]),
    /// to output `port`: the discipline admits (FIFO: into its serialisation
    /// slot at once), marks or drops it.
    ///
    /// Drop-tail's arrival hook is written out here, inline: an idle port
    /// admits at once, a busy one compares the backlog with the buffer.
    #[inline]
    pub fn enqueue_from(&mut self, now: Time, ev: &mut EventQueue, port: u32, input: u32, pkt: PktId) {
        self.offer::<true>(now, ev, port, input, pkt);
    }

    /// [`Net::enqueue_from`]; `COUNT_INPUT` false for a host NIC (whose one
    /// input's counters are the port's: [`Net::input_stats`] reads those).
    #[inline(always)]
    fn offer<const COUNT_INPUT: bool>(
        &mut self,
        now: Time,
        ev: &mut EventQueue,
        port: u32,
        input: u32,
        pkt: PktId,
    ) {
        let bytes = self.pool[pkt].ip_bytes + self.framing.frame_overhead_bytes;
        let pt = &mut self.ports[port as usize];
        pt.stats.arrived_bytes += bytes as u64;
        pt.stats.arrived_packets += 1;
        debug_assert!(
            COUNT_INPUT || pt.n_inputs == 0,
            "a host NIC has no input counters"
        );
        if COUNT_INPUT && pt.n_inputs > 0 {
            debug_assert!(input < pt.n_inputs, "input {input} of port {port}");
            self.input_arrivals[(pt.inputs_at + input) as usize].add(bytes);
        }
        let Qdisc::DropTail(q) = &pt.qdisc else {
            self.enqueue_hooked(now, ev, port, input, pkt, bytes);
            return;
        };
        let idle = pt.busy_until <= now; // then nothing is waiting either
        if !idle {
            let limit_bytes = q.limit_bytes;
            if !DropTail::fits(limit_bytes, pt.fifo_backlog_bytes(now), bytes)
                || (!COUNT_INPUT && pt.waiting.len() >= pt.limit_packets as usize)
            {
                self.drop_arriving(now, port, input, pkt, DropReason::TailDrop, false);
                return;
            }
        }
        self.admit_fifo(now, ev, port, input, pkt, bytes, idle);
    }

    /// The arrival at a FIFO port with another hook, or at a scheduled port.
    #[inline(never)]
    fn enqueue_hooked(
        &mut self,
        now: Time,
        ev: &mut EventQueue,
        port: u32,
        input: u32,
        pkt: PktId,
        bytes: u32,
    ) {
        let input = self.input(port, input);
        let pt = &mut self.ports[port as usize];
        if let Qdisc::Scheduled(_) = pt.qdisc {
            self.enqueue_scheduled(now, ev, port, input, pkt, bytes);
            return;
        }
        let idle = pt.busy_until <= now; // then nothing is waiting either
        let arrival = Arrival {
            now,
            input,
            frame_bytes: bytes,
            backlog_bytes: if idle { 0 } else { pt.fifo_backlog_bytes(now) },
            idle_since: if idle { Some(pt.busy_until) } else { None },
        };
        let Qdisc::Fifo(hook) = &mut pt.qdisc else {
            unreachable!("drop-tail runs inline in enqueue_from")
        };
        let p = &mut self.pool[pkt];
        match hook.on_arrival(&arrival, p) {
            Verdict::Admit => {}
            Verdict::AdmitMarked => {
                p.set_ecn(Ecn::Ce);
                pt.stats.marked_packets += 1;
            }
            Verdict::Drop(reason) => return self.drop_arriving(now, port, input.index, pkt, reason, false),
            Verdict::DropNotify(reason) => {
                self.drop_arriving(now, port, input.index, pkt, reason, true);
                if self.pdn.is_some() {
                    self.pdn_flush(now, ev);
                }
                return;
            }
        }
        self.admit_fifo(now, ev, port, input.index, pkt, bytes, idle);
    }

    /// FIFO mode: put an admitted `pkt` of `bytes` into its serialisation
    /// slot, right after everything admitted before it.
    #[inline(always)]
    #[allow(clippy::too_many_arguments)]
    fn admit_fifo(
        &mut self,
        now: Time,
        ev: &mut EventQueue,
        port: u32,
        input: u32,
        pkt: PktId,
        bytes: u32,
        idle: bool,
    ) {
        let gap = self.framing.gap_bytes;
        let pt = &mut self.ports[port as usize];
        let start = if idle {
            now
        } else {
            pt.waiting.push_back((pt.busy_until, bytes));
            pt.waiting_bytes += bytes as u64;
            pt.stats.max_backlog_bytes = pt.stats.max_backlog_bytes.max(pt.waiting_bytes);
            pt.busy_until
        };
        let done = start + pt.serialization(bytes + gap);
        pt.busy_until = done;
        let mut arrive = done + pt.delay;
        // one test for every rarely used admission feature (taps, timing noise)
        let pt = if pt.cold() {
            arrive = self.admit_cold(now, port, input, pkt, bytes, start, arrive);
            &mut self.ports[port as usize]
        } else {
            pt
        };
        if pt.pipe.is_empty() {
            ev.schedule_arrival(arrive, port, pkt);
        }
        pt.pipe.push_back((arrive, pkt));
        pt.stats.admitted_bytes += bytes as u64;
        pt.stats.admitted_packets += 1;
    }

    /// A FIFO admission at a captured port, one with a queue timeline or one
    /// with timing noise: record it (the frame starts serialising at
    /// `start`) and return when it reaches the far end (`arrive` without noise).
    #[cold]
    #[inline(never)]
    #[allow(clippy::too_many_arguments)]
    fn admit_cold(
        &mut self,
        now: Time,
        port: u32,
        input: u32,
        pkt: PktId,
        bytes: u32,
        start: Time,
        arrive: Time,
    ) -> Time {
        let pt = &mut self.ports[port as usize];
        let arrive = pt.jittered(arrive);
        if !pt.tapped() {
            return arrive;
        }
        let pt = &self.ports[port as usize];
        if pt.capture != port::NO_TAP {
            self.captures[pt.capture as usize].record(start, &self.pool[pkt]);
        }
        if pt.timeline != port::NO_TAP {
            let t = &mut self.timelines[pt.timeline as usize];
            t.record(now, now, input, bytes, timeline::TimelineEvent::Enqueue);
            t.record(now, start, input, bytes, timeline::TimelineEvent::Dequeue);
        }
        arrive
    }

    /// Record `event` of a frame of `bytes` from `input` at `port`'s queue timeline, if it has one.
    #[inline]
    fn tap_timeline(&mut self, now: Time, port: u32, input: u32, bytes: u32, event: timeline::TimelineEvent) {
        let t = self.ports[port as usize].timeline;
        if t != port::NO_TAP {
            self.timelines[t as usize].record(now, now, input, bytes, event);
        }
    }

    /// Input `index` of output `port`, with the link it stands for.
    fn input(&self, port: u32, index: u32) -> Input {
        let from = self.ports[port as usize].from as usize;
        match self.kinds[from] {
            NodeKind::Host => Input::LOCAL,
            NodeKind::Switch => Input {
                link: self.ins[from][index as usize],
                index,
            },
        }
    }

    /// The scheduled-mode half of [`Net::enqueue_from`] (arrival counted already).
    #[inline(never)]
    fn enqueue_scheduled(
        &mut self,
        now: Time,
        ev: &mut EventQueue,
        port: u32,
        input: Input,
        pkt: PktId,
        bytes: u32,
    ) {
        // a departure due now whose event has not fired yet: start it first,
        // so the backlog is what a FIFO port would see
        if self.ports[port as usize].busy_until <= now {
            self.start_next(now, ev, port);
        }
        let pt = &mut self.ports[port as usize];
        let idle = pt.busy_until <= now;
        let Qdisc::Scheduled(s) = &mut pt.qdisc else {
            unreachable!("a scheduled port")
        };
        let arrival = Arrival {
            now,
            input,
            frame_bytes: bytes,
            backlog_bytes: s.backlog_bytes(),
            idle_since: if idle { Some(pt.busy_until) } else { None },
        };
        let q = Queued {
            pkt,
            frame_bytes: bytes,
            input: input.index,
        };
        let mut evicted = std::mem::take(&mut self.evicted);
        let p = &mut self.pool[pkt];
        let verdict = s.on_arrival(&arrival, q, p, &mut evicted);
        let admitted = match verdict {
            Verdict::Admit | Verdict::AdmitMarked => {
                if verdict == Verdict::AdmitMarked {
                    p.set_ecn(Ecn::Ce);
                    pt.stats.marked_packets += 1;
                }
                pt.stats.admitted_bytes += bytes as u64;
                pt.stats.admitted_packets += 1;
                self.tap_timeline(now, port, input.index, bytes, timeline::TimelineEvent::Enqueue);
                true
            }
            Verdict::Drop(reason) => {
                self.drop_arriving(now, port, input.index, pkt, reason, false);
                false
            }
            Verdict::DropNotify(reason) => {
                self.drop_arriving(now, port, input.index, pkt, reason, true);
                false
            }
        };
        for q in evicted.drain(..) {
            self.evict(now, port, q);
        }
        self.evicted = evicted;
        if self.pdn.is_some() && !self.drop_notices.is_empty() {
            self.pdn_flush(now, ev);
        }
        if admitted && idle {
            self.start_next(now, ev, port);
        }
        let pt = &mut self.ports[port as usize];
        let backlog = pt.backlog_bytes(now);
        pt.stats.max_backlog_bytes = pt.stats.max_backlog_bytes.max(backlog);
    }

    /// Scheduled mode: if the discipline has a packet, start serialising it
    /// at `now` (the port must be free) and make sure a departure event is pending.
    fn start_next(&mut self, now: Time, ev: &mut EventQueue, port: u32) {
        let gap = self.framing.gap_bytes;
        let pt = &mut self.ports[port as usize];
        let Qdisc::Scheduled(s) = &mut pt.qdisc else {
            return;
        };
        let next = s.dequeue(now);
        // PDN: a waiting notification rides on the frame, or alone in an empty one
        let notice = if self.pdn.is_some() {
            self.take_notice(port, next.is_some())
        } else {
            None
        };
        let (pkt, frame_bytes) = match (next, notice) {
            (Some(q), None) => (Some(q.pkt), q.frame_bytes),
            (Some(q), Some(_)) => (Some(q.pkt), q.frame_bytes + pdn::NOTICE_BYTES),
            (None, Some(_)) => (None, pdn::EMPTY_FRAME_BYTES),
            (None, None) => return,
        };
        let pt = &mut self.ports[port as usize];
        let done = now + pt.serialization(frame_bytes + gap);
        pt.busy_until = done;
        let arrive = pt.jittered(done + pt.delay);
        if pt.pipe.is_empty() {
            match pkt {
                Some(pkt) => ev.schedule_arrival(arrive, port, pkt),
                None => ev.schedule(arrive, Event::PipeArrive(port)),
            }
        }
        if let Some(pkt) = pkt {
            pt.pipe.push_back((arrive, pkt));
        }
        if let Some(n) = notice {
            pt.pipe.push_back((arrive, n));
        }
        if pt.depart_at == Time::NEVER {
            pt.depart_at = done;
            ev.schedule(done, Event::PortDepart(port));
        }
        if let Some(q) = next {
            if pt.timeline != port::NO_TAP {
                self.timelines[pt.timeline as usize].record(
                    now,
                    now,
                    q.input,
                    q.frame_bytes,
                    timeline::TimelineEvent::Dequeue,
                );
            }
        }
        let pt = &self.ports[port as usize];
        if pt.capture != port::NO_TAP {
            let c = pt.capture;
            match (pkt, notice) {
                (Some(pkt), None) => self.captures[c as usize].record(now, &self.pool[pkt]),
                (Some(pkt), Some(_)) => self.captures[c as usize].record_carrier(now, &self.pool[pkt]),
                (None, Some(n)) => self.captures[c as usize].record_empty_frame(now, &self.pool[n]),
                (None, None) => {}
            }
        }
    }

    /// The departure event of scheduled `port`: the frame in service is out;
    /// the discipline picks the next one (out of line: FIFO ports, the common
    /// case, never get here, and the event loop stays small).
    #[inline(never)]
    pub fn on_port_depart(&mut self, now: Time, ev: &mut EventQueue, port: u32) {
        let pt = &mut self.ports[port as usize];
        if pt.depart_at != now {
            return; // stale: the port was emptied by a test harness
        }
        pt.depart_at = Time::NEVER;
        if pt.busy_until > now {
            // an arrival at this instant already started the next frame
            pt.depart_at = pt.busy_until;
            ev.schedule(pt.busy_until, Event::PortDepart(port));
            return;
        }
        self.start_next(now, ev, port);
    }

    /// Drop an arriving `pkt` from input `input` at `port` for `reason`,
    /// with a notice if `notify`.
    fn drop_arriving(
        &mut self,
        now: Time,
        port: u32,
        input: u32,
        pkt: PktId,
        reason: DropReason,
        notify: bool,
    ) {
        let p = &self.pool[pkt];
        let bytes = self.frame_bytes(p);
        let pt = &mut self.ports[port as usize];
        pt.stats.count_drop(bytes, reason);
        if pt.n_inputs > 0 {
            let at = (pt.inputs_at + input) as usize;
            self.input_drops[at].add(bytes);
            self.drop_runs.on_drop(at, self.input_arrivals[at].packets, true);
        }
        if notify {
            pt.stats.notify_packets += 1;
            let input = self.input(port, input);
            self.drop_notices.push(DropNotice {
                at: now,
                port,
                input,
                reason,
                packet: *p,
            });
        }
        self.tap_timeline(now, port, input, bytes, timeline::TimelineEvent::Drop);
        self.count_flow_drop(pkt);
    }

    /// Drop `q`, admitted earlier, that a scheduled discipline pushed out of `port`.
    fn evict(&mut self, now: Time, port: u32, q: Queued) {
        let pt = &mut self.ports[port as usize];
        pt.stats.admitted_bytes -= q.frame_bytes as u64;
        pt.stats.admitted_packets -= 1;
        pt.stats.count_drop(q.frame_bytes, DropReason::Discipline);
        if pt.n_inputs > 0 {
            let at = (pt.inputs_at + q.input) as usize;
            self.input_drops[at].add(q.frame_bytes);
            self.drop_runs.on_drop(at, self.input_arrivals[at].packets, false);
        }
        self.tap_timeline(now, port, q.input, q.frame_bytes, timeline::TimelineEvent::Evict);
        self.count_flow_drop(q.pkt);
    }

    /// Count `pkt` as lost by its flow and release it.
    fn count_flow_drop(&mut self, pkt: PktId) {
        let p = &self.pool[pkt];
        let f = &mut self.flows[p.flow as usize];
        f.wire_bytes_dropped += p.ip_bytes as u64;
        f.wire_packets_dropped += 1;
        self.pool.release(pkt);
    }

    /// Replace `port`'s discipline (its buffer size becomes the discipline's
    /// limit); the port must hold no packets.
    pub fn set_qdisc(&mut self, port: u32, qdisc: Qdisc) -> Result<(), NetError> {
        let pt = self
            .ports
            .get_mut(port as usize)
            .ok_or_else(|| NetError(format!("no port {port}")))?;
        let busy = !pt.pipe.is_empty() || pt.waiting_bytes > 0 || pt.depart_at != Time::NEVER;
        if busy || matches!(&pt.qdisc, Qdisc::Scheduled(s) if s.backlog_bytes() > 0) {
            return Err(NetError(format!(
                "port {port} holds packets: set disciplines before traffic starts"
            )));
        }
        pt.buffer_bytes = qdisc.limit_bytes();
        pt.qdisc = qdisc;
        Ok(())
    }

    /// The input of node `node` that link `port` feeds (`port` must end at `node`).
    pub fn input_of(&self, port: u32) -> Input {
        Input {
            link: port,
            index: self.ports[port as usize].in_index,
        }
    }

    /// The neighbour behind input `index` of output `port` (`None`: the port's own host).
    pub fn input_node(&self, port: u32, index: u32) -> Option<u32> {
        let from = self.ports[port as usize].from as usize;
        match self.kinds[from] {
            NodeKind::Host => None,
            NodeKind::Switch => Some(self.ports[self.ins[from][index as usize] as usize].from),
        }
    }

    /// Arrivals and drops at `port` per input, by input index (a host NIC
    /// has one input, its own host, whose counters are the port's; a port of
    /// a switch larger than [`MAX_COUNTED_INPUTS`] reports its totals as one row).
    pub fn input_stats(&self, port: u32) -> Vec<InputStats> {
        let p = &self.ports[port as usize];
        if p.n_inputs == 0 {
            return vec![InputStats {
                arrived_packets: p.stats.arrived_packets,
                arrived_bytes: p.stats.arrived_bytes,
                dropped_packets: p.stats.dropped_packets,
                dropped_bytes: p.stats.dropped_bytes,
            }];
        }
        let range = p.inputs_at as usize..(p.inputs_at + p.n_inputs) as usize;
        self.input_arrivals[range.clone()]
            .iter()
            .zip(&self.input_drops[range])
            .map(|(a, d)| InputStats {
                arrived_packets: a.packets,
                arrived_bytes: a.bytes,
                dropped_packets: d.packets,
                dropped_bytes: d.bytes,
            })
            .collect()
    }

    /// Per-input counters of every port, one row per (port, input), in port order.
    pub fn input_rows(&self) -> Vec<InputRow> {
        let mut rows = Vec::new();
        for id in 0..self.ports.len() {
            for (i, st) in self.input_stats(id as u32).into_iter().enumerate() {
                let counted = self.ports[id].n_inputs > 0;
                rows.push(InputRow {
                    port: id as u32,
                    from_node: if counted {
                        self.input_node(id as u32, i as u32)
                    } else {
                        None
                    },
                    input: i as u32,
                    stats: st,
                });
            }
        }
        rows
    }

    /// Runs of consecutive drops per (switch port, input) that dropped
    /// anything, in port then input order ([`drop_runs`] defines a run).
    pub fn drop_run_rows(&self) -> Vec<DropRunRow> {
        let mut rows = Vec::new();
        for (id, p) in self.ports.iter().enumerate() {
            for i in 0..p.n_inputs {
                if let Some(h) = self.drop_runs.histogram((p.inputs_at + i) as usize) {
                    rows.push(DropRunRow {
                        port: id as u32,
                        input: i,
                        from_node: self.input_node(id as u32, i),
                        histogram: h,
                    });
                }
            }
        }
        rows
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
        if let Some(&(next, next_pkt)) = pt.pipe.front() {
            ev.schedule_arrival(next, port, next_pkt);
        }
        let to = pt.to;
        let p = &mut self.pool[pkt];
        if p.kind == PktKind::DropNotice {
            return self.on_notice_arrive(now, ev, to, pkt);
        }
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
        let input = pt.in_index;
        self.enqueue_from(now, ev, next, input, pkt);
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
        let ids = self.ports[port as usize].clear();
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
