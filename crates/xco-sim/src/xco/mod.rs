//! XCo in the simulator: the controller on a host of the topology and a
//! local coordinator in the egress path of every coordinated host.
//!
//! The scheduling decisions come from `xco_core::sched::Scheduler` — the same
//! code the controller daemon runs — driven here with virtual time. Control
//! messages (backlog reports, give-backs, directives) travel in-band as small
//! packets through the simulated switches, so their delay under load is real,
//! or out-of-band with a fixed latency. The scheduler's paths are the
//! simulator's own routes (one path per host pair when XCo is on).

pub mod coordinator;

use crate::engine::{Event, EventQueue};
use crate::net::packet::{Packet, PktKind, IPV4_HEADER_BYTES};
use crate::net::topology::NodeKind;
use crate::net::Net;
use crate::stats::{FlowKind, FlowStats};
use coordinator::HostCoord;
use std::collections::HashMap;
use xco_core::coord::{CoordConfig, Gate, Release};
use xco_core::routing::HostPaths;
use xco_core::sched::{Directive, DirectiveKind, Mode, SchedConfig, SchedTopology, Scheduler};
use xco_core::{Dur, Time};

/// XCo settings of a scenario.
#[derive(Clone, Debug)]
pub struct XcoConfig {
    /// Directive form.
    pub mode: Mode,
    /// Timeslice length (rate refresh period in the rate form).
    pub slice: Dur,
    /// Scheduler's minimum active time before preemption.
    pub min_active: Dur,
    /// Give a slice back once its queue stayed empty this long (`None`: never).
    pub giveback_hysteresis: Option<Dur>,
    /// Host node running the controller.
    pub controller: u32,
    /// Control messages out-of-band with this latency (`None`: in-band packets).
    pub out_of_band: Option<Dur>,
    /// Flows that have written at most this many bytes bypass coordination.
    pub bypass_flow_bytes: u64,
    /// Fail open after this long without a directive while backlogged.
    pub fail_open_after: Dur,
    /// Per-V2V queue limit, frame bytes (excess UDP is dropped at the host; TCP blocks).
    pub v2v_queue_bytes: u64,
    /// Period of the coordinators' backlog/feedback reports.
    pub report_interval: Dur,
    /// Which nodes run a coordinator.
    pub coordinated: Vec<bool>,
    /// The controller stops at this time (to test fail-open), if set.
    pub controller_stop: Option<Time>,
    /// Fraction of every link's capacity the scheduler keeps free for
    /// uncoordinated traffic (ACKs, control, bypassed flows); 0 admits up to
    /// the full capacity. With the hybrid form, senders are paced accordingly.
    pub capacity_headroom: f64,
}

/// A control message.
#[derive(Clone, Debug)]
pub enum ControlMsg {
    /// Host reports its backlog set (also its heartbeat).
    Report {
        /// Reporting host node.
        host: u32,
        /// Destination nodes with held traffic.
        dests: Vec<u32>,
    },
    /// Host gives back its slice to `dest`.
    GiveBack {
        /// Host node.
        host: u32,
        /// Destination node.
        dest: u32,
    },
    /// Controller to host (scheduler host indices already mapped to nodes).
    Directive(Directive),
}

/// Counters of the XCo machinery.
#[derive(Clone, Debug, Default)]
pub struct XcoStats {
    /// Backlog reports sent.
    pub reports: u64,
    /// Slices given back.
    pub givebacks: u64,
    /// Directives delivered to hosts.
    pub directives: u64,
    /// Packets that bypassed coordination.
    pub bypassed: u64,
    /// Packets held in V2V queues.
    pub held: u64,
    /// Packets dropped at their own host because their V2V queue was full.
    pub dropped_at_host: u64,
    /// Times a coordinator failed open.
    pub fail_opens: u64,
}

