//! XCo in the simulator: the controller on a host of the topology and a
//! local coordinator in the egress path of every coordinated host.
//!
//! The scheduling decisions come from `xco_core::sched::Scheduler` — the same
//! code the controller daemon runs — driven here with virtual time. Control
//! messages (backlog reports, give-backs, directives) travel in-band as small
//! packets through the simulated switches, so their delay under load is real,
//! or out-of-band with a fixed latency. They are the wire protocol's messages,
//! sized as the real daemons encode them. The scheduler's paths are the
//! simulator's own routes (one path per host pair when XCo is on).
//!
//! XCo sits above the host stack: [`XcoSim`] implements the stack's egress
//! gate ([`crate::host::Coordinator`]) and the stack holds it
//! ([`Stack`] = `host::Stack<XcoSim>`); neither the host layer nor TCP
//! imports this module. The driver hands XCo its own timer events.

pub mod coordinator;

use crate::ctx::Ctx;
use crate::engine::{Event, EventQueue, Timer};
use crate::host::{Coordinator, Hosts};
use crate::net::packet::{Packet, PktKind, IPV4_HEADER_BYTES};
use crate::net::topology::NodeKind;
use crate::net::Net;
use crate::stats::{FlowKind, FlowStats};
use coordinator::{HostCoord, NicEgress};
use std::collections::HashMap;
use xco_core::coord::{Bypass, CoordStats, Offer, Settings};
use xco_core::routing::HostPaths;
use xco_core::sched::{DemandEntry, Directive, DirectiveKind, OnDemand, SchedTopology, Scheduler};
use xco_core::wire::Message;
use xco_core::{Dur, Time};

/// XCo settings of a scenario.
#[derive(Clone, Debug)]
pub struct XcoConfig {
    /// The shared settings (the daemons' vocabulary).
    pub settings: Settings,
    /// Host node running the controller.
    pub controller: u32,
    /// Control messages out-of-band with this latency (`None`: in-band packets).
    pub out_of_band: Option<Dur>,
    /// Per-V2V queue limit, frame bytes (excess UDP is dropped at the host; TCP blocks).
    pub v2v_queue_bytes: u64,
    /// Which nodes run a coordinator.
    pub coordinated: Vec<bool>,
    /// The controller stops at this time (to test fail-open), if set.
    pub controller_stop: Option<Time>,
}

/// A control message in flight: the wire protocol's message and who sent it.
#[derive(Clone, Debug)]
pub struct ControlMsg {
    /// Sending node (a coordinated host, or the controller's host).
    pub from: u32,
    /// What it says: reports and give-backs name destination nodes;
    /// directives are the scheduler's (host indices).
    pub msg: Message,
}

/// The XCo control plane of a simulation.
pub struct XcoSim {
    /// Settings.
    pub cfg: XcoConfig,
    sched: Scheduler,
    /// On-demand coordination (the controller's decision of which pairs are coordinated), if on.
    on_demand: Option<OnDemand>,
    sched_timer: Timer,
    /// Coordinator per node (hosts that run one).
    pub coords: Vec<Option<HostCoord>>,
    host_of_node: Vec<u32>,
    node_of_host: Vec<u32>,
    msgs: Vec<Option<ControlMsg>>,
    free_msgs: Vec<u32>,
    routes: HashMap<(u32, u32), u32>,
    ctl_flow: u32,
    /// Which packets skip the coordinators.
    bypass: Bypass,
}

const NO_HOST: u32 = u32::MAX;

