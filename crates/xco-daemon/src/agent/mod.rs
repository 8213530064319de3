//! `xco-daemon agent`: a host's local coordinator on a real Linux host.
//!
//! It intercepts the host's outgoing traffic to the other hosts of the
//! topology (its own and its guests', through a [`gate::PacketGate`]), holds
//! it per destination host (V2V flows keyed by the destination's addresses),
//! and releases it only as the controller's directives allow. The decisions —
//! gate state, accounting, pacing, give-back after the hysteresis, fail-open,
//! report timers — are `xco_core::coord::Coordinator`, the code the
//! simulator's coordinators run; this module only moves packets and messages.
//!
//! - Held packets are never dropped by the agent; they resume the instant a
//!   slice for their destination opens.
//! - The backlog set is reported when it grows, and in full every report
//!   interval (this is also the heartbeat, and how a restarted controller
//!   relearns the schedule).
//! - Backlogged without a directive for `fail_open_ms`: the agent fails open
//!   (releases everything, passes everything) and logs it; the next directive
//!   restores coordination.
//! - SIGTERM/SIGINT: held packets are released, a leave is sent, the
//!   interception rules are removed.

pub mod gate;
pub mod nfqueue;

use crate::channel::{Channel, CONTROLLER_ID};
use crate::config::Topology;
use crate::log::{Level, Logger};
use crate::runtime::{Clock, Poller, Wake};
use gate::PacketGate;
use std::collections::VecDeque;
use std::net::SocketAddr;
use std::os::fd::AsFd;
use std::time::{Duration, Instant};
use xco_core::coord::{CoordConfig, Coordinator, Gate, Release};
use xco_core::wire::Message;
use xco_core::{Dur, Time};

/// How an agent is started.
pub struct AgentOpts {
    /// The topology.
    pub topo: Topology,
    /// This host's id.
    pub host: u32,
    /// Shared key.
    pub key: Vec<u8>,
    /// Local address of the control socket.
    pub bind: SocketAddr,
    /// Log level.
    pub log_level: Level,
    /// Log counters this often.
    pub stats_every: Duration,
}

/// Counters of an agent.
#[derive(Clone, Debug, Default)]
pub struct AgentStats {
    /// Packets intercepted.
    pub intercepted: u64,
    /// Of those, released at once (not for a coordinated host, not IPv4, or failed open).
    pub passed: u64,
    /// Packets held for a directive.
    pub held: u64,
    /// Held packets released.
    pub released: u64,
    /// IP bytes held.
    pub held_bytes: u64,
    /// Bytes released after being held.
    pub released_bytes: u64,
    /// Directives applied.
    pub directives: u64,
    /// Backlog reports sent.
    pub reports: u64,
    /// Slices given back.
    pub givebacks: u64,
    /// Times the agent failed open.
    pub fail_opens: u64,
    /// Release errors (verdict not accepted by the kernel).
    pub release_errors: u64,
}

struct Agent<G: PacketGate> {
    me: u32,
    /// The host's link rate: released packets drain from its NIC at this rate.
    nic_bps: u64,
    /// When the NIC will have sent everything released so far (a model: the
    /// kernel's queue is not visible from here). A slice releases only what
    /// can start before it ends, as in the simulator.
    nic_free_at: Time,
    topo: Topology,
    core: Coordinator,
    queues: Vec<VecDeque<(G::Packet, u32)>>,
    gate: G,
    chan: Channel,
    controller: SocketAddr,
    clock: Clock,
    log: Logger,
    stats: AgentStats,
    /// Directive receipt -> first released packet, ns (last 4096).
    first_release_ns: VecDeque<u64>,
    pending_directive: Option<Instant>,
    /// A report that grew the backlog set was sent at this instant; the next directive answers it.
    report_sent: Option<Instant>,
    /// Backlog report -> next directive, ns (last 4096): the controller round trip.
    report_rtt_ns: VecDeque<u64>,
}

/// Bytes on the wire of an IP packet of `ip_bytes` (Ethernet header per 1500-byte fragment/segment).
fn wire_bytes(ip_bytes: u32) -> u64 {
    let frames = (ip_bytes as u64).div_ceil(1500).max(1);
    ip_bytes as u64 + 14 * frames
}

fn push_sample(v: &mut VecDeque<u64>, ns: u64) {
    if v.len() == 4096 {
        v.pop_front();
    }
    v.push_back(ns);
}

fn quantile_us(v: &VecDeque<u64>, q: f64) -> f64 {
    let mut v: Vec<u64> = v.iter().copied().collect();
    if v.is_empty() {
        return 0.0;
    }
    v.sort_unstable();
    v[((v.len() - 1) as f64 * q).round() as usize] as f64 / 1e3
}

impl<G: PacketGate> Agent<G> {
    fn report(&mut self) {
        let dests = self.core.take_report(self.clock.now());
        self.stats.reports += 1;
        self.chan.send(self.controller, Message::Report { dests });
    }