/// The XCo control plane of a simulation.
pub struct XcoSim {
    /// Settings.
    pub cfg: XcoConfig,
    sched: Scheduler,
    sched_timer_at: Time,
    /// Coordinator per node (hosts that run one).
    pub coords: Vec<Option<HostCoord>>,
    host_of_node: Vec<u32>,
    node_of_host: Vec<u32>,
    msgs: Vec<Option<ControlMsg>>,
    free_msgs: Vec<u32>,
    routes: HashMap<(u32, u32), u32>,
    ctl_flow: u32,
    /// Counters.
    pub stats: XcoStats,
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
        let keep = 1.0 - cfg.capacity_headroom;
        let link_bps = net
            .ports
            .iter()
            .map(|p| (p.rate_bps as f64 * keep) as u64)
            .collect();
        // the paths packets take: the network's own router, one path per host pair
        let provider = HostPaths::new(net.router().clone(), node_of_host.clone())
            .expect("the scenario refuses XCo with per-packet routing");
        let topo = SchedTopology::new(host_bps, link_bps, Box::new(provider));
        let sched = Scheduler::new(
            topo,
            SchedConfig {
                mode: cfg.mode,
                slice: cfg.slice,
                min_active: cfg.min_active,
                feedback_timeout: None,
            },
        );
        let ccfg = CoordConfig {
            giveback_hysteresis: cfg.giveback_hysteresis,
            fail_open_after: cfg.fail_open_after,
            report_interval: cfg.report_interval,
        };
        let coords = (0..net.nodes.len())
            .map(|n| cfg.coordinated[n].then(|| HostCoord::new(ccfg.clone(), now)))
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
        XcoSim {
            cfg,
            sched,
            sched_timer_at: Time::NEVER,
            coords,
            host_of_node,
            node_of_host,
            msgs: Vec::new(),
            free_msgs: Vec::new(),
            routes: HashMap::new(),
            ctl_flow,
            stats: XcoStats::default(),
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
        self.held_bytes(host, dst) + frame as u64 <= self.cfg.v2v_queue_bytes
    }

    /// TCP endpoint `ep` waits for room in `host`'s V2V queue.
    pub fn block(&mut self, host: u32, ep: u32) {
        if let Some(c) = self.coords[host as usize].as_mut() {
            if !c.blocked.contains(&ep) {
                c.blocked.push(ep);
            }
        }
    }