impl XcoSim {
    /// Build the control plane over `net` (whose routes must be per host pair).
    /// Panics if `net` routes per packet (scenarios refuse XCo with it).
    pub fn new(net: &mut Net, cfg: XcoConfig, now: Time) -> XcoSim {
        let mut host_of_node = vec![NO_HOST; net.nodes.len()];
        let mut node_of_host = Vec::new();
        for (i, n) in net.nodes.iter().enumerate() {
            if n.kind == NodeKind::Host {
                host_of_node[i] = node_of_host.len() as u32;
                node_of_host.push(i as u32);
            }
        }
        let host_bps = node_of_host
            .iter()
            .map(|&n| net.ports[net.nodes[n as usize].nic as usize].rate_bps)
            .collect();
        let keep = 1.0 - cfg.settings.capacity_headroom;
        let link_bps = net
            .ports
            .iter()
            .map(|p| (p.rate_bps as f64 * keep) as u64)
            .collect();
        // the paths packets take: the network's own router, one path per host pair
        let provider = HostPaths::new(net.router().clone(), node_of_host.clone())
            .expect("the scenario refuses XCo with per-packet routing");
        let topo = SchedTopology::new(host_bps, link_bps, Box::new(provider));
        let sched = Scheduler::new(topo, cfg.settings.sched_config());
        let on_demand = cfg
            .settings
            .on_demand
            .clone()
            .map(|c| OnDemand::new(c, sched.hosts(), sched.links()));
        let ccfg = cfg.settings.coord_config();
        let coords = (0..net.nodes.len())
            .map(|n| cfg.coordinated[n].then(|| HostCoord::new(ccfg.clone(), cfg.v2v_queue_bytes, now)))
            .collect();
        let ctl_flow = net.flows.len() as u32;
        net.flows.push(FlowStats::new(
            FlowKind::Control,
            u32::MAX,
            "xco-control",
            cfg.controller,
            cfg.controller,
            now,
        ));
        let bypass = cfg.settings.bypass;
        XcoSim {
            cfg,
            sched,
            on_demand,
            sched_timer: Timer::IDLE,
            coords,
            host_of_node,
            node_of_host,
            msgs: Vec::new(),
            free_msgs: Vec::new(),
            routes: HashMap::new(),
            ctl_flow,
            bypass,
        }
    }

    /// The controller's scheduler (read-only, for tests and tools).
    pub fn scheduler(&self) -> &Scheduler {
        &self.sched
    }

    /// The links (output ports) the controller schedules for traffic from
    /// host node `src` to host node `dst`: its P_sd.
    pub fn controller_path(&mut self, src: u32, dst: u32) -> Vec<u32> {
        let (s, d) = (self.host_index(src), self.host_index(dst));
        self.sched.path(s, d)
    }

    /// Scheduler host index of `node`.
    pub fn host_index(&self, node: u32) -> u32 {
        self.host_of_node[node as usize]
    }

    /// True if `node` runs a coordinator.
    #[inline]
    pub fn coordinates(&self, node: u32) -> bool {
        self.coords.get(node as usize).is_some_and(|c| c.is_some())
    }

    fn controller_alive(&self, now: Time) -> bool {
        self.cfg.controller_stop.is_none_or(|t| now < t)
    }

    /// Frame bytes `host` holds for `dst`.
    pub fn held_bytes(&self, host: u32, dst: u32) -> u64 {
        self.coords[host as usize]
            .as_ref()
            .map_or(0, |c| c.core.held_bytes(dst))
    }

    /// True if a TCP segment of `frame` bytes from `host` to `dst` fits in its V2V queue.
    pub fn has_room(&self, host: u32, dst: u32, frame: u32) -> bool {
        self.coords[host as usize]
            .as_ref()
            .is_none_or(|c| c.core.fits(dst, frame))
    }

    /// TCP endpoint `ep` waits for room in `host`'s V2V queue.
    pub fn block(&mut self, host: u32, ep: u32) {
        if let Some(c) = self.coords[host as usize].as_mut() {
            if !c.blocked.contains(&ep) {
                c.blocked.push(ep);
            }
        }
    }

    /// Application `app` (a blocking UDP source) waits for room in `host`'s V2V queues.
    pub fn block_app(&mut self, host: u32, app: u32) {
        if let Some(c) = self.coords[host as usize].as_mut() {
            if !c.blocked_apps.contains(&app) {
                c.blocked_apps.push(app);
            }
        }
    }

    /// Packets held in every V2V queue (for conservation checks).
    pub fn held_packets(&self) -> Vec<u32> {
        self.coords
            .iter()
            .flatten()
            .flat_map(|c| c.core.held().copied())
            .collect()
    }

    // ------------------------------------------------------------------
    // start

    /// Start: every coordinator registers with a first (empty) report; the controller's timer starts.
    pub fn start(&mut self, now: Time, ev: &mut EventQueue) {
        for n in 0..self.coords.len() as u32 {
            if let Some(c) = self.coords[n as usize].as_mut() {
                c.core.start(now);
                self.arm(now, ev, n);
            }
        }
        self.arm_controller(ev);
    }

    // ------------------------------------------------------------------
    // the egress path

