//! One run of the harness: a controller and its agents (the `xco_core::control`
//! nodes the daemons drive) on the seeded network of [`crate::net`], with the
//! faults a [`Setup`] drew from one seed, checked by [`crate::check`] after
//! every step. The run stops at the first violation.

use crate::check::{Checker, Open, Violation};
use crate::net::{is_ctl, Addr, Arrival, Clock, Model, NetFaults, Queue, Transport, CTL, CTL2};
use crate::ondemand::OnDemandCheck;
use xco_core::control::{
    Address, AgentConfig, AgentEvent, AgentNode, ControllerConfig, ControllerEvent, ControllerNode, Origin,
    Peer, StandbyConfig,
};
use xco_core::coord::{CoordConfig, Egress, Gate, HostCoordinator, Offer, RateBurst};
use xco_core::sched::{
    BfsPaths, Directive, DirectiveKind, Mode, OnDemandConfig, SchedConfig, SchedTopology, Scheduler,
};
use xco_core::wire::{host_key, peer_key, run_of, AgentKeys, ControllerKeys, Echo, Message, Packet, Repr};
use xco_core::{Dur, Rng, Time};

const MASTER: &[u8] = b"dst master secret, 32 bytes long";
/// The key a hostile host signs forgeries with: well-formed, not the controller's.
const OTHER_MASTER: &[u8] = b"a forger's secret, 32 bytes long";
const NAMES: [&str; 8] = ["h0", "h1", "h2", "h3", "h4", "h5", "h6", "h7"];
const PKT_BYTES: u32 = 1500;
/// On-demand coordination: a flow of at least this much over a report window is large.
const OD_THRESHOLD_BYTES: u64 = 15_000;

/// Timing of the protocol in every run.
pub const SLICE: Dur = Dur::from_ms(2);
pub const LEAD: Dur = Dur::from_us(500);
pub const REPORT: Dur = Dur::from_ms(5);
pub const FAIL_OPEN: Dur = Dur::from_ms(20);
pub const FEEDBACK_TIMEOUT: Dur = Dur::from_ms(60);
/// Faults stop here; the run ends at [`END`].
pub const QUIET: Time = Time(60 * xco_core::time::PS_PER_MS);
/// Coordination must have resumed this long after faults stop.
pub const RESUME: Dur = Dur::from_ms(50);
pub const END: Time = Time(150 * xco_core::time::PS_PER_MS);

/// Everything one seed decides.
#[derive(Clone, Debug)]
pub struct Setup {
    pub seed: u64,
    pub hosts: usize,
    /// (a, b, bit/s) cables; nodes `hosts..` are switches.
    pub cables: Vec<(u32, u32, u64)>,
    pub switches: usize,
    pub host_bps: u64,
    pub hostile: Option<u32>,
    pub net: NetFaults,
    /// Per node (hosts, then the controller).
    pub clocks: Vec<Clock>,
    /// (node, from, to): the node runs nothing (SIGSTOP) and catches up after.
    pub pauses: Vec<(Addr, Time, Time)>,
    /// (at, down): the controller (the one directing, with a standby) crashes
    /// and a new one starts `down` later.
    pub ctl_crashes: Vec<(Time, Dur)>,
    /// A standby controller beside the primary.
    pub standby: bool,
    /// The controller directing then dies for good (kill -9; a standby takes over).
    pub primary_dies: Option<Time>,
    /// (host, at, down).
    pub agent_crashes: Vec<(u32, Time, Dur)>,
    /// The hostile host acts about this often.
    pub hostile_every: Dur,
    /// On-demand coordination on (a quarter of the seeds, drawn last).
    pub on_demand: bool,
    /// From then on every honest host sends to h0, about every 0.5 ms (an incast).
    pub incast_from: Option<Time>,
    /// The on-demand invariant is checked from here on.
    pub on_demand_from: Time,
    /// A planted bug.
    #[cfg(feature = "mutations")]
    pub mutation: Option<xco_core::control::Mutation>,
}

