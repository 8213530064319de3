//! XCo in the simulator: the controller on a host of the topology and an
//! agent in the egress path of every coordinated host.
//!
//! Both are `xco_core::control`'s sans-IO nodes — the code the controller
//! and agent daemons run: a [`ControllerNode`] (the scheduler, every host's
//! session, joins, rejoins, rejections) on the controller's host and an
//! [`AgentNode`] (its [`xco_core::coord::HostCoordinator`]: the gate and the
//! queues) on every coordinated host, driven here with virtual time. Every
//! message kind is dispatched once, in those nodes; this module only moves
//! their datagrams ([`channel`]: in-band as packets of exactly the
//! datagram's size plus UDP/IP headers through the simulated switches, or
//! out-of-band with a fixed latency), their timers (one pending event per
//! node: `poll_timeout`) and the packets the gates release.
//!
//! Keys and randomness derive from the scenario's seed: a master secret
//! (from which the controller's Ed25519 signing key and every host's MAC
//! key derive, as the daemons derive them from `xco-daemon keygen`'s
//! secret), the controller's run id and each agent's join nonces.
//! Directives are signed and verified for real (Ed25519, about 50 µs of
//! CPU per directive); `[xco] auth = "keyed"` tags them with HMAC-SHA512
//! under a key every agent holds instead: the same bytes on the wire and
//! the same outputs for a fraction of the CPU, and no protection against a
//! host.
//!
//! Every agent joins over the control network (join, signed challenge,
//! MAC'd confirm), and the new controller run grants nothing for one slice
//! plus the lead after its first input (its fence); its challenges are
//! within its signing budget (64 at once, then 2,000 a second). By default
//! (`[xco] join_before_start`) that happens before the run's t = 0, over a
//! copy of its network without traffic ([`XcoSim::settled`],
//! [`XcoSim::carry_over`]); else at t = 0, within the run
//! (docs/control-plane.md has what it costs).
//! The scheduler's paths are the simulator's own routes (one path per host
//! pair when XCo is on).
//!
//! XCo sits above the host stack: [`XcoSim`] implements the stack's egress
//! gate ([`crate::host::Coordinator`]) and the stack holds it
//! ([`Stack`] = `host::Stack<XcoSim>`); neither the host layer nor TCP
//! imports this module. The driver hands XCo its own timer events.

pub mod channel;
pub mod coordinator;

use crate::ctx::Ctx;
use crate::engine::{Event, EventQueue, Timer};
use crate::host::{Coordinator, Hosts};
use crate::net::packet::PktKind;
use crate::net::topology::NodeKind;
use crate::net::Net;
use channel::{ControlNet, Datagram};
use coordinator::{HostCoord, NicEgress};
use xco_core::control::{Address, AgentConfig, AgentNode, ControllerConfig, ControllerNode, Origin};
use xco_core::coord::{Bypass, CoordStats, Offer, Settings};
use xco_core::rng::Rng;
use xco_core::routing::HostPaths;
use xco_core::sched::{SchedTopology, Scheduler};
use xco_core::wire::{host_key, keyed_controller_key, run_of, AgentKeys, ControllerKeys};
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
    /// The run's seed: the keys, the controller's run id and the agents'
    /// join nonces derive from it.
    pub seed: u64,
    /// Controller messages tagged with HMAC-SHA512 under one key every agent
    /// holds instead of signed (`[xco] auth = "keyed"`; see
    /// `xco_core::wire::auth`); false: Ed25519, the protocol.
    pub keyed: bool,
}

/// The seed stream of the master secret (then the run id: +1).
const KEY_STREAM: u64 = 0x0C70_0000_0000;
/// The seed streams of the agents' join nonces (+ node).
const AGENT_STREAM: u64 = 0x0C71_0000_0000;
/// Random stream of the agents' start times (one per node).
const START_STREAM: u64 = 0x0C72_0000_0000;

