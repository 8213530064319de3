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
//! - Its control plane is `xco_core::control::AgentNode`, the code the
//!   simulation harness runs: the run it obeys (adopted from a signed
//!   challenge answering its own join), its joins (only when the controller
//!   asks about its current session), the signature budget, rejection
//!   counts. This module moves datagrams and time to it and logs its events
//!   (every line a datagram can cause at most once a second per kind, with
//!   the count it stands for).
//! - The loop serves its timers and its packets before the control socket,
//!   and reads one batch of control datagrams per wake-up (at most
//!   [`crate::channel::BATCH`], one `recvmmsg`) and at most
//!   [`DATAGRAMS_PER_TICK`] a millisecond ([`crate::intake`]; spent, the
//!   socket is set aside until the next tick and the kernel drops and
//!   counts what it cannot hold): a flood of (signed) junk cannot starve the
//!   packet path or the fail-open timer, nor take more than a bounded share
//!   of the CPU. Datagrams from any address but the controller's are
//!   dropped unread.
//! - `--metrics ADDR` serves `/metrics` (per-destination held and released
//!   traffic, gate state, fail-opens, rejections, verdict latency) and
//!   `/healthz`.
//! - SIGTERM/SIGINT: held packets are released, a leave is sent, the
//!   interception rules are removed.
//! - A hung or dead agent releases its host: a watchdog process
//!   ([`watchdog`]) releases everything held and passes new packets when the
//!   loop has not beaten for `fail_open_ms` + 50 ms; the agent re-takes the
//!   gate when it runs again (`event=gate_retaken`).

pub mod gate;
mod metrics;
mod nfnetlink;
pub mod nfqueue;
mod nic;
pub mod verdict;
pub mod watchdog;

use crate::channel::Channel;
use crate::config::Topology;
use crate::http::{Histogram, HttpServer};
use crate::intake::Intake;
use crate::log::{Level, Logger, Throttle};
use crate::runtime::{Clock, Poller, Wake};
use gate::PacketGate;
use nic::{frames, Held, Nic};
use std::collections::VecDeque;
use std::net::SocketAddr;
use std::os::fd::AsFd;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};
use watchdog::Watchdog;
use xco_core::control::{Address, AgentConfig, AgentEvent, AgentNode, Origin};
use xco_core::coord::{HostCoordinator, Offer};
use xco_core::wire::AgentKeys;
use xco_core::{Rng, Time};

/// Control datagrams read per tick of [`crate::intake::TICK`], at most (an
/// agent hears a directive or two per slice from its controller, and a
/// challenge or a hello per join).
pub const DATAGRAMS_PER_TICK: usize = 64;

/// How an agent is started.
pub struct AgentOpts {
    /// The topology.
    pub topo: Topology,
    /// This host's id.
    pub host: u32,
    /// This host's keys.
    pub keys: AgentKeys,
    /// Local address of the control socket (an address of the control network).
    pub bind: SocketAddr,
    /// Serve Prometheus metrics and health here.
    pub metrics: Option<SocketAddr>,
    /// Log level.
    pub log_level: Level,
    /// Log counters this often.
    pub stats_every: Duration,
    /// The watchdog process (started by the caller with the gate's socket).
    pub watchdog: Option<Watchdog>,
    /// Testing only: SIGUSR1 makes the loop spin this long without serving anything
    /// (a busy loop, to test the watchdog).
    pub debug_spin_on_sigusr1: Option<Duration>,
}

/// Counters of an agent (the coordinator counts held, released,
/// directives, reports, give-backs and fail-opens itself).
#[derive(Clone, Debug, Default)]
pub struct AgentStats {
    /// Packets intercepted.
    pub intercepted: u64,
    /// Of those, released at once (not for a coordinated host, not IP, or failed open).
    pub passed: u64,
    /// IP bytes held.
    pub held_bytes: u64,
    /// Bytes released after being held.
    pub released_bytes: u64,
    /// Release errors (verdict not accepted by the kernel).
    pub release_errors: u64,
    /// Per destination host: packets and IP bytes held, then released.
    pub per_dest: Vec<DestStats>,
    /// Interception -> verdict of held packets.
    pub verdict_latency: Histogram,
    /// Times the watchdog released the host while the agent was silent.
    pub watchdog_releases: u64,
    /// Packets the kernel held then, released by the watchdog.
    pub watchdog_released_pkts: u64,
}