impl Setup {
    /// The setup of `seed`: topology, faults and their times, all drawn from it.
    pub fn draw(seed: u64) -> Setup {
        let mut r = Rng::stream(seed, 1);
        let hosts = r.range_inclusive(3, 6) as usize;
        let g = 1_000_000_000u64;
        let (cables, switches) = if r.below(2) == 0 {
            ((0..hosts as u32).map(|h| (h, hosts as u32, g)).collect(), 1)
        } else {
            // two switches, the cable between them 1 or 2 Gbit/s
            let (a, b) = (hosts as u32, hosts as u32 + 1);
            let mut c: Vec<_> = (0..hosts as u32)
                .map(|h| (h, if h % 2 == 0 { a } else { b }, g))
                .collect();
            c.push((a, b, g * r.range_inclusive(1, 2)));
            (c, 2)
        };
        let hostile = (r.below(2) == 0).then(|| r.below(hosts as u64) as u32);
        let t = |r: &mut Rng, lo: u64, hi: u64| {
            Time::ZERO + Dur::from_us(r.range_inclusive(lo * 1000, hi * 1000))
        };
        let mut partitions = Vec::new();
        for _ in 0..r.below(3) {
            let who = if r.below(3) == 0 {
                CTL
            } else {
                r.below(hosts as u64) as u32
            };
            let from = t(&mut r, 5, 45);
            partitions.push((
                who,
                from,
                (from + Dur::from_us(r.range_inclusive(500, 30_000))).min(QUIET),
            ));
        }
        let net = NetFaults {
            loss_ppm: [0, 10_000, 100_000, 300_000][r.below(4) as usize],
            dup_ppm: [0, 10_000, 100_000][r.below(3) as usize],
            delay_min: Dur::from_us(r.range_inclusive(5, 50)),
            delay_max: Dur::from_us(r.range_inclusive(60, 400)),
            partitions,
            peer_cuts: Vec::new(),
        };
        let mut clocks: Vec<Clock> = (0..=hosts)
            .map(|_| Clock {
                offset_ps: r.below(1 << 50),
                drift_ppm: r.range_inclusive(0, 1000) as i64 - 500,
            })
            .collect();
        let mut pauses = Vec::new();
        for _ in 0..r.below(3) {
            let who = if r.below(2) == 0 {
                CTL
            } else {
                r.below(hosts as u64) as u32
            };
            let from = t(&mut r, 2, 50);
            pauses.push((
                who,
                from,
                (from + Dur::from_us(r.range_inclusive(100, 40_000))).min(QUIET),
            ));
        }
        let ctl_crashes = (0..r.below(3))
            .map(|_| (t(&mut r, 3, 45), Dur::from_us(r.range_inclusive(0, 12_000))))
            .collect();
        let agent_crashes = (0..r.below(3))
            .map(|_| {
                (
                    r.below(hosts as u64) as u32,
                    t(&mut r, 3, 45),
                    Dur::from_us(r.range_inclusive(0, 12_000)),
                )
            })
            .collect();
        // the hot standby, drawn last: a seed without one is the setup it was before
        let mut net = net;
        let standby = r.below(2) == 0;
        let mut primary_dies = None;
        clocks.push(Clock {
            offset_ps: r.below(1 << 50),
            drift_ppm: r.range_inclusive(0, 1000) as i64 - 500,
        });
        if standby {
            // partitions between the controllers (each still reaches the agents)
            for _ in 0..r.below(3) {
                let from = t(&mut r, 3, 50);
                net.peer_cuts.push((
                    from,
                    (from + Dur::from_us(r.range_inclusive(500, 20_000))).min(QUIET),
                ));
            }
            // a pause of the standby
            if r.below(3) == 0 {
                let from = t(&mut r, 2, 50);
                pauses.push((
                    CTL2,
                    from,
                    (from + Dur::from_us(r.range_inclusive(100, 20_000))).min(QUIET),
                ));
            }
            if r.below(3) == 0 {
                primary_dies = Some(t(&mut r, 3, 50));
            }
        }
        let hostile_every = Dur::from_us(r.range_inclusive(100, 2000));
        // on-demand coordination, drawn last: a seed without it is the setup it was before
        let on_demand = r.below(4) == 0;
        Setup {
            on_demand,
            incast_from: None,
            on_demand_from: QUIET + RESUME,
            seed,
            hosts,
            standby,
            primary_dies,
            cables,
            switches,
            host_bps: g,
            hostile,
            net,
            clocks,
            pauses,
            ctl_crashes,
            agent_crashes,
            hostile_every,
            #[cfg(feature = "mutations")]
            mutation: None,
        }
    }

    /// The same network with no fault, no hostile host and every pair coordinated.
    pub fn calm(seed: u64) -> Setup {
        let mut s = Setup::draw(seed);
        s.hostile = None;
        s.net.loss_ppm = 0;
        s.net.dup_ppm = 0;
        s.net.partitions.clear();
        s.net.peer_cuts.clear();
        s.primary_dies = None;
        s.pauses.clear();
        s.ctl_crashes.clear();
        s.agent_crashes.clear();
        s.on_demand = false; // the scenarios coordinate every pair (scenario "ondemand" turns it on)
        s
    }

    /// A calm network with a standby beside the primary and one fault:
    /// `takeover` (the primary dies, kill -9, at 30 ms, during an incast into
    /// h0 from 20 ms: every host has a backlog then), `pause` (the primary
    /// is paused, SIGSTOP, 20 to 30 ms, and returns stale), `split` (the
    /// controllers cannot hear each other 20 to 35 ms; both reach the agents),
    /// `standby-pause` (the standby is paused 20 to 30 ms: it resumes with
    /// its takeover timer late and the primary's beats unread),
    /// `standby-pause-dead` (the same, and the primary dies at 25 ms).
    pub fn scenario(name: &str, seed: u64) -> Result<Setup, String> {
        let mut s = Setup::calm(seed);
        s.standby = true;
        let at = |ms| Time::ZERO + Dur::from_ms(ms);
        match name {
            "takeover" => {
                s.primary_dies = Some(at(30));
                s.incast_from = Some(at(20));
            }
            "pause" => s.pauses = vec![(CTL, at(20), at(30))],
            "split" => s.net.peer_cuts = vec![(at(20), at(35))],
            // the standby descheduled 20 to 30 ms: the primary's beats wait unread
            "standby-pause" => s.pauses = vec![(CTL2, at(20), at(30))],
            // the same, and the primary dies meanwhile, at 25 ms
            "standby-pause-dead" => {
                s.pauses = vec![(CTL2, at(20), at(30))];
                s.primary_dies = Some(at(25));
            }
            "ondemand" => {
                // light traffic, then an incast into h0 from 40 ms
                s.standby = false;
                s.on_demand = true;
                s.incast_from = Some(at(40));
                s.on_demand_from = Time::ZERO;
            }
            _ => {
                return Err(format!(
                    "'{name}' is not a scenario: takeover, pause, split, standby-pause, standby-pause-dead or ondemand"
                ))
            }
        }
        Ok(s)
    }

    fn topology(&self) -> (SchedTopology, BfsPaths, Vec<u64>) {
        let mut links = Vec::new();
        let mut caps = Vec::new();
        for &(a, b, c) in &self.cables {
            links.push((a, b));
            caps.push(c);
            links.push((b, a));
            caps.push(c);
        }
        let n = self.hosts + self.switches;
        let is_host: Vec<bool> = (0..n).map(|i| i < self.hosts).collect();
        let topo = SchedTopology::new(
            vec![self.host_bps; self.hosts],
            caps.clone(),
            Box::new(BfsPaths::new(n, is_host.clone(), &links)),
        );
        (topo, BfsPaths::new(n, is_host, &links), caps)
    }
}

