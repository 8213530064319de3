//! `xco-daemon controller`: the XCo controller on a real network.
//!
//! A thin driver of `xco_core::control::ControllerNode` — the protocol the
//! simulation harness runs: it loads the topology file, moves datagrams
//! between a UDP socket and the node, arms a `timerfd` at the node's next
//! deadline with the monotonic clock, and logs and counts what the node
//! reports. Sessions, join challenges, rejoin requests and what each
//! message does are the node's.
//!
//! The loop serves the scheduler's timer before datagrams, reads datagrams
//! in batches of at most [`crate::channel::BATCH`] (one `recvmmsg`) with the
//! timer checked between two, and reads at most its budget a millisecond
//! ([`crate::intake`]: 64, more for topologies whose heartbeats need more):
//! a flood of junk delays a slot boundary by at most one batch, and with
//! the budget spent the controller sleeps until its timer or the next tick
//! while the kernel drops (and counts) what the socket cannot hold. Every
//! log line a datagram can cause is throttled (at most one a second per
//! kind, and per host for joins, with the count it stands for).
//!
//! All state is soft. Every start draws a run id, random (alone: term 0 in
//! the high half; with a standby, a term above the wall clock's seconds, so
//! a restarted controller's terms are above its earlier ones unless the
//! clock stepped back: then the agents refuse it, prove the newer term, and
//! it takes one above);
//! agents adopt it from a signed challenge answering their join, so a
//! restarted controller is obeyed one round trip after the agents' next
//! report, and directives of an earlier run are never obeyed again.
//!
//! **Hot standby** (`control.standby` in the topology): `--standby` runs the
//! standby, which watches the agents (they send everything to both) and
//! takes over when the primary's beats stop for `control.takeover_ms`; the
//! primary and a restarted standby beat to each other
//! (`xco_core::control::standby`). Both hold the same master secret.

mod metrics;

use crate::channel::Channel;
use crate::config::Topology;
use crate::http::{Histogram, HttpServer};
use crate::intake::{controller_budget, Intake};
use crate::log::{Level, Logger, Throttle};
use crate::runtime::{Clock, Poller, Wake};
use std::net::SocketAddr;
use std::os::fd::AsFd;
use std::time::{Duration, Instant};
use xco_core::control::{ControllerConfig, ControllerEvent, ControllerNode, Peer, StandbyConfig};
use xco_core::sched::Scheduler;
use xco_core::wire::{peer_key, run_of, ControllerKeys};
use xco_core::{Dur, Time};

/// How the controller is started.
pub struct ControllerOpts {
    /// The topology.
    pub topo: Topology,
    /// The master secret.
    pub master: Vec<u8>,
    /// UDP address to listen on (default: `control.controller` of the topology).
    pub listen: SocketAddr,
    /// Run as the hot standby (the topology has `control.standby`).
    pub standby: bool,
    /// Serve Prometheus metrics and health here.
    pub metrics: Option<SocketAddr>,
    /// Log level.
    pub log_level: Level,
}

/// Log lines a datagram can cause, throttled.
struct Throttles {
    rejected: Throttle,
    agent_rejected: Throttle,
    /// Per host: joins, leaves.
    joins: Vec<Throttle>,
}

struct Controller {
    node: ControllerNode<SocketAddr>,
    chan: Channel,
    names: Vec<String>,
    clock: Clock,
    log: Logger,
    throttles: Throttles,
    lateness: Histogram,
    timer_at: Time,
    intake: Intake,
}

impl Controller {
    /// Send what the node has to send and log what it reports.
    fn flush(&mut self) {
        while let Some((to, d)) = self.node.poll_transmit(self.clock.now()) {
            self.chan.send(to, &d);
        }
        while let Some(e) = self.node.poll_event() {
            self.log_event(e);
        }
    }

    fn log_event(&mut self, e: ControllerEvent<SocketAddr>) {
        let now = Instant::now();
        match e {
            ControllerEvent::Joined { host, from } => {
                if let Some(n) = self.throttles.joins[host as usize].event(now) {
                    let name = &self.names[host as usize];
                    self.log
                        .info("join", &[("host", name), ("from", &from), ("count", &n)]);
                }
            }
            ControllerEvent::Left { host } => {
                if let Some(n) = self.throttles.joins[host as usize].event(now) {
                    self.log
                        .info("leave", &[("host", &self.names[host as usize]), ("count", &n)]);
                }
            }
            ControllerEvent::TimedOut { host, total } => {
                // at most one per host per feedback timeout: not datagram-driven
                let name = &self.names[host as usize];
                self.log.warn(
                    "host_timed_out",
                    &[("host", name), ("id", &host), ("total", &total)],
                );
            }
            ControllerEvent::Rejected { why, from } => {
                if let Some(n) = self.throttles.rejected.event(now) {
                    let total = self.node.stats.rejected.total();
                    self.log.warn(
                        "rejected",
                        &[
                            ("count", &n),
                            ("total", &total),
                            ("last_from", &from),
                            ("last_why", &why),
                        ],
                    );
                }
            }
            ControllerEvent::TookOver { term, run } => {
                // one per term: only a silent peer or a genuine signed term causes it
                let run = format!("{run:016x}");
                self.log.warn("took_over", &[("term", &term), ("run", &run)]);
            }
            ControllerEvent::SteppedDown { term } => {
                self.log.warn("stepped_down", &[("newer_term", &term)]);
            }
            ControllerEvent::AgentRejected { host, counts: c, new } => {
                if let Some(n) = self.throttles.agent_rejected.event(now) {
                    self.log.warn(
                        "agent_rejected",
                        &[
                            ("host", &self.names[host as usize]),
                            ("new", &new),
                            ("auth", &c.auth),
                            ("replay", &c.replay),
                            ("malformed", &c.malformed),
                            ("session", &c.session),
                            ("count", &n),
                        ],
                    );
                }
            }
        }
    }