/// Traffic to one destination host.
#[derive(Clone, Copy, Debug, Default)]
pub struct DestStats {
    /// Packets held.
    pub held_pkts: u64,
    /// IP bytes held.
    pub held_bytes: u64,
    /// Held packets released.
    pub released_pkts: u64,
    /// IP bytes released after being held.
    pub released_bytes: u64,
}

struct Agent<G: PacketGate> {
    me: u32,
    /// The host's link rate: released packets drain from its NIC at this rate.
    nic_bps: u64,
    /// When the NIC will have sent everything released so far (a model: the
    /// kernel's queue is not visible from here). A slice releases only
    /// packets whose last frame starts before it ends (the coordinator's rule).
    nic_free_at: Time,
    topo: Topology,
    /// The control plane, with the coordinator and the held packets.
    node: AgentNode<Held<G::Packet>>,
    gate: G,
    chan: Channel,
    /// The controllers: everything goes to each (a standby watches).
    controllers: Vec<SocketAddr>,
    clock: Clock,
    /// The run of the last directive applied, and when.
    last_directive: Option<(u64, Instant)>,
    /// The latest change of run: (term, gap since the previous run's last directive, µs).
    pub last_run_change: Option<(u64, u64)>,
    log: Logger,
    throttles: Throttles,
    stats: AgentStats,
    /// How many control datagrams the loop reads.
    intake: Intake,
    /// Directive receipt -> first released packet, ns (last 4096).
    first_release_ns: VecDeque<u64>,
    pending_directive: Option<Instant>,
    /// A report that grew the backlog set was sent at this instant; the next directive answers it.
    report_sent: Option<Instant>,
    /// Backlog report -> next directive, ns (last 4096): the controller round trip.
    report_rtt_ns: VecDeque<u64>,
}

/// Log lines the network can cause, at most one a second each.
struct Throttles {
    rejected: Throttle,
    fail_open: Throttle,
    resumed: Throttle,
    retaken: Throttle,
    intercept_error: Throttle,
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
    /// Send what the node has to send (true if it was a backlog report)
    /// and log what it reports.
    fn flush(&mut self) -> bool {
        let mut reported = false;
        let now = self.clock.now();
        while let Some(d) = self.node.poll_transmit(now) {
            // a report is the only agent message of type 3
            reported |= d.get(3) == Some(&3);
            for c in &self.controllers {
                self.chan.send(*c, &d);
            }
        }
        while let Some(e) = self.node.poll_event() {
            self.log_event(e);
        }
        reported
    }