    /// A coordinated host's transport sends `pkt` (already counted as sent by its flow).
    pub fn offer(&mut self, now: Time, ev: &mut EventQueue, net: &mut Net, hosts: &mut Hosts, pkt: u32) {
        let p = &net.pool[pkt];
        let host = p.src;
        // pings and control messages bypass like pure ACKs: they carry no transport data
        let carries_data = match p.kind {
            PktKind::Tcp | PktKind::Udp => p.payload_bytes > 0,
            PktKind::PingRequest | PktKind::PingReply | PktKind::Control | PktKind::DropNotice => false,
        };
        let written = net.flows[p.flow as usize].app_bytes_written;
        let bypass = self.bypass.bypasses(p.ip_bytes, carries_data, Some(written));
        let frame = p.ip_bytes + net.framing.frame_overhead_bytes;
        let wire = (frame + net.framing.gap_bytes) as u64;
        let c = self.coords[host as usize].as_mut().expect("coordinated host");
        match c.core.offer(now, p.dst, pkt, frame, (wire, 0), bypass) {
            Offer::Pass(pkt) => {
                let nic = net.nodes[host as usize].nic;
                net.enqueue(now, ev, nic, pkt);
                self.send_messages(now, ev, net, host);
            }
            Offer::Drop(pkt) => net.drop_at_host(pkt),
            Offer::Held => {
                self.send_messages(now, ev, net, host);
                self.pump(now, ev, net, hosts, host);
            }
        }
    }

    /// Release what the gate allows from `host`'s queues into its NIC.
    pub fn pump(&mut self, now: Time, ev: &mut EventQueue, net: &mut Net, hosts: &mut Hosts, host: u32) {
        let nic = net.nodes[host as usize].nic;
        let c = self.coords[host as usize].as_mut().expect("coordinated host");
        let pumped = c.core.pump(now, &mut NicEgress { net, ev, host, nic });
        if pumped.released && !c.blocked.is_empty() {
            hosts.wake(&mut c.blocked);
        }
        if pumped.released && !c.blocked_apps.is_empty() {
            hosts.app_wakeups.append(&mut c.blocked_apps);
        }
        if pumped.wants_room {
            hosts.wait_for_room(net, ev, host);
        }
        self.arm(now, ev, host);
    }

    /// When the coordinator of `host` next has work: slice end, give-back,
    /// pacing, fail-open check, periodic report.
    fn arm(&mut self, now: Time, ev: &mut EventQueue, host: u32) {
        let c = self.coords[host as usize].as_mut().expect("coordinated host");
        let t = c.core.next_deadline().max(now);
        c.timer.arm_earlier(ev, t, Event::Coordinator(host));
    }

    /// The coordinator event of `host` fired.
    pub fn on_coordinator_timer(
        &mut self,
        now: Time,
        ev: &mut EventQueue,
        net: &mut Net,
        hosts: &mut Hosts,
        host: u32,
    ) {
        let c = self.coords[host as usize].as_mut().expect("coordinated host");
        if !c.timer.fire(ev, now, Event::Coordinator(host)) {
            return; // superseded
        }
        c.core.on_timer(now);
        self.send_messages(now, ev, net, host);
        self.pump(now, ev, net, hosts, host);
    }

    /// Send what `host`'s coordinator has to say to the controller.
    fn send_messages(&mut self, now: Time, ev: &mut EventQueue, net: &mut Net, host: u32) {
        loop {
            let c = self.coords[host as usize].as_mut().expect("coordinated host");
            let Some(msg) = c.core.poll_message(now) else {
                break;
            };
            self.send(now, ev, net, ControlMsg { from: host, msg });
        }
    }

    // ------------------------------------------------------------------
    // control messages

    fn store(&mut self, m: ControlMsg) -> u32 {
        match self.free_msgs.pop() {
            Some(i) => {
                self.msgs[i as usize] = Some(m);
                i
            }
            None => {
                self.msgs.push(Some(m));
                (self.msgs.len() - 1) as u32
            }
        }
    }

    fn take(&mut self, slot: u32) -> Option<ControlMsg> {
        let m = self.msgs[slot as usize].take();
        if m.is_some() {
            self.free_msgs.push(slot);
        }
        m
    }

    fn send(&mut self, now: Time, ev: &mut EventQueue, net: &mut Net, m: ControlMsg) {
        let (from, to) = match &m.msg {
            Message::Directive(d) => (m.from, self.node_of_host[d.host as usize]),
            Message::Ungate { host, .. } => (m.from, self.node_of_host[*host as usize]),
            _ => (m.from, self.cfg.controller),
        };
        // the datagram the agent would send: header, payload, authentication tag
        let bytes = m.msg.datagram_len() as u32;
        let slot = self.store(m);
        if from == to {
            ev.schedule(now, Event::ControlMessage(slot));
            return;
        }
        if let Some(lat) = self.cfg.out_of_band {
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
            ip_bytes: IPV4_HEADER_BYTES + 8 + bytes,
            flow: self.ctl_flow,
            src: from,
            dst: to,
            ..Packet::EMPTY
        };
        p.set_control(slot);
        let id = net.alloc(p);
        net.flows[self.ctl_flow as usize].wire_bytes_sent += p.ip_bytes as u64;
        let nic = net.nodes[from as usize].nic;
        net.enqueue(now, ev, nic, id);
    }