    /// Read one batch of datagrams within the intake's budget; true if the
    /// socket may hold more and the budget allows another read now.
    fn on_datagrams(&mut self) -> bool {
        let asked = self.intake.allowance(self.clock.now());
        if asked == 0 {
            return false;
        }
        let got = self.chan.recv_batch(asked);
        let aside = self.intake.spend(asked, got);
        for i in 0..self.chan.batch_len() {
            let now = self.clock.now();
            let (from, d) = self.chan.datagram(i);
            self.node.handle_datagram(now, from, d);
            self.flush();
        }
        got == asked && !aside
    }

    fn timer_due(&self) -> bool {
        self.node.poll_timeout().is_some_and(|t| t <= self.clock.now())
    }

    fn on_timer(&mut self) {
        let now = self.clock.now();
        if self.timer_at != Time::NEVER && now >= self.timer_at {
            self.lateness.record(now.saturating_since(self.timer_at));
        }
        self.timer_at = Time::NEVER;
        self.node.handle_timeout(now);
        self.flush();
    }
}

/// Run the controller until SIGTERM/SIGINT.
pub fn run(opts: ControllerOpts) -> Result<(), String> {
    let log = Logger::new("controller", opts.log_level);
    let mut poller = Poller::new().map_err(|e| format!("event loop: {e}"))?;
    let names: Vec<String> = opts.topo.file.hosts.iter().map(|h| h.name.clone()).collect();
    let name_refs: Vec<&str> = names.iter().map(String::as_str).collect();
    let keys = ControllerKeys::new(&opts.master, &name_refs);
    let hosts = opts.topo.hosts();
    let c = &opts.topo.file.control;
    // terms above the wall clock's seconds: a restart's are above its earlier ones
    let known = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(1, |d| d.as_secs())
        .min(u32::MAX as u64 / 2);
    let low = crate::keys::random_u64()? as u32;
    let peer = match (opts.standby, c.standby) {
        (false, Some(s)) => Some((0, s)),
        (true, Some(_)) => Some((1, c.controller)),
        (_, None) => None,
    };
    let standby_cfg = StandbyConfig {
        takeover_after: opts.topo.takeover_after(),
        beat_every: Dur::from_ps(opts.topo.takeover_after().ps() / 4),
    };
    let peer = peer.map(|(me, addr)| Peer::new(me, addr, peer_key(&opts.master), standby_cfg.clone()));
    let run = match &peer {
        // a standby directs nothing until it takes over (then above every term it knows)
        _ if opts.standby => run_of(known, low),
        Some(p) => run_of(p.next_term(known), low),
        // alone: term 0, runs not ordered (a restart is fenced, as before terms)
        None => run_of(0, low),
    };
    let chan =
        Channel::bind(opts.listen).map_err(|e| format!("cannot listen on udp {}: {e}", opts.listen))?;
    // marked, a controller on a host with an agent passes that agent's gate; unprivileged
    // it cannot mark, which matters only there (the agent's log then shows it held)
    let control_unmarked = chan.mark(opts.topo.control_mark()).err();
    poller
        .watch(chan.sock.as_fd(), 0)
        .map_err(|e| format!("event loop: {e}"))?;
    let link_names: Vec<String> = opts.topo.directed_links().into_iter().map(|l| l.2).collect();
    let server = match opts.metrics {
        Some(a) => Some(HttpServer::start(a).map_err(|e| format!("cannot serve metrics on {a}: {e}"))?),
        None => None,
    };
    let sched = Scheduler::new(opts.topo.sched_topology(), opts.topo.settings.sched_config());
    let second = Duration::from_secs(1);
    let cfg = ControllerConfig {
        on_demand: opts.topo.settings.on_demand.clone(),
        // a host reports every report interval: three of them lost in a row
        // before a directing controller without its standby's lease stops granting
        host_lease: Dur::from_ps(opts.topo.settings.report_interval.ps() * 3),
        directive_max_age: opts.topo.settings.directive_max_age,
        ..ControllerConfig::default()
    };
    let mut node = ControllerNode::new(cfg, sched, keys, run);
    if let Some(p) = peer {
        node = node.with_peer(p, !opts.standby);
    }
    let mut c = Controller {
        node,
        chan,
        names,
        clock: Clock::new(),
        log: log.clone(),
        throttles: Throttles {
            rejected: Throttle::new(second),
            agent_rejected: Throttle::new(second),
            joins: (0..hosts).map(|_| Throttle::new(second)).collect(),
        },
        lateness: Histogram::default(),
        timer_at: Time::NEVER,
        intake: Intake::new(controller_budget(hosts, opts.topo.settings.report_interval)),
    };
    log.info(
        "start",
        &[
            ("listen", &opts.listen),
            ("hosts", &hosts),
            ("run", &format!("{run:016x}")),
            ("role", &if opts.standby { "standby" } else { "primary" }),
            (
                "peer",
                &c.node.peer().map_or("none".to_string(), |p| p.addr.to_string()),
            ),
            ("mode", &format!("{:?}", opts.topo.settings.mode).to_lowercase()),
            ("slice_ms", &(opts.topo.settings.slice.as_secs_f64() * 1e3)),
            ("datagrams_per_ms", &c.intake.per_tick()),
            (
                "metrics",
                &opts.metrics.map_or("off".to_string(), |a| a.to_string()),
            ),
        ],
    );
    if let Some(e) = control_unmarked {
        log.warn("control_unmarked", &[("error", &e)]);
    }
    let mut wakes = Vec::new();
    let mut next_render = Time::ZERO;
    let mut rate = metrics::RateWindow::default();
    let mut watching = true;
    loop {
        let now = c.clock.now();
        if let Some(s) = &server {
            if now >= next_render {
                next_render = now + Dur::from_ms(100);
                rate.update(now, c.node.sched_stats().directives);
                s.publish(metrics::render(
                    &c.node.sched,
                    &metrics::View {
                        st: &c.node.stats,
                        ch: &c.chan.stats,
                        late: &c.lateness,
                        intake: &c.intake,
                        link_names: &link_names,
                        host_names: &c.names,
                        directives_per_s: rate.per_s,
                        run: c.node.run(),
                        active: c.node.is_active(),
                    },
                ));
            }
        }
        // the socket set aside (its budget spent) is watched again from the next tick
        if c.intake.resume(now) {
            watching = true;
            poller
                .watch_again(c.chan.sock.as_fd(), 0)
                .map_err(|e| format!("event loop: {e}"))?;
        }
        let at = c.node.poll_timeout().unwrap_or(Time::NEVER);
        c.timer_at = at;
        poller
            .arm(now, at.min(c.intake.resumes_at().unwrap_or(Time::NEVER)))
            .map_err(|e| format!("timer: {e}"))?;
        poller
            .wait(Duration::from_millis(100), &mut wakes)
            .map_err(|e| format!("event loop: {e}"))?;
        if wakes.contains(&Wake::Shutdown) {
            let s = &c.node.stats.rejected;
            log.info(
                "stop",
                &[
                    ("directives", &c.node.sched_stats().directives),
                    ("events", &c.node.sched_stats().events),
                    ("rejected_auth", &s.auth),
                    ("rejected_replay", &s.replay),
                    ("rejected_malformed", &s.malformed),
                    ("rejected_session", &s.session),
                    ("timer_lateness_p99_us", &c.lateness.quantile_us(0.99)),
                    ("timer_lateness_max_us", &(c.lateness.max().as_ns() / 1000)),
                    ("datagrams_received", &c.chan.stats.received),
                    ("kernel_drops", &c.chan.stats.kernel_drops),
                    ("budget_spent_ticks", &c.intake.stats.spent_ticks),
                ],
            );
            return Ok(());
        }
        let readable = wakes.iter().any(|w| matches!(w, Wake::Readable(_)));
        // a standby reads what arrived before its timer: a beat waiting in the
        // socket is not silence (its next deadline may be the takeover)
        let mut more = readable;
        if !c.node.is_active() && readable {
            more = c.on_datagrams();
        }
        // the timer first; then datagrams a batch at a time, the timer checked
        // between two, until the socket is empty or the tick's budget spent
        if c.timer_due() {
            c.on_timer();
        }
        while more {
            more = c.on_datagrams();
            if c.timer_due() {
                c.on_timer();
            }
        }
        if watching && c.intake.resumes_at().is_some() {
            // spent with more waiting: sleep until the timer or the next tick
            watching = false;
            poller
                .set_aside(c.chan.sock.as_fd(), 0)
                .map_err(|e| format!("event loop: {e}"))?;
        }
    }
}