    fn log_event(&mut self, e: AgentEvent) {
        let now = Instant::now();
        match e {
            AgentEvent::NewRun { run } => {
                // at most one per join, and joins go out at most every 10 ms
                self.log
                    .info("controller_run", &[("run", &format!("{run:016x}"))]);
            }
            AgentEvent::Rejected(why) => {
                if let Some(n) = self.throttles.rejected.event(now) {
                    let total = self.node.rejected.total();
                    self.log.warn(
                        "rejected",
                        &[("count", &n), ("total", &total), ("last_why", &why)],
                    );
                }
            }
            AgentEvent::Dropped { why } => {
                if let Some(n) = self.throttles.rejected.event(now) {
                    let s = &self.node.stats;
                    self.log.warn(
                        "dropped",
                        &[
                            ("count", &n),
                            ("foreign", &s.foreign),
                            ("over_budget", &s.over_budget),
                            ("last_why", &why),
                        ],
                    );
                }
            }
            AgentEvent::FailOpen {
                held_pkts,
                since_directive,
            } => {
                if let Some(n) = self.throttles.fail_open.event(now) {
                    let ms = since_directive.as_secs_f64() * 1e3;
                    self.log.warn(
                        "fail_open",
                        &[
                            ("why", &"no directive while backlogged"),
                            ("ms_since_directive", &format!("{ms:.1}")),
                            ("held_pkts", &held_pkts),
                            ("count", &n),
                        ],
                    );
                }
            }
            // on-demand: counted in the node's stats (`ungates`), not logged
            AgentEvent::Ungated { .. } => {}
            AgentEvent::Resumed { epoch } => {
                if let Some(n) = self.throttles.resumed.event(now) {
                    self.log
                        .info("coordination_resumed", &[("epoch", &epoch), ("count", &n)]);
                }
            }
            AgentEvent::Applied { run, .. } => {
                // the first directive of another run (a takeover or a restart): at
                // most one line per run, and runs change only by a signed join answer
                if let Some((last, at)) = self.last_directive {
                    if last != run {
                        let gap_us = now.duration_since(at).as_micros() as u64;
                        let term = xco_core::wire::term_of(run);
                        self.last_run_change = Some((term, gap_us));
                        self.log.info(
                            "run_changed",
                            &[
                                ("run", &format!("{run:016x}")),
                                ("term", &term),
                                ("previous_run", &format!("{last:016x}")),
                                ("gap_us", &gap_us),
                            ],
                        );
                    }
                }
                self.last_directive = Some((run, now));
            }
            AgentEvent::Joining { .. } => {}
        }
    }

    fn release(&mut self, p: G::Packet) {
        if self.gate.release(p).is_err() {
            self.stats.release_errors += 1;
        }
    }

    fn on_packets(&mut self) {
        let now = self.clock.now();
        // until the gate has nothing: it may hold packets already read from its socket,
        // which would not wake the loop again
        loop {
            let (p, info) = match self.gate.recv() {
                Ok(Some(x)) => x,
                Ok(None) => break,
                Err(e) => {
                    if let Some(n) = self.throttles.intercept_error.event(Instant::now()) {
                        self.log.warn("intercept_error", &[("error", &e), ("count", &n)]);
                    }
                    break;
                }
            };
            self.stats.intercepted += 1;
            let dst = info
                .dst
                .and_then(|a| self.topo.host_of_ip(a))
                .filter(|&d| d != self.me);
            let Some(dst) = dst else {
                self.stats.passed += 1;
                self.release(p);
                continue;
            };
            // packets of at most bypass_bytes within the bypass_pps token bucket
            // never reach the agent (the kernel rule applies that part of the
            // bypass rule); those beyond it are counted like any other
            match self.node.coord.offer(
                now,
                dst,
                (p, dst, now),
                info.ip_bytes,
                frames(info.ip_bytes),
                false,
            ) {
                Offer::Pass((p, ..)) | Offer::Drop((p, ..)) => {
                    self.stats.passed += 1;
                    self.release(p);
                }
                Offer::Held => {
                    self.stats.held_bytes += info.ip_bytes as u64;
                    let d = &mut self.stats.per_dest[dst as usize];
                    d.held_pkts += 1;
                    d.held_bytes += info.ip_bytes as u64;
                }
            }
        }
        if self.flush() {
            self.report_sent = Some(Instant::now());
        }
        self.pump(now);
    }

    /// Release what the gate allows.
    fn pump(&mut self, now: Time) {
        let mut nic = Nic {
            gate: &mut self.gate,
            nic_bps: self.nic_bps,
            free_at: &mut self.nic_free_at,
            stats: &mut self.stats,
            first_at: self.pending_directive.map(|_| None),
        };
        let released = self.node.coord.pump(now, &mut nic).released;
        if let (true, Some(Some(t1))) = (released, nic.first_at) {
            if let Some(t0) = self.pending_directive.take() {
                // the sample ends when the first released packet's verdict is with the kernel
                push_sample(
                    &mut self.first_release_ns,
                    t1.duration_since(t0).as_nanos() as u64,
                );
            }
        }
    }