    /// A control message (in-band packet already released, or out-of-band slot) arrives.
    pub fn on_message(
        &mut self,
        now: Time,
        ev: &mut EventQueue,
        net: &mut Net,
        hosts: &mut Hosts,
        slot: u32,
    ) {
        let Some(ControlMsg { from: host, msg }) = self.take(slot) else {
            return;
        };
        match msg {
            Message::Report { dests } => {
                if !self.controller_alive(now) {
                    return;
                }
                let h = self.host_of_node[host as usize];
                let ds: Vec<u32> = dests.iter().map(|&d| self.host_of_node[d as usize]).collect();
                self.sched.handle_feedback(now, h);
                match self.on_demand.as_mut() {
                    Some(od) => od.handle_backlog(now, h, &ds, &mut self.sched),
                    None => self.sched.handle_backlog(now, h, &ds),
                }
                self.flush(now, ev, net);
            }
            Message::Demand { entries } => {
                if !self.controller_alive(now) {
                    return;
                }
                let h = self.host_of_node[host as usize];
                let es: Vec<DemandEntry> = entries
                    .iter()
                    .filter(|e| {
                        self.host_of_node
                            .get(e.dest as usize)
                            .is_some_and(|&d| d != NO_HOST)
                    })
                    .map(|e| DemandEntry {
                        dest: self.host_of_node[e.dest as usize],
                        ..*e
                    })
                    .collect();
                self.sched.handle_feedback(now, h);
                let ds: Vec<u32> = es.iter().filter(|e| e.backlogged).map(|e| e.dest).collect();
                match self.on_demand.as_mut() {
                    Some(od) => {
                        od.handle_demand(now, h, &es);
                        od.handle_backlog(now, h, &ds, &mut self.sched);
                    }
                    None => self.sched.handle_backlog(now, h, &ds),
                }
                self.flush(now, ev, net);
            }
            Message::Ungate { host: h, dests } => {
                let node = self.node_of_host[h as usize];
                let ds: Vec<u32> = dests.iter().map(|&d| self.node_of_host[d as usize]).collect();
                if let Some(c) = self.coords[node as usize].as_mut() {
                    c.core.set_ungated(&ds);
                    self.pump(now, ev, net, hosts, node);
                }
            }
            Message::GiveBack { dest, .. } => {
                if !self.controller_alive(now) {
                    return;
                }
                let (h, d) = (self.host_of_node[host as usize], self.host_of_node[dest as usize]);
                self.sched.handle_giveback(now, h, d);
                self.flush(now, ev, net);
            }
            Message::Directive(d) => self.apply(now, ev, net, hosts, d),
            Message::Join
            | Message::Leave
            | Message::Heartbeat
            | Message::Hello { .. }
            | Message::Rejoin { .. }
            | Message::Challenge { .. }
            | Message::Confirm { .. }
            | Message::Rejections(_) => {}
        }
    }

    /// Send the scheduler's pending directives and re-arm its timer.
    fn flush(&mut self, now: Time, ev: &mut EventQueue, net: &mut Net) {
        while let Some((host, dests)) = self.on_demand.as_mut().and_then(OnDemand::poll_ungate) {
            self.send_from_controller(now, ev, net, Message::Ungate { host, dests });
        }
        while let Some(d) = self.sched.poll_directive() {
            self.send_from_controller(now, ev, net, Message::Directive(d));
        }
        self.arm_controller(ev);
    }

    fn send_from_controller(&mut self, now: Time, ev: &mut EventQueue, net: &mut Net, msg: Message) {
        let from = self.cfg.controller;
        self.send(now, ev, net, ControlMsg { from, msg });
    }

    fn arm_controller(&mut self, ev: &mut EventQueue) {
        let od = self.on_demand.as_ref().and_then(OnDemand::poll_timeout);
        if let Some(t) = [self.sched.poll_timeout(), od].into_iter().flatten().min() {
            self.sched_timer.arm_earlier(ev, t, Event::Controller);
        }
    }

    /// The controller's timer fired.
    pub fn on_controller_timer(&mut self, now: Time, ev: &mut EventQueue, net: &mut Net) {
        if !self.sched_timer.fire(ev, now, Event::Controller) {
            return;
        }
        if !self.controller_alive(now) {
            return; // a stopped controller schedules nothing
        }
        if let Some(od) = self.on_demand.as_mut() {
            od.handle_timeout(now, &mut self.sched);
        }
        self.sched.handle_timeout(now);
        self.flush(now, ev, net);
    }