    fn release(&mut self, p: G::Packet) {
        if self.gate.release(p).is_err() {
            self.stats.release_errors += 1;
        }
    }

    fn on_packets(&mut self) {
        let now = self.clock.now();
        let mut report = false;
        loop {
            let (p, info) = match self.gate.recv() {
                Ok(Some(x)) => x,
                Ok(None) => break,
                Err(e) => {
                    self.log.warn("intercept_error", &[("error", &e)]);
                    break;
                }
            };
            self.stats.intercepted += 1;
            let dst = info
                .dst
                .and_then(|a| self.topo.host_of(a))
                .filter(|&d| d != self.me);
            let Some(dst) = dst else {
                self.stats.passed += 1;
                self.release(p);
                continue;
            };
            let qi = self.core.dest_index(dst);
            if qi == self.queues.len() {
                self.queues.push(VecDeque::new());
            }
            if self.core.gate == Gate::FailOpen {
                // still reported, so a controller that comes back learns the demand
                report |= self.core.pass_open(now, qi);
                self.stats.passed += 1;
                self.release(p);
                continue;
            }
            self.queues[qi].push_back((p, info.ip_bytes));
            self.stats.held += 1;
            self.stats.held_bytes += info.ip_bytes as u64;
            report |= self.core.hold(now, qi, info.ip_bytes as u64);
        }
        if report {
            self.report_sent = Some(Instant::now());
            self.report();
        }
        self.pump(now);
    }

    /// Release what the gate allows.
    fn pump(&mut self, now: Time) {
        let mut released = false;
        let mut pace_wake = Time::NEVER;
        for qi in 0..self.queues.len() {
            while let Some(&(_, bytes)) = self.queues[qi].front() {
                let start = self.nic_free_at.max(now);
                let wire = wire_bytes(bytes);
                // a held packet may be a whole 64 KB datagram or GSO burst: its last
                // frame (not only its first) must start inside the slice, unless
                // the NIC is idle (a packet longer than a slice still goes, alone)
                let last_frame = if start > now {
                    start
                        + (Dur::serialization(wire, self.nic_bps)
                            - Dur::serialization(wire.min(1514), self.nic_bps))
                } else {
                    start
                };
                match self.core.may_release(now, qi, last_frame) {
                    Release::No => break,
                    Release::At(t) => {
                        pace_wake = pace_wake.min(t);
                        break;
                    }
                    Release::Now => {}
                }
                let (p, _) = self.queues[qi].pop_front().expect("non-empty");
                self.nic_free_at = start + Dur::serialization(wire, self.nic_bps);
                self.core.released(now, qi, bytes as u64, wire);
                self.release(p);
                self.stats.released += 1;
                self.stats.released_bytes += bytes as u64;
                released = true;
            }
        }
        if released {
            if let Some(t0) = self.pending_directive.take() {
                push_sample(&mut self.first_release_ns, t0.elapsed().as_nanos() as u64);
            }
        }
        self.core
            .after_pump(released, self.nic_free_at.max(now), pace_wake);
    }

    fn on_datagrams(&mut self) {
        while let Some((from, r)) = self.chan.recv() {
            let repr = match r {
                Ok(r) => r,
                Err(e) => {
                    self.log.warn("rejected", &[("from", &from), ("why", &e)]);
                    continue;
                }
            };
            if repr.host != CONTROLLER_ID {
                self.log.warn(
                    "rejected",
                    &[("from", &from), ("why", &"not from the controller")],
                );
                continue;
            }
            let Message::Directive(d) = repr.msg else { continue };
            if d.host != self.me {
                self.log.warn(
                    "rejected",
                    &[("from", &from), ("why", &"directive for another host")],
                );
                continue;
            }
            let t0 = Instant::now();
            if let Some(sent) = self.report_sent.take() {
                push_sample(&mut self.report_rtt_ns, t0.duration_since(sent).as_nanos() as u64);
            }
            let now = self.clock.now();
            let was_open = self.core.gate == Gate::FailOpen;
            if !self.core.apply(now, d.epoch, &d.kind) {
                continue;
            }
            self.queues.resize_with(self.core.dests.len(), VecDeque::new);
            self.stats.directives += 1;
            if was_open {
                self.log.info("coordination_resumed", &[("epoch", &d.epoch)]);
            }
            self.pending_directive = Some(t0);
            self.pump(now);
            self.pending_directive = None;
        }
    }

    fn on_timer(&mut self) {
        let now = self.clock.now();
        let act = self.core.on_timer(now);
        if let Some(dest) = act.giveback {
            self.stats.givebacks += 1;
            self.chan.send(self.controller, Message::GiveBack { dest });
        }
        if act.failed_open {
            self.stats.fail_opens += 1;
            let held: usize = self.queues.iter().map(|q| q.len()).sum();
            let silent_ms = now.saturating_since(self.core.last_directive).as_secs_f64() * 1e3;
            self.log.warn(
                "fail_open",
                &[
                    ("why", &"no directive while backlogged"),
                    ("ms_since_directive", &format!("{silent_ms:.1}")),
                    ("held_pkts", &held),
                ],
            );
        }
        if act.report {
            self.report();
        }
        self.pump(now);
    }