    /// Packets held in every V2V queue (for conservation checks).
    pub fn held_packets(&self) -> Vec<u32> {
        self.coords
            .iter()
            .flatten()
            .flat_map(|c| c.held_packets())
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
    pub fn offer(&mut self, now: Time, ev: &mut EventQueue, net: &mut Net, pkt: u32) {
        let p = &net.pool[pkt];
        let host = p.src;
        let bypass = match p.kind {
            PktKind::Tcp => {
                p.payload_bytes == 0
                    || net.flows[p.flow as usize].app_bytes_written <= self.cfg.bypass_flow_bytes
            }
            PktKind::Udp => net.flows[p.flow as usize].app_bytes_written <= self.cfg.bypass_flow_bytes,
            PktKind::PingRequest | PktKind::PingReply | PktKind::Control => true,
        };
        let c = self.coords[host as usize].as_mut().expect("coordinated host");
        if bypass || c.core.gate == Gate::FailOpen {
            self.stats.bypassed += u64::from(bypass);
            let report = !bypass && {
                let qi = c.queue(p.dst);
                c.core.pass_open(now, qi)
            };
            let nic = net.nodes[host as usize].nic;
            net.enqueue(now, ev, nic, pkt);
            if report {
                self.report(now, ev, net, host);
            }
            return;
        }
        let frame = (p.ip_bytes + net.framing.frame_overhead_bytes) as u64;
        let qi = c.queue(p.dst);
        if c.core.dests[qi].held_bytes + frame > self.cfg.v2v_queue_bytes {
            self.stats.dropped_at_host += 1;
            net.drop_at_host(pkt);
            return;
        }
        c.queues[qi].push_back(pkt);
        self.stats.held += 1;
        // B_x grew: a destination the controller does not know as backlogged
        if c.core.hold(now, qi, frame) {
            self.report(now, ev, net, host);
        }
        self.pump(now, ev, net, host);
    }

    /// Release what the gate allows from `host`'s queues into its NIC.
    pub fn pump(&mut self, now: Time, ev: &mut EventQueue, net: &mut Net, host: u32) {
        let gap = net.framing.gap_bytes as u64;
        let overhead = net.framing.frame_overhead_bytes;
        let nic = net.nodes[host as usize].nic;
        let c = self.coords[host as usize].as_mut().expect("coordinated host");
        let mut released = false;
        let mut wants_nic = false;
        let mut pace_wake = Time::NEVER;
        for qi in 0..c.queues.len() {
            while let Some(&pkt) = c.queues[qi].front() {
                let frame = net.pool[pkt].ip_bytes + overhead;
                let start = net.ports[nic as usize].busy_until.max(now);
                match c.core.may_release(now, qi, start) {
                    Release::No => break,
                    Release::At(t) => {
                        pace_wake = pace_wake.min(t); // paced: the coordinator timer releases it
                        break;
                    }
                    Release::Now => {}
                }
                if !net.nic_has_room(now, host, frame) {
                    wants_nic = true;
                    break;
                }
                c.queues[qi].pop_front();
                c.core.released(now, qi, frame as u64, frame as u64 + gap);
                net.enqueue(now, ev, nic, pkt);
                released = true;
            }
        }
        let drained = net.ports[nic as usize].busy_until.max(now);
        c.core.after_pump(released, drained, pace_wake);
        if released && !c.blocked.is_empty() {
            net.wakeups.append(&mut c.blocked);
        }
        if wants_nic {
            net.wait_for_room(ev, host);
        }
        self.arm(now, ev, host);
    }

    /// When the coordinator of `host` next has work: slice end, give-back,
    /// pacing, fail-open check, periodic report.
    fn arm(&mut self, now: Time, ev: &mut EventQueue, host: u32) {
        let c = self.coords[host as usize].as_mut().expect("coordinated host");
        let t = c.core.next_deadline().max(now);
        if t < c.timer_at {
            c.timer_at = t;
            ev.schedule(t, Event::Coordinator(host));
        }
    }

    /// The coordinator event of `host` fired.
    pub fn on_coordinator_timer(&mut self, now: Time, ev: &mut EventQueue, net: &mut Net, host: u32) {
        let c = self.coords[host as usize].as_mut().expect("coordinated host");
        if now != c.timer_at {
            return; // superseded
        }
        c.timer_at = Time::NEVER;
        let act = c.core.on_timer(now);
        if let Some(dest) = act.giveback {
            self.stats.givebacks += 1;
            self.send_to_controller(now, ev, net, ControlMsg::GiveBack { host, dest });
        }
        self.stats.fail_opens += u64::from(act.failed_open);
        if act.report {
            self.report(now, ev, net, host);
        }
        self.pump(now, ev, net, host);
    }

    /// Send `host`'s backlog set to the controller.
    fn report(&mut self, now: Time, ev: &mut EventQueue, net: &mut Net, host: u32) {
        let c = self.coords[host as usize].as_mut().expect("coordinated host");
        let dests = c.core.take_report(now);
        self.stats.reports += 1;
        self.send_to_controller(now, ev, net, ControlMsg::Report { host, dests });
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

    fn send_to_controller(&mut self, now: Time, ev: &mut EventQueue, net: &mut Net, m: ControlMsg) {
        let (from, to) = match &m {
            ControlMsg::Report { host, .. } | ControlMsg::GiveBack { host, .. } => {
                (*host, self.cfg.controller)
            }
            ControlMsg::Directive(d) => (self.cfg.controller, self.node_of_host[d.host as usize]),
        };
        let bytes = match &m {
            ControlMsg::Report { dests, .. } => 48 + 4 * dests.len() as u32,
            _ => 64,
        };
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
        let p = Packet {
            seq: slot as u64,
            route,
            kind: PktKind::Control,
            ip_bytes: IPV4_HEADER_BYTES + 8 + bytes,
            flow: self.ctl_flow,
            src: from,
            dst: to,
            ..Packet::EMPTY
        };
        let id = net.alloc(p);
        net.flows[self.ctl_flow as usize].wire_bytes_sent += p.ip_bytes as u64;
        let nic = net.nodes[from as usize].nic;
        net.enqueue(now, ev, nic, id);
    }

    /// A control message (in-band packet already released, or out-of-band slot) arrives.
    pub fn on_message(&mut self, now: Time, ev: &mut EventQueue, net: &mut Net, slot: u32) {
        let Some(m) = self.take(slot) else { return };
        match m {
            ControlMsg::Report { host, dests } => {
                if !self.controller_alive(now) {
                    return;
                }
                let h = self.host_of_node[host as usize];
                let ds: Vec<u32> = dests.iter().map(|&d| self.host_of_node[d as usize]).collect();
                self.sched.handle_feedback(now, h);
                self.sched.handle_backlog(now, h, &ds);
                self.flush(now, ev, net);
            }
            ControlMsg::GiveBack { host, dest } => {
                if !self.controller_alive(now) {
                    return;
                }
                let (h, d) = (self.host_of_node[host as usize], self.host_of_node[dest as usize]);
                self.sched.handle_giveback(now, h, d);
                self.flush(now, ev, net);
            }
            ControlMsg::Directive(d) => self.apply(now, ev, net, d),
        }
    }

    /// Send the scheduler's pending directives and re-arm its timer.
    fn flush(&mut self, now: Time, ev: &mut EventQueue, net: &mut Net) {
        while let Some(d) = self.sched.poll_directive() {
            self.send_to_controller(now, ev, net, ControlMsg::Directive(d));
        }
        self.arm_controller(ev);
    }

    fn arm_controller(&mut self, ev: &mut EventQueue) {
        if let Some(t) = self.sched.poll_timeout() {
            if t < self.sched_timer_at {
                self.sched_timer_at = t;
                ev.schedule(t, Event::Controller);
            }
        }
    }

    /// The controller's timer fired.
    pub fn on_controller_timer(&mut self, now: Time, ev: &mut EventQueue, net: &mut Net) {
        if now != self.sched_timer_at {
            return;
        }
        self.sched_timer_at = Time::NEVER;
        if !self.controller_alive(now) {
            return; // a stopped controller schedules nothing
        }
        self.sched.handle_timeout(now);
        self.flush(now, ev, net);
    }

    /// A directive reaches its host's coordinator.
    fn apply(&mut self, now: Time, ev: &mut EventQueue, net: &mut Net, d: Directive) {
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
        if !c.core.apply(now, d.epoch, &kind) {
            return; // old or duplicate
        }
        // a rate directive may name destinations this host never held traffic for
        c.queues.resize_with(c.core.dests.len(), Default::default);
        self.stats.directives += 1;
        self.pump(now, ev, net, node);
    }

    /// `host`'s NIC queue has room again.
    pub fn on_nic_room(&mut self, now: Time, ev: &mut EventQueue, net: &mut Net, host: u32) {
        if self.coordinates(host) {
            self.pump(now, ev, net, host);
        }
    }

    /// Summary metrics of the control plane.
    pub fn summary(&self) -> Vec<(&'static str, f64)> {
        let s = &self.stats;
        let st = self.sched.stats();
        vec![
            ("reports", s.reports as f64),
            ("givebacks", s.givebacks as f64),
            ("directives", s.directives as f64),
            ("scheduler_events", st.events as f64),
            ("bypassed_packets", s.bypassed as f64),
            ("held_packets", s.held as f64),
            ("dropped_at_host", s.dropped_at_host as f64),
            ("fail_opens", s.fail_opens as f64),
        ]
    }
}
