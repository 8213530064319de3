//! `xco-daemon controller`: the XCo controller on a real network.
//!
//! A thin driver of `xco_core::control::ControllerNode` — the protocol the
//! simulation harness runs: it loads the topology file, moves datagrams
//! between a UDP socket and the node, arms a `timerfd` at the node's next
//! deadline with the monotonic clock, and logs and counts what the node
//! reports. Sessions, join challenges, rejoin requests and what each
//! message does are the node's.
//!
//! The loop serves the scheduler's timer before datagrams and reads at most
//! [`DATAGRAMS_PER_TICK`] datagrams between two timer checks, so a flood of
//! junk delays a slot boundary by at most one such batch. Every log line a
//! datagram can cause is throttled (at most one a second per kind, and per
//! host for joins, with the count it stands for).
//!
//! All state is soft. Every start draws a random run id; agents adopt it
//! from a signed challenge answering their join, so a restarted controller
//! (whatever its clock says) is obeyed one round trip after the agents'
//! next report, and directives of an earlier run are never obeyed again.

mod metrics;

use crate::channel::Channel;
use crate::config::Topology;
use crate::http::{Histogram, HttpServer};
use crate::log::{Level, Logger, Throttle};
use crate::runtime::{Clock, Poller, Wake};
use std::net::SocketAddr;
use std::os::fd::AsFd;
use std::time::{Duration, Instant};
use xco_core::control::{ControllerConfig, ControllerEvent, ControllerNode};
use xco_core::sched::Scheduler;
use xco_core::wire::ControllerKeys;
use xco_core::{Dur, Time};

/// Datagrams read between two checks of the scheduler's timer.
pub const DATAGRAMS_PER_TICK: usize = 64;

/// How the controller is started.
pub struct ControllerOpts {
    /// The topology.
    pub topo: Topology,
    /// The master secret.
    pub master: Vec<u8>,
    /// UDP address to listen on (default: `control.controller` of the topology).
    pub listen: SocketAddr,
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

    /// Read at most `budget` datagrams; true if the socket may hold more.
    fn on_datagrams(&mut self, budget: usize) -> bool {
        for _ in 0..budget {
            let now = self.clock.now();
            let Some((from, d)) = self.chan.recv() else {
                return false;
            };
            self.node.handle_datagram(now, from, d);
            self.flush();
        }
        true
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
    let run = crate::keys::random_u64()?;
    let chan =
        Channel::bind(opts.listen).map_err(|e| format!("cannot listen on udp {}: {e}", opts.listen))?;
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
    let mut c = Controller {
        node: ControllerNode::new(ControllerConfig::default(), sched, keys, run),
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
    };
    log.info(
        "start",
        &[
            ("listen", &opts.listen),
            ("hosts", &hosts),
            ("run", &format!("{run:016x}")),
            ("mode", &format!("{:?}", opts.topo.settings.mode).to_lowercase()),
            ("slice_ms", &(opts.topo.settings.slice.as_secs_f64() * 1e3)),
            (
                "metrics",
                &opts.metrics.map_or("off".to_string(), |a| a.to_string()),
            ),
        ],
    );
    let mut wakes = Vec::new();
    let mut next_render = Time::ZERO;
    let mut rate = metrics::RateWindow::default();
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
                        link_names: &link_names,
                        host_names: &c.names,
                        directives_per_s: rate.per_s,
                        run,
                    },
                ));
            }
        }
        let at = c.node.poll_timeout().unwrap_or(Time::NEVER);
        c.timer_at = at;
        poller.arm(now, at).map_err(|e| format!("timer: {e}"))?;
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
                ],
            );
            return Ok(());
        }
        // the timer first; then datagrams in batches, the timer checked between them
        if wakes.contains(&Wake::Timer) || c.timer_due() {
            c.on_timer();
        }
        if wakes.iter().any(|w| matches!(w, Wake::Readable(_))) {
            while c.on_datagrams(DATAGRAMS_PER_TICK) {
                if c.timer_due() {
                    c.on_timer();
                }
                // a flood: yield to the loop (level-triggered epoll wakes it again at once)
                if c.clock.now().saturating_since(now) > Dur::from_ms(1) {
                    break;
                }
            }
        }
        if c.timer_due() {
            c.on_timer();
        }
    }
}