/// What a run did (for the report and the scenario tests).
#[derive(Clone, Debug, Default)]
pub struct Summary {
    pub events: u64,
    pub datagrams: u64,
    pub directives_applied: u64,
    /// Per host: joins sent, fail-opens.
    pub joins: Vec<u64>,
    pub fail_opens: Vec<u64>,
    /// Datagrams the agents dropped over their signature budget.
    pub over_budget: u64,
    pub controller_runs: u64,
    /// Terms taken after the first (standby takeovers, new terms).
    pub takeovers: u64,
    /// Standby timers that found their node had not run for more than a beat (live controllers at the end).
    pub rechecks: u64,
    /// Per primary death: true time from the crash to the first directive of a
    /// newer term applied by any agent.
    pub takeover_gaps: Vec<Dur>,
    /// Per primary death: true time from the crash to the first takeover.
    pub takeover_detect: Vec<Dur>,
    /// Per primary death: true time from the crash to the first slice of a
    /// newer term in force (a gate open) at any agent.
    pub takeover_slice: Vec<Dur>,
    /// Per primary death: how long no slice was in force: from the later of
    /// the crash and the end of the dead term's last slice at the agents
    /// (closed or ended) to the first slice of a newer term.
    pub takeover_uncovered: Vec<Dur>,
    /// On-demand: ungated sets the agents applied, windows with a link over
    /// capacity, large flows checked on links over capacity for the bound.
    pub ungated_sets: u64,
    pub over_windows: u64,
    pub on_demand_checked: u64,
}

enum Ev {
    Deliver {
        from: Addr,
        to: Addr,
        bytes: Vec<u8>,
    },
    Timer {
        node: Addr,
        gen: u64,
    },
    Traffic {
        host: u32,
    },
    /// The controller directing crashes (`down` `None`: for good).
    CtlCrash {
        down: Option<Dur>,
    },
    CtlStart {
        ci: usize,
    },
    AgentCrash {
        host: u32,
        down: Dur,
    },
    AgentStart {
        host: u32,
    },
    Hostile,
    Flood {
        victim: u32,
        left: u32,
    },
}

struct Agent {
    node: AgentNode<u64>,
    nic_free: Time,
    gen: u64,
    armed: Time,
    /// Local time of the last directive applied (the harness's own record).
    last_directive: Time,
    /// The run of the last directive applied.
    last_run: u64,
}

struct Ctl {
    node: ControllerNode<Addr>,
    gen: u64,
    armed: Time,
}

/// Per host, across incarnations.
#[derive(Clone, Copy, Default)]
struct Bytes {
    offered: u64,
    released: u64,
    passed: u64,
    lost_at_crash: u64,
}

struct Nic<'a> {
    free: &'a mut Time,
    bps: u64,
    released: &'a mut u64,
    /// The network the released packets go on, at this true time, from this host.
    wire: &'a mut dyn Transport,
    t: Time,
    host: u32,
}

/// A data packet's handle: its destination and its number in its burst.
fn data_pkt(dest: u32, i: u64) -> u64 {
    (dest as u64) << 32 | i
}

fn data_dest(pkt: u64) -> u32 {
    (pkt >> 32) as u32
}

impl Egress<u64> for Nic<'_> {
    fn free_at(&self, now: Time) -> Time {
        (*self.free).max(now)
    }
    fn rate_bps(&self) -> u64 {
        self.bps
    }
    fn has_room(&mut self, _: Time, _: u32) -> bool {
        true
    }
    fn send(&mut self, now: Time, pkt: u64, bytes: u32, wire: u64) {
        *self.free = self.free_at(now) + Dur::serialization(wire, self.bps);
        *self.released += bytes as u64;
        self.wire.data(self.t, self.host, data_dest(pkt), 1);
    }
}

/// The world of one run.
pub struct World {
    s: Setup,
    q: Queue<Ev>,
    rng: Rng,
    /// The controllers: the primary ([`CTL`]) and the standby ([`CTL2`]).
    ctls: [Option<Ctl>; 2],
    /// Per controller, the highest term its incarnations knew (what a
    /// restarted daemon keeps: its terms are above it).
    disk_term: [u64; 2],
    agents: Vec<Option<Agent>>,
    bytes: Vec<Bytes>,
    check: Checker,
    /// The on-demand invariant, if on-demand coordination is on.
    od: Option<OnDemandCheck>,
    /// Datagrams seen on the network (the hostile host captures everything).
    captured: Vec<(Addr, Addr, Vec<u8>)>,
    forger: ControllerKeys,
    flood_cache: Vec<Option<Vec<u8>>>,
    floods: u32,
    pub summary: Summary,
    trace: bool,
    incarnations: u64,
    /// How datagrams (and data) travel.
    net: Box<dyn Transport>,
}

impl World {
    /// The world of `s` on the model network.
    pub fn new(s: Setup, trace: bool) -> World {
        let model = Model {
            faults: s.net.clone(),
            quiet: QUIET,
        };
        World::on(s, trace, Box::new(model))
    }