    /// Read one batch of control datagrams within the intake's budget.
    fn on_datagrams(&mut self) {
        let asked = self.intake.allowance(self.clock.now());
        if asked == 0 {
            return;
        }
        let got = self.chan.recv_batch(asked);
        self.intake.spend(asked, got);
        for i in 0..self.chan.batch_len() {
            let (from, d) = self.chan.datagram(i);
            let origin = if self.controllers.iter().any(|c| c.ip() == from.ip()) {
                Origin::Controller
            } else {
                Origin::Other
            };
            let t0 = Instant::now();
            let now = self.clock.now();
            if !self.node.handle_datagram(now, origin, d) {
                self.flush();
                continue;
            }
            if let Some(sent) = self.report_sent.take() {
                push_sample(&mut self.report_rtt_ns, t0.duration_since(sent).as_nanos() as u64);
            }
            self.flush();
            self.pending_directive = Some(t0);
            self.pump(now);
            self.pending_directive = None;
        }
    }

    fn on_timer(&mut self) {
        let now = self.clock.now();
        self.node.handle_timeout(now);
        self.flush();
        self.pump(now);
    }

    fn log_stats(&self, event: &str) {
        let s = &self.stats;
        let k = &self.node.coord.stats;
        let c = &self.node.rejected;
        let g = self.gate.counters();
        self.log.info(
            event,
            &[
                ("intercepted", &s.intercepted),
                ("passed", &s.passed),
                ("held", &k.held),
                ("released", &k.released),
                ("held_bytes", &s.held_bytes),
                ("released_bytes", &s.released_bytes),
                ("directives", &k.directives),
                ("reports", &k.reports),
                ("givebacks", &k.givebacks),
                ("fail_opens", &k.fail_opens),
                ("watchdog_releases", &s.watchdog_releases),
                ("watchdog_released_pkts", &s.watchdog_released_pkts),
                ("release_errors", &(s.release_errors + g.verdict_errors)),
                ("gso_packets", &g.gso_packets),
                ("batch_verdicts", &g.batch_verdicts),
                ("single_verdicts", &g.single_verdicts),
                ("kernel_bypassed", &g.kernel_bypassed),
                ("kernel_dropped", &g.kernel_dropped),
                ("rejected_auth", &c.auth),
                ("rejected_replay", &c.replay),
                ("rejected_malformed", &c.malformed),
                ("rejected_session", &c.session),
                ("dropped_foreign", &self.node.stats.foreign),
                ("dropped_over_budget", &self.node.stats.over_budget),
                ("control_received", &self.chan.stats.received),
                ("control_kernel_drops", &self.chan.stats.kernel_drops),
                ("control_budget_spent_ticks", &self.intake.stats.spent_ticks),
                ("stale_term", &self.node.stats.stale_term),
                ("stale_grants", &self.node.stats.stale),
                ("previous_join_answers", &self.node.stats.previous_join_answers),
                ("proofs_sent", &self.node.stats.proofs),
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

    /// The watchdog released the host while this loop was silent: the packets held
    /// have gone (count them released) and the gate is taken again.
    fn retake(&mut self, r: watchdog::Release) {
        let now = self.clock.now();
        let mut forgotten = 0u64;
        for ((_, dst, _), bytes) in self.node.coord.drain(now) {
            forgotten += 1;
            self.stats.released_bytes += bytes as u64;
            let d = &mut self.stats.per_dest[dst as usize];
            d.released_pkts += 1;
            d.released_bytes += bytes as u64;
        }
        let err = match self.gate.retake(r.upto) {
            Ok(()) => "none".to_string(),
            Err(e) => {
                self.stats.release_errors += 1;
                e.to_string()
            }
        };
        self.stats.watchdog_releases += 1;
        self.stats.watchdog_released_pkts += u64::from(r.held_pkts);
        if let Some(n) = self.throttles.retaken.event(Instant::now()) {
            self.log.warn(
                "gate_retaken",
                &[
                    (
                        "why",
                        &"the watchdog released the host while the agent was silent",
                    ),
                    ("watchdog_released_pkts", &r.held_pkts),
                    ("held_pkts_forgotten", &forgotten),
                    ("held_total", &self.node.coord.stats.held),
                    ("upto_id", &r.upto),
                    ("error", &err),
                    ("count", &n),
                ],
            );
        }
    }

    /// Release everything held (shutdown).
    fn release_all(&mut self) {
        for ((p, ..), bytes) in self.node.coord.drain(self.clock.now()) {
            self.release(p);
            self.stats.released_bytes += bytes as u64;
        }
    }
}

/// SIGUSR1 arrived (testing only: see [`AgentOpts::debug_spin_on_sigusr1`]).
static SPIN_REQUESTED: AtomicBool = AtomicBool::new(false);

extern "C" fn on_sigusr1(_: libc::c_int) {
    SPIN_REQUESTED.store(true, Ordering::Relaxed);
}

/// Run an agent over `gate` until SIGTERM/SIGINT.
pub fn run<G: PacketGate>(mut opts: AgentOpts, gate: G, mut poller: Poller) -> Result<(), String> {
    let log = Logger::new("agent", opts.log_level);
    let controllers = opts.topo.controllers();
    let chan =
        Channel::bind(opts.bind).map_err(|e| format!("cannot bind the control socket {}: {e}", opts.bind))?;
    // the gate lets the control traffic pass by this mark (never by its address)
    chan.mark(opts.topo.control_mark()).map_err(|e| e.to_string())?;
    poller
        .watch(chan.sock.as_fd(), 0)
        .map_err(|e| format!("event loop: {e}"))?;
    poller
        .watch(gate.fd(), 1)
        .map_err(|e| format!("event loop: {e}"))?;
    let mut dog = opts.watchdog.take();
    if let Some(d) = &dog {
        poller.watch(d.fd(), 2).map_err(|e| format!("event loop: {e}"))?;
    }
    // the loop wakes at least this often (a beat each time)
    let max_wait = dog.as_ref().map_or(Duration::from_millis(100), |d| {
        d.beat_every().min(Duration::from_millis(100))
    });
    if opts.debug_spin_on_sigusr1.is_some() {
        // SAFETY: the handler only stores to an atomic (async-signal-safe)
        unsafe { libc::signal(libc::SIGUSR1, on_sigusr1 as *const () as libc::sighandler_t) };
    }
    let server = match opts.metrics {
        Some(a) => Some(HttpServer::start(a).map_err(|e| format!("cannot serve metrics on {a}: {e}"))?),
        None => None,
    };
    let clock = Clock::new();
    let now = clock.now();
    let cfg = opts.topo.settings.coord_config();
    // the agent never drops: a queue holds whatever the kernel hands it
    let core = HostCoordinator::new(cfg, u64::MAX, now);
    let nic_bps = (opts.topo.file.hosts[opts.host as usize].rate_mbps * 1e6) as u64;
    let hosts = opts.topo.hosts();
    let rng = Rng::new(crate::keys::random_u64()?);
    let local = chan.sock.local_addr().map_err(|e| e.to_string())?;
    let node_cfg = AgentConfig {
        addr: local.to_wire(),
        directive_max_age: opts.topo.settings.directive_max_age,
        ..AgentConfig::default()
    };
    let second = Duration::from_secs(1);
    let mut a = Agent {
        me: opts.host,
        nic_bps: nic_bps.max(1),
        nic_free_at: Time::ZERO,
        topo: opts.topo,
        node: AgentNode::new(node_cfg, core, opts.keys, rng),
        gate,
        chan,
        controllers: controllers.clone(),
        clock,
        last_directive: None,
        last_run_change: None,
        log: log.clone(),
        throttles: Throttles {
            rejected: Throttle::new(second),
            fail_open: Throttle::new(second),
            resumed: Throttle::new(second),
            retaken: Throttle::new(second),
            intercept_error: Throttle::new(second),
        },
        intake: Intake::new(DATAGRAMS_PER_TICK),
        stats: AgentStats {
            per_dest: vec![DestStats::default(); hosts],
            ..Default::default()
        },
        first_release_ns: VecDeque::new(),
        pending_directive: None,
        report_sent: None,
        report_rtt_ns: VecDeque::new(),
    };
    let name = a.topo.file.hosts[a.me as usize].name.clone();
    log.info(
        "start",
        &[
            ("host", &name),
            ("id", &a.me),
            (
                "controllers",
                &controllers
                    .iter()
                    .map(|c| c.to_string())
                    .collect::<Vec<_>>()
                    .join(","),
            ),
            ("bind", &local),
            (
                "metrics",
                &opts.metrics.map_or("off".to_string(), |m| m.to_string()),
            ),
        ],
    );
    a.node.start(now);
    a.flush();
    let mut wakes = Vec::new();
    let mut next_stats = Instant::now() + opts.stats_every;
    let mut next_render = Instant::now();
    let mut watching = true;
    loop {
        if let Some(d) = &mut dog {
            d.beat(Instant::now());
        }
        if let Some(spin) = opts.debug_spin_on_sigusr1 {
            if SPIN_REQUESTED.swap(false, Ordering::Relaxed) {
                a.log.warn("debug_spin", &[("ms", &spin.as_millis())]);
                let t0 = Instant::now();
                while t0.elapsed() < spin {
                    std::hint::spin_loop();
                }
            }
        }
        let now = a.clock.now();
        // the control socket set aside (its budget spent) is watched again from the next tick
        if a.intake.resume(now) {
            watching = true;
            poller
                .watch_again(a.chan.sock.as_fd(), 0)
                .map_err(|e| format!("event loop: {e}"))?;
        }
        if let Some(s) = &server {
            if Instant::now() >= next_render {
                next_render = Instant::now() + Duration::from_millis(100);
                s.publish(metrics::render(&a, &name));
            }
        }
        let wake_at = a.intake.resumes_at().unwrap_or(Time::NEVER);
        poller
            .arm(now, a.node.poll_timeout().min(wake_at))
            .map_err(|e| format!("timer: {e}"))?;
        // every release so far reaches the kernel before the loop sleeps
        if a.gate.flush().is_err() {
            a.stats.release_errors += 1;
        }
        poller
            .wait(max_wait, &mut wakes)
            .map_err(|e| format!("event loop: {e}"))?;
        if let (Some(d), true) = (&mut dog, wakes.contains(&Wake::Readable(2))) {
            // the watchdog released the host while this loop was silent (stopped,
            // spinning or starved): take the gate back before touching a packet
            if let Some(r) = d.take_release() {
                a.retake(r);
            }
            if d.gone {
                a.log.warn(
                    "watchdog_exited",
                    &[("why", &"its pipe closed; the host has no watchdog now")],
                );
                // closing its pipe takes it out of the poller too
                dog.take().expect("some").reap();
            }
        }
        if wakes.contains(&Wake::Shutdown) {
            // a normal stop: the watchdog goes first (removing the rules may take
            // longer than its deadline, and nothing is held after release_all)
            if let Some(d) = dog.take() {
                d.stop();
            }
            a.release_all();
            a.node.leave();
            a.flush();
            let r = a.gate.uninstall();
            a.log_stats("stop");
            return r;
        }
        // timers and packets before the control socket: no flood starves them
        if a.node.poll_timeout() <= a.clock.now() {
            a.on_timer();
        }
        if wakes.contains(&Wake::Readable(1)) {
            a.on_packets();
        }
        if wakes.contains(&Wake::Readable(0)) {
            a.on_datagrams();
            if watching && a.intake.resumes_at().is_some() {
                // spent with more waiting: the packets and timers until the next tick
                watching = false;
                poller
                    .set_aside(a.chan.sock.as_fd(), 0)
                    .map_err(|e| format!("event loop: {e}"))?;
            }
        }
        if a.node.poll_timeout() <= a.clock.now() {
            a.on_timer();
        }
        // the verdicts of this wake-up's releases, before anything slower
        if a.gate.flush().is_err() {
            a.stats.release_errors += 1;
        }
        if Instant::now() >= next_stats {
            next_stats = Instant::now() + opts.stats_every;
            a.log_stats("stats");
        }
    }
}