/// The master secret of a run with `seed` (the controller's signing key
/// and every host's MAC key derive from it).
pub fn master_secret(seed: u64) -> [u8; 32] {
    let mut r = Rng::stream(seed, KEY_STREAM);
    let mut m = [0u8; 32];
    for c in m.chunks_mut(8) {
        c.copy_from_slice(&r.next_u64().to_le_bytes());
    }
    m
}

/// The XCo control plane of a simulation.
pub struct XcoSim {
    /// Settings.
    pub cfg: XcoConfig,
    /// The controller (node addresses: the simulator's node numbers).
    ctl: ControllerNode<u32>,
    ctl_timer: Timer,
    /// Agent per node (hosts that run one).
    pub coords: Vec<Option<HostCoord>>,
    host_of_node: Vec<u32>,
    channel: ControlNet,
    keys: ControllerKeys,
    /// Which packets skip the coordinators.
    bypass: Bypass,
    /// The nodes' clocks read the simulator's time plus this: the time the
    /// agents spent joining before t = 0 ([`XcoSim::carry_over`]).
    offset: Dur,
    /// When the controller got its first datagram (its fence starts then).
    first_input: Option<Time>,
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
        // the keys, as the daemons derive them from one master secret (host ids:
        // the scheduler's host indices, named as the topology names the hosts)
        let master = master_secret(cfg.seed);
        let names: Vec<&str> = node_of_host.iter().map(|&n| net.name(n)).collect();
        let keys = match cfg.keyed {
            false => ControllerKeys::new(&master, &names),
            true => ControllerKeys::keyed(&master, &names),
        };
        // a controller alone: term 0 (as the daemon without a standby), a run id from the seed
        let low = (Rng::stream(cfg.seed, KEY_STREAM + 1).next_u64() as u32).max(1);
        let ctl_cfg = ControllerConfig {
            on_demand: cfg.settings.on_demand.clone(),
            directive_max_age: cfg.settings.directive_max_age,
            ..ControllerConfig::default()
        };
        let ctl = ControllerNode::new(ctl_cfg, sched, keys.clone(), run_of(0, low));
        let ccfg = cfg.settings.coord_config();
        let public = (!cfg.keyed).then(|| keys.public_key());
        let coords = (0..net.nodes.len())
            .map(|n| {
                cfg.coordinated[n].then(|| {
                    let h = host_of_node[n];
                    let name = net.name(n as u32);
                    let agent_keys = match &public {
                        Some(p) => AgentKeys::new(h, &host_key(&master, name), p)
                            .expect("the controller's own public key"),
                        None => AgentKeys::keyed(h, &host_key(&master, name), &keyed_controller_key(&master)),
                    };
                    let agent = AgentConfig {
                        addr: (n as u32).to_wire(),
                        directive_max_age: cfg.settings.directive_max_age,
                        ..AgentConfig::default()
                    };
                    let rng = Rng::stream(cfg.seed, AGENT_STREAM + n as u64);
                    HostCoord::new(agent, ccfg.clone(), cfg.v2v_queue_bytes, agent_keys, rng, now)
                })
            })
            .collect();
        let channel = ControlNet::new(net, cfg.controller, cfg.out_of_band, now);
        let bypass = cfg.settings.bypass;
        XcoSim {
            cfg,
            ctl,
            ctl_timer: Timer::IDLE,
            coords,
            host_of_node,
            channel,
            keys,
            bypass,
            offset: Dur::ZERO,
            first_input: None,
        }
    }

    /// The nodes' clock at simulated time `now`.
    #[inline]
    fn node_time(&self, now: Time) -> Time {
        now + self.offset
    }

    /// The simulated time of the nodes' instant `t` (`Time::NEVER` stays never).
    #[inline]
    fn sim_time(&self, t: Time) -> Time {
        if t == Time::NEVER {
            return t;
        }
        Time::ZERO + t.saturating_since(Time::ZERO + self.offset)
    }

    /// True once every agent obeys the controller's run, the controller
    /// knows every agent's address and its fence (one slice plus the lead
    /// from its first input) is over at `now`: the state of a control plane
    /// that has run a while. Datagrams in flight then (the agents' periodic
    /// reports; no join or confirm, as every agent is known) are not carried
    /// into the run, whose network starts empty: with thousands of agents
    /// some report is always on its way (3,000 agents: about 320,000 a
    /// second), so waiting for none would never end.
    pub fn settled(&self, now: Time) -> bool {
        let run = self.ctl.run();
        let joined = self.coords.iter().enumerate().all(|(n, c)| {
            c.as_ref().is_none_or(|c| {
                c.node.run() == Some(run) && self.ctl.addr(self.host_of_node[n]) == Some(n as u32)
            })
        });
        let cfg = self.ctl.sched.config();
        let fenced = self
            .first_input
            .is_none_or(|t| self.node_time(now) < t + cfg.slice + cfg.lead);
        joined && !fenced
    }

    /// This control plane, run until `now` over a copy of the network
    /// without traffic (joins, the fence: [`XcoSim::settled`]), carried into
    /// the run's own network `net` at its t = 0: the nodes keep their state
    /// and their clocks (which read `now` at t = 0); the control network,
    /// its flow and the timers are `net`'s. What its counters counted
    /// before stays in them.
    pub fn carry_over(mut self, now: Time, ev: &mut EventQueue, net: &mut Net) -> XcoSim {
        self.offset = now.saturating_since(Time::ZERO);
        self.channel = ControlNet::new(net, self.cfg.controller, self.cfg.out_of_band, Time::ZERO);
        self.ctl_timer = Timer::IDLE;
        for n in 0..self.coords.len() as u32 {
            if let Some(c) = self.coords[n as usize].as_mut() {
                c.timer = Timer::IDLE;
                self.arm(Time::ZERO, ev, n);
            }
        }
        self.arm_controller(Time::ZERO, ev);
        self
    }

    /// The simulated time the agents spent joining before t = 0.
    pub fn joined_before(&self) -> Dur {
        self.offset
    }

    /// The controller node (read-only, for tests and tools).
    pub fn controller(&self) -> &ControllerNode<u32> {
        &self.ctl
    }

    /// The agent node of host node `node`, if it runs one.
    pub fn agent(&self, node: u32) -> Option<&AgentNode<u32>> {
        self.coords.get(node as usize)?.as_ref().map(|c| &c.node)
    }

    /// The run's keys (derived from its seed: [`master_secret`]), for tests
    /// that sign what the controller would.
    pub fn keys(&self) -> &ControllerKeys {
        &self.keys
    }

    /// The controller's scheduler (read-only, for tests and tools).
    pub fn scheduler(&self) -> &Scheduler {
        &self.ctl.sched
    }

    /// The links (output ports) the controller schedules for traffic from
    /// host node `src` to host node `dst`: its P_sd.
    pub fn controller_path(&mut self, src: u32, dst: u32) -> Vec<u32> {
        let (s, d) = (self.host_index(src), self.host_index(dst));
        self.ctl.sched.path(s, d)
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

    /// Frame bytes `host` holds for host node `dst`.
    pub fn held_bytes(&self, host: u32, dst: u32) -> u64 {
        let d = self.host_of_node[dst as usize];
        self.coords[host as usize]
            .as_ref()
            .map_or(0, |c| c.node.coord.held_bytes(d))
    }

    /// True if a TCP segment of `frame` bytes from `host` to host node `dst` fits in its V2V queue.
    pub fn has_room(&self, host: u32, dst: u32, frame: u32) -> bool {
        let d = self.host_of_node[dst as usize];
        self.coords[host as usize]
            .as_ref()
            .is_none_or(|c| c.node.coord.fits(d, frame))
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
            .flat_map(|c| c.node.coord.held().copied())
            .collect()
    }

    // ------------------------------------------------------------------
    // start

    /// Start: every agent starts its coordinator's timers and joins the
    /// controller (over the control network, as a daemon does).
    ///
    /// The agents start at times drawn from the seed over one join timeout
    /// after `now`, as hosts that do not boot at one instant: started at
    /// one instant, every agent's joins and periodic messages would leave
    /// in step forever (the timers are exact), and the same agents' would
    /// lose every race for the controller's port (1,200 agents in-band:
    /// 157 never joined in 60 simulated seconds).
    pub fn start(&mut self, now: Time, ev: &mut EventQueue) {
        let spread_ps = AgentConfig::default().join_timeout.ps().max(1);
        for n in 0..self.coords.len() as u32 {
            if let Some(c) = self.coords[n as usize].as_mut() {
                let at =
                    now + Dur::from_ps(Rng::stream(self.cfg.seed, START_STREAM + n as u64).below(spread_ps));
                c.start_at = Some(at);
                c.timer.arm_earlier(ev, at, Event::Coordinator(n));
            }
        }
        self.arm_controller(now, ev);
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
        let dst = self.host_of_node[p.dst as usize];
        let nt = self.node_time(now);
        let c = self.coords[host as usize].as_mut().expect("coordinated host");
        match c.node.coord.offer(nt, dst, pkt, frame, (wire, 0), bypass) {
            Offer::Pass(pkt) => {
                let nic = net.nodes[host as usize].nic;
                net.enqueue(now, ev, nic, pkt);
                self.transmit_agent(now, ev, net, host);
            }
            Offer::Drop(pkt) => net.drop_at_host(pkt),
            Offer::Held => {
                self.transmit_agent(now, ev, net, host);
                self.pump(now, ev, net, hosts, host);
            }
        }
    }

    /// Release what the gate allows from `host`'s queues into its NIC.
    pub fn pump(&mut self, now: Time, ev: &mut EventQueue, net: &mut Net, hosts: &mut Hosts, host: u32) {
        let nic = net.nodes[host as usize].nic;
        let (nt, offset) = (self.node_time(now), self.offset);
        let c = self.coords[host as usize].as_mut().expect("coordinated host");
        let mut egress = NicEgress {
            net,
            ev,
            host,
            nic,
            offset,
        };
        let pumped = c.node.coord.pump(nt, &mut egress);
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

    /// When the agent of `host` next has work (its `poll_timeout`: slice
    /// end, give-back, pacing, fail-open check, periodic report, join retry).
    fn arm(&mut self, now: Time, ev: &mut EventQueue, host: u32) {
        let c = self.coords[host as usize].as_ref().expect("coordinated host");
        let t = match c.start_at {
            Some(at) => at.max(now),
            None => self.sim_time(c.node.poll_timeout()).max(now),
        };
        let c = self.coords[host as usize].as_mut().expect("coordinated host");
        c.timer.arm_earlier(ev, t, Event::Coordinator(host));
    }

    /// The agent event of `host` fired.
    pub fn on_coordinator_timer(
        &mut self,
        now: Time,
        ev: &mut EventQueue,
        net: &mut Net,
        hosts: &mut Hosts,
        host: u32,
    ) {
        let nt = self.node_time(now);
        let c = self.coords[host as usize].as_mut().expect("coordinated host");
        if !c.timer.fire(ev, now, Event::Coordinator(host)) {
            return; // superseded
        }
        match c.start_at {
            Some(at) if now < at => {
                self.arm(now, ev, host);
                return;
            }
            Some(_) => {
                c.start_at = None;
                c.node.start(nt);
            }
            None => {}
        }
        c.node.handle_timeout(nt);
        self.transmit_agent(now, ev, net, host);
        self.pump(now, ev, net, hosts, host);
    }

    /// Send what `host`'s agent has to say to the controller.
    fn transmit_agent(&mut self, now: Time, ev: &mut EventQueue, net: &mut Net, host: u32) {
        let nt = self.node_time(now);
        let c = self.coords[host as usize].as_mut().expect("coordinated host");
        while let Some(bytes) = c.node.poll_transmit(nt) {
            let d = Datagram {
                from: host,
                to: self.cfg.controller,
                to_controller: true,
                bytes,
            };
            self.channel.send(now, ev, net, d);
        }
        // its events are for logs and metrics, which its counters hold here
        while c.node.poll_event().is_some() {}
    }

    /// Send what the controller has to say, and re-arm its timer.
    fn transmit_controller(&mut self, now: Time, ev: &mut EventQueue, net: &mut Net) {
        let nt = self.node_time(now);
        while let Some((to, bytes)) = self.ctl.poll_transmit(nt) {
            let d = Datagram {
                from: self.cfg.controller,
                to,
                to_controller: false,
                bytes,
            };
            self.channel.send(now, ev, net, d);
        }
        while self.ctl.poll_event().is_some() {}
        self.arm_controller(now, ev);
    }

    fn arm_controller(&mut self, now: Time, ev: &mut EventQueue) {
        if let Some(t) = self.ctl.poll_timeout() {
            let t = self.sim_time(t).max(now);
            self.ctl_timer.arm_earlier(ev, t, Event::Controller);
        }
    }

    /// The controller's timer fired.
    pub fn on_controller_timer(&mut self, now: Time, ev: &mut EventQueue, net: &mut Net) {
        if !self.ctl_timer.fire(ev, now, Event::Controller) {
            return;
        }
        if !self.controller_alive(now) {
            return; // a stopped controller runs nothing
        }
        let nt = self.node_time(now);
        self.ctl.handle_timeout(nt);
        self.transmit_controller(now, ev, net);
    }

    // ------------------------------------------------------------------
    // control datagrams

    /// Put `d` on the control network at `now` (the nodes' own datagrams go
    /// this way; tests send forged or replayed ones).
    pub fn send_datagram(&mut self, now: Time, ev: &mut EventQueue, net: &mut Net, d: Datagram) {
        self.channel.send(now, ev, net, d);
    }

    /// A control datagram (in-band packet already released, or out-of-band
    /// slot) arrives at its node: to the controller, or to the agent there.
    pub fn on_message(
        &mut self,
        now: Time,
        ev: &mut EventQueue,
        net: &mut Net,
        hosts: &mut Hosts,
        slot: u32,
    ) {
        let Some(d) = self.channel.take(slot) else {
            return;
        };
        if d.to_controller {
            if d.to != self.cfg.controller || !self.controller_alive(now) {
                return; // nobody listens (a stopped controller reads nothing)
            }
            let nt = self.node_time(now);
            self.first_input.get_or_insert(nt);
            self.ctl.handle_datagram(nt, d.from, &d.bytes);
            self.transmit_controller(now, ev, net);
            return;
        }
        let nt = self.node_time(now);
        let Some(c) = self.coords[d.to as usize].as_mut() else {
            return;
        };
        // the agent reads only what comes from the controller's address
        let origin = if d.from == self.cfg.controller {
            Origin::Controller
        } else {
            Origin::Other
        };
        let took = c.node.handle_datagram(nt, origin, &d.bytes);
        self.transmit_agent(now, ev, net, d.to);
        if took {
            self.pump(now, ev, net, hosts, d.to);
        } else {
            self.arm(now, ev, d.to);
        }
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
            t += &c.node.coord.stats;
        }
        t
    }

    /// Summary metrics of the control plane.
    pub fn summary(&self) -> Vec<(&'static str, f64)> {
        let s = self.coordinator_stats();
        let st = self.ctl.sched_stats();
        let agents = || self.coords.iter().flatten().map(|c| &c.node);
        let joins: u64 = agents().map(|a| a.stats.joins).sum();
        let rejected: u64 =
            self.ctl.stats.rejected.total() + agents().map(|a| a.rejected.total()).sum::<u64>();
        let unread: u64 = agents().map(|a| a.stats.foreign + a.stats.over_budget).sum();
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
            ("joins", joins as f64),
            ("control_datagrams", self.channel.sent() as f64),
            ("control_rejected", rejected as f64),
            ("control_unread", unread as f64),
            ("joined_before_us", self.offset.as_ns() as f64 / 1e3),
        ]
        .into_iter()
        .chain(self.ctl.on_demand.iter().flat_map(|od| {
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