    /// The world of `s` on the network `net`.
    pub fn on(s: Setup, trace: bool, net: Box<dyn Transport>) -> World {
        let (_, paths, caps) = s.topology();
        // one one-way delay, plus drift over a slice and its lead on both ends, plus 1 us
        let drift = Dur::from_ps((SLICE + LEAD).ps() / 1_000_000 * 2 * 500 * 2);
        let delay_max = net.delay_bound();
        let allowance = delay_max + drift + Dur::from_us(1);
        let hosts = s.hosts;
        let mut check = Checker::new(hosts, paths, caps, s.host_bps, allowance, FAIL_OPEN);
        check.gates_from = QUIET + SLICE + LEAD + delay_max;
        let rng = Rng::stream(s.seed, 2);
        let od = s.on_demand.then(|| {
            let (_, paths, caps) = s.topology();
            // a report window, an evaluation period, the trips, and one window of slack
            let mut c = OnDemandCheck::new(
                REPORT,
                OD_THRESHOLD_BYTES,
                Dur::from_ms(20),
                caps,
                s.host_bps,
                paths,
            );
            c.from = s.on_demand_from;
            c
        });
        World {
            od,
            q: Queue::new(),
            rng,
            ctls: [None, None],
            disk_term: [0, 0],
            agents: (0..hosts).map(|_| None).collect(),
            bytes: vec![Bytes::default(); hosts],
            check,
            captured: Vec::new(),
            forger: ControllerKeys::new(OTHER_MASTER, &NAMES[..hosts]),
            flood_cache: vec![None; hosts],
            floods: 0,
            summary: Summary {
                joins: vec![0; hosts],
                fail_opens: vec![0; hosts],
                ..Default::default()
            },
            trace,
            incarnations: 0,
            s,
            net,
        }
    }

    fn keys(&self) -> ControllerKeys {
        ControllerKeys::new(MASTER, &NAMES[..self.s.hosts])
    }

    fn honest(&self, h: u32) -> bool {
        self.s.hostile != Some(h)
    }

    /// True if the on-demand check counts host `h`'s traffic as demand: an
    /// honest host's always (from the check's start every honest agent is
    /// in a session and reports it); the hostile host's only while its agent
    /// is in a session of the directing controller and not failed open, so
    /// that it reports what it is offered. Out of one (failed open, its run
    /// suspended, its joins behind its own data on the sim network) it
    /// reports nothing, and it may withhold or misstate its demand at will:
    /// no controller can coordinate a link for demand it cannot be told.
    fn demand_knowable(&self, h: u32) -> bool {
        if self.honest(h) {
            return true;
        }
        let run = self
            .active_ctl()
            .and_then(|i| self.ctls[i].as_ref())
            .map(|c| c.node.run());
        self.agents[h as usize].as_ref().is_some_and(|a| {
            run.is_some() && a.node.run() == run && a.node.coord.state.gate != Gate::FailOpen
        })
    }

    fn clock(&self, a: Addr) -> Clock {
        self.s.clocks[match a {
            CTL => self.s.hosts,
            CTL2 => self.s.hosts + 1,
            a => a as usize,
        }]
    }