    fn log_stats(&self, event: &str) {
        let s = &self.stats;
        let c = &self.chan.stats;
        self.log.info(
            event,
            &[
                ("intercepted", &s.intercepted),
                ("passed", &s.passed),
                ("held", &s.held),
                ("released", &s.released),
                ("held_bytes", &s.held_bytes),
                ("released_bytes", &s.released_bytes),
                ("directives", &s.directives),
                ("reports", &s.reports),
                ("givebacks", &s.givebacks),
                ("fail_opens", &s.fail_opens),
                ("release_errors", &s.release_errors),
                ("rejected_auth", &c.rejected_auth),
                ("rejected_replay", &c.rejected_replay),
                ("rejected_malformed", &c.rejected_malformed),
                (
                    "first_release_p50_us",
                    &format!("{:.1}", quantile_us(&self.first_release_ns, 0.5)),
                ),
                (
                    "first_release_p99_us",
                    &format!("{:.1}", quantile_us(&self.first_release_ns, 0.99)),
                ),
                (
                    "report_rtt_p50_us",
                    &format!("{:.1}", quantile_us(&self.report_rtt_ns, 0.5)),
                ),
                (
                    "report_rtt_p99_us",
                    &format!("{:.1}", quantile_us(&self.report_rtt_ns, 0.99)),
                ),
            ],
        );
    }

    /// Release everything held (shutdown).
    fn release_all(&mut self) {
        for qi in 0..self.queues.len() {
            while let Some((p, bytes)) = self.queues[qi].pop_front() {
                self.core
                    .released(self.clock.now(), qi, bytes as u64, bytes as u64);
                self.release(p);
                self.stats.released += 1;
                self.stats.released_bytes += bytes as u64;
            }
        }
    }
}

/// Run an agent over `gate` until SIGTERM/SIGINT.
pub fn run<G: PacketGate>(opts: AgentOpts, gate: G, mut poller: Poller) -> Result<(), String> {
    let log = Logger::new("agent", opts.log_level);
    let c = &opts.topo.file.control;
    let controller = c.controller;
    let chan = Channel::bind(opts.bind, opts.host, &opts.key)
        .map_err(|e| format!("cannot bind the control socket {}: {e}", opts.bind))?;
    poller
        .watch(chan.sock.as_fd(), 0)
        .map_err(|e| format!("event loop: {e}"))?;
    poller
        .watch(gate.fd(), 1)
        .map_err(|e| format!("event loop: {e}"))?;
    let clock = Clock::new();
    let now = clock.now();
    let cfg = CoordConfig {
        giveback_hysteresis: (c.giveback_hysteresis_us > 0).then(|| Dur::from_us(c.giveback_hysteresis_us)),
        fail_open_after: Dur::from_ms(c.fail_open_ms),
        report_interval: Dur::from_ms(c.report_interval_ms),
    };
    let mut core = Coordinator::new(cfg, now);
    core.start(now);
    let nic_bps = (opts.topo.file.hosts[opts.host as usize].rate_mbps * 1e6) as u64;
    let mut a = Agent {
        me: opts.host,
        nic_bps: nic_bps.max(1),
        nic_free_at: Time::ZERO,
        topo: opts.topo,
        core,
        queues: Vec::new(),
        gate,
        chan,
        controller,
        clock,
        log: log.clone(),
        stats: AgentStats::default(),
        first_release_ns: VecDeque::new(),
        pending_directive: None,
        report_sent: None,
        report_rtt_ns: VecDeque::new(),
    };
    let name = &a.topo.file.hosts[a.me as usize].name;
    log.info(
        "start",
        &[("host", name), ("id", &a.me), ("controller", &controller)],
    );
    a.chan.send(controller, Message::Join);
    a.report();
    let mut wakes = Vec::new();
    let mut next_stats = Instant::now() + opts.stats_every;
    loop {
        let now = a.clock.now();
        poller
            .arm(now, a.core.next_deadline())
            .map_err(|e| format!("timer: {e}"))?;
        poller
            .wait(Duration::from_millis(500), &mut wakes)
            .map_err(|e| format!("event loop: {e}"))?;
        for w in wakes.iter().copied() {
            match w {
                Wake::Readable(0) => a.on_datagrams(),
                Wake::Readable(_) => a.on_packets(),
                Wake::Timer => a.on_timer(),
                Wake::Shutdown => {
                    a.release_all();
                    a.chan.send(controller, Message::Leave);
                    let r = a.gate.uninstall();
                    a.log_stats("stop");
                    return r;
                }
            }
        }
        if a.core.next_deadline() <= a.clock.now() {
            a.on_timer();
        }
        if Instant::now() >= next_stats {
            next_stats = Instant::now() + opts.stats_every;
            a.log_stats("stats");
        }
    }
}