    /// A directive reaches its host's coordinator.
    fn apply(&mut self, now: Time, ev: &mut EventQueue, net: &mut Net, hosts: &mut Hosts, d: Directive) {
        let node = self.node_of_host[d.host as usize];
        let Some(c) = self.coords[node as usize].as_mut() else {
            return;
        };
        let kind = match d.kind {
            DirectiveKind::Slice { dest, len, rate_bps } => DirectiveKind::Slice {
                dest: dest.map(|h| self.node_of_host[h as usize]),
                len,
                rate_bps,
            },
            DirectiveKind::Rates { rates } => DirectiveKind::Rates {
                rates: rates
                    .into_iter()
                    .map(|(h, r)| (self.node_of_host[h as usize], r))
                    .collect(),
            },
        };
        // it takes effect `start_in` after its arrival (pending until then)
        if !c.core.receive(now, d.epoch, d.start_in, &kind) {
            return; // old or duplicate
        }
        self.pump(now, ev, net, hosts, node);
    }

    /// `host`'s NIC queue has room again.
    pub fn on_nic_room(
        &mut self,
        now: Time,
        ev: &mut EventQueue,
        net: &mut Net,
        hosts: &mut Hosts,
        host: u32,
    ) {
        if self.coordinates(host) {
            self.pump(now, ev, net, hosts, host);
        }
    }

    /// The coordinators' counters, summed over hosts.
    pub fn coordinator_stats(&self) -> CoordStats {
        let mut t = CoordStats::default();
        for c in self.coords.iter().flatten() {
            t += &c.core.stats;
        }
        t
    }

    /// Summary metrics of the control plane.
    pub fn summary(&self) -> Vec<(&'static str, f64)> {
        let s = self.coordinator_stats();
        let st = self.sched.stats();
        vec![
            ("reports", s.reports as f64),
            ("givebacks", s.givebacks as f64),
            ("directives", s.directives as f64),
            ("directives_ahead", s.directives_ahead as f64),
            ("scheduler_events", st.events as f64),
            ("bypassed_packets", s.bypassed as f64),
            ("held_packets", s.held as f64),
            ("dropped_at_host", s.dropped as f64),
            ("fail_opens", s.fail_opens as f64),
        ]
        .into_iter()
        .chain(self.on_demand.iter().flat_map(|od| {
            [
                ("ungated_packets", s.ungated as f64),
                ("ungated_sets", od.stats.ungates as f64),
                ("links_congested", od.stats.congested as f64),
                ("links_calmed", od.stats.calmed as f64),
            ]
        }))
        .collect()
    }
}

/// XCo is the host stack's egress gate: the host layer calls it through
/// this interface and never names XCo.
impl Coordinator for XcoSim {
    #[inline(always)]
    fn coordinates(&self, host: u32) -> bool {
        XcoSim::coordinates(self, host)
    }
    #[inline(always)]
    fn offer(&mut self, cx: &mut Ctx, hosts: &mut Hosts, pkt: u32) {
        XcoSim::offer(self, cx.now, &mut cx.ev, &mut cx.net, hosts, pkt)
    }
    #[inline(always)]
    fn has_room(&self, host: u32, dst: u32, frame: u32) -> bool {
        XcoSim::has_room(self, host, dst, frame)
    }
    #[inline(always)]
    fn held_bytes(&self, host: u32, dst: u32) -> u64 {
        XcoSim::held_bytes(self, host, dst)
    }
    #[inline(always)]
    fn block(&mut self, host: u32, ep: u32) {
        XcoSim::block(self, host, ep)
    }
    #[inline(always)]
    fn block_app(&mut self, host: u32, app: u32) {
        XcoSim::block_app(self, host, app)
    }
    #[inline(always)]
    fn on_nic_room(&mut self, cx: &mut Ctx, hosts: &mut Hosts, host: u32) {
        XcoSim::on_nic_room(self, cx.now, &mut cx.ev, &mut cx.net, hosts, host)
    }
    #[inline(always)]
    fn on_message(&mut self, cx: &mut Ctx, hosts: &mut Hosts, slot: u32) {
        XcoSim::on_message(self, cx.now, &mut cx.ev, &mut cx.net, hosts, slot)
    }
}

/// The host stack of a run, with XCo as its egress gate.
pub type Stack = crate::host::Stack<XcoSim>;