    /// The controllers agents send to.
    fn ctl_addrs(&self) -> &'static [Addr] {
        if self.s.standby {
            &[CTL, CTL2]
        } else {
            &[CTL]
        }
    }

    /// The live controller that directs with the highest term, if any.
    fn active_ctl(&self) -> Option<usize> {
        (0..2)
            .filter(|&i| self.ctls[i].as_ref().is_some_and(|c| c.node.is_active()))
            .max_by_key(|&i| self.ctls[i].as_ref().map(|c| c.node.term()))
    }

    fn paused_until(&self, a: Addr, t: Time) -> Option<Time> {
        self.s
            .pauses
            .iter()
            .find(|&&(n, f, u)| n == a && f <= t && t < u)
            .map(|p| p.2)
    }

    /// Run to the end or the first violation.
    #[allow(clippy::result_large_err)] // once per run
    pub fn run(mut self) -> Result<Summary, (Violation, Summary)> {
        self.start_controller(0, Time::ZERO);
        if self.s.standby {
            self.start_controller(1, Time::ZERO);
        }
        if let Some(at) = self.s.primary_dies {
            self.q.push(at, Ev::CtlCrash { down: None });
        }
        for h in 0..self.s.hosts as u32 {
            self.start_agent(h, Time::ZERO);
            let first = Dur::from_us(self.rng.below(3000));
            self.q.push(Time::ZERO + first, Ev::Traffic { host: h });
        }
        for &(at, down) in &self.s.ctl_crashes.clone() {
            self.q.push(at, Ev::CtlCrash { down: Some(down) });
        }
        for &(h, at, down) in &self.s.agent_crashes.clone() {
            self.q.push(at, Ev::AgentCrash { host: h, down });
        }
        if self.s.hostile.is_some() {
            self.q.push(Time::ZERO + self.s.hostile_every, Ev::Hostile);
        }
        let mut arrived: Vec<Arrival> = Vec::new();
        loop {
            // the network's own events (a packet network's hops) up to the world's next
            let next = self.q.peek_at();
            let wire = self.net.next_at();
            if wire <= next && wire < END {
                self.net.advance(wire, &mut arrived);
                for a in arrived.drain(..) {
                    self.q.push(
                        a.at,
                        Ev::Deliver {
                            from: a.from,
                            to: a.to,
                            bytes: a.bytes,
                        },
                    );
                }
                continue;
            }
            let Some(e) = self.q.pop() else { break };
            if e.at >= END {
                break;
            }
            self.summary.events += 1;
            let t = e.at;
            // a paused node does nothing until it resumes
            let node = match &e.ev {
                Ev::Deliver { to, .. } => Some(*to),
                Ev::Timer { node, .. } => Some(*node),
                Ev::Traffic { host } => Some(*host),
                _ => None,
            };
            if let Some(until) = node.and_then(|n| self.paused_until(n, t)) {
                // a resumed controller serves its timer before the datagrams that
                // wait in its socket (as the daemon's loop does)
                let at = match &e.ev {
                    Ev::Deliver { to, .. } if is_ctl(*to) => until + Dur::from_ps(1),
                    _ => until,
                };
                self.q.push(at, e.ev);
                continue;
            }
            self.step(t, e.ev);
            if let Some(v) = self.check.found.take() {
                return Err((v, self.summary));
            }
        }
        self.finish(END);
        self.summary.takeover_gaps = std::mem::take(&mut self.check.gaps);
        self.summary.takeover_detect = std::mem::take(&mut self.check.detect_gaps);
        self.summary.takeover_slice = std::mem::take(&mut self.check.slice_gaps);
        self.summary.takeover_uncovered = std::mem::take(&mut self.check.uncovered);
        if let Some(od) = &self.od {
            self.summary.over_windows = od.over_windows;
            self.summary.on_demand_checked = od.checked;
        }
        match self.check.found.take() {
            Some(v) => Err((v, self.summary)),
            None => Ok(self.summary),
        }
    }

    fn step(&mut self, t: Time, ev: Ev) {
        match ev {
            Ev::Deliver { from, to, bytes } => {
                if self.trace {
                    eprintln!("{t} deliver {} -> {} {}", name(from), name(to), describe(&bytes));
                }
                if is_ctl(to) {
                    let ci = (to == CTL2) as usize;
                    let now = self.clock(to).local(t);
                    let Some(c) = self.ctls[ci].as_mut() else { return };
                    let gave_back = c.node.stats.msgs[4];
                    c.node.handle_datagram(now, from, &bytes);
                    if c.node.stats.msgs[4] > gave_back {
                        let r = header(&bytes).expect("accepted");
                        if let Message::GiveBack { dest, .. } = r.msg {
                            self.check.gave_back(ci, r.host, dest, now);
                        }
                    }
                    self.after_ctl(ci, t);
                } else if self.agents[to as usize].is_some() {
                    let origin = if is_ctl(from) {
                        Origin::Controller
                    } else {
                        Origin::Other
                    };
                    self.with_agent(t, to, |a, now| {
                        a.node.handle_datagram(now, origin, &bytes);
                    });
                }
            }
            Ev::Timer { node, gen } => {
                if is_ctl(node) {
                    let ci = (node == CTL2) as usize;
                    let now = self.clock(node).local(t);
                    let Some(c) = self.ctls[ci].as_mut() else { return };
                    if c.gen != gen {
                        return;
                    }
                    c.armed = Time::NEVER;
                    c.node.handle_timeout(now);
                    self.after_ctl(ci, t);
                } else {
                    match &mut self.agents[node as usize] {
                        Some(a) if a.gen == gen => a.armed = Time::NEVER,
                        _ => return,
                    }
                    self.with_agent(t, node, |a, now| a.node.handle_timeout(now));
                }
            }
            Ev::Traffic { host } => {
                self.traffic(t, host);
                let incast = self.s.incast_from.is_some_and(|f| t >= f);
                let mean_us = match (self.honest(host), incast) {
                    (true, true) => 500.0,
                    (true, false) => 3000.0,
                    (false, _) => 1000.0,
                };
                let next = Dur::from_us(self.rng.exp(mean_us) as u64 + 1);
                self.q.push(t + next, Ev::Traffic { host });
            }
            Ev::CtlCrash { down } => {
                // the one directing (with a standby), else the primary
                let ci = self.active_ctl().unwrap_or(0);
                if self.trace {
                    eprintln!("{t} controller {} crashes for {down:?}", name(CTL - ci as u32));
                }
                if let Some(c) = self.ctls[ci].take() {
                    self.disk_term[ci] = self.disk_term[ci].max(c.node.max_term());
                    self.check
                        .ctl_crashed(ci, t, c.node.is_active().then(|| c.node.term()));
                }
                if let Some(down) = down {
                    self.q.push(t + down, Ev::CtlStart { ci });
                }
            }
            Ev::CtlStart { ci } => {
                if self.ctls[ci].is_none() {
                    self.start_controller(ci, t);
                }
            }
            Ev::AgentCrash { host, down } => {
                if let Some(a) = self.agents[host as usize].take() {
                    if self.trace {
                        eprintln!("{t} h{host} crashes for {down}");
                    }
                    // the kernel passes what a dead agent held
                    let held: u64 = a.node.coord.held().count() as u64 * PKT_BYTES as u64;
                    self.bytes[host as usize].lost_at_crash += held;
                    for &p in a.node.coord.held() {
                        self.net.data(t, host, data_dest(p), 1);
                    }
                    self.check.crashed(t, host);
                    self.check.occupancy(t);
                    self.q.push(t + down, Ev::AgentStart { host });
                }
            }
            Ev::AgentStart { host } => {
                if self.agents[host as usize].is_none() {
                    self.start_agent(host, t);
                }
            }
            Ev::Hostile => {
                if t < QUIET {
                    self.hostile_act(t);
                    let next = Dur::from_us(self.rng.exp(self.s.hostile_every.ps() as f64 / 1e6) as u64 + 1);
                    self.q.push(t + next, Ev::Hostile);
                }
            }
            Ev::Flood { victim, left } => {
                // one forgery signed once, sent 300 times: the victim checks each
                let d = match &self.flood_cache[victim as usize] {
                    Some(d) => d.clone(),
                    None => {
                        let d = self.forged_directive(victim, 1_000_000);
                        self.flood_cache[victim as usize] = Some(d.clone());
                        d
                    }
                };
                let me = self.s.hostile.expect("a hostile host");
                self.send_as(t, me, CTL, victim, d);
                if left > 0 {
                    self.q.push(
                        t + Dur::from_us(3),
                        Ev::Flood {
                            victim,
                            left: left - 1,
                        },
                    );
                }
            }
        }
    }

    fn start_controller(&mut self, ci: usize, t: Time) {
        let low = self.rng.next_u64() as u32;
        let addr = [CTL, CTL2][ci];
        // a controller's terms rise across its restarts (the daemon keeps its
        // highest); with a peer, the primary's first start directs, every
        // other start stands by until the peer is silent
        let first = self.summary.controller_runs < 1 + self.s.standby as u64;
        let active = !self.s.standby || (ci == 0 && first);
        let term = if active {
            let t = self.disk_term[ci] + 1;
            if self.s.standby && t % 2 != ci as u64 {
                t + 1
            } else {
                t
            }
        } else {
            self.disk_term[ci]
        };
        // alone: term 0, runs not ordered (as the daemon without a standby)
        let run = if self.s.standby {
            run_of(term, low)
        } else {
            low as u64
        };
        if self.trace {
            eprintln!(
                "{t} controller {} starts, run {run:x}, active {active}",
                name(addr)
            );
        }
        self.summary.controller_runs += 1;
        self.check.new_schedule(ci);
        let (topo, ..) = self.s.topology();
        let sched = Scheduler::new(
            topo,
            SchedConfig {
                mode: Mode::Timeslice,
                slice: SLICE,
                min_active: Dur::from_us(200),
                feedback_timeout: Some(FEEDBACK_TIMEOUT),
                lead: LEAD,
            },
        );
        let mut cfg = ControllerConfig {
            host_lease: Dur::from_ps(REPORT.ps() * 3),
            ..ControllerConfig::default()
        };
        if self.s.on_demand {
            cfg.on_demand = Some(OnDemandConfig {
                threshold_bytes: OD_THRESHOLD_BYTES,
                congestion_ratio: 0.9,
                window: REPORT,
                hold: Dur::from_ms(20),
            });
        }
        #[cfg(feature = "mutations")]
        {
            cfg.mutation = self.s.mutation;
        }
        let mut node = ControllerNode::new(cfg, sched, self.keys(), run);
        if self.s.standby {
            let other = [CTL2, CTL][ci];
            let peer = Peer::new(ci as u64, other, peer_key(MASTER), StandbyConfig::default());
            node = node.with_peer(peer, active);
        }
        self.ctls[ci] = Some(Ctl {
            node,
            gen: 0,
            armed: Time::NEVER,
        });
        self.after_ctl(ci, t);
    }

    fn start_agent(&mut self, h: u32, t: Time) {
        self.incarnations += 1;
        let keys =
            AgentKeys::new(h, &host_key(MASTER, NAMES[h as usize]), &self.keys().public_key()).unwrap();
        let now = self.clock(h).local(t);
        let coord = HostCoordinator::new(
            CoordConfig {
                giveback_hysteresis: Some(Dur::from_us(100)),
                fail_open_after: FAIL_OPEN,
                report_interval: REPORT,
                rate_burst: RateBurst::PACER,
                on_demand: self.s.on_demand,
            },
            u64::MAX,
            now,
        );
        #[allow(unused_mut)]
        let mut cfg = AgentConfig {
            addr: h.to_wire(),
            ..AgentConfig::default()
        };
        #[cfg(feature = "mutations")]
        {
            cfg.mutation = self.s.mutation;
        }
        let rng = Rng::stream(self.s.seed, 100 + self.incarnations);
        let node = AgentNode::new(cfg, coord, keys, rng);
        self.agents[h as usize] = Some(Agent {
            node,
            nic_free: Time::ZERO,
            gen: 0,
            armed: Time::NEVER,
            last_directive: now,
            last_run: 0,
        });
        self.with_agent(t, h, |a, now| a.node.start(now));
    }

    /// Move the controller's output to the network and re-arm its timer.
    fn after_ctl(&mut self, ci: usize, t: Time) {
        let me = [CTL, CTL2][ci];
        let clock = self.clock(me);
        let Some(c) = self.ctls[ci].as_mut() else { return };
        let now = clock.local(t);
        if c.node.poll_timeout().is_some_and(|d| d <= now) {
            c.node.handle_timeout(now);
        }
        let mut out = Vec::new();
        while let Some(x) = c.node.poll_transmit(now) {
            out.push(x);
        }
        let mut took_over = false;
        while let Some(e) = c.node.poll_event() {
            if self.trace {
                eprintln!("{t} {} {e:?}", name(me));
            }
            match e {
                ControllerEvent::TimedOut { host, .. } | ControllerEvent::Left { host } => {
                    // the scheduler forgot the host: so does the schedule
                    self.check.granted(ci, host, now, now, None);
                }
                ControllerEvent::TookOver { .. } => took_over = true,
                // the controller forgot every host: its schedule begins anew
                ControllerEvent::SteppedDown { .. } => self.check.new_schedule(ci),
                _ => {}
            }
        }
        if took_over {
            self.check.new_schedule(ci);
            self.check.took_over(t);
            self.summary.takeovers += 1;
        }
        let at = c
            .node
            .poll_timeout()
            .map_or(Time::NEVER, |l| clock.true_at(l).max(t));
        if at != c.armed {
            c.gen += 1;
            c.armed = at;
            if at != Time::NEVER {
                self.q.push(at, Ev::Timer { node: me, gen: c.gen });
            }
        }
        for (to, d) in out {
            if let Some(r) = header(&d) {
                if let Message::Directive(dir, _) = &r.msg {
                    if self.trace {
                        eprintln!(
                            "{t} {}@{now} sends h{} epoch {} start_in {} {:?}",
                            name(me),
                            dir.host,
                            dir.epoch,
                            dir.start_in,
                            dir.kind
                        );
                    }
                    self.check.sent(t, r.run, r.seq, dir.host, to);
                    if let DirectiveKind::Slice { dest, len, .. } = dir.kind {
                        let start = now + dir.start_in;
                        self.check.granted(ci, dir.host, start, start + len, dest);
                    }
                }
            }
            self.send(t, me, to, d);
        }
        self.check.schedule(ci, t, now);
    }

    /// Run `f` on agent `h` at true time `t`, then pump, move its output,
    /// check it and re-arm its timer.
    fn with_agent(&mut self, t: Time, h: u32, f: impl FnOnce(&mut Agent, Time)) {
        let clock = self.clock(h);
        let now = clock.local(t);
        let bps = self.s.host_bps;
        let honest = self.honest(h);
        let hu = h as usize;
        let Some(a) = self.agents[hu].as_mut() else { return };
        f(a, now);
        // as the daemon's loop: timers due by now run before it sleeps
        if a.node.poll_timeout() <= now {
            a.node.handle_timeout(now);
        }
        let mut nic = Nic {
            free: &mut a.nic_free,
            bps,
            released: &mut self.bytes[hu].released,
            wire: &mut *self.net,
            t,
            host: h,
        };
        a.node.coord.pump(now, &mut nic);
        let mut out = Vec::new();
        while let Some(d) = a.node.poll_transmit(now) {
            out.push(d);
        }
        let mut events = Vec::new();
        while let Some(e) = a.node.poll_event() {
            events.push(e);
        }
        let obeyed = a.node.run();
        for e in &events {
            match e {
                AgentEvent::NewRun { run } => self.check.adopted(t, h, *run),
                AgentEvent::Applied { run, seq, directive } => {
                    a.last_directive = now;
                    a.last_run = *run;
                    self.summary.directives_applied += 1;
                    self.check.applied(t, h, obeyed, *run, *seq, directive.host);
                }
                AgentEvent::Joining { .. } => self.summary.joins[hu] += 1,
                AgentEvent::Ungated { .. } => self.summary.ungated_sets += 1,
                AgentEvent::FailOpen { .. } => {
                    self.summary.fail_opens[hu] += 1;
                    if honest && t >= QUIET + RESUME {
                        self.check
                            .fail(t, format!("resumes: h{h} failed open after faults stopped"));
                    }
                }
                _ => {}
            }
            if self.trace {
                eprintln!("{t} h{h} {}", event_line(e));
            }
        }
        // slice-or-fail-open, by the harness's own record of directives
        let st = &a.node.coord.state;
        let backlogged = st.backlogged();
        if backlogged && st.gate != Gate::FailOpen {
            let deadline = a.last_directive.max(st.backlogged_since) + st.cfg.fail_open_after;
            if now > deadline {
                self.check.fail(
                    t,
                    format!(
                        "slice-or-fail-open: h{h} backlogged without a directive for {} and not failed open",
                        now.saturating_since(a.last_directive.max(st.backlogged_since))
                    ),
                );
            }
        }
        let open = match st.gate {
            Gate::Open { dest, until, .. } if until > now => Some(Open {
                dest,
                from: t,
                until: clock.true_at(until),
                run: a.last_run,
            }),
            _ => None,
        };
        let held = st.backlog();
        let open_to = open.map(|o| o.dest);
        let at = clock.true_at(a.node.poll_timeout()).max(t);
        if at != a.armed {
            a.gen += 1;
            a.armed = at;
            if at != Time::NEVER {
                self.q.push(at, Ev::Timer { node: h, gen: a.gen });
            }
        }
        if let (Some(od), true) = (self.od.as_mut(), honest) {
            if let Some(v) = od.ungated(t, h, &st.ungated) {
                self.check.fail(t, v);
            }
        }
        self.check.gate(t, h, open);
        self.check.occupancy(t);
        if honest {
            self.check.waits(t, h, &held, open_to, QUIET + RESUME);
        }
        for d in out {
            for &c in self.ctl_addrs() {
                self.send(t, h, c, d.clone());
            }
        }
    }

    /// Offer a burst of packets at agent `h` (the hostile one claims every destination).
    fn traffic(&mut self, t: Time, h: u32) {
        if self.agents[h as usize].is_none() {
            return;
        }
        let incast = self.s.incast_from.is_some_and(|f| t >= f);
        let dests: Vec<u32> = if incast && self.honest(h) {
            vec![if h == 0 { 1 } else { 0 }]
        } else if self.honest(h) {
            // each honest host sends to one of two peers
            let a = (h + 1 + self.rng.below(2) as u32) % self.s.hosts as u32;
            vec![if a == h { (h + 1) % self.s.hosts as u32 } else { a }]
        } else {
            (0..self.s.hosts as u32).filter(|&d| d != h).collect()
        };
        let n = self.rng.range_inclusive(1, 40);
        let mut passed = 0;
        let mut offered = 0;
        let mut pass = Vec::new();
        self.with_agent(t, h, |a, now| {
            for d in &dests {
                for i in 0..n {
                    offered += PKT_BYTES as u64;
                    match a
                        .node
                        .coord
                        .offer(now, *d, data_pkt(*d, i), PKT_BYTES, (1538, 0), false)
                    {
                        Offer::Held => {}
                        Offer::Pass(p) => {
                            passed += PKT_BYTES as u64;
                            pass.push(data_dest(p));
                        }
                        Offer::Drop(_) => unreachable!("the agent's queues never drop"),
                    }
                }
            }
        });
        let knowable = self.od.is_some() && self.demand_knowable(h);
        if let (Some(od), true) = (self.od.as_mut(), knowable) {
            for &d in &dests {
                od.offered(t, h, d, n * PKT_BYTES as u64);
            }
        }
        self.bytes[h as usize].offered += offered;
        self.bytes[h as usize].passed += passed;
        for d in pass {
            self.net.data(t, h, d, 1);
        }
    }

    fn send(&mut self, t: Time, from: Addr, to: Addr, d: Vec<u8>) {
        self.send_as(t, from, from, to, d);
    }

    /// Send `d` from node `wire_from` with the source address `from`.
    fn send_as(&mut self, t: Time, wire_from: Addr, from: Addr, to: Addr, d: Vec<u8>) {
        self.summary.datagrams += 1;
        if self.s.hostile.is_some() && t < QUIET {
            if self.captured.len() == 256 {
                let i = self.rng.below(256) as usize;
                self.captured.swap_remove(i);
            }
            self.captured.push((from, to, d.clone()));
        }
        let arrivals = self.net.send(&mut self.rng, t, wire_from, from, to, &d);
        for at in arrivals {
            self.q.push(
                at,
                Ev::Deliver {
                    from,
                    to,
                    bytes: d.clone(),
                },
            );
        }
    }

    fn forged_directive(&mut self, victim: u32, seq: u64) -> Vec<u8> {
        let run = self
            .active_ctl()
            .and_then(|i| self.ctls[i].as_ref())
            .map_or(1, |c| c.node.run());
        self.forger.encode(&Repr {
            host: xco_core::wire::CONTROLLER_ID,
            run,
            seq,
            msg: Message::Directive(
                Directive {
                    host: victim,
                    epoch: u64::MAX / 2,
                    start_in: Dur::ZERO,
                    kind: DirectiveKind::Slice {
                        dest: Some((victim + 1) % self.s.hosts as u32),
                        len: Dur::from_ms(10),
                        rate_bps: None,
                    },
                },
                Echo::default(),
            ),
        })
    }

    /// One hostile action: replay, forge, flood, or replay a victim's join from its own address.
    fn hostile_act(&mut self, t: Time) {
        let me = self.s.hostile.expect("a hostile host");
        let hosts = self.s.hosts as u32;
        let victim = (me + 1 + self.rng.below(hosts as u64 - 1) as u32) % hosts;
        match self.rng.below(6) {
            0 | 1 if !self.captured.is_empty() => {
                // replay a captured datagram to where it went, or to anyone, from any source
                let (from, to, d) =
                    self.captured[self.rng.below(self.captured.len() as u64) as usize].clone();
                let to = if self.rng.below(2) == 0 {
                    to
                } else {
                    [CTL, victim, CTL2][self.rng.below(2 + self.s.standby as u64) as usize]
                };
                let from = if is_ctl(to) {
                    [from, me][self.rng.below(2) as usize]
                } else {
                    [CTL, CTL2][self.rng.below(1 + self.s.standby as u64) as usize]
                };
                self.send_as(t, me, from, to, d);
            }
            2 => {
                let seq = self.rng.next_u64() >> 1;
                let d = self.forged_directive(victim, seq);
                self.send_as(t, me, CTL, victim, d);
            }
            3 => {
                // a report in the victim's name under the hostile host's own key
                let keys = AgentKeys::new(
                    me,
                    &host_key(MASTER, NAMES[me as usize]),
                    &self.keys().public_key(),
                )
                .unwrap();
                let mut d = keys.encode(&Repr {
                    host: me,
                    run: 1,
                    seq: 1,
                    msg: Message::Report { dests: vec![me] },
                });
                d[4..8].copy_from_slice(&victim.to_be_bytes());
                self.send(t, me, CTL, d);
            }
            // at most two floods a run: each costs the victim a burst of signature checks
            // (the harness's own time, mostly), and two already exhaust its budget
            4 if self.floods < 2 => {
                self.floods += 1;
                self.q.push(t, Ev::Flood { victim, left: 300 });
            }
            _ => {
                // the victim's captured join, from the hostile host's address
                let join = self.captured.iter().rev().find(|(f, to, d)| {
                    *f == victim && *to == CTL && header(d).is_some_and(|r| r.msg == Message::Join)
                });
                if let Some((_, _, d)) = join.cloned() {
                    self.send(t, me, CTL, d);
                }
            }
        }
    }

    /// End-of-run checks: resumed coordination and conserved bytes.
    fn finish(&mut self, t: Time) {
        match self.net.finish(t) {
            Ok(line) if self.trace && !line.is_empty() => {
                eprintln!("{t} {} network: {line}", self.net.name())
            }
            Ok(_) => {}
            Err(v) => self.check.fail(t, v),
        }
        self.summary.rechecks = self.ctls.iter().flatten().map(|c| c.node.stats.rechecks).sum();
        let active: Vec<usize> = (0..2)
            .filter(|&i| self.ctls[i].as_ref().is_some_and(|c| c.node.is_active()))
            .collect();
        if active.len() != 1 {
            self.check.fail(
                t,
                format!("resumes: {} controllers direct at the end", active.len()),
            );
        }
        let run = self
            .active_ctl()
            .and_then(|i| self.ctls[i].as_ref())
            .map(|c| c.node.run());
        for h in 0..self.s.hosts as u32 {
            let Some(a) = &self.agents[h as usize] else {
                continue;
            };
            if self.honest(h) && a.node.run() != run {
                self.check.fail(
                    t,
                    format!(
                        "resumes: h{h} obeys run {:x?}, the controller is run {run:x?}",
                        a.node.run()
                    ),
                );
            }
            self.summary.over_budget += a.node.stats.over_budget;
            let b = self.bytes[h as usize];
            let held = a.node.coord.held().count() as u64 * PKT_BYTES as u64;
            if b.offered != b.released + b.passed + held + b.lost_at_crash {
                self.check.fail(t, format!(
                    "conserved: h{h} offered {} bytes, released {}, passed {}, holds {held}, passed at crashes {}",
                    b.offered, b.released, b.passed, b.lost_at_crash
                ));
            }
        }
    }
}

/// The header and message of a datagram, unauthenticated (for the harness's bookkeeping).
fn header(d: &[u8]) -> Option<Repr> {
    Packet::new_checked(d).ok().and_then(|p| Repr::parse(&p).ok())
}

fn name(a: Addr) -> String {
    match a {
        CTL => "ctl".into(),
        CTL2 => "ctl2".into(),
        a => format!("h{a}"),
    }
}

fn describe(d: &[u8]) -> String {
    if let Ok(b) = xco_core::wire::PeerBeat::decode(&peer_key(MASTER), d) {
        return format!("{b:?}");
    }
    match header(d) {
        Some(r) => format!("{:?} run={:x} seq={}", r.msg, r.run, r.seq),
        None => format!("{} bytes, malformed", d.len()),
    }
}

fn event_line(e: &AgentEvent) -> String {
    match e {
        AgentEvent::Applied { run, seq, directive } => {
            format!("applied run={run:x} seq={seq} {:?}", directive.kind)
        }
        e => format!("{e:?}"),
    }
}
